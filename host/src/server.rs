//! Boot: prepare the root, load the db and store, load every mod (compile, routes, init) in order,
//! build the route table, bind the listener. [`Server::run`] then serves until shutdown.
//!
//! Key types: [`Server`], [`App`] (what every request needs, shared), [`LoadReport`].
//!
//! A mod that fails to load (bad manifest, compile or link error, a route another mod already claims,
//! a failing `init`) is left out and reported, and the server starts without it, unless `strict`.
//! Route conflicts are checked before a mod's `init` runs, so a refused mod never patches the db.

use crate::config::Config;
use crate::db::Db;
use crate::mods::{self, Origin};
use crate::plugin::{CompileSource, LoadedMod, ModContext, Runtime, WitMatchKind};
use crate::router::{MatchKind, RouteTable, RouteTableBuilder};
use crate::session::SessionLocks;
use crate::store::Store;
use anyhow::{Context as _, bail};
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// The small database written to an empty root so `modhost serve` works out of the box.
/// Templates in the database a new root starts with: the generator's shape at a size that boots at
/// once (about 0.2 MB). A player's real database replaces `<root>/db.json`.
const DEFAULT_DB_ITEMS: u64 = 100;

/// What every request needs. Shared by all connections.
#[derive(Debug)]
pub struct App {
    /// The configuration the server started with.
    pub config: Config,
    /// The game database.
    pub db: Arc<Db>,
    /// The per-session locks.
    pub sessions: SessionLocks,
    /// Which mod answers which route.
    pub routes: RouteTable<Arc<LoadedMod>>,
    /// Compressed answers of 8 KiB and more, keyed so a stale hit is impossible.
    pub body_cache: crate::body_cache::BodyCache,
    /// Request body bytes held in memory across all connections, one permit a byte.
    pub body_budget: Arc<tokio::sync::Semaphore>,
    /// `--perf`: time per request phase (absent when off).
    pub perf: Option<Arc<crate::perf::Perf>>,
    /// Per-route counters and latency histograms, served at `/metrics`.
    pub metrics: crate::metrics::Metrics,
    /// The loaded mods, in load order.
    pub mods: Vec<Arc<LoadedMod>>,
    /// Kept alive for the mods' instances (engine and epoch ticker).
    _runtime: Runtime,
    /// The throwaway store directory of `scratch_store`, removed with the app.
    _scratch: Option<tempfile::TempDir>,
}

/// One loaded mod, for the report.
#[derive(Debug, Clone)]
pub struct LoadedInfo {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Built in, or from a folder.
    pub origin: Origin,
    /// Whether its compiled form came from the cache.
    pub compile: CompileSource,
    /// Time to compile or load it, link it, and run `routes` and `init`.
    pub load_time: Duration,
}

/// What the boot loaded and what it left out.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// The mods that loaded, in load order.
    pub loaded: Vec<LoadedInfo>,
    /// The mods left out: (name or folder, reason).
    pub failed: Vec<(String, String)>,
}

/// A server that has loaded its mods and bound its socket.
#[derive(Debug)]
pub struct Server {
    app: Arc<App>,
    listener: Arc<TcpListener>,
    /// Connections that arrived while the mods loaded; they are served first.
    early: crate::http::EarlyAccept,
    report: LoadReport,
    boot_time: Duration,
}

impl Server {
    /// Boots: everything up to a bound listener. Errors here are fatal (an unreadable `db.json`, a
    /// port in use, a broken mod under `strict`).
    pub async fn start(mut config: Config) -> anyhow::Result<Server> {
        let started = Instant::now();
        let root = config.root.clone();
        let root = &root;
        for dir in [root.clone(), root.join("mods"), root.join("store"), root.join("cache")] {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // The player's limits, if they wrote any: a bad file stops the boot with what and where.
        let player_file = root.join("modhost.toml");
        if player_file.exists() {
            let text =
                std::fs::read_to_string(&player_file).with_context(|| format!("reading {}", player_file.display()))?;
            let file =
                crate::config::PlayerFile::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?;
            config.apply_player_file(&file).map_err(|e| anyhow::anyhow!("{}: {e}", player_file.display()))?;
        }
        let db = Arc::new(load_db(root)?);
        let scratch = if config.scratch_store { Some(tempfile::tempdir().context("a scratch store")?) } else { None };
        let store_dir = scratch.as_ref().map_or_else(|| root.join("store"), |s| s.path().to_owned());
        let store = Arc::new(Store::open(&store_dir, config.store_durable)?);
        // Listen before the mods load: a client that connects during boot waits, and is never refused.
        let listener =
            Arc::new(TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?);
        tracing::info!("listening on {}", listener.local_addr()?);
        let early = crate::http::EarlyAccept::start(listener.clone(), config.boot_wait);
        let runtime = Runtime::new(config.limits.clone(), Some(root.join("cache")))?;

        let mut sources = Vec::new();
        if config.builtin_mods {
            sources.extend(mods::builtins());
        }
        sources.extend(mods::discover(&root.join("mods")));

        let mut report = LoadReport::default();
        let mut mods_loaded = Vec::new();
        let mut builder = RouteTableBuilder::default();
        for source in sources {
            let source = match source {
                Ok(source) => source,
                Err(e) => {
                    report.failed.push((e.folder.display().to_string(), e.reason));
                    continue;
                }
            };
            let id = source.manifest.id.clone();
            let t0 = Instant::now();
            let limits = config.limits_for(&id);
            match load_one(&runtime, &source, limits, &db, &store, &report, &mut builder).await {
                Ok((loaded, compile)) => {
                    mods_loaded.push(loaded);
                    let info = LoadedInfo {
                        id: id.clone(),
                        version: source.manifest.version.clone(),
                        origin: source.origin.clone(),
                        compile,
                        load_time: t0.elapsed(),
                    };
                    tracing::info!(
                        "loaded mod {id} {} ({:?}, {:?}) in {:.1} ms",
                        info.version,
                        info.origin,
                        compile,
                        info.load_time.as_secs_f64() * 1e3
                    );
                    report.loaded.push(info);
                }
                Err(e) => {
                    tracing::error!("mod {id} was not loaded: {e:#}");
                    report.failed.push((id, format!("{e:#}")));
                }
            }
        }
        if config.strict && !report.failed.is_empty() {
            let list: Vec<String> = report.failed.iter().map(|(m, why)| format!("{m}: {why}")).collect();
            bail!("--strict: {} mod(s) failed to load:\n{}", list.len(), list.join("\n"));
        }

        let body_cache = crate::body_cache::BodyCache::new(config.limits.body_cache_bytes);
        let perf = config.perf.then(Arc::default);
        let app = App {
            config,
            db,
            sessions: SessionLocks::default(),
            routes: builder.build(),
            body_cache,
            body_budget: Arc::new(tokio::sync::Semaphore::new(crate::http::REQUEST_BYTES_BUDGET)),
            perf,
            metrics: crate::metrics::Metrics::default(),
            mods: mods_loaded,
            _runtime: runtime,
            _scratch: scratch,
        };
        Ok(Server { app: Arc::new(app), listener, early, report, boot_time: started.elapsed() })
    }

    /// The address the server listens on (the real port when the config asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// What the boot loaded and left out.
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
        let served = crate::http::serve(self.listener, self.early, self.app, shutdown).await;
        if let Some((perf, path)) = perf {
            writer.into_iter().for_each(|w| w.abort());
            if let Err(e) = perf.write(&path) {
                tracing::warn!("writing {}: {e}", path.display());
            }
        }
        served
    }
}

fn load_db(root: &Path) -> anyhow::Result<Db> {
    let path = root.join("db.json");
    if !path.exists() {
        // Written aside and renamed, so a crash here never leaves a half database to fail the next boot.
        let text = serde_json::to_vec(&crate::gamedb::database(DEFAULT_DB_ITEMS))?;
        let aside = root.join("db.json.new");
        std::fs::write(&aside, text)
            .and_then(|()| std::fs::rename(&aside, &path))
            .with_context(|| format!("writing the default {}", path.display()))?;
        tracing::info!("wrote a default database to {}", path.display());
    }
    Ok(Db::load(&path)?)
}

async fn load_one(
    runtime: &Runtime,
    source: &mods::ModSource,
    limits: crate::config::Limits,
    db: &Arc<Db>,
    store: &Arc<Store>,
    report: &LoadReport,
    builder: &mut RouteTableBuilder<Arc<LoadedMod>>,
) -> anyhow::Result<(Arc<LoadedMod>, CompileSource)> {
    let id = &source.manifest.id;
    if report.loaded.iter().any(|m| &m.id == id) {
        bail!("another mod with id `{id}` is already loaded");
    }
    let cx = Arc::new(ModContext::new(id, db.clone(), store.clone(), source.manifest.grants()));
    let (loaded, compile) = runtime.load(&source.wasm, cx, source.manifest.reuse, limits)?;
    let loaded = Arc::new(loaded);
    let routes: Vec<(String, MatchKind)> = loaded
        .routes()
        .await
        .context("asking for its routes")?
        .into_iter()
        .map(|r| {
            let kind = match r.kind {
                WitMatchKind::Exact => MatchKind::Exact,
                WitMatchKind::Prefix => MatchKind::Prefix,
            };
            (r.path, kind)
        })
        .collect();
    builder.check(id, &routes)?;
    // A mod whose init fails is left out, and so are the patches it made before failing.
    let before = db.snapshot();
    if let Err(e) = loaded.init().await {
        db.restore(before);
        return Err(anyhow::Error::from(e).context("its init failed (its db patches were undone)"));
    }
    builder.add_all(id, &routes, loaded.clone())?;
    Ok((loaded, compile))
}
