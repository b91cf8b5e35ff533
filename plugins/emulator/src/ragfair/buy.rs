//! `RagFairBuyOffer` (SPT's `TradeItemEventRouter` → `TradeController.ConfirmRagfairTrading`): buying
//! from the flea, checked as a trader purchase is.
//!
//! Each offer bought is checked whole before anything changes: it exists and has not ended, it has
//! the units asked (all of them for a pack), it is not the buyer's own, a trader's offer is open to
//! the buyer's loyalty level and per-player limit (`buyRestrictionMax`); every stack named as payment is the buyer's, not a root, of a template
//! the offer asks, and together they cover the requirements times the units; the goods fit the stash
//! (first fit, stacks up to the template's size). Then the offer's quantity is taken in the store
//! (compare-and-set on the offer's version: two buyers never get the same unit), and the payment and
//! the goods go into the batch's profile write. Exactly the price is taken, never more.
//!
//! The store write comes before the profile's, so a crash or a conflicting batch between them loses
//! units of a generated offer (the market's, refreshed by the timer), never the buyer's money or items.
//! A real player's offer is sold by the market's simulated buyers (`selling.rs`), as in SPT, and is
//! not bought by another player (paying another profile is not one write with the buyer's).

use super::offers;
use super::player::is_trader;
use crate::clock;
use crate::economy;
use crate::ids;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Outcome, Refused, write};
use crate::templates::Templates;
use modhost_sdk::Error;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The most offers one purchase names (the client buys one at a time).
const MAX_OFFERS: usize = 16;
/// `RagFairBuyOffer {offers: [{id, count, items: [{id, count}]}]}`.
pub(crate) fn buy(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let asked = action["offers"].as_array().map(Vec::as_slice).unwrap_or_default();
    if asked.is_empty() || asked.len() > MAX_OFFERS {
        return Err(format!("a purchase names 1 to {MAX_OFFERS} offers").into());
    }
    for one in asked {
        buy_one(doc, one, templates, changes)?;
    }
    Ok(())
}

fn buy_one(doc: &mut Doc, asked: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = asked["id"].as_str().ok_or("the purchase names no offer `id`")?;
    let wanted = asked["count"].as_u64().filter(|n| *n >= 1).ok_or("`count` must be a whole number of at least 1")?;
    let (offer, version) = offers::get(id)?.ok_or_else(|| format!("offer {id} does not exist"))?;
    let now = clock::now();
    if offer["endTime"].as_u64().unwrap_or(0) <= now {
        return Err(format!("offer {id} has ended").into());
    }
    let quantity = offer["quantity"].as_u64().unwrap_or(0);
    if wanted > quantity {
        return Err(format!("offer {id} has {quantity} left, not {wanted}").into());
    }
    let one_piece = offer["sellInOnePiece"] == true;
    if one_piece && wanted != quantity {
        return Err(format!("offer {id} is sold in one piece: all {quantity} or none").into());
    }
    let uid = doc.get(&["_id"])?;
    if offer["_owner"].is_string() {
        if offer["_owner"] == uid {
            return Err(format!("offer {id} is this player's own").into());
        }
        return Err(format!("offer {id} is another player's: it sells to the market's buyers").into());
    }
    // A trader's offer keeps the trader's rules: the loyalty level, and the per-player limit counted
    // where `TradingConfirm` counts it (`TraderPurchases.<tid>.<offer>.count`).
    let trader = is_trader(&offer).then(|| offer["user"]["id"].as_str().unwrap_or_default().to_owned());
    let mut bought = 0;
    if let Some(trader) = &trader {
        let needed = offer["loyaltyLevel"].as_u64().unwrap_or(1);
        let level = doc.get(&["TradersInfo", trader, "loyaltyLevel"])?.as_u64().unwrap_or(1);
        if level < needed {
            return Err(format!(
                "offer {id} needs loyalty level {needed} with trader {trader}; this player has {level}"
            )
            .into());
        }
        bought = doc.get(&["TraderPurchases", trader, id, "count"])?.as_u64().unwrap_or(0);
        if let Some(max) = offer["buyRestrictionMax"].as_u64()
            && bought + wanted > max
        {
            return Err(format!("offer {id} sells {max} to a player; this one bought {bought}").into());
        }
        if !doc.object_or_absent(&["TraderPurchases"])? || !doc.object_or_absent(&["TraderPurchases", trader])? {
            return Err("the profile's `TraderPurchases` is malformed".into());
        }
    }
    let times = if one_piece { 1 } else { wanted };
    let price = price(&offer, times)?;
    let named = asked["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let payment = economy::named_payment(doc, named, &price)?;
    let goods = offers::sells(&offer).ok_or("the offer sells nothing")?.to_owned();
    let items = offer["items"].as_array().cloned().unwrap_or_default();
    let parts: Vec<&Value> = items.iter().filter(|i| i["_id"] != offer["root"]).collect();
    let places = places(doc, templates, &goods, wanted, !parts.is_empty())?;

    // Checked: the units are taken from the offer first (the store), then the profile's changes.
    let left = quantity - wanted;
    let taken =
        if left == 0 { offers::remove(id, &offer) } else { offers::set_quantity(id, &goods, &offer, version, left) };
    match taken {
        Ok(()) => {}
        Err(Error::Conflict(_)) => return Err(format!("offer {id} changed while buying it; try again").into()),
        Err(other) => return Err(other.into()),
    }
    economy::pay(doc, templates, changes, payment, &price)?;
    if let Some(trader) = &trader {
        doc.set(&["TraderPurchases", trader, id], json!({ "count": bought + wanted, "purchaseTimestamp": now }))?;
    }
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let root = items.iter().find(|i| i["_id"] == offer["root"]).cloned().unwrap_or_default();
    for (place, units) in places {
        let new = ids::new_id();
        let mut upd = if root["upd"].is_object() { root["upd"].clone() } else { json!({}) };
        upd["StackObjectsCount"] = json!(units);
        let stack =
            json!({ "_id": new, "_tpl": goods, "parentId": stash, "slotId": "hideout", "location": place, "upd": upd });
        write(doc, templates, &new, Some(stack))?;
        changes.created(&new);
        crate::profile::inventory::copy_parts(
            doc,
            templates,
            changes,
            &parts,
            root["_id"].as_str().unwrap_or_default(),
            &new,
        )?;
    }
    Ok(())
}

/// What the offer asks for `times` units (a pack once): units per template.
fn price(offer: &Value, times: u64) -> Result<BTreeMap<String, u64>, Refused> {
    let mut price = BTreeMap::new();
    for r in offer["requirements"].as_array().into_iter().flatten() {
        let t = r["_tpl"].as_str().ok_or("a requirement names no template")?;
        let each = r["count"]
            .as_f64()
            .filter(|c| c.is_finite() && *c >= 0.0)
            .ok_or("a requirement's count is not a number")?;
        let total = (each * times as f64).ceil();
        if total >= u64::MAX as f64 / 2.0 {
            return Err("the price is too large".into());
        }
        *price.entry(t.to_owned()).or_insert(0) += total as u64;
    }
    if price.is_empty() {
        return Err("the offer asks nothing".into());
    }
    Ok(price)
}

/// Where the goods go: new stacks first-fit in the stash grid, each up to the stack size (one unit
/// when the item carries parts).
fn places(
    doc: &mut Doc,
    templates: &mut Templates,
    goods: &str,
    units: u64,
    whole: bool,
) -> Result<Vec<(Value, u64)>, Refused> {
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let max = if whole { 1 } else { templates.stack_max(goods).unwrap_or(1).max(1) };
    let mut grid = Grid::of(doc, templates, &stash, "hideout")?.ok_or("the stash has no grid")?;
    let (w, h) = templates.footprint(goods, false);
    let mut out = Vec::new();
    let mut left = units;
    while left > 0 {
        let n = max.min(left);
        let place = grid.place(doc, w, h)?.ok_or_else(|| format!("no room in the stash for {units} of {goods}"))?;
        out.push((place, n));
        left -= n;
    }
    Ok(out)
}
