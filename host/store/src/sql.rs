//! The SQLite side of the store: the schema, how a connection is set up, and [`Committer`], which runs
//! every write as part of a transaction shared with whatever other writes are waiting (group commit).
//!
//! Why group commit: in durable mode each `COMMIT` ends with an fsync of the write-ahead log, and an
//! fsync costs the same for one write as for fifty. A writer queues its job, then takes the connection;
//! whoever holds it runs every queued job in one transaction (one fsync) and leaves each job's result
//! for its owner, who finds it done when it gets the connection in turn. Under load a durable commit
//! therefore costs about one fsync per batch, not per commit. Alone, a writer runs just its own job.
//!
//! Each job of a batch runs inside its own savepoint, so one failing job (a value over the disk's
//! space) rolls back only itself; if the `COMMIT` fails, every job of the batch fails and nothing of it
//! is stored.

use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The database file inside the store's directory (with its `-wal` and `-shm` beside it).
pub(crate) const FILE: &str = "store.sqlite3";
/// The size the write-ahead log is cut back to when it starts over (`journal_size_limit`).
pub(crate) const WAL_KEPT: i64 = 1 << 20;

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS kv (
        ns TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
        UNIQUE (ns, key)
    );
    -- Document patches not yet folded into kv.value, applied in seq order on load. seq is the rowid:
    -- a new row always gets more than any row still present, which is all the order needs.
    CREATE TABLE IF NOT EXISTS patches (
        seq INTEGER PRIMARY KEY, ns TEXT NOT NULL, key TEXT NOT NULL, path TEXT NOT NULL, patch BLOB NOT NULL
    );
    CREATE INDEX IF NOT EXISTS patches_by_key ON patches (ns, key, seq);
    CREATE TABLE IF NOT EXISTS history (
        ns TEXT NOT NULL, key TEXT NOT NULL, slot INTEGER NOT NULL, saved_ms INTEGER NOT NULL, value BLOB NOT NULL,
        UNIQUE (ns, key, slot)
    );
    -- A namespace's backups oldest first: the ones that give way when its backups pass their budget.
    CREATE INDEX IF NOT EXISTS history_by_age ON history (ns, saved_ms);
    CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// Opens (creating) the database in `dir` with the store's settings: WAL, `synchronous` FULL in
/// durable mode (the log is fsynced at every commit) and NORMAL otherwise (a commit is in the log,
/// written through to the OS, before it is answered, so it survives the process being killed; the
/// log is fsynced at checkpoints). Checkpoints are the maintenance thread's (`wal_autocheckpoint=0`),
/// so no request pays for one.
pub(crate) fn open(dir: &Path, durable: bool) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(dir.join(FILE), flags)?;
    // Another connection of ours (the reader, the maintenance thread) may hold a lock for a moment.
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", if durable { "FULL" } else { "NORMAL" })?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    // The log grows with the commits between two checkpoints (about a second of them), not with what
    // the store holds; SQLite reuses the file rather than shrinking it. Cut back to this when it starts
    // over after a checkpoint, so a burst of commits does not keep its size on disk for good.
    conn.pragma_update(None, "journal_size_limit", WAL_KEPT)?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

/// Column `index` of `row` as bytes, whether it was stored as a BLOB (as the store writes) or as TEXT
/// (as a player's `sqlite3` session may).
pub(crate) fn bytes(row: &rusqlite::Row<'_>, index: usize) -> rusqlite::Result<Vec<u8>> {
    let value = row.get_ref(index)?;
    value
        .as_bytes()
        .map(<[u8]>::to_vec)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, value.data_type(), Box::new(e)))
}

/// A write: runs inside the batch's transaction and answers a number (a row id, a count).
pub(crate) type Job = Box<dyn FnOnce(&Connection) -> rusqlite::Result<i64> + Send>;

/// A job's outcome; the error is SQLite's message (the batch's, when its `COMMIT` failed).
pub(crate) type Outcome = Result<i64, String>;

#[derive(Default)]
struct Queue {
    waiting: Vec<(u64, Job)>,
    next: u64,
    done: HashMap<u64, Outcome>,
}

/// The writing connection and the jobs waiting for it.
pub(crate) struct Committer {
    conn: Mutex<Connection>,
    queue: Mutex<Queue>,
    /// Jobs queued or running: a writer arriving now would wait for them.
    in_flight: AtomicUsize,
}

impl std::fmt::Debug for Committer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Committer")
    }
}

impl Committer {
    pub(crate) fn new(conn: Connection) -> Committer {
        Committer { conn: Mutex::new(conn), queue: Mutex::new(Queue::default()), in_flight: AtomicUsize::new(0) }
    }

    /// Whether jobs are queued or running.
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Relaxed) > 0
    }

    /// Runs `job` in a committed transaction, possibly together with other writers' jobs. Answers
    /// once the transaction holding it has committed (or failed).
    pub(crate) fn run(&self, job: Job) -> Outcome {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let outcome = self.run_counted(job);
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        outcome
    }

    fn run_counted(&self, job: Job) -> Outcome {
        let id = {
            let mut queue = self.queue();
            let id = queue.next;
            queue.next += 1;
            queue.waiting.push((id, job));
            id
        };
        let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        // The writer before us may have run our job in its batch.
        let batch = {
            let mut queue = self.queue();
            if let Some(outcome) = queue.done.remove(&id) {
                return outcome;
            }
            std::mem::take(&mut queue.waiting)
        };
        let mut outcomes = run_batch(&conn, batch);
        let mine = outcomes.remove(&id).unwrap_or_else(|| Err("the write was lost from its batch".to_owned()));
        self.queue().done.extend(outcomes);
        mine
    }

    /// The writing connection, for what is not a job (a test's fault injection).
    #[cfg(test)]
    pub(crate) fn connection(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One transaction for all of `batch`: each job in a savepoint of its own when there are several.
fn run_batch(conn: &Connection, batch: Vec<(u64, Job)>) -> HashMap<u64, Outcome> {
    let mut outcomes = HashMap::with_capacity(batch.len());
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        return batch.into_iter().map(|(id, _)| (id, Err(e.to_string()))).collect();
    }
    let alone = batch.len() == 1;
    for (id, job) in batch {
        let outcome = if alone { job(conn).map_err(|e| e.to_string()) } else { savepoint(conn, job) };
        outcomes.insert(id, outcome);
    }
    if alone && outcomes.values().any(Result::is_err) {
        let _ = conn.execute_batch("ROLLBACK");
        return outcomes;
    }
    if let Err(e) = conn.execute_batch("COMMIT") {
        // Nothing of the batch is stored: every job fails with the commit's error.
        let _ = conn.execute_batch("ROLLBACK");
        let why = format!("the commit failed: {e}");
        for outcome in outcomes.values_mut() {
            *outcome = Err(why.clone());
        }
    }
    outcomes
}

fn savepoint(conn: &Connection, job: Job) -> Outcome {
    conn.execute_batch("SAVEPOINT job").map_err(|e| e.to_string())?;
    match job(conn) {
        Ok(n) => {
            conn.execute_batch("RELEASE job").map_err(|e| e.to_string())?;
            Ok(n)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
            Err(e.to_string())
        }
    }
}
