//! Quotas: how many bytes and keys each namespace may hold, so one mod cannot fill the disk under every
//! other mod's saves.
//!
//! Key types: [`Quota`], [`Quotas`] (the player's settings), `Ledger` (each namespace's running usage).
//!
//! What counts: every stored value's bytes and every pending patch record's bytes (its path and patch),
//! and every key. The namespace's backups (`history`) are counted apart, against a budget of their own
//! equal to the byte quota, where the oldest give way to new ones and never refuse a write
//! (`history.rs` says why); with both bounded, a namespace's disk use stays within about four times
//! its quota.
//!
//! Counting is cheap: the ledger sums each namespace once at open (one pass over the rows' headers:
//! SQLite's `length()` of a blob does not read the blob), then keeps a running total in memory, changed
//! by each commit under the key's stripe. A write first *reserves* its change (refused when it would
//! take the namespace over its quota and it grows it), and gives the reservation back if its commit
//! fails, so the total always matches what is committed. A write that shrinks a namespace is never
//! refused, so a namespace over a lowered quota can still be cleaned up.

use crate::StoreError;
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What a backup row costs against its namespace's backup budget, as SQL over a `history` row (for
/// sums at open, and for rows replaced or evicted: `history.rs`, whose `ROW_OVERHEAD` is the 64).
pub(crate) const BACKUP_COST_SQL: &str = "length(value) + length(ns) + length(key) + 64";

/// The default bytes a namespace may hold: 256 MiB, room for hundreds of large profiles.
pub const DEFAULT_QUOTA_BYTES: u64 = 256 << 20;
/// The default keys a namespace may hold.
pub const DEFAULT_QUOTA_KEYS: u64 = 100_000;

/// What one namespace may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    /// Bytes of values and pending patch records.
    pub bytes: u64,
    /// Keys.
    pub keys: u64,
}

impl Default for Quota {
    fn default() -> Self {
        Quota { bytes: DEFAULT_QUOTA_BYTES, keys: DEFAULT_QUOTA_KEYS }
    }
}

/// Every namespace's quota: `default`, except the namespaces named in `namespaces`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Quotas {
    /// For every namespace not named below.
    pub default: Quota,
    /// By namespace.
    pub namespaces: HashMap<String, Quota>,
}

impl Quotas {
    /// The quota of `namespace`.
    pub fn of(&self, namespace: &str) -> Quota {
        self.namespaces.get(namespace).copied().unwrap_or(self.default)
    }
}

/// What a namespace holds now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Bytes of values and pending patch records.
    pub bytes: u64,
    /// Keys.
    pub keys: u64,
    /// What its backups cost (values, names and a fixed overhead per backup): held within the byte
    /// quota apart from `bytes`, by deleting the oldest backups.
    pub history: u64,
}

/// Each namespace's usage, and the quotas it is held to.
#[derive(Debug)]
pub(crate) struct Ledger {
    quotas: Mutex<Quotas>,
    usage: Mutex<HashMap<String, Usage>>,
}

/// A change of one namespace's usage, counted from its reservation until it is kept; dropped unkept
/// (the commit failed), it is given back.
#[must_use = "a reservation not kept is given back when dropped"]
pub(crate) struct Reservation<'a> {
    ledger: &'a Ledger,
    namespace: &'a str,
    bytes: i64,
    keys: i64,
    kept: bool,
}

impl Reservation<'_> {
    /// The commit went through: the change stays counted.
    pub(crate) fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.ledger.apply(self.namespace, -self.bytes, -self.keys);
        }
    }
}

impl Ledger {
    /// Sums every namespace's values, records and keys as the database holds them.
    pub(crate) fn load(conn: &Connection) -> rusqlite::Result<Ledger> {
        let mut usage: HashMap<String, Usage> = HashMap::new();
        let mut values = conn.prepare("SELECT ns, count(*), coalesce(sum(length(value)), 0) FROM kv GROUP BY ns")?;
        let rows =
            values.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?)))?;
        for row in rows {
            let (ns, keys, bytes) = row?;
            let u = usage.entry(ns).or_default();
            u.keys += keys.max(0) as u64;
            u.bytes += bytes.max(0) as u64;
        }
        let mut records = conn.prepare(
            "SELECT ns, coalesce(sum(length(CAST(path AS BLOB)) + length(patch)), 0) FROM patches GROUP BY ns",
        )?;
        let rows = records.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
        for row in rows {
            let (ns, bytes) = row?;
            usage.entry(ns).or_default().bytes += bytes.max(0) as u64;
        }
        let mut backups =
            conn.prepare(&format!("SELECT ns, coalesce(sum({}), 0) FROM history GROUP BY ns", BACKUP_COST_SQL))?;
        let rows = backups.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))?;
        for row in rows {
            let (ns, bytes) = row?;
            usage.entry(ns).or_default().history += bytes.max(0) as u64;
        }
        Ok(Ledger { quotas: Mutex::new(Quotas::default()), usage: Mutex::new(usage) })
    }

    pub(crate) fn set_quotas(&self, quotas: Quotas) {
        *self.quotas.lock().unwrap_or_else(PoisonError::into_inner) = quotas;
    }

    pub(crate) fn usage(&self, namespace: &str) -> Usage {
        self.all().get(namespace).copied().unwrap_or_default()
    }

    /// Counts a change of `bytes` and `keys` in `namespace` for a write of `key`, unless it grows the
    /// namespace past its quota: then nothing is counted and the answer is [`StoreError::Quota`].
    pub(crate) fn reserve<'a>(
        &'a self,
        namespace: &'a str,
        key: &str,
        bytes: i64,
        keys: i64,
    ) -> Result<Reservation<'a>, StoreError> {
        let quota = self.quotas.lock().unwrap_or_else(PoisonError::into_inner).of(namespace);
        let mut usage = self.all();
        let now = usage.get(namespace).copied().unwrap_or_default();
        let after = |held: u64, change: i64| held.saturating_add_signed(change);
        let over = |what: &'static str, held: u64, change: i64, limit: u64| {
            (change > 0 && after(held, change) > limit).then(|| StoreError::Quota {
                namespace: namespace.to_owned(),
                key: key.to_owned(),
                what,
                would_hold: after(held, change),
                quota: limit,
            })
        };
        if let Some(refused) =
            over("bytes", now.bytes, bytes, quota.bytes).or_else(|| over("keys", now.keys, keys, quota.keys))
        {
            return Err(refused);
        }
        let entry = usage.entry(namespace.to_owned()).or_default();
        entry.bytes = after(entry.bytes, bytes);
        entry.keys = after(entry.keys, keys);
        Ok(Reservation { ledger: self, namespace, bytes, keys, kept: false })
    }

    /// What `namespace`'s backups may cost: its byte quota.
    pub(crate) fn history_budget(&self, namespace: &str) -> u64 {
        self.quotas.lock().unwrap_or_else(PoisonError::into_inner).of(namespace).bytes
    }

    /// Counts a change of `namespace`'s backups.
    pub(crate) fn apply_history(&self, namespace: &str, bytes: i64) {
        let mut usage = self.all();
        let entry = usage.entry(namespace.to_owned()).or_default();
        entry.history = entry.history.saturating_add_signed(bytes);
    }

    /// Forgets the backups of the namespaces starting with `prefix` (they were deleted).
    pub(crate) fn clear_history(&self, prefix: &str) {
        for (_, usage) in self.all().iter_mut().filter(|(ns, _)| ns.starts_with(prefix)) {
            usage.history = 0;
        }
    }

    /// Counts a change that is never refused (a fold, which rewrites what is already there).
    pub(crate) fn apply(&self, namespace: &str, bytes: i64, keys: i64) {
        let mut usage = self.all();
        let entry = usage.entry(namespace.to_owned()).or_default();
        entry.bytes = entry.bytes.saturating_add_signed(bytes);
        entry.keys = entry.keys.saturating_add_signed(keys);
    }

    fn all(&self) -> MutexGuard<'_, HashMap<String, Usage>> {
        self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A size's change as a signed count: `to` minus `from`.
pub(crate) fn change(from: usize, to: usize) -> i64 {
    (to as i64).saturating_sub(from as i64)
}
