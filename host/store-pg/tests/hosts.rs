//! Several hosts on one PostgreSQL store (each a `Store` of its own, with its own cache and
//! connections, as two modhost processes would have): another host's commit is what the next read
//! answers, a stale version is refused by the database, concurrent commits from both are all applied,
//! a quota holds across them, and a restarted server costs a clear error, then nothing.

use modhost_store::{Quota, Quotas, Store, StoreError};
use modhost_store_pg::testing::Server;
use serde_json::Value;
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn two_hosts(server: &Server) -> (Store, Store) {
    let url = server.url();
    (modhost_store_pg::connect(&url).unwrap(), modhost_store_pg::connect(&url).unwrap())
}

#[test]
fn another_hosts_commit_is_what_the_next_read_answers_and_a_stale_version_is_refused() {
    let server = Server::start();
    let (a, b) = two_hosts(&server);
    let v1 = a.set("game", "profile", b"{\"money\":1}").unwrap();
    assert_eq!(b.get("game", "profile").unwrap().unwrap().as_ref(), b"{\"money\":1}");
    // Both hosts have it cached; b commits twice (a whole write and a patch).
    let v2 = b.set("game", "profile", b"{\"money\":2}").unwrap();
    assert_eq!(a.get_versioned("game", "profile").unwrap().unwrap().version, v2);
    let v3 = b.doc_patch("game", "profile", "money", b"3", None).unwrap();
    assert_eq!(a.doc_get("game", "profile", "money").unwrap().unwrap().value.as_ref(), b"3");
    assert_eq!(a.get_versioned("game", "profile").unwrap().unwrap().version, v3);
    // a's old version is refused by the database, for a whole write and for a patch.
    let refused = a.set_if_version("game", "profile", b"{\"money\":99}", Some(v1));
    assert!(matches!(refused, Err(StoreError::Conflict { .. })), "{refused:?}");
    let refused = a.doc_patch("game", "profile", "money", b"99", Some(v2));
    assert!(matches!(refused, Err(StoreError::Conflict { .. })), "{refused:?}");
    assert_eq!(b.doc_get("game", "profile", "money").unwrap().unwrap().value.as_ref(), b"3");
    // A delete on one host is an absence on the other.
    assert!(b.delete("game", "profile").unwrap());
    assert_eq!(a.get("game", "profile").unwrap(), None);
    let refused = a.set_if_version("game", "profile", b"{}", Some(v3));
    assert!(matches!(refused, Err(StoreError::Conflict { .. })), "{refused:?}");
}

#[test]
fn concurrent_commits_from_two_hosts_are_all_applied() {
    let server = Server::start();
    let (a, b) = two_hosts(&server);
    a.set("game", "counter", b"0").unwrap();
    const PER_THREAD: u32 = 25;
    let deadline = Instant::now() + Duration::from_secs(120);
    std::thread::scope(|scope| {
        for (h, host) in [&a, &b].into_iter().enumerate() {
            for t in 0..3 {
                scope.spawn(move || {
                    for i in 0..PER_THREAD {
                        // A compare-and-set increment, retried on conflict: none may be lost.
                        loop {
                            assert!(Instant::now() < deadline, "increments did not finish in time");
                            let now = host.get_versioned("game", "counter").unwrap().unwrap();
                            let n: u32 = std::str::from_utf8(&now.value).unwrap().parse().unwrap();
                            match host.set_if_version(
                                "game",
                                "counter",
                                (n + 1).to_string().as_bytes(),
                                Some(now.version),
                            ) {
                                Ok(_) => break,
                                Err(StoreError::Conflict { .. }) => continue,
                                Err(e) => panic!("{e}"),
                            }
                        }
                        // And a patch of a member of its own in one shared document.
                        let path = format!("h{h}t{t}");
                        host.doc_patch("game", "doc", &path, (i + 1).to_string().as_bytes(), None).unwrap();
                    }
                });
            }
        }
    });
    assert_eq!(a.get("game", "counter").unwrap().unwrap().as_ref(), (6 * PER_THREAD).to_string().as_bytes());
    let doc: Value = serde_json::from_slice(&b.get("game", "doc").unwrap().unwrap()).unwrap();
    let members = doc.as_object().unwrap();
    assert_eq!(members.len(), 6, "{doc}");
    assert!(members.values().all(|v| v == PER_THREAD), "{doc}");
    // Folding on one host changes nothing the other reads.
    a.compact().unwrap();
    let again: Value = serde_json::from_slice(&b.get("game", "doc").unwrap().unwrap()).unwrap();
    assert_eq!(again, doc);
}

#[test]
fn a_quota_holds_across_hosts() {
    let server = Server::start();
    let (a, b) = two_hosts(&server);
    let quotas = Quotas { default: Quota { bytes: 10_000, keys: 100 }, namespaces: HashMap::new() };
    a.set_quotas(quotas.clone());
    b.set_quotas(quotas);
    a.set("m", "one", &[b'x'; 6_000]).unwrap();
    // Alone, b's write would fit; with a's it would not.
    let refused = b.set("m", "two", &[b'y'; 6_000]);
    assert!(matches!(refused, Err(StoreError::Quota { would_hold: 12_000, .. })), "{refused:?}");
    assert_eq!(b.get("m", "two").unwrap(), None);
    assert_eq!(a.usage("m").bytes, 6_000);
    // Freed on one host, room on the other.
    a.delete("m", "one").unwrap();
    b.set("m", "two", &[b'y'; 6_000]).unwrap();
    assert_eq!(a.usage("m"), b.usage("m"));
    assert_eq!(a.usage("m").keys, 1);
}

#[test]
fn a_restarted_server_fails_calls_with_a_clear_error_then_serves_again_by_itself() {
    let server = Server::start();
    let (a, _) = two_hosts(&server);
    a.set("game", "profile", b"before").unwrap();
    server.stop();
    let failed = a.set("game", "profile", b"during").unwrap_err();
    assert!(matches!(failed, StoreError::Unavailable { .. }), "{failed:?}");
    let failed = failed.to_string();
    assert!(
        failed.contains("could not write `profile`: the store is unavailable") && failed.contains("PostgreSQL"),
        "{failed}"
    );
    let failed = a.get("game", "profile").unwrap_err();
    assert!(matches!(failed, StoreError::Unavailable { .. }), "{failed:?}");
    assert!(failed.to_string().contains("could not read `profile`"), "{failed}");
    server.restart();
    // The pool's connections died with the server; the next calls connect again.
    assert_eq!(a.get("game", "profile").unwrap().unwrap().as_ref(), b"before");
    a.set("game", "profile", b"after").unwrap();
    assert_eq!(a.get("game", "profile").unwrap().unwrap().as_ref(), b"after");
}

#[test]
fn a_session_is_granted_to_one_host_at_a_time_and_a_write_under_a_lost_lease_is_refused() {
    let server = Server::start();
    let (a, b) = two_hosts(&server);
    let session = "0123456789abcdef01234567";
    let ttl = Duration::from_secs(30);
    let first = a.acquire_lease(session, "host-a", ttl).unwrap().expect("a free session is granted");
    assert_eq!(b.acquire_lease(session, "host-b", ttl).unwrap(), None, "held by a");
    a.leased(Some(&first)).set("game", "profile", b"a's").unwrap();
    // Released, the session goes to b at once, with a higher token; a's old lease writes nothing.
    a.release_lease(&first).unwrap();
    let second = b.acquire_lease(session, "host-b", ttl).unwrap().expect("released");
    assert!(second.token > first.token, "{second:?} after {first:?}");
    let refused = a.leased(Some(&first)).set("game", "profile", b"a's late write");
    assert!(matches!(refused, Err(StoreError::LeaseLost { .. })), "{refused:?}");
    let refused = a.leased(Some(&first)).doc_patch("game", "doc", "x", b"1", None);
    assert!(matches!(refused, Err(StoreError::LeaseLost { .. })), "{refused:?}");
    assert_eq!(b.get("game", "profile").unwrap().unwrap().as_ref(), b"a's");
    assert_eq!(b.get("game", "doc").unwrap(), None);
    b.leased(Some(&second)).set("game", "profile", b"b's").unwrap();
    // A lease that expires (its host died or froze) is granted to the next host that asks.
    b.release_lease(&second).unwrap();
    let short = b.acquire_lease(session, "host-b", Duration::from_millis(200)).unwrap().unwrap();
    assert_eq!(a.acquire_lease(session, "host-a", ttl).unwrap(), None, "not yet expired");
    std::thread::sleep(Duration::from_millis(400));
    let third = a.acquire_lease(session, "host-a", ttl).unwrap().expect("expired");
    assert!(third.token > short.token);
    let refused = b.leased(Some(&short)).set("game", "profile", b"b's late write");
    assert!(matches!(refused, Err(StoreError::LeaseLost { .. })), "{refused:?}");
    assert_eq!(a.get("game", "profile").unwrap().unwrap().as_ref(), b"b's");
}
