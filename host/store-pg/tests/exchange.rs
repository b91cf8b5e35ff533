//! What hosts pass one another through a PostgreSQL store (`Exchange`), against a real server: mail
//! held to its mod's share and its session's bounds and taken once, in order; the db patch log's one
//! order under concurrent appends from two hosts, with every patch a host missed handed to it
//! before its own; a refused patch never logged; a full log refusing; a stopped cluster's log begun
//! anew, a running one's kept; signals heard by every host's listener.

use modhost_store::{Exchange, Logged, LoggedPatch, MailLimits, Mailed, Signal, Store};
use modhost_store_pg::testing::Server;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const S: &str = "0123456789abcdef01234567";
const T: &str = "fedcba9876543210fedcba98";

fn exchange(store: &Store) -> Arc<dyn Exchange> {
    store.exchange().expect("a shared store has an exchange")
}

const LIMITS: MailLimits = MailLimits { messages: 3, bytes: 1 << 20, mod_bytes: 100, mod_sessions: 2 };

#[test]
fn mail_is_held_to_its_bounds_and_taken_once_in_order() {
    let server = Server::start();
    let (a, b) = (modhost_store_pg::connect(&server.url()).unwrap(), modhost_store_pg::connect(&server.url()).unwrap());
    let (a, b) = (exchange(&a), exchange(&b));
    for i in 0..4 {
        assert_eq!(
            a.mail(S, "m", &format!("{{\"n\":{i}}}"), &LIMITS).unwrap(),
            Mailed::Queued { dropped: u64::from(i == 3) }
        );
    }
    // Past the session's 3 messages the oldest went; the other host takes the rest, once, in order.
    let taken: Vec<String> = b.take_mail(S).unwrap().into_iter().map(|m| m.text).collect();
    assert_eq!(taken, ["{\"n\":1}", "{\"n\":2}", "{\"n\":3}"]);
    assert!(a.take_mail(S).unwrap().is_empty());
    // The mod's share, counted over both hosts: 100 bytes, then refused with nothing changed.
    let text = format!("\"{}\"", "x".repeat(58));
    assert_eq!(a.mail(S, "m", &text, &LIMITS).unwrap(), Mailed::Queued { dropped: 0 });
    assert_eq!(b.mail(S, "m", &text, &LIMITS).unwrap(), Mailed::ModBytes { held: 60, share: 100 });
    // Another mod's share is its own; a third session is past `m`'s two.
    assert_eq!(b.mail(S, "other", &text, &LIMITS).unwrap(), Mailed::Queued { dropped: 0 });
    assert_eq!(b.mail(T, "m", "1", &LIMITS).unwrap(), Mailed::Queued { dropped: 0 });
    assert_eq!(b.mail("aaaaaaaaaaaaaaaaaaaaaaaa", "m", "1", &LIMITS).unwrap(), Mailed::ModSessions(2));
    let taken: Vec<(String, String)> = a.take_mail(S).unwrap().into_iter().map(|m| (m.by, m.text)).collect();
    assert_eq!(taken, [("m".to_owned(), text.clone()), ("other".to_owned(), text)]);
}

/// Appends `json` at `fx` for `by` through `x`, applying what it is handed to `seen` (the patches
/// this host applied, in order); answers the place.
fn append(x: &dyn Exchange, seen: &mut Vec<u64>, after: u64, json: &str) -> u64 {
    let mut handed = Vec::new();
    let logged = x
        .log_patch(after, ("fx", "fx", json), 1 << 20, &mut |missing: &[LoggedPatch]| {
            handed = missing.iter().map(|p| p.seq).collect();
            true
        })
        .unwrap();
    let Logged::At(seq) = logged else { panic!("{logged:?}") };
    seen.extend(handed);
    seen.push(seq);
    seq
}

#[test]
fn the_patch_log_has_one_order_and_hands_a_host_what_it_missed_first() {
    let server = Server::start();
    let stores = [modhost_store_pg::connect(&server.url()).unwrap(), modhost_store_pg::connect(&server.url()).unwrap()];
    let deadline = Instant::now() + Duration::from_secs(120);
    // Two hosts, two threads each, 15 appends per thread; each host applies in the order handed.
    let applied: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let hosts: Vec<_> = stores
            .iter()
            .map(|store| {
                scope.spawn(move || {
                    let x = exchange(store);
                    let host = Mutex::new((0u64, Vec::new()));
                    std::thread::scope(|inner| {
                        for t in 0..2 {
                            let (x, host) = (&x, &host);
                            inner.spawn(move || {
                                for i in 0..15 {
                                    assert!(Instant::now() < deadline);
                                    // A host's appends are one at a time (its follower's lock).
                                    let mut h = host.lock().unwrap();
                                    let (after, seen) = &mut *h;
                                    *after = append(&**x, seen, *after, &format!("{{\"t{t}\":{i}}}"));
                                }
                            });
                        }
                    });
                    host.into_inner().unwrap().1
                })
            })
            .collect();
        hosts.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let all = exchange(&stores[0]).patches_after(0).unwrap();
    assert_eq!(all.iter().map(|p| p.seq).collect::<Vec<_>>(), (1..=60).collect::<Vec<_>>());
    // Each host applied a prefix of the one order, with no gap and nothing twice.
    for seen in &applied {
        let last = *seen.last().unwrap();
        assert_eq!(seen, &(1..=last).collect::<Vec<_>>());
    }
    assert_eq!(exchange(&stores[1]).patches_after(58).unwrap().len(), 2);
}

#[test]
fn a_refused_patch_is_not_logged_and_a_full_log_refuses() {
    let server = Server::start();
    let x = exchange(&modhost_store_pg::connect(&server.url()).unwrap());
    let refused = x.log_patch(0, ("fx", "fx", "{\"a\":1}"), 1 << 20, &mut |_: &[LoggedPatch]| false).unwrap();
    assert_eq!(refused, Logged::Refused);
    assert!(x.patches_after(0).unwrap().is_empty());
    let mut seen = Vec::new();
    append(&*x, &mut seen, 0, "{\"a\":1}");
    let full = x.log_patch(1, ("fx", "fx", "{\"a\":2}"), 10, &mut |_: &[LoggedPatch]| true).unwrap();
    assert_eq!(full, Logged::Full { held: 7, max: 10 });
    assert_eq!(x.patches_after(0).unwrap().len(), 1);
}

#[test]
fn a_stopped_clusters_log_begins_anew_and_a_running_ones_is_kept() {
    let server = Server::start();
    let store = modhost_store_pg::connect(&server.url()).unwrap();
    let x = exchange(&store);
    append(&*x, &mut Vec::new(), 0, "{\"a\":1}");
    // Just begun (the schema's creation), so a host starting now joins it.
    assert!(!x.begin_log("host-a").unwrap());
    let mut sql = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    sql.batch_execute("UPDATE modhost.db_log_head SET begun_at = clock_timestamp() - INTERVAL '1 hour'").unwrap();
    // Another host alive: kept.
    store.announce("host-b", "{}").unwrap();
    assert!(!x.begin_log("host-a").unwrap());
    assert_eq!(x.patches_after(0).unwrap().len(), 1);
    // Every other host silent: begun anew; the places go on from where they were.
    sql.batch_execute("UPDATE modhost.hosts SET seen_at = clock_timestamp() - INTERVAL '1 minute'").unwrap();
    assert!(x.begin_log("host-a").unwrap());
    assert!(x.patches_after(0).unwrap().is_empty());
    let mut seen = Vec::new();
    append(&*x, &mut seen, 0, "{\"a\":2}");
    assert_eq!(seen, [2]);
}

#[test]
fn every_hosts_listener_hears_mail_patches_and_broadcasts() {
    let server = Server::start();
    let (a, b) = (modhost_store_pg::connect(&server.url()).unwrap(), modhost_store_pg::connect(&server.url()).unwrap());
    let (a, b) = (exchange(&a), exchange(&b));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let listening = {
        let heard = heard.clone();
        b.listen(Box::new(move |signal| heard.lock().unwrap().push(signal))).unwrap()
    };
    let wait_for = |want: &Signal| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !heard.lock().unwrap().contains(want) {
            assert!(Instant::now() < deadline, "{want:?} not heard: {:?}", heard.lock().unwrap());
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(&Signal::Reconnected);
    a.mail(S, "m", "1", &LIMITS).unwrap();
    wait_for(&Signal::Mail(S.to_owned()));
    append(&*a, &mut Vec::new(), 0, "{}");
    wait_for(&Signal::Patched(1));
    a.broadcast("host-a", "\"hi\"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let id = loop {
        assert!(Instant::now() < deadline, "no broadcast heard");
        if let Some(Signal::Broadcast { id, from }) =
            heard.lock().unwrap().iter().find(|s| matches!(s, Signal::Broadcast { .. })).cloned()
        {
            assert_eq!(from, "host-a");
            break id;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(b.broadcast_text(id).unwrap().as_deref(), Some("\"hi\""));
    // A refused mail signals nothing (its transaction rolled back).
    let before = heard.lock().unwrap().len();
    assert_eq!(a.mail(T, "m", &"1".repeat(200), &LIMITS).unwrap(), Mailed::ModBytes { held: 1, share: 100 });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(heard.lock().unwrap().len(), before);
    // The server restarted: the listener connects again by itself and says so.
    heard.lock().unwrap().clear();
    server.stop();
    server.restart();
    wait_for(&Signal::Reconnected);
    drop(listening);
}

#[test]
fn broadcasts_kept_are_bounded() {
    let server = Server::start();
    let x = exchange(&modhost_store_pg::connect(&server.url()).unwrap());
    for i in 0..300 {
        x.broadcast("host-a", &format!("{i}")).unwrap();
    }
    let mut sql = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    let (kept, first): (i64, i64) =
        sql.query_one("SELECT count(*), min(id) FROM modhost.broadcasts", &[]).map(|r| (r.get(0), r.get(1))).unwrap();
    assert_eq!(kept, 256);
    assert_eq!(x.broadcast_text(first as u64).unwrap().as_deref(), Some("44"));
    assert_eq!(x.broadcast_text(1).unwrap(), None);
}
