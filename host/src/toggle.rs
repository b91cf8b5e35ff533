//! The status page's enable and disable buttons: `POST /modhost/mods/<id>/enable` and
//! `POST /modhost/mods/<id>/disable`, the same change as `modhost enable` and `modhost disable`
//! (`installed.rs`: the mod's folder moved between `mods/` and `disabled/`), followed by a reload whose
//! outcome is the answer (200 swapped, 409 refused), as `POST /modhost/reload` answers.
//!
//! What a reader must not break: the request must carry [`RELOAD_HEADER`] (a page on another origin
//! cannot send it without a preflight this server never grants, so no website can switch a player's
//! mods off); and disabling a mod that others require is answered 409 with `confirm` naming them,
//! and done only when the request carries [`CONFIRM_HEADER`] (the page's "disable anyway"), which
//! disables them with it: they cannot load without it, and a reload refuses to lose running mods.

use crate::app::App;
use crate::installed::Root;
use crate::status::{Page, RELOAD_HEADER};
use serde_json::json;

/// The path prefix: `<id>/enable` or `<id>/disable` follows.
pub(crate) const PREFIX: &str = "/modhost/mods/";
/// The header that confirms disabling a mod others require.
pub const CONFIRM_HEADER: &str = "x-modhost-confirm";

/// Whether a request is a toggle (`POST /modhost/mods/<id>/enable|disable`).
pub(crate) fn is_toggle(method: &str, path: &str) -> bool {
    method == "POST"
        && path.strip_prefix(PREFIX).is_some_and(|rest| rest.ends_with("/enable") || rest.ends_with("/disable"))
}

/// Enables or disables the mod the path names, then reloads.
pub(crate) async fn apply(app: &App, path: &str, reload_header: bool, confirmed: bool) -> Page {
    let bad = |status: u16, error: String| Page::json(status, &json!({"error": error}));
    if !reload_header {
        return bad(
            403,
            format!("enabling or disabling a mod must carry the `{RELOAD_HEADER}` header (the status page sends it)"),
        );
    }
    let rest = path.strip_prefix(PREFIX).unwrap_or_default();
    let (raw_id, enable) = match rest.rsplit_once('/') {
        Some((id, "enable")) => (id, true),
        Some((id, _)) => (id, false),
        None => (rest, false),
    };
    let id = match modhost_mods::ModId::parse(raw_id) {
        Ok(id) => id,
        Err(e) => return bad(404, format!("no mod `{raw_id}`: {e}")),
    };
    let root = Root::new(&app.config.root);
    // Reading and renaming folders blocks: on the blocking pool, not an async worker.
    let changed = tokio::task::spawn_blocking(move || {
        if !enable && !confirmed {
            let dependents = root.dependents(&id);
            if !dependents.is_empty() {
                return Err((409, dependents));
            }
        }
        let changed = match enable {
            true => crate::installed::set_enabled(&root, &id, true),
            false => crate::installed::disable_with_dependents(&root, &id).map(drop),
        };
        changed.map_err(|e| (400, vec![format!("{e:#}")]))
    })
    .await;
    match changed {
        Ok(Ok(())) => {
            let outcome = app.reload().await;
            Page::json(if outcome.ok { 200 } else { 409 }, &serde_json::to_value(&outcome).unwrap_or_default())
        }
        Ok(Err((409, dependents))) => Page::json(
            409,
            &json!({
                "error": format!(
                    "{} require(s) {raw_id} and cannot load without it: disabling {raw_id} disables {} too",
                    dependents.join(", "),
                    if dependents.len() == 1 { "it" } else { "them" }
                ),
                "confirm": dependents,
            }),
        ),
        Ok(Err((status, why))) => bad(if why[0].contains("is installed") { 404 } else { status }, why.join("")),
        Err(e) => bad(500, format!("the change did not finish: {e}")),
    }
}
