//! A small HTTP/1.1 client over a raw socket, so tests control every byte on the wire (zlib bodies,
//! odd headers, keep-alive) and see every byte of the answer. Every read has a deadline.

use anyhow::{Context as _, bail};
use flate2::{Compression, read::ZlibDecoder, write::ZlibEncoder};
use std::io::{Read as _, Write as _};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// No single request in a test may take longer than this.
pub const IO_DEADLINE: Duration = Duration::from_secs(30);

/// zlib-compresses `bytes` as the SPT client does.
pub fn zlib(bytes: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(bytes).expect("writing to a Vec");
    e.finish().expect("finishing into a Vec")
}

/// Inflates a zlib body.
pub fn unzlib(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    ZlibDecoder::new(bytes).read_to_end(&mut out).context("inflating the answer")?;
    Ok(out)
}

/// One answer.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// Headers, names lower case.
    pub headers: Vec<(String, String)>,
    /// The body as sent (compressed or not).
    pub raw: Vec<u8>,
    /// When the answer's first byte arrived (when the read began, if it was already buffered).
    pub first_byte: Instant,
}

impl Reply {
    /// The first header with this (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body inflated if it is zlib, else as sent.
    pub fn body(&self) -> Vec<u8> {
        if modhost::wire::looks_like_zlib(&self.raw)
            && let Ok(inflated) = unzlib(&self.raw)
        {
            return inflated;
        }
        self.raw.clone()
    }

    /// The body (inflated) as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body()).into_owned()
    }

    /// The body (inflated) as JSON; panics with the text when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        let text = self.text();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("answer {} is not JSON ({e}): {text}", self.status))
    }
}

/// A request to send.
#[derive(Debug, Clone, Default)]
pub struct Call {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Call {
    /// `GET path`.
    pub fn get(path: &str) -> Call {
        Call { method: "GET".into(), path: path.into(), ..Call::default() }
    }

    /// `POST path` with this body sent zlib-compressed, as the game client does.
    pub fn post(path: &str, body: &[u8]) -> Call {
        Call { method: "POST".into(), path: path.into(), body: zlib(body), ..Call::default() }
    }

    /// `POST path` with this body sent as is.
    pub fn post_raw(path: &str, body: &[u8]) -> Call {
        Call { method: "POST".into(), path: path.into(), body: body.to_vec(), ..Call::default() }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Call {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the session as the game client does (`Cookie: PHPSESSID=`).
    pub fn session(self, id: &str) -> Call {
        self.header("Cookie", &format!("PHPSESSID={id}"))
    }

    /// Asks for an uncompressed answer.
    pub fn identity(self) -> Call {
        self.header("Accept-Encoding", "identity")
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n", self.method, self.path);
        for (n, v) in &self.headers {
            out.push_str(&format!("{n}: {v}\r\n"));
        }
        if !self.body.is_empty() || self.method == "POST" {
            out.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// One keep-alive connection.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl Client {
    /// Connects to `addr`.
    pub async fn connect(addr: SocketAddr) -> anyhow::Result<Client> {
        let stream =
            tokio::time::timeout(IO_DEADLINE, TcpStream::connect(addr)).await.context("connect timed out")??;
        Ok(Client { stream, buffer: Vec::new() })
    }

    /// Wraps a stream already connected (and perhaps already written to).
    pub fn from_stream(stream: TcpStream) -> Client {
        Client { stream, buffer: Vec::new() }
    }

    /// Sends one request and reads its answer.
    pub async fn send(&mut self, call: &Call) -> anyhow::Result<Reply> {
        if let Err(e) = self.stream.write_all(&call.to_bytes()).await {
            // A server may answer before it has read the whole body (a 413 for a body over its cap) and
            // close; the answer is then already here to read, as HTTP/1.1 clients are told to (RFC 9112
            // §9.5). Only when there is none is the write's error the outcome.
            if matches!(e.kind(), std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset) {
                return self.read_reply().await.map_err(|_| e.into());
            }
            return Err(e.into());
        }
        self.read_reply().await
    }

    /// Sends raw bytes (for malformed requests).
    pub async fn send_bytes(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(self.stream.write_all(bytes).await?)
    }

    /// Reads one answer (headers, then `Content-Length` bytes).
    pub async fn read_reply(&mut self) -> anyhow::Result<Reply> {
        tokio::time::timeout(IO_DEADLINE, self.read_reply_inner()).await.context("no answer within the deadline")?
    }

    async fn read_reply_inner(&mut self) -> anyhow::Result<Reply> {
        let mut first_byte = Instant::now();
        if self.buffer.is_empty() {
            self.fill().await?;
            first_byte = Instant::now();
        }
        let head_end = loop {
            if let Some(i) = self.buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            self.fill().await?;
        };
        let head = String::from_utf8_lossy(&self.buffer[..head_end]).into_owned();
        self.buffer.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default();
        let status: u16 = status_line.split(' ').nth(1).and_then(|s| s.parse().ok()).context("bad status line")?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let length: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .context("the answer has no Content-Length")?;
        self.buffer.reserve(length.saturating_sub(self.buffer.len()));
        while self.buffer.len() < length {
            self.fill().await?;
        }
        // The body is taken whole (no copy); only bytes past it (a pipelined answer) are moved.
        let rest = self.buffer.split_off(length);
        let raw = std::mem::replace(&mut self.buffer, rest);
        Ok(Reply { status, headers, raw, first_byte })
    }

    /// Reads what the socket has into the buffer, straight into its spare capacity.
    async fn fill(&mut self) -> anyhow::Result<()> {
        if self.buffer.capacity() - self.buffer.len() < 16 * 1024 {
            self.buffer.reserve(64 * 1024);
        }
        let n = self.stream.read_buf(&mut self.buffer).await?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        Ok(())
    }
}

/// Sends one request on a new connection.
pub async fn send(addr: SocketAddr, call: &Call) -> anyhow::Result<Reply> {
    Client::connect(addr).await?.send(call).await
}
