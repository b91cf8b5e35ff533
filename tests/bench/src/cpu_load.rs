//! A server child under keep-alive load, and the CPU it spends per request: what `route-cost` and
//! `chain-cost` share. The server runs as a child ([`spawn`], [`Spawned::wait_ready`]); the load is
//! here, in Rust, so that a fresh machine needs no wrk; the CPU is the child's user + system time from
//! `/proc/<pid>/stat` over the measured stretch ([`measure`]), so the load generator's own CPU never
//! counts.

use anyhow::{Context, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The flags `route-cost` and `chain-cost` share: the binaries they start and the load.
#[derive(clap::Args, Debug)]
pub struct LoadArgs {
    /// The modhost binary.
    #[arg(long, default_value = "target/release/modhost")]
    pub modhost: PathBuf,
    /// The raw hyper baseline.
    #[arg(long, default_value = "target/release/hyper-hello")]
    pub hello: PathBuf,
    /// The fixture guest (`tests/fixtures/guest`).
    #[arg(long, default_value = "target/wasm-guests/wasm32-wasip2/release/fixture_guest.wasm")]
    pub fixture: PathBuf,
    /// Seconds measured per server and repetition (after a warm-up of a second).
    #[arg(long, default_value_t = 3.0)]
    pub secs: f64,
    /// Repetitions; the order of the servers flips each time.
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// Keep-alive connections of the load.
    #[arg(long, default_value_t = 32)]
    pub conns: usize,
}

/// One measured stretch of one server.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    /// Requests answered per second of the stretch.
    pub rps: f64,
    /// The server's CPU (user + system, every thread) per request, in µs.
    pub cpu_us: f64,
}

/// The request every connection of the load sends, again and again.
#[derive(Clone, Debug)]
pub struct Target {
    /// `GET`, `POST`, …
    pub method: &'static str,
    pub path: String,
    /// Sent with a `Content-Length` when not empty.
    pub body: Vec<u8>,
    /// Ask for an uncompressed answer (`Accept-Encoding: identity`, what wrk.sh measures). Without
    /// `Accept-Encoding` modhost answers zlib, as the SPT client expects.
    pub identity: bool,
}

impl Target {
    /// `GET path`.
    pub fn get(path: &str, identity: bool) -> Target {
        Target { method: "GET", path: path.to_owned(), body: Vec::new(), identity }
    }

    /// The request's bytes, head and body.
    fn bytes(&self) -> Vec<u8> {
        let encoding = if self.identity { "Accept-Encoding: identity\r\n" } else { "" };
        let length =
            if self.body.is_empty() { String::new() } else { format!("Content-Length: {}\r\n", self.body.len()) };
        let mut bytes =
            format!("{} {} HTTP/1.1\r\nHost: 127.0.0.1\r\n{encoding}{length}\r\n", self.method, self.path).into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

pub fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `modhost serve` on a free port with `root`.
pub fn modhost(binary: &Path, root: &Path) -> Command {
    let mut command = Command::new(binary);
    command.args(["serve", "--port", "0", "--root"]).arg(root);
    command
}

/// A server child whose log lines (stdout and stderr) arrive on a channel.
pub struct Spawned {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

pub fn spawn(command: &mut Command) -> anyhow::Result<Spawned> {
    let mut child = command
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let (send, lines) = std::sync::mpsc::channel();
    let out = child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>);
    let err = child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>);
    for stream in [out, err].into_iter().flatten() {
        let send = send.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
    }
    Ok(Spawned { child, lines })
}

impl Spawned {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for `listening on 127.0.0.1:PORT` (and, for modhost, its mods loaded) and answers PORT.
    /// A log line `refuse` answers true for (a mod left out, say) is an error naming it: a benchmark
    /// of a server that did not load what it was given measures something else.
    pub fn wait_ready(&mut self, wait_mods: bool, refuse: &dyn Fn(&str) -> bool) -> anyhow::Result<u16> {
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut port = None;
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) else {
                if let Some(status) = self.child.try_wait()? {
                    bail!("the server exited ({status}):\n{}", seen.join("\n"));
                }
                continue;
            };
            if let Some(rest) = line.split("listening on 127.0.0.1:").nth(1) {
                port = rest.trim().split(|c: char| !c.is_ascii_digit()).next().and_then(|p| p.parse().ok());
            }
            if refuse(&line) {
                bail!("the server said: {line}\n{}", seen.join("\n"));
            }
            let ready = !wait_mods || line.contains("ready: serving");
            seen.push(line);
            if let (Some(port), true) = (port, ready) {
                return Ok(port);
            }
        }
        bail!("the server did not get ready in 120 s:\n{}", seen.join("\n"))
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Clock ticks per second, the unit of `/proc/<pid>/stat`'s CPU times.
pub fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// User + system CPU of every thread of `pid` so far, in ticks.
fn cpu_ticks(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th
    // field of the line, stime the 15th.
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).context("unreadable /proc stat")?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).context("unreadable /proc stat");
    Ok(field(11)? + field(12)?)
}

/// Drives `conns` connections sending `target` for a second of warm-up and then `secs`, and answers
/// the server's req/s and CPU per request over the measured stretch.
pub async fn measure(
    pid: u32,
    port: u16,
    target: &Target,
    conns: usize,
    secs: Duration,
    ticks: f64,
) -> anyhow::Result<Run> {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let request: Arc<[u8]> = target.bytes().into();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let (stop, count, request) = (stop.clone(), count.clone(), request.clone());
        tasks.push(tokio::spawn(async move { drive(port, &request, &stop, &count).await }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (n0, c0, t0) = (count.load(Ordering::Relaxed), cpu_ticks(pid)?, Instant::now());
    tokio::time::sleep(secs).await;
    let (n1, c1, t1) = (count.load(Ordering::Relaxed), cpu_ticks(pid)?, Instant::now());
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await??;
    }
    let n = (n1 - n0).max(1) as f64;
    Ok(Run { rps: n / (t1 - t0).as_secs_f64(), cpu_us: (c1 - c0) / ticks / n * 1e6 })
}

/// Sends `target` once on a connection of its own and answers the body (undecoded: ask for
/// identity to read it): to check a configuration does what its row claims before it is measured.
pub async fn probe(port: u16, target: &Target) -> anyhow::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    stream.write_all(&target.bytes()).await?;
    let mut buf = Vec::with_capacity(4096);
    let (_, body) = read_answer(&mut stream, &mut buf).await?;
    Ok(buf[body].to_vec())
}

/// One keep-alive connection sending `request` one after the other, checking each answer is a 200,
/// and reconnecting when the server closes (modhost does after 512 requests).
async fn drive(port: u16, request: &[u8], stop: &AtomicBool, count: &AtomicU64) -> anyhow::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    while !stop.load(Ordering::Relaxed) {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
        stream.set_nodelay(true)?;
        buf.clear();
        loop {
            stream.write_all(request).await?;
            let (close, body) = read_answer(&mut stream, &mut buf).await?;
            buf.drain(..body.end);
            count.fetch_add(1, Ordering::Relaxed);
            if close || stop.load(Ordering::Relaxed) {
                break;
            }
        }
    }
    Ok(())
}

/// Reads one answer (head and `Content-Length` body) into `buf` and answers whether the server will
/// close and where in `buf` the body is. A status other than 200 is an error.
pub async fn read_answer(stream: &mut TcpStream, buf: &mut Vec<u8>) -> anyhow::Result<(bool, std::ops::Range<usize>)> {
    let head_end = loop {
        if let Some(end) = memchr::memmem::find(buf, b"\r\n\r\n") {
            break end + 4;
        }
        read_more(stream, buf).await?;
    };
    let head = std::str::from_utf8(&buf[..head_end]).context("a head that is not UTF-8")?;
    if !head.starts_with("HTTP/1.1 200") {
        bail!("the server answered {}", head.lines().next().unwrap_or(""));
    }
    let mut length = None;
    let mut close = false;
    for line in head.lines().skip(1) {
        let Some((name, value)) = line.split_once(':') else { continue };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse::<usize>().ok();
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.trim().eq_ignore_ascii_case("close");
        }
    }
    let end = head_end + length.context("an answer without Content-Length")?;
    while buf.len() < end {
        read_more(stream, buf).await?;
    }
    Ok((close, head_end..end))
}

async fn read_more(stream: &mut TcpStream, buf: &mut Vec<u8>) -> anyhow::Result<()> {
    let mut chunk = [0u8; 4096];
    let n = stream.read(&mut chunk).await?;
    if n == 0 {
        bail!("the server closed the connection mid-answer");
    }
    buf.extend_from_slice(&chunk[..n]);
    Ok(())
}
