//! One run of one server: stage a fresh root with the generated database, start `modhost serve`, wait
//! for the client's first answer (the boot time), make a player, then run the client's mix once per
//! scenario, validating every answer: a fast wrong answer must never count.
//!
//! The mix, per round: the four static tables, the profile list and keepalive, then `moves` `Move`s of
//! the rouble stack to places in the stash (each one checked: no warning, and the answer says the new
//! place).

use anyhow::{Context as _, bail, ensure};
use indicatif::ProgressBar;
use modhost_benches::adversary;
use modhost_gamedb::{self as gamedb, ROUBLES};
use modhost_tests::child::ServeChild;
use modhost_tests::client::{Call, Client, Reply};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// The session every request of a run uses: one player, as a single client is. A new one for each
/// run ([`new_session`]): runs against one shared store (`--store-url`) must not meet each other's
/// profile.
static SESSION: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// This run's session id (a first one made on first use).
fn session() -> String {
    let id = SESSION.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    if id.is_empty() {
        new_session();
        return session();
    }
    id
}

/// Starts a run with a session id (24 hex digits) no earlier run used; answers its tail, for a
/// nickname as unique.
fn new_session() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let id = format!("{:024x}", nanos ^ (u128::from(std::process::id()) << 64));
    let id = id[id.len() - 24..].to_owned();
    *SESSION.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = id.clone();
    id[14..].to_owned()
}

/// What one run does.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) rounds: u32,
    pub(crate) warmup: u32,
    pub(crate) moves: u32,
    pub(crate) keepalive: bool,
    pub(crate) perf: bool,
}

/// The endpoints of the mix, in the order a round asks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Items,
    Globals,
    Locale,
    Handbook,
    ProfileList,
    Keepalive,
    Moving,
}

impl Endpoint {
    pub(crate) const ALL: [Endpoint; 7] = [
        Endpoint::Items,
        Endpoint::Globals,
        Endpoint::Locale,
        Endpoint::Handbook,
        Endpoint::ProfileList,
        Endpoint::Keepalive,
        Endpoint::Moving,
    ];

    pub(crate) fn path(self) -> &'static str {
        match self {
            Endpoint::Items => "/client/items",
            Endpoint::Globals => "/client/globals",
            Endpoint::Locale => "/client/locale/en",
            Endpoint::Handbook => "/client/handbook/templates",
            Endpoint::ProfileList => "/client/game/profile/list",
            Endpoint::Keepalive => "/client/game/keepalive",
            Endpoint::Moving => "/client/game/profile/items/moving",
        }
    }

    /// The smallest plausible answer (inflated): a shorter one means the table is missing or truncated.
    fn min_bytes(self) -> usize {
        match self {
            Endpoint::Items | Endpoint::Locale => 1024,
            Endpoint::Handbook => 512,
            Endpoint::ProfileList => 200,
            Endpoint::Globals => 64,
            Endpoint::Keepalive | Endpoint::Moving => 16,
        }
    }
}

/// One measured request.
#[derive(Clone, Debug)]
pub(crate) struct Sample {
    pub(crate) endpoint: Endpoint,
    /// From the request's first byte sent (its connect, without keep-alive) to the answer's last.
    pub(crate) latency_ms: f64,
    /// To the answer's first byte.
    pub(crate) ttfb_ms: f64,
    /// The body as it crossed the wire (compressed).
    pub(crate) wire_bytes: usize,
}

/// The measured rounds under one scenario.
#[derive(Clone, Debug)]
pub(crate) struct Pass {
    pub(crate) scenario: String,
    pub(crate) samples: Vec<Sample>,
    pub(crate) wall: Duration,
}

impl Pass {
    pub(crate) fn requests_per_second(&self) -> f64 {
        self.samples.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Requests per second of server time: the rate a client that never paused would see.
    pub(crate) fn busy_requests_per_second(&self) -> f64 {
        let busy: f64 = self.samples.iter().map(|s| s.latency_ms).sum::<f64>() / 1e3;
        self.samples.len() as f64 / busy.max(1e-9)
    }

    pub(crate) fn mib_per_second(&self) -> f64 {
        let bytes: usize = self.samples.iter().map(|s| s.wire_bytes).sum();
        bytes as f64 / (1 << 20) as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Latencies of one endpoint, in ms.
    pub(crate) fn latencies(&self, endpoint: Endpoint) -> Vec<f64> {
        self.samples.iter().filter(|s| s.endpoint == endpoint).map(|s| s.latency_ms).collect()
    }
}

/// One server's run: its boot, a pass per scenario, its `--perf` table, and the server's own latency
/// histogram of the Move (`/metrics`, read at the end of the run).
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub(crate) boot: Duration,
    pub(crate) passes: Vec<Pass>,
    pub(crate) perf: Option<String>,
    pub(crate) move_histogram: Histogram,
}

/// A route's latency histogram as `/metrics` has it: per upper bound in ms, the requests at or under
/// it (cumulative), and the count. The server times a request from its head read to its answer
/// deflated (`front/dispatch.rs`): what it excludes (the head's arrival, the send, the client) is the
/// difference from the client's latency.
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    pub(crate) buckets: Vec<(f64, u64)>,
    pub(crate) count: u64,
}

impl Histogram {
    /// The `route`'s histogram in a `/metrics` text (empty when the route has none).
    fn parse(text: &str, route: &str) -> Histogram {
        let prefix = format!("modhost_request_duration_seconds_bucket{{route=\"{route}\",le=\"");
        let mut histogram = Histogram::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(&prefix) else { continue };
            let Some((le, n)) = rest.split_once("\"} ") else { continue };
            let Ok(n) = n.trim().parse::<u64>() else { continue };
            match le {
                "+Inf" => histogram.count = n,
                le => {
                    if let Ok(seconds) = le.parse::<f64>() {
                        histogram.buckets.push((seconds * 1e3, n));
                    }
                }
            }
        }
        histogram
    }

    /// The share of requests over `ms`, when `ms` is one of the bounds.
    pub(crate) fn share_over(&self, ms: f64) -> Option<f64> {
        let (_, under) = self.buckets.iter().find(|(bound, _)| (bound - ms).abs() < 1e-9)?;
        (self.count > 0).then(|| 1.0 - *under as f64 / self.count as f64)
    }
}

/// The player the mix plays.
#[derive(Clone)]
struct Player {
    uid: String,
    roubles: String,
    stash: String,
}

/// Requests over one kept-alive connection, or a new connection each (`Connection: close`).
struct Wire {
    addr: SocketAddr,
    keepalive: bool,
    client: Option<Client>,
}

impl Wire {
    async fn call(&mut self, call: &Call) -> anyhow::Result<(Reply, Duration, Duration)> {
        let started = Instant::now();
        let reply = if self.keepalive {
            let mut client = match self.client.take() {
                Some(client) => client,
                None => Client::connect(self.addr).await?,
            };
            let reply = client.send(call).await?;
            // The server closes a connection after its last allowed request: open a new one then.
            if !reply.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
                self.client = Some(client);
            }
            reply
        } else {
            Client::connect(self.addr).await?.send(&call.clone().header("Connection", "close")).await?
        };
        let latency = started.elapsed();
        let ttfb = reply.first_byte.saturating_duration_since(started);
        Ok((reply, latency, ttfb))
    }
}

fn post(path: &str, body: &Value) -> Call {
    Call::post(path, body.to_string().as_bytes()).session(&session())
}

/// The answer's JSON, checked: 200, zlib on the wire, JSON, envelope `err` 0.
fn envelope(reply: &Reply, what: &str) -> anyhow::Result<Value> {
    ensure!(reply.status == 200, "{what}: status {}: {}", reply.status, reply.text());
    ensure!(modhost::wire::looks_like_zlib(&reply.raw), "{what}: the answer is not zlib");
    let value: Value = serde_json::from_slice(&reply.body()).with_context(|| format!("{what}: not JSON"))?;
    ensure!(value["err"] == 0, "{what}: err {}: {}", value["err"], value["errmsg"]);
    Ok(value)
}

/// Validates one answer of the mix; `moved_to` is where a `Move` asked the roubles to go.
fn validate(endpoint: Endpoint, reply: &Reply, player: &Player, moved_to: Option<(u32, u32)>) -> anyhow::Result<()> {
    let what = endpoint.path();
    let body = reply.body();
    ensure!(body.len() >= endpoint.min_bytes(), "{what}: {} bytes, fewer than {}", body.len(), endpoint.min_bytes());
    ensure!(reply.status == 200, "{what}: status {}", reply.status);
    ensure!(modhost::wire::looks_like_zlib(&reply.raw), "{what}: the answer is not zlib");
    let marker = match endpoint {
        Endpoint::Items | Endpoint::Handbook => gamedb::hex_id(0),
        Endpoint::Locale => format!("\"{} Name\"", gamedb::hex_id(0)),
        Endpoint::Globals => "\"bot_presets\"".to_owned(),
        Endpoint::ProfileList => player.uid.clone(),
        Endpoint::Keepalive => "\"OK\"".to_owned(),
        Endpoint::Moving => player.roubles.clone(),
    };
    ensure!(memchr::memmem::find(&body, marker.as_bytes()).is_some(), "{what}: the answer lacks {marker}");
    // Every answer is JSON with `err` 0. The large tables are checked without building a tree.
    #[derive(serde::Deserialize)]
    struct Envelope {
        err: i64,
    }
    let parsed: Envelope = serde_json::from_slice(&body).with_context(|| format!("{what}: not JSON"))?;
    ensure!(parsed.err == 0, "{what}: err {}", parsed.err);
    if let Some((x, y)) = moved_to {
        let value: Value = serde_json::from_slice(&body)?;
        ensure!(value["data"]["warnings"] == json!([]), "{what}: a warning: {}", value["data"]["warnings"]);
        let change = &value["data"]["profileChanges"][&player.uid]["items"]["change"][0];
        ensure!(
            change["_id"] == player.roubles.as_str()
                && change["location"] == json!({"x": x, "y": y, "r": "Horizontal"}),
            "{what}: the answer does not show the roubles at ({x},{y}): {change}"
        );
    }
    Ok(())
}

/// Starts the server on a fresh root holding `db`, and answers it with its boot time: from the
/// process's start to the client's config answering `err` 0.
async fn boot(
    modhost: &Path,
    root: &Path,
    db: &[u8],
    perf: bool,
    args: &[String],
) -> anyhow::Result<(ServeChild, Duration)> {
    std::fs::write(root.join("db.json"), db)?;
    let started = Instant::now();
    let mut extra: Vec<&str> = args.iter().map(String::as_str).collect();
    if perf {
        extra.push("--perf");
    }
    let mut server = ServeChild::spawn(modhost, root, &extra)?;
    let config = post("/client/game/config", &json!({}));
    for _ in 0..3000 {
        if let Ok(reply) = Client::connect(server.addr).await?.send(&config).await
            && envelope(&reply, "config").is_ok()
        {
            return Ok((server, started.elapsed()));
        }
        ensure!(server.running(), "the server exited during boot; its log ended:\n{}", server.tail());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("the server did not answer /client/game/config within 60 s; its log ended:\n{}", server.tail())
}

/// Creates and selects the bench's profile and finds its roubles and stash.
async fn player(addr: SocketAddr) -> anyhow::Result<Player> {
    let mut client = Client::connect(addr).await?;
    let tail = new_session();
    let create = json!({"nickname": format!("Bench{}", &tail[..8]), "side": "Usec", "headId": "x"});
    let created = envelope(&client.send(&post("/client/game/profile/create", &create)).await?, "profile/create")?;
    let uid = created["data"]["uid"].as_str().context("profile/create answered no uid")?.to_owned();
    envelope(&client.send(&post("/client/game/profile/select", &json!({"uid": uid}))).await?, "profile/select")?;
    let list = envelope(&client.send(&post("/client/game/profile/list", &json!({}))).await?, "profile/list")?;
    let profile = &list["data"][0];
    let items = profile["Inventory"]["items"].as_array().context("the profile has no items")?;
    let roubles = items.iter().find(|i| i["_tpl"] == ROUBLES).context("the profile has no roubles")?;
    Ok(Player {
        uid,
        roubles: roubles["_id"].as_str().context("the roubles have no id")?.to_owned(),
        stash: profile["Inventory"]["stash"].as_str().context("the profile has no stash")?.to_owned(),
    })
}

/// One round of the mix; `measured` collects its samples (warm-up rounds pass `None`). `moved` counts
/// moves across rounds, so each goes to a new place.
///
/// Every answer is validated when the round's requests are done (see the comment in the body), in
/// parallel on the blocking pool; the round ends when every answer has passed, and answers the time
/// the checks took, which the pass's wall clock leaves out.
/// A request of a round: its endpoint, the call, and for a `Move` which item went where.
type Planned = (Endpoint, Call, Option<(u32, u32)>);

async fn round(
    wire: &mut Wire,
    player: &Player,
    moves: u32,
    moved: &mut u32,
    mut measured: Option<&mut Vec<Sample>>,
) -> anyhow::Result<Duration> {
    let mut calls: Vec<Planned> = Endpoint::ALL[..6]
        .iter()
        .map(|&e| {
            let call = match e {
                Endpoint::ProfileList => post(e.path(), &json!({})),
                _ => Call::get(e.path()).session(&session()),
            };
            (e, call, None)
        })
        .collect();
    for _ in 0..moves {
        // Every cell of the 10x68 stash but the roubles' own is free: each place is valid.
        let (x, y) = (*moved % 10, (*moved / 10) % 68);
        *moved += 1;
        let action = json!({"Action": "Move", "item": player.roubles,
            "to": {"id": player.stash, "container": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}}});
        calls.push((
            Endpoint::Moving,
            post(Endpoint::Moving.path(), &json!({"data": [action], "tm": 1})),
            Some((x, y)),
        ));
    }
    let mut replies = Vec::with_capacity(calls.len());
    for (endpoint, call, moved_to) in calls {
        let (reply, latency, ttfb) = wire.call(&call).await?;
        if let Some(samples) = measured.as_deref_mut() {
            samples.push(Sample {
                endpoint,
                latency_ms: latency.as_secs_f64() * 1e3,
                ttfb_ms: ttfb.as_secs_f64() * 1e3,
                wire_bytes: reply.raw.len(),
            });
        }
        replies.push((endpoint, reply, moved_to));
    }
    // Every answer is checked once the round's requests are done, not while the next ones run: on two
    // cores, inflating and parsing a large db's tables (megabytes at 12000 templates) beside the Moves
    // took a core from the server and made the Moves' tail grow with the db (client p95 2.0 ms at
    // 12000 templates against 0.5 at 3000), while the server's own timing of the same Moves did not
    // move (0.3% over 1 ms at both). The checks run in parallel on the blocking pool; their time is
    // answered so that the pass's wall clock leaves it out.
    let validating = Instant::now();
    let checks: Vec<_> = replies
        .into_iter()
        .map(|(endpoint, reply, moved_to)| {
            let player = player.clone();
            tokio::task::spawn_blocking(move || validate(endpoint, &reply, &player, moved_to))
        })
        .collect();
    for check in checks {
        check.await??;
    }
    Ok(validating.elapsed())
}

/// The scenario that reloads the server's mods and db over and over while the mix runs.
pub(crate) const RELOADING: &str = "reloading";

/// `POST /modhost/reload` every 100 ms (one at a time), as `serve --watch` does on each build of a mod.
/// Every reload must swap; the times are the server's (`took_ms`).
struct Reloader {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<anyhow::Result<Vec<f64>>>,
}

impl Reloader {
    fn start(addr: SocketAddr) -> Reloader {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let task = tokio::spawn(async move {
            let mut took = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let call = Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1");
                let reply = Client::connect(addr).await?.send(&call).await?;
                let outcome: Value = serde_json::from_slice(&reply.body()).context("the reload's answer")?;
                ensure!(reply.status == 200 && outcome["ok"] == true, "a reload was refused: {outcome}");
                took.push(outcome["took_ms"].as_f64().context("took_ms")?);
            }
            Ok(took)
        });
        Reloader { stop, task }
    }

    async fn finish(self) -> anyhow::Result<Vec<f64>> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.task.await.context("the reloader")?
    }
}

/// One whole run of the server at `modhost` (with `args` added to `serve`) on a fresh root holding `db`.
pub(crate) async fn run(
    modhost: &Path,
    args: &[String],
    db: &[u8],
    opts: &Options,
    scenarios: &[String],
    progress: &ProgressBar,
) -> anyhow::Result<Run> {
    let root = tempfile::tempdir()?;
    let (server, boot) = boot(modhost, root.path(), db, opts.perf, args).await?;
    let addr = server.addr;
    let player = player(addr).await?;
    let mut wire = Wire { addr, keepalive: opts.keepalive, client: None };
    let mut moved = 1;
    for _ in 0..opts.warmup {
        round(&mut wire, &player, opts.moves, &mut moved, None).await?;
        progress.inc(1);
    }
    let mut passes = Vec::new();
    for scenario in scenarios {
        let reloader = (scenario == RELOADING).then(|| Reloader::start(addr));
        let adversaries = match scenario.as_str() {
            "quiet" | RELOADING => None,
            kind => {
                let started = adversary::start(addr, kind)?;
                tokio::time::sleep(Duration::from_millis(500)).await;
                Some(started)
            }
        };
        let mut samples = Vec::new();
        let started = Instant::now();
        let mut validating = Duration::ZERO;
        for _ in 0..opts.rounds {
            validating += round(&mut wire, &player, opts.moves, &mut moved, Some(&mut samples))
                .await
                .with_context(|| format!("scenario {scenario}"))?;
            progress.inc(1);
        }
        passes.push(Pass { scenario: scenario.clone(), samples, wall: started.elapsed().saturating_sub(validating) });
        drop(adversaries);
        if let Some(reloader) = reloader {
            let mut took = reloader.finish().await?;
            took.sort_by(f64::total_cmp);
            ensure!(!took.is_empty(), "no reload finished during the pass");
            let line = format!(
                "reloading: {} reloads swapped during the pass, each {:.1} ms median ({:.1}-{:.1}), no request failed",
                took.len(),
                took[took.len() / 2],
                took[0],
                took[took.len() - 1]
            );
            // A hidden bar (output not a terminal) prints nothing.
            if progress.is_hidden() { eprintln!("{line}") } else { progress.println(line) }
        }
    }
    let perf = if opts.perf {
        // The server writes its table every second; the bench kills it, as a load generator does.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        Some(std::fs::read_to_string(root.path().join("perf.txt")).context("reading perf.txt")?)
    } else {
        None
    };
    let metrics = modhost_tests::client::send(addr, &Call::get("/metrics")).await.context("reading /metrics")?;
    let move_histogram = Histogram::parse(&metrics.text(), Endpoint::Moving.path());
    drop(server);
    Ok(Run { boot, passes, perf, move_histogram })
}
