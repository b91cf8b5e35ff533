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
    // The value is an ordinary file a player can read and back up.
    let path = server.root().join("store/hello").join(format!("visits.{SESSION}"));
    assert_eq!(std::fs::read_to_string(path).unwrap(), "3");
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

/// Kill torture: a child commits self-describing values in a loop and is SIGKILLed at jittered moments;
/// after every kill the key holds exactly one whole value. Some kills must land inside a commit (a
/// leftover temp), so the test cannot pass vacuously; the control phase (in-place writes) must show
/// torn values, so the check is shown able to fail.
#[test]
fn a_killed_writer_never_leaves_a_torn_value() {
    let (atomic_torn, atomic_inside, atomic_checked) = torture("atomic", 500);
    assert_eq!(atomic_torn, 0, "torn values after commits through the store");
    assert!(atomic_inside > 0, "no kill landed inside a commit ({atomic_checked} checked): the test proved nothing");
    let (control_torn, _, control_checked) = torture("in-place", 150);
    assert!(
        control_torn > 0,
        "in-place writes were never caught torn ({control_checked} checked): the check cannot fail"
    );
    eprintln!(
        "kill torture: atomic {atomic_checked} kills checked, {atomic_inside} inside a commit, 0 torn; \
         in-place {control_checked} checked, {control_torn} torn"
    );
}

/// Runs `kills` rounds in `mode`; answers (torn values seen, kills that left a temp, values checked).
fn torture(mode: &str, kills: u32) -> (u32, u32, u32) {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("ns/key");
    let (mut torn, mut inside, mut checked) = (0, 0, 0);
    let mut jitter = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..kills {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_store-child"))
            .arg(dir.path())
            .arg(mode)
            .spawn()
            .expect("spawning store-child");
        jitter ^= jitter << 13;
        jitter ^= jitter >> 7;
        jitter ^= jitter << 17;
        std::thread::sleep(Duration::from_micros(3_000 + jitter % 12_000));
        child.kill().expect("SIGKILL");
        child.wait().expect("reaping store-child");
        let temps = std::fs::read_dir(dir.path().join("ns"))
            .map(|d| d.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-")).count())
            .unwrap_or(0);
        if temps > 0 {
            inside += 1;
        }
        if let Ok(bytes) = std::fs::read(&key) {
            checked += 1;
            if !modhost_tests::torture::is_whole(&bytes) {
                torn += 1;
            }
        }
    }
    (torn, inside, checked)
}
