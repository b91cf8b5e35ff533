//! A one-request HTTP/1.1 client on hyper, for the host's own tools: `modhost check` probing its
//! throwaway server, `modhost reload` asking the running one. Each request gets a new connection, so a
//! tool never depends on keep-alive, and the whole exchange has a deadline.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::time::Duration;

/// A server's answer: its status and its body as sent (still zlib when the server compressed it).
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub status: u16,
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
    /// No whole answer within the deadline.
    #[error("the server on {addr} did not answer within {} s", deadline.as_secs())]
    Timeout {
        /// The server's address.
        addr: SocketAddr,
        /// The deadline.
        deadline: Duration,
    },
}

/// Sends `request` to `addr` on a new connection and reads the whole answer within `deadline`.
pub async fn send(addr: SocketAddr, request: Request<Full<Bytes>>, deadline: Duration) -> Result<Answer, ClientError> {
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
        let body = response.into_body().collect().await.map_err(http)?.to_bytes();
        drop(sender);
        driver.abort();
        Ok(Answer { status, body })
    };
    tokio::time::timeout(deadline, exchange).await.map_err(|_| ClientError::Timeout { addr, deadline })?
}
