//! `modhost enable` and `modhost disable`: move an installed mod between `mods/` and `disabled/`, and
//! reload the running server. Disabling a mod that others require names them and asks, and disables
//! them with it (they cannot load without it).

use modhost::install::Root;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod's id.
    id: String,
    /// The root.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Do it without asking, even when other mods require it.
    #[arg(long)]
    yes: bool,
}

pub(crate) fn run(args: Args, enabled: bool) -> anyhow::Result<()> {
    let id = modhost::install::mod_id(&args.id)?;
    let root = Root::new(&args.root);
    if enabled {
        modhost::install::set_enabled(&root, &id, true)?;
        println!("{id} enabled");
    } else {
        let dependents = root.dependents(&id);
        if !dependents.is_empty() {
            let question = format!(
                "{} require(s) {id} and cannot load without it: disable {id} and {}?",
                dependents.join(", "),
                if dependents.len() == 1 { "it" } else { "them" }
            );
            anyhow::ensure!(crate::install::ask(&question, args.yes)?, "{id} was not disabled");
        }
        for other in modhost::install::disable_with_dependents(&root, &id)? {
            println!("{other} disabled (it requires {id})");
        }
        println!("{id} disabled");
    }
    crate::install::reload_running(&crate::runtime()?, &root)
}
