//! Websocket routes: a mod accepts connections on its own routes, hears their messages, and sends on
//! them.

use crate::wit::exports::modhost::plugin::realtime as wit;
use crate::wit::modhost::plugin::types;

/// The socket routes a [`crate::Router`] declares.
#[derive(Default)]
pub(crate) struct SocketRoutes {}

impl SocketRoutes {
    pub(crate) fn declared(&self) -> Vec<types::Route> {
        Vec::new()
    }

    pub(crate) fn accept(&self, _connection: String, request: types::Request) -> Result<wit::AcceptVerdict, types::Error> {
        Err(types::Error::NotFound(format!("this mod has no socket route for `{}`", request.url)))
    }

    pub(crate) fn message(&self, connection: String, _message: wit::Message) -> Result<(), types::Error> {
        Err(types::Error::NotFound(format!("this mod has no connection `{connection}`")))
    }

    pub(crate) fn closed(&self, _connection: String, _code: u16, _reason: String) -> Result<(), types::Error> {
        Ok(())
    }
}
