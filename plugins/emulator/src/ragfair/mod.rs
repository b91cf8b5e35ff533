//! The flea market (SPT's `RagfairStaticRouter`, `RagfairCallbacks`, `RagfairController`, the
//! ragfair item events of `RagfairItemEventRouter` and `TradeItemEventRouter`'s `RagFairBuyOffer`).
//!
//! - `offers.rs`: the offers in the store (one document each) and the indexes a search reads;
//! - `find.rs`: `find`/`search`, `offer/findbyid`, `itemMarketPrice`;
//! - `generate.rs`: the traders' and simulated players' offers, refreshed by the timer
//!   `flea.refresh`, and `flea-add-offer`, the function other mods call;
//! - `fees.rs`: SPT's tax, and `offerfees`;
//! - `buy.rs`: `RagFairBuyOffer`;
//! - `player.rs`: a player's own offers (`RagFairAddOffer`, `RagFairRemoveOffer`,
//!   `RagFairRenewOffer`), held in the profile;
//! - `selling.rs`: a player's offer selling over time (the timer `flea.sales`), the money by mail;
//! - `rules.rs`: the flea's rules from `globals.config.RagFair` and `configs.ragfair`.

mod buy;
mod fees;
mod find;
mod generate;
mod offers;
pub(crate) mod player;
mod rules;
mod selling;

pub(crate) use buy::buy;
pub(crate) use player::{add as add_offer, remove as remove_offer, renew as renew_offer};

use crate::events;
use crate::input;
use crate::templates::{MAX_PRICES, handbook_prices};
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Adds the flea market's routes, timers and function to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/items/prices", flea_prices)
        .route("/client/ragfair/find", find::find)
        .route("/client/ragfair/search", find::find)
        .route("/client/ragfair/itemMarketPrice", find::market_price)
        .route("/client/ragfair/offerfees", fees::offer_fees)
        .route("/client/ragfair/offer/findbyid", find::find_by_id)
        .route("/client/reports/ragfair/send", report)
        .every("flea.refresh", generate::PERIOD, generate::tick)
        .every("flea.sales", selling::PERIOD, selling::tick)
        .provide_json("flea-add-offer", generate::add_offer)
}

/// `/client/items/prices`: the flea's prices (`templates.prices`), the handbook's for the rest.
fn flea_prices(_: &Request) -> Result<Response> {
    let mut prices: BTreeMap<String, Value> =
        handbook_prices().into_iter().map(|(tpl, price)| (tpl, json!(price))).collect();
    let dynamic: Map<String, Value> = db::get("templates.prices").unwrap_or_default();
    prices.extend(dynamic.into_iter().take(MAX_PRICES));
    Ok(envelope::ok(&prices))
}

/// `/client/reports/ragfair/send {offerId, …}`: SPT reads the report and answers `null`; so does the
/// game (there is no moderator to read it).
fn report(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "reports/ragfair/send", 4096)?;
    Ok(envelope::ok(&Value::Null))
}

/// After an `items/moving` batch committed: the flea's part of what it did. The player's offers the
/// batch listed, removed or renewed are reconciled into the store (`player.rs`), and `flea.bought` /
/// `flea.listed` are emitted for the flea actions that applied.
pub(crate) fn committed(session: &str, uid: &str, applied: &[&Value]) {
    let flea: Vec<&&Value> =
        applied.iter().filter(|a| a["Action"].as_str().is_some_and(|n| n.starts_with("RagFair"))).collect();
    if flea.is_empty() {
        return;
    }
    if flea.iter().any(|a| a["Action"] != "RagFairBuyOffer") {
        selling::settle(uid, Some(session));
    }
    for action in flea {
        let payload = json!({ "session": session, "uid": uid, "action": action });
        match action["Action"].as_str() {
            Some("RagFairBuyOffer") => events::announce(events::FLEA_BOUGHT, &payload),
            Some("RagFairAddOffer") => events::announce(events::FLEA_LISTED, &payload),
            _ => {}
        }
    }
}
