//! `modhost new`: write a new mod project, a Cargo crate on the SDK (copied in, no network needed) with
//! one route and a test.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod's id, also its crate name: a-z, 0-9, `-` and `_`, starting with a letter.
    name: String,
    /// Where to write the project (default: ./NAME). Must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let dir = modhost::scaffold::new_project(&args.name, args.dir.as_deref())?;
    eprintln!(
        "wrote mod `{}` in {}: `cargo build --release` builds it, `cargo test --release` tests it \
         (README.md says how to install it)",
        args.name,
        dir.display()
    );
    Ok(())
}
