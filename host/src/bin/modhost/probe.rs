//! `modhost probe`: one request as the SPT client sends it (a zlib body, a session cookie), the answer
//! inflated and printed as JSON: what curl cannot read (SPT's backend has `aowlprobe` for this).
//!
//! Exit codes: 0 for a 2xx answer, 1 for any other answer (or an argument that does not validate),
//! 2 when no answer came (nothing listens, the deadline passed, the exchange broke midway). The status
//! goes to stderr, the body alone to stdout, so `modhost probe … | jq` works.

use anyhow::{Context as _, bail};
use bytes::Bytes;
use http_body_util::Full;
use hyper::header;
use std::io::Write as _;
use std::net::{SocketAddr, ToSocketAddrs as _};
use std::time::{Duration, Instant};

/// The largest answer read, compressed or inflated: a mod's answer is capped at 256 MiB by default, so
/// anything larger is not a modhost answer worth printing.
const MAX_ANSWER: usize = 256 << 20;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The URL: `http://HOST[:PORT]/PATH[?QUERY]` (port 80 when absent; only plain http).
    url: String,
    /// The request body, JSON (as given; sent zlib-compressed, as the game client does). With it, the
    /// method defaults to POST.
    #[arg(long, value_name = "JSON")]
    body: Option<String>,
    /// The session, sent as `Cookie: PHPSESSID=ID`: 24 hex digits.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// The method (default: POST with --body, GET without).
    #[arg(long, value_name = "M")]
    method: Option<String>,
    /// Print the answer's (inflated) bytes as they came, not re-indented.
    #[arg(long)]
    raw: bool,
    /// Seconds to wait for the whole answer, connecting included.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    timeout: u64,
}

/// What the arguments mean, validated, with no I/O (the host name is resolved later).
#[derive(Debug)]
struct Probe {
    host: String,
    port: u16,
    /// `HOST[:PORT]` as written: the `Host` header, which the server checks (421 for another name).
    authority: String,
    request: hyper::Request<Full<Bytes>>,
    raw: bool,
    deadline: Duration,
}

impl Args {
    fn into_probe(self) -> anyhow::Result<Probe> {
        // `host:port/path` would parse as a scheme `host`: say what is missing instead.
        anyhow::ensure!(self.url.contains("://"), "`{}` has no scheme: write http://HOST:PORT/PATH", self.url);
        let uri: hyper::Uri = self.url.parse().with_context(|| format!("`{}` is not a URL", self.url))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => {
                bail!("`{}`: only http:// URLs are supported (modhost serves plain HTTP), not {other}://", self.url)
            }
            None => bail!("`{}` has no scheme: write http://HOST:PORT/PATH", self.url),
        }
        let authority = uri.authority().with_context(|| format!("`{}` names no host", self.url))?;
        anyhow::ensure!(!authority.as_str().contains('@'), "`{}`: a user in the URL is not supported", self.url);
        let (host, port) = (authority.host().to_owned(), authority.port_u16().unwrap_or(80));
        let target = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        anyhow::ensure!(self.timeout > 0, "--timeout must be at least 1 second");
        let body = match &self.body {
            Some(text) => {
                // Checked before sending: a typo should fail here, saying where, not as the server's 400.
                serde_json::from_str::<serde_json::Value>(text)
                    .map_err(|e| anyhow::anyhow!("--body is not JSON: {e}"))?;
                modhost::wire::deflate(text.as_bytes())
            }
            None => Vec::new(),
        };
        let method = match &self.method {
            Some(m) => hyper::Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                .map_err(|_| anyhow::anyhow!("--method `{m}` is not an HTTP method"))?,
            None if self.body.is_some() => hyper::Method::POST,
            None => hyper::Method::GET,
        };
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(target)
            .header(header::HOST, authority.as_str())
            .header(header::ACCEPT_ENCODING, "deflate")
            .header(header::CONNECTION, "close");
        if let Some(session) = &self.session {
            let id = modhost::SessionId::parse(session)
                .map_err(|_| anyhow::anyhow!("--session `{session}`: a session id is exactly 24 hex digits"))?;
            request = request.header(header::COOKIE, format!("PHPSESSID={}", id.as_str()));
        }
        if self.body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request.body(Full::new(Bytes::from(body))).context("building the request")?;
        Ok(Probe {
            host,
            port,
            authority: authority.as_str().to_owned(),
            request,
            raw: self.raw,
            deadline: Duration::from_secs(self.timeout),
        })
    }
}

/// Runs the probe; answers the exit code (0, 1 or 2, see the module doc).
pub(crate) fn run(args: Args) -> anyhow::Result<i32> {
    let probe = args.into_probe()?;
    let addr: SocketAddr = match (probe.host.trim_start_matches('[').trim_end_matches(']'), probe.port)
        .to_socket_addrs()
        .map(|mut all| all.next())
    {
        Ok(Some(addr)) => addr,
        Ok(None) | Err(_) => {
            eprintln!("error: cannot resolve the host `{}`", probe.host);
            return Ok(2);
        }
    };
    let started = Instant::now();
    let sent =
        crate::runtime()?.block_on(modhost::client::send_limited(addr, probe.request, probe.deadline, MAX_ANSWER));
    let answer = match sent {
        Ok(answer) => answer,
        Err(e @ modhost::client::ClientError::TooLarge { .. }) => {
            eprintln!("error: {e}: refused (a modhost answer is at most {} MiB)", MAX_ANSWER >> 20);
            return Ok(1);
        }
        Err(e) => {
            eprintln!("error: no answer from {}: {:#}", probe.authority, anyhow::Error::from(e));
            return Ok(2);
        }
    };
    let took = started.elapsed();
    let reason = hyper::StatusCode::from_u16(answer.status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    let (text, how) = match modhost::wire::inflate_body(&answer.body, MAX_ANSWER) {
        Ok(Some(inflated)) => {
            let how = format!("{} bytes zlib, {} inflated", answer.body.len(), inflated.len());
            (inflated, how)
        }
        Ok(None) => (answer.body.to_vec(), format!("{} bytes, not compressed", answer.body.len())),
        Err(e) => {
            eprintln!("{} {reason} ({} bytes, {:.1} ms)", answer.status, answer.body.len(), took.as_secs_f64() * 1e3);
            eprintln!("error: the answer does not inflate: {e}");
            return Ok(1);
        }
    };
    eprintln!("{} {reason} ({how}, {:.1} ms)", answer.status, took.as_secs_f64() * 1e3);
    let mut out = std::io::stdout().lock();
    match serde_json::from_slice::<serde_json::Value>(&text) {
        Ok(_) if probe.raw => out.write_all(&text)?,
        Ok(json) => serde_json::to_writer_pretty(&mut out, &json)?,
        Err(_) if text.is_empty() => eprintln!("note: the answer's body is empty"),
        Err(_) => {
            eprintln!("note: the answer is not JSON; printed as it came");
            out.write_all(&text)?;
        }
    }
    if !text.is_empty() {
        writeln!(out)?;
    }
    // `main` exits with the code without running destructors.
    out.flush()?;
    Ok(if (200..300).contains(&answer.status) { 0 } else { 1 })
}
