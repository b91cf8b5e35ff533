//! The PostgreSQL store's benchmark, on a server of its own (a temporary folder, a Unix socket),
//! each row against a floor measured in the same run, alternating in rounds:
//!
//! - a `set` of a 3 KB value (a synchronous commit), against PostgreSQL's own `INSERT … ON CONFLICT DO
//!   UPDATE` of the same row in one statement (autocommit), and against the SQLite engine's durable
//!   `set` of it;
//! - a `get` of a cached value (one round trip: the version), against a bare round trip (`SELECT 1`)
//!   and the SQLite engine's cached `get`;
//! - a `doc_patch` of a small member of a 100 KB document;
//! - a session's lease taken and given back (what the lock costs a request on a shared store),
//!   against the round trip.
//!
//! From these and the statements each call sends (counted below from the code: a whole write is
//! BEGIN, the lock of the row, the usage's change, the write and COMMIT, plus the lease's check when
//! it carries one), the note states how much database work a request costs. Not a test: it prints
//! medians (and min-max over rounds). Run with `cargo run --release -p modhost-benches --bin
//! store-pg-bench`.

use modhost_store::Store;
use modhost_store_pg::testing::Server;
use std::time::{Duration, Instant};

const VALUE: usize = 3 * 1024;
const ROUNDS: usize = 7;
const PER_ROUND: usize = 200;

fn per_call(n: usize, mut f: impl FnMut(usize) -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    let t = Instant::now();
    for i in 0..n {
        f(i)?;
    }
    Ok(t.elapsed() / n as u32)
}

fn varied(value: &mut [u8], i: usize) -> &[u8] {
    value[..8].copy_from_slice(&(i as u64).to_le_bytes());
    value
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() -> anyhow::Result<()> {
    let server = Server::start();
    let url = server.url();
    let pg = modhost_store_pg::connect(&url)?;
    let dir = tempfile::tempdir()?;
    let sqlite = Store::open(dir.path(), true)?;
    let mut raw = postgres::Client::connect(&url, postgres::NoTls)?;
    raw.batch_execute("CREATE TABLE IF NOT EXISTS floor (ns TEXT, key TEXT, value BYTEA, PRIMARY KEY (ns, key))")?;
    let upsert = raw.prepare(
        "INSERT INTO floor (ns, key, value) VALUES ($1, $2, $3) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value",
    )?;
    let ping = raw.prepare("SELECT 1")?;
    let mut value = vec![b'v'; VALUE];
    let mut document = serde_json::json!({});
    for i in 0..1000 {
        document[format!("member{i}")] = serde_json::json!({"id": i, "filler": "x".repeat(80)});
    }
    let document = document.to_string();
    pg.set("bench", "doc", document.as_bytes())?;
    pg.set("bench", "read", &value)?;
    sqlite.set("bench", "read", &value)?;

    let rows = [
        "set 3 KB (PostgreSQL engine)",
        "INSERT … ON CONFLICT of the row",
        "set 3 KB (SQLite engine, durable)",
        "get, cached (PostgreSQL engine)",
        "round trip (SELECT 1)",
        "get, cached (SQLite engine)",
        "doc_patch in a 100 KB document",
        "lease taken and given back",
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); rows.len()];
    for round in 0..ROUNDS {
        let base = round * PER_ROUND;
        samples[0].push(per_call(PER_ROUND, |i| {
            pg.set("bench", "key", varied(&mut value, base + i)).map(drop).map_err(Into::into)
        })?);
        samples[1].push(per_call(PER_ROUND, |i| {
            raw.execute(&upsert, &[&"bench", &"key", &varied(&mut value, base + i)])?;
            Ok(())
        })?);
        samples[2].push(per_call(PER_ROUND, |i| {
            sqlite.set("bench", "key", varied(&mut value, base + i)).map(drop).map_err(Into::into)
        })?);
        samples[3].push(per_call(PER_ROUND, |_| pg.get("bench", "read").map(drop).map_err(Into::into))?);
        samples[4].push(per_call(PER_ROUND, |_| raw.query_one(&ping, &[]).map(drop).map_err(Into::into))?);
        samples[5].push(per_call(PER_ROUND * 10, |_| sqlite.get("bench", "read").map(drop).map_err(Into::into))?);
        samples[6].push(per_call(PER_ROUND, |i| {
            let patch = format!("{{\"n\":{}}}", base + i);
            pg.doc_patch("bench", "doc", &format!("member{}", i % 1000), patch.as_bytes(), None)?;
            Ok(())
        })?);
        samples[7].push(per_call(PER_ROUND, |_| {
            let lease = pg.acquire_lease("0123456789abcdef01234567", "bench", Duration::from_secs(10))?;
            pg.release_lease(&lease.expect("granted"))?;
            Ok(())
        })?);
    }
    let medians: Vec<Duration> = samples.iter().map(|s| median(s.clone())).collect();
    println!("PostgreSQL store ({ROUNDS} rounds of {PER_ROUND}; medians, min-max)");
    println!("{:<38} {:>10} {:>20}", "", "µs/call", "min-max");
    for (row, s) in rows.iter().zip(&samples) {
        let (min, max) = (s.iter().min().copied().unwrap_or_default(), s.iter().max().copied().unwrap_or_default());
        println!("{row:<38} {:>10.1} {:>9.1}-{:<9.1}", us(median(s.clone())), us(min), us(max));
    }
    let ratio = |a: usize, b: usize| us(medians[a]) / us(medians[b]);
    println!();
    println!("set / PostgreSQL's own INSERT: {:.2}x", ratio(0, 1));
    println!("set / SQLite durable set: {:.2}x", ratio(0, 2));
    println!("cached get / round trip: {:.2}x", ratio(3, 4));
    println!("lease (take + give back) / round trip: {:.2}x", ratio(7, 4));
    Ok(())
}
