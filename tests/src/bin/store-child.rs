//! The child of the store's kill-torture test (`tests/tests/host/store.rs`): commits self-describing
//! values (4 KB and 84 KB, alternately) to one key in a loop until it is killed.
//!
//! `store-child <dir> atomic` commits through `modhost_store::Store` (temp + rename);
//! `store-child <dir> in-place` overwrites the file in place, the unsafe way, as the test's control.

use modhost_tests::torture::value;
use std::io::Write;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or_else(|| anyhow::anyhow!("usage: store-child DIR MODE"))?);
    let mode = args.next().unwrap_or_default();
    let mut seq = std::process::id() as u64 * 1_000_000;
    match mode.as_str() {
        "atomic" => {
            let store = modhost_store::Store::open(&dir, false)?;
            loop {
                seq += 1;
                store.set("ns", "key", &value(seq))?;
            }
        }
        "in-place" => {
            std::fs::create_dir_all(dir.join("ns"))?;
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
