//! [`App`]: what every request needs, shared by all connections, and the one place the serving
//! generation changes ([`App::reload`]).
//!
//! Key types: [`App`], [`ReloadOutcome`].
//!
//! A reload is all or nothing: it swaps only when the new generation loads every mod the serving one
//! runs (and, under `strict`, every mod found); otherwise the serving generation stays and the outcome
//! says why. Requests in flight keep the generation they started on; the store, the session locks, the
//! compressed-answer cache, `/metrics` and the engine outlive every generation.

use crate::generation::{Generation, LeftOut};
use crate::sandbox::Runtime;
use crate::session::SessionLocks;
use crate::settings::ServerSettings;
use anyhow::Context as _;
use arc_swap::ArcSwap;
use modhost_store::Store;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// What every request needs. Shared by all connections.
#[derive(Debug)]
pub struct App {
    /// The server's settings it started with (not a mod's configuration: `settings.rs`).
    pub config: ServerSettings,
    /// The same before the player's `modhost.toml` was applied: a reload applies the file anew.
    base: ServerSettings,
    /// The durable store: shared by every generation, never touched by a reload.
    pub store: Arc<Store>,
    /// The per-session locks (shared across generations, so one session's requests never overlap
    /// even when a reload lands between them).
    pub sessions: Arc<SessionLocks>,
    /// The notifier, mods' sockets and timers (shared across generations: a reload closes no notifier
    /// socket; mods' connections close with 1012 and reconnect to the new mods, `realtime/modsock.rs`).
    pub(crate) realtime: Arc<crate::realtime::Realtime>,
    /// Compressed answers of 8 KiB and more, keyed so a stale hit is impossible.
    pub body_cache: crate::body_cache::BodyCache,
    /// Request body bytes held in memory across all connections, one permit a byte.
    pub body_budget: Arc<tokio::sync::Semaphore>,
    /// `--perf`: time per request phase (absent when off).
    pub perf: Option<Arc<crate::perf::Perf>>,
    /// Per-route counters and latency histograms, served at `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// The serving generation: mods, routes, db.
    current: ArcSwap<Generation>,
    /// One reload at a time.
    reloading: tokio::sync::Mutex<()>,
    /// The last reload's outcome, for the status page.
    last_reload: std::sync::Mutex<Option<ReloadOutcome>>,
    /// The engine, linker and instance pool every generation's mods run in.
    runtime: Arc<Runtime>,
    /// When the server started (for the status page's uptime).
    pub started: Instant,
    /// The throwaway store directory of `scratch_store`, removed with the app.
    _scratch: Option<tempfile::TempDir>,
}

/// What a reload did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ReloadOutcome {
    /// Whether the new generation is serving.
    pub ok: bool,
    /// The generation serving after the reload.
    pub generation: u64,
    /// Why the reload was refused (the old generation still serves).
    pub reason: Option<String>,
    /// From the request to the swap (or the refusal), in milliseconds.
    pub took_ms: f64,
    /// The mods the new generation loaded (`id version`), in load order.
    pub loaded: Vec<String>,
    /// The mods it left out, with why.
    pub failed: Vec<LeftOut>,
    /// When it finished, in milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
}

/// What an [`App`] is made of; [`App::new`] adds the state that starts empty.
pub(crate) struct Parts {
    pub(crate) config: ServerSettings,
    pub(crate) base: ServerSettings,
    pub(crate) store: Arc<Store>,
    /// The per-session locks, made by the server and handed to the sandbox too.
    pub(crate) sessions: Arc<SessionLocks>,
    /// The notifier, mods' sockets and timers, made by the server and handed to the sandbox too.
    pub(crate) realtime: Arc<crate::realtime::Realtime>,
    pub(crate) first: Generation,
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) started: Instant,
    pub(crate) scratch: Option<tempfile::TempDir>,
    /// The server-wide budget of request body bytes held (the front's, sized there).
    pub(crate) body_budget: Arc<tokio::sync::Semaphore>,
}

impl App {
    /// The shared state around the first generation.
    pub(crate) fn new(parts: Parts) -> App {
        let Parts { config, base, store, sessions, realtime, first, runtime, started, scratch, body_budget } = parts;
        App {
            body_cache: crate::body_cache::BodyCache::new(config.front.body_cache_bytes),
            body_budget,
            perf: config.perf.then(Arc::default),
            config,
            base,
            store,
            sessions,
            realtime,
            metrics: crate::metrics::Metrics::with_memory(runtime.budget().cloned()),
            current: ArcSwap::from_pointee(first),
            reloading: tokio::sync::Mutex::new(()),
            last_reload: std::sync::Mutex::new(None),
            runtime,
            started,
            _scratch: scratch,
        }
    }

    /// Whether `session` (24 hex digits) has a notifier socket open.
    pub fn notifier_connected(&self, session: &str) -> bool {
        crate::session::SessionId::parse(session).is_ok_and(|s| self.realtime.hub.connected(s))
    }

    /// Notifier sockets open now.
    pub fn notifier_sockets(&self) -> usize {
        self.realtime.hub.open_sockets()
    }

    /// The serving generation. A request takes it once and keeps it to the end.
    pub fn generation(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    /// Deletes the compile cache's files that the serving generation's mods do not use (never for a
    /// throwaway store: `modhost mods` boots on the player's root beside a running server).
    pub(crate) fn prune_cache(&self) {
        if !self.config.scratch_store {
            let generation = self.generation();
            self.runtime.prune_cache(generation.mods.iter().filter_map(|m| m.artifact.as_deref()));
        }
    }

    /// The last reload's outcome, if there was one.
    pub fn last_reload(&self) -> Option<ReloadOutcome> {
        self.last_reload.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The server's settings with the player's `modhost.toml` as it is now. The engine was sized at boot,
    /// so limits above its memory slot or instance pool need a restart, and are refused here.
    fn reread_player_file(&self) -> anyhow::Result<ServerSettings> {
        let config = with_player_file(&self.base)?;
        let (now, boot) = (&config.engine, &self.config.engine);
        anyhow::ensure!(
            now.memory_bytes <= boot.memory_bytes && now.max_instances <= boot.max_instances,
            "{}: [limits] above what the server started with (memory {} MiB, {} instances) needs a restart",
            self.config.root.join("modhost.toml").display(),
            boot.memory_bytes >> 20,
            boot.max_instances
        );
        Ok(config)
    }

    /// Builds the next generation from `db.json` and the mods on disk now, and swaps it in when it
    /// loads every mod the serving generation runs. Requests in flight finish on the generation they
    /// started on; the store is not touched. Concurrent calls run one after the other.
    pub async fn reload(&self) -> ReloadOutcome {
        let _one = self.reloading.lock().await;
        let started = Instant::now();
        let old = self.generation();
        let (built, quotas) = match self.reread_player_file() {
            Ok(config) => (
                Generation::build(old.number + 1, &config, &self.runtime, &self.store, true).await,
                Some(config.store_quotas()),
            ),
            Err(e) => (Err(e), None),
        };
        let refusal = match &built {
            Err(e) => Some(format!("{e:#}")),
            Ok(new) => {
                let lost: Vec<String> = new
                    .report
                    .failed
                    .iter()
                    .filter(|left| self.config.strict || old.report.loaded.iter().any(|m| m.id == left.id))
                    .map(LeftOut::to_string)
                    .collect();
                (!lost.is_empty()).then(|| {
                    let what =
                        if self.config.strict { "--strict: mods failed" } else { "mods now running would be lost" };
                    format!("{what}: {}", lost.join("; "))
                })
            }
        };
        let (loaded, failed) = match &built {
            Ok(new) => (
                new.report.loaded.iter().map(|m| format!("{} {}", m.id, m.version)).collect(),
                new.report.failed.clone(),
            ),
            Err(_) => (Vec::new(), Vec::new()),
        };
        let generation = match (built, &refusal) {
            (Ok(new), None) => {
                let number = new.number;
                let routes: std::collections::HashSet<String> =
                    new.routes.routes().into_iter().map(|(path, _, _)| path.to_owned()).collect();
                let old = self.current.swap(Arc::new(new));
                // Mods' websocket connections belong to the mods that accepted them: they close (1012)
                // and their clients reconnect to the new mods (`realtime/modsock.rs`, "Reloads").
                self.realtime.sockets.retire(number);
                free_when_unused(old);
                // Periodic timers move to the new generation's mods (`scheduler.rs`).
                self.realtime.timers.reloaded();
                // What the retired generation alone used goes: its routes' series, its compiled mods.
                self.metrics.retain_routes(|route| routes.contains(route));
                self.prune_cache();
                // Answers cached from generations retired before would keep their db text alive.
                self.body_cache.sweep();
                // The new generation's quotas, with its limits: the player's file as it is now.
                if let Some(quotas) = quotas {
                    self.store.set_quotas(quotas);
                }
                number
            }
            _ => old.number,
        };
        let outcome = ReloadOutcome {
            ok: refusal.is_none(),
            generation,
            reason: refusal,
            took_ms: started.elapsed().as_secs_f64() * 1e3,
            loaded,
            failed,
            at_unix_ms: SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
        };
        match &outcome.reason {
            None => tracing::info!("reloaded: generation {} serving, built in {:.0} ms", generation, outcome.took_ms),
            Some(why) => tracing::error!("reload refused, generation {generation} still serving: {why}"),
        }
        *self.last_reload.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome.clone());
        outcome
    }
}

/// Frees a generation that was swapped out on the blocking pool once the requests still on it are done.
/// A 20 MB db is about half a million nodes, tens of milliseconds to free: without this, whichever
/// request dropped the last reference would pay that on an async worker, stalling every request queued
/// behind it. Requests hold a generation only until their mod call returns (bounded by its deadline).
fn free_when_unused(old: Arc<Generation>) {
    tokio::task::spawn_blocking(move || {
        let mut old = old;
        for _ in 0..6000 {
            match Arc::try_unwrap(old) {
                Ok(generation) => return drop(generation),
                Err(shared) => old = shared,
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
}

/// `base` with the player's `<root>/modhost.toml` applied, if there is one; a bad file is an error that
/// names the file and the key.
pub(crate) fn with_player_file(base: &ServerSettings) -> anyhow::Result<ServerSettings> {
    let mut config = base.clone();
    let path = config.root.join("modhost.toml");
    if path.exists() {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let file = crate::settings::PlayerFile::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        config.apply_player_file(&file).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(config)
}
