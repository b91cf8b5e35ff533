//! The SPT notifier's HTTP side, under `/notifierServer/` (the host's own paths: no mod claims them):
//!
//! - `GET /notifierServer/getwebsocket/<session>`: the session's websocket (`upgrade.rs` checks the
//!   handshake; `crate::realtime::hub` keeps one socket per session; `crate::realtime::socket` serves
//!   it). The session is the path's last segment, 24 hex digits, as the SPT client sends it.
//! - `/notifierServer/get/<session>`: the poll fallback. It answers what is queued for the session,
//!   or waits for a push (`RealtimeLimits::poll_wait`, 15 s) and then answers a `ping` notification,
//!   as SPT's server does: the messages as JSON text, one per line, uncompressed.

use super::answer::{Answer, PartsBody};
use super::upgrade;
use crate::app::App;
use crate::realtime::socket;
use crate::session::SessionId;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};

/// Where the notifier's paths start.
pub(super) const PREFIX: &str = "/notifierServer/";
const SOCKET: &str = "/notifierServer/getwebsocket/";
const POLL: &str = "/notifierServer/get/";
/// What a poll answers when nothing came: SPT's default notification.
const PING: &str = r#"{"type":"ping","eventId":"ping"}"#;

/// What the notifier answered.
pub(super) enum Reply {
    /// The `101` of an opened socket.
    Switched(Response<PartsBody>),
    /// An ordinary answer; `identity`: sent uncompressed.
    Answer(Answer, bool),
}

/// Answers a request under [`PREFIX`]; `route` is set to the pattern it is counted under.
pub(super) async fn answer(app: &App, request: Request<Incoming>, route: &mut String) -> Reply {
    let path = request.uri().path().to_owned();
    if let Some(rest) = path.strip_prefix(SOCKET) {
        *route = format!("{SOCKET}*");
        return match open_socket(app, request, rest) {
            Ok(response) => Reply::Switched(response),
            Err(answer) => Reply::Answer(answer, true),
        };
    }
    if let Some(rest) = path.strip_prefix(POLL) {
        *route = format!("{POLL}*");
        return Reply::Answer(poll(app, rest).await, true);
    }
    *route = format!("{PREFIX}*");
    Reply::Answer(Answer::error(StatusCode::NOT_FOUND, "no route", &[("url", &path)]), true)
}

fn session_in_path(rest: &str) -> Result<SessionId, Answer> {
    SessionId::parse(rest).map_err(|_| {
        let mut answer =
            Answer::error(StatusCode::BAD_REQUEST, "the path must end with the session id: 24 hex digits", &[]);
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        answer
    })
}

fn open_socket(app: &App, request: Request<Incoming>, rest: &str) -> Result<Response<PartsBody>, Answer> {
    let session = session_in_path(rest)?;
    let handshake = upgrade::check(&request)?;
    let realtime = app.realtime.clone();
    let attached = realtime.hub.attach(session).map_err(|e| {
        let mut answer = Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[]);
        answer.headers.push((header::RETRY_AFTER, HeaderValue::from_static("5")));
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        answer
    })?;
    let timing = socket::Timing { ping_idle: app.config.realtime.ping_idle, pong_wait: app.config.realtime.pong_wait };
    let stopping = realtime.stopping();
    let hub = realtime.clone();
    Ok(upgrade::switch(request, handshake, &realtime, move |io, slot| async move {
        let _slot = slot;
        let ended = socket::run(io, &attached.outbox, socket::Ignore, timing, stopping).await;
        hub.hub.detach(session, attached.id);
        tracing::debug!("notifier socket of {} ended: {} {}", session.as_str(), ended.code, ended.reason);
    }))
}

async fn poll(app: &App, rest: &str) -> Answer {
    // SPT's client appends `?last_id=…`; the query is not part of the path here.
    let session = match session_in_path(rest) {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let messages = app.realtime.hub.poll(session, app.config.realtime.poll_wait).await;
    let body = if messages.is_empty() {
        Bytes::from_static(PING.as_bytes())
    } else {
        Bytes::from(messages.iter().map(|m| m.as_str()).collect::<Vec<_>>().join("\n"))
    };
    Answer {
        status: StatusCode::OK,
        headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body: vec![crate::body_cache::Part::Literal(body)],
    }
}
