//! What one large `db.patch` costs: time, and the process's peak and kept resident memory.
//!
//! Run with `cargo run --release -p modhost-db --example patch-cost -- 65` (the patch's size in MiB).
//! It uses only `Db::from_text` and `Db::patch`, so the same file measures an older modhost-db too:
//! copy it into that checkout's `host/db/examples/` and run the same command there.
//!
//! The patch is a table as mods write them: an object of item-like members, put at a path where
//! nothing is (`new`), then merged into that table again member by member (`again`).

use std::time::Instant;

/// (current, peak) resident memory of this process, MiB, from `/proc/self/status`.
fn memory() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() -> Result<(), modhost_db::LoadError> {
    let mib: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(65);
    let mut text = String::from("{");
    let mut i = 0;
    while text.len() < mib << 20 {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#""{i:024x}":{{"_id":"{i:024x}","_props":{{"Name":"item {i}","Weight":1.5,"Width":2,"Tags":["a","b"]}}}}"#
        ));
        i += 1;
    }
    text.push('}');
    let db = modhost_db::Db::from_text(r#"{"templates":{"items":{}}}"#)?;
    let (base, _) = memory();
    println!("patch: {:.1} MiB, {i} members; resident before: {base:.0} MiB", text.len() as f64 / (1 << 20) as f64);
    for (what, path) in [("new", "templates.mine"), ("again", "templates.mine")] {
        let start = Instant::now();
        let outcome = db.patch(path, &text);
        let took = start.elapsed().as_secs_f64();
        let (now, peak) = memory();
        println!(
            "{what}: {:?} in {took:.2} s; resident {:.0} MiB above the start (peak {:.0})",
            outcome.map(|_| "ok"),
            now - base,
            peak - base
        );
    }
    Ok(())
}
