//! Durable key/value state on disk, in this mod's own namespace: profiles and anything that must survive
//! a restart.
//!
//! Keys are 1-180 characters of `[A-Za-z0-9._-]` with no leading dot. Each [`set`] is an atomic commit
//! finished before it returns. [`get`] answers `Ok(None)` for a key never written and
//! `Err(Error::Unreadable)` for one that exists but cannot be read: never create a fresh value over the
//! second.

use crate::wit::modhost::plugin::store as host;
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// The value under `key` as JSON deserialized into `T`, or `None` if it was never written.
///
/// ```rust,no_run
/// let visits: u64 = modhost_sdk::store::get("visits")?.unwrap_or(0);
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>> {
    match get_bytes(key)? {
        Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| Error::Json(format!("store `{key}`: {e}"))),
        None => Ok(None),
    }
}

/// The raw bytes under `key`, or `None` if it was never written.
///
/// ```rust,no_run
/// let raw = modhost_sdk::store::get_bytes("blob")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_bytes(key: &str) -> Result<Option<Vec<u8>>> {
    host::get(key).map_err(Error::from)
}

/// Store `value` as JSON under `key`, atomically.
///
/// ```rust,no_run
/// modhost_sdk::store::set("visits", &42u64)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec(value)?;
    set_bytes(key, &bytes)
}

/// Store raw bytes under `key`, atomically.
///
/// ```rust,no_run
/// modhost_sdk::store::set_bytes("blob", b"\x00\x01")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set_bytes(key: &str, value: &[u8]) -> Result<()> {
    host::set(key, value).map_err(Error::from)
}

/// Remove `key`; answers whether it existed.
///
/// ```rust,no_run
/// let existed = modhost_sdk::store::delete("visits")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn delete(key: &str) -> Result<bool> {
    host::delete(key).map_err(Error::from)
}

/// The keys starting with `prefix`, sorted.
///
/// ```rust,no_run
/// let profiles = modhost_sdk::store::list("profile.")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn list(prefix: &str) -> Result<Vec<String>> {
    host::list(prefix).map_err(Error::from)
}
