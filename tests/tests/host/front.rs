//! The HTTP front under odd and hostile clients: framing edge cases with a request pipelined behind
//! each (counting the answers, so no request can be smuggled), the per-connection request cap, and the
//! compressed-body cache.

use super::{FX_GRANTS, fixture_server};
use modhost_tests::client::{Call, Client, send};
use modhost_tests::{TestServer, guests};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `bytes` on a fresh connection and reads until the server closes it or goes quiet; answers the
/// status of every answer received, in order.
async fn statuses(addr: std::net::SocketAddr, bytes: &[u8]) -> Vec<u16> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(bytes).await.unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        match tokio::time::timeout(Duration::from_millis(1500), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&received);
    text.match_indices("HTTP/1.").filter_map(|(i, _)| text.get(i + 9..i + 12)?.parse().ok()).collect()
}

const NEXT: &str = "GET /fx/p/next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

#[tokio::test]
async fn content_length_edge_cases_never_let_a_request_through_the_body() {
    let server = fixture_server().await;
    let cap = 16u64 << 20;
    // (Content-Length header lines, body sent, the answers expected: the pipelined request answered
    // only when the first request's framing was understood and its body fully read.)
    let cases: Vec<(String, Vec<u8>, Vec<u16>)> = vec![
        ("Content-Length: 9223372036854775807".into(), vec![], vec![413]),
        ("Content-Length: 9223372036854775808".into(), vec![], vec![413]),
        ("Content-Length: 18446744073709551616".into(), vec![], vec![400]),
        ("Content-Length: 2147483648".into(), vec![], vec![413]),
        ("Content-Length: 4294967296".into(), vec![], vec![413]),
        (format!("Content-Length: {}", cap + 1), vec![], vec![413]),
        (format!("Content-Length: {cap}"), vec![b' '; cap as usize], vec![200, 200]),
        (format!("Content-Length: {}", cap - 1), vec![b' '; cap as usize - 1], vec![200, 200]),
        ("Content-Length: 12a".into(), vec![], vec![400]),
        ("Content-Length: -1".into(), vec![], vec![400]),
        ("Content-Length: 5\r\nContent-Length: 6".into(), b"hello".to_vec(), vec![400]),
        // Both framings at once is the classic smuggling shape. hyper follows RFC 9112 6.3: chunked
        // wins, Content-Length is dropped, and the connection closes after the answer, so the bytes
        // behind it are never read as a request.
        ("Content-Length: 5\r\nTransfer-Encoding: chunked".into(), b"0\r\n\r\n".to_vec(), vec![200]),
        ("Transfer-Encoding: chunked".into(), b"5\r\nhello\r\n0\r\n\r\n".to_vec(), vec![200, 200]),
        ("Content-Length: 5".into(), b"hello".to_vec(), vec![200, 200]),
    ];
    let mut failures = Vec::new();
    for (headers, body, expected) in cases {
        let mut bytes = format!("POST /fx/p/first HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n\r\n").into_bytes();
        bytes.extend_from_slice(&body);
        bytes.extend_from_slice(NEXT.as_bytes());
        let got = statuses(server.addr, &bytes).await;
        if got != expected {
            failures.push(format!("{headers:?}: expected {expected:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn headers_over_64_kib_are_431() {
    let server = fixture_server().await;
    let small = format!("GET /fx/p/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: {}\r\n\r\n", "a".repeat(60_000));
    assert_eq!(statuses(server.addr, small.as_bytes()).await, [200]);
    let big = format!("GET /fx/p/x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: {}\r\n\r\n{NEXT}", "a".repeat(70_000));
    let got = statuses(server.addr, big.as_bytes()).await;
    assert_eq!(got, [431], "a too-large head is refused, and nothing behind it is read as a request");
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let server = fixture_server().await;
    let mut bytes = Vec::new();
    for i in 0..20 {
        bytes.extend_from_slice(
            format!("GET /fx/p/{i} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n").as_bytes(),
        );
    }
    let mut client = Client::connect(server.addr).await.unwrap();
    client.send_bytes(&bytes).await.unwrap();
    for i in 0..20 {
        let reply = client.read_reply().await.unwrap();
        assert_eq!(reply.json()["rest"], i.to_string());
    }
}

#[tokio::test]
async fn the_512th_request_says_connection_close_and_the_connection_closes() {
    let server = fixture_server().await;
    let mut client = Client::connect(server.addr).await.unwrap();
    for i in 1..=512 {
        let reply = client.send(&Call::get("/fx/p/x")).await.unwrap();
        assert_eq!(reply.status, 200);
        let close = reply.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
        assert_eq!(close, i == 512, "request {i}");
    }
    assert!(
        client.send(&Call::get("/fx/p/x")).await.is_err(),
        "the server kept the connection open after saying close"
    );
}

#[tokio::test]
async fn http10_closes_by_default_and_keep_alive_is_honoured() {
    let server = fixture_server().await;
    let got = statuses(server.addr, format!("GET /fx/p/a HTTP/1.0\r\n\r\n{NEXT}").as_bytes()).await;
    assert_eq!(got, [200], "HTTP/1.0 without keep-alive must close after one answer");
    let got = statuses(
        server.addr,
        format!("GET /fx/p/a HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n{NEXT}").as_bytes(),
    )
    .await;
    assert_eq!(got, [200]);
}

#[tokio::test]
async fn a_cached_answer_is_reused_and_a_patch_can_never_make_it_stale() {
    let server = fixture_server().await;
    let big: serde_json::Map<String, serde_json::Value> =
        (0..2000).map(|i| (format!("k{i}"), serde_json::json!(i))).collect();
    let patch = serde_json::Value::Object(big).to_string();
    assert_eq!(send(server.addr, &Call::post_raw("/fx/patch", patch.as_bytes())).await.unwrap().status, 200);

    let first = send(server.addr, &Call::get("/fx/db/fx.patched")).await.unwrap();
    let second = send(server.addr, &Call::get("/fx/db/fx.patched")).await.unwrap();
    assert_eq!(first.raw, second.raw);
    let (hits, _, entries, _) = server.app.body_cache.stats();
    assert_eq!((hits, entries), (1, 1), "the second answer came from the cache");

    // A patch makes new nodes, so a new key: the next answer shows it, never the cached one.
    send(server.addr, &Call::post_raw("/fx/patch", br#"{"k7":"changed"}"#)).await.unwrap();
    let third = send(server.addr, &Call::get("/fx/db/fx.patched")).await.unwrap();
    assert_eq!(third.json()["k7"], "changed");
    assert_eq!(server.app.body_cache.stats().0, 1, "no stale hit");
    // Identity answers are the same bytes, uncompressed.
    let plain = send(server.addr, &Call::get("/fx/db/fx.patched").identity()).await.unwrap();
    assert_eq!(plain.raw, third.body());
}

/// A fixture server with short HTTP deadlines, so the deadline tests run in seconds.
async fn short_deadline_server() -> modhost_tests::TestServer {
    modhost_tests::TestServer::builder()
        .with_mod("fx", modhost_tests::guests::FIXTURE, "")
        .config(|c| {
            c.http.idle = Duration::from_millis(1000);
            c.http.head = Duration::from_millis(1000);
            c.http.body = Duration::from_millis(1000);
            c.http.write_stall = Duration::from_millis(1000);
        })
        .start()
        .await
        .unwrap()
}

/// Reads until the server closes the connection (EOF or reset), for at most `limit`; answers what was
/// read, or `None` if the connection was still open at the limit.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Vec<u8>> {
    let mut received = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(received),
            Ok(Ok(n)) => received.extend_from_slice(&chunk[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_connections_are_closed_at_their_deadlines_and_never_hold_up_others() {
    let server = short_deadline_server().await;
    let shapes: [(&str, &[u8], bool); 3] = [
        ("silent", b"", false),
        ("half a request line", b"GET /fx/p/x HT", true),
        (
            "a declared body never sent",
            b"POST /fx/p/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n",
            true,
        ),
    ];
    let mut stalled = Vec::new();
    for (name, bytes, _) in &shapes {
        for _ in 0..256 {
            let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
            stream.write_all(bytes).await.unwrap();
            stalled.push((*name, stream));
        }
    }
    let opened = tokio::time::Instant::now();
    // An ordinary request behind 768 stalled connections is answered at once.
    let t = std::time::Instant::now();
    let reply = send(server.addr, &Call::get("/fx/p/ordinary")).await.unwrap();
    assert_eq!(reply.json()["rest"], "ordinary");
    assert!(t.elapsed() < Duration::from_secs(1), "the ordinary request took {:?}", t.elapsed());

    // Every stalled connection is closed within its deadline plus 1 s; those with a request in flight
    // are told 408 first.
    let mut failures = Vec::new();
    for (name, mut stream) in stalled {
        let left = (opened + Duration::from_secs(2)).saturating_duration_since(tokio::time::Instant::now());
        match read_until_closed(&mut stream, left + Duration::from_millis(200)).await {
            None => failures.push(format!("{name}: still open after its deadline plus 1 s")),
            Some(bytes) => {
                let wants_408 = shapes.iter().any(|(n, _, w)| *n == name && *w);
                if wants_408 && !String::from_utf8_lossy(&bytes).starts_with("HTTP/1.1 408") {
                    failures.push(format!("{name}: no 408 ({:?})", String::from_utf8_lossy(&bytes)));
                }
            }
        }
    }
    failures.dedup();
    assert!(failures.is_empty(), "{} failures, e.g. {:?}", failures.len(), &failures[..failures.len().min(5)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_gets_408_at_the_head_deadline() {
    let server = short_deadline_server().await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    // One byte every 150 ms: the head would take 5.5 s; its deadline is 1 s from the first byte.
    for byte in b"GET /fx/p/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".iter().take(10) {
        if stream.write_all(&[*byte]).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let bytes = read_until_closed(&mut stream, Duration::from_secs(3)).await.expect("the server closed the connection");
    assert!(String::from_utf8_lossy(&bytes).starts_with("HTTP/1.1 408"), "{:?}", String::from_utf8_lossy(&bytes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_sending_16_byte_pieces_10_ms_apart_is_answered() {
    let server = short_deadline_server().await;
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = b"POST /fx/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\nContent-Length: 40\r\n\r\n0123456789012345678901234567890123456789";
    for piece in request.chunks(16) {
        stream.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut client = modhost_tests::Client::from_stream(stream);
    let reply = client.read_reply().await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["body"], "0123456789012345678901234567890123456789");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_gets_every_byte_and_a_stopped_reader_is_cut_off() {
    let server = short_deadline_server().await;
    let size = 8 << 20;
    let request = format!("GET /fx/big/{size} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n");

    // Slow: 64 KiB every 15 ms, about 2 s in all, twice the write-stall deadline: never cut off.
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut received = 0usize;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut head_len = None;
    let t = std::time::Instant::now();
    while head_len.is_none_or(|h| received < h + size) && t.elapsed() < Duration::from_secs(30) {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await.unwrap().unwrap();
        assert!(n > 0, "the server closed a slow reader after {received} bytes");
        if head_len.is_none()
            && let Some(end) = chunk[..n].windows(4).position(|w| w == b"\r\n\r\n")
        {
            head_len = Some(end + 4);
        }
        received += n;
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    assert_eq!(received, head_len.unwrap() + size);

    // Stopped: never reads; the answer stops making progress and the connection is closed.
    let mut stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let rest = read_until_closed(&mut stream, Duration::from_secs(5)).await.expect("closed");
    assert!(rest.len() < size, "a reader that stopped still got the whole answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_past_the_cap_is_closed_at_once_and_the_others_keep_working() {
    // The cap is the server's (4096 by default, fewer under a low open-file limit); a small one here
    // shows the same code path without thousands of descriptors.
    const CAP: usize = 256;
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, FX_GRANTS)
        .config(|c| c.max_connections = CAP)
        .start()
        .await
        .expect("starting the fixture server");
    let mut open = Vec::new();
    for _ in 0..CAP {
        open.push(tokio::net::TcpStream::connect(server.addr).await.unwrap());
    }
    // Let the server accept them all.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let t = std::time::Instant::now();
    let closed = read_until_closed(&mut extra, Duration::from_secs(2)).await;
    assert!(closed.is_some_and(|b| b.is_empty()), "connection {} was not closed", CAP + 1);
    eprintln!("connection {} closed after {:?}", CAP + 1, t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    // One of the others still works, and freeing some lets new connections in.
    let mut first = Client::from_stream(open.remove(0));
    assert_eq!(first.send(&Call::get("/fx/p/still")).await.unwrap().status, 200);
    drop(open);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(send(server.addr, &Call::get("/fx/p/again")).await.unwrap().status, 200);
}
