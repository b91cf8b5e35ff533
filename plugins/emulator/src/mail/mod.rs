//! Friends, mail and chat (SPT's `DialogStaticRouter` → `DialogueCallbacks` → `DialogueController`):
//! the friend list (the chat bots the config enables, then the player's friends), the local chat
//! server, and the mail:
//!
//! - `mailbox.rs`: the mailbox in the profile document (dialogues, messages, attachments, letters
//!   that arrive later), what every letter the game writes goes through;
//! - `dialogs.rs`: the `/client/mail/dialog/*` routes (list, view, info, read, pin, remove, clear,
//!   attachments) and SPT's group-mail routes, answered as SPT answers a solo player;
//! - `chat.rs`: `/client/mail/msg/send`, the player writing to a chat bot or a trader;
//! - `letters.rs`: the letters the game writes for a gift and a purchase;
//! - `delivery.rs`: pending letters delivered by the host's timer or when the mail is next read;
//! - `provided.rs`: `send-mail`, the function other mods call.
//!
//! Per player: `userdata.<uid>.friends` (profile ids), read by member ([`profile::userdata`]); the mail
//! is in the profile itself (`mailbox.rs`).

mod chat;
mod delivery;
mod dialogs;
pub(crate) mod letters;
pub(crate) mod mailbox;
mod provided;

pub(crate) mod friends;

use crate::clock;
use crate::ids::{is_id, new_id};
use crate::input;
use crate::profile::doc::Doc;
use crate::profile::{self, doc_read, player, userdata};
use crate::templates::Templates;
use modhost_sdk::{Error, Request, Response, Result, Router, db, envelope};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The largest body a dialogue route reads: the client sends `{}` or a few small members.
const MAX_BODY: usize = 4 << 10;

/// Adds the friend, mail and chat routes, the delivery timer and `send-mail` to `router`.
pub(crate) fn routes(router: Router) -> Router {
    let router = router
        .route("/client/friend/list", friends)
        .route("/client/friend/request/list/inbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/friend/request/list/outbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/chatServer/list", chat_servers)
        .route("/client/mail/msg/send", chat::send)
        .on_timer(mailbox::DELIVERY_TIMER, delivery::fired)
        .provide_json("send-mail", provided::send_mail);
    let router = friends::routes(router);
    dialogs::routes(router)
}

/// The most friends a list answers.
const MAX_FRIENDS: usize = 1000;

/// `/client/friend/list`: the enabled chat bots (`configs.core.features.chatbotFeatures`), then the
/// player's friends (`userdata.<uid>.friends`) that still have a profile, as `UserDialogInfo`.
fn friends(req: &Request) -> Result<Response> {
    let mut friends = chat_bots();
    if let Ok(uid) = player(req, "the friend list")? {
        let ids: Vec<String> = userdata(&uid, "friends")?.unwrap_or_default();
        for friend in ids.iter().filter(|id| is_id(id)).take(MAX_FRIENDS) {
            let Some(info) = doc_read::<Value>(&format!("profile.{friend}"), &["Info"])? else { continue };
            let aid = doc_read::<Value>(&format!("profile.{friend}"), &["aid"])?.unwrap_or(json!(0));
            friends.push(json!({"_id": friend, "aid": aid, "Info": dialog_details(&info)}));
        }
    }
    Ok(envelope::ok(&json!({"Friends": friends, "Ignore": [], "InIgnoreList": []})))
}

/// What a chat member shows of a profile's `Info` (SPT's `UserDialogDetails`).
pub(super) fn dialog_details(info: &Value) -> Value {
    json!({
        "Nickname": info["Nickname"], "Side": info["Side"], "Level": info["Level"],
        "MemberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
        "SelectedMemberCategory": info.get("SelectedMemberCategory").cloned().unwrap_or(json!(0)),
    })
}

/// SPT's chat bots that the config enables: the SPT friend and Commando, as their `GetChatBot` shows
/// them (developer members of level 1).
pub(super) fn chat_bots() -> Vec<Value> {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Features {
        #[serde(default)]
        ids: Map<String, Value>,
        #[serde(default)]
        enabled_bots: Map<String, Value>,
    }
    const DEVELOPER: u32 = 2;
    let features: Features = db::get("configs.core.features.chatbotFeatures").unwrap_or_default();
    let spt_name: String = db::get("configs.core.sptFriendNickname").unwrap_or_else(|_| "SPT".to_owned());
    let mut bots = Vec::new();
    for (name, id) in &features.ids {
        let Some(id) = id.as_str() else { continue };
        if features.enabled_bots.get(id) != Some(&json!(true)) {
            continue;
        }
        let (nickname, aid) =
            if name == "spt" { (spt_name.clone(), 1_234_566) } else { ("Commando".to_owned(), 1_234_567) };
        bots.push(json!({
            "_id": id, "aid": aid,
            "Info": {"Level": 1, "MemberCategory": DEVELOPER, "SelectedMemberCategory": DEVELOPER,
                     "Nickname": nickname, "Side": "Usec"},
        }));
    }
    bots
}

/// `/client/chatServer/list`: SPT's one local chat server.
fn chat_servers(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "chatServer/list", MAX_BODY)?;
    Ok(envelope::ok(&json!([{
        "_id": new_id(), "RegistrationId": 20, "DateTime": clock::now(), "IsDeveloper": true,
        "Regions": ["EUR"], "VersionId": "bgkidft87ddd", "Ip": "", "Port": 0,
        "Chats": [{"_id": "0", "Members": 0}],
    }])))
}

/// The session's profile, opened for a mail route: its uid and the document at its version; or the
/// answer when the session plays none (`what` names the route).
pub(super) fn open(req: &Request, what: &str) -> Result<std::result::Result<(String, Doc), Response>> {
    let uid = match player(req, what)? {
        Ok(uid) => uid,
        Err(answer) => return Ok(Err(answer)),
    };
    let key = format!("profile.{uid}");
    match profile::open(&key, &mut Templates::default()) {
        Ok(Some(version)) => Ok(Ok((uid, Doc::at(&key, version)))),
        Ok(None) => Ok(Err(envelope::error(1, "the session's profile does not exist"))),
        Err(Error::Conflict(_)) => Ok(Err(conflict(what))),
        Err(other) => Err(other),
    }
}

/// What a mail route that met another writer answers.
pub(super) fn conflict(what: &str) -> Response {
    envelope::error(1, &format!("{what}: another request changed this profile; nothing was applied"))
}
