//! `modhost new --lang python`, end to end, as a mod author meets it: the new project builds with
//! componentize-py (its `build.sh`), its tests pass under `modhost test-runner` (its `test.sh` builds
//! `tests.py` into a WASI command), the built mod serves its route from a real `modhost serve`, and
//! a failing test in the project fails `test.sh` with its assertion message shown.
//!
//! Needs componentize-py 0.25.1 on `PATH` (`make setup-polyglot`) and the `modhost` binary of this
//! build (`target/release/modhost`: `cargo build --release -p modhost`; `MODHOST_BIN` names another).

use futures_util::{SinkExt as _, StreamExt as _};
use modhost_tests::child::ServeChild;
use modhost_tests::client::{Call, Reply, send};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

/// The longest a project's build or test run may take (each is about 12-25 s on 2 cores: the
/// componentize step, then for the test the compile of the CPython component).
const SCRIPT_LIMIT: Duration = Duration::from_secs(600);

/// The modhost binary under test.
fn modhost() -> PathBuf {
    modhost_tests::child::modhost_under_test()
}

/// A finished command's exit status and output.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` to the end within `limit` (killed past it), its output into files under `scratch`.
fn run(mut cmd: Command, limit: Duration, scratch: &Path, tag: &str) -> Ran {
    let (out, err) = (scratch.join(format!("{tag}.stdout")), scratch.join(format!("{tag}.stderr")));
    cmd.stdin(Stdio::null()).stdout(std::fs::File::create(&out).unwrap()).stderr(std::fs::File::create(&err).unwrap());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    let status = modhost_tests::child::wait_within(&mut child, limit, &shown, &err);
    Ran {
        success: status.success(),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

/// `GET path` (with a session) from the server at `addr`, each try within 60 s, tried again while the
/// server answers 503 because its mods are still loading (compiling CPython takes seconds), for at most
/// 180 s.
async fn get_when_loaded(addr: SocketAddr, path: &str) -> Reply {
    let started = std::time::Instant::now();
    loop {
        let reply = tokio::time::timeout(Duration::from_secs(60), send(addr, &Call::get(path).session(SESSION)))
            .await
            .expect("an answer within 60 s")
            .unwrap();
        if reply.status != 503 || started.elapsed() > Duration::from_secs(180) {
            return reply;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The session the requests carry.
const SESSION: &str = "0123456789abcdef01234567";

/// Fails, saying how to install it, when componentize-py is not on `PATH`.
fn require_componentize_py() {
    let found = Command::new("componentize-py")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success() && String::from_utf8_lossy(&out.stdout).contains("0.25.1"));
    assert!(
        found,
        "componentize-py 0.25.1 is not on PATH: run `make setup-polyglot` (pip install componentize-py==0.25.1)"
    );
}

/// `modhost new --lang python <name>` in `parent`; answers the project's folder.
fn new_project(parent: &Path, name: &str) -> PathBuf {
    require_componentize_py();
    let mut cmd = Command::new(modhost());
    cmd.current_dir(parent).args(["new", "--lang", "python", name]);
    let ran = run(cmd, Duration::from_secs(30), parent, "new");
    assert!(ran.success, "modhost new --lang python {name} failed:\n{}", ran.stderr);
    parent.join(name)
}

/// One of the project's scripts (`build.sh`, `test.sh`) with `args`, as the README runs it, with this
/// build's modhost.
fn script(project: &Path, name: &str, args: &[&str], scratch: &Path) -> Ran {
    let mut cmd = Command::new(project.join(name));
    cmd.current_dir(project).args(args).env("MODHOST", modhost());
    run(cmd, SCRIPT_LIMIT, scratch, name)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_python_project_builds_tests_and_serves_its_route() {
    let dir = tempfile::tempdir().unwrap();
    let project = new_project(dir.path(), "demo-py");
    for embedded in ["modhost-sdk/python/modhost/router.py", "modhost-sdk/wit/world.wit", "test-wit/world.wit"] {
        assert!(project.join(embedded).exists(), "the project lacks {embedded}");
    }

    let started = std::time::Instant::now();
    let built = script(&project, "build.sh", &[], dir.path());
    assert!(built.success, "build.sh failed:\n{}\n{}", built.stdout, built.stderr);
    println!("build.sh: {:.1} s", started.elapsed().as_secs_f64());
    let wasm = project.join("build/demo-py.wasm");
    assert!(wasm.exists(), "{} was not built", wasm.display());

    let started = std::time::Instant::now();
    let tested = script(&project, "test.sh", &[], dir.path());
    assert!(tested.success, "test.sh failed:\n{}\n{}", tested.stdout, tested.stderr);
    println!("test.sh: {:.1} s", started.elapsed().as_secs_f64());
    assert!(
        tested.stdout.contains("test test_hello_reads_the_db_and_counts_visits ... ok")
            && tested.stdout.contains("test result: ok. 2 passed; 0 failed"),
        "the template's tests did not pass:\n{}",
        tested.stdout
    );

    // Installed as the README says, served by a real modhost.
    let root = dir.path().join("root");
    let installed = root.join("mods/demo-py");
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::copy(&wasm, installed.join("demo-py.wasm")).unwrap();
    std::fs::copy(project.join("mod.toml"), installed.join("mod.toml")).unwrap();
    let server = ServeChild::spawn(&modhost(), &root, &[]).unwrap();
    assert!(server.addr.ip().is_loopback(), "the server listens on {}", server.addr);
    for visit in 1..=2 {
        let reply = get_when_loaded(server.addr, "/demo-py/hello").await;
        let body = reply.json();
        assert_eq!(reply.status, 200, "{body}\n{}", server.tail());
        assert_eq!(body["err"], 0, "{body}");
        assert_eq!(body["data"]["item"], "Roubles", "{body}");
        assert_eq!(body["data"]["visits"], visit, "{body}");
    }
    let missing = get_when_loaded(server.addr, "/demo-py/nothing").await;
    assert_eq!(missing.status, 404, "a path the mod does not claim");
}

#[test]
fn a_failing_test_in_the_python_project_fails_test_sh_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let project = new_project(dir.path(), "broken-py");
    let tests = project.join("tests.py");
    let mut text = std::fs::read_to_string(&tests).unwrap();
    text.push_str("\n\ndef test_fails_on_purpose():\n    assert 1 + 1 == 3, \"arithmetic broken on purpose\"\n");
    std::fs::write(&tests, text).unwrap();

    let tested = script(&project, "test.sh", &[], dir.path());
    let output = format!("{}\n{}", tested.stdout, tested.stderr);
    assert!(!tested.success, "test.sh passed with a failing test:\n{output}");
    assert!(output.contains("test test_fails_on_purpose ... FAILED"), "the failing test is not named:\n{output}");
    assert!(output.contains("arithmetic broken on purpose"), "the assertion message is not shown:\n{output}");
    assert!(output.contains("test result: FAILED. 2 passed; 1 failed"), "{output}");

    // The filter reaches the test command: the passing tests alone pass (the build is redone, as
    // test.sh always does).
    let filtered = script(&project, "test.sh", &["hello"], dir.path());
    assert!(filtered.success, "test.sh hello failed:\n{}\n{}", filtered.stdout, filtered.stderr);
    assert!(filtered.stdout.contains("1 passed; 0 failed; 2 filtered out"), "{}", filtered.stdout);
}

#[test]
fn the_python_sdk_passes_its_own_tests_under_the_test_runner() {
    require_componentize_py();
    let dir = tempfile::tempdir().unwrap();
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-python");
    let mut cmd = Command::new(sdk.join("test.sh"));
    cmd.current_dir(&sdk).env("MODHOST", modhost());
    let tested = run(cmd, SCRIPT_LIMIT, dir.path(), "sdk-test");
    assert!(tested.success, "sdk-python/test.sh failed:\n{}\n{}", tested.stdout, tested.stderr);
    assert!(tested.stdout.contains("test result: ok.") && tested.stdout.contains("0 failed"), "{}", tested.stdout);
    assert!(!tested.stdout.contains("running 0 tests"), "no test ran:\n{}", tested.stdout);
}

/// Two `full`-world mods on the SDK: `pya` answers a route that emits an event and calls a function
/// of `pyb`; `pyb` hooks that route before (a header) and after (a header on the answer), hears the
/// event, provides the function, counts a periodic timer's firings, and echoes on a websocket route
/// it accepts only with a token.
const PYA: &str = r#"
from modhost import Router, calls, envelope, events
router = Router()

@router.route("/pya/ping")
def ping(request):
    heard = events.emit("pya.pinged", {"session": request.session})
    echoed = calls.call_json("pyb", "echo", {"hi": 1})
    return envelope.ok({"heard": heard, "echoed": echoed, "tag": request.header("x-tag")})

WitWorld, Guest, Realtime = router.exports()
"#;
const PYB: &str = r#"
from modhost import ResponseEdit, Router, Verdict, envelope, sockets, store
router = Router()

@router.before("/pya/ping")
def tag(request):
    return Verdict.with_header(request, "X-Tag", "from-pyb")

@router.after("/pya/ping")
def after(request, response):
    return ResponseEdit(headers=response.headers + [("x-after", "pyb")])

@router.on("pya.pinged")
def heard(event):
    assert event.source == "pya", event.source
    store.update_json("heard", lambda n: n + 1, 0)

@router.provide("echo")
def echo(call):
    return {"echo": call.json(), "caller": call.caller}

@router.every("tick", 1)
def tick(fired):
    store.update_json("ticks", lambda n: n + 1, 0)

def refuse_without_token(connection, request):
    if request.header("x-token") != "letmein":
        return envelope.error(1, "no token").with_status(403)

@router.socket("/pyb/ws", accept=refuse_without_token)
def on_message(connection, message):
    sockets.send(connection, f"echo:{message}")

@router.route("/pyb/state")
def state(request):
    return envelope.ok({"heard": store.get_json("heard", 0), "ticks": store.get_json("ticks", 0)})

WitWorld, Guest, Realtime = router.exports()
"#;

#[tokio::test(flavor = "multi_thread")]
async fn full_world_python_mods_hook_hear_call_and_time() {
    require_componentize_py();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mods = [("pya", PYA, "[grants]\ncall = [\"pyb\"]\n"), ("pyb", PYB, "[grants]\nhook = [\"/pya/ping\"]\n")];
    for (id, app, grants) in mods {
        let src = dir.path().join(id);
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("app.py"), app).unwrap();
        let installed = root.join("mods").join(id);
        std::fs::create_dir_all(&installed).unwrap();
        std::fs::write(
            installed.join("mod.toml"),
            format!("id = \"{id}\"\nname = \"{id}\"\nversion = \"0.1.0\"\n{grants}"),
        )
        .unwrap();
        let mut cmd = Command::new("componentize-py");
        cmd.current_dir(&src)
            .args(["-d"])
            .arg(repo.join("wit"))
            .args(["-w", "full", "componentize", "-p", ".", "-p"])
            .arg(repo.join("sdk-python"))
            .args(["app", "-o"])
            .arg(installed.join(format!("{id}.wasm")));
        let built = run(cmd, SCRIPT_LIMIT, dir.path(), id);
        assert!(built.success, "building {id} failed:\n{}\n{}", built.stdout, built.stderr);
    }
    let server = ServeChild::spawn(&modhost(), &root, &[]).unwrap();
    let get = |path: &'static str| get_when_loaded(server.addr, path);
    let reply = get("/pya/ping").await;
    let body = reply.json();
    assert_eq!(reply.status, 200, "{body}\n{}", server.tail());
    assert_eq!(
        body["data"],
        serde_json::json!({"heard": 1, "echoed": {"echo": {"hi": 1}, "caller": "pya"}, "tag": "from-pyb"}),
        "{body}"
    );
    assert_eq!(reply.header("x-after"), Some("pyb"), "the after-hook's header");
    // The periodic timer fires every second: within 10 s it has fired at least twice.
    let started = std::time::Instant::now();
    loop {
        let state = get("/pyb/state").await.json();
        assert_eq!(state["data"]["heard"], 1, "{state}");
        if state["data"]["ticks"].as_u64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the timer did not fire twice in 10 s: {state}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    // The websocket route: refused without the token, an echo with it.
    let ws_request = |token: bool| {
        let mut request = format!("ws://{}/pyb/ws", server.addr).into_client_request().unwrap();
        if token {
            request.headers_mut().insert("x-token", "letmein".parse().unwrap());
        }
        request
    };
    let refused = tokio::time::timeout(Duration::from_secs(60), tokio_tungstenite::connect_async(ws_request(false)))
        .await
        .expect("an answer to the upgrade within 60 s");
    assert!(refused.is_err(), "an upgrade without the token was accepted");
    let (mut ws, response) =
        tokio::time::timeout(Duration::from_secs(60), tokio_tungstenite::connect_async(ws_request(true)))
            .await
            .expect("an answer to the upgrade within 60 s")
            .expect("the upgrade with the token is accepted");
    assert_eq!(response.status(), 101);
    ws.send(Message::text("hi")).await.unwrap();
    let echoed = loop {
        let read = tokio::time::timeout(Duration::from_secs(60), ws.next()).await.expect("a message within 60 s");
        match read.expect("the socket is open").expect("a readable message") {
            Message::Ping(_) | Message::Pong(_) => continue,
            message => break message,
        }
    };
    assert_eq!(echoed, Message::text("echo:hi"));
}
