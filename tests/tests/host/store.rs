use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::guests;

const SESSION: &str = "0123456789abcdef01234567";

#[tokio::test]
async fn store_values_survive_a_restart() {
    let server = TestServer::builder().with_mod("hello", guests::HELLO, "").start().await.unwrap();
    for expected in 1..=2 {
        let reply = send(server.addr, &Call::post("/hello/visits", b"{}").session(SESSION)).await.unwrap();
        assert_eq!(reply.json()["data"]["visits"], expected);
    }
    let again = server.restart_builder();
    server.stop().await.unwrap();

    let server = again.start().await.unwrap();
    let reply = send(server.addr, &Call::post("/hello/visits", b"{}").session(SESSION)).await.unwrap();
    assert_eq!(reply.json()["data"]["visits"], 3);
    // The value is what `modhost store get` shows a player.
    let stored = server.stop_and_open_store().await.unwrap();
    assert_eq!(stored.store.get("hello", &format!("visits.{SESSION}")).unwrap().as_deref(), Some(&b"3"[..]));
}

#[tokio::test]
async fn durable_commits_run_off_the_async_workers_and_answer_the_same() {
    let server = TestServer::builder()
        .with_mod("hello", guests::HELLO, "")
        .config(|c| c.store_durable = true)
        .start()
        .await
        .unwrap();
    for expected in 1..=3 {
        let reply = send(server.addr, &Call::post("/hello/visits", b"{}").session(SESSION)).await.unwrap();
        assert_eq!(reply.json()["data"]["visits"], expected);
    }
}

#[tokio::test]
async fn set_if_version_reaches_a_mod_and_a_stale_version_conflicts() {
    let server = TestServer::builder().with_mod("fx", guests::FIXTURE, "").start().await.unwrap();
    let got = send(server.addr, &Call::get("/fx/cas")).await.unwrap().json();
    assert_eq!(got["first"], "ok", "{got}");
    assert!(got["stale"].as_str().unwrap().starts_with("conflict"), "{got}");
    assert_eq!(got["current"], "ok", "{got}");
    assert_eq!(got["value"], 3, "{got}");
}

/// `store::update` under contention: sessions are not ordered by the per-session lock, so concurrent
/// read-modify-writes of one shared key from many sessions race. Every increment that answered must be
/// in the final value (none lost to a write in between), and one that gave up says so as a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn update_loses_no_write_when_many_sessions_change_one_key_at_once() {
    const SESSIONS: usize = 24;
    let server = TestServer::builder().with_mod("fx", guests::FIXTURE, "").start().await.unwrap();
    let addr = server.addr;
    let calls: Vec<_> = (0..SESSIONS)
        .map(|i| {
            let session = format!("{i:024x}");
            tokio::spawn(async move { send(addr, &Call::post_raw("/fx/tally", b"").session(&session)).await })
        })
        .collect();
    let mut counted = Vec::new();
    for call in calls {
        let reply = call.await.unwrap().unwrap();
        assert_eq!(reply.status, 200);
        let got = reply.json();
        match got["value"].as_u64() {
            Some(n) => counted.push(n),
            None => assert!(got["error"].as_str().unwrap().starts_with("conflict"), "{got}"),
        }
    }
    // The successes answered 1, 2, … each once, and one more increment, alone, finds them all: a lost
    // write would answer a value twice and leave the tally short of the successes.
    counted.sort_unstable();
    let n = counted.len() as u64;
    assert_eq!(counted, (1..=n).collect::<Vec<_>>());
    let last = send(addr, &Call::post_raw("/fx/tally", b"").session(&format!("{SESSIONS:024x}"))).await.unwrap();
    assert_eq!(last.json()["value"], n + 1, "{counted:?}");
    assert!(counted.len() > SESSIONS / 2, "most increments should land within the retry bound: {counted:?}");
}

/// Kill torture: a child commits whole values and document patches in a loop, saying before and after
/// each commit what it commits, and is SIGKILLed at jittered moments once it is committing. After every
/// kill the reopened store holds one whole value, never older than the last acknowledged commit nor newer
/// than the last one begun, and the document is exactly its patches applied up to such a point. Kills
/// that landed between a commit's start and its answer are counted and must be many, so the test cannot
/// pass vacuously; the control (plain in-place writes) must show torn values, so the check can fail.
#[test]
fn a_killed_writer_never_leaves_a_torn_or_lost_commit() {
    for mode in ["default", "durable"] {
        let t = torture(mode, 1000);
        assert_eq!(t.torn, 0, "{mode}: torn or lost commits: {t:?}");
        assert!(t.inside > 100, "{mode}: too few kills landed inside a commit: {t:?}");
        eprintln!("kill torture ({mode}): {t:?}");
    }
    let control = torture("in-place", 150);
    assert!(control.torn > 0, "in-place writes were never caught torn: the check cannot fail ({control:?})");
    eprintln!("kill torture control (in-place): {control:?}");
}

#[derive(Debug, Default)]
struct Torture {
    /// Kills after which the store was checked.
    checked: u32,
    /// Kills that landed after a commit began and before it was answered.
    inside: u32,
    /// Checks that found a torn value, or one older than acknowledged, or a wrong document.
    torn: u32,
}

/// The last `B`egun and `A`cknowledged sequence numbers of kind `S` (whole writes) or `P` (patches) in
/// a child's output.
fn last(lines: &[String], mark: &str, kind: &str) -> Option<u64> {
    lines.iter().rev().find_map(|l| l.strip_prefix(&format!("{mark} {kind} "))?.parse().ok())
}

/// Runs `kills` rounds in `mode`.
fn torture(mode: &str, kills: u32) -> Torture {
    use modhost_tests::torture::{doc_after, is_whole, seq_of};
    use std::io::{BufRead, BufReader, Read};
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let mut t = Torture::default();
    let (mut acked_s, mut acked_p) = (0u64, 0u64);
    let mut jitter = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..kills {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_store-child"))
            .arg(dir.path())
            .arg(mode)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawning store-child");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        // Wait for the first acknowledged commit (bounded: the child writes one within milliseconds).
        let mut lines = Vec::new();
        for _ in 0..8 {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            let started = line.starts_with('A');
            lines.push(line.trim().to_owned());
            if started {
                break;
            }
        }
        jitter ^= jitter << 13;
        jitter ^= jitter >> 7;
        jitter ^= jitter << 17;
        std::thread::sleep(Duration::from_micros(jitter % 4_000));
        child.kill().expect("SIGKILL");
        child.wait().expect("reaping store-child");
        let mut rest = String::new();
        let _ = out.read_to_string(&mut rest);
        lines.extend(rest.lines().map(str::to_owned));
        if lines.last().is_some_and(|l| l.starts_with('B')) {
            t.inside += 1;
        }
        t.checked += 1;
        if mode == "in-place" {
            if std::fs::read(dir.path().join("ns/key")).is_ok_and(|b| !is_whole(&b)) {
                t.torn += 1;
            }
            continue;
        }
        let (begun_s, begun_p) = (last(&lines, "B", "S").unwrap_or(acked_s), last(&lines, "B", "P").unwrap_or(acked_p));
        acked_s = last(&lines, "A", "S").unwrap_or(acked_s);
        acked_p = last(&lines, "A", "P").unwrap_or(acked_p);
        let store = modhost_store::Store::open(dir.path(), false).expect("reopening after a kill");
        let whole = store.get("ns", "key").unwrap().unwrap_or_default();
        let seq = seq_of(&whole).unwrap_or(0);
        let doc: Option<serde_json::Value> =
            store.get("ns", "doc").unwrap().map(|b| serde_json::from_slice(&b).expect("the document parses"));
        let n = doc.as_ref().and_then(|d| d["n"].as_u64()).unwrap_or(0);
        let whole_ok = (seq == 0 && acked_s == 0) || (is_whole(&whole) && (acked_s..=begun_s).contains(&seq));
        let doc_ok = (acked_p..=begun_p).contains(&n) && doc == doc_after(n);
        if !whole_ok || !doc_ok {
            eprintln!(
                "{mode}: value {seq} (acked {acked_s}, begun {begun_s}), doc {n} (acked {acked_p}, begun {begun_p})"
            );
            t.torn += 1;
        }
        // What the store holds now is where the next child goes on from.
        acked_s = seq;
        acked_p = n;
    }
    t
}
