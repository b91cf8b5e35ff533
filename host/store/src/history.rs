//! The backup ring (`history`) and its budget: how a backup is written inside a commit, what it
//! costs, and which backups give way when a namespace's backups pass their budget.
//!
//! Key types: [`Backup`] (what a commit backs up), [`Settled`] (a commit's change of its namespace's
//! backup bytes, given back if the commit fails).
//!
//! Each namespace's backups have a budget of their own, equal to its byte quota, beside the quota its
//! live values are held to (`quota.rs`). A backup never makes a write fail: when the namespace's
//! backups would pass the budget, its *oldest* backups (by `saved_ms`) are deleted in the same
//! commit until they fit. Why a budget of its own rather than a share of the quota: a backup must
//! never be the reason a player's save is refused (the write it protects would be lost instead), and
//! a namespace whose live values fill its quota must still keep backups of them. With both bounded,
//! a namespace's rows hold at most twice its quota, so its disk use stays within about four times it.
//!
//! A backup row costs its value, its namespace and key names, and [`ROW_OVERHEAD`]: a namespace that
//! deletes many distinct keys with empty values fills its budget with rows that are mostly names,
//! which must count too. A delete keeps exactly one backup of the key: the value it deleted (what
//! undoing it needs); the key's older backups go with it. Namespaces the host marks as its own
//! bookkeeping ([`crate::Store::without_backups`], the timers) are never backed up.
//!
//! What must not break: the budget is checked inside the commit job, which the group committer runs
//! one at a time on the writing connection, so two commits of one namespace never both see room for
//! one backup. The ledger's count changes when the job runs; if the transaction then fails, the
//! caller gives the change back ([`Settled`]), so the count stays what is committed.

use crate::quota::{BACKUP_COST_SQL as COST_SQL, Ledger};
use bytes::Bytes;
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A key's old value is backed up at most this often (and always on its first write of a run, and
/// at its deletion).
pub const BACKUP_EVERY: Duration = Duration::from_secs(300);
/// Backups kept per key.
const BACKUP_SLOTS: u64 = 3;
/// What a backup row costs beside its value and names: its slot and time, the row's header, and its
/// index entries, roughly.
pub const ROW_OVERHEAD: u64 = 64;
/// Backups evicted per query while a namespace is over its budget.
const EVICT_BATCH: i64 = 64;

/// What a commit backs up of the key it writes.
pub(crate) enum Backup {
    /// Nothing: not due, or the namespace is never backed up.
    None,
    /// The old value, into the current slot (an overwrite).
    Value(Bytes),
    /// The stored whole value as the database holds it (a fold), of this many bytes.
    Stored(usize),
}

/// A commit's change of its namespace's backup bytes, as its job made it. Settle it once the commit
/// answered: a failed commit gives the change back.
#[derive(Clone, Default)]
pub(crate) struct Settled(Arc<AtomicI64>);

impl Settled {
    pub(crate) fn settle(&self, ledger: &Ledger, namespace: &str, committed: bool) {
        let change = self.0.swap(0, Ordering::Relaxed);
        if !committed && change != 0 {
            ledger.apply_history(namespace, -change);
        }
    }
}

/// What one backup row of `value_len` bytes under `ns`/`key` costs its namespace's budget.
pub fn cost(ns: &str, key: &str, value_len: u64) -> i64 {
    (value_len + ns.len() as u64 + key.len() as u64 + ROW_OVERHEAD) as i64
}

// The same as SQL is `quota::BACKUP_COST_SQL` (the ledger sums it at open); its 64 is [`ROW_OVERHEAD`].

/// Inside a commit job: writes `backup` for `ns`/`key` (`deleting`: the key is being deleted, so its
/// backups are replaced by that one; `backed`: false for a namespace never backed up, whose key then
/// keeps none), then evicts the namespace's oldest backups while it is over its budget. Counts the
/// change in the ledger and in `settled`.
pub(crate) fn write(
    conn: &Connection,
    ledger: &Ledger,
    settled: &Settled,
    ns: &str,
    key: &str,
    backup: &Backup,
    deleting: bool,
) -> rusqlite::Result<()> {
    if matches!(backup, Backup::None) && !deleting {
        // The common case (a write between two backups of its key): nothing to do.
        return Ok(());
    }
    let mut change = 0i64;
    if deleting {
        change -= conn
            .prepare_cached(&format!("SELECT coalesce(sum({COST_SQL}), 0) FROM history WHERE ns = ?1 AND key = ?2"))?
            .query_row(params![ns, key], |row| row.get::<_, i64>(0))?;
        conn.prepare_cached("DELETE FROM history WHERE ns = ?1 AND key = ?2")?.execute(params![ns, key])?;
    }
    let (slot, millis) = slot();
    let len = match backup {
        Backup::None => None,
        Backup::Value(old) => Some(old.len()),
        Backup::Stored(len) => Some(*len),
    };
    if let Some(len) = len {
        if !deleting {
            change -= conn
                .prepare_cached(&format!("SELECT {COST_SQL} FROM history WHERE ns = ?1 AND key = ?2 AND slot = ?3"))?
                .query_row(params![ns, key, slot], |row| row.get::<_, i64>(0))
                .optional()?
                .unwrap_or(0);
        }
        match backup {
            Backup::Value(old) => conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO history (ns, key, slot, saved_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?
                .execute(params![ns, key, slot, millis, old.as_ref()])?,
            _ => conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO history (ns, key, slot, saved_ms, value)
                     SELECT ns, key, ?3, ?4, value FROM kv WHERE ns = ?1 AND key = ?2",
                )?
                .execute(params![ns, key, slot, millis])?,
        };
        change += cost(ns, key, len as u64);
    }
    if change > 0 {
        change -= evict(conn, ledger.history_budget(ns), ledger.usage(ns).history.saturating_add_signed(change), ns)?;
    }
    if change != 0 {
        ledger.apply_history(ns, change);
        settled.0.fetch_add(change, Ordering::Relaxed);
    }
    Ok(())
}

/// Deletes `ns`'s oldest backups until `held` (what they cost now) is within `budget`; answers what
/// the deleted ones cost.
fn evict(conn: &Connection, budget: u64, held: u64, ns: &str) -> rusqlite::Result<i64> {
    let mut freed = 0i64;
    while held.saturating_sub(freed as u64) > budget {
        let oldest: Vec<(String, i64, i64)> = conn
            .prepare_cached(&format!(
                "SELECT key, slot, {COST_SQL} FROM history WHERE ns = ?1 ORDER BY saved_ms LIMIT ?2"
            ))?
            .query_map(params![ns, EVICT_BATCH], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
            .collect::<Result<_, _>>()?;
        if oldest.is_empty() {
            break;
        }
        for (key, slot, cost) in oldest {
            if held.saturating_sub(freed as u64) <= budget {
                break;
            }
            conn.prepare_cached("DELETE FROM history WHERE ns = ?1 AND key = ?2 AND slot = ?3")?
                .execute(params![ns, key, slot])?;
            freed += cost;
        }
    }
    Ok(freed)
}

/// The backup slot for now, `(unix_ms / 5 min) mod 3 + 1`, so the ring spans restarts and holds up to
/// 15 minutes of a key's history; and now in Unix milliseconds.
pub fn slot() -> (i64, i64) {
    let millis = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
    (((millis / BACKUP_EVERY.as_millis() as u64) % BACKUP_SLOTS + 1) as i64, millis as i64)
}
