//! Misbehaving clients (idle, slowloris, slow readers, fragmenters): they run beside a healthy load
//! to show what they cost it. Each kind loops until its tasks are aborted (dropping the [`Adversaries`] does that).

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// The kinds, by name.
pub const KINDS: [&str; 4] = ["idle", "slowloris", "slow-readers", "fragmented"];

/// Running misbehaving clients; dropped, they stop.
pub struct Adversaries(Vec<JoinHandle<()>>);

impl Drop for Adversaries {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// Starts the clients of `kind` against `addr`:
/// - `idle`: 200 connections that send nothing (each reopened after 6 s);
/// - `slowloris`: 50 connections sending a head one byte every 200 ms;
/// - `slow-readers`: 50 connections asking for `/client/items` and reading 4 KiB every 20 ms;
/// - `fragmented`: 50 connections sending whole requests in 16-byte pieces 10 ms apart.
///
/// Unknown kinds are an error naming the known ones.
pub fn start(addr: SocketAddr, kind: &str) -> anyhow::Result<Adversaries> {
    anyhow::ensure!(KINDS.contains(&kind), "unknown scenario `{kind}`; known: quiet, {}", KINDS.join(", "));
    let count = if kind == "idle" { 200 } else { 50 };
    let tasks = (0..count)
        .map(|i| {
            let kind = kind.to_owned();
            tokio::spawn(async move {
                loop {
                    let Ok(mut s) = TcpStream::connect(addr).await else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    };
                    match kind.as_str() {
                        "idle" => tokio::time::sleep(Duration::from_secs(6)).await,
                        "slowloris" => {
                            for b in b"GET /client/game/keepalive HTTP/1.1\r\nHost: 127.0.0.1\r\n" {
                                if s.write_all(&[*b]).await.is_err() {
                                    break;
                                }
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                        }
                        "slow-readers" => {
                            let _ = s.write_all(b"GET /client/items HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
                            let mut buf = [0u8; 4096];
                            while let Ok(n) = s.read(&mut buf).await {
                                if n == 0 {
                                    break;
                                }
                                tokio::time::sleep(Duration::from_millis(20)).await;
                            }
                        }
                        _ => {
                            let req = format!("GET /client/game/keepalive?f={i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
                            for piece in req.as_bytes().chunks(16) {
                                if s.write_all(piece).await.is_err() {
                                    break;
                                }
                                tokio::time::sleep(Duration::from_millis(10)).await;
                            }
                            let mut buf = [0u8; 4096];
                            let _ = tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await;
                        }
                    }
                }
            })
        })
        .collect();
    Ok(Adversaries(tasks))
}
