//! The host side of the WIT `sockets` interface: sending on and closing the connections of a mod's own
//! websocket routes.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use plugin::sockets::Message;

impl plugin::sockets::Host for CallState {
    fn send(&mut self, connection: String, _message: Message) -> Result<(), Error> {
        Err(Error::NotFound(format!("mod {}: no connection `{connection}`", self.cx.id)))
    }

    fn close(&mut self, connection: String, _code: u16, _reason: String) -> Result<(), Error> {
        Err(Error::NotFound(format!("mod {}: no connection `{connection}`", self.cx.id)))
    }
}
