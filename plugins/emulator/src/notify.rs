//! The game's side of the SPT notifier: the channel the client asks for
//! (`/client/notifier/channel/create`, SPT's `NotifierChannel`: where its websocket and its poll
//! fallback are, both served by the host), and the notifications it pushes where the SPT client
//! expects one. Push is an ordinary mod's API (`push.send` to the session it handles); the host
//! queues a message for a client that is not connected.
//!
//! What it pushes, in SPT's `WsChatMessageReceived` shape (`type: "new_message"`, `eventId`,
//! `dialogId`, `message`), which the client shows as a new message in its chat:
//! - a gift (`give-item`, the game's mail): a system message naming what arrived in the stash;
//! - a purchase from a trader (`TradingConfirm`): a message from the trader.

use crate::clock;
use crate::ids;
use modhost_sdk::{Request, Response, Result, envelope, log, push};
use serde_json::{Value, json};

/// SPT's system sender (the `uid` of system messages).
const SYSTEM: &str = "59e7125688a45068a6249071";
/// SPT's `MessageType`: a trader's message, and a system message.
const NPC_TRADER: u8 = 1;
const SYSTEM_MESSAGE: u8 = 13;

/// `/client/notifier/channel/create`: where the client's notifier lives, on this host.
pub(crate) fn channel(req: &Request) -> Result<Response> {
    let Some(session) = req.session() else {
        return Ok(envelope::error(1, "the notifier channel needs a session"));
    };
    let host = req.header("host").unwrap_or("127.0.0.1:6969");
    Ok(envelope::ok(&json!({
        "server": format!("http://{host}"),
        "channel_id": session,
        "url": "",
        "notifierServer": format!("http://{host}/notifierServer/get/{session}"),
        "ws": format!("ws://{host}/notifierServer/getwebsocket/{session}"),
    })))
}

/// The `new_message` notification of a message from `from` with `text`, of SPT message type `kind`.
fn new_message(from: &str, kind: u8, text: &str) -> Value {
    let id = ids::new_id();
    json!({
        "type": "new_message",
        "eventId": id,
        "dialogId": from,
        "message": {
            "_id": id, "uid": from, "type": kind, "dt": clock::now(), "text": text,
            "hasRewards": false, "rewardCollected": false,
        },
    })
}

/// Pushes `notification` to `session`; a failure is logged, never the request's (it is written).
fn send(session: &str, notification: &Value) {
    if let Err(e) = push::send(session, notification) {
        log::warn(&format!("pushing a notification to {session}: {e}"));
    }
}

/// A letter arrived in `session`'s mailbox (`mail::mailbox::send`'s answer, after the commit).
pub(crate) fn message(session: &str, message: &Value) {
    let notification = json!({
        "type": "new_message", "eventId": message["_id"], "dialogId": message["uid"], "message": message,
    });
    send(session, &notification);
}

/// A gift arrived in `session`'s stash: `count` of `tpl`.
pub(crate) fn gift(session: &str, tpl: &str, count: u64) {
    send(session, &new_message(SYSTEM, SYSTEM_MESSAGE, &format!("{count} × {tpl} arrived in your stash")));
}

/// `session` bought from `trader`.
pub(crate) fn trade(session: &str, trader: &str) {
    send(session, &new_message(trader, NPC_TRADER, "Thank you for your purchase"));
}
