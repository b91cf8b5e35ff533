//! The smallest useful modhost mod: one route for each thing the host gives a mod.
//!
//! Build and install it (from the repository root):
//!
//! ```sh
//! make example-hello ROOT=modhost-data   # builds it and copies it to modhost-data/mods/hello/
//! make run                               # serves it beside the built-in mods
//! ```
//!
//! Routes:
//! - `GET /hello/item`: reads one value from the db (the rouble's name) and answers it in an envelope.
//! - `POST /hello/visits`: counts visits in the store (write, then read back) per session.
//! - `GET /hello/items`: answers the whole item table by db reference: the host splices it in, so it
//!   never passes through this mod.
//! - `GET /hello/fail`: answers the SPT error envelope (`err` 1) without failing the request.

use modhost_sdk::{Request, Response, Result, Router, db, envelope, export, store};

const ROUBLES: &str = "5449016a4bdc2d6f028b456f";

fn router() -> Router {
    Router::new()
        .route("/hello/item", item)
        .route("/hello/visits", visits)
        .route("/hello/items", items)
        .route("/hello/fail", fail)
}

fn item(_: &Request) -> Result<Response> {
    let name: String = db::get(&db::path(&["templates", "items", ROUBLES, "_props", "Name"]))?;
    Ok(envelope::ok(&serde_json::json!({ "id": ROUBLES, "name": name })))
}

fn visits(req: &Request) -> Result<Response> {
    let key = format!("visits.{}", req.session().unwrap_or("anonymous"));
    let count: u64 = store::get(&key)?.unwrap_or(0) + 1;
    store::set(&key, &count)?;
    // Read it back: what the store holds is the answer, not what we meant to write.
    let stored: Option<u64> = store::get(&key)?;
    Ok(envelope::ok(&serde_json::json!({ "visits": stored })))
}

fn items(_: &Request) -> Result<Response> {
    Ok(envelope::ok_db("templates.items"))
}

fn fail(_: &Request) -> Result<Response> {
    Ok(envelope::error(1, "hello refuses politely"))
}

export!(router());
