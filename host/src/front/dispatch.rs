//! Steps 5, 7 and 8 of a request's path, and the order of all of them: [`respond`] refuses a `Host`
//! that does not name this machine (`host.rs`), then sends `/metrics`, `/modhost/…` and the
//! notifier's `/notifierServer/…` (`notifier.rs`) to the host's own answers, a websocket upgrade on
//! any other path to the mod that declared it a socket route (`modsock.rs`), and everything else to
//! the mod that owns the route, with the request checked and its body read (`request.rs`), under its
//! session's lock; then it counts the request in `/metrics` and `--perf`.
//!
//! What a reader must not break: a request takes the serving generation once, at route lookup, and
//! keeps it to its end (db references included); the session lock is held around the route's whole
//! chain (its hooks, the owner, what they emit and call, `chain.rs`) and released when it returns,
//! before the answer is written, so a client that reads slowly never holds up its session's next
//! request.

use super::answer::{self, Answer, PartsBody, assemble};
use super::{request, session};
use crate::app::App;
use crate::body_cache::Part;
use crate::perf::{Phase, Trace};
use crate::sandbox::Request as ModRequest;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use modhost_routes::{HostPath, METRICS, host_path};
use modhost_wire as wire;
use std::time::{Duration, Instant};

/// Answers one request, counts it in `/metrics` (and `--perf`, with the head's time `head`), and
/// answers its route (`-` when none matched).
pub(super) async fn respond(
    app: &App,
    request: Request<Incoming>,
    head: Option<Duration>,
) -> (Response<PartsBody>, String) {
    let started = Instant::now();
    let mut trace = app.perf.as_ref().map(|_| Trace::default());
    let mut served = Served::default();
    let path = request.uri().path();
    // Before anything reads the request, the host's own pages included: a Host that does not name
    // this machine is a page rebinding its name to us (`host.rs`).
    let misdirected = super::host::check(
        request.version(),
        request.uri(),
        request.headers(),
        &app.config.allowed_hosts,
        app.config.addr,
    );
    let (answer, identity) = match (misdirected, host_path(path)) {
        (Err(answer), _) => (answer, true),
        (Ok(()), Some(HostPath::Metrics)) => {
            served.route = Some(METRICS.to_owned());
            (metrics(app), true)
        }
        (Ok(()), Some(HostPath::Pages)) => (host_page(app, request, &mut served).await, true),
        (Ok(()), Some(HostPath::Notifier)) => {
            let mut route = String::new();
            let reply = super::notifier::answer(app, request, &mut route).await;
            served.route = Some(route);
            match reply {
                super::notifier::Reply::Switched(response) => return switched(app, response, served, started),
                super::notifier::Reply::Answer(answer, identity) => (answer, identity),
            }
        }
        (Ok(()), None) if super::upgrade::asks_for_websocket(request.headers()) => {
            let mut route = String::new();
            let reply = super::modsock::answer(app, request, &mut route).await;
            served.route = Some(route);
            match reply {
                Ok(response) => return switched(app, response, served, started),
                Err(answer) => (answer, true),
            }
        }
        (Ok(()), None) => {
            let identity = wire::wants_identity(request::header_str(&request, header::ACCEPT_ENCODING));
            match call_mod(app, request, &mut served, trace.as_mut()).await {
                Ok(answer) | Err(answer) => (answer, identity),
            }
        }
    };
    let status = answer.status.as_u16();
    let deflate = trace.as_ref().map(|_| Instant::now());
    let response = answer::finish(app, answer, identity).await;
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

/// A `101` that opened a websocket: counted like any answer, never compressed.
fn switched(
    app: &App,
    response: Response<PartsBody>,
    served: Served,
    started: Instant,
) -> (Response<PartsBody>, String) {
    let route = served.route.unwrap_or_else(|| "-".to_owned());
    app.metrics.observe(&route, served.module.as_deref().unwrap_or("-"), 101, started.elapsed());
    (response, route)
}

fn metrics(app: &App) -> Answer {
    Answer {
        status: StatusCode::OK,
        headers: vec![(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4"))],
        body: vec![Part::Literal(Bytes::from({
            let mut text = app.metrics.render();
            app.realtime.hub.render_metrics(&mut text);
            text
        }))],
    }
}

/// A page under `/modhost/` (`status.rs`), always uncompressed: browsers and tools read it as is.
/// The config editor's `POST /modhost/config/<id>` (`config_edit.rs`) is the one host page with a
/// body: read like a mod's (`request.rs`: its deadline and the server-wide budget), and held to a
/// config file's cap of 1 MiB.
async fn host_page(app: &App, request: Request<Incoming>, served: &mut Served) -> Answer {
    let path = request.uri().path().to_owned();
    let method = request.method().as_str().to_owned();
    let reload_header = request.headers().contains_key(crate::status::RELOAD_HEADER);
    // Known pages are counted under their path; anything else (and every mod's config edit) under one
    // pattern, so a client cannot grow the metrics table with made-up URLs.
    let counted = |status: u16| match status {
        404 => "/modhost/*".to_owned(),
        _ if path.starts_with(crate::config_edit::PREFIX) => format!("{}*", crate::config_edit::PREFIX),
        _ => path.clone(),
    };
    let page = if !crate::config_edit::is_config_post(&method, &path) {
        crate::status::answer(app, &method, &path, reload_header).await
    } else if !reload_header {
        crate::config_edit::refuse_without_header()
    } else {
        let declared = request::header_str(&request, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > crate::config_edit::MAX_BODY as u64) {
            served.route = Some(counted(413));
            let sentence = format!("a config is at most {} bytes", crate::config_edit::MAX_BODY);
            let mut answer = Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &sentence, &[]);
            // The body is never read, so the connection cannot be reused.
            answer.headers.push((header::CONNECTION, HeaderValue::from_static("close")));
            return answer;
        }
        match request::read(app, request).await {
            Ok((_, body)) => crate::config_edit::apply(app, &path, &body.bytes).await,
            Err(answer) => {
                served.route = Some(counted(answer.status.as_u16()));
                return answer;
            }
        }
    };
    served.route = Some(counted(page.status));
    Answer {
        status: StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        headers: vec![
            (header::CONTENT_TYPE, HeaderValue::from_static(page.content_type)),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        body: vec![Part::Literal(Bytes::from(page.body))],
    }
}

/// What a request turned out to be, for `/metrics` and `--perf`: its route and the mod that ran.
#[derive(Default)]
struct Served {
    route: Option<String>,
    module: Option<String>,
}

async fn call_mod(
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

    request::check_head(request.headers())?;
    let session = session::session_of(request.headers())
        .map_err(|e| Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[]))?;

    // The request keeps this generation to its end: a reload that lands meanwhile serves the next one.
    let generation = app.generation();
    let found = generation
        .routes
        .find(&url)
        .ok_or_else(|| Answer::error(StatusCode::NOT_FOUND, "no route", &[("url", &url)]))?;
    let (route, module) = (found.route.to_owned(), found.value.clone());
    served.route = Some(route.clone());
    lap(&mut trace, &mut clock, Phase::Route);

    // `permit` is this body's share of the server-wide budget (its inflated size): held through the
    // lock wait and until the mod call has returned, because the body is held that long.
    let (parts, request::Body { bytes: body, permit }) = request::read(app, request).await?;

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
    let result = super::chain::run(&generation, &module, mod_request, session, trace.as_deref_mut()).await;
    drop(guard);
    drop(permit);
    if let Some(start) = clock.as_mut() {
        *start = Instant::now();
    }

    let outcome = result?;
    let answer = assemble(&generation.db, &outcome.shaped_by, outcome.response);
    lap(&mut trace, &mut clock, Phase::Assemble);
    answer
}
