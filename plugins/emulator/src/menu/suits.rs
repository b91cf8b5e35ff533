//! A trader's suits (SPT's `CustomizationDynamicRouter` → `CustomizationCallbacks.GetTraderSuits` →
//! `CustomizationController.GetTraderSuits`): `/client/trading/customization/<trader>/…` → the
//! trader's `suits` (`traders.<trader>.suits`) whose suit is in `templates.customization` and is for
//! the player's side, as SPT filters them. An unknown trader answers `[]` (SPT throws). The trader's
//! id is the path's segment after `customization/`; at most [`MAX_SUITS`] are read.
//! (`/client/trading/customization/storage` is a route of its own, `menu/mod.rs`.)

use crate::ids::is_id;
use crate::profile::{doc_read, player};
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde_json::Value;

/// The most suits one trader's list is read for (SPT's traders sell a few dozen).
const MAX_SUITS: usize = 1000;

/// Adds the trader suits route to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.prefix("/client/trading/customization/", suits)
}

fn suits(req: &Request) -> Result<Response> {
    let uid = match player(req, "a trader's suits")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let trader = req.rest().split('/').next().unwrap_or_default();
    if !is_id(trader) && !trader.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(envelope::ok_json("[]"));
    }
    let side = doc_read::<String>(&format!("profile.{uid}"), &["Info", "Side"])?.unwrap_or_default();
    let all: Vec<Value> = db::get(&db::path(&["traders", trader, "suits"])).unwrap_or_default();
    let mut out = Vec::new();
    for suit in all.iter().take(MAX_SUITS) {
        let Some(id) = suit["suiteId"].as_str().filter(|id| is_id(id)) else { continue };
        let sides: Vec<String> =
            db::get(&db::path(&["templates", "customization", id, "_props", "Side"])).unwrap_or_default();
        if sides.contains(&side) {
            out.push(suit.clone());
        }
    }
    Ok(envelope::ok(&out))
}
