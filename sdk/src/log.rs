//! Lines in the host's log, prefixed with this mod's id. (`println!` and `eprintln!` work too: the host
//! logs a mod's stdout and stderr after each call.)

use crate::wit::modhost::plugin::log::{self as host, Level};

/// A trace line (shown only with a verbose filter).
///
/// ```rust,no_run
/// modhost_sdk::log::trace("entering select");
/// ```
pub fn trace(message: &str) {
    host::log(Level::Trace, message);
}

/// A debug line (shown only with a verbose filter).
///
/// ```rust,no_run
/// modhost_sdk::log::debug(&format!("{} items", 3));
/// ```
pub fn debug(message: &str) {
    host::log(Level::Debug, message);
}

/// An info line.
///
/// ```rust,no_run
/// modhost_sdk::log::info("profile created");
/// ```
pub fn info(message: &str) {
    host::log(Level::Info, message);
}

/// A warning.
///
/// ```rust,no_run
/// modhost_sdk::log::warn("unknown action skipped");
/// ```
pub fn warn(message: &str) {
    host::log(Level::Warn, message);
}

/// An error line.
///
/// ```rust,no_run
/// modhost_sdk::log::error("profile unreadable");
/// ```
pub fn error(message: &str) {
    host::log(Level::Error, message);
}
