//! What the compressed-body cache holds and what an insert costs when it is full, for the cache as it
//! was before issue 17 (`old.rs`, kept as the baseline) and as it is (`modhost::body_cache`).
//!
//! Run with `cargo run --release -p modhost-benches --bin cache-bench -- --cache old` (then `new`):
//! each run is its own process, so its resident memory is its own.
//!
//! - **held**: `--answers` unique 8 KiB answers, repetitive as JSON tables are, compressed as the front
//!   compresses them, inserted into a 64 MiB cache: what the cache says it holds (charged) against the
//!   process's resident memory growth.
//! - **insert at N entries**: a cache filled with `--entries` small bodies, then the time of each of
//!   `--inserts` more (each one evicts), median and p99.

mod old;

use bytes::Bytes;
use clap::Parser;
use std::time::Instant;

#[derive(Parser)]
struct Args {
    /// `old` (before issue 17) or `new`.
    #[arg(long, default_value = "new")]
    cache: String,
    /// Unique 8 KiB answers inserted for the memory figure.
    #[arg(long, default_value_t = 200_000)]
    answers: usize,
    /// Entries in the cache when inserts are timed.
    #[arg(long, default_value_t = 65_536)]
    entries: usize,
    /// Inserts timed.
    #[arg(long, default_value_t = 300)]
    inserts: usize,
}

/// The two caches behind one face.
enum Cache {
    Old(old::BodyCache),
    New(modhost::body_cache::BodyCache),
}

impl Cache {
    fn new(which: &str, budget: usize) -> anyhow::Result<Cache> {
        Ok(match which {
            "old" => Cache::Old(old::BodyCache::new(budget)),
            "new" => Cache::New(modhost::body_cache::BodyCache::new(budget)),
            other => anyhow::bail!("--cache is `old` or `new`, not `{other}`"),
        })
    }

    fn insert(&self, literal: &[u8], zlib: Vec<u8>) {
        let part = Bytes::copy_from_slice(literal);
        match self {
            Cache::Old(c) => c.insert(old::Key::of(&[old::Part::Literal(part)]), Bytes::from(zlib)),
            Cache::New(c) => {
                drop(c.insert(modhost::body_cache::Key::of(&[modhost::body_cache::Part::Literal(part)]), zlib))
            }
        }
    }

    /// (entries, bytes charged).
    fn stats(&self) -> (usize, usize) {
        match self {
            Cache::Old(c) => {
                let (_, _, entries, bytes) = c.stats();
                (entries, bytes)
            }
            Cache::New(c) => {
                let (_, _, entries, bytes) = c.stats();
                (entries, bytes)
            }
        }
    }
}

/// Resident memory of this process, bytes.
fn rss() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm.split_whitespace().nth(1).and_then(|p| p.parse::<usize>().ok()).unwrap_or(0) * 4096
}

/// An 8 KiB answer unique to `i`, repetitive as a table is.
fn answer(i: usize) -> Vec<u8> {
    let mut text = format!("{{\"data\":{{\"id\":{i},\"rows\":\"");
    while text.len() < 8 * 1024 - 3 {
        text.push_str("abcdefgh");
    }
    text.push_str("\"}}");
    text.into_bytes()
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;

    let cache = Cache::new(&args.cache, 64 << 20)?;
    let before = rss();
    for i in 0..args.answers {
        let body = answer(i);
        let zlib = modhost_wire::deflate_parts(&[Bytes::from(body.clone())]);
        cache.insert(&body, zlib);
    }
    let (entries, charged) = cache.stats();
    println!(
        "{} cache, {} unique 8 KiB answers into 64 MiB: {entries} entries, {:.1} MiB charged, resident memory +{:.1} MiB",
        args.cache,
        args.answers,
        mib(charged),
        mib(rss().saturating_sub(before))
    );
    drop(cache);

    // Small exact-size bodies, so that only the bookkeeping is measured. The old cache is full when
    // its budget is (it charged the body alone); the new one when it has its most entries (65 536).
    let body = vec![7u8; 16];
    let budget = if args.cache == "old" { args.entries * body.len() } else { 1 << 30 };
    let cache = Cache::new(&args.cache, budget)?;
    for i in 0..args.entries {
        cache.insert(format!("fill{i}").as_bytes(), body.clone());
    }
    let mut times: Vec<f64> = (0..args.inserts)
        .map(|i| {
            let key = format!("more{i}");
            let start = Instant::now();
            cache.insert(key.as_bytes(), body.clone());
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let (entries, _) = cache.stats();
    println!(
        "{} cache, insert into a full cache of {entries} entries: median {:.1} µs, p99 {:.1} µs ({} inserts)",
        args.cache,
        times[times.len() / 2],
        times[times.len() * 99 / 100],
        times.len()
    );
    Ok(())
}
