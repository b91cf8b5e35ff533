//! What a mod's language costs per request (issue 34): the hello route of the Rust, JavaScript
//! (componentize-js), Python (componentize-py) and C hellos, each with a fresh instance per request
//! (`reuse = 1`, the default) and with reuse (`reuse = 100000`), side by side: the server's CPU per
//! request and its req/s, and the fresh − reuse difference, which is what instantiating the mod
//! (its language's runtime, from the component's pre-initialised memory image) costs per request.
//!
//! How: every row is its own `modhost serve --root <tmp root>` child with one mod installed as a
//! folder (`mods/<id>/mod.toml`, the mod's manifest with a `reuse` line, and `<id>.wasm`); the two
//! roots of a mod are kept across repetitions, so a mod is compiled once per root (JavaScript and
//! Python take seconds) and then loads from `<root>/cache/`. The built-in game is loaded in every
//! row, unused. Before it is measured each row's route is asked once and its answer printed. The load
//! is `route-cost`'s (`cpu_load`): keep-alive connections, `GET <path>` with zlib answers (no
//! `Accept-Encoding`, as the SPT client asks), no session; the CPU is the child's user + system time
//! from `/proc/<pid>/stat` over the measured stretch. Rows run in alternating order (forward, then
//! backward, ...); differences and ratios are taken within one repetition and their median printed.
//!
//! With `--perf` the rows run `modhost serve --perf` and the table adds the mod's `instance checkout`
//! (instantiation, for a fresh instance) and `guest` µs per request from `<root>/perf.txt`: wall
//! time, under the load's contention. `--perf` costs CPU itself: compare its CPU figures only with
//! other `--perf` figures.
//!
//! By default the four hellos are measured (`make polyglot` builds the JavaScript and Python ones
//! into `target/polyglot/`; the C one is `target/polyglot/hello-c.wasm`, made by `wrap-core` from
//! `hello-c.core.wasm`, and is left out when missing). `--mod LABEL=WASM,MANIFEST` (repeatable)
//! measures those instead: any build of a mod, say a variant of its toolchain's options.
//!
//! ```sh
//! target/release/polyglot-cost --reps 3 --secs 3
//! target/release/polyglot-cost --mod js=target/polyglot/hello-js.wasm,examples/hello-js/mod.toml \
//!     --mod js-aot=/tmp/hello-js-aot.wasm,examples/hello-js/mod.toml
//! ```
//! (after `cargo test --release`, which builds the Rust hello, `make polyglot`, and `cargo build
//! --release -p modhost -p modhost-benches`).

use anyhow::{Context, bail};
use clap::Parser;
use modhost_benches::cpu_load::{LoadArgs, Run, Target, clock_ticks, max, measure, min, modhost, probe, spawn};
use modhost_benches::stats::median;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(about = "Server CPU per request of the Rust, JavaScript, Python and C hellos, fresh and reused")]
struct Args {
    #[command(flatten)]
    load: LoadArgs,
    /// A mod to measure, `LABEL=WASM,MANIFEST` (repeatable); without it, the four hellos.
    #[arg(long = "mod", value_name = "LABEL=WASM,MANIFEST")]
    mods: Vec<String>,
    /// The route asked (every hello answers it: one db value in an envelope).
    #[arg(long, default_value = "/hello/item")]
    path: String,
    /// `reuse` of the reuse rows.
    #[arg(long, default_value_t = 100_000)]
    reuse: u32,
    /// Run modhost with `--perf` and print the mod's instance checkout and guest µs per request.
    #[arg(long)]
    perf: bool,
    /// An argument added to every `modhost serve` (repeatable), say `--serve-arg=--engine-lever
    /// --serve-arg=no-cow`.
    #[arg(long = "serve-arg", allow_hyphen_values = true)]
    serve_args: Vec<String>,
}

/// A mod under test.
#[derive(Debug)]
struct Mod {
    label: String,
    wasm: PathBuf,
    manifest: PathBuf,
}

const GUESTS: &str = "target/wasm-guests/wasm32-wasip2/release";

fn default_mods() -> Vec<Mod> {
    let hello = |label: &str, wasm: String, manifest: &str| Mod {
        label: label.to_owned(),
        wasm: PathBuf::from(wasm),
        manifest: PathBuf::from(manifest),
    };
    let mut mods = vec![
        hello("rust", format!("{GUESTS}/hello.wasm"), "examples/hello/mod.toml"),
        hello("js", "target/polyglot/hello-js.wasm".to_owned(), "examples/hello-js/mod.toml"),
        hello("python", "target/polyglot/hello-python.wasm".to_owned(), "examples/hello-python/mod.toml"),
    ];
    let c = hello("c", "target/polyglot/hello-c.wasm".to_owned(), "examples/hello-c/mod.toml");
    if c.wasm.exists() {
        mods.push(c);
    } else {
        eprintln!(
            "note: no {} (`target/release/wrap-core target/polyglot/hello-c.core.wasm {0}` makes it): C left out",
            c.wasm.display()
        );
    }
    mods
}

fn parse_mod(spec: &str) -> anyhow::Result<Mod> {
    let (label, files) = spec.split_once('=').context("--mod wants LABEL=WASM,MANIFEST")?;
    let (wasm, manifest) = files.split_once(',').context("--mod wants LABEL=WASM,MANIFEST")?;
    Ok(Mod { label: label.to_owned(), wasm: PathBuf::from(wasm), manifest: PathBuf::from(manifest) })
}

/// The manifest's `id`.
fn mod_id(manifest: &str) -> Option<String> {
    manifest.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "id").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// A root with `m` installed as `mods/<id>/` with `reuse` (any `reuse` line of the manifest replaced);
/// answers the root and the mod's id.
fn install(work: &Path, row: &str, m: &Mod, reuse: u32) -> anyhow::Result<(PathBuf, String)> {
    let text = std::fs::read_to_string(&m.manifest).with_context(|| format!("reading {}", m.manifest.display()))?;
    let id = mod_id(&text).with_context(|| format!("no id in {}", m.manifest.display()))?;
    let root = work.join(row);
    let dir = root.join("mods").join(&id);
    std::fs::create_dir_all(&dir)?;
    let mut manifest: String = text
        .lines()
        .filter(|l| l.split_once('=').is_none_or(|(k, _)| k.trim() != "reuse"))
        .map(|l| format!("{l}\n"))
        .collect();
    // Top-level keys come before any table: the line goes first.
    manifest.insert_str(0, &format!("reuse = {reuse}\n"));
    std::fs::write(dir.join("mod.toml"), manifest)?;
    std::fs::copy(&m.wasm, dir.join(format!("{id}.wasm"))).with_context(|| format!("copying {}", m.wasm.display()))?;
    Ok((root, id))
}

/// One row: a mod, fresh or reused.
struct Row {
    label: String,
    fresh: bool,
    root: PathBuf,
    id: String,
}

/// One measured stretch of a row, with the `--perf` phases when asked: (checkout, guest) µs/request.
#[derive(Clone, Copy)]
struct Measured {
    run: Run,
    perf: Option<(f64, f64)>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mods = if args.mods.is_empty() {
        default_mods()
    } else {
        args.mods.iter().map(|s| parse_mod(s)).collect::<anyhow::Result<_>>()?
    };
    if !args.load.modhost.exists() {
        bail!("missing {}: `cargo build --release -p modhost`", args.load.modhost.display());
    }
    for m in &mods {
        for f in [&m.wasm, &m.manifest] {
            if !f.exists() {
                bail!("missing {} ({}): see `polyglot-cost --help`'s header", f.display(), m.label);
            }
        }
    }
    let work = tempfile::tempdir()?;
    let mut rows = Vec::new();
    for (i, m) in mods.iter().enumerate() {
        for fresh in [true, false] {
            let name = format!("{i}-{}", if fresh { "fresh" } else { "reuse" });
            let (root, id) = install(work.path(), &name, m, if fresh { 1 } else { args.reuse })?;
            rows.push(Row { label: m.label.clone(), fresh, root, id });
        }
    }
    let ticks = clock_ticks();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let target = Target::get(&args.path, false);
    let secs = Duration::from_secs_f64(args.load.secs);
    println!(
        "== {} keep-alive connections, GET {} (zlib), {} s per row, {} repetitions, order flipped each time{}{}",
        args.load.conns,
        args.path,
        args.load.secs,
        args.load.reps,
        if args.perf { ", modhost with --perf" } else { "" },
        if args.serve_args.is_empty() { String::new() } else { format!(", serve {}", args.serve_args.join(" ")) }
    );
    let mut runs: Vec<Vec<Option<Measured>>> = Vec::new();
    for rep in 0..args.load.reps {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        if rep % 2 == 1 {
            order.reverse();
        }
        let mut this = vec![None; rows.len()];
        for i in order {
            let row = &rows[i];
            let mode = if row.fresh { "fresh" } else { "reuse" };
            let _ = std::fs::remove_file(row.root.join("perf.txt"));
            let mut command = modhost(&args.load.modhost, &row.root);
            if args.perf {
                command.arg("--perf");
            }
            command.args(&args.serve_args);
            let mut child = spawn(&mut command)?;
            let result = child.wait_ready(true, &|_| false).and_then(|port| {
                runtime.block_on(async {
                    if rep == 0 {
                        let body = probe(port, &Target::get(&args.path, true)).await?;
                        let text = String::from_utf8_lossy(&body);
                        println!("  {} answers: {}", row.label, text.chars().take(100).collect::<String>());
                    }
                    measure(child.pid(), port, &target, args.load.conns, secs, ticks).await
                })
            });
            child.stop();
            let run = result.with_context(|| format!("measuring {}, {mode}", row.label))?;
            let perf = if args.perf { perf_phases(&row.root, &row.id) } else { None };
            println!(
                "  rep {}: {:<16} {mode}  {:>9.0} req/s  {:>8.1} us CPU/request{}",
                rep + 1,
                row.label,
                run.rps,
                run.cpu_us,
                perf.map_or(String::new(), |(c, g)| format!("  checkout {c:.1} us  guest {g:.1} us"))
            );
            this[i] = Some(Measured { run, perf });
        }
        runs.push(this);
    }

    let column = |i: usize, f: &dyn Fn(&Measured) -> Option<f64>| -> Vec<f64> {
        runs.iter().filter_map(|rep| rep[i].as_ref().and_then(f)).collect()
    };
    let spread = |xs: &[f64], digits: usize| -> String {
        format!("{:.digits$} ({:.digits$}-{:.digits$})", median(xs), min(xs), max(xs))
    };
    // Rows come in pairs: fresh at 2k, reuse at 2k + 1; the first mod is the reference.
    let per_rep =
        |f: &dyn Fn(&[Option<Measured>]) -> Option<f64>| -> Vec<f64> { runs.iter().filter_map(|rep| f(rep)).collect() };
    let cpu = |rep: &[Option<Measured>], i: usize| rep[i].as_ref().map(|m| m.run.cpu_us);
    println!(
        "\n{:<16} {:<6} {:<22} {:<24} {:<14}{}",
        "mod",
        "mode",
        "req/s median (min-max)",
        "CPU us/req (min-max)",
        format!("vs {}", rows[0].label),
        if args.perf { "  checkout us  guest us" } else { "" }
    );
    for (i, row) in rows.iter().enumerate() {
        let rps = column(i, &|m| Some(m.run.rps));
        let cpus = column(i, &|m| Some(m.run.cpu_us));
        let reference = i % 2;
        let ratio = per_rep(&|rep| Some(cpu(rep, i)? / cpu(rep, reference)?));
        let perf = if args.perf {
            let checkout = column(i, &|m| m.perf.map(|p| p.0));
            let guest = column(i, &|m| m.perf.map(|p| p.1));
            format!("  {:>11.1}  {:>8.1}", median(&checkout), median(&guest))
        } else {
            String::new()
        };
        println!(
            "{:<16} {:<6} {:<22} {:<24} {:<14}{perf}",
            row.label,
            if row.fresh { "fresh" } else { "reuse" },
            spread(&rps, 0),
            spread(&cpus, 1),
            format!("{:.2}x", median(&ratio)),
        );
    }
    println!(
        "\n{:<16} {:<26} {:<18} fresh - reuse vs {}'s",
        "mod", "fresh - reuse us/req", "fresh / reuse", rows[0].label
    );
    for pair in 0..rows.len() / 2 {
        let (f, r) = (2 * pair, 2 * pair + 1);
        let gap = per_rep(&|rep| Some(cpu(rep, f)? - cpu(rep, r)?));
        let times = per_rep(&|rep| Some(cpu(rep, f)? / cpu(rep, r)?));
        let vs = per_rep(&|rep| Some((cpu(rep, f)? - cpu(rep, r)?) / (cpu(rep, 0)? - cpu(rep, 1)?)));
        println!(
            "{:<16} {:<26} {:<18} {:.1}x",
            rows[f].label,
            spread(&gap, 1),
            format!("{:.2}x", median(&times)),
            median(&vs)
        );
    }
    Ok(())
}

/// The `instance checkout` and `guest` µs per request of the `[mod <id>]` block of `<root>/perf.txt`
/// (written every second: the last second's requests may be missing, which a mean does not mind).
fn perf_phases(root: &Path, id: &str) -> Option<(f64, f64)> {
    let text = std::fs::read_to_string(root.join("perf.txt")).ok()?;
    let header = format!("[mod {id}] requests ");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&header)).skip(2);
    let mut phase = |name: &str| -> Option<f64> {
        // `  <phase name> <calls> <total ms> <us/request> <share>%`
        lines.by_ref().take_while(|l| !l.trim().is_empty()).find(|l| l.trim_start().starts_with(name)).and_then(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.get(words.len().checked_sub(2)?)?.parse().ok()
        })
    };
    // In the order the table lists them.
    let checkout = phase("instance checkout")?;
    let guest = phase("guest")?;
    Some((checkout, guest))
}
