//! The websocket upgrade (RFC 6455, section 4.2): the checks on the client's handshake, the `101`
//! answer, and the hand-over of the connection to a socket task that keeps its connection slot.
//!
//! Every failed requirement is a 400 naming it, and the connection closes: `GET` over HTTP/1.1,
//! `Upgrade: websocket`, `Connection: upgrade`, `Sec-WebSocket-Version: 13`, and a
//! `Sec-WebSocket-Key` that is 16 bytes in base64.
//!
//! The origin of a browser's upgrade is checked apart (`origin.rs`), by the callers, after these.
//!
//! The slot: `listen.rs` gives each request that asks for an upgrade its connection's permit
//! ([`Slot`], a request extension). The socket task takes it, so an open socket counts against the
//! connection limit for as long as it is open, not only while its handshake is answered.

use super::answer::{Answer, PartsBody};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OwnedSemaphorePermit;

/// A connection's slot under the connection limit, for the socket its upgrade opens.
#[derive(Clone, Debug)]
pub(super) struct Slot(pub(super) Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Slot {
    /// The permit, taken from the connection (which then ends without giving it back).
    fn take(&self) -> Option<OwnedSemaphorePermit> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// Whether the request asks for a websocket (`Upgrade: websocket`), right or wrong.
pub(super) fn asks_for_websocket(headers: &hyper::HeaderMap) -> bool {
    headers.get_all(header::UPGRADE).iter().any(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"))
}

/// A handshake that passed its checks: the `Sec-WebSocket-Accept` it is answered with.
#[derive(Debug)]
pub(super) struct Handshake {
    accept: HeaderValue,
}

/// Checks the handshake; `Err` is the 400 that names what is missing or wrong.
pub(super) fn check(request: &Request<Incoming>) -> Result<Handshake, Answer> {
    let refuse = |sentence: &str| Answer::error(StatusCode::BAD_REQUEST, sentence, &[]).closing();
    let headers = request.headers();
    if request.method() != hyper::Method::GET || request.version() != hyper::Version::HTTP_11 {
        return Err(refuse("a websocket opens with GET over HTTP/1.1"));
    }
    if !asks_for_websocket(headers) {
        return Err(refuse("a websocket needs `Upgrade: websocket`"));
    }
    let connection_upgrade = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"));
    if !connection_upgrade {
        return Err(refuse("a websocket needs `Connection: upgrade`"));
    }
    if headers.get(header::SEC_WEBSOCKET_VERSION).map(HeaderValue::as_bytes) != Some(b"13") {
        return Err(refuse("a websocket needs `Sec-WebSocket-Version: 13` (RFC 6455)"));
    }
    let key = headers.get(header::SEC_WEBSOCKET_KEY).map(HeaderValue::as_bytes).unwrap_or_default();
    if !is_base64_of_16_bytes(key) {
        return Err(refuse("`Sec-WebSocket-Key` must be 16 bytes in base64 (24 characters)"));
    }
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key);
    let accept = HeaderValue::from_str(&accept).map_err(|_| refuse("the key could not be answered"))?;
    Ok(Handshake { accept })
}

/// 16 bytes in base64 are 22 characters of the alphabet and `==`: checked by hand, because the one
/// thing needed of a base64 crate here is this shape (the key itself is only hashed).
fn is_base64_of_16_bytes(key: &[u8]) -> bool {
    let alphabet = |c: &u8| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/';
    key.len() == 24 && key[..22].iter().all(alphabet) && &key[22..] == b"=="
}

/// The connection a `101` upgraded, or why it never was (the client reset it before the answer
/// was written, or the server stopped first).
pub(super) type Upgraded = Result<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>, hyper::Error>;

/// Answers `101 Switching Protocols` and starts `serve` once hyper has written the answer, as one of
/// `realtime`'s socket tasks (so a stopping server waits for it). `serve` gets the upgraded
/// connection, or the error that ended it first, and the connection's slot under the connection
/// limit. It is called on both paths, so whatever its caller set up for the socket is undone on
/// both: an upgrade the client resets mid-way must not leave a registration behind (issue 29: the
/// notifier's sessions leaked, a mod's connection never heard `on-close`).
pub(super) fn switch<F, Fut>(
    mut request: Request<Incoming>,
    handshake: Handshake,
    realtime: &crate::realtime::Realtime,
    serve: F,
) -> Response<PartsBody>
where
    F: FnOnce(Upgraded, Option<OwnedSemaphorePermit>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let slot = request.extensions().get::<Slot>().and_then(Slot::take);
    let upgrade = hyper::upgrade::on(&mut request);
    realtime.spawn(async move {
        let upgraded = upgrade.await.map(hyper_util::rt::TokioIo::new);
        if let Err(e) = &upgraded {
            tracing::debug!("a websocket upgrade did not complete: {e}");
        }
        serve(upgraded, slot).await;
    });
    let mut response = Response::new(PartsBody::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let map = response.headers_mut();
    map.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    map.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    map.insert(header::SEC_WEBSOCKET_ACCEPT, handshake.accept);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_16_bytes_in_base64() {
        assert!(is_base64_of_16_bytes(b"dGhlIHNhbXBsZSBub25jZQ=="));
        for bad in [&b"dGhlIHNhbXBsZSBub25jZQ="[..], b"dGhlIHNhbXBsZSBub25jZQ!=", b"", b"dGhlIHNhbXBsZSBub25jZQAA"] {
            assert!(!is_base64_of_16_bytes(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
