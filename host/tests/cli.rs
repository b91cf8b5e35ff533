//! The `modhost` binary itself: one command on an empty root serves the built-in mods.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Kills the server when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `modhost serve` on `root` and port 0; returns the child and the port from its log line.
fn serve(root: &std::path::Path) -> (Running, u16) {
    serve_with(root, &[])
}

fn serve_with(root: &std::path::Path, extra: &[&str]) -> (Running, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_modhost"))
        .args(["serve", "--port", "0", "--root"])
        .arg(root)
        .args(extra)
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawning modhost");
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(at) = line.find("listening on 127.0.0.1:") {
                let port = line[at + "listening on 127.0.0.1:".len()..].trim().parse::<u16>().ok();
                let _ = tx.send(port);
            }
        }
    });
    let port = rx.recv_timeout(Duration::from_secs(120)).ok().flatten().expect("modhost logged `listening on` in time");
    (Running(child), port)
}

fn get(port: u16, path: &str) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a complete head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    (status, raw[split + 4..].to_vec())
}

#[test]
fn serve_on_a_missing_root_creates_it_and_answers_in_zlib() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a/new/root");
    let (_server, port) = serve(&root);
    assert!(root.join("db.json").exists());

    let (status, body) = get(port, "/client/game/keepalive");
    assert_eq!(status, 200);
    let mut text = String::new();
    flate2::read::ZlibDecoder::new(&body[..]).read_to_string(&mut text).expect("a zlib body");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["data"]["msg"], "OK");
}

#[test]
fn gen_db_writes_a_document_the_server_serves() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_modhost"))
        .args(["gen-db", "--items", "50", "--out"])
        .arg(dir.path().join("db.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_server, port) = serve(dir.path());
    let (status, body) = get(port, "/client/items");
    assert_eq!(status, 200);
    let mut text = String::new();
    flate2::read::ZlibDecoder::new(&body[..]).read_to_string(&mut text).unwrap();
    let items: serde_json::Value = serde_json::from_str(&text).unwrap();
    // 50 generated, and the fixed templates the game's tables name (money, the rifle, the stash, the
    // raid's containers, the trade, mail and inventory tests' items): every one the file holds, served.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("db.json")).unwrap()).unwrap();
    let served = items["data"].as_object().unwrap();
    assert!(served.len() > 56, "{} templates", served.len());
    assert_eq!(served.len(), written["templates"]["items"].as_object().unwrap().len());
}

#[test]
fn a_bad_flag_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_modhost")).args(["serve", "--call-timeout-ms", "0"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--call-timeout-ms"));
}

#[test]
fn a_second_modhost_on_the_same_root_refuses_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (first, _port) = serve(dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_modhost"))
        .args(["serve", "--port", "0", "--root"])
        .arg(dir.path())
        .output()
        .expect("running a second modhost");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("in use by process {}", first.0.id())), "{stderr}");
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_1_gib_zlib_bomb_is_refused_and_costs_under_16_mib() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = serve(dir.path());
    // Warm up, so lazily made buffers are not counted against the bomb.
    assert_eq!(get(port, "/client/game/keepalive").0, 200);
    let bomb = {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..1024 {
            encoder.write_all(&zeros).unwrap();
        }
        encoder.finish().unwrap()
    };
    assert!(bomb.len() < 2 << 20, "{} bytes", bomb.len());
    let before = rss_kib(server.0.id());
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        stream,
        "POST /client/game/keepalive HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        bomb.len()
    )
    .unwrap();
    stream.write_all(&bomb).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let after = rss_kib(server.0.id());
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 413"), "{}", String::from_utf8_lossy(&answer));
    let grown = after.saturating_sub(before);
    eprintln!("zlib bomb: resident memory grew {grown} KiB");
    assert!(grown < 16 * 1024, "resident memory grew {grown} KiB");
}

#[test]
fn mods_prints_grants_limits_and_routes_even_while_the_server_runs() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("modhost.toml"), "[mods.emulator]\ncall_timeout_ms = 1234\n").unwrap();
    let (_server, _port) = serve(root.path());
    let out = Command::new(env!("CARGO_BIN_EXE_modhost"))
        .args(["mods", "--json", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let emulator = &all["loaded"][0];
    assert_eq!(emulator["id"], "emulator");
    assert_eq!(emulator["limits"]["call_timeout_ms"], 1234, "the player's file is applied");
    // The game's grants (`plugins/emulator/mod.toml`): pushing to any session (the flea's sales timer),
    // and the topics it emits.
    let grants: Vec<String> =
        emulator["grants"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_owned()).collect();
    assert_eq!(grants[0], "push: any session");
    for topic in ["profile.created", "items.moved", "trade.sold", "mail.sent", "insurance.returned", "flea.sold"] {
        assert!(grants.contains(&format!("emit: {topic}")), "{grants:?}");
    }
    assert!(emulator["routes"].as_array().unwrap().iter().any(|r| r["path"] == "/client/items"));
    let text = Command::new(env!("CARGO_BIN_EXE_modhost")).args(["mods", "--root"]).arg(root.path()).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(text.contains("emit: profile.created") && text.contains("call 1234 ms"), "{text}");
}

// ---- `modhost probe` ----

/// `modhost probe <args>`: its exit code, stdout and stderr.
fn probe(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_modhost"))
        .arg("probe")
        .args(args)
        .args(["--timeout", "30"])
        .output()
        .expect("running modhost probe");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn probe_prints_a_game_route_inflated_and_exits_1_on_a_non_2xx() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = serve(dir.path());
    let (code, stdout, stderr) = probe(&[&format!("http://127.0.0.1:{port}/client/game/keepalive"), "--body", "{}"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(json["data"]["msg"], "OK", "{stdout}");
    assert!(stdout.contains("\n  \"data\""), "pretty-printed: {stdout}");
    assert!(stderr.starts_with("200 OK") && stderr.contains("zlib"), "{stderr}");

    let (code, stdout, stderr) = probe(&[&format!("http://localhost:{port}/no/such/route")]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.starts_with("404"), "{stderr}");
}

#[test]
fn probe_sends_what_the_game_client_sends() {
    // A fake server that keeps the request it gets and answers zlib JSON, as modhost does.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        // The head, then the body its Content-Length announces.
        loop {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "the probe closed before sending its request");
            raw.extend_from_slice(&buf[..n]);
            if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .map_or(0, |v| v.trim().parse().unwrap());
                if raw.len() >= split + 4 + length {
                    break;
                }
            }
            assert!(raw.len() < 1 << 20, "the request never ended");
        }
        let answer = modhost::wire::deflate(br#"{"err":0,"data":[1,2]}"#);
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", answer.len()).unwrap();
        stream.write_all(&answer).unwrap();
        raw
    });
    let session = "0123456789ABCDEF01234567";
    let (code, stdout, stderr) =
        probe(&[&format!("http://127.0.0.1:{port}/client/x?y=1"), "--body", r#"{"a": 1}"#, "--session", session]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["data"][1], 2, "{stdout}");
    let raw = seen.join().unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    assert!(head.starts_with("post /client/x?y=1 http/1.1\r\n"), "{head}");
    assert!(head.contains(&format!("\r\nhost: 127.0.0.1:{port}")), "{head}");
    assert!(head.contains("\r\ncookie: phpsessid=0123456789abcdef01234567"), "{head}");
    assert!(head.contains("\r\naccept-encoding: deflate"), "{head}");
    let mut body = String::new();
    flate2::read::ZlibDecoder::new(&raw[split + 4..]).read_to_string(&mut body).expect("a zlib body");
    assert_eq!(body, r#"{"a": 1}"#);
}

#[test]
fn probe_refuses_bad_arguments_and_exits_2_without_an_answer() {
    for (args, says) in [
        (vec!["http://127.0.0.1:1/x", "--session", "abc"], "24 hex digits"),
        (vec!["http://127.0.0.1:1/x", "--session", "0123456789abcdef0123456z"], "24 hex digits"),
        (vec!["https://127.0.0.1:1/x"], "only http://"),
        (vec!["127.0.0.1:1/x"], "http://"),
        (
            vec!["http://127.0.0.1:1/x", "--body", "{\"a\":"],
            "--body is not JSON: EOF while parsing a value at line 1 column 5",
        ),
        (vec!["http://127.0.0.1:1/x", "--method", "GE T"], "not an HTTP method"),
    ] {
        let (code, _, stderr) = probe(&args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: ") && stderr.contains(says), "{args:?}: {stderr}");
    }
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, stderr) = probe(&[&format!("http://127.0.0.1:{port}/client/game/keepalive")]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no answer") && stderr.contains("refused"), "{stderr}");
}

// ---- `modhost dev` ----

/// Builds of `modhost new` projects share the workspace's `target/new-mod-test` (as
/// `tests/tests/new_mod.rs` does), so only the first run compiles serde and wit-bindgen.
fn new_mod_target_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/new-mod-test")
}

/// The first build may compile the dependencies (about 40 s on 2 cores, more on a busy machine).
const FIRST_LIVE: Duration = Duration::from_secs(600);
/// Each later change: a build of the mod alone (about 1 s) and a reload, with room for a busy machine.
const NEXT_LIVE: Duration = Duration::from_secs(180);

/// `modhost dev` as a child, its stdout lines on a channel.
struct DevChild {
    _child: Running,
    lines: mpsc::Receiver<String>,
    /// Every line seen so far, for failure messages.
    seen: Vec<String>,
    port: u16,
}

impl DevChild {
    fn spawn(project: &std::path::Path, log: &std::path::Path) -> DevChild {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_modhost"));
        cmd.arg("dev").arg(project).args(["--port", "0"]);
        // Nothing of the outer `cargo test` leaks into the project's build.
        for var in [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_BUILD_TARGET",
            "CARGO_MANIFEST_DIR",
        ] {
            cmd.env_remove(var);
        }
        let child = cmd
            .env("CARGO_TARGET_DIR", new_mod_target_dir())
            .env("CARGO_NET_OFFLINE", "true")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("spawning modhost dev");
        let mut child = Running(child);
        let stdout = child.0.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut dev = DevChild { _child: child, lines, seen: Vec::new(), port: 0 };
        let first = dev.wait_for("served on http://127.0.0.1:", Duration::from_secs(120));
        let at = first.find("127.0.0.1:").unwrap() + "127.0.0.1:".len();
        dev.port = first[at..].split('/').next().and_then(|p| p.parse().ok()).expect("a port");
        dev
    }

    /// The next line containing `what`, within `limit`; panics with what was printed otherwise.
    fn wait_for(&mut self, what: &str, limit: Duration) -> String {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(what) {
                        return line;
                    }
                }
                Err(_) => panic!("no `{what}` within {limit:?}; modhost dev printed:\n{}", self.seen.join("\n")),
            }
        }
    }

    /// The `item` of `/devmod/hello`'s answer.
    fn item(&self) -> String {
        let (status, body) = get(self.port, "/devmod/hello");
        let mut text = String::new();
        flate2::read::ZlibDecoder::new(&body[..]).read_to_string(&mut text).expect("a zlib body");
        assert_eq!(status, 200, "{text}");
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["data"]["item"].as_str().unwrap_or_else(|| panic!("no item: {text}")).to_owned()
    }
}

#[test]
fn dev_serves_each_save_and_keeps_the_old_version_on_a_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let new =
        Command::new(env!("CARGO_BIN_EXE_modhost")).current_dir(dir.path()).args(["new", "devmod"]).output().unwrap();
    assert!(new.status.success(), "{}", String::from_utf8_lossy(&new.stderr));
    let project = dir.path().join("devmod");
    let mut dev = DevChild::spawn(&project, &dir.path().join("dev.log"));
    dev.wait_for("live in", FIRST_LIVE);
    assert_eq!(dev.item(), "Roubles");
    assert!(project.join("target/modhost-dev/mods/devmod/devmod.wasm").is_file(), "installed in the default root");

    // An edit to the route's answer is served once the next build is live.
    let lib = project.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).unwrap();
    let answer = "Ok(envelope::ok(&Hello { item, visits }))";
    assert!(original.contains(answer), "the template changed: update this test");
    std::fs::write(
        &lib,
        original.replace(answer, "Ok(envelope::ok(&Hello { item: format!(\"{item}, edited\"), visits }))"),
    )
    .unwrap();
    let live = dev.wait_for("live in", NEXT_LIVE);
    assert!(live.contains("version 0.1.0"), "{live}");
    assert_eq!(dev.item(), "Roubles, edited");

    // A syntax error: the compiler's error is printed, and the edited version keeps serving.
    let mut broken = std::fs::read_to_string(&lib).unwrap();
    broken.push_str("\nfn broken( {\n");
    std::fs::write(&lib, broken).unwrap();
    dev.wait_for("build failed; the old version keeps serving", NEXT_LIVE);
    dev.wait_for("unclosed delimiter", Duration::from_secs(10));
    assert_eq!(dev.item(), "Roubles, edited");
}
