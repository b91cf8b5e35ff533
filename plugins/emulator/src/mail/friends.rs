//! Friend requests and the ignore list (SPT's `DialogStaticRouter` → `DialogueCallbacks`,
//! `DialogueController`), for a server where every other player is offline: as SPT does, a request
//! sent is accepted at once (no one is there to accept it), and the friend is added to the sender's
//! list (`userdata.<uid>.friends`, which `/client/friend/list` reads), then the client hears SPT's
//! `friendListRequestAccept` notification with the friend's chat card.
//!
//! - `/client/friend/request/send` `{to}`: SPT's `FriendRequestSendResponse` (`status` 0 and the
//!   friend's `aid` as `requestId`; `status` 505001, SPT's `PlayerProfileNotFound`, for an id with no
//!   profile, and for the player's own id);
//! - `/client/friend/delete` `{friend_id}`: off the list (null);
//! - `/client/friend/request/accept`, `…/decline`, `…/cancel`: `true`; `…/accept-all`: null (there are
//!   never pending requests: each was accepted when sent);
//! - `/client/friend/ignore/set`, `…/ignore/remove`: null. SPT keeps no ignore list, so neither does the
//!   game (`/client/friend/list` answers `Ignore: []`).
//!
//! Bounded: a body of at most [`MAX_BODY`] bytes, ids of 24 hex digits, at most [`MAX_FRIENDS`] friends
//! (one more is refused, naming the bound).

use crate::ids::{is_id, new_id};
use crate::input;
use crate::profile::{doc_read, player, userdata};
use modhost_sdk::{Request, Response, Result, Router, envelope, log, push, store};
use serde::Deserialize;
use serde_json::{Value, json};

/// The largest body read: one id.
const MAX_BODY: usize = 4 << 10;
/// The most friends a player keeps (what `/client/friend/list` answers at most).
const MAX_FRIENDS: usize = 1000;
/// SPT's `BackendErrorCodes.PlayerProfileNotFound`.
const PROFILE_NOT_FOUND: u32 = 505_001;
/// SPT's `retryAfter` in a request's answer, in seconds.
const RETRY_AFTER: u32 = 600;

/// Adds the friend request and ignore routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/friend/request/send", send)
        .route("/client/friend/request/accept-all", null)
        .route("/client/friend/request/accept", yes)
        .route("/client/friend/request/decline", yes)
        .route("/client/friend/request/cancel", yes)
        .route("/client/friend/delete", delete)
        .route("/client/friend/ignore/set", null)
        .route("/client/friend/ignore/remove", null)
}

fn null(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "friend", MAX_BODY)?;
    Ok(envelope::null())
}

fn yes(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "friend", MAX_BODY)?;
    Ok(envelope::ok(&true))
}

#[derive(Deserialize)]
struct Send {
    #[serde(default)]
    to: String,
}

/// `/client/friend/request/send`: see the module's header.
fn send(req: &Request) -> Result<Response> {
    let uid = match player(req, "a friend request")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Send = input::parse(req, "friend/request/send", MAX_BODY)?;
    let not_found =
        || envelope::ok(&json!({ "status": PROFILE_NOT_FOUND, "requestId": "", "retryAfter": RETRY_AFTER }));
    if !is_id(&body.to) || body.to == uid {
        return Ok(not_found());
    }
    let key = format!("profile.{}", body.to);
    let Some(info) = doc_read::<Value>(&key, &["Info"])? else { return Ok(not_found()) };
    let aid = doc_read::<Value>(&key, &["aid"])?.unwrap_or(json!(0));
    let mut friends: Vec<String> = userdata(&uid, "friends")?.unwrap_or_default();
    if !friends.contains(&body.to) {
        if friends.len() >= MAX_FRIENDS {
            return Ok(envelope::error(1, &format!("a player has at most {MAX_FRIENDS} friends")));
        }
        friends.push(body.to.clone());
        store::doc_patch(&format!("userdata.{uid}"), "", &json!({ "friends": friends }))?;
    }
    if let Some(session) = req.session() {
        let card = json!({
            "_id": body.to, "aid": aid,
            "Info": {
                "Nickname": info["Nickname"], "Side": info["Side"], "Level": info["Level"],
                "MemberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
                "SelectedMemberCategory": info.get("SelectedMemberCategory").cloned().unwrap_or(json!(0)),
            },
        });
        let accepted = json!({ "type": "friendListRequestAccept", "eventId": new_id(), "profile": card });
        // The friend is on the list already: a notification that fails is logged, never the request's.
        if let Err(e) = push::send(session, &accepted) {
            log::warn(&format!("pushing a friend's acceptance to {session}: {e}"));
        }
    }
    let request_id = match &aid {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Ok(envelope::ok(&json!({ "status": 0, "requestId": request_id, "retryAfter": RETRY_AFTER })))
}

#[derive(Deserialize)]
struct Delete {
    #[serde(default)]
    friend_id: String,
}

/// `/client/friend/delete`: `{friend_id}` off the player's list (null whether or not it was there).
fn delete(req: &Request) -> Result<Response> {
    let uid = match player(req, "deleting a friend")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Delete = input::parse(req, "friend/delete", MAX_BODY)?;
    let mut friends: Vec<String> = userdata(&uid, "friends")?.unwrap_or_default();
    if let Some(at) = friends.iter().position(|f| *f == body.friend_id) {
        friends.remove(at);
        store::doc_patch(&format!("userdata.{uid}"), "", &json!({ "friends": friends }))?;
    }
    Ok(envelope::null())
}
