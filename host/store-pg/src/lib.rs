//! The store on PostgreSQL: many modhost hosts sharing one store, with every version, conditional
//! write and quota checked by the database, so that no host's memory can overwrite another's commit.
//!
//! Key types: [`PgStore`] (the engine, a [`modhost_store::Backend`]); [`connect`] answers the
//! [`Store`] the host's glue holds, the same type SQLite's engine gives it. The tables (`pool.rs`) are
//! SQLite's (`kv`, `patches`, `history`) in a schema `modhost`, plus `usage` (each namespace's running
//! usage) and the `versions` sequence.
//!
//! - **Versions** come from one sequence and are stored in `kv.version`: a version is never handed
//!   out twice, by any host, in any run. A write locks its key's row (`SELECT … FOR UPDATE`), checks
//!   the version there, and writes a fresh one, all in one transaction.
//! - **The cache** keeps each key's value (and parsed document) with the version it was read at; a
//!   read asks the database for the key's version (one small round trip) and answers from memory when
//!   it is unchanged. Another host's commit therefore is seen by the next read, whatever this host
//!   cached. (Skipping that round trip while the host holds the session's lease is the next step,
//!   `design.md` says how.)
//! - **Quotas** are counted in `usage`, changed in the transaction of the write that changes them, so
//!   every host is held to what all of them committed.
//! - **Documents** are patched as on SQLite: one `patches` record per patch, folded into the whole
//!   value by the maintenance thread (`fold.rs`), under the key's row lock.
//! - **Backups** (`backup.rs`): the same three-slot ring and budget as SQLite's.
//!
//! Commits are synchronous (`synchronous_commit` as the server has it, `on` by default): an answered
//! write survives the server's crash. A lost connection fails the call in flight with a message that
//! names the server; the next call connects again.

mod backup;
mod exchange;
mod fold;
mod leases;
mod pool;
pub mod testing;

use bytes::Bytes;
use modhost_db::{Patch, Snapshot};
use modhost_store::{
    Backend, Lease, MAX_VALUE_BYTES, Quotas, Store, StoreError, Usage, Versioned, WriteFence, check_expected,
    check_key, check_patch, document_error, fold_due, parse_document,
};
use pool::{Pool, Statements, statement};
use postgres::Transaction;
use postgres::error::SqlState;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Values kept in memory, in bytes; past it the cache is emptied and refills from the database.
const CACHE_BUDGET: usize = 256 << 20;
/// A transaction that loses a race (a serialization failure, a deadlock, a key created by another
/// host between our look and our insert) is run again, this many times at most.
const ATTEMPTS: usize = 8;
/// How long a transaction may sit idle (its host stalled mid-commit) before the server ends it, ms.
const STALLED_MS: u64 = 5_000;

/// Opens the store at `url` (`postgres://…`), creating its tables if they are missing.
pub fn connect(url: &str) -> Result<Store, StoreError> {
    Ok(Store::from_backend(Box::new(PgStore::connect(url)?)))
}

type Id = (String, String);

/// What this host holds of one key, valid while the database's version is still `version`.
#[derive(Clone, Debug)]
struct Cached {
    version: u64,
    /// The whole value; `None` for a document changed by patches since it was last whole.
    bytes: Option<Bytes>,
    doc: Option<Snapshot>,
    /// The stored whole value's size, the key's patch records and their bytes.
    stored: usize,
    pending: u32,
    pending_bytes: usize,
}

impl Cached {
    fn size(&self) -> usize {
        96 + self.bytes.as_ref().map_or(0, Bytes::len)
            + self.doc.as_ref().map_or(0, |_| self.stored + self.pending_bytes)
    }

    /// The whole value (built from the document when patches changed it).
    fn whole(&self) -> Bytes {
        match (&self.bytes, &self.doc) {
            (Some(bytes), _) => bytes.clone(),
            (None, Some(doc)) => doc.text(),
            (None, None) => Bytes::new(),
        }
    }

    fn document(&self, key: &str) -> Result<Snapshot, StoreError> {
        match &self.doc {
            Some(doc) => Ok(doc.clone()),
            None => parse_document(key, self.bytes.clone().unwrap_or_default()),
        }
    }
}

#[derive(Default)]
struct Cache {
    map: HashMap<Id, Cached>,
    bytes: usize,
}

/// Everything the store's calls and its maintenance thread share.
pub(crate) struct Shared {
    pool: Pool,
    /// Connections for sessions' leases (`leases.rs`).
    leases: Pool,
    cache: Mutex<Cache>,
    quotas: Mutex<Quotas>,
    /// Prefixes of the namespaces never backed up ([`Store::without_backups`]).
    unbacked: Mutex<Vec<String>>,
    /// When this host last backed up each key.
    backed_up: Mutex<HashMap<Id, Instant>>,
    /// Keys with writes in progress on this host (a write, or a fence before one), and how many:
    /// their reads wait, so a write whose caller gave up still orders before the next read.
    writing: Mutex<HashMap<Id, u32>>,
    written: Condvar,
    /// Writes running now.
    in_flight: AtomicUsize,
}

/// The PostgreSQL engine.
pub struct PgStore {
    shared: Arc<Shared>,
    exchange: Arc<exchange::PgExchange>,
    maintenance: fold::Maintenance,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgStore({})", self.shared.pool.shown())
    }
}

/// Why a transaction stopped: a store answer (nothing written), a race lost (run it again), or the
/// database's error.
pub(crate) enum Fail {
    Store(StoreError),
    Retry,
    Pg(postgres::Error),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Self {
        Fail::Pg(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

/// The database's own message when it sent one (`value too long…`), else the client's.
pub(crate) fn reason(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None if e.is_closed() => format!("the connection was lost: {e}"),
        None => e.to_string(),
    }
}

/// Whether running the transaction again may succeed: it lost a race, or its connection broke before
/// it committed.
fn retryable(e: &postgres::Error) -> bool {
    lost(e)
        || e.code().is_some_and(|c| *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Whether the connection was ended (an administrator, a shutdown, a restart) or failed: a new one
/// may work, or say that the server is unreachable.
pub(crate) fn lost(e: &postgres::Error) -> bool {
    e.is_closed() || e.code().is_some_and(|c| c.code().starts_with("08") || c.code().starts_with("57P"))
}

// The statements, named for what they do. `$1`/`$2` are always the namespace and the key.
const VERSION: &str = "SELECT version FROM modhost.kv WHERE ns = $1 AND key = $2";
/// A key's stored value and its patch records in order, in one statement (one snapshot).
const LOAD: &str = "SELECT 0::BIGINT, version, value, ''::TEXT FROM modhost.kv WHERE ns = $1 AND key = $2
    UNION ALL SELECT 1, seq, patch, path FROM modhost.patches WHERE ns = $1 AND key = $2 ORDER BY 1, 2";
/// The key's row, locked until the transaction ends, with its records' count and bytes.
const LOCK: &str = "SELECT version, octet_length(value)::BIGINT, pending, pending_bytes
    FROM modhost.kv WHERE ns = $1 AND key = $2 FOR UPDATE";
const USAGE_CHANGE: &str = "INSERT INTO modhost.usage (ns, bytes, keys) VALUES ($1, $2, $3)
    ON CONFLICT (ns) DO UPDATE SET bytes = modhost.usage.bytes + excluded.bytes, keys = modhost.usage.keys + excluded.keys
    RETURNING bytes, keys";
const DELETE_PATCHES: &str = "DELETE FROM modhost.patches WHERE ns = $1 AND key = $2";
const UPDATE: &str = "UPDATE modhost.kv SET value = $3, version = nextval('modhost.versions'), pending = 0,
    pending_bytes = 0 WHERE ns = $1 AND key = $2 RETURNING version";
const INSERT: &str = "INSERT INTO modhost.kv (ns, key, value, version) VALUES ($1, $2, $3, nextval('modhost.versions'))
    ON CONFLICT (ns, key) DO NOTHING RETURNING version";
const DELETE: &str = "DELETE FROM modhost.kv WHERE ns = $1 AND key = $2";
const INSERT_PATCH: &str = "INSERT INTO modhost.patches (ns, key, path, patch) VALUES ($1, $2, $3, $4)";
const BUMP: &str = "UPDATE modhost.kv SET version = nextval('modhost.versions'), pending = pending + 1,
    pending_bytes = pending_bytes + $3 WHERE ns = $1 AND key = $2 RETURNING version";
const LIST: &str = "SELECT key FROM modhost.kv WHERE ns = $1 AND key >= $2 AND key < $3 ORDER BY key";
const NAMESPACES: &str = "SELECT DISTINCT ns FROM modhost.kv ORDER BY ns";
const USAGE: &str = "SELECT bytes, keys, history FROM modhost.usage WHERE ns = $1";

/// A key's row as [`LOCK`] answers it.
pub(crate) struct Locked {
    version: u64,
    stored: usize,
    pending: u32,
    pending_bytes: usize,
}

impl PgStore {
    /// Connects to `url`, creates the schema if it is missing (one host at a time: an advisory lock),
    /// and starts the maintenance thread (folds).
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        let unreachable = |reason: String| StoreError::Io { op: "open", key: "the store".into(), reason };
        // A transaction left open by a host that stalled (a frozen process) holds its rows' locks: the
        // server ends it, so the session's next host is never blocked behind it for long.
        let pool =
            Pool::new(url, &format!("-c idle_in_transaction_session_timeout={STALLED_MS}")).map_err(unreachable)?;
        // Leases need no fsync of their own: a write that carries one commits synchronously, which
        // flushes the lease's grant before it; a grant lost in a crash is harmless, since the
        // fencing check compares the holder too. A grant waits for a row lock at most briefly (a
        // write of the old holder finishing), then the caller tries again.
        let leases = Pool::new(url, "-c synchronous_commit=off -c lock_timeout=2000").map_err(unreachable)?;
        let mut client = pool.connect().map_err(unreachable)?;
        let schema = |e: postgres::Error| unreachable(format!("creating the store's tables: {}", reason(&e)));
        let mut tx = client.transaction().map_err(schema)?;
        tx.batch_execute("SELECT pg_advisory_xact_lock(7240011)").map_err(schema)?;
        tx.batch_execute(pool::SCHEMA).map_err(schema)?;
        tx.commit().map_err(schema)?;
        let shared = Arc::new(Shared {
            pool,
            leases,
            cache: Mutex::new(Cache::default()),
            quotas: Mutex::new(Quotas::default()),
            unbacked: Mutex::new(Vec::new()),
            backed_up: Mutex::new(HashMap::new()),
            writing: Mutex::new(HashMap::new()),
            written: Condvar::new(),
            in_flight: AtomicUsize::new(0),
        });
        let maintenance = fold::Maintenance::start(shared.clone());
        let exchange = Arc::new(exchange::PgExchange { shared: shared.clone() });
        Ok(PgStore { shared, exchange, maintenance })
    }
}

/// A write of one key in progress on this host: reads of the key wait until it is dropped.
struct Writing {
    shared: Arc<Shared>,
    id: Id,
}

impl Drop for Writing {
    fn drop(&mut self) {
        let mut writing = self.shared.writing();
        if let Some(n) = writing.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                writing.remove(&self.id);
            }
        }
        drop(writing);
        self.shared.written.notify_all();
    }
}

impl Shared {
    fn writing(&self) -> MutexGuard<'_, HashMap<Id, u32>> {
        self.writing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn mark_writing(self: &Arc<Self>, id: &Id) -> Writing {
        *self.writing().entry(id.clone()).or_default() += 1;
        Writing { shared: self.clone(), id: id.clone() }
    }

    /// Waits while this host writes `id` (a read must see that write).
    fn wait_for_writes(&self, id: &Id) {
        let mut writing = self.writing();
        while writing.contains_key(id) {
            writing = self.written.wait(writing).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn cached(&self, id: &Id) -> Option<Cached> {
        self.cache().map.get(id).cloned()
    }

    pub(crate) fn remember(&self, id: &Id, entry: Option<Cached>) {
        let mut cache = self.cache();
        let added = entry.as_ref().map_or(0, Cached::size);
        let old = match entry {
            Some(entry) => cache.map.insert(id.clone(), entry),
            None => cache.map.remove(id),
        };
        cache.bytes = cache.bytes.saturating_sub(old.as_ref().map_or(0, Cached::size)) + added;
        if cache.bytes > CACHE_BUDGET {
            // The database is the truth: start over with the value just touched.
            let keep = cache.map.remove(id);
            cache.map.clear();
            cache.bytes = keep.as_ref().map_or(0, Cached::size);
            if let Some(keep) = keep {
                cache.map.insert(id.clone(), keep);
            }
        }
    }

    /// The key as the database holds it now: from memory when the database's version is the cached
    /// one (one small query), else loaded.
    fn current(&self, id: &Id) -> Result<Option<Cached>, StoreError> {
        self.wait_for_writes(id);
        let cached = self.cached(id);
        let unreadable = |reason: String| StoreError::Unreadable { key: id.1.clone(), reason };
        let loaded = self.read("read", &id.1, unreadable, |client, statements| {
            if let Some(cached) = &cached {
                let query = statement(statements, client, VERSION)?;
                match client.query_opt(&query, &[&id.0, &id.1])? {
                    None => return Ok(None),
                    Some(row) if row.get::<_, i64>(0) as u64 == cached.version => return Ok(Some(cached.clone())),
                    Some(_) => {}
                }
            }
            load(client, statements, id)
        })?;
        self.remember(id, loaded.clone());
        Ok(loaded)
    }

    /// Runs a read (or a statement that may simply run again) on a pooled connection, again on a new
    /// one when the old one broke (a restarted server); its failure, naming the server, made a store
    /// error by `error` (`Unavailable` when the server cannot be reached).
    pub(crate) fn read<T>(
        &self,
        op: &'static str,
        key: &str,
        error: impl Fn(String) -> StoreError,
        body: impl FnMut(&mut postgres::Client, &mut Statements) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        self.run_on(&self.pool, op, key, error, body)
    }

    /// [`Shared::read`] on `pool` (the leases have a pool of their own).
    pub(crate) fn run_on<T>(
        &self,
        pool: &Pool,
        op: &'static str,
        key: &str,
        error: impl Fn(String) -> StoreError,
        mut body: impl FnMut(&mut postgres::Client, &mut Statements) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        let shown = pool.shown();
        let unavailable = |reason: String| StoreError::Unavailable { op, key: key.to_owned(), reason };
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let mut conn = pool.take().map_err(unavailable)?;
            let (client, statements) = conn.parts();
            match body(client, statements) {
                Ok(answer) => return Ok(answer),
                Err(Fail::Store(e)) => return Err(e),
                Err(Fail::Pg(e)) if retryable(&e) => last = format!("PostgreSQL at {shown}: {}", reason(&e)),
                Err(Fail::Pg(e)) => return Err(error(format!("PostgreSQL at {shown}: {}", reason(&e)))),
                Err(Fail::Retry) => last = "the key changed while it was read".to_owned(),
            }
        }
        Err(unavailable(format!("gave up after {ATTEMPTS} attempts: {last}")))
    }

    fn quota_of(&self, namespace: &str) -> modhost_store::Quota {
        self.quotas.lock().unwrap_or_else(PoisonError::into_inner).of(namespace)
    }

    /// Changes `namespace`'s usage by `bytes` and `keys` inside `tx`; refused (nothing changed once
    /// the transaction rolls back) when a growth takes it over its quota.
    pub(crate) fn count(
        &self,
        tx: &mut Transaction<'_>,
        statements: &mut Statements,
        namespace: &str,
        key: &str,
        bytes: i64,
        keys: i64,
    ) -> Result<(), Fail> {
        if bytes == 0 && keys == 0 {
            return Ok(());
        }
        let change = statement(statements, tx, USAGE_CHANGE)?;
        let row = tx.query_one(&change, &[&namespace, &bytes, &keys])?;
        let (held, held_keys) = (row.get::<_, i64>(0).max(0) as u64, row.get::<_, i64>(1).max(0) as u64);
        let quota = self.quota_of(namespace);
        let over = |what: &'static str, change: i64, held: u64, limit: u64| {
            (change > 0 && held > limit).then(|| StoreError::Quota {
                namespace: namespace.to_owned(),
                key: key.to_owned(),
                what,
                would_hold: held,
                quota: limit,
            })
        };
        match over("bytes", bytes, held, quota.bytes).or_else(|| over("keys", keys, held_keys, quota.keys)) {
            Some(refused) => Err(Fail::Store(refused)),
            None => Ok(()),
        }
    }

    /// Whether `namespace` is backed up (not the host's own bookkeeping).
    pub(crate) fn backed(&self, namespace: &str) -> bool {
        let unbacked = self.unbacked.lock().unwrap_or_else(PoisonError::into_inner);
        !unbacked.iter().any(|prefix| namespace.starts_with(prefix.as_str()))
    }

    /// Whether this host should back `id` up now (first write of the run, or the period passed).
    pub(crate) fn backup_due(&self, id: &Id) -> bool {
        let backed_up = self.backed_up.lock().unwrap_or_else(PoisonError::into_inner);
        backed_up.get(id).is_none_or(|at| at.elapsed() >= modhost_store::BACKUP_EVERY)
    }

    pub(crate) fn backed_up_now(&self, id: &Id) {
        let mut backed_up = self.backed_up.lock().unwrap_or_else(PoisonError::into_inner);
        if backed_up.len() >= 4096 {
            backed_up.retain(|_, at| at.elapsed() < modhost_store::BACKUP_EVERY);
        }
        backed_up.insert(id.clone(), Instant::now());
    }

    /// Runs `body` in a transaction, again when it loses a race, and commits it. A failure before
    /// the commit is run again if it may succeed; a commit whose connection broke is not, since it
    /// may have been stored: it answers that it is unknown.
    pub(crate) fn transact<T>(
        &self,
        op: &'static str,
        key: &str,
        mut body: impl FnMut(&mut Transaction<'_>, &mut Statements) -> Result<T, Fail>,
    ) -> Result<T, StoreError> {
        let shown = self.pool.shown();
        let io = |reason: String| StoreError::Io { op, key: key.to_owned(), reason };
        let unavailable = |reason: String| StoreError::Unavailable { op, key: key.to_owned(), reason };
        let pg = |e: &postgres::Error| format!("PostgreSQL at {shown}: {}", reason(e));
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let _done = Done(&self.in_flight);
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            let mut conn = self.pool.take().map_err(unavailable)?;
            let (client, statements) = conn.parts();
            let mut tx = match client.transaction() {
                Ok(tx) => tx,
                Err(e) if retryable(&e) => {
                    last = pg(&e);
                    continue;
                }
                Err(e) => return Err(io(pg(&e))),
            };
            match body(&mut tx, statements) {
                Ok(answer) => {
                    return match tx.commit() {
                        Ok(()) => Ok(answer),
                        Err(e) if e.is_closed() => Err(unavailable(format!(
                            "the connection to PostgreSQL at {shown} was lost during the commit, so whether it was stored is unknown: {}",
                            reason(&e)
                        ))),
                        Err(e) if retryable(&e) => {
                            last = pg(&e);
                            continue;
                        }
                        Err(e) => Err(io(pg(&e))),
                    };
                }
                Err(Fail::Store(e)) => return Err(e),
                Err(Fail::Retry) => last = "another host wrote the key at the same moment".to_owned(),
                Err(Fail::Pg(e)) if retryable(&e) => last = pg(&e),
                Err(Fail::Pg(e)) => return Err(io(pg(&e))),
            }
        }
        Err(unavailable(format!("gave up after {ATTEMPTS} attempts: {last}")))
    }
}

struct Done<'a>(&'a AtomicUsize);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Loads a key (its stored value and records, one statement) on `client` (a connection, or a
/// transaction that holds the key's row).
pub(crate) fn load(
    client: &mut impl postgres::GenericClient,
    statements: &mut Statements,
    id: &Id,
) -> Result<Option<Cached>, Fail> {
    let unreadable = |reason: String| StoreError::Unreadable { key: id.1.clone(), reason };
    let query = statement(statements, client, LOAD)?;
    let rows = client.query(&query, &[&id.0, &id.1])?;
    let mut rows = rows.into_iter();
    let Some(first) = rows.next().filter(|row| row.get::<_, i64>(0) == 0) else { return Ok(None) };
    let value = Bytes::from(first.get::<_, Vec<u8>>(2));
    let mut entry = Cached {
        version: first.get::<_, i64>(1) as u64,
        stored: value.len(),
        bytes: Some(value),
        doc: None,
        pending: 0,
        pending_bytes: 0,
    };
    let mut doc: Option<Snapshot> = None;
    for row in rows {
        let (seq, patch, path) = (row.get::<_, i64>(1), row.get::<_, Vec<u8>>(2), row.get::<_, String>(3));
        let base = match doc.take() {
            Some(doc) => doc,
            None => parse_document(&id.1, entry.bytes.clone().unwrap_or_default())
                .map_err(|e| unreadable(format!("its stored document does not parse: {e}")))?,
        };
        let text = String::from_utf8_lossy(&patch);
        let next = Patch::parse(&path, &text)
            .and_then(|p| base.patched(&p))
            .map_err(|e| unreadable(format!("patch record {seq} does not apply: {e}")))?;
        entry.pending += 1;
        entry.pending_bytes += path.len() + patch.len();
        doc = Some(next);
    }
    if doc.is_some() {
        entry.bytes = None;
        entry.doc = doc;
    }
    Ok(Some(entry))
}

/// Locks the key's row for the transaction: its version and sizes, or `None` when it is absent.
pub(crate) fn lock(tx: &mut Transaction<'_>, statements: &mut Statements, id: &Id) -> Result<Option<Locked>, Fail> {
    let query = statement(statements, tx, LOCK)?;
    Ok(tx.query_opt(&query, &[&id.0, &id.1])?.map(|row| Locked {
        version: row.get::<_, i64>(0) as u64,
        stored: row.get::<_, i64>(1) as usize,
        pending: row.get::<_, i64>(2) as u32,
        pending_bytes: row.get::<_, i64>(3) as usize,
    }))
}

/// The key's cached entry if it is at `version`, else loaded inside `tx` (which holds its row).
pub(crate) fn at_version(
    shared: &Shared,
    tx: &mut Transaction<'_>,
    statements: &mut Statements,
    id: &Id,
    version: u64,
) -> Result<Cached, Fail> {
    if let Some(cached) = shared.cached(id).filter(|c| c.version == version) {
        return Ok(cached);
    }
    let loaded = load(tx, statements, id)?;
    loaded.ok_or(Fail::Retry)
}

fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Backend for PgStore {
    fn get_versioned(&self, namespace: &str, key: &str) -> Result<Option<Versioned>, StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        let id = (namespace.to_owned(), key.to_owned());
        let Some(entry) = self.shared.current(&id)? else { return Ok(None) };
        let value = match &entry.bytes {
            Some(bytes) => bytes.clone(),
            None => {
                let text = entry.whole();
                let mut whole = entry.clone();
                whole.bytes = Some(text.clone());
                self.shared.remember(&id, Some(whole));
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
        lease: Option<&Lease>,
    ) -> Result<(u64, bool), StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        if let Some(value) = value
            && value.len() > MAX_VALUE_BYTES
        {
            return Err(StoreError::TooLarge { key: key.to_owned(), len: value.len() });
        }
        let shared = &self.shared;
        let id: Id = (namespace.to_owned(), key.to_owned());
        let _writing = shared.mark_writing(&id);
        let op = if value.is_some() { "write" } else { "delete" };
        let mut backed_up = false;
        let (version, existed) = shared.transact(op, key, |tx, statements| {
            backed_up = false;
            leases::check(tx, statements, lease, key)?;
            let current = lock(tx, statements, &id)?;
            check_expected(key, current.as_ref().map(|c| c.version), expected)?;
            let existed = current.is_some();
            if value.is_none() && !existed {
                return Ok((0, false));
            }
            let held = current.as_ref().map_or(0, |c| c.stored + c.pending_bytes);
            let keys = i64::from(value.is_some()) - i64::from(existed);
            let bytes = as_i64(value.map_or(0, <[u8]>::len)) - as_i64(held);
            shared.count(tx, statements, namespace, key, bytes, keys)?;
            let deleting = value.is_none();
            if let Some(old) = &current
                && shared.backed(namespace)
                && (deleting || shared.backup_due(&id))
            {
                let old = at_version(shared, tx, statements, &id, old.version)?.whole();
                backup::write(shared, tx, statements, &id, backup::Backup::Value(&old), deleting)?;
                backed_up = !deleting;
            } else if deleting {
                backup::write(shared, tx, statements, &id, backup::Backup::None, true)?;
            }
            if current.as_ref().is_some_and(|c| c.pending > 0) {
                let delete = statement(statements, tx, DELETE_PATCHES)?;
                tx.execute(&delete, &[&id.0, &id.1])?;
            }
            let params: [&(dyn postgres::types::ToSql + Sync); 3] = [&id.0, &id.1, &value.unwrap_or_default()];
            let version = match (value, existed) {
                (Some(_), true) => {
                    let update = statement(statements, tx, UPDATE)?;
                    tx.query_one(&update, &params)?.get::<_, i64>(0) as u64
                }
                (Some(_), false) => {
                    let insert = statement(statements, tx, INSERT)?;
                    // Another host created the key since our look: run again, locking its row.
                    let Some(row) = tx.query_opt(&insert, &params)? else { return Err(Fail::Retry) };
                    row.get::<_, i64>(0) as u64
                }
                (None, _) => {
                    let delete = statement(statements, tx, DELETE)?;
                    tx.execute(&delete, &[&id.0, &id.1])?;
                    0
                }
            };
            Ok((version, existed))
        })?;
        if backed_up {
            shared.backed_up_now(&id);
        }
        let entry = value.map(|value| {
            let bytes = Bytes::copy_from_slice(value);
            Cached { version, stored: bytes.len(), bytes: Some(bytes), doc: None, pending: 0, pending_bytes: 0 }
        });
        if value.is_some() || existed {
            shared.remember(&id, entry);
        }
        Ok((version, existed))
    }

    fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        check_key(namespace)?;
        let io = |e: String| StoreError::Io { op: "list", key: prefix.to_owned(), reason: e };
        // Keys are `[A-Za-z0-9._-]`, all below `~`: those starting with `prefix` are [prefix, prefix~).
        let end = format!("{prefix}~");
        self.shared.read("list", prefix, io, |client, statements| {
            let query = statement(statements, client, LIST)?;
            let rows = client.query(&query, &[&namespace, &prefix, &end])?;
            Ok(rows.iter().map(|row| row.get::<_, String>(0)).collect())
        })
    }

    fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        let io = |e: String| StoreError::Io { op: "list", key: "the namespaces".to_owned(), reason: e };
        self.shared.read("list", "the namespaces", io, |client, statements| {
            let query = statement(statements, client, NAMESPACES)?;
            let rows = client.query(&query, &[])?;
            Ok(rows.iter().map(|row| row.get::<_, String>(0)).collect())
        })
    }

    fn document(&self, namespace: &str, key: &str) -> Result<Option<(Snapshot, u64)>, StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        let id = (namespace.to_owned(), key.to_owned());
        let Some(entry) = self.shared.current(&id)? else { return Ok(None) };
        if let Some(doc) = &entry.doc {
            return Ok(Some((doc.clone(), entry.version)));
        }
        let doc = entry.document(key)?;
        let mut parsed = entry.clone();
        parsed.doc = Some(doc.clone());
        self.shared.remember(&id, Some(parsed));
        Ok(Some((doc, entry.version)))
    }

    fn doc_patch(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
        lease: Option<&Lease>,
    ) -> Result<u64, StoreError> {
        let parsed = check_patch(namespace, key, path, patch)?;
        let shared = &self.shared;
        let id: Id = (namespace.to_owned(), key.to_owned());
        for _ in 0..ATTEMPTS {
            let writing = shared.mark_writing(&id);
            let record = path.len() + patch.len();
            let outcome = shared.transact("write", key, |tx, statements| {
                leases::check(tx, statements, lease, key)?;
                let Some(current) = lock(tx, statements, &id)? else {
                    check_expected(key, None, expected.map(Some))?;
                    return Ok(None);
                };
                check_expected(key, Some(current.version), expected.map(Some))?;
                let base = at_version(shared, tx, statements, &id, current.version)?.document(key)?;
                let next = base.patched(&parsed).map_err(document_error(key))?;
                let pending_bytes = current.pending_bytes + record;
                if current.stored + pending_bytes > MAX_VALUE_BYTES {
                    return Err(
                        StoreError::TooLarge { key: key.to_owned(), len: current.stored + pending_bytes }.into()
                    );
                }
                shared.count(tx, statements, namespace, key, as_i64(record), 0)?;
                let insert = statement(statements, tx, INSERT_PATCH)?;
                tx.execute(&insert, &[&id.0, &id.1, &path, &patch])?;
                let bump = statement(statements, tx, BUMP)?;
                let version = tx.query_one(&bump, &[&id.0, &id.1, &as_i64(record)])?.get::<_, i64>(0) as u64;
                Ok(Some(Cached {
                    version,
                    bytes: None,
                    doc: Some(next),
                    stored: current.stored,
                    pending: current.pending + 1,
                    pending_bytes,
                }))
            })?;
            drop(writing);
            let Some(entry) = outcome else {
                // The first patch of a key makes a whole value; if another host created the key since
                // our look, patch what it wrote instead.
                let doc =
                    parse_document(key, Bytes::from_static(b"{}"))?.patched(&parsed).map_err(document_error(key))?;
                match self.write(namespace, key, Some(&doc.text()), Some(None), lease) {
                    Ok((version, _)) => return Ok(version),
                    Err(StoreError::Conflict { .. }) if expected.is_none() => continue,
                    Err(e) => return Err(e),
                }
            };
            let (version, due) = (entry.version, fold_due(entry.pending, entry.pending_bytes, entry.stored));
            shared.remember(&id, Some(entry));
            if due {
                self.maintenance.fold_soon(id);
            }
            return Ok(version);
        }
        Err(StoreError::Io {
            op: "write",
            key: key.to_owned(),
            reason: format!("gave up after {ATTEMPTS} attempts: other hosts kept creating and deleting the key"),
        })
    }

    fn set_quotas(&self, quotas: Quotas) {
        *self.shared.quotas.lock().unwrap_or_else(PoisonError::into_inner) = quotas;
    }

    fn without_backups(&self, prefix: &str) -> Result<u64, StoreError> {
        {
            let mut unbacked = self.shared.unbacked.lock().unwrap_or_else(PoisonError::into_inner);
            if !unbacked.iter().any(|p| p == prefix) {
                unbacked.push(prefix.to_owned());
            }
        }
        backup::forget(&self.shared, prefix)
    }

    fn usage(&self, namespace: &str) -> Usage {
        let io = |e: String| StoreError::Io { op: "read", key: "the usage".to_owned(), reason: e };
        let usage = self.shared.read("read", "the usage", io, |client, statements| {
            let query = statement(statements, client, USAGE)?;
            let row = client.query_opt(&query, &[&namespace])?;
            Ok(row.map_or_else(Usage::default, |row| Usage {
                bytes: row.get::<_, i64>(0).max(0) as u64,
                keys: row.get::<_, i64>(1).max(0) as u64,
                history: row.get::<_, i64>(2).max(0) as u64,
            }))
        });
        usage.unwrap_or_else(|e| {
            tracing::warn!("could not read the usage of namespace `{namespace}`: {e}");
            Usage::default()
        })
    }

    fn answers_from_memory(&self, _namespace: &str, _key: &str, _document: bool) -> bool {
        // Every read asks the database for the key's version.
        false
    }

    fn fence(&self, namespace: &str, key: &str) -> WriteFence {
        WriteFence::holding(self.shared.mark_writing(&(namespace.to_owned(), key.to_owned())))
    }

    fn committing(&self) -> bool {
        self.shared.in_flight.load(Ordering::Relaxed) > 0
    }

    fn durable(&self) -> bool {
        true
    }

    fn compact(&self) -> Result<usize, StoreError> {
        self.maintenance.fold_all(&self.shared)
    }

    fn shared(&self) -> bool {
        true
    }

    fn acquire_lease(&self, session: &str, holder: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        leases::acquire(&self.shared, session, holder, ttl)
    }

    fn release_lease(&self, lease: &Lease) -> Result<(), StoreError> {
        leases::release(&self.shared, lease)
    }

    fn announce(&self, holder: &str, report: &str) -> Result<Vec<modhost_store::HostSeen>, StoreError> {
        leases::announce(&self.shared, holder, report)
    }

    fn exchange(&self) -> Option<Arc<dyn modhost_store::Exchange>> {
        Some(self.exchange.clone())
    }
}
