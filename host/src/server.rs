//! Boot: prepare the root, open the store, bind the listener, build the first [`Generation`] (db and
//! mods, see `generation.rs`). [`Server::run`] then serves until shutdown; [`App::reload`] builds the
//! next generation beside the serving one and swaps it in.
//!
//! Key types: [`Server`], [`App`] (what every request needs, shared), [`ReloadOutcome`].
//!
//! A mod that fails to load is left out and reported, and the server starts without it, unless
//! `strict`. A reload is all or nothing: it swaps only when the new generation loads every mod the
//! serving one runs (and, under `strict`, every mod found); otherwise the serving generation stays and
//! the outcome says why.

use crate::config::Config;
use crate::generation::Generation;
pub use crate::generation::{LoadReport, LoadedInfo};
use crate::plugin::Runtime;
use crate::session::SessionLocks;
use crate::store::Store;
use anyhow::{Context as _, bail};
use arc_swap::ArcSwap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::net::TcpListener;

/// What every request needs. Shared by all connections.
#[derive(Debug)]
pub struct App {
    /// The configuration the server started with.
    pub config: Config,
    /// The same before the player's `modhost.toml` was applied: a reload applies the file anew.
    base: Config,
    /// The durable store: shared by every generation, never touched by a reload.
    pub store: Arc<Store>,
    /// The per-session locks (shared across generations, so one session's requests never overlap
    /// even when a reload lands between them).
    pub sessions: SessionLocks,
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
#[derive(Debug, Clone, serde::Serialize)]
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
    pub failed: Vec<(String, String)>,
    /// When it finished, in milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
}

impl App {
    /// The serving generation. A request takes it once and keeps it to the end.
    pub fn generation(&self) -> Arc<Generation> {
        self.current.load_full()
    }

    /// The last reload's outcome, if there was one.
    pub fn last_reload(&self) -> Option<ReloadOutcome> {
        self.last_reload.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The configuration with the player's `modhost.toml` as it is now. The engine was sized at boot,
    /// so limits above its memory slot or instance pool need a restart, and are refused here.
    fn reread_player_file(&self) -> anyhow::Result<Config> {
        let config = with_player_file(&self.base)?;
        let (now, boot) = (&config.limits, &self.config.limits);
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
        let built = match self.reread_player_file() {
            Ok(config) => Generation::build(old.number + 1, &config, &self.runtime, &self.store, true).await,
            Err(e) => Err(e),
        };
        let refusal = match &built {
            Err(e) => Some(format!("{e:#}")),
            Ok(new) => {
                let lost: Vec<String> = new
                    .report
                    .failed
                    .iter()
                    .filter(|(id, _)| self.config.strict || old.report.loaded.iter().any(|m| &m.id == id))
                    .map(|(id, why)| format!("{id}: {why}"))
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
                let old = self.current.swap(Arc::new(new));
                free_when_unused(old);
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

/// A server that has loaded its mods and bound its socket.
#[derive(Debug)]
pub struct Server {
    app: Arc<App>,
    listener: Arc<TcpListener>,
    /// Connections that arrived while the mods loaded; they are served first.
    early: crate::http::EarlyAccept,
    report: LoadReport,
    /// `--watch`: reloads on changes while the server runs.
    watch: Option<crate::watch::Watch>,
    boot_time: Duration,
}

impl Server {
    /// Boots: everything up to a bound listener. Errors here are fatal (an unreadable `db.json`, a
    /// port in use, a broken mod under `strict`).
    pub async fn start(base: Config) -> anyhow::Result<Server> {
        let started = Instant::now();
        let root = base.root.clone();
        let root = &root;
        for dir in [root.clone(), root.join("mods"), root.join("store"), root.join("cache")] {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // The player's limits, if they wrote any: a bad file stops the boot with what and where.
        let config = with_player_file(&base)?;
        crate::generation::write_default_db(root)?;
        let scratch = if config.scratch_store { Some(tempfile::tempdir().context("a scratch store")?) } else { None };
        let store_dir = scratch.as_ref().map_or_else(|| root.join("store"), |s| s.path().to_owned());
        let store = Arc::new(Store::open(&store_dir, config.store_durable)?);
        // Listen before the mods load: a client that connects during boot waits, and is never refused.
        let listener =
            Arc::new(TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?);
        tracing::info!("listening on {}", listener.local_addr()?);
        let early = crate::http::EarlyAccept::start(listener.clone(), config.boot_wait);
        let runtime = Arc::new(Runtime::new(config.limits.clone(), Some(root.join("cache")))?);

        let first = Generation::build(1, &config, &runtime, &store, false).await?;
        if config.strict && !first.report.failed.is_empty() {
            let list: Vec<String> = first.report.failed.iter().map(|(m, why)| format!("{m}: {why}")).collect();
            bail!("--strict: {} mod(s) failed to load:\n{}", list.len(), list.join("\n"));
        }
        let report = first.report.clone();

        let body_cache = crate::body_cache::BodyCache::new(config.limits.body_cache_bytes);
        let perf = config.perf.then(Arc::default);
        let app = App {
            config,
            base,
            store,
            sessions: SessionLocks::default(),
            body_cache,
            body_budget: Arc::new(tokio::sync::Semaphore::new(crate::http::REQUEST_BYTES_BUDGET)),
            perf,
            metrics: crate::metrics::Metrics::default(),
            current: ArcSwap::from_pointee(first),
            reloading: tokio::sync::Mutex::new(()),
            last_reload: std::sync::Mutex::new(None),
            runtime,
            started,
            _scratch: scratch,
        };
        let app = Arc::new(app);
        // Watching starts before `start` returns, so a change made right after it is never missed.
        let watch = match app.config.watch {
            true => Some(crate::watch::start(app.clone()).context("starting --watch")?),
            false => None,
        };
        Ok(Server { app, listener, early, report, watch, boot_time: started.elapsed() })
    }

    /// The address the server listens on (the real port when the config asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// What the boot loaded and left out (the first generation's report).
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// How long the boot took (up to the bound listener).
    pub fn boot_time(&self) -> Duration {
        self.boot_time
    }

    /// The shared state requests use.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Serves until `shutdown` resolves, then stops accepting and lets open requests finish (up to a
    /// few seconds).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
        tracing::info!("ready: serving the loaded mods");
        let perf = self.app.perf.clone().map(|perf| (perf, self.app.config.root.join("perf.txt")));
        // Written every second: a load generator kills the server rather than asking it to stop.
        let writer = perf.clone().map(|(perf, path)| {
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                loop {
                    tick.tick().await;
                    if let Err(e) = perf.write(&path) {
                        tracing::warn!("writing {}: {e}", path.display());
                    }
                }
            })
        });
        let hangup = reload_on_hangup(self.app.clone());
        let served = crate::http::serve(self.listener, self.early, self.app, shutdown).await;
        // Both hold the app: stopped and awaited, so the store's lock is free when `run` returns.
        if let Some(watch) = self.watch {
            watch.stop().await;
        }
        hangup.abort();
        let _ = hangup.await;
        if let Some((perf, path)) = perf {
            writer.into_iter().for_each(|w| w.abort());
            if let Err(e) = perf.write(&path) {
                tracing::warn!("writing {}: {e}", path.display());
            }
        }
        served
    }
}

/// SIGHUP reloads, as daemons do.
fn reload_on_hangup(app: Arc<App>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        #[cfg(unix)]
        if let Ok(mut hangup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP: reloading");
                app.reload().await;
            }
        }
        #[cfg(not(unix))]
        drop(app);
    })
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
fn with_player_file(base: &Config) -> anyhow::Result<Config> {
    let mut config = base.clone();
    let path = config.root.join("modhost.toml");
    if path.exists() {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let file = crate::config::PlayerFile::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        config.apply_player_file(&file).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(config)
}
