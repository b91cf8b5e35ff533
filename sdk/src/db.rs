//! The game database: read by dotted path, change with merge patches.
//!
//! Paths are member names joined by `.`; use [`path`] to build one from names that may contain a dot.
//! Reads see one consistent snapshot. The db is rebuilt at each boot from `db.json` plus every mod's
//! `init` patches: changes you make at request time are gone after a restart (use [`crate::store`]).

use crate::wit::modhost::plugin::db as host;
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// The value at `path`, deserialized into `T`.
///
/// ```rust,no_run
/// let width: u32 = modhost_sdk::db::get("templates.items.5449016a4bdc2d6f028b456f._props.Width")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get<T: DeserializeOwned>(path: &str) -> Result<T> {
    let text = get_json(path)?;
    serde_json::from_str(&text).map_err(|e| Error::Json(format!("db `{path}`: {e}")))
}

/// The JSON text of the value at `path`, as the host holds it.
///
/// ```rust,no_run
/// let text = modhost_sdk::db::get_json("globals.config")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn get_json(path: &str) -> Result<String> {
    host::get(path).map_err(Error::from)
}

/// Whether a value exists at `path` (without copying it).
///
/// ```rust,no_run
/// if !modhost_sdk::db::exists("locales.global.fr") { /* fall back to en */ }
/// ```
pub fn exists(path: &str) -> bool {
    // A malformed path holds nothing.
    host::exists(path).unwrap_or(false)
}

/// The member names of the object at `path`, in document order.
///
/// ```rust,no_run
/// let languages = modhost_sdk::db::keys("locales.global")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn keys(path: &str) -> Result<Vec<String>> {
    host::keys(path).map_err(Error::from)
}

/// Merge-patch the value at `path` with `value` (RFC 7396: objects merge, `null` deletes a member,
/// anything else replaces). Missing parents are created.
///
/// ```rust,no_run
/// modhost_sdk::db::patch("globals.config.MyMod", &serde_json::json!({"enabled": true}))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn patch<T: Serialize + ?Sized>(path: &str, value: &T) -> Result<()> {
    let text = serde_json::to_string(value)?;
    patch_json(path, &text)
}

/// Merge-patch the value at `path` with JSON text.
///
/// ```rust,no_run
/// modhost_sdk::db::patch_json("globals.config", r#"{"Obsolete":null}"#)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn patch_json(path: &str, json: &str) -> Result<()> {
    host::patch(path, json).map_err(Error::from)
}

/// Joins member names into a path, escaping `.` and `\` inside them.
///
/// ```rust
/// assert_eq!(modhost_sdk::db::path(&["locales", "global", "en", "5449 Name"]), "locales.global.en.5449 Name");
/// assert_eq!(modhost_sdk::db::path(&["a.b", "c\\d"]), r"a\.b.c\\d");
/// ```
pub fn path(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        for c in name.chars() {
            if c == '.' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}
