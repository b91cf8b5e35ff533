//! Step 9 of a request's path: an answer before framing. A mod's error becomes a status
//! ([`mod_failed`]), a mod's response is checked and its db references spliced ([`assemble`]), and
//! the answer is framed with its parts as they are or compressed ([`finish`], `compress.rs`).
//!
//! What a reader must not break: an answer's body is a list of parts (literal bytes and db nodes),
//! never concatenated; its size is checked after each part, because a few bytes of references can
//! splice in gigabytes of db text; a 1xx status, a framing header, or more headers than the caps
//! ([`MAX_ANSWER_HEADERS`], [`MAX_ANSWER_HEADER_BYTES`]) from a mod is the mod's error; a mod's text
//! reaches the log cut and escaped ([`quoted`]).

use crate::app::App;
use crate::body_cache::Part;
use crate::sandbox::{CallError, Chunk, LoadedMod, Response as ModResponse};
use bytes::Bytes;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Response, StatusCode};
use modhost_wire as wire;
use std::convert::Infallible;

/// One answer before framing: its body is a list of parts (literal bytes and db nodes), never
/// concatenated: identity answers send the parts as they are, compressed ones go through the cache.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    pub(super) body: Vec<Part>,
}

impl Answer {
    pub(super) fn error(status: StatusCode, sentence: &str, extra: &[(&str, &str)]) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: vec![Part::Literal(Bytes::from(wire::error_body(sentence, extra)))],
        }
    }

    /// This answer with `Connection: close` (once): the connection ends after it, because what
    /// follows on it cannot be read as a request (an unread body, an upgrade's stream).
    pub(super) fn closing(mut self) -> Answer {
        if !self.headers.iter().any(|(name, _)| name == header::CONNECTION) {
            self.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        }
        self
    }
}

/// What a request was handled as, the one thing every step that answers returns to
/// `dispatch::respond` (the host's pages, `notifier.rs`, `modsock.rs`, a mod's route): the reply, and
/// what it was served for, which `/metrics` and `--perf` count it under.
pub(super) struct Handled {
    pub(super) reply: Reply,
    /// The route pattern it is counted under; `None` when it matched none (counted as `-`).
    pub(super) route: Option<String>,
    /// The mod whose chain ran for it, if one did.
    pub(super) module: Option<String>,
}

/// A handled request's reply.
pub(super) enum Reply {
    /// An answer still to frame ([`finish`]); `identity`: its parts are sent as they are, never
    /// compressed (the host's own answers, and a client that asked for identity).
    Answer { answer: Answer, identity: bool },
    /// The `101` of a websocket that opened: sent as it is.
    Switched(Response<PartsBody>),
}

impl Handled {
    /// `answer`, sent uncompressed, counted under `route`; no mod ran.
    pub(super) fn identity(answer: Answer, route: Option<String>) -> Handled {
        Handled { reply: Reply::Answer { answer, identity: true }, route, module: None }
    }

    /// A websocket that opened on `route`.
    pub(super) fn switched(response: Response<PartsBody>, route: Option<String>) -> Handled {
        Handled { reply: Reply::Switched(response), route, module: None }
    }
}

/// A response body made of shared buffers, sent one after the other with an exact `Content-Length`.
pub(super) struct PartsBody {
    parts: std::collections::VecDeque<Bytes>,
    remaining: u64,
}

impl PartsBody {
    fn new(parts: impl IntoIterator<Item = Bytes>) -> PartsBody {
        let parts: std::collections::VecDeque<Bytes> = parts.into_iter().filter(|b| !b.is_empty()).collect();
        let remaining = parts.iter().map(|b| b.len() as u64).sum();
        PartsBody { parts, remaining }
    }

    /// No body (a `101`'s).
    pub(super) fn empty() -> PartsBody {
        PartsBody::new([])
    }
}

impl hyper::body::Body for PartsBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        let next = self.parts.pop_front();
        if let Some(bytes) = &next {
            self.remaining -= bytes.len() as u64;
        }
        std::task::Poll::Ready(next.map(|b| Ok(hyper::body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        hyper::body::SizeHint::with_exact(self.remaining)
    }
}

pub(super) fn mod_failed(id: &str, error: &CallError) -> Answer {
    let reason = error.to_string();
    match error {
        CallError::Mod { status, .. } if *status < 500 => tracing::debug!("mod {id} refused a request: {reason}"),
        _ => tracing::warn!("mod {id} failed: {reason}"),
    }
    if let CallError::Mod { status, .. } = error
        && *status < 500
    {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST);
        return Answer::error(status, "the mod refused the request", &[("mod", id), ("reason", &reason)]);
    }
    let unavailable = match error {
        CallError::Busy(crate::sandbox::Busy::Store(_)) => Some("the store is unavailable"),
        CallError::Busy(_) => Some("the server is busy"),
        CallError::Quarantined(_) => Some("the mod is quarantined until it is loaded again"),
        _ => None,
    };
    if let Some(sentence) = unavailable {
        return Answer::error(StatusCode::SERVICE_UNAVAILABLE, sentence, &[("mod", id), ("reason", &reason)]);
    }
    Answer::error(StatusCode::INTERNAL_SERVER_ERROR, "the mod failed", &[("mod", id), ("reason", &reason)])
}

/// Builds the answer from a mod's response: checks its status and headers, splices db references.
/// The most headers a mod's answer may carry; more is the mod's error (500 naming it). A client
/// parses heads with limits of its own (hyper's client: 100 headers), so more would not reach it.
const MAX_ANSWER_HEADERS: usize = 100;
/// The most bytes a mod's answer headers may take (names, values and separators), as for a request.
const MAX_ANSWER_HEADER_BYTES: usize = 64 << 10;
/// The longest piece of a mod's text quoted in the log and in the 500 body.
const QUOTED_MAX: usize = 64;

/// A mod-supplied string fit for the log: control characters escaped, at most [`QUOTED_MAX`]
/// characters kept, so a mod can neither flood the log nor forge its lines.
fn quoted(text: &str) -> String {
    let mut cut: String = text.chars().take(QUOTED_MAX).collect::<String>().escape_debug().to_string();
    if text.chars().nth(QUOTED_MAX).is_some() {
        cut.push('…');
    }
    format!("`{cut}`")
}

pub(super) fn assemble(db: &modhost_db::Db, module: &LoadedMod, response: ModResponse) -> Result<Answer, Answer> {
    let (id, limit) = (module.id(), module.limits().response_bytes);
    let bad = |reason: String| {
        tracing::warn!("mod {id} answered badly: {reason}");
        Answer::error(StatusCode::INTERNAL_SERVER_ERROR, "the mod answered badly", &[("mod", id), ("reason", &reason)])
    };
    // 1xx answers are interim in HTTP/1.1 (101 even switches protocols): a handler answers 200-999.
    let status = StatusCode::from_u16(response.status)
        .ok()
        .filter(|s| !s.is_informational())
        .ok_or_else(|| bad(format!("status {} is not a final HTTP status (200-999)", response.status)))?;
    // Capped before any is converted: `http`'s header map panics past 32 768 entries ("size overflows
    // MAX_SIZE"), which killed the connection task and left the client with nothing.
    let count = response.headers.len();
    if count > MAX_ANSWER_HEADERS {
        return Err(bad(format!("{count} headers; the limit is {MAX_ANSWER_HEADERS}")));
    }
    let bytes = response.headers.iter().fold(0usize, |sum, (n, v)| sum.saturating_add(n.len() + v.len() + 4));
    if bytes > MAX_ANSWER_HEADER_BYTES {
        return Err(bad(format!("{bytes} bytes of headers; the limit is {MAX_ANSWER_HEADER_BYTES}")));
    }
    let mut headers = Vec::with_capacity(count);
    for (name, value) in response.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| bad(format!("{} is not a header name", quoted(&name))))?;
        if matches!(name, header::CONTENT_LENGTH | header::TRANSFER_ENCODING | header::CONNECTION) {
            return Err(bad(format!("the host owns the `{name}` header")));
        }
        let value = HeaderValue::from_str(&value)
            .map_err(|_| bad(format!("the value of {} is not a header value", quoted(name.as_str()))))?;
        headers.push((name, value));
    }

    let mut body = Vec::with_capacity(response.body.len());
    let mut total = 0usize;
    let mut snapshot = None;
    for chunk in response.body {
        let part = match chunk {
            Chunk::Bytes(bytes) => Part::Literal(Bytes::from(bytes)),
            Chunk::Db(path) => {
                // One snapshot for the whole response: its parts never mix two versions of the db.
                let snapshot = snapshot.get_or_insert_with(|| db.snapshot());
                Part::Node(snapshot.node(&path).map_err(|e| bad(format!("db reference: {e}")))?)
            }
        };
        // Checked after each part: a few bytes of references can splice in gigabytes of db text.
        total += part.bytes().len();
        if total > limit {
            return Err(bad(format!("the answer is over the limit of {limit} bytes")));
        }
        body.push(part);
    }
    Ok(Answer { status, headers, body })
}

pub(super) async fn finish(app: &App, answer: Answer, identity: bool) -> Response<PartsBody> {
    let Answer { status, headers, body } = answer;
    let body = if identity {
        PartsBody::new(body.iter().map(Part::bytes))
    } else {
        match super::compress::compress(app, body).await {
            Ok(zlib) => PartsBody::new([zlib]),
            Err(e) => {
                tracing::error!("deflating an answer failed: {e}");
                let sentence = wire::error_body("the answer could not be compressed", &[]);
                let mut response = Response::new(PartsBody::new([Bytes::from(sentence)]));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                return response;
            }
        }
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let map = response.headers_mut();
    if !headers.iter().any(|(name, _)| name == header::CONTENT_TYPE) {
        map.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    // `append`, not `insert`: a mod may send a header more than once (`set-cookie`).
    for (name, value) in headers {
        map.append(name, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mods_text_reaches_the_log_cut_and_escaped() {
        assert_eq!(quoted("x-ok"), "`x-ok`");
        assert_eq!(quoted("a\nINFO forged line"), "`a\\nINFO forged line`");
        let long = quoted(&"n".repeat(100_000));
        assert!(long.len() < 80 && long.ends_with("…`"), "{long}");
    }
}
