//! The SPT notifier's HTTP side, under `/notifierServer/` (the host's own paths: no mod claims them):
//!
//! - `GET /notifierServer/getwebsocket/<session>`: the session's websocket (`upgrade.rs` checks the
//!   handshake; `crate::realtime::hub` keeps one socket per session; `crate::realtime::socket` serves
//!   it). The session is the path's last segment, 24 hex digits, as the SPT client sends it.
//! - `/notifierServer/get/<session>`: the poll fallback. It answers what is queued for the session,
//!   or waits for a push (`RealtimeLimits::poll_wait`, 15 s) and then answers a `ping` notification,
//!   as SPT's server does: the messages as JSON text, one per line, uncompressed.

use super::answer::{Answer, Handled, PartsBody};
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

/// Answers a request under [`PREFIX`], counted under the pattern of the path it asked for.
pub(super) async fn answer(app: &App, request: Request<Incoming>) -> Handled {
    let path = request.uri().path().to_owned();
    if let Some(rest) = path.strip_prefix(SOCKET) {
        let route = Some(format!("{SOCKET}*"));
        return match open_socket(app, request, rest) {
            Ok(response) => Handled::switched(response, route),
            Err(answer) => Handled::identity(answer, route),
        };
    }
    if let Some(rest) = path.strip_prefix(POLL) {
        return Handled::identity(poll(app, rest).await, Some(format!("{POLL}*")));
    }
    Handled::identity(Answer::error(StatusCode::NOT_FOUND, "no route", &[("url", &path)]), Some(format!("{PREFIX}*")))
}

fn session_in_path(rest: &str) -> Result<SessionId, Answer> {
    SessionId::parse(rest).map_err(|_| {
        Answer::error(StatusCode::BAD_REQUEST, "the path must end with the session id: 24 hex digits", &[]).closing()
    })
}

fn open_socket(app: &App, request: Request<Incoming>, rest: &str) -> Result<Response<PartsBody>, Answer> {
    let session = session_in_path(rest)?;
    let handshake = upgrade::check(&request)?;
    let realtime = app.realtime.clone();
    let attached = realtime.hub.attach(session).map_err(|e| {
        let mut answer = Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[]);
        answer.headers.push((header::RETRY_AFTER, HeaderValue::from_static("5")));
        answer.closing()
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
