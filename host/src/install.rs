//! Installing a package into a root, and making one: what `modhost install`, `update` and `pack` do.
//!
//! What a reader must not break:
//! - **A failed install changes nothing.** The package is checked first ([`plan`]: the requirements,
//!   conflicts and API version against the mods installed, and the mods that require this one), then
//!   unpacked into a hidden staging folder under `mods/` (which discovery and `serve --watch` skip),
//!   then vetted there as `modhost check` vets a mod, in a throwaway root beside the built-in game
//!   and the installed mods it requires. Only then does one `rename(2)` (an exchange when an old
//!   version is there) put it in place.
//! - **A running server is told**, not restarted: `serve` writes `.serving` in the root (its address
//!   and pid, [`announce`]) and the commands ask it to reload; a server that does not answer is
//!   reported, and the mods change at its next start.
//!
//! The root's layout, listing and the changes that need no package are `installed.rs`'s, re-exported
//! here for the commands.

pub use crate::installed::*;

use crate::check::{CheckReport, Policy};
use anyhow::Context as _;
use modhost_mods::{Manifest, Package};
use std::path::{Path, PathBuf};

/// Installs `package` into `root` (enabled), after [`plan`] and a check in a throwaway root; the
/// player's `config.json` of the version it replaces (or of an uninstalled one) is kept. Returns the
/// check's report. On any error the root is as it was.
pub async fn install(root: &Root, package: &Package, source: Source) -> anyhow::Result<CheckReport> {
    plan(root, package)?;
    let id = package.mod_toml.id.to_string();
    let mods = root.enabled_dir();
    std::fs::create_dir_all(&mods).with_context(|| format!("creating {}", mods.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".install-{id}-"))
        .tempdir_in(&mods)
        .with_context(|| format!("a staging folder in {}", mods.display()))?;
    for (name, bytes) in &package.files {
        write_synced(&staging.path().join(name), bytes)?;
    }
    let previous = root.find(&id);
    let config = previous.as_ref().map(|p| p.folder.join("config.json")).filter(|p| p.is_file());
    if let Some(config) = config.or_else(|| Some(root.kept_config(&id)).filter(|p| p.is_file())) {
        std::fs::copy(&config, staging.path().join("config.json"))
            .with_context(|| format!("keeping the player's {}", config.display()))?;
    }
    write_synced(&staging.path().join(SOURCE_FILE), &serde_json::to_vec_pretty(&source)?)?;

    let beside: Vec<PathBuf> = package
        .mod_toml
        .requires
        .keys()
        .filter_map(|r| root.find(r.as_str()).filter(|m| m.state == State::Enabled))
        .map(|m| m.folder)
        .collect();
    let report = crate::check::check_beside(staging.path(), &beside, &Policy::default()).await?;
    if !report.passed {
        anyhow::bail!(
            "{id} {} failed its check, nothing was installed: {}",
            package.mod_toml.version,
            report.problems.join("; ")
        );
    }

    let target = mods.join(&id);
    let staged = staging.keep();
    let swapped = match previous.as_ref().filter(|p| p.state == State::Enabled) {
        Some(_) => exchange(&staged, &target),
        None => std::fs::rename(&staged, &target),
    };
    if let Err(e) = swapped {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(e).with_context(|| format!("moving {id} into {}", target.display()));
    }
    // What was replaced: the old enabled folder (now at the staging path) or a disabled copy.
    let old = match previous {
        Some(p) if p.state == State::Enabled => Some(staged),
        Some(p) => Some(p.folder),
        None => None,
    };
    if let Some(old) = old {
        std::fs::remove_dir_all(&old).with_context(|| format!("removing the old version at {}", old.display()))?;
    }
    let _ = std::fs::remove_dir_all(root.kept_config(&id).parent().unwrap_or(&root.dir));
    sync_dir(&mods);
    Ok(report)
}

/// What packing the folder `dir` would build first, and so run: its project, when it has no
/// `<id>.wasm` and a `Cargo.toml`, `package.json` or `build.sh` to build one with (code of the
/// folder's, whatever the language: a crate's build scripts run too). Runs nothing; answers the
/// `mod.toml` it read, for a plan made before the player says yes.
pub fn build_first(dir: &Path) -> anyhow::Result<Option<(Manifest, crate::dev::Project)>> {
    let toml_path = dir.join("mod.toml");
    let toml = std::fs::read_to_string(&toml_path).with_context(|| format!("reading {}", toml_path.display()))?;
    let manifest = Manifest::parse(&toml).map_err(|e| anyhow::anyhow!("{}: {e}", toml_path.display()))?;
    if dir.join(format!("{}.wasm", manifest.id)).is_file() || !builds(dir) {
        return Ok(None);
    }
    let project = crate::dev::Project::read(dir)?;
    Ok(Some((manifest, project)))
}

/// Whether `dir` is a project modhost builds: a crate, an npm project or a `build.sh`.
fn builds(dir: &Path) -> bool {
    ["Cargo.toml", "package.json", "build.sh"].iter().any(|f| dir.join(f).is_file())
}

/// Packs a mod project or folder: `mod.toml`, the component (`wasm`, else `<id>.wasm` in the folder,
/// else the project built as `modhost dev` builds it: cargo, npm or its `build.sh`), and the optional
/// files present.
pub fn pack(dir: &Path, wasm: Option<&Path>) -> anyhow::Result<Package> {
    let toml_path = dir.join("mod.toml");
    let toml = std::fs::read_to_string(&toml_path).with_context(|| format!("reading {}", toml_path.display()))?;
    let manifest = Manifest::parse(&toml).map_err(|e| anyhow::anyhow!("{}: {e}", toml_path.display()))?;
    let in_folder = dir.join(format!("{}.wasm", manifest.id));
    let component = match wasm {
        Some(path) => path.to_owned(),
        None if in_folder.is_file() => in_folder,
        None if builds(dir) => {
            let project = crate::dev::Project::read(dir)?;
            crate::dev::build(&project, std::time::Duration::from_secs(1800)).map_err(|e| anyhow::anyhow!("{e}"))?.wasm
        }
        None => anyhow::bail!(
            "{} has no {}.wasm and no Cargo.toml, package.json or build.sh to build one: pass the component with --wasm",
            dir.display(),
            manifest.id
        ),
    };
    let bytes = std::fs::read(&component).with_context(|| format!("reading {}", component.display()))?;
    let mut optional = Vec::new();
    for name in modhost_mods::package::OPTIONAL_FILES {
        let path = dir.join(name);
        if path.is_file() {
            optional
                .push((name.to_owned(), std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?));
        }
    }
    Package::new(&toml, bytes, optional).map_err(|e| anyhow::anyhow!("{}: {e}", component.display()))
}

/// Reads a package from a `.modhost` file or a mod folder (packed on the fly).
pub fn read_local(path: &Path) -> anyhow::Result<(Package, Vec<u8>)> {
    if path.is_dir() {
        let package = pack(path, None)?;
        let bytes = package.to_bytes();
        return Ok((package, bytes));
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let package = Package::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((package, bytes))
}

/// `sha256:<hex>` of a package file's bytes: its OCI digest.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{:x}", sha2::Sha256::digest(bytes))
}

fn write_synced(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    file.write_all(bytes).and_then(|()| file.sync_all()).with_context(|| format!("writing {}", path.display()))
}

/// Swaps two folders in one step (Linux `renameat2(RENAME_EXCHANGE)`), so the mod's folder is never
/// absent; elsewhere, or on a file system without it, two renames.
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let (ca, cb) =
            (std::ffi::CString::new(a.as_os_str().as_bytes())?, std::ffi::CString::new(b.as_os_str().as_bytes())?);
        // SAFETY: both are valid NUL-terminated paths, resolved against the working directory.
        let rc =
            unsafe { libc::renameat2(libc::AT_FDCWD, ca.as_ptr(), libc::AT_FDCWD, cb.as_ptr(), libc::RENAME_EXCHANGE) };
        if rc == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::EINVAL) && error.raw_os_error() != Some(libc::ENOSYS) {
            return Err(error);
        }
    }
    let aside = b.with_extension("exchange");
    std::fs::rename(b, &aside)?;
    std::fs::rename(a, b)?;
    std::fs::rename(&aside, a)
}
