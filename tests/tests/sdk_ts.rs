//! `modhost new --lang ts`, end to end, as a mod author meets it: the project installs and builds with
//! npm (tsc, esbuild, componentize-js), its test passes under `modhost test-runner` (the test built
//! into a WASI command), a failing test fails `npm test` with its message, and the built mod serves
//! its routes from a real `modhost serve`: the envelope, the store, and a `ModError` thrown by a
//! handler answered with its status.
//!
//! Needs the `modhost` binary of this build (`target/release/modhost`; `MODHOST_BIN` names another),
//! Node.js with npm on the `PATH`, and the npm registry (or npm's cache) for the project's tools.

use modhost_tests::child::{ServeChild, modhost_under_test, wait_within};
use modhost_tests::client::{Call, send};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest `npm install` may take (it fetches componentize-js, esbuild and typescript).
const INSTALL_LIMIT: Duration = Duration::from_secs(600);
/// The longest a build or a test run may take (componentize-js takes about 20 s on 2 cores, and
/// the test runner compiles the 13 MB component: about 30 s more).
const BUILD_LIMIT: Duration = Duration::from_secs(400);

/// A finished command's exit status and output.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn output(&self) -> String {
        format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr)
    }
}

/// `npm <args>` in `project` within `limit`, with this build's modhost as `MODHOST`; its output into
/// files under `scratch`.
fn npm(project: &Path, args: &[&str], limit: Duration, scratch: &Path) -> Ran {
    let (out, err) = (scratch.join("npm.stdout"), scratch.join("npm.stderr"));
    let mut cmd = Command::new("npm");
    cmd.current_dir(project)
        .args(args)
        .env("MODHOST", modhost_under_test())
        .env("NO_COLOR", "1")
        .env("npm_config_audit", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_update_notifier", "false")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let shown = format!("npm {} in {}", args.join(" "), project.display());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown} (is Node.js with npm installed?): {e}"));
    let status = wait_within(&mut child, limit, &shown, &err);
    Ran {
        success: status.success(),
        stdout: std::fs::read_to_string(&out).unwrap_or_default(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

/// Waits (up to 180 s: a JavaScript component compiles in about 20 s on 2 cores, the game in 5 s)
/// until the server at `addr` has loaded its mods: it listens first, and answers "still loading" until
/// then.
async fn until_loaded(addr: std::net::SocketAddr) {
    let started = Instant::now();
    loop {
        let reply = tokio::time::timeout(Duration::from_secs(60), send(addr, &Call::get("/modhost/status")))
            .await
            .expect("an answer within 60 s")
            .unwrap();
        if !reply.text().contains("still loading") {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(180), "the mods did not load within 180 s: {}", reply.text());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_ts_project_builds_tests_and_serves_its_routes() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path();
    let name = "ts-demo";

    let mut new = Command::new(modhost_under_test());
    new.current_dir(scratch).args(["new", "--lang", "ts", name]).stdin(Stdio::null());
    new.stdout(Stdio::null()).stderr(std::fs::File::create(scratch.join("new.stderr")).unwrap());
    let mut child = new.spawn().expect("starting modhost new");
    let status = wait_within(&mut child, Duration::from_secs(30), "modhost new --lang ts", &scratch.join("new.stderr"));
    assert!(
        status.success(),
        "modhost new --lang ts failed: {}",
        std::fs::read_to_string(scratch.join("new.stderr")).unwrap()
    );
    let project = scratch.join(name);

    let installed = npm(&project, &["install"], INSTALL_LIMIT, scratch);
    assert!(installed.success, "npm install failed:\n{}", installed.output());

    let started = Instant::now();
    let built = npm(&project, &["run", "build"], BUILD_LIMIT, scratch);
    assert!(built.success, "npm run build failed:\n{}", built.output());
    println!("first build: {:.1} s", started.elapsed().as_secs_f64());
    let wasm = project.join(format!("dist/{name}.wasm"));
    assert!(wasm.exists(), "{} was not built:\n{}", wasm.display(), built.output());

    let tested = npm(&project, &["test"], BUILD_LIMIT, scratch);
    assert!(tested.success, "npm test failed:\n{}", tested.output());
    assert!(
        tested.stdout.contains("test hello reads the db and counts visits ... ok")
            && tested.stdout.contains("test result: ok. 1 passed; 0 failed"),
        "the template's test did not pass:\n{}",
        tested.output()
    );

    // A failing test fails the run, with its message shown.
    let test_file = project.join("src/mod.test.ts");
    let passing = std::fs::read_to_string(&test_file).unwrap();
    std::fs::write(
        &test_file,
        format!("{passing}\ntest(\"fails on purpose\", () => {{ assertEqual(1 + 1, 3, \"arithmetic broken on purpose\"); }});\n"),
    )
    .unwrap();
    let failing = npm(&project, &["test"], BUILD_LIMIT, scratch);
    assert!(!failing.success, "npm test passed with a failing test:\n{}", failing.output());
    assert!(
        failing.stdout.contains("test fails on purpose ... FAILED")
            && failing.stdout.contains("arithmetic broken on purpose: expected 3, got 2")
            && failing.stdout.contains("1 passed; 1 failed"),
        "the failure is not reported:\n{}",
        failing.output()
    );
    std::fs::write(&test_file, passing).unwrap();

    // A route whose handler throws a WIT error: answered with the status its case names. Built again
    // (the rebuild's time is the edit-build loop an author sees).
    let mod_file = project.join("src/mod.ts");
    let mut source = std::fs::read_to_string(&mod_file).unwrap();
    source.push_str(&format!(
        "\nimport {{ notFound }} from \"@modhost/sdk\";\nrouter.route(\"/{name}/gone\", () => {{ throw notFound(\"gone on purpose\"); }});\n"
    ));
    std::fs::write(&mod_file, source).unwrap();
    let started = Instant::now();
    let rebuilt = npm(&project, &["run", "build"], BUILD_LIMIT, scratch);
    assert!(rebuilt.success, "npm run build (again) failed:\n{}", rebuilt.output());
    println!("rebuild: {:.1} s", started.elapsed().as_secs_f64());

    // Installed as the README says, served by a real modhost.
    let root = scratch.join("root");
    let installed = root.join(format!("mods/{name}"));
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::copy(&wasm, installed.join(format!("{name}.wasm"))).unwrap();
    std::fs::copy(project.join("mod.toml"), installed.join("mod.toml")).unwrap();
    let server = ServeChild::spawn(&modhost_under_test(), &root, &[]).unwrap();
    let session = "0123456789abcdef01234567";
    let addr = server.addr;
    until_loaded(addr).await;
    let ask = |call: Call| async move {
        tokio::time::timeout(Duration::from_secs(60), send(addr, &call)).await.expect("an answer within 60 s").unwrap()
    };
    for visit in 1..=2 {
        let reply = ask(Call::get(&format!("/{name}/hello")).session(session)).await;
        let body = reply.json();
        assert_eq!(reply.status, 200, "{body}\n{}", server.tail());
        assert_eq!(body["err"], 0, "{body}");
        assert_eq!(body["data"]["item"], "Roubles", "{body}");
        assert_eq!(body["data"]["visits"], visit, "{body}");
    }
    let gone = ask(Call::get(&format!("/{name}/gone"))).await;
    assert_eq!(gone.status, 404, "{}\n{}", gone.text(), server.tail());
    assert!(gone.text().contains("gone on purpose"), "the error's sentence is not in the answer: {}", gone.text());
}

/// examples/welcome-pack-ts (built by `make polyglot`), installed as it ships beside the built-in
/// game in a real `modhost serve`: its hook refuses a blocked nickname in the game's place, and a new
/// player gets its gift through the game's event and `give-item`.
#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_welcome_pack_works_with_the_game() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let wasm = repo.join("target/polyglot/welcome-pack-ts.wasm");
    assert!(wasm.exists(), "{} is missing: run `make polyglot`", wasm.display());
    let dir = tempfile::tempdir().unwrap();
    let installed = dir.path().join("mods/welcome-pack-ts");
    std::fs::create_dir_all(&installed).unwrap();
    std::fs::copy(&wasm, installed.join("welcome-pack-ts.wasm")).unwrap();
    for file in ["mod.toml", "config.default.json", "config.schema.json"] {
        std::fs::copy(repo.join("examples/welcome-pack-ts").join(file), installed.join(file)).unwrap();
    }
    let server = ServeChild::spawn(&modhost_under_test(), dir.path(), &[]).unwrap();
    let addr = server.addr;
    until_loaded(addr).await;
    let ask = |call: Call| async move {
        tokio::time::timeout(Duration::from_secs(60), send(addr, &call)).await.expect("an answer within 60 s").unwrap()
    };
    let session = "0123456789abcdef01234567";
    let create = |nickname: &str| {
        let body = format!(r#"{{"nickname": "{nickname}", "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}}"#);
        Call::post("/client/game/profile/create", body.as_bytes()).session(session)
    };

    let refused = ask(create("Admin")).await;
    assert_eq!(refused.json()["err"], 226, "SPT's NicknameNotValid: {}\n{}", refused.text(), server.tail());
    let before = ask(Call::get("/welcome-pack-ts/gifts").session(session)).await.json();
    assert_eq!(before["data"], serde_json::json!([]), "{before}");

    let created = ask(create("Newcomer")).await;
    assert_eq!(created.json()["err"], 0, "{}\n{}", created.text(), server.tail());
    let gifts = ask(Call::get("/welcome-pack-ts/gifts").session(session)).await.json();
    let given = gifts["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(given.len(), 1, "one gift: {gifts}\n{}", server.tail());
    let profile = ask(Call::post("/client/game/profile/list", b"{}").session(session)).await.json();
    let items = profile["data"][0]["Inventory"]["items"].as_array().cloned().unwrap_or_default();
    let id = given[0].as_str().unwrap();
    let gift = items.iter().find(|i| i["_id"] == id).unwrap_or_else(|| panic!("gift {id} not in the stash"));
    assert_eq!(gift["_tpl"], "5449016a4bdc2d6f028b456f");
}
