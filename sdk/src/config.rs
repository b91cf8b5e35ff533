//! The mod's configuration: the defaults it ships (`config.default.json` beside its `mod.toml`) with
//! the player's `<root>/mods/<id>/config.json` merged over them, checked at load against the mod's
//! `config.schema.json` when it ships one. It is fixed for the life of the loaded mod (a changed file
//! is a reload), so reading it on every call is safe and cheap.
//!
//! Paths are the db's dotted paths ([`crate::db::path`] builds one); the empty path is the whole
//! configuration, `{}` when the mod has none. Under `modhost test-runner` the configuration is what
//! the runner loads for the mod (`{}` without one): give settings defaults (`#[serde(default)]`) so a
//! mod works without any.

use crate::wit::modhost::plugin::config as host;
use crate::{Error, Result};
use serde::de::DeserializeOwned;

/// The value at `path`, deserialized into `T`.
///
/// ```rust,no_run
/// #[derive(serde::Deserialize, Default)]
/// #[serde(default)]
/// struct Settings { greeting: String, max_gifts: u32 }
///
/// let settings: Settings = modhost_sdk::config::get("")?;
/// let greeting: String = modhost_sdk::config::get("greeting")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
///
/// Errors: [`Error::NotFound`] when nothing is at `path`, [`Error::Invalid`] for a malformed path,
/// [`Error::Json`] when the value does not fit `T`.
pub fn get<T: DeserializeOwned>(path: &str) -> Result<T> {
    let text = get_json(path)?;
    serde_json::from_str(&text).map_err(|e| Error::Json(format!("config `{path}`: {e}")))
}

/// The value at `path`, or `None` when nothing is there: for an optional setting.
///
/// ```rust,no_run
/// let limit: u32 = modhost_sdk::config::get_opt("limits.gifts")?.unwrap_or(3);
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_opt<T: DeserializeOwned>(path: &str) -> Result<Option<T>> {
    match get(path) {
        Ok(value) => Ok(Some(value)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The JSON text of the value at `path`, as the host holds it.
///
/// ```rust,no_run
/// let whole = modhost_sdk::config::get_json("")?; // "{}" for a mod without configuration
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_json(path: &str) -> Result<String> {
    host::get(path).map_err(Error::from)
}
