//! `modhost mods`: load the root's mods (without serving, without touching its store) and print each
//! one's grants, limits and routes, and which were left out and why.

use modhost::views::ModsView;
use modhost::{Server, ServerSettings};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Root directory, as for `serve`.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let mut config = ServerSettings::new(args.root);
    config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    // `modhost mods` works beside a running server: it never opens (or locks) the player's store.
    config.scratch_store = true;
    let view = crate::runtime()?.block_on(async {
        let server = Server::start(config).await?;
        anyhow::Ok(ModsView::of(&server.app().generation()))
    })?;
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&view)?),
        false => print!("{view}"),
    }
    Ok(())
}
