//! `modhost-bench`: the SPT client's mix against a real `modhost serve` child, over the real wire,
//! every answer validated; per endpoint latency, time to first byte and size; totals and boot time.
//!
//! With `--vs OTHER`, two builds run alternately (the order flipped each repetition) and each metric
//! is compared by its medians, min–max, B/A and an exact Mann-Whitney p (the method of seeds 000, 001
//! and 003). `--scenario` runs the mix beside misbehaving clients; `--perf` prints the server's time
//! per phase; `--report FILE` writes an HTML page with the latency distributions.
//!
//! Not a test: it prints tables. `cargo run --release -p modhost-benches --bin modhost-bench -- --help`.

mod mix;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use mix::{Endpoint, Options, Pass, Run};
use modhost_benches::report::{self, Plot, Report, Series, Table};
use modhost_benches::stats::{self, mann_whitney, median, summarize};
use modhost_tests::child::sibling_modhost;
use serde_json::{Value, json};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(about = "The SPT client's mix against modhost serve, validated, per endpoint and per phase")]
struct Args {
    /// The modhost binary (A). Default: the one beside this binary.
    #[arg(long)]
    modhost: Option<PathBuf>,
    /// Compare with this modhost binary (B): A and B alternate, the order flipped each repetition.
    #[arg(long)]
    vs: Option<PathBuf>,
    /// Extra arguments for A's `modhost serve` (one string, split at spaces).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    args: String,
    /// Extra arguments for B's `modhost serve`; given alone, B is A's binary with these arguments
    /// (`--vs-args=--no-limits` measures what the limits cost).
    #[arg(long, allow_hyphen_values = true)]
    vs_args: Option<String>,
    /// Repetitions per side with --vs (even, so each side runs first equally often).
    #[arg(long, default_value_t = 6)]
    reps: u32,
    /// Generated item templates in the database.
    #[arg(long, default_value_t = 3000)]
    items: u64,
    /// Measured rounds of the mix (per scenario).
    #[arg(long, default_value_t = 20)]
    rounds: u32,
    /// Rounds before measuring.
    #[arg(long, default_value_t = 3)]
    warmup: u32,
    /// `Move`s per round.
    #[arg(long, default_value_t = 25)]
    moves: u32,
    /// One kept-alive connection (default: a new connection per request).
    #[arg(long)]
    keepalive: bool,
    /// What runs beside the mix: quiet, misbehaving clients (idle, slowloris, slow-readers,
    /// fragmented), reloading (the mods and db reloaded every 100 ms), or all; several separated by commas.
    #[arg(long, default_value = "quiet")]
    scenario: String,
    /// Start the server with --perf and print its time per phase after the run.
    #[arg(long)]
    perf: bool,
    /// Printed with the results.
    #[arg(long)]
    label: Option<String>,
    /// Also write the results as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write an HTML report (latency distributions per endpoint) here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Exit non-zero when the first scenario's requests per second are below this.
    #[arg(long)]
    floor: Option<f64>,
    /// Exit non-zero when a `Move`'s median latency is over this many times a keepalive's (the
    /// trivial route, measured in the same rounds, so the machine's load cancels out): the gate on
    /// the game's most frequent endpoint, where `--floor` would not see a Move twice as slow.
    #[arg(long)]
    max_move_ratio: Option<f64>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let a = args.modhost.clone().map_or_else(sibling_modhost, Ok)?;
    anyhow::ensure!(a.exists(), "{} does not exist (build it, or pass --modhost)", a.display());
    if let Some(b) = &args.vs {
        anyhow::ensure!(b.exists(), "{} does not exist", b.display());
    }
    let split = |s: &str| -> Vec<String> { s.split_whitespace().map(str::to_owned).collect() };
    let b_binary = args.vs.clone().or_else(|| args.vs_args.as_ref().map(|_| a.clone()));
    anyhow::ensure!(args.rounds > 0 && args.reps > 0, "--rounds and --reps must be at least 1");
    let scenarios: Vec<String> = match args.scenario.as_str() {
        "all" => ["quiet"]
            .iter()
            .chain(modhost_benches::adversary::KINDS.iter())
            .chain(&[mix::RELOADING])
            .map(|s| s.to_string())
            .collect(),
        list => list.split(',').map(|s| s.trim().to_owned()).collect(),
    };
    for s in &scenarios {
        anyhow::ensure!(
            s == "quiet" || s == mix::RELOADING || modhost_benches::adversary::KINDS.contains(&s.as_str()),
            "unknown scenario `{s}`; known: quiet, {}, reloading, all",
            modhost_benches::adversary::KINDS.join(", ")
        );
    }
    let opts = Options {
        rounds: args.rounds,
        warmup: args.warmup,
        moves: args.moves,
        keepalive: args.keepalive,
        perf: args.perf,
    };
    let db = modhost_gamedb::database(args.items).to_string().into_bytes();
    if let Some(label) = &args.label {
        println!("label: {label}");
    }
    println!(
        "modhost-bench: {} items ({:.1} MiB db), {} rounds (+{} warm-up) of 6 reads and {} moves, {}, scenarios {}",
        args.items,
        db.len() as f64 / (1 << 20) as f64,
        args.rounds,
        args.warmup,
        args.moves,
        if args.keepalive { "one kept-alive connection" } else { "a connection per request" },
        scenarios.join(",")
    );

    // (name, binary, serve arguments)
    let sides: Vec<(&str, PathBuf, Vec<String>)> = match &b_binary {
        None => vec![("A", a.clone(), split(&args.args))],
        Some(b) => vec![
            ("A", a.clone(), split(&args.args)),
            ("B", b.clone(), split(args.vs_args.as_deref().unwrap_or(&args.args))),
        ],
    };
    let reps = if b_binary.is_some() { args.reps } else { 1 };
    let per_run = u64::from(args.warmup + args.rounds * scenarios.len() as u32);
    let progress = ProgressBar::new(per_run * u64::from(reps) * sides.len() as u64);
    progress.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} rounds {msg}")
            .expect("a valid template"),
    );
    // runs[side] = one Run per repetition.
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); sides.len()];
    for rep in 0..reps {
        // A then B, then B then A: neither side always runs on a warmer machine.
        let order: Vec<usize> =
            if rep % 2 == 0 { (0..sides.len()).collect() } else { (0..sides.len()).rev().collect() };
        for side in order {
            progress.set_message(format!("{} rep {}/{reps}", sides[side].0, rep + 1));
            let run = mix::run(&sides[side].1, &sides[side].2, &db, &opts, &scenarios, &progress).await?;
            runs[side].push(run);
        }
    }
    progress.finish_and_clear();

    let mut out = json!({
        "label": args.label, "items": args.items, "rounds": args.rounds, "warmup": args.warmup,
        "moves": args.moves, "keepalive": args.keepalive, "sides": {},
    });
    for (side, (name, path, serve_args)) in sides.iter().enumerate() {
        if sides.len() > 1 {
            let shown = serve_args.join(" ");
            println!("\n=== {name}: {} {shown} ({} runs; the tables pool them) ===", path.display(), runs[side].len());
        }
        out["sides"][*name] = print_side(&runs[side]);
    }
    if sides.len() == 2 {
        out["comparison"] = compare(&runs[0], &runs[1], &scenarios);
    }
    if args.perf {
        for (side, (name, _, _)) in sides.iter().enumerate() {
            if let Some(perf) = runs[side].last().and_then(|r| r.perf.as_ref()) {
                println!("\n--perf table of {name} (its last run):\n{perf}");
            }
        }
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&out)?)?;
        println!("\nwrote {}", path.display());
    }
    if let Some(path) = &args.report {
        std::fs::write(path, report::html(&html_report(&args, &sides, &runs, &scenarios)))?;
        println!("wrote {}", path.display());
    }
    if let Some(floor) = args.floor {
        let first: Vec<f64> = runs[0].iter().map(|r| r.passes[0].requests_per_second()).collect();
        let rps = median(&first);
        if rps < floor {
            println!("\nFAIL: {rps:.0} req/s is below the floor of {floor:.0}");
            std::process::exit(1);
        }
        println!("\nfloor: {rps:.0} req/s >= {floor:.0}");
    }
    let ratio = move_ratio(&runs[0], &scenarios[0]);
    println!("\nMove p50 / keepalive p50 ({}, A): {ratio:.2}x", scenarios[0]);
    if let Some(max) = args.max_move_ratio {
        if ratio.is_nan() || ratio > max {
            println!("FAIL: a Move's median latency is {ratio:.2}x a keepalive's, over the ceiling of {max:.2}x");
            std::process::exit(1);
        }
        println!("Move gate: {ratio:.2}x <= {max:.2}x");
    }
    Ok(())
}

/// A `Move`'s median latency over a keepalive's, over every run of one side in one scenario.
fn move_ratio(runs: &[Run], scenario: &str) -> f64 {
    let passes = pooled(runs, scenario);
    let all = |e: Endpoint| -> Vec<f64> { passes.iter().flat_map(|p| p.latencies(e)).collect() };
    median(&all(Endpoint::Moving)) / median(&all(Endpoint::Keepalive))
}

/// The passes of every run for one scenario, pooled.
fn pooled<'a>(runs: &'a [Run], scenario: &str) -> Vec<&'a Pass> {
    runs.iter().flat_map(|r| r.passes.iter().filter(|p| p.scenario == scenario)).collect()
}

/// Prints one side's tables (pooled over its runs) and answers them as JSON.
fn print_side(runs: &[Run]) -> Value {
    let boots: Vec<f64> = runs.iter().map(|r| r.boot.as_secs_f64() * 1e3).collect();
    let mut scenarios_json = Vec::new();
    let scenario_names: Vec<String> = runs[0].passes.iter().map(|p| p.scenario.clone()).collect();
    let quiet_rps = scenario_names
        .iter()
        .any(|s| s == "quiet")
        .then(|| median(&pooled(runs, "quiet").iter().map(|p| p.requests_per_second()).collect::<Vec<_>>()));
    for scenario in &scenario_names {
        let passes = pooled(runs, scenario);
        println!("\n[{scenario}]");
        println!(
            "{:<36} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10}",
            "endpoint", "n", "mean ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "ttfb ms", "body KiB"
        );
        let mut endpoints = Vec::new();
        for endpoint in Endpoint::ALL {
            let samples: Vec<_> = passes.iter().flat_map(|p| &p.samples).filter(|s| s.endpoint == endpoint).collect();
            let latencies: Vec<f64> = samples.iter().map(|s| s.latency_ms).collect();
            let s = summarize(&latencies);
            let ttfb = samples.iter().map(|s| s.ttfb_ms).sum::<f64>() / samples.len().max(1) as f64;
            let kib = samples.iter().map(|s| s.wire_bytes).sum::<usize>() as f64 / samples.len().max(1) as f64 / 1024.0;
            println!(
                "{:<36} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>10.3} {:>10.1}",
                endpoint.path(),
                s.n,
                s.mean,
                s.p50,
                s.p95,
                s.p99,
                s.max,
                ttfb,
                kib
            );
            endpoints.push(json!({"endpoint": endpoint.path(), "n": s.n, "mean_ms": s.mean, "p50_ms": s.p50,
                "p95_ms": s.p95, "p99_ms": s.p99, "max_ms": s.max, "ttfb_mean_ms": ttfb, "body_kib": kib}));
        }
        if scenario == &scenario_names[0] {
            move_tail(runs, &passes);
        }
        let requests: usize = passes.iter().map(|p| p.samples.len()).sum();
        let wall: f64 = passes.iter().map(|p| p.wall.as_secs_f64()).sum();
        let rps: Vec<f64> = passes.iter().map(|p| p.requests_per_second()).collect();
        let mibs: Vec<f64> = passes.iter().map(|p| p.mib_per_second()).collect();
        let vs_quiet = quiet_rps.map(|q| median(&rps) / q);
        let busy: Vec<f64> = passes.iter().map(|p| p.busy_requests_per_second()).collect();
        println!(
            "total: {requests} requests in {wall:.2} s: {:.0} req/s ({:.0} per second of waiting), {:.1} MiB/s{}; boot {:.0} ms",
            median(&rps),
            median(&busy),
            median(&mibs),
            vs_quiet.filter(|_| scenario != "quiet").map(|r| format!(" ({r:.2} of quiet)")).unwrap_or_default(),
            median(&boots)
        );
        scenarios_json.push(json!({"scenario": scenario, "requests": requests, "wall_s": wall,
            "req_per_s": median(&rps), "busy_req_per_s": median(&busy), "mib_per_s": median(&mibs), "vs_quiet": vs_quiet, "endpoints": endpoints}));
    }
    json!({"boot_ms": median(&boots), "scenarios": scenarios_json})
}

/// Where a Move's slow tail is spent: the share of Moves over 1 and 2.5 ms as the client timed them
/// (the first scenario's passes) beside the share the server itself timed over the same bounds (its
/// `/metrics` histogram, warm-up rounds and every scenario included). A tail the client sees and the
/// server does not is outside the server's request (the head's arrival, the send, the client's own
/// work on the shared cores).
fn move_tail(runs: &[Run], passes: &[&Pass]) {
    let client: Vec<f64> = passes.iter().flat_map(|p| p.latencies(Endpoint::Moving)).collect();
    let client_over = |ms: f64| client.iter().filter(|l| **l > ms).count() as f64 / client.len().max(1) as f64;
    let mut histogram = mix::Histogram::default();
    for run in runs {
        for (at, (bound, n)) in run.move_histogram.buckets.iter().enumerate() {
            match histogram.buckets.get_mut(at) {
                Some((_, total)) => *total += n,
                None => histogram.buckets.push((*bound, *n)),
            }
        }
        histogram.count += run.move_histogram.count;
    }
    let server_over = |ms: f64| histogram.share_over(ms).map_or("-".to_owned(), |s| format!("{:.1}%", s * 100.0));
    println!(
        "Move tail: over 1 ms, client {:.1}% / server {}; over 2.5 ms, client {:.1}% / server {} ({} Moves the server timed)",
        client_over(1.0) * 100.0,
        server_over(1.0),
        client_over(2.5) * 100.0,
        server_over(2.5),
        histogram.count
    );
}

/// The metrics compared with `--vs`: one value per run.
fn metrics(runs: &[Run], scenario: &str) -> Vec<(String, Vec<f64>)> {
    let per_pass = |f: &dyn Fn(&Pass) -> f64| -> Vec<f64> { pooled(runs, scenario).iter().map(|p| f(p)).collect() };
    let mut out = vec![
        ("req/s".to_owned(), per_pass(&|p| p.requests_per_second())),
        ("boot ms".to_owned(), runs.iter().map(|r| r.boot.as_secs_f64() * 1e3).collect()),
    ];
    for endpoint in Endpoint::ALL {
        out.push((
            format!("p50 ms {}", endpoint.path()),
            per_pass(&|p| stats::percentile(&p.latencies(endpoint), 0.5)),
        ));
        out.push((
            format!("p99 ms {}", endpoint.path()),
            per_pass(&|p| stats::percentile(&p.latencies(endpoint), 0.99)),
        ));
    }
    out
}

/// Prints and answers the A/B comparison: per metric, each side's median and min–max, B/A, and p.
fn compare(a: &[Run], b: &[Run], scenarios: &[String]) -> Value {
    let mut out = Vec::new();
    for scenario in scenarios {
        println!("\n=== A vs B [{scenario}]: medians over {} runs each (min–max), exact Mann-Whitney p ===", a.len());
        println!("{:<44} {:>30} {:>30} {:>7} {:>8}", "metric", "A", "B", "B/A", "p");
        for ((name, xs), (_, ys)) in metrics(a, scenario).into_iter().zip(metrics(b, scenario)) {
            let (ma, mb) = (median(&xs), median(&ys));
            let test = mann_whitney(&xs, &ys);
            let range = |v: &[f64]| {
                let s = summarize(v);
                format!("{:.3} ({:.3}–{:.3})", median(v), s.min, s.max)
            };
            println!(
                "{name:<44} {:>30} {:>30} {:>7.3} {:>8.4}{}",
                range(&xs),
                range(&ys),
                mb / ma,
                test.p,
                if test.exact { "" } else { " ~" }
            );
            out.push(json!({"scenario": scenario, "metric": name, "a": xs, "b": ys, "a_median": ma, "b_median": mb,
                "b_over_a": mb / ma, "p": test.p, "exact": test.exact}));
        }
    }
    Value::Array(out)
}

/// The HTML report: the tables as printed, and a latency distribution per endpoint and scenario.
fn html_report(args: &Args, sides: &[(&str, PathBuf, Vec<String>)], runs: &[Vec<Run>], scenarios: &[String]) -> Report {
    let mut notes = vec![format!(
        "{} items, {} rounds (+{} warm-up) of 6 reads and {} moves, {}.",
        args.items,
        args.rounds,
        args.warmup,
        args.moves,
        if args.keepalive { "one kept-alive connection" } else { "a connection per request" }
    )];
    for (name, path, serve_args) in sides {
        notes.push(format!("{name}: {} {}", path.display(), serve_args.join(" ")));
    }
    let mut tables = Vec::new();
    let mut plots = Vec::new();
    for scenario in scenarios {
        let mut rows = Vec::new();
        for (side, (name, _, _)) in sides.iter().enumerate() {
            let passes = pooled(&runs[side], scenario);
            let rps: Vec<f64> = passes.iter().map(|p| p.requests_per_second()).collect();
            let boots: Vec<f64> = runs[side].iter().map(|r| r.boot.as_secs_f64() * 1e3).collect();
            rows.push(vec![name.to_string(), format!("{:.0}", median(&rps)), format!("{:.0}", median(&boots))]);
        }
        tables.push(Table {
            caption: format!("[{scenario}] throughput (median of runs)"),
            header: vec!["side".into(), "req/s".into(), "boot ms".into()],
            rows,
        });
        for endpoint in Endpoint::ALL {
            let series = sides
                .iter()
                .enumerate()
                .map(|(side, (name, _, _))| Series {
                    label: name.to_string(),
                    samples_ms: pooled(&runs[side], scenario).iter().flat_map(|p| p.latencies(endpoint)).collect(),
                })
                .collect();
            plots.push(Plot { title: format!("{} [{scenario}]", endpoint.path()), series });
        }
    }
    Report {
        title: format!("modhost-bench{}", args.label.as_ref().map(|l| format!(": {l}")).unwrap_or_default()),
        notes,
        tables,
        plots,
    }
}
