//! The reference game: an SPT-style backend written as an ordinary modhost mod.
//!
//! Built into the `modhost` binary (see `host/build.rs`); it uses nothing a third-party mod could not.
//! It answers the static tables by db reference (so they never cross into the guest), the client's
//! boot sequence, profile create / list / select (`profile.rs`), and `items/moving` (`moving.rs`):
//! inventory actions (`actions.rs`) and buying from traders (`trading.rs`) over a shared inventory
//! model (`inventory.rs`), each validated whole before it changes anything. Profiles are stored keyed
//! and indexed (`shape.rs`) and read and changed by path (`doc.rs`), so a drag costs what it touches,
//! not the profile's size; the client still reads SPT's shape. Other mods reach it through
//! `gifts.rs`: the function `give-item`, and the events it emits (`profile.created`,
//! `profile.selected`, `items.moved`, `trade.done`; `docs/mods-together.md`). It tells the client
//! through the notifier (`notify.rs`): its channel, and a chat message when a gift or a purchase
//! arrives (`docs/realtime.md`).

mod actions;
mod doc;
mod gifts;
mod input;
mod inventory;
mod moving;
mod notify;
mod profile;
mod shape;
mod trading;

use modhost_sdk::{Request, Response, Result, Router, db, envelope, export};

fn router() -> Router {
    Router::new()
        .route("/client/game/version/validate", null_data)
        .route("/client/game/config", game_config)
        .route("/client/game/start", game_start)
        .route("/client/game/keepalive", keepalive)
        .route("/client/notifier/channel/create", notify::channel)
        .route("/client/game/profile/list", profile::list)
        .route("/client/game/profile/create", profile::create)
        .route("/client/game/profile/select", profile::select)
        .route("/client/game/profile/items/moving", moving::moving)
        .route("/launcher/ping", launcher_ping)
        .route("/launcher/profiles", profile::launcher_profiles)
        .route("/client/items", items)
        .route("/client/globals", globals)
        .route("/client/handbook/templates", handbook)
        .route("/client/languages", languages)
        .prefix("/client/locale/", locale)
        .provide_json("give-item", gifts::give_item)
}

fn null_data(_: &Request) -> Result<Response> {
    Ok(envelope::null())
}

/// The backend's addresses, as the client will use them: this host.
fn game_config(req: &Request) -> Result<Response> {
    let host = format!("http://{}", req.header("host").unwrap_or("127.0.0.1:6969"));
    let profile = profile::session_profile(req)?;
    Ok(envelope::ok(&serde_json::json!({
        "aid": profile,
        "lang": "en",
        "languages": {"en": "English"},
        "ndaFree": false,
        "taxonomy": 6,
        "activeProfileId": profile,
        "backend": {"Lobby": host, "Trading": host, "Messaging": host, "Main": host, "RagFair": host},
        "useProtobuf": false,
        "utc_time": now(),
        "totalInGame": 0,
    })))
}

fn game_start(_: &Request) -> Result<Response> {
    Ok(envelope::ok(&serde_json::json!({"utc_time": now()})))
}

fn launcher_ping(_: &Request) -> Result<Response> {
    Ok(Response::json(&serde_json::json!({"ok": true, "pong": true})))
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn keepalive(_: &Request) -> Result<Response> {
    Ok(envelope::ok(&serde_json::json!({"msg": "OK", "utc_time": now()})))
}

fn items(_: &Request) -> Result<Response> {
    Ok(envelope::ok_db("templates.items"))
}

fn globals(_: &Request) -> Result<Response> {
    Ok(envelope::ok_db("globals"))
}

fn handbook(_: &Request) -> Result<Response> {
    if db::exists("templates.handbook") {
        Ok(envelope::ok_db("templates.handbook"))
    } else {
        Ok(envelope::ok(&serde_json::json!({"Categories": [], "Items": []})))
    }
}

fn languages(_: &Request) -> Result<Response> {
    if db::exists("locales.languages") {
        Ok(envelope::ok_db("locales.languages"))
    } else {
        Ok(envelope::ok(&serde_json::json!({"en": "English"})))
    }
}

/// `/client/locale/<lang>`: the language's table, else English, else `{}`. The language is reduced to
/// letters, digits and `-` so it can never address anything but a locale.
fn locale(req: &Request) -> Result<Response> {
    let lang: String = req.rest().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(16).collect();
    for candidate in [lang.as_str(), "en"] {
        let path = db::path(&["locales", "global", candidate]);
        if !candidate.is_empty() && db::exists(&path) {
            return Ok(envelope::ok_db(&path));
        }
    }
    Ok(envelope::ok_json("{}"))
}

export!(router());
