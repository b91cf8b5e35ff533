//! Timers: work a mod schedules for later, once or every N seconds, that survives restarts.

use crate::wit::exports::modhost::plugin::realtime as wit;
use crate::wit::modhost::plugin::types;

/// The timers a [`crate::Router`] declares and handles.
#[derive(Default)]
pub(crate) struct TimerSet {}

impl TimerSet {
    pub(crate) fn declared(&self) -> Vec<wit::Periodic> {
        Vec::new()
    }

    pub(crate) fn fire(&self, timer: wit::Fired) -> Result<(), types::Error> {
        Err(types::Error::NotFound(format!("this mod handles no timer `{}`", timer.name)))
    }
}
