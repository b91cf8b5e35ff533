//! Push: messages to players' game clients over the SPT notifier websocket, which the host serves
//! at `/notifierServer/getwebsocket/<session>` (one socket per session).
//!
//! A message for a session without a socket is queued for it (bounded: the oldest is dropped first)
//! and sent when its client connects or polls. Any mod may push to the session it is handling (the
//! request's, the event's, the call's, the timer's); any other session needs `push = "any"` under
//! `[grants]` in `mod.toml`, and [`broadcast`] needs `push = "broadcast"`.
//!
//! The SPT client reads each notification as a JSON object with a `type` (`new_message`,
//! `RagfairOfferSold`, `ping`, …) and an `eventId`.
//!
//! Errors of every call: [`Error::Invalid`] for a malformed session id or a message that is not JSON,
//! [`Error::TooLarge`] over 256 KiB or when a message to be queued finds the mod's share of the
//! queues (`push_queue_mib`) or the server's full, [`Error::Denied`] without the grant (the message
//! names it).

use crate::wit::modhost::plugin::push as host;
use crate::{Error, Result};
use serde::Serialize;

/// What became of a pushed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Written to the session's open socket.
    Delivered,
    /// The session has no socket open: kept until its client connects or polls.
    Queued,
}

/// Pushes `message` as JSON to `session`.
///
/// ```rust,no_run
/// use modhost_sdk::push;
/// let delivery = push::send("0123456789abcdef01234567", &serde_json::json!({
///     "type": "new_message", "eventId": "6560d3a5e8a4a2b1c0d9e8f7",
/// }))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn send<T: Serialize + ?Sized>(session: &str, message: &T) -> Result<Delivery> {
    send_json_text(session, &serde_json::to_string(message)?)
}

/// Pushes `json`, JSON text already written, to `session` (see [`send`]).
///
/// ```rust,no_run
/// modhost_sdk::push::send_json_text("0123456789abcdef01234567", r#"{"type":"ping","eventId":"ping"}"#)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn send_json_text(session: &str, json: &str) -> Result<Delivery> {
    match host::send(session, json).map_err(Error::from)? {
        host::Delivery::Delivered => Ok(Delivery::Delivered),
        host::Delivery::Queued => Ok(Delivery::Queued),
    }
}

/// Pushes `message` as JSON to every session with a socket open (none is queued); answers how many
/// sockets took it. Needs `push = "broadcast"`.
///
/// ```rust,no_run
/// let reached = modhost_sdk::push::broadcast(&serde_json::json!({"type": "ping", "eventId": "ping"}))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn broadcast<T: Serialize + ?Sized>(message: &T) -> Result<u32> {
    host::broadcast(&serde_json::to_string(message)?).map_err(Error::from)
}

/// Whether `session` has a notifier socket open now.
///
/// ```rust,no_run
/// let online = modhost_sdk::push::connected("0123456789abcdef01234567")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn connected(session: &str) -> Result<bool> {
    host::connected(session).map_err(Error::from)
}
