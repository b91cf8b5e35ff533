//! The host side of the WIT `log` interface: a mod's log lines into the host's log, prefixed with the
//! mod's id, each cleaned and cut (`logcap.rs`) and within the mod's caps per call and per second.

use super::bindings::modhost::plugin;
use super::logcap;
use super::state::CallState;

impl plugin::log::Host for CallState {
    fn log(&mut self, level: plugin::log::Level, message: String) {
        use plugin::log::Level;
        let id = &*self.cx.id;
        // Charged at what reaches the log: a line is cut at `MAX_LINE`, whatever was sent.
        let cost = message.len().min(logcap::MAX_LINE);
        if !self.cx.log.admit(id, &mut self.log_bytes, cost) {
            return;
        }
        let message = logcap::clean(&message, logcap::MAX_LINE);
        match level {
            Level::Trace => tracing::trace!(target: "mod", "[{id}] {message}"),
            Level::Debug => tracing::debug!(target: "mod", "[{id}] {message}"),
            Level::Info => tracing::info!(target: "mod", "[{id}] {message}"),
            Level::Warn => tracing::warn!(target: "mod", "[{id}] {message}"),
            Level::Error => tracing::error!(target: "mod", "[{id}] {message}"),
        }
    }
}
