//! How late mods' timers fire (issue 19): one-shot timers at spread delays, a burst of one-shots due
//! at the same instant, and a periodic timer, on a real server (in this process, on 127.0.0.1, with
//! its release build and default limits), each firing's lateness printed as p50/p90/p99/max.
//!
//! What is measured, per firing, from what the timer fixture (`tests/fixtures/timer`) stores:
//! - `host late`: the `late-ms` the host hands `on-timer`, taken just before the call (after the
//!   sleep, the store read of the one-shot's record and, for a session, the lock);
//! - `seen late`: the guest's own clock when its handler starts minus the due time: the host's figure
//!   plus the fresh instance's start. Both are wall-clock ms since the epoch on one machine.
//!
//! The target is p99 ≤ one epoch tick + 10 ms (`EngineLimits::epoch_tick`, 10 ms by default): the
//! scheduler sleeps until the first due time, so lateness is the timer wheel's millisecond plus the
//! firing's own work. The burst row is there to show the cost of many timers due at once (at most 64
//! fire at a time, `scheduler.rs`): it is not held to the target.
//!
//! No gate: a timed figure on a shared 2-core machine. The table is for reading.
//!
//! `target/release/timer-lateness --spread 500 --burst 200 --ticks 10` (after `cargo build --release
//! -p modhost-benches --bin timer-lateness`, which also builds the guests).

use anyhow::{Context, bail};
use clap::Parser;
use modhost_benches::stats::percentile;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "Lateness of one-shot and periodic timers on a real server")]
struct Args {
    /// One-shot timers at delays spread evenly over `--over` ms (after 500 ms).
    #[arg(long, default_value_t = 500)]
    spread: usize,
    /// The span of the spread timers' delays, in ms.
    #[arg(long, default_value_t = 5000)]
    over: u64,
    /// One-shot timers all due at the same instant (0: no burst row).
    #[arg(long, default_value_t = 200)]
    burst: usize,
    /// Firings of a 1-second periodic timer to measure (it runs alongside the others).
    #[arg(long, default_value_t = 10)]
    ticks: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let builder = TestServer::builder().config(|c| {
        c.engine = modhost::EngineLimits::default();
        c.limits = modhost::ModLimits::default();
    });
    let dir = builder.root().join("mods").join("tm");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("config.default.json"), json!({"every": [{"name": "tick", "every_s": 1}]}).to_string())?;
    let builder = builder.with_mod("tm", guests::TIMER, "");
    let server = builder.start().await.context("starting the server")?;
    let tick_ms = server.app.config.engine.epoch_tick.as_millis() as f64;

    // Spread: one schedule call per timer, each at its own delay.
    let mut spread_ids = Vec::with_capacity(args.spread);
    for i in 0..args.spread {
        let delay = 500 + args.over * i as u64 / args.spread.max(1) as u64;
        spread_ids.push(schedule(&server, json!({"name": "note", "delay_ms": delay, "payload": "spread"})).await?);
    }
    // Burst: all in one call, so their due times are within the call's few ms; the same delay each.
    let burst = if args.burst > 0 {
        let ask = json!({"name": "note", "delay_ms": args.over / 2, "payload": "burst", "count": args.burst});
        let answer = post(&server, "/timer/schedule", &ask).await?;
        if !answer["error"].is_null() {
            bail!("scheduling the burst: {}", answer["error"]);
        }
        args.burst
    } else {
        0
    };

    // Wait for every one-shot and the ticks, bounded.
    let started = Instant::now();
    let wait = Duration::from_millis(args.over) + Duration::from_secs(30 + args.ticks as u64 * 2);
    let fired = loop {
        let fired = get(&server, "/timer/fired").await?;
        let records = fired.as_array().cloned().unwrap_or_default();
        let count = |payload: &str| records.iter().filter(|r| r["payload"] == payload).count();
        let ticks = records.iter().filter(|r| r["name"] == "tick").count();
        if count("spread") >= args.spread && count("burst") >= burst && ticks >= args.ticks {
            break records;
        }
        if started.elapsed() > wait {
            bail!(
                "not all fired within {} s: {}/{} spread, {}/{burst} burst, {ticks}/{} ticks",
                wait.as_secs(),
                count("spread"),
                args.spread,
                count("burst"),
                args.ticks
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let failed = mods_timer_counts(&server).await?;
    server.stop().await?;

    println!("timer lateness, ms (target: p99 <= epoch tick {tick_ms} ms + 10 ms = {} ms)", tick_ms + 10.0);
    println!("{:<28} {:>6} {:>8} {:>8} {:>8} {:>8}", "row", "n", "p50", "p90", "p99", "max");
    let rows: [(&str, Keep); 3] = [
        ("one-shot, spread", |r| r["payload"] == "spread"),
        ("one-shot, burst", |r| r["payload"] == "burst"),
        ("periodic 1 s", |r| r["name"] == "tick"),
    ];
    for (row, keep) in rows {
        let picked: Vec<&Value> = fired.iter().filter(|r| keep(r)).collect();
        if picked.is_empty() {
            continue;
        }
        let host: Vec<f64> = picked.iter().map(|r| r["late_ms"].as_f64().unwrap_or(f64::NAN)).collect();
        let seen: Vec<f64> = picked
            .iter()
            .map(|r| r["seen_ms"].as_f64().unwrap_or(f64::NAN) - r["due_ms"].as_f64().unwrap_or(f64::NAN))
            .collect();
        for (what, xs) in [("host late", &host), ("seen late", &seen)] {
            println!(
                "{:<28} {:>6} {:>8.0} {:>8.0} {:>8.0} {:>8.0}",
                format!("{row}: {what}"),
                xs.len(),
                percentile(xs, 0.5),
                percentile(xs, 0.9),
                percentile(xs, 0.99),
                xs.iter().copied().fold(0.0, f64::max)
            );
        }
    }
    println!("timers failed {}, retried {}", failed.0, failed.1);
    Ok(())
}

/// Which firings a row takes.
type Keep = fn(&Value) -> bool;

async fn post(server: &TestServer, path: &str, body: &Value) -> anyhow::Result<Value> {
    let reply = send(server.addr, &Call::post_raw(path, body.to_string().as_bytes())).await?;
    if reply.status != 200 {
        bail!("{path}: {} {}", reply.status, reply.text());
    }
    Ok(reply.json())
}

async fn get(server: &TestServer, path: &str) -> anyhow::Result<Value> {
    let reply = send(server.addr, &Call::get(path)).await?;
    if reply.status != 200 {
        bail!("{path}: {} {}", reply.status, reply.text());
    }
    Ok(reply.json())
}

async fn schedule(server: &TestServer, ask: Value) -> anyhow::Result<String> {
    let answer = post(server, "/timer/schedule", &ask).await?;
    answer["ids"][0].as_str().map(str::to_owned).with_context(|| format!("not scheduled: {answer}"))
}

/// `tm`'s (timers failed, retried) from `/modhost/mods`: a run with failures is not a clean figure.
async fn mods_timer_counts(server: &TestServer) -> anyhow::Result<(u64, u64)> {
    let mods = get(server, "/modhost/mods").await?;
    let tm = mods["loaded"].as_array().and_then(|l| l.iter().find(|m| m["id"] == "tm")).context("tm not loaded")?;
    Ok((tm["timers_failed"].as_u64().unwrap_or(0), tm["timers_retried"].as_u64().unwrap_or(0)))
}
