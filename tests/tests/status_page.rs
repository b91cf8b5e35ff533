//! The host's own pages under `/modhost/` (`host/src/status.rs`): the two JSON documents, the reload
//! endpoint's guard, and the page itself rendered by headless Chromium (Debian's `chromium`, installed by
//! `make setup-browser`), whose DOM and screenshot are checked.
//!
//! Every server has three mods: `hello` and `fx` load, `broken` is left out (it requires a mod that is
//! not installed). The tests first send known numbers of requests to a few routes, so the counts the
//! JSON and the page show can be checked exactly.
//!
//! The screenshot is kept in `target/status-page.png` for people to look at.
//!
//! The config editor's test (`chromium_config_edit_is_applied_and_persisted`) acts on the page as a
//! player would, through the DevTools protocol (a minimal client below): it edits a value, applies it,
//! then applies an invalid one, and checks what the page showed, `config.json` on disk and what the
//! mod reads.
//!
//! The browser policy (issue 29, `host/src/front/origin.rs`): a page served from another 127.0.0.1
//! port, in Chromium, tries what a hostile page would: open a player's notifier socket, drain their
//! queue with an `<img>`, frame `/modhost/`. Each must fail
//! (`chromium_a_page_of_another_origin_cannot_take_a_socket_drain_a_poll_or_frame_the_page`).

use modhost_tests::client::{Call, Reply, send};
use modhost_tests::{TestServer, guests, server::install_mod};
use serde_json::Value;
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a server may take to boot.
const BOOT_WAIT: Duration = Duration::from_secs(60);
/// How long one Chromium run may take before it is killed and the test fails.
const CHROMIUM_WAIT: Duration = Duration::from_secs(60);
/// The screenshot's size, passed as `--window-size`.
const SHOT: (u32, u32) = (1280, 900);

/// Colours of `status.html`: the header, the page's backgrounds and lines, the two state colours.
const HEADER: [u8; 3] = [0x1d, 0x21, 0x25];
const BACKGROUNDS: [[u8; 3]; 3] = [[0xf6, 0xf7, 0xf9], [0xff, 0xff, 0xff], [0xd9, 0xde, 0xe3]];
const BAD: [u8; 3] = [0xb3, 0x26, 0x1e];
const OK: [u8; 3] = [0x1f, 0x7a, 0x3a];

/// Requests the tests send before looking: (method, path, how many, the status each gets).
const TRAFFIC: [(&str, &str, u64, u16); 3] =
    [("GET", "/hello/visits", 3, 200), ("POST", "/fx/echo", 2, 200), ("GET", "/fx/error", 1, 500)];

/// A server with `hello` (with a name and authors), `fx`, and `broken`, which requires `ghost`.
async fn start() -> TestServer {
    let builder = TestServer::builder()
        .with_mod("hello", guests::HELLO, "name = \"Hello, modhost\"\nauthors = [\"Ada <ada@example.org>\"]")
        .with_mod("fx", guests::FIXTURE, "");
    install_mod(builder.root(), "broken", Path::new(guests::HELLO), "[requires]\nghost = \"^1\"")
        .expect("installing the broken mod");
    tokio::time::timeout(BOOT_WAIT, builder.start()).await.expect("the server booted in time").expect("booting")
}

/// Sends [`TRAFFIC`], checking each answer's status.
async fn send_traffic(addr: SocketAddr) {
    for (method, path, n, status) in TRAFFIC {
        for _ in 0..n {
            let call = if method == "GET" { Call::get(path) } else { Call::post_raw(path, b"{}") };
            let reply = send(addr, &call.identity()).await.expect("a request");
            assert_eq!(reply.status, status, "{method} {path}: {}", reply.text());
        }
    }
}

async fn get(addr: SocketAddr, path: &str) -> Reply {
    send(addr, &Call::get(path).identity()).await.unwrap_or_else(|e| panic!("GET {path}: {e:#}"))
}

async fn get_json(addr: SocketAddr, path: &str) -> Value {
    let reply = get(addr, path).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
    assert_eq!(reply.header("content-type"), Some("application/json"), "GET {path}");
    assert_eq!(reply.header("cache-control"), Some("no-store"), "GET {path}");
    reply.json()
}

fn field<'a>(v: &'a Value, name: &str) -> &'a Value {
    v.get(name).unwrap_or_else(|| panic!("no `{name}` in {v:#}"))
}

fn number(v: &Value, name: &str) -> f64 {
    field(v, name).as_f64().unwrap_or_else(|| panic!("`{name}` is not a number in {v:#}"))
}

fn string<'a>(v: &'a Value, name: &str) -> &'a str {
    field(v, name).as_str().unwrap_or_else(|| panic!("`{name}` is not a string in {v:#}"))
}

fn array<'a>(v: &'a Value, name: &str) -> &'a Vec<Value> {
    field(v, name).as_array().unwrap_or_else(|| panic!("`{name}` is not an array in {v:#}"))
}

/// The loaded mod `id` of `/modhost/mods`.
fn loaded<'a>(mods: &'a Value, id: &str) -> &'a Value {
    array(mods, "loaded").iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("mod {id} not loaded: {mods:#}"))
}

/// The route `path` of the loaded mod `id`.
fn route<'a>(mods: &'a Value, id: &str, path: &str) -> &'a Value {
    array(loaded(mods, id), "routes")
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("mod {id} has no route {path}: {mods:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_pages_report_mods_routes_and_reloads() {
    let server = start().await;
    let addr = server.addr;
    send_traffic(addr).await;

    // /modhost/status
    let status = get_json(addr, "/modhost/status").await;
    assert_eq!(string(&status, "server"), "modhost");
    assert!(!string(&status, "version").is_empty());
    assert!(!string(&status, "api").is_empty());
    assert!(number(&status, "uptime_s") >= 0.0);
    assert!(field(&status, "watching").is_boolean(), "{status:#}");
    assert!(field(&status, "last_reload").is_null(), "no reload yet: {status:#}");
    let generation = field(&status, "generation");
    assert_eq!(number(generation, "number"), 1.0, "{status:#}");
    assert!(number(generation, "built_at_unix_ms") > 1.6e12, "{status:#}");
    assert!(number(generation, "build_ms") >= 0.0);
    assert_eq!(number(generation, "mods_loaded"), 2.0, "{status:#}");
    assert_eq!(number(generation, "mods_failed"), 1.0, "{status:#}");
    let sent: u64 = TRAFFIC.iter().map(|t| t.2).sum();
    assert_eq!(number(&status, "requests"), sent as f64, "only mod routes count: {status:#}");

    // /modhost/mods
    let mods = get_json(addr, "/modhost/mods").await;
    assert_eq!(number(&mods, "generation"), 1.0, "{mods:#}");
    let ids: Vec<&str> = array(&mods, "loaded").iter().map(|m| string(m, "id")).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&"hello") && ids.contains(&"fx"), "{ids:?}");
    let total_routes: usize = array(&mods, "loaded").iter().map(|m| array(m, "routes").len()).sum();
    assert_eq!(number(generation, "routes"), total_routes as f64, "status and mods agree on the routes");
    for m in array(&mods, "loaded") {
        assert_eq!(string(m, "version"), "0.1.0", "{m:#}");
        for name in ["name", "authors", "requires", "grants", "limits", "routes", "quarantined"] {
            field(m, name);
        }
        assert!(array(m, "requires").is_empty(), "{m:#}");
        assert!(field(m, "grants").is_array(), "{m:#}");
        assert!(field(m, "quarantined").is_null(), "{m:#}");
        let limits = field(m, "limits");
        for name in ["memory_mib", "call_timeout_ms", "init_timeout_ms", "instances", "quarantine_after"] {
            number(limits, name);
        }
        for r in array(m, "routes") {
            assert!(["exact", "prefix"].contains(&string(r, "kind")), "{r:#}");
            let stats = field(r, "stats");
            if !stats.is_null() {
                for name in ["count", "errors", "mean_ms"] {
                    number(stats, name);
                }
                field(stats, "p50_le_ms");
                field(stats, "p99_le_ms");
            }
        }
    }
    let hello = loaded(&mods, "hello");
    assert_eq!(string(hello, "name"), "Hello, modhost");
    assert_eq!(array(hello, "authors"), &vec![Value::from("Ada <ada@example.org>")]);
    for (_, path, n, status) in TRAFFIC {
        let id = if path.starts_with("/hello/") { "hello" } else { "fx" };
        let stats = field(route(&mods, id, path), "stats");
        assert_eq!(number(stats, "count"), n as f64, "{path}: {stats:#}");
        assert_eq!(number(stats, "errors"), if status >= 400 { n as f64 } else { 0.0 }, "{path}: {stats:#}");
        let mean = number(stats, "mean_ms");
        assert!(mean > 0.0, "{path}: {stats:#}");
        let p50 = number(stats, "p50_le_ms");
        assert!(p50 > 0.0 && p50 <= number(stats, "p99_le_ms"), "{path}: {stats:#}");
    }
    assert!(field(route(&mods, "fx", "/fx/counter"), "stats").is_null(), "a route never requested has no stats");
    assert_eq!(string(route(&mods, "fx", "/fx/p/"), "kind"), "prefix");
    let failed = array(&mods, "failed");
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(string(&failed[0], "mod"), "broken");
    assert!(string(&failed[0], "reason").contains("ghost"), "the reason names the missing mod: {failed:#?}");

    // The page itself, as served (its rendering is the Chromium test's).
    let page = get(addr, "/modhost/").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    assert!(page.text().contains("/modhost/status") && page.text().contains("/modhost/mods"));
    assert_eq!(get(addr, "/modhost").await.status, 200);

    // Unknown pages and wrong methods.
    let unknown = get(addr, "/modhost/x").await;
    assert_eq!(unknown.status, 404, "{}", unknown.text());
    assert!(field(&unknown.json(), "error").is_string());
    for (method, path) in [("POST", "/modhost/status"), ("POST", "/modhost/mods"), ("GET", "/modhost/reload")] {
        let call = if method == "GET" { Call::get(path) } else { Call::post_raw(path, b"") };
        let reply = send(addr, &call.identity()).await.expect("a request");
        assert_eq!(reply.status, 405, "{method} {path}: {}", reply.text());
    }

    // A reload needs the header; with it, the generation moves on and the status tells.
    let refused = send(addr, &Call::post_raw("/modhost/reload", b"").identity()).await.expect("a request");
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(string(&refused.json(), "error").contains("x-modhost-reload"), "{}", refused.text());
    assert_eq!(number(field(&get_json(addr, "/modhost/status").await, "generation"), "number"), 1.0);
    let reload = Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1").identity();
    let reloaded = tokio::time::timeout(BOOT_WAIT, send(addr, &reload)).await.expect("a reload in time").unwrap();
    assert_eq!(reloaded.status, 200, "{}", reloaded.text());
    let outcome = reloaded.json();
    assert_eq!(field(&outcome, "ok"), &Value::Bool(true), "{outcome:#}");
    assert_eq!(number(&outcome, "generation"), 2.0, "{outcome:#}");
    let status = get_json(addr, "/modhost/status").await;
    assert_eq!(number(field(&status, "generation"), "number"), 2.0, "{status:#}");
    let last = field(&status, "last_reload");
    assert_eq!(field(last, "ok"), &Value::Bool(true), "{status:#}");
    assert_eq!(number(last, "generation"), 2.0, "{status:#}");
    let mods = get_json(addr, "/modhost/mods").await;
    assert_eq!(number(&mods, "generation"), 2.0, "{mods:#}");
    assert_eq!(number(field(route(&mods, "hello", "/hello/visits"), "stats"), "count"), 3.0, "counts outlive a reload");
    assert_eq!(string(&array(&mods, "failed")[0], "mod"), "broken", "still left out after the reload");

    server.stop().await.expect("stopping");
}

// ---- Chromium ----

/// Debian's Chromium, or `MODHOST_CHROMIUM`; a test that needs it fails when it is missing.
fn chromium() -> PathBuf {
    let path = std::env::var_os("MODHOST_CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    assert!(
        path.is_file(),
        "no Chromium at {}: run `make setup-browser` (installs Debian's `chromium`), or set MODHOST_CHROMIUM",
        path.display()
    );
    path
}

/// Runs headless Chromium with `args` and the page's URL, in a fresh profile, and returns its stdout.
/// Chromium and its helpers run in a process group of their own, killed whole when the run takes more
/// than [`CHROMIUM_WAIT`] (the test then fails).
fn run_chromium(args: &[String], url: &str) -> String {
    use std::os::unix::process::CommandExt as _;
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("starting chromium");
    let group = child.id();
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let started = Instant::now();
    let exit = loop {
        if let Some(exit) = child.try_wait().expect("waiting for chromium") {
            break Some(exit);
        }
        if started.elapsed() > CHROMIUM_WAIT {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // Helpers left behind (or the whole run, on a timeout) go with the group; the pipes then close.
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{group}")]).stderr(Stdio::null()).status();
    let _ = child.wait();
    let stdout = stdout.join().expect("the stdout reader");
    let stderr = stderr.join().expect("the stderr reader");
    match exit {
        None => panic!("chromium {args:?} {url} took over {CHROMIUM_WAIT:?} (killed); its stderr:\n{stderr}"),
        Some(exit) if !exit.success() => panic!("chromium {args:?} {url} failed ({exit}); its stderr:\n{stderr}"),
        Some(_) => stdout,
    }
}

/// [`run_chromium`] on a blocking thread (the server keeps serving on the runtime meanwhile); its panic
/// is the test's.
async fn chromium_off_runtime(args: Vec<String>, url: String) -> String {
    tokio::task::spawn_blocking(move || run_chromium(&args, &url))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// The text of `html` with tags removed and the entities Chromium writes decoded.
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The body rows of the table `id` in the dumped DOM: each row's cells as (class attribute, text).
fn table_rows(dom: &str, id: &str) -> Vec<Vec<(String, String)>> {
    let start = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no table #{id} in the DOM:\n{dom}"));
    let table = &dom[start..];
    let table = &table[..table.find("</table>").expect("the table ends")];
    let body = &table[table.find("<tbody>").expect("a tbody")..];
    let mut rows = Vec::new();
    for row in body.split("<tr>").skip(1) {
        let mut cells = Vec::new();
        for cell in row.split("<td").skip(1) {
            let (attrs, rest) = cell.split_once('>').expect("a cell's tag ends");
            let content = &rest[..rest.find("</td>").expect("a cell ends")];
            let class = attrs.split_once("class=\"").map_or("", |(_, c)| c.split('"').next().unwrap_or(""));
            cells.push((class.to_owned(), text_of(content)));
        }
        rows.push(cells);
    }
    rows
}

/// The row of `rows` whose first cell is `first`.
fn row<'a>(rows: &'a [Vec<(String, String)>], first: &str, dom: &str) -> &'a [(String, String)] {
    rows.iter().find(|r| r.first().is_some_and(|c| c.1 == first)).unwrap_or_else(|| panic!("no row `{first}`:\n{dom}"))
}

/// An RGB screenshot.
struct Shot {
    width: u32,
    height: u32,
    rgb: Vec<[u8; 3]>,
}

impl Shot {
    fn decode(path: &Path) -> Shot {
        let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG header");
        let mut buf = vec![0; reader.output_buffer_size().expect("a sane PNG size")];
        let info = reader.next_frame(&mut buf).expect("a PNG frame");
        let channels = match info.color_type {
            png::ColorType::Rgb => 3,
            png::ColorType::Rgba => 4,
            png::ColorType::Grayscale => 1,
            png::ColorType::GrayscaleAlpha => 2,
            other => panic!("unexpected PNG colour type {other:?}"),
        };
        let rgb = buf[..info.buffer_size()]
            .chunks_exact(channels)
            .map(|p| if channels >= 3 { [p[0], p[1], p[2]] } else { [p[0]; 3] })
            .collect();
        Shot { width: info.width, height: info.height, rgb }
    }

    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        self.rgb[(y * self.width + x) as usize]
    }
}

fn near(a: [u8; 3], b: [u8; 3], tolerance: u8) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= tolerance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_renders_the_page() {
    let chromium = chromium(); // fail before anything else when it is missing
    let server = start().await;
    let addr = server.addr;
    send_traffic(addr).await;
    let url = format!("http://{addr}/modhost/");
    let out = tempfile::tempdir().expect("a temp dir");

    // The DOM after the page's scripts ran (virtual time: 10 s of the page's clock, five refreshes).
    let started = Instant::now();
    let dom = {
        let (args, url) = (vec!["--dump-dom".to_owned(), "--virtual-time-budget=10000".to_owned()], url.clone());
        chromium_off_runtime(args, url).await
    };
    println!("chromium --dump-dom took {:?} ({})", started.elapsed(), chromium.display());
    let body_tag = &dom[dom.find("<body").unwrap_or_else(|| panic!("no body in the DOM:\n{dom}"))..];
    let body_tag = &body_tag[..body_tag.find('>').expect("the body tag ends")];
    assert!(body_tag.contains("data-ready=\"1\""), "the page's script did not finish a render: {body_tag}\n{dom}");
    assert!(body_tag.contains("data-generation=\"1\""), "{body_tag}");
    let summary = dom.split("id=\"summary\">").nth(1).and_then(|s| s.split('<').next()).expect("the summary");
    assert!(summary.starts_with("generation 1 · 2 mods · 1 left out"), "summary: {summary}");

    let mods = table_rows(&dom, "mods");
    assert_eq!(mods.len(), 2, "{mods:?}");
    let hello = row(&mods, "hello (Hello, modhost)", &dom);
    assert_eq!(hello[1].1, "0.1.0", "{hello:?}");
    assert_eq!(hello[2].1, "Ada <ada@example.org>", "{hello:?}");
    assert_eq!((hello[5].0.as_str(), hello[5].1.as_str()), ("ok", "serving"), "{hello:?}");
    row(&mods, "fx", &dom);

    let routes = table_rows(&dom, "routes");
    for (_, path, n, status) in TRAFFIC {
        let r = row(&routes, path, &dom);
        let mod_id = if path.starts_with("/hello/") { "hello" } else { "fx" };
        assert_eq!(r[1].1, mod_id, "{r:?}");
        assert_eq!(r[2], ("num".to_owned(), n.to_string()), "{path}: {r:?}");
        assert_eq!(r[3].1, if status >= 400 { n.to_string() } else { "0".to_owned() }, "{path}: {r:?}");
        for latency in &r[4..7] {
            assert!(latency.1.parse::<f64>().is_ok_and(|ms| ms > 0.0), "{path}: {r:?}");
        }
    }
    let untouched = row(&routes, "/fx/counter", &dom);
    assert_eq!(untouched[2].1, "0", "{untouched:?}");
    row(&routes, "/fx/p/*", &dom);

    let failed = table_rows(&dom, "failed");
    assert_eq!(failed.len(), 1, "{failed:?}");
    let broken = row(&failed, "broken", &dom);
    assert_eq!(broken[1].0, "bad", "{broken:?}");
    assert!(broken[1].1.contains("ghost"), "the reason names the missing mod: {broken:?}");

    // The screenshot.
    let started = Instant::now();
    let shot_path = out.path().join("shot.png");
    {
        let args = vec![
            format!("--screenshot={}", shot_path.display()),
            format!("--window-size={},{}", SHOT.0, SHOT.1),
            "--virtual-time-budget=10000".to_owned(),
        ];
        let url = url.clone();
        chromium_off_runtime(args, url).await;
    }
    println!("chromium --screenshot took {:?}", started.elapsed());
    server.stop().await.expect("stopping");
    let target = std::env::current_exe().expect("the test's path").ancestors().nth(3).expect("target/").to_owned();
    let kept = target.join("status-page.png");
    std::fs::copy(&shot_path, &kept).unwrap_or_else(|e| panic!("keeping the screenshot in {}: {e}", kept.display()));
    println!("screenshot: {}", kept.display());

    let shot = Shot::decode(&shot_path);
    assert_eq!((shot.width, shot.height), SHOT, "the screenshot's size ({})", kept.display());
    // The header: a dark band across the whole width at the top (its padding, above any text).
    for y in 0..8 {
        let off: Vec<u32> = (0..shot.width).filter(|&x| !near(shot.at(x, y), HEADER, 3)).collect();
        assert!(off.is_empty(), "row {y}: {} pixels are not the header's #1d2125 ({})", off.len(), kept.display());
    }
    let header_rows = (0..shot.height).take_while(|&y| near(shot.at(shot.width - 1, y), HEADER, 3)).count() as u32;
    assert!((30..120).contains(&header_rows), "the header is {header_rows} px high ({})", kept.display());
    // Below it: text, i.e. many pixels (and many distinct colours: anti-aliasing) that are not one of the
    // page's backgrounds or lines.
    let body: Vec<[u8; 3]> = (header_rows..shot.height)
        .flat_map(|y| (0..shot.width).map(move |x| (x, y)))
        .map(|(x, y)| shot.at(x, y))
        .collect();
    let inked: Vec<[u8; 3]> = body.iter().copied().filter(|p| !BACKGROUNDS.iter().any(|b| near(*p, *b, 2))).collect();
    let distinct: std::collections::BTreeSet<[u8; 3]> = inked.iter().copied().collect();
    let dark = body.iter().filter(|p| near(**p, HEADER, 24)).count();
    // The left-out reason in red (`bad`; nothing else on this page is), the serving mods in green (`ok`).
    let red = body.iter().filter(|p| near(**p, BAD, 12)).count();
    let green = body.iter().filter(|p| near(**p, OK, 12)).count();
    println!(
        "screenshot: header {header_rows} px; below it {} inked pixels in {} colours, {dark} dark, {red} red, {green} green",
        inked.len(),
        distinct.len()
    );
    assert!(inked.len() > 5000, "only {} pixels of text below the header ({})", inked.len(), kept.display());
    assert!(distinct.len() > 50, "only {} distinct colours below the header ({})", distinct.len(), kept.display());
    assert!(dark > 1000, "only {dark} pixels of dark text below the header ({})", kept.display());
    assert!(red > 50, "only {red} pixels of the left-out reason's #b3261e ({})", kept.display());
    assert!(green > 50, "only {green} pixels of `serving`'s #1f7a3a ({})", kept.display());
}

// ---- latency over time ----

/// The `<tr>…</tr>` of the routes table whose first cell is `path`, as Chromium dumped it.
fn route_row_html<'a>(dom: &'a str, path: &str) -> &'a str {
    let table = &dom[dom.find("id=\"routes\"").unwrap_or_else(|| panic!("no routes table:\n{dom}"))..];
    let table = &table[..table.find("</table>").expect("the table ends")];
    let at = table.find(&format!("<td>{path}</td>")).unwrap_or_else(|| panic!("no row {path}:\n{table}"));
    let start = table[..at].rfind("<tr").expect("the row starts");
    let end = at + table[at..].find("</tr>").expect("the row ends");
    &table[start..end]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_plots_each_routes_latency_over_time() {
    let _ = chromium(); // fail before anything else when it is missing
    let server = start().await;
    let addr = server.addr;
    send_traffic(addr).await;

    // The JSON: each requested route's slots, adding up to its requests; none for an untouched route.
    let mods = get_json(addr, "/modhost/mods").await;
    for (_, path, n, _) in TRAFFIC {
        let id = if path.starts_with("/hello/") { "hello" } else { "fx" };
        let series = field(route(&mods, id, path), "latency_series");
        assert_eq!(number(series, "slot_s"), 10.0, "{series:#}");
        let points = array(series, "points");
        assert!(!points.is_empty() && points.len() <= 60, "{path}: {series:#}");
        let counted: f64 = points.iter().map(|p| number(p, "count")).sum();
        assert_eq!(counted, n as f64, "{path}: {series:#}");
        for p in points {
            assert!(number(p, "t") <= number(series, "now"), "{series:#}");
            assert!(number(p, "max_ms") >= number(p, "mean_ms") && number(p, "mean_ms") > 0.0, "{series:#}");
        }
    }
    assert!(route(&mods, "fx", "/fx/counter").get("latency_series").is_none(), "{mods:#}");

    // The page: an SVG with a line and a dot per slot in each requested route's row.
    let url = format!("http://{addr}/modhost/");
    let dom = chromium_off_runtime(vec!["--dump-dom".to_owned(), "--virtual-time-budget=10000".to_owned()], url).await;
    for (_, path, _, _) in TRAFFIC {
        let row = route_row_html(&dom, path);
        assert!(row.contains("<svg") && row.contains("class=\"latency-plot\""), "{path}: no plot in {row}");
        let dots = row.matches("<circle").count();
        assert!(dots >= 1, "{path}: no points in {row}");
        let line = row.split("<polyline points=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or_default();
        assert_eq!(line.split(' ').count(), dots, "{path}: a line vertex per dot: {row}");
        for xy in line.split(' ') {
            let (x, y) = xy.split_once(',').unwrap_or_else(|| panic!("{path}: vertex `{xy}` in {row}"));
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((0.0..=180.0).contains(&x) && (0.0..=32.0).contains(&y), "{path}: ({x}, {y}) off the plot: {row}");
        }
    }
    let untouched = route_row_html(&dom, "/fx/counter");
    assert!(!untouched.contains("<svg"), "a route with no request has no plot: {untouched}");
    server.stop().await.expect("stopping");
}

// ---- Chromium: the config editor (host/src/config_edit.rs, docs/config.md) ----

/// The fixture's config in the editor's test: defaults and a schema (`gift.count` at least 1).
const EDITOR_DEFAULTS: &str = r#"{"greeting": "hello", "gift": {"count": 2, "item": "bread"}}"#;
const EDITOR_SCHEMA: &str = r#"{"type": "object", "properties": {
    "gift": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1,
        "description": "how many"}}}}}"#;

/// What the test does on the page, as a player would, evaluated in it over the DevTools protocol: waits
/// for the editor, sets `gift.count` to 7 and applies, then to -1 and applies, and answers a log of
/// what the page showed after each. Every wait is bounded (20 s).
const EDITOR_DRIVER: &str = r#"(async () => {
  const lines = [];
  const log = (s) => lines.push(s);
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const input = () => document.querySelector('[data-mod="fx"] input[data-key="gift.count"]');
  const result = () => document.querySelector('[data-result="fx"]');
  async function until(what, test) {
    const started = Date.now();
    for (;;) {
      let ok = false;
      try { ok = Boolean(test()); } catch (e) {}
      if (ok) return true;
      if (Date.now() - started > 20000) {
        const box = document.getElementById("config-box");
        log("TIMEOUT waiting for " + what + "; the section: " + (box ? box.outerHTML : "none"));
        return false;
      }
      await sleep(50);
    }
  }
  function apply(value) {
    const i = input();
    i.value = value;
    i.dispatchEvent(new Event("input"));
    document.querySelector('[data-apply="fx"]').click();
  }
  if (!await until("the editor", input)) return lines.join("\n");
  log("SHOWN " + input().value);
  apply("7");
  if (!await until("the apply", () => result().textContent.startsWith("applied"))) return lines.join("\n");
  log("APPLIED " + result().textContent + " | now " + input().value);
  apply("-1");
  if (!await until("the refusal", () => result().textContent.startsWith("not applied"))) return lines.join("\n");
  log("REFUSED " + result().textContent + " | class " + result().className);
  log("DONE");
  return lines.join("\n") + "\n";
})()"#;

/// Just enough of the DevTools protocol to evaluate a script in a page: headless Chromium with
/// `--remote-debugging-port=0`, its page target found through `/json/list`, and one WebSocket (RFC
/// 6455, text frames only) carrying `Runtime.evaluate`. `--dump-dom` cannot act on a page, and a
/// driver page of another origin cannot reach into it (site isolation holds even with
/// `--disable-web-security`), so the test talks to the browser as DevTools does.
mod devtools {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::TcpStream;
    use std::path::Path;
    use std::time::{Duration, Instant};

    /// How long one read or write may block.
    const IO_WAIT: Duration = Duration::from_secs(60);

    fn connect(port: u16) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connecting to DevTools");
        stream.set_read_timeout(Some(IO_WAIT)).expect("a read timeout");
        stream.set_write_timeout(Some(IO_WAIT)).expect("a write timeout");
        stream
    }

    /// The port Chromium wrote into `<profile>/DevToolsActivePort`, waiting up to 30 s for it.
    pub(super) fn port(profile: &Path) -> u16 {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = std::fs::read_to_string(profile.join("DevToolsActivePort")).unwrap_or_default();
            if let Some(port) = text.lines().next().and_then(|l| l.trim().parse().ok()) {
                return port;
            }
            assert!(Instant::now() < deadline, "Chromium wrote no DevToolsActivePort in 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The WebSocket path of the page whose URL starts with `url`, waiting up to 30 s for it.
    pub(super) fn page(port: u16, url: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // The port is written before DevTools answers: a refused or dropped connection is retried.
            let mut answer = String::new();
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = stream.set_read_timeout(Some(IO_WAIT));
                let asked =
                    write!(stream, "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
                // DevTools keeps the connection open: read up to the body's Content-Length.
                let mut bytes = Vec::new();
                let mut chunk = [0u8; 16 << 10];
                while asked.is_ok() && bytes.len() < 16 << 20 {
                    let Ok(n @ 1..) = stream.read(&mut chunk) else { break };
                    bytes.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&bytes);
                    let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
                    let length = head.lines().find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok())?
                    });
                    if length.is_some_and(|n| body.len() >= n) {
                        answer = text.into_owned();
                        break;
                    }
                }
            }
            let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
            let targets: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
            let found = targets
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.starts_with(url)));
            if let Some(ws) = found.and_then(|t| t["webSocketDebuggerUrl"].as_str()) {
                let path = ws.split_once("//").and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_owned()));
                return path.expect("a WebSocket path");
            }
            assert!(Instant::now() < deadline, "no page target for {url} in 30 s: {body}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Evaluates `expression` in the page at WebSocket `path` (awaiting a promise) and answers its
    /// value as a string, or the protocol's answer when it is not one (an exception, or a context
    /// destroyed by a navigation).
    pub(super) fn evaluate(port: u16, path: &str, expression: &str) -> Result<String, String> {
        let params = serde_json::json!({"expression": expression, "awaitPromise": true, "returnByValue": true});
        let message = call(port, path, "Runtime.evaluate", params);
        let value = &message["result"]["result"]["value"];
        value.as_str().map(str::to_owned).ok_or_else(|| message.to_string())
    }

    /// Calls DevTools' `method` with `params` on the page at WebSocket `path`; answers the protocol's
    /// whole answer (`result`, or `error`).
    pub(super) fn call(port: u16, path: &str, method: &str, params: serde_json::Value) -> serde_json::Value {
        let mut stream = connect(port);
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .expect("the WebSocket handshake");
        let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
        let mut status = String::new();
        reader.read_line(&mut status).expect("the handshake's answer");
        assert!(status.contains(" 101 "), "DevTools refused the WebSocket: {status}");
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("a handshake header");
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let call = serde_json::json!({"id": 1, "method": method, "params": params});
        send(&mut stream, call.to_string().as_bytes());
        // Bounded: each read waits at most IO_WAIT, and the script's own waits are bounded.
        for _ in 0..1000 {
            let message: serde_json::Value = serde_json::from_slice(&receive(&mut reader)).expect("a JSON message");
            if message["id"] == 1 {
                return message;
            }
        }
        panic!("no answer to {method} in 1000 messages");
    }

    /// Sends one masked text frame (a client must mask; the key's value does not matter).
    fn send(stream: &mut TcpStream, payload: &[u8]) {
        let mask = [0x5a, 0x3c, 0x96, 0x0f];
        let mut frame = vec![0x81];
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        stream.write_all(&frame).expect("sending a frame");
    }

    /// One whole message (continuation frames joined; pings skipped). At most 64 MiB.
    fn receive(reader: &mut BufReader<TcpStream>) -> Vec<u8> {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            reader.read_exact(&mut head).expect("a frame head");
            let len = match head[1] & 0x7f {
                126 => {
                    let mut n = [0u8; 2];
                    reader.read_exact(&mut n).expect("a frame length");
                    u64::from(u16::from_be_bytes(n))
                }
                127 => {
                    let mut n = [0u8; 8];
                    reader.read_exact(&mut n).expect("a frame length");
                    u64::from_be_bytes(n)
                }
                n => u64::from(n),
            };
            assert!(len <= 64 << 20, "a {len}-byte frame from DevTools");
            let mut payload = vec![0u8; len as usize];
            reader.read_exact(&mut payload).expect("a frame payload");
            match head[0] & 0x0f {
                0x8 => panic!("DevTools closed the WebSocket"),
                0x9 | 0xa => continue,
                _ => message.extend_from_slice(&payload),
            }
            if head[0] & 0x80 != 0 {
                return message;
            }
        }
    }
}

/// Opens `url` in headless Chromium with DevTools on, evaluates `expression` in it, and answers the
/// value. Chromium runs in a process group of its own, killed whole afterwards.
fn chromium_evaluate(url: &str, expression: &str) -> String {
    with_chromium(url, |port, page| {
        devtools::evaluate(port, page, expression).unwrap_or_else(|e| panic!("the script failed: {e}"))
    })
}

/// Opens `url` in headless Chromium with DevTools on and, once the page has loaded, answers what
/// `act` does with DevTools' port and the page's WebSocket path. Chromium runs in a process group of
/// its own, killed whole afterwards.
fn with_chromium<T>(url: &str, act: impl FnOnce(u16, &str) -> T + std::panic::UnwindSafe) -> T {
    use std::os::unix::process::CommandExt as _;
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut child = Command::new(chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0"])
        .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("starting chromium");
    let group = child.id();
    let outcome = std::panic::catch_unwind(|| {
        let port = devtools::port(profile.path());
        let page = devtools::page(port, url);
        // The target is listed before its navigation commits: wait until the page itself has loaded.
        let ready = "location.href + ' ' + document.readyState";
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let state = devtools::evaluate(port, &page, ready).unwrap_or_default();
            if state.starts_with(url) && state.ends_with(" complete") {
                break;
            }
            assert!(Instant::now() < deadline, "the page did not load in 30 s: {state}");
            std::thread::sleep(Duration::from_millis(50));
        }
        act(port, &page)
    });
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{group}")]).stderr(Stdio::null()).status();
    let _ = child.wait();
    outcome.unwrap_or_else(|e| std::panic::resume_unwind(e))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_config_edit_is_applied_and_persisted() {
    let _ = chromium(); // fail before anything else when it is missing
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "");
    let folder = builder.root().join("mods/fx");
    std::fs::create_dir_all(&folder).expect("the mod folder");
    std::fs::write(folder.join("config.default.json"), EDITOR_DEFAULTS).expect("defaults");
    std::fs::write(folder.join("config.schema.json"), EDITOR_SCHEMA).expect("schema");
    let server = tokio::time::timeout(BOOT_WAIT, builder.start()).await.expect("booted in time").expect("booting");
    let addr = server.addr;
    let url = format!("http://{addr}/modhost/");
    let log = tokio::task::spawn_blocking(move || chromium_evaluate(&url, EDITOR_DRIVER))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    assert!(log.contains("DONE"), "the driver did not finish:\n{log}");
    assert!(log.contains("SHOWN 2\n"), "the editor shows the default: {log}");
    assert!(log.contains("APPLIED applied: ") && log.contains("| now 7\n"), "the page shows the applied value: {log}");
    assert!(
        log.contains(
            r#"REFUSED not applied, nothing written: mods/fx/config.json: key "gift.count": -1 is less than the minimum of 1 (config.schema.json) | class config-result bad"#
        ),
        "the page shows the refusal, naming the key: {log}"
    );

    // Persisted: the player's file holds only the change, and the mod reads it.
    let on_disk: Value = serde_json::from_slice(&std::fs::read(folder.join("config.json")).expect("config.json"))
        .expect("config.json is JSON");
    assert_eq!(
        on_disk,
        serde_json::json!({"gift": {"count": 7}}),
        "config.json holds only the change (what differs from the defaults), and the invalid edit wrote nothing"
    );
    assert_eq!(get(addr, "/fx/config/gift.count").await.text(), "7");
    let mods = get_json(addr, "/modhost/mods").await;
    assert_eq!(loaded(&mods, "fx")["config"]["gift"]["count"], 7, "{mods:#}");
    server.stop().await.expect("stopping");
}

// ---- Chromium: every hooked route's chain (docs/mods-together.md) ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_lists_each_hooked_routes_chain_in_run_order() {
    let _ = chromium();
    let mut builder = TestServer::builder();
    let hookers =
        [("o", 0, ""), ("a", 0, "[grants]\nhook = [\"/peer/o/\"]"), ("b", 10, "[grants]\nhook = [\"/peer/o/\"]")];
    for (id, priority, grants) in hookers {
        let hooks = if id == "o" {
            serde_json::json!([])
        } else {
            serde_json::json!([{"path": "/peer/o/echo", "phase": "before", "priority": priority, "action": "tag"}])
        };
        let dir = builder.root().join("mods").join(id);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.default.json"), serde_json::json!({"name": id, "hooks": hooks}).to_string())
            .unwrap();
        builder = builder.with_mod(id, guests::PEER, grants);
    }
    let server = builder.start().await.expect("starting");
    let url = format!("http://{}/modhost/", server.addr);
    let dom = chromium_off_runtime(vec!["--dump-dom".to_owned(), "--virtual-time-budget=10000".to_owned()], url).await;
    let table = &dom[dom.find("id=\"chains\"").unwrap_or_else(|| panic!("no chains table:\n{dom}"))..];
    let table = &table[..table.find("</table>").expect("the table ends")];
    let row =
        "<td>/peer/o/*</td><td>b (/peer/o/echo, priority 10) → a (/peer/o/echo, priority 0)</td><td>o</td><td>—</td>";
    assert!(table.contains(row), "the chain, in run order:\n{table}");
    server.stop().await.expect("stopping");
}

// ---- Chromium: a page of another origin (issue 29, `host/src/front/origin.rs`) ----

/// The hostile page: it opens `SESSION`'s notifier socket, polls `QUEUED`'s queue with an `<img>`,
/// and frames `/modhost/`, on the server at `TARGET`; `window.done` answers what each did, as JSON.
const HOSTILE_PAGE: &str = r#"<!doctype html><meta charset="utf-8"><title>elsewhere</title><body>
<script>
window.results = {};
window.done = new Promise((resolve) => {
  let pending = 3;
  const finish = (key, value) => {
    if (key in window.results) return;
    window.results[key] = value;
    if (--pending === 0) resolve(JSON.stringify(window.results));
  };
  setTimeout(() => resolve(JSON.stringify(window.results)), 15000);
  const ws = new WebSocket("ws://TARGET/notifierServer/getwebsocket/SESSION");
  ws.onopen = () => finish("socket", "opened");
  ws.onmessage = (m) => { window.results.pushed = String(m.data); };
  ws.onerror = () => finish("socket", "failed");
  ws.onclose = () => finish("socket", "failed");
  const img = new Image();
  img.onload = () => finish("poll", "answered");
  img.onerror = () => finish("poll", "answered");
  img.src = "http://TARGET/notifierServer/get/QUEUED?last_id=0";
  const frame = document.createElement("iframe");
  frame.onload = () => finish("frame", "loaded");
  frame.src = "http://TARGET/modhost/";
  document.body.appendChild(frame);
});
</script>"#;

/// Serves `page` as HTML at every path of a listener of its own on 127.0.0.1: another origin than
/// the server's (another port). Each connection gets one answer and is closed; the listener ends
/// with the returned task.
async fn serve_elsewhere(page: String) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a listener");
    let addr = listener.local_addr().expect("its address");
    let task = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let page = page.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                // The request's head, bounded in size and time; its content does not matter.
                let _ = tokio::time::timeout(Duration::from_secs(5), async {
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 << 10 {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                })
                .await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_a_page_of_another_origin_cannot_take_a_socket_drain_a_poll_or_frame_the_page() {
    use futures_util::StreamExt as _;
    let _ = chromium();
    const PLAYER: &str = "0123456789abcdef01234567";
    const QUEUED: &str = "fedcba9876543210fedcba98";
    let builder = TestServer::builder().with_mod("pusher", guests::PEER, "");
    let dir = builder.root().join("mods").join("pusher");
    std::fs::create_dir_all(&dir).expect("the mod folder");
    std::fs::write(dir.join("config.default.json"), r#"{"name": "p"}"#).expect("its config");
    let server = tokio::time::timeout(BOOT_WAIT, builder.start()).await.expect("booted in time").expect("booting");
    let addr = server.addr;
    let push = |session: &'static str, body: &'static str| async move {
        let call = Call::post_raw(&format!("/peer/p/push/{session}"), body.as_bytes()).session(session);
        send(addr, &call).await.expect("a push").json()
    };

    // The player's socket (the game's client sends no Origin), and a message queued for another.
    let url = format!("ws://{addr}/notifierServer/getwebsocket/{PLAYER}");
    let (mut player, _) = tokio_tungstenite::connect_async(url).await.expect("the player's socket");
    assert_eq!(push(QUEUED, r#"{"private":"queued"}"#).await["delivery"], "queued");

    let page = HOSTILE_PAGE.replace("TARGET", &addr.to_string()).replace("SESSION", PLAYER).replace("QUEUED", QUEUED);
    let (elsewhere, listener) = serve_elsewhere(page).await;
    let page_url = format!("http://{elsewhere}/");
    let modhost = format!("http://{addr}/modhost/");
    let (results, frames) = tokio::task::spawn_blocking(move || {
        with_chromium(&page_url, |port, page| {
            let results = devtools::evaluate(port, page, "window.done").unwrap_or_else(|e| panic!("the page: {e}"));
            (results, devtools::call(port, page, "Page.getFrameTree", serde_json::json!({})))
        })
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    listener.abort();
    let results: Value = serde_json::from_str(&results).expect("the page's results are JSON");

    // The socket: refused, so the player's stays open and its pushes reach the player alone.
    assert_eq!(results["socket"], "failed", "the page opened the player's notifier socket: {results}");
    assert!(server.app.notifier_connected(PLAYER), "the player's socket was replaced");
    assert_eq!(push(PLAYER, r#"{"private":"player"}"#).await["delivery"], "delivered");
    let message = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match player.next().await {
                Some(Ok(tokio_tungstenite::tungstenite::Message::Text(text))) => return text.to_string(),
                Some(Ok(_)) => continue,
                other => panic!("the player's socket ended: {other:?}"),
            }
        }
    })
    .await
    .expect("the push reached the player");
    assert_eq!(message, r#"{"private":"player"}"#);

    // The poll: the message is still queued for its session.
    let polled = get(addr, &format!("/notifierServer/get/{QUEUED}?last_id=0")).await;
    assert_eq!(polled.text(), r#"{"private":"queued"}"#, "the page's <img> drained the queue");

    // The frame: Chromium refused to show /modhost/ in it (an error page instead).
    let children = frames["result"]["frameTree"]["childFrames"].as_array().cloned().unwrap_or_default();
    assert_eq!(children.len(), 1, "the page's one frame: {frames}");
    let frame = &children[0]["frame"];
    let shown = frame["url"].as_str().unwrap_or_default();
    assert!(!shown.starts_with(&modhost), "a page of another origin framed {modhost}: {frame}");
    let reply = get(addr, "/modhost/").await;
    assert_eq!(reply.header("x-frame-options"), Some("DENY"));
    server.stop().await.expect("stopping");
}

// ---- Chromium: the enable and disable buttons (host/src/toggle.rs) ----

/// Acts on the page as a player: disables `fx` (which `needs-fx` requires: the page names it and offers
/// "Disable anyway"), disables both, then enables `fx` from the "Disabled" section.
const TOGGLE_DRIVER: &str = r#"(async () => {
  const lines = [];
  const log = (s) => lines.push(s);
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const button = (action, label) => [...document.querySelectorAll(`button[data-toggle="${action}"][data-mod="fx"]`)]
    .find((b) => !label || b.textContent === label);
  const result = () => document.getElementById("toggle-result");
  async function until(what, test) {
    const started = Date.now();
    for (;;) {
      let ok = false;
      try { ok = Boolean(test()); } catch (e) {}
      if (ok) return true;
      if (Date.now() - started > 20000) {
        log("TIMEOUT waiting for " + what + "; the page: " + document.querySelector("main").innerText);
        return false;
      }
      await sleep(50);
    }
  }
  if (!await until("the disable button", () => button("disable", "Disable"))) return lines.join("\n");
  button("disable", "Disable").click();
  if (!await until("the question", () => button("disable", "Disable anyway"))) return lines.join("\n");
  log("ASKED " + result().textContent.trim());
  button("disable", "Disable anyway").click();
  if (!await until("the disabled section", () => button("enable"))) return lines.join("\n");
  log("DISABLED " + result().textContent + " | hidden " + document.getElementById("disabled-box").hidden);
  button("enable").click();
  if (!await until("the mod back", () => button("disable", "Disable") && !button("enable"))) return lines.join("\n");
  log("ENABLED " + result().textContent);
  log("DONE");
  return lines.join("\n") + "\n";
})()"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_disables_and_enables_a_mod_asking_when_others_require_it() {
    let _ = chromium(); // fail before anything else when it is missing
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "").with_mod(
        "needs-fx",
        guests::HELLO,
        "[requires]\nfx = \"*\"",
    );
    let root = builder.root().to_owned();
    let server = tokio::time::timeout(BOOT_WAIT, builder.start()).await.expect("booted in time").expect("booting");
    let addr = server.addr;

    // Without the header (what a page of another origin can send), nothing changes.
    let refused = send(addr, &Call::post_raw("/modhost/mods/fx/disable", b"").identity()).await.expect("an answer");
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(root.join("mods/fx").is_dir());

    let url = format!("http://{addr}/modhost/");
    let log = tokio::task::spawn_blocking(move || chromium_evaluate(&url, TOGGLE_DRIVER))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    assert!(log.contains("DONE"), "the driver did not finish:\n{log}");
    assert!(
        log.contains("ASKED needs-fx require(s) fx and cannot load without it: disabling fx disables it too."),
        "the page names the mod that requires it: {log}"
    );
    assert!(log.contains("DISABLED fx disabled | hidden false"), "{log}");
    assert!(log.contains("ENABLED fx enabled"), "{log}");
    assert!(root.join("mods/fx/mod.toml").is_file() && !root.join("disabled/fx").exists());
    // The mod that requires it was disabled with it, and stays so until the player enables it.
    assert!(root.join("disabled/needs-fx/mod.toml").is_file());
    let mods = get_json(addr, "/modhost/mods").await;
    loaded(&mods, "fx");
    assert!(array(&mods, "loaded").iter().all(|m| m["id"] != "needs-fx"), "{mods:#}");
    assert_eq!(mods["disabled"][0]["id"], "needs-fx", "{mods:#}");
    server.stop().await.expect("stopping");
}
