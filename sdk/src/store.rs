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

/// Store `value` as JSON under `key`, atomically. Answers the new version.
///
/// ```rust,no_run
/// modhost_sdk::store::set("visits", &42u64)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<u64> {
    let bytes = serde_json::to_vec(value)?;
    set_bytes(key, &bytes)
}

/// Store raw bytes under `key`, atomically. Answers the new version.
///
/// ```rust,no_run
/// modhost_sdk::store::set_bytes("blob", b"\x00\x01")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set_bytes(key: &str, value: &[u8]) -> Result<u64> {
    host::set(key, value).map_err(Error::from)
}

/// The value under `key` as JSON deserialized into `T`, with its version; `None` if never written.
/// Read a key several sessions share with this, then write it with [`set_if_version`].
///
/// ```rust,no_run
/// let found: Option<(u64, u64)> = modhost_sdk::store::get_versioned("stock.rifle")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_versioned<T: DeserializeOwned>(key: &str) -> Result<Option<(T, u64)>> {
    match host::get_versioned(key).map_err(Error::from)? {
        Some(found) => {
            let value = serde_json::from_slice(&found.value).map_err(|e| Error::Json(format!("store `{key}`: {e}")))?;
            Ok(Some((value, found.version)))
        }
        None => Ok(None),
    }
}

/// Store `value` as JSON under `key` only if the key is still at `expected` (`None`: only if it does
/// not exist). Another write in between gives [`Error::Conflict`] and writes nothing: read and retry.
///
/// ```rust,no_run
/// use modhost_sdk::{store, Error};
///
/// // Take one rifle from a stock every player shares; retry when another sale came first.
/// for _ in 0..10 {
///     let (stock, version): (u64, u64) = store::get_versioned("stock.rifle")?.unwrap_or((100, 0));
///     let expected = (version != 0).then_some(version);
///     match store::set_if_version("stock.rifle", &(stock - 1), expected) {
///         Ok(_) => break,
///         Err(Error::Conflict(_)) => continue,
///         Err(other) => return Err(other),
///     }
/// }
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set_if_version<T: Serialize + ?Sized>(key: &str, value: &T, expected: Option<u64>) -> Result<u64> {
    let bytes = serde_json::to_vec(value)?;
    host::set_if_version(key, &bytes, expected).map_err(Error::from)
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
