//! `modhost outdated`: for each mod installed from a registry, the newer versions published there and
//! whether each fits: **safe** (its requirements, conflicts and API fit the mods installed and this
//! host; with what it may newly do), **blocked** (by which mod and why) or **incompatible** (an API
//! this host does not serve). `modhost update` installs the newest safe one.

use modhost::install::{Installed, Plan, Root, Source};
use modhost_mods::{Package, PackageError};
use std::path::PathBuf;

/// How many newer versions of one mod are fetched before giving up on finding one that fits.
const MAX_CANDIDATES: usize = 8;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The root.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
}

/// What one newer version would do.
pub(crate) enum Verdict {
    /// It fits.
    Safe(Box<(Package, Plan, Source)>),
    /// Another mod (named in the reason) stands in its way.
    Blocked(String),
    /// This host cannot run it.
    Incompatible(String),
}

/// One installed mod's newer versions, newest first, each with its verdict (stopping at the first safe).
pub(crate) struct Survey {
    pub(crate) id: String,
    pub(crate) installed: semver::Version,
    pub(crate) newer: Vec<(semver::Version, Verdict)>,
}

impl Survey {
    /// The newest version that fits.
    pub(crate) fn safe(self) -> Option<(Package, Plan, Source)> {
        self.newer.into_iter().find_map(|(_, v)| match v {
            Verdict::Safe(found) => Some(*found),
            _ => None,
        })
    }
}

/// Asks the registry `installed` came from for newer versions and judges them against `root`;
/// `None` for a mod not installed from a registry.
pub(crate) async fn survey(root: &Root, installed: &Installed) -> anyhow::Result<Option<Survey>> {
    let Some(from) = installed.source.as_ref().map(|s| s.from.as_str()).filter(|f| f.starts_with("oci://")) else {
        return Ok(None);
    };
    let reference = modhost::registry::parse(from)?;
    let current = &installed.manifest.version;
    let versions = modhost::registry::versions(&reference).await?;
    let mut newer = Vec::new();
    for version in versions.into_iter().filter(|v| v > current).take(MAX_CANDIDATES) {
        let at = modhost::registry::at_tag(&reference, &version.to_string());
        let bytes = modhost::registry::pull(&at).await?;
        let verdict = match Package::from_bytes(&bytes) {
            Err(e @ PackageError::Api(_)) => Verdict::Incompatible(e.to_string()),
            Err(e) => Verdict::Incompatible(format!("{at}: {e}")),
            Ok(package)
                if package.mod_toml.modhost.as_ref().is_some_and(|r| !r.matches(&modhost_mods::API_VERSION)) =>
            {
                Verdict::Incompatible(format!(
                    "it needs modhost API {}, this host serves {}",
                    package.mod_toml.modhost.as_ref().map(ToString::to_string).unwrap_or_default(),
                    modhost_mods::API_VERSION
                ))
            }
            Ok(package) => match modhost::install::plan(root, &package) {
                Ok(plan) => {
                    let source = Source { from: format!("oci://{at}"), digest: modhost::install::digest(&bytes) };
                    Verdict::Safe(Box::new((package, plan, source)))
                }
                Err(e) => Verdict::Blocked(format!("{e:#}")),
            },
        };
        let safe = matches!(verdict, Verdict::Safe(_));
        newer.push((version, verdict));
        if safe {
            break;
        }
    }
    Ok(Some(Survey { id: installed.manifest.id.to_string(), installed: current.clone(), newer }))
}

/// The survey in lines: one per newer version looked at.
pub(crate) fn print(survey: &Survey) {
    if survey.newer.is_empty() {
        println!("{} {}: up to date", survey.id, survey.installed);
    }
    for (version, verdict) in &survey.newer {
        let head = format!("{} {} -> {version}", survey.id, survey.installed);
        match verdict {
            Verdict::Safe(found) => {
                let added = &found.1.added;
                match added.is_empty() {
                    true => println!("{head}: safe; no new grants"),
                    false => println!("{head}: safe; NEW grants: {}", added.join("; ")),
                }
            }
            Verdict::Blocked(why) => println!("{head}: blocked: {why}"),
            Verdict::Incompatible(why) => println!("{head}: incompatible: {why}"),
        }
    }
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let root = Root::new(&args.root);
    let runtime = crate::runtime()?;
    let mut from_registry = 0;
    for installed in root.installed() {
        match runtime.block_on(survey(&root, &installed)) {
            Ok(Some(survey)) => {
                from_registry += 1;
                print(&survey);
            }
            Ok(None) => {}
            Err(e) => {
                println!("{} {}: could not ask its registry: {e:#}", installed.manifest.id, installed.manifest.version)
            }
        }
    }
    if from_registry == 0 {
        println!("no installed mod came from a registry (`modhost install host/repository:version` records where)");
    }
    Ok(())
}
