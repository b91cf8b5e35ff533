//! modhost's mods before they run: what a mod says about itself (`mod.toml`: [`Manifest`], with its
//! [`Grants`]), the player's mod folders ([`discover`]), and which mods can load together and in what
//! order ([`resolve`]), what each takes part in beyond its routes ([`Declarations`]: hooks,
//! subscriptions, functions) with the order hooks run in ([`order_hooks`]), what it serves in real time
//! ([`RealtimeDeclarations`]: websocket routes, periodic timers), and each mod's
//! configuration, the player's to edit ([`config`]), the one file a mod ships in ([`package`]) and the
//! API versions its component asks for ([`required_api`]).
//!
//! Nothing here runs a mod or knows of wasmtime: compiling, linking and `init` are the server's
//! (`modhost`'s `generation.rs`). Every id that passes through here is a [`ModId`], checked once.

#![warn(missing_docs)]

mod api;
pub mod config;
mod declare;
mod grants;
mod id;
mod manifest;
pub mod package;
mod realtime;
mod resolve;

pub use api::{ApiError, PACKAGE, required_api, serves};
pub use config::{ConfigError, ModConfig};
pub use declare::{
    Declarations, DeclareError, HookOwner, HookSpec, MAX_DECLARED, MAX_NAME, Phase, check_function, check_topic,
    order_hooks,
};
pub use grants::{Denied, Grants, GrantsError, GrantsToml, PushGrant, TimerGrant, own_topic};
pub use id::{InvalidModId, MAX_ID_LEN, ModId};
pub use manifest::{API_VERSION, Manifest, ManifestError};
pub use package::{Package, PackageError, added_grants};
pub use realtime::{
    MAX_PERIOD_S, MAX_REALTIME_DECLARED, MAX_TIMER_NAME, Periodic, RealtimeDeclarations, RealtimeError, SocketRoute,
    check_timer_name,
};
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
    if manifest.id != folder_name {
        return Err(fail(format!("the folder is named `{folder_name}` but mod.toml says id = `{}`", manifest.id)));
    }
    let wasm_path = folder.join(format!("{}.wasm", manifest.id));
    let wasm = std::fs::read(&wasm_path).map_err(|e| fail(format!("cannot read {}: {e}", wasm_path.display())))?;
    Ok(ModSource { manifest, wasm, origin: Origin::Folder(folder.to_owned()) })
}
