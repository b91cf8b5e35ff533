//! A player's mailbox: SPT's dialogues and their messages, kept in the profile document itself under
//! [`MAIL`] (the stored shape only; `profile::shape::spt` leaves it out of what the client reads).
//!
//! Why in the profile and not beside it: a message's attachments are taken into the stash by an item
//! action, and the message losing them and the stash gaining them must be one write. The store
//! compares and sets one document at a time, so both live in the one document a batch writes with
//! `doc_patch_if_version`; a letter sent by a batch (a flea purchase) is part of that batch's patch too.
//!
//! Layout, keyed so that sending, reading or taking one message touches only its own paths:
//! `_mail.<dialogue id>` = SPT's `Dialogue` without its messages (`_id`, `type`, `pinned`, `new`,
//! `attachmentsNew`, `Users`) plus `messages.<message id>` = SPT's `Message`. A dialogue's id is its
//! sender's (a trader's id, SPT's system sender, a player's profile id), as in SPT.
//!
//! Attachments are SPT's `MessageItems`: `{stash, data}`, the items with fresh ids, each top-level one
//! under the message's own `stash` id in slot `main`, the parts of each under it as they were.

use crate::clock;
use crate::ids;
use crate::profile::doc::Doc;
use modhost_sdk::Error;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The profile member holding the mailbox.
pub(crate) const MAIL: &str = "_mail";

/// SPT's `MessageType`s the game sends.
pub(crate) mod kind {
    /// A trader's message (a purchase, a trader's reply).
    pub(crate) const NPC_TRADER: u8 = 2;
    /// A flea market message (an offer sold or expired).
    pub(crate) const FLEAMARKET: u8 = 4;
    /// A system message.
    pub(crate) const SYSTEM: u8 = 7;
    /// Insured items coming back.
    pub(crate) const INSURANCE_RETURN: u8 = 8;
    /// A quest's reward.
    pub(crate) const QUEST_SUCCESS: u8 = 12;
    /// A message carrying items (a gift).
    pub(crate) const MESSAGE_WITH_ITEMS: u8 = 13;
}

/// SPT's system sender: the dialogue id of system messages.
pub(crate) const SYSTEM_SENDER: &str = "59e7125688a45068a6249071";

/// The most items one letter carries (a weapon with its parts, a few dozen insured items).
pub(crate) const MAX_LETTER_ITEMS: usize = 2_000;

/// A message to send.
pub(crate) struct Letter {
    /// The sender, and so the dialogue: a trader's id, [`SYSTEM_SENDER`], a profile id.
    pub(crate) from: String,
    /// SPT's `MessageType` (see [`kind`]).
    pub(crate) kind: u8,
    /// The text; empty when `template_id` names a locale string instead.
    pub(crate) text: String,
    /// A locale key the client shows in place of `text` (SPT's `templateId`).
    pub(crate) template_id: Option<String>,
    /// Attachments: items as a profile holds them (`_id`, `_tpl`, `parentId`, `slotId`, `upd`, …); those
    /// whose parent is not among them are the top-level ones. Ids are replaced by fresh ones.
    pub(crate) items: Vec<Value>,
    /// How long the attachments may be collected, in seconds (SPT's `maxStorageTime`); ignored with
    /// none.
    pub(crate) max_storage: u64,
    /// SPT's `systemData` (an insurance return's location, a flea sale's buyer and item), if any.
    pub(crate) system_data: Option<Value>,
}

/// Writes `letter` into the mailbox of the profile `doc` is (part of the pending patch: it lands when
/// the caller commits). Answers the message as stored, for the `new_message` notification the caller
/// pushes after the commit (`notify::message`).
pub(crate) fn send(doc: &mut Doc, letter: Letter) -> Result<Value, Error> {
    if letter.items.len() > MAX_LETTER_ITEMS {
        return Err(Error::TooLarge(format!("a letter carries at most {MAX_LETTER_ITEMS} items")));
    }
    let id = ids::new_id();
    let now = clock::now();
    let mut message = json!({
        "_id": id, "uid": letter.from, "type": letter.kind, "dt": now, "UtcDateTime": now,
        "text": letter.text, "hasRewards": false, "rewardCollected": false,
    });
    if let Some(template) = &letter.template_id {
        message["templateId"] = json!(template);
    }
    if let Some(data) = &letter.system_data {
        message["systemData"] = data.clone();
    }
    if !letter.items.is_empty() {
        let stash = ids::new_id();
        message["items"] = json!({ "stash": stash, "data": attachments(&letter.items, &stash) });
        message["hasRewards"] = json!(true);
        message["maxStorageTime"] = json!(letter.max_storage);
    }
    // The dialogue's header: made on its first letter; afterwards only its counters change (read one
    // by one, never the dialogue with all its messages).
    let from = letter.from.as_str();
    if doc.get(&[MAIL, from, "_id"])?.is_null() {
        let header =
            json!({ "_id": from, "type": letter.kind, "pinned": false, "new": 0, "attachmentsNew": 0, "Users": [] });
        doc.set(&[MAIL, from], header)?;
    }
    let unread = doc.get(&[MAIL, from, "new"])?.as_u64().unwrap_or(0);
    doc.set(&[MAIL, from, "new"], json!(unread + 1))?;
    if !letter.items.is_empty() {
        let waiting = doc.get(&[MAIL, from, "attachmentsNew"])?.as_u64().unwrap_or(0);
        doc.set(&[MAIL, from, "attachmentsNew"], json!(waiting + 1))?;
    }
    doc.set(&[MAIL, &letter.from, "messages", &id], message.clone())?;
    Ok(message)
}

/// The letter's items with fresh ids, parents first as given; a top-level item goes under `stash` in
/// slot `main` with no grid place.
fn attachments(items: &[Value], stash: &str) -> Vec<Value> {
    let given: HashMap<&str, String> =
        items.iter().filter_map(|i| i["_id"].as_str()).map(|old| (old, ids::new_id())).collect();
    items
        .iter()
        .map(|item| {
            let mut copy = item.clone();
            let old = item["_id"].as_str().unwrap_or_default();
            copy["_id"] = json!(given.get(old).cloned().unwrap_or_else(ids::new_id));
            match item["parentId"].as_str().and_then(|p| given.get(p)) {
                Some(parent) => copy["parentId"] = json!(parent),
                None => {
                    copy["parentId"] = json!(stash);
                    copy["slotId"] = json!("main");
                    if let Some(members) = copy.as_object_mut() {
                        members.shift_remove("location");
                    }
                }
            }
            copy
        })
        .collect()
}
