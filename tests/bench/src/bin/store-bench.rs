//! The store's benchmark, each row against a floor measured in the same run, alternating in rounds:
//!
//! - `set` of a 3 KB value in the default mode, against the old one-file-per-key commit done by hand
//!   (O_EXCL open + write + rename), the cost the SQLite engine replaced;
//! - `set` in durable mode, against one fsync of this disk (a 3 KB write in place + `fdatasync` of a
//!   file): a durable commit is one fsync of the write-ahead log, written in place over its reserved
//!   space, so the ratio should be near 1 (issue 34's target: ≤ 1.2x);
//! - `set` in durable mode against a bare SQLite commit of the same 3 KB (rusqlite, the store's
//!   pragmas, its log reserved in place the same way), and that commit against the fsync: SQLite's own
//!   floor, which is the work of the commit before its one `fdatasync` (measured 0.24x of an fsync with
//!   the sync off) on top of that `fdatasync`. The store over bare SQLite is what the store adds;
//! - durable `set`s from 1, 2, 4 and 8 threads at once, each on its own key, against the same fsync:
//!   group commit shares one fsync among the commits waiting, so with more writers a commit costs a
//!   fraction of an fsync. The row's last column is the fsync over the cost of a commit: how many
//!   commits one fsync's time pays for (about the commits per fsync; `strace -f -c` counts them exactly).
//! - a document patch of a small value in a 1 MB document, and a path read in it, against the
//!   cached whole `get`.
//!
//! It prints medians (and min-max over rounds). Run with
//! `cargo run --release -p modhost-benches --bin store-bench`. Flags:
//!
//! - `--durable-only`: only the durable rows;
//! - `--max-durable-ratio X`: a gate: exits 1 when the durable set's median over the fsync's median
//!   is over `X`. 2.0 catches a commit that pays a second fsync (measured 2.2-2.45x with one planted;
//!   2.5 did not), with room over today's 1.15-1.25x on a noisy disk.

use modhost_store::Store;
use std::fs::OpenOptions;
use std::io::{Seek, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const VALUE: usize = 3 * 1024;

/// The old store's default commit: temp file, write, rename.
fn files_commit(dir: &Path, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    let key = dir.join("key");
    let t = Instant::now();
    for i in 0..n {
        let temp = dir.join(format!(".tmp-floor-{i}"));
        let mut file = OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(value)?;
        drop(file);
        std::fs::rename(&temp, &key)?;
    }
    Ok(t.elapsed() / n as u32)
}

/// One fsync of this disk: rewrite 3 KB of a file and `fdatasync` it.
fn fsync(dir: &Path, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    let mut file = OpenOptions::new().write(true).create(true).truncate(false).open(dir.join("fsync"))?;
    let t = Instant::now();
    for _ in 0..n {
        file.rewind()?;
        file.write_all(value)?;
        file.sync_data()?;
    }
    Ok(t.elapsed() / n as u32)
}

fn sets(store: &Store, key: &str, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    // Each write differs from the one before: SQLite commits a value equal to the stored one without
    // writing a page, which would measure nothing.
    let mut value = value.to_vec();
    let t = Instant::now();
    for i in 0..n {
        value[..8].copy_from_slice(&(i as u64).to_le_bytes());
        store.set("bench", key, &value)?;
    }
    Ok(t.elapsed() / n as u32)
}

/// A bare SQLite database with the store's durable settings (WAL, `synchronous=FULL`, no
/// autocheckpoint) and its log's first 4 MB written ahead as the store writes them (`sql::reserve_log`),
/// so its commits overwrite blocks the file has: the floor under the store's durable commit.
fn bare_sqlite(dir: &Path) -> anyhow::Result<rusqlite::Connection> {
    std::fs::create_dir_all(dir)?;
    let conn = rusqlite::Connection::open(dir.join("bare.sqlite3"))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.pragma_update(None, "journal_size_limit", 4 << 20)?;
    conn.execute_batch("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")?;
    conn.execute("INSERT INTO kv VALUES ('key', ?1)", [&vec![0u8; VALUE]])?;
    let mut log = OpenOptions::new().write(true).open(dir.join("bare.sqlite3-wal"))?;
    let at = log.seek(std::io::SeekFrom::End(0))?;
    log.write_all(&vec![0u8; (4usize << 20).saturating_sub(at as usize)])?;
    log.sync_all()?;
    conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))?;
    Ok(conn)
}

/// `n` commits of a 3 KB upsert on the bare database, then a checkpoint that starts its log over (as
/// the store's maintenance thread does, outside the timing).
fn bare_sets(conn: &rusqlite::Connection, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    let mut value = value.to_vec();
    let mut upsert = conn.prepare_cached(
        "INSERT INTO kv (key, value) VALUES ('key', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?;
    let t = Instant::now();
    for i in 0..n {
        value[..8].copy_from_slice(&(i as u64).to_le_bytes());
        conn.execute_batch("BEGIN IMMEDIATE")?;
        upsert.execute([&value])?;
        conn.execute_batch("COMMIT")?;
    }
    let took = t.elapsed() / n as u32;
    conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |_| Ok(()))?;
    Ok(took)
}

/// `threads` writers at once, each `n` commits of its own key: the time per commit.
fn parallel_sets(store: &Arc<Store>, threads: usize, n: usize, value: &[u8]) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|i| {
            let (store, value) = (store.clone(), value.to_vec());
            std::thread::spawn(move || sets(&store, &format!("key{i}"), n, &value))
        })
        .collect();
    for h in handles {
        h.join().map_err(|_| anyhow::anyhow!("a writer panicked"))??;
    }
    Ok(t.elapsed() / (threads * n) as u32)
}

fn timed(n: usize, mut f: impl FnMut(usize) -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    let t = Instant::now();
    for i in 0..n {
        f(i)?;
    }
    Ok(t.elapsed() / n as u32)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn summary(xs: &[Duration]) -> String {
    let mut xs = xs.to_vec();
    xs.sort();
    format!("{:.1} µs ({:.1}-{:.1})", us(xs[xs.len() / 2]), us(xs[0]), us(xs[xs.len() - 1]))
}

fn median(xs: &[Duration]) -> Duration {
    let mut xs = xs.to_vec();
    xs.sort();
    xs[xs.len() / 2]
}

/// Alternates `a` and `b` for `rounds` rounds (which goes first flips each round, so drift on a noisy
/// machine hits both alike) and prints a row: both medians and the ratio b/a, which it answers.
fn row(
    name: &str,
    rounds: usize,
    a: impl FnMut() -> anyhow::Result<Duration>,
    b: impl FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<f64> {
    let (ratio, line) = measure(name, rounds, a, b)?;
    println!("{line}");
    Ok(ratio)
}

/// [`row`]'s measure: the ratio b/a of the medians, and the row as printed.
fn measure(
    name: &str,
    rounds: usize,
    mut a: impl FnMut() -> anyhow::Result<Duration>,
    mut b: impl FnMut() -> anyhow::Result<Duration>,
) -> anyhow::Result<(f64, String)> {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            xs.push(a()?);
            ys.push(b()?);
        } else {
            ys.push(b()?);
            xs.push(a()?);
        }
    }
    let ratio = median(&ys).as_secs_f64() / median(&xs).as_secs_f64();
    Ok((ratio, format!("{name:<34} {:>26} {:>26} {ratio:>7.2}x", summary(&xs), summary(&ys))))
}

/// A profile-like document of about `bytes`: items keyed by id, each ~200 bytes.
fn big_document(bytes: usize) -> String {
    let mut items = serde_json::Map::new();
    let mut i = 0u64;
    let mut len = 0;
    while len < bytes {
        let id = format!("{:024x}", 0x6400_0000_0000_0000u64 + i);
        let item = serde_json::json!({
            "_id": id, "_tpl": "5449016a4bdc2d6f028b456f", "parentId": "5811ce572459770cba1a34ea",
            "slotId": "hideout", "location": {"x": i % 10, "y": i / 10, "r": "Horizontal"},
            "upd": {"StackObjectsCount": 1 + i % 50, "SpawnedInSession": false},
        });
        len += item.to_string().len() + 30;
        items.insert(id, item);
        i += 1;
    }
    serde_json::json!({"Info": {"Nickname": "bench", "Level": 1}, "Inventory": {"items": items}}).to_string()
}

/// The command line: `--durable-only`, `--max-durable-ratio X`.
struct Args {
    durable_only: bool,
    max_durable_ratio: Option<f64>,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args { durable_only: false, max_durable_ratio: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--durable-only" => args.durable_only = true,
            "--max-durable-ratio" => {
                let x = it.next().ok_or_else(|| anyhow::anyhow!("--max-durable-ratio wants a number"))?;
                args.max_durable_ratio = Some(x.parse().map_err(|e| anyhow::anyhow!("--max-durable-ratio {x}: {e}"))?);
            }
            other => anyhow::bail!("unknown argument `{other}` (known: --durable-only, --max-durable-ratio X)"),
        }
    }
    Ok(args)
}

fn main() -> anyhow::Result<()> {
    let args = args()?;
    let value = vec![b'x'; VALUE];
    let base = tempfile::tempdir()?;
    let floor_dir = base.path().join("floor");
    std::fs::create_dir_all(&floor_dir)?;
    println!("{:<34} {:>26} {:>26} {:>8}", "what (a vs b)", "a", "b", "b/a");

    let durable = Arc::new(Store::open(&base.path().join("durable"), true)?);
    durable.set("bench", "key", &value)?; // the first-write backup is done
    let durable_ratio = row(
        "3 KB set, durable: fsync vs set",
        15,
        || fsync(&floor_dir, 40, &value),
        || sets(&durable, "key", 40, &value),
    )?;
    let bare = bare_sqlite(&base.path().join("bare"))?;
    row("3 KB, durable: bare SQLite vs set", 9, || bare_sets(&bare, 40, &value), || sets(&durable, "key", 40, &value))?;
    row("3 KB, durable: fsync vs bare SQLite", 9, || fsync(&floor_dir, 40, &value), || bare_sets(&bare, 40, &value))?;
    drop(bare);
    for i in 0..8 {
        durable.set("bench", &format!("key{i}"), &value)?;
    }
    for writers in [1, 2, 4, 8] {
        let (ratio, line) = measure(
            &format!("durable, {writers} writer{}: fsync vs set", if writers == 1 { "" } else { "s" }),
            9,
            || fsync(&floor_dir, 40, &value),
            || parallel_sets(&durable, writers, 80 / writers, &value),
        )?;
        println!("{line}  {:.1} commits/fsync", 1.0 / ratio);
    }
    drop(durable);

    let verdict = args.max_durable_ratio.map(|max| (durable_ratio <= max, max));
    if !args.durable_only {
        other_rows(&base, &floor_dir, &value)?;
    }
    match verdict {
        Some((true, max)) => println!("\ngate: durable set {durable_ratio:.2}x one fdatasync, within {max}x"),
        Some((false, max)) => {
            eprintln!("\ngate FAILED: a durable set costs {durable_ratio:.2}x one fdatasync (median), over {max}x");
            std::process::exit(1);
        }
        None => {}
    }
    Ok(())
}

/// The rows of the default mode and of documents.
fn other_rows(base: &tempfile::TempDir, floor_dir: &Path, value: &[u8]) -> anyhow::Result<()> {
    let store = Store::open(&base.path().join("default"), false)?;
    store.set("bench", "key", value)?; // the first-write backup is done
    row(
        "3 KB set, default: files vs SQLite",
        15,
        || files_commit(floor_dir, 400, value),
        || sets(&store, "key", 400, value),
    )?;

    store.set("bench", "small", big_document(3 * 1024).as_bytes())?;
    let small_first = store.doc_keys("bench", "small", "Inventory.items")?.into_iter().next().unwrap_or_default();
    let small_path = format!("Inventory.items.{small_first}");
    row(
        "3 KB: whole set vs doc patch",
        15,
        || sets(&store, "key", 400, value),
        || {
            timed(400, |i| {
                let patch = format!(r#"{{"location":{{"x":{},"y":0}}}}"#, i % 10);
                store.doc_patch("bench", "small", &small_path, patch.as_bytes(), None).map(|_| ()).map_err(Into::into)
            })
        },
    )?;

    let doc = big_document(1 << 20);
    store.set("bench", "doc", doc.as_bytes())?;
    let first = store.doc_keys("bench", "doc", "Inventory.items")?.into_iter().next().unwrap_or_default();
    let item_path = format!("Inventory.items.{first}");
    store.doc_get("bench", "doc", &item_path)?; // parsed and indexed once
    row(
        "1 MB doc: cached get vs patch",
        15,
        || timed(400, |_| store.get("bench", "key").map(|_| ()).map_err(Into::into)),
        || {
            timed(400, |i| {
                let patch = format!(r#"{{"location":{{"x":{},"y":0}}}}"#, i % 10);
                store.doc_patch("bench", "doc", &item_path, patch.as_bytes(), None).map(|_| ()).map_err(Into::into)
            })
        },
    )?;
    row(
        "1 MB doc: cached get vs path read",
        15,
        || timed(4000, |_| store.get("bench", "key").map(|_| ()).map_err(Into::into)),
        || timed(4000, |_| store.doc_get("bench", "doc", &item_path).map(|_| ()).map_err(Into::into)),
    )?;
    println!(
        "\nMedians over rounds (min-max); a and b alternate each round. The 1 MB document's patches are folded \
         in the background once they weigh half the document, which the patch row includes."
    );
    Ok(())
}
