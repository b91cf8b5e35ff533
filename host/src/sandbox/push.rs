//! The host side of the WIT `push` interface: messages to players' notifier sockets
//! (`crate::realtime::hub`). The session a call handles (its chain's) is the mod's to push to; any
//! other, and every one at once, needs the `push` grant. A message for a session without a socket
//! is queued within the mod's share of the queues (`push_queue_bytes`) and the server's bound, or
//! refused (`too-large`, naming which). On a store several hosts share, such a message waits in the
//! store for whichever host the session connects to (`realtime/relay.rs`), and a broadcast reaches
//! every host's sockets (the count is this host's).

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use crate::realtime::hub;
use crate::realtime::relay::Unsent;
use crate::session::SessionId;
use plugin::push::Delivery;
use std::sync::Arc;

impl CallState {
    /// The server's realtime parts; none outside a server (`modhost test-runner`), where nothing is
    /// connected and a push is queued for nobody.
    fn realtime(&self) -> Option<Arc<crate::realtime::Realtime>> {
        self.cx.peers.get().and_then(std::sync::Weak::upgrade).map(|peers| peers.realtime.clone())
    }

    fn session_arg(&self, session: &str) -> Result<SessionId, Error> {
        SessionId::parse(session).map_err(|_| {
            Error::Invalid(format!("mod {}: session `{}` is not 24 hex digits", self.cx.id, session.escape_debug()))
        })
    }

    /// The message as the socket sends it: JSON text, within the cap.
    fn notification(&self, message: String) -> Result<tokio_tungstenite::tungstenite::Utf8Bytes, Error> {
        if message.len() > hub::MAX_PUSH {
            return Err(Error::TooLarge(format!(
                "mod {}: a message of {} bytes; a push carries at most {}",
                self.cx.id,
                message.len(),
                hub::MAX_PUSH
            )));
        }
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&message) {
            return Err(Error::Invalid(format!("mod {}: a pushed message must be JSON: {e}", self.cx.id)));
        }
        Ok(message.into())
    }
}

impl plugin::push::Host for CallState {
    async fn send(&mut self, session: String, message: String) -> Result<Delivery, Error> {
        let session = self.session_arg(&session)?;
        if self.chain.session != Some(session) {
            self.cx.grants.check_push_other().map_err(|why| self.cx.denied(why))?;
        }
        let message = self.notification(message)?;
        let Some(realtime) = self.realtime() else { return Ok(Delivery::Queued) };
        let share = hub::QueueShare {
            by: self.cx.id.clone(),
            bytes: self.cx.push_queue_bytes.load(std::sync::atomic::Ordering::Relaxed),
        };
        let delivery = match &realtime.relay {
            // Several hosts: the session's socket may be on another, or come to any.
            Some(relay) => {
                relay.push(&realtime.hub, &share, session, message).await.map_err(|unsent| match unsent {
                    Unsent::Full(full) => Error::TooLarge(format!("mod {}: {full}", self.cx.id)),
                    Unsent::Store(e) => super::store::noted(&mut self.store_unavailable, e),
                })?
            }
            None => realtime
                .hub
                .push(&share, session, message)
                .map_err(|full| Error::TooLarge(format!("mod {}: {full}", self.cx.id)))?,
        };
        Ok(match delivery {
            hub::Delivery::Delivered => Delivery::Delivered,
            hub::Delivery::Queued => Delivery::Queued,
        })
    }

    async fn broadcast(&mut self, message: String) -> Result<u32, Error> {
        self.cx.grants.check_broadcast().map_err(|why| self.cx.denied(why))?;
        let message = self.notification(message)?;
        let Some(realtime) = self.realtime() else { return Ok(0) };
        match &realtime.relay {
            Some(relay) => relay
                .broadcast(&realtime.hub, message)
                .await
                .map_err(|e| super::store::noted(&mut self.store_unavailable, e)),
            None => Ok(realtime.hub.broadcast(message)),
        }
    }

    fn connected(&mut self, session: String) -> Result<bool, Error> {
        let session = self.session_arg(&session)?;
        Ok(self.realtime().is_some_and(|realtime| realtime.hub.connected(session)))
    }
}
