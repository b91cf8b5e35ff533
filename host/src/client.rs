//! A one-request HTTP/1.1 client on hyper, for the host's own tools: `modhost check` probing its
//! throwaway server, `modhost reload` asking the running one, `modhost probe` asking any. Each request
//! gets a new connection, so a tool never depends on keep-alive, and the whole exchange has a deadline
//! and a cap on the answer's size ([`send_limited`]; [`send`] caps at [`MAX_ANSWER_BYTES`]).

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::time::Duration;

/// The largest answer body [`send`] reads: past a mod's largest answer (256 MiB by default) with
/// room for zlib's worst case, so no answer the server may send is refused, and no server can make a
/// tool hold more.
pub const MAX_ANSWER_BYTES: usize = 512 << 20;

/// A server's answer: its status and its body as sent (still zlib when the server compressed it).
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
    /// The answer's headers.
    pub headers: hyper::HeaderMap,
    /// The body, whole.
    pub body: Bytes,
}

/// Why a request got no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing accepted the connection.
    #[error("no server answers on {addr}")]
    Connect {
        /// Where it tried.
        addr: SocketAddr,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The exchange failed midway (the server closed, or sent something that is not HTTP/1.1).
    #[error("the server on {addr} did not answer")]
    Http {
        /// The server's address.
        addr: SocketAddr,
        /// What hyper saw.
        source: hyper::Error,
    },
    /// The answer's body is larger than the caller accepts.
    #[error("the answer from {addr} is larger than {limit} bytes")]
    TooLarge {
        /// The server's address.
        addr: SocketAddr,
        /// The cap, in bytes.
        limit: usize,
    },
    /// No whole answer within the deadline.
    #[error("the server on {addr} did not answer within {} s", deadline.as_secs())]
    Timeout {
        /// The server's address.
        addr: SocketAddr,
        /// The deadline.
        deadline: Duration,
    },
}

/// Sends `request` to `addr` on a new connection and reads the whole answer within `deadline`, up to
/// [`MAX_ANSWER_BYTES`].
pub async fn send(addr: SocketAddr, request: Request<Full<Bytes>>, deadline: Duration) -> Result<Answer, ClientError> {
    send_limited(addr, request, deadline, MAX_ANSWER_BYTES).await
}

/// [`send`], refusing an answer whose body is over `max_body` bytes as soon as it passes them (the
/// bytes read so far are all it holds).
pub async fn send_limited(
    addr: SocketAddr,
    request: Request<Full<Bytes>>,
    deadline: Duration,
    max_body: usize,
) -> Result<Answer, ClientError> {
    let exchange = async {
        let stream =
            tokio::net::TcpStream::connect(addr).await.map_err(|source| ClientError::Connect { addr, source })?;
        let http = |source| ClientError::Http { addr, source };
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.map_err(http)?;
        // The connection's task ends when the answer is read and `sender` is dropped.
        let driver = tokio::spawn(connection);
        let response = sender.send_request(request).await.map_err(http)?;
        let status = response.status().as_u16();
        let (parts, mut incoming) = response.into_parts();
        // Frame by frame, so the cap holds before the bytes are held (`collect` would take them all).
        let mut body = bytes::BytesMut::new();
        while let Some(frame) = incoming.frame().await {
            if let Ok(data) = frame.map_err(http)?.into_data() {
                if body.len().saturating_add(data.len()) > max_body {
                    return Err(ClientError::TooLarge { addr, limit: max_body });
                }
                body.extend_from_slice(&data);
            }
        }
        drop(sender);
        driver.abort();
        Ok(Answer { status, headers: parts.headers, body: body.freeze() })
    };
    tokio::time::timeout(deadline, exchange).await.map_err(|_| ClientError::Timeout { addr, deadline })?
}
