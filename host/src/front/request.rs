//! Steps 3 and 6 of a request's path: the head's size (431 past [`MAX_HEADER_BYTES`]) and the body:
//! refused before reading when its `Content-Length` is over the cap (413 and close), otherwise
//! collected within the body deadline (408 and close; 400 when it cannot be read) under a server-wide
//! budget of bytes held, then inflated when it looks like zlib (400 when it looks like zlib and is
//! not; bounded: a bomb is refused with 413 after at most the cap).
//!
//! What a reader must not break: the budget is charged for what a body holds *inflated* (buffer
//! capacity, before the memory is filled), as one permit per request however many frames it came in;
//! a request that cannot get its share within the body deadline is answered 503 naming the budget.
//!
//! Framing is hyper's: a request with both `Content-Length` and `Transfer-Encoding` is read as chunked
//! and its connection closed after the answer (RFC 9112 §6.3).

use super::answer::Answer;
use crate::app::App;
use crate::sandbox::Request as ModRequest;
use crate::session::SessionId;
use bytes::BytesMut;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{HeaderMap, Request, StatusCode};
use modhost_wire as wire;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The most header bytes a request may carry (names, values and separators); more is 431. hyper's
/// read buffer is capped at the same size, so a larger head never sits in memory for long.
const MAX_HEADER_BYTES: usize = 64 << 10;
/// Request body bytes held in memory at once across all connections.
pub(crate) const REQUEST_BYTES_BUDGET: usize = 64 << 20;

/// A request's body, inflated, and its share of the server-wide budget: one permit for every byte
/// of memory the body holds (its inflated buffer's capacity), given back when the body is dropped,
/// after the mod call that reads it.
///
/// What is held while the request waits for its session's lock: the inflated body, charged. So a
/// thousand requests queued on one session hold at most the budget between them; the rest wait for
/// budget and are answered 503 naming it.
pub(super) struct Body {
    pub(super) bytes: Vec<u8>,
    pub(super) permit: Option<OwnedSemaphorePermit>,
}

/// The most a deflate stream inflates to per byte (a 258-byte match in about 2 bits, RFC 1951): an
/// upper bound on a zlib body's inflated size, charged before inflating and trimmed after.
const DEFLATE_MAX_RATIO: usize = 1032;

/// The request target a mod gets as `url`: the path and the query, as the client sent them.
pub(super) fn target(request: &Request<Incoming>) -> String {
    request.uri().path_and_query().map_or_else(|| request.uri().path().to_owned(), |pq| pq.as_str().to_owned())
}

/// The request a mod's export gets (`types.request`): the head's parts as the client sent them
/// (header values that are not UTF-8 with the bad bytes replaced), the route that matched, the
/// session, and the body (inflated).
pub(super) fn for_mod(
    method: &hyper::Method,
    url: String,
    route: String,
    session: Option<SessionId>,
    headers: &HeaderMap,
    body: Vec<u8>,
) -> ModRequest {
    let headers = headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    ModRequest {
        method: method.as_str().to_owned(),
        url,
        route,
        session: session.map(|s| s.as_str().to_owned()),
        headers,
        body,
    }
}

/// A header's value, when it is visible ASCII.
pub(super) fn header_str(request: &Request<Incoming>, name: impl header::AsHeaderName) -> Option<&str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// 431 when the head is over [`MAX_HEADER_BYTES`].
pub(super) fn check_head(headers: &HeaderMap) -> Result<(), Answer> {
    let header_bytes: usize = headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
    if header_bytes > MAX_HEADER_BYTES {
        let sentence = format!("the request headers are {header_bytes} bytes; the limit is {MAX_HEADER_BYTES}");
        return Err(Answer::error(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, &sentence, &[]).closing());
    }
    Ok(())
}

/// Reads the body of `request` under the caps, and answers its head with it.
pub(super) async fn read(app: &App, request: Request<Incoming>) -> Result<(hyper::http::request::Parts, Body), Answer> {
    let limit = app.config.front.body_bytes;
    let too_large =
        || Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &format!("the request body is over {limit} bytes"), &[]);
    let declared = header_str(&request, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        // The body is never read, so the connection cannot be reused: what follows is body bytes.
        return Err(too_large().closing());
    }
    let (parts, body) = request.into_parts();
    let body_deadline = app.config.http.body;
    let deadline = tokio::time::Instant::now() + body_deadline;
    let budget = Budget { semaphore: &app.body_budget, deadline };
    let raw = match tokio::time::timeout_at(deadline, collect(body, limit, &budget)).await {
        Ok(Ok(raw)) => raw,
        Ok(Err(CollectError::Budget)) => return Err(budget.exhausted()),
        Ok(Err(CollectError::TooLarge)) => return Err(too_large()),
        Ok(Err(CollectError::Read(e))) => {
            return Err(Answer::error(
                StatusCode::BAD_REQUEST,
                &format!("the request body could not be read: {e}"),
                &[],
            ));
        }
        Err(_) => {
            let sentence = format!("the request body did not arrive within {} ms", body_deadline.as_millis());
            return Err(Answer::error(StatusCode::REQUEST_TIMEOUT, &sentence, &[]).closing());
        }
    };
    if !wire::looks_like_zlib(&raw.bytes) {
        return Ok((parts, Body { bytes: raw.bytes.into(), permit: raw.permit }));
    }
    // The inflated body is charged before it exists: its bound first (waiting for budget like the raw
    // bytes did), then trimmed to what it turned out to take. The raw bytes go back once inflated.
    let bound = raw.bytes.len().saturating_mul(DEFLATE_MAX_RATIO).min(limit.saturating_add(1));
    let mut permit = budget.take(bound).await.ok_or_else(|| budget.exhausted())?;
    let inflated = match wire::inflate_body(&raw.bytes, limit) {
        Ok(Some(inflated)) => inflated,
        Ok(None) => raw.bytes.to_vec(),
        Err(e @ wire::InflateError::TooLarge { .. }) => {
            return Err(Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &e.to_string(), &[]));
        }
        Err(e) => {
            let raw_len = raw.bytes.len().to_string();
            return Err(Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[("bytes", &raw_len)]));
        }
    };
    drop(raw);
    let excess = permit.as_ref().map_or(0, OwnedSemaphorePermit::num_permits).saturating_sub(inflated.capacity());
    if let Some(permit) = permit.as_mut() {
        drop(permit.split(excess));
    }
    Ok((parts, Body { bytes: inflated, permit }))
}

/// The server-wide budget of body bytes, and how long this request may wait for its share.
struct Budget<'a> {
    semaphore: &'a Arc<Semaphore>,
    deadline: tokio::time::Instant,
}

impl Budget<'_> {
    /// `bytes` of budget, waiting for them until the deadline; `None` when they did not free up in
    /// time. No permit for no bytes.
    async fn take(&self, bytes: usize) -> Option<Option<OwnedSemaphorePermit>> {
        if bytes == 0 {
            return Some(None);
        }
        // More than the whole budget can never be granted: refused at once rather than at the deadline.
        let n = u32::try_from(bytes).ok().filter(|&n| n as usize <= REQUEST_BYTES_BUDGET)?;
        let wait = self.semaphore.clone().acquire_many_owned(n);
        match tokio::time::timeout_at(self.deadline, wait).await {
            Ok(Ok(permit)) => Some(Some(permit)),
            _ => None,
        }
    }

    /// Adds `bytes` to `held` (one permit, merged, however many frames a body comes in).
    async fn add(&self, held: &mut Option<OwnedSemaphorePermit>, bytes: usize) -> Result<(), CollectError> {
        let more = self.take(bytes).await.ok_or(CollectError::Budget)?;
        match (held.as_mut(), more) {
            (Some(held), Some(more)) => held.merge(more),
            (None, more) => *held = more,
            (Some(_), None) => {}
        }
        Ok(())
    }

    fn exhausted(&self) -> Answer {
        let sentence = format!(
            "the server's budget for request bodies ({} MiB, shared by every request) is in use; retry",
            REQUEST_BYTES_BUDGET >> 20
        );
        let mut answer = Answer::error(StatusCode::SERVICE_UNAVAILABLE, &sentence, &[]);
        answer.headers.push((header::RETRY_AFTER, HeaderValue::from_static("1")));
        answer.closing()
    }
}

/// A body as it arrived, and its charge: its buffer's capacity.
struct Raw {
    bytes: BytesMut,
    permit: Option<OwnedSemaphorePermit>,
}

enum CollectError {
    Budget,
    TooLarge,
    Read(Box<dyn std::error::Error + Send + Sync>),
}

/// Collects `body` (at most `limit` bytes) into one buffer, charging the budget for the buffer's
/// capacity as it grows, before the bytes are copied in. Not sized by `Content-Length` up front: a
/// client that declares 16 MiB and sends a byte would hold 16 MiB of the budget for the body deadline.
async fn collect<B>(body: B, limit: usize, budget: &Budget<'_>) -> Result<Raw, CollectError>
where
    B: hyper::body::Body<Data = bytes::Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = std::pin::pin!(Limited::new(body, limit));
    let mut raw = Raw { bytes: BytesMut::new(), permit: None };
    let mut charged = 0;
    while let Some(frame) = body.as_mut().frame().await {
        let frame = frame.map_err(|e| match e.downcast::<http_body_util::LengthLimitError>() {
            Ok(_) => CollectError::TooLarge,
            Err(e) => CollectError::Read(e),
        })?;
        let Some(data) = frame.data_ref() else { continue };
        raw.bytes.reserve(data.len());
        let capacity = raw.bytes.capacity();
        if capacity > charged {
            budget.add(&mut raw.permit, capacity - charged).await?;
            charged = capacity;
        }
        raw.bytes.extend_from_slice(data);
    }
    Ok(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use hyper::body::Frame;
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    /// A body that arrives one byte per frame, as a client's 1-byte chunks do.
    struct Trickle(usize);

    impl hyper::body::Body for Trickle {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            if self.0 == 0 {
                return Poll::Ready(None);
            }
            self.0 -= 1;
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
        }
    }

    fn budget(semaphore: &Arc<Semaphore>, wait: Duration) -> Budget<'_> {
        Budget { semaphore, deadline: tokio::time::Instant::now() + wait }
    }

    #[tokio::test]
    async fn a_body_in_one_byte_frames_holds_one_permit_for_its_buffer() {
        let semaphore = Arc::new(Semaphore::new(REQUEST_BYTES_BUDGET));
        let Ok(raw) = collect(Trickle(100_000), 1 << 20, &budget(&semaphore, Duration::from_secs(5))).await else {
            panic!("collecting failed")
        };
        assert_eq!(raw.bytes.len(), 100_000);
        let permit = raw.permit.expect("charged");
        assert_eq!(permit.num_permits(), raw.bytes.capacity(), "charged for the buffer it holds, in one permit");
        assert_eq!(semaphore.available_permits(), REQUEST_BYTES_BUDGET - raw.bytes.capacity());
        drop(permit);
        assert_eq!(semaphore.available_permits(), REQUEST_BYTES_BUDGET);
    }

    #[tokio::test]
    async fn a_body_that_does_not_fit_the_budget_is_refused_at_the_deadline() {
        let semaphore = Arc::new(Semaphore::new(REQUEST_BYTES_BUDGET));
        let _all = semaphore.clone().acquire_many_owned(u32::try_from(REQUEST_BYTES_BUDGET).unwrap()).await.unwrap();
        let refused = collect(Trickle(10), 1 << 20, &budget(&semaphore, Duration::from_millis(50))).await;
        assert!(matches!(refused, Err(CollectError::Budget)));
        // More than the whole budget is refused at once, not at the deadline.
        let started = std::time::Instant::now();
        assert!(budget(&semaphore, Duration::from_secs(60)).take(REQUEST_BYTES_BUDGET + 1).await.is_none());
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
