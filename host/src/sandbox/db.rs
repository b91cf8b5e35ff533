//! The host side of the WIT `db` interface: the game database engine (`modhost-db`) for a guest, with
//! `patch` checked against the mod's `db_write` grants and its size cap first, and engine errors as WIT
//! error values. Reads are synchronous host calls (they cost a path); `patch` is async, so a large one
//! runs on the blocking pool.

use super::bindings::{Error, modhost::plugin};
use super::state::{CallState, ModContext};
use crate::dblog::Refused;
use crate::perf::Phase;
use modhost_db::{DbError, Patch};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn db_error(e: DbError) -> Error {
    let message = e.to_string();
    match e {
        DbError::NotFound { .. } => Error::NotFound(message),
        DbError::BadPath { .. } | DbError::BadJson { .. } => Error::Invalid(message),
        DbError::WrongKind { .. } => Error::WrongKind(message),
    }
}

impl plugin::db::Host for CallState {
    fn get(&mut self, path: String) -> Result<String, Error> {
        let start = self.clock();
        let text = self.cx.db.get(&path).map_err(db_error).and_then(|text| {
            // The db holds validated JSON, which is UTF-8; a failure here would be a host bug,
            // reported to the mod as an error rather than a panic.
            String::from_utf8(text.to_vec())
                .map_err(|e| Error::Failed(format!("db text at `{path}` is not UTF-8: {e}")))
        });
        self.clocked(Phase::DbGet, start, text)
    }

    fn exists(&mut self, path: String) -> Result<bool, Error> {
        let start = self.clock();
        let found = self.cx.db.exists(&path).map_err(db_error);
        self.clocked(Phase::DbGet, start, found)
    }

    fn keys(&mut self, path: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let keys = self.cx.db.keys(&path).map_err(db_error);
        self.clocked(Phase::DbKeys, start, keys)
    }

    async fn patch(&mut self, path: String, json: String) -> Result<(), Error> {
        let start = self.clock();
        let done = patch(&self.cx, &mut self.store_unavailable, path, json).await;
        self.clocked(Phase::DbPatch, start, done)
    }
}

/// Patches up to this size run inline: they cost microseconds, less than a trip to the blocking pool.
const PATCH_INLINE_MAX: usize = 256 << 10;

/// `db.patch`: the path is checked first (a malformed one is `invalid`, whatever the grants), then the
/// grant, then the size against the mod's cap. A large patch (or any while another is being computed)
/// is checked and merged on the blocking pool; if the call gives up meanwhile (its deadline), the patch
/// is abandoned and publishes nothing. On a store several hosts share, a runtime patch goes through
/// the cluster's patch log (`dblog.rs`), on the blocking pool.
async fn patch(
    cx: &Arc<ModContext>,
    unavailable: &mut Option<String>,
    path: String,
    json: String,
) -> Result<(), Error> {
    modhost_db::parse_path(&path).map_err(db_error)?;
    cx.grants.check_db_write(&path).map_err(|why| cx.denied(why))?;
    let cap = cx.db_patch_bytes.load(Ordering::Relaxed);
    if json.len() > cap {
        return Err(Error::TooLarge(format!(
            "mod {}: the patch for `{path}` is {} bytes; a db patch may carry {cap} (`db_patch_mib` in modhost.toml)",
            cx.id,
            json.len()
        )));
    }
    if let Some(follow) = cx.follow.as_ref().filter(|f| f.armed()) {
        let (follow, by) = (follow.clone(), cx.id.clone());
        let logged = tokio::task::spawn_blocking(move || follow.patch(&by, &path, &json)).await;
        return match logged {
            Ok(Ok(())) => Ok(()),
            Ok(Err(Refused::Db(e))) => Err(db_error(e)),
            Ok(Err(Refused::Full { held, max })) => Err(Error::TooLarge(format!(
                "mod {}: the cluster's db patch log holds {held} bytes of patches and may hold {max}; it is emptied when the whole cluster restarts",
                cx.id
            ))),
            Ok(Err(Refused::Store(e))) => Err(super::store::noted(unavailable, e)),
            Err(e) => Err(Error::Failed(format!("the db patch did not finish: {e}"))),
        };
    }
    // Small patches run inline, unless a large one holds the db's writer: this one would wait for it.
    if json.len() <= PATCH_INLINE_MAX && !cx.db.patching() {
        return cx.db.patch(&path, &json).map_err(db_error);
    }
    /// Marks the patch abandoned when the call's future is dropped before it is done.
    struct GiveUp(Arc<AtomicBool>);
    impl Drop for GiveUp {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let gave_up = GiveUp(Arc::new(AtomicBool::new(false)));
    let (db, flag) = (cx.db.clone(), gave_up.0.clone());
    let work = tokio::task::spawn_blocking(move || {
        let parsed = Patch::parse(&path, &json)?;
        db.apply(&parsed, || !flag.load(Ordering::Relaxed))
    });
    match work.await {
        Ok(done) => done.map(|_| ()).map_err(db_error),
        Err(e) => Err(Error::Failed(format!("the db patch did not finish: {e}"))),
    }
}
