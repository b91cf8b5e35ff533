//! `modhost check <mod folder or .wasm>`: vets a mod before anyone runs it for real.
//!
//! The mod is installed in a throwaway root with the default database (beside the built-in game,
//! unless it is one of the built-ins), under strict limits (64 MiB, 2 s a call unless told otherwise,
//! 10 s to load, no quarantine). Loading checks the manifest against the component (the world, its exports, its routes,
//! conflicts) and runs `init`. Then each route gets generated requests: a valid JSON body, an empty one,
//! malformed JSON, bytes that are not JSON, a 2 MiB body, and odd sessions (none, unknown, malformed).
//! The report gives per route the answers by status, traps, timeouts, server errors, probes that got
//! no answer at all, capability denials, peak memory, log and store bytes written, and time per call.
//!
//! A mod fails ([`Policy`], exit code 1) when it does not load, or when any probe traps, times out,
//! gets no answer (the host's answer path broke), or gets a server error (5xx: the mod failed on input
//! any client can send, or its answer broke the host's limits), or when the probes made it write more
//! log or store bytes than the policy allows. A failing probe never stops the check: the report names
//! every one.

use crate::server::Server;
use crate::settings::ServerSettings;
use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use modhost_routes::MatchKind;
use modhost_wire as wire;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The limits a checked mod runs under (the player's defaults are looser), with the call deadline
/// added by [`check`].
const STRICT: &str = "memory_mib = 64\ninit_timeout_ms = 10000\nquarantine_after = 0\n";

/// The call deadline `modhost check` uses unless told otherwise, in ms.
pub const CALL_TIMEOUT_MS: u64 = 2000;

/// What makes a mod fail the check beyond traps, timeouts and answers that never came, which always do.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The deadline of each call, in ms.
    pub call_timeout_ms: u64,
    /// Whether a server error (5xx) the mod answers to a probe fails it.
    pub fail_on_server_errors: bool,
    /// The most log bytes (its `log` calls, stdout and stderr) one route's probes may write.
    pub max_log_bytes: u64,
    /// The most bytes the mod's store namespace may hold once every route has been probed.
    pub max_store_bytes: u64,
}

impl Default for Policy {
    /// Strict: what a mod that behaves on any input does. Eight probes that log a line or two each
    /// write a few KiB; saving a small state per probe stays far under a MiB.
    fn default() -> Policy {
        Policy {
            call_timeout_ms: CALL_TIMEOUT_MS,
            fail_on_server_errors: true,
            max_log_bytes: 64 << 10,
            max_store_bytes: 1 << 20,
        }
    }
}

/// What `modhost check` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckReport {
    /// The mod's id.
    #[serde(rename = "mod")]
    pub id: String,
    /// It loaded and broke none of the [`Policy`]'s rules.
    pub passed: bool,
    /// Why it failed, one sentence a rule broken (empty when it passed).
    #[serde(default)]
    pub problems: Vec<String>,
    /// Whether it loaded at all.
    pub loaded: bool,
    /// Why it did not load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the probes found; absent when the mod did not load.
    #[serde(flatten)]
    pub details: Option<LoadedReport>,
}

impl CheckReport {
    /// What the probes of each route got (none when the mod did not load).
    pub fn routes(&self) -> &[RouteCheck] {
        self.details.as_ref().map_or(&[], |d| &d.routes)
    }
}

/// What `modhost check` found of a mod that loaded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadedReport {
    /// Time to load it (compile, link, `routes`, `init`), in ms.
    pub load_ms: f64,
    /// The limits it ran under, as `modhost.toml` lines.
    pub limits: Vec<String>,
    /// Its grants in words.
    pub grants: Vec<String>,
    /// Per route, what the probes got.
    pub routes: Vec<RouteCheck>,
    /// Bytes its store namespace holds after every probe.
    pub store_bytes: u64,
}

/// What the probes of one route got.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteCheck {
    /// The route as claimed.
    pub route: String,
    /// `exact` or `prefix`.
    pub kind: String,
    /// The path probed (a prefix route gets `check` appended).
    pub path: String,
    /// Answers by status.
    pub statuses: BTreeMap<String, u32>,
    /// Probes whose call trapped, with the answer.
    pub traps: Vec<ProbeFailure>,
    /// Probes whose call hit its deadline, with the answer.
    pub timeouts: Vec<ProbeFailure>,
    /// Probes answered with a server error (5xx) that was neither a trap nor a deadline: the mod's
    /// own failure, or an answer the host refused (over the size limit, a header it may not set).
    #[serde(default)]
    pub errors: Vec<ProbeFailure>,
    /// Probes that got no answer at all: the connection closed or broke before one came.
    #[serde(default)]
    pub no_answer: Vec<ProbeFailure>,
    /// Bytes the mod logged while its probes ran (`log` calls, stdout and stderr).
    #[serde(default)]
    pub log_bytes: u64,
    /// Log lines the host dropped while its probes ran: over the caps of a call or of a second.
    #[serde(default)]
    pub log_dropped: u64,
    /// Host calls refused for want of a grant.
    pub denials: u64,
    /// The largest linear memory an instance asked for, in KiB.
    pub peak_memory_kib: usize,
    /// Mean time per probe, in ms.
    pub mean_ms: f64,
    /// Slowest probe, in ms.
    pub max_ms: f64,
}

/// One probe that failed a route.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeFailure {
    /// The probe's name (`valid`, `empty`, `2 MiB body`…).
    pub probe: String,
    /// The answer's body.
    pub answer: String,
}

/// One generated request.
struct Probe {
    name: &'static str,
    body: Vec<u8>,
    session: Option<&'static str>,
}

fn probes() -> Vec<Probe> {
    let valid = Some("c4ec4ec4ec4ec4ec4ec4ec4e");
    let big = format!("{{\"filler\":\"{}\"}}", "x".repeat(2 << 20));
    vec![
        Probe { name: "valid", body: wire::deflate_parts(&[bytes::Bytes::from_static(b"{}")]), session: valid },
        Probe { name: "empty", body: Vec::new(), session: valid },
        Probe { name: "malformed json", body: b"{\"unclosed\": [1, 2".to_vec(), session: valid },
        Probe { name: "not json", body: vec![0xff, 0x00, 0xfe, 0x01, 0x80], session: valid },
        Probe { name: "2 MiB body", body: wire::deflate_parts(&[bytes::Bytes::from(big)]), session: valid },
        Probe { name: "no session", body: b"{}".to_vec(), session: None },
        Probe { name: "unknown session", body: b"{}".to_vec(), session: Some("ffffffffffffffffffffffff") },
        Probe { name: "malformed session", body: b"{}".to_vec(), session: Some("not-a-session") },
    ]
}

/// The mod to check: its manifest text and component bytes.
fn resolve(target: &Path, manifest: Option<&Path>) -> anyhow::Result<(String, Vec<u8>)> {
    let read = |p: &Path| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()));
    if target.is_dir() {
        let toml = read(&manifest.map_or_else(|| target.join("mod.toml"), Path::to_owned))?;
        let parsed = modhost_mods::Manifest::parse(&toml)?;
        let wasm = target.join(format!("{}.wasm", parsed.id));
        if !wasm.exists() {
            // A source folder: say what was looked for and how to get it, in one line.
            anyhow::bail!(
                "{} has no {}.wasm: build the mod (`cargo build --release --target wasm32-wasip2`) and pass the \
                 .wasm it wrote under target/wasm32-wasip2/release/, or copy it into the folder",
                target.display(),
                parsed.id
            );
        }
        let bytes = std::fs::read(&wasm).with_context(|| format!("reading {}", wasm.display()))?;
        return Ok((toml, bytes));
    }
    let bytes = std::fs::read(target).with_context(|| format!("reading {}", target.display()))?;
    let beside = target.with_file_name("mod.toml");
    let toml = match manifest {
        Some(path) => read(path)?,
        None if beside.exists() => read(&beside)?,
        None => {
            // A bare component: name it after its file.
            let stem = target.file_stem().and_then(|s| s.to_str()).unwrap_or("mod");
            let id: String = stem
                .to_ascii_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' })
                .collect();
            format!("id = \"{}\"\nversion = \"0.0.0\"\n", id.trim_matches('-'))
        }
    };
    Ok((toml, bytes))
}

/// A probe on a new connection; answers the status, the body (inflated) and the time, or why no
/// answer came.
async fn send(addr: SocketAddr, path: &str, probe: &Probe) -> anyhow::Result<(u16, String, Duration)> {
    let mut request =
        hyper::Request::post(path).header(hyper::header::HOST, "127.0.0.1").header(hyper::header::CONNECTION, "close");
    if let Some(session) = probe.session {
        request = request.header(hyper::header::COOKIE, format!("PHPSESSID={session}"));
    }
    let request = request.body(Full::new(Bytes::from(probe.body.clone())))?;
    let started = Instant::now();
    let answer = crate::client::send(addr, request, Duration::from_secs(30)).await?;
    let elapsed = started.elapsed();
    let body = match wire::looks_like_zlib(&answer.body).then(|| wire::inflate_body(&answer.body, 64 << 20)) {
        Some(Ok(Some(inflated))) => inflated,
        _ => answer.body.to_vec(),
    };
    Ok((answer.status, String::from_utf8_lossy(&body).into_owned(), elapsed))
}

/// The longest answer text a report quotes: enough for the reason, not a flood of it.
const QUOTE_BYTES: usize = 2048;

fn quote(text: &str) -> String {
    let mut end = text.len().min(QUOTE_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match end < text.len() {
        true => format!("{}… ({} bytes)", &text[..end], text.len()),
        false => text.to_owned(),
    }
}

/// Bytes the mod's namespace holds: every value's length.
fn namespace_bytes(store: &modhost_store::Store, namespace: &str) -> anyhow::Result<u64> {
    let mut total = 0u64;
    for key in store.list(namespace, "")? {
        total += store.get(namespace, &key)?.map_or(0, |v| v.len() as u64);
    }
    Ok(total)
}

/// Checks the mod at `target` (a folder with `mod.toml` and `<id>.wasm`, or a `.wasm` with an optional
/// manifest) and answers the report. An error is what kept the check from running (an unreadable file,
/// a manifest that does not parse); a mod that does not load, or that breaks a rule of `policy`, is a
/// report that says why.
pub async fn check(target: &Path, manifest: Option<&Path>, policy: &Policy) -> anyhow::Result<CheckReport> {
    check_with(target, manifest, &[], policy).await
}

/// [`check`] of the mod folder `target` with the mod folders `beside` installed next to it (the mods
/// it requires, for `modhost install`); only `target`'s routes are probed.
pub async fn check_beside(
    target: &Path,
    beside: &[std::path::PathBuf],
    policy: &Policy,
) -> anyhow::Result<CheckReport> {
    check_with(target, None, beside, policy).await
}

async fn check_with(
    target: &Path,
    manifest: Option<&Path>,
    beside: &[std::path::PathBuf],
    policy: &Policy,
) -> anyhow::Result<CheckReport> {
    let strict = format!("{STRICT}call_timeout_ms = {}\n", policy.call_timeout_ms);
    let (toml, wasm) = resolve(target, manifest)?;
    let parsed = modhost_mods::Manifest::parse(&toml)?;
    let id = parsed.id.to_string();
    let root = tempfile::tempdir().context("a throwaway root")?;
    let dir = root.path().join("mods").join(&id);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("mod.toml"), &toml)?;
    std::fs::write(dir.join(format!("{id}.wasm")), &wasm)?;
    // The checked mod's own config files, and the mods beside it whole.
    if target.is_dir() {
        for name in ["config.default.json", "config.schema.json", "config.json"] {
            if target.join(name).is_file() {
                std::fs::copy(target.join(name), dir.join(name))?;
            }
        }
    }
    for folder in beside {
        let name = folder.file_name().context("a mod folder without a name")?;
        let to = root.path().join("mods").join(name);
        std::fs::create_dir_all(&to)?;
        for entry in std::fs::read_dir(folder)?.flatten().filter(|e| e.path().is_file()) {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    std::fs::write(root.path().join("modhost.toml"), format!("[mods.{id}]\n{strict}"))?;

    let mut config = ServerSettings::new(root.path());
    config.addr = SocketAddr::from(([127, 0, 0, 1], 0));
    // Beside the built-in game, so a route it would steal is reported, unless it is a built-in itself.
    config.builtin_mods = !crate::builtin::builtins().iter().flatten().any(|b| b.manifest.id == id.as_str());
    let started = Instant::now();
    let server = Server::start(config).await?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    if let Some(left) = server.report().failed.iter().find(|left| left.id == id || left.id.ends_with(&id)) {
        let reason = left.reason.clone();
        let problems = vec![format!("it did not load: {reason}")];
        return Ok(CheckReport { id, passed: false, problems, loaded: false, reason: Some(reason), details: None });
    }
    let generation = server.app().generation();
    let module = generation.mods.iter().find(|m| m.id() == id).cloned().context("the mod is not among the loaded")?;
    let routes: Vec<(String, MatchKind)> = generation
        .routes
        .routes()
        .into_iter()
        .filter(|(_, _, owner)| *owner == id)
        .map(|(path, kind, _)| (path.to_owned(), kind))
        .collect();
    let addr = server.local_addr()?;
    let app = server.app().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));

    let mut report_routes = Vec::new();
    for (route, kind) in &routes {
        let path = if *kind == MatchKind::Prefix { format!("{route}check") } else { route.clone() };
        let cx = module.context();
        cx.peak_memory.store(0, Ordering::Relaxed);
        let denials_before = cx.denials.load(Ordering::Relaxed);
        let (logged_before, dropped_before) = (cx.log_bytes(), cx.log_dropped());
        let mut statuses: BTreeMap<String, u32> = BTreeMap::new();
        let (mut traps, mut timeouts, mut errors, mut no_answer) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut times = Vec::new();
        for probe in probes() {
            let (status, body, elapsed) = match send(addr, &path, &probe).await {
                Ok(answered) => answered,
                Err(e) => {
                    // The host's answer path broke (or the server did): say so and go on probing.
                    *statuses.entry("none".to_owned()).or_insert(0) += 1;
                    no_answer.push(ProbeFailure { probe: probe.name.to_owned(), answer: format!("{e:#}") });
                    continue;
                }
            };
            *statuses.entry(status.to_string()).or_insert(0) += 1;
            times.push(elapsed.as_secs_f64() * 1e3);
            let failure = || ProbeFailure { probe: probe.name.to_owned(), answer: quote(&body) };
            if status == 500 && body.contains("trapped") {
                traps.push(failure());
            } else if status == 500 && body.contains("deadline") {
                timeouts.push(failure());
            } else if status >= 500 {
                errors.push(failure());
            }
        }
        let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
        let max = times.iter().copied().fold(0.0, f64::max);
        report_routes.push(RouteCheck {
            route: route.clone(),
            kind: if *kind == MatchKind::Exact { "exact" } else { "prefix" }.to_owned(),
            path,
            statuses,
            traps,
            timeouts,
            errors,
            no_answer,
            log_bytes: cx.log_bytes() - logged_before,
            log_dropped: cx.log_dropped() - dropped_before,
            denials: cx.denials.load(Ordering::Relaxed) - denials_before,
            peak_memory_kib: cx.peak_memory.load(Ordering::Relaxed) >> 10,
            mean_ms: mean,
            max_ms: max,
        });
    }
    let store_bytes = namespace_bytes(&app.store, &id)?;
    let _ = stop.send(());
    let _ = serving.await;
    drop(app);
    let problems = problems(&report_routes, store_bytes, policy);
    Ok(CheckReport {
        id,
        passed: problems.is_empty(),
        problems,
        loaded: true,
        reason: None,
        details: Some(LoadedReport {
            load_ms,
            limits: strict.trim().split('\n').map(str::to_owned).collect(),
            grants: module.grants().describe(),
            routes: report_routes,
            store_bytes,
        }),
    })
}

/// The rules of `policy` the probes broke, a sentence each.
fn problems(routes: &[RouteCheck], store_bytes: u64, policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    for r in routes {
        let mut say = |n: usize, what: &str| {
            if n > 0 {
                out.push(format!("{}: {n} of its probes {what}", r.route));
            }
        };
        say(r.traps.len(), "trapped");
        say(r.timeouts.len(), "hit the call deadline");
        say(r.no_answer.len(), "got no answer");
        if policy.fail_on_server_errors {
            say(r.errors.len(), "got a server error (5xx)");
        }
        if r.log_dropped > 0 {
            out.push(format!(
                "{}: its probes went over the host's log caps ({} lines dropped)",
                r.route, r.log_dropped
            ));
        }
        if r.log_bytes > policy.max_log_bytes {
            out.push(format!(
                "{}: its probes logged {} bytes; the policy allows {} (--max-log-kib)",
                r.route, r.log_bytes, policy.max_log_bytes
            ));
        }
    }
    if store_bytes > policy.max_store_bytes {
        out.push(format!(
            "the probes left {store_bytes} bytes in its store; the policy allows {} (--max-store-kib)",
            policy.max_store_bytes
        ));
    }
    out
}

/// The report for people: a line per route, each failing probe's answer under it, and the verdict
/// last (`PASS id` or `FAIL id`).
impl std::fmt::Display for CheckReport {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let id = &self.id;
        let Some(report) = self.details.as_ref().filter(|_| self.loaded) else {
            return writeln!(out, "FAIL {id}: it did not load: {}", self.reason.as_deref().unwrap_or(""));
        };
        writeln!(
            out,
            "{id}: loaded in {:.0} ms under strict limits ({}); grants: {}",
            report.load_ms,
            report.limits.join(", "),
            if report.grants.is_empty() { "none".to_owned() } else { report.grants.join("; ") }
        )?;
        writeln!(
            out,
            "{:<40} {:<22} {:>5} {:>8} {:>6} {:>7} {:>9} {:>8} {:>8} {:>8}",
            "route", "answers", "traps", "timeouts", "5xx", "denied", "peak KiB", "log B", "mean ms", "max ms"
        )?;
        for r in &report.routes {
            let statuses: Vec<String> = r.statuses.iter().map(|(s, n)| format!("{s}x{n}")).collect();
            writeln!(
                out,
                "{:<40} {:<22} {:>5} {:>8} {:>6} {:>7} {:>9} {:>8} {:>8.2} {:>8.2}",
                format!("{}{}", r.route, if r.kind == "prefix" { "*" } else { "" }),
                statuses.join(" "),
                r.traps.len(),
                r.timeouts.len(),
                r.errors.len(),
                r.denials,
                r.peak_memory_kib,
                r.log_bytes,
                r.mean_ms,
                r.max_ms
            )?;
            for failure in r.traps.iter().chain(&r.timeouts).chain(&r.errors).chain(&r.no_answer) {
                writeln!(out, "    {}: {}", failure.probe, failure.answer)?;
            }
        }
        writeln!(out, "store: {} bytes after the probes", report.store_bytes)?;
        for problem in &self.problems {
            writeln!(out, "problem: {problem}")?;
        }
        writeln!(out, "{} {id}", if self.passed { "PASS" } else { "FAIL" })
    }
}
