//! Steps 5 and 8 of a request's path, and the order of all of them: [`respond`] refuses a `Host`
//! that does not name this machine (`host.rs`), then sends `/metrics`, `/modhost/…` and the
//! notifier's `/notifierServer/…` (`notifier.rs`) to the host's own answers, a websocket upgrade on
//! any other path to the mod that declared it a socket route (`modsock.rs`), and everything else to
//! the mod that owns the route ([`call_mod`]: the head and the session checked, the route found, the
//! body read (`request.rs`), the session's lock taken (`session.rs`), the chain run (`chain.rs`));
//! each returns what it handled (`answer::Handled`: the reply, the route and the mod it was served
//! for), which `respond` frames (compressed or not, `answer.rs`) and counts in `/metrics` and
//! `--perf`.
//!
//! What a reader must not break: a request takes the serving generation once, at route lookup, and
//! keeps it to its end (db references included); the session lock is held around the route's whole
//! chain (its hooks, the owner, what they emit and call, `chain.rs`) and released when it returns,
//! before the answer is written, so a client that reads slowly never holds up its session's next
//! request.

use super::answer::{self, Answer, Handled, PartsBody, Reply, assemble};
use super::{request, session};
use crate::app::App;
use crate::body_cache::Part;
use crate::perf::{Phase, Trace};
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
    let Handled { reply, route, module } = match (misdirected, host_path(path)) {
        (Err(answer), _) => Handled::identity(answer, None),
        (Ok(()), Some(HostPath::Metrics)) => Handled::identity(metrics(app), Some(METRICS.to_owned())),
        (Ok(()), Some(HostPath::Pages)) => host_page(app, request).await,
        (Ok(()), Some(HostPath::Notifier)) => super::notifier::answer(app, request).await,
        (Ok(()), None) if super::upgrade::asks_for_websocket(request.headers()) => {
            super::modsock::answer(app, request).await
        }
        (Ok(()), None) => call_mod(app, request, trace.as_mut()).await,
    };
    let route = route.unwrap_or_else(|| "-".to_owned());
    let module = module.as_deref();
    let (answer, identity) = match reply {
        Reply::Answer { answer, identity } => (answer, identity),
        // A `101` that opened a websocket: counted like any answer, never compressed.
        Reply::Switched(response) => {
            app.metrics.observe(&route, module.unwrap_or("-"), 101, started.elapsed());
            return (response, route);
        }
    };
    let status = answer.status.as_u16();
    let deflate = trace.as_ref().map(|_| Instant::now());
    let response = answer::finish(app, answer, identity).await;
    let elapsed = started.elapsed();
    app.metrics.observe(&route, module.unwrap_or("-"), status, elapsed);
    if let (Some(perf), Some(mut trace), Some(deflate)) = (&app.perf, trace, deflate) {
        trace.since(Phase::Deflate, deflate);
        if let Some(head) = head {
            trace.add(Phase::Head, head);
        }
        trace.add(Phase::Total, elapsed + head.unwrap_or_default());
        perf.record(&route, module, &trace);
    }
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
async fn host_page(app: &App, request: Request<Incoming>) -> Handled {
    let path = request.uri().path().to_owned();
    let method = request.method().as_str().to_owned();
    let reload_header = request.headers().contains_key(crate::status::RELOAD_HEADER);
    // Known pages are counted under their path; anything else (and every mod's config edit) under one
    // pattern, so a client cannot grow the metrics table with made-up URLs.
    let counted = |status: u16| {
        Some(match status {
            404 => "/modhost/*".to_owned(),
            _ if path.starts_with(crate::config_edit::PREFIX) => format!("{}*", crate::config_edit::PREFIX),
            _ if path.starts_with(crate::toggle::PREFIX) => format!("{}*", crate::toggle::PREFIX),
            _ => path.clone(),
        })
    };
    let page = if crate::toggle::is_toggle(&method, &path) {
        let confirmed = request.headers().contains_key(crate::toggle::CONFIRM_HEADER);
        crate::toggle::apply(app, &path, reload_header, confirmed).await
    } else if !crate::config_edit::is_config_post(&method, &path) {
        crate::status::answer(app, &method, &path, reload_header).await
    } else if !reload_header {
        crate::config_edit::refuse_without_header()
    } else {
        let declared = request::header_str(&request, header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > crate::config_edit::MAX_BODY as u64) {
            let sentence = format!("a config is at most {} bytes", crate::config_edit::MAX_BODY);
            // The body is never read, so the connection cannot be reused.
            let answer = Answer::error(StatusCode::PAYLOAD_TOO_LARGE, &sentence, &[]).closing();
            return Handled::identity(answer, counted(413));
        }
        match request::read(app, request).await {
            Ok((_, body)) => crate::config_edit::apply(app, &path, &body.bytes).await,
            Err(answer) => {
                let route = counted(answer.status.as_u16());
                return Handled::identity(answer, route);
            }
        }
    };
    let mut headers = vec![
        (header::CONTENT_TYPE, HeaderValue::from_static(page.content_type)),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    // No other page may frame these (the page's buttons reload and edit configs).
    headers.extend(super::origin::no_framing());
    let answer = Answer {
        status: StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        headers,
        body: vec![Part::Literal(Bytes::from(page.body))],
    };
    Handled::identity(answer, counted(page.status))
}

/// Steps 3 to 9 for a route a mod owns: the head, the session, the route, the body, the session's
/// lock, the chain, the answer. Every refusal along the way is answered as the client asked (zlib
/// unless it asked for identity), counted under the route once one matched.
async fn call_mod(app: &App, request: Request<Incoming>, mut trace: Option<&mut Trace>) -> Handled {
    let identity = wire::wants_identity(request::header_str(&request, header::ACCEPT_ENCODING));
    let handled = |answer, route, module| Handled { reply: Reply::Answer { answer, identity }, route, module };
    // `--perf` only: the current phase's start; without it no clock is read.
    let mut clock = trace.as_ref().map(|_| Instant::now());
    fn lap(trace: &mut Option<&mut Trace>, clock: &mut Option<Instant>, phase: Phase) {
        if let (Some(trace), Some(start)) = (trace.as_deref_mut(), clock.as_mut()) {
            *start = trace.since(phase, *start);
        }
    }
    let url = request::target(&request);

    // Steps 3 and 4: the head's size and the session.
    let session = match request::check_head(request.headers()).and_then(|()| session::of_request(request.headers())) {
        Ok(session) => session,
        Err(answer) => return handled(answer, None, None),
    };

    // Step 5. The request keeps this generation to its end: a reload that lands meanwhile serves the
    // next one.
    let generation = app.generation();
    let Some(found) = generation.routes.find(&url) else {
        return handled(Answer::error(StatusCode::NOT_FOUND, "no route", &[("url", &url)]), None, None);
    };
    let (route, module) = (found.route.to_owned(), found.value.clone());
    lap(&mut trace, &mut clock, Phase::Route);

    // Step 6. `permit` is this body's share of the server-wide budget (its inflated size): held
    // through the lock wait and until the mod call has returned, because the body is held that long.
    let (parts, request::Body { bytes: body, permit }) = match request::read(app, request).await {
        Ok(read) => read,
        Err(answer) => return handled(answer, Some(route), None),
    };
    lap(&mut trace, &mut clock, Phase::Inflate);
    let mod_request = request::for_mod(&parts.method, url, route.clone(), session, &parts.headers, body);

    // Step 7.
    let guard = match session::lock(app, session).await {
        Ok(guard) => guard,
        Err(answer) => return handled(answer, Some(route), None),
    };
    lap(&mut trace, &mut clock, Phase::LockWait);

    // Step 8, the lock and the body released as soon as it returns.
    let result = super::chain::run(
        &generation,
        &module,
        mod_request,
        session,
        app.config.front.body_bytes,
        trace.as_deref_mut(),
    )
    .await;
    drop(guard);
    drop(permit);
    if let Some(start) = clock.as_mut() {
        *start = Instant::now();
    }

    // Step 9.
    let answer = match result {
        Ok(outcome) => {
            let answer = assemble(&generation.db, &outcome.shaped_by, outcome.response).unwrap_or_else(|bad| bad);
            lap(&mut trace, &mut clock, Phase::Assemble);
            answer
        }
        Err(answer) => answer,
    };
    handled(answer, Some(route), Some(module.id().to_owned()))
}
