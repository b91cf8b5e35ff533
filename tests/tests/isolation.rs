//! Another mod's latency while a hostile mod is attacked: measured in its own test binary, because
//! cargo runs the tests of one binary in parallel and their load would swamp the comparison.
//!
//! For each attack: quiet and attacked phases alternate three times; in each, 200 sequential requests
//! for `/hello/item` give a p99; the medians of the quiet and attacked p99s are compared and printed.
//! The attacker keeps one hostile request in flight, with 5 ms between them (a player's client, not a
//! flood: a flood of any request, hostile or not, shares the CPU, which no sandbox prevents).

use modhost_tests::client::{Call, Client, send};
use modhost_tests::{TestServer, guests};
use std::time::{Duration, Instant};

/// The attacks of `host/hostile.rs`.
const ATTACKS: [(&str, &[u8]); 9] = [
    ("/fx/loop", b""),
    ("/fx/memory", b""),
    ("/fx/recurse", b""),
    ("/fx/big/1073741824", b""),
    ("/fx/flood", b""),
    ("/fx/bad-utf8", b""),
    ("/fx/trap", b""),
    ("/fx/patch-at/fx", b"{not json"),
    ("/fx/patch-at/templates", b"{\"x\":1}"),
];

/// p99 of `n` sequential requests for `/hello/item` on one connection, in ms, measured from a thread
/// of its own (the server's workers must not also run the measuring client).
async fn hello_p99(addr: std::net::SocketAddr, n: usize) -> f64 {
    tokio::task::spawn_blocking(move || {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(measure(addr, n))
    })
    .await
    .unwrap()
}

async fn measure(addr: std::net::SocketAddr, n: usize) -> f64 {
    let mut client = Client::connect(addr).await.unwrap();
    let mut times: Vec<f64> = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let reply = client.send(&Call::get("/hello/item")).await.unwrap();
        assert_eq!(reply.status, 200);
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    times[(n * 99).div_ceil(100) - 1]
}

/// The bound: within 20% of the quiet p99, or 5 ms when that is more. On this shared 2-core machine
/// most runs hold 20% (printed); some see 2-4 ms spikes from the OS time-slicing three busy threads
/// (the looping guest's worker, the serving worker, the measuring client) on two cores. What the test
/// catches is a stall the host causes: a hostile call holding a lock the others need, or stalling
/// the whole process (a memory reset under the address-space lock), costs more than that. Whether a
/// looping guest yields its worker is `containment.rs`'s test; with one attack in flight and two
/// workers, work-stealing would hide it here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_mods_p99_holds_while_each_attack_runs() {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "[grants]\ndb_write = [\"fx\"]").with_mod(
        "hello",
        guests::HELLO,
        "",
    );
    std::fs::write(builder.root().join("modhost.toml"), "[mods.fx]\ncall_timeout_ms = 300\nquarantine_after = 0\n")
        .unwrap();
    let server = builder.start().await.unwrap();
    let addr = server.addr;
    let _ = hello_p99(addr, 100).await; // warm the instance pool and the caches
    println!("{:<28} {:>12} {:>12} {:>7}", "attack", "quiet p99", "attacked", "ratio");
    let mut failures = Vec::new();
    for (path, body) in ATTACKS {
        let (mut quiet, mut attacked) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            quiet.push(hello_p99(addr, 200).await);
            let stop = Instant::now() + Duration::from_secs(20);
            let attack = tokio::spawn(async move {
                let mut sent = 0u32;
                while Instant::now() < stop {
                    let _ = send(addr, &Call::post_raw(path, body)).await;
                    sent += 1;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                sent
            });
            tokio::time::sleep(Duration::from_millis(20)).await;
            attacked.push(hello_p99(addr, 200).await);
            attack.abort();
            let _ = attack.await;
        }
        quiet.sort_by(f64::total_cmp);
        attacked.sort_by(f64::total_cmp);
        let (q, a) = (quiet[1], attacked[1]);
        println!("{path:<28} {q:>10.3}ms {a:>10.3}ms {:>7.2}", a / q);
        if a > (q * 1.2).max(q + 5.0) {
            failures.push(format!("{path}: p99 {a:.3} ms vs {q:.3} ms quiet"));
        }
    }
    assert_eq!(send(addr, &Call::get("/hello/item")).await.unwrap().status, 200);
    assert!(failures.is_empty(), "another mod's p99 suffered: {failures:?}");
}
