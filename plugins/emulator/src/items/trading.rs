//! `TradingConfirm`: buying from a trader (selling to one is `selling.rs`'s).
//!
//! A purchase is checked whole before anything changes: the offer exists in `traders.<tid>.assort`,
//! the player is shown it (`menu::traders::hidden_offers`: the loyalty level and quest the assort's
//! filter asks), the trader has the stock, the player's purchases since the trader's last resupply
//! stay within the offer's `BuyRestrictionMax` (SPT's `CheckPurchaseIsWithinTraderItemLimit`, 20%
//! more for the editions SPT names), every stack named as
//! payment exists and holds what it is said to hold, the payment covers the barter scheme times the
//! count for each template, and the goods fit the stash. Only then is the payment taken and the goods
//! given; otherwise the reason is the player's warning and nothing changed.
//!
//! Stock is counted per profile in `TraderPurchases.<tid>.<offer>.count`: each player runs their own
//! server and has their own traders, and counting in the profile makes the purchase and the stock
//! change one atomic write. A record older than the trader's last resupply counts nothing.
//!
//! The price may be in any currency or a barter (a scheme in dollars or euros is paid with them);
//! the trader's `salesSum` grows by the money paid converted into the trader's own currency through
//! the handbook (a barter: the handbook price of the goods), then SPT's `LevelUp`.

use crate::clock;
use crate::economy::{self, MONEY, Prices};
use crate::ids;
use crate::menu::traders::{bought_since, hidden_offers, last_resupply, ties_any};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Outcome, Refused, copy_parts, count, item, set_count, write};
use crate::profile::shape::INDEX;
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// `TradingConfirm {type, …}`.
pub(crate) fn confirm(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    match action["type"].as_str() {
        Some("buy_from_trader") => buy(doc, action, templates, changes),
        Some("sell_to_trader") => super::selling::sell(doc, action, templates, changes),
        Some(other) => Err(format!("trading `{other}` is not supported yet").into()),
        None => Err("TradingConfirm has no `type`".into()),
    }
}

/// The parts that come with offer `at` of a trader's assort (a weapon's mods): everything under it,
/// parents before children. Bounded by the assort's length.
fn parts(assort: &[Value], at: usize) -> Vec<&Value> {
    let mut out = vec![at];
    let mut next = 0;
    while next < out.len() && out.len() <= assort.len() {
        let id = &assort[out[next]]["_id"];
        let children: Vec<usize> =
            (0..assort.len()).filter(|i| !out.contains(i) && assort[*i]["parentId"] == *id).collect();
        out.extend(children);
        next += 1;
    }
    out.into_iter().skip(1).map(|i| &assort[i]).collect()
}

/// What the trader asks: units per template, for `count` of the offer.
fn price(tid: &str, offer: &str, scheme: u64, count: u64) -> Result<BTreeMap<String, u64>, String> {
    let schemes: Vec<Vec<Value>> = db::get(&db::path(&["traders", tid, "assort", "barter_scheme", offer]))
        .map_err(|_| format!("offer {offer} has no price"))?;
    let arm = schemes.get(scheme as usize).or(schemes.first()).ok_or_else(|| format!("offer {offer} has no price"))?;
    let mut price = BTreeMap::new();
    for part in arm {
        let tpl = part["_tpl"].as_str().ok_or_else(|| format!("offer {offer}'s price names no template"))?;
        let each =
            part["count"].as_f64().filter(|c| c.is_finite() && *c >= 0.0).ok_or("a price count is not a number")?;
        let total = (each * count as f64).ceil();
        if total >= u64::MAX as f64 {
            return Err("the price is too large".to_owned());
        }
        *price.entry(tpl.to_owned()).or_insert(0u64) += total as u64;
    }
    Ok(price)
}

/// `buy_from_trader {tid, item_id, count, scheme_id, scheme_items: [{id, count}]}`: every check first
/// (the offer and its gate, the payment, where the goods go), then the payment taken, the goods given
/// and the trader's records written.
fn buy(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let offer = offer(doc, action)?;
    let price = price(offer.tid, offer.id, action["scheme_id"].as_u64().unwrap_or(0), offer.wanted)?;
    let named = action["scheme_items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let payment = economy::named_payment(doc, named, &price)?;
    let parts = parts(&offer.assort, offer.at);
    let delivery = delivery(doc, templates, &offer, &parts, &payment)?;
    for record in ["TradersInfo", "TraderPurchases"] {
        if !doc.object_or_absent(&[record])? || !doc.object_or_absent(&[record, offer.tid])? {
            return Err(format!("the profile's `{record}` is malformed").into());
        }
    }

    // Checked: take the payment, then give the goods.
    let delivery_goods = delivery.goods.clone();
    economy::pay(doc, templates, changes, payment, &price)?;
    deliver(doc, templates, changes, delivery, &offer, &parts)?;

    let purchase = json!({ "count": offer.bought.saturating_add(offer.wanted), "purchaseTimestamp": clock::now() });
    doc.set(&["TraderPurchases", offer.tid, offer.id], purchase)?;
    let currency = economy::currency(offer.tid)?;
    let mut prices = Prices::default();
    let mut roubles = 0.0;
    for (tpl, n) in price.iter().filter(|(t, _)| MONEY.contains(&t.as_str())) {
        roubles += prices.in_roubles(*n as f64, tpl);
    }
    if roubles == 0.0 {
        roubles = prices.of(&delivery_goods) * offer.wanted as f64;
    }
    let sold = prices.roubles_to(roubles, currency).round();
    economy::add_sales(doc, offer.tid, sold)
}

/// The offer a purchase names, checked against the player: it exists, the player's loyalty reaches
/// its level, and the trader has the stock.
struct Offer<'a> {
    tid: &'a str,
    id: &'a str,
    wanted: u64,
    /// The trader's whole assort (the offer's parts are found in it), and where the offer is.
    assort: Vec<Value>,
    at: usize,
    /// How many of it this player bought before.
    bought: u64,
}

impl Offer<'_> {
    fn item(&self) -> &Value {
        &self.assort[self.at]
    }
}

fn offer<'a>(doc: &mut Doc, action: &'a Value) -> Result<Offer<'a>, Refused> {
    let tid = action["tid"].as_str().ok_or("the purchase names no trader `tid`")?;
    let id = action["item_id"].as_str().ok_or("the purchase names no offer `item_id`")?;
    let wanted = action["count"].as_u64().filter(|n| *n >= 1).ok_or("`count` must be a whole number of at least 1")?;
    let assort: Vec<Value> = db::get(&db::path(&["traders", tid, "assort", "items"]))
        .map_err(|_| format!("trader {tid} does not exist or sells nothing"))?;
    let Some(at) = assort.iter().position(|o| o["_id"] == id && o["parentId"] == "hideout") else {
        return Err(format!("trader {tid} has no offer {id}").into());
    };
    let level = doc.get(&["TradersInfo", tid, "loyaltyLevel"])?.as_u64().unwrap_or(1);
    let needed = db::get::<u64>(&db::path(&["traders", tid, "assort", "loyal_level_items", id])).unwrap_or(1);
    if level < needed {
        return Err(
            format!("offer {id} needs loyalty level {needed} with trader {tid}; this player has {level}").into()
        );
    }
    // The assort's own filter, with the quest states as this batch has left them.
    let levels = Map::from_iter([(id.to_owned(), json!(needed))]);
    let tied: Map<String, Value> = db::get(&db::path(&["traders", tid, "questassort"])).unwrap_or_default();
    let states = if ties_any(&tied) { doc.get(&["Quests"])? } else { Value::Null };
    let state_of = |quest: &str| {
        let states = states.as_array().map(Vec::as_slice).unwrap_or_default();
        states.iter().find(|s| s["qid"] == quest).and_then(|s| crate::menu::quests::status(&s["status"]))
    };
    if hidden_offers(&levels, &tied, level as f64, state_of).contains(id) {
        return Err(format!("trader {tid} does not show offer {id} to this player").into());
    }
    let record = doc.get(&["TraderPurchases", tid, id])?;
    let bought = bought_since(&record, last_resupply(tid));
    let item = &assort[at];
    if let Some(max) = item["upd"]["BuyRestrictionMax"].as_u64() {
        let limit = economy::purchase_limit(doc, max)?;
        if bought.saturating_add(wanted) > limit {
            return Err(format!(
                "Unable to purchase: {wanted} items, this would exceed your purchase limit of {limit} from the trader: {tid} assort: {id} this refresh"
            )
            .into());
        }
    }
    if item["upd"]["UnlimitedCount"] != true
        && let Some(stock) = item["upd"]["StackObjectsCount"].as_u64()
        && wanted > stock.saturating_sub(bought)
    {
        return Err(format!("trader {tid} has {} of offer {id} left", stock.saturating_sub(bought)).into());
    }
    Ok(Offer { tid, id, wanted, assort, at, bought })
}

/// Where the goods go, planned before anything changes.
struct Delivery {
    stash: String,
    goods: String,
    /// Loose stash stacks of the goods topped up: id, the stack, units added.
    top_ups: Vec<(String, Value, u64)>,
    /// New stacks: where each goes in the stash grid, and its units.
    stacks: Vec<(Value, u64)>,
}

/// Loose stash stacks of the same template are topped up first (found through the stacks index, in the
/// order they were added; never one being paid with), then new stacks go first-fit into the stash
/// grid. No room: nothing is bought.
fn delivery(
    doc: &mut Doc,
    templates: &mut Templates,
    offer: &Offer,
    parts: &[&Value],
    payment: &[economy::Paying],
) -> Result<Delivery, Refused> {
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let goods = tpl(offer.item()).to_owned();
    let max = if parts.is_empty() { templates.stack_max(&goods) } else { Some(1) };
    let mut left = offer.wanted;
    let mut top_ups = Vec::new();
    if parts.is_empty() && max != Some(1) {
        let stacks: Vec<String> = match doc.get(&[INDEX, "stacks", &goods])? {
            Value::Object(ids) => ids.into_iter().map(|(id, _)| id).collect(),
            _ => Vec::new(),
        };
        for id in stacks {
            if left == 0 {
                break;
            }
            let Some(stack) = item(doc, &id)? else { continue };
            let loose = stack["parentId"] == stash.as_str() && stack["slotId"] == "hideout";
            if !loose || tpl(&stack) != goods || payment.iter().any(|(p, _, _)| *p == id) {
                continue;
            }
            let add = max.map_or(left, |m| m.saturating_sub(count(&stack))).min(left);
            if add > 0 {
                top_ups.push((id, stack, add));
                left -= add;
            }
        }
    }
    let mut grid = Grid::of(doc, templates, &stash, "hideout")?.ok_or("the stash has no grid")?;
    let (w, h) = templates.footprint(&goods, false);
    let mut stacks = Vec::new();
    while left > 0 {
        // Each new stack takes at least one cell, so this ends within the grid's size.
        let units = max.map_or(left, |m| m.min(left));
        let place =
            grid.place(doc, w, h)?.ok_or_else(|| format!("no room in the stash for {} of {goods}", offer.wanted))?;
        stacks.push((place, units));
        left -= units;
    }
    Ok(Delivery { stash, goods, top_ups, stacks })
}

/// Gives the goods as planned: top-ups, then new stacks with the offer's parts under each.
fn deliver(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    delivery: Delivery,
    offer: &Offer,
    parts: &[&Value],
) -> Outcome {
    for (id, mut stack, add) in delivery.top_ups {
        let total = count(&stack) + add;
        set_count(&mut stack, total);
        write(doc, templates, &id, Some(stack))?;
        changes.changed(&id);
    }
    for (place, units) in delivery.stacks {
        let id = ids::new_id();
        let stack = json!({
            "_id": id, "_tpl": delivery.goods, "parentId": delivery.stash, "slotId": "hideout", "location": place,
            "upd": { "StackObjectsCount": units, "SpawnedInSession": false },
        });
        write(doc, templates, &id, Some(stack))?;
        changes.created(&id);
        copy_parts(doc, templates, changes, parts, offer.id, &id)?;
    }
    Ok(())
}
