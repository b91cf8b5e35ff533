//! `Insure {tid, items}` (SPT's `InsuranceController.Insure`): the player pays a trader to insure items
//! they own, and the profile's `InsuredItems` records each as `{tid, itemId}`, as SPT keeps them.
//!
//! Checked whole before anything changes, where SPT trusts the client: the trader insures
//! (`base.insurance.availability`); every item is the player's, not a root container, not insured
//! already, named once, of a template the db knows that is insurable (`InsuranceDisabled` not set, no
//! ancestor category in the trader's `insurance.excluded_category`); and the stash holds the price in
//! roubles. The price is the quote's (`mod.rs`'s `Pricing`), summed; it is taken from rouble stacks in
//! the stash, exactly, and added to the trader's `salesSum` (SPT's `PaymentService`). An armour's soft
//! inserts are insured with it, as SPT does, at no charge.

use super::{Handbook, Pricing};
use crate::economy;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, children, count, is_root, item};
use crate::profile::shape::INDEX;
use crate::templates::{ROUBLES, Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The most items one `Insure` names (the client sends a loadout: a few dozen with their parts).
const MAX_ITEMS: usize = 512;
/// The most entries `InsuredItems` holds (a player insures what they carry, a few hundred at most).
const MAX_INSURED: usize = 10_000;
/// How deep a template's parents or an item's parents are followed.
const MAX_DEPTH: usize = 32;
/// The slots of an armour's soft inserts (SPT's `ItemHelper._softInsertIds`).
const SOFT_INSERTS: [&str; 14] = [
    "groin",
    "groin_back",
    "soft_armor_back",
    "soft_armor_front",
    "soft_armor_left",
    "soft_armor_right",
    "shoulder_l",
    "shoulder_r",
    "collar",
    "helmet_top",
    "helmet_back",
    "helmet_eyes",
    "helmet_jaw",
    "helmet_ears",
];

/// The profile's `InsuredItems`, as the batch has left it.
pub(crate) fn insured(doc: &mut Doc) -> Result<Vec<Value>, Refused> {
    match doc.get(&["InsuredItems"])? {
        Value::Array(list) if list.len() <= MAX_INSURED => Ok(list),
        Value::Null => Ok(Vec::new()),
        _ => Err("the profile's `InsuredItems` is malformed".into()),
    }
}

/// Is an item of `tpl` of category `category` or below it (the template's `_parent` chain)?
fn in_category(tpl: &str, categories: &[Value]) -> bool {
    let mut at = tpl.to_owned();
    for _ in 0..MAX_DEPTH {
        if categories.iter().any(|c| c == at.as_str()) {
            return true;
        }
        match db::get::<String>(&db::path(&["templates", "items", &at, "_parent"])) {
            Ok(parent) if !parent.is_empty() => at = parent,
            _ => return false,
        }
    }
    false
}

/// `Insure {tid, items}`.
pub(crate) fn insure(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let tid = action["tid"].as_str().ok_or("Insure names no trader `tid`")?;
    if !crate::ids::is_id(tid) {
        return Err(format!("trader {} does not exist", json!(tid)).into());
    }
    let terms: Value = db::get(&db::path(&["traders", tid, "base", "insurance"])).unwrap_or(Value::Null);
    if terms["availability"] != true {
        return Err(format!("trader {tid} does not insure").into());
    }
    let excluded = terms["excluded_category"].as_array().cloned().unwrap_or_default();
    let named = action["items"].as_array().ok_or("Insure names no `items`")?;
    if named.is_empty() || named.len() > MAX_ITEMS {
        return Err(format!("Insure names 1 to {MAX_ITEMS} items").into());
    }
    let mut list = insured(doc)?;
    let already: BTreeSet<String> = list.iter().filter_map(|i| i["itemId"].as_str().map(str::to_owned)).collect();
    let pricing = Pricing::of(doc, tid)?.ok_or_else(|| format!("trader {tid} has no insurance prices"))?;
    let mut handbook = Handbook::default();
    let (mut price, mut covered, mut inserts) = (0u64, BTreeSet::new(), Vec::new());
    for id in named {
        let id = id.as_str().ok_or("an item to insure is not an id")?;
        let found = item(doc, id)?.ok_or_else(|| format!("item {} is not in this profile", json!(id)))?;
        if is_root(doc, id)? {
            return Err(format!("item {id} is a root container").into());
        }
        if already.contains(id) || !covered.insert(id.to_owned()) {
            return Err(format!("item {id} is insured already").into());
        }
        let template = tpl(&found).to_owned();
        let props = templates.props(&template).ok_or_else(|| format!("item {id} has an unknown template"))?;
        if props["InsuranceDisabled"] == true || in_category(&template, &excluded) {
            return Err(format!("trader {tid} does not insure item {id} ({template})").into());
        }
        price = price.saturating_add(pricing.price(&template, templates, &mut handbook));
        for child in children(doc, id)? {
            let slot = item(doc, &child)?.map(|c| c["slotId"].as_str().unwrap_or_default().to_lowercase());
            if slot.is_some_and(|s| SOFT_INSERTS.contains(&s.as_str())) && !already.contains(&child) {
                inserts.push(child);
            }
        }
    }
    pay(doc, templates, changes, price)?;
    for id in covered.into_iter().chain(inserts) {
        if !list.iter().any(|i| i["itemId"] == id.as_str()) {
            list.push(json!({"tid": tid, "itemId": id}));
        }
    }
    if list.len() > MAX_INSURED {
        return Err(format!("a profile insures at most {MAX_INSURED} items").into());
    }
    doc.set(&["InsuredItems"], Value::Array(list))?;
    if !doc.object_or_absent(&["TradersInfo", tid])? {
        return Err("the profile's `TradersInfo` is malformed".into());
    }
    let sales = doc.get(&["TradersInfo", tid, "salesSum"])?.as_u64().unwrap_or(0);
    doc.set(&["TradersInfo", tid, "salesSum"], json!(sales.saturating_add(price)))?;
    Ok(())
}

/// Is item `id` in the stash (under it, at any depth)?
fn in_stash(doc: &mut Doc, id: &str, stash: &str) -> Result<bool, Refused> {
    let mut at = id.to_owned();
    for _ in 0..MAX_DEPTH {
        let Some(found) = item(doc, &at)? else { return Ok(false) };
        match found["parentId"].as_str() {
            Some(parent) if parent == stash => return Ok(true),
            Some(parent) => at = parent.to_owned(),
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// Takes `price` roubles from the stash's rouble stacks (found through the stacks index, in the order
/// they were added); an emptied stack is removed. Refused, changing nothing, when the stash holds less.
fn pay(doc: &mut Doc, templates: &mut Templates, changes: &mut Changes, price: u64) -> Outcome {
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let stacks: Vec<String> = match doc.get(&[INDEX, "stacks", ROUBLES])? {
        Value::Object(ids) => ids.into_iter().map(|(id, _)| id).collect(),
        _ => Vec::new(),
    };
    let mut plan: Vec<(String, Value, u64)> = Vec::new();
    let mut due = price;
    for id in stacks {
        if due == 0 {
            break;
        }
        let Some(stack) = item(doc, &id)? else { continue };
        if tpl(&stack) != ROUBLES || !in_stash(doc, &id, &stash)? {
            continue;
        }
        let take = count(&stack).min(due);
        due -= take;
        plan.push((id, stack, take));
    }
    if due > 0 {
        return Err(format!("insuring costs {price} roubles; the stash holds {}", price - due).into());
    }
    economy::spend(doc, templates, changes, plan)
}
