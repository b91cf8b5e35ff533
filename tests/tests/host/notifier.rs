//! The SPT notifier over the wire, with a real websocket client (tokio-tungstenite): the upgrade and
//! its refusals, pings both ways, a newer socket replacing the older, pushes reaching a socket,
//! queued messages delivered on connect and answered to the poll, broadcast, the push grant, a client
//! that never reads, a thousand idle sockets beside ordinary requests, and the close at shutdown.
//! The pushing mod is `tests/fixtures/peer` (its `push/<session>`, `broadcast`, `connected/<session>`
//! routes).

use futures_util::{SinkExt as _, StreamExt as _};
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream, connect_async};

pub(super) type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

const SESSION: &str = "0123456789abcdef01234567";
const OTHER: &str = "fedcba9876543210fedcba98";

/// The peer fixture as `pusher`, with `grants` in its manifest.
pub(super) fn pusher(builder: TestServerBuilder, grants: &str) -> TestServerBuilder {
    let dir = builder.root().join("mods").join("pusher");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), json!({"name": "p"}).to_string()).unwrap();
    builder.with_mod("pusher", guests::PEER, grants)
}

pub(super) async fn server(grants: &str, configure: impl FnOnce(&mut modhost::ServerSettings)) -> TestServer {
    let server = pusher(TestServer::builder(), grants).config(configure).start().await.unwrap();
    assert!(server.report.failed.is_empty(), "left out: {:?}", server.report.failed);
    server
}

pub(super) fn session(n: usize) -> String {
    format!("{n:024x}")
}

pub(super) async fn connect(server: &TestServer, session: &str) -> Ws {
    let url = format!("ws://{}/notifierServer/getwebsocket/{session}", server.addr);
    let (ws, response) = tokio::time::timeout(Duration::from_secs(5), connect_async(url)).await.unwrap().unwrap();
    assert_eq!(response.status(), 101);
    ws
}

/// `pusher` pushes `message` to `to`, in a request of session `from`: its JSON answer.
pub(super) async fn push(server: &TestServer, from: &str, to: &str, message: &Value) -> Value {
    let reply =
        send(server.addr, &Call::post_raw(&format!("/peer/p/push/{to}"), message.to_string().as_bytes()).session(from))
            .await
            .unwrap();
    assert_eq!(reply.status, 200);
    reply.json()
}

/// The next text message, within 5 s.
pub(super) async fn next_text(ws: &mut Ws) -> String {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.unwrap().unwrap().unwrap();
        match message {
            Message::Text(text) => return text.to_string(),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// The close frame's code the server sends next (skipping anything else), within `within`.
async fn close_code(ws: &mut Ws, within: Duration) -> u16 {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await.expect("no close within the time") {
            Some(Ok(Message::Close(Some(frame)))) => return frame.code.into(),
            Some(Ok(Message::Close(None))) => return 1005,
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("the socket failed instead of closing: {e}"),
            None => panic!("the socket ended without a close frame"),
        }
    }
}

/// Sends a raw upgrade request and answers the status line and the head.
async fn raw_upgrade(server: &TestServer, path: &str, extra: &str) -> String {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{extra}\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&got).into_owned()
}

pub(super) const GOOD: &str = "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";

#[tokio::test]
async fn the_upgrade_opens_with_a_valid_handshake_and_each_failed_requirement_is_a_400() {
    let server = server("", |_| {}).await;
    let path = format!("/notifierServer/getwebsocket/{SESSION}");
    let ok = raw_upgrade(&server, &path, GOOD).await;
    assert!(ok.starts_with("HTTP/1.1 101"), "{ok}");
    // RFC 6455's own example: this key is answered with this accept value.
    assert!(ok.to_ascii_lowercase().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "{ok}");

    let refusals = [
        (path.clone(), "Sec-WebSocket-Version: 12\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "Version: 13"),
        (path.clone(), "Sec-WebSocket-Version: 13\r\n", "Sec-WebSocket-Key"),
        (path.clone(), "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short==\r\n", "Sec-WebSocket-Key"),
        ("/notifierServer/getwebsocket/nothex".to_owned(), GOOD, "24 hex digits"),
        ("/notifierServer/getwebsocket/".to_owned(), GOOD, "24 hex digits"),
    ];
    for (path, headers, names) in refusals {
        // A refusal closes the connection: read it all.
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{headers}\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut all = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all)).await.unwrap().unwrap();
        let answer = String::from_utf8_lossy(&all);
        assert!(answer.starts_with("HTTP/1.1 400"), "{path} {headers:?}: {answer}");
        assert!(answer.contains(names), "the answer names `{names}`: {answer}");
    }
    // The good one opened a socket; the refusals none.
    let status = send(server.addr, &Call::get("/modhost/status")).await.unwrap().json();
    assert_eq!(status["notifier"]["opened"], 1, "{}", status["notifier"]);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_push_reaches_the_socket_and_a_push_without_one_is_queued_then_delivered_on_connect() {
    let server = server("", |_| {}).await;
    // No socket yet: queued, twice.
    assert_eq!(push(&server, SESSION, SESSION, &json!({"type": "ping", "n": 1})).await["delivery"], "queued");
    assert_eq!(push(&server, SESSION, SESSION, &json!({"type": "ping", "n": 2})).await["delivery"], "queued");
    let mut ws = connect(&server, SESSION).await;
    assert_eq!(serde_json::from_str::<Value>(&next_text(&mut ws).await).unwrap()["n"], 1);
    assert_eq!(serde_json::from_str::<Value>(&next_text(&mut ws).await).unwrap()["n"], 2);
    // Connected: delivered, and it arrives.
    let connected =
        send(server.addr, &Call::get(&format!("/peer/p/connected/{SESSION}")).session(SESSION)).await.unwrap();
    assert_eq!(connected.json()["connected"], true);
    assert_eq!(
        push(&server, SESSION, SESSION, &json!({"type": "new_message", "eventId": "x"})).await["delivery"],
        "delivered"
    );
    assert_eq!(serde_json::from_str::<Value>(&next_text(&mut ws).await).unwrap()["eventId"], "x");
    // Not JSON, or too large: error values naming why.
    let bad = send(server.addr, &Call::post_raw(&format!("/peer/p/push/{SESSION}"), b"not json").session(SESSION))
        .await
        .unwrap();
    assert!(bad.text().contains("must be JSON"), "{}", bad.text());
    let big = json!({"type": "x", "pad": "a".repeat(300 << 10)});
    let big = send(
        server.addr,
        &Call::post_raw(&format!("/peer/p/push/{SESSION}"), big.to_string().as_bytes()).session(SESSION),
    )
    .await
    .unwrap();
    assert!(big.text().contains("too-large") && big.text().contains("at most"), "{}", big.text());
    server.stop().await.unwrap();
}

#[tokio::test]
async fn pushing_to_another_session_or_to_all_needs_the_grant() {
    let server = server("", |_| {}).await;
    let denied =
        send(server.addr, &Call::post_raw(&format!("/peer/p/push/{OTHER}"), b"{}").session(SESSION)).await.unwrap();
    assert!(denied.text().contains("denied") && denied.text().contains("push = \\\"any\\\""), "{}", denied.text());
    let denied = send(server.addr, &Call::post_raw("/peer/p/broadcast", b"{}").session(SESSION)).await.unwrap();
    assert!(denied.text().contains("denied") && denied.text().contains("broadcast"), "{}", denied.text());
    server.stop().await.unwrap();

    let server = server_with_push("any").await;
    assert_eq!(push(&server, SESSION, OTHER, &json!({"type": "ping"})).await["delivery"], "queued");
    let denied = send(server.addr, &Call::post_raw("/peer/p/broadcast", b"{}").session(SESSION)).await.unwrap();
    assert!(denied.text().contains("denied"), "\"any\" does not include broadcast: {}", denied.text());
    server.stop().await.unwrap();
}

async fn server_with_push(grant: &str) -> TestServer {
    server(&format!("[grants]\npush = \"{grant}\""), |_| {}).await
}

#[tokio::test]
async fn broadcast_reaches_fifty_sockets() {
    let server = server_with_push("broadcast").await;
    let mut sockets = Vec::new();
    for n in 0..50 {
        sockets.push(connect(&server, &session(n + 1)).await);
    }
    let reply =
        send(server.addr, &Call::post_raw("/peer/p/broadcast", br#"{"type":"ping","eventId":"all"}"#).session(SESSION))
            .await
            .unwrap();
    assert_eq!(reply.json()["reached"], 50, "{}", reply.text());
    for ws in &mut sockets {
        assert_eq!(serde_json::from_str::<Value>(&next_text(ws).await).unwrap()["eventId"], "all");
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_newer_socket_replaces_the_older_which_gets_a_close_frame() {
    let server = server("", |_| {}).await;
    let mut older = connect(&server, SESSION).await;
    let mut newer = connect(&server, SESSION).await;
    assert_eq!(close_code(&mut older, Duration::from_secs(5)).await, 1000);
    assert_eq!(push(&server, SESSION, SESSION, &json!({"to": "newer"})).await["delivery"], "delivered");
    assert_eq!(serde_json::from_str::<Value>(&next_text(&mut newer).await).unwrap()["to"], "newer");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_server_answers_pings_pings_a_quiet_socket_and_closes_one_that_never_answers() {
    let server = server("", |c| {
        c.realtime.ping_idle = Duration::from_millis(300);
        c.realtime.pong_wait = Duration::from_millis(300);
    })
    .await;
    // Our ping is answered with its payload.
    let mut ws = connect(&server, SESSION).await;
    ws.send(Message::Ping(b"hi"[..].into())).await.unwrap();
    let pong = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Pong(data))) => return data,
                Some(Ok(_)) => {}
                other => panic!("the socket ended before the pong: {other:?}"),
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(&pong[..], b"hi");
    // Quiet: the server pings; tungstenite answers it while we read, so the socket stays open.
    let next = tokio::time::timeout(Duration::from_secs(5), ws.next()).await.expect("the server pings a quiet socket");
    assert!(matches!(next, Some(Ok(Message::Ping(_)))), "expected the server's ping, got {next:?}");
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(server.app.notifier_connected(SESSION), "a socket that answers pings stays open");

    // A client that completes the handshake and then never answers: closed after idle + pong wait.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "GET /notifierServer/getwebsocket/{OTHER} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{GOOD}\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    // It reads (so the close can reach it) but never writes a pong: the stream ends within bounds.
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all)).await.expect("closed in time").unwrap();
    assert!(String::from_utf8_lossy(&all).starts_with("HTTP/1.1 101"));
    assert!(!server.app.notifier_connected(OTHER));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_poll_answers_what_is_queued_or_a_ping_when_nothing_came() {
    let server = server("", |c| c.realtime.poll_wait = Duration::from_millis(300)).await;
    let poll = Call::get(&format!("/notifierServer/get/{SESSION}?last_id=0"));
    let empty = send(server.addr, &poll).await.unwrap();
    assert_eq!(empty.status, 200);
    assert_eq!(empty.json(), json!({"type": "ping", "eventId": "ping"}));
    push(&server, SESSION, SESSION, &json!({"n": 1})).await;
    push(&server, SESSION, SESSION, &json!({"n": 2})).await;
    let got = send(server.addr, &poll).await.unwrap();
    assert_eq!(got.text(), "{\"n\":1}\n{\"n\":2}", "one message a line, oldest first");
    // A push while a poll waits ends the wait.
    let waiting = tokio::spawn({
        let (addr, poll) = (server.addr, poll.clone());
        async move { send(addr, &poll).await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    push(&server, SESSION, SESSION, &json!({"n": 3})).await;
    assert_eq!(waiting.await.unwrap().json(), json!({"n": 3}));
    let bad = send(server.addr, &Call::get("/notifierServer/get/xyz")).await.unwrap();
    assert_eq!(bad.status, 400);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_queue_keeps_its_newest_messages_and_counts_the_dropped() {
    let server = server("", |c| c.realtime.queue_messages = 4).await;
    for n in 0..10 {
        push(&server, SESSION, SESSION, &json!({"n": n})).await;
    }
    let status = send(server.addr, &Call::get("/modhost/status")).await.unwrap().json();
    let notifier = &status["notifier"];
    assert_eq!(notifier["dropped"], 6, "{notifier}");
    // A session is shown by its first digits only: a whole id would let any reader act as its player.
    let queued = notifier["sessions"].as_array().unwrap().iter().find(|s| s["session_prefix"] == SESSION[..6]).unwrap();
    assert_eq!((queued["queued"].clone(), queued["dropped"].clone()), (json!(4), json!(6)));
    let metrics = send(server.addr, &Call::get("/metrics")).await.unwrap().text();
    assert!(metrics.contains("modhost_notifier_messages_total{outcome=\"dropped\"} 6"), "{metrics}");
    let mut ws = connect(&server, SESSION).await;
    for n in 6..10 {
        assert_eq!(serde_json::from_str::<Value>(&next_text(&mut ws).await).unwrap()["n"], n);
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_client_that_never_reads_is_closed_and_holds_no_more_than_its_outbox() {
    let server = server("", |c| c.http.write_stall = Duration::from_secs(2)).await;
    // Handshake by hand, then never read again.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "GET /notifierServer/getwebsocket/{SESSION} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{GOOD}\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(server.app.notifier_connected(SESSION));
    // 64 KiB messages until the pushes are queued instead: the socket was given up on.
    let message = json!({"type": "x", "pad": "a".repeat(64 << 10)});
    let mut delivered = 0;
    let mut queued = false;
    for _ in 0..2000 {
        match push(&server, SESSION, SESSION, &message).await["delivery"].as_str() {
            Some("delivered") => delivered += 1,
            _ => {
                queued = true;
                break;
            }
        }
    }
    assert!(queued, "pushes to a client that never reads must stop being delivered ({delivered} were)");
    eprintln!("a client that never reads took {delivered} messages of 64 KiB before it was closed");
    // What was taken before: the kernel's buffers (a few MiB on loopback) plus the 1 MiB outbox.
    assert!(delivered * 64 < 16 << 10, "{delivered} messages of 64 KiB were taken by a socket nobody reads");
    assert!(!server.app.notifier_connected(SESSION));
    // The server still serves.
    assert_eq!(send(server.addr, &Call::get("/modhost/status")).await.unwrap().status, 200);
    drop(stream);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_thousand_idle_sockets_leave_ordinary_requests_served() {
    let server = server_with_push("any").await;
    let mut sockets = Vec::new();
    for n in 0..1000 {
        sockets.push(connect(&server, &session(n + 1)).await);
    }
    for _ in 0..50 {
        let reply = send(server.addr, &Call::get("/peer/p/echo").session(SESSION)).await.unwrap();
        assert_eq!(reply.status, 200);
    }
    assert_eq!(server.app.notifier_sockets(), 1000);
    // Each one still works.
    assert_eq!(push(&server, SESSION, &session(500), &json!({"n": 500})).await["delivery"], "delivered");
    assert_eq!(serde_json::from_str::<Value>(&next_text(&mut sockets[499]).await).unwrap()["n"], 500);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_stopping_server_closes_its_sockets_with_going_away() {
    let server = server("", |_| {}).await;
    let mut ws = connect(&server, SESSION).await;
    let stopping = tokio::spawn(server.stop());
    assert_eq!(close_code(&mut ws, Duration::from_secs(5)).await, 1001);
    stopping.await.unwrap().unwrap();
}

#[tokio::test]
async fn the_game_answers_the_notifier_channel_and_pushes_a_message_when_a_gift_arrives() {
    let server = super::together::welcome_pack_server(guests::WELCOME_PACK).await;
    let channel =
        send(server.addr, &Call::post("/client/notifier/channel/create", b"{}").session(SESSION)).await.unwrap();
    let data = &channel.json()["data"];
    // The addresses are the request's `Host` (the harness sends `127.0.0.1`, without the port).
    assert_eq!(data["channel_id"], SESSION, "{data}");
    assert_eq!(data["ws"], format!("ws://127.0.0.1/notifierServer/getwebsocket/{SESSION}"), "{data}");
    assert_eq!(data["notifierServer"], format!("http://127.0.0.1/notifierServer/get/{SESSION}"), "{data}");
    // The client opens the socket the channel names; the welcome gift then arrives as a chat message.
    let mut ws = connect(&server, SESSION).await;
    let create = br#"{"nickname": "Newcomer", "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}"#;
    let reply = send(server.addr, &Call::post("/client/game/profile/create", create).session(SESSION)).await.unwrap();
    assert_eq!(reply.json()["err"], 0, "{}", reply.text());
    let note: Value = serde_json::from_str(&next_text(&mut ws).await).unwrap();
    assert_eq!(note["type"], "new_message", "{note}");
    assert_eq!(note["message"]["type"], 7, "SPT's SYSTEM_MESSAGE: {note}");
    assert!(note["message"]["text"].as_str().unwrap().contains("5449016a4bdc2d6f028b456f"), "{note}");
    assert_eq!(note["eventId"], note["message"]["_id"]);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_open_socket_holds_its_connection_slot_until_it_closes() {
    const CAP: usize = 8;
    let server = server("", |c| c.max_connections = CAP).await;
    let mut sockets = Vec::new();
    for n in 0..CAP {
        sockets.push(connect(&server, &session(n + 1)).await);
    }
    // Every slot is a socket now: the next connection is closed at once, before any byte.
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(2), extra.read(&mut buf)).await.expect("closed in time");
    assert!(matches!(read, Ok(0) | Err(_)), "a connection past the cap was served: {read:?}");
    // One socket closes: its slot is free again.
    let mut one = sockets.pop().unwrap();
    one.close(None).await.unwrap();
    drop(one);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(reply) = send(server.addr, &Call::get("/peer/p/echo").session(SESSION)).await
            && reply.status == 200
        {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the closed socket's slot never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await.unwrap();
}
