//! The child of the store's kill-torture test (`tests/tests/host/store.rs`): commits to one store until
//! it is killed, saying on stdout before and after each commit what it commits, so the parent knows
//! which commits were acknowledged and which were in flight when the kill landed.
//!
//! `store-child <dir> default|durable` alternates whole writes of self-describing values (4 KB and
//! 84 KB, [`value`]) to key `key` (lines `B S <seq>` / `A S <seq>`) with document patches to key `doc`
//! ([`doc_patch`], lines `B P <n>` / `A P <n>`), continuing the sequences it finds in the store.
//! `store-child <dir> in-place` overwrites a plain file in place, the unsafe way, as the test's control.

use modhost_tests::torture::{doc_patch, seq_of, value};
use std::io::Write;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: store-child DIR MODE"))?);
    let mode = args.next().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    match mode.as_str() {
        "default" | "durable" => {
            let store = open(&dir, mode == "durable")?;
            let mut seq = store.get("ns", "key")?.and_then(|v| seq_of(&v)).unwrap_or(0);
            let mut n: u64 = match store.doc_get("ns", "doc", "n")? {
                Some(found) => serde_json::from_slice::<Option<u64>>(&found.value)?.unwrap_or(0),
                None => 0,
            };
            loop {
                seq += 1;
                writeln!(out, "B S {seq}")?;
                store.set("ns", "key", &value(seq))?;
                writeln!(out, "A S {seq}")?;
                n += 1;
                writeln!(out, "B P {n}")?;
                store.doc_patch("ns", "doc", "", doc_patch(n).as_bytes(), None)?;
                writeln!(out, "A P {n}")?;
            }
        }
        "in-place" => {
            std::fs::create_dir_all(dir.join("ns"))?;
            let mut seq = 0;
            writeln!(out, "A S 0")?;
            loop {
                seq += 1;
                let bytes = value(seq);
                let mut file = std::fs::File::create(dir.join("ns/key"))?;
                file.write_all(&bytes[..bytes.len() / 2])?;
                file.write_all(&bytes[bytes.len() / 2..])?;
            }
        }
        other => anyhow::bail!("unknown mode `{other}`"),
    }
}

/// Opens the store, waiting a little while the lock is held: the parent's own handle may live on for a
/// moment in a process another test thread is starting (between its fork and its exec).
fn open(dir: &std::path::Path, durable: bool) -> anyhow::Result<modhost_store::Store> {
    for _ in 0..200 {
        match modhost_store::Store::open(dir, durable) {
            Err(modhost_store::StoreError::Lock(modhost_store::LockError::Held { .. })) => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            other => return Ok(other?),
        }
    }
    Ok(modhost_store::Store::open(dir, durable)?)
}
