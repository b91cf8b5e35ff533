//! `modhost check`: vet a mod in a throwaway root under strict limits; exit 1 on a trap or timeout.

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
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let report = crate::runtime()?.block_on(modhost::check::check(
        &args.path,
        args.manifest.as_deref(),
        args.call_timeout_ms,
    ))?;
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&report)?),
        false => print!("{report}"),
    }
    anyhow::ensure!(report.passed, "modhost check: {} failed", report.id);
    Ok(())
}
