//! The HTTP front's benchmark, against a real `modhost serve` child on a generated database:
//! 1. resident memory per stalled connection at 2000 of them, and the p99 of ordinary requests behind;
//! 2. healthy throughput while misbehaving clients run (idle, slowloris, slow readers, fragmented
//!    writers), as a fraction of the quiet run;
//! 3. `/client/items` on a compressed-body cache hit: time to first byte and to the last, beside moving
//!    the same bytes over loopback.
//!
//! Not a test: it prints tables. Run with
//! `cargo run --release -p modhost-benches --bin front-bench -- [--modhost target/release/modhost] [--items 3000]`.

use modhost_benches::adversary;
use modhost_tests::child::{ServeChild, sibling_modhost};
use modhost_tests::client::{Call, Client};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn rss_kib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn percentile(mut xs: Vec<Duration>, p: f64) -> Duration {
    xs.sort();
    xs[((xs.len() as f64 - 1.0) * p).round() as usize]
}

const SESSION: &str = "aaaaaaaaaaaaaaaaaaaaaaaa";

/// Healthy load: `clients` keep-alive connections asking for keepalive for `secs`; answers req/s.
async fn healthy(addr: SocketAddr, clients: usize, secs: f64) -> f64 {
    let stop = Instant::now() + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            tokio::spawn(async move {
                let mut client = Client::connect(addr).await.unwrap();
                let mut n = 0u64;
                while Instant::now() < stop {
                    let reply = match client.send(&Call::get("/client/game/keepalive").session(SESSION)).await {
                        Ok(r) => r,
                        Err(_) => {
                            client = Client::connect(addr).await.unwrap();
                            continue;
                        }
                    };
                    assert_eq!(reply.json()["err"], 0, "a wrong answer: {}", reply.text());
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    total as f64 / secs
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let modhost = arg("--modhost").map(std::path::PathBuf::from).map_or_else(sibling_modhost, Ok)?;
    let items: u64 = arg("--items").map(|s| s.parse()).transpose()?.unwrap_or(3000);
    let root = tempfile::tempdir()?;
    std::fs::write(root.path().join("db.json"), modhost_gamedb::database(items).to_string())?;
    let server = ServeChild::spawn(&modhost, root.path(), &[])?;
    run(server.addr, server.pid()).await
}

async fn run(addr: SocketAddr, pid: u32) -> anyhow::Result<()> {
    let mut client = Client::connect(addr).await?;
    for _ in 0..50 {
        client.send(&Call::get("/client/game/keepalive")).await?;
    }
    client.send(&Call::get("/client/items")).await?;

    // 1. Stalled connections.
    let base = rss_kib(pid);
    let mut stalled = Vec::new();
    for _ in 0..2000 {
        stalled.push(TcpStream::connect(addr).await?);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let per_conn = (rss_kib(pid) - base) / 2000.0;
    let mut lat = Vec::new();
    for _ in 0..300 {
        let t = Instant::now();
        client.send(&Call::get("/client/game/keepalive")).await?;
        lat.push(t.elapsed());
    }
    drop(stalled);
    println!("1. 2000 stalled (silent) connections");
    println!("   resident memory per stalled connection: {per_conn:.1} KiB");
    println!(
        "   ordinary requests behind them: p50 {:?}, p99 {:?} (300 requests)\n",
        percentile(lat.clone(), 0.5),
        percentile(lat, 0.99)
    );
    tokio::time::sleep(Duration::from_secs(6)).await; // let the stalled ones be reaped

    // 2. Healthy throughput beside misbehaving clients.
    println!("2. healthy throughput (4 keep-alive clients, 3 s each) while misbehaving clients run");
    let quiet = healthy(addr, 4, 3.0).await;
    println!("   {:<14} {:>10.0} req/s  1.00", "quiet", quiet);
    for kind in adversary::KINDS {
        let bad = adversary::start(addr, kind)?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rps = healthy(addr, 4, 3.0).await;
        drop(bad);
        println!("   {kind:<14} {rps:>10.0} req/s  {:.2}", rps / quiet);
        tokio::time::sleep(Duration::from_secs(1)).await;
    }

    // 3. /client/items on a cache hit, beside the same bytes over loopback.
    let mut ttfb = Vec::new();
    let mut full = Vec::new();
    let mut size = 0;
    let mut raw = TcpStream::connect(addr).await?;
    for _ in 0..30 {
        raw.write_all(b"GET /client/items HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await?;
        let t = Instant::now();
        let mut buf = vec![0u8; 1 << 20];
        let mut got = raw.read(&mut buf).await?;
        ttfb.push(t.elapsed());
        let text = String::from_utf8_lossy(&buf[..got.min(400)]).into_owned();
        let head_end = text.find("\r\n\r\n").map(|i| i + 4).unwrap_or(0);
        let length: usize = text
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0)))
            .unwrap_or(0);
        while got < head_end + length {
            got += raw.read(&mut buf).await?;
        }
        full.push(t.elapsed());
        size = length;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let local = listener.local_addr()?;
    let payload = vec![7u8; size];
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut one = [0u8; 1];
        for _ in 0..30 {
            s.read_exact(&mut one).await.unwrap();
            s.write_all(&payload).await.unwrap();
        }
    });
    let mut s = TcpStream::connect(local).await?;
    let mut loop_first = Vec::new();
    let mut loop_full = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    for _ in 0..30 {
        s.write_all(b"x").await?;
        let t = Instant::now();
        let mut got = s.read(&mut buf).await?;
        loop_first.push(t.elapsed());
        while got < size {
            got += s.read(&mut buf).await?;
        }
        loop_full.push(t.elapsed());
    }
    server.await?;
    println!(
        "\n3. /client/items, cache hit, {} KiB compressed (medians of 30)\n   modhost: first byte {:?}, last byte {:?}\n   loopback, same size: first byte {:?}, last byte {:?}",
        size / 1024,
        percentile(ttfb, 0.5),
        percentile(full, 0.5),
        percentile(loop_first, 0.5),
        percentile(loop_full, 0.5)
    );
    Ok(())
}
