//! The db engine's benchmark: a table of what each operation costs on generated SPT databases of about
//! 50 KB, 5 MB, 17 MB and 41 MB (`modhost_gamedb`). Not a test: it asserts nothing and prints
//! medians. Each size runs in a fresh child process, so its resident memory is its own.
//!
//! Run with `cargo run --release -p modhost-benches --bin db-bench` (`-- 30 3000` to choose item counts).

use modhost_db::Db;
use modhost_gamedb as gamedb;
use std::time::{Duration, Instant};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `f` `n` times and returns the median time of one run.
fn time(n: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..n)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn fmt(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 10_000 {
        format!("{ns} ns")
    } else if ns < 10_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

/// Resident memory of this process, in MB.
fn rss_mb() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / 1e6
}

const HEADER: [&str; 11] = [
    "items",
    "doc MB",
    "load",
    "RSS load",
    "RSS touched",
    "get deep",
    "get items",
    "patch 1st",
    "patch warm",
    "get items after",
    "420 patches",
];

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1], args[2].parse()?);
    }
    let sizes: Vec<u64> = args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() { vec![30, 3000, 10_000, 24_000] } else { sizes };
    let dir = tempfile::tempdir()?;
    println!("{}", HEADER.iter().map(|h| format!("{h:>19}")).collect::<String>());
    for items in sizes {
        let path = dir.path().join(format!("db-{items}.json"));
        std::fs::write(&path, gamedb::database(items).to_string())?;
        let out = std::process::Command::new(std::env::current_exe()?)
            .args(["--child", &path.display().to_string(), &items.to_string()])
            .output()?;
        anyhow::ensure!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
    println!(
        "\nload: validate + keep the text. RSS: resident MB (and x the document) after load, and after reading \
         every template's _props.Width.\nget deep: templates.items.<id>._props.Width, warm. get items: \
         templates.items, unchanged. patch: a small object merged into templates.items.<id>._props (1st \
         converts templates.items to a persistent map; warm is the median after). get items after: the first \
         read of templates.items after a patch (its text is rebuilt). 420 patches: one burst, as mods' init do."
    );
    Ok(())
}

fn child(path: &str, items: u64) -> anyhow::Result<()> {
    let before = rss_mb();
    let doc_mb = std::fs::metadata(path)?.len() as f64 / 1e6;
    let t = Instant::now();
    let db = Db::load(std::path::Path::new(path))?;
    let load = t.elapsed();
    let rss_load = rss_mb() - before;

    let ids: Vec<String> = db.keys("templates.items")?;
    for id in &ids {
        db.get(&format!("templates.items.{id}._props.Width"))?;
    }
    let rss_touched = rss_mb() - before;

    let deep = format!("templates.items.{}._props.Width", gamedb::hex_id(items / 2));
    let get_deep = time(10_001, || {
        std::hint::black_box(db.get(&deep).ok());
    });
    let get_items = time(1001, || {
        std::hint::black_box(db.get("templates.items").ok());
    });
    let target = format!("templates.items.{}._props", gamedb::hex_id(0));
    let t = Instant::now();
    db.patch(&target, r#"{"BenchCounter":0}"#)?;
    let patch_first = t.elapsed();
    let mut i = 0u64;
    let patch_warm = time(1001, || {
        i += 1;
        db.patch(&target, &format!("{{\"BenchCounter\":{i}}}")).ok();
    });
    // Time the read alone: patch, then read once, five times.
    let mut after = Vec::new();
    for _ in 0..5 {
        i += 1;
        db.patch(&target, &format!("{{\"BenchCounter\":{i}}}"))?;
        let t = Instant::now();
        std::hint::black_box(db.get("templates.items")?);
        after.push(t.elapsed());
    }
    let get_after = median(after);
    let t = Instant::now();
    for k in 0..420 {
        db.patch(&format!("globals.config.mod{}", k % 40), &format!("{{\"setting{k}\":{k}}}"))?;
    }
    let burst = t.elapsed();
    let cells = [
        items.to_string(),
        format!("{doc_mb:.2}"),
        format!("{} {:.0}MB/s", fmt(load), doc_mb / load.as_secs_f64()),
        format!("{rss_load:.0} ({:.1}x)", rss_load / doc_mb),
        format!("{rss_touched:.0} ({:.1}x)", rss_touched / doc_mb),
        fmt(get_deep),
        fmt(get_items),
        fmt(patch_first),
        fmt(patch_warm),
        fmt(get_after),
        fmt(burst),
    ];
    println!("{}", cells.iter().map(|c| format!("{c:>19}")).collect::<String>());
    Ok(())
}
