//! `modhost gen-db`: write a generated SPT-shaped database (deterministic, `modhost-gamedb`).

use anyhow::Context as _;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Generated item templates (besides the roubles, the rifle and the stash).
    #[arg(long, default_value_t = 3000)]
    items: u64,
    /// Where to write the document (for example `modhost-data/db.json`).
    #[arg(long)]
    out: PathBuf,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let text = modhost_gamedb::database(args.items).to_string();
    std::fs::write(&args.out, &text).with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!("wrote {} ({} bytes, {} items)", args.out.display(), text.len(), args.items);
    Ok(())
}
