use modhost::CompileSource;
use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::guests;

#[tokio::test]
async fn an_empty_root_gets_a_default_db_and_the_builtin_mods() {
    let server = TestServer::builder().config(|c| c.builtin_mods = true).start().await.unwrap();
    assert!(server.root().join("db.json").exists());
    assert!(server.report.loaded.iter().any(|m| m.id == "emulator"));
    let reply = send(server.addr, &Call::get("/client/items")).await.unwrap();
    assert_eq!(reply.json()["err"], 0);
    let reply = send(server.addr, &Call::get("/client/locale/xx")).await.unwrap();
    assert!(reply.json()["data"]["5449016a4bdc2d6f028b456f Name"].is_string(), "falls back to en");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_during_boot_waits_for_the_mods() {
    let builder = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .db_json(r#"{"fx": {"init_sleep_ms": 1500}}"#)
        .known_port();
    let addr = builder.addr();
    let booting = tokio::spawn(builder.start());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!booting.is_finished(), "the boot was meant to be slow");
    let reply = send(addr, &Call::get("/fx/p/early")).await.expect("connected and answered during boot");
    assert_eq!(reply.json()["rest"], "early");
    let server = booting.await.unwrap().unwrap();
    drop(server);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_waits_too_long_for_the_boot_gets_503_with_retry_after() {
    let builder = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .db_json(r#"{"fx": {"init_sleep_ms": 2000}}"#)
        .config(|c| c.boot_wait = std::time::Duration::from_millis(300))
        .known_port();
    let addr = builder.addr();
    let booting = tokio::spawn(builder.start());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let reply = send(addr, &Call::get("/fx/p/early")).await.unwrap();
    assert_eq!(reply.status, 503, "{}", reply.text());
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert_eq!(reply.json()["err"], "the server is still loading its mods");
    let server = booting.await.unwrap().unwrap();
    assert_eq!(send(server.addr, &Call::get("/fx/p/later")).await.unwrap().status, 200);
}

#[tokio::test]
async fn a_second_boot_loads_the_compiled_mod_from_the_cache() {
    let server = TestServer::builder().with_mod("fx", guests::FIXTURE, "").start().await.unwrap();
    assert_eq!(server.report.loaded[0].compile, CompileSource::Compiled);
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    assert_eq!(server.report.loaded[0].compile, CompileSource::Cached);
    assert_eq!(send(server.addr, &Call::get("/fx/instance")).await.unwrap().json(), 1);

    // A corrupt artifact is ignored and replaced, never trusted.
    let cache = server.root().join("cache");
    let again = server.restart_builder();
    server.stop().await.unwrap();
    for entry in std::fs::read_dir(&cache).unwrap() {
        std::fs::write(entry.unwrap().path(), b"not an artifact").unwrap();
    }
    let server = again.start().await.unwrap();
    assert_eq!(server.report.loaded[0].compile, CompileSource::Compiled);
    assert_eq!(send(server.addr, &Call::get("/fx/instance")).await.unwrap().json(), 1);
}

#[tokio::test]
async fn a_bad_db_json_is_a_clear_error_with_line_and_column() {
    let builder = TestServer::builder();
    let server = builder.start().await.unwrap();
    let root = server.root().to_owned();
    let again = server.restart_builder();
    server.stop().await.unwrap();
    std::fs::write(root.join("db.json"), "{\n \"a\": 1,\n \"b\": ]\n}").unwrap();
    let err = format!("{:#}", again.start().await.err().expect("a bad db.json stops the boot"));
    assert!(err.contains("db.json") && err.contains("line 3"), "{err}");
}

#[tokio::test]
async fn a_broken_mod_folder_is_reported_and_the_others_load() {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "");
    let server = builder.start().await.unwrap();
    let root = server.root().to_owned();
    let again = server.restart_builder();
    server.stop().await.unwrap();

    std::fs::create_dir_all(root.join("mods/broken")).unwrap();
    std::fs::write(root.join("mods/broken/mod.toml"), "id = \"broken\"\nversion = \"1.0.0\"\nreuze = 2\n").unwrap();
    std::fs::create_dir_all(root.join("mods/notwasm")).unwrap();
    std::fs::write(root.join("mods/notwasm/mod.toml"), "id = \"notwasm\"\nversion = \"1.0.0\"\n").unwrap();
    std::fs::write(root.join("mods/notwasm/notwasm.wasm"), b"\0asm garbage").unwrap();

    let server = again.start().await.unwrap();
    assert_eq!(server.report.loaded.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["fx"]);
    let failed: Vec<_> = server.report.failed.iter().map(ToString::to_string).collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed[0].contains("broken") && failed[0].contains("reuze"), "{failed:?}");
    assert!(failed[1].contains("notwasm") && failed[1].contains("not a WebAssembly component"), "{failed:?}");
    assert_eq!(send(server.addr, &Call::get("/fx/instance")).await.unwrap().json(), 1);
}
