//! The host side of the WIT `log` interface: a mod's log lines into the host's log, prefixed with the
//! mod's id, each cut at [`MAX_LOG_LINE`] bytes.

use super::bindings::modhost::plugin;
use super::state::CallState;

/// The longest log line a mod can write; the rest is cut.
const MAX_LOG_LINE: usize = 8 * 1024;

impl plugin::log::Host for CallState {
    fn log(&mut self, level: plugin::log::Level, message: String) {
        use plugin::log::Level;
        let mut end = message.len().min(MAX_LOG_LINE);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let (id, message) = (&*self.cx.id, &message[..end]);
        self.cx.logged.fetch_add(message.len() as u64, std::sync::atomic::Ordering::Relaxed);
        match level {
            Level::Trace => tracing::trace!(target: "mod", "[{id}] {message}"),
            Level::Debug => tracing::debug!(target: "mod", "[{id}] {message}"),
            Level::Info => tracing::info!(target: "mod", "[{id}] {message}"),
            Level::Warn => tracing::warn!(target: "mod", "[{id}] {message}"),
            Level::Error => tracing::error!(target: "mod", "[{id}] {message}"),
        }
    }
}
