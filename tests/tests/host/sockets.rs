//! Mods' websocket routes (`realtime.declare-realtime` sockets, `host/src/realtime/modsock.rs`), driven
//! by a real websocket client over 127.0.0.1 against the echo fixture (`tests/fixtures/echo`): accept
//! and refusal, echo in order, the handshake's checks, the caps, a mod that traps or spins, closes
//! from either side and what `on-close` hears, ids that only their mod can use, reloads, a stopping
//! server, and two mods claiming one socket route.

use futures_util::{SinkExt as _, StreamExt as _};
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How long any one step waits before the test fails.
const STEP: Duration = Duration::from_secs(10);

/// A builder with the echo fixture installed as `echo` (paths under `/echo`), the player's
/// `modhost.toml` holding `player_toml`.
fn echo_builder(player_toml: &str) -> TestServerBuilder {
    let builder = TestServer::builder().with_mod("echo", guests::ECHO, "");
    std::fs::write(builder.root().join("modhost.toml"), player_toml).expect("writing modhost.toml");
    builder
}

async fn echo_server(player_toml: &str) -> TestServer {
    echo_builder(player_toml).start().await.expect("starting the echo server")
}

/// Opens `path` with the fixture's token (or without it).
async fn open_with(addr: SocketAddr, path: &str, token: bool) -> Result<Ws, WsError> {
    let mut request = format!("ws://{addr}{path}").into_client_request()?;
    if token {
        request.headers_mut().insert("x-token", "letmein".parse().expect("a header value"));
    }
    let (ws, response) = tokio::time::timeout(STEP, tokio_tungstenite::connect_async(request))
        .await
        .map_err(|_| WsError::Io(std::io::Error::other("the upgrade timed out")))??;
    assert_eq!(response.status(), 101);
    Ok(ws)
}

async fn open(addr: SocketAddr, path: &str) -> Ws {
    open_with(addr, path, true).await.expect("the echo fixture accepts a client with its token")
}

/// The next text or binary message (pings and pongs skipped; at most 16).
async fn next(ws: &mut Ws) -> Message {
    for _ in 0..16 {
        let read = tokio::time::timeout(STEP, ws.next()).await.expect("a message in time");
        match read.expect("the socket is open").expect("a readable message") {
            Message::Ping(_) | Message::Pong(_) => continue,
            message => return message,
        }
    }
    panic!("only pings and pongs");
}

/// Reads until the server's close frame: its code and reason (at most 64 messages, in time). Then
/// reads on until the stream ends, which sends the client's answer to the close (tungstenite writes
/// it on the next read), so the server's socket ends now rather than after its wait for it.
async fn closed_with(ws: &mut Ws) -> (u16, String) {
    let deadline = tokio::time::Instant::now() + STEP;
    let mut closed = None;
    for _ in 0..64 {
        let read = tokio::time::timeout_at(deadline, ws.next()).await.expect("a close in time");
        match read {
            Some(Ok(Message::Close(Some(frame)))) => closed = Some((frame.code.into(), frame.reason.to_string())),
            Some(Ok(Message::Close(None))) => closed = Some((1005, String::new())),
            Some(Ok(_)) => continue,
            other => panic!("the socket ended without a close frame: {other:?}"),
        }
        break;
    }
    let closed = closed.expect("no close frame among 64 messages");
    let _ = tokio::time::timeout(Duration::from_secs(2), async { while let Some(Ok(_)) = ws.next().await {} }).await;
    closed
}

/// The connection's id, as the fixture answers `id`.
async fn id_of(ws: &mut Ws) -> String {
    ws.send(Message::text("id")).await.expect("sending `id`");
    match next(ws).await {
        Message::Text(id) => id.to_string(),
        other => panic!("an id as text, got {other:?}"),
    }
}

/// What the fixture's `on-close` stored for `id` (`null` when it was not called).
async fn closed_record(addr: SocketAddr, base: &str, id: &str) -> serde_json::Value {
    let reply = send(addr, &Call::get(&format!("{base}/closed/{id}")).identity()).await.expect("a request");
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

/// Polls `closed_record` until `on-close` has run (bounded: 100 tries, 10 s).
async fn wait_closed_record(addr: SocketAddr, base: &str, id: &str) -> serde_json::Value {
    let started = Instant::now();
    for _ in 0..100 {
        let record = closed_record(addr, base, id).await;
        if !record.is_null() || started.elapsed() > STEP {
            return record;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    serde_json::Value::Null
}

/// An upgrade the server refused: its status and body.
fn refused(result: Result<Ws, WsError>) -> (u16, String) {
    match result {
        Err(WsError::Http(response)) => {
            let body = response.body().as_deref().map(String::from_utf8_lossy).unwrap_or_default().into_owned();
            (response.status().as_u16(), body)
        }
        Err(e) => panic!("an HTTP refusal, got {e}"),
        Ok(_) => panic!("a refusal, got a socket"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mods_socket_route_accepts_and_echoes_text_and_binary_in_order() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    let sent: Vec<Message> = (0..20)
        .map(|i| if i % 2 == 0 { Message::text(format!("text {i}")) } else { Message::binary(vec![i as u8; 100 + i]) })
        .collect();
    for message in &sent {
        ws.send(message.clone()).await.expect("sending");
    }
    for message in &sent {
        assert_eq!(&next(&mut ws).await, message);
    }
    // One at a time: a slow message's answer comes before the next message's, however quick.
    ws.send(Message::text("sleep 300")).await.expect("sending");
    ws.send(Message::text("quick")).await.expect("sending");
    assert_eq!(next(&mut ws).await, Message::text("sleep 300"));
    assert_eq!(next(&mut ws).await, Message::text("quick"));
    let id = id_of(&mut ws).await;
    let (route, secret) = id.split_once('-').expect("an id is <route>-<secret>");
    assert_eq!(route, "0");
    assert!(secret.len() == 32 && secret.bytes().all(|c| c.is_ascii_hexdigit()), "{id}");
    let mut other = open(server.addr, "/echo/ws").await;
    assert_ne!(id_of(&mut other).await, id, "each connection has its own id");
    // The player sees the socket route among what the mod serves.
    let mods = send(server.addr, &Call::get("/modhost/mods")).await.expect("the mods view").json();
    let echo = mods["loaded"].as_array().and_then(|m| m.iter().find(|m| m["id"] == "echo")).cloned();
    assert_eq!(echo.map(|m| m["sockets"].clone()), Some(serde_json::json!(["/echo/ws"])), "{mods}");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_the_mod_refuses_is_its_answer_and_no_socket() {
    let server = echo_server("").await;
    let (status, body) = refused(open_with(server.addr, "/echo/ws", false).await);
    assert_eq!((status, body.as_str()), (403, "no token"));
    // Nothing was opened, and a path no mod declared as a socket route is 404 without a mod call.
    let (status, _) = refused(open_with(server.addr, "/echo/nowhere", true).await);
    assert_eq!(status, 404);
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_handshake_is_400() {
    let server = echo_server("").await;
    let upgrade = || Call::get("/echo/ws").header("Upgrade", "websocket").header("Connection", "Upgrade");
    let no_key = upgrade().header("Sec-WebSocket-Version", "13");
    let reply = send(server.addr, &no_key).await.expect("an answer");
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.text().contains("Sec-WebSocket-Key"), "{}", reply.text());
    let version_12 =
        upgrade().header("Sec-WebSocket-Version", "12").header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==");
    let reply = send(server.addr, &version_12).await.expect("an answer");
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.text().contains("Version: 13"), "{}", reply.text());
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_over_1_mib_closes_the_connection_1009() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    // Just under the cap is echoed, sent as one frame as browsers send it.
    ws.send(Message::binary(vec![7u8; (1 << 20) - 16])).await.expect("sending");
    match next(&mut ws).await {
        Message::Binary(bytes) => assert_eq!(bytes.len(), (1 << 20) - 16),
        other => panic!("the echo, got {other:?}"),
    }
    let _ = ws.send(Message::binary(vec![7u8; (1 << 20) + 1])).await;
    assert_eq!(closed_with(&mut ws).await.0, 1009);
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spinning_message_closes_1011_within_the_deadline_and_the_server_goes_on() {
    let server = echo_server("[mods.echo]\ncall_timeout_ms = 300\nquarantine_after = 0\n").await;
    let mut spinner = open(server.addr, "/echo/ws").await;
    let mut bystander = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut spinner).await;
    let started = Instant::now();
    spinner.send(Message::text("spin")).await.expect("sending");
    let (code, _) = closed_with(&mut spinner).await;
    assert_eq!(code, 1011);
    assert!(started.elapsed() < Duration::from_secs(3), "closed after {:?}", started.elapsed());
    // The mod heard the end of its connection, the other socket still echoes, HTTP still answers.
    assert_eq!(wait_closed_record(server.addr, "/echo", &id).await["code"], 1011);
    bystander.send(Message::text("still here")).await.expect("sending");
    assert_eq!(next(&mut bystander).await, Message::text("still here"));
    let mut fresh = open(server.addr, "/echo/ws").await;
    fresh.send(Message::text("hi")).await.expect("sending");
    assert_eq!(next(&mut fresh).await, Message::text("hi"));
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_message_closes_1011() {
    let server = echo_server("[mods.echo]\nquarantine_after = 0\n").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    ws.send(Message::text("trap")).await.expect("sending");
    assert_eq!(closed_with(&mut ws).await.0, 1011);
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mods_own_close_reaches_the_client_and_on_close_is_not_called() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut ws).await;
    ws.send(Message::text("bye")).await.expect("sending");
    assert_eq!(closed_with(&mut ws).await, (4000, "bye".to_owned()));
    // A connection the client closes afterwards is recorded (so records do get written), and the
    // first stays without one for a second and a half (15 looks, 100 ms apart): its on-close would
    // run as soon as its socket ended, which the close handshake above finished.
    let mut later = open(server.addr, "/echo/ws").await;
    let later_id = id_of(&mut later).await;
    later.close(None).await.expect("closing");
    assert!(!wait_closed_record(server.addr, "/echo", &later_id).await.is_null());
    for _ in 0..15 {
        assert!(closed_record(server.addr, "/echo", &id).await.is_null(), "on-close ran after the mod's own close");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And the id is gone: the mod itself cannot send on it.
    let reply = send(server.addr, &Call::post_raw(&format!("/echo/send/{id}"), b"x").identity()).await.unwrap();
    assert_eq!(reply.json()["error"]["kind"], "not-found", "{}", reply.text());
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_close_is_recorded_with_its_code() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut ws).await;
    let frame = CloseFrame { code: CloseCode::from(4321), reason: "done".into() };
    ws.close(Some(frame)).await.expect("closing");
    let record = wait_closed_record(server.addr, "/echo", &id).await;
    assert_eq!(record, serde_json::json!({"code": 4321, "reason": "done"}));
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_mod_cannot_send_on_or_close_a_mods_connection() {
    let builder = echo_builder("").with_mod("other", guests::ECHO, "");
    let folder = builder.root().join("mods").join("other");
    std::fs::create_dir_all(&folder).expect("the mod folder");
    std::fs::write(folder.join("config.default.json"), r#"{"base": "/other"}"#).expect("its config");
    let server = builder.start().await.expect("starting");
    assert!(server.report.failed.is_empty(), "{:?}", server.report.failed);
    let mut ws = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut ws).await;
    let addr = server.addr;
    let post = |path: String, body: &'static [u8]| async move {
        send(addr, &Call::post_raw(&path, body).identity()).await.expect("a request").json()
    };
    let not_found = post(format!("/other/send/{id}"), b"from the other mod").await;
    assert_eq!(not_found["error"]["kind"], "not-found", "{not_found}");
    let unknown = post("/other/send/0-00000000000000000000000000000000".to_owned(), b"x").await;
    assert_eq!(unknown["error"]["kind"], "not-found", "{unknown}");
    // The same words for another mod's id as for an id that does not exist, but for the id itself.
    let strip = |v: &serde_json::Value, id: &str| v["error"]["message"].as_str().unwrap_or_default().replace(id, "ID");
    assert_eq!(strip(&not_found, &id), strip(&unknown, "0-00000000000000000000000000000000"));
    let close = post(format!("/other/close/{id}"), b"").await;
    assert_eq!(close["error"]["kind"], "not-found", "{close}");
    // The connection is untouched, and its own mod can send on it.
    ws.send(Message::text("after")).await.expect("sending");
    assert_eq!(next(&mut ws).await, Message::text("after"));
    assert_eq!(post(format!("/echo/send/{id}"), b"from its mod").await["ok"], true);
    assert_eq!(next(&mut ws).await, Message::text("from its mod"));
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_per_mod_cap_an_upgrade_is_503() {
    let server = echo_builder("").config(|c| c.realtime.mod_sockets_per_mod = 2).start().await.expect("starting");
    let mut first = open(server.addr, "/echo/ws").await;
    let _second = open(server.addr, "/echo/ws").await;
    let (status, body) = refused(open_with(server.addr, "/echo/ws", true).await);
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("mod echo has 2 websockets open"), "{body}");
    // A closed connection gives its place back (once its task ended: bounded retries).
    first.close(None).await.expect("closing");
    let started = Instant::now();
    let mut reopened = None;
    for _ in 0..50 {
        match open_with(server.addr, "/echo/ws", true).await {
            Ok(ws) => {
                reopened = Some(ws);
                break;
            }
            Err(_) if started.elapsed() < STEP => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => panic!("no place came back: {e}"),
        }
    }
    assert!(reopened.is_some(), "no place came back");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_closes_a_mods_connections_1012_and_the_new_mod_accepts() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut ws).await;
    let call = Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1").identity();
    let reply =
        tokio::time::timeout(Duration::from_secs(60), send(server.addr, &call)).await.expect("in time").unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(closed_with(&mut ws).await.0, 1012);
    assert_eq!(wait_closed_record(server.addr, "/echo", &id).await["code"], 1012);
    let mut fresh = open(server.addr, "/echo/ws").await;
    fresh.send(Message::text("new")).await.expect("sending");
    assert_eq!(next(&mut fresh).await, Message::text("new"));
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_mods_on_one_socket_route_refuse_the_second_naming_both() {
    // Its own base (no route in common), but the socket route of `echo`.
    let builder = echo_builder("").with_mod("copy", guests::ECHO, "");
    let folder = builder.root().join("mods").join("copy");
    std::fs::create_dir_all(&folder).expect("the mod folder");
    std::fs::write(folder.join("config.default.json"), r#"{"base": "/copy", "socket": "/echo/ws"}"#).expect("config");
    let server = builder.start().await.expect("starting");
    let failed = &server.report.failed;
    assert_eq!(failed.len(), 1, "{failed:?}");
    let reason = &failed[0].reason;
    assert!(reason.contains("/echo/ws") && reason.contains("`copy`") && reason.contains("`echo`"), "{reason}");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_server_closes_1001_and_the_mod_hears_it() {
    let server = echo_server("").await;
    let mut ws = open(server.addr, "/echo/ws").await;
    let id = id_of(&mut ws).await;
    let client = tokio::spawn(async move { closed_with(&mut ws).await });
    let stored = server.stop_and_open_store().await.expect("stopping");
    assert_eq!(client.await.expect("the client task").0, 1001);
    let record = stored.store.get("echo", &format!("closed.{id}")).expect("reading the store");
    let record: serde_json::Value =
        serde_json::from_slice(&record.expect("on-close ran before the server stopped")).expect("the record is JSON");
    assert_eq!(record["code"], 1001, "{record}");
}
