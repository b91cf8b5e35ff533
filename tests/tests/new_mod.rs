//! `modhost new`, end to end, as a mod author meets it: a new project builds, its test passes under
//! `modhost test-runner`, the built mod serves its route from a real `modhost serve`, and a failing
//! test in the project fails `cargo test` with its assertion message shown.
//!
//! Needs the `modhost` binary of this build (`target/release/modhost`: `cargo test --release` at the
//! workspace root builds it; `MODHOST_BIN` names another) and the wasm32-wasip2 target. The projects'
//! builds share `target/new-mod-test`, so only the first run compiles their dependencies; they run
//! `--offline` when the dependencies are cached, and online otherwise.

use modhost_tests::child::ServeChild;
use modhost_tests::client::{Call, send};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The longest a project's `cargo build` or `cargo test` may take (a cold build compiles serde and
/// wit-bindgen: about 40 s on 2 cores).
const CARGO_LIMIT: Duration = Duration::from_secs(900);

/// The modhost binary under test.
fn modhost() -> PathBuf {
    modhost_tests::child::modhost_under_test()
}

/// The workspace's `target/new-mod-test`, shared by every run of these tests.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/new-mod-test")
}

/// A finished command's exit status and output.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` to the end within `limit` (killed past it), its output into files under `scratch`.
fn run(mut cmd: Command, limit: Duration, scratch: &Path) -> Ran {
    let (out, err) = (scratch.join("stdout"), scratch.join("stderr"));
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

/// `cargo <args>` in `project`, as an author would run it, with the target dir shared by these tests and
/// this build's modhost as the test runner; nothing of the outer `cargo test`'s environment leaks in.
fn cargo(project: &Path, args: &[&str], scratch: &Path) -> Ran {
    let attempt = |offline: bool| {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
        cmd.current_dir(project).args(args);
        if offline {
            cmd.arg("--offline");
        }
        for var in [
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_BUILD_TARGET",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET_DIR",
            "CARGO_MANIFEST_DIR",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("CARGO_TARGET_DIR", target_dir())
            .env("CARGO_TARGET_WASM32_WASIP2_RUNNER", format!("{} test-runner", modhost().display()))
            .env("CARGO_TERM_COLOR", "never");
        run(cmd, CARGO_LIMIT, scratch)
    };
    let ran = attempt(true);
    // Not every dependency cached: the ordinary, online build.
    if !ran.success && ran.stderr.contains("offline") { attempt(false) } else { ran }
}

/// `modhost new <name>` in `parent`; answers the project's folder.
fn new_project(parent: &Path, name: &str) -> PathBuf {
    let mut cmd = Command::new(modhost());
    cmd.current_dir(parent).args(["new", name]);
    let ran = run(cmd, Duration::from_secs(30), parent);
    assert!(ran.success, "modhost new {name} failed:\n{}", ran.stderr);
    parent.join(name)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_project_builds_tests_and_serves_its_route() {
    let dir = tempfile::tempdir().unwrap();
    let project = new_project(dir.path(), "demo");

    let built = cargo(&project, &["build", "--release"], dir.path());
    assert!(built.success, "cargo build failed:\n{}", built.stderr);
    let wasm = target_dir().join("wasm32-wasip2/release/demo.wasm");
    assert!(wasm.exists(), "{} was not built", wasm.display());

    let tested = cargo(&project, &["test", "--release"], dir.path());
    assert!(tested.success, "cargo test failed:\n{}\n{}", tested.stdout, tested.stderr);
    assert!(
        tested.stdout.contains("test tests::hello_reads_the_db_and_counts_visits ... ok")
            && tested.stdout.contains("test result: ok. 1 passed"),
        "the template's test did not pass:\n{}",
        tested.stdout
    );

    // Installed as the README says, served by a real modhost.
    let root = dir.path().join("root");
    let installed = root.join("mods/demo");
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::copy(&wasm, installed.join("demo.wasm")).unwrap();
    std::fs::copy(project.join("mod.toml"), installed.join("mod.toml")).unwrap();
    let server = ServeChild::spawn(&modhost(), &root, &[]).unwrap();
    let session = "0123456789abcdef01234567";
    for visit in 1..=2 {
        let reply = tokio::time::timeout(
            Duration::from_secs(30),
            send(server.addr, &Call::get("/demo/hello").session(session)),
        )
        .await
        .expect("an answer within 30 s")
        .unwrap();
        let body = reply.json();
        assert_eq!(reply.status, 200, "{body}\n{}", server.tail());
        assert_eq!(body["err"], 0, "{body}");
        assert_eq!(body["data"]["item"], "Roubles", "{body}");
        assert_eq!(body["data"]["visits"], visit, "{body}");
    }
}

#[test]
fn a_failing_test_in_the_project_fails_cargo_test_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    // Another name than the first test's: both build into the shared target dir at once.
    let project = new_project(dir.path(), "broken-mod");
    let lib = project.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str(
        "\n#[cfg(test)]\nmod broken {\n    #[test]\n    fn fails_on_purpose() {\n        \
         assert_eq!(1 + 1, 3, \"arithmetic broken on purpose\");\n    }\n}\n",
    );
    std::fs::write(&lib, text).unwrap();

    let tested = cargo(&project, &["test", "--release"], dir.path());
    let output = format!("{}\n{}", tested.stdout, tested.stderr);
    assert!(!tested.success, "cargo test passed with a failing test:\n{output}");
    assert!(output.contains("arithmetic broken on purpose"), "the assertion message is not shown:\n{output}");
    assert!(output.contains("trapped"), "the runner says the binary trapped:\n{output}");

    // The filter reaches the test binary: the passing test alone passes.
    let filtered = cargo(&project, &["test", "--release", "--", "hello"], dir.path());
    assert!(filtered.success, "cargo test -- hello failed:\n{}\n{}", filtered.stdout, filtered.stderr);
    assert!(filtered.stdout.contains("1 filtered out"), "{}", filtered.stdout);
}
