//! The mod lifecycle: `requires`/`load_after`/`conflicts` resolved into a load order, a failing `init`
//! taking its dependents out, and reloads (by call, by HTTP, by `--watch`) that swap code and a rebuilt
//! db while requests keep flowing and that leave the old generation serving when they fail.

use modhost_tests::client::{Call, Client, send};
use modhost_tests::tiny_mod::{Init, component};
use modhost_tests::{TestServer, guests};
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes `<root>/mods/<id>/` with `mod.toml` = `id = "<id>"` + `rest`, and the component.
fn put(root: &Path, id: &str, rest: &str, wasm: &[u8]) {
    let dir = root.join("mods").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.toml"), format!("id = \"{id}\"\n{rest}\n")).unwrap();
    std::fs::write(dir.join(format!("{id}.wasm")), wasm).unwrap();
}

/// A tiny mod claiming `/t/<id>`, with `init` as asked, and `rest` as its manifest.
fn tiny(root: &Path, id: &str, rest: &str, init: Init) {
    put(root, id, rest, &component(&format!("/t/{id}"), init).unwrap());
}

fn reason<'a>(failed: &'a [modhost::LeftOut], id: &str) -> &'a str {
    failed
        .iter()
        .find(|left| left.id == id)
        .map(|left| left.reason.as_str())
        .unwrap_or_else(|| panic!("{id} not left out"))
}

#[tokio::test]
async fn relations_order_the_mods_and_refusals_name_them() {
    let builder = TestServer::builder();
    let root = builder.root().to_owned();
    let v = "version = \"0.2.0\"";
    tiny(&root, "app", &format!("{v}\nload_after = [\"zlast\"]\n[requires]\nbase = \"^0.2\""), Init::Ok);
    tiny(&root, "badinit", v, Init::Trap);
    tiny(&root, "base", &format!("{v}\nload_before = [\"aearly\"]"), Init::Ok);
    tiny(&root, "aearly", v, Init::Ok);
    tiny(&root, "zlast", v, Init::Ok);
    tiny(&root, "needsbad", &format!("{v}\n[requires]\nbadinit = \"*\""), Init::Ok);
    tiny(&root, "old", &format!("{v}\n[requires]\nbase = \"^1\""), Init::Ok);
    tiny(&root, "orphan", &format!("{v}\n[requires]\nghost = \">=1.0\""), Init::Ok);
    tiny(&root, "child", &format!("{v}\n[requires]\norphan = \"*\""), Init::Ok);
    tiny(&root, "rival", &format!("{v}\nconflicts = [\"base\"]"), Init::Ok);
    tiny(&root, "cyc1", &format!("{v}\n[requires]\ncyc2 = \"*\""), Init::Ok);
    tiny(&root, "cyc2", &format!("{v}\nload_after = [\"cyc1\"]"), Init::Ok);
    tiny(&root, "future", &format!("{v}\nmodhost = \">=9\""), Init::Ok);

    let server = builder.start().await.unwrap();
    let loaded: Vec<&str> = server.report.loaded.iter().map(|m| m.id.as_str()).collect();
    // Folder order is aearly, app, badinit, base, …, zlast. base must precede aearly (load_before)
    // and app (requires); zlast must precede app (load_after); ties keep folder order. The full order
    // is badinit, base, aearly, needsbad, zlast, app, and badinit's init traps, taking needsbad along.
    assert_eq!(loaded, ["base", "aearly", "zlast", "app"]);
    let failed = &server.report.failed;
    assert!(reason(failed, "badinit").contains("init failed"), "{failed:?}");
    assert_eq!(reason(failed, "needsbad"), "it requires `badinit`, which failed to load");
    assert_eq!(reason(failed, "old"), "it requires `base` ^1, but `base` 0.2.0 is installed");
    assert_eq!(reason(failed, "orphan"), "it requires `ghost` >=1.0, which is not installed");
    assert_eq!(reason(failed, "child"), "it requires `orphan`, which was left out");
    assert_eq!(reason(failed, "rival"), "it conflicts with `base` 0.2.0, which is installed");
    let cycle = reason(failed, "cyc1");
    assert!(cycle.contains("cyc1 requires cyc2") && cycle.contains("cyc2 has load_after cyc1"), "{cycle}");
    assert!(reason(failed, "future").contains("needs modhost API >=9"));
    assert_eq!(failed.len(), 9, "{failed:?}");
    // The loaded mods serve; the refused ones' routes do not exist.
    assert_eq!(send(server.addr, &Call::get("/t/rival")).await.unwrap().status, 404);
    let mods = send(server.addr, &Call::get("/modhost/mods")).await.unwrap().json();
    assert_eq!(mods["loaded"][0]["id"], "base");
    assert_eq!(mods["loaded"][3]["requires"][0], "base ^0.2");
    let again = server.restart_builder();
    server.stop().await.unwrap();

    // Under --strict the same root refuses to start, naming every broken mod.
    let strict = again.config(|c| c.strict = true);
    let error = format!("{:#}", strict.start().await.err().expect("--strict must refuse"));
    for id in ["badinit", "needsbad", "old", "orphan", "child", "rival", "cyc1", "future"] {
        assert!(error.contains(id), "{id} missing from: {error}");
    }
}

/// The rouble's name as `/hello/item` answers it. Reconnects after an answer that closes the
/// connection (the server's 512th on one connection), as a game client does.
async fn rouble_name(addr: std::net::SocketAddr, client: &mut Client) -> anyhow::Result<String> {
    let reply = client.send(&Call::post("/hello/item", b"{}")).await?;
    if reply.header("connection") == Some("close") {
        *client = Client::connect(addr).await?;
    }
    anyhow::ensure!(reply.status == 200, "status {}: {}", reply.status, reply.text());
    let json = reply.json();
    anyhow::ensure!(json["err"] == 0, "err: {json}");
    json["data"]["name"].as_str().map(str::to_owned).ok_or_else(|| anyhow::anyhow!("no name: {json}"))
}

/// Rewrites `<root>/db.json` with the rouble named `name`.
fn rename_rouble(root: &Path, name: &str) {
    let path = root.join("db.json");
    let mut db: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    db["templates"]["items"][modhost_tests::gamedb::ROUBLES]["_props"]["Name"] = name.into();
    // Written aside and renamed, as a careful editor does, so a watcher never reads half a file.
    std::fs::write(root.join("db.json.next"), serde_json::to_vec(&db).unwrap()).unwrap();
    std::fs::rename(root.join("db.json.next"), &path).unwrap();
}

async fn reload(addr: std::net::SocketAddr) -> serde_json::Value {
    send(addr, &Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1")).await.unwrap().json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_swaps_code_and_a_rebuilt_db_and_a_failed_one_changes_nothing() {
    let server = TestServer::builder().with_mod("m", guests::HELLO, "").start().await.unwrap();
    let (addr, root) = (server.addr, server.root().to_owned());
    let mut client = Client::connect(addr).await.unwrap();
    let first = rouble_name(addr, &mut client).await.unwrap();
    let visits = |n: u64| async move {
        let reply = send(addr, &Call::post("/hello/visits", b"{}").session("0123456789abcdef01234567")).await.unwrap();
        assert_eq!(reply.json()["data"]["visits"], n, "the store carries on across reloads");
    };
    visits(1).await;

    rename_rouble(&root, "Reloaded roubles");
    let outcome = reload(addr).await;
    assert_eq!((outcome["ok"].clone(), outcome["generation"].clone()), (true.into(), 2.into()), "{outcome}");
    assert_eq!(rouble_name(addr, &mut client).await.unwrap(), "Reloaded roubles", "was {first}");
    visits(2).await;

    // New code for the same mod: hello's routes go, the fixture's come.
    std::fs::copy(guests::FIXTURE, root.join("mods/m/m.wasm")).unwrap();
    std::fs::write(root.join("mods/m/mod.toml"), "id = \"m\"\nversion = \"0.3.0\"\n").unwrap();
    assert_eq!(reload(addr).await["ok"], true);
    assert_eq!(send(addr, &Call::post("/hello/item", b"{}")).await.unwrap().status, 404, "hello's code is gone");

    // A request in flight when the next reload swaps the fixture out finishes on the old generation.
    // 600 ms to get into the mod (route lookup happens in the first millisecond), 3 s inside it.
    let slow = tokio::spawn(async move { send(addr, &Call::get("/fx/sleep/3000")).await });
    tokio::time::sleep(Duration::from_millis(600)).await;
    let tiny_m = component("/t/x", Init::Ok).unwrap();
    put(&root, "m", "version = \"0.4.0\"", &tiny_m);
    let swapped = reload(addr).await;
    assert_eq!(swapped["ok"], true, "{swapped}");
    assert!(!slow.is_finished(), "the reload waited for nothing: the call is still in flight");
    let slow = slow.await.unwrap().unwrap();
    assert_eq!((slow.status, slow.json()), (200, serde_json::json!("slept")), "the in-flight call finished");
    assert_eq!(send(addr, &Call::get("/fx/sleep/1")).await.unwrap().status, 404, "new requests see the new code");
    assert_eq!(send(addr, &Call::get("/t/x")).await.unwrap().status, 500, "the tiny mod serves (and traps)");

    // The player's limits are read anew: a changed one applies, a bad file refuses the reload.
    std::fs::write(root.join("modhost.toml"), "[mods.m]\ncall_timeout_ms = 1234\n").unwrap();
    assert_eq!(reload(addr).await["ok"], true);
    let mods = send(addr, &Call::get("/modhost/mods")).await.unwrap().json();
    assert_eq!(mods["loaded"][0]["limits"]["call_timeout_ms"], 1234, "{mods}");
    std::fs::write(root.join("modhost.toml"), "[mods.m]\ncall_timeout_mz = 1\n").unwrap();
    let refused = reload(addr).await;
    assert!(refused["reason"].as_str().unwrap().contains("call_timeout_mz"), "{refused}");
    std::fs::write(root.join("modhost.toml"), "[limits]\nmemory_mib = 100000\n").unwrap();
    let refused = reload(addr).await;
    assert!(refused["reason"].as_str().unwrap().contains("modhost.toml"), "{refused}");
    std::fs::remove_file(root.join("modhost.toml")).unwrap();
    let swapped = reload(addr).await;
    assert_eq!(swapped["ok"], true, "{swapped}");

    // A broken mod that the serving generation runs: refused, and the old generation keeps serving.
    std::fs::write(root.join("mods/m/m.wasm"), b"not wasm").unwrap();
    let reply = send(addr, &Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1")).await.unwrap();
    let refused = reply.json();
    assert_eq!((reply.status, refused["ok"].clone()), (409, false.into()), "{refused}");
    let why = refused["reason"].as_str().unwrap();
    assert!(why.contains("m:") && why.contains("would be lost"), "{why}");
    assert_eq!(refused["generation"], swapped["generation"]);
    assert_eq!(send(addr, &Call::get("/t/x")).await.unwrap().status, 500, "still the old generation");
    // So does an unreadable db.json, naming the file.
    put(&root, "m", "version = \"0.4.0\"", &tiny_m);
    std::fs::write(root.join("db.json"), b"{ nope").unwrap();
    let refused = reload(addr).await;
    assert!(refused["reason"].as_str().unwrap().contains("db.json is not valid JSON"), "{refused}");
    // And a db.json gone missing: never replaced by a default one behind the player's back.
    std::fs::remove_file(root.join("db.json")).unwrap();
    let refused = reload(addr).await;
    assert!(refused["reason"].as_str().unwrap().contains("db.json"), "{refused}");
    assert!(!root.join("db.json").exists());
    let status = send(addr, &Call::get("/modhost/status")).await.unwrap().json();
    assert_eq!(status["generation"]["number"], swapped["generation"]);
    assert_eq!(status["last_reload"]["ok"], false);
    server.stop().await.unwrap();
}

/// Clients on kept-alive connections read `/hello/item` without pause while the db and the mods are
/// reloaded again and again: no request may fail, and each answer is one generation's whole truth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reloads_under_load_drop_no_request() {
    const CLIENTS: usize = 4;
    const RELOADS: usize = 12;
    let server = TestServer::builder()
        .with_mod("m", guests::HELLO, "")
        .with_mod("fx", guests::FIXTURE, "")
        .start()
        .await
        .unwrap();
    let (addr, root) = (server.addr, server.root().to_owned());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let stop = stop.clone();
        clients.push(tokio::spawn(async move {
            let (mut ok, mut failed, mut names) = (0u64, Vec::new(), std::collections::BTreeSet::new());
            let mut client = Client::connect(addr).await.unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
                match rouble_name(addr, &mut client).await {
                    Ok(name) => {
                        ok += 1;
                        names.insert(name);
                    }
                    Err(e) => {
                        failed.push(e.to_string());
                        client = Client::connect(addr).await.unwrap();
                    }
                }
            }
            (ok, failed, names)
        }));
    }
    let mut took = Vec::new();
    for i in 0..RELOADS {
        tokio::time::sleep(Duration::from_millis(100)).await;
        rename_rouble(&root, &format!("roubles of generation {}", i + 2));
        // Every other reload also replaces a mod's code (the same bytes under a new version).
        std::fs::write(root.join("mods/fx/mod.toml"), format!("id = \"fx\"\nversion = \"0.1.{i}\"\n")).unwrap();
        let outcome = reload(addr).await;
        assert_eq!(outcome["ok"], true, "{outcome}");
        took.push(outcome["took_ms"].as_f64().unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (mut ok, mut names) = (0, std::collections::BTreeSet::new());
    for client in clients {
        let (n, failed, seen) = client.await.unwrap();
        assert!(failed.is_empty(), "requests failed during reloads: {failed:?}");
        ok += n;
        names.extend(seen);
    }
    took.sort_by(f64::total_cmp);
    println!(
        "{ok} requests over {RELOADS} reloads, 0 failed; reload time median {:.1} ms, max {:.1} ms; {} names seen",
        took[took.len() / 2],
        took[took.len() - 1],
        names.len()
    );
    // Each answer names the rouble as one generation has it: the boot's or a reload's.
    for name in &names {
        assert!(name == "Roubles" || name.starts_with("roubles of generation "), "a torn answer: {name}");
    }
    assert!(names.len() >= RELOADS / 2, "the clients saw the reloads land: {names:?}");
    let status = send(addr, &Call::get("/modhost/status")).await.unwrap().json();
    assert_eq!(status["generation"]["number"], RELOADS as u64 + 1);
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_reloads_when_a_mod_or_the_db_changes() {
    let server =
        TestServer::builder().with_mod("m", guests::HELLO, "").config(|c| c.watch = true).start().await.unwrap();
    let (addr, root) = (server.addr, server.root().to_owned());
    let mut client = Client::connect(addr).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);

    rename_rouble(&root, "Watched roubles");
    loop {
        if rouble_name(addr, &mut client).await.unwrap() == "Watched roubles" {
            break;
        }
        if Instant::now() > deadline {
            let status = send(addr, &Call::get("/modhost/status")).await.unwrap().text();
            panic!("the db change was not picked up: {status}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A new mod dropped in is loaded beside the others.
    tiny(&root, "dropped", "version = \"1.0.0\"", Init::Ok);
    loop {
        if send(addr, &Call::get("/t/dropped")).await.unwrap().status != 404 {
            break;
        }
        assert!(Instant::now() < deadline, "the new mod was not loaded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A reload only reads: with nothing changing, the generation stays put.
    let settled = send(addr, &Call::get("/modhost/status")).await.unwrap().json()["generation"]["number"].clone();
    tokio::time::sleep(modhost::watch::SETTLE * 3).await;
    let later = send(addr, &Call::get("/modhost/status")).await.unwrap().json();
    assert_eq!(later["generation"]["number"], settled, "reloads must not trigger themselves: {later}");
    assert_eq!(later["watching"], true);
    server.stop().await.unwrap();
}

/// A mod refused after its `routes` ran (here: its routes conflict with a mod loaded before it) leaves
/// the db as it found it, including what it patched from `routes`; before, only `init`'s patches
/// were undone.
#[tokio::test]
async fn a_refused_mod_leaves_no_patch_it_made_while_routing() {
    // `fa` loads first and may not write the db; `fb` is the same component, may write `fx`, and is
    // refused for claiming `fa`'s routes after its `routes` patched the db.
    let server = TestServer::builder()
        .db_json(r#"{"fx": {"patch_while_routing": true}}"#)
        .with_mod("fa", guests::FIXTURE, "")
        .with_mod("fb", guests::FIXTURE, "[grants]\ndb_write = [\"fx\"]")
        .start()
        .await
        .unwrap();
    let failed = &server.report.failed;
    assert!(failed.iter().any(|m| m.id == "fb" && m.reason.contains("/fx/")), "fb is refused: {failed:?}");
    let patched = send(server.addr, &Call::get("/fx/get/fx.patched_while_routing")).await.unwrap();
    assert_eq!(patched.status, 404, "the refused mod's patch stays undone: {}", patched.text());
}
