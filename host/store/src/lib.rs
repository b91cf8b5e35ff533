//! The store: durable key/value state on disk (player profiles), one directory per namespace (a mod
//! id), one file per key, so players can read and back up their profiles with ordinary tools.
//!
//! Key types: [`Store`], [`StoreError`], and the I/O [`Backend`] (swappable for fault injection). This
//! crate knows nothing of wasmtime, hyper or tokio. The protocol, the layout, and which failures each mode
//! survives are written down in `design.md` beside this crate; the short of it:
//!
//! - **Commit**: a fresh temp file in the key's directory, created `O_EXCL` under a name unique to this
//!   process and this write (`.tmp-<pid>-<n>-<key>`), written, then renamed over the key. A reader,
//!   or the next boot after a crash, sees the whole old value or the whole new one. `durable` adds an
//!   fsync of the temp before the rename and of the directory after it; an fsync error fails that
//!   commit and is never retried (after a failed fsync the kernel may have dropped the dirty pages).
//! - **One process**: `RootLock` (`lock.rs`) holds `<store>/.lock` while the store is open, so values can be
//!   cached in memory and no one else's temp is ever removed as stale.
//! - **Versions**: every value carries a version, fresh for each commit and unique across runs (the
//!   high 32 bits are random per run), so `set_if_version` fails cleanly when another write came first.
//! - **Backups**: before a key is overwritten or deleted, its old value is copied whole to
//!   `.hist/<key>.<1..3>`, at most once per key per 5 minutes, plus on the first write of each run.
//!
//! "Missing" and "unreadable" are different answers: `get` answers `Ok(None)` only when the file does
//! not exist. Any other failure to read is [`StoreError::Unreadable`], never cached, so a mod never
//! mistakes a profile it could not read for one never written.

#![warn(missing_docs)]

mod io;
mod lock;

pub use io::{Backend, NewFile, RealFs};
pub use lock::LockError;

use bytes::Bytes;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The largest value `set` accepts.
pub const MAX_VALUE_BYTES: usize = 64 << 20;
/// The longest key (and namespace) accepted.
pub const MAX_KEY_LEN: usize = 180;
/// Values kept in memory, in bytes; past it the cache is emptied and refills from disk on demand.
const CACHE_BUDGET: usize = 256 << 20;
/// A key's old value is backed up at most this often (and always on its first write of a run).
const BACKUP_EVERY: Duration = Duration::from_secs(300);
/// Backups kept per key.
const BACKUP_SLOTS: u64 = 3;
/// What one cache entry costs beside its value and names, roughly: counted so that remembered
/// absences cannot grow the cache without bound.
const ENTRY_OVERHEAD: usize = 96;
/// Commits of different keys run in parallel; those of one key are serialized by one of these stripes.
const STRIPES: usize = 64;

/// Why a store call failed. Each message names the key and says why.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The key or namespace breaks the key rules; it was refused, not rewritten.
    #[error("bad key `{key}`: {reason}")]
    InvalidKey {
        /// The key, as the caller named it.
        key: String,
        /// Why, in words.
        reason: &'static str,
    },
    /// The value is over [`MAX_VALUE_BYTES`].
    #[error("the value for `{key}` is {len} bytes; the limit is {MAX_VALUE_BYTES}")]
    TooLarge {
        /// The key, as the caller named it.
        key: String,
        /// The size, in bytes.
        len: usize,
    },
    /// The key exists but could not be read. Not the same as missing.
    #[error("`{key}` exists but could not be read: {source}")]
    Unreadable {
        /// The key, as the caller named it.
        key: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `set_if_version` found another version: another write came first. Nothing was written.
    #[error("`{key}` was changed by another write: it is at {found}, not {expected}")]
    Conflict {
        /// The key, as the caller named it.
        key: String,
        /// The version the write expected.
        expected: String,
        /// The version the store holds.
        found: String,
    },
    /// A write, delete or listing failed. Nothing was changed, except when only the final directory
    /// sync of a durable commit failed: then the message says the new value is in place.
    #[error("could not {op} `{key}`: {source}")]
    Io {
        /// What was being done (`write`, `delete`, `list`…).
        op: &'static str,
        /// The key, as the caller named it.
        key: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The store could not be opened.
    #[error(transparent)]
    Lock(#[from] LockError),
}

/// A value and the version it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    /// The value's bytes.
    pub value: Bytes,
    /// Its version: changes with every commit of the key.
    pub version: u64,
}

/// What the cache knows of one key.
#[derive(Clone, Debug)]
enum Known {
    Present(Versioned),
    Absent,
}

#[derive(Debug, Default)]
struct State {
    cache: HashMap<(String, String), Known>,
    /// Bytes the cache holds, counting a fixed overhead per entry so that remembered absences count.
    cached_bytes: usize,
    /// Each key's current version. Kept when the cache drops values, so an eviction never makes a
    /// compare-and-set fail; one small entry per key touched in this run.
    versions: HashMap<(String, String), u64>,
    /// When each key's old value was last backed up in this run.
    backed_up: HashMap<(String, String), Instant>,
}

/// The store rooted at one directory.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    durable: bool,
    backend: Arc<dyn Backend>,
    _lock: lock::RootLock,
    /// Makes temp names unique among this process's writers; the pid separates processes.
    next_temp: AtomicU64,
    /// The next version handed out; starts at a random multiple of 2^32 each run.
    next_version: AtomicU64,
    stripes: Vec<Mutex<()>>,
    state: Mutex<State>,
}

impl Store {
    /// Opens the store in `dir` (creating it), takes its lock, and removes temp files a crash left.
    pub fn open(dir: &Path, durable: bool) -> Result<Store, StoreError> {
        Store::open_with(dir, durable, Arc::new(RealFs))
    }

    /// [`Store::open`] over another I/O backend (for fault injection).
    pub fn open_with(dir: &Path, durable: bool, backend: Arc<dyn Backend>) -> Result<Store, StoreError> {
        let io = |op| move |source| StoreError::Io { op, key: dir.display().to_string(), source };
        backend.create_dir_all(dir).map_err(io("create the store directory"))?;
        let lock = lock::RootLock::acquire(dir)?;
        for namespace in backend.list(dir).map_err(io("list the store"))? {
            if check_key(&namespace).is_err() {
                continue;
            }
            for sub in [dir.join(&namespace), dir.join(&namespace).join(".hist")] {
                for name in backend.list(&sub).unwrap_or_default() {
                    if name.starts_with(".tmp-") {
                        // A temp is never a committed value, and the lock says no one else is writing it.
                        let _ = backend.remove(&sub.join(name));
                    }
                }
            }
        }
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let run = (nanos as u64 ^ (nanos >> 64) as u64 ^ u64::from(std::process::id()).rotate_left(17)) as u32;
        Ok(Store {
            dir: dir.to_owned(),
            durable,
            backend,
            _lock: lock,
            next_temp: AtomicU64::new(0),
            next_version: AtomicU64::new(u64::from(run.max(1)) << 32),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            state: Mutex::new(State::default()),
        })
    }

    /// The value under `key` in `namespace`, or `None` if it was never written.
    pub fn get(&self, namespace: &str, key: &str) -> Result<Option<Bytes>, StoreError> {
        Ok(self.get_versioned(namespace, key)?.map(|v| v.value))
    }

    /// The value and its version, or `None` if it was never written.
    pub fn get_versioned(&self, namespace: &str, key: &str) -> Result<Option<Versioned>, StoreError> {
        let path = self.key_path(namespace, key)?;
        let id = (namespace.to_owned(), key.to_owned());
        if let Some(known) = self.state().cache.get(&id) {
            return Ok(match known {
                Known::Present(v) => Some(v.clone()),
                Known::Absent => None,
            });
        }
        let _stripe = self.stripe(&id);
        // Loaded under the key's stripe so a concurrent commit cannot slip between the read and the
        // cache fill.
        if let Some(known) = self.state().cache.get(&id) {
            return Ok(match known {
                Known::Present(v) => Some(v.clone()),
                Known::Absent => None,
            });
        }
        let known = self.load(&path, &id)?;
        self.remember(id, known.clone());
        Ok(match known {
            Known::Present(v) => Some(v),
            Known::Absent => None,
        })
    }

    /// Commits `value` under `key` atomically; answers the new version.
    pub fn set(&self, namespace: &str, key: &str, value: &[u8]) -> Result<u64, StoreError> {
        Ok(self.commit(namespace, key, Some(value), None)?.0)
    }

    /// Commits `value` only if the key is still at `expected` (`None`: only if it does not exist).
    pub fn set_if_version(
        &self,
        namespace: &str,
        key: &str,
        value: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        Ok(self.commit(namespace, key, Some(value), Some(expected))?.0)
    }

    /// Removes `key`; answers whether it existed.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        Ok(self.commit(namespace, key, None, None)?.1)
    }

    /// The keys in `namespace` starting with `prefix`, sorted. Temps, backups and other dot-files are
    /// never keys.
    pub fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_key(namespace)?;
        let names = self.backend.list(&self.dir.join(namespace)).map_err(|source| StoreError::Io {
            op: "list",
            key: prefix.to_owned(),
            source,
        })?;
        let mut keys: Vec<String> =
            names.into_iter().filter(|name| name.starts_with(prefix) && check_key(name).is_ok()).collect();
        keys.sort();
        Ok(keys)
    }

    /// The namespaces that hold at least one key, sorted.
    pub fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        let io = |source| StoreError::Io { op: "list", key: self.dir.display().to_string(), source };
        let mut namespaces = Vec::new();
        for name in self.backend.list(&self.dir).map_err(io)? {
            if check_key(&name).is_err() {
                continue;
            }
            match self.list(&name, "") {
                Ok(keys) if !keys.is_empty() => namespaces.push(name),
                Ok(_) => {}
                // A stray file beside the namespaces is not one.
                Err(StoreError::Io { source, .. }) if source.kind() == ErrorKind::NotADirectory => {}
                Err(e) => return Err(e),
            }
        }
        namespaces.sort();
        Ok(namespaces)
    }

    /// Whether commits fsync (survive power loss).
    pub fn durable(&self) -> bool {
        self.durable
    }

    /// One commit: a value (`Some`) or a deletion (`None`), optionally only at an expected version.
    /// Answers the new version (0 after a deletion) and whether the key existed before.
    fn commit(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&[u8]>,
        expected: Option<Option<u64>>,
    ) -> Result<(u64, bool), StoreError> {
        let path = self.key_path(namespace, key)?;
        if let Some(value) = value
            && value.len() > MAX_VALUE_BYTES
        {
            return Err(StoreError::TooLarge { key: key.to_owned(), len: value.len() });
        }
        let id = (namespace.to_owned(), key.to_owned());
        let _stripe = self.stripe(&id);
        let cached = self.state().cache.get(&id).cloned();
        let current = match cached {
            Some(known) => known,
            None => self.load(&path, &id)?,
        };
        if let Some(expected) = expected {
            let found = match &current {
                Known::Present(v) => Some(v.version),
                Known::Absent => None,
            };
            if found != expected {
                let show = |v: Option<u64>| v.map_or_else(|| "absent".to_owned(), |v| format!("version {v}"));
                return Err(StoreError::Conflict { key: key.to_owned(), expected: show(expected), found: show(found) });
            }
        }
        let existed = matches!(current, Known::Present(_));
        if value.is_none() && !existed {
            return Ok((0, false));
        }
        if let Known::Present(old) = &current {
            self.back_up(&id, &path, &old.value);
        }

        let dir = path.parent().unwrap_or(&self.dir);
        let io_err = |op| move |source| StoreError::Io { op, key: key.to_owned(), source };
        let known = match value {
            Some(value) => {
                self.write_atomically(dir, &path, key, value).map_err(io_err("write"))?;
                let version = self.next_version.fetch_add(1, Ordering::Relaxed);
                self.state().versions.insert(id.clone(), version);
                Known::Present(Versioned { value: Bytes::copy_from_slice(value), version })
            }
            None => {
                self.backend.remove(&path).map_err(io_err("delete"))?;
                self.state().versions.remove(&id);
                Known::Absent
            }
        };
        let version = match &known {
            Known::Present(v) => v.version,
            Known::Absent => 0,
        };
        // From here the new state is what readers see; cache it before the directory sync, so a
        // failed sync (reported below) still leaves the cache telling the truth about the file.
        self.remember(id, known);
        if self.durable {
            self.backend
                .sync_dir(dir)
                .map_err(io_err("make durable (the change is in place but may not survive a power loss)"))?;
        }
        Ok((version, existed))
    }

    /// temp (O_EXCL) → write → [fsync] → rename. On any error the temp is removed and the key untouched.
    fn write_atomically(&self, dir: &Path, path: &Path, key: &str, value: &[u8]) -> std::io::Result<()> {
        let n = self.next_temp.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".tmp-{}-{n}-{key}", std::process::id()));
        let result = (|| {
            let mut file = match self.backend.create_new(&temp) {
                // The namespace's first value: make its directory (off the hot path), then retry.
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    self.backend.create_dir_all(dir)?;
                    if self.durable {
                        // The new directory's own entry must survive a power loss too.
                        self.backend.sync_dir(dir.parent().unwrap_or(dir))?;
                    }
                    self.backend.create_new(&temp)?
                }
                other => other?,
            };
            file.write_all(value)?;
            if self.durable {
                file.sync()?;
            }
            drop(file);
            self.backend.rename(&temp, path)
        })();
        if result.is_err() {
            let _ = self.backend.remove(&temp);
        }
        result
    }

    /// Copies a key's old value whole into its backup ring, at most once per key per 5 minutes plus on
    /// the first write of the run. A failed backup is logged and never fails the write.
    fn back_up(&self, id: &(String, String), path: &Path, old: &[u8]) {
        let due = self.state().backed_up.get(id).is_none_or(|at| at.elapsed() >= BACKUP_EVERY);
        if !due {
            return;
        }
        let hist = path.parent().unwrap_or(&self.dir).join(".hist");
        let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let slot = (millis / BACKUP_EVERY.as_millis() as u64) % BACKUP_SLOTS + 1;
        let target = hist.join(format!("{}.{slot}", id.1));
        let result = self
            .write_atomically(&hist, &target, &id.1, old)
            .and_then(|()| if self.durable { self.backend.sync_dir(&hist) } else { Ok(()) });
        match result {
            Ok(()) => {
                let mut state = self.state();
                if state.backed_up.len() >= 4096 {
                    // Forget keys whose period is over: they would be backed up again anyway.
                    state.backed_up.retain(|_, at| at.elapsed() < BACKUP_EVERY);
                }
                state.backed_up.insert(id.clone(), Instant::now());
            }
            Err(e) => tracing::warn!("could not back up `{}/{}` to {}: {e}", id.0, id.1, target.display()),
        }
    }

    /// Reads a key from disk. Its version is the one this run already gave it, or a fresh one.
    fn load(&self, path: &Path, id: &(String, String)) -> Result<Known, StoreError> {
        match self.backend.read(path) {
            Ok(bytes) => {
                let mut state = self.state();
                let version = *state
                    .versions
                    .entry(id.clone())
                    .or_insert_with(|| self.next_version.fetch_add(1, Ordering::Relaxed));
                Ok(Known::Present(Versioned { value: Bytes::from(bytes), version }))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(Known::Absent),
            Err(source) => Err(StoreError::Unreadable { key: id.1.clone(), source }),
        }
    }

    fn remember(&self, id: (String, String), known: Known) {
        let mut state = self.state();
        let size = |k: &Known| {
            ENTRY_OVERHEAD
                + id.0.len()
                + id.1.len()
                + match k {
                    Known::Present(v) => v.value.len(),
                    Known::Absent => 0,
                }
        };
        let added = size(&known);
        if let Some(old) = state.cache.insert(id.clone(), known) {
            state.cached_bytes -= size(&old);
        }
        state.cached_bytes += added;
        if state.cached_bytes > CACHE_BUDGET {
            // Crude but correct: the files are the truth (and versions are kept apart); keep only the
            // value just touched.
            let keep = state.cache.remove(&id);
            state.cache.clear();
            state.cached_bytes = added;
            if let Some(keep) = keep {
                state.cache.insert(id, keep);
            }
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stripe(&self, id: &(String, String)) -> std::sync::MutexGuard<'_, ()> {
        use std::hash::{BuildHasher, RandomState};
        static HASHER: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
        let hash = HASHER.get_or_init(RandomState::new).hash_one(id);
        self.stripes[(hash % STRIPES as u64) as usize].lock().unwrap_or_else(PoisonError::into_inner)
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
mod tests;
