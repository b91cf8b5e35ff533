//! Hardening of the data paths (issue 17): a mod cannot fill the disk through its store namespace, a
//! `db.patch` is capped and its malformed path is `invalid`, and a db.json nested far deeper than any
//! path survives a reload.

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};

async fn call(server: &TestServer, path: &str, body: &[u8]) -> Value {
    let reply = send(server.addr, &Call::post_raw(path, body)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.json()
}

async fn reload(server: &TestServer) -> Value {
    send(server.addr, &Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1")).await.unwrap().json()
}

/// The fixture (`fx`, granted `fx` in the db) with the player's `modhost.toml` holding `player_toml`.
async fn fixture_with(player_toml: &str, db_json: Option<&str>) -> TestServer {
    let mut builder = TestServer::builder().with_mod("fx", guests::FIXTURE, super::FX_GRANTS);
    if let Some(text) = db_json {
        builder = builder.db_json(text);
    }
    std::fs::write(builder.root().join("modhost.toml"), player_toml).unwrap();
    builder.start().await.unwrap()
}

#[tokio::test]
async fn a_mod_filling_its_store_namespace_is_refused_at_its_quota_naming_it_and_other_namespaces_save_on() {
    let server = fixture_with("[mods.fx]\nstore_mib = 1\n", None).await;
    // 64 KiB values: sixteen make the 1 MiB quota exactly, the seventeenth is refused.
    let filled = call(&server, "/fx/fill/65536", b"").await;
    assert_eq!(filled["written"], 16, "{filled}");
    let error = filled["error"].as_str().unwrap();
    assert!(error.starts_with("too large:"), "{error}");
    assert!(
        error.contains("namespace `fx`") && error.contains("1048576 bytes") && error.contains("store_mib"),
        "{error}"
    );
    assert_eq!(server.app.store.get("fx", "fill.16").unwrap(), None, "the refused write wrote nothing");
    assert_eq!(server.app.store.usage("fx").bytes, 1 << 20);
    // Another namespace (another mod's saves) is not held to fx's quota.
    server.app.store.set("emulator", "profile.x", &vec![b'p'; 2 << 20]).unwrap();

    // The player raises the quota: a reload applies it.
    std::fs::write(server.root().join("modhost.toml"), "[mods.fx]\nstore_mib = 2\n").unwrap();
    assert_eq!(reload(&server).await["ok"], true);
    let filled = call(&server, "/fx/fill/65536", b"").await;
    assert_eq!(filled["written"], 32, "rewriting the first sixteen grows nothing: {filled}");
}

#[tokio::test]
async fn a_store_quota_out_of_range_stops_the_boot_naming_the_key() {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, super::FX_GRANTS);
    std::fs::write(builder.root().join("modhost.toml"), "[limits]\nstore_mib = 18446744073709551615\n").unwrap();
    let error = format!("{:#}", builder.start().await.err().expect("the boot must be refused"));
    assert!(error.contains("store_mib") && error.contains("modhost.toml"), "{error}");
}

#[tokio::test]
async fn a_malformed_db_patch_path_is_invalid_not_denied() {
    let server = fixture_with("", None).await;
    // Under the grant, but 130 members deep: the path is malformed, whatever the grants say.
    let path = format!("fx{}", ".a".repeat(129));
    let answer = call(&server, &format!("/fx/patch-at/{path}"), b"{}").await;
    let error = answer["error"].as_str().unwrap_or_else(|| panic!("not refused: {answer}"));
    assert!(error.starts_with("invalid:") && error.contains("the limit is 128"), "{error}");
    // A well-formed path without a grant is still denied.
    let answer = call(&server, "/fx/patch-at/globals", b"{}").await;
    assert!(answer["error"].as_str().unwrap().starts_with("denied:"), "{answer}");
}

#[tokio::test]
async fn a_db_patch_over_the_players_cap_is_too_large_and_one_under_it_runs_off_the_workers() {
    let server = fixture_with("[mods.fx]\ndb_patch_mib = 1\n", None).await;
    let over = format!(r#"{{"s":"{}"}}"#, "x".repeat(1 << 20));
    let answer = call(&server, "/fx/patch-at/fx.big", over.as_bytes()).await;
    let error = answer["error"].as_str().unwrap_or_else(|| panic!("not refused: {answer}"));
    assert!(error.starts_with("too large:") && error.contains("db_patch_mib"), "{error}");
    assert!(!server.app.generation().db.exists("fx.big").unwrap(), "a refused patch changed the db");
    // Under the cap but over what runs inline (256 KiB): on the blocking pool, with the same outcome.
    let members: Vec<String> = (0..20_000).map(|i| format!(r#""m{i}":{{"v":{i}}}"#)).collect();
    let under = format!("{{{}}}", members.join(","));
    assert!(under.len() > 256 << 10 && under.len() < 1 << 20);
    assert_eq!(call(&server, "/fx/patch-at/fx.big", under.as_bytes()).await, json!({"value": null}));
    assert_eq!(&server.app.generation().db.get("fx.big.m19999.v").unwrap()[..], b"19999");
    let bad = format!("{}, oops", &under[..under.len() - 1]);
    let answer = call(&server, "/fx/patch-at/fx.big", bad.as_bytes()).await;
    assert!(answer["error"].as_str().unwrap().starts_with("invalid:"), "{answer}");
}

#[tokio::test]
async fn a_db_json_nested_far_deeper_than_any_path_survives_a_reload() {
    // 100 000 levels (600 KB): loading skips values without recursing, so it booted; the reload's
    // warming (and the old generation's drop) recursed once per level and aborted the process.
    let levels = 100_000;
    let deep = format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels));
    let server = fixture_with("", Some(&format!(r#"{{"fx": {{}}, "deep": {deep}}}"#))).await;
    assert_eq!(reload(&server).await["ok"], true);
    assert_eq!(reload(&server).await["ok"], true, "and the generation it replaced was dropped");
    let reply = send(server.addr, &Call::get("/fx/get/deep.a.a.a").identity()).await.unwrap();
    assert_eq!(reply.status, 200);
    assert!(reply.text().starts_with("{\"a\":{\"a\":"), "{}", &reply.text()[..40]);
}

/// The store's files in `dir` (the database, its log and shared memory), in bytes.
fn store_files(dir: &std::path::Path) -> u64 {
    ["store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm"]
        .iter()
        .filter_map(|name| std::fs::metadata(dir.join(name)).ok())
        .map(|m| m.len())
        .sum()
}

#[tokio::test]
async fn a_grantless_mod_writing_and_deleting_distinct_keys_stays_within_its_quota_on_disk_and_players_save_on() {
    // Issue 29: with `store_mib = 1`, writing and deleting distinct keys left every deleted value in
    // the store's backups, uncounted: hundreds of MB, until every player's saves failed.
    let builder = TestServer::builder().config(|c| c.builtin_mods = true).with_mod("fx", guests::FIXTURE, "");
    std::fs::write(builder.root().join("modhost.toml"), "[mods.fx]\nstore_mib = 1\n").unwrap();
    let server = builder.start().await.unwrap();
    let dir = server.root().join("store");
    let before = store_files(&dir);
    // 400 keys of 64 KiB written and deleted: 26 MB through a 1 MiB quota.
    for from in [0, 100, 200, 300] {
        let churned = call(&server, &format!("/fx/churn/65536/100/{from}"), b"").await;
        assert_eq!(churned, json!({"done": 100, "error": null}), "a delete is never refused");
    }
    let usage = server.app.store.usage("fx");
    assert_eq!((usage.bytes, usage.keys), (0, 0));
    assert!(usage.history <= 1 << 20, "fx's backups cost {} bytes, over its 1 MiB quota", usage.history);
    // On disk, the log included, once the store's maintenance has checkpointed it (each second).
    let bound = before + 4 * (1 << 20);
    let started = std::time::Instant::now();
    let mut used = store_files(&dir);
    while used > bound && started.elapsed() < std::time::Duration::from_secs(10) {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        used = store_files(&dir);
    }
    assert!(used <= bound, "the store's files grew from {before} to {used} bytes under fx's 1 MiB quota");
    // Its backups do not take its quota: it may still fill it, and is then refused, clearly.
    let filled = call(&server, "/fx/fill/65536", b"").await;
    assert_eq!(filled["written"], 16, "{filled}");
    let error = filled["error"].as_str().unwrap();
    assert!(
        error.contains("namespace `fx`") && error.contains("1048576 bytes") && error.contains("store_mib"),
        "{error}"
    );
    // A player's profile is saved through the game meanwhile.
    let session = "0123456789abcdef01234567";
    let create = br#"{"nickname": "Saver", "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}"#;
    let reply = send(server.addr, &Call::post("/client/game/profile/create", create).session(session)).await.unwrap();
    assert_eq!(reply.json()["err"], 0, "{}", reply.text());
    let profiles =
        send(server.addr, &Call::post("/client/game/profile/list", b"{}").session(session)).await.unwrap().json();
    assert_eq!(profiles["data"][0]["Info"]["Nickname"], "Saver", "{profiles}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_mods_timers_are_held_to_its_store_quota_and_fired_ones_leave_no_backup() {
    // Issue 29: `[mods.<id>] store_mib` was not applied to the mod's `timers.<id>` namespace, and each
    // fired one-shot left its record in the store's backups (300 timers: 18 MB).
    let builder = TestServer::builder();
    let dir = builder.root().join("mods").join("tm");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), "{}").unwrap();
    std::fs::write(builder.root().join("modhost.toml"), "[mods.tm]\nstore_mib = 1\n").unwrap();
    let server = builder.with_mod("tm", guests::TIMER, "").start().await.unwrap();
    let ask = json!({"name": "note", "delay_ms": 3_600_000, "payload_bytes": 65536, "count": 40});
    let scheduled = call(&server, "/timer/schedule", ask.to_string().as_bytes()).await;
    let ids = scheduled["ids"].as_array().unwrap();
    assert_eq!(ids.len(), 15, "fifteen records of 64 KiB fit in 1 MiB: {scheduled}");
    assert_eq!(scheduled["error"]["kind"], "too-large", "{scheduled}");
    let message = scheduled["error"]["message"].as_str().unwrap();
    assert!(message.contains("namespace `timers.tm`") && message.contains("1048576 bytes"), "{message}");
    for id in ids {
        let cancelled = call(&server, &format!("/timer/cancel/{}", id.as_str().unwrap()), b"").await;
        assert_eq!(cancelled["cancelled"], true, "{cancelled}");
    }
    // Fired (and cancelled) timers' records are deleted without a backup.
    let ask = json!({"name": "note", "delay_ms": 0, "payload_bytes": 1000, "count": 60});
    assert_eq!(call(&server, "/timer/schedule", ask.to_string().as_bytes()).await["ids"].as_array().unwrap().len(), 60);
    let started = std::time::Instant::now();
    while !server.app.store.list("timers.tm", "o.").unwrap().is_empty() && started.elapsed().as_secs() < 20 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(server.app.store.list("timers.tm", "o.").unwrap(), Vec::<String>::new(), "every timer fired");
    assert_eq!(server.app.store.usage("timers.tm").history, 0, "no backup of a timer's record");
    server.stop().await.unwrap();
}
