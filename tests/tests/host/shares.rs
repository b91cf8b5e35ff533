//! Issue 29, item 8: the pools every mod shares (the notifier's queues, instances, timer firings,
//! guest memory) each give a mod a share of its own, so one mod's load waits on its own share and
//! the other mods are served meanwhile. Each test has a grant-less mod hold all of its share and
//! checks that another mod is still served, over the wire.

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use serde_json::{Value, json};

/// The peer fixture (`tests/fixtures/peer`) as `id`, answering under `/peer/<id>/`, with `config`
/// merged over `{"name": id}` and no grants.
fn peer(builder: TestServerBuilder, id: &str, config: Value) -> TestServerBuilder {
    let dir = builder.root().join("mods").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let mut full = json!({"name": id});
    full.as_object_mut().unwrap().extend(config.as_object().unwrap().clone());
    std::fs::write(dir.join("config.default.json"), full.to_string()).unwrap();
    builder.with_mod(id, guests::PEER, "")
}

/// Starts `builder` with the player's `modhost.toml` holding `toml`; every mod must load.
async fn start(builder: TestServerBuilder, toml: &str) -> TestServer {
    std::fs::write(builder.root().join("modhost.toml"), toml).unwrap();
    let server = builder.start().await.unwrap();
    assert!(server.report.failed.is_empty(), "left out: {:?}", server.report.failed);
    server
}

/// Session `n`: made up by the client, as any session a request carries can be.
fn session(n: usize) -> String {
    format!("{n:024x}")
}

/// Mod `id` pushes `message` to the session of the request, which is `to`: its JSON answer.
async fn push_own(server: &TestServer, id: &str, to: &str, message: &str) -> Value {
    let call = Call::post_raw(&format!("/peer/{id}/push/{to}"), message.as_bytes()).session(to);
    let reply = send(server.addr, &call).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json()
}

#[tokio::test]
async fn a_mods_pushes_to_sessions_it_made_up_fill_its_own_share_of_the_queues_not_the_servers() {
    // The issue's attack: a grant-less mod pushes 255 KB messages to each session a client makes up
    // (any mod may push to the session of the request it handles), none of which ever connects.
    let builder = peer(peer(TestServer::builder(), "hog", json!({})), "other", json!({}));
    let server = start(builder, "[mods.hog]\npush_queue_mib = 1\n").await;
    let big = format!("\"{}\"", "x".repeat(255_000));
    let mut queued = 0;
    let mut refusal = None;
    for n in 0..40 {
        let answer = push_own(&server, "hog", &session(1000 + n), &big).await;
        match answer.get("delivery") {
            Some(delivery) => {
                assert_eq!(delivery, "queued", "{answer}");
                queued += 1;
            }
            None => {
                refusal = Some(answer);
                break;
            }
        }
    }
    let refusal = refusal.unwrap_or_else(|| panic!("40 pushes of 255 KB to made-up sessions were all queued"));
    assert_eq!(queued, 4, "1 MiB holds four messages of 255 KB");
    assert_eq!(refusal["error"]["kind"], "too-large", "{refusal}");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("mod hog:") && message.contains("push_queue_mib"), "{message}");

    // While the hog holds all of its share, another mod's push to its player is queued, and the
    // player's poll gets it; the hog's first message is still there for its session too.
    let answer = push_own(&server, "other", &session(1), r#"{"type":"hello"}"#).await;
    assert_eq!(answer["delivery"], "queued", "{answer}");
    let poll = send(server.addr, &Call::get(&format!("/notifierServer/get/{}", session(1)))).await.unwrap();
    assert_eq!(poll.text(), r#"{"type":"hello"}"#);
    let poll = send(server.addr, &Call::get(&format!("/notifierServer/get/{}", session(1000)))).await.unwrap();
    assert_eq!(poll.body().len(), big.len(), "what the hog queued first was not dropped");
    // The poll gave that message's bytes back to the hog's share: one more push fits.
    assert_eq!(push_own(&server, "hog", &session(2000), &big).await["delivery"], "queued");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_chain_that_re_enters_its_own_mod_does_not_wait_for_the_share_it_holds() {
    // a handles `emit/a.t1`; b hears a.t1 and emits b.t2; a hears b.t2: the chain re-enters a, whose share
    // is one instance, held by the chain's own first call. No grants: each emits its own topics.
    let a = json!({"subscriptions": ["b.t2"], "discard_events": true});
    let b = json!({"subscriptions": ["a.t1"], "then_emit": {"a.t1": "b.t2"}});
    let builder = peer(peer(TestServer::builder(), "a", a), "b", b);
    let server = start(builder, "[mods.a]\ninstances = 1\ncall_timeout_ms = 3000\n").await;
    let started = std::time::Instant::now();
    let reply = send(server.addr, &Call::post_raw("/peer/a/emit/a.t1", b"{}")).await.unwrap();
    let took = started.elapsed();
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json(), json!({"by": "a", "count": 1}));
    assert!(took < std::time::Duration::from_millis(1500), "the re-entry waited: {took:?}");
    let heard = send(server.addr, &Call::get("/peer/b/events")).await.unwrap().json();
    assert_eq!(
        heard[0]["then_emit"],
        json!({"topic": "b.t2", "count": 1}),
        "a heard b's b.t2 inside the chain: {heard}"
    );

    // Eight at once on a share of one: each chain's own call waits for the share, as any request
    // does, and its re-entry never waits on it (a wait would end only at the deadline, 500).
    let started = std::time::Instant::now();
    let emit = Call::post_raw("/peer/a/emit/a.t1", b"{}");
    let calls = (0..8).map(|_| send(server.addr, &emit));
    for reply in futures_util::future::join_all(calls).await {
        let reply = reply.unwrap();
        assert_eq!((reply.status, reply.json()), (200, json!({"by": "a", "count": 1})));
    }
    assert!(started.elapsed() < std::time::Duration::from_millis(2500), "{:?}", started.elapsed());
    let generation = server.app.generation();
    let a = generation.mods.iter().find(|m| m.id() == "a").unwrap();
    assert_eq!(a.quarantined(), None);
    server.stop().await.unwrap();
}

/// The timer fixture (`tests/fixtures/timer`) as `id`, its routes under `base`.
fn timer_mod(builder: TestServerBuilder, id: &str, base: &str) -> TestServerBuilder {
    let dir = builder.root().join("mods").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), json!({"base": base}).to_string()).unwrap();
    builder.with_mod(id, guests::TIMER, "")
}

async fn get(server: &TestServer, path: &str) -> Value {
    let reply = send(server.addr, &Call::get(path)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.json()
}

async fn count(server: &TestServer, path: &str) -> usize {
    get(server, path).await.as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn a_mods_spinning_timers_fill_its_own_share_of_the_firings_and_another_mods_timer_fires_meanwhile() {
    // The server fires four timers at once; the hog may fire two of them. It schedules four timers
    // that spin 3 s each; before shares it took all four and the other mod's timer waited 3 s.
    let builder = timer_mod(timer_mod(TestServer::builder(), "hog", "/timer/"), "other", "/other-timer/");
    let builder = builder.config(|c| c.realtime.timer_firings = 4);
    let server = start(builder, "[mods.hog]\ntimer_firings = 2\n").await;
    let spin = json!({"name": "spin", "delay_ms": 0, "payload": "{\"spin_ms\": 3000}", "count": 4});
    let reply = send(server.addr, &Call::post_raw("/timer/schedule", spin.to_string().as_bytes())).await.unwrap();
    assert_eq!(reply.json()["ids"].as_array().map(Vec::len), Some(4), "{}", reply.text());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count(&server, "/timer/started").await < 2 {
        assert!(std::time::Instant::now() < deadline, "the hog's spins did not start");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let note = json!({"name": "note", "delay_ms": 0});
    let reply = send(server.addr, &Call::post_raw("/other-timer/schedule", note.to_string().as_bytes())).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    while count(&server, "/other-timer/fired").await == 0 {
        assert!(std::time::Instant::now() < deadline, "the other mod's timer did not fire");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // It fired while the hog's first two still spun, and the hog never ran more than its two.
    assert_eq!(count(&server, "/timer/fired").await, 0, "the other mod's timer waited for the hog's");
    assert_eq!(count(&server, "/timer/started").await, 2, "the hog ran more than its share at once");
    server.stop().await.unwrap();
}

/// The median of `n` requests to `/hello/item`, one after the other, in ms.
async fn hello_median(server: &TestServer, n: usize) -> f64 {
    let mut took = Vec::with_capacity(n);
    for _ in 0..n {
        let started = std::time::Instant::now();
        let reply = send(server.addr, &Call::get("/hello/item")).await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        took.push(started.elapsed().as_secs_f64() * 1e3);
    }
    took.sort_by(f64::total_cmp);
    took[n / 2]
}

/// One mod spinning 16 calls at once beside another mod's requests, with the spinning mod's share
/// of the cores `cpu_share`: the other mod's median latency quiet and during the spin, in ms.
async fn spin_beside_hello(cpu_share: u32) -> (f64, f64) {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "").with_mod("hello", guests::HELLO, "");
    let toml = format!("[mods.fx]\ncall_timeout_ms = 3000\ncpu_share = {cpu_share}\n");
    let server = start(builder, &toml).await;
    let quiet = hello_median(&server, 30).await;
    let addr = server.addr;
    let spins: Vec<_> =
        (0..16).map(|_| tokio::spawn(async move { send(addr, &Call::get("/fx/loop")).await })).collect();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let busy = hello_median(&server, 30).await;
    assert!(spins.iter().all(|s| !s.is_finished()), "the spins ended before the other mod's requests did");
    for spin in spins {
        assert_eq!(spin.await.unwrap().unwrap().status, 500, "a loop is stopped at its deadline");
    }
    server.stop().await.unwrap();
    (quiet, busy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mods_spinning_calls_get_its_share_of_the_cores_and_another_mods_requests_are_served_meanwhile() {
    // Sixteen calls of a grant-less mod loop until their deadline: without a share they were
    // sixteen tasks in the workers' run queues, each running 10 ms between yields, and another
    // mod's request waited behind them. With a share of one core they pause for each other's turns.
    let (quiet, busy) = spin_beside_hello(1).await;
    eprintln!("other mod's median: quiet {quiet:.2} ms, beside 16 spinning calls {busy:.2} ms");
    // A bound of kind, not of noise: the spins unpaced made it 10-100 times the quiet median.
    assert!(busy < quiet * 4.0 + 20.0, "quiet {quiet:.2} ms, beside the spins {busy:.2} ms");
}
