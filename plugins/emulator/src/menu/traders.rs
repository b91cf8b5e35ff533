//! Traders on the menu (TraderDynamicRouter → TraderCallbacks → TraderController, TraderHelper,
//! TraderAssortHelper, AssortHelper; DataDynamicRouter and RagfairStaticRouter for the prices).
//!
//! - `/client/trading/api/getTrader/<id>`: `traders.<id>.base`, by reference (`ragfair`: SPT's
//!   `{currency: "RUB"}`).
//! - `/client/trading/api/getTraderAssort/<id>`: `traders.<id>.assort` as this player sees it, as
//!   SPT's `GetAssort`: an offer above the player's loyalty level with the trader (`TradersInfo.<id>
//!   .loyaltyLevel`, 1 for a trader not met yet, as `items/trading.rs` counts it) is taken out with the parts
//!   under it, its price and its level; so is an offer `traders.<id>.questassort` ties to a quest the
//!   player has not brought to the state it needs (`started`: started or later, `success`, `fail`).
//!   What the player bought (`TraderPurchases.<id>.<offer>.count`, kept by `items/trading.rs`) is the
//!   offer's `BuyRestrictionCurrent`, and comes off its stock, since stock is counted per player; a
//!   purchase made before the trader's last resupply ([`last_resupply`]) counts nothing, as SPT empties
//!   the records then. `nextResupply` is the next one. The filter is [`hidden_offers`], which a
//!   purchase asks too. Fence's generated assort is left out: his is the db's like any other.
//! - `/client/items/prices/<trader>`: SPT's `GetItemPricesResponse`: the handbook price of every item
//!   (`templates.handbook.Items`), the three currencies' courses, and when the trader restocks next
//!   ([`resupply_seconds`]: `configs.trader.updateTime` for the trader, else `updateTimeDefault`, else
//!   an hour).

use crate::clock;
use crate::profile::{doc_read, player};
use crate::templates::handbook_prices;
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// Adds the trader routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .prefix("/client/trading/api/getTrader/", trader)
        .prefix("/client/trading/api/getTraderAssort/", assort)
        .prefix("/client/items/prices/", trader_prices)
}

/// The three currencies: roubles, euros, dollars.
const ROUBLES: &str = "5449016a4bdc2d6f028b456f";
const EUROS: &str = "569668774bdc2da2298b4568";
const DOLLARS: &str = "5696686a4bdc2da3298b456a";

/// The trader named at the end of the path, if it is one the db holds; else the error envelope the
/// client shows. A name that could address anything but a trader (a dot, a slash) is refused.
fn named_trader(req: &Request) -> std::result::Result<String, Response> {
    let id = req.rest();
    let plausible =
        !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !plausible {
        return Err(envelope::error(1, "the path does not name a trader"));
    }
    if !db::exists(&db::path(&["traders", id, "base"])) {
        return Err(envelope::error(1, &format!("there is no trader {id}")));
    }
    Ok(id.to_owned())
}

/// `/client/trading/api/getTrader/<id>`.
fn trader(req: &Request) -> Result<Response> {
    if req.rest() == "ragfair" {
        return Ok(envelope::ok(&json!({"currency": "RUB"})));
    }
    match named_trader(req) {
        Ok(id) => Ok(envelope::ok_db(&db::path(&["traders", &id, "base"]))),
        Err(answer) => Ok(answer),
    }
}

#[derive(Deserialize, Default)]
struct Assort {
    #[serde(default)]
    items: Vec<Value>,
    #[serde(default)]
    barter_scheme: Map<String, Value>,
    #[serde(default)]
    loyal_level_items: Map<String, Value>,
}

/// Quest states that show an offer tied to a quest (SPT's `GetQuestIdAndStatusThatShowAssort`).
const STARTED_OR_LATER: [u64; 3] = [2, 3, 4];
const SUCCESS: [u64; 1] = [4];
const FAIL: [u64; 1] = [5];

/// `/client/trading/api/getTraderAssort/<id>`: see the module doc.
fn assort(req: &Request) -> Result<Response> {
    let tid = match named_trader(req) {
        Ok(id) => id,
        Err(answer) => return Ok(answer),
    };
    let uid = match player(req, "a trader's assort")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let key = format!("profile.{uid}");
    let mut assort: Assort = db::get(&db::path(&["traders", &tid, "assort"])).unwrap_or_default();
    let level = doc_read::<f64>(&key, &["TradersInfo", &tid, "loyaltyLevel"])?.unwrap_or(1.0);

    let tied: Map<String, Value> = db::get(&db::path(&["traders", &tid, "questassort"])).unwrap_or_default();
    let states: Vec<Value> =
        if ties_any(&tied) { doc_read(&key, &["Quests"])?.unwrap_or_default() } else { Vec::new() };
    let state_of =
        |quest: &str| states.iter().find(|s| s["qid"] == quest).and_then(|s| super::quests::status(&s["status"]));
    let hidden = hidden_offers(&assort.loyal_level_items, &tied, level, state_of);
    remove(&mut assort, &hidden);

    let purchases: Map<String, Value> = doc_read(&key, &["TraderPurchases", &tid])?.unwrap_or_default();
    for item in assort.items.iter_mut().filter(|i| i["parentId"] == "hideout") {
        let since = last_resupply(&tid);
        let bought = item["_id"].as_str().and_then(|id| purchases.get(id)).map(|p| bought_since(p, since));
        let (Some(bought), Some(upd)) = (bought, item.get_mut("upd").and_then(Value::as_object_mut)) else { continue };
        upd.insert("BuyRestrictionCurrent".into(), json!(bought));
        if upd.get("UnlimitedCount") != Some(&json!(true))
            && let Some(stock) = upd.get("StackObjectsCount").and_then(Value::as_u64)
        {
            upd.insert("StackObjectsCount".into(), json!(stock.saturating_sub(bought)));
        }
    }
    let next = last_resupply(&tid) + resupply_seconds(&tid);
    Ok(envelope::ok(&json!({
        "nextResupply": next,
        "items": assort.items,
        "barter_scheme": assort.barter_scheme,
        "loyal_level_items": assort.loyal_level_items,
    })))
}

/// Takes the `hidden` offers out of `assort`, with every part under them (however deep, each item
/// visited once), their prices and their levels.
fn remove(assort: &mut Assort, hidden: &HashSet<String>) {
    if hidden.is_empty() {
        return;
    }
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for item in &assort.items {
        if let (Some(id), Some(parent)) = (item["_id"].as_str(), item["parentId"].as_str()) {
            children.entry(parent).or_default().push(id);
        }
    }
    let mut gone: HashSet<String> = HashSet::new();
    let mut todo: Vec<&str> = hidden.iter().map(String::as_str).collect();
    while let Some(id) = todo.pop() {
        if gone.insert(id.to_owned()) {
            todo.extend(children.get(id).into_iter().flatten().copied());
        }
    }
    assort.items.retain(|item| !item["_id"].as_str().is_some_and(|id| gone.contains(id)));
    assort.barter_scheme.retain(|offer, _| !gone.contains(offer));
    assort.loyal_level_items.retain(|offer, _| !gone.contains(offer));
}

/// `/client/items/prices/<trader>`: see the module doc.
fn trader_prices(req: &Request) -> Result<Response> {
    let tid = match named_trader(req) {
        Ok(id) => id,
        Err(answer) => return Ok(answer),
    };
    let prices = handbook_prices();
    // A rouble is worth a rouble when the handbook does not list it.
    let mut courses = Map::new();
    for currency in [ROUBLES, EUROS, DOLLARS] {
        match prices.get(currency) {
            Some(price) => courses.insert(currency.to_owned(), json!(price)),
            None if currency == ROUBLES => courses.insert(currency.to_owned(), json!(1)),
            None => None,
        };
    }
    Ok(envelope::ok(&json!({
        "supplyNextTime": last_resupply(&tid) + resupply_seconds(&tid),
        "prices": prices,
        "currencyCourses": courses,
    })))
}

/// Seconds between two resupplies of `trader`: the middle of its `configs.trader.updateTime` range,
/// else `updateTimeDefault`, else an hour. SPT draws each interval at random within the range; a fixed
/// one keeps every player's limits and the client's countdown agreeing with one another, and lets the
/// resupply be computed from the clock alone (no timer: a server that was off resupplied meanwhile).
pub(crate) fn resupply_seconds(trader: &str) -> u64 {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Update {
        trader_id: String,
        seconds: Range,
    }
    #[derive(Deserialize)]
    struct Range {
        min: u64,
        max: u64,
    }
    let updates: Vec<Update> = db::get("configs.trader.updateTime").unwrap_or_default();
    let seconds = match updates.iter().find(|u| u.trader_id == trader) {
        Some(Update { seconds: Range { min, max }, .. }) if min <= max => min + (max - min) / 2,
        _ => db::get("configs.trader.updateTimeDefault").unwrap_or(3600),
    };
    seconds.max(1)
}

/// When `trader` last resupplied: the last multiple of its interval on the game's clock.
pub(crate) fn last_resupply(trader: &str) -> u64 {
    let now = clock::now();
    now - now % resupply_seconds(trader)
}

/// How many of an offer a player bought since the trader's last resupply (`since`), from its
/// `TraderPurchases.<tid>.<offer>` record: SPT empties the records at each resupply
/// (`ResetTraderPurchasesStoredInProfile`); here a record older than the resupply counts nothing.
pub(crate) fn bought_since(record: &Value, since: u64) -> u64 {
    let at = record["purchaseTimestamp"].as_u64().unwrap_or(0);
    if at < since { 0 } else { record["count"].as_u64().unwrap_or(0) }
}

/// Does `questassort` tie any offer to a quest?
pub(crate) fn ties_any(tied: &Map<String, Value>) -> bool {
    tied.values().any(|offers| offers.as_object().is_some_and(|o| !o.is_empty()))
}

/// The offers of a trader's assort a player may not see (SPT's `GetAssort`): those above the
/// player's loyalty `level` (`loyal_level_items`), and those `tied` (`questassort`) to a quest whose
/// state (`state_of`, SPT's status number) is not the one that shows them. The menu's assort and a
/// purchase (`items/trading.rs`) both ask this, so a player can buy exactly what they are shown.
pub(crate) fn hidden_offers(
    levels: &Map<String, Value>,
    tied: &Map<String, Value>,
    level: f64,
    state_of: impl Fn(&str) -> Option<u64>,
) -> HashSet<String> {
    let mut hidden: HashSet<String> = levels
        .iter()
        .filter(|(_, needed)| needed.as_f64().is_some_and(|n| n > level))
        .map(|(offer, _)| offer.clone())
        .collect();
    for (kind, shows) in [("started", &STARTED_OR_LATER[..]), ("success", &SUCCESS[..]), ("fail", &FAIL[..])] {
        for (offer, quest) in tied.get(kind).and_then(Value::as_object).into_iter().flatten() {
            let quest = quest.as_str().unwrap_or_default();
            if !state_of(quest).is_some_and(|s| shows.contains(&s)) {
                hidden.insert(offer.clone());
            }
        }
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_offer_above_the_level_or_tied_to_an_unfinished_quest_is_hidden() {
        let levels = json!({"a": 1, "b": 2}).as_object().cloned().unwrap_or_default();
        let tied = json!({"success": {"a": "q"}}).as_object().cloned().unwrap_or_default();
        let hidden = hidden_offers(&levels, &tied, 1.0, |_| Some(2));
        assert_eq!(hidden, HashSet::from(["a".to_owned(), "b".to_owned()]));
        assert!(hidden_offers(&levels, &tied, 2.0, |_| Some(4)).is_empty());
    }

    #[test]
    fn a_purchase_before_the_last_resupply_counts_nothing() {
        let record = json!({"count": 3, "purchaseTimestamp": 100});
        assert_eq!(bought_since(&record, 100), 3);
        assert_eq!(bought_since(&record, 101), 0);
    }

    #[test]
    fn removing_an_offer_takes_its_parts_and_prices() {
        let mut assort = Assort {
            items: vec![
                json!({"_id": "a", "parentId": "hideout"}),
                json!({"_id": "b", "parentId": "a"}),
                json!({"_id": "c", "parentId": "b"}),
                json!({"_id": "d", "parentId": "hideout"}),
            ],
            barter_scheme: json!({"a": [], "d": []}).as_object().cloned().unwrap_or_default(),
            loyal_level_items: json!({"a": 2, "d": 1}).as_object().cloned().unwrap_or_default(),
        };
        remove(&mut assort, &HashSet::from(["a".to_owned()]));
        let ids: Vec<&str> = assort.items.iter().filter_map(|i| i["_id"].as_str()).collect();
        assert_eq!(ids, ["d"]);
        assert!(!assort.barter_scheme.contains_key("a") && assort.loyal_level_items.contains_key("d"));
    }
}
