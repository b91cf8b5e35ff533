//! The inventory actions of `items/moving` that rearrange what a player already owns: `Move`, `Split`,
//! `Merge`, `Transfer`, `Remove`, `Fold`, `Toggle`, `Tag`, `Swap` and `ApplyInventoryChanges`.
//!
//! Every destination is checked by `inventory::check_place`: a grid or slot the parent's template has,
//! whose filters admit the item, inside the grid and free (a slot: empty).
//!
//! Each validates everything before it writes, so a refused action changes nothing; its error is the
//! reason the player sees in the batch's warnings. Counts are conserved exactly: a split, merge or
//! transfer moves units between stacks and never makes or loses one.

use crate::ids;
use crate::profile::doc::Doc;
use crate::profile::inventory::{
    Changes, Outcome, Place, Refused, check_place, children, count, is_root, item, set_count, subtree, write,
};
use crate::templates::{Templates, tpl};
use serde_json::{Value, json};

/// The item an action names in `field`: present in this profile, and not a root container (one of
/// the inventory's roots, or any item without a parent: a hideout area's container, listed in
/// `hideoutAreaStashes`). Answers its id and its current state.
fn owned(doc: &mut Doc, action: &Value, field: &str) -> Result<(String, Value), Refused> {
    let id = action[field].as_str().ok_or_else(|| format!("the action names no `{field}`"))?;
    let found = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if found.get("parentId").is_none() || is_root(doc, id)? {
        return Err(format!("item {id} is a root container").into());
    }
    Ok((id.to_owned(), found))
}

/// A positive whole number of units from `field`.
fn units(action: &Value, field: &str) -> Result<u64, String> {
    action[field].as_u64().filter(|n| *n >= 1).ok_or_else(|| format!("`{field}` must be a whole number of at least 1"))
}

/// Writes a destination `{id, container, location}` into an item; no location means none, and an item
/// in a slot keeps none (only a cartridge's index in a magazine's stack slot, a number, stays).
fn put(item: &mut Value, to: &Value, place: Place) {
    item["parentId"] = to["id"].clone();
    item["slotId"] = to["container"].clone();
    match &to["location"] {
        location if place == Place::Slot && !location.is_u64() => {
            if let Some(map) = item.as_object_mut() {
                map.remove("location");
            }
        }
        Value::Null => {
            if let Some(map) = item.as_object_mut() {
                map.remove("location");
            }
        }
        location => item["location"] = location.clone(),
    }
}

/// `upd.<field>`, made an object first if it was not one.
fn upd(item: &mut Value) -> &mut Value {
    if !item["upd"].is_object() {
        item["upd"] = json!({});
    }
    &mut item["upd"]
}

/// `Move {item, to: {id, container, location}}`.
pub(crate) fn move_item(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    if super::from_mail::named(action) {
        return super::from_mail::move_item(doc, action, templates, changes);
    }
    let (id, mut moved) = owned(doc, action, "item")?;
    let place = check_place(doc, templates, Some(&id), tpl(&moved), &action["to"])?;
    put(&mut moved, &action["to"], place);
    write(doc, templates, &id, Some(moved))?;
    changes.changed(&id);
    Ok(())
}

/// `Split {splitItem, newItem, container: {id, container, location}, count}`: `count` units of a stack
/// become a new stack (id `newItem` when the client chose a fresh one) at the destination.
pub(crate) fn split(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    if super::from_mail::named(action) {
        return super::from_mail::split(doc, action, templates, changes);
    }
    let (id, mut source) = owned(doc, action, "splitItem")?;
    let moved = units(action, "count")?;
    let have = count(&source);
    if moved >= have {
        return Err(format!("cannot split {moved} off a stack of {have}").into());
    }
    let new_id = match action["newItem"].as_str() {
        None => ids::new_id(),
        Some(fresh) if ids::is_id(fresh) && item(doc, fresh)?.is_none() => fresh.to_owned(),
        Some(taken) => return Err(format!("newItem {taken} is not a fresh 24-hex-digit id").into()),
    };
    let to = &action["container"];
    let place = check_place(doc, templates, None, tpl(&source), to)?;

    let mut new = json!({ "_id": new_id, "_tpl": tpl(&source) });
    new["upd"] = source["upd"].clone();
    put(&mut new, to, place);
    set_count(&mut new, moved);
    set_count(&mut source, have - moved);
    write(doc, templates, &id, Some(source))?;
    changes.changed(&id);
    write(doc, templates, &new_id, Some(new))?;
    changes.created(&new_id);
    Ok(())
}

/// A stack named by a `Merge` or `Transfer`: its id and state.
type Stack = (String, Value);

/// The source and target stacks of a `Merge` or `Transfer` (`item` into `with`): two different stacks
/// of one template, the source holding nothing inside it.
fn stacks(doc: &mut Doc, action: &Value) -> Result<(Stack, Stack), Refused> {
    let from = owned(doc, action, "item")?;
    let into = owned(doc, action, "with")?;
    if from.0 == into.0 {
        return Err("a stack cannot merge with itself".into());
    }
    if tpl(&from.1) != tpl(&into.1) {
        return Err(format!("a stack of {} cannot merge into one of {}", tpl(&from.1), tpl(&into.1)).into());
    }
    if !children(doc, &from.0)?.is_empty() {
        return Err(format!("item {} has items inside it", json!(from.0)).into());
    }
    Ok((from, into))
}

/// Moves `moved` units from stack `from` into stack `into`, within the template's `StackMaxSize`;
/// an emptied source is removed.
fn shift(
    doc: &mut Doc,
    ((from, mut source), (into, mut target)): (Stack, Stack),
    moved: u64,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let (have, holds) = (count(&source), count(&target));
    if moved > have {
        return Err(format!("cannot take {moved} from a stack of {have}").into());
    }
    let total = holds.checked_add(moved).ok_or("the stack would overflow")?;
    if let Some(max) = templates.stack_max(tpl(&target))
        && total > max
    {
        return Err(format!("the stack would hold {total}; a stack of {} holds at most {max}", tpl(&target)).into());
    }
    set_count(&mut target, total);
    write(doc, templates, &into, Some(target))?;
    changes.changed(&into);
    if moved == have {
        write(doc, templates, &from, None)?;
        changes.removed(&from);
    } else {
        set_count(&mut source, have - moved);
        write(doc, templates, &from, Some(source))?;
        changes.changed(&from);
    }
    Ok(())
}

/// `Merge {item, with}`: the whole of stack `item` joins stack `with`.
pub(crate) fn merge(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    if super::from_mail::named(action) {
        return super::from_mail::merge(doc, action, templates, changes);
    }
    let pair = stacks(doc, action)?;
    let moved = count(&pair.0.1);
    shift(doc, pair, moved, templates, changes)
}

/// `Transfer {item, with, count}`: `count` units of stack `item` join stack `with`.
pub(crate) fn transfer(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    if super::from_mail::named(action) {
        return super::from_mail::transfer(doc, action, templates, changes);
    }
    let pair = stacks(doc, action)?;
    shift(doc, pair, units(action, "count")?, templates, changes)
}

/// `Remove {item}`: the item and everything inside it (the contents first, so each container's
/// children map is empty, and goes, when the container does).
pub(crate) fn remove(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    if super::from_mail::named(action) {
        return super::from_mail::remove(doc, action, templates, changes);
    }
    let (id, _) = owned(doc, action, "item")?;
    let gone = subtree(doc, &id)?;
    for removed in gone.iter().rev() {
        write(doc, templates, removed, None)?;
    }
    for removed in &gone {
        changes.removed(removed);
    }
    Ok(())
}

/// A boolean `value`.
fn flag(action: &Value) -> Result<bool, String> {
    action["value"].as_bool().ok_or_else(|| "`value` must be true or false".to_owned())
}

/// `Fold {item, value}`: folds or unfolds an item whose template says it folds.
pub(crate) fn fold(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut folding) = owned(doc, action, "item")?;
    let folded = flag(action)?;
    let tpl = tpl(&folding).to_owned();
    if templates.props(&tpl).is_none_or(|p| p["Foldable"] != true) {
        return Err(format!("an item of {tpl} does not fold").into());
    }
    upd(&mut folding)["Foldable"] = json!({ "Folded": folded });
    write(doc, templates, &id, Some(folding))?;
    changes.changed(&id);
    Ok(())
}

/// `Toggle {item, value}`: switches a device on or off.
pub(crate) fn toggle(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut device) = owned(doc, action, "item")?;
    let on = flag(action)?;
    upd(&mut device)["Togglable"] = json!({ "On": on });
    write(doc, templates, &id, Some(device))?;
    changes.changed(&id);
    Ok(())
}

/// The longest tag name, in characters, as the client's own field allows.
const TAG_MAX_CHARS: usize = 32;

/// `Tag {item, TagName, TagColor}`: names and colours a container.
pub(crate) fn tag(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut tagged) = owned(doc, action, "item")?;
    let name = action["TagName"].as_str().ok_or("`TagName` must be a string")?;
    if name.chars().count() > TAG_MAX_CHARS {
        return Err(format!("a tag name has at most {TAG_MAX_CHARS} characters").into());
    }
    let color = action["TagColor"].as_u64().filter(|c| *c <= 255).ok_or("`TagColor` must be a number from 0 to 255")?;
    upd(&mut tagged)["Tag"] = json!({ "Name": name, "Color": color });
    write(doc, templates, &id, Some(tagged))?;
    changes.changed(&id);
    Ok(())
}

/// Takes items out of their places for a moment, so several can trade places: each is written
/// without a parent (its index entries go), and a later `check_place` sees its old place free. Every
/// one is written back, placed, before the action ends, or the action is refused and undone.
fn lift(doc: &mut Doc, templates: &mut Templates, lifted: &[(String, Value)]) -> Outcome {
    for (id, state) in lifted {
        let mut loose = state.clone();
        if let Some(map) = loose.as_object_mut() {
            map.remove("parentId");
            map.remove("slotId");
            map.remove("location");
        }
        write(doc, templates, id, Some(loose))?;
    }
    Ok(())
}

/// Puts lifted items at their destinations, one after the other, each checked against the places
/// the ones before took.
fn settle(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    moves: Vec<(String, Value, &Value)>,
) -> Outcome {
    for (id, mut state, to) in moves {
        let place = check_place(doc, templates, Some(&id), tpl(&state), to)?;
        put(&mut state, to, place);
        write(doc, templates, &id, Some(state))?;
        changes.changed(&id);
    }
    Ok(())
}

/// `Swap {item, to, item2, to2}`: two items trade places at once (a reload from the rig, a quick swap
/// on the character screen); each destination is checked as a `Move`'s is, with both items out of
/// their old places.
pub(crate) fn swap(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let first = owned(doc, action, "item")?;
    let second = owned(doc, action, "item2")?;
    if first.0 == second.0 {
        return Err("an item cannot swap with itself".into());
    }
    let lifted = [first.clone(), second.clone()];
    lift(doc, templates, &lifted)?;
    settle(doc, templates, changes, vec![(first.0, first.1, &action["to"]), (second.0, second.1, &action["to2"])])
}

/// The most items one `ApplyInventoryChanges` rearranges (the client's sort of a whole stash sends a
/// few hundred).
const MAX_REARRANGED: usize = 2_048;

/// `ApplyInventoryChanges {changedItems: [{_id, parentId, slotId, location}]}` (the client's "sort"):
/// items the player owns, each at most once, take new places. Only the place is taken from the
/// request (never a template, count or id), no item is created, and every destination is checked as a
/// `Move`'s is, with all the named items out of their old places first.
pub(crate) fn apply_changes(
    doc: &mut Doc,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let listed = action["changedItems"].as_array().ok_or("`changedItems` must be a list")?;
    if listed.len() > MAX_REARRANGED {
        return Err(format!("one rearrangement moves at most {MAX_REARRANGED} items").into());
    }
    let mut lifted: Vec<(String, Value)> = Vec::with_capacity(listed.len());
    let mut destinations = Vec::with_capacity(listed.len());
    for change in listed {
        let (id, state) = owned(doc, change, "_id")?;
        if lifted.iter().any(|(seen, _)| *seen == id) {
            return Err(format!("item {id} is named twice").into());
        }
        destinations
            .push(json!({"id": change["parentId"], "container": change["slotId"], "location": change["location"]}));
        lifted.push((id, state));
    }
    lift(doc, templates, &lifted)?;
    let moves = lifted.into_iter().zip(destinations.iter()).map(|((id, state), to)| (id, state, to)).collect();
    settle(doc, templates, changes, moves)
}
