//! Hostile mods: each attack is stopped with a clear answer, the process never aborts, a mod that
//! keeps breaking is quarantined, and the player's per-mod limits hold. (Another mod's latency while
//! the attacks run is measured alone, in `tests/isolation.rs`.)

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use std::time::{Duration, Instant};

use super::two_mods;

/// Each attack and what its answer must say (`tests/isolation.rs` runs the same list).
pub(crate) const ATTACKS: [(&str, &[u8], u16, &str); 9] = [
    ("/fx/loop", b"", 500, "deadline"),
    ("/fx/memory", b"", 500, "trapped"),
    ("/fx/recurse", b"", 500, "trapped"),
    ("/fx/big/1073741824", b"", 500, "trapped"),
    ("/fx/flood", b"", 500, "deadline"),
    ("/fx/bad-utf8", b"", 500, "utf-8"),
    ("/fx/trap", b"", 500, "fixture panic on purpose"),
    ("/fx/patch-at/fx", b"{not json", 200, "invalid"),
    ("/fx/patch-at/templates", b"{\"x\":1}", 200, "denied"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_attack_is_stopped_with_a_clear_answer_and_the_server_keeps_serving() {
    let server = two_mods("[mods.fx]\ncall_timeout_ms = 500\nquarantine_after = 0\n", |_| {}).await;
    for (path, body, status, says) in ATTACKS {
        let reply = send(server.addr, &Call::post_raw(path, body)).await.unwrap();
        let text = reply.text().to_lowercase();
        assert_eq!(reply.status, status, "{path}: {text}");
        assert!(text.contains(&says.to_lowercase()), "{path} does not say `{says}`: {text}");
        let hello = send(server.addr, &Call::get("/hello/item")).await.unwrap();
        assert_eq!(hello.status, 200, "after {path}: {}", hello.text());
    }
    assert!(!String::from_utf8_lossy(&server.app.generation().db.get("templates").unwrap()).contains("\"x\":1"));
}

#[tokio::test]
async fn a_looping_init_is_stopped_and_only_that_mod_is_left_out() {
    let builder = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .with_mod("hello", guests::HELLO, "")
        .db_json(r#"{"fx": {"init_loop": true}, "templates": {"items": {}}}"#);
    std::fs::write(builder.root().join("modhost.toml"), "[mods.fx]\ninit_timeout_ms = 300\n").unwrap();
    let server = builder.start().await.unwrap();
    let modhost::LeftOut { id, reason: why } = &server.report.failed[0];
    assert_eq!(id, "fx");
    assert!(why.contains("deadline of 300 ms"), "{why}");
    assert_eq!(server.report.loaded.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["hello"]);
}

#[tokio::test]
async fn a_mod_that_keeps_trapping_is_quarantined_and_the_others_serve_on() {
    let server = two_mods("[mods.fx]\nquarantine_after = 3\n", |_| {}).await;
    for _ in 0..3 {
        assert_eq!(send(server.addr, &Call::get("/fx/trap")).await.unwrap().status, 500);
    }
    for path in ["/fx/trap", "/fx/p/anything"] {
        let reply = send(server.addr, &Call::get(path)).await.unwrap();
        assert_eq!(reply.status, 503, "{path}: {}", reply.text());
        let text = reply.text();
        assert!(text.contains("quarantined") && text.contains("3 calls in a row"), "{text}");
    }
    assert_eq!(send(server.addr, &Call::get("/hello/item")).await.unwrap().status, 200);
}

#[tokio::test]
async fn an_error_value_or_a_success_resets_the_count() {
    let server = two_mods("[mods.fx]\nquarantine_after = 2\n", |_| {}).await;
    for _ in 0..3 {
        assert_eq!(send(server.addr, &Call::get("/fx/trap")).await.unwrap().status, 500);
        assert_eq!(send(server.addr, &Call::get("/fx/p/ok")).await.unwrap().status, 200);
    }
    assert_eq!(send(server.addr, &Call::get("/fx/error")).await.unwrap().status, 500, "a mod's error is no strike");
    assert_eq!(send(server.addr, &Call::get("/fx/trap")).await.unwrap().status, 500);
    assert_eq!(send(server.addr, &Call::get("/fx/p/ok")).await.unwrap().status, 200);
}

#[tokio::test]
async fn the_players_limits_for_one_mod_hold_and_the_others_keep_theirs() {
    let toml = "[mods.fx]\ncall_timeout_ms = 200\nmemory_mib = 16\nresponse_mib = 1\n";
    let server = two_mods(toml, |_| {}).await;
    let started = Instant::now();
    let reply = send(server.addr, &Call::get("/fx/loop")).await.unwrap();
    assert_eq!(reply.status, 500);
    assert!(reply.text().contains("deadline of 200 ms"), "{}", reply.text());
    assert!(started.elapsed() < Duration::from_secs(3), "stopped at its own deadline, not the default 5 s");
    let reply = send(server.addr, &Call::get("/fx/big/2000000")).await.unwrap();
    assert_eq!(reply.status, 500);
    assert!(reply.text().contains("over the limit of 1048576 bytes"), "{}", reply.text());
    assert_eq!(send(server.addr, &Call::get("/fx/big/1000000")).await.unwrap().status, 200);
    // 16 MiB of memory: 20 MiB of answer cannot even be built.
    let reply = send(server.addr, &Call::get("/fx/big/20000000")).await.unwrap();
    assert!(reply.status == 500 && reply.text().contains("trapped"), "{}", reply.text());
    let hello = server.app.generation().routes.find("/hello/item").unwrap().value.limits().clone();
    assert_eq!((hello.memory_bytes, hello.call_deadline), (128 << 20, Duration::from_secs(5)));
}

#[tokio::test]
async fn a_bad_players_file_stops_the_boot_saying_what_and_where() {
    let builder = TestServer::builder();
    std::fs::write(builder.root().join("modhost.toml"), "[mods.fx]\nmemory_mb = 3\n").unwrap();
    let Err(e) = builder.start().await else { panic!("a bad modhost.toml must stop the boot") };
    let e = format!("{e:#}");
    assert!(e.contains("modhost.toml") && e.contains("memory_mb"), "{e}");
}

#[tokio::test]
async fn a_mod_growing_a_table_is_stopped_at_the_table_cap() {
    let wasm = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(wasm.path(), modhost_tests::table_bomb::component().unwrap()).unwrap();
    let builder =
        TestServer::builder().with_mod("tg", wasm.path().to_str().unwrap(), "").with_mod("hello", guests::HELLO, "");
    std::fs::write(builder.root().join("modhost.toml"), "[mods.tg]\ntable_elements = 30000\n").unwrap();
    let server = builder.start().await.unwrap();
    assert!(server.report.failed.is_empty(), "{:?}", server.report.failed);
    let reply = send(server.addr, &Call::get(modhost_tests::table_bomb::ROUTE)).await.unwrap();
    let text = reply.text();
    assert_eq!(reply.status, 500, "{text}");
    // It grows by 10000 from 1: the player's cap of 30000 stops it at 30001, not the engine's end.
    assert!(text.contains("growing table to 30001 elements"), "{text}");
    assert_eq!(send(server.addr, &Call::get("/hello/item")).await.unwrap().status, 200);
}
