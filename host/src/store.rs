//! The store: durable key/value state on disk, one directory per namespace (a mod id), one file per key.
//!
//! Key types: [`Store`] and [`StoreError`]. This module knows nothing of wasmtime or hyper.
//!
//! Commit protocol (what a reader must not break): a value is written to a fresh temp file in the key's
//! own directory, created with `O_EXCL` under a name unique to this process and this write
//! (`.tmp-<pid>-<n>-<key>`), then renamed over the key. A rename within one directory is atomic on
//! POSIX filesystems, so a reader (or a restart after a crash) sees the whole old value or the whole new
//! one. With `durable`, the temp is fsynced before the rename and the directory after it, so the commit
//! also survives power loss; an fsync error fails the commit and is not retried. Temp files are
//! dot-files, which are never valid keys, so `list` never shows them; stale ones are removed at open.
//!
//! "Missing" and "unreadable" are different answers: `get` answers `Ok(None)` only when the file does
//! not exist. Any other failure to read is [`StoreError::Unreadable`], so a mod never mistakes a
//! profile it could not read for one that was never written.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The largest value `set` accepts.
pub const MAX_VALUE_BYTES: usize = 64 << 20;
/// The longest key (and namespace) accepted.
pub const MAX_KEY_LEN: usize = 180;

/// Why a store call failed. Each message names the key and says why.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The key or namespace breaks the key rules; it was refused, not rewritten.
    #[error("bad key `{key}`: {reason}")]
    InvalidKey { key: String, reason: &'static str },
    /// The value is over [`MAX_VALUE_BYTES`].
    #[error("the value for `{key}` is {len} bytes; the limit is {MAX_VALUE_BYTES}")]
    TooLarge { key: String, len: usize },
    /// The key exists but could not be read. Not the same as missing.
    #[error("`{key}` exists but could not be read: {source}")]
    Unreadable { key: String, source: io::Error },
    /// A write, delete or listing failed. Nothing was changed, except when only the final directory
    /// sync of a durable commit failed: then the message says the new value is in place.
    #[error("could not {op} `{key}`: {source}")]
    Io { op: &'static str, key: String, source: io::Error },
}

/// The store rooted at one directory.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    durable: bool,
    /// Makes temp names unique among this process's concurrent writers; the pid separates processes.
    next_temp: AtomicU64,
}

impl Store {
    /// Opens (creating if needed) the store in `dir`, removing temp files a crash left behind.
    pub fn open(dir: &Path, durable: bool) -> io::Result<Store> {
        fs::create_dir_all(dir)?;
        for namespace in fs::read_dir(dir)? {
            let namespace = namespace?.path();
            if !namespace.is_dir() {
                continue;
            }
            for entry in fs::read_dir(&namespace)? {
                let entry = entry?;
                if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                    // A temp is never the committed value, so removing one loses nothing.
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Ok(Store { dir: dir.to_owned(), durable, next_temp: AtomicU64::new(0) })
    }

    /// The value under `key` in `namespace`, or `None` if it was never written.
    pub fn get(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.key_path(namespace, key)?;
        match fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StoreError::Unreadable { key: key.to_owned(), source }),
        }
    }

    /// Commits `value` under `key` atomically (see the module doc).
    pub fn set(&self, namespace: &str, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let path = self.key_path(namespace, key)?;
        if value.len() > MAX_VALUE_BYTES {
            return Err(StoreError::TooLarge { key: key.to_owned(), len: value.len() });
        }
        let io_err = |op| move |source| StoreError::Io { op, key: key.to_owned(), source };
        let dir = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(dir).map_err(io_err("create the namespace for"))?;

        let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".tmp-{}-{n}-{key}", std::process::id()));
        let result = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
            file.write_all(value)?;
            if self.durable {
                file.sync_all()?;
            }
            drop(file);
            fs::rename(&temp, &path)
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&temp);
            return Err(io_err("write")(e));
        }
        // After the rename the new value is the one readers see; a failed directory sync only means
        // the rename itself may not survive a power loss. Say exactly that.
        if self.durable {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(io_err("make durable (the new value is in place but may not survive a power loss)"))?;
        }
        Ok(())
    }

    /// Removes `key`; answers whether it existed.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        let path = self.key_path(namespace, key)?;
        match fs::remove_file(&path) {
            Ok(()) => {
                if self.durable {
                    let dir = path.parent().unwrap_or(&self.dir);
                    File::open(dir).and_then(|d| d.sync_all()).map_err(|source| StoreError::Io {
                        op: "delete",
                        key: key.to_owned(),
                        source,
                    })?;
                }
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
            Err(source) => Err(StoreError::Io { op: "delete", key: key.to_owned(), source }),
        }
    }

    /// The keys in `namespace` starting with `prefix`, sorted. Temps and other dot-files are never keys.
    pub fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_key(namespace)?;
        let dir = self.dir.join(namespace);
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(StoreError::Io { op: "list", key: prefix.to_owned(), source });
            }
        };
        let mut keys = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| StoreError::Io { op: "list", key: prefix.to_owned(), source })?;
            if let Some(name) = entry.file_name().to_str()
                && name.starts_with(prefix)
                && check_key(name).is_ok()
            {
                keys.push(name.to_owned());
            }
        }
        keys.sort();
        Ok(keys)
    }

    fn key_path(&self, namespace: &str, key: &str) -> Result<PathBuf, StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        Ok(self.dir.join(namespace).join(key))
    }
}

/// Key rules: 1-180 characters of `[A-Za-z0-9._-]`, no leading dot. Refused, never rewritten.
pub fn check_key(key: &str) -> Result<(), StoreError> {
    let bad = |reason| Err(StoreError::InvalidKey { key: key.to_owned(), reason });
    if key.is_empty() {
        return bad("keys are 1 to 180 characters; this one is empty");
    }
    if key.len() > MAX_KEY_LEN {
        return bad("keys are 1 to 180 characters; this one is longer");
    }
    if key.starts_with('.') {
        return bad("keys may not start with a dot");
    }
    if !key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) {
        return bad("keys may only hold A-Z, a-z, 0-9, `.`, `_` and `-`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), false).unwrap();
        (dir, store)
    }

    #[test]
    fn set_get_delete_list() {
        let (_dir, s) = open();
        assert_eq!(s.get("m", "k").unwrap(), None);
        s.set("m", "k", b"v1").unwrap();
        s.set("m", "k", b"v2").unwrap();
        s.set("m", "k2", b"").unwrap();
        s.set("other", "k3", b"x").unwrap();
        assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"v2"[..]));
        assert_eq!(s.get("m", "k2").unwrap().as_deref(), Some(&b""[..]));
        assert_eq!(s.list("m", "").unwrap(), vec!["k", "k2"]);
        assert_eq!(s.list("m", "k2").unwrap(), vec!["k2"]);
        assert!(s.delete("m", "k").unwrap());
        assert!(!s.delete("m", "k").unwrap());
        assert_eq!(s.list("nobody", "").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_keys_are_refused_not_rewritten() {
        let (_dir, s) = open();
        for key in ["", ".hidden", "a/b", "../x", "sp ace", "ü", &"k".repeat(181)] {
            assert!(matches!(s.set("m", key, b"v"), Err(StoreError::InvalidKey { .. })), "{key:?}");
        }
        assert!(s.set("m", &"k".repeat(180), b"v").is_ok());
        assert!(matches!(s.get("../escape", "k"), Err(StoreError::InvalidKey { .. })));
    }

    #[test]
    fn unreadable_is_not_missing() {
        let (dir, s) = open();
        // A directory where the value's file should be cannot be read as a value.
        fs::create_dir_all(dir.path().join("m").join("k")).unwrap();
        assert!(matches!(s.get("m", "k"), Err(StoreError::Unreadable { .. })));
    }

    #[test]
    fn stale_temps_are_removed_at_open_and_never_listed() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("m")).unwrap();
        fs::write(dir.path().join("m").join(".tmp-1-0-k"), b"half").unwrap();
        fs::write(dir.path().join("m").join("k"), b"whole").unwrap();
        let s = Store::open(dir.path(), true).unwrap();
        assert!(!dir.path().join("m").join(".tmp-1-0-k").exists());
        assert_eq!(s.list("m", "").unwrap(), vec!["k"]);
        assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"whole"[..]));
    }

    #[test]
    fn oversized_values_are_refused() {
        let (_dir, s) = open();
        let big = vec![0u8; MAX_VALUE_BYTES + 1];
        assert!(matches!(s.set("m", "k", &big), Err(StoreError::TooLarge { .. })));
        assert_eq!(s.get("m", "k").unwrap(), None);
    }
}
