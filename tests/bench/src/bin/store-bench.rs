//! The store's benchmark: a `set` of a 3 KB value against the syscall floor of the same commit done by
//! hand (O_EXCL open + write + rename + close; in durable mode also fsync of the file and the
//! directory), measured in the same run, alternating in rounds; and a `get` of a cached value. Not a
//! test: it prints medians (and min-max over rounds).
//!
//! Run with `cargo run --release -p modhost-benches --bin store-bench`.

use modhost_store::Store;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

const VALUE: usize = 3 * 1024;

fn floor(dir: &Path, n: usize, durable: bool, value: &[u8]) -> anyhow::Result<Duration> {
    let key = dir.join("key");
    let t = Instant::now();
    for i in 0..n {
        let temp = dir.join(format!(".tmp-floor-{i}"));
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(value)?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&temp, &key)?;
        if durable {
            File::open(dir)?.sync_all()?;
        }
    }
    Ok(t.elapsed() / n as u32)
}

fn store_set(store: &Store, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    let t = Instant::now();
    for _ in 0..n {
        store.set("bench", "key", value)?;
    }
    Ok(t.elapsed() / n as u32)
}

fn summary(mut xs: Vec<Duration>) -> String {
    xs.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    format!("{:.1} µs ({:.1}-{:.1})", us(xs[xs.len() / 2]), us(xs[0]), us(xs[xs.len() - 1]))
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let value = vec![b'x'; VALUE];
    println!("{:<10} {:>26} {:>26} {:>8} {:>18}", "mode", "floor (by hand)", "store.set", "ratio", "get (cached)");
    for (durable, rounds, per_round) in [(false, 15, 400), (true, 7, 40)] {
        let base = tempfile::tempdir()?;
        let floor_dir = base.path().join("floor");
        std::fs::create_dir_all(&floor_dir)?;
        let store = Store::open(&base.path().join("store"), durable)?;
        store.set("bench", "key", &value)?; // the namespace exists and the first-write backup is done
        let (mut floors, mut sets) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            // Alternate which goes first, so drift on a noisy machine hits both alike.
            if round % 2 == 0 {
                floors.push(floor(&floor_dir, per_round, durable, &value)?);
                sets.push(store_set(&store, per_round, &value)?);
            } else {
                sets.push(store_set(&store, per_round, &value)?);
                floors.push(floor(&floor_dir, per_round, durable, &value)?);
            }
        }
        let gets: Vec<Duration> = (0..15)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..10_000 {
                    std::hint::black_box(store.get("bench", "key").ok());
                }
                t.elapsed() / 10_000
            })
            .collect();
        let ratio = median(sets.clone()).as_secs_f64() / median(floors.clone()).as_secs_f64();
        println!(
            "{:<10} {:>26} {:>26} {:>7.2}x {:>15} ns",
            if durable { "durable" } else { "default" },
            summary(floors),
            summary(sets),
            ratio,
            median(gets).as_nanos()
        );
    }
    println!("\n3 KB values; medians over rounds (min-max); the floor and store.set alternate each round.");
    Ok(())
}
