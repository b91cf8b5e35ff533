//! A player's offer selling over time (SPT's `RagfairSellHelper` and `RagfairOfferHelper.
//! ProcessOffersOnProfile`/`CompleteOffer`), and keeping the store's copy of a player's offer in step
//! with the profile (`reconcile`, see `player.rs` for why the profile is the truth).
//!
//! When an offer is listed its sales are rolled at once, as SPT does: the sell chance from the price
//! asked against the flea price and the item's condition ([`chance`]), then, unit by unit until the
//! offer's end, whether a buyer comes and when ([`roll`]); the results are the offer's `sellResult`.
//!
//! Due work is found through an index ordered by due time, never by scanning offers or profiles:
//! `flea.due` lists the [`WINDOW`]-second windows that hold work and `flea.due.<window>` the offers
//! due in it (`{offer id: owner}`); each offer is in one window, that of its next sale or of its end,
//! whichever comes first. The periodic timer `flea.sales` reconciles the offers of the windows that
//! have passed, at most [`MAX_PER_TICK`] a firing, then the pending entries a crash may have left
//! (`flea.pending`). The host's one-shot timers are not used per offer: a mod may have 1000 pending.
//!
//! [`reconcile`] is idempotent: from the profile's marker `_flea.<id>` = `{offer, paid}` it pays the
//! due `sellResult`s past `paid` (one letter with the money, kind FLEAMARKET, `paid` advanced and the
//! rating raised in the same profile write), returns the items by mail when the offer has ended, and
//! then makes `flea.offer.<id>` match the marker. A crash anywhere replays to the same end: a sale
//! is paid once because `paid` moves with the letter; the copy is rebuilt from the marker.
//!
//! When the server was off: the timer fires once at the next start, late; the windows that passed
//! are processed then (sales due while it was off are paid at once, offers that ended return their
//! items), a thousand offers a firing until it has caught up.

use super::offers;
use super::rules::{self, Rng, Rules};
use crate::clock;
use crate::events;
use crate::ids;
use crate::mail::mailbox::{self, Letter, kind};
use crate::notify;
use crate::profile::doc::Doc;
use crate::profile::shape::FLEA as MARKERS;
use crate::templates::{Templates, tpl};
use modhost_sdk::timers::Fired;
use modhost_sdk::{Error, Result, push, store};
use serde_json::{Map, Value, json};

/// The width of a due window, in seconds: work due in a window is done after it has passed, so a sale
/// is paid at most this much (plus the timer's period) after its time.
pub(crate) const WINDOW: u64 = 10;
/// How often the sales timer fires, in seconds.
pub(crate) const PERIOD: u32 = 5;
/// The most offers one firing reconciles: the rest wait for the next.
const MAX_PER_TICK: usize = 1000;
/// Ragman, who sends SPT's flea messages.
const RAGMAN: &str = "5ac3b934156ae10c4430e83c";
/// How long a flea letter's items wait to be taken (SPT's default for system mail: 48 hours).
const STORAGE_SECONDS: u64 = 48 * 3600;

/// SPT's sell chance, in percent: the base chance scaled by the item's quality, pushed up or down by
/// how the asked price compares with the flea price (the ratio to the fourth power), plus 10, within
/// the config's bounds.
pub(crate) fn chance(rules: &Rules, market: f64, asked: f64, quality: f64) -> f64 {
    if asked <= 0.0 {
        return rules.chance_max;
    }
    let base = rules.chance_base * quality;
    let modifier = market / asked * rules.chance_multiplier;
    let chance = (base * modifier * modifier.powi(3) + 10.0).round();
    chance.clamp(rules.chance_min, rules.chance_max)
}

/// SPT's `RollForSale`: until all `units` are rolled or the offer ends, a buyer for a random number of
/// them (all at once for a pack) comes with `chance` percent, each sale later than the last by a
/// random time between the config's bounds, weighted to come sooner the likelier it was.
pub(crate) fn roll(
    rules: &Rules,
    rng: &mut Rng,
    chance: f64,
    units: u64,
    one_piece: bool,
    now: u64,
    ends: u64,
) -> Value {
    let mut sales = Vec::new();
    let (mut at, mut left) = (now, units);
    // Each round rolls at least one unit, so this ends within `units` rounds.
    while left > 0 && at < ends && chance > 0.0 {
        let bought = if one_piece { left } else { rng.range(1, left) };
        if rng.float() * 100.0 < chance {
            let min = rules.time_min * 60.0;
            let mut max = (100.0 - chance) / 100.0 * rules.time_max * 60.0;
            if max < min {
                max = min + 5.0;
            }
            let wait = ((rng.float() * (max - min) + min).floor() as u64).max(1);
            at += wait;
            sales.push(json!({ "sellTime": at, "amount": bought }));
        }
        left -= bought;
    }
    Value::Array(sales)
}

/// The window of time `at`.
fn window(at: u64) -> u64 {
    at / WINDOW
}

/// The profile key of `uid`.
fn profile_key(uid: &str) -> String {
    format!("profile.{uid}")
}

/// What reconciling an offer did, for the events and notifications after its write.
#[derive(Default)]
struct Done {
    letters: Vec<Value>,
    sold: u64,
}

/// Makes offer `id` of player `uid` what its marker says, paying the sales due by `now` and returning
/// the items of an ended offer first. Answers the time of its next work, if it has any. A conflict on
/// the profile (the player's own request in between) is answered as such: the timer tries again.
pub(crate) fn reconcile(uid: &str, id: &str, session: Option<&str>, now: u64) -> Result<Option<u64>> {
    let key = profile_key(uid);
    let found = store::doc_get::<Value>(&key, &modhost_sdk::db::path(&[MARKERS, id]))?;
    let (mut marker, version) = match found {
        Some((marker, version)) if marker["offer"].is_object() => (marker, version),
        _ => {
            // No marker: nothing is listed (any more); the copy goes.
            if let Some((stored, _)) = offers::get(id)? {
                offers::remove(id, &stored)?;
            }
            return Ok(None);
        }
    };
    let mut done = Done::default();
    let due = due_sales(&marker, now);
    let ended = marker["offer"]["endTime"].as_u64().unwrap_or(0) <= now;
    let session = session.map(str::to_owned).or_else(|| marker["offer"]["_session"].as_str().map(str::to_owned));
    if !due.is_empty() || ended || (session.is_some() && marker["offer"]["_session"].as_str() != session.as_deref()) {
        let mut doc = Doc::at(&key, version);
        let mut templates = Templates::default();
        if let Some(session) = &session {
            marker["offer"]["_session"] = json!(session);
        }
        settle_sales(&mut doc, &mut templates, &mut marker, &due, &mut done)?;
        let left = marker["offer"]["quantity"].as_u64().unwrap_or(0);
        if left > 0 && ended {
            let letter = Letter {
                from: RAGMAN.to_owned(),
                kind: kind::FLEAMARKET,
                text: String::new(),
                template_id: Some("5bdac06e86f774296f5a19c5".to_owned()),
                items: returned(&mut templates, &marker["offer"]),
                max_storage: STORAGE_SECONDS,
                system_data: None,
            };
            done.letters.push(mailbox::send(&mut doc, letter)?);
        }
        if left == 0 || ended {
            doc.set(&[MARKERS, id], Value::Null)?;
        } else {
            doc.set(&[MARKERS, id], marker.clone())?;
        }
        doc.commit()?;
        announce(uid, id, &marker, session.as_deref(), &done);
        if left == 0 || ended {
            if let Some((stored, _)) = offers::get(id)? {
                offers::remove(id, &stored)?;
            }
            return Ok(None);
        }
    }
    // The copy matches the marker (what a search shows).
    let offer = &marker["offer"];
    match offers::get(id)? {
        Some((stored, _)) if stored == *offer => {}
        Some((stored, _)) => {
            let (old, new) = (stored["endTime"].as_u64().unwrap_or(0), offer["endTime"].as_u64().unwrap_or(0));
            offers::put(offer)?;
            if let Some(tpl) = offers::sells(offer) {
                offers::reschedule(id, tpl, old, new)?;
            }
        }
        None => offers::put(offer)?,
    }
    Ok(next(&marker))
}

/// The sale results past `paid` that are due by `now`.
fn due_sales(marker: &Value, now: u64) -> Vec<Value> {
    let paid = marker["paid"].as_u64().unwrap_or(0) as usize;
    let results = marker["offer"]["sellResult"].as_array().map(Vec::as_slice).unwrap_or_default();
    results.iter().skip(paid).take_while(|r| r["sellTime"].as_u64().is_some_and(|t| t <= now)).cloned().collect()
}

/// The offer's next work: its next unpaid sale or its end, whichever comes first.
fn next(marker: &Value) -> Option<u64> {
    let ends = marker["offer"]["endTime"].as_u64()?;
    let sale = due_sales(marker, u64::MAX).first().and_then(|r| r["sellTime"].as_u64());
    Some(sale.map_or(ends, |s| s.min(ends)))
}

/// Pays the `due` sales into one letter, advances `paid` and the quantity, raises the rating.
fn settle_sales(
    doc: &mut Doc,
    templates: &mut Templates,
    marker: &mut Value,
    due: &[Value],
    done: &mut Done,
) -> Result<()> {
    if due.is_empty() {
        return Ok(());
    }
    let offer = &marker["offer"];
    let quantity = offer["quantity"].as_u64().unwrap_or(0);
    let one_piece = offer["sellInOnePiece"] == true;
    let sold: u64 = due.iter().map(|r| r["amount"].as_u64().unwrap_or(0)).sum::<u64>().min(quantity);
    // A pack's requirements are its whole price, paid once; anything else's are a unit's.
    let times = if one_piece { 1 } else { sold };
    let mut items = Vec::new();
    for r in offer["requirements"].as_array().into_iter().flatten() {
        let (Some(t), Some(n)) = (r["_tpl"].as_str(), r["count"].as_u64()) else { continue };
        items.extend(stacks(templates, t, n.saturating_mul(times), None));
    }
    let worth = offer["requirementsCost"].as_f64().unwrap_or(0.0) * times as f64;
    let rating = doc.get(&["RagfairInfo", "rating"])?.as_f64().unwrap_or(0.0);
    doc.set(&["RagfairInfo", "rating"], json!(rating + rules::get().rating_per_rouble * worth))?;
    doc.set(&["RagfairInfo", "isRatingGrowing"], json!(true))?;
    let letter = Letter {
        from: RAGMAN.to_owned(),
        kind: kind::FLEAMARKET,
        text: String::new(),
        // SPT's locale string for "your offer was sold".
        template_id: Some("5bdac0b686f7743e1665e09e".to_owned()),
        items,
        max_storage: STORAGE_SECONDS,
        system_data: Some(json!({ "buyerNickname": "A buyer", "soldItem": offers::sells(offer), "itemCount": sold })),
    };
    done.letters.push(mailbox::send(doc, letter)?);
    done.sold += sold;
    let paid = marker["paid"].as_u64().unwrap_or(0) + due.len() as u64;
    marker["paid"] = json!(paid);
    marker["offer"]["quantity"] = json!(quantity - sold);
    Ok(())
}

/// `units` of template `t` as stacks no larger than its stack size, each under its own fresh id (the
/// parts of the first when `parts` are given: an item that carries others is one unit).
fn stacks(templates: &mut Templates, t: &str, units: u64, parts: Option<&[Value]>) -> Vec<Value> {
    let max = templates.stack_max(t).unwrap_or(1).max(1);
    let mut out = Vec::new();
    let mut left = units;
    while left > 0 {
        let n = max.min(left);
        let id = ids::new_id();
        out.push(json!({ "_id": id, "_tpl": t, "upd": { "StackObjectsCount": n } }));
        if let Some(parts) = parts {
            out.extend(parts.iter().cloned());
            break;
        }
        left -= n;
    }
    out
}

/// The items of an ended offer, as they come back: the quantity left of its root, with its parts.
fn returned(templates: &mut Templates, offer: &Value) -> Vec<Value> {
    let left = offer["quantity"].as_u64().unwrap_or(0);
    let items = offer["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(root) = items.iter().find(|i| i["_id"] == offer["root"]) else { return Vec::new() };
    let parts: Vec<Value> = items.iter().filter(|i| i["_id"] != offer["root"]).cloned().collect();
    if !parts.is_empty() {
        // An item with parts is listed alone, one unit: it comes back whole, as it went.
        return items.to_vec();
    }
    let mut out = stacks(templates, tpl(root), left, None);
    // Keep what the root carried (durability, found in raid) on every stack.
    for stack in &mut out {
        let mut upd = root["upd"].clone();
        upd["StackObjectsCount"] = stack["upd"]["StackObjectsCount"].clone();
        stack["upd"] = upd;
    }
    out
}

/// After a reconcile's write: the letters pushed, `RagfairOfferSold`, and `flea.sold`.
fn announce(uid: &str, id: &str, marker: &Value, session: Option<&str>, done: &Done) {
    if let Some(session) = session {
        for letter in &done.letters {
            notify::message(session, letter);
        }
        if done.sold > 0 {
            let sold = json!({
                "type": "RagfairOfferSold", "eventId": ids::new_id(), "offerId": id, "count": done.sold,
                "handbookId": offers::sells(&marker["offer"]),
            });
            if let Err(e) = push::send(session, &sold) {
                modhost_sdk::log::warn(&format!("pushing RagfairOfferSold to {session}: {e}"));
            }
        }
    }
    if done.sold > 0 {
        let payload = json!({ "uid": uid, "offer": id, "count": done.sold, "tpl": offers::sells(&marker["offer"]) });
        events::announce(events::FLEA_SOLD, &payload);
    }
}

/// Files offer `id` under the window of its next work `at` (and out of `from`'s, if another).
fn schedule(id: &str, uid: &str, at: Option<u64>, from: Option<u64>) -> Result<()> {
    let to = at.map(window);
    if let Some(to) = to
        && Some(to) != from
    {
        store::doc_patch(&format!("flea.due.{to}"), "", &json!({ id: uid }))?;
        store::doc_patch("flea.due", "", &json!({ to.to_string(): 1 }))?;
    }
    if let Some(from) = from
        && Some(from) != to
    {
        store::doc_patch(&format!("flea.due.{from}"), "", &json!({ id: null }))?;
    }
    Ok(())
}

/// After a batch that applied flea actions committed: reconcile this player's pending offers now, so
/// their copies are searchable at once (the timer would, later).
pub(crate) fn settle(uid: &str, session: Option<&str>) {
    if let Err(e) = settle_pending(Some(uid), session, clock::now()) {
        modhost_sdk::log::warn(&format!("settling the flea offers of {uid}: {e}"));
    }
}

/// Reconciles the pending entries (of `only` this player, when given), each dropped once done.
fn settle_pending(only: Option<&str>, session: Option<&str>, now: u64) -> Result<usize> {
    let pending: Map<String, Value> = match store::get::<Value>("flea.pending")? {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut done = 0;
    for (id, owner) in pending.into_iter().take(MAX_PER_TICK) {
        let Some(owner) = owner.as_str() else { continue };
        if only.is_some_and(|o| o != owner) {
            continue;
        }
        match reconcile(owner, &id, session, now) {
            Ok(at) => {
                schedule(&id, owner, at, None)?;
                store::doc_patch("flea.pending", "", &json!({ id: null }))?;
                done += 1;
            }
            Err(Error::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Ok(done)
}

/// The periodic timer `flea.sales`: the windows that have passed, then what a crash left pending.
pub(crate) fn tick(_: &Fired) -> Result<()> {
    let now = clock::now();
    let windows: Map<String, Value> = match store::get::<Value>("flea.due")? {
        Some(Value::Object(w)) => w,
        _ => Map::new(),
    };
    let mut passed: Vec<u64> = windows.keys().filter_map(|w| w.parse().ok()).filter(|w| *w < window(now)).collect();
    passed.sort_unstable();
    let mut budget = MAX_PER_TICK;
    for w in passed {
        let due: Map<String, Value> = match store::get::<Value>(&format!("flea.due.{w}"))? {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        };
        let mut left = due.len();
        for (id, owner) in due {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let Some(owner) = owner.as_str() else { continue };
            match reconcile(owner, &id, None, now) {
                Ok(at) => {
                    schedule(&id, owner, at, Some(w))?;
                    left -= 1;
                }
                // The player's own request came in between: the next firing tries again.
                Err(Error::Conflict(_)) => {}
                Err(other) => return Err(other),
            }
        }
        if left == 0 {
            store::delete(&format!("flea.due.{w}"))?;
            store::doc_patch("flea.due", "", &json!({ w.to_string(): null }))?;
        }
        if budget == 0 {
            break;
        }
    }
    settle_pending(None, None, now)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(base: f64, min: f64, max: f64) -> Rules {
        let config = json!({"sell": {"chance": {"base": base, "sellMultiplier": 1.24, "minSellChancePercent": 0,
                                                 "maxSellChancePercent": 100},
                                     "time": {"min": min, "max": max}}});
        Rules::from(&json!({}), &config)
    }

    #[test]
    fn the_chance_is_spts_and_cheaper_sells_likelier() {
        let r = rules(20.0, 0.0, 1.0);
        // At the flea price: 20 · 1.24 · 1.24³ + 10, rounded.
        let at_price = (20.0 * 1.24 * 1.24f64.powi(3) + 10.0).round();
        assert_eq!(at_price, 57.0);
        assert_eq!(chance(&r, 1000.0, 1000.0, 1.0), at_price);
        assert!(chance(&r, 1000.0, 2000.0, 1.0) < at_price);
        assert_eq!(chance(&r, 1000.0, 100.0, 1.0), 100.0, "bounded by the max");
        assert_eq!(chance(&r, 1000.0, 1_000_000.0, 1.0), 10.0, "the floor of ten");
    }

    #[test]
    fn a_roll_sells_no_more_than_listed_in_order_within_the_offer() {
        let r = rules(50.0, 0.0, 1.0);
        let mut rng = Rng::seeded(3);
        for units in [1, 5, 60] {
            let sales = roll(&r, &mut rng, 80.0, units, false, 1000, 1000 + 12 * 3600);
            let sales = sales.as_array().expect("a list");
            let total: u64 = sales.iter().map(|s| s["amount"].as_u64().expect("amount")).sum();
            assert!(total <= units);
            let times: Vec<u64> = sales.iter().map(|s| s["sellTime"].as_u64().expect("time")).collect();
            assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
            assert!(times.iter().all(|t| *t > 1000));
        }
        let sure = roll(&r, &mut rng, 100.0, 7, true, 0, 100);
        assert_eq!(sure.as_array().map(Vec::len), Some(1), "a pack sells at once");
        assert_eq!(sure[0]["amount"], 7);
        assert_eq!(roll(&r, &mut rng, 0.0, 7, false, 0, 100), json!([]), "a zero chance never sells");
    }

    #[test]
    fn the_next_work_is_the_first_unpaid_sale_or_the_end() {
        let marker = json!({"paid": 1, "offer": {"endTime": 500, "sellResult": [
            {"sellTime": 100, "amount": 1}, {"sellTime": 200, "amount": 1}, {"sellTime": 900, "amount": 1}]}});
        assert_eq!(next(&marker), Some(200));
        assert_eq!(due_sales(&marker, 250).len(), 1);
        assert_eq!(due_sales(&marker, 150).len(), 0, "the first is paid already");
        let marker = json!({"paid": 3, "offer": {"endTime": 500, "sellResult": []}});
        assert_eq!(next(&marker), Some(500));
    }
}
