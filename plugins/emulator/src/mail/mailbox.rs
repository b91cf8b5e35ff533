//! A player's mailbox: SPT's dialogues and their messages, kept in the profile document itself under
//! [`MAIL`] (the stored shape only; `profile::shape::spt` leaves it out of what the client reads).
//!
//! Why in the profile and not beside it: a message's attachments are taken into the stash by an item
//! action, and the message losing them and the stash gaining them must be one write. The store
//! compares and sets one document at a time, so both live in the one document a batch writes with
//! `doc_patch_if_version`; a letter sent by a batch (a flea purchase) is part of that batch's patch too.
//!
//! Layout, keyed so that sending, reading or taking one message touches only its own paths:
//! - `_mail.dialogues.<dialogue id>`: SPT's `Dialogue` without its messages (`_id`, `type`, `pinned`,
//!   `new`, `attachmentsNew`, `Users`) plus `last`, the preview of its newest message, so the dialogue
//!   list reads the headers and never a message. A dialogue's id is its sender's (a trader's id, SPT's
//!   system sender, a chat bot's id), as in SPT.
//! - `_mail.messages.<dialogue id>.<message id>`: SPT's `Message`.
//! - `_mail.holds.<message id>`: the dialogue holding it (an item action names only the message).
//! - `_mail.pending.<id>`: a letter written now to arrive later (`due`, game seconds): an insurance
//!   return. It is delivered by a timer ([`schedule`]) and, whichever comes first, when the mail is
//!   next read after it is due ([`deliver`] removes it in the same patch that sends it, so never twice).
//!
//! Attachments are SPT's `MessageItems`: `{stash, data}`, the items with fresh ids, each top-level one
//! under the message's own `stash` id in slot `main`, the parts of each under it as they were. They
//! can be taken until `dt + maxStorageTime` ([`expired`]), computed when read: nothing scans the mail.

use crate::clock;
use crate::events;
use crate::ids;
use crate::notify;
use crate::profile::doc::Doc;
use modhost_sdk::{Error, db, log, timers};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The profile member holding the mailbox.
pub(crate) use crate::profile::shape::MAIL;
/// Its parts (see the module doc).
pub(crate) const DIALOGUES: &str = "dialogues";
pub(crate) const MESSAGES: &str = "messages";
pub(crate) const HOLDS: &str = "holds";
const PENDING: &str = "pending";

/// SPT's `MessageType`s the game sends.
pub(crate) mod kind {
    /// A player's (or a chat bot's) message.
    pub(crate) const USER_MESSAGE: u8 = 1;
    /// A trader's message (a purchase, a trader's reply).
    pub(crate) const NPC_TRADER: u8 = 2;
    /// A flea market message (an offer sold or expired).
    pub(crate) const FLEAMARKET: u8 = 4;
    /// A system message.
    pub(crate) const SYSTEM: u8 = 7;
    /// Insured items coming back.
    pub(crate) const INSURANCE_RETURN: u8 = 8;
    /// A quest's reward.
    #[expect(dead_code, reason = "quest rewards still go straight to the stash (`items/quests.rs`)")]
    pub(crate) const QUEST_SUCCESS: u8 = 12;
    /// A message carrying items (a gift).
    pub(crate) const MESSAGE_WITH_ITEMS: u8 = 13;
}

/// SPT's system sender: the dialogue id of system messages.
pub(crate) const SYSTEM_SENDER: &str = "59e7125688a45068a6249071";

/// The most messages one dialogue keeps. A trader writes a letter per purchase, so a dialogue grows
/// for as long as the player plays; past this, the oldest messages whose attachments are taken or
/// expired go, down to three quarters of it in one pass (so the pass, which reads the dialogue's
/// messages, runs once every quarter of this many letters, not on each). A message whose attachments
/// can still be taken is never dropped: those are bounded by their storage time.
pub(crate) const MAX_DIALOGUE_MESSAGES: u64 = 1000;

/// The most items one letter carries (a weapon with its parts, a few dozen insured items).
pub(crate) const MAX_LETTER_ITEMS: usize = 2_000;

/// SPT's default time to collect attachments (`MailSendService`: 172800 s, two days).
pub(crate) const DEFAULT_STORAGE: u64 = 172_800;

/// The timer that delivers a pending letter (`mail/mod.rs` handles it).
pub(crate) const DELIVERY_TIMER: &str = "mail.deliver";

/// A message to send.
#[derive(Serialize, Deserialize, Clone)]
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

/// The dialogue type of a sender, as SPT's `MailSendService.GetDialog` makes it: the system's, a
/// trader's, else the first letter's own type (a chat bot's user messages).
fn dialogue_kind(from: &str, letter_kind: u8) -> u8 {
    if from == SYSTEM_SENDER {
        kind::SYSTEM
    } else if ids::is_id(from) && db::exists(&db::path(&["traders", from, "base"])) {
        kind::NPC_TRADER
    } else {
        letter_kind
    }
}

/// Writes `letter` into the mailbox of the profile `doc` is (part of the pending patch: it lands when
/// the caller commits). Answers the message as stored, for the `new_message` notification the caller
/// pushes after the commit ([`announce`]).
pub(crate) fn send(doc: &mut Doc, letter: Letter) -> Result<Value, Error> {
    if letter.items.len() > MAX_LETTER_ITEMS {
        return Err(Error::TooLarge(format!("a letter carries at most {MAX_LETTER_ITEMS} items")));
    }
    let id = ids::new_id();
    let now = clock::now();
    let text = if letter.template_id.is_some() { String::new() } else { letter.text.clone() };
    let mut message = json!({
        "_id": id, "uid": letter.from, "type": letter.kind, "dt": now, "UtcDateTime": now,
        "text": text, "hasRewards": false, "rewardCollected": false,
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
    // The dialogue's header: made on its first letter; afterwards only its counters and preview change.
    let from = letter.from.as_str();
    let mut header = doc.get(&[MAIL, DIALOGUES, from])?;
    if !header.is_object() {
        header = json!({ "_id": from, "type": dialogue_kind(from, letter.kind), "pinned": false, "new": 0,
                         "attachmentsNew": 0, "Users": null });
    }
    header["new"] = json!(header["new"].as_u64().unwrap_or(0) + 1);
    if !letter.items.is_empty() {
        header["attachmentsNew"] = json!(header["attachmentsNew"].as_u64().unwrap_or(0) + 1);
    }
    header["last"] = preview(&message);
    let count = header["count"].as_u64().unwrap_or(0) + 1;
    header["count"] = json!(count);
    doc.set(&[MAIL, DIALOGUES, from], header)?;
    doc.set(&[MAIL, MESSAGES, from, &id], message.clone())?;
    doc.set(&[MAIL, HOLDS, &id], json!(from))?;
    if count > MAX_DIALOGUE_MESSAGES {
        prune(doc, from, now)?;
    }
    Ok(message)
}

/// Drops `dialogue`'s oldest messages whose attachments are taken or expired until it holds three
/// quarters of [`MAX_DIALOGUE_MESSAGES`], and records how many it holds then.
fn prune(doc: &mut Doc, dialogue: &str, now: u64) -> Result<(), Error> {
    let Value::Object(messages) = doc.get(&[MAIL, MESSAGES, dialogue])? else { return Ok(()) };
    let mut droppable: Vec<(u64, &String)> = messages
        .iter()
        .filter(|(_, m)| live_items(m, now).is_empty())
        .map(|(id, m)| (m["dt"].as_u64().unwrap_or(0), id))
        .collect();
    // Oldest first; letters of one second keep the order they were written in (the store keeps a
    // document's members in insertion order, and the sort is stable).
    droppable.sort_by_key(|(dt, _)| *dt);
    let excess = (messages.len() as u64).saturating_sub(MAX_DIALOGUE_MESSAGES * 3 / 4) as usize;
    let dropped: Vec<String> = droppable.into_iter().take(excess).map(|(_, id)| id.clone()).collect();
    for id in &dropped {
        doc.set(&[MAIL, MESSAGES, dialogue, id], Value::Null)?;
        doc.set(&[MAIL, HOLDS, id], Value::Null)?;
    }
    doc.set(&[MAIL, DIALOGUES, dialogue, "count"], json!(messages.len() - dropped.len()))
}

/// SPT's `MessagePreview` of a message (`DialogueHelper.GetMessagePreview`).
pub(crate) fn preview(message: &Value) -> Value {
    let mut out =
        json!({ "dt": message["dt"], "type": message["type"], "uid": message["uid"], "text": message["text"] });
    for member in ["templateId", "systemData"] {
        if !message[member].is_null() {
            out[member] = message[member].clone();
        }
    }
    out
}

/// After the commit that wrote `message` into `session`'s profile `uid`: the client's `new_message`
/// and the `mail.sent` event.
pub(crate) fn announce(session: Option<&str>, uid: &str, message: &Value) {
    if let Some(session) = session {
        notify::message(session, message);
    }
    let items = message["items"]["data"].as_array().map_or(0, Vec::len);
    events::announce(
        events::MAIL_SENT,
        &json!({ "session": session, "uid": uid, "dialogId": message["uid"], "messageId": message["_id"],
                 "type": message["type"], "items": items }),
    );
}

/// The dialogue holding message `id` and the message, as the batch has left them.
pub(crate) fn message(doc: &mut Doc, id: &str) -> Result<Option<(String, Value)>, Error> {
    if !ids::is_id(id) {
        return Ok(None);
    }
    let Some(dialogue) = doc.get(&[MAIL, HOLDS, id])?.as_str().map(str::to_owned) else { return Ok(None) };
    let message = doc.get(&[MAIL, MESSAGES, &dialogue, id])?;
    Ok(message.is_object().then_some((dialogue, message)))
}

/// Have the attachments of `message` expired at `now` (SPT's `MessageHasExpired`)? A message
/// without attachments never expires.
pub(crate) fn expired(message: &Value, now: u64) -> bool {
    let (Some(dt), Some(keep)) = (message["dt"].as_u64(), message["maxStorageTime"].as_u64()) else {
        return false;
    };
    now > dt.saturating_add(keep)
}

/// The attachments still to collect from `message` at `now`: none once expired.
pub(crate) fn live_items(message: &Value, now: u64) -> &[Value] {
    if expired(message, now) {
        return &[];
    }
    message["items"]["data"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `message` as the client reads it at `now`: expired attachments are gone (`items: {}`, as SPT's
/// expiry leaves them).
pub(crate) fn for_client(mut message: Value, now: u64) -> Value {
    if expired(&message, now) && message["items"].is_object() {
        message["items"] = json!({});
    }
    message
}

/// Replaces message `id`'s attachments with `left` (what an item action did not take). A message
/// left with none is collected (SPT: `rewardCollected`, no longer `hasRewards`).
pub(crate) fn set_items(
    doc: &mut Doc,
    dialogue: &str,
    id: &str,
    mut message: Value,
    left: Vec<Value>,
) -> Result<(), Error> {
    if left.is_empty() {
        message["rewardCollected"] = json!(true);
        message["hasRewards"] = json!(false);
    }
    message["items"]["data"] = Value::Array(left);
    doc.set(&[MAIL, MESSAGES, dialogue, id], message)?;
    // The corner badge counts messages with new attachments; taking from one clears it (SPT's
    // `GetMessageItemContents` counts down once per take).
    let waiting = doc.get(&[MAIL, DIALOGUES, dialogue, "attachmentsNew"])?.as_u64().unwrap_or(0);
    if waiting > 0 {
        doc.set(&[MAIL, DIALOGUES, dialogue, "attachmentsNew"], json!(waiting - 1))?;
    }
    Ok(())
}

/// Removes every message of `dialogue` (and their `holds` entries); with `header`, the dialogue too.
pub(crate) fn clear(doc: &mut Doc, dialogue: &str, header: bool) -> Result<(), Error> {
    if let Value::Object(messages) = doc.get(&[MAIL, MESSAGES, dialogue])? {
        for id in messages.keys() {
            doc.set(&[MAIL, HOLDS, id], Value::Null)?;
        }
    }
    doc.set(&[MAIL, MESSAGES, dialogue], Value::Null)?;
    if header {
        doc.set(&[MAIL, DIALOGUES, dialogue], Value::Null)?;
    } else if doc.get(&[MAIL, DIALOGUES, dialogue])?.is_object() {
        doc.set(&[MAIL, DIALOGUES, dialogue, "new"], json!(0))?;
        doc.set(&[MAIL, DIALOGUES, dialogue, "attachmentsNew"], json!(0))?;
        doc.set(&[MAIL, DIALOGUES, dialogue, "last"], Value::Null)?;
        doc.set(&[MAIL, DIALOGUES, dialogue, "count"], json!(0))?;
    }
    Ok(())
}

/// What happens when a pending letter is delivered beside the letter itself: an event for other mods.
#[derive(Serialize, Deserialize, Clone, Default)]
pub(crate) struct OnDelivery {
    /// The topic (one of `events.rs`'s), and its payload; the message's id is added as `messageId`.
    pub(crate) topic: Option<String>,
    pub(crate) payload: Value,
}

/// Writes `letter` to arrive at `due` (game seconds), in the pending patch. Answers its id, for
/// [`schedule`] after the commit.
pub(crate) fn send_later(doc: &mut Doc, letter: Letter, due: u64, then: OnDelivery) -> Result<String, Error> {
    if letter.items.len() > MAX_LETTER_ITEMS {
        return Err(Error::TooLarge(format!("a letter carries at most {MAX_LETTER_ITEMS} items")));
    }
    let id = ids::new_id();
    let record = json!({ "due": due, "letter": letter, "then": then });
    doc.set(&[MAIL, PENDING, &id], record)?;
    Ok(id)
}

/// Arms the host's timer for pending letter `pending` of profile `uid`, `delay` seconds from now, for
/// `session` (its lock, and its right to push). The letter is in the profile already: a timer that
/// cannot be stored is logged, and the letter still arrives when the mail is next read after it is due.
pub(crate) fn schedule(session: Option<&str>, uid: &str, pending: &str, delay: u64) {
    let payload = json!({ "uid": uid, "pending": pending });
    let at = std::time::Duration::from_secs(delay);
    if let Err(e) = timers::schedule_json(DELIVERY_TIMER, at, session, &payload) {
        log::warn(&format!("scheduling letter {pending} of {uid}: {e}; it arrives when the mail is next read"));
    }
}

/// The pending letters of the profile that are due at `now`.
pub(crate) fn due(doc: &mut Doc, now: u64) -> Result<Vec<String>, Error> {
    Ok(match doc.get(&[MAIL, PENDING])? {
        Value::Object(pending) => pending
            .into_iter()
            .filter(|(_, record)| record["due"].as_u64().is_none_or(|due| due <= now))
            .map(|(id, _)| id)
            .collect(),
        _ => Vec::new(),
    })
}

/// When pending letter `id` is due (game seconds); `None` when it is not pending.
pub(crate) fn due_at(doc: &mut Doc, id: &str) -> Result<Option<u64>, Error> {
    let record = doc.get(&[MAIL, PENDING, id])?;
    Ok(record.is_object().then(|| record["due"].as_u64().unwrap_or(0)))
}

/// Sends pending letter `id` now, if it is still pending, and forgets it in the same patch. Answers
/// the message and what to announce after the commit.
pub(crate) fn deliver(doc: &mut Doc, id: &str) -> Result<Option<(Value, OnDelivery)>, Error> {
    let record = doc.get(&[MAIL, PENDING, id])?;
    if !record.is_object() {
        return Ok(None);
    }
    doc.set(&[MAIL, PENDING, id], Value::Null)?;
    let Ok(letter) = serde_json::from_value::<Letter>(record["letter"].clone()) else {
        log::warn(&format!("pending letter {id} is unreadable; it is dropped"));
        return Ok(None);
    };
    let then: OnDelivery = serde_json::from_value(record["then"].clone()).unwrap_or_default();
    Ok(Some((send(doc, letter)?, then)))
}

/// After the commit of a delivered pending letter: [`announce`], and its own event.
pub(crate) fn announce_delivered(session: Option<&str>, uid: &str, message: &Value, then: &OnDelivery) {
    announce(session, uid, message);
    if let Some(topic) = then.topic.as_deref().filter(|t| events::DELIVERY_TOPICS.contains(t)) {
        let mut payload = if then.payload.is_object() { then.payload.clone() } else { json!({}) };
        payload["messageId"] = message["_id"].clone();
        payload["session"] = json!(session);
        events::announce(topic, &payload);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attachments_get_fresh_ids_and_top_level_items_go_under_the_stash() {
        let items = vec![
            json!({"_id": "a", "_tpl": "rifle", "parentId": "old-stash", "slotId": "hideout", "location": {"x": 1, "y": 2}}),
            json!({"_id": "b", "_tpl": "mag", "parentId": "a", "slotId": "mod_magazine"}),
        ];
        let out = attachments(&items, "s");
        assert_eq!((&out[0]["parentId"], &out[0]["slotId"]), (&json!("s"), &json!("main")));
        assert!(out[0].get("location").is_none());
        assert_eq!(out[1]["parentId"], out[0]["_id"]);
        assert_eq!(out[1]["slotId"], "mod_magazine");
        assert!(ids::is_id(out[0]["_id"].as_str().unwrap()) && out[0]["_id"] != "a");
    }

    #[test]
    fn attachments_expire_after_their_storage_time_and_messages_without_none_do() {
        let message = json!({"dt": 1000, "maxStorageTime": 100, "items": {"stash": "s", "data": [{"_id": "x"}]}});
        assert!(!expired(&message, 1100));
        assert_eq!(live_items(&message, 1100).len(), 1);
        assert!(expired(&message, 1101));
        assert!(live_items(&message, 1101).is_empty());
        assert_eq!(for_client(message, 1101)["items"], json!({}));
        assert!(!expired(&json!({"dt": 1}), u64::MAX), "no attachments, nothing expires");
    }

    #[test]
    fn a_preview_names_the_newest_message() {
        let m = json!({"_id": "m", "dt": 5, "type": 2, "uid": "t", "text": "", "templateId": "k", "hasRewards": true});
        assert_eq!(preview(&m), json!({"dt": 5, "type": 2, "uid": "t", "text": "", "templateId": "k"}));
    }
}
