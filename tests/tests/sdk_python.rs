//! `modhost new --lang python`, end to end, as a mod author meets it: the new project builds with
//! componentize-py (its `build.sh`), its tests pass under `modhost test-runner` (its `test.sh` builds
//! `tests.py` into a WASI command), the built mod serves its route from a real `modhost serve`, and
//! a failing test in the project fails `test.sh` with its assertion message shown.
//!
//! Needs componentize-py 0.25.1 on `PATH` (`make setup-polyglot`) and the `modhost` binary of this
//! build (`target/release/modhost`: `cargo build --release -p modhost`; `MODHOST_BIN` names another).

use modhost_tests::child::ServeChild;
use modhost_tests::client::{Call, send};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

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
    let session = "0123456789abcdef01234567";
    for visit in 1..=2 {
        let reply = tokio::time::timeout(
            Duration::from_secs(60),
            send(server.addr, &Call::get("/demo-py/hello").session(session)),
        )
        .await
        .expect("an answer within 60 s")
        .unwrap();
        let body = reply.json();
        assert_eq!(reply.status, 200, "{body}\n{}", server.tail());
        assert_eq!(body["err"], 0, "{body}");
        assert_eq!(body["data"]["item"], "Roubles", "{body}");
        assert_eq!(body["data"]["visits"], visit, "{body}");
    }
    let missing = tokio::time::timeout(Duration::from_secs(60), send(server.addr, &Call::get("/demo-py/nothing")))
        .await
        .expect("an answer within 60 s")
        .unwrap();
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
