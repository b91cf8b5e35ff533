//! Hosts that fail: two `modhost serve` processes on one PostgreSQL store (a server of the test's
//! own), with HAProxy in front hashing on the session id as a deployment would run it.
//!
//! - A host frozen (SIGSTOP) in the middle of a request, past its session's lease: the other host
//!   serves the session; resumed, the frozen host's write is refused by the database, and the value
//!   is the other host's.
//! - A host killed (SIGKILL) in the middle of a request, behind HAProxy: the proxy sends the session
//!   to the other host, which answers it once the dead host's lease has passed; nothing is torn.
//!
//! The fixture mod's `/fx/slow-counter/<ms>` reads a counter, sleeps, and writes it plus one: a
//! request that holds its session long enough to be caught in the middle.

use modhost_store_pg::testing::Server as Postgres;
use modhost_tests::child::{ServeChild, modhost_under_test};
use modhost_tests::client::{Call, send};
use modhost_tests::guests;
use modhost_tests::server::install_mod;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SESSION: &str = "c0ffee00c0ffee00c0ffee00";
/// The lease the hosts take for a session: short, so a failed host's sessions move quickly.
const LEASE_MS: &str = "2000";

/// A host: a root of its own with the fixture mod, serving the store at `url`.
fn host(dir: &Path, name: &str, url: &str) -> ServeChild {
    let root = dir.join(name);
    install_mod(&root, "fx", Path::new(guests::FIXTURE), "").unwrap();
    let args = ["--store-url", url, "--session-lease-ms", LEASE_MS, "--call-timeout-ms", "30000"];
    ServeChild::spawn(&modhost_under_test(), &root, &args).unwrap()
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// What a request answered: its status, its JSON body, and the host HAProxy sent it to.
type Answered = Result<(u16, Value, String), String>;

/// A request of the session on its own thread (it may outlive a frozen host).
fn request(addr: SocketAddr, path: &str) -> std::thread::JoinHandle<Answered> {
    let path = path.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let call = Call::get(&path).session(SESSION);
            let reply = tokio::time::timeout(Duration::from_secs(60), send(addr, &call))
                .await
                .map_err(|_| "no answer within 60 s".to_owned())?
                .map_err(|e| e.to_string())?;
            let by = reply.header("x-served-by").unwrap_or_default().to_owned();
            Ok((reply.status, serde_json::from_slice(&reply.body()).unwrap_or(Value::Null), by))
        })
    })
}

/// Asks `addr` for the counter (one more) until a host answers 200, for at most `limit`; answers
/// the count, how long it took, and which host answered (behind the proxy).
fn count_until_served(addr: SocketAddr, limit: Duration) -> (Value, Duration, String) {
    let started = Instant::now();
    loop {
        if let Ok((200, body, by)) = request(addr, "/fx/counter").join().unwrap() {
            return (body, started.elapsed(), by);
        }
        assert!(started.elapsed() < limit, "the session was not served within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_frozen_host_past_its_lease_cannot_commit_and_the_other_host_serves_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let (a, b) = (host(dir.path(), "a", &pg.url()), host(dir.path(), "b", &pg.url()));
    // A reads the counter (absent: 0), then sleeps 4 s in the guest holding the session's lease.
    let slow = request(a.addr, "/fx/slow-counter/4000");
    std::thread::sleep(Duration::from_millis(800));
    signal(a.pid(), "STOP");
    // The lease (2 s) passes while a is frozen; b is granted the session and counts 1.
    let (counted, waited, _) = count_until_served(b.addr, Duration::from_secs(20));
    assert_eq!(counted, 1, "b read what was committed: a's read-then-sleep wrote nothing yet");
    assert!(waited < Duration::from_secs(10), "served after {waited:?}");
    signal(a.pid(), "CONT");
    // a wakes and writes 0 + 1 under its old lease: the database refuses it.
    let (status, answer, _) = slow.join().unwrap().unwrap();
    assert_eq!(status, 200, "{answer}");
    let refused = answer["error"].as_str().unwrap_or_else(|| panic!("a's write was not refused: {answer}"));
    assert!(refused.contains("no longer this host's"), "{refused}");
    // The counter is b's 1, and counting goes on from it on either host.
    assert_eq!(count_until_served(a.addr, Duration::from_secs(20)).0, 2);
    assert_eq!(count_until_served(b.addr, Duration::from_secs(20)).0, 3);
}

/// HAProxy in front of `hosts`, sending each session to one host (hashing its `PHPSESSID`), and
/// away from a host that stops answering its health check.
struct Proxy {
    child: Child,
    addr: SocketAddr,
}

impl Proxy {
    fn start(dir: &Path, hosts: &[SocketAddr]) -> Proxy {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let servers: String = hosts
            .iter()
            .enumerate()
            .map(|(i, addr)| format!("  server h{i} {addr} check inter 200ms fall 2 rise 1\n"))
            .collect();
        let config = format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 60s\n  timeout server 60s\n\
             frontend game\n  bind 127.0.0.1:{port}\n  default_backend hosts\n\
             backend hosts\n  balance hash req.cook(PHPSESSID)\n  hash-type consistent\n  option redispatch\n  retries 3\n\
             http-response set-header x-served-by %s\n{servers}"
        );
        let file = dir.join("haproxy.cfg");
        std::fs::write(&file, config).unwrap();
        let child = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("haproxy (Debian's haproxy package) runs");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let started = Instant::now();
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(started.elapsed() < Duration::from_secs(10), "haproxy did not listen on {addr}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Proxy { child, addr }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_killed_hosts_session_is_answered_by_the_other_behind_haproxy_within_the_lease() {
    let dir = tempfile::tempdir().unwrap();
    let pg = Postgres::start();
    let mut hosts = vec![host(dir.path(), "a", &pg.url()), host(dir.path(), "b", &pg.url())];
    let proxy = Proxy::start(dir.path(), &hosts.iter().map(|h| h.addr).collect::<Vec<_>>());
    let (counted, _, by) = count_until_served(proxy.addr, Duration::from_secs(20));
    assert_eq!(counted, 1);
    // The proxy names the host it sent the session to (`h0`, `h1`): that one is killed mid-request.
    let serving: usize =
        by.strip_prefix('h').and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("served by `{by}`"));
    let slow = request(proxy.addr, "/fx/slow-counter/3000");
    std::thread::sleep(Duration::from_millis(800));
    let killed = hosts.remove(serving);
    signal(killed.pid(), "KILL");
    drop(killed);
    assert!(slow.join().unwrap().map(|(s, ..)| s != 200).unwrap_or(true), "the killed host answered");
    // Through the proxy, the session is answered by the live host once the lease (2 s) has passed.
    let (counted, waited, by) = count_until_served(proxy.addr, Duration::from_secs(20));
    assert_ne!(by, format!("h{serving}"), "answered by the killed host");
    assert_eq!(counted, 2, "the killed request wrote nothing: nothing torn, nothing half-counted");
    assert!(waited < Duration::from_secs(10), "served after {waited:?}");
}
