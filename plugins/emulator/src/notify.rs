//! The game's side of the SPT notifier: the channel the client asks for
//! (`/client/notifier/channel/create`, SPT's `NotifierChannel`: where its websocket and its poll
//! fallback are, both served by the host), and the notifications it pushes where the SPT client
//! expects one. Push is an ordinary mod's API (`push.send` to the session it handles); the host
//! queues a message for a client that is not connected.
//!
//! What it pushes: each letter that arrives in a player's mailbox (`mail/mailbox.rs`: a gift, a
//! purchase, an insurance return, a chat bot's reply, `send-mail`), in SPT's `WsChatMessageReceived`
//! shape (`type: "new_message"`, `eventId`, `dialogId`, `message`: the message as stored, SPT's
//! `MessageType`s), which the client shows as a new message in its chat.

use modhost_sdk::{Request, Response, Result, envelope, log, push};
use serde_json::{Value, json};

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
