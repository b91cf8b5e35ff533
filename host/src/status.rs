//! The host's own pages under `/modhost/`: what is loaded and how it is doing, for people and tools.
//!
//! - `GET /modhost/status`: JSON: the serving generation, uptime, requests to mod routes, the last
//!   reload.
//! - `GET /modhost/mods`: JSON: each loaded mod (version, authors, requires, grants, limits, routes
//!   with their request counts and latency, and their latency over the last ten minutes in 10 s
//!   slots) and the mods left out with why.
//! - `GET /modhost/`: a small self-contained page that fetches the two and shows them.
//! - `POST /modhost/reload`: reload the mods (see [`App::reload`]); answers the outcome.
//! - `POST /modhost/config/<id>`: the page's config editor (`config_edit.rs`): check, write, reload.
//!
//! The reload answers only a request that carries the `x-modhost-reload` header: a web page the player
//! visits cannot send a custom header to 127.0.0.1 without a CORS preflight this server never grants,
//! so no website can make the server reload.

use crate::app::App;
use crate::views::{DisabledView, ModsView};
use serde_json::{Value, json};
use std::time::SystemTime;

/// The header a reload request must carry (any value).
pub const RELOAD_HEADER: &str = "x-modhost-reload";
/// The config editor's path prefix, the mod's id following (answered by `config_edit.rs`, which
/// imports this module, not the other way round).
pub(crate) const CONFIG_PREFIX: &str = "/modhost/config/";
/// The page at `/modhost/`.
const PAGE: &str = include_str!("status.html");

/// An answer from the host's own pages: status, content type, body.
pub(crate) struct Page {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: Vec<u8>,
}

impl Page {
    pub(crate) fn json(status: u16, value: &Value) -> Page {
        Page { status, content_type: "application/json", body: serde_json::to_vec_pretty(value).unwrap_or_default() }
    }
}

/// Answers a request under `/modhost` ([`modhost_routes::HOST_PAGES`], which no mod may claim). `reload_header` says whether the request carried
/// [`RELOAD_HEADER`].
pub(crate) async fn answer(app: &App, method: &str, path: &str, reload_header: bool) -> Page {
    match (method, path) {
        ("GET" | "HEAD", "/modhost" | "/modhost/") => {
            Page { status: 200, content_type: "text/html; charset=utf-8", body: PAGE.as_bytes().to_vec() }
        }
        ("GET" | "HEAD", "/modhost/status") => Page::json(200, &status_json(app)),
        ("GET" | "HEAD", "/modhost/mods") => Page::json(200, &serde_json::to_value(mods_view(app)).unwrap_or_default()),
        ("POST", "/modhost/reload") if reload_header => {
            let outcome = app.reload().await;
            let status = if outcome.ok { 200 } else { 409 };
            Page::json(status, &serde_json::to_value(&outcome).unwrap_or_default())
        }
        ("POST", "/modhost/reload") => Page::json(
            403,
            &json!({"error": format!("a reload request must carry the `{RELOAD_HEADER}` header (`modhost reload` sends it)")}),
        ),
        (_, "/modhost" | "/modhost/" | "/modhost/status" | "/modhost/mods" | "/modhost/reload") => {
            Page::json(405, &json!({"error": format!("{method} is not allowed on {path}")}))
        }
        (_, path) if path.starts_with(CONFIG_PREFIX) => {
            // POST is answered by `config_edit::apply`, which reads the body (front/dispatch.rs).
            Page::json(405, &json!({"error": format!("{method} is not allowed on {path}: POST a mod's config.json")}))
        }
        _ => Page::json(404, &json!({"error": format!("no host page at {path}")})),
    }
}

/// Whether a metrics route is one the host answers itself.
fn is_host_route(route: &str) -> bool {
    modhost_routes::host_path(route).is_some()
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `/modhost/status`.
pub fn status_json(app: &App) -> Value {
    let generation = app.generation();
    // Requests to the mods' routes: not the host's own pages (an open status page polls them), not
    // requests that matched no route.
    let requests: u64 = app
        .metrics
        .route_stats()
        .iter()
        .filter(|(route, _)| !is_host_route(route) && route.as_str() != "-")
        .map(|(_, r)| r.count)
        .sum();
    json!({
        "server": "modhost",
        "version": env!("CARGO_PKG_VERSION"),
        "api": modhost_mods::API_VERSION.to_string(),
        "uptime_s": app.started.elapsed().as_secs_f64(),
        "generation": {
            "number": generation.number,
            "built_at_unix_ms": unix_ms(generation.built_at),
            "build_ms": generation.build_time.as_secs_f64() * 1e3,
            "mods_loaded": generation.mods.len(),
            "mods_failed": generation.report.failed.len(),
            "routes": generation.routes.routes().len(),
        },
        "requests": requests,
        "notifier": notifier_json(app),
        "watching": app.config.watch,
        "last_reload": app.last_reload(),
        // Several hosts on one store: each host seen lately, its generation and mods (`members.rs`).
        "cluster": app.sessions.cluster().map(|c| c.seen()),
    })
}

/// Sessions listed in the status's `notifier` (the rest are counted, not listed).
const LISTED_SESSIONS: usize = 100;

/// The notifier: sockets open, what it delivered, queued and dropped, and the sessions with a socket
/// or a queue (each queue's dropped count: a player who missed messages can be told why).
fn notifier_json(app: &App) -> Value {
    use std::sync::atomic::Ordering::Relaxed;
    let hub = &app.realtime.hub;
    let c = &hub.counters;
    json!({
        "sockets": hub.open_sockets(),
        "opened": c.opened.load(Relaxed),
        "replaced": c.replaced.load(Relaxed),
        "stalled": c.stalled.load(Relaxed),
        "refused": c.refused.load(Relaxed),
        "delivered": c.delivered.load(Relaxed),
        "queued": c.queued.load(Relaxed),
        "dropped": c.dropped.load(Relaxed),
        "sessions": hub.sessions(LISTED_SESSIONS),
    })
}

/// `/modhost/mods`: `modhost mods --json` for the serving generation, with each route's counts and
/// latency since the server started.
pub fn mods_view(app: &App) -> ModsView {
    let generation = app.generation();
    let stats = app.metrics.route_stats();
    let mut view = ModsView::of(&generation);
    for route in view.loaded.iter_mut().flat_map(|m| m.routes.iter_mut()) {
        route.stats = Some(stats.get(&route.path).cloned());
    }
    view.generation = Some(generation.number);
    add_latency_series(app, &mut view);
    let root = crate::installed::Root::new(&app.config.root);
    view.disabled = root
        .installed()
        .into_iter()
        .filter(|m| m.state == crate::installed::State::Disabled)
        .map(|m| DisabledView {
            id: m.manifest.id.to_string(),
            version: m.manifest.version.to_string(),
            grants: m.manifest.grants.describe(),
        })
        .collect();
    view
}

// ---- latency over time (the page's per-route plots) ----

/// Each route's latency over the last ten minutes, beside its totals.
fn add_latency_series(app: &App, view: &mut ModsView) {
    let mut series = app.metrics.route_series();
    for route in view.loaded.iter_mut().flat_map(|m| m.routes.iter_mut()) {
        route.latency_series = series.remove(&route.path);
    }
}
