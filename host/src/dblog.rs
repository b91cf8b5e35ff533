//! The game database across hosts: on a shared store, a mod's runtime `db.patch` goes through the
//! store's patch log ([`modhost_store::Exchange::log_patch`]), so every host applies the same patches
//! in one order, and a host that starts (or reloads) after them replays the log.
//!
//! Each generation has its own [`Follow`]: its db (built from `db.json` and its mods' `init`s, which
//! every host runs for itself and which are not logged) and how far into the log it has applied. A
//! runtime patch first applies, while the log's head is locked, every logged patch this db has not
//! applied yet, then its own: its error (a path through a scalar, …) is the mod's, and a refused
//! patch is never logged, so the log holds only patches that applied. Other hosts apply it when the
//! store signals it (`exchange.rs` in `modhost-store-pg`, the host's listener in `cluster_link.rs`).
//!
//! Everything here blocks on the store: callers run it on the blocking pool.

use modhost_db::{Db, DbError, Snapshot};
use modhost_store::{Exchange, Logged, LoggedPatch, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// What the log may hold, in bytes of patches: a mod patching the db in a loop fills it, and is
/// refused, rather than the database's disk. It is emptied when the whole cluster starts again.
pub(crate) const MAX_LOG_BYTES: u64 = 64 << 20;

/// A generation's db, following the cluster's patch log.
#[derive(Debug)]
pub(crate) struct Follow {
    exchange: Arc<dyn Exchange>,
    db: Arc<Db>,
    /// The log's place this db has applied up to; locked while patches are applied.
    applied: Mutex<u64>,
    /// Set once the generation is built: the `init`s' patches before it are this host's own.
    armed: AtomicBool,
}

/// Why a runtime patch did not land.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The patch itself: nothing was changed or logged.
    Db(DbError),
    /// The log is full.
    Full { held: u64, max: u64 },
    /// The store could not be reached, or failed: nothing was logged (or, if the commit's outcome is
    /// unknown, the log decides: this db applies it when it catches up).
    Store(StoreError),
}

impl Follow {
    /// A follower of `exchange`'s log for `db`, not armed yet (its generation is being built).
    pub(crate) fn new(exchange: Arc<dyn Exchange>, db: Arc<Db>) -> Follow {
        Follow { exchange, db, applied: Mutex::new(0), armed: AtomicBool::new(false) }
    }

    /// Whether runtime patches go through the log (its generation is built).
    pub(crate) fn armed(&self) -> bool {
        self.armed.load(Ordering::Acquire)
    }

    /// Replays the log into the built generation's db and sends its mods' patches through the log
    /// from now on. Answers how many patches it replayed.
    pub(crate) fn arm(&self) -> Result<usize, StoreError> {
        let replayed = self.catch_up()?;
        self.armed.store(true, Ordering::Release);
        Ok(replayed)
    }

    fn applied(&self) -> std::sync::MutexGuard<'_, u64> {
        self.applied.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies what the log holds past this db's place; answers how many.
    pub(crate) fn catch_up(&self) -> Result<usize, StoreError> {
        let mut applied = self.applied();
        let missing = self.exchange.patches_after(*applied)?;
        for patch in &missing {
            self.replay(patch);
            *applied = patch.seq;
        }
        Ok(missing.len())
    }

    /// Applies a logged patch. One that fails here applied on its own host (whose db must differ:
    /// other mods, another `db.json`): said, and passed over, as every host with this db does.
    fn replay(&self, patch: &LoggedPatch) {
        if let Err(e) = self.db.patch(&patch.path, &patch.json) {
            tracing::warn!(
                "the cluster's db patch {} by mod {} at `{}` does not apply on this host: {e}",
                patch.seq,
                patch.by,
                patch.path
            );
        }
    }

    /// Patches this db at `path` with `json` for mod `by`, through the log.
    pub(crate) fn patch(&self, by: &str, path: &str, json: &str) -> Result<(), Refused> {
        let mut applied = self.applied();
        let mut upto = *applied;
        // The db before this patch, while the log's transaction runs: restored if it is run again
        // (the patches before it stay applied) or if it fails.
        let mut before: Option<Snapshot> = None;
        let mut own: Option<DbError> = None;
        let mut apply = |missing: &[LoggedPatch]| {
            if let Some(before) = before.take() {
                self.db.restore(before);
            }
            for patch in missing {
                if patch.seq <= upto {
                    continue;
                }
                self.replay(patch);
                upto = patch.seq;
            }
            before = Some(self.db.snapshot());
            match self.db.patch(path, json) {
                Ok(()) => true,
                Err(e) => {
                    own = Some(e);
                    false
                }
            }
        };
        let logged = self.exchange.log_patch(*applied, (by, path, json), MAX_LOG_BYTES, &mut apply);
        match logged {
            Ok(Logged::At(seq)) => {
                *applied = seq;
                Ok(())
            }
            Ok(Logged::Refused) => {
                *applied = upto;
                Err(own.map_or_else(
                    || {
                        Refused::Store(StoreError::Io {
                            op: "append to",
                            key: "the db patch log".into(),
                            reason: "the patch was refused".into(),
                        })
                    },
                    Refused::Db,
                ))
            }
            Ok(Logged::Full { held, max }) => {
                *applied = upto;
                Err(Refused::Full { held, max })
            }
            Err(e) => {
                // Not logged (or unknown): this db must not keep it. The patches before it are the
                // log's, applied for good.
                if let Some(before) = before {
                    self.db.restore(before);
                }
                *applied = upto;
                Err(Refused::Store(e))
            }
        }
    }
}
