//! The server CPU a trivial mod route costs per request, as a ratio to raw hyper's, measured side by
//! side: raw hyper (`hyper-hello`), modhost with a fresh instance per request, and modhost with
//! `reuse`, each answering uncompressed (`Accept-Encoding: identity`, what wrk.sh measures) and zlib
//! (what the SPT client asks for), each started as a child and driven by the same keep-alive load, in
//! alternating order (A B C D E, then E D C B A, ...). CPU is the child's user + system time from `/proc/<pid>/stat` over the
//! measured stretch, so the load generator's own CPU never counts; ratios are taken within each
//! repetition (neighbours in time share the machine's mood) and their median is reported.
//!
//! It prints a table. With `--max-fresh` / `--max-reuse` it is the gate of `make test`: it exits 1 when
//! the median ratio of the zlib rows (the SPT client's wire, what every real request pays) is above its
//! ceiling. The ceilings (in the Makefile) sit between what the code does and what it did before the
//! per-request work of issue 16 (a zlib state set up per answer, a WASI context built per instance):
//! a regression of that kind fails, noise does not. The load generator and the CPU reading are in
//! Rust (`modhost_benches::cpu_load`, shared with `chain-cost`), so that a fresh machine needs no wrk.
//!
//! `target/release/route-cost --reps 3 --secs 3` (after `cargo test --release`, which builds the
//! fixture guest, and `cargo build --release -p modhost-benches`).

use anyhow::{Context, bail};
use clap::Parser;
use modhost_benches::cpu_load::{LoadArgs, Run, Target, clock_ticks, max, measure, min, modhost, spawn};
use modhost_benches::stats::median;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(about = "Server CPU per request of a trivial mod route against raw hyper, side by side")]
struct Args {
    #[command(flatten)]
    load: LoadArgs,
    /// Fail when modhost's fresh-instance CPU per zlib-answered request (the SPT client's wire) is over
    /// this many times raw hyper's.
    #[arg(long)]
    max_fresh: Option<f64>,
    /// Fail when modhost's reuse CPU per zlib-answered request is over this many times raw hyper's.
    #[arg(long)]
    max_reuse: Option<f64>,
    /// Also measure a fresh instance (zlib) with each of these engine levers turned against the
    /// default (`modhost serve --engine-lever`, comma-separated; `all` for every one): what each
    /// lever of `sandbox/engine.rs` is worth, alone.
    #[arg(long, value_delimiter = ',')]
    levers: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Server {
    Hyper,
    Fresh,
    Reuse,
    FreshZlib,
    ReuseZlib,
    /// A fresh instance (zlib) with one engine lever turned (its `--engine-lever` name).
    Lever(&'static str),
}

impl Server {
    fn label(self) -> String {
        let label = match self {
            Server::Hyper => "raw hyper hello",
            Server::Fresh => "modhost, fresh, identity",
            Server::Reuse => "modhost, reuse, identity",
            Server::FreshZlib => "modhost, fresh, zlib",
            Server::ReuseZlib => "modhost, reuse, zlib",
            Server::Lever(name) => return format!("modhost, fresh, zlib, {name}"),
        };
        label.to_owned()
    }

    /// Whether its requests ask for an uncompressed answer (raw hyper never compresses). Without
    /// `Accept-Encoding` modhost answers zlib, as the SPT client expects.
    fn identity(self) -> bool {
        !matches!(self, Server::FreshZlib | Server::ReuseZlib | Server::Lever(_))
    }

    fn reuses(self) -> bool {
        matches!(self, Server::Reuse | Server::ReuseZlib)
    }
}

const PATH: &str = "/fx/p/x";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    for f in [&args.load.modhost, &args.load.hello, &args.load.fixture] {
        if !f.exists() {
            bail!(
                "missing {}: build with `cargo test --release` and `cargo build --release -p modhost-benches`",
                f.display()
            );
        }
    }
    let work = tempfile::tempdir()?;
    let fresh_root = install_fixture(work.path(), "fresh", 1, &args.load.fixture)?;
    let reuse_root = install_fixture(work.path(), "reuse", 100_000, &args.load.fixture)?;
    let ticks = clock_ticks();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;

    println!(
        "== {} keep-alive connections, GET {PATH} (identity), {} s per server, {} repetitions, order flipped each time",
        args.load.conns, args.load.secs, args.load.reps
    );
    let mut servers = vec![Server::Hyper, Server::Fresh, Server::Reuse, Server::FreshZlib, Server::ReuseZlib];
    for name in &args.levers {
        for (lever, _) in modhost::EngineLever::ALL {
            if name == "all" || name == lever {
                servers.push(Server::Lever(lever));
            }
        }
        if name != "all" {
            modhost::EngineLever::named(name).map_err(anyhow::Error::msg)?;
        }
    }
    let mut runs: Vec<Vec<(Server, Run)>> = Vec::new();
    for rep in 0..args.load.reps {
        let mut order = servers.to_vec();
        if rep % 2 == 1 {
            order.reverse();
        }
        let mut this = Vec::new();
        for server in order {
            let mut child = match server {
                Server::Hyper => spawn(Command::new(&args.load.hello).arg("0"))?,
                Server::Lever(name) => spawn(modhost(&args.load.modhost, &fresh_root).args(["--engine-lever", name]))?,
                _ if server.reuses() => spawn(&mut modhost(&args.load.modhost, &reuse_root))?,
                _ => spawn(&mut modhost(&args.load.modhost, &fresh_root))?,
            };
            let secs = Duration::from_secs_f64(args.load.secs);
            let target = Target::get(PATH, server.identity());
            let result = child
                .wait_ready(server != Server::Hyper, &|_| false)
                .and_then(|port| runtime.block_on(measure(child.pid(), port, &target, args.load.conns, secs, ticks)));
            child.stop();
            let run = result.with_context(|| format!("measuring {}", server.label()))?;
            println!(
                "  rep {}: {:<32} {:>9.0} req/s  {:>6.1} us CPU/request",
                rep + 1,
                server.label(),
                run.rps,
                run.cpu_us
            );
            this.push((server, run));
        }
        runs.push(this);
    }

    let of = |s: Server| -> Vec<Run> { runs.iter().flatten().filter(|(k, _)| *k == s).map(|(_, r)| *r).collect() };
    // Ratios within a repetition: the three ran back to back.
    let ratio = |s: Server| -> Vec<f64> {
        runs.iter()
            .filter_map(|rep| {
                let cpu = |k: Server| rep.iter().find(|(x, _)| *x == k).map(|(_, r)| r.cpu_us);
                Some(cpu(s)? / cpu(Server::Hyper)?)
            })
            .collect()
    };
    println!(
        "\n{:<32} {:<26} {:<22} {:<18} req/s vs hyper",
        "server", "req/s median (min-max)", "CPU us/req (min-max)", "CPU vs hyper"
    );
    let hyper_rps = median(&of(Server::Hyper).iter().map(|r| r.rps).collect::<Vec<_>>());
    let hyper_cpu = median(&of(Server::Hyper).iter().map(|r| r.cpu_us).collect::<Vec<_>>());
    let mut failed = Vec::new();
    for &server in &servers {
        let rps: Vec<f64> = of(server).iter().map(|r| r.rps).collect();
        let cpu: Vec<f64> = of(server).iter().map(|r| r.cpu_us).collect();
        let ratios = ratio(server);
        let cpu_ratio = median(&ratios);
        println!(
            "{:<32} {:<26} {:<22} {:<18} {:.2}",
            server.label(),
            format!("{:.0} ({:.0}-{:.0})", median(&rps), min(&rps), max(&rps)),
            format!("{:.1} ({:.1}-{:.1})", median(&cpu), min(&cpu), max(&cpu)),
            format!("{cpu_ratio:.2}x (+{:.1} us)", median(&cpu) - hyper_cpu),
            median(&rps) / hyper_rps,
        );
        // The gate is on the client's wire (zlib): what every SPT request pays.
        let ceiling = match server {
            Server::FreshZlib => args.max_fresh,
            Server::ReuseZlib => args.max_reuse,
            _ => None,
        };
        if let Some(ceiling) = ceiling
            && cpu_ratio > ceiling
        {
            failed.push(format!("{}: {cpu_ratio:.2}x raw hyper's CPU per request, over {ceiling}x", server.label()));
        }
    }
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("route-cost gate FAILED: {f}");
        }
        std::process::exit(1);
    }
    if args.max_fresh.is_some() || args.max_reuse.is_some() {
        println!(
            "route-cost gate passed (ceilings: fresh {}x, reuse {}x raw hyper's CPU per request)",
            args.max_fresh.map_or("-".to_owned(), |c| c.to_string()),
            args.max_reuse.map_or("-".to_owned(), |c| c.to_string())
        );
    }
    Ok(())
}

fn install_fixture(work: &Path, name: &str, reuse: u32, fixture: &Path) -> anyhow::Result<PathBuf> {
    let root = work.join(name);
    let dir = root.join("mods/fx");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("mod.toml"), format!("id = \"fx\"\nversion = \"0.1.0\"\nreuse = {reuse}\n"))?;
    std::fs::copy(fixture, dir.join("fx.wasm")).with_context(|| format!("copying {}", fixture.display()))?;
    Ok(root)
}
