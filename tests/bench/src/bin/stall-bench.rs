//! `stall-bench`: what stalled connections cost a real `modhost serve` in memory, and whether it is
//! given back. For each kind (as slowhttptest names them), it opens N connections that stall, reads
//! the server's RSS (`/proc/<pid>/status`) before, while they are open, and after they are closed,
//! and repeats the round to show creep:
//!
//! - `silent`: connects and sends nothing;
//! - `head` (slowhttptest -H): a partial head, then one more header line every second;
//! - `body` (-B): a whole head declaring a 100 000-byte body, then one body byte a second;
//! - `read` (-X): asks for `/client/items` (identity, several MB at 3000 templates) and reads nothing.
//!
//! Not a test: it prints a table. `cargo run --release -p modhost-benches --bin stall-bench -- --help`
//! (needs `target/release/modhost`: `cargo build --release -p modhost`; `--modhost PATH` runs
//! another build, to compare).

use anyhow::{Context as _, bail};
use clap::Parser;
use modhost_tests::child::{ServeChild, sibling_modhost};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[derive(Parser)]
struct Args {
    /// Stalled connections per round.
    #[arg(long, default_value_t = 1000)]
    connections: usize,
    /// Rounds per kind (RSS after each shows whether memory creeps).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Kinds to run, comma-separated: silent, head, body, read.
    #[arg(long, default_value = "silent,head,body,read")]
    kinds: String,
    /// Item templates in the generated db (`/client/items` grows with it).
    #[arg(long, default_value_t = 3000)]
    items: usize,
    /// How long the connections stay stalled before RSS is read, ms (under the server's deadlines:
    /// head 3 s, idle and body 5 s).
    #[arg(long, default_value_t = 1500)]
    hold_ms: u64,
    /// The modhost binary (default: the one beside this program), e.g. another build to compare.
    #[arg(long)]
    modhost: Option<std::path::PathBuf>,
    /// Extra arguments for `modhost serve`.
    #[arg(long, allow_hyphen_values = true)]
    serve_args: Vec<String>,
}

/// The server's resident memory, KiB.
fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).context("no VmRSS")?;
    Ok(line.split_whitespace().nth(1).context("VmRSS value")?.parse()?)
}

/// Opens one stalled connection of `kind` and keeps it stalling until the task is aborted.
async fn stall(addr: SocketAddr, kind: &str) -> anyhow::Result<TcpStream> {
    let mut stream = TcpStream::connect(addr).await?;
    match kind {
        "silent" => {}
        "head" => stream.write_all(b"GET /client/game/keepalive HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: 1\r\n").await?,
        "body" => {
            stream
                .write_all(
                    b"POST /client/game/keepalive HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\nx",
                )
                .await?
        }
        "read" => {
            stream
                .write_all(b"GET /client/items HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n")
                .await?
        }
        other => bail!("unknown kind `{other}`: silent, head, body, read"),
    }
    Ok(stream)
}

/// Keeps `head` and `body` connections trickling (a line or a byte a second), as slowhttptest does.
async fn trickle(streams: &mut [TcpStream], kind: &str) {
    let bytes: &[u8] = match kind {
        "head" => b"X-b: 2\r\n",
        "body" => b"x",
        _ => return,
    };
    for stream in streams {
        let _ = stream.write_all(bytes).await;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let modhost = match &args.modhost {
        Some(path) => path.clone(),
        None => sibling_modhost()?,
    };
    let root = tempfile::tempdir()?;
    let db = root.path().join("db.json");
    let generated = std::process::Command::new(&modhost)
        .args(["gen-db", "--items", &args.items.to_string(), "--out"])
        .arg(&db)
        .status()
        .context("running modhost gen-db")?;
    anyhow::ensure!(generated.success(), "modhost gen-db failed");
    let extra: Vec<&str> = args.serve_args.iter().map(String::as_str).collect();
    println!(
        "modhost serve, {} connections a round, RSS of the server in KiB (a fresh server per kind)",
        args.connections
    );
    println!(
        "{:<7} {:>5} {:>7} {:>8} {:>8} {:>9} {:>7} {:>10}",
        "kind", "round", "idle", "before", "stalled", "KiB/conn", "after", "after/idle"
    );
    for kind in args.kinds.split(',') {
        let server = ServeChild::spawn(&modhost, root.path(), &extra)?;
        let pid = server.pid();
        // A first request warms what every connection shares (the route table, the answer's db node).
        let warm = modhost_tests::client::Call::get("/client/items").identity();
        modhost_tests::client::send(server.addr, &warm).await?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let idle = rss_kib(pid)?;
        for round in 1..=args.rounds {
            let before = rss_kib(pid)?;
            let started = Instant::now();
            let mut streams = Vec::with_capacity(args.connections);
            for _ in 0..args.connections {
                streams.push(stall(server.addr, kind).await?);
            }
            let hold = Duration::from_millis(args.hold_ms);
            while started.elapsed() < hold {
                tokio::time::sleep(Duration::from_millis(500).min(hold.saturating_sub(started.elapsed()))).await;
                trickle(&mut streams, kind).await;
            }
            let stalled = rss_kib(pid)?;
            drop(streams);
            // The server notices the closes and drops the connections.
            tokio::time::sleep(Duration::from_secs(2)).await;
            let after = rss_kib(pid)?;
            let per = (stalled as f64 - before as f64) / args.connections as f64;
            let ratio = after as f64 / idle as f64;
            println!("{kind:<7} {round:>5} {idle:>7} {before:>8} {stalled:>8} {per:>9.1} {after:>7} {ratio:>10.3}");
        }
    }
    Ok(())
}
