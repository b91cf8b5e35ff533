//! The host side of the WIT `timers` interface: one-shot timers a mod schedules and cancels. Thin:
//! the bounds and the store live in `realtime::timers`; this checks the grant a timer naming another
//! session than the call's needs (`timers = "any"`), and converts the engine's errors into WIT errors
//! naming the mod.

use super::bindings::{Error, modhost::plugin};
use super::state::CallState;
use crate::realtime::timers::ScheduleError;
use crate::session::SessionId;

impl plugin::timers::Host for CallState {
    async fn schedule(
        &mut self,
        name: String,
        delay_ms: u64,
        session: Option<String>,
        payload: Vec<u8>,
    ) -> Result<String, Error> {
        let id = self.cx.id.clone();
        // Outside a server (`modhost test-runner`) nothing would ever fire it.
        let Some(peers) = self.cx.peers.get().and_then(std::sync::Weak::upgrade) else {
            return Err(Error::Failed(format!("mod {id}: timers run only in a server")));
        };
        // A timer's firing runs under its session's lock and with its rights (a push to it needs no
        // grant): naming a session is as much the mod's to do as handling it. The session of this
        // call, and no other without the `timers` grant (a malformed one is the engine's `invalid`).
        if let Some(named) = session.as_deref().and_then(|s| SessionId::parse(s).ok())
            && self.chain.session != Some(named)
        {
            self.cx.grants.check_timer_session(self.chain.session.is_some()).map_err(|why| self.cx.denied(why))?;
        }
        let timers = &peers.realtime.timers;
        timers.schedule(&id, name, delay_ms, session, payload).await.map_err(|e| {
            let message = format!("mod {id}: {e}");
            match e {
                ScheduleError::BadName(_) | ScheduleError::BadSession(_) => Error::Invalid(message),
                ScheduleError::Payload(_)
                | ScheduleError::Delay(_)
                | ScheduleError::Pending
                | ScheduleError::Quota(_) => Error::TooLarge(message),
                ScheduleError::Io(_) => Error::Io(message),
            }
        })
    }

    async fn cancel(&mut self, timer: String) -> Result<bool, Error> {
        let id = self.cx.id.clone();
        let Some(peers) = self.cx.peers.get().and_then(std::sync::Weak::upgrade) else { return Ok(false) };
        peers.realtime.timers.cancel(&id, &timer).await.map_err(|e| Error::Io(format!("mod {id}: {e}")))
    }
}
