//! `modhost test-runner`: run a mod's test binary (a wasm32-wasip2 command) with a generated db and a
//! scratch store; the `cargo test` runner `modhost new` sets up. Exits with the tests' exit code.

use modhost::testrun::{self, Outcome};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod's manifest, for its id (store namespace) and grants [default: ./mod.toml if present].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// The deadline of the whole test run, in seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// The test binary cargo built.
    wasm: PathBuf,
    /// Passed to the test binary: cargo's test filter and harness flags (`--nocapture`, `--exact`…).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.timeout_secs > 0, "--timeout-secs must be at least 1");
    let runtime = crate::runtime()?;
    let deadline = Duration::from_secs(args.timeout_secs);
    let outcome =
        runtime.block_on(modhost::testrun::run(&args.wasm, &args.args, args.manifest.as_deref(), deadline))?;
    let wasm = args.wasm.display();
    let code = match outcome {
        Outcome::Exited(code) => code,
        Outcome::Trapped(trap) => {
            eprintln!("modhost test-runner: {wasm} trapped (on wasm32 a panic aborts; its message is above):\n{trap}");
            testrun::FAILED
        }
        Outcome::TimedOut(deadline) => {
            eprintln!("modhost test-runner: {wasm} still ran after {} s and was stopped", deadline.as_secs());
            testrun::FAILED
        }
    };
    // Everything the run owned (its scratch store among it) is dropped by now.
    drop(runtime);
    std::process::exit(code)
}
