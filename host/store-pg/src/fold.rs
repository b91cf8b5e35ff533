//! Folding on PostgreSQL: a key's patch records are written into its whole value, off the request
//! path, by a maintenance thread (`compact` does every key at once).
//!
//! A fold runs in one transaction holding the key's row (`FOR UPDATE`), so no patch of any host can
//! come between the document it serializes and the records it deletes. The version does not change:
//! the document is the same, only stored differently, so a host that cached it stays valid.

use crate::backup::{self, Backup};
use crate::{Cached, Id, Shared, as_i64, at_version, lock};
use modhost_store::StoreError;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// The maintenance thread; stops when the store is dropped.
pub(crate) struct Maintenance {
    soon: Option<Sender<Id>>,
    thread: Option<JoinHandle<()>>,
}

impl Maintenance {
    pub(crate) fn start(shared: Arc<Shared>) -> Maintenance {
        let (soon, due) = channel();
        let thread = std::thread::Builder::new()
            .name("store-pg-fold".into())
            .spawn(move || run(&shared, &due))
            .expect("spawning the store's maintenance thread");
        Maintenance { soon: Some(soon), thread: Some(thread) }
    }

    /// Asks for `id` to be folded soon.
    pub(crate) fn fold_soon(&self, id: Id) {
        if let Some(soon) = &self.soon {
            let _ = soon.send(id);
        }
    }

    /// Folds every key that has records now; answers how many.
    pub(crate) fn fold_all(&self, shared: &Shared) -> Result<usize, StoreError> {
        let keys = shared.transact("list", "the keys with patches", |tx, _| {
            let rows = tx.query("SELECT DISTINCT ns, key FROM modhost.patches", &[])?;
            Ok(rows.iter().map(|row| (row.get::<_, String>(0), row.get::<_, String>(1))).collect::<Vec<Id>>())
        })?;
        let mut folded = 0;
        for id in keys {
            folded += usize::from(fold(shared, &id)?);
        }
        Ok(folded)
    }
}

impl Drop for Maintenance {
    fn drop(&mut self) {
        drop(self.soon.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(shared: &Shared, due: &Receiver<Id>) {
    while let Ok(id) = due.recv() {
        if let Err(e) = fold(shared, &id) {
            tracing::warn!("could not fold the patches of `{}` in `{}`: {e}", id.1, id.0);
        }
    }
}

/// Folds one key's records into its whole value; answers whether there were any.
fn fold(shared: &Shared, id: &Id) -> Result<bool, StoreError> {
    let mut backed_up = false;
    let folded = shared.transact("fold", &id.1, |tx, statements| {
        backed_up = false;
        let Some(current) = lock(tx, statements, id)? else { return Ok(None) };
        if current.pending == 0 {
            return Ok(None);
        }
        let entry = at_version(shared, tx, statements, id, current.version)?;
        let text = entry.whole();
        if shared.backed(&id.0) && shared.backup_due(id) {
            backup::write(shared, tx, statements, id, Backup::Stored(current.stored), false)?;
            backed_up = true;
        }
        // Never refused: a fold rewrites what is there.
        let change = as_i64(text.len()) - as_i64(current.stored + current.pending_bytes);
        tx.execute("UPDATE modhost.usage SET bytes = bytes + $2 WHERE ns = $1", &[&id.0, &change])?;
        tx.execute(
            "UPDATE modhost.kv SET value = $3, pending = 0, pending_bytes = 0 WHERE ns = $1 AND key = $2",
            &[&id.0, &id.1, &text.as_ref()],
        )?;
        tx.execute("DELETE FROM modhost.patches WHERE ns = $1 AND key = $2", &[&id.0, &id.1])?;
        Ok(Some(Cached {
            version: current.version,
            stored: text.len(),
            bytes: Some(text),
            doc: entry.doc,
            pending: 0,
            pending_bytes: 0,
        }))
    })?;
    if backed_up {
        shared.backed_up_now(id);
    }
    let Some(entry) = folded else { return Ok(false) };
    // The same document at the same version: keep it, now counted as stored whole.
    if shared.cached(id).is_some_and(|c| c.version == entry.version) {
        shared.remember(id, Some(entry));
    }
    Ok(true)
}
