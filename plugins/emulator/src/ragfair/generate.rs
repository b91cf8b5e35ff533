//! The market's own offers (SPT's `RagfairOfferGenerator` and `RagfairServer.Update`): the traders'
//! assorts as flea offers, and offers of simulated players priced around the db's flea prices; the
//! periodic timer `flea.refresh` that expires and replaces them; and `flea-add-offer`, the function
//! other mods call to add an offer.
//!
//! A firing of `flea.refresh` does bounded work, so a large db fills the market over several firings
//! instead of one long one: it removes the generated and trader offers whose end has passed (found
//! through the expiry windows of `offers.rs`, at most [`MAX_EXPIRED`]), then adds at most
//! [`MAX_NEW`] offers: the traders' missing ones first, then simulated players' offers for the
//! templates of `templates.prices` in turn (a cursor in `flea.gen` remembers where it stopped), up to
//! `configs.ragfair.dynamic.offerItemCount.min` offers a template.
//!
//! When the server was off: the timer fires once at the next start; the offers that ended meanwhile
//! are removed and replaced then, a firing's worth at a time. A player's offer is not the market's:
//! its end is `selling.rs`'s (its items come back by mail).
//!
//! Left out of SPT's generator: barter offers of simulated players, item conditions and presets.

use super::offers::{self, BUCKET, DOLLARS, EUROS, MEMBER_TRADER, ROUBLES};
use super::rules::{self, Rng, Rules};
use crate::clock;
use crate::ids;
use crate::templates::Templates;
use modhost_sdk::calls::Invocation;
use modhost_sdk::timers::Fired;
use modhost_sdk::{Error, Result, db, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// How often the market refreshes, in seconds.
pub(crate) const PERIOD: u32 = 10;
/// The most ended offers one firing removes.
const MAX_EXPIRED: usize = 2000;
/// The most offers one firing adds.
const MAX_NEW: usize = 500;
/// How long a trader's offer stands before it is refreshed (an hour, a trader's usual restock).
const TRADER_LIFE: u64 = 3600;
/// The most units one generated offer of a stackable item holds.
const MAX_UNITS: u64 = 1000;

/// The periodic timer `flea.refresh`.
pub(crate) fn tick(_: &Fired) -> Result<()> {
    let now = clock::now();
    expire(now)?;
    let mut budget = MAX_NEW;
    budget -= traders(now, budget)?;
    simulated(now, budget)?;
    Ok(())
}

/// Removes the market's ended offers, window by window.
fn expire(now: u64) -> Result<()> {
    let windows: Map<String, Value> = match store::get::<Value>("flea.exp")? {
        Some(Value::Object(w)) => w,
        _ => Map::new(),
    };
    let mut passed: Vec<u64> = windows.keys().filter_map(|w| w.parse().ok()).filter(|w| *w < now / BUCKET).collect();
    passed.sort_unstable();
    let mut budget = MAX_EXPIRED;
    for w in passed {
        let key = format!("flea.exp.{w}");
        let ending: Map<String, Value> = match store::get::<Value>(&key)? {
            Some(Value::Object(e)) => e,
            _ => Map::new(),
        };
        let mut left = ending.len();
        for (id, _) in ending {
            if budget == 0 {
                return Ok(());
            }
            budget -= 1;
            match offers::get(&id)? {
                // A player's offer ends through its profile (`selling.rs`).
                Some((offer, _)) if offer["_owner"].is_string() => {}
                Some((offer, _)) if offer["endTime"].as_u64().unwrap_or(0) <= now => offers::remove(&id, &offer)?,
                _ => {}
            }
            store::doc_patch(&key, "", &json!({ id: null }))?;
            left -= 1;
        }
        if left == 0 {
            store::delete(&key)?;
            store::doc_patch("flea.exp", "", &json!({ w.to_string(): null }))?;
        }
    }
    Ok(())
}

/// Adds the traders' offers that are missing, at most `budget`; answers how many it added.
fn traders(now: u64, budget: usize) -> Result<usize> {
    let rules = rules::get();
    let all = db::keys("traders").unwrap_or_default();
    let mut added = 0;
    for tid in all {
        if rules.traders.as_ref().is_some_and(|on| !on.contains(&tid)) || tid == "ragfair" {
            continue;
        }
        let assort: Value = db::get(&db::path(&["traders", &tid, "assort"])).unwrap_or_default();
        let Some(items) = assort["items"].as_array() else { continue };
        let nickname = db::get::<String>(&db::path(&["traders", &tid, "base", "nickname"])).unwrap_or_default();
        // An offer a quest unlocks is not on the flea (SPT shows it locked; buying it is the trader's).
        let quest_locked: Value = db::get(&db::path(&["traders", &tid, "questassort"])).unwrap_or_default();
        let locked = |id: &str| quest_locked.as_object().into_iter().flatten().any(|(_, by)| by.get(id).is_some());
        for root in items.iter().filter(|i| i["parentId"] == "hideout") {
            if added >= budget {
                return Ok(added);
            }
            let Some(id) = root["_id"].as_str().filter(|id| ids::is_id(id)) else { continue };
            if locked(id) || offers::get(id)?.is_some() {
                continue;
            }
            let Some(scheme) = assort["barter_scheme"][id][0].as_array() else { continue };
            let requirements: Vec<Value> = scheme
                .iter()
                .map(|r| json!({"_tpl": r["_tpl"], "count": r["count"], "onlyFunctional": false}))
                .collect();
            let cost: f64 = scheme
                .iter()
                .map(|r| rules::price(r["_tpl"].as_str().unwrap_or_default()) * r["count"].as_f64().unwrap_or(0.0))
                .sum();
            let unlimited = root["upd"]["UnlimitedCount"] == true;
            let quantity = if unlimited { 999_999 } else { root["upd"]["StackObjectsCount"].as_u64().unwrap_or(1) };
            let mut parts = vec![root.clone()];
            parts.extend(descendants(items, id));
            let intid = offers::int_ids(1)?;
            let offer = json!({
                "_id": id, "intId": intid, "root": id, "items": parts, "requirements": requirements,
                "requirementsCost": cost.round(), "itemsCost": cost.round(), "summaryCost": cost.round(),
                "startTime": now, "endTime": now + TRADER_LIFE, "sellInOnePiece": false,
                "unlimitedCount": unlimited, "loyaltyLevel": assort["loyal_level_items"][id].as_u64().unwrap_or(1),
                "buyRestrictionMax": root["upd"]["BuyRestrictionMax"], "buyRestrictionCurrent": 0,
                "locked": false, "quantity": quantity,
                "user": { "id": tid, "nickname": nickname, "rating": 0, "memberType": MEMBER_TRADER,
                          "selectedMemberCategory": MEMBER_TRADER, "isRatingGrowing": true, "aid": 0 },
                "_kind": "trader",
            });
            offers::put(&offer)?;
            added += 1;
        }
    }
    Ok(added)
}

/// The items under `root` in an assort, parents first (bounded by the assort's length).
fn descendants(items: &[Value], root: &str) -> Vec<Value> {
    let mut ids = vec![root.to_owned()];
    let mut out = Vec::new();
    let mut next = 0;
    while next < ids.len() && out.len() < items.len() {
        let parent = ids[next].clone();
        for child in items.iter().filter(|i| i["parentId"] == parent.as_str()) {
            if let Some(id) = child["_id"].as_str() {
                ids.push(id.to_owned());
                out.push(child.clone());
            }
        }
        next += 1;
    }
    out
}

/// Adds simulated players' offers for the templates of `templates.prices`, from where the last
/// firing stopped, at most `budget`.
fn simulated(now: u64, budget: usize) -> Result<()> {
    let rules = rules::get();
    if budget == 0 || rules.generated_per_template == 0 {
        return Ok(());
    }
    let prices: Map<String, Value> = db::get("templates.prices").unwrap_or_default();
    let tpls: Vec<&String> =
        prices.keys().filter(|t| t.as_str() != ROUBLES && t.as_str() != DOLLARS && t.as_str() != EUROS).collect();
    if tpls.is_empty() {
        return Ok(());
    }
    let cursor: usize = store::get::<usize>("flea.gen")?.unwrap_or(0);
    let mut templates = Templates::default();
    let mut rng = Rng::new();
    let mut added = 0;
    let mut visited = 0;
    let mut at = cursor % tpls.len();
    while added < budget && visited < tpls.len() {
        let tpl = tpls[at].as_str();
        let have = offers::entries(tpl)?.values().filter(|e| e["t"] == 2 && e["o"].is_null()).count() as u64;
        let mut wanted = rules.generated_per_template.saturating_sub(have);
        if templates.props(tpl).is_none() || rules::price(tpl) <= 0.0 {
            wanted = 0;
        }
        let first = if wanted > 0 { offers::int_ids(wanted)? } else { 0 };
        for n in 0..wanted {
            if added >= budget {
                break;
            }
            let offer = simulated_offer(rules, &mut templates, &mut rng, tpl, first + n, now);
            offers::put(&offer)?;
            added += 1;
        }
        if added >= budget {
            break;
        }
        at = (at + 1) % tpls.len();
        visited += 1;
    }
    store::set("flea.gen", &at)?;
    Ok(())
}

/// One simulated player's offer of `tpl`.
fn simulated_offer(rules: &Rules, templates: &mut Templates, rng: &mut Rng, tpl: &str, intid: u64, now: u64) -> Value {
    let stack = templates.stack_max(tpl).unwrap_or(1);
    let units = if stack > 1 { rng.range(1, stack.min(MAX_UNITS)) } else { rng.range(1, 10) };
    let (lo, hi) = rules.price_range;
    let rub = (rules::price(tpl) * (lo + rng.float() * (hi - lo).max(0.0))).max(1.0).round();
    // SPT's currency mix: mostly roubles, some dollars and euros.
    let roll = rng.range(1, 100);
    let money = if roll <= 78 {
        ROUBLES
    } else if roll <= 92 {
        DOLLARS
    } else {
        EUROS
    };
    // A db without the foreign money (a generated one) prices everything in roubles.
    let money = if templates.props(money).is_some() { money } else { ROUBLES };
    let rate = rules::price(money).max(1.0);
    let count = (rub / rate).ceil().max(1.0);
    let life = rng.range(rules.generated_life.0, rules.generated_life.1.max(rules.generated_life.0));
    let id = ids::new_id();
    let root = ids::new_id();
    let user = ids::new_id();
    json!({
        "_id": id, "intId": intid, "root": root,
        "items": [{ "_id": root, "_tpl": tpl, "parentId": "hideout", "slotId": "hideout",
                    "upd": { "StackObjectsCount": units } }],
        "requirements": [{ "_tpl": money, "count": count as u64, "onlyFunctional": false }],
        "requirementsCost": (count * rate).round(), "itemsCost": rules::price(tpl).round(),
        "summaryCost": (count * rate).round(), "startTime": now, "endTime": now + life,
        "sellInOnePiece": false, "unlimitedCount": false, "loyaltyLevel": 1, "locked": false, "quantity": units,
        "user": { "id": user, "nickname": format!("Seller{}", rng.range(100, 9999)),
                  "rating": (rng.float() * 20.0 * 100.0).round() / 100.0, "memberType": 0,
                  "selectedMemberCategory": 0, "isRatingGrowing": true, "aid": rng.range(1_000_000, 9_999_999) },
        "sellResult": [],
        "_kind": "generated",
    })
}

/// `flea-add-offer {tpl, count, price, currency?, seconds?}`: a simulated player's offer of `count`
/// units of `tpl` at `price` of `currency` (a money template, roubles by default) a unit, standing
/// `seconds` (an hour by default) → `{id, intId}`.
pub(crate) fn add_offer(call: &Invocation) -> Result<Value> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Asked {
        tpl: String,
        count: u64,
        price: u64,
        #[serde(default)]
        currency: Option<String>,
        #[serde(default)]
        seconds: Option<u64>,
    }
    let asked: Asked = call.json()?;
    if !ids::is_id(&asked.tpl) || !db::exists(&db::path(&["templates", "items", &asked.tpl])) {
        return Err(Error::Invalid("`tpl` is not an item template".into()));
    }
    if !(1..=1_000_000).contains(&asked.count) || !(1..=1_000_000_000).contains(&asked.price) {
        return Err(Error::Invalid("`count` is 1 to 1 000 000 and `price` 1 to 1 000 000 000".into()));
    }
    let money = asked.currency.unwrap_or_else(|| ROUBLES.to_owned());
    if ![ROUBLES, DOLLARS, EUROS].contains(&money.as_str()) {
        return Err(Error::Invalid("`currency` is a money template".into()));
    }
    let seconds = asked.seconds.unwrap_or(3600).clamp(60, 30 * 86_400);
    let now = clock::now();
    let intid = offers::int_ids(1)?;
    let mut offer = simulated_offer(rules::get(), &mut Templates::default(), &mut Rng::new(), &asked.tpl, intid, now);
    let rate = rules::price(&money).max(1.0);
    offer["items"][0]["upd"]["StackObjectsCount"] = json!(asked.count);
    offer["quantity"] = json!(asked.count);
    offer["requirements"] = json!([{ "_tpl": money, "count": asked.price, "onlyFunctional": false }]);
    offer["requirementsCost"] = json!((asked.price as f64 * rate).round());
    offer["summaryCost"] = offer["requirementsCost"].clone();
    offer["endTime"] = json!(now + seconds);
    offers::put(&offer)?;
    Ok(json!({ "id": offer["_id"], "intId": intid }))
}
