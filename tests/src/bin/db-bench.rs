//! The db engine's benchmark: prints a table of what each operation costs on generated SPT databases of
//! about 50 KB, 5 MB, 17 MB and 41 MB (`modhost_tests::gamedb`). Not a test: it asserts nothing and
//! prints medians. Run with `cargo run --release -p modhost-tests --bin db-bench`
//! (`-- 30 3000` to choose the item counts).

use modhost::db::Db;
use modhost_tests::gamedb;
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

fn main() -> anyhow::Result<()> {
    let sizes: Vec<u64> = std::env::args().skip(1).map(|a| a.parse()).collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() { vec![30, 3000, 10_000, 24_000] } else { sizes };
    let dir = tempfile::tempdir()?;
    println!(
        "{:>7} {:>7} {:>20} {:>9} {:>11} {:>9} {:>16} {:>16} {:>12}",
        "items", "MB", "load", "get deep", "get items", "patch", "patch (reader)", "get items after", "420 patches"
    );
    for items in sizes {
        let text = gamedb::database(items).to_string();
        let path = dir.path().join("db.json");
        std::fs::write(&path, &text)?;
        let mb = text.len() as f64 / 1e6;
        drop(text);

        let t = Instant::now();
        let db = Db::load(&path)?;
        let load = t.elapsed();

        let deep = format!("templates.items.{}._props.Width", gamedb::hex_id(items / 2));
        db.get(&deep)?;
        let get_deep = time(1001, || {
            std::hint::black_box(db.get(&deep).ok());
        });
        let get_items = time(11, || {
            std::hint::black_box(db.get("templates.items").ok());
        });
        let target = format!("templates.items.{}._props", gamedb::hex_id(0));
        let mut i = 0u64;
        let patch = time(21, || {
            i += 1;
            db.patch(&target, &format!("{{\"BenchCounter\":{i}}}")).ok();
        });
        // While a reader holds a snapshot (a request in flight), a patch cannot change the tree in place.
        let held = db.snapshot();
        let patch_held = time(5, || {
            i += 1;
            db.patch(&target, &format!("{{\"BenchCounter\":{i}}}")).ok();
        });
        drop(held);
        let get_after = time(5, || {
            i += 1;
            db.patch(&target, &format!("{{\"BenchCounter\":{i}}}")).ok();
            let t = Instant::now();
            std::hint::black_box(db.get("templates.items").ok());
            std::hint::black_box(t.elapsed());
        });
        let t = Instant::now();
        for k in 0..420 {
            db.patch(&format!("globals.config.mod{}", k % 40), &format!("{{\"setting{k}\":{k}}}")).ok();
        }
        let burst = t.elapsed();
        println!(
            "{:>7} {:>7.2} {:>20} {:>9} {:>11} {:>9} {:>16} {:>16} {:>12}",
            items,
            mb,
            format!("{} ({:.0} MB/s)", fmt(load), mb / load.as_secs_f64()),
            fmt(get_deep),
            fmt(get_items),
            fmt(patch),
            fmt(patch_held),
            fmt(get_after),
            fmt(burst)
        );
    }
    Ok(())
}
