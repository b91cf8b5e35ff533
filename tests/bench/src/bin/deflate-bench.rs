//! What deflating one answer costs: `modhost_wire::deflate` (up to 1 KiB without a zlib state, then the
//! thread's zlib state, reset per answer) against a fresh zlib state per answer (what the host did
//! before), at a few answer sizes, with the bytes each writes. Prints a table;
//! `cargo run --release -p modhost-benches --bin deflate-bench`.

use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::io::Write;
use std::time::Instant;

fn fresh(body: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::new(6));
    let _ = encoder.write_all(body);
    encoder.finish().unwrap_or_default()
}

/// Median over 7 rounds of the mean time per call, in µs.
fn time(rounds: usize, f: &dyn Fn() -> usize) -> f64 {
    let mut means: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let mut sink = 0;
            for _ in 0..rounds {
                sink += f();
            }
            std::hint::black_box(sink);
            t.elapsed().as_secs_f64() * 1e6 / rounds as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    means[3]
}

fn main() {
    println!("{:<8} {:>12} {:>12} {:>12} {:>16}", "answer", "host bytes", "zlib bytes", "host us", "fresh state us");
    for size in [40usize, 400, 1000, 4000, 8000, 60_000] {
        // An SPT-like JSON envelope of about `size` bytes.
        let mut body = br#"{"err":0,"errmsg":null,"data":{"items":["#.to_vec();
        let mut i = 0;
        while body.len() < size.saturating_sub(4) {
            body.extend_from_slice(format!("\"5449016a4bdc2d6f028b{i:04}\",").as_bytes());
            i += 1;
        }
        body.extend_from_slice(b"0]}}");
        let host = modhost_wire::deflate(&body);
        assert_eq!(modhost_wire::inflate_body(&host, 1 << 20).ok().flatten().as_ref(), Some(&body));
        let host_us = time(1000, &|| modhost_wire::deflate(&body).len());
        let fresh_us = time(1000, &|| fresh(&body).len());
        println!(
            "{:<8} {:>12} {:>12} {:>12.2} {:>16.2}",
            body.len(),
            host.len(),
            fresh(&body).len(),
            host_us,
            fresh_us
        );
    }
}
