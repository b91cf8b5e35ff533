//! One mod's memory burst against everyone else (issue 17, item 4): `--burst` concurrent requests to a
//! fixture route that allocates and touches `--mib` MiB each (under the 128 MiB per-call cap), in
//! rounds for `--secs`, while one client times requests to another mod (`/hello/item`) one after the
//! other. It prints the burst's statuses, the other mod's latency (median, p99, max) and the server's
//! peak RSS (`VmHWM` of `/proc/<pid>/status`).
//!
//! Run against any modhost binary (the fixture is installed into a fresh root, so an older build can be
//! measured with the same mods): `target/release/memory-burst --modhost target/release/modhost`
//! (after `cargo test --release`, which builds the fixture, and `cargo build --release -p
//! modhost-benches`). `--guest-memory-mib` writes `[limits] guest_memory_mib` into `modhost.toml`
//! (a build without the budget refuses that key).

use anyhow::Context as _;
use clap::Parser;
use modhost_benches::stats::{median, percentile};
use modhost_tests::child::ServeChild;
use modhost_tests::client::{Call, send};
use modhost_tests::guests;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "A mod's memory burst against another mod's latency and the server's RSS")]
struct Args {
    /// The modhost binary.
    #[arg(long, default_value = "target/release/modhost")]
    modhost: PathBuf,
    /// Concurrent requests of the burst.
    #[arg(long, default_value_t = 64)]
    burst: usize,
    /// MiB each burst request allocates and touches.
    #[arg(long, default_value_t = 120)]
    mib: usize,
    /// Seconds the burst goes on (in rounds: each of its clients sends again when answered).
    #[arg(long, default_value_t = 10.0)]
    secs: f64,
    /// The server's guest memory budget, MiB (none: the server's default).
    #[arg(long)]
    guest_memory_mib: Option<usize>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let root = tempfile::tempdir()?;
    for (id, wasm) in [("fx", guests::FIXTURE), ("hello", guests::HELLO)] {
        modhost_tests::server::install_mod(root.path(), id, std::path::Path::new(wasm), "")?;
    }
    if let Some(mib) = args.guest_memory_mib {
        std::fs::write(root.path().join("modhost.toml"), format!("[limits]\nguest_memory_mib = {mib}\n"))?;
    }
    let server = ServeChild::spawn(&args.modhost, root.path(), &[]).context("starting the server")?;
    let (addr, pid) = (server.addr, server.pid());
    for _ in 0..3 {
        send(addr, &Call::get("/hello/item")).await?;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let path = format!("/fx/alloc/{}", args.mib);
    let mut burst = Vec::new();
    for _ in 0..args.burst {
        let (stop, path) = (stop.clone(), path.clone());
        burst.push(tokio::spawn(async move {
            let mut statuses = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                statuses.push(send(addr, &Call::get(&path)).await.map_or(0, |r| r.status));
            }
            statuses
        }));
    }
    let started = Instant::now();
    let mut latencies = Vec::new();
    while started.elapsed().as_secs_f64() < args.secs {
        let t = Instant::now();
        let reply = send(addr, &Call::get("/hello/item")).await?;
        anyhow::ensure!(reply.status == 200, "the other mod answered {}: {}", reply.status, reply.text());
        latencies.push(t.elapsed().as_secs_f64() * 1e3);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for task in burst {
        for status in task.await? {
            *statuses.entry(status).or_default() += 1;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let peak_kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("VmHWM")?;
    println!("modhost: {}", args.modhost.display());
    println!("burst: {} x {} MiB for {:.0} s; answers by status: {statuses:?}", args.burst, args.mib, args.secs);
    println!(
        "other mod (/hello/item), {} requests: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        median(&latencies),
        percentile(&latencies, 0.99),
        latencies.iter().copied().fold(0.0, f64::max)
    );
    println!("server peak RSS (VmHWM): {} MiB", peak_kib >> 10);
    drop(server);
    Ok(())
}
