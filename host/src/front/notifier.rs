//! The SPT notifier's HTTP side, under `/notifierServer/` (the host's own paths: no mod claims them):
//!
//! - `GET /notifierServer/getwebsocket/<session>`: the session's websocket (`upgrade.rs` checks the
//!   handshake, `origin.rs` a browser's `Origin`; `crate::realtime::hub` keeps one socket per
//!   session; `crate::realtime::socket` serves it). The session is the path's last segment, 24 hex
//!   digits, as the SPT client sends it.
//! - `/notifierServer/get/<session>`: the poll fallback. It answers what is queued for the session,
//!   or waits for a push (`RealtimeLimits::poll_wait`, 15 s) and then answers a `ping` notification,
//!   as SPT's server does: the messages as JSON text, one per line, uncompressed. A poll another
//!   origin's page sent is refused before it takes anything (`origin.rs`).
//!
//! What a reader must not break: the socket is attached to the hub only once its upgrade completed,
//! by its task, and detached by a guard ([`Registered`]) however the task ends; the upgrade is
//! answered on the hub's room alone ([`crate::realtime::hub::Hub::room_for`]). An upgrade the client
//! resets before its `101` then leaves nothing behind.

use super::answer::{Answer, Handled, PartsBody};
use super::{origin, upgrade};
use crate::app::App;
use crate::realtime::hub::{Attached, TooManySockets};
use crate::realtime::{Realtime, socket};
use crate::session::SessionId;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;

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
        let answer = match origin::check_poll(request.headers()) {
            Ok(()) => poll(app, rest).await,
            Err(refused) => refused,
        };
        return Handled::identity(answer, Some(format!("{POLL}*")));
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
    origin::check_socket(request.headers())?;
    let realtime = app.realtime.clone();
    realtime.hub.room_for(session).map_err(|e| {
        let mut answer = Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[]);
        answer.headers.push((header::RETRY_AFTER, HeaderValue::from_static("5")));
        answer.closing()
    })?;
    let timing = socket::Timing { ping_idle: app.config.realtime.ping_idle, pong_wait: app.config.realtime.pong_wait };
    let stopping = realtime.stopping();
    let hub = realtime.clone();
    Ok(upgrade::switch(request, handshake, &realtime, move |upgraded, slot| async move {
        let _slot = slot;
        // An upgrade that never completed registered nothing: nothing to undo.
        let Ok(io) = upgraded else { return };
        let ended = match Registered::attach(hub, session) {
            Ok(registered) => socket::run(io, &registered.attached.outbox, socket::Ignore, timing, stopping).await,
            Err(full) => {
                // Others' upgrades completed first and took the last places: said in a close frame,
                // as the 101 is already sent.
                let outbox = socket::Outbox::new(0);
                outbox.close(1013, &full.to_string());
                socket::run(io, &outbox, socket::Ignore, timing, stopping).await
            }
        };
        tracing::debug!("notifier socket of {} ended: {} {}", session.as_str(), ended.code, ended.reason);
    }))
}

/// A socket attached to the hub, detached when this is dropped: when its task returns, and also
/// when the task is dropped unfinished (a stopping server aborts the socket tasks it waited for).
struct Registered {
    realtime: Arc<Realtime>,
    session: SessionId,
    attached: Attached,
}

impl Registered {
    fn attach(realtime: Arc<Realtime>, session: SessionId) -> Result<Registered, TooManySockets> {
        let attached = realtime.hub.attach(session)?;
        // On a store several hosts share, what waits for the session in the store comes too.
        if let Some(relay) = &realtime.relay {
            relay.attached(session);
        }
        Ok(Registered { realtime, session, attached })
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.realtime.hub.detach(self.session, self.attached.id);
    }
}

async fn poll(app: &App, rest: &str) -> Answer {
    // SPT's client appends `?last_id=…`; the query is not part of the path here.
    let session = match session_in_path(rest) {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let (realtime, wait) = (&app.realtime, app.config.realtime.poll_wait);
    let messages = match &realtime.relay {
        Some(relay) => relay.poll(&realtime.hub, session, wait).await,
        None => realtime.hub.poll(session, wait).await,
    };
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
