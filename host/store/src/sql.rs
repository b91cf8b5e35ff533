//! The SQLite side of the store: the schema, how a connection is set up, and [`Committer`], which runs
//! every write as part of a transaction shared with whatever other writes are waiting (group commit).
//!
//! Why group commit: in durable mode each `COMMIT` ends with an fsync of the write-ahead log, and an
//! fsync costs the same for one write as for fifty. A writer queues its job; if no batch is running it
//! leads one: every queued job in one transaction (one fsync), leaving each job's result for its owner.
//! The others wait for that batch to end, then find their result, or lead the next batch with the jobs
//! queued meanwhile. Under load a durable commit therefore costs about one fsync per batch, not per
//! commit. Alone, a writer runs just its own job.
//!
//! Each job of a batch runs inside its own savepoint, so one failing job (a value over the disk's
//! space) rolls back only itself; if the `COMMIT` fails, every job of the batch fails and nothing of it
//! is stored.

use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// The database file inside the store's directory (with its `-wal` and `-shm` beside it).
pub(crate) const FILE: &str = "store.sqlite3";
/// The size the write-ahead log is cut back to when it starts over (`journal_size_limit`), in the
/// default mode; past it the maintenance thread starts the log over (`fold.rs`).
pub(crate) const WAL_KEPT: i64 = 1 << 20;
/// In durable mode, the log's first bytes written ahead (zeros) at open and kept: the size SQLite cuts
/// it back to instead of [`WAL_KEPT`] (see [`reserve_log`]).
pub(crate) const WAL_RESERVED: i64 = 4 << 20;

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
    conn.pragma_update(None, "journal_size_limit", if durable { WAL_RESERVED } else { WAL_KEPT })?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

/// Durable mode: makes the log's first [`WAL_RESERVED`] bytes exist on disk, written (zeros), so that
/// a commit overwrites blocks the file already has rather than growing it.
///
/// Why: a durable commit is one `fdatasync` of the log. When the commit's frames lie past the file's
/// end, that `fdatasync` must also commit the file's new size and blocks (a journal commit on ext4: a
/// second flush of the disk), about 1.6x the cost of the same bytes written in place (measured: 143 µs
/// against 89 µs for 4 KB on this project's machine). Space merely allocated (`fallocate`) costs as much
/// as growing, since its first write converts it. The log starts over at the beginning after each
/// checkpoint that catches up (`fold.rs` restarts it in place rather than truncating it, in durable
/// mode), and `journal_size_limit` cuts it back to this size, never below: so commits write into the
/// reserved bytes, and only a log longer than them (a burst between two checkpoints) grows the file.
///
/// Safe beside SQLite: it runs inside a write transaction of `conn` (no frame can be appended
/// meanwhile, by this process or another), writes only past the file's end (where no frame is), and
/// SQLite reads a log only up to its first frame that does not check out (zeros never do); the log
/// file holds no lock of SQLite's (those are on `-shm`), so opening and closing it here releases none.
pub(crate) fn reserve_log(conn: &Connection, dir: &Path) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    conn.execute_batch("BEGIN IMMEDIATE").map_err(std::io::Error::other)?;
    let filled = (|| {
        let mut file = match std::fs::OpenOptions::new().write(true).open(dir.join(format!("{FILE}-wal"))) {
            Ok(file) => file,
            // Not in WAL mode after all (a read-only medium?): nothing to reserve.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let want = WAL_RESERVED as u64;
        let mut at = file.metadata()?.len();
        if at >= want {
            return Ok(());
        }
        file.seek(SeekFrom::Start(at))?;
        let zeros = vec![0u8; 256 << 10];
        while at < want {
            let n = (want - at).min(zeros.len() as u64) as usize;
            file.write_all(&zeros[..n])?;
            at += n as u64;
        }
        // The size and the blocks, on disk once, here rather than at the first commits.
        file.sync_all()
    })();
    conn.execute_batch("ROLLBACK").map_err(std::io::Error::other)?;
    filled
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
    /// A writer is running a batch (the leader): the others wait for `ran` rather than the connection.
    running: bool,
}

/// The writing connection and the jobs waiting for it.
pub(crate) struct Committer {
    conn: Mutex<Connection>,
    queue: Mutex<Queue>,
    /// Signalled when a batch is over: its jobs' owners find their outcomes, and one writer whose job
    /// is still waiting leads the next batch.
    ran: Condvar,
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
        Committer {
            conn: Mutex::new(conn),
            queue: Mutex::new(Queue::default()),
            ran: Condvar::new(),
            in_flight: AtomicUsize::new(0),
        }
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

    /// Leader and followers: a writer queues its job; if no batch is running it leads one, of every
    /// job queued, else it waits for the running batch to end, then finds its outcome (its job was
    /// in that batch) or leads the next. Why not simply the connection's lock: each waiter would then
    /// take the lock in turn only to find its job done, one wake-up after another, while the next
    /// batch waits behind them (measured: 8 writers shared an fsync 1.5 to a batch, not 8).
    fn run_counted(&self, job: Job) -> Outcome {
        let mut queue = self.queue();
        let id = queue.next;
        queue.next += 1;
        queue.waiting.push((id, job));
        loop {
            if let Some(outcome) = queue.done.remove(&id) {
                return outcome;
            }
            if !queue.running {
                break;
            }
            queue = self.ran.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
        // Lead: our job is still queued (a batch takes every job queued when it starts).
        queue.running = true;
        let batch = std::mem::take(&mut queue.waiting);
        drop(queue);
        /// Ends the batch even if a job panics, so the followers are not left waiting for it.
        struct Lead<'a>(&'a Committer, Option<HashMap<u64, Outcome>>);
        impl Drop for Lead<'_> {
            fn drop(&mut self) {
                let mut queue = self.0.queue();
                queue.running = false;
                if let Some(outcomes) = self.1.take() {
                    queue.done.extend(outcomes);
                }
                drop(queue);
                self.0.ran.notify_all();
            }
        }
        let mut lead = Lead(self, None);
        let mut outcomes = {
            let conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
            run_batch(&conn, batch)
        };
        let mine = outcomes.remove(&id).unwrap_or_else(|| Err("the write was lost from its batch".to_owned()));
        lead.1 = Some(outcomes);
        drop(lead);
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
