//! The maintenance thread: folds a document's patch records into its stored whole value, and
//! checkpoints the write-ahead log, both off the request path.
//!
//! One fold runs at a time. A fold serializes the document (the expensive part) without the key's lock, then, under the key's stripe,
//! checks that no whole write came in between (the entry's epoch) and commits: the old stored value to
//! the backup ring if due, the new whole value, and the deletion of exactly the records it includes.
//! Records written while it serialized stay, and still apply on top after a restart.
//!
//! A checkpoint copies the log's pages into the database file. With `wal_autocheckpoint` off, this
//! thread runs one (PASSIVE: it never blocks a writer) a second after commits (in durable mode also
//! after every [`CHECKPOINT_COMMITS`] commits), so no request pays;
//! when the log is still long after it, a TRUNCATE one starts it over (a RESTART one in durable mode,
//! keeping the log's reserved space; `checkpoint` says why).

use crate::history::{self, Backup};
use crate::{Id, Inner, Known, MAX_VALUE_BYTES, StoreError};
use rusqlite::{Connection, params};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Keys waiting to be folded; past it a request does not wait: its key is asked again at its next patch.
const QUEUE: usize = 1024;
/// How long after a commit the log is checkpointed.
const CHECKPOINT_AFTER: Duration = Duration::from_secs(1);
/// Durable mode: the commits after which the log is checkpointed (and started over, when long) without
/// waiting for [`CHECKPOINT_AFTER`]. A 3 KB commit is a frame of the log (4 KB): 256 of them fill a
/// quarter of its reserved space (`sql::WAL_RESERVED`), so a fast disk (10,000 commits a second) does
/// not run past the reservation between two checkpoints, which would make every commit grow the file.
const CHECKPOINT_COMMITS: u64 = 256;
/// Durable mode, while commits come: how often the thread counts them against [`CHECKPOINT_COMMITS`].
const COUNT_EVERY: Duration = Duration::from_millis(20);

/// The handle on the thread; dropping it stops the thread (after the fold in progress).
#[derive(Debug)]
pub(crate) struct Maintenance {
    tx: Option<SyncSender<Id>>,
    thread: Option<JoinHandle<()>>,
}

impl Maintenance {
    pub(crate) fn start(inner: Arc<Inner>, checkpointer: Connection) -> Maintenance {
        let (tx, rx) = sync_channel(QUEUE);
        let thread = std::thread::Builder::new()
            .name("store-maintenance".to_owned())
            .spawn(move || run(&inner, &rx, &checkpointer))
            .ok();
        if thread.is_none() {
            tracing::warn!("the store's maintenance thread did not start: documents are folded only at `compact`");
        }
        Maintenance { tx: Some(tx), thread }
    }

    /// Asks for `id` to be folded soon.
    pub(crate) fn fold_soon(&self, id: Id) {
        if let Some(tx) = &self.tx
            && let Err(TrySendError::Full(_)) = tx.try_send(id)
        {
            tracing::debug!("the store's fold queue is full; the key is folded at a later patch");
        }
    }

    /// Folds every key with patch records, now, then checkpoints. Answers how many were folded.
    pub(crate) fn fold_all(&self, inner: &Inner) -> Result<usize, StoreError> {
        let list =
            |e: rusqlite::Error| StoreError::Io { op: "list", key: "patch records".into(), reason: e.to_string() };
        let ids: Vec<Id> = {
            let reader = inner.reader();
            let mut query = reader.prepare_cached("SELECT DISTINCT ns, key FROM patches").map_err(list)?;
            query
                .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(list)?
                .collect::<Result<_, _>>()
                .map_err(list)?
        };
        let mut folded = 0;
        for id in &ids {
            inner.entry(id)?;
            if fold(inner, id)? {
                folded += 1;
            }
        }
        let reader = inner.reader();
        reader.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())).map_err(|e| StoreError::Io {
            op: "checkpoint",
            key: "the log".into(),
            reason: e.to_string(),
        })?;
        Ok(folded)
    }
}

impl Drop for Maintenance {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(inner: &Inner, rx: &Receiver<Id>, checkpointer: &Connection) {
    let mut checkpointed_at = inner.commits.load(Ordering::Relaxed);
    let mut last = Instant::now();
    loop {
        let counting = inner.durable && inner.commits.load(Ordering::Relaxed) != checkpointed_at;
        match rx.recv_timeout(if counting { COUNT_EVERY } else { CHECKPOINT_AFTER }) {
            Ok(id) => {
                if let Err(e) = fold(inner, &id) {
                    tracing::warn!("could not fold the patches of `{}/{}`: {e}", id.0, id.1);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        let commits = inner.commits.load(Ordering::Relaxed);
        let many = inner.durable && commits.wrapping_sub(checkpointed_at) >= CHECKPOINT_COMMITS;
        if commits != checkpointed_at && (many || last.elapsed() >= CHECKPOINT_AFTER) {
            checkpoint(checkpointer, inner.durable);
            checkpointed_at = commits;
            last = Instant::now();
        }
    }
    // Leave a short log behind: the next open has less to read.
    let _ = checkpointer.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
}

/// Checkpoints the log without blocking a writer, then, if the log holds more than
/// [`crate::sql::WAL_KEPT`], starts it over from the beginning: cutting the file back (TRUNCATE) in the
/// default mode; in durable mode keeping its reserved bytes (RESTART: the next commit writes from the
/// start again, over blocks the file has, and `journal_size_limit` cuts back only what is past the
/// reservation), since a durable commit that grows the file pays a second flush (`sql::reserve_log`).
///
/// Why the second step: a PASSIVE checkpoint copies the frames that are in the log when it starts,
/// but the log starts over only when a writer finds every frame copied, which under steady commits
/// never happens: the log then grows with every commit, without bound (hundreds of MB in seconds of
/// small commits). TRUNCATE waits for the commit in progress and holds the next ones while it copies
/// what the PASSIVE one did not (the frames of the last moment) and empties the file, so a writer
/// waits about one small copy, at most once a second (in durable mode, once per
/// [`CHECKPOINT_COMMITS`] commits), and only while commits keep coming.
fn checkpoint(conn: &Connection, durable: bool) {
    let passive = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get::<_, i64>(1));
    let frames = match passive {
        Ok(frames) => frames,
        Err(e) => {
            tracing::warn!("could not checkpoint the store's log: {e}");
            return;
        }
    };
    let page: i64 = conn.query_row("PRAGMA page_size", [], |row| row.get(0)).unwrap_or(4096);
    let over = if durable { "PRAGMA wal_checkpoint(RESTART)" } else { "PRAGMA wal_checkpoint(TRUNCATE)" };
    if frames.saturating_mul(page) > crate::sql::WAL_KEPT
        && let Err(e) = conn.query_row(over, [], |_| Ok(()))
    {
        tracing::warn!("could not start the store's log over: {e}");
    }
}

/// Folds one key's records, if it is cached with some. Answers whether it folded.
fn fold(inner: &Inner, id: &Id) -> Result<bool, StoreError> {
    let _one_at_a_time = inner.folding.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some(Known::Present(seen)) = inner.state().cache.get(id).cloned() else { return Ok(false) };
    let Some(doc) = seen.doc.as_ref().filter(|_| seen.pending > 0) else { return Ok(false) };
    let text = doc.text();
    if text.len() > MAX_VALUE_BYTES {
        // Patches are refused before a document passes the cap, so this is the estimate's slack; the
        // records stay and remain correct.
        return Ok(false);
    }
    let _stripe = inner.stripe(id);
    let Some(Known::Present(now)) = inner.state().cache.get(id).cloned() else { return Ok(false) };
    if now.epoch != seen.epoch {
        return Ok(false);
    }
    let backup = inner.backed(&id.0) && inner.backup_due(id);
    let saved = if backup { Backup::Stored(seen.stored) } else { Backup::None };
    let (ns, key, value, upto) = (id.0.clone(), id.1.clone(), text.clone(), seen.last_seq);
    let (ledger, settled) = (inner.ledger.clone(), history::Settled::default());
    let counted = settled.clone();
    let outcome = inner.commit(Box::new(move |conn| {
        history::write(conn, &ledger, &counted, &ns, &key, &saved, false)?;
        conn.prepare_cached("UPDATE kv SET value = ?3 WHERE ns = ?1 AND key = ?2")?.execute(params![
            ns,
            key,
            value.as_ref()
        ])?;
        conn.prepare_cached("DELETE FROM patches WHERE ns = ?1 AND key = ?2 AND seq <= ?3")?
            .execute(params![ns, key, upto])
            .map(|n| n as i64)
    }));
    settled.settle(&inner.ledger, &id.0, outcome.is_ok());
    outcome.map_err(crate::io_error("fold", &id.1))?;
    // The whole value replaces the stored one and the records it includes. A fold is never refused:
    // it can only differ from what it replaces by a member's quotes and braces.
    inner.ledger.apply(&id.0, crate::quota::change(seen.stored + seen.pending_bytes, text.len()), 0);
    if backup {
        inner.backed_up(id);
    }
    let mut state = inner.state();
    if let Some(Known::Present(entry)) = state.cache.get_mut(id)
        && entry.epoch == seen.epoch
    {
        // Since `seen`, records were only added (the epoch is the same and no other fold ran).
        entry.pending = entry.pending.saturating_sub(seen.pending);
        entry.pending_bytes = entry.pending_bytes.saturating_sub(seen.pending_bytes);
        entry.stored = text.len();
        if entry.version == seen.version {
            entry.bytes = Some(text);
        }
    }
    Ok(true)
}
