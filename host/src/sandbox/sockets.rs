//! The host side of the WIT `sockets` interface: sending on and closing the connections of a mod's own
//! websocket routes (`crate::realtime::modsock` keeps them). Every case is an error value, never a
//! trap: a connection closes under a mod at any time (its client leaves), so `not-found` is an
//! ordinary answer, and it is the same answer for an id that was never this mod's.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use crate::realtime::modsock::SendError;
use plugin::sockets::Message;
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// The most of a mod-given id quoted back in an error (an id is 32 characters).
const QUOTED_ID: usize = 40;

impl CallState {
    fn socket_error(&self, connection: &str, e: SendError) -> Error {
        let id = &self.cx.id;
        match e {
            SendError::NotFound => {
                let quoted: String = connection.chars().take(QUOTED_ID).collect();
                Error::NotFound(format!("mod {id}: no open connection `{}` of this mod", quoted.escape_debug()))
            }
            SendError::TooLarge(size) => Error::TooLarge(format!(
                "mod {id}: a message of {size} bytes; a websocket message is at most {} bytes",
                crate::realtime::socket::MAX_MESSAGE
            )),
            SendError::Full => Error::TooLarge(format!(
                "mod {id}: the connection's queue is full (its client does not read): it was closed (1008)"
            )),
            SendError::BadClose(why) => Error::Invalid(format!("mod {id}: {why}")),
        }
    }

    /// The server's mod sockets; none outside a server (`modhost test-runner`), where no
    /// connection exists and every id is `not-found`.
    fn sockets(&self) -> Option<std::sync::Arc<crate::realtime::Realtime>> {
        self.cx.peers.get().and_then(std::sync::Weak::upgrade).map(|peers| peers.realtime.clone())
    }
}

impl plugin::sockets::Host for CallState {
    fn send(&mut self, connection: String, message: Message) -> Result<(), Error> {
        let Some(realtime) = self.sockets() else { return Err(self.socket_error(&connection, SendError::NotFound)) };
        let message = match message {
            Message::Text(text) => WsMessage::text(text),
            Message::Binary(bytes) => WsMessage::binary(bytes),
        };
        realtime.sockets.send(&self.cx.id, &connection, message).map_err(|e| self.socket_error(&connection, e))
    }

    fn close(&mut self, connection: String, code: u16, reason: String) -> Result<(), Error> {
        let Some(realtime) = self.sockets() else { return Err(self.socket_error(&connection, SendError::NotFound)) };
        realtime.sockets.close(&self.cx.id, &connection, code, &reason).map_err(|e| self.socket_error(&connection, e))
    }
}
