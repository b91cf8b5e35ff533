//! `modhost uninstall`: remove an installed mod. Its store namespaces (its own and its timers') and
//! the player's config are kept (a later install finds them) unless `--purge`, which never touches a
//! built-in mod's namespace.

use modhost::install::Root;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod's id.
    id: String,
    /// The root.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Also delete its store namespaces (its own and its timers') and config (the server must be stopped).
    #[arg(long)]
    purge: bool,
    /// Do it without asking, even when other mods require it.
    #[arg(long)]
    yes: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let id = modhost::install::mod_id(&args.id)?;
    let root = Root::new(&args.root);
    let dependents = root.dependents(&id);
    if !dependents.is_empty() {
        let question =
            format!("{} require(s) {id} and will not load without it. Uninstall {id}?", dependents.join(", "));
        anyhow::ensure!(crate::install::ask(&question, args.yes)?, "{id} was not uninstalled");
    }
    modhost::install::uninstall(&root, &id, args.purge)?;
    match args.purge {
        true => println!("{id} uninstalled; its store namespaces (its own and its timers') and config deleted"),
        false => println!("{id} uninstalled; its store namespaces and config are kept (--purge deletes them)"),
    }
    crate::install::reload_running(&crate::runtime()?, &root)
}
