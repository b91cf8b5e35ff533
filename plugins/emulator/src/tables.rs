//! Answers straight from the db: a table goes by db reference (the host splices it into the answer,
//! so it never crosses into the guest), or a fallback when the db has no such table (a small or
//! generated database).
//!
//! A leaf: the boot, the menu and the hideout answer most of their tables this way.

use modhost_sdk::{Response, db, envelope};
use serde_json::Value;

/// A db table in the envelope when the db has it; `fallback` (JSON text) when it does not.
pub(crate) fn table(path: &str, fallback: &str) -> Response {
    if db::exists(path) { envelope::ok_db(path) } else { envelope::ok_json(fallback) }
}

/// A bare db value when the db has it; `fallback` when it does not.
pub(crate) fn bare(path: &str, fallback: Value) -> Response {
    if db::exists(path) { Response::db(path) } else { Response::json(&fallback) }
}
