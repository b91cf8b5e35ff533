//! The `modhost` command: parse the command line, start logging, run the server.

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use modhost::{Config, Server};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// A game server whose game logic lives in WebAssembly mods.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load the mods and serve the game on 127.0.0.1.
    Serve(ServeArgs),
    /// Write a generated SPT-shaped database (deterministic): about 5 MB at 3000 items, 41 MB at 24000.
    GenDb(GenDbArgs),
    /// Load the root's mods (without serving, without touching its store) and print each one's grants,
    /// limits and routes, and which were left out and why.
    Mods(ModsArgs),
    /// Vet a mod (a folder with mod.toml and <id>.wasm, or a .wasm): load it in a throwaway root under
    /// strict limits, send each route generated requests, report per route; exit 1 on a trap or timeout.
    Check(CheckArgs),
    /// Ask the server on 127.0.0.1:PORT to reload its mods and db.json (as `serve --watch` does on a
    /// change); prints the outcome, exits 1 when the reload was refused (the old mods keep serving).
    Reload(ReloadArgs),
    /// Write a new mod project: a Cargo crate on the SDK (copied in, no network needed) with one route
    /// and a test, ready for `cargo build --release` and `cargo test --release`.
    New(NewArgs),
    /// Run a mod's test binary (a wasm32-wasip2 command) with a generated db and a scratch store: the
    /// `cargo test` runner `modhost new` sets up. Exits with the tests' exit code (101 on a panic).
    TestRunner(TestRunnerArgs),
}

#[derive(clap::Args, Debug)]
struct ReloadArgs {
    /// The server's port.
    #[arg(long, env = "MODHOST_PORT", default_value_t = 6969)]
    port: u16,
}

#[derive(clap::Args, Debug)]
struct NewArgs {
    /// The mod's id, also its crate name: a-z, 0-9, `-` and `_`, starting with a letter.
    name: String,
    /// Where to write the project (default: ./NAME). Must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct TestRunnerArgs {
    /// The mod's manifest, for its id (store namespace) and grants [default: ./mod.toml if present].
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// The deadline of the whole test run, in seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// The test binary cargo built.
    wasm: PathBuf,
    /// Passed to the test binary: cargo's test filter and harness flags (`--nocapture`, `--exact`…).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

#[derive(clap::Args, Debug)]
struct CheckArgs {
    /// The mod folder, or its .wasm.
    path: PathBuf,
    /// The manifest, when it is not the mod.toml in (or beside) PATH.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// The deadline of each call, in milliseconds.
    #[arg(long, default_value_t = modhost::check::CALL_TIMEOUT_MS)]
    call_timeout_ms: u64,
}

#[derive(clap::Args, Debug)]
struct ModsArgs {
    /// Root directory, as for `serve`.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct GenDbArgs {
    /// Generated item templates (besides the roubles, the rifle and the stash).
    #[arg(long, default_value_t = 3000)]
    items: u64,
    /// Where to write the document (for example `modhost-data/db.json`).
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// TCP port on 127.0.0.1 (0 picks a free one; the log line `listening on` says which).
    #[arg(long, env = "MODHOST_PORT", default_value_t = 6969)]
    port: u16,
    /// Root directory: db.json, mods/, store/, cache/. Created (with a default db.json) if missing.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// fsync every store commit (temp file and directory): survives power loss, costs a few ms a write.
    #[arg(long, env = "MODHOST_STORE_DURABLE")]
    store_durable: bool,
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
}

impl ServeArgs {
    fn into_config(self) -> anyhow::Result<Config> {
        anyhow::ensure!(self.call_timeout_ms > 0, "--call-timeout-ms must be at least 1");
        anyhow::ensure!(self.mod_memory_mib > 0 && self.mod_memory_mib <= 4096, "--mod-memory-mib must be 1-4096");
        anyhow::ensure!(self.max_instances > 0, "--max-instances must be at least 1");
        let mut config = Config::new(self.root);
        config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        config.store_durable = self.store_durable;
        config.strict = self.strict;
        config.watch = self.watch;
        config.perf = self.perf;
        config.limits.enforce = !self.no_limits;
        if self.no_limits {
            tracing::warn!("--no-limits: mods run without deadlines or caps (for measuring only)");
        }
        config.limits.call_deadline = Duration::from_millis(self.call_timeout_ms);
        config.limits.memory_bytes = self.mod_memory_mib << 20;
        config.limits.max_instances = self.max_instances;
        Ok(config)
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "info,wasmtime=warn,cranelift=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.command {
        Command::GenDb(args) => {
            let text = modhost_gamedb::database(args.items).to_string();
            std::fs::write(&args.out, &text).with_context(|| format!("writing {}", args.out.display()))?;
            eprintln!("wrote {} ({} bytes, {} items)", args.out.display(), text.len(), args.items);
            Ok(())
        }
        Command::Check(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")?;
            let report =
                runtime.block_on(modhost::check::check(&args.path, args.manifest.as_deref(), args.call_timeout_ms))?;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", modhost::check::text(&report));
            }
            modhost::check::verdict(&report)
        }
        Command::New(args) => {
            let dir = modhost::scaffold::new_project(&args.name, args.dir.as_deref())?;
            eprintln!(
                "wrote mod `{}` in {}: `cargo build --release` builds it, `cargo test --release` tests it \
                 (README.md says how to install it)",
                args.name,
                dir.display()
            );
            Ok(())
        }
        Command::TestRunner(args) => {
            anyhow::ensure!(args.timeout_secs > 0, "--timeout-secs must be at least 1");
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")?;
            let deadline = Duration::from_secs(args.timeout_secs);
            let code =
                runtime.block_on(modhost::testrun::run(&args.wasm, &args.args, args.manifest.as_deref(), deadline))?;
            // Everything the run owned (its scratch store among it) is dropped by now.
            drop(runtime);
            std::process::exit(code)
        }
        Command::Mods(args) => {
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")?;
            runtime.block_on(mods(args))
        }
        Command::Reload(args) => reload(args.port),
        Command::Serve(args) => {
            let config = args.into_config()?;
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")?;
            runtime.block_on(serve(config))
        }
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let server = Server::start(config).await?;
    let report = server.report();
    tracing::info!(
        "booted in {:.0} ms: {} mod(s) loaded, {} left out",
        server.boot_time().as_secs_f64() * 1e3,
        report.loaded.len(),
        report.failed.len()
    );
    server.run(shutdown_signal()).await
}

async fn mods(args: ModsArgs) -> anyhow::Result<()> {
    let mut config = Config::new(args.root);
    config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    config.scratch_store = true;
    let server = Server::start(config).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&modhost::inspect::mods_json(&server.app().generation()))?);
    } else {
        print!("{}", modhost::inspect::mods_text(&server.app().generation()));
    }
    Ok(())
}

/// `modhost reload`: one POST to the running server's `/modhost/reload`.
fn reload(port: u16) -> anyhow::Result<()> {
    use std::io::{Read, Write};
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))
        .with_context(|| format!("no modhost server answers on {addr}"))?;
    // A reload compiles changed mods: a JavaScript one takes tens of seconds the first time.
    stream.set_read_timeout(Some(Duration::from_secs(600)))?;
    let request = format!(
        "POST /modhost/reload HTTP/1.1\r\nHost: {addr}\r\n{}: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        modhost::status::RELOAD_HEADER
    );
    stream.write_all(request.as_bytes())?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).context("reading the server's answer")?;
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").context("the server's answer has no body")?;
    let status = head.split(' ').nth(1).unwrap_or("?");
    let outcome: serde_json::Value = serde_json::from_str(body).with_context(|| format!("{status}: {body}"))?;
    if outcome["ok"] == true {
        println!(
            "reloaded in {:.0} ms: generation {} serving",
            outcome["took_ms"].as_f64().unwrap_or(0.0),
            outcome["generation"]
        );
        for m in outcome["loaded"].as_array().into_iter().flatten() {
            println!("  {}", m.as_str().unwrap_or_default());
        }
        for f in outcome["failed"].as_array().into_iter().flatten() {
            println!("  left out: {}: {}", f[0].as_str().unwrap_or_default(), f[1].as_str().unwrap_or_default());
        }
        Ok(())
    } else {
        let why = outcome["reason"].as_str().or(outcome["error"].as_str()).unwrap_or(body);
        anyhow::bail!("reload refused ({status}); generation {} still serving: {why}", outcome["generation"])
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
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
