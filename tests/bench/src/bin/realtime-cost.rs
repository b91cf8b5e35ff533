//! What the SPT notifier costs (issue 19): how long a mod's push takes to reach the client's socket,
//! how much server memory an idle socket holds, and whether a thousand idle sockets slow ordinary
//! requests down.
//!
//! How: the server is a `modhost serve --root <tmp root>` child (so its memory is its own, and the
//! bench's thousands of client sockets never count), with the peer fixture (`tests/fixtures/peer`)
//! installed as `pusher` (`{"name": "p"}`, grant `push = "broadcast"`, which holds "any"). The
//! clients are here: plain keep-alive HTTP/1.1 connections (`Accept-Encoding: identity`) and
//! tokio-tungstenite sockets on
//! `/notifierServer/getwebsocket/<session>`, each idle socket read by a task of its own (so it
//! answers the server's pings, as a game client would).
//!
//! 1. **Push latency.** The bench holds the socket of one session and, one request at a time, sends
//!    `POST /peer/p/push/<session>` whose body carries the bench's clock at the send (`t_ns`); the
//!    mod pushes the body, and the figure is the socket's receive minus `t_ns`, from the body it
//!    received (so every figure is of the message it names). Beside it, the same request's HTTP round
//!    trip, and the round trip of `POST /peer/p/echo` (the same body, the same fresh mod instance,
//!    no push), interleaved one for one with the pushes (echo first on even pairs, push first on odd
//!    ones): the push's own share is its receive time against the echo's round trip. Target: p99 at
//!    most 5 ms on loopback.
//! 2. **Memory per idle socket.** A fresh server child per measurement (the root and its compile
//!    cache are shared): after a warm-up (requests, and a few sockets opened and closed), its VmRSS
//!    (and RssAnon) from `/proc/<pid>/status`, then N idle sockets opened (the server's status
//!    counting N), half a second of rest, and its VmRSS again: (after − before) / N, the median of
//!    the repetitions. Target: at most 16 KiB per socket. A last column is the same after one
//!    broadcast (`/peer/p/broadcast`) reached every socket: what a socket holds once it has written.
//! 3. **Requests beside idle sockets.** `--conns` keep-alive connections sending `POST
//!    /peer/p/echo` back to back for `--secs` (after a second of warm-up), every request's latency
//!    kept: p50 and p99 with no idle socket and with `--sockets` idle sockets open, the two
//!    conditions alternated (the order flipped every repetition), and the ratio taken within each
//!    repetition (neighbours in time share the machine's mood), whose median is printed. Target:
//!    p99 at most +20%.
//! 4. **Pinged sockets.** Figures 1 and 3 again with the idle sockets pinged every `--ping-ms` (1 s:
//!    a thousand pings a second, thirty times what the default 30 s gives): the interval is
//!    `RealtimeLimits::ping_idle` in `ServerSettings.realtime`, not a flag of `modhost serve`, so this server
//!    runs in this process (`modhost_tests::TestServer`: no built-in game, 32 instances) on a tokio
//!    runtime of its own; its two conditions are compared with each other, not with the child's.
//!    The pings the clients received per second are printed beside the load.
//!
//! Figures 1 and 3 share each condition's window (the sockets are opened once for both). No
//! assertion depends on speed: it prints tables (progress goes to stderr).
//!
//! `target/release/realtime-cost` (defaults: `--reps 5 --sockets 1000 --pushes 3000`), or
//! `--quick`, after `cargo build --release -p modhost-tests --tests` (the guests) and `cargo build
//! --release -p modhost -p modhost-benches`.

use anyhow::{Context, bail};
use clap::Parser;
use futures_util::StreamExt as _;
use modhost_benches::cpu_load::{max, min, modhost, read_answer, spawn};
use modhost_benches::stats::{mann_whitney, median, summarize};
use modhost_tests::TestServer;
use modhost_tests::server::install_mod;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async_with_config};

#[derive(Parser, Debug)]
#[command(about = "The notifier's push latency, memory per idle socket, and requests beside idle sockets")]
struct Args {
    /// The modhost binary.
    #[arg(long, default_value = "target/release/modhost")]
    modhost: PathBuf,
    /// The config-driven peer mod (`tests/fixtures/peer`).
    #[arg(long, default_value = "target/wasm-guests/wasm32-wasip2/release/fixture_peer.wasm")]
    peer: PathBuf,
    /// Repetitions of each condition (0 and `--sockets` idle sockets), alternated [default: 5; quick 3].
    #[arg(long)]
    reps: Option<usize>,
    /// Idle sockets of the "sockets open" condition; the memory figure opens this many and twice as many.
    #[arg(long, default_value_t = 1000)]
    sockets: usize,
    /// Pushes per condition, over all repetitions (rounded down to a multiple of them; as many echoes
    /// beside them) [default: 3000; quick 600].
    #[arg(long)]
    pushes: Option<usize>,
    /// Seconds of request load per condition and repetition, after a second of warm-up [default: 3; quick 1].
    #[arg(long)]
    secs: Option<f64>,
    /// Keep-alive connections of the request load.
    #[arg(long, default_value_t = 8)]
    conns: usize,
    /// Repetitions of each memory measurement (a fresh server each) [default: 3; quick 1].
    #[arg(long)]
    mem_reps: Option<usize>,
    /// The ping interval of the pinged run (an in-process server, `ServerSettings.realtime.ping_idle`), in ms;
    /// 0 leaves that run out.
    #[arg(long, default_value_t = 1000)]
    ping_ms: u64,
    /// A quick run: fewer repetitions and pushes, shorter loads, and the memory at `--sockets` only.
    #[arg(long)]
    quick: bool,
}

/// The session whose socket the pushes go to; the idle sockets' sessions are numbered from `IDLE_BASE`.
const PUSHED: &str = "b0b0b0b0b0b0b0b0b0b0b0b0";
const IDLE_BASE: u64 = 0x1000_0000;

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let q = args.quick;
    let reps = args.reps.unwrap_or(if q { 3 } else { 5 }).max(1);
    let pushes = args.pushes.unwrap_or(if q { 600 } else { 3000 }).max(reps);
    let secs = Duration::from_secs_f64(args.secs.unwrap_or(if q { 1.0 } else { 3.0 }));
    let mem_reps = args.mem_reps.unwrap_or(if q { 1 } else { 3 }).max(1);
    let sizes: Vec<usize> = if q { vec![args.sockets] } else { vec![args.sockets, 2 * args.sockets] };
    for f in [&args.modhost, &args.peer] {
        if !f.exists() {
            bail!(
                "missing {}: build with `cargo build --release -p modhost-tests --tests` (the guests) and \
                 `cargo build --release -p modhost -p modhost-benches`",
                f.display()
            );
        }
    }
    raise_nofile(2 * args.sockets.max(*sizes.iter().max().unwrap_or(&0)) + 256)?;
    let work = tempfile::tempdir()?;
    let root = work.path().join("root");
    install_mod(&root, "pusher", &args.peer, "[grants]\npush = \"broadcast\"")?;
    std::fs::write(root.join("mods/pusher/config.default.json"), json!({"name": "p"}).to_string())?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;

    // Figures 1 and 3: one server, the conditions alternated.
    let mut child = spawn(&mut modhost(&args.modhost, &root))?;
    let result = child
        .wait_ready(true, &left_out)
        .and_then(|port| runtime.block_on(latency_and_load(port, &args, reps, pushes / reps, secs)));
    child.stop();
    let windows = result.context("the push latency and the request load")?;
    let child_title = "`modhost serve` child, default ping interval (30 s: the idle sockets are never pinged)";
    print_latency(&windows, &args, child_title);
    print_load(&windows, &args, child_title, secs);

    // Figures 1 and 3 again with the sockets pinged: the interval is not a flag of `modhost serve`,
    // so this server runs in this process, on a runtime of its own (2 workers, as the clients').
    if args.ping_ms > 0 {
        let ping = Duration::from_millis(args.ping_ms);
        let server_runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let peer = args.peer.to_str().context("the peer's path is not UTF-8")?;
        let builder = TestServer::builder();
        let dir = builder.root().join("mods/pusher");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("config.default.json"), json!({"name": "p"}).to_string())?;
        let server = server_runtime.block_on(
            builder
                .with_mod("pusher", peer, "[grants]\npush = \"broadcast\"")
                .config(|c| c.realtime.ping_idle = ping)
                .start(),
        )?;
        if !server.report.failed.is_empty() {
            bail!("the in-process server left out {:?}", server.report.failed);
        }
        let result = runtime.block_on(latency_and_load(server.addr.port(), &args, reps, pushes / reps, secs));
        server_runtime.block_on(server.stop())?;
        let windows = result.context("the pinged run")?;
        let title = format!(
            "in-process server (TestServer: no built-in game, 32 instances), ping interval {} ms: the sockets are pinged",
            args.ping_ms
        );
        print_latency(&windows, &args, &title);
        print_load(&windows, &args, &title, secs);
    }

    // Figure 2: a fresh server per measurement.
    let mut memory: Vec<(usize, Memory)> = Vec::new();
    for rep in 0..mem_reps {
        let mut order = sizes.clone();
        if rep % 2 == 1 {
            order.reverse();
        }
        for &n in &order {
            let mut child = spawn(&mut modhost(&args.modhost, &root))?;
            let pid = child.pid();
            let result =
                child.wait_ready(true, &left_out).and_then(|port| runtime.block_on(measure_memory(pid, port, n)));
            child.stop();
            let m = result.with_context(|| format!("the memory of {n} idle sockets"))?;
            eprintln!(
                "  memory rep {}: {n} sockets: VmRSS {:.1} -> {:.1} MiB, {:.1} KiB/socket",
                rep + 1,
                m.before.rss as f64 / 1024.0,
                m.after.rss as f64 / 1024.0,
                m.per_socket_kib()
            );
            memory.push((n, m));
        }
    }
    print_memory(&memory, &sizes, mem_reps);
    Ok(())
}

/// Whether a server log line says a mod was left out or something failed: the figures would be of
/// another configuration.
fn left_out(line: &str) -> bool {
    line.contains("ERROR")
        || line.contains("was not loaded")
        || (line.contains("left out") && !line.contains(" 0 left out"))
}

/// Raises the soft open-file limit to at least `want` (at most the hard limit): a client socket is a
/// descriptor, and the usual soft limit is 1024.
fn raise_nofile(want: usize) -> anyhow::Result<()> {
    use rlimit::Resource;
    let (soft, hard) = Resource::NOFILE.get()?;
    if soft < hard {
        Resource::NOFILE.set(hard, hard).context("raising the open-file limit")?;
    }
    if (hard as usize) < want {
        eprintln!("warning: the open-file limit is {hard}, and this run wants about {want}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Clients

/// One keep-alive HTTP/1.1 connection, reconnected when the server says it closes (modhost does
/// after 512 requests) before the next request is timed.
struct Conn {
    port: u16,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Conn {
    fn new(port: u16) -> Conn {
        Conn { port, stream: None, buf: Vec::with_capacity(4096) }
    }

    /// Connects if there is no open connection: call it before the clock starts.
    async fn ready(&mut self) -> anyhow::Result<()> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(("127.0.0.1", self.port)).await?;
            stream.set_nodelay(true)?;
            self.stream = Some(stream);
            self.buf.clear();
        }
        Ok(())
    }

    /// Sends `request` and answers the body of a 200.
    async fn call(&mut self, request: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.ready().await?;
        let stream = self.stream.as_mut().context("no connection")?;
        stream.write_all(request).await?;
        let (close, body) = read_answer(stream, &mut self.buf).await?;
        let out = self.buf[body.clone()].to_vec();
        self.buf.drain(..body.end);
        if close {
            self.stream = None;
        }
        Ok(out)
    }
}

/// A request's bytes, asking for an uncompressed answer, with the session's cookie when given.
fn request(method: &str, path: &str, body: &[u8], session: Option<&str>) -> Vec<u8> {
    let cookie = session.map(|s| format!("Cookie: PHPSESSID={s}\r\n")).unwrap_or_default();
    let length = if body.is_empty() { String::new() } else { format!("Content-Length: {}\r\n", body.len()) };
    let mut bytes =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n{cookie}{length}\r\n")
            .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Sockets of 4 KiB read buffers (the server's size): tungstenite's default of 128 KiB each would
/// be a quarter of a GiB in this process for 2000 sockets.
async fn connect(port: u16, session: &str) -> anyhow::Result<Ws> {
    let url = format!("ws://127.0.0.1:{port}/notifierServer/getwebsocket/{session}");
    let config = WebSocketConfig::default().read_buffer_size(4 << 10).write_buffer_size(0);
    let (ws, response) =
        tokio::time::timeout(Duration::from_secs(10), connect_async_with_config(url, Some(config), true))
            .await
            .context("the upgrade took over 10 s")??;
    if response.status() != 101 {
        bail!("the upgrade answered {}", response.status());
    }
    Ok(ws)
}

/// Idle sockets, each read by a task of its own until told to close.
struct Idle {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    /// Pings the sockets received (each answered, by tungstenite, on the next read).
    pings: Arc<AtomicU64>,
}

impl Idle {
    async fn open(port: u16, n: usize) -> anyhow::Result<Idle> {
        let (stop, watching) = watch::channel(false);
        let pings = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::with_capacity(n);
        for i in 0..n {
            let mut ws = connect(port, &format!("{:024x}", IDLE_BASE + i as u64)).await?;
            let mut stop = watching.clone();
            let pings = pings.clone();
            tasks.push(tokio::spawn(async move {
                loop {
                    tokio::select! {
                        message = ws.next() => match message {
                            Some(Ok(Message::Ping(_))) => {
                                pings.fetch_add(1, Ordering::Relaxed);
                            }
                            Some(Ok(_)) => continue,
                            _ => return,
                        },
                        _ = stop.changed() => break,
                    }
                }
                // A polite close: the close frame, then the server's answer.
                let _ = ws.close(None).await;
                let _ =
                    tokio::time::timeout(Duration::from_secs(2), async { while ws.next().await.is_some() {} }).await;
            }));
        }
        Ok(Idle { stop, tasks, pings })
    }

    async fn close(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }

    fn abort(self) {
        for task in self.tasks {
            task.abort();
        }
    }
}

/// The server's notifier status.
async fn notifier(conn: &mut Conn) -> anyhow::Result<Value> {
    let body = conn.call(&request("GET", "/modhost/status", b"", None)).await?;
    let status: Value = serde_json::from_slice(&body).context("the status is not JSON")?;
    Ok(status["notifier"].clone())
}

/// Waits until the server counts `n` open sockets.
async fn wait_sockets(conn: &mut Conn, n: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = notifier(conn).await?;
        if status["sockets"].as_u64() == Some(n as u64) {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server counts {} sockets, not {n}: {status}", status["sockets"]);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Figures 1 and 3

/// One condition's window of one repetition: latencies in ms.
struct Window {
    sockets: usize,
    echo: Vec<f64>,
    push_http: Vec<f64>,
    push_recv: Vec<f64>,
    load: Vec<f64>,
    load_rps: f64,
    /// Pings per second the idle sockets received during the load.
    load_pings: f64,
}

async fn latency_and_load(
    port: u16,
    args: &Args,
    reps: usize,
    pushes: usize,
    secs: Duration,
) -> anyhow::Result<Vec<Window>> {
    let mut conn = Conn::new(port);
    let mut ws = connect(port, PUSHED).await?;
    let epoch = Instant::now();
    // A check before anything is timed: the push is delivered to this socket, with what was sent.
    let (_, _, recv) = push_once(&mut conn, &mut ws, epoch, u64::MAX).await?;
    if recv < 0.0 {
        bail!("the push arrived before it was sent");
    }
    let mut windows = Vec::new();
    for rep in 0..reps {
        let order = if rep % 2 == 0 { [0, args.sockets] } else { [args.sockets, 0] };
        for sockets in order {
            let idle = Idle::open(port, sockets).await.context("opening the idle sockets")?;
            wait_sockets(&mut conn, sockets + 1).await?;
            let mut window = Window {
                sockets,
                echo: Vec::with_capacity(pushes),
                push_http: Vec::with_capacity(pushes),
                push_recv: Vec::with_capacity(pushes),
                load: Vec::new(),
                load_rps: 0.0,
                load_pings: 0.0,
            };
            for i in 0..pushes {
                let echo_first = i % 2 == 0;
                if echo_first {
                    window.echo.push(echo_once(&mut conn, epoch, i as u64).await?);
                }
                let (_, http, recv) = push_once(&mut conn, &mut ws, epoch, i as u64).await?;
                window.push_http.push(http);
                window.push_recv.push(recv);
                if !echo_first {
                    window.echo.push(echo_once(&mut conn, epoch, i as u64).await?);
                }
            }
            let (pings, began) = (idle.pings.load(Ordering::Relaxed), Instant::now());
            let (load, rps) = load(port, args.conns, secs).await?;
            window.load_pings = (idle.pings.load(Ordering::Relaxed) - pings) as f64 / began.elapsed().as_secs_f64();
            window.load = load;
            window.load_rps = rps;
            eprintln!(
                "  rep {}: {:>5} idle sockets: push p99 {:.3} ms, echo p99 {:.3} ms; \
                 load p50 {:.3} ms p99 {:.3} ms {:.0} req/s {:.0} pings/s",
                rep + 1,
                sockets,
                summarize(&window.push_recv).p99,
                summarize(&window.echo).p99,
                summarize(&window.load).p50,
                summarize(&window.load).p99,
                rps,
                window.load_pings
            );
            windows.push(window);
            idle.close().await;
            wait_sockets(&mut conn, 1).await?;
        }
    }
    Ok(windows)
}

fn body(epoch: Instant, i: u64) -> (Instant, Vec<u8>) {
    let sent = Instant::now();
    let t_ns = (sent - epoch).as_nanos() as u64;
    (sent, json!({"type": "bench", "i": i, "t_ns": t_ns}).to_string().into_bytes())
}

/// `POST /peer/p/echo`: its round trip in ms.
async fn echo_once(conn: &mut Conn, epoch: Instant, i: u64) -> anyhow::Result<f64> {
    conn.ready().await?;
    let (sent, body) = body(epoch, i);
    let answer = conn.call(&request("POST", "/peer/p/echo", &body, Some(PUSHED))).await?;
    let ms = sent.elapsed().as_secs_f64() * 1e3;
    if !answer.windows(11).any(|w| w == br#""owner":"p""#) {
        bail!("the echo answered {}", String::from_utf8_lossy(&answer));
    }
    Ok(ms)
}

/// `POST /peer/p/push/<PUSHED>` and the socket's receive of it: the body's `i`, the HTTP round trip
/// and the receive − send (from the received body's `t_ns`), in ms.
async fn push_once(conn: &mut Conn, ws: &mut Ws, epoch: Instant, i: u64) -> anyhow::Result<(u64, f64, f64)> {
    conn.ready().await?;
    let (sent, body) = body(epoch, i);
    let call = request("POST", &format!("/peer/p/push/{PUSHED}"), &body, Some(PUSHED));
    let http = async {
        let answer = conn.call(&call).await?;
        let ms = sent.elapsed().as_secs_f64() * 1e3;
        let answer: Value = serde_json::from_slice(&answer).context("the push's answer is not JSON")?;
        if answer["delivery"] != "delivered" {
            bail!("the push was not delivered: {answer}");
        }
        anyhow::Ok(ms)
    };
    let received = async {
        let text = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match ws.next().await {
                    Some(Ok(Message::Text(text))) => return Ok(text),
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    other => bail!("the pushed socket gave {other:?}"),
                }
            }
        })
        .await
        .context("no push within 10 s")??;
        let at = (epoch.elapsed().as_nanos() as u64) as f64;
        let got: Value = serde_json::from_str(&text).context("the pushed message is not JSON")?;
        if got["i"].as_u64() != Some(i) {
            bail!("expected push {i}, received {got}");
        }
        let t_ns = got["t_ns"].as_u64().context("the pushed message lacks t_ns")? as f64;
        anyhow::Ok((at - t_ns) / 1e6)
    };
    let (http, recv) = tokio::join!(http, received);
    Ok((i, http?, recv?))
}

/// `conns` keep-alive connections sending `POST /peer/p/echo` back to back for a second of warm-up
/// and then `secs`: every measured request's latency in ms, and the req/s.
async fn load(port: u16, conns: usize, secs: Duration) -> anyhow::Result<(Vec<f64>, f64)> {
    let start = Instant::now() + Duration::from_secs(1);
    let end = start + secs;
    let call: std::sync::Arc<[u8]> = request("POST", "/peer/p/echo", br#"{"x":1}"#, None).into();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = Conn::new(port);
            let mut kept = Vec::new();
            loop {
                conn.ready().await?;
                let at = Instant::now();
                if at >= end {
                    return anyhow::Ok(kept);
                }
                conn.call(&call).await?;
                if at >= start {
                    kept.push(at.elapsed().as_secs_f64() * 1e3);
                }
            }
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await??);
    }
    let rps = all.len() as f64 / secs.as_secs_f64();
    Ok((all, rps))
}

fn print_latency(windows: &[Window], args: &Args, title: &str) {
    let reps = windows.iter().filter(|w| w.sockets == 0).count();
    println!(
        "\n== 1. push latency, {title}\n   sequential pushes over {reps} repetitions (conditions alternated), each beside \
         an echo of the same body; ms, nearest-rank percentiles over all samples"
    );
    println!("{:<62} {:>6} {:>8} {:>8} {:>8} {:>8}  p99 per rep (min-max)", "row", "n", "p50", "p90", "p99", "max");
    for sockets in [0, args.sockets] {
        let of = |f: &dyn Fn(&Window) -> &Vec<f64>| -> (Vec<f64>, Vec<f64>) {
            let mine: Vec<&Window> = windows.iter().filter(|w| w.sockets == sockets).collect();
            let all: Vec<f64> = mine.iter().flat_map(|w| f(w).iter().copied()).collect();
            let per_rep: Vec<f64> = mine.iter().map(|w| summarize(f(w)).p99).collect();
            (all, per_rep)
        };
        let rows = [
            ("HTTP round trip of POST /peer/p/echo", of(&|w| &w.echo)),
            ("HTTP round trip of POST /peer/p/push/<s>", of(&|w| &w.push_http)),
            ("push: send -> the socket's receive", of(&|w| &w.push_recv)),
        ];
        let mut p = Vec::new();
        for (label, (all, per_rep)) in &rows {
            let s = summarize(all);
            let p90 = modhost_benches::stats::percentile(all, 0.90);
            println!(
                "{:<62} {:>6} {:>8.3} {:>8.3} {:>8.3} {:>8.3}  {:.3}-{:.3}",
                format!("{label}, {sockets} idle sockets"),
                s.n,
                s.p50,
                p90,
                s.p99,
                s.max,
                min(per_rep),
                max(per_rep)
            );
            p.push((s.p50, s.p99));
        }
        // Each row's difference from the echo's (row 0): the push's own share.
        for (label, row) in [("receive - echo round trip", 2), ("push round trip - echo round trip", 1)] {
            println!(
                "{:<62} {:>6} {:>+8.3} {:>8} {:>+8.3}",
                format!("  {label}, {sockets} idle"),
                "",
                p[row].0 - p[0].0,
                "",
                p[row].1 - p[0].1
            );
        }
    }
    println!("target: the push's receive p99 <= 5 ms on loopback");
}

fn print_load(windows: &[Window], args: &Args, title: &str, secs: Duration) {
    let reps = windows.iter().filter(|w| w.sockets == 0).count();
    println!(
        "\n== 3. requests beside idle sockets, {title}\n   POST /peer/p/echo on {} keep-alive connections, {:.1} s per window \
         after 1 s of warm-up, {reps} repetitions alternated; ms (per-window percentiles: median over repetitions (min-max))",
        args.conns,
        secs.as_secs_f64()
    );
    println!("{:<30} {:>8} {:<24} {:<24} {:>8} {:>8}", "condition", "n", "p50", "p99", "req/s", "pings/s");
    let pick = |sockets: usize| -> Vec<&Window> { windows.iter().filter(|w| w.sockets == sockets).collect() };
    for sockets in [0, args.sockets] {
        let mine = pick(sockets);
        let p50: Vec<f64> = mine.iter().map(|w| summarize(&w.load).p50).collect();
        let p99: Vec<f64> = mine.iter().map(|w| summarize(&w.load).p99).collect();
        let rps: Vec<f64> = mine.iter().map(|w| w.load_rps).collect();
        let pings: Vec<f64> = mine.iter().map(|w| w.load_pings).collect();
        let n: usize = mine.iter().map(|w| w.load.len()).sum();
        println!(
            "{:<30} {:>8} {:<24} {:<24} {:>8.0} {:>8.0}",
            format!("{sockets} idle sockets"),
            n,
            format!("{:.3} ({:.3}-{:.3})", median(&p50), min(&p50), max(&p50)),
            format!("{:.3} ({:.3}-{:.3})", median(&p99), min(&p99), max(&p99)),
            median(&rps),
            median(&pings)
        );
    }
    // Ratios within a repetition: its two windows ran back to back.
    let (none, open) = (pick(0), pick(args.sockets));
    let ratio = |f: &dyn Fn(&Window) -> f64| -> Vec<f64> { none.iter().zip(&open).map(|(a, b)| f(b) / f(a)).collect() };
    let r50 = ratio(&|w| summarize(&w.load).p50);
    let r99 = ratio(&|w| summarize(&w.load).p99);
    let rrps = ratio(&|w| w.load_rps);
    println!(
        "{:<30} {:>8} {:<24} {:<24} {:>8}",
        format!("{} / 0, per repetition", args.sockets),
        "",
        format!("{:.3}x ({:.3}-{:.3})", median(&r50), min(&r50), max(&r50)),
        format!("{:.3}x ({:.3}-{:.3})", median(&r99), min(&r99), max(&r99)),
        format!("{:.3}x", median(&rrps))
    );
    // Whether the two conditions' windows differ at all: the rank test of their per-window figures.
    let test = |f: &dyn Fn(&Window) -> f64| {
        let (a, b): (Vec<f64>, Vec<f64>) = (none.iter().map(|w| f(w)).collect(), open.iter().map(|w| f(w)).collect());
        let t = mann_whitney(&a, &b);
        format!("p = {:.3}{}", t.p, if t.exact { "" } else { " (approx.)" })
    };
    println!(
        "{:<30} {:>8} {:<24} {:<24} {:>8}",
        "Mann-Whitney, per window",
        "",
        test(&|w| summarize(&w.load).p50),
        test(&|w| summarize(&w.load).p99),
        test(&|w| w.load_rps)
    );
    println!("target: p99 with the sockets open at most 1.20x the p99 without");
}

// ---------------------------------------------------------------------------------------------
// Figure 2

#[derive(Clone, Copy, Debug)]
struct Rss {
    /// VmRSS, KiB.
    rss: u64,
    /// RssAnon, KiB.
    anon: u64,
}

#[derive(Clone, Copy, Debug)]
struct Memory {
    n: usize,
    before: Rss,
    after: Rss,
    /// After one broadcast to every socket (each wrote a message, each client read it).
    broadcast: Rss,
}

impl Memory {
    fn per_socket_kib(&self) -> f64 {
        (self.after.rss as f64 - self.before.rss as f64) / self.n as f64
    }

    fn anon_per_socket_kib(&self) -> f64 {
        (self.after.anon as f64 - self.before.anon as f64) / self.n as f64
    }

    fn broadcast_per_socket_kib(&self) -> f64 {
        (self.broadcast.rss as f64 - self.before.rss as f64) / self.n as f64
    }
}

fn rss(pid: u32) -> anyhow::Result<Rss> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> anyhow::Result<u64> {
        let line = status.lines().find(|l| l.starts_with(name)).with_context(|| format!("no {name} in status"))?;
        line[name.len()..].trim().trim_end_matches("kB").trim().parse().with_context(|| format!("reading {line}"))
    };
    Ok(Rss { rss: field("VmRSS:")?, anon: field("RssAnon:")? })
}

async fn measure_memory(pid: u32, port: u16, n: usize) -> anyhow::Result<Memory> {
    let mut conn = Conn::new(port);
    // Warm-up: the request path, and the socket path (the hub's tables, the handshake's code).
    for _ in 0..200 {
        conn.call(&request("POST", "/peer/p/echo", br#"{"x":1}"#, None)).await?;
    }
    let warm = Idle::open(port, 16).await?;
    wait_sockets(&mut conn, 16).await?;
    warm.close().await;
    wait_sockets(&mut conn, 0).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss(pid)?;
    let idle = Idle::open(port, n).await?;
    wait_sockets(&mut conn, n).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss(pid)?;
    let body = json!({"type": "bench", "broadcast": true}).to_string();
    let answer = conn.call(&request("POST", "/peer/p/broadcast", body.as_bytes(), None)).await?;
    let answer: Value = serde_json::from_slice(&answer).context("the broadcast's answer is not JSON")?;
    if answer["reached"].as_u64() != Some(n as u64) {
        bail!("the broadcast reached {} of {n}: {answer}", answer["reached"]);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let broadcast = rss(pid)?;
    idle.abort();
    Ok(Memory { n, before, after, broadcast })
}

fn print_memory(memory: &[(usize, Memory)], sizes: &[usize], reps: usize) {
    println!(
        "\n== 2. server memory per idle socket: a fresh `modhost serve` child per measurement, VmRSS (RssAnon) from \
         /proc/<pid>/status before and after opening N sockets; median of {reps} (min-max)"
    );
    println!(
        "{:<8} {:<22} {:<22} {:<24} {:<24} {:<24}",
        "N", "VmRSS before, MiB", "VmRSS after, MiB", "VmRSS KiB/socket", "RssAnon KiB/socket", "after a broadcast"
    );
    for &n in sizes {
        let mine: Vec<&Memory> = memory.iter().filter(|(k, _)| *k == n).map(|(_, m)| m).collect();
        let before: Vec<f64> = mine.iter().map(|m| m.before.rss as f64 / 1024.0).collect();
        let after: Vec<f64> = mine.iter().map(|m| m.after.rss as f64 / 1024.0).collect();
        let per: Vec<f64> = mine.iter().map(|m| m.per_socket_kib()).collect();
        let anon: Vec<f64> = mine.iter().map(|m| m.anon_per_socket_kib()).collect();
        let cast: Vec<f64> = mine.iter().map(|m| m.broadcast_per_socket_kib()).collect();
        println!(
            "{:<8} {:<22} {:<22} {:<24} {:<24} {:<24}",
            n,
            format!("{:.1} ({:.1}-{:.1})", median(&before), min(&before), max(&before)),
            format!("{:.1} ({:.1}-{:.1})", median(&after), min(&after), max(&after)),
            format!("{:.2} ({:.2}-{:.2})", median(&per), min(&per), max(&per)),
            format!("{:.2} ({:.2}-{:.2})", median(&anon), min(&anon), max(&anon)),
            format!("{:.2} ({:.2}-{:.2})", median(&cast), min(&cast), max(&cast)),
        );
    }
    println!("target: at most 16 KiB per socket");
}
