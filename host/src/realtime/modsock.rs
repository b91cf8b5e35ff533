//! Websocket routes of mods: the upgrade a mod accepts or refuses, its connections (ids unguessable
//! and only the mod's own), and the calls into the mod for each message and on close.

use super::RealtimeLimits;

/// Every open connection on a mod's websocket route.
#[derive(Debug, Default)]
pub(crate) struct ModSockets {}

impl ModSockets {
    pub(crate) fn new(_limits: &RealtimeLimits) -> ModSockets {
        ModSockets {}
    }
}
