use super::fixture_server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use std::time::Duration;

const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbb";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_on_one_session_are_never_lost() {
    let server = fixture_server().await;
    const N: u64 = 24;
    let tasks: Vec<_> = (0..N)
        .map(|_| {
            let addr = server.addr;
            tokio::spawn(async move { send(addr, &Call::post_raw("/fx/counter", b"").session(A)).await })
        })
        .collect();
    let mut seen = Vec::new();
    for task in tasks {
        let reply = task.await.unwrap().unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        seen.push(reply.json().as_u64().unwrap());
    }
    seen.sort_unstable();
    assert_eq!(seen, (1..=N).collect::<Vec<_>>(), "each increment saw the one before it");
    let stored = server.stop_and_open_store().await.unwrap();
    assert_eq!(stored.store.get("fx", "counter").unwrap().as_deref(), Some(N.to_string().as_bytes()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_request_on_one_session_does_not_delay_another_session() {
    let server = fixture_server().await;
    let addr = server.addr;
    let slow = tokio::spawn(async move { send(addr, &Call::get("/fx/sleep/3000").session(A)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let other = send(addr, &Call::get("/fx/echo").session(B)).await.unwrap();
    assert_eq!(other.status, 200);
    assert!(!slow.is_finished(), "session B was answered only after session A's slow request ended");
    // Without a session there is no lock at all.
    let anonymous = send(addr, &Call::get("/fx/echo")).await.unwrap();
    assert_eq!(anonymous.status, 200);
    assert!(!slow.is_finished());
    assert_eq!(slow.await.unwrap().unwrap().status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_on_a_busy_session_waits_then_times_out_with_503() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.session_lock_timeout = Duration::from_millis(300))
        .start()
        .await
        .unwrap();
    let addr = server.addr;
    let slow = tokio::spawn(async move { send(addr, &Call::get("/fx/sleep/2500").session(A)).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let blocked = send(addr, &Call::get("/fx/echo").session(A)).await.unwrap();
    assert_eq!(blocked.status, 503, "{}", blocked.text());
    assert_eq!(blocked.json()["err"], "another request on this session has not finished");
    assert!(!slow.is_finished());
    assert_eq!(slow.await.unwrap().unwrap().status, 200);
    // The lock was released: the session works again.
    assert_eq!(send(addr, &Call::get("/fx/echo").session(A)).await.unwrap().status, 200);
}
