//! `modhost update [<id>]`: install the newest version of each mod (or of one) that `modhost outdated`
//! calls safe, showing what it may newly do and asking first.

use modhost::install::Root;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Only this mod.
    id: Option<String>,
    /// The root.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Update without asking.
    #[arg(long)]
    yes: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let root = Root::new(&args.root);
    let runtime = crate::runtime()?;
    let mut chosen = root.installed();
    if let Some(id) = &args.id {
        chosen.retain(|m| m.manifest.id == id.as_str());
        anyhow::ensure!(!chosen.is_empty(), "no mod `{id}` is installed in {}", args.root.display());
    }
    let mut updated = 0;
    for installed in chosen {
        let Some(survey) = runtime.block_on(crate::outdated::survey(&root, &installed))? else {
            if args.id.is_some() {
                anyhow::bail!(
                    "{} was not installed from a registry: install the new version by hand",
                    installed.manifest.id
                );
            }
            continue;
        };
        crate::outdated::print(&survey);
        if let Some((package, _, source)) = survey.safe() {
            crate::install::install(&runtime, &root, &package, source, args.yes)?;
            updated += 1;
        }
    }
    if updated == 0 {
        println!("nothing to update");
    }
    Ok(())
}
