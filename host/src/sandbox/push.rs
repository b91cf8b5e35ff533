//! The host side of the WIT `push` interface: messages to players' notifier sockets.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use plugin::push::Delivery;

impl plugin::push::Host for CallState {
    fn send(&mut self, _session: String, _message: String) -> Result<Delivery, Error> {
        Err(Error::Failed(format!("mod {}: push is not available", self.cx.id)))
    }

    fn broadcast(&mut self, _message: String) -> Result<u32, Error> {
        Ok(0)
    }

    fn connected(&mut self, _session: String) -> Result<bool, Error> {
        Ok(false)
    }
}
