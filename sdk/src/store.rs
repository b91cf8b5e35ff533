//! Durable key/value state on disk: profiles and anything that must survive a restart.
//!
//! The functions here work in this mod's own namespace. [`of`] gives the same calls in another mod's
//! namespace (the emulator's profiles, say), which the mod must be granted in its `mod.toml`
//! (`store_read` or `store_write` under `[grants]`); without the grant each call answers
//! [`Error::Denied`] naming it.
//!
//! Keys are 1-180 characters of `[A-Za-z0-9._-]` with no leading dot. Each [`set`] is an atomic commit
//! finished before it returns. [`get`] answers `Ok(None)` for a key never written and
//! `Err(Error::Unreadable)` for one that exists but cannot be read: never create a fresh value over the
//! second.
//!
//! **Documents.** A value that is a JSON object can also be read and changed by path, so a call costs
//! what it touches, not the whole value: [`doc_get`] reads the value at a path, [`doc_keys`] lists an
//! object's members, [`doc_patch`] applies an RFC 7396 merge patch at a path (one small durable commit),
//! and [`doc_patch_if_version`] does so only if nobody wrote in between. Paths are the db's (build them
//! with [`crate::db::path`]); the empty path is the whole document. A path that names nothing reads as
//! `null`, so read it into an `Option`.

use crate::wit::modhost::plugin::store as host;
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// A store namespace: this mod's own ([`own`]) or another mod's ([`of`]).
#[derive(Clone, Copy, Debug)]
pub struct Namespace<'a>(Option<&'a str>);

/// This mod's own namespace (what the free functions of this module use).
///
/// ```rust,no_run
/// let visits: Option<u64> = modhost_sdk::store::own().get("visits")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn own() -> Namespace<'static> {
    Namespace(None)
}

/// Mod `id`'s namespace; each call needs a grant for it in this mod's `mod.toml`.
///
/// ```rust,no_run
/// let profile: Option<serde_json::Value> = modhost_sdk::store::of("emulator").get("profile.0123")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn of(id: &str) -> Namespace<'_> {
    Namespace(Some(id))
}

fn decode<T: DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::Json(format!("store `{key}`: {e}")))
}

impl Namespace<'_> {
    /// The value under `key` as JSON deserialized into `T`, or `None` if it was never written.
    pub fn get<T: DeserializeOwned>(self, key: &str) -> Result<Option<T>> {
        self.get_bytes(key)?.map(|bytes| decode(key, &bytes)).transpose()
    }

    /// The raw bytes under `key`, or `None` if it was never written.
    pub fn get_bytes(self, key: &str) -> Result<Option<Vec<u8>>> {
        match self.0 {
            None => host::get(key),
            Some(ns) => host::ns_get(ns, key),
        }
        .map_err(Error::from)
    }

    /// Stores `value` as JSON under `key`, atomically. Answers the new version.
    pub fn set<T: Serialize + ?Sized>(self, key: &str, value: &T) -> Result<u64> {
        self.set_bytes(key, &serde_json::to_vec(value)?)
    }

    /// Stores raw bytes under `key`, atomically. Answers the new version.
    pub fn set_bytes(self, key: &str, value: &[u8]) -> Result<u64> {
        match self.0 {
            None => host::set(key, value),
            Some(ns) => host::ns_set(ns, key, value),
        }
        .map_err(Error::from)
    }

    /// The value under `key` with its version; `None` if never written.
    pub fn get_versioned<T: DeserializeOwned>(self, key: &str) -> Result<Option<(T, u64)>> {
        let found = match self.0 {
            None => host::get_versioned(key),
            Some(ns) => host::ns_get_versioned(ns, key),
        }
        .map_err(Error::from)?;
        found.map(|f| Ok((decode(key, &f.value)?, f.version))).transpose()
    }

    /// Stores `value` under `key` only if the key is still at `expected` (`None`: only if absent).
    pub fn set_if_version<T: Serialize + ?Sized>(self, key: &str, value: &T, expected: Option<u64>) -> Result<u64> {
        let bytes = serde_json::to_vec(value)?;
        match self.0 {
            None => host::set_if_version(key, &bytes, expected),
            Some(ns) => host::ns_set_if_version(ns, key, &bytes, expected),
        }
        .map_err(Error::from)
    }

    /// Read-modify-write of `key` with compare-and-set: see [`update`].
    pub fn update<T, R>(self, key: &str, mut change: impl FnMut(&mut T) -> Option<R>) -> Result<Option<R>>
    where
        T: DeserializeOwned + Serialize + Default,
    {
        for _ in 0..UPDATE_ATTEMPTS {
            let (mut value, expected) = match self.get_versioned::<T>(key)? {
                Some((value, version)) => (value, Some(version)),
                None => (T::default(), None),
            };
            let Some(answer) = change(&mut value) else { return Ok(None) };
            match self.set_if_version(key, &value, expected) {
                Ok(_) => return Ok(Some(answer)),
                // Another session wrote in between: read its value and decide again.
                Err(Error::Conflict(_)) => continue,
                Err(other) => return Err(other),
            }
        }
        Err(Error::Conflict(format!(
            "store `{key}` was changed by others under each of {UPDATE_ATTEMPTS} attempts; nothing was written, try again"
        )))
    }

    /// Removes `key`; answers whether it existed.
    pub fn delete(self, key: &str) -> Result<bool> {
        match self.0 {
            None => host::delete(key),
            Some(ns) => host::ns_delete(ns, key),
        }
        .map_err(Error::from)
    }

    /// The keys starting with `prefix`, sorted.
    pub fn list(self, prefix: &str) -> Result<Vec<String>> {
        match self.0 {
            None => host::list(prefix),
            Some(ns) => host::ns_list(ns, prefix),
        }
        .map_err(Error::from)
    }
    /// The value at `path` in the JSON document under `key`, deserialized into `T`, with the key's
    /// version; `None` if the key was never written. A path that names nothing is `null`.
    pub fn doc_get<T: DeserializeOwned>(self, key: &str, path: &str) -> Result<Option<(T, u64)>> {
        let found = match self.0 {
            None => host::doc_get(key, path),
            Some(ns) => host::ns_doc_get(ns, key, path),
        }
        .map_err(Error::from)?;
        found.map(|f| Ok((decode(key, &f.value)?, f.version))).transpose()
    }

    /// The member names of the object at `path` in the document under `key`, in document order (empty
    /// when nothing is there).
    pub fn doc_keys(self, key: &str, path: &str) -> Result<Vec<String>> {
        match self.0 {
            None => host::doc_keys(key, path),
            Some(ns) => host::ns_doc_keys(ns, key, path),
        }
        .map_err(Error::from)
    }

    /// Merge-patches the value at `path` in the document under `key` with `patch` (objects merge,
    /// `null` removes a member, anything else replaces), as one atomic commit. Answers the new version.
    pub fn doc_patch<T: Serialize + ?Sized>(self, key: &str, path: &str, patch: &T) -> Result<u64> {
        let bytes = serde_json::to_vec(patch)?;
        match self.0 {
            None => host::doc_patch(key, path, &bytes),
            Some(ns) => host::ns_doc_patch(ns, key, path, &bytes),
        }
        .map_err(Error::from)
    }

    /// [`Namespace::doc_patch`] only if the key is still at version `expected`; another write in
    /// between gives [`Error::Conflict`] and writes nothing.
    pub fn doc_patch_if_version<T: Serialize + ?Sized>(
        self,
        key: &str,
        path: &str,
        patch: &T,
        expected: u64,
    ) -> Result<u64> {
        let bytes = serde_json::to_vec(patch)?;
        match self.0 {
            None => host::doc_patch_if_version(key, path, &bytes, expected),
            Some(ns) => host::ns_doc_patch_if_version(ns, key, path, &bytes, expected),
        }
        .map_err(Error::from)
    }
}

/// The value under `key` as JSON deserialized into `T`, or `None` if it was never written.
///
/// ```rust,no_run
/// let visits: u64 = modhost_sdk::store::get("visits")?.unwrap_or(0);
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>> {
    own().get(key)
}

/// The raw bytes under `key`, or `None` if it was never written.
///
/// ```rust,no_run
/// let raw = modhost_sdk::store::get_bytes("blob")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_bytes(key: &str) -> Result<Option<Vec<u8>>> {
    own().get_bytes(key)
}

/// Store `value` as JSON under `key`, atomically. Answers the new version.
///
/// ```rust,no_run
/// modhost_sdk::store::set("visits", &42u64)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set<T: Serialize + ?Sized>(key: &str, value: &T) -> Result<u64> {
    own().set(key, value)
}

/// Store raw bytes under `key`, atomically. Answers the new version.
///
/// ```rust,no_run
/// modhost_sdk::store::set_bytes("blob", b"\x00\x01")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn set_bytes(key: &str, value: &[u8]) -> Result<u64> {
    own().set_bytes(key, value)
}

/// The value under `key` as JSON deserialized into `T`, with its version; `None` if never written.
/// Read a key several sessions share with this, then write it with [`set_if_version`].
///
/// ```rust,no_run
/// let found: Option<(u64, u64)> = modhost_sdk::store::get_versioned("stock.rifle")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_versioned<T: DeserializeOwned>(key: &str) -> Result<Option<(T, u64)>> {
    own().get_versioned(key)
}

/// Store `value` as JSON under `key` only if the key is still at `expected` (`None`: only if it does
/// not exist). Another write in between gives [`Error::Conflict`] and writes nothing: read and retry
/// ([`update`] is that loop, written once).
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
    own().set_if_version(key, value, expected)
}

/// How many times [`update`] reads `key` and tries to write it before it gives up with
/// [`Error::Conflict`]: each failed attempt means another session's write landed, so sixteen in a row
/// is a storm, not bad luck, and the caller's request should fail rather than spin.
pub const UPDATE_ATTEMPTS: usize = 16;

/// Changes the value under `key` with `change`, writing it back only if nobody wrote it in between,
/// and otherwise reading it again and calling `change` again (at most [`UPDATE_ATTEMPTS`] times).
/// This is the loop around [`get_versioned`] and [`set_if_version`] every key that several sessions
/// share needs (a name index, a shared stock): the host's per-session lock orders one session's
/// requests, not different sessions'.
///
/// `change` gets the current value (`T::default()` when the key was never written; use an `Option`
/// for `T` to tell the two apart) and answers `Some(answer)` to write its changes, or `None` to leave
/// the key as it is. `update` answers what the writing call answered, or `None` when nothing was
/// written. `change` may run more than once, so it must not do anything but change the value.
///
/// ```rust,no_run
/// use modhost_sdk::store;
/// use std::collections::BTreeMap;
///
/// // Claim a name in an index every player shares; `None` when someone has it already.
/// let claimed = store::update("names", |names: &mut BTreeMap<String, String>| {
///     (!names.contains_key("ada")).then(|| names.insert("ada".to_owned(), "player-1".to_owned()))
/// })?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn update<T, R>(key: &str, change: impl FnMut(&mut T) -> Option<R>) -> Result<Option<R>>
where
    T: DeserializeOwned + Serialize + Default,
{
    own().update(key, change)
}

/// Remove `key`; answers whether it existed.
///
/// ```rust,no_run
/// let existed = modhost_sdk::store::delete("visits")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn delete(key: &str) -> Result<bool> {
    own().delete(key)
}

/// The keys starting with `prefix`, sorted.
///
/// ```rust,no_run
/// let profiles = modhost_sdk::store::list("profile.")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn list(prefix: &str) -> Result<Vec<String>> {
    own().list(prefix)
}

/// The value at `path` in the JSON document under `key`, with the key's version; `None` if the key was
/// never written. A path that names nothing reads as `null`.
///
/// ```rust,no_run
/// use modhost_sdk::{db, store};
/// let item: Option<(Option<serde_json::Value>, u64)> =
///     store::doc_get("profile.0123", &db::path(&["Inventory", "items", "64f0c0ffee0123456789abcd"]))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn doc_get<T: DeserializeOwned>(key: &str, path: &str) -> Result<Option<(T, u64)>> {
    own().doc_get(key, path)
}

/// The member names of the object at `path` in the document under `key` (empty when nothing is there).
///
/// ```rust,no_run
/// let ids = modhost_sdk::store::doc_keys("profile.0123", "Inventory.items")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn doc_keys(key: &str, path: &str) -> Result<Vec<String>> {
    own().doc_keys(key, path)
}

/// Merge-patches the value at `path` in the document under `key`, as one atomic commit (the document
/// is created as `{}` if absent). Answers the new version.
///
/// ```rust,no_run
/// modhost_sdk::store::doc_patch("profile.0123", "Info", &serde_json::json!({"Level": 2}))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn doc_patch<T: Serialize + ?Sized>(key: &str, path: &str, patch: &T) -> Result<u64> {
    own().doc_patch(key, path, patch)
}

/// [`doc_patch`] only if the key is still at version `expected` (from [`doc_get`] or
/// [`get_versioned`]); another write in between gives [`Error::Conflict`] and writes nothing.
///
/// ```rust,no_run
/// use modhost_sdk::store;
/// if let Some((level, version)) = store::doc_get::<u64>("profile.0123", "Info.Level")? {
///     store::doc_patch_if_version("profile.0123", "Info", &serde_json::json!({"Level": level + 1}), version)?;
/// }
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn doc_patch_if_version<T: Serialize + ?Sized>(key: &str, path: &str, patch: &T, expected: u64) -> Result<u64> {
    own().doc_patch_if_version(key, path, patch, expected)
}
