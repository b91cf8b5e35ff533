//! `modhost check`: vet a mod in a throwaway root under strict limits; exit 1 when it breaks the
//! policy (a trap, a timeout, no answer, a server error, too much log or store; see `modhost::check`).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod folder (with mod.toml and a built <id>.wasm), or its .wasm.
    path: PathBuf,
    /// The manifest, when it is not the mod.toml in (or beside) PATH.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// The deadline of each call, in milliseconds.
    #[arg(long, default_value_t = modhost::check::CALL_TIMEOUT_MS)]
    call_timeout_ms: u64,
    /// Report server errors (5xx answers to the probes) without failing on them.
    #[arg(long)]
    allow_server_errors: bool,
    /// The most log one route's probes may write, in KiB.
    #[arg(long, default_value_t = modhost::check::Policy::default().max_log_bytes >> 10)]
    max_log_kib: u64,
    /// The most the mod's store namespace may hold after the probes, in KiB.
    #[arg(long, default_value_t = modhost::check::Policy::default().max_store_bytes >> 10)]
    max_store_kib: u64,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let kib = |n: u64, flag: &str| n.checked_mul(1024).ok_or_else(|| anyhow::anyhow!("{flag} {n} is too large"));
    let policy = modhost::check::Policy {
        call_timeout_ms: args.call_timeout_ms,
        fail_on_server_errors: !args.allow_server_errors,
        max_log_bytes: kib(args.max_log_kib, "--max-log-kib")?,
        max_store_bytes: kib(args.max_store_kib, "--max-store-kib")?,
    };
    let report = crate::runtime()?.block_on(modhost::check::check(&args.path, args.manifest.as_deref(), &policy))?;
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&report)?),
        false => print!("{report}"),
    }
    anyhow::ensure!(report.passed, "modhost check: {} failed", report.id);
    Ok(())
}
