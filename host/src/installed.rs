//! A root's installed mods, and the changes that need no package: list them, plan a package against
//! them, enable, disable, uninstall; and `serve`'s note of where it answers (`.serving`).
//!
//! The layout under the root:
//! - `mods/<id>/`: an enabled mod (what the server loads): `mod.toml`, `<id>.wasm`, its config files,
//!   the player's `config.json`, and `.installed.json` (where the package came from, its digest).
//! - `disabled/<id>/`: a disabled mod, the same folder moved aside whole.
//! - `kept/<id>/config.json`: the player's configuration of an uninstalled mod, restored when it is
//!   installed again (the store namespaces stay in the store).
//!
//! A mod's store namespaces are named after its id (`<id>`, and `timers.<id>` for its timers), so a
//! package may never take a built-in mod's id ([`plan`]), and `uninstall --purge` never empties a
//! built-in's namespace.
//!
//! Installing a package (staged, vetted, swapped in) is `install.rs`'s; this module imports nothing
//! that serves (of the timers, only their namespace's name), so the status page can list and toggle
//! mods through it.

use anyhow::Context as _;
use modhost_mods::{Grants, Manifest, ModId, Package, added_grants};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The record of where an installed mod came from, in its folder.
pub const SOURCE_FILE: &str = ".installed.json";
/// The file `serve` announces itself in, in the root.
pub const SERVING_FILE: &str = ".serving";

/// Where an installed mod came from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Source {
    /// The file, folder or OCI reference it was installed from.
    pub from: String,
    /// The package's digest (`sha256:…` of the package file).
    pub digest: String,
}

/// Whether an installed mod loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Under `mods/`.
    Enabled,
    /// Under `disabled/`.
    Disabled,
}

/// A mod installed in a root.
#[derive(Debug, Clone)]
pub struct Installed {
    /// Its `mod.toml`.
    pub manifest: Manifest,
    /// Enabled or disabled.
    pub state: State,
    /// Its folder.
    pub folder: PathBuf,
    /// Where it came from (none for a folder copied in by hand).
    pub source: Option<Source>,
}

/// A root's mod folders.
#[derive(Debug, Clone)]
pub struct Root {
    pub(crate) dir: PathBuf,
}

impl Root {
    /// The root at `dir`.
    pub fn new(dir: &Path) -> Root {
        Root { dir: dir.to_owned() }
    }

    pub(crate) fn enabled_dir(&self) -> PathBuf {
        self.dir.join("mods")
    }

    fn disabled_dir(&self) -> PathBuf {
        self.dir.join("disabled")
    }

    pub(crate) fn kept_config(&self, id: &str) -> PathBuf {
        self.dir.join("kept").join(id).join("config.json")
    }

    /// Every mod installed, enabled or not, by id; a folder without a readable `mod.toml` naming it
    /// is left out (the server reports it when it loads). Reads only the manifests, never the
    /// components: the status page lists the disabled mods on every refresh.
    pub fn installed(&self) -> Vec<Installed> {
        let mut all = Vec::new();
        for (dir, state) in [(self.enabled_dir(), State::Enabled), (self.disabled_dir(), State::Disabled)] {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for folder in entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
                let Some(name) = folder.file_name().and_then(|n| n.to_str()).filter(|n| !n.starts_with('.')) else {
                    continue;
                };
                let text = std::fs::read_to_string(folder.join("mod.toml")).unwrap_or_default();
                let Some(manifest) = Manifest::parse(&text).ok().filter(|m| m.id == name) else { continue };
                let record = std::fs::read(folder.join(SOURCE_FILE)).ok();
                let source = record.and_then(|bytes| serde_json::from_slice(&bytes).ok());
                all.push(Installed { manifest, state, folder, source });
            }
        }
        all.sort_by(|a, b| a.manifest.id.cmp(&b.manifest.id));
        all
    }

    /// The installed mod `id`.
    pub fn find(&self, id: &str) -> Option<Installed> {
        self.installed().into_iter().find(|m| m.manifest.id == id)
    }

    /// The manifests the server would load: the built-in mods and the enabled ones, with `id`'s left out.
    fn loading_without(&self, id: &str) -> Vec<Manifest> {
        let builtins = crate::builtin::builtins().into_iter().flatten().map(|b| b.manifest);
        let enabled = self.installed().into_iter().filter(|m| m.state == State::Enabled).map(|m| m.manifest);
        let mut by_id = std::collections::BTreeMap::new();
        // A folder mod of a built-in's id replaces it, as discovery does.
        for manifest in builtins.chain(enabled) {
            by_id.insert(manifest.id.to_string(), manifest);
        }
        by_id.remove(id);
        by_id.into_values().collect()
    }

    /// The enabled mods that require `id`.
    pub fn dependents(&self, id: &str) -> Vec<String> {
        self.loading_without(id)
            .into_iter()
            .filter(|m| m.requires.keys().any(|r| r.as_str() == id))
            .map(|m| m.id.to_string())
            .collect()
    }
}

/// What installing a package would do, for the player to read before saying yes.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The mod's id and version.
    pub id: String,
    /// The version being installed.
    pub version: semver::Version,
    /// The version it replaces, if any.
    pub previous: Option<semver::Version>,
    /// Every grant of the new version, in words.
    pub grants: Vec<String>,
    /// For an update: what the new version may do that the installed one could not.
    pub added: Vec<String>,
    /// What runs, as the player, once they say yes and before anything is installed: a folder's
    /// build (`sh build.sh in /path`), which is the folder's own code. None for a package.
    pub runs: Option<String>,
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.previous {
            Some(old) => writeln!(f, "{} {old} -> {}", self.id, self.version)?,
            None => writeln!(f, "{} {} (new)", self.id, self.version)?,
        }
        match self.grants.is_empty() {
            true => writeln!(f, "  grants: none (it touches only its own store namespace)")?,
            false => writeln!(f, "  grants: {}", self.grants.join("; "))?,
        }
        if let Some(runs) = &self.runs {
            writeln!(f, "  builds it first, running the folder's own code as you: {runs}")?;
        }
        if self.previous.is_some() {
            match self.added.is_empty() {
                true => writeln!(f, "  new grants: none")?,
                false => {
                    for line in &self.added {
                        writeln!(f, "  NEW: it may now {line}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Checks that `package` can join the mods installed in `root`: its id is not a built-in mod's, its
/// requirements are installed in range, it conflicts with none of them (nor they with it), it fits
/// this host's API, and no installed mod that requires it is left out of range. The error is one
/// line that says which.
pub fn plan(root: &Root, package: &Package) -> anyhow::Result<Plan> {
    plan_manifest(root, &package.mod_toml)
}

/// [`plan`] from the mod's `mod.toml` alone: what a folder that must be built first is planned
/// with, before anything of it runs.
pub fn plan_manifest(root: &Root, new: &Manifest) -> anyhow::Result<Plan> {
    let id = new.id.as_str();
    // A package of the game's id replaced the game and took its store namespace (every reload after
    // it was refused, and `--purge` emptied the game's data).
    if crate::builtin::is_builtin(id) {
        anyhow::bail!(
            "{id} {} cannot be installed: `{id}` is the id of a built-in mod, which a package may not take (nor its \
             store namespace)",
            new.version
        );
    }
    let others = root.loading_without(id);
    // The ids refused, with why, among the others and (`with_new`) the new version.
    let outcome = |with_new: bool| -> Vec<(String, String)> {
        let mut mods: Vec<&Manifest> = others.iter().collect();
        if with_new {
            mods.push(new);
        }
        let resolution = modhost_mods::resolve(&mods, &modhost_mods::API_VERSION);
        resolution.refused.into_iter().map(|(at, why)| (mods[at].id.to_string(), why)).collect()
    };
    let refused = outcome(true);
    if let Some((_, why)) = refused.iter().find(|(m, _)| m.as_str() == id) {
        anyhow::bail!("{id} {} cannot be installed: {why}", new.version);
    }
    // A mod that loads today and would not beside this version (a requirement out of range, a conflict).
    let before = outcome(false);
    if let Some((other, why)) =
        refused.iter().find(|(other, _)| !before.iter().any(|(b, _)| b == other) && other.as_str() != id)
    {
        anyhow::bail!("{id} {} cannot be installed: {other} would stop loading ({why})", new.version);
    }
    let previous = root.find(id);
    let none = Grants::default();
    let added = added_grants(previous.as_ref().map_or(&none, |m| &m.manifest.grants), &new.grants);
    Ok(Plan {
        id: id.to_owned(),
        version: new.version.clone(),
        previous: previous.map(|m| m.manifest.version),
        grants: new.grants.describe(),
        added,
        runs: None,
    })
}

/// Moves `id` between `mods/` and `disabled/` (one rename). Enabling checks it loads beside the
/// enabled mods ([`plan`]); disabling a mod others require leaves them unable to load: see
/// [`disable_with_dependents`].
pub fn set_enabled(root: &Root, id: &str, enabled: bool) -> anyhow::Result<()> {
    let installed = root.find(id).with_context(|| format!("no mod `{id}` is installed in {}", root.dir.display()))?;
    let (want, to) =
        if enabled { (State::Enabled, root.enabled_dir()) } else { (State::Disabled, root.disabled_dir()) };
    if installed.state == want {
        return Ok(());
    }
    if enabled {
        let package_like = Package::new(
            &std::fs::read_to_string(installed.folder.join("mod.toml"))?,
            std::fs::read(installed.folder.join(format!("{id}.wasm")))?,
            Vec::new(),
        )?;
        plan(root, &package_like).map_err(|e| anyhow::anyhow!("{}", e.to_string().replace("installed", "enabled")))?;
    }
    std::fs::create_dir_all(&to).with_context(|| format!("creating {}", to.display()))?;
    let target = to.join(id);
    std::fs::rename(&installed.folder, &target)
        .with_context(|| format!("moving {} to {}", installed.folder.display(), target.display()))?;
    sync_dir(&to);
    Ok(())
}

/// Disables `id` and, first, every enabled mod that requires it (directly or through another), which
/// would not load without it; answers those, in the order they were disabled. The caller asks first
/// ([`Root::dependents`]).
pub fn disable_with_dependents(root: &Root, id: &str) -> anyhow::Result<Vec<String>> {
    let mut order: Vec<String> = Vec::new();
    let mut stack = vec![id.to_owned()];
    while let Some(next) = stack.pop() {
        for dependent in root.dependents(&next) {
            if dependent != id && !order.contains(&dependent) {
                order.push(dependent.clone());
                stack.push(dependent);
            }
        }
    }
    for dependent in &order {
        set_enabled(root, dependent, false)?;
    }
    set_enabled(root, id, false)?;
    Ok(order)
}

/// Removes `id`'s folder. Its `config.json` goes to `kept/<id>/` (restored by a later install) and its
/// store namespaces stay, unless `purge`, which also empties them: the one named after the mod and
/// its timers' (`timers.<id>`); the store must not be open in a running server. A built-in mod's
/// namespaces are never purged: a folder of its id (put in place by hand) uses the built-in's data,
/// which is not the folder's to delete, so that purge is refused before anything changes.
pub fn uninstall(root: &Root, id: &str, purge: bool) -> anyhow::Result<()> {
    let installed = root.find(id).with_context(|| format!("no mod `{id}` is installed in {}", root.dir.display()))?;
    let config = installed.folder.join("config.json");
    let kept = root.kept_config(id);
    if purge {
        anyhow::ensure!(
            !crate::builtin::is_builtin(id),
            "{id} was not uninstalled: `{id}` is the id of a built-in mod, and --purge would delete the built-in's \
             store namespace (uninstall without --purge)"
        );
        let store = modhost_store::Store::open(&root.dir.join("store"), true)
            .map_err(|e| anyhow::anyhow!("--purge needs the store, and {e}: stop the server first"))?;
        for namespace in [id.to_owned(), crate::realtime::timers::namespace(id)] {
            for key in store.list(&namespace, "")? {
                store.delete(&namespace, &key)?;
            }
        }
        let _ = std::fs::remove_dir_all(kept.parent().unwrap_or(&root.dir));
    } else if config.is_file() {
        std::fs::create_dir_all(kept.parent().unwrap_or(&root.dir))?;
        std::fs::copy(&config, &kept).with_context(|| format!("keeping {}", config.display()))?;
    }
    // Renamed aside first, so a crash while deleting leaves a hidden folder, never half a mod.
    let parent = installed.folder.parent().unwrap_or(&root.dir).to_owned();
    let aside = parent.join(format!(".uninstall-{id}"));
    let _ = std::fs::remove_dir_all(&aside);
    std::fs::rename(&installed.folder, &aside).with_context(|| format!("removing {}", installed.folder.display()))?;
    sync_dir(&parent);
    std::fs::remove_dir_all(&aside).with_context(|| format!("removing {}", aside.display()))?;
    Ok(())
}

/// A serving server's announcement in its root.
#[derive(Debug, Serialize, Deserialize)]
struct Serving {
    addr: std::net::SocketAddr,
    pid: u32,
}

/// `serve`'s announcement of itself in the root, removed when dropped (at a clean shutdown; a crash
/// leaves it, and a reload request to its address then finds no server).
pub struct Announcement {
    path: PathBuf,
}

/// Writes `<root>/.serving` with the address the server answers on.
pub fn announce(root: &Path, addr: std::net::SocketAddr) -> anyhow::Result<Announcement> {
    let path = root.join(SERVING_FILE);
    let serving = Serving { addr, pid: std::process::id() };
    std::fs::write(&path, serde_json::to_vec(&serving)?).with_context(|| format!("writing {}", path.display()))?;
    Ok(Announcement { path })
}

impl Drop for Announcement {
    fn drop(&mut self) {
        let ours = std::fs::read(&self.path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Serving>(&b).ok())
            .is_some_and(|s| s.pid == std::process::id());
        if ours {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The address of the server serving `root`, if one announced itself.
pub fn serving_addr(root: &Root) -> Option<std::net::SocketAddr> {
    let bytes = std::fs::read(root.dir.join(SERVING_FILE)).ok()?;
    serde_json::from_slice::<Serving>(&bytes).ok().map(|s| s.addr)
}

pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(dir) = std::fs::File::open(dir) {
        let _ = dir.sync_all();
    }
}

/// The id a command line names, checked.
pub fn mod_id(text: &str) -> anyhow::Result<ModId> {
    ModId::parse(text).map_err(|e| anyhow::anyhow!("{e}"))
}
