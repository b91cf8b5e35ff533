//! The status page's config editor: `POST /modhost/config/<id>` with the player's new `config.json`
//! as the body. "Config" here is a mod's configuration (the player's settings for one mod), not the
//! server's settings (`settings.rs`). The proposal is checked against the mod's defaults and schema as they are on disk
//! now (`modhost_mods::config`), answered 400 naming the file, the key and the rule when it is bad
//! (nothing is written), and otherwise written atomically and followed by a reload, whose outcome is
//! the answer (200 swapped, 409 refused), as `POST /modhost/reload` answers.
//!
//! What a reader must not break: the request must carry [`RELOAD_HEADER`], checked before the body is
//! read (a page on another origin cannot send it without a preflight this server never grants, so no
//! website can rewrite a player's config); and the player's current `config.json` is never consulted,
//! so the page can repair a file that made the mod fail to load.

use crate::app::App;
use crate::status::{Page, RELOAD_HEADER};
use serde_json::json;

/// The path prefix: the mod's id follows.
pub(crate) const PREFIX: &str = crate::status::CONFIG_PREFIX;
/// The largest body taken, in bytes: a configuration file's cap.
pub(crate) const MAX_BODY: usize = modhost_mods::config::MAX_FILE_BYTES as usize;

/// Whether a request is one [`apply`] answers (so its body is to be read).
pub(crate) fn is_config_post(method: &str, path: &str) -> bool {
    method == "POST" && path.starts_with(PREFIX)
}

/// Refuses a request without [`RELOAD_HEADER`] before its body is read.
pub(crate) fn refuse_without_header() -> Page {
    Page::json(
        403,
        &json!({"error": format!("a config edit must carry the `{RELOAD_HEADER}` header (the status page sends it)")}),
    )
}

/// Checks `body` as mod `id`'s new player file; when good, writes it and reloads.
pub(crate) async fn apply(app: &App, path: &str, body: &[u8]) -> Page {
    let bad = |status: u16, error: String| Page::json(status, &json!({"error": error}));
    let raw_id = path.strip_prefix(PREFIX).unwrap_or_default();
    let id = match modhost_mods::ModId::parse(raw_id) {
        Ok(id) => id,
        Err(e) => return bad(404, format!("no mod `{raw_id}`: {e}")),
    };
    let folder = app.config.root.join("mods").join(id.as_str());
    if !folder.join("mod.toml").is_file() {
        return bad(404, format!("no mod folder mods/{id} (built-in mods have no configuration)"));
    }
    if body.len() > MAX_BODY {
        return bad(413, format!("the new config is {} bytes; the cap is {MAX_BODY} (1 MiB)", body.len()));
    }
    let file = format!("mods/{id}/{}", modhost_mods::config::PLAYER_FILE);
    // Reading the folder and writing the file block: on the blocking pool, not an async worker.
    let body = body.to_vec();
    let written = tokio::task::spawn_blocking(move || {
        let player = modhost_mods::config::parse(&body, &file)?;
        let config = modhost_mods::config::load_shipped(&folder)?;
        config.check_player(&player)?;
        modhost_mods::config::write_player(&folder, &player)
    })
    .await;
    match written {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return bad(400, e.to_string()),
        Err(e) => return bad(500, format!("the config check did not finish: {e}")),
    }
    let outcome = app.reload().await;
    let status = if outcome.ok { 200 } else { 409 };
    Page::json(status, &serde_json::to_value(&outcome).unwrap_or_default())
}
