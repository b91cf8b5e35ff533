//! The host side of the WIT `timers` interface: one-shot timers a mod schedules and cancels.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;

impl plugin::timers::Host for CallState {
    async fn schedule(
        &mut self,
        _name: String,
        _delay_ms: u64,
        _session: Option<String>,
        _payload: Vec<u8>,
    ) -> Result<String, Error> {
        Err(Error::Failed(format!("mod {}: timers are not available", self.cx.id)))
    }

    async fn cancel(&mut self, _id: String) -> Result<bool, Error> {
        Ok(false)
    }
}
