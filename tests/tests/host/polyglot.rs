//! Mods written in other languages with their own tools (`make polyglot` builds them into
//! `target/polyglot/`): each hello example (Rust, JavaScript, Python, C) answers exactly as the Rust
//! one does, and a Python mod that tries to reach files, sockets or the environment is refused.

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// A component `make polyglot` built; a clear failure when it has not run.
fn built(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/polyglot").join(name);
    assert!(path.exists(), "{} is missing: run `make polyglot` (see docs/mods-*.md)", path.display());
    path.to_string_lossy().into_owned()
}

/// Each hello mod's answers to the same conversation.
async fn conversation(id: &str, wasm: &str) -> Vec<serde_json::Value> {
    let started = Instant::now();
    let server = TestServer::builder().with_mod(id, wasm, "").config(|c| c.builtin_mods = true).start().await.unwrap();
    assert!(server.report.failed.is_empty(), "{id}: {:?}", server.report.failed);
    println!("{id}: loaded in {:.0} ms (compiled)", started.elapsed().as_secs_f64() * 1e3);
    let session = "5e55105e55105e55105e5510";
    let mut answers = Vec::new();
    for (path, post) in [
        ("/hello/item", true),
        ("/hello/visits", true),
        ("/hello/visits", true),
        ("/hello/fail", false),
        ("/hello/nothing", false),
    ] {
        let call = if post { Call::post(path, b"{}") } else { Call::get(path) };
        let reply = send(server.addr, &call.session(session)).await.unwrap();
        answers.push(json!({"path": path, "status": reply.status, "body": reply.json()}));
    }
    // The item table by reference: too big to compare whole; its shape and one value.
    let items = send(server.addr, &Call::get("/hello/items")).await.unwrap().json();
    answers.push(json!({"items.err": items["err"], "rouble stack": items["data"]["5449016a4bdc2d6f028b456f"]["_props"]["StackMaxSize"]}));
    answers
}

#[tokio::test]
async fn the_hello_example_answers_the_same_in_every_language() {
    let rust = conversation("hello", guests::HELLO).await;
    assert_eq!(
        rust[0]["body"],
        json!({"err": 0, "errmsg": null, "data": {"id": "5449016a4bdc2d6f028b456f", "name": "Roubles"}})
    );
    assert_eq!(rust[2]["body"]["data"]["visits"], 2);
    assert_eq!(rust[4]["status"], 404);
    assert_eq!(rust[5]["rouble stack"], 500000);
    // C arrives as a WASI 0.1 core module; it becomes a component here, as `wrap-core` does.
    let core = std::fs::read(built("hello-c.core.wasm")).unwrap();
    let c = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(c.path(), modhost_tests::core_wrap::component(&core).unwrap()).unwrap();
    let c = c.path().to_string_lossy().into_owned();
    for (id, wasm) in
        [("hello-js", built("hello-js.wasm")), ("hello-python", built("hello-python.wasm")), ("hello-c", c.clone())]
    {
        assert_eq!(conversation(id, &wasm).await, rust, "{id} answers differently from the Rust hello");
    }
}

#[tokio::test]
async fn a_python_mod_gets_no_files_sockets_or_environment() {
    let server = TestServer::builder().with_mod("pyesc", &built("python-escape.wasm"), "").start().await.unwrap();
    assert!(server.report.failed.is_empty(), "{:?}", server.report.failed);
    // The server's own port: listening, so only the sandbox can refuse the connection.
    let port = server.addr.port().to_string();
    let reply = send(server.addr, &Call::post_raw("/pyesc/escape", port.as_bytes())).await.unwrap();
    let outcome = reply.json();
    println!("{outcome:#}");
    for attempt in ["read_file", "list_dir", "write_file", "connect"] {
        let said = outcome[attempt].as_str().unwrap_or_else(|| panic!("{outcome}"));
        assert!(said.starts_with("refused"), "{attempt}: {said}");
    }
    assert_eq!(outcome["env"], 0, "{outcome}");
}
