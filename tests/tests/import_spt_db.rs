//! `modhost import-spt-db`, as a player runs it: a small database folder in SPT's layout (built here:
//! globals, items, a handbook, locales, a trader's folder, a map's folder, a byte order mark, files that
//! are not JSON) becomes one `db.json` with each file at its db path, and the emulator serves the game's
//! tables from it over the wire. A bad file is named with its line and column and nothing is written; a
//! folder that is not a database and an `--out` in a missing folder are refused.
//!
//! Needs the `modhost` binary of this build (`target/release/modhost`: `cargo build --release -p
//! modhost`; `MODHOST_BIN` names another).

use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The longest one import may take (the folder is a few KB).
const LIMIT: Duration = Duration::from_secs(60);
const SESSION: &str = "0123456789abcdef01234567";
const ROUBLES: &str = "5449016a4bdc2d6f028b456f";
const PRAPOR: &str = "54cb50c76803fa8b248b4571";
const BIGMAP: &str = "56f40101d2720b2a4d8b45d6";

/// A finished `modhost import-spt-db`.
struct Ran {
    success: bool,
    stderr: String,
}

/// Runs `modhost import-spt-db <args…>` to the end (killed past [`LIMIT`]).
fn import<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Ran {
    let scratch = tempfile::tempdir().unwrap();
    let err = scratch.path().join("stderr");
    let mut cmd = Command::new(modhost_tests::child::modhost_under_test());
    cmd.arg("import-spt-db")
        .args(args)
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    let status = modhost_tests::child::wait_within(&mut child, LIMIT, &shown, &err);
    Ran { success: status.success(), stderr: std::fs::read_to_string(&err).unwrap() }
}

fn write(dir: &Path, file: &str, text: impl AsRef<[u8]>) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The tables of the small database, by file.
fn tables() -> Vec<(&'static str, Value)> {
    vec![
        ("globals.json", json!({"config": {"content": {"ip": "", "port": 0}, "RagFair": {"minUserLevel": 15}}})),
        ("server.json", json!({"ip": "127.0.0.1", "port": 6969})),
        ("settings.json", json!({"config": {"AFKTimeoutSeconds": 7200}})),
        (
            "templates/items.json",
            json!({ROUBLES: {"_id": ROUBLES, "_name": "item_money_rouble", "_parent": "543be5dd4bdc2dd4348b456a",
                             "_type": "Item", "_props": {"Name": "Roubles", "StackMaxSize": 500000}}}),
        ),
        (
            "templates/handbook.json",
            json!({"Categories": [], "Items": [{"Id": ROUBLES, "ParentId": "5b5f78b786f77447ed5636af", "Price": 1}]}),
        ),
        ("locales/languages.json", json!({"en": "English", "fr": "Français"})),
        ("locales/global/en.json", json!({format!("{ROUBLES} Name"): "Roubles", "quest \"quoted\"": "a\nb"})),
        ("locales/global/fr.json", json!({format!("{ROUBLES} Name"): "Roubles (fr)"})),
        ("locales/menu/en.json", json!({"menu": {"Loading": "Loading..."}})),
        ("locales/server/en.json", json!({})),
        (
            "traders/54cb50c76803fa8b248b4571/base.json",
            json!({"_id": PRAPOR, "nickname": "Prapor", "currency": "RUB", "loyaltyLevels": [{"minLevel": 1}]}),
        ),
        (
            "traders/54cb50c76803fa8b248b4571/assort.json",
            json!({"items": [], "barter_scheme": {}, "loyal_level_items": {}}),
        ),
        ("traders/54cb50c76803fa8b248b4571/questassort.json", json!({"started": {}, "success": {}, "fail": {}})),
        ("locations/base.json", json!({"locations": {}, "paths": [{"Source": BIGMAP, "Destination": BIGMAP}]})),
        ("locations/bigmap/base.json", json!({"_Id": BIGMAP, "Id": "bigmap", "Name": "Customs", "Enabled": true})),
        (
            "locations/bigmap/looseLoot.json",
            json!({"spawnpointCount": {"mean": 1.0, "std": 0.0}, "spawnpointsForced": [], "spawnpoints": []}),
        ),
        ("hideout/areas.json", json!([{"_id": "a1", "type": 0, "stages": {}}])),
        ("bots/types/assault.json", json!({"difficulty": {"easy": {}}})),
        ("match/metrics.json", json!({"Keys": [0, 1]})),
    ]
}

/// The small database in SPT's layout. `globals.json` starts with a byte order mark (as files saved
/// by some Windows editors do), and a pretty-printed file keeps its layout; a readme, an icon and a
/// `.DS_Store` are not JSON and are skipped.
fn spt_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (file, value) in tables() {
        let text = serde_json::to_string_pretty(&value).unwrap();
        if file == "globals.json" {
            write(dir.path(), file, [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat());
        } else {
            write(dir.path(), file, text);
        }
    }
    write(dir.path(), "README.md", "# the database");
    write(dir.path(), "templates/icon.png", b"\x89PNG\r\n\x1a\n");
    write(dir.path(), "locations/.DS_Store", b"\0\0\0\x01Bud1");
    dir
}

async fn post(addr: SocketAddr, path: &str) -> Value {
    let reply = send(addr, &Call::post(path, b"{}").session(SESSION)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let body = reply.json();
    assert_eq!(body["err"], 0, "{path}: {body}");
    body["data"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_spt_folder_imports_and_the_emulator_serves_it() {
    let folder = spt_folder();
    let builder = TestServer::builder().config(|c| c.builtin_mods = true);
    let out = builder.root().join("db.json");
    let ran = import(&[folder.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(ran.success, "{}", ran.stderr);
    assert!(ran.stderr.contains(&format!("{} JSON files", tables().len())), "{}", ran.stderr);
    assert!(ran.stderr.contains("skipped 3 files"), "{}", ran.stderr);

    // Each file at its db path, with its value; the byte order mark is gone.
    let text = std::fs::read(&out).unwrap();
    assert!(!text.windows(3).any(|w| w == b"\xEF\xBB\xBF"), "a byte order mark is left in the document");
    let doc: Value = serde_json::from_slice(&text).unwrap();
    for (file, value) in tables() {
        let pointer = format!("/{}", file.strip_suffix(".json").unwrap());
        assert_eq!(doc.pointer(&pointer), Some(&value), "{file} at {pointer}");
    }
    let top: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        top,
        ["bots", "globals", "hideout", "locales", "locations", "match", "server", "settings", "templates", "traders"]
    );
    let locations: Vec<&str> = doc["locations"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(locations, ["base", "bigmap"], "sorted, and the .DS_Store skipped");

    // The host loads it and the game answers from it.
    let server = builder.start().await.unwrap();
    assert!(server.report.failed.is_empty(), "{:?}", server.report.failed);
    let addr = server.addr;
    let want = |file: &str| tables().into_iter().find(|(f, _)| *f == file).unwrap().1;
    assert_eq!(post(addr, "/client/game/version/validate").await, Value::Null);
    assert_eq!(post(addr, "/client/items").await, want("templates/items.json"));
    assert_eq!(post(addr, "/client/globals").await, want("globals.json"));
    assert_eq!(post(addr, "/client/languages").await, want("locales/languages.json"));
    assert_eq!(post(addr, "/client/locale/en").await, want("locales/global/en.json"));
    assert_eq!(post(addr, "/client/locale/fr").await, want("locales/global/fr.json"));
    assert_eq!(post(addr, "/client/menu/locale/en").await, want("locales/menu/en.json"));
    assert_eq!(post(addr, "/client/hideout/areas").await, want("hideout/areas.json"));
    let traders = post(addr, "/client/trading/api/traderSettings").await;
    assert_eq!(traders, json!([want("traders/54cb50c76803fa8b248b4571/base.json")]));
    let locations = post(addr, "/client/locations").await;
    assert_eq!(locations["locations"][BIGMAP], want("locations/bigmap/base.json"), "{locations}");
    assert_eq!(locations["paths"], want("locations/base.json")["paths"]);
    server.stop().await.unwrap();
}

#[test]
fn a_bad_json_file_is_named_with_line_and_column_and_nothing_is_written() {
    let folder = spt_folder();
    let bad = folder.path().join("traders").join(PRAPOR).join("assort.json");
    std::fs::write(&bad, "{\n  \"items\": [],\n  \"barter_scheme\": {,\n}").unwrap();
    let outdir = tempfile::tempdir().unwrap();
    let out = outdir.path().join("db.json");
    let ran = import(&[folder.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(!ran.success);
    assert!(ran.stderr.contains(&format!("{}:3:21: ", bad.display())), "{}", ran.stderr);
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(outdir.path()).unwrap().count(), 0, "no half document is left");

    // An existing db.json is left as it was.
    std::fs::write(&out, "{\"old\": true}").unwrap();
    std::fs::write(&bad, "").unwrap();
    let ran = import(&[folder.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(!ran.success);
    assert!(ran.stderr.contains(&format!("{} is empty", bad.display())), "{}", ran.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"old\": true}");
    assert_eq!(std::fs::read_dir(outdir.path()).unwrap().count(), 1);
}

#[test]
fn a_folder_that_is_not_an_spt_database_is_refused() {
    let outdir = tempfile::tempdir().unwrap();
    let out = outdir.path().join("db.json");
    let empty = tempfile::tempdir().unwrap();
    let ran = import(&[empty.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(!ran.success);
    assert!(
        ran.stderr.contains("is not an SPT database folder: it has no globals.json and templates/items.json"),
        "{}",
        ran.stderr
    );

    // The parent of a database: the message points at it.
    let parent = tempfile::tempdir().unwrap();
    let folder = spt_folder();
    let inside = parent.path().join("database");
    std::fs::rename(folder.path(), &inside).unwrap_or_else(|_| {
        // Another file system: copy instead.
        assert!(Command::new("cp").arg("-r").arg(folder.path()).arg(&inside).status().unwrap().success());
    });
    let ran = import(&[parent.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(!ran.success);
    assert!(ran.stderr.contains(&format!("did you mean {}?", inside.display())), "{}", ran.stderr);

    std::fs::remove_file(inside.join("templates/items.json")).unwrap();
    let ran = import(&[inside.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(ran.stderr.contains("it has no templates/items.json"), "{}", ran.stderr);
    assert!(!out.exists());
}

#[test]
fn an_out_in_a_missing_folder_is_refused() {
    let folder = spt_folder();
    let outdir = tempfile::tempdir().unwrap();
    let out = outdir.path().join("missing/db.json");
    let ran = import(&[folder.path().as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(!ran.success);
    assert!(
        ran.stderr.contains(&format!(
            "cannot write {}: the folder {} does not exist",
            out.display(),
            out.parent().unwrap().display()
        )),
        "{}",
        ran.stderr
    );
    assert!(!out.parent().unwrap().exists());
}
