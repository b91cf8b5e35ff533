//! Finding mods: the built-ins embedded in the binary and the player's `<root>/mods/<id>/` folders.
//!
//! Key types: [`Manifest`], [`ModSource`], and [`resolve`] (which can load together, in what order).
//! Loading them (compile, routes, init) is `server.rs`'s job.

mod grants;
mod manifest;
mod resolve;

pub use grants::{Grants, GrantsToml};
pub(crate) use manifest::valid_id;
pub use manifest::{API_VERSION, Manifest, ManifestError};
pub use resolve::{Resolution, resolve};

use std::path::{Path, PathBuf};

/// Where a mod came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the modhost binary.
    Builtin,
    /// A folder under `<root>/mods/`.
    Folder(PathBuf),
}

/// A mod found but not yet loaded.
#[derive(Debug)]
pub struct ModSource {
    /// Its manifest.
    pub manifest: Manifest,
    /// The component's bytes.
    pub wasm: Vec<u8>,
    /// Where it came from.
    pub origin: Origin,
}

/// A mod folder that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("mod folder {}: {reason}", folder.display())]
pub struct DiscoverError {
    /// The folder.
    pub folder: PathBuf,
    /// Why.
    pub reason: String,
}

/// The mods embedded in the binary by `build.rs`: `(mod.toml text, component bytes)`.
mod builtin {
    include!(concat!(env!("OUT_DIR"), "/builtin_mods.rs"));
}

/// The built-in mods, in load order.
pub fn builtins() -> Vec<Result<ModSource, DiscoverError>> {
    builtin::MODS
        .iter()
        .map(|(name, toml, wasm)| {
            let manifest = Manifest::parse(toml).map_err(|e| DiscoverError {
                folder: PathBuf::from(format!("<built-in {name}>")),
                reason: e.to_string(),
            })?;
            Ok(ModSource { manifest, wasm: wasm.to_vec(), origin: Origin::Builtin })
        })
        .collect()
}

/// The mods in `<mods_dir>/<id>/` (each with `mod.toml` and `<id>.wasm`), sorted by folder name.
/// A folder that is not a valid mod is reported, and the others still load.
pub fn discover(mods_dir: &Path) -> Vec<Result<ModSource, DiscoverError>> {
    let mut folders: Vec<PathBuf> = match std::fs::read_dir(mods_dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_dir()).collect(),
        Err(_) => return Vec::new(),
    };
    folders.sort();
    folders.into_iter().filter(|f| !is_hidden(f)).map(|folder| read_folder(&folder)).collect()
}

fn is_hidden(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
}

fn read_folder(folder: &Path) -> Result<ModSource, DiscoverError> {
    let fail = |reason: String| DiscoverError { folder: folder.to_owned(), reason };
    let text =
        std::fs::read_to_string(folder.join("mod.toml")).map_err(|e| fail(format!("cannot read mod.toml: {e}")))?;
    let manifest = Manifest::parse(&text).map_err(|e| fail(e.to_string()))?;
    let folder_name = folder.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if folder_name != manifest.id {
        return Err(fail(format!("the folder is named `{folder_name}` but mod.toml says id = `{}`", manifest.id)));
    }
    let wasm_path = folder.join(format!("{}.wasm", manifest.id));
    let wasm = std::fs::read(&wasm_path).map_err(|e| fail(format!("cannot read {}: {e}", wasm_path.display())))?;
    Ok(ModSource { manifest, wasm, origin: Origin::Folder(folder.to_owned()) })
}
