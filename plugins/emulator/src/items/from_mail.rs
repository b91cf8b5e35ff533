//! Taking a message's attachments (SPT's `fromOwner: {id: <message id>, type: "Mail"}` on an inventory
//! action; `InventoryHelper.GetOwnerInventoryItems`, `DialogueHelper.GetMessageItemContents`,
//! `RemoveItemAndChildrenFromMailRewards`): `Move` (an attachment with its parts into a place),
//! `Split` (part of an attachment's stack into a place), `Merge` and `Transfer` (all or part of it onto
//! a stack the player owns), and `Remove`/`Discard` (dropping it from the message).
//!
//! `actions.rs` hands an action here when it names the mail as its owner. Each is checked whole before
//! it writes: the message is in this player's mailbox, its attachments have not expired
//! (`mailbox::expired`), the item is a top-level attachment of that message (never another message's,
//! never one already taken), none of the ids it brings is already in the profile, and the place it goes
//! is free (`check_place`) or the stack it joins is the player's, of its template, within its stack
//! size. Then the items enter the inventory and leave the message in the same patch (a message left
//! with none is collected), so an attachment is taken once and units are neither made nor lost.

use crate::clock;
use crate::ids;
use crate::mail::mailbox;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, check_place, count, is_root, item, set_count, write};
use crate::templates::{Templates, tpl};
use serde_json::{Value, json};

/// Does `action` take from a message?
pub(super) fn named(action: &Value) -> bool {
    action["fromOwner"]["type"].as_str().is_some_and(|t| t.eq_ignore_ascii_case("mail"))
}

/// A top-level attachment named by an action, and the message it is in.
struct Attachment {
    dialogue: String,
    message_id: String,
    message: Value,
    /// The message's attachments now.
    items: Vec<Value>,
    /// Where the named item and its parts are in `items` (the item first).
    subtree: Vec<usize>,
}

impl Attachment {
    fn root(&self) -> &Value {
        &self.items[self.subtree[0]]
    }

    /// The attachments left when `taken` (indexes into `items`) are gone.
    fn without(&self, taken: &[usize]) -> Vec<Value> {
        self.items.iter().enumerate().filter(|(i, _)| !taken.contains(i)).map(|(_, item)| item.clone()).collect()
    }
}

/// The attachment `action[field]` names, checked: its message is in this mailbox and not expired, it
/// is one of its top-level items, and none of its ids is in the profile.
fn attachment(doc: &mut Doc, action: &Value, field: &str) -> Result<Attachment, Refused> {
    let message_id = action["fromOwner"]["id"].as_str().ok_or("the action names no message in `fromOwner.id`")?;
    let id = action[field].as_str().ok_or_else(|| format!("the action names no `{field}`"))?;
    let Some((dialogue, message)) = mailbox::message(doc, message_id)? else {
        return Err(format!("message {} is not in this player's mail", json!(message_id)).into());
    };
    let now = clock::now();
    if mailbox::expired(&message, now) {
        return Err(format!("the attachments of message {message_id} have expired").into());
    }
    let items: Vec<Value> = mailbox::live_items(&message, now).to_vec();
    let stash = message["items"]["stash"].as_str().unwrap_or_default();
    let Some(at) = items.iter().position(|i| i["_id"] == id) else {
        return Err(format!("item {} is not an attachment of message {message_id}", json!(id)).into());
    };
    if items[at]["parentId"] != stash {
        return Err(format!("item {id} is a part of another attachment; take that one").into());
    }
    // The item and its parts, parents first; bounded by the letter's size.
    let mut subtree = vec![at];
    let mut next = 0;
    while next < subtree.len() && subtree.len() <= items.len() {
        let parent = items[subtree[next]]["_id"].clone();
        let children: Vec<usize> =
            (0..items.len()).filter(|i| !subtree.contains(i) && items[*i]["parentId"] == parent).collect();
        subtree.extend(children);
        next += 1;
    }
    for &i in &subtree {
        let taken = items[i]["_id"].as_str().unwrap_or_default();
        if !ids::is_id(taken) || item(doc, taken)?.is_some() {
            return Err(format!("item {} of message {message_id} is already in the profile", json!(taken)).into());
        }
    }
    Ok(Attachment { dialogue, message_id: message_id.to_owned(), message, items, subtree })
}

/// The message keeps `left`.
fn keep(doc: &mut Doc, from: &Attachment, left: Vec<Value>) -> Outcome {
    mailbox::set_items(doc, &from.dialogue, &from.message_id, from.message.clone(), left)?;
    Ok(())
}

/// A positive whole number of units from `field`.
fn units(action: &Value, field: &str) -> Result<u64, String> {
    action[field].as_u64().filter(|n| *n >= 1).ok_or_else(|| format!("`{field}` must be a whole number of at least 1"))
}

/// `item` placed at `to` (`{id, container, location}`).
fn placed(mut item: Value, to: &Value) -> Value {
    item["parentId"] = to["id"].clone();
    item["slotId"] = to["container"].clone();
    match &to["location"] {
        Value::Null => {
            if let Some(members) = item.as_object_mut() {
                members.shift_remove("location");
            }
        }
        location => item["location"] = location.clone(),
    }
    item
}

/// `Move {item, to, fromOwner}`: the attachment and its parts into the player's inventory.
pub(super) fn move_item(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let from = attachment(doc, action, "item")?;
    check_place(doc, templates, None, tpl(from.root()), &action["to"])?;
    for (n, &i) in from.subtree.iter().enumerate() {
        let taken = &from.items[i];
        let id = taken["_id"].as_str().unwrap_or_default().to_owned();
        let entering = if n == 0 { placed(taken.clone(), &action["to"]) } else { taken.clone() };
        write(doc, templates, &id, Some(entering))?;
        changes.created(&id);
    }
    let left = from.without(&from.subtree);
    keep(doc, &from, left)
}

/// `Split {splitItem, newItem, container, count, fromOwner}`: `count` units of an attachment's stack
/// become a new stack at the destination; all of them take the attachment.
pub(super) fn split(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let from = attachment(doc, action, "splitItem")?;
    if from.subtree.len() > 1 {
        return Err("an attachment with parts is taken whole, with Move".into());
    }
    let moved = units(action, "count")?;
    let have = count(from.root());
    if moved > have {
        return Err(format!("cannot take {moved} from an attachment of {have}").into());
    }
    let new_id = match action["newItem"].as_str() {
        None => ids::new_id(),
        Some(fresh)
            if ids::is_id(fresh) && item(doc, fresh)?.is_none() && !from.items.iter().any(|i| i["_id"] == fresh) =>
        {
            fresh.to_owned()
        }
        Some(taken) => return Err(format!("newItem {taken} is not a fresh 24-hex-digit id").into()),
    };
    let to = &action["container"];
    check_place(doc, templates, None, tpl(from.root()), to)?;
    let mut new = json!({ "_id": new_id, "_tpl": tpl(from.root()), "upd": from.root()["upd"].clone() });
    new = placed(new, to);
    set_count(&mut new, moved);
    write(doc, templates, &new_id, Some(new))?;
    changes.created(&new_id);
    let left = if moved == have {
        from.without(&from.subtree)
    } else {
        let mut left = from.items.clone();
        set_count(&mut left[from.subtree[0]], have - moved);
        left
    };
    keep(doc, &from, left)
}

/// `Merge {item, with, fromOwner}` (all of an attachment's stack) and `Transfer {…, count}` (part of
/// it) onto stack `with` the player owns.
fn onto(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes, whole: bool) -> Outcome {
    let from = attachment(doc, action, "item")?;
    if from.subtree.len() > 1 {
        return Err("an attachment with parts cannot join a stack".into());
    }
    let into = action["with"].as_str().ok_or("the action names no `with`")?;
    let mut target = item(doc, into)?.ok_or_else(|| format!("item {into} is not in this profile"))?;
    if is_root(doc, into)? {
        return Err(format!("item {into} is a root container").into());
    }
    let stack_tpl = tpl(from.root()).to_owned();
    if tpl(&target) != stack_tpl {
        return Err(format!("a stack of {stack_tpl} cannot merge into one of {}", tpl(&target)).into());
    }
    let have = count(from.root());
    let moved = if whole { have } else { units(action, "count")? };
    if moved > have {
        return Err(format!("cannot take {moved} from an attachment of {have}").into());
    }
    let total = count(&target).checked_add(moved).ok_or("the stack would overflow")?;
    if let Some(max) = templates.stack_max(&stack_tpl)
        && total > max
    {
        return Err(format!("the stack would hold {total}; a stack of {stack_tpl} holds at most {max}").into());
    }
    set_count(&mut target, total);
    write(doc, templates, into, Some(target))?;
    changes.changed(into);
    let left = if moved == have {
        from.without(&from.subtree)
    } else {
        let mut left = from.items.clone();
        set_count(&mut left[from.subtree[0]], have - moved);
        left
    };
    keep(doc, &from, left)
}

/// `Merge {item, with, fromOwner}`.
pub(super) fn merge(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    onto(doc, action, templates, changes, true)
}

/// `Transfer {item, with, count, fromOwner}`.
pub(super) fn transfer(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    onto(doc, action, templates, changes, false)
}

/// `Remove` / `Discard {item, fromOwner}`: the attachment and its parts leave the message, and nothing
/// enters the inventory.
pub(super) fn remove(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let from = attachment(doc, action, "item")?;
    let left = from.without(&from.subtree);
    keep(doc, &from, left)
}
