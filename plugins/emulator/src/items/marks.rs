//! The marks a player puts on what it owns, kept beside the items: `Bind` and `Unbind` (the quick
//! slots at the bottom of the screen, `Inventory.fastPanel`), `SetFavoriteItems`
//! (`Inventory.favoriteItems`) and `PinLock` (`upd.PinLockState`).
//!
//! SPT writes whatever the client sends here. Each mark names an item, so each is checked to be the
//! player's own (a quick slot bound to another player's item, or a favourite that does not exist,
//! would be shown by the client as a broken entry), and the lists are bounded.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, is_root, item, write};
use crate::templates::Templates;
use serde_json::{Map, Value, json};

/// The client's quick slots are the keys 4 to 0 and a few more: far fewer than this.
const MAX_QUICK_SLOTS: usize = 32;
/// The longest quick-slot name (the client's are `Item4`…`Item0`, or a digit).
const MAX_SLOT_NAME: usize = 16;
/// The most favourites (the client shows a row of a handful).
const MAX_FAVORITES: usize = 64;

/// An item of this profile, not a root container, named by `field`.
fn own(doc: &mut Doc, action: &Value, field: &str) -> Result<(String, Value), Refused> {
    let id = action[field].as_str().ok_or_else(|| format!("the action names no `{field}`"))?;
    let found = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if is_root(doc, id)? {
        return Err(format!("item {id} is a root container").into());
    }
    Ok((id.to_owned(), found))
}

/// A quick slot's name from `index` (SPT sends a string to `Bind`, a number to `Unbind`).
fn slot_name(action: &Value) -> Result<String, String> {
    let name = match &action["index"] {
        Value::String(name) => name.clone(),
        Value::Number(n) if n.is_u64() => n.to_string(),
        _ => return Err("`index` must name a quick slot".into()),
    };
    if name.is_empty() || name.len() > MAX_SLOT_NAME || !name.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(format!("`index` must be 1 to {MAX_SLOT_NAME} letters or digits"));
    }
    Ok(name)
}

/// The profile's quick slots.
fn panel(doc: &mut Doc) -> Result<Map<String, Value>, Refused> {
    match doc.get(&["Inventory", "fastPanel"])? {
        Value::Object(slots) => Ok(slots),
        Value::Null => Ok(Map::new()),
        _ => Err("the profile's `Inventory.fastPanel` is malformed".into()),
    }
}

/// `Bind {item, index}`: quick slot `index` holds `item` (replacing what it held).
pub(crate) fn bind(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let (id, _) = own(doc, action, "item")?;
    let name = slot_name(action)?;
    let mut slots = panel(doc)?;
    // One item sits in one quick slot: binding it again moves it.
    slots.retain(|_, bound| bound != id.as_str());
    if !slots.contains_key(&name) && slots.len() >= MAX_QUICK_SLOTS {
        return Err(format!("a profile has at most {MAX_QUICK_SLOTS} quick slots").into());
    }
    slots.insert(name, json!(id));
    doc.set(&["Inventory", "fastPanel"], Value::Object(slots))?;
    Ok(())
}

/// `Unbind {item, index}`: quick slot `index` holds nothing; it must hold `item` now.
pub(crate) fn unbind(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let name = slot_name(action)?;
    let id = action["item"].as_str().ok_or("the action names no `item`")?;
    let mut slots = panel(doc)?;
    if slots.get(&name).and_then(Value::as_str) != Some(id) {
        return Err(format!("quick slot {name} does not hold item {id}").into());
    }
    slots.shift_remove(&name);
    doc.set(&["Inventory", "fastPanel"], Value::Object(slots))?;
    Ok(())
}

/// `SetFavoriteItems {items, timestamp}`: the whole list of favourites, each an item of the player's,
/// once.
pub(crate) fn favorites(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let listed = action["items"].as_array().ok_or("`items` must be a list of item ids")?;
    if listed.len() > MAX_FAVORITES {
        return Err(format!("a profile has at most {MAX_FAVORITES} favourite items").into());
    }
    let mut ids: Vec<Value> = Vec::with_capacity(listed.len());
    for named in listed {
        let (id, _) = own(doc, &json!({ "item": named }), "item")?;
        if ids.iter().any(|seen| *seen == id.as_str()) {
            return Err(format!("item {id} is named twice").into());
        }
        ids.push(json!(id));
    }
    doc.set(&["Inventory", "favoriteItems"], Value::Array(ids))?;
    Ok(())
}

/// SPT's `PinLockState` names.
const PIN_LOCK_STATES: [&str; 3] = ["Free", "Pinned", "Locked"];

/// `PinLock {Item, State}`: pins or locks an item in its place, or frees it.
pub(crate) fn pin_lock(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut pinned) = own(doc, action, "Item")?;
    let state = action["State"]
        .as_str()
        .filter(|s| PIN_LOCK_STATES.contains(s))
        .ok_or("`State` must be Free, Pinned or Locked")?;
    if !pinned["upd"].is_object() {
        pinned["upd"] = json!({});
    }
    pinned["upd"]["PinLockState"] = json!(state);
    write(doc, templates, &id, Some(pinned))?;
    changes.changed(&id);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_slot_names_are_short_letters_or_digits() {
        assert_eq!(slot_name(&json!({"index": "Item4"})).unwrap(), "Item4");
        assert_eq!(slot_name(&json!({"index": 7})).unwrap(), "7", "Unbind sends a number");
        for bad in [json!(""), json!("x".repeat(17)), json!("a.b"), json!(-1), json!(null), json!(1.5)] {
            assert!(slot_name(&json!({"index": bad})).is_err(), "{bad}");
        }
    }
}
