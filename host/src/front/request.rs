//! Steps 3 and 6 of a request's path: the head's size (431 past [`MAX_HEADER_BYTES`]) and the body:
//! refused before reading when its `Content-Length` is over the cap (413 and close), otherwise
//! collected within the body deadline (408 and close; 400 when it cannot be read) under a server-wide
//! budget of bytes held, then inflated when it looks like zlib (400 when it looks like zlib and is
//! not; bounded: a bomb is refused with 413 after at most the cap).
//!
//! Framing is hyper's: a request with both `Content-Length` and `Transfer-Encoding` is read as chunked
//! and its connection closed after the answer (RFC 9112 §6.3).

use super::answer::Answer;
use crate::app::App;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{HeaderMap, Request, StatusCode};
use modhost_wire as wire;
use tokio::sync::OwnedSemaphorePermit;

/// The most header bytes a request may carry (names, values and separators); more is 431. hyper's
/// read buffer is capped at the same size, so a larger head never sits in memory for long.
const MAX_HEADER_BYTES: usize = 64 << 10;
/// Request body bytes held in memory at once across all connections.
pub(crate) const REQUEST_BYTES_BUDGET: usize = 64 << 20;

/// A request's body, inflated, and its share of the server-wide budget: the permits go back when the
/// body is dropped, after the mod call that reads it.
pub(super) struct Body {
    pub(super) bytes: Vec<u8>,
    pub(super) permits: Vec<OwnedSemaphorePermit>,
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
        let mut answer = Answer::error(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, &sentence, &[]);
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        return Err(answer);
    }
    Ok(())
}

/// Reads the body of `request` under the caps, and answers its head with it.
pub(super) async fn read(app: &App, request: Request<Incoming>) -> Result<(hyper::http::request::Parts, Body), Answer> {
    let limit = app.config.limits.body_bytes;
    let too_large =
        || Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &format!("the request body is over {limit} bytes"), &[]);
    let declared = header_str(&request, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        // The body is never read, so the connection cannot be reused: what follows is body bytes.
        let mut answer = too_large();
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        return Err(answer);
    }
    let (parts, body) = request.into_parts();
    let body_deadline = app.config.http.body;
    // Every body byte held in memory takes a permit from the server-wide budget (64 MiB), waiting for
    // one when many uploads arrive at once; the body deadline bounds the wait. Released with [`Body`].
    let mut held = Vec::new();
    let collect = async {
        let mut body = std::pin::pin!(Limited::new(body, limit));
        let mut raw = bytes::BytesMut::new();
        while let Some(frame) = body.as_mut().frame().await {
            let frame = frame?;
            if let Some(data) = frame.data_ref() {
                let permits = u32::try_from(data.len()).unwrap_or(u32::MAX);
                if permits > 0 {
                    held.push(app.body_budget.clone().acquire_many_owned(permits).await?);
                }
                raw.extend_from_slice(data);
            }
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(raw.freeze())
    };
    let collected = tokio::time::timeout(body_deadline, collect).await.map_err(|_| {
        let sentence = format!("the request body did not arrive within {} ms", body_deadline.as_millis());
        let mut answer = Answer::error(StatusCode::REQUEST_TIMEOUT, &sentence, &[]);
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        answer
    })?;
    let raw = collected.map_err(|e| {
        if e.is::<http_body_util::LengthLimitError>() {
            too_large()
        } else {
            Answer::error(StatusCode::BAD_REQUEST, &format!("the request body could not be read: {e}"), &[])
        }
    })?;
    let bytes = match wire::inflate_body(&raw, limit) {
        Ok(Some(inflated)) => inflated,
        Ok(None) => raw.to_vec(),
        Err(e @ wire::InflateError::TooLarge { .. }) => {
            return Err(Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &e.to_string(), &[]));
        }
        Err(e) => {
            return Err(Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[("bytes", &raw.len().to_string())]));
        }
    };
    Ok((parts, Body { bytes, permits: held }))
}
