//! The HTTP/1.1 front: accept, serve each connection with hyper, and turn one request into one call of
//! the mod that owns its route.
//!
//! A request's path: session id checked (400 before any mod runs) → route (404) → body collected under
//! its cap (413) and inflated when it looks like zlib (400 when it looks like zlib and is not) → the
//! session's lock (503 after the timeout) → the mod's `handle` → the lock released → the body assembled,
//! db-reference chunks spliced from one db snapshot → zlib unless the client asked for identity.
//!
//! What a reader must not break: hyper's header timeout is silently off unless a timer is installed
//! (`TokioTimer` below); the session lock is released before the response is written, so a client that
//! reads slowly never holds up the next request of its session.

use crate::body_cache::{Key, MIN_CACHED_BYTES, Part};
use crate::perf::{Phase, Trace};
use crate::plugin::{CallError, Chunk, LoadedMod, Request as ModRequest, Response as ModResponse};
use crate::server::App;
use crate::session::{BadSessionId, SessionId};
use crate::wire;
use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Connections open at once; the next one is closed as soon as it is accepted.
const MAX_CONNECTIONS: usize = 1024;
/// Time open requests get to finish after shutdown begins.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Bodies larger than this are deflated on the blocking pool, not on an async worker.
const DEFLATE_INLINE_MAX: usize = 256 << 10;
/// The most header bytes a request may carry (names, values and separators); more is 431. hyper's
/// read buffer is capped at the same size, so a larger head never sits in memory for long.
const MAX_HEADER_BYTES: usize = 64 << 10;
/// Request body bytes held in memory at once across all connections.
pub(crate) const REQUEST_BYTES_BUDGET: usize = 64 << 20;
/// Requests one connection may carry; the last is answered `Connection: close`.
pub(crate) const MAX_REQUESTS_PER_CONNECTION: u32 = 512;

/// Connections accepted while the mods are still loading. Each waits (up to `wait`) for the server to
/// be ready and is then handed to [`serve`]; one still waiting at its deadline is answered 503 with
/// `Retry-After` and closed. So a client that connects during boot is never refused.
#[derive(Debug)]
pub(crate) struct EarlyAccept {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    ready: tokio::sync::watch::Sender<bool>,
    handed: tokio::sync::mpsc::Receiver<TcpStream>,
    task: tokio::task::JoinHandle<()>,
}

impl EarlyAccept {
    pub(crate) fn start(listener: Arc<TcpListener>, wait: Duration) -> EarlyAccept {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, ready_rx) = tokio::sync::watch::channel(false);
        let (hand, handed) = tokio::sync::mpsc::channel(MAX_CONNECTIONS);
        let pending = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let task = tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                    },
                    _ = &mut stopped => break,
                };
                let Ok(permit) = pending.clone().try_acquire_owned() else { continue };
                let (mut ready, hand) = (ready_rx.clone(), hand.clone());
                tokio::spawn(async move {
                    let _permit = permit;
                    let ready = matches!(tokio::time::timeout(wait, ready.wait_for(|r| *r)).await, Ok(Ok(_)));
                    match ready {
                        true => {
                            let _ = hand.send(stream).await;
                        }
                        false => {
                            let body = wire::error_body("the server is still loading its mods", &[]);
                            let head = format!(
                                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            );
                            let mut stream = stream;
                            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
                            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, &body).await;
                        }
                    }
                });
            }
        });
        EarlyAccept { stop: Some(stop), ready, handed, task }
    }

    /// Stops accepting and releases the waiting connections to whoever reads [`Self::handed`].
    async fn finish(mut self) -> tokio::sync::mpsc::Receiver<TcpStream> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
        let _ = self.ready.send(true);
        let (_, empty) = tokio::sync::mpsc::channel(1);
        std::mem::replace(&mut self.handed, empty)
    }
}

impl Drop for EarlyAccept {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts and serves connections until `shutdown` resolves, starting with those that arrived while
/// the mods were loading.
pub(crate) async fn serve(
    listener: Arc<TcpListener>,
    early: EarlyAccept,
    app: Arc<App>,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut handed = early.finish().await;
    let mut http = http1::Builder::new();
    let deadlines = app.config.http;
    // hyper's own header timeout (which runs from the start of the wait, idle time included) stays on
    // as a backstop behind `Guarded`'s idle and head deadlines.
    http.timer(TokioTimer::new())
        .header_read_timeout(deadlines.idle + deadlines.head)
        .keep_alive(true)
        .max_buf_size(64 << 10);
    let guard =
        crate::conn_guard::Deadlines { idle: deadlines.idle, head: deadlines.head, write_stall: deadlines.write_stall };
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    // Connection tasks are tracked so that `serve` returns only after every one has ended and dropped
    // its `App`: the store's lock is released when `run` returns, and a restart can take it at once.
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);

    loop {
        let stream = tokio::select! {
            Some(stream) = handed.recv() => stream,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors, usually: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        // Requests served on this connection: the last one allowed says `Connection: close`.
        let served = Arc::new(AtomicU32::new(0));
        let phase = Arc::new(crate::conn_guard::ConnPhase::new(app.perf.clone()));
        let stream = crate::conn_guard::Guarded::new(stream, phase.clone(), guard);
        let service = service_fn(move |request| {
            let (app, served, phase) = (app.clone(), served.clone(), phase.clone());
            async move {
                let head = phase.busy();
                let (mut response, route) = respond(&app, request, head).await;
                phase.answered(&route);
                phase.idle();
                if served.fetch_add(1, Ordering::Relaxed) + 1 >= MAX_REQUESTS_PER_CONNECTION {
                    // hyper closes after writing an answer that says so: the header never lies.
                    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, Infallible>(response)
            }
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tasks.spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
        // Reap finished connections so the set stays as small as the number open.
        while tasks.try_join_next().is_some() {}
    }

    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(DRAIN_TIMEOUT) => {
            tracing::warn!("shutdown: some requests did not finish in time");
            tasks.abort_all();
        }
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// One answer before framing: its body is a list of parts (literal bytes and db nodes), never
/// concatenated: identity answers send the parts as they are, compressed ones go through the cache.
struct Answer {
    status: StatusCode,
    headers: Vec<(HeaderName, HeaderValue)>,
    body: Vec<Part>,
}

impl Answer {
    fn error(status: StatusCode, sentence: &str, extra: &[(&str, &str)]) -> Answer {
        Answer {
            status,
            headers: Vec::new(),
            body: vec![Part::Literal(Bytes::from(wire::error_body(sentence, extra)))],
        }
    }
}

/// A response body made of shared buffers, sent one after the other with an exact `Content-Length`.
pub(crate) struct PartsBody {
    parts: std::collections::VecDeque<Bytes>,
    remaining: u64,
}

impl PartsBody {
    fn new(parts: impl IntoIterator<Item = Bytes>) -> PartsBody {
        let parts: std::collections::VecDeque<Bytes> = parts.into_iter().filter(|b| !b.is_empty()).collect();
        let remaining = parts.iter().map(|b| b.len() as u64).sum();
        PartsBody { parts, remaining }
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

/// Answers one request, counts it in `/metrics` (and `--perf`, with the head's time `head`), and
/// answers its route (`-` when none matched).
async fn respond(app: &App, request: Request<Incoming>, head: Option<Duration>) -> (Response<PartsBody>, String) {
    let started = Instant::now();
    let mut trace = app.perf.as_ref().map(|_| Trace::default());
    let mut served = Served::default();
    let path = request.uri().path();
    let (answer, identity) = if path == METRICS_PATH {
        served.route = Some(METRICS_PATH.to_owned());
        (metrics(app), true)
    } else if path == crate::status::PREFIX || path.starts_with("/modhost/") {
        (host_page(app, &request, &mut served).await, true)
    } else {
        let identity = wire::wants_identity(header_str(&request, header::ACCEPT_ENCODING));
        match answer(app, request, &mut served, trace.as_mut()).await {
            Ok(answer) | Err(answer) => (answer, identity),
        }
    };
    let status = answer.status.as_u16();
    let deflate = trace.as_ref().map(|_| Instant::now());
    let response = finish(app, answer, identity).await;
    let elapsed = started.elapsed();
    let route = served.route.unwrap_or_else(|| "-".to_owned());
    app.metrics.observe(&route, served.module.as_deref().unwrap_or("-"), status, elapsed);
    if let (Some(perf), Some(mut trace), Some(deflate)) = (&app.perf, trace, deflate) {
        trace.since(Phase::Deflate, deflate);
        if let Some(head) = head {
            trace.add(Phase::Head, head);
        }
        trace.add(Phase::Total, elapsed + head.unwrap_or_default());
        perf.record(&route, served.module.as_deref(), &trace);
    }
    (response, route)
}

/// The host's own path for the Prometheus exposition; no mod may claim it.
pub(crate) const METRICS_PATH: &str = "/metrics";

fn metrics(app: &App) -> Answer {
    Answer {
        status: StatusCode::OK,
        headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"))],
        body: vec![Part::Literal(Bytes::from(app.metrics.render()))],
    }
}

/// A page under `/modhost/` (`status.rs`), always uncompressed: browsers and tools read it as is.
async fn host_page(app: &App, request: &Request<Incoming>, served: &mut Served) -> Answer {
    let path = request.uri().path();
    let page = crate::status::answer(
        app,
        request.method().as_str(),
        path,
        request.headers().contains_key(crate::status::RELOAD_HEADER),
    )
    .await;
    // Known pages are counted under their path; anything else under one pattern, so a client cannot
    // grow the metrics table with made-up URLs.
    served.route = Some(if page.status == 404 { "/modhost/*".to_owned() } else { path.to_owned() });
    Answer {
        status: StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        headers: vec![
            (header::CONTENT_TYPE, HeaderValue::from_static(page.content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body: vec![Part::Literal(Bytes::from(page.body))],
    }
}

/// The session: `Cookie: PHPSESSID=<id>` first, else the `sessionid` header. A header that holds a
/// session but is not visible ASCII is refused like any malformed id, never treated as absent (which
/// would run the mod without the session's lock).
fn session_of(headers: &hyper::HeaderMap) -> Result<Option<SessionId>, BadSessionId> {
    for cookie in headers.get_all(header::COOKIE) {
        match cookie.to_str() {
            Ok(text) => {
                if let Some(id) = wire::session_from_cookie(text) {
                    return SessionId::parse(id).map(Some);
                }
            }
            Err(_) if cookie.as_bytes().windows(10).any(|w| w == b"PHPSESSID=") => return Err(BadSessionId),
            Err(_) => {}
        }
    }
    match headers.get("sessionid") {
        Some(value) => SessionId::parse(value.to_str().map_err(|_| BadSessionId)?).map(Some),
        None => Ok(None),
    }
}

fn header_str<'a>(request: &'a Request<Incoming>, name: impl header::AsHeaderName) -> Option<&'a str> {
    request.headers().get(name).and_then(|v| v.to_str().ok())
}

/// What a request turned out to be, for `/metrics` and `--perf`: its route and the mod that ran.
#[derive(Default)]
struct Served {
    route: Option<String>,
    module: Option<String>,
}

async fn answer(
    app: &App,
    request: Request<Incoming>,
    served: &mut Served,
    mut trace: Option<&mut Trace>,
) -> Result<Answer, Answer> {
    // `--perf` only: the current phase's start; without it no clock is read.
    let mut clock = trace.as_ref().map(|_| Instant::now());
    fn lap(trace: &mut Option<&mut Trace>, clock: &mut Option<Instant>, phase: Phase) {
        if let (Some(trace), Some(start)) = (trace.as_deref_mut(), clock.as_mut()) {
            *start = trace.since(phase, *start);
        }
    }
    let url =
        request.uri().path_and_query().map_or_else(|| request.uri().path().to_owned(), |pq| pq.as_str().to_owned());

    let header_bytes: usize = request.headers().iter().map(|(n, v)| n.as_str().len() + v.len() + 4).sum();
    if header_bytes > MAX_HEADER_BYTES {
        let sentence = format!("the request headers are {header_bytes} bytes; the limit is {MAX_HEADER_BYTES}");
        let mut answer = Answer::error(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, &sentence, &[]);
        answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
        return Err(answer);
    }
    let session =
        session_of(request.headers()).map_err(|e| Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[]))?;

    // The request keeps this generation to its end: a reload that lands meanwhile serves the next one.
    let generation = app.generation();
    let found = generation
        .routes
        .find(&url)
        .ok_or_else(|| Answer::error(StatusCode::NOT_FOUND, "no route", &[("url", &url)]))?;
    let (route, module) = (found.route.to_owned(), found.value.clone());
    served.route = Some(route.clone());
    lap(&mut trace, &mut clock, Phase::Route);

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
    // one when many uploads arrive at once; the body deadline bounds the wait. Released with `_held`.
    let mut _held = Vec::new();
    let collect = async {
        let mut body = std::pin::pin!(Limited::new(body, limit));
        let mut raw = bytes::BytesMut::new();
        while let Some(frame) = body.as_mut().frame().await {
            let frame = frame?;
            if let Some(data) = frame.data_ref() {
                let permits = u32::try_from(data.len()).unwrap_or(u32::MAX);
                if permits > 0 {
                    _held.push(app.body_budget.clone().acquire_many_owned(permits).await?);
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
    let body = match wire::inflate_body(&raw, limit) {
        Ok(Some(inflated)) => inflated,
        Ok(None) => raw.to_vec(),
        Err(e @ wire::InflateError::TooLarge { .. }) => {
            return Err(Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &e.to_string(), &[]));
        }
        Err(e) => {
            return Err(Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[("bytes", &raw.len().to_string())]));
        }
    };

    lap(&mut trace, &mut clock, Phase::Inflate);

    let headers = parts
        .headers
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let mod_request = ModRequest {
        method: parts.method.as_str().to_owned(),
        url,
        route,
        session: session.map(|s| s.as_str().to_owned()),
        headers,
        body,
    };

    let guard = match session {
        Some(id) => Some(app.sessions.lock(id, app.config.session_lock_timeout).await.map_err(|e| {
            Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[("session", id.as_str())])
        })?),
        None => None,
    };
    lap(&mut trace, &mut clock, Phase::LockWait);
    served.module = Some(module.id().to_owned());
    let result = module.handle(mod_request, trace.as_deref_mut()).await;
    drop(guard);
    if let Some(start) = clock.as_mut() {
        *start = Instant::now();
    }

    let response = result.map_err(|e| mod_failed(module.id(), &e))?;
    let answer = assemble(&generation.db, &module, response);
    lap(&mut trace, &mut clock, Phase::Assemble);
    answer
}

fn mod_failed(id: &str, error: &CallError) -> Answer {
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
fn assemble(db: &crate::db::Db, module: &LoadedMod, response: ModResponse) -> Result<Answer, Answer> {
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
    let mut headers = Vec::with_capacity(response.headers.len());
    for (name, value) in response.headers {
        let name =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad(format!("`{name}` is not a header name")))?;
        if matches!(name, header::CONTENT_LENGTH | header::TRANSFER_ENCODING | header::CONNECTION) {
            return Err(bad(format!("the host owns the `{name}` header")));
        }
        let value =
            HeaderValue::from_str(&value).map_err(|_| bad(format!("the value of `{name}` is not a header value")))?;
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

async fn finish(app: &App, answer: Answer, identity: bool) -> Response<PartsBody> {
    let Answer { status, headers, body } = answer;
    let body = if identity {
        PartsBody::new(body.iter().map(Part::bytes))
    } else {
        match compress(app, body).await {
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

/// The zlib form of an answer: from the cache when the same parts were compressed before (a clone of
/// the cached buffer), else compressed now, off the async workers when large, and cached if large.
async fn compress(app: &App, parts: Vec<Part>) -> Result<Bytes, tokio::task::JoinError> {
    let total: usize = parts.iter().map(|p| p.bytes().len()).sum();
    if total < MIN_CACHED_BYTES {
        let bytes: Vec<Bytes> = parts.iter().map(Part::bytes).collect();
        return Ok(Bytes::from(wire::deflate_parts(&bytes)));
    }
    let key = Key::of(&parts);
    if let Some(hit) = app.body_cache.get(&key) {
        return Ok(hit);
    }
    let bytes: Vec<Bytes> = parts.iter().map(Part::bytes).collect();
    let zlib = if total <= DEFLATE_INLINE_MAX {
        Bytes::from(wire::deflate_parts(&bytes))
    } else {
        Bytes::from(tokio::task::spawn_blocking(move || wire::deflate_parts(&bytes)).await?)
    };
    app.body_cache.insert(key, zlib.clone());
    Ok(zlib)
}
