//! A mod's configuration (docs/config.md, `modhost_mods::config`): the defaults it ships and the
//! player's `config.json` over them reach `config.get` (the fixture's `/fx/config/<path>`); a file
//! that breaks a rule refuses the load or the reload, naming the file, the key and the rule; a changed
//! `config.json` under `--watch` reloads; `POST /modhost/config/<id>` checks, writes and reloads.

use modhost_tests::client::{Call, Reply, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

const DEFAULTS: &str = r#"{"greeting": "hello", "gift": {"count": 2, "item": "bread"}, "loud": false}"#;
const SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "greeting": {"type": "string"},
        "gift": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1}}},
        "loud": {"type": "boolean"}
    }
}"#;

/// Writes `files` (name, text) into `<root>/mods/<id>/` before the server installs the mod there.
fn config_files(root: &Path, id: &str, files: &[(&str, &str)]) {
    let folder = root.join("mods").join(id);
    std::fs::create_dir_all(&folder).expect("the mod folder");
    for (name, text) in files {
        std::fs::write(folder.join(name), text).expect("a config file");
    }
}

/// The fixture installed as `fx` with the given config files.
fn fx_with(files: &[(&str, &str)]) -> TestServerBuilder {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "");
    config_files(builder.root(), "fx", files);
    builder
}

/// `config.get(path)` as the fixture answers it: the status and the body.
async fn config_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let reply = send(addr, &Call::get(&format!("/fx/config/{path}")).identity()).await.expect("a request");
    (reply.status, reply.text())
}

async fn reload(addr: SocketAddr) -> Reply {
    let call = Call::post_raw("/modhost/reload", b"").header("x-modhost-reload", "1").identity();
    tokio::time::timeout(Duration::from_secs(60), send(addr, &call)).await.expect("a reload in time").expect("a reload")
}

async fn edit(addr: SocketAddr, id: &str, body: &str) -> Reply {
    let call = Call::post_raw(&format!("/modhost/config/{id}"), body.as_bytes()).header("x-modhost-reload", "1");
    tokio::time::timeout(Duration::from_secs(60), send(addr, &call.identity())).await.expect("in time").expect("sent")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_get_reads_the_defaults_with_the_players_file_over_them() {
    let server = fx_with(&[
        ("config.default.json", DEFAULTS),
        ("config.schema.json", SCHEMA),
        ("config.json", r#"{"gift": {"count": 5}}"#),
    ])
    .start()
    .await
    .expect("booting");
    let addr = server.addr;
    assert_eq!(config_get(addr, "gift.count").await, (200, "5".to_owned()), "the player's value");
    assert_eq!(config_get(addr, "gift.item").await, (200, "\"bread\"".to_owned()), "a default beside it");
    assert_eq!(config_get(addr, "greeting").await, (200, "\"hello\"".to_owned()), "a default");
    let (status, whole) = config_get(addr, "").await;
    assert_eq!(status, 200);
    let whole: serde_json::Value = serde_json::from_str(&whole).expect("JSON");
    assert_eq!(whole, serde_json::json!({"greeting": "hello", "gift": {"count": 5, "item": "bread"}, "loud": false}));
    let (status, missing) = config_get(addr, "gift.colour").await;
    assert_eq!(status, 404, "{missing}");
    assert!(missing.contains("gift.colour"), "{missing}");

    // /modhost/mods shows what the mod reads, its schema and where the player's file is.
    let mods = send(addr, &Call::get("/modhost/mods").identity()).await.expect("a request").json();
    let fx = mods["loaded"].as_array().and_then(|l| l.iter().find(|m| m["id"] == "fx")).expect("fx loaded");
    assert_eq!(fx["config"], whole, "{fx:#}");
    assert_eq!(fx["config_defaults"]["gift"]["count"], 2, "{fx:#}");
    assert_eq!(fx["config_schema"]["properties"]["gift"]["properties"]["count"]["minimum"], 1, "{fx:#}");
    let file = fx["config_file"].as_str().expect("the player's file");
    assert!(file.ends_with("mods/fx/config.json"), "{file}");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_validation_errors_name_the_file_the_key_and_the_rule() {
    // Each bad mod is the fixture under another id; none compiles (the config is checked first), so
    // their routes never conflict with `fx`'s.
    let builder = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .with_mod("by-schema", guests::FIXTURE, "")
        .with_mod("unknown-key", guests::FIXTURE, "")
        .with_mod("wrong-kind", guests::FIXTURE, "")
        .with_mod("bad-defaults", guests::FIXTURE, "")
        .with_mod("stray-file", guests::FIXTURE, "");
    let root = builder.root().to_owned();
    config_files(&root, "fx", &[("config.default.json", DEFAULTS)]);
    config_files(
        &root,
        "by-schema",
        &[
            ("config.default.json", DEFAULTS),
            ("config.schema.json", SCHEMA),
            ("config.json", r#"{"gift": {"count": -1}}"#),
        ],
    );
    config_files(
        &root,
        "unknown-key",
        &[("config.default.json", DEFAULTS), ("config.json", r#"{"gift": {"cuont": 3}}"#)],
    );
    config_files(&root, "wrong-kind", &[("config.default.json", DEFAULTS), ("config.json", r#"{"loud": "yes"}"#)]);
    config_files(
        &root,
        "bad-defaults",
        &[("config.default.json", r#"{"gift": {"count": 0}}"#), ("config.schema.json", SCHEMA)],
    );
    config_files(&root, "stray-file", &[("config.json", r#"{"a": 1}"#)]);
    let server = builder.start().await.expect("booting");
    let loaded: Vec<&str> = server.report.loaded.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(loaded, ["fx"], "only the mod with a good config loads");
    let expected = [
        (
            "by-schema",
            r#"mods/by-schema/config.json: key "gift.count": -1 is less than the minimum of 1 (config.schema.json)"#,
        ),
        ("unknown-key", r#"mods/unknown-key/config.json: key "gift.cuont": not a key of this mod's configuration"#),
        ("wrong-kind", r#"mods/wrong-kind/config.json: key "loud": a string where the default is a boolean"#),
        ("bad-defaults", r#"mods/bad-defaults/config.default.json: key "gift.count": 0 is less than the minimum of 1"#),
        ("stray-file", "mods/stray-file/config.json: this mod ships no config.default.json"),
    ];
    // The reasons as the player sees them: `/modhost/mods` (the page and `modhost mods` show these).
    let mods = send(server.addr, &Call::get("/modhost/mods").identity()).await.expect("a request").json();
    let failed = mods["failed"].as_array().expect("failed");
    for (id, message) in expected {
        let reason = failed
            .iter()
            .find(|f| f["mod"] == id)
            .and_then(|f| f["reason"].as_str())
            .unwrap_or_else(|| panic!("{id} was not left out: {mods:#}"));
        assert!(reason.contains(message), "{id}: {reason}\nwanted: {message}");
    }
    let unknown = failed.iter().find(|f| f["mod"] == "unknown-key").and_then(|f| f["reason"].as_str()).unwrap_or("");
    assert!(unknown.contains(r#"did you mean "count"?"#), "{unknown}");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_config_refuses_the_reload_and_the_old_config_keeps_serving() {
    let server =
        fx_with(&[("config.default.json", DEFAULTS), ("config.schema.json", SCHEMA)]).start().await.expect("booting");
    let (addr, folder) = (server.addr, server.root().join("mods/fx"));
    assert_eq!(config_get(addr, "gift.count").await.1, "2");

    std::fs::write(folder.join("config.json"), r#"{"gift": {"count": 0}}"#).unwrap();
    let refused = reload(addr).await;
    assert_eq!(refused.status, 409, "{}", refused.text());
    let reason = refused.json()["reason"].as_str().unwrap_or_default().to_owned();
    assert!(reason.contains(r#"mods/fx/config.json: key "gift.count": 0 is less than the minimum of 1"#), "{reason}");
    assert_eq!(config_get(addr, "gift.count").await.1, "2", "the old config still serves");

    std::fs::write(folder.join("config.json"), r#"{"gift": {"count": 9}}"#).unwrap();
    let swapped = reload(addr).await;
    assert_eq!(swapped.status, 200, "{}", swapped.text());
    assert_eq!(config_get(addr, "gift.count").await.1, "9", "the fixed file serves after the reload");
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_config_json_under_watch_reloads() {
    let server =
        fx_with(&[("config.default.json", DEFAULTS)]).config(|c| c.watch = true).start().await.expect("booting");
    let (addr, folder) = (server.addr, server.root().join("mods/fx"));
    assert_eq!(config_get(addr, "greeting").await.1, "\"hello\"");
    std::fs::write(folder.join("config.json"), r#"{"greeting": "watched"}"#).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if config_get(addr, "greeting").await.1 == "\"watched\"" {
            break;
        }
        assert!(Instant::now() < deadline, "the changed config.json was not picked up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.stop().await.expect("stopping");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_edit_over_http_is_checked_written_and_reloaded() {
    let server =
        fx_with(&[("config.default.json", DEFAULTS), ("config.schema.json", SCHEMA)]).start().await.expect("booting");
    let (addr, file) = (server.addr, server.root().join("mods/fx/config.json"));

    // Without the header: refused before the body is read, nothing written.
    let call = Call::post_raw("/modhost/config/fx", br#"{"gift": {"count": 3}}"#).identity();
    let refused = send(addr, &call).await.expect("a request");
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(!file.exists(), "nothing written without the header");

    // A bad value: 400 naming the file, the key and the rule; nothing written.
    let bad = edit(addr, "fx", r#"{"gift": {"count": -1}}"#).await;
    assert_eq!(bad.status, 400, "{}", bad.text());
    let error = bad.json()["error"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        error,
        r#"mods/fx/config.json: key "gift.count": -1 is less than the minimum of 1 (config.schema.json)"#
    );
    assert!(!file.exists(), "nothing written for a bad edit");
    for (body, wanted) in [
        ("{\"gift\": ", "not valid JSON"),
        ("[1]", "the top level is an array"),
        (r#"{"loud": null}"#, "remove the key"),
    ] {
        let bad = edit(addr, "fx", body).await;
        assert_eq!(bad.status, 400, "{body}: {}", bad.text());
        assert!(bad.text().contains(wanted), "{body}: {}", bad.text());
    }
    let big = format!(r#"{{"greeting": "{}"}}"#, "x".repeat(1 << 20));
    assert_eq!(edit(addr, "fx", &big).await.status, 413, "over the 1 MiB cap");
    assert_eq!(edit(addr, "nope", "{}").await.status, 404, "no such mod");
    assert!(!file.exists());

    // A good one: written (only what the body says), reloaded, served.
    let good = edit(addr, "fx", r#"{"gift": {"count": 3}}"#).await;
    assert_eq!(good.status, 200, "{}", good.text());
    assert_eq!(good.json()["ok"], true, "{}", good.text());
    let on_disk: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).expect("written")).expect("JSON");
    assert_eq!(on_disk, serde_json::json!({"gift": {"count": 3}}));
    assert!(!file.with_file_name(".config.json.tmp").exists(), "the file aside was renamed away");
    assert_eq!(config_get(addr, "gift.count").await.1, "3");
    server.stop().await.expect("stopping");
}
