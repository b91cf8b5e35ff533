use super::fixture_server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use std::time::Duration;

/// Asserts the server still answers normally.
async fn still_serving(server: &TestServer) {
    let reply = send(server.addr, &Call::get("/fx/p/alive")).await.unwrap();
    assert_eq!(reply.json()["rest"], "alive");
}

fn reason(reply: &modhost_tests::Reply) -> String {
    assert_eq!(reply.status, 500, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["err"], "the mod failed");
    assert_eq!(body["mod"], "fx");
    body["reason"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_panicking_mod_is_500_with_its_message_and_the_server_keeps_serving() {
    let server = fixture_server().await;
    for _ in 0..3 {
        let reply = send(server.addr, &Call::get("/fx/trap")).await.unwrap();
        let why = reason(&reply);
        assert!(why.contains("trapped") && why.contains("fixture panic on purpose"), "{why}");
        still_serving(&server).await;
    }
}

#[tokio::test]
async fn a_mod_error_is_500_with_its_reason() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/error")).await.unwrap();
    assert!(reason(&reply).contains("fixture error on purpose"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_mod_is_stopped_at_its_deadline_while_others_are_served() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.limits.call_deadline = Duration::from_millis(1500))
        .start()
        .await
        .unwrap();
    let addr = server.addr;
    // Two loops at once: more than one worker could be pinned if guests did not yield.
    let loops: Vec<_> = (0..2).map(|_| tokio::spawn(async move { send(addr, &Call::get("/fx/loop")).await })).collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    for _ in 0..5 {
        still_serving(&server).await;
    }
    if loops.iter().any(|l| l.is_finished()) {
        let mut ended = Vec::new();
        for l in loops {
            if l.is_finished() {
                ended.push(l.await.unwrap().unwrap().text());
            }
        }
        panic!("the loops ended before the others were served: {ended:?}");
    }
    for l in loops {
        let why = reason(&l.await.unwrap().unwrap());
        assert!(why.contains("deadline of 1500 ms"), "{why}");
    }
    still_serving(&server).await;
}

#[tokio::test]
async fn the_memory_cap_holds() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| (c.engine.memory_bytes, c.limits.memory_bytes) = (32 << 20, 32 << 20))
        .start()
        .await
        .unwrap();
    let reply = send(server.addr, &Call::get("/fx/memory")).await.unwrap();
    let why = reason(&reply);
    // "forcing trap when growing memory to <bytes> bytes": the cap, not wasm32's 4 GiB, stopped it.
    let desired: u64 = why
        .split("growing memory to ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no growth size in {why}"));
    assert!(desired > 32 << 20 && desired <= 34 << 20, "{why}");
    still_serving(&server).await;
}

#[tokio::test]
async fn unbounded_recursion_traps_instead_of_crashing_the_host() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/recurse")).await.unwrap();
    let why = reason(&reply);
    assert!(why.contains("stack"), "{why}");
    still_serving(&server).await;
}

#[tokio::test]
async fn each_request_gets_a_fresh_instance_by_default() {
    let server = fixture_server().await;
    for _ in 0..3 {
        let reply = send(server.addr, &Call::get("/fx/instance")).await.unwrap();
        assert_eq!(reply.json(), 1, "state leaked from an earlier request");
    }
}

/// Memory a request writes past the first 16 MiB (past what the pool keeps resident and resets by
/// dirty pages, so reset by unmapping) and a static in the module's data (a copy-on-write page of
/// its image), under the default engine and each of its levers turned: the next fresh instance, in
/// the same pool slot, sees neither.
#[tokio::test]
async fn a_fresh_instance_sees_nothing_an_earlier_one_wrote_under_every_engine_lever() {
    let levers = std::iter::once(None).chain(modhost::EngineLever::ALL.iter().map(|(_, lever)| Some(*lever)));
    for lever in levers {
        let server = TestServer::builder()
            .with_mod("fx", guests::FIXTURE, "")
            .config(|c| c.engine.lever = lever)
            .start()
            .await
            .unwrap();
        for _ in 0..3 {
            let reply = send(server.addr, &Call::get("/fx/residue/24")).await.unwrap();
            assert_eq!(reply.json(), 0, "{lever:?}: pages written by an earlier request were seen");
            let reply = send(server.addr, &Call::get("/fx/instance")).await.unwrap();
            assert_eq!(reply.json(), 1, "{lever:?}: a static written by an earlier request was seen");
        }
        server.stop().await.unwrap();
    }
    // The check sees a residue when there is one: a reused instance's second call finds every page
    // its first call wrote.
    let server = TestServer::builder().with_mod("fx", guests::FIXTURE, "reuse = 2").start().await.unwrap();
    assert_eq!(send(server.addr, &Call::get("/fx/residue/24")).await.unwrap().json(), 0);
    assert_eq!(send(server.addr, &Call::get("/fx/residue/24")).await.unwrap().json(), 24 * 256);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn reuse_keeps_an_instance_for_at_most_n_calls_and_never_after_a_trap() {
    let server = TestServer::builder().with_mod("fx", guests::FIXTURE, "reuse = 3").start().await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(send(server.addr, &Call::get("/fx/instance")).await.unwrap().json().as_u64().unwrap());
    }
    assert_eq!(seen, [1, 2, 3, 1]);
    // A trapped instance is dropped; the next call starts fresh.
    assert_eq!(send(server.addr, &Call::get("/fx/trap")).await.unwrap().status, 500);
    let next = send(server.addr, &Call::get("/fx/instance")).await.unwrap().json();
    assert_eq!(next, 1, "a trapped instance was reused");
}

#[tokio::test]
async fn a_mod_gets_no_files_sockets_environment_or_arguments() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/fx/escape")).await.unwrap();
    let got = reply.json();
    for what in ["read_file", "list_dir", "write_file", "connect"] {
        assert!(got[what].as_str().unwrap().starts_with("refused"), "{what}: {got}");
    }
    assert_eq!(got["env"], 0, "{got}");
    assert_eq!(got["args"], 0, "{got}");
}

#[tokio::test]
async fn a_mod_waiting_in_wasi_is_stopped_at_its_deadline_too() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.limits.call_deadline = Duration::from_millis(400))
        .start()
        .await
        .unwrap();
    // A sleep waits in a WASI host call, where no epoch check runs.
    let reply = send(server.addr, &Call::get("/fx/sleep/5000")).await.unwrap();
    assert!(reason(&reply).contains("deadline of 400 ms"), "{}", reply.text());
    still_serving(&server).await;
}

#[tokio::test]
async fn an_answer_over_the_response_limit_is_500() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.limits.response_bytes = 1 << 20)
        .start()
        .await
        .unwrap();
    assert_eq!(send(server.addr, &Call::get("/fx/big/1000000")).await.unwrap().status, 200);
    let reply = send(server.addr, &Call::get("/fx/big/2000000")).await.unwrap();
    assert_eq!(reply.status, 500);
    assert!(reply.json()["reason"].as_str().unwrap().contains("over the limit"), "{}", reply.text());
}
