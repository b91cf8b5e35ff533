//! Issue 17, the HTTP front: a Host check against DNS rebinding, a slow reader the idle and write-stall
//! deadlines cut off, the caps on a mod's answer headers, and request bodies charged to the budget inflated.
//!
//! Issue 29, the front's part (below its own header): upgrades reset mid-upgrade leave no notifier
//! entry and no mod connection without its `on-close`; the browser policy over the wire (a websocket
//! upgrade from another origin is 403, a poll a page of another site sends cannot drain the queue, the
//! status names no session, the host's pages refuse framing; the same in Chromium is
//! `tests/tests/status_page.rs`); a Host that is not a host is 400.

use super::fixture_server;
use super::notifier::{self, GOOD};
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `request` on a fresh connection and reads until the server closes it (the requests here say
/// `Connection: close`), for at most 10 s; answers the status and the body text.
async fn exchange(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut received)).await;
    assert!(read.is_ok(), "no answer to {request:?} within 10 s");
    let text = String::from_utf8_lossy(&received).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no answer: {text:?}"));
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

fn get(path: &str, host_lines: &str) -> String {
    format!("GET {path} HTTP/1.1\r\n{host_lines}Accept-Encoding: identity\r\nConnection: close\r\n\r\n")
}

#[tokio::test]
async fn a_host_naming_another_machine_is_misdirected_and_loopback_ones_are_served() {
    let server = fixture_server().await;
    let port = server.addr.port();
    // A page that rebinds its name to 127.0.0.1 reaches the game, the host's pages and reload.
    for path in ["/fx/p/x", "/modhost/status", "/metrics"] {
        let (status, body) = exchange(server.addr, &get(path, &format!("Host: rebind.example:{port}\r\n"))).await;
        assert_eq!(status, 421, "{path}: {body}");
        assert!(body.contains(&format!("rebind.example:{port}")), "the answer names the Host: {body}");
    }
    let reload = "POST /modhost/reload HTTP/1.1\r\nHost: rebind.example\r\nx-modhost-reload: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    assert_eq!(exchange(server.addr, reload).await.0, 421);
    for host in [format!("127.0.0.1:{port}"), "127.0.0.1".into(), format!("localhost:{port}"), "LOCALHOST".into()] {
        let (status, body) = exchange(server.addr, &get("/fx/p/x", &format!("Host: {host}\r\n"))).await;
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    // RFC 9112 §3.2: HTTP/1.1 needs exactly one Host. HTTP/1.0 had none: served.
    let (status, body) = exchange(server.addr, &get("/fx/p/x", "")).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no Host"), "{body}");
    assert_eq!(exchange(server.addr, &get("/fx/p/x", "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n")).await.0, 400);
    assert_eq!(exchange(server.addr, "GET /fx/p/x HTTP/1.0\r\n\r\n").await.0, 200);
}

#[tokio::test]
async fn a_name_the_player_allows_in_modhost_toml_is_served() {
    let builder = TestServer::builder().with_mod("fx", modhost_tests::guests::FIXTURE, "");
    std::fs::write(builder.root().join("modhost.toml"), "[http]\nallowed_hosts = [\"GameBox.lan\"]\n").unwrap();
    let server = builder.start().await.unwrap();
    assert_eq!(exchange(server.addr, &get("/fx/p/x", "Host: gamebox.lan:6969\r\n")).await.0, 200);
    assert_eq!(exchange(server.addr, &get("/fx/p/x", "Host: other.lan\r\n")).await.0, 421);
}

/// The issue's reader (4.36 MB read at 32-128 KiB/s, cut off at 8.0 s with a clean EOF and a short
/// body), scaled to short deadlines: an identity answer of 8 MiB read at a steady 680 KiB/s for about
/// 12 s. The kernel's buffers take MiBs at once and then wake the server's blocked write only when
/// half has drained, seconds later: the idle deadline (1 s here) used to run from the last write and
/// cut the reader off, and the write-stall deadline (3 s) counted only the server's own writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_that_keeps_reading_gets_every_byte_of_a_long_answer() {
    let server = TestServer::builder()
        .with_mod("fx", modhost_tests::guests::FIXTURE, "")
        .config(|c| {
            c.http.idle = Duration::from_millis(1000);
            c.http.head = Duration::from_millis(1000);
            c.http.write_stall = Duration::from_millis(3000);
        })
        .start()
        .await
        .unwrap();
    let size: usize = 8 << 20;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    // A small receive buffer: the answer waits in the server's send buffer, as it did for the issue's
    // reader, whatever this machine's autotuning would have done.
    socket.set_recv_buffer_size(64 << 10).unwrap();
    let mut stream = socket.connect(server.addr).await.unwrap();
    stream.write_all(get(&format!("/fx/big/{size}"), "Host: 127.0.0.1\r\n").as_bytes()).await.unwrap();
    let per_second = size as f64 / 12.0;
    let (started, mut received, mut chunk) = (Instant::now(), Vec::with_capacity(size + 4096), vec![0u8; 16 << 10]);
    while started.elapsed() < Duration::from_secs(30) {
        let read = tokio::time::timeout(Duration::from_secs(15), stream.read(&mut chunk)).await;
        let n = read.expect("the server went 15 s without sending").expect("reading");
        if n == 0 {
            break;
        }
        received.extend_from_slice(&chunk[..n]);
        // Paced: never ahead of the rate.
        let due = Duration::from_secs_f64(received.len() as f64 / per_second);
        if let Some(wait) = due.checked_sub(started.elapsed()) {
            tokio::time::sleep(wait).await;
        }
    }
    let head_end = received.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    let head = String::from_utf8_lossy(&received[..head_end]);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        received.len() - head_end,
        size,
        "the server closed after {:.1} s and {} body bytes",
        started.elapsed().as_secs_f64(),
        received.len() - head_end
    );
}

#[tokio::test]
async fn a_mod_answering_100000_headers_gets_500_naming_the_mod_and_the_cap() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/headers/100000").identity()).await.expect("an answer");
    assert_eq!(reply.status, 500, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["mod"], "fx", "{body}");
    assert!(body["reason"].as_str().unwrap_or_default().contains("100001 headers; the limit is 100"), "{body}");
    // At the cap (99 and the fixture's `content-type`), every header arrives; one more is the mod's error.
    let reply = send(server.addr, &Call::get("/fx/headers/99").identity()).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.headers.iter().filter(|(n, _)| n.starts_with("x-fx-")).count(), 99);
    assert_eq!(send(server.addr, &Call::get("/fx/headers/100").identity()).await.unwrap().status, 500);
    // The server is still whole.
    assert_eq!(send(server.addr, &Call::get("/fx/p/x")).await.unwrap().status, 200);
}

/// The issue's shape: zlib bodies of 15 KB that inflate to 15 MiB each (under the 16 MiB cap), all on
/// one session whose lock is held. Charged inflated, four fit the 64 MiB budget; the others wait for
/// budget and get 503 naming it. Before, each was charged its 15 KB and held 15 MiB uncharged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_waiting_on_one_session_are_charged_inflated_and_the_rest_get_503_naming_the_budget() {
    let server = TestServer::builder()
        .with_mod("fx", modhost_tests::guests::FIXTURE, "")
        .config(|c| c.http.body = Duration::from_millis(1500))
        .start()
        .await
        .unwrap();
    let budget = server.app.body_budget.available_permits();
    assert_eq!(budget, 64 << 20);
    let session = "0123456789abcdef01234567";
    let addr = server.addr;
    let holder = tokio::spawn(async move { send(addr, &Call::get("/fx/sleep/3000").session(session)).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let inflated = vec![b'0'; 15 << 20];
    let call = Call::post("/fx/p/x", &inflated).session(session).identity();
    drop(inflated);
    let waiting: Vec<_> = (0..8)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move { send(addr, &call).await })
        })
        .collect();

    // While they wait for the lock, what they hold is charged: at least three whole bodies.
    tokio::time::sleep(Duration::from_millis(900)).await;
    let held = budget - server.app.body_budget.available_permits();
    assert!(held >= 3 * (15 << 20), "the waiting bodies hold {held} bytes of budget");

    let mut statuses = Vec::new();
    for task in waiting {
        let reply = task.await.unwrap().expect("an answer");
        if reply.status == 503 {
            assert!(reply.text().contains("budget for request bodies (64 MiB"), "{}", reply.text());
        }
        statuses.push(reply.status);
    }
    assert_eq!(holder.await.unwrap().unwrap().status, 200);
    statuses.sort_unstable();
    assert!(statuses.contains(&200) && statuses.contains(&503), "{statuses:?}");
    assert!(statuses.iter().all(|s| [200, 503].contains(s)), "{statuses:?}");
    // Everything charged is given back.
    assert_eq!(server.app.body_budget.available_permits(), budget);
}

// ---- Issue 29 ----

/// A session of the tests below.
const PLAYER: &str = "0123456789abcdef01234567";

/// Sends an upgrade request for `path` (with the `extra` header lines) and resets the connection at
/// once (`SO_LINGER` 0: an RST), before the server's `101` can reach it: a client that gives up
/// mid-upgrade.
async fn reset_mid_upgrade(addr: SocketAddr, path: &str, extra: &str) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{GOOD}{extra}\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.set_zero_linger().unwrap();
    drop(stream);
}

/// Sends an upgrade request for `path` with `Host: {host}` and the `extra` header lines; answers the
/// status and the head and body read within 5 s (a `101` keeps the connection, which is returned).
async fn upgrade(addr: SocketAddr, path: &str, host: &str, extra: &str) -> (u16, String, tokio::net::TcpStream) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{GOOD}{extra}\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let text = String::from_utf8_lossy(&got).into_owned();
            // A 101 has no body; a refusal closes the connection after its body.
            if text.starts_with("HTTP/1.1 101") && text.contains("\r\n\r\n") {
                break;
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no answer: {text:?}"));
    (status, text, stream)
}

/// Waits (at most 10 s) until `done` holds.
async fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

/// The issue's leak: the hub registered a session before its upgrade completed, and only the socket's
/// task removed it, which never runs when the client resets mid-upgrade (50 resets left about 30
/// entries; the 2048-socket cap filled in 38 s, and a real player's socket then got 503). A push to a
/// leaked session was counted "delivered" and lost. The cap here is 8, which the leak fills.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrades_reset_mid_upgrade_leave_no_notifier_entry_and_a_real_socket_still_opens() {
    const RESETS: usize = 50;
    let server = notifier::server("", |c| c.realtime.max_sockets = 8).await;
    for n in 0..RESETS {
        let path = format!("/notifierServer/getwebsocket/{}", notifier::session(n + 1));
        reset_mid_upgrade(server.addr, &path, "").await;
    }
    // An upgrade that completed before the reset reached it ends when its socket reads the reset.
    let app = server.app.clone();
    let gone = eventually(|| app.notifier_sockets() == 0).await;
    assert!(gone, "{RESETS} upgrades reset mid-upgrade left {} notifier entries", server.app.notifier_sockets());
    let status = send(server.addr, &Call::get("/modhost/status")).await.unwrap().json();
    eprintln!("{RESETS} upgrades reset mid-upgrade: the hub opened {} sockets", status["notifier"]["opened"]);
    // A push to a session whose upgrade was reset is queued: it has no socket to deliver to.
    for n in 0..RESETS {
        let session = notifier::session(n + 1);
        let pushed = notifier::push(&server, &session, &session, &json!({"n": n})).await;
        assert_eq!(pushed["delivery"], "queued", "a push to session {session}, reset mid-upgrade: {pushed}");
    }
    // A real player's socket still opens, and a push reaches it.
    let mut ws = notifier::connect(&server, PLAYER).await;
    let pushed = notifier::push(&server, PLAYER, PLAYER, &json!({"to": "player"})).await;
    assert_eq!(pushed["delivery"], "delivered", "{pushed}");
    let got: Value = serde_json::from_str(&notifier::next_text(&mut ws).await).unwrap();
    assert_eq!(got["to"], "player");
    server.stop().await.unwrap();
}

/// Issue 29 item 9: a mod's connection whose upgrade failed after the mod accepted it (the client
/// reset before the `101` reached it) was forgotten without `on-close`, so the mod kept whatever it
/// set up for it. Every accepted connection hears `on-close` (1006, the connection just ended).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mod_socket_whose_upgrade_fails_after_accept_hears_on_close() {
    const RESETS: usize = 20;
    let server = TestServer::builder().with_mod("echo", guests::ECHO, "").start().await.unwrap();
    for _ in 0..RESETS {
        reset_mid_upgrade(server.addr, "/echo/ws", "x-token: letmein\r\n").await;
    }
    // Every upgrade that reached the mod was accepted (it carried the token) and answered 101.
    let app = server.app.clone();
    let answered = move || app.metrics.route_stats().get("/echo/ws").map_or(0, |r| r.count);
    let app = server.app.clone();
    let records = move || app.store.list("echo", "closed.").unwrap().len();
    let _ = eventually(|| answered() > 0 && records() as u64 >= answered()).await;
    assert!(answered() > 0, "no upgrade reached the mod: the test proves nothing");
    assert_eq!(
        records() as u64,
        answered(),
        "of {} connections the mod accepted, {} heard on-close",
        answered(),
        records()
    );
    for key in server.app.store.list("echo", "closed.").unwrap() {
        let record: Value = serde_json::from_slice(&server.app.store.get("echo", &key).unwrap().unwrap()).unwrap();
        assert_eq!(record["code"], 1006, "{key}: {record}");
    }
    eprintln!("{RESETS} upgrades reset mid-upgrade: {} accepted, each heard on-close", answered());
    server.stop().await.unwrap();
}

/// Issue 29 item 7: a page on another origin opened a known session's notifier socket (the browser
/// sends its `Origin`; the Host check passes), replacing the player's socket and receiving its pushes;
/// a mod's socket route likewise. An upgrade with an `Origin` other than the server's own is 403; the
/// game's client sends no `Origin` and is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_upgrade_from_another_origin_is_403_and_the_players_socket_stays() {
    let builder = TestServer::builder().with_mod("echo", guests::ECHO, "");
    let dir = builder.root().join("mods").join("pusher");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), json!({"name": "p"}).to_string()).unwrap();
    let server = builder.with_mod("pusher", guests::PEER, "").start().await.unwrap();
    let (addr, port) = (server.addr, server.addr.port());
    let mut player = notifier::connect(&server, PLAYER).await;
    let path = format!("/notifierServer/getwebsocket/{PLAYER}");
    let own = format!("127.0.0.1:{port}");
    for origin in [
        format!("http://127.0.0.1:{}", port.wrapping_add(1).max(1)),
        "http://127.0.0.1".to_owned(),
        format!("http://localhost:{port}"),
        format!("https://127.0.0.1:{port}"),
        "http://rebind.example".to_owned(),
        "null".to_owned(),
    ] {
        let (status, text, _) = upgrade(addr, &path, &own, &format!("Origin: {origin}\r\n")).await;
        assert_eq!(status, 403, "Origin {origin}: {text}");
        assert!(text.contains("Origin"), "the refusal names the Origin: {text}");
        // The mod's socket route: refused before the mod is asked (its own refusal would be `no token`).
        let (status, text, _) =
            upgrade(addr, "/echo/ws", &own, &format!("x-token: letmein\r\nOrigin: {origin}\r\n")).await;
        assert_eq!(status, 403, "Origin {origin} on a mod's socket route: {text}");
        assert!(!text.contains("no token") && text.contains("Origin"), "{text}");
    }
    // The player's socket was not replaced: a push reaches it.
    let pushed = notifier::push(&server, PLAYER, PLAYER, &json!({"to": "player"})).await;
    assert_eq!(pushed["delivery"], "delivered", "{pushed}");
    let got: Value = serde_json::from_str(&notifier::next_text(&mut player).await).unwrap();
    assert_eq!(got["to"], "player");
    assert!(server.app.notifier_connected(PLAYER));
    // The server's own origin (a page it serves) is served, on both kinds of socket route.
    let (status, text, _own_socket) = upgrade(addr, &path, &own, &format!("Origin: http://{own}\r\n")).await;
    assert_eq!(status, 101, "{text}");
    let (status, text, _mod_socket) =
        upgrade(addr, "/echo/ws", &own, &format!("x-token: letmein\r\nOrigin: http://{own}\r\n")).await;
    assert_eq!(status, 101, "{text}");
    server.stop().await.unwrap();
}

/// Issue 29 item 7: `GET /notifierServer/get/<session>` from any page (an `<img>`) drained the player's
/// queue. A poll a browser marks as sent by another site's page (`Sec-Fetch-Site` other than
/// `same-origin` or `none`, or a foreign `Origin`) is 403 and takes nothing; the game's poll, which
/// sends neither, drains as before.
#[tokio::test]
async fn a_poll_a_page_of_another_site_sends_cannot_drain_the_queue() {
    let server = notifier::server("", |c| c.realtime.poll_wait = Duration::from_millis(200)).await;
    let poll = format!("/notifierServer/get/{PLAYER}?last_id=0");
    notifier::push(&server, PLAYER, PLAYER, &json!({"n": 1})).await;
    for (name, value) in [
        ("Sec-Fetch-Site", "cross-site"),
        // Another port of 127.0.0.1 is the same site, not the same origin.
        ("Sec-Fetch-Site", "same-site"),
        ("Origin", "http://127.0.0.1:1"),
        ("Origin", "null"),
    ] {
        let reply = send(server.addr, &Call::get(&poll).header(name, value)).await.unwrap();
        assert_eq!(reply.status, 403, "{name}: {value}: {}", reply.text());
    }
    // Still queued: the game's poll gets it.
    let reply = send(server.addr, &Call::get(&poll)).await.unwrap();
    assert_eq!(reply.text(), r#"{"n":1}"#);
    // The server's own page (same-origin) and a URL the player typed (none) are served.
    for value in ["same-origin", "none"] {
        let reply = send(server.addr, &Call::get(&poll).header("Sec-Fetch-Site", value)).await.unwrap();
        assert_eq!(reply.status, 200, "{value}: {}", reply.text());
    }
    server.stop().await.unwrap();
}

/// Issue 29 item 7: `/modhost/status` listed up to 100 live session ids, which are credentials (a
/// session id is all a request needs to act as its player), and `/modhost/` could be framed.
#[tokio::test]
async fn the_status_names_no_session_and_the_host_pages_refuse_framing() {
    let server = notifier::server("", |_| {}).await;
    let other = notifier::session(7);
    let _ws = notifier::connect(&server, PLAYER).await;
    notifier::push(&server, &other, &other, &json!({"n": 1})).await;
    let status = send(server.addr, &Call::get("/modhost/status")).await.unwrap();
    for session in [PLAYER, other.as_str()] {
        assert!(!status.text().contains(session), "the status names session {session}: {}", status.text());
    }
    let notifier = &status.json()["notifier"];
    assert_eq!(notifier["sockets"], 1, "{notifier}");
    for path in ["/modhost/", "/modhost/status", "/modhost/mods"] {
        let reply = send(server.addr, &Call::get(path)).await.unwrap();
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("x-frame-options"), Some("DENY"), "{path}");
        assert_eq!(reply.header("content-security-policy"), Some("frame-ancestors 'none'"), "{path}");
    }
    server.stop().await.unwrap();
}

/// RFC 9112 §3.2: a Host with an invalid value is 400 (it was 421, as if it named another machine).
#[tokio::test]
async fn a_host_that_is_not_a_host_is_400_not_421() {
    let server = fixture_server().await;
    for host in ["a b", "127.0.0.1 x", "a@127.0.0.1", "127.0.0.1:port"] {
        let (status, body) = exchange(server.addr, &get("/fx/p/x", &format!("Host: {host}\r\n"))).await;
        assert_eq!(status, 400, "Host {host:?}: {body}");
        assert!(body.contains("Host"), "{body}");
    }
    // A well-formed Host that names another machine is still 421.
    assert_eq!(exchange(server.addr, &get("/fx/p/x", "Host: rebind.example\r\n")).await.0, 421);
}
