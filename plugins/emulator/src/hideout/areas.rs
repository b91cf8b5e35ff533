//! Building and upgrading areas (SPT's `HideoutController.StartUpgrade`, `UpgradeComplete`,
//! `ImproveArea`), each rule checked where SPT trusts the client:
//!
//! - `HideoutUpgrade {areaType, items: [{id, count}]}`: the area's next level exists and nothing is
//!   being built there; every requirement of that level is met (other areas' levels, trader loyalty,
//!   skill levels, finished quests) and its items are paid from the stacks the client names (checked as
//!   a purchase's payment is: the player's, holding what is named, of a template the level asks for, in
//!   total what it asks). Then the area is under construction until now + `constructionTime`; a level
//!   that takes no time is built at once.
//! - `HideoutUpgradeComplete {areaType}`: only once the construction time has passed on the game's
//!   clock; the level goes up, the level's slots are added and its bonuses applied (`bonuses.rs`'s
//!   rules: a `StashSize` bonus swaps the stash's template; the others are listed in `Bonuses`).
//! - `HideoutImproveArea {areaType, items}`: the current level's improvements, paid the same way,
//!   complete at now + `improvementTime` (`simulate.rs` marks them done).

use super::state;
use crate::clock;
use crate::economy::{Paying, named_payment, pay};
use crate::menu::quests::status;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::templates::Templates;
use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A quest's finished status (SPT's `QuestStatus.Success`).
const SUCCESS: u64 = 4;
/// The most requirements of one level read (SPT's longest lists a dozen).
const MAX_REQUIREMENTS: usize = 64;

/// The db's area of `kind` (`hideout.areas`).
pub(crate) fn table(kind: u64) -> Result<Value, Refused> {
    let areas: Vec<Value> = db::get(&db::path(&["hideout", "areas"])).unwrap_or_default();
    areas
        .into_iter()
        .find(|a| a["type"].as_u64() == Some(kind))
        .ok_or_else(|| format!("area {kind} is not in the database").into())
}

/// The player's area of `kind`, added at level 0 when the profile lacks it (SPT's profile fixer adds
/// missing areas the same way).
pub(crate) fn of(hideout: &mut Value, kind: u64) -> Result<&mut Value, Refused> {
    if !hideout["Areas"].is_array() {
        hideout["Areas"] = json!([]);
    }
    let areas = hideout["Areas"].as_array_mut().ok_or("the profile's hideout areas are malformed")?;
    let at = match areas.iter().position(|a| a["type"].as_u64() == Some(kind)) {
        Some(at) => at,
        None => {
            areas.push(json!({"type": kind, "level": 0, "active": true, "passiveBonusesEnabled": true,
                              "completeTime": 0, "constructing": false, "slots": [], "lastRecipe": ""}));
            areas.len() - 1
        }
    };
    Ok(&mut areas[at])
}

/// The area's kind named by an action's `areaType`.
pub(crate) fn kind(action: &Value) -> Result<u64, Refused> {
    Ok(action["areaType"].as_u64().ok_or("the action names no `areaType`")?)
}

/// The level the player's area of `kind` is built to (0: not built).
pub(crate) fn level(hideout: &Value, kind: u64) -> u64 {
    let areas = hideout["Areas"].as_array().map(Vec::as_slice).unwrap_or_default();
    areas.iter().find(|a| a["type"].as_u64() == Some(kind)).and_then(|a| a["level"].as_u64()).unwrap_or(0)
}

/// Checks the requirements that are not items: other areas' levels, trader loyalty, skills, quests.
pub(crate) fn check(doc: &mut Doc, hideout: &Value, requirements: &[Value]) -> Outcome {
    for r in requirements.iter().take(MAX_REQUIREMENTS) {
        match r["type"].as_str() {
            Some("Area") => {
                let (area, want) = (r["areaType"].as_u64().unwrap_or(0), r["requiredLevel"].as_u64().unwrap_or(0));
                let have = level(hideout, area);
                if have < want {
                    return Err(format!("area {area} must be at level {want} (it is at {have})").into());
                }
            }
            Some("TraderLoyalty") => {
                let trader = r["traderId"].as_str().unwrap_or_default();
                let want = r["loyaltyLevel"].as_u64().unwrap_or(0);
                let have = crate::economy::loyalty(doc, trader)?;
                if have < want {
                    return Err(format!("trader {trader}'s loyalty must be at level {want} (it is at {have})").into());
                }
            }
            Some("Skill") => {
                let skill = r["skillName"].as_str().unwrap_or_default();
                let want = r["skillLevel"].as_u64().unwrap_or(0);
                let progress = crate::progression::skill_progress(&doc.get(&["Skills", "Common"])?, skill);
                // SPT's skill level is its progress in hundreds.
                let have = (progress / 100.0).floor().max(0.0) as u64;
                if have < want {
                    return Err(format!("skill {skill} must be at level {want} (it is at {have})").into());
                }
            }
            Some("QuestComplete") => {
                let quest = r["questId"].as_str().unwrap_or_default();
                let quests = doc.get(&["Quests"])?;
                let done = quests
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|q| q["qid"] == quest && status(&q["status"]) == Some(SUCCESS));
                if !done {
                    return Err(format!("quest {quest} must be finished first").into());
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The `Item` requirements of a list, by template: what the player must hand over.
pub(crate) fn price(requirements: &[Value]) -> BTreeMap<String, u64> {
    let mut price = BTreeMap::new();
    for r in requirements.iter().take(MAX_REQUIREMENTS).filter(|r| r["type"] == "Item") {
        if let (Some(tpl), Some(n)) = (r["templateId"].as_str(), r["count"].as_u64()) {
            let sum: &mut u64 = price.entry(tpl.to_owned()).or_default();
            *sum = sum.saturating_add(n);
        }
    }
    price
}

/// Takes `price` from the stacks `action.items` names, checked first; nothing when the price is empty.
pub(crate) fn hand_over(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    action: &Value,
    price: &BTreeMap<String, u64>,
) -> Outcome {
    let named = action["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    if price.is_empty() {
        return Ok(());
    }
    let payment: Vec<Paying> = named_payment(doc, named, price)?;
    for (id, _, _) in &payment {
        if !crate::profile::inventory::children(doc, id)?.is_empty() {
            return Err(format!("item {id} holds other items; empty it first").into());
        }
    }
    pay(doc, templates, changes, payment, price)
}

/// `HideoutUpgrade {areaType, items}`.
pub(crate) fn upgrade(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let kind = kind(action)?;
    let table = table(kind)?;
    let mut hideout = state::settle(doc)?;
    let area = of(&mut hideout, kind)?;
    if area["constructing"] == true {
        return Err(format!("area {kind} is already being built").into());
    }
    let next = area["level"].as_u64().unwrap_or(0) + 1;
    let stage = &table["stages"][next.to_string()];
    if !stage.is_object() {
        return Err(format!("area {kind} has no level {next}").into());
    }
    let requirements = stage["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    check(doc, &hideout, requirements)?;
    hand_over(doc, templates, changes, action, &price(requirements))?;
    let time = stage["constructionTime"].as_f64().filter(|t| t.is_finite() && *t > 0.0).unwrap_or(0.0).ceil() as u64;
    let area = of(&mut hideout, kind)?;
    if time == 0 {
        complete(doc, templates, changes, area, &table)?;
    } else {
        area["constructing"] = json!(true);
        area["completeTime"] = json!(clock::now() + time);
        super::ready::area(doc, changes, kind, time)?;
    }
    state::store(doc, hideout)?;
    Ok(())
}

/// `HideoutUpgradeComplete {areaType}`.
pub(crate) fn upgrade_complete(
    doc: &mut Doc,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let kind = kind(action)?;
    let table = table(kind)?;
    let mut hideout = state::settle(doc)?;
    let area = of(&mut hideout, kind)?;
    if area["constructing"] != true {
        return Err(format!("area {kind} is not being built").into());
    }
    let due = area["completeTime"].as_u64().unwrap_or(0);
    let now = clock::now();
    if now < due {
        return Err(format!("area {kind} is built in {} more seconds", due - now).into());
    }
    complete(doc, templates, changes, area, &table)?;
    state::store(doc, hideout)?;
    Ok(())
}

/// The area's next level is built: its slots added, its bonuses applied.
fn complete(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    area: &mut Value,
    table: &Value,
) -> Outcome {
    let level = area["level"].as_u64().unwrap_or(0) + 1;
    area["level"] = json!(level);
    area["constructing"] = json!(false);
    area["completeTime"] = json!(0);
    let stage = &table["stages"][level.to_string()];
    // SPT's `AddMissingSlots`: one `{locationIndex}` for each slot the level has.
    let slots = stage["slots"].as_u64().unwrap_or(0).min(64) as usize;
    if !area["slots"].is_array() {
        area["slots"] = json!([]);
    }
    if let Some(list) = area["slots"].as_array_mut() {
        for i in list.len()..slots {
            list.push(json!({"locationIndex": i}));
        }
    }
    for bonus in stage["bonuses"].as_array().into_iter().flatten().take(MAX_REQUIREMENTS) {
        super::bonuses::apply(doc, templates, changes, bonus)?;
    }
    if let Some(container) = stage["container"].as_str().filter(|c| !c.is_empty()) {
        let kind = area["type"].as_u64().unwrap_or(0);
        let id = table["_id"].as_str().filter(|id| crate::ids::is_id(id)).ok_or("the area's table has no id")?;
        area_stash(doc, templates, changes, kind, id, container)?;
    }
    Ok(())
}

/// The container a built level gives (SPT's `AddContainerImprovementToProfile`: the cultist circle's
/// grid, the equipment presets' stand): a root item with the area's db id, listed in
/// `Inventory.hideoutAreaStashes`, its template the level's; told to the client in
/// `profileChanges.changedHideoutStashes`, as SPT does.
fn area_stash(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    kind: u64,
    id: &str,
    container: &str,
) -> Outcome {
    if templates.props(container).is_none() {
        return Err(format!("the area's container template {container} is not in the database").into());
    }
    let key = kind.to_string();
    let mut stash = crate::profile::inventory::item(doc, id)?.unwrap_or_else(|| json!({"_id": id}));
    stash["_tpl"] = json!(container);
    crate::profile::inventory::write(doc, templates, id, Some(stash))?;
    if !doc.object_or_absent(&["Inventory", "hideoutAreaStashes"])? {
        return Err("the profile's `hideoutAreaStashes` is malformed".into());
    }
    doc.set(&["Inventory", "hideoutAreaStashes", &key], json!(id))?;
    let mut told = serde_json::Map::new();
    told.insert(key, json!({"id": id, "tpl": container}));
    changes.answer("changedHideoutStashes", Value::Object(told));
    Ok(())
}

/// `HideoutImproveArea {areaType, items}`.
pub(crate) fn improve(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let kind = kind(action)?;
    let table = table(kind)?;
    let mut hideout = state::settle(doc)?;
    let level = level(&hideout, kind);
    if level == 0 {
        return Err(format!("area {kind} is not built").into());
    }
    let improvements = table["stages"][level.to_string()]["improvements"].as_array().cloned().unwrap_or_default();
    let Some(improvement) = improvements.first() else {
        return Err(format!("area {kind} has no improvement at level {level}").into());
    };
    let id = improvement["id"].as_str().ok_or("the improvement has no id")?.to_owned();
    if hideout["Improvements"].get(&id).is_some() {
        return Err(format!("improvement {id} is already under way or done").into());
    }
    let requirements = improvement["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    check(doc, &hideout, requirements)?;
    hand_over(doc, templates, changes, action, &price(requirements))?;
    let time = improvement["improvementTime"].as_u64().unwrap_or(0);
    if !hideout["Improvements"].is_object() {
        hideout["Improvements"] = json!({});
    }
    hideout["Improvements"][&id] = json!({"completed": time == 0, "improveCompleteTimestamp": clock::now() + time});
    changes.answer("improvements", hideout["Improvements"].clone());
    state::store(doc, hideout)?;
    Ok(())
}
