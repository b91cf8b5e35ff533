//! The flea market (SPT's `RagfairStaticRouter`, `RagfairCallbacks`, `RagfairController`, and the
//! ragfair item events of `RagfairItemEventRouter`). Today: the flea's prices. Offers, their search,
//! buying and selling on the flea and its config (`configs.ragfair`) belong here; its item events
//! (`RagFairAddOffer`, `RagFairRemoveOffer`, `RagFairRenewOffer`) are dispatched from `items/mod.rs`'s
//! action table to this module.

use crate::templates::{MAX_PRICES, handbook_prices};
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Adds the flea market's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/items/prices", flea_prices)
}

/// `/client/items/prices`: the flea's prices (`templates.prices`), the handbook's for the rest.
fn flea_prices(_: &Request) -> Result<Response> {
    let mut prices: BTreeMap<String, Value> =
        handbook_prices().into_iter().map(|(tpl, price)| (tpl, json!(price))).collect();
    let dynamic: Map<String, Value> = db::get("templates.prices").unwrap_or_default();
    prices.extend(dynamic.into_iter().take(MAX_PRICES));
    Ok(envelope::ok(&prices))
}
