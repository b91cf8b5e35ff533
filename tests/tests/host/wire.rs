use super::fixture_server;
use modhost_tests::client::{Call, Client, send, unzlib, zlib};
use modhost_tests::{TestServer, guests};

#[tokio::test]
async fn zlib_both_ways() {
    let server = fixture_server().await;
    let body = br#"{"hello":"zlib"}"#;
    let reply = send(server.addr, &Call::post("/fx/echo", body)).await.unwrap();
    assert_eq!(reply.status, 200);
    // The answer is a zlib stream with no Content-Encoding header, as the SPT client expects.
    assert!(modhost::wire::looks_like_zlib(&reply.raw));
    assert_eq!(reply.header("content-encoding"), None);
    let echoed: serde_json::Value = serde_json::from_slice(&unzlib(&reply.raw).unwrap()).unwrap();
    assert_eq!(echoed["body"], r#"{"hello":"zlib"}"#);
    assert_eq!(echoed["method"], "POST");
}

#[tokio::test]
async fn identity_when_asked_and_not_when_deflate_is_also_accepted() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/echo").identity()).await.unwrap();
    assert!(!modhost::wire::looks_like_zlib(&reply.raw));
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&reply.raw).unwrap()["url"], "/fx/echo");
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let reply = send(server.addr, &Call::get("/fx/echo").header("Accept-Encoding", "identity, deflate")).await.unwrap();
    assert!(modhost::wire::looks_like_zlib(&reply.raw));
}

#[tokio::test]
async fn an_unframed_body_is_passed_through() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::post_raw("/fx/echo", br#"{"plain":true}"#)).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["body"], r#"{"plain":true}"#);
}

#[tokio::test]
async fn a_corrupt_framed_body_is_400() {
    let server = fixture_server().await;
    let mut body = zlib(&[b'x'; 5000]);
    body.truncate(body.len() / 2);
    let reply = send(server.addr, &Call::post_raw("/fx/echo", &body)).await.unwrap();
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.json()["err"].as_str().unwrap().contains("does not inflate"));
    // A valid zlib header followed by garbage.
    let reply =
        send(server.addr, &Call::post_raw("/fx/echo", b"\x78\x9c this is not deflate data at all")).await.unwrap();
    assert_eq!(reply.status, 400, "{}", reply.text());
}

#[tokio::test]
async fn a_bad_session_is_400_before_any_mod_runs() {
    let server = fixture_server().await;
    for bad in ["xyz", "0123456789abcdef0123456", "0123456789abcdef012345678", "0123456789abcdef0123456g"] {
        let reply = send(server.addr, &Call::get("/fx/counter").session(bad)).await.unwrap();
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["err"], "bad session id: it must be exactly 24 hex digits");
        let reply = send(server.addr, &Call::get("/fx/counter").header("sessionid", bad)).await.unwrap();
        assert_eq!(reply.status, 400, "{bad}");
    }
    // The counter mod never ran: its store key was never written.
    assert_eq!(server.stop_and_open_store().await.unwrap().store.get("fx", "counter").unwrap(), None);
}

#[tokio::test]
async fn the_session_comes_from_the_cookie_or_the_header_in_lower_case() {
    let server = fixture_server().await;
    let id = "0123456789ABCDEF01234567";
    let reply = send(server.addr, &Call::get("/fx/echo").session(id)).await.unwrap();
    assert_eq!(reply.json()["session"], id.to_ascii_lowercase());
    let reply = send(server.addr, &Call::get("/fx/echo").header("sessionid", id)).await.unwrap();
    assert_eq!(reply.json()["session"], id.to_ascii_lowercase());
    let reply = send(server.addr, &Call::get("/fx/echo")).await.unwrap();
    assert_eq!(reply.json()["session"], serde_json::Value::Null);
}

#[tokio::test]
async fn an_oversized_body_is_413() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.front.body_bytes = 64 << 10)
        .start()
        .await
        .unwrap();
    let reply = send(server.addr, &Call::post_raw("/fx/echo", &vec![b' '; 65 << 10])).await.unwrap();
    assert_eq!(reply.status, 413);
    // A small zlib body that inflates past the cap is refused too.
    let reply = send(server.addr, &Call::post("/fx/echo", &vec![b' '; 1 << 20])).await.unwrap();
    assert_eq!(reply.status, 413, "{}", reply.text());
}

#[tokio::test]
async fn db_reference_chunks_are_spliced_and_a_missing_one_is_500() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::post_raw("/fx/patch", br#"{"a":{"b":[1,2,3]}}"#)).await.unwrap();
    assert_eq!(reply.json(), serde_json::json!({}));
    let reply = send(server.addr, &Call::get("/fx/db/fx.patched.a")).await.unwrap();
    assert_eq!(reply.json(), serde_json::json!({"b": [1, 2, 3]}));
    let reply = send(server.addr, &Call::get("/fx/db/fx.nothing")).await.unwrap();
    assert_eq!(reply.status, 500);
    assert!(reply.json()["reason"].as_str().unwrap().contains("fx.nothing"), "{}", reply.text());
}

#[tokio::test]
async fn invalid_patches_are_error_values_and_change_nothing() {
    let server = fixture_server().await;
    send(server.addr, &Call::post_raw("/fx/patch", br#"{"keep":1}"#)).await.unwrap();
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    for bad in ["{not json", deep.as_str()] {
        let reply = send(server.addr, &Call::post_raw("/fx/patch", bad.as_bytes())).await.unwrap();
        assert_eq!(reply.status, 200);
        assert!(reply.json()["error"].as_str().unwrap().starts_with("invalid"), "{}", reply.text());
    }
    let reply = send(server.addr, &Call::get("/fx/db/fx.patched")).await.unwrap();
    assert_eq!(reply.json(), serde_json::json!({"keep": 1}));
}

#[tokio::test]
async fn a_mod_may_not_set_framing_headers() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/bad-header")).await.unwrap();
    assert_eq!(reply.status, 500);
    assert!(reply.json()["reason"].as_str().unwrap().contains("content-length"));
}

#[tokio::test]
async fn keep_alive_serves_many_requests_on_one_connection() {
    let server = fixture_server().await;
    let mut client = Client::connect(server.addr).await.unwrap();
    for i in 0..20 {
        let reply = client.send(&Call::get(&format!("/fx/p/{i}"))).await.unwrap();
        assert_eq!(reply.json()["rest"], i.to_string());
    }
    // A big answer (over the inline deflate size) arrives whole.
    let reply = client.send(&Call::get("/fx/big/3000000")).await.unwrap();
    assert_eq!(reply.body().len(), 3_000_000);
}

#[tokio::test]
async fn a_session_header_that_is_not_ascii_is_400_not_absent() {
    let server = fixture_server().await;
    let mut client = Client::connect(server.addr).await.unwrap();
    client
        .send_bytes(
            b"GET /fx/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: PHPSESSID=\xffaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n",
        )
        .await
        .unwrap();
    assert_eq!(client.read_reply().await.unwrap().status, 400);
    let mut client = Client::connect(server.addr).await.unwrap();
    client.send_bytes(b"GET /fx/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nsessionid: \xff\r\n\r\n").await.unwrap();
    assert_eq!(client.read_reply().await.unwrap().status, 400);
}

#[tokio::test]
async fn a_db_reference_answers_the_same_bytes_as_get() {
    let server = fixture_server().await;
    let patch = r#"{"a":{"b":[1,2,3],"c":"x"},"d":1.50}"#;
    assert_eq!(
        send(server.addr, &Call::post_raw("/fx/patch", patch.as_bytes())).await.unwrap().json(),
        serde_json::json!({})
    );
    for path in [
        "templates.items",
        "templates.items.5449016a4bdc2d6f028b456f._props",
        "locales.global.en",
        "fx.patched",
        "fx.patched.a",
        "fx.patched.d",
    ] {
        let by_reference = send(server.addr, &Call::get(&format!("/fx/db/{path}"))).await.unwrap();
        let by_get = send(server.addr, &Call::get(&format!("/fx/get/{path}"))).await.unwrap();
        assert_eq!(by_reference.status, 200, "{path}: {}", by_reference.text());
        assert_eq!(by_reference.body(), by_get.body(), "{path}");
    }
    // The number keeps its text: "1.50", not "1.5".
    assert_eq!(send(server.addr, &Call::get("/fx/db/fx.patched.d")).await.unwrap().text(), "1.50");
}
