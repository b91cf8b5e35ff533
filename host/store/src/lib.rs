//! The store: durable key/value state (player profiles), in one SQLite database per root, with values
//! that are JSON documents readable and patchable by path.
//!
//! Key types: [`Store`], [`StoreError`], [`Versioned`]. This crate knows nothing of wasmtime, hyper or
//! tokio. The layout, the commit protocol, which failures each mode survives and the boundary a second
//! backend would implement are written down in `design.md` beside this crate; the short of it:
//!
//! - **Commit**: every write is a SQLite transaction in WAL mode (`sql.rs`), shared with the writes
//!   waiting at the same moment (group commit). The default mode survives the process being killed at
//!   any instant; `durable` (`synchronous=FULL`) also survives power loss, one fsync per batch.
//! - **One process**: `RootLock` (`lock.rs`) holds `<store>/.lock` while the store is open, so values
//!   can be cached in memory and another modhost, or the store CLI, is refused naming the holder's pid.
//! - **Versions**: every value carries a version, fresh for each commit and unique across runs (the
//!   high 32 bits are random per run), so `set_if_version` fails cleanly when another write came first.
//! - **Documents** (`doc.rs`): a JSON object value is held parsed, as the db engine's immutable tree; a
//!   path read costs the path, and a patch is committed as a small record (`patches`) that the
//!   maintenance thread (`fold.rs`) later folds into the whole value, off the request path.
//! - **Backups** (`history.rs`): before a key is overwritten or folded, its old value is copied whole
//!   into the `history` table (three slots per key), at most once per key per 5 minutes, plus on the
//!   first write of each run; a delete keeps the deleted value as the key's one backup. Each
//!   namespace's backups are held to a budget equal to its byte quota, the oldest giving way.
//! - **Import** (`import.rs`): a store in the old one-file-per-key layout is imported at first open,
//!   and its folders are kept, moved aside.
//!
//! "Missing" and "unreadable" are different answers: `get` answers `Ok(None)` only when the key does not
//! exist. A failure to read is [`StoreError::Unreadable`], never cached, so a mod never mistakes a
//! profile it could not read for one never written.

#![warn(missing_docs)]

mod backend;
mod doc;
mod exchange;
mod fold;
mod history;
mod import;
mod lock;
mod quota;
mod sql;

pub use backend::{Backend, HostSeen, Lease, Leased, Store};
pub use doc::{check_patch, document_error, fold_due, parse as parse_document};
pub use exchange::{Exchange, Listening, Logged, LoggedPatch, Mail, MailLimits, Mailed, Signal};
pub use history::{BACKUP_EVERY, ROW_OVERHEAD as BACKUP_ROW_OVERHEAD, cost as backup_cost, slot as backup_slot};
pub use lock::LockError;
pub use quota::{DEFAULT_QUOTA_BYTES, DEFAULT_QUOTA_KEYS, Quota, Quotas, Usage};

use bytes::Bytes;
use modhost_db::Snapshot;
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The largest value `set` accepts (and the largest a document may grow to).
pub const MAX_VALUE_BYTES: usize = 64 << 20;
/// The longest key (and namespace) accepted.
pub const MAX_KEY_LEN: usize = 180;
/// Values kept in memory, in bytes; past it the cache is emptied and refills from the database.
const CACHE_BUDGET: usize = 256 << 20;
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
    #[error("`{key}` exists but could not be read: {reason}")]
    Unreadable {
        /// The key, as the caller named it.
        key: String,
        /// Why, in words.
        reason: String,
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
    /// A document call that cannot apply: the value is not a JSON object, the path is malformed, the
    /// patch is not JSON, or a parent on the path is not an object. Nothing was changed.
    #[error("`{key}`: {reason}")]
    Document {
        /// The key, as the caller named it.
        key: String,
        /// Why, in words (the db engine's message, naming the path).
        reason: String,
    },
    /// A write, delete or listing failed. Nothing was changed.
    #[error("could not {op} `{key}`: {reason}")]
    Io {
        /// What was being done (`write`, `delete`, `list`…).
        op: &'static str,
        /// The key, as the caller named it.
        key: String,
        /// SQLite's or the OS's message (`database or disk is full`, …).
        reason: String,
    },
    /// The store's database could not be reached (a shared store's server is down or restarting):
    /// nothing was read or written; the same call may work once it is back.
    #[error("could not {op} `{key}`: the store is unavailable: {reason}")]
    Unavailable {
        /// What was being done (`read`, `write`, `list`…).
        op: &'static str,
        /// The key, as the caller named it.
        key: String,
        /// Which server, and why (its own message).
        reason: String,
    },
    /// The write carried a session's lease that is no longer this host's (it expired, or another
    /// host took the session): refused by the database, nothing written.
    #[error("could not write `{key}`: {reason}; nothing was written")]
    LeaseLost {
        /// The key, as the caller named it.
        key: String,
        /// Which lease, and what holds the session now.
        reason: String,
    },
    /// The store could not be opened: it is in use, or its directory or database is unusable.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The write would take its namespace over its quota of bytes or keys ([`Quota`]). Nothing was
    /// written.
    #[error(
        "namespace `{namespace}` is at its store quota: writing `{key}` would make it hold {would_hold} {what}; its quota is {quota} {what}"
    )]
    Quota {
        /// The namespace.
        namespace: String,
        /// The key being written.
        key: String,
        /// `bytes` or `keys`: which quota.
        what: &'static str,
        /// What the namespace would hold after the write.
        would_hold: u64,
        /// The quota.
        quota: u64,
    },
}

/// A value and the version it carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versioned {
    /// The value's bytes.
    pub value: Bytes,
    /// Its version: changes with every commit of the key.
    pub version: u64,
}

/// What the cache holds of one present key.
#[derive(Clone, Debug)]
struct Entry {
    version: u64,
    /// The whole value. `None` for a document changed by patches since it was last whole: built from
    /// `doc` when someone reads it whole.
    bytes: Option<Bytes>,
    /// The parsed document, once a document call asked for it.
    doc: Option<Snapshot>,
    /// Patch records in the database not yet folded into the stored value, their bytes, and the last
    /// one's seq.
    pending: u32,
    pending_bytes: usize,
    last_seq: i64,
    /// The stored whole value's size (without the records): with `pending_bytes`, what the value cap
    /// is checked against.
    stored: usize,
    /// Changed by every whole write or delete, so a fold computed before one never overwrites it.
    epoch: u64,
}

/// What the cache knows of one key.
#[derive(Clone, Debug)]
enum Known {
    Present(Entry),
    Absent,
}

type Id = (String, String);

#[derive(Debug, Default)]
struct State {
    cache: HashMap<Id, Known>,
    /// Bytes the cache holds, counting a fixed overhead per entry so that remembered absences count.
    cached_bytes: usize,
    /// Each key's current version. Kept when the cache drops values, so an eviction never makes a
    /// compare-and-set fail; one small entry per key touched in this run.
    versions: HashMap<Id, u64>,
    /// When each key's old value was last backed up in this run.
    backed_up: HashMap<Id, Instant>,
    /// Keys with writes in progress (from before their stripe is taken to after their commit), and how
    /// many: their readers wait for the stripe.
    writing: HashMap<Id, u32>,
}

/// A write in progress ([`Inner::writing`]).
struct Writing<'a> {
    inner: &'a Inner,
    id: Id,
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.inner.done_writing(&self.id);
    }
}

/// A write about to run elsewhere ([`Store::fence`]): until it is dropped, reads of its key wait for
/// the key's stripe, as they do while the write itself runs (on SQLite; each engine holds its own kind
/// of mark).
pub struct WriteFence {
    /// Released when dropped: the fence's whole work.
    _held: Box<dyn Send + Sync>,
}

impl WriteFence {
    /// A fence for another engine: `held` releases the key when it is dropped.
    pub fn holding(held: impl Send + Sync + 'static) -> WriteFence {
        WriteFence { _held: Box::new(held) }
    }
}

impl std::fmt::Debug for WriteFence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WriteFence")
    }
}

/// [`WriteFence`] of the SQLite engine.
struct LocalFence {
    inner: Arc<Inner>,
    id: Id,
}

impl Drop for LocalFence {
    fn drop(&mut self) {
        self.inner.done_writing(&self.id);
    }
}

/// Everything the store's calls and its maintenance thread share.
#[derive(Debug)]
struct Inner {
    durable: bool,
    _lock: lock::RootLock,
    writer: sql::Committer,
    /// Reads that miss the cache; WAL lets them run beside a commit.
    reader: Mutex<Connection>,
    /// The next version handed out; starts at a random multiple of 2^32 each run.
    next_version: AtomicU64,
    /// Bumped by each whole write, for [`Entry::epoch`].
    next_epoch: AtomicU64,
    /// Commits since the last checkpoint, for the maintenance thread.
    commits: AtomicU64,
    stripes: Vec<Mutex<()>>,
    state: Mutex<State>,
    /// Each namespace's bytes, keys and backups, held to its quota. Shared with commit jobs, which
    /// count the backups they write and evict (`history.rs`).
    ledger: Arc<quota::Ledger>,
    /// Prefixes of the namespaces never backed up (the host's own bookkeeping, [`Store::without_backups`]).
    unbacked: Mutex<Vec<String>>,
    /// Held by a fold from its first look at the entry to its last: two folds of one key at once (the
    /// maintenance thread's and `compact`'s) could otherwise write an older document over a newer fold.
    folding: Mutex<()>,
}

/// The SQLite engine: the store rooted at one directory, owned by one process ([`Store::open`]).
#[derive(Debug)]
pub(crate) struct Local {
    inner: Arc<Inner>,
    maintenance: fold::Maintenance,
}

fn io_error(op: &'static str, key: &str) -> impl Fn(String) -> StoreError {
    move |reason| StoreError::Io { op, key: key.to_owned(), reason }
}

impl Local {
    /// Opens the store in `dir` (creating it), takes its lock, imports an old files-layout store found
    /// there, and starts the maintenance thread (folds, checkpoints).
    pub(crate) fn open(dir: &Path, durable: bool) -> Result<Local, StoreError> {
        let shown = dir.display().to_string();
        let open_error = |reason: String| LockError::Io { dir: shown.clone(), source: std::io::Error::other(reason) };
        std::fs::create_dir_all(dir).map_err(|e| open_error(format!("cannot create the directory: {e}")))?;
        let lock = lock::RootLock::acquire(dir)?;
        let sqlite = |e: rusqlite::Error| open_error(format!("cannot open {}: {e}", sql::FILE));
        let writer = sql::open(dir, durable).map_err(sqlite)?;
        if durable {
            sql::reserve_log(&writer, dir).map_err(|e| open_error(format!("reserving the log's space: {e}")))?;
        }
        import::from_files_layout(dir, &writer).map_err(|e| open_error(format!("importing the old store: {e}")))?;
        let ledger =
            quota::Ledger::load(&writer).map_err(|e| open_error(format!("counting each namespace's usage: {e}")))?;
        let reader = sql::open(dir, durable).map_err(sqlite)?;
        let checkpointer = sql::open(dir, durable).map_err(sqlite)?;
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let run = (nanos as u64 ^ (nanos >> 64) as u64 ^ u64::from(std::process::id()).rotate_left(17)) as u32;
        let inner = Arc::new(Inner {
            durable,
            _lock: lock,
            writer: sql::Committer::new(writer),
            reader: Mutex::new(reader),
            next_version: AtomicU64::new(u64::from(run.max(1)) << 32),
            next_epoch: AtomicU64::new(1),
            commits: AtomicU64::new(0),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            state: Mutex::new(State::default()),
            ledger: Arc::new(ledger),
            unbacked: Mutex::new(Vec::new()),
            folding: Mutex::new(()),
        });
        let maintenance = fold::Maintenance::start(inner.clone(), checkpointer);
        Ok(Local { inner, maintenance })
    }
}

impl Backend for Local {
    fn get_versioned(&self, namespace: &str, key: &str) -> Result<Option<Versioned>, StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        let id = (namespace.to_owned(), key.to_owned());
        let Some(entry) = self.inner.entry(&id)? else { return Ok(None) };
        let value = match entry.bytes {
            Some(bytes) => bytes,
            None => {
                // A patched document read whole: build its text once, and keep it while it is current.
                let text = entry.doc.as_ref().map(Snapshot::text).unwrap_or_default();
                self.inner.update_entry(&id, entry.version, |e| e.bytes = Some(text.clone()));
                text
            }
        };
        Ok(Some(Versioned { value, version: entry.version }))
    }

    fn write(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&[u8]>,
        expected: Option<Option<u64>>,
        _lease: Option<&Lease>,
    ) -> Result<(u64, bool), StoreError> {
        // One process owns the store (the root lock): its session mutex is the whole lock.
        self.inner.write(namespace, key, value, expected)
    }

    fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_key(namespace)?;
        let reader = self.inner.reader();
        let mut query = reader
            .prepare_cached("SELECT key FROM kv WHERE ns = ?1 AND key >= ?2 ORDER BY key")
            .map_err(|e| io_error("list", prefix)(e.to_string()))?;
        let rows = query
            .query_map(params![namespace, prefix], |row| row.get::<_, String>(0))
            .map_err(|e| io_error("list", prefix)(e.to_string()))?;
        let mut keys = Vec::new();
        for key in rows {
            let key = key.map_err(|e| io_error("list", prefix)(e.to_string()))?;
            if !key.starts_with(prefix) {
                break;
            }
            keys.push(key);
        }
        Ok(keys)
    }

    fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        let reader = self.inner.reader();
        let list = |e: rusqlite::Error| io_error("list", "the namespaces")(e.to_string());
        let mut query = reader.prepare_cached("SELECT DISTINCT ns FROM kv ORDER BY ns").map_err(list)?;
        let rows = query.query_map([], |row| row.get::<_, String>(0)).map_err(list)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(list)
    }

    fn set_quotas(&self, quotas: Quotas) {
        self.inner.ledger.set_quotas(quotas);
    }

    fn without_backups(&self, prefix: &str) -> Result<u64, StoreError> {
        {
            let mut unbacked = self.inner.unbacked.lock().unwrap_or_else(PoisonError::into_inner);
            if !unbacked.iter().any(|p| p == prefix) {
                unbacked.push(prefix.to_owned());
            }
        }
        // Namespaces are `[A-Za-z0-9._-]`, all below `~`: the names starting with `prefix` are the
        // range [prefix, prefix + "~"), which the history's index answers.
        let (from, to) = (prefix.to_owned(), format!("{prefix}~"));
        let deleted = self
            .inner
            .commit(Box::new(move |conn| {
                conn.prepare_cached("DELETE FROM history WHERE ns >= ?1 AND ns < ?2")?
                    .execute(params![from, to])
                    .map(|n| n as i64)
            }))
            .map_err(io_error("delete the backups of", prefix))?;
        self.inner.ledger.clear_history(prefix);
        Ok(deleted as u64)
    }

    fn usage(&self, namespace: &str) -> Usage {
        self.inner.ledger.usage(namespace)
    }

    fn answers_from_memory(&self, namespace: &str, key: &str, document: bool) -> bool {
        self.inner.answers_from_memory(&(namespace.to_owned(), key.to_owned()), document)
    }

    fn fence(&self, namespace: &str, key: &str) -> WriteFence {
        let id: Id = (namespace.to_owned(), key.to_owned());
        *self.inner.state().writing.entry(id.clone()).or_default() += 1;
        WriteFence::holding(LocalFence { inner: self.inner.clone(), id })
    }

    fn committing(&self) -> bool {
        self.inner.writer.busy()
    }

    fn durable(&self) -> bool {
        self.inner.durable
    }

    fn compact(&self) -> Result<usize, StoreError> {
        self.maintenance.fold_all(&self.inner)
    }

    fn document(&self, namespace: &str, key: &str) -> Result<Option<(Snapshot, u64)>, StoreError> {
        self.load_document(namespace, key)
    }

    fn doc_patch(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
        _lease: Option<&Lease>,
    ) -> Result<u64, StoreError> {
        self.patch_document(namespace, key, path, patch, expected)
    }
}

impl Inner {
    /// The key's cached entry, loading it from the database (under the key's stripe) on a miss.
    ///
    /// A key with a write in progress is read under its stripe too, so the read answers what that
    /// write committed: a write whose caller gave up (a deadline, a client gone) still orders before
    /// the next reader of the key, which may be the same session's next request.
    fn entry(&self, id: &Id) -> Result<Option<Entry>, StoreError> {
        {
            let state = self.state();
            if let Some(known) = state.cache.get(id)
                && (state.writing.is_empty() || !state.writing.contains_key(id))
            {
                return Ok(known.present());
            }
        }
        let _stripe = self.stripe(id);
        self.entry_locked(id)
    }

    /// Marks a write of `id` in progress until the answer is dropped (after the write's stripe).
    fn writing(&self, id: &Id) -> Writing<'_> {
        *self.state().writing.entry(id.clone()).or_default() += 1;
        Writing { inner: self, id: id.clone() }
    }

    fn done_writing(&self, id: &Id) {
        let mut state = self.state();
        if let Some(n) = state.writing.get_mut(id) {
            *n -= 1;
            if *n == 0 {
                state.writing.remove(id);
            }
        }
    }

    /// Whether a read of `id` answers from memory now: cached (and parsed, for `document`), with no
    /// write of it in progress.
    fn answers_from_memory(&self, id: &Id, document: bool) -> bool {
        let state = self.state();
        let cached = match state.cache.get(id) {
            Some(Known::Present(entry)) => !document || entry.doc.is_some(),
            Some(Known::Absent) => true,
            None => false,
        };
        cached && !state.writing.contains_key(id)
    }

    /// [`Inner::entry`] for a caller already holding the key's stripe.
    fn entry_locked(&self, id: &Id) -> Result<Option<Entry>, StoreError> {
        if let Some(known) = self.state().cache.get(id) {
            return Ok(known.present());
        }
        let known = self.load(id)?;
        self.remember(id.clone(), known.clone());
        Ok(known.present())
    }

    /// Changes the cached entry in place if it is still at `version` (a cache fill that must not
    /// overwrite a newer commit).
    fn update_entry(&self, id: &Id, version: u64, change: impl FnOnce(&mut Entry)) {
        let mut state = self.state();
        if let Some(Known::Present(entry)) = state.cache.get_mut(id)
            && entry.version == version
        {
            change(entry);
        }
    }

    /// Reads a key from the database: its stored value, then its pending patches applied in order.
    fn load(&self, id: &Id) -> Result<Known, StoreError> {
        let unreadable = |reason: String| StoreError::Unreadable { key: id.1.clone(), reason };
        let reader = self.reader();
        let value: Option<Vec<u8>> = reader
            .prepare_cached("SELECT value FROM kv WHERE ns = ?1 AND key = ?2")
            .and_then(|mut q| q.query_row(params![id.0, id.1], |row| sql::bytes(row, 0)).optional())
            .map_err(|e| unreadable(e.to_string()))?;
        let Some(value) = value else { return Ok(Known::Absent) };
        let patches = doc::pending(&reader, id).map_err(|e| unreadable(e.to_string()))?;
        drop(reader);
        let value = Bytes::from(value);
        let mut entry = Entry {
            version: self.version_of(id),
            stored: value.len(),
            pending_bytes: patches.iter().map(|p| p.len()).sum::<usize>(),
            pending: patches.len() as u32,
            last_seq: patches.last().map_or(0, |p| p.seq),
            bytes: Some(value),
            doc: None,
            epoch: self.next_epoch.fetch_add(1, Ordering::Relaxed),
        };
        if !patches.is_empty() {
            let mut snapshot = doc::parse(&id.1, entry.bytes.clone().unwrap_or_default())
                .map_err(|e| unreadable(format!("its stored document does not parse: {e}")))?;
            for record in &patches {
                snapshot = record
                    .apply(&snapshot)
                    .map_err(|e| unreadable(format!("patch record {} does not apply: {e}", record.seq)))?;
            }
            entry.bytes = None;
            entry.doc = Some(snapshot);
        }
        Ok(Known::Present(entry))
    }

    /// One whole write: a value (`Some`) or a deletion (`None`), optionally only at an expected
    /// version. Answers the new version (0 after a deletion) and whether the key existed before.
    fn write(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&[u8]>,
        expected: Option<Option<u64>>,
    ) -> Result<(u64, bool), StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        if let Some(value) = value
            && value.len() > MAX_VALUE_BYTES
        {
            return Err(StoreError::TooLarge { key: key.to_owned(), len: value.len() });
        }
        let id: Id = (namespace.to_owned(), key.to_owned());
        let _writing = self.writing(&id);
        let _stripe = self.stripe(&id);
        self.write_locked(&id, value, expected)
    }

    /// [`Inner::write`] for a caller holding the key's stripe, with the key checked.
    fn write_locked(
        &self,
        id: &Id,
        value: Option<&[u8]>,
        expected: Option<Option<u64>>,
    ) -> Result<(u64, bool), StoreError> {
        let key = id.1.as_str();
        let current = self.entry_locked(id)?;
        check_expected(key, current.as_ref().map(|c| c.version), expected)?;
        let existed = current.is_some();
        if value.is_none() && !existed {
            return Ok((0, false));
        }
        // The write replaces the stored value and the key's records, or removes the key.
        let held = current.as_ref().map_or(0, |c| c.stored + c.pending_bytes);
        let keys = i64::from(value.is_some()) - i64::from(existed);
        let reserved = self.ledger.reserve(&id.0, key, quota::change(held, value.map_or(0, <[u8]>::len)), keys)?;
        // An overwrite backs the old value up when due; a delete always keeps the value it deletes (and
        // only that one), unless the namespace is never backed up.
        let deleting = value.is_none();
        let backup = match &current {
            Some(old) if self.backed(&id.0) && (deleting || self.backup_due(id)) => {
                history::Backup::Value(self.whole(old))
            }
            _ => history::Backup::None,
        };
        let overwrite_backed_up = !deleting && matches!(backup, history::Backup::Value(_));
        let (ns, k) = (id.0.clone(), id.1.clone());
        let stored = value.map(Bytes::copy_from_slice);
        let row = stored.clone();
        let (ledger, settled) = (self.ledger.clone(), history::Settled::default());
        let counted = settled.clone();
        let outcome = self.commit(Box::new(move |conn| {
            history::write(conn, &ledger, &counted, &ns, &k, &backup, deleting)?;
            conn.prepare_cached("DELETE FROM patches WHERE ns = ?1 AND key = ?2")?.execute(params![ns, k])?;
            match &row {
                Some(value) => conn
                    .prepare_cached("INSERT INTO kv (ns, key, value) VALUES (?1, ?2, ?3) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value")?
                    .execute(params![ns, k, value.as_ref()]),
                None => conn.prepare_cached("DELETE FROM kv WHERE ns = ?1 AND key = ?2")?.execute(params![ns, k]),
            }
            .map(|n| n as i64)
        }));
        settled.settle(&self.ledger, &id.0, outcome.is_ok());
        let op = if value.is_some() { "write" } else { "delete" };
        outcome.map_err(io_error(op, key))?;
        reserved.keep();
        if overwrite_backed_up {
            self.backed_up(id);
        }
        let known = match stored {
            Some(bytes) => {
                let version = self.new_version(id);
                Known::Present(Entry {
                    version,
                    stored: bytes.len(),
                    bytes: Some(bytes),
                    doc: None,
                    pending: 0,
                    pending_bytes: 0,
                    last_seq: 0,
                    epoch: self.next_epoch.fetch_add(1, Ordering::Relaxed),
                })
            }
            None => {
                self.state().versions.remove(id);
                Known::Absent
            }
        };
        let version = match &known {
            Known::Present(entry) => entry.version,
            Known::Absent => 0,
        };
        self.remember(id.clone(), known);
        Ok((version, existed))
    }

    /// Runs a write job through the group committer.
    fn commit(&self, job: sql::Job) -> sql::Outcome {
        let outcome = self.writer.run(job);
        if outcome.is_ok() {
            self.commits.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    /// The whole value of an entry (built from its document if patches changed it).
    fn whole(&self, entry: &Entry) -> Bytes {
        match (&entry.bytes, &entry.doc) {
            (Some(bytes), _) => bytes.clone(),
            (None, Some(doc)) => doc.text(),
            (None, None) => Bytes::new(),
        }
    }

    fn backup_due(&self, id: &Id) -> bool {
        self.state().backed_up.get(id).is_none_or(|at| at.elapsed() >= history::BACKUP_EVERY)
    }

    /// Whether `namespace` is backed up (not the host's own bookkeeping).
    fn backed(&self, namespace: &str) -> bool {
        let unbacked = self.unbacked.lock().unwrap_or_else(PoisonError::into_inner);
        unbacked.is_empty() || !unbacked.iter().any(|prefix| namespace.starts_with(prefix.as_str()))
    }

    fn backed_up(&self, id: &Id) {
        let mut state = self.state();
        if state.backed_up.len() >= 4096 {
            // Forget keys whose period is over: they would be backed up again anyway.
            state.backed_up.retain(|_, at| at.elapsed() < history::BACKUP_EVERY);
        }
        state.backed_up.insert(id.clone(), Instant::now());
    }

    /// The version a key loaded from the database carries: the one this run already gave it, or a
    /// fresh one.
    fn version_of(&self, id: &Id) -> u64 {
        *self.state().versions.entry(id.clone()).or_insert_with(|| self.next_version.fetch_add(1, Ordering::Relaxed))
    }

    fn new_version(&self, id: &Id) -> u64 {
        let version = self.next_version.fetch_add(1, Ordering::Relaxed);
        self.state().versions.insert(id.clone(), version);
        version
    }

    fn remember(&self, id: Id, known: Known) {
        let mut state = self.state();
        let size = |k: &Known| {
            ENTRY_OVERHEAD
                + id.0.len()
                + id.1.len()
                + match k {
                    // A parsed document's nodes cost about as much again as its text.
                    Known::Present(e) => {
                        e.bytes.as_ref().map_or(0, Bytes::len)
                            + e.doc.as_ref().map_or(0, |_| e.stored + e.pending_bytes)
                    }
                    Known::Absent => 0,
                }
        };
        let added = size(&known);
        if let Some(old) = state.cache.insert(id.clone(), known) {
            state.cached_bytes = state.cached_bytes.saturating_sub(size(&old));
        }
        state.cached_bytes += added;
        if state.cached_bytes > CACHE_BUDGET {
            // Crude but correct: the database is the truth (and versions are kept apart); keep only
            // the value just touched.
            let keep = state.cache.remove(&id);
            state.cache.clear();
            state.cached_bytes = added;
            if let Some(keep) = keep {
                state.cache.insert(id, keep);
            }
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stripe(&self, id: &Id) -> MutexGuard<'_, ()> {
        use std::hash::{BuildHasher, RandomState};
        static HASHER: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
        let hash = HASHER.get_or_init(RandomState::new).hash_one(id);
        self.stripes[(hash % STRIPES as u64) as usize].lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Known {
    fn present(&self) -> Option<Entry> {
        match self {
            Known::Present(entry) => Some(entry.clone()),
            Known::Absent => None,
        }
    }
}

/// `Conflict` unless the key, at `found` (`None`: absent), is at `expected` (when the write is
/// conditional: `Some(None)` expects it absent).
pub fn check_expected(key: &str, found: Option<u64>, expected: Option<Option<u64>>) -> Result<(), StoreError> {
    let Some(expected) = expected else { return Ok(()) };
    if found == expected {
        return Ok(());
    }
    let show = |v: Option<u64>| v.map_or_else(|| "absent".to_owned(), |v| format!("version {v}"));
    Err(StoreError::Conflict { key: key.to_owned(), expected: show(expected), found: show(found) })
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
