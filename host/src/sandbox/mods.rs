//! The host side of the WIT `mods` interface: events and calls between mods.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;

impl plugin::mods::Host for CallState {
    async fn emit(&mut self, _topic: String, _payload: Vec<u8>) -> Result<u32, Error> {
        Err(Error::Failed("events are being built".into()))
    }

    async fn call(&mut self, _target: String, _function: String, _payload: Vec<u8>) -> Result<Vec<u8>, Error> {
        Err(Error::Failed("calls are being built".into()))
    }

    async fn call_for_session(
        &mut self,
        _session: String,
        _target: String,
        _function: String,
        _payload: Vec<u8>,
    ) -> Result<Vec<u8>, Error> {
        Err(Error::Failed("calls are being built".into()))
    }
}
