//! The mail's dialogue routes (SPT's `DialogStaticRouter` → `DialogueCallbacks` →
//! `DialogueController`), over the mailbox in the profile (`mailbox.rs`):
//!
//! - `list` (SPT's `DialogueInfo` per dialogue, its newest message as the preview), `view` (a
//!   dialogue's messages; opening it clears its unread count), `info` (one `DialogueInfo`);
//! - `read` (unread and new-attachment counts to 0), `pin`/`unpin`, `remove` (the dialogue and its
//!   messages), `clear` (its messages; SPT answers `[]` and keeps them, the client clears its view:
//!   here they go too, so what the player sees is what is kept), each answering SPT's `[]`;
//! - `getAllAttachments`: the messages whose attachments may still be taken;
//! - the group-mail routes for a solo player: `create` answers SPT's `[]`; the other three name a group
//!   this server never has (SPT answers them with a bare `Not Implemented!`, which the client cannot
//!   read), so they answer an error envelope that says so.
//!
//! Expired attachments are computed when read (`mailbox::expired`): a message's items can be taken
//! until `dt + maxStorageTime`, and afterwards the client sees `items: {}`, as SPT's expiry leaves them.
//! `list` and `view` first deliver the letters that came due while no timer could (`delivery.rs`).
//! A route naming a dialogue the player does not have changes nothing.

use super::mailbox::{self, DIALOGUES, MAIL, MESSAGES};
use super::{MAX_BODY, conflict, delivery, open};
use crate::clock;
use crate::input;
use crate::profile::doc::Doc;
use modhost_sdk::{Error, Request, Response, Result, Router, envelope};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most dialogues a `read` names (the client sends the ones on screen).
const MAX_READ: usize = 1_000;
/// The most messages a `view` or `getAllAttachments` answers: the newest ones (a dialogue of a player
/// who buys often holds many; the client shows the latest).
const MAX_VIEW: usize = 2_000;
/// The longest dialogue id the routes read (ids are 24 hex digits).
const MAX_ID: usize = 64;

/// Adds the dialogue routes to `router`.
pub(super) fn routes(router: Router) -> Router {
    router
        .route("/client/mail/dialog/list", list)
        .route("/client/mail/dialog/view", view)
        .route("/client/mail/dialog/info", info)
        .route("/client/mail/dialog/read", read)
        .route("/client/mail/dialog/pin", |req| pin(req, true))
        .route("/client/mail/dialog/unpin", |req| pin(req, false))
        .route("/client/mail/dialog/remove", |req| remove(req, true))
        .route("/client/mail/dialog/clear", |req| remove(req, false))
        .route("/client/mail/dialog/getAllAttachments", attachments)
        .route("/client/mail/dialog/group/create", |req| solo(req, "mail/dialog/group/create", true))
        .route("/client/mail/dialog/group/owner/change", |req| solo(req, "mail/dialog/group/owner/change", false))
        .route("/client/mail/dialog/group/users/add", |req| solo(req, "mail/dialog/group/users/add", false))
        .route("/client/mail/dialog/group/users/remove", |req| solo(req, "mail/dialog/group/users/remove", false))
}

/// A request naming one dialogue (`view`, `info`, `pin`, `remove`, `clear`, `getAllAttachments`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Named {
    #[serde(default)]
    dialog_id: String,
}

fn named(req: &Request, what: &str) -> Result<String> {
    let body: Named = if req.body().iter().all(u8::is_ascii_whitespace) {
        Named { dialog_id: String::new() }
    } else {
        input::parse(req, what, MAX_BODY)?
    };
    if body.dialog_id.len() > MAX_ID || body.dialog_id.contains('.') {
        return Err(Error::Invalid(format!("{what}: `dialogId` is not a dialogue id")));
    }
    Ok(body.dialog_id)
}

/// Commits `doc`; a conflict is the route's refusal.
fn commit(doc: Doc, what: &str) -> Result<Option<Response>> {
    match doc.commit() {
        Ok(_) => Ok(None),
        Err(Error::Conflict(_)) => Ok(Some(conflict(what))),
        Err(other) => Err(other),
    }
}

/// SPT's `DialogueInfo` of a header (`null` members left out, as SPT writes them).
fn dialogue_info(id: &str, header: &Value) -> Value {
    let mut info = json!({
        "_id": id,
        "type": header.get("type").cloned().unwrap_or(json!(mailbox::kind::NPC_TRADER)),
        "new": header.get("new").cloned().unwrap_or(json!(0)),
        "attachmentsNew": header.get("attachmentsNew").cloned().unwrap_or(json!(0)),
        "pinned": header.get("pinned").cloned().unwrap_or(json!(false)),
    });
    for (member, from) in [("message", "last"), ("Users", "Users")] {
        if !header[from].is_null() {
            info[member] = header[from].clone();
        }
    }
    info
}

/// `/client/mail/dialog/list`: a `DialogueInfo` per dialogue.
fn list(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "mail/dialog/list", MAX_BODY)?;
    let (uid, doc) = match open(req, "the mail list")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    let mut doc = match delivery::catch_up(req.session(), &uid, doc) {
        Ok(doc) => doc,
        Err(Error::Conflict(_)) => return Ok(conflict("the mail list")),
        Err(other) => return Err(other),
    };
    let list: Vec<Value> = match doc.get(&[MAIL, DIALOGUES])? {
        Value::Object(headers) => headers.iter().map(|(id, header)| dialogue_info(id, header)).collect(),
        _ => Vec::new(),
    };
    Ok(envelope::ok(&list))
}

/// The messages of `dialogue`, oldest first, as the client reads them now (at most [`MAX_VIEW`], the
/// newest).
fn messages(doc: &mut Doc, dialogue: &str, now: u64) -> Result<Vec<Value>> {
    let mut all: Vec<Value> = match doc.get(&[MAIL, MESSAGES, dialogue])? {
        Value::Object(messages) => messages.into_iter().map(|(_, m)| m).collect(),
        _ => Vec::new(),
    };
    all.sort_by_key(|m| m["dt"].as_u64().unwrap_or(0));
    let skip = all.len().saturating_sub(MAX_VIEW);
    Ok(all.into_iter().skip(skip).map(|m| mailbox::for_client(m, now)).collect())
}

/// Does any message still carry attachments (SPT's `MessagesHaveUncollectedRewards`)?
fn with_rewards(messages: &[Value]) -> bool {
    messages.iter().any(|m| m["items"]["data"].as_array().is_some_and(|d| !d.is_empty()))
}

/// `/client/mail/dialog/view {dialogId}`: `{messages, profiles, hasMessagesWithRewards}`. Opening it
/// clears its unread count, and its new-attachment count becomes the messages whose attachments are
/// still to take.
fn view(req: &Request) -> Result<Response> {
    let dialogue = named(req, "mail/dialog/view")?;
    let (uid, doc) = match open(req, "mail/dialog/view")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    let mut doc = match delivery::catch_up(req.session(), &uid, doc) {
        Ok(doc) => doc,
        Err(Error::Conflict(_)) => return Ok(conflict("mail/dialog/view")),
        Err(other) => return Err(other),
    };
    let header = doc.get(&[MAIL, DIALOGUES, &dialogue])?;
    if !header.is_object() {
        return Ok(envelope::ok(&json!({"messages": [], "profiles": [], "hasMessagesWithRewards": false})));
    }
    let now = clock::now();
    let messages = messages(&mut doc, &dialogue, now)?;
    let waiting = messages
        .iter()
        .filter(|m| m["hasRewards"] == true && m["rewardCollected"] != true && !mailbox::expired(m, now))
        .count();
    // Written only when they change: opening a dialogue again writes nothing.
    if header["new"] != 0 || header["attachmentsNew"] != waiting {
        doc.set(&[MAIL, DIALOGUES, &dialogue, "new"], json!(0))?;
        doc.set(&[MAIL, DIALOGUES, &dialogue, "attachmentsNew"], json!(waiting))?;
    }
    // SPT's `GetProfilesForMail`: a dialogue's users and then the player; none when it has no users.
    let mut profiles: Vec<Value> = header["Users"].as_array().cloned().unwrap_or_default();
    if !profiles.is_empty() && !profiles.iter().any(|p| p["_id"] == uid.as_str()) {
        let info = doc.get(&["Info"])?;
        profiles.push(json!({"_id": uid, "aid": doc.get(&["aid"])?, "Info": super::dialog_details(&info)}));
    }
    let rewards = with_rewards(&messages);
    if let Some(refused) = commit(doc, "mail/dialog/view")? {
        return Ok(refused);
    }
    Ok(envelope::ok(&json!({"messages": messages, "profiles": profiles, "hasMessagesWithRewards": rewards})))
}

/// `/client/mail/dialog/info {dialogId}`: its `DialogueInfo` (SPT answers one for any id).
fn info(req: &Request) -> Result<Response> {
    let dialogue = named(req, "mail/dialog/info")?;
    let (_, mut doc) = match open(req, "mail/dialog/info")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    let header = doc.get(&[MAIL, DIALOGUES, &dialogue])?;
    Ok(envelope::ok(&dialogue_info(&dialogue, &header)))
}

#[derive(Deserialize)]
struct Read {
    #[serde(default, deserialize_with = "input::at_most::<MAX_READ, _, _>")]
    dialogs: Vec<String>,
}

/// `/client/mail/dialog/read {dialogs}`: each dialogue's unread and new-attachment counts to 0.
fn read(req: &Request) -> Result<Response> {
    let body: Read = input::parse(req, "mail/dialog/read", MAX_BODY.max(MAX_READ * 32))?;
    let (_, mut doc) = match open(req, "mail/dialog/read")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    for dialogue in body.dialogs.iter().filter(|d| d.len() <= MAX_ID && !d.contains('.')) {
        if doc.get(&[MAIL, DIALOGUES, dialogue, "_id"])?.is_null() {
            continue;
        }
        doc.set(&[MAIL, DIALOGUES, dialogue, "new"], json!(0))?;
        doc.set(&[MAIL, DIALOGUES, dialogue, "attachmentsNew"], json!(0))?;
    }
    if let Some(refused) = commit(doc, "mail/dialog/read")? {
        return Ok(refused);
    }
    Ok(envelope::ok_json("[]"))
}

/// `/client/mail/dialog/pin` and `unpin {dialogId}`.
fn pin(req: &Request, pinned: bool) -> Result<Response> {
    let what = if pinned { "mail/dialog/pin" } else { "mail/dialog/unpin" };
    let dialogue = named(req, what)?;
    let (_, mut doc) = match open(req, what)? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    if doc.get(&[MAIL, DIALOGUES, &dialogue, "_id"])?.is_null() {
        return Ok(envelope::ok_json("[]"));
    }
    doc.set(&[MAIL, DIALOGUES, &dialogue, "pinned"], json!(pinned))?;
    if let Some(refused) = commit(doc, what)? {
        return Ok(refused);
    }
    Ok(envelope::ok_json("[]"))
}

/// `/client/mail/dialog/remove` (the dialogue and its messages) and `clear` (its messages).
fn remove(req: &Request, whole: bool) -> Result<Response> {
    let what = if whole { "mail/dialog/remove" } else { "mail/dialog/clear" };
    let dialogue = named(req, what)?;
    let (_, mut doc) = match open(req, what)? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    if doc.get(&[MAIL, DIALOGUES, &dialogue, "_id"])?.is_null() {
        return Ok(envelope::ok_json("[]"));
    }
    mailbox::clear(&mut doc, &dialogue, whole)?;
    if let Some(refused) = commit(doc, what)? {
        return Ok(refused);
    }
    Ok(envelope::ok_json("[]"))
}

/// `/client/mail/dialog/getAllAttachments {dialogId}`: the messages whose attachments may still be
/// taken; `null` for a dialogue the player does not have (as SPT). Clears the new-attachment count.
fn attachments(req: &Request) -> Result<Response> {
    let dialogue = named(req, "mail/dialog/getAllAttachments")?;
    let (_, mut doc) = match open(req, "mail/dialog/getAllAttachments")? {
        Ok(opened) => opened,
        Err(answer) => return Ok(answer),
    };
    if doc.get(&[MAIL, DIALOGUES, &dialogue, "_id"])?.is_null() {
        return Ok(envelope::null());
    }
    let now = clock::now();
    let active: Vec<Value> =
        messages(&mut doc, &dialogue, now)?.into_iter().filter(|m| !mailbox::live_items(m, now).is_empty()).collect();
    if doc.get(&[MAIL, DIALOGUES, &dialogue, "attachmentsNew"])? != 0 {
        doc.set(&[MAIL, DIALOGUES, &dialogue, "attachmentsNew"], json!(0))?;
    }
    if let Some(refused) = commit(doc, "mail/dialog/getAllAttachments")? {
        return Ok(refused);
    }
    let rewards = with_rewards(&active);
    Ok(envelope::ok(&json!({"messages": active, "profiles": [], "hasMessagesWithRewards": rewards})))
}

/// The group-mail routes with no one else on the server: `create` is SPT's `[]`; the others change a
/// group, and there is none.
fn solo(req: &Request, what: &str, create: bool) -> Result<Response> {
    input::object_or_empty(req, what, MAX_BODY)?;
    Ok(if create {
        envelope::ok_json("[]")
    } else {
        envelope::error(1, &format!("{what}: there are no group chats on a single-player server"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dialogue_info_leaves_out_what_spt_leaves_null() {
        let header = json!({"_id": "t", "type": 2, "new": 3, "attachmentsNew": 1, "pinned": true, "Users": null,
                            "last": {"dt": 1, "type": 2, "uid": "t", "text": "hi"}});
        let info = dialogue_info("t", &header);
        assert_eq!(info["message"]["text"], "hi");
        assert!(info.get("Users").is_none() && info.get("last").is_none());
        assert_eq!((&info["new"], &info["pinned"]), (&json!(3), &json!(true)));
        let unknown = dialogue_info("x", &Value::Null);
        assert_eq!((&unknown["type"], &unknown["new"]), (&json!(2), &json!(0)));
    }
}
