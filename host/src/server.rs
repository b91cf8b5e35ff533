//! Boot and run: prepare the root, open the store, bind the listener, build the first [`Generation`]
//! (db and mods, see `generation.rs`); [`Server::run`] then serves until shutdown.
//!
//! Key type: [`Server`].
//!
//! A mod that fails to load is left out and reported, and the server starts without it, unless
//! `strict`. The listener is bound before the mods load, so a client that connects during boot waits
//! and is never refused (`front/listen.rs`).

use crate::app::{App, Parts};
use crate::generation::{Generation, LeftOut, LoadReport};
use crate::realtime::Realtime;
use crate::sandbox::Runtime;
use crate::session::SessionLocks;
use crate::settings::ServerSettings;
use anyhow::{Context as _, bail};
use modhost_store::Store;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

/// A server that has loaded its mods and bound its socket.
#[derive(Debug)]
pub struct Server {
    app: Arc<App>,
    listener: Arc<TcpListener>,
    /// Connections that arrived while the mods loaded; they are served first.
    early: crate::front::EarlyAccept,
    report: LoadReport,
    /// `--watch`: reloads on changes while the server runs.
    watch: Option<crate::watch::Watch>,
    boot_time: Duration,
    /// Connections open at once, from the open-file limit (`nofile.rs`).
    max_connections: usize,
}

impl Server {
    /// Boots: everything up to a bound listener. Errors here are fatal (an unreadable `db.json`, a
    /// port in use, a broken mod under `strict`).
    pub async fn start(base: ServerSettings) -> anyhow::Result<Server> {
        let started = Instant::now();
        let root = base.root.clone();
        let root = &root;
        for dir in [root.clone(), root.join("mods"), root.join("store"), root.join("cache")] {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        // The player's limits, if they wrote any: a bad file stops the boot with what and where.
        let config = crate::app::with_player_file(&base)?;
        crate::generation::write_default_db(root)?;
        let scratch = if config.scratch_store { Some(tempfile::tempdir().context("a scratch store")?) } else { None };
        let store_dir = scratch.as_ref().map_or_else(|| root.join("store"), |s| s.path().to_owned());
        let store = Arc::new(match (&config.store_url, &scratch) {
            (Some(url), None) => {
                // The PostgreSQL client blocks: never on an async worker (here, or in any call of it).
                let url = url.clone();
                let store = tokio::task::spawn_blocking(move || modhost_store_pg::connect(&url)).await??;
                tracing::info!("store: PostgreSQL, shared with every host that names it");
                store
            }
            _ => Store::open(&store_dir, config.store_durable)?,
        });
        // Every connection is a descriptor: the soft limit (often 1024) is raised to the hard one, and the
        // front's cap leaves room under it for the store, the mods and the logs (`nofile.rs`).
        let max_connections = match crate::nofile::raise() {
            Some(limit) => {
                let cap = crate::nofile::connection_cap(limit.now).min(config.max_connections).max(1);
                tracing::info!("open files: soft limit {} (was {}); connections capped at {cap}", limit.now, limit.was);
                cap
            }
            None => config.max_connections.max(1),
        };
        store.set_quotas(config.store_quotas());
        // The timers' records are the host's bookkeeping, not values anyone restores: never backed up
        // (each fired one-shot would leave its record in the store's backups).
        let dropped = {
            let store = store.clone();
            tokio::task::spawn_blocking(move || store.without_backups(crate::realtime::timers::NAMESPACE_PREFIX))
                .await??
        };
        if dropped > 0 {
            tracing::info!("dropped {dropped} backups of timer records (timer records are no longer backed up)");
        }
        // Listen before the mods load: a client that connects during boot waits, and is never refused.
        let listener =
            Arc::new(TcpListener::bind(config.addr).await.with_context(|| format!("binding {}", config.addr))?);
        tracing::info!("listening on {}", listener.local_addr()?);
        let early = crate::front::EarlyAccept::start(listener.clone(), config.boot_wait, max_connections);
        // The server's session locks and realtime parts (the notifier's hub, mods' sockets, the timers,
        // kept in the store): every generation shares them, and the sandbox is handed them.
        // On a store shared by several hosts, a session's lock is also a lease in it, lasting twice
        // the longest call (at least 10 s) unless the player says: a dead or frozen host's sessions go
        // elsewhere after it. A call longer than its lease would have its writes refused.
        let sessions = Arc::new(match store.shared() {
            true => {
                let ttl =
                    config.session_lease.unwrap_or((config.limits.call_deadline * 2).max(Duration::from_secs(10)));
                SessionLocks::clustered(Arc::new(crate::session::Cluster::new(store.clone(), ttl)))
            }
            false => SessionLocks::default(),
        });
        let holder = sessions.cluster().map(|c| c.holder().to_owned());
        let realtime = Arc::new(Realtime::new(config.realtime.clone(), store.clone(), holder.as_deref()));
        let runtime =
            Arc::new(Runtime::new(config.engine, Some(root.join("cache")), sessions.clone(), realtime.clone())?);

        // A cluster that had stopped whole starts its db anew, as one host does (`dblog.rs`).
        if let (Some(exchange), Some(holder)) = (store.exchange(), holder.clone()) {
            let begun = tokio::task::spawn_blocking(move || exchange.begin_log(&holder)).await??;
            if begun {
                tracing::info!("no other host is running: the cluster's db patch log starts empty");
            }
        }
        let first = Generation::build(1, &config, &runtime, &store, false).await?;
        if config.strict && !first.report.failed.is_empty() {
            let list: Vec<String> = first.report.failed.iter().map(LeftOut::to_string).collect();
            bail!("--strict: {} mod(s) failed to load:\n{}", list.len(), list.join("\n"));
        }
        let report = first.report.clone();
        let body_budget = Arc::new(tokio::sync::Semaphore::new(crate::front::REQUEST_BYTES_BUDGET));
        let app = Arc::new(App::new(Parts {
            config,
            base,
            store,
            sessions,
            realtime,
            first,
            runtime,
            started,
            scratch,
            body_budget,
        }));
        app.prune_cache();
        // Watching starts before `start` returns, so a change made right after it is never missed.
        let watch = match app.config.watch {
            true => Some(crate::watch::start(app.clone()).context("starting --watch")?),
            false => None,
        };
        Ok(Server { app, listener, early, report, watch, boot_time: started.elapsed(), max_connections })
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
        let timers = crate::scheduler::start(self.app.clone());
        let addr = self.listener.local_addr().map(|a| a.to_string()).unwrap_or_default();
        let members = self.app.sessions.cluster().map(|c| crate::members::start(self.app.clone(), c.clone(), addr));
        // On a shared store: the other hosts' pushes and db patches.
        let link = match self.app.store.exchange() {
            Some(exchange) => Some(crate::cluster_link::start(self.app.clone(), &exchange)?),
            None => None,
        };
        let served = crate::front::serve(self.listener, self.early, self.app, self.max_connections, shutdown).await;
        // Its firings hold the app (and the store) too.
        timers.stop().await;
        // Both hold the app: stopped and awaited, so the store's lock is free when `run` returns.
        if let Some(watch) = self.watch {
            watch.stop().await;
        }
        hangup.abort();
        let _ = hangup.await;
        if let Some(link) = link {
            link.stop().await;
        }
        if let Some(members) = members {
            members.abort();
            let _ = members.await;
        }
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
