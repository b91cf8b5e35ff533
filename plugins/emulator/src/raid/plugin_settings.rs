//! Two routes SPT's client plugins call around a raid that change nothing here:
//!
//! - `/singleplayer/settings/bot/getBotBehaviours/` (SPT's `BotDynamicRouter` →
//!   `BotCallbacks.GetBotBehaviours` → `BotController.GetAiBotBrainTypes`, bare): the brain types of
//!   PMCs, scavs and player scavs, from `configs.pmc.pmcType`, `configs.bot.assaultBrainType` and
//!   `configs.bot.playerScavBrainType` (`{}` each when the db has none);
//! - `/raid/profile/scavsave` (SPT's `InraidStaticRouter` → `InRaidController.SavePostRaidProfileForScav`,
//!   null). SPT takes the client's scav inventory wholesale here; the game does not: a scav raid's end
//!   (`/client/match/local/end`, `end.rs`) writes the scav from what it checked, so the body is
//!   bounded and dropped unread.

use modhost_sdk::{Error, Request, Response, Result, Router, db, envelope};
use serde_json::{Value, json};

/// The largest scav-save body read: a scav's whole inventory, as the client sends it.
const MAX_SCAVSAVE: usize = 4 << 20;

/// Adds the two routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .prefix("/singleplayer/settings/bot/getBotBehaviours/", behaviours)
        .route("/singleplayer/settings/bot/getBotBehaviours", behaviours)
        .route("/raid/profile/scavsave", scavsave)
}

fn behaviours(_: &Request) -> Result<Response> {
    let get = |path: &str| db::get::<Value>(path).unwrap_or_else(|_| json!({}));
    Ok(Response::json(&json!({
        "pmc": get("configs.pmc.pmcType"),
        "assault": get("configs.bot.assaultBrainType"),
        "playerScav": get("configs.bot.playerScavBrainType"),
    })))
}

fn scavsave(req: &Request) -> Result<Response> {
    // Never parsed: nothing of it is kept, so only its size is checked.
    let len = req.body().len();
    if len > MAX_SCAVSAVE {
        return Err(Error::TooLarge(format!("raid/profile/scavsave: the body is {len} bytes; at most {MAX_SCAVSAVE}")));
    }
    Ok(envelope::null())
}
