//! The glue of the `realtime` export ([`crate::export!`] calls it): the mod's websocket routes
//! ([`crate::sockets`]) and timers ([`crate::timers`]), each dispatched to the part of the
//! [`Router`] that declared it.

use crate::Router;
use crate::wit::exports::modhost::plugin::realtime as wit;
use crate::wit::modhost::plugin::types as types;

/// What the mod serves in real time.
pub fn declare_realtime(router: &Router) -> wit::RealtimeDeclarations {
    wit::RealtimeDeclarations { sockets: router.sockets.declared(), timers: router.timers.declared() }
}

/// An upgrade on one of the mod's socket routes.
pub fn accept(router: &Router, connection: String, request: types::Request) -> Result<wit::AcceptVerdict, types::Error> {
    router.sockets.accept(connection, request)
}

/// A message on one of the mod's connections.
pub fn on_message(router: &Router, connection: String, message: wit::Message) -> Result<(), types::Error> {
    router.sockets.message(connection, message)
}

/// One of the mod's connections closed.
pub fn on_close(router: &Router, connection: String, code: u16, reason: String) -> Result<(), types::Error> {
    router.sockets.closed(connection, code, reason)
}

/// One of the mod's timers came due.
pub fn on_timer(router: &Router, timer: wit::Fired) -> Result<(), types::Error> {
    router.timers.fire(timer)
}
