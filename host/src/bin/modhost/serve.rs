//! `modhost serve`: load the mods and serve the game on 127.0.0.1 until Ctrl-C or SIGTERM.

use modhost::{Server, ServerSettings};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// TCP port on 127.0.0.1 (0 picks a free one; the log line `listening on` says which).
    #[arg(long, env = "MODHOST_PORT", default_value_t = 6969)]
    port: u16,
    /// Root directory: db.json, mods/, store/, cache/. Created (with a default db.json) if missing.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// fsync every store commit (temp file and directory): survives power loss, costs a few ms a write.
    #[arg(long, env = "MODHOST_STORE_DURABLE")]
    store_durable: bool,
    /// A PostgreSQL store shared by several hosts (postgres://user:password@host/database, or
    /// ?host=/socket/folder), instead of the SQLite one in <root>/store. Also `[store] url` in
    /// modhost.toml.
    #[arg(long, env = "MODHOST_STORE_URL")]
    store_url: Option<String>,
    /// With --store-url: how long a session's lease lasts, in milliseconds (default: twice
    /// --call-timeout-ms, at least 10 s). A host that dies or freezes keeps its sessions this long;
    /// a call that runs longer has its writes refused.
    #[arg(long, requires = "store_url")]
    session_lease_ms: Option<u64>,
    /// Refuse to start when any mod fails to load (by default the server starts without it); a reload
    /// is then refused when any mod fails.
    #[arg(long)]
    strict: bool,
    /// Reload when a mod's files (<root>/mods/) or <root>/db.json change: the new mods and db are built
    /// beside the serving ones and swapped in when they load; requests in flight finish on the old.
    #[arg(long)]
    watch: bool,
    /// Run mods WITHOUT deadlines, memory and table caps or the host-call copy cap: only to measure what
    /// they cost (modhost-bench --vs-args). A looping or greedy mod then stalls the server.
    #[arg(long)]
    no_limits: bool,
    /// Time each request's phases (head, lock wait, guest, each host call, deflate, send…) per endpoint
    /// and per mod; the table is written to <root>/perf.txt every second.
    #[arg(long)]
    perf: bool,
    /// How long one request may run inside a mod, in milliseconds, before it is stopped (500).
    #[arg(long, default_value_t = 5000)]
    call_timeout_ms: u64,
    /// Linear memory one mod instance may use, in MiB.
    #[arg(long, default_value_t = 128)]
    mod_memory_mib: usize,
    /// Calls that may be inside mods at once (the instance pool's size).
    #[arg(long, default_value_t = 256)]
    max_instances: u32,
    /// For measuring only: turn one of the engine's speed levers against its default (on-demand,
    /// no-keep-resident, no-pagemap-scan, no-cow); `route-cost --levers` compares them. What a
    /// mod may do or see is the same under each.
    #[arg(long, value_parser = modhost::EngineLever::named)]
    engine_lever: Option<modhost::EngineLever>,
    /// Name the mods' compiled functions in /tmp/perf-<pid>.map, so that `perf record -p <pid>` then
    /// `perf report` shows which guest function the time is in (wasmtime's perf map). For profiling.
    #[arg(long)]
    perfmap: bool,
}

impl Args {
    /// The server settings these flags mean, validated, with no I/O.
    fn into_config(self) -> anyhow::Result<ServerSettings> {
        anyhow::ensure!(self.call_timeout_ms > 0, "--call-timeout-ms must be at least 1");
        anyhow::ensure!(self.mod_memory_mib > 0 && self.mod_memory_mib <= 4096, "--mod-memory-mib must be 1-4096");
        anyhow::ensure!(self.max_instances > 0, "--max-instances must be at least 1");
        let mut config = ServerSettings::new(self.root);
        config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        config.store_durable = self.store_durable;
        config.store_url = self.store_url;
        if let Some(ms) = self.session_lease_ms {
            anyhow::ensure!(ms >= 100, "--session-lease-ms must be at least 100");
            config.session_lease = Some(Duration::from_millis(ms));
        }
        config.strict = self.strict;
        config.watch = self.watch;
        config.perf = self.perf;
        config.engine.enforce = !self.no_limits;
        if self.no_limits {
            tracing::warn!("--no-limits: mods run without deadlines or caps (for measuring only)");
        }
        config.limits.call_deadline = Duration::from_millis(self.call_timeout_ms);
        // The pool's slot, and every mod's cap unless `modhost.toml` lowers it.
        config.engine.memory_bytes = self.mod_memory_mib << 20;
        config.limits.memory_bytes = config.engine.memory_bytes;
        config.engine.max_instances = self.max_instances;
        config.engine.lever = self.engine_lever;
        config.engine.perfmap = self.perfmap;
        if let Some(lever) = self.engine_lever {
            tracing::warn!("--engine-lever {lever:?}: the engine runs with one lever turned (for measuring only)");
        }
        Ok(config)
    }
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let config = args.into_config()?;
    let root = config.root.clone();
    crate::runtime()?.block_on(async {
        let server = Server::start(config).await?;
        // Where `modhost install`, `enable`, `disable` and `uninstall` find this server to reload it.
        let _announced = modhost::install::announce(&root, server.local_addr()?)?;
        let report = server.report();
        tracing::info!(
            "booted in {:.0} ms: {} mod(s) loaded, {} left out",
            server.boot_time().as_secs_f64() * 1e3,
            report.loaded.len(),
            report.failed.len()
        );
        server.run(shutdown_signal()).await
    })
}

/// Resolves on Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}
