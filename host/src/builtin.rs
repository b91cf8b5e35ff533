//! The mods embedded in the binary (`build.rs` builds `plugins/` and writes the table), so a player's
//! `modhost` needs no other file to serve the game.

use modhost_mods::{DiscoverError, Manifest, ModSource, Origin};
use std::path::PathBuf;

/// `(name, mod.toml text, component bytes)` for each built-in mod, in load order.
mod table {
    include!(concat!(env!("OUT_DIR"), "/builtin_mods.rs"));
}

/// The built-in mods, in load order.
pub(crate) fn builtins() -> Vec<Result<ModSource, DiscoverError>> {
    table::MODS
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

/// Whether `id` is a built-in mod's: its `mod.toml` is read, its component is not copied.
pub(crate) fn is_builtin(id: &str) -> bool {
    table::MODS.iter().any(|(_, toml, _)| Manifest::parse(toml).is_ok_and(|m| m.id == id))
}
