//! A player's own offers: `RagFairAddOffer`, `RagFairRemoveOffer`, `RagFairRenewOffer` (SPT's
//! `RagfairController.AddPlayerOffer`, `FlagOfferForRemoval`, `ExtendOffer`).
//!
//! **The profile is the truth of a player's offers.** Each is held in the profile under
//! `_flea.<offer id>` = `{offer, paid}`: SPT's `RagfairOffer` with the items that left the inventory,
//! and how many of its sale results (`sellResult`) were paid out. The store's `flea.offer.<id>` (what
//! a search reads, `offers.rs`) is a copy kept in step with it by `selling::reconcile`, which is
//! idempotent. The two writes cannot be one transaction, so they are ordered:
//!
//! 1. the action writes `flea.pending.<offer id>` = the owner (a store write, before the batch's);
//! 2. the batch's one profile write: the items leave and the fee is paid with the marker written in
//!    the same patch (or, for a removal or renewal, the marker's new end time);
//! 3. after the commit, `selling::settle` makes the store's copy match the marker and drops the
//!    pending entry.
//!
//! A crash after 1 leaves a pending entry: the sales timer reconciles it (no marker: nothing was
//! listed, the entry goes). A crash after 2 leaves a marker with no copy (or an old one): the timer
//! reconciles it from the marker. Items and money move only in the profile's one write, so no crash
//! duplicates or loses them; a sale pays from the marker and advances `paid` in the same write as
//! the letter, so a replayed sale is never paid twice (`selling.rs`).
//!
//! The fee is SPT's tax (`fees.rs`), in roubles, from the player's rouble stacks. The offer limit is
//! `maxActiveOfferCount` for the player's flea rating (`RagfairInfo.rating`).

use super::fees;
use super::offers::{self, MEMBER_TRADER};
use super::rules::{self, Rng};
use super::selling;
use crate::clock;
use crate::economy;
use crate::ids;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, count, is_root, item, set_count, subtree, write};
use crate::profile::shape::INDEX;
use crate::templates::{ROUBLES, Templates, tpl};
use modhost_sdk::store;
use serde_json::{Value, json};

/// The profile member holding the player's offers.
pub(crate) use crate::profile::shape::FLEA as MARKERS;
/// The most stacks one offer lists (SPT's client lists a handful at most).
const MAX_LISTED: usize = 64;
/// The most requirements one offer asks (the client offers three).
const MAX_REQUIREMENTS: usize = 8;
/// The most items one listed stack carries with it (a weapon's parts).
const MAX_OFFER_ITEMS: usize = 256;
/// The largest count a requirement may ask (a price beyond any stash's money).
const MAX_ASKED: u64 = 1_000_000_000;

/// `RagFairAddOffer {items: [ids], requirements: [{_tpl, count}], sellInOnePiece}`.
pub(crate) fn add(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let rules = rules::get();
    let now = clock::now();
    let uid = owner(doc)?;
    let listed = action["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    if listed.is_empty() || listed.len() > MAX_LISTED {
        return Err(format!("an offer lists 1 to {MAX_LISTED} items").into());
    }
    let one_piece = action["sellInOnePiece"] == true;

    // The items: the player's, not a root, all of one template; a stack with parts is listed alone.
    let mut stacks: Vec<(String, Value)> = Vec::new();
    for id in listed {
        let id = id.as_str().ok_or("an offer's `items` are item ids")?;
        let stack = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
        if is_root(doc, id)? || stacks.iter().any(|(s, _)| s == id) {
            return Err(format!("item {id} cannot be listed (a root container, or named twice)").into());
        }
        stacks.push((id.to_owned(), stack));
    }
    let goods = tpl(&stacks[0].1).to_owned();
    if stacks.iter().any(|(_, s)| tpl(s) != goods) {
        return Err("an offer of several stacks lists one template".into());
    }
    let props = templates.props(&goods).cloned().unwrap_or_default();
    if props["CanSellOnRagfair"] == false {
        return Err(format!("{goods} cannot be sold on the flea market").into());
    }
    let mut parts = Vec::new();
    for (id, _) in &stacks {
        let below = subtree(doc, id)?;
        if below.len() > MAX_OFFER_ITEMS {
            return Err(format!("item {id} carries more than {MAX_OFFER_ITEMS} items").into());
        }
        if below.len() > 1 && stacks.len() > 1 {
            return Err("an item with parts is listed on its own".into());
        }
        parts.push(below);
    }
    let units: u64 = stacks.iter().map(|(_, s)| count(s)).sum();

    // The price: each requirement a real template, whole counts, its worth in roubles.
    let requirements = requirements(action)?;
    let asked: f64 = requirements.iter().map(|(t, n)| rules::price(t) * *n as f64).sum();
    if asked <= 0.0 {
        return Err("the offer's price is worth nothing".into());
    }

    // The limit by rating.
    let rating = doc.get(&["RagfairInfo", "rating"])?.as_f64().unwrap_or(0.0);
    let standing = match doc.get(&[MARKERS])? {
        Value::Object(offers) => offers.len() as u64,
        _ => 0,
    };
    let limit = rules.offer_limit(rating);
    if standing >= limit {
        return Err(format!("a flea rating of {rating:.2} allows {limit} offers; this player has {standing}").into());
    }

    // The fee, in roubles, from stacks that are not being listed.
    let worth = worth(doc, templates, &parts)?;
    let commission = props["RagFairCommissionModifier"].as_f64().unwrap_or(1.0);
    // A pack's requirements are its whole price (SPT's `CreatePackOffer`), anything else's a unit's.
    let fee = if rules.fees { fees::tax(rules, worth, asked, units, one_piece, commission) } else { 0 };
    let listed_ids: Vec<&String> = parts.iter().flatten().collect();
    let paying = roubles(doc, fee, &listed_ids)?;

    // Checked: the offer, the items out, the fee, the marker.
    let id = ids::new_id();
    let mut items = Vec::new();
    for below in &parts {
        for part in below {
            items.push(item(doc, part)?.ok_or("an item vanished")?);
        }
    }
    let mut root = items[0].clone();
    root["parentId"] = json!("hideout");
    root["slotId"] = json!("hideout");
    if let Some(members) = root.as_object_mut() {
        members.shift_remove("location");
    }
    set_count(&mut root, units);
    let root_id = root["_id"].clone();
    let offer_items: Vec<Value> =
        if stacks.len() == 1 { std::iter::once(root).chain(items[1..].iter().cloned()).collect() } else { vec![root] };
    for below in parts.iter().rev() {
        for part in below.iter().rev() {
            write(doc, templates, part, None)?;
            changes.removed(part);
        }
    }
    economy::spend(doc, templates, changes, paying)?;

    let nickname = doc.get(&["Info", "Nickname"])?;
    let aid = doc.get(&["aid"])?;
    let intid = offers::int_ids(1)?;
    let ends = now + rules.duration_hours * 3600;
    let market = rules::price(&goods);
    let condition = offers::condition(&offer_items[0], Some(&props));
    let unit_asked = if one_piece { asked / units.max(1) as f64 } else { asked };
    let chance = selling::chance(rules, market, unit_asked, f64::from(condition) / 100.0);
    let sales = selling::roll(rules, &mut Rng::new(), chance, units, one_piece, now, ends);
    let offer = json!({
        "_id": id, "intId": intid, "root": root_id, "items": offer_items,
        "requirements": requirements.iter().map(|(t, n)| json!({"_tpl": t, "count": n, "onlyFunctional": false})).collect::<Vec<_>>(),
        "requirementsCost": asked.round(), "itemsCost": (market * units as f64).round(),
        "summaryCost": asked.round(), "startTime": now, "endTime": ends, "sellInOnePiece": one_piece,
        "unlimitedCount": false, "loyaltyLevel": 1, "locked": false, "quantity": units,
        "user": { "id": uid, "nickname": nickname, "rating": rating, "memberType": 0,
                  "selectedMemberCategory": 0, "isRatingGrowing": true, "aid": aid },
        "sellResult": sales,
        "_kind": "player", "_owner": uid, "_condition": condition,
    });
    store::doc_patch("flea.pending", "", &json!({ id.clone(): uid }))?;
    doc.set(&[MARKERS, &id], json!({ "offer": offer, "paid": 0 }))?;
    answer(doc, changes, &offer)?;
    Ok(())
}

/// `_session` is written by the first reconcile (`selling::settle`), which knows the request's session.
fn owner(doc: &mut Doc) -> Result<String, Refused> {
    Ok(doc.get(&["_id"])?.as_str().ok_or("the profile has no id")?.to_owned())
}

/// The requirements as `(template, count)`, checked.
fn requirements(action: &Value) -> Result<Vec<(String, u64)>, Refused> {
    let asked = action["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    if asked.is_empty() || asked.len() > MAX_REQUIREMENTS {
        return Err(format!("an offer asks 1 to {MAX_REQUIREMENTS} requirements").into());
    }
    let mut out: Vec<(String, u64)> = Vec::new();
    for r in asked {
        let t = r["_tpl"].as_str().filter(|t| ids::is_id(t)).ok_or("a requirement names no template")?;
        if !modhost_sdk::db::exists(&modhost_sdk::db::path(&["templates", "items", t])) {
            return Err(format!("requirement {t} is not an item").into());
        }
        let n = r["count"]
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_ASKED as f64)
            .ok_or("a requirement's count is a whole number of at least 1")? as u64;
        if out.iter().any(|(o, _)| o == t) {
            return Err(format!("requirement {t} is named twice").into());
        }
        out.push((t.to_owned(), n));
    }
    Ok(out)
}

/// What the listed items are worth on the flea: each unit and each part at its flea price.
fn worth(doc: &mut Doc, _templates: &mut Templates, parts: &[Vec<String>]) -> Result<f64, Refused> {
    let mut worth = 0.0;
    for below in parts {
        for id in below {
            let it = item(doc, id)?.ok_or("an item vanished")?;
            worth += rules::price(tpl(&it)) * count(&it) as f64;
        }
    }
    Ok(worth)
}

/// The rouble stacks that pay `fee` (not among `except`), and how much of each.
fn roubles(doc: &mut Doc, fee: u64, except: &[&String]) -> Result<Vec<(String, Value, u64)>, Refused> {
    let mut out = Vec::new();
    if fee == 0 {
        return Ok(out);
    }
    let stacks: Vec<String> = match doc.get(&[INDEX, "stacks", ROUBLES])? {
        Value::Object(ids) => ids.into_iter().map(|(id, _)| id).collect(),
        _ => Vec::new(),
    };
    let mut left = fee;
    for id in stacks {
        if left == 0 {
            break;
        }
        if except.contains(&&id) {
            continue;
        }
        let Some(stack) = item(doc, &id)? else { continue };
        if tpl(&stack) != ROUBLES {
            continue;
        }
        let take = count(&stack).min(left);
        left -= take;
        out.push((id, stack, take));
    }
    if left > 0 {
        return Err(format!("the fee is {fee} roubles; this player has {} to pay it with", fee - left).into());
    }
    Ok(out)
}

/// The answer's `ragFairOffers` (the offer as the client reads it) and `RagfairInfo`.
fn answer(doc: &mut Doc, changes: &mut Changes, offer: &Value) -> Outcome {
    let mut shown: Vec<Value> = match changes.answers.get("ragFairOffers") {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    shown.retain(|o| o["_id"] != offer["_id"]);
    shown.push(offers::for_client(offer));
    changes.answer("ragFairOffers", Value::Array(shown));
    let info = client_info(doc)?;
    changes.answer("RagfairInfo", info);
    Ok(())
}

/// SPT's `RagfairInfo` from the profile: rating, whether it grows, and the player's offers.
pub(crate) fn client_info(doc: &mut Doc) -> Result<Value, Refused> {
    let rating = doc.get(&["RagfairInfo", "rating"])?.as_f64().unwrap_or(0.0);
    let growing = doc.get(&["RagfairInfo", "isRatingGrowing"])?.as_bool().unwrap_or(true);
    let offers: Vec<Value> = match doc.get(&[MARKERS])? {
        Value::Object(markers) => markers.values().map(|m| offers::for_client(&m["offer"])).collect(),
        _ => Vec::new(),
    };
    Ok(json!({ "rating": rating, "isRatingGrowing": growing, "offers": offers }))
}

/// The player's own offer `id` (its marker), or why not.
fn own(doc: &mut Doc, action: &Value) -> Result<(String, Value), Refused> {
    let id = action["offerId"].as_str().ok_or("the action names no `offerId`")?;
    let marker = doc.get(&[MARKERS, id])?;
    if !marker["offer"].is_object() {
        return Err(format!("offer {id} is not one of this player's").into());
    }
    Ok((id.to_owned(), marker))
}

/// `RagFairRemoveOffer {offerId}`: as SPT, the offer ends `expireSeconds` from now (unless it ends
/// sooner), and its items come back by mail when it does (`selling.rs`).
pub(crate) fn remove(doc: &mut Doc, action: &Value, _templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, marker) = own(doc, action)?;
    let uid = owner(doc)?;
    let soon = clock::now() + rules::get().expire_seconds;
    let ends = marker["offer"]["endTime"].as_u64().unwrap_or(0);
    if ends > soon {
        store::doc_patch("flea.pending", "", &json!({ id.clone(): uid }))?;
        doc.set(&[MARKERS, &id, "offer", "endTime"], json!(soon))?;
    }
    let offer = doc.get(&[MARKERS, &id, "offer"])?;
    answer(doc, changes, &offer)
}

/// `RagFairRenewOffer {offerId, renewalTime}`: the fee again (SPT's tax on the offer as it stands),
/// and `renewalTime` hours more (at most `maxRenewOfferTimeInHour`).
pub(crate) fn renew(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let rules = rules::get();
    let (id, marker) = own(doc, action)?;
    let uid = owner(doc)?;
    let hours = action["renewalTime"]
        .as_u64()
        .filter(|h| (1..=rules.max_renew_hours).contains(h))
        .ok_or_else(|| format!("`renewalTime` is 1 to {} hours", rules.max_renew_hours))?;
    let offer = &marker["offer"];
    let ends = offer["endTime"].as_u64().unwrap_or(0);
    if ends <= clock::now() {
        return Err(format!("offer {id} has ended").into());
    }
    let quantity = offer["quantity"].as_u64().unwrap_or(0);
    let one_piece = offer["sellInOnePiece"] == true;
    let goods = offers::sells(offer).unwrap_or_default().to_owned();
    let worth: f64 = offer["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            let units = if i["_id"] == offer["root"] { quantity } else { count(i) };
            rules::price(tpl(i)) * units as f64
        })
        .sum();
    let commission = templates.props(&goods).and_then(|p| p["RagFairCommissionModifier"].as_f64()).unwrap_or(1.0);
    let asked = offer["requirementsCost"].as_f64().unwrap_or(0.0);
    let fee = if rules.fees { fees::tax(rules, worth, asked, quantity, one_piece, commission) } else { 0 };
    let paying = roubles(doc, fee, &[])?;
    economy::spend(doc, templates, changes, paying)?;
    store::doc_patch("flea.pending", "", &json!({ id.clone(): uid }))?;
    doc.set(&[MARKERS, &id, "offer", "endTime"], json!(ends + hours * 3600))?;
    let offer = doc.get(&[MARKERS, &id, "offer"])?;
    answer(doc, changes, &offer)
}

/// Is `offer` a trader's (its user's `memberType`)?
pub(crate) fn is_trader(offer: &Value) -> bool {
    offer["user"]["memberType"].as_u64() == Some(MEMBER_TRADER)
}
