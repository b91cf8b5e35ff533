//! Area slots and power (SPT's `HideoutController.PutItemsInAreaSlots`, `TakeItemsFromAreaSlots`,
//! `ToggleArea`), checked where SPT trusts the client:
//!
//! - `HideoutPutItemsInAreaSlots {areaType, items: {"<slot>": {id}}}`: each item is the player's, a
//!   single loose item of what the area takes (fuel in the generator, a water filter in the water
//!   collector, air filters in air filtering, graphics cards in the bitcoin farm), into an empty slot the
//!   built level has. It leaves the inventory and sits in the slot; a fuel or filter without a
//!   `Resource` yet starts full (its template's `MaxResource`).
//! - `HideoutTakeItemsFromAreaSlots {areaType, slots: [n]}`: each slot's item, as time has left it
//!   (the fuel burnt so far), goes into the stash; no room for all of them: nothing moves.
//! - `HideoutToggleArea {areaType, enabled}`: a built area on or off; the generator only goes on with
//!   fuel in it.
//!
//! Every change is made to the hideout settled to now (`state.rs`), so what burnt before the change
//! burnt at the old rate.

use super::areas;
use super::simulate::{AIR_FILTERING, BITCOIN_FARM, GENERATOR, WATER_COLLECTOR};
use super::state;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Outcome, children, count, is_root, item, write};
use crate::templates::{Templates, tpl};
use serde_json::{Value, json};

/// SPT's `Fuel` category: every fuel the generator burns.
const FUEL_CATEGORY: &str = "5d650c3e815116009f6201d2";
/// SPT's templates of the filters and the graphics card.
const WATER_FILTER: &str = "5d1b385e86f774252167b98a";
const AIR_FILTER: &str = "590c595c86f7747884343ad7";
const GPU: &str = "57347ca924597744596b4e71";
/// The most slots one action names (the bitcoin farm's fifty at most).
const MAX_NAMED: usize = 64;

/// Whether area `kind` takes template `item_tpl` in its slots; the reason when it does not.
fn takes(templates: &mut Templates, kind: u64, item_tpl: &str) -> Result<(), String> {
    let fits = match kind {
        GENERATOR => templates.lineage(item_tpl).iter().any(|c| c == FUEL_CATEGORY),
        WATER_COLLECTOR => item_tpl == WATER_FILTER,
        AIR_FILTERING => item_tpl == AIR_FILTER,
        BITCOIN_FARM => item_tpl == GPU,
        _ => return Err(format!("area {kind} has no slots for items")),
    };
    if fits { Ok(()) } else { Err(format!("area {kind} does not take {item_tpl}")) }
}

/// `HideoutPutItemsInAreaSlots {areaType, items}`.
pub(crate) fn put_items(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let kind = areas::kind(action)?;
    let named = action["items"].as_object().ok_or("`items` must map slot numbers to items")?;
    if named.is_empty() || named.len() > MAX_NAMED {
        return Err(format!("`items` must name between 1 and {MAX_NAMED} slots").into());
    }
    let mut hideout = state::settle(doc)?;
    if areas::level(&hideout, kind) == 0 {
        return Err(format!("area {kind} is not built").into());
    }
    for (slot, what) in named {
        let at: usize = slot.parse().map_err(|_| format!("slot `{slot}` is not a slot number"))?;
        let id = what["id"].as_str().ok_or_else(|| format!("slot {at} names no item `id`"))?;
        let mut put = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
        if is_root(doc, id)? || !children(doc, id)?.is_empty() {
            return Err(format!("item {id} is a container or holds items; only a loose item goes in a slot").into());
        }
        if count(&put) != 1 {
            return Err(format!("item {id} is a stack of {}; one item goes in a slot", count(&put)).into());
        }
        let item_tpl = tpl(&put).to_owned();
        takes(templates, kind, &item_tpl)?;
        let area = areas::of(&mut hideout, kind)?;
        let slots = area["slots"].as_array_mut().ok_or_else(|| format!("area {kind} has no slots"))?;
        let slot = slots.get_mut(at).ok_or_else(|| format!("area {kind} has no slot {at}"))?;
        if slot["item"].as_array().is_some_and(|i| !i.is_empty()) {
            return Err(format!("slot {at} of area {kind} is taken").into());
        }
        let max = templates.props(&item_tpl).and_then(|p| p["MaxResource"].as_f64()).unwrap_or(0.0);
        if max > 0.0 && put["upd"]["Resource"]["Value"].as_f64().is_none() {
            put["upd"]["Resource"] = json!({"Value": max, "UnitsConsumed": 0});
        }
        let upd = if put["upd"].is_object() { put["upd"].clone() } else { json!({}) };
        *slot = json!({"locationIndex": at, "item": [{"_id": id, "_tpl": item_tpl, "upd": upd}]});
        write(doc, templates, id, None)?;
        changes.removed(id);
    }
    state::store(doc, hideout)?;
    Ok(())
}

/// `HideoutTakeItemsFromAreaSlots {areaType, slots}`.
pub(crate) fn take_items(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let kind = areas::kind(action)?;
    let named = action["slots"].as_array().ok_or("`slots` must list slot numbers")?;
    if named.is_empty() || named.len() > MAX_NAMED {
        return Err(format!("`slots` must name between 1 and {MAX_NAMED} slots").into());
    }
    let mut hideout = state::settle(doc)?;
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let mut grid = Grid::of(doc, templates, &stash, "hideout")?.ok_or("the stash has no grid")?;
    for at in named {
        let at = at.as_u64().ok_or("`slots` must list slot numbers")? as usize;
        let area = areas::of(&mut hideout, kind)?;
        let slot = area["slots"].get_mut(at).ok_or_else(|| format!("area {kind} has no slot {at}"))?;
        let Some(taken) = slot["item"].as_array().and_then(|i| i.first()).cloned() else {
            return Err(format!("slot {at} of area {kind} is empty").into());
        };
        if let Some(slot) = slot.as_object_mut() {
            slot.remove("item");
        }
        let (id, item_tpl) = (taken["_id"].as_str().unwrap_or_default().to_owned(), tpl(&taken).to_owned());
        if !crate::ids::is_id(&id) || item(doc, &id)?.is_some() {
            return Err(format!("the item in slot {at} has an id the profile cannot take back").into());
        }
        let (w, h) = templates.footprint(&item_tpl, false);
        let location =
            grid.place(doc, w, h)?.ok_or_else(|| format!("no room in the stash for the item in slot {at}"))?;
        let back = json!({"_id": id, "_tpl": item_tpl, "parentId": stash, "slotId": "hideout", "location": location,
                          "upd": taken["upd"]});
        write(doc, templates, &id, Some(back))?;
        changes.created(&id);
    }
    state::store(doc, hideout)?;
    Ok(())
}

/// `HideoutToggleArea {areaType, enabled}`.
pub(crate) fn toggle(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let kind = areas::kind(action)?;
    let on = action["enabled"].as_bool().ok_or("`enabled` must be true or false")?;
    let mut hideout = state::settle(doc)?;
    if areas::level(&hideout, kind) == 0 {
        return Err(format!("area {kind} is not built").into());
    }
    let area = areas::of(&mut hideout, kind)?;
    if on && kind == GENERATOR {
        let fuel = area["slots"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["item"][0]["upd"]["Resource"]["Value"].as_f64())
            .any(|v| v > 0.0);
        if !fuel {
            return Err("the generator has no fuel".into());
        }
    }
    area["active"] = json!(on);
    state::store(doc, hideout)?;
    Ok(())
}
