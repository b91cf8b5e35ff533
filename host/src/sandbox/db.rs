//! The host side of the WIT `db` interface: the game database engine (`modhost-db`) for a guest, with
//! `patch` checked against the mod's `db_write` grants first, and engine errors as WIT error values.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use crate::perf::Phase;
use modhost_db::DbError;

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

    fn patch(&mut self, path: String, json: String) -> Result<(), Error> {
        let start = self.clock();
        let done = match self.cx.grants.check_db_write(&path) {
            Ok(()) => self.cx.db.patch(&path, &json).map_err(db_error),
            Err(why) => Err(self.cx.denied(why)),
        };
        self.clocked(Phase::DbPatch, start, done)
    }
}
