//! Backups on PostgreSQL: the ring and budget of SQLite's `history.rs` (three slots per key, a
//! namespace's backups held to a budget equal to its byte quota, the oldest giving way), written in
//! the transaction of the write they precede, with the namespace's backup bytes counted in `usage`.
//!
//! What must not break: the budget is checked while the transaction holds the namespace's `usage`
//! row (the write changed it before backing up), so two hosts' commits in one namespace never both see
//! room for one backup.

use crate::pool::{Statements, statement};
use crate::{Fail, Id, Shared};
use modhost_store::{StoreError, backup_cost, backup_slot};
use postgres::Transaction;

/// Backups evicted per query while a namespace is over its budget.
const EVICT_BATCH: i64 = 64;

/// A namespace's oldest backups with what each costs (as `modhost_store::backup_cost` counts it:
/// value, names and 64 bytes).
const OLDEST: &str = "SELECT key, slot, octet_length(value) + octet_length(ns) + octet_length(key) + 64
    FROM modhost.history WHERE ns = $1 ORDER BY saved_ms LIMIT $2";

/// What a commit backs up of the key it writes.
pub(crate) enum Backup<'a> {
    /// Nothing (only a delete's removal of the key's older backups).
    None,
    /// The old whole value.
    Value(&'a [u8]),
    /// The stored whole value as the database holds it (a fold).
    Stored(usize),
}

/// Inside a write's transaction: writes `backup` for `id` (`deleting`: the key's backups are
/// replaced by that one), then evicts the namespace's oldest backups while it is over its budget.
pub(crate) fn write(
    shared: &Shared,
    tx: &mut Transaction<'_>,
    statements: &mut Statements,
    id: &Id,
    backup: Backup<'_>,
    deleting: bool,
) -> Result<(), Fail> {
    let (ns, key) = (&id.0, &id.1);
    let mut change = 0i64;
    if deleting {
        let sql = "DELETE FROM modhost.history WHERE ns = $1 AND key = $2 RETURNING octet_length(value) + octet_length(ns) + octet_length(key) + 64";
        let query = statement(statements, tx, sql)?;
        let removed = tx.query(&query, &[ns, key])?;
        change -= removed.iter().map(|row| i64::from(row.get::<_, i32>(0))).sum::<i64>();
    }
    let (slot, millis) = backup_slot();
    let len = match backup {
        Backup::None => None,
        Backup::Value(old) => Some(old.len()),
        Backup::Stored(len) => Some(len),
    };
    if let Some(len) = len {
        if !deleting {
            let sql = "SELECT octet_length(value) + octet_length(ns) + octet_length(key) + 64 FROM modhost.history
                WHERE ns = $1 AND key = $2 AND slot = $3";
            let query = statement(statements, tx, sql)?;
            let old = tx.query_opt(&query, &[ns, key, &slot])?;
            change -= old.map_or(0, |row| i64::from(row.get::<_, i32>(0)));
        }
        match backup {
            Backup::Value(old) => {
                let sql = "INSERT INTO modhost.history (ns, key, slot, saved_ms, value) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (ns, key, slot) DO UPDATE SET saved_ms = excluded.saved_ms, value = excluded.value";
                let query = statement(statements, tx, sql)?;
                tx.execute(&query, &[ns, key, &slot, &millis, &old])?;
            }
            _ => {
                let sql = "INSERT INTO modhost.history (ns, key, slot, saved_ms, value)
                    SELECT ns, key, $3, $4, value FROM modhost.kv WHERE ns = $1 AND key = $2
                    ON CONFLICT (ns, key, slot) DO UPDATE SET saved_ms = excluded.saved_ms, value = excluded.value";
                let query = statement(statements, tx, sql)?;
                tx.execute(&query, &[ns, key, &slot, &millis])?;
            }
        }
        change += backup_cost(ns, key, len as u64);
    }
    if change == 0 {
        return Ok(());
    }
    let sql = "INSERT INTO modhost.usage (ns, history) VALUES ($1, $2)
        ON CONFLICT (ns) DO UPDATE SET history = modhost.usage.history + excluded.history RETURNING history";
    let query = statement(statements, tx, sql)?;
    let held = tx.query_one(&query, &[ns, &change])?.get::<_, i64>(0);
    let budget = shared.quota_of(ns).bytes as i64;
    if change > 0 && held > budget {
        let freed = evict(tx, statements, ns, held - budget)?;
        let sql = "UPDATE modhost.usage SET history = history - $2 WHERE ns = $1";
        let query = statement(statements, tx, sql)?;
        tx.execute(&query, &[ns, &freed])?;
    }
    Ok(())
}

/// Deletes `ns`'s oldest backups until at least `over` bytes of them are gone; answers how many.
fn evict(tx: &mut Transaction<'_>, statements: &mut Statements, ns: &String, over: i64) -> Result<i64, Fail> {
    let mut freed = 0i64;
    while freed < over {
        let query = statement(statements, tx, OLDEST)?;
        let rows = tx.query(&query, &[ns, &EVICT_BATCH])?;
        if rows.is_empty() {
            break;
        }
        let delete = "DELETE FROM modhost.history WHERE ns = $1 AND key = $2 AND slot = $3";
        for row in rows {
            if freed >= over {
                break;
            }
            let (key, slot, cost) = (row.get::<_, String>(0), row.get::<_, i64>(1), row.get::<_, i32>(2));
            let query = statement(statements, tx, delete)?;
            tx.execute(&query, &[ns, &key, &slot])?;
            freed += i64::from(cost);
        }
    }
    Ok(freed)
}

/// Deletes the backups of every namespace starting with `prefix` (never backed up from now on);
/// answers how many.
pub(crate) fn forget(shared: &Shared, prefix: &str) -> Result<u64, StoreError> {
    let (from, to) = (prefix.to_owned(), format!("{prefix}~"));
    shared.transact("delete the backups of", prefix, |tx, _| {
        let deleted = tx.execute("DELETE FROM modhost.history WHERE ns >= $1 AND ns < $2", &[&from, &to])?;
        tx.execute("UPDATE modhost.usage SET history = 0 WHERE ns >= $1 AND ns < $2", &[&from, &to])?;
        Ok(deleted)
    })
}
