//! The inventory actions of `items/moving` that rearrange what a player already owns: `Move`, `Split`,
//! `Merge`, `Transfer`, `Remove`, `Fold`, `Toggle` and `Tag`.
//!
//! Each validates everything before it writes, so a refused action changes nothing; its error is the
//! reason the player sees in the batch's warnings. Counts are conserved exactly: a split, merge or
//! transfer moves units between stacks and never makes or loses one.

use crate::inventory::{
    Changes, Templates, check_place, count, find, is_root, items, items_mut, set_count, subtree, tpl,
};
use crate::profile;
use serde_json::{Value, json};

/// What every action answers: nothing, or why it was refused.
pub(crate) type Outcome = Result<(), String>;

/// The item an action names in `field`: present in this profile, and not a root container.
fn owned(profile: &Value, action: &Value, field: &str) -> Result<usize, String> {
    let id = action[field].as_str().ok_or_else(|| format!("the action names no `{field}`"))?;
    let at = find(items(profile), id).ok_or_else(|| format!("item {id} is not in this profile"))?;
    if is_root(profile, id) {
        return Err(format!("item {id} is a root container"));
    }
    Ok(at)
}

/// A positive whole number of units from `field`.
fn units(action: &Value, field: &str) -> Result<u64, String> {
    action[field].as_u64().filter(|n| *n >= 1).ok_or_else(|| format!("`{field}` must be a whole number of at least 1"))
}

/// Writes a destination `{id, container, location}` into an item; no location means none.
fn put(item: &mut Value, to: &Value) {
    item["parentId"] = to["id"].clone();
    item["slotId"] = to["container"].clone();
    match &to["location"] {
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
pub(crate) fn move_item(
    profile: &mut Value,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let at = owned(profile, action, "item")?;
    let all = items(profile);
    check_place(all, templates, all[at]["_id"].as_str(), tpl(&all[at]), &action["to"])?;
    let item = &mut items_mut(profile)?[at];
    put(item, &action["to"]);
    changes.changed(item["_id"].as_str().unwrap_or_default());
    Ok(())
}

/// `Split {splitItem, newItem, container: {id, container, location}, count}`: `count` units of a stack
/// become a new stack (id `newItem` when the client chose a fresh one) at the destination.
pub(crate) fn split(profile: &mut Value, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let at = owned(profile, action, "splitItem")?;
    let moved = units(action, "count")?;
    let all = items(profile);
    let have = count(&all[at]);
    if moved >= have {
        return Err(format!("cannot split {moved} off a stack of {have}"));
    }
    let new_id = match action["newItem"].as_str() {
        None => profile::new_id(),
        Some(id) if profile::is_id(id) && find(all, id).is_none() => id.to_owned(),
        Some(id) => return Err(format!("newItem {id} is not a fresh 24-hex-digit id")),
    };
    let to = &action["container"];
    check_place(all, templates, None, tpl(&all[at]), to)?;

    let mut new = json!({ "_id": new_id, "_tpl": tpl(&all[at]) });
    new["upd"] = all[at]["upd"].clone();
    put(&mut new, to);
    set_count(&mut new, moved);
    let list = items_mut(profile)?;
    set_count(&mut list[at], have - moved);
    changes.changed(list[at]["_id"].as_str().unwrap_or_default());
    list.push(new);
    changes.created(&new_id);
    Ok(())
}

/// The source and target stacks of a `Merge` or `Transfer` (`item` into `with`): two different stacks
/// of one template, the source holding nothing inside it.
fn stacks(profile: &Value, action: &Value) -> Result<(usize, usize), String> {
    let from = owned(profile, action, "item")?;
    let into = owned(profile, action, "with")?;
    let all = items(profile);
    if from == into {
        return Err("a stack cannot merge with itself".to_owned());
    }
    if tpl(&all[from]) != tpl(&all[into]) {
        return Err(format!("a stack of {} cannot merge into one of {}", tpl(&all[from]), tpl(&all[into])));
    }
    if subtree(all, from).len() > 1 {
        return Err(format!("item {} has items inside it", all[from]["_id"]));
    }
    Ok((from, into))
}

/// Moves `moved` units from stack `from` into stack `into`, within the template's `StackMaxSize`;
/// an emptied source is removed.
fn shift(
    profile: &mut Value,
    (from, into): (usize, usize),
    moved: u64,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let all = items(profile);
    let (have, target) = (count(&all[from]), count(&all[into]));
    if moved > have {
        return Err(format!("cannot take {moved} from a stack of {have}"));
    }
    let total = target.checked_add(moved).ok_or("the stack would overflow")?;
    if let Some(max) = templates.stack_max(tpl(&all[into]))
        && total > max
    {
        return Err(format!("the stack would hold {total}; a stack of {} holds at most {max}", tpl(&all[into])));
    }
    let list = items_mut(profile)?;
    set_count(&mut list[into], total);
    changes.changed(list[into]["_id"].as_str().unwrap_or_default());
    if moved == have {
        let gone = list.remove(from);
        changes.removed(gone["_id"].as_str().unwrap_or_default());
    } else {
        set_count(&mut list[from], have - moved);
        changes.changed(list[from]["_id"].as_str().unwrap_or_default());
    }
    Ok(())
}

/// `Merge {item, with}`: the whole of stack `item` joins stack `with`.
pub(crate) fn merge(profile: &mut Value, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let pair = stacks(profile, action)?;
    let moved = count(&items(profile)[pair.0]);
    shift(profile, pair, moved, templates, changes)
}

/// `Transfer {item, with, count}`: `count` units of stack `item` join stack `with`.
pub(crate) fn transfer(
    profile: &mut Value,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let pair = stacks(profile, action)?;
    shift(profile, pair, units(action, "count")?, templates, changes)
}

/// `Remove {item}`: the item and everything inside it.
pub(crate) fn remove(profile: &mut Value, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let at = owned(profile, action, "item")?;
    let all = items(profile);
    let gone: Vec<Value> = subtree(all, at).into_iter().map(|i| all[i]["_id"].clone()).collect();
    items_mut(profile)?.retain(|i| !gone.contains(&i["_id"]));
    for id in &gone {
        changes.removed(id.as_str().unwrap_or_default());
    }
    Ok(())
}

/// A boolean `value`.
fn flag(action: &Value) -> Result<bool, String> {
    action["value"].as_bool().ok_or_else(|| "`value` must be true or false".to_owned())
}

/// `Fold {item, value}`: folds or unfolds an item whose template says it folds.
pub(crate) fn fold(profile: &mut Value, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let at = owned(profile, action, "item")?;
    let folded = flag(action)?;
    let tpl = tpl(&items(profile)[at]).to_owned();
    if templates.props(&tpl).is_none_or(|p| p["Foldable"] != true) {
        return Err(format!("an item of {tpl} does not fold"));
    }
    let item = &mut items_mut(profile)?[at];
    upd(item)["Foldable"] = json!({ "Folded": folded });
    changes.changed(item["_id"].as_str().unwrap_or_default());
    Ok(())
}

/// `Toggle {item, value}`: switches a device on or off.
pub(crate) fn toggle(profile: &mut Value, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let at = owned(profile, action, "item")?;
    let on = flag(action)?;
    let item = &mut items_mut(profile)?[at];
    upd(item)["Togglable"] = json!({ "On": on });
    changes.changed(item["_id"].as_str().unwrap_or_default());
    Ok(())
}

/// The longest tag name, in characters, as the client's own field allows.
const TAG_MAX_CHARS: usize = 32;

/// `Tag {item, TagName, TagColor}`: names and colours a container.
pub(crate) fn tag(profile: &mut Value, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let at = owned(profile, action, "item")?;
    let name = action["TagName"].as_str().ok_or("`TagName` must be a string")?;
    if name.chars().count() > TAG_MAX_CHARS {
        return Err(format!("a tag name has at most {TAG_MAX_CHARS} characters"));
    }
    let color = action["TagColor"].as_u64().filter(|c| *c <= 255).ok_or("`TagColor` must be a number from 0 to 255")?;
    let item = &mut items_mut(profile)?[at];
    upd(item)["Tag"] = json!({ "Name": name, "Color": color });
    changes.changed(item["_id"].as_str().unwrap_or_default());
    Ok(())
}
