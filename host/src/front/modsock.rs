//! Websocket routes of mods, the HTTP side: an upgrade on a path a mod declared as a socket route
//! (`realtime.declare-realtime`, the generation's `sockets` table) asks the mod to accept or refuse,
//! then serves the connection ([`serve`]: each message to the mod's `on-message`, and `on-close` once
//! at the end), registered in `crate::realtime::modsock` (ids, caps, who may send).
//!
//! The order, each step refusing before the next costs anything: the socket route (404 when none),
//! the handshake (`upgrade.rs`: 400), a browser's `Origin` (`origin.rs`: 403 unless the server's
//! own), the request head and session id (as for any request:
//! `request.rs`, `session.rs`), the caps (503, the mod is not called), then `accept` under the
//! session's lock (`session.rs`), as `handle` runs, with the request a handler gets. A refusal
//! is the mod's own answer (checked as a handler's answer is); a failed `accept` is answered as a
//! failed `handle` is. Every answer but the `101` closes the connection: the client sent upgrade
//! headers and expects no further HTTP on it.
//!
//! What a reader must not break: once the mod accepted, it hears `on-close` whatever follows,
//! including an upgrade that never completes (the client reset the connection before the `101`
//! reached it: 1006), as the mod may have set something up for the connection in `accept`.

use super::answer::{self, Answer, Handled, PartsBody};
use super::{origin, request, session, upgrade};
use crate::app::App;
use crate::generation::{Generation, SocketOwner};
use crate::realtime::modsock::{ModSockets, Ticket};
use crate::realtime::socket::{self, Outbox};
use crate::sandbox::{AcceptVerdict, CallError, Chain, LoadedMod, SocketMessage, Step};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::Message;

/// Answers an upgrade request outside the host's own paths: the `101` of an accepted connection, or
/// the answer that refuses it, counted under the socket route (`-` when none matched).
pub(super) async fn answer(app: &App, request: Request<Incoming>) -> Handled {
    let url = request::target(&request);
    // The upgrade keeps this generation until its `accept` returns; the connection then holds only
    // its mod (a reload closes it: `realtime/modsock.rs`).
    let generation = app.generation();
    let Some(found) = generation.sockets.find(&url) else {
        let answer = Answer::error(StatusCode::NOT_FOUND, "no websocket route", &[("url", &url)]);
        return Handled::identity(answer.closing(), None);
    };
    let (socket_route, owner) = (found.route.to_owned(), found.value.clone());
    let counted = Some(socket_route.clone());
    match accept(app, request, url, &generation, socket_route, owner).await {
        Ok(response) => Handled::switched(response, counted),
        Err(answer) => Handled::identity(answer.closing(), counted),
    }
}

/// The steps after the socket route: the handshake, the head and the session, the caps, the
/// session's lock and `accept`. `Err` is the refusal (closed by the caller).
async fn accept(
    app: &App,
    request: Request<Incoming>,
    url: String,
    generation: &Generation,
    socket_route: String,
    (module, index): SocketOwner,
) -> Result<Response<PartsBody>, Answer> {
    let handshake = upgrade::check(&request)?;
    origin::check_socket(request.headers())?;
    request::check_head(request.headers())?;
    let session = session::of_request(request.headers())?;

    let realtime = app.realtime.clone();
    let ticket = ModSockets::reserve(&realtime, &module.context().id, index).map_err(|e| {
        let mut answer = Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[]).closing();
        answer.headers.push((header::RETRY_AFTER, HeaderValue::from_static("5")));
        answer
    })?;

    // An upgrade carries no body (RFC 6455 4.1: a GET); none is read.
    let mod_request =
        request::for_mod(request.method(), url, socket_route.clone(), session, request.headers(), Vec::new());
    let guard = session::lock(app, session).await?;
    let chain = Chain::root(&module.context().id, Step::Socket(socket_route.clone()), session);
    let verdict = module.accept(ticket.id(), &mod_request, chain).await;
    drop(guard);
    match verdict {
        Err(e) => Err(answer::mod_failed(module.id(), &e)),
        Ok(AcceptVerdict::Refuse(response)) => {
            Err(answer::assemble(&generation.db, &module, response).unwrap_or_else(|bad| bad))
        }
        Ok(AcceptVerdict::Accept) => {
            let outbox = Outbox::new(socket::MAX_MESSAGE);
            ticket.open(generation.number, outbox.clone());
            let timing =
                socket::Timing { ping_idle: app.config.realtime.ping_idle, pong_wait: app.config.realtime.pong_wait };
            let stopping = realtime.stopping();
            Ok(upgrade::switch(request, handshake, &realtime, move |upgraded, slot| async move {
                // The connection's slot under the connection limit, held as long as the socket is open.
                let _slot = slot;
                serve(upgraded, ticket, module, socket_route, outbox, timing, stopping).await;
            }))
        }
    }
}

/// What a mod's connection does with a message its client sent: `on-message`, one at a time (the
/// socket awaits each before it reads the next), under the mod's call deadline.
struct ModReader {
    module: Arc<LoadedMod>,
    id: String,
    route: String,
}

impl socket::Reader for ModReader {
    async fn message(&mut self, message: Message) -> Result<(), (u16, String)> {
        let message = match message {
            Message::Text(text) => SocketMessage::Text(text.as_str().to_owned()),
            Message::Binary(bytes) => SocketMessage::Binary(bytes.to_vec()),
            Message::Ping(_) | Message::Pong(_) | Message::Close(_) | Message::Frame(_) => return Ok(()),
        };
        let chain = Chain::root(&self.module.context().id, Step::Socket(self.route.clone()), None);
        match self.module.on_message(&self.id, &message, chain).await {
            Ok(()) => Ok(()),
            Err(e) => {
                tracing::warn!("mod {} failed on a message of connection {}: {e}", self.module.id(), self.id);
                // The reason goes into a close frame (at most 123 bytes): the details are in the log.
                Err(match e {
                    CallError::Busy(_) => (1013, "the server is busy: try again later".to_owned()),
                    _ => (1011, "the mod failed on a message".to_owned()),
                })
            }
        }
    }
}

/// Serves connection `ticket` of `module` (accepted on socket route `route`) until it ends, then
/// calls `on-close` unless the mod closed it itself. An upgrade that never completed ends at once,
/// with 1006, and is told to the mod the same way. The ticket is released when this returns.
///
/// `on-message` and `on-close` run without a session lock (their chain has no session): a
/// connection outlives any request, and holding its session's lock for it would stall that player's
/// requests behind a socket.
async fn serve<S>(
    upgraded: Result<S, hyper::Error>,
    ticket: Ticket,
    module: Arc<LoadedMod>,
    route: String,
    outbox: Arc<Outbox>,
    timing: socket::Timing,
    stopping: tokio::sync::watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let ended = match upgraded {
        Ok(io) => {
            let reader = ModReader { module: module.clone(), id: ticket.id().to_owned(), route: route.clone() };
            socket::run(io, &outbox, reader, timing, stopping).await
        }
        Err(_) => socket::Ended { code: 1006, reason: "the connection ended before its upgrade completed".to_owned() },
    };
    tracing::debug!("mod {} connection {} ended: {} {}", module.id(), ticket.id(), ended.code, ended.reason);
    if ticket.forget() {
        let chain = Chain::root(&module.context().id, Step::Socket(route), None);
        if let Err(e) = module.on_close(ticket.id(), ended.code, &ended.reason, chain).await {
            tracing::warn!("mod {} failed in on-close of connection {}: {e}", module.id(), ticket.id());
        }
    }
    drop(ticket);
}
