//! Friends, mail and chat (SPT's `DialogStaticRouter` → `DialogueCallbacks` → `DialogueController`):
//! the friend list (the chat bots the config enables, then the player's friends), the mail's dialogue
//! list and the local chat server.
//!
//! Per player: `userdata.<uid>.dialogues` (by dialogue id, SPT's `Dialogue`) and `.friends` (profile
//! ids), read by member ([`profile::userdata`]). The dialogue routes to come (`/client/mail/dialog/*`:
//! view, info, read, pin, remove, attachments; `/client/mail/msg/send`) belong here, and a message the
//! game sends (an insurance return, a quest reward) is written through this module.

// Used by insurance, the flea market and the mail routes as they land (issue 30).
#[expect(dead_code, reason = "used as the mail lands (issue 30)")]
pub(crate) mod mailbox;

pub(crate) mod friends;

use crate::clock;
use crate::ids::{is_id, new_id};
use crate::input;
use crate::profile::{doc_read, player, userdata};
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The largest body a dialogue route reads: the client sends `{}` or a few small members.
const MAX_BODY: usize = 4 << 10;

/// Adds the friend, mail and chat routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/friend/list", friends)
        .route("/client/friend/request/list/inbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/friend/request/list/outbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/mail/dialog/list", mail_dialogs)
        .route("/client/chatServer/list", chat_servers)
}

/// The most friends and dialogues a list answers.
const MAX_FRIENDS: usize = 1000;
const MAX_DIALOGUES: usize = 1000;

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
fn dialog_details(info: &Value) -> Value {
    json!({
        "Nickname": info["Nickname"], "Side": info["Side"], "Level": info["Level"],
        "MemberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
        "SelectedMemberCategory": info.get("SelectedMemberCategory").cloned().unwrap_or(json!(0)),
    })
}

/// SPT's chat bots that the config enables: the SPT friend and Commando, as their `GetChatBot` shows
/// them (developer members of level 1).
fn chat_bots() -> Vec<Value> {
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

/// `/client/mail/dialog/list`: one `DialogueInfo` per dialogue in `userdata.<uid>.dialogues`, with its
/// newest message as the preview.
fn mail_dialogs(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "mail/dialog/list", MAX_BODY)?;
    let uid = match player(req, "the mail list")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let dialogues: Map<String, Value> = userdata(&uid, "dialogues")?.unwrap_or_default();
    const NPC_TRADER: u32 = 1;
    let list: Vec<Value> = dialogues
        .iter()
        .take(MAX_DIALOGUES)
        .map(|(id, dialogue)| {
            let preview = dialogue["messages"].as_array().and_then(|m| m.last()).map(|m| {
                json!({"dt": m["dt"], "type": m["type"], "templateId": m["templateId"], "uid": m["uid"],
                       "text": m["text"], "systemData": m["systemData"]})
            });
            json!({
                "_id": id,
                "type": dialogue.get("type").cloned().unwrap_or(json!(NPC_TRADER)),
                "message": preview,
                "new": dialogue.get("new").cloned().unwrap_or(json!(0)),
                "attachmentsNew": dialogue.get("attachmentsNew").cloned().unwrap_or(json!(0)),
                "pinned": dialogue.get("pinned").cloned().unwrap_or(json!(false)),
                "Users": dialogue.get("Users").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    Ok(envelope::ok(&list))
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
