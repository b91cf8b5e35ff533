//! Timers on several hosts sharing one PostgreSQL store (a server of the test's own): every host
//! holds every timer, and each firing is claimed in the store first, so a timer fires once across the
//! cluster; a one-shot scheduled on a host that stops before it is due fires on a live one (the
//! others list the stored one-shots every second). The mod is `tests/fixtures/timer`, which records
//! each firing in its store namespace: shared too, so any host lists the cluster's firings.
//!
//! Every wait polls with a bound on both its count and its time.

use modhost_store_pg::testing::Server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A host on the store at `url` with the timer fixture installed as `tm`, `config` its defaults.
async fn host(url: &str, config: Value) -> TestServer {
    let url = url.to_owned();
    let builder = TestServer::builder().config(move |c| c.store_url = Some(url));
    let dir = builder.root().join("mods").join("tm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), config.to_string()).unwrap();
    builder.with_mod("tm", guests::TIMER, "").start().await.unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as u64
}

/// Schedules `count` one-shots named `note` on `server`, `delay_ms` ahead; answers their ids.
async fn schedule(server: &TestServer, delay_ms: u64, count: usize) -> Vec<String> {
    let ask = json!({"name": "note", "delay_ms": delay_ms, "count": count});
    let reply = send(server.addr, &Call::post_raw("/timer/schedule", ask.to_string().as_bytes())).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    let answer = reply.json();
    let ids: Vec<String> = answer["ids"].as_array().unwrap().iter().map(|i| i.as_str().unwrap().to_owned()).collect();
    assert_eq!(ids.len(), count, "{answer}");
    ids
}

/// Every firing recorded in the store (by any host).
async fn fired(server: &TestServer) -> Vec<Value> {
    let reply = send(server.addr, &Call::get("/timer/fired")).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    reply.json().as_array().cloned().unwrap_or_default()
}

/// Polls `look` every 100 ms until it answers `Some`, at most `within` (and 600 times).
async fn wait_for<T>(what: &str, within: Duration, mut look: impl AsyncFnMut() -> Option<T>) -> T {
    let started = Instant::now();
    for _ in 0..600 {
        if let Some(found) = look().await {
            return found;
        }
        if started.elapsed() > within {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what}: not within {} ms", within.as_millis())
}

/// How many times each one-shot id fired.
fn per_id(firings: &[Value]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for firing in firings {
        if let Some(id) = firing["id"].as_str() {
            *counts.entry(id.to_owned()).or_default() += 1;
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_one_shots_scheduled_across_three_hosts_fire_once_each() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let hosts = [host(&pg.url(), json!({})).await, host(&pg.url(), json!({})).await, host(&pg.url(), json!({})).await];
    // Due 2.5-3.5 s ahead: every host has listed every timer by then, so each host takes each one
    // when it is due, and only the claim keeps it to one firing.
    let mut scheduled = BTreeSet::new();
    for (i, count) in [67, 67, 66].into_iter().enumerate() {
        scheduled.extend(schedule(&hosts[i], 2500 + 500 * i as u64, count).await);
    }
    assert_eq!(scheduled.len(), 200);
    wait_for("200 firings", Duration::from_secs(40), async || {
        (per_id(&fired(&hosts[0]).await).len() >= 200).then_some(())
    })
    .await;
    // Past two more listings and a retry: a second firing would be recorded by now.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let firings = fired(&hosts[1]).await;
    let counts = per_id(&firings);
    assert_eq!(counts.keys().cloned().collect::<BTreeSet<_>>(), scheduled, "each scheduled timer fired");
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n != 1).collect();
    assert!(twice.is_empty(), "{} of 200 fired more than once: {twice:?}", twice.len());
    assert_eq!(firings.len(), 200);
    for host in hosts {
        host.stop().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_shot_whose_host_stopped_before_it_was_due_fires_once_on_another_host() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let (a, b, c) =
        (host(&pg.url(), json!({})).await, host(&pg.url(), json!({})).await, host(&pg.url(), json!({})).await);
    let id = schedule(&a, 3000, 1).await.remove(0);
    let stopped = now_ms();
    a.stop().await.unwrap();
    // Only B and C are left: one of them learned it from the store, and one fires it.
    let firing = wait_for("the firing on a live host", Duration::from_secs(20), async || {
        fired(&b).await.into_iter().find(|f| f["id"] == id.as_str())
    })
    .await;
    assert!(firing["due_ms"].as_u64().unwrap() >= stopped, "due after its host stopped: {firing}");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let count = fired(&c).await.iter().filter(|f| f["id"] == id.as_str()).count();
    assert_eq!(count, 1, "once, not once per live host");
    b.stop().await.unwrap();
    c.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_periodic_timer_on_two_hosts_fires_once_per_period_not_twice() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let every = json!({"every": [{"name": "tick", "every_s": 1}]});
    let (a, b) = (host(&pg.url(), every.clone()).await, host(&pg.url(), every).await);
    let start = now_ms() + 1000;
    let end = start + 4000;
    // Counted on the due times the hosts gave, once one past the window has fired.
    let ticks = wait_for("a tick past the window", Duration::from_secs(20), async || {
        let ticks = fired(&a).await;
        ticks.iter().any(|t| t["due_ms"].as_u64().unwrap() > end).then_some(ticks)
    })
    .await;
    let dues: Vec<u64> =
        ticks.iter().map(|t| t["due_ms"].as_u64().unwrap()).filter(|d| (start..=end).contains(d)).collect();
    let distinct: BTreeSet<u64> = dues.iter().copied().collect();
    assert_eq!(dues.len(), distinct.len(), "a due time fired twice: {dues:?}");
    assert!((3..=5).contains(&distinct.len()), "{} ticks due in 4 s: {dues:?}", distinct.len());
    a.stop().await.unwrap();
    b.stop().await.unwrap();
}
