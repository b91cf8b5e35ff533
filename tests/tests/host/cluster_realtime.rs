//! The notifier and the game database across hosts on a PostgreSQL store (a server of the test's
//! own): a push on one host reaches a socket on the other; messages for a session with no socket
//! wait in the store for a socket (or a poll) on either host, in order; a broadcast reaches every
//! host's sockets; a mod's runtime db patches are applied by every host in one order, a refused one
//! by none, and a host started later replays them.

use super::notifier::{Ws, next_text, push, pusher, session};
use modhost_store_pg::testing::Server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_tungstenite::connect_async;

async fn pushing_host(url: &str) -> TestServer {
    let url = url.to_owned();
    let builder = pusher(TestServer::builder(), "[grants]\npush = \"broadcast\"").config(move |c| {
        c.store_url = Some(url.clone());
        c.realtime.poll_wait = Duration::from_secs(5);
    });
    let server = builder.start().await.unwrap();
    assert!(server.report.failed.is_empty(), "left out: {:?}", server.report.failed);
    server
}

async fn connect(server: &TestServer, session: &str) -> Ws {
    let url = format!("ws://{}/notifierServer/getwebsocket/{session}", server.addr);
    let (ws, response) = tokio::time::timeout(Duration::from_secs(5), connect_async(url)).await.unwrap().unwrap();
    assert_eq!(response.status(), 101);
    ws
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_push_on_one_host_reaches_a_socket_on_the_other_and_waiting_messages_reach_either() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let (a, b) = (pushing_host(&pg.url()).await, pushing_host(&pg.url()).await);
    let (s1, s2, s3) = (session(1), session(2), session(3));

    // s1's socket is on b; a's mod pushes to it: not on a, so through the store, and b delivers it.
    let mut on_b = connect(&b, &s1).await;
    assert_eq!(push(&a, &s1, &s1, &json!({"n": 1})).await["delivery"], "queued");
    assert_eq!(next_text(&mut on_b).await, r#"{"n":1}"#);
    // b's own push is delivered at once.
    assert_eq!(push(&b, &s1, &s1, &json!({"n": 2})).await["delivery"], "delivered");
    assert_eq!(next_text(&mut on_b).await, r#"{"n":2}"#);

    // s2 has no socket anywhere: three pushes from both hosts wait in the store, and its socket on
    // b gets them in order, once.
    for (n, host) in [(1, &a), (2, &b), (3, &a)] {
        assert_eq!(push(host, &s1, &s2, &json!({"m": n})).await["delivery"], "queued");
    }
    let mut s2_on_b = connect(&b, &s2).await;
    for n in 1..=3 {
        assert_eq!(next_text(&mut s2_on_b).await, format!("{{\"m\":{n}}}"));
    }
    drop(s2_on_b);
    // Once b has seen that socket close (a push to a closing socket is lost, on one host as on two).
    let deadline = Instant::now() + Duration::from_secs(5);
    while b.app.notifier_connected(&s2) {
        assert!(Instant::now() < deadline, "b still holds s2's closed socket");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A reconnect to the other host gets what came meanwhile, and nothing again.
    push(&b, &s1, &s2, &json!({"m": 4})).await;
    let mut s2_on_a = connect(&a, &s2).await;
    assert_eq!(next_text(&mut s2_on_a).await, r#"{"m":4}"#);

    // A poll on a answers what b's mod pushed, waiting or already there.
    let poll = Call::get(&format!("/notifierServer/get/{s3}?last_id=0"));
    push(&b, &s1, &s3, &json!({"p": 1})).await;
    assert_eq!(send(a.addr, &poll).await.unwrap().text(), r#"{"p":1}"#);
    let waiting = tokio::spawn({
        let (addr, poll) = (a.addr, poll.clone());
        async move { send(addr, &poll).await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    push(&b, &s1, &s3, &json!({"p": 2})).await;
    assert_eq!(waiting.await.unwrap().text(), r#"{"p":2}"#);

    // A broadcast from a reaches the sockets of both hosts.
    let sent = send(a.addr, &Call::post_raw("/peer/p/broadcast", br#"{"all":1}"#).session(&s1)).await.unwrap();
    assert_eq!(sent.json()["reached"], 1, "{}", sent.text());
    assert_eq!(next_text(&mut s2_on_a).await, r#"{"all":1}"#);
    assert_eq!(next_text(&mut on_b).await, r#"{"all":1}"#);
}

async fn patching_host(url: &str) -> TestServer {
    let url = url.to_owned();
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "[grants]\ndb_write = [\"fx\"]")
        .config(move |c| c.store_url = Some(url.clone()))
        .start()
        .await
        .unwrap();
    assert!(server.report.failed.is_empty(), "left out: {:?}", server.report.failed);
    server
}

/// `fx` patches `path` with `patch` on `host`: its answer (`{"value": null}` or `{"error": …}`).
async fn patch(host: &TestServer, path: &str, patch: &Value) -> Value {
    let call = Call::post_raw(&format!("/fx/patch-at/{path}"), patch.to_string().as_bytes());
    send(host.addr, &call).await.unwrap().json()
}

async fn db_at(host: &TestServer, path: &str) -> Value {
    send(host.addr, &Call::get(&format!("/fx/get/{path}"))).await.unwrap().json()
}

/// Waits (at most 10 s) until every host's `path` is `want`.
async fn all_see(hosts: &[&TestServer], path: &str, want: &Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    for host in hosts {
        loop {
            let seen = db_at(host, path).await;
            if &seen == want {
                break;
            }
            assert!(Instant::now() < deadline, "{} sees {seen}, not {want}", host.addr);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runtime_db_patches_are_applied_by_every_host_in_one_order_and_replayed_by_a_late_one() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let (a, b) = (patching_host(&pg.url()).await, patching_host(&pg.url()).await);
    assert_eq!(patch(&a, "fx.world", &json!({"from": "a", "list": [1]})).await, json!({"value": null}));
    all_see(&[&a, &b], "fx.world", &json!({"from": "a", "list": [1]})).await;

    // 40 patches at once from both hosts, each replacing the list and naming its author: the hosts
    // end on the same value only if they applied them in the same order.
    let patches =
        (0..40).map(|i| {
            let (host, who) = if i % 2 == 0 { (&a, "a") } else { (&b, "b") };
            async move {
                patch(host, "fx.world", &json!({"from": format!("{who}{i}"), "list": [i], format!("k{i}"): i})).await
            }
        });
    for answer in futures_util::future::join_all(patches).await {
        assert_eq!(answer, json!({"value": null}));
    }
    let on_a = db_at(&a, "fx.world").await;
    assert_eq!(on_a.as_object().unwrap().len(), 42, "{on_a}");
    all_see(&[&a, &b], "fx.world", &on_a).await;

    // A patch the db refuses (through a number) is the mod's error, and no host applies any of it.
    let refused = patch(&b, "fx.world.list.x", &json!({"y": 1})).await;
    assert!(refused["error"].as_str().is_some_and(|e| e.contains("fx.world.list")), "{refused}");
    patch(&a, "fx.world", &json!({"after": true})).await;
    let mut want = on_a.clone();
    want["after"] = json!(true);
    all_see(&[&a, &b], "fx.world", &want).await;

    // A host started now replays the log over its own `init`s.
    let c = patching_host(&pg.url()).await;
    all_see(&[&c], "fx.world", &want).await;
    // A reload builds a new db from `db.json` and the `init`s; it replays the log too.
    let reloaded = b.app.reload().await;
    assert!(reloaded.ok, "{reloaded:?}");
    all_see(&[&b], "fx.world", &want).await;
}
