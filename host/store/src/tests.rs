//! The store's tests: the API case by case, versions, the lock, backups, a full disk, the import of the
//! old layout, documents and group commit. The model tests (against a `BTreeMap`, and against patches
//! applied to `serde_json` values, with restarts and folds) run on both engines, in
//! `host/store-pg/tests/model.rs`.

use super::*;
use serde_json::{Value, json};
use std::fs;
use std::time::Duration;

fn open(dir: &Path) -> Store {
    Store::open(dir, false).unwrap()
}

/// A store and its engine's insides, for the tests that reach under the API (a full disk).
fn open_inner(dir: &Path) -> (Store, Arc<Inner>) {
    let local = Local::open(dir, false).unwrap();
    let inner = local.inner.clone();
    (Store::from_backend(Box::new(local)), inner)
}

/// A second connection to the store's database, as a player's sqlite3 would have.
fn raw(dir: &Path) -> Connection {
    Connection::open(dir.join(sql::FILE)).unwrap()
}

#[test]
fn set_get_delete_list() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    assert_eq!(s.get("m", "k").unwrap(), None);
    s.set("m", "k", b"v1").unwrap();
    s.set("m", "k", b"v2").unwrap();
    s.set("m", "k2", b"").unwrap();
    s.set("other", "k3", b"x").unwrap();
    assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"v2"[..]));
    assert_eq!(s.get("m", "k2").unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(s.list("m", "").unwrap(), ["k", "k2"]);
    assert_eq!(s.list("m", "k2").unwrap(), ["k2"]);
    assert_eq!(s.namespaces().unwrap(), ["m", "other"]);
    assert!(s.delete("m", "k").unwrap());
    assert!(!s.delete("m", "k").unwrap());
    assert_eq!(s.list("nobody", "").unwrap(), Vec::<String>::new());
    // The value is stored with exactly its bytes.
    let stored: Vec<u8> =
        raw(dir.path()).query_row("SELECT value FROM kv WHERE ns = 'other' AND key = 'k3'", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, b"x");
}

#[test]
fn bad_keys_are_refused_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    for key in ["", ".hidden", "a/b", "../x", "sp ace", "ü", &"k".repeat(181)] {
        assert!(matches!(s.set("m", key, b"v"), Err(StoreError::InvalidKey { .. })), "{key:?}");
        assert!(matches!(s.doc_patch("m", key, "", b"{}", None), Err(StoreError::InvalidKey { .. })), "{key:?}");
    }
    assert!(s.set("m", &"k".repeat(180), b"v").is_ok());
    assert!(matches!(s.get("../escape", "k"), Err(StoreError::InvalidKey { .. })));
    let big = vec![0u8; MAX_VALUE_BYTES + 1];
    assert!(matches!(s.set("m", "big", &big), Err(StoreError::TooLarge { .. })));
    assert_eq!(s.get("m", "big").unwrap(), None);
}

#[test]
fn unreadable_is_not_missing_and_is_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    // A key whose patch record cannot apply (a patch through a scalar): it exists, but cannot be read.
    let conn = raw(dir.path());
    conn.execute_batch(
        "INSERT INTO kv (ns, key, value) VALUES ('m', 'k', '{\"a\":1}');
         INSERT INTO patches (ns, key, path, patch) VALUES ('m', 'k', 'a.b', '2');",
    )
    .unwrap();
    let s = open(dir.path());
    let err = s.get("m", "k").unwrap_err();
    assert!(matches!(err, StoreError::Unreadable { .. }), "{err}");
    assert!(err.to_string().contains("does not apply"), "{err}");
    assert!(matches!(s.set("m", "k", b"fresh"), Err(StoreError::Unreadable { .. })));
    assert!(matches!(s.doc_get("m", "k", "a"), Err(StoreError::Unreadable { .. })));
    conn.execute_batch("DELETE FROM patches").unwrap();
    assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&br#"{"a":1}"#[..]));
}

#[test]
fn versions_change_with_every_commit_and_guard_shared_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let v1 = s.set_if_version("m", "shared", b"a", None).unwrap();
    assert!(matches!(s.set_if_version("m", "shared", b"b", None), Err(StoreError::Conflict { .. })));
    let read = s.get_versioned("m", "shared").unwrap().unwrap();
    assert_eq!((read.value.as_ref(), read.version), (&b"a"[..], v1));
    let v2 = s.set_if_version("m", "shared", b"b", Some(v1)).unwrap();
    assert_ne!(v1, v2);
    let err = s.set_if_version("m", "shared", b"c", Some(v1)).unwrap_err().to_string();
    assert!(err.contains("changed by another write"), "{err}");
    assert_eq!(s.get("m", "shared").unwrap().as_deref(), Some(&b"b"[..]));
    // A version from another run never matches: each run's versions start at a random multiple of 2^32.
    drop(s);
    let s = open(dir.path());
    let v3 = s.get_versioned("m", "shared").unwrap().unwrap().version;
    assert_ne!(v3 >> 32, v2 >> 32, "two runs drew the same version base");
    assert!(matches!(s.set_if_version("m", "shared", b"c", Some(v2)), Err(StoreError::Conflict { .. })));
}

#[test]
fn a_second_store_on_one_root_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let err = Store::open(dir.path(), false).unwrap_err().to_string();
    assert!(err.contains(&format!("process {}", std::process::id())), "{err}");
    drop(s);
    open(dir.path());
}

fn backups(dir: &Path, key: &str) -> Vec<Vec<u8>> {
    let conn = raw(dir);
    let mut q = conn.prepare("SELECT value FROM history WHERE ns = 'm' AND key = ?1 ORDER BY slot").unwrap();
    q.query_map([key], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn the_old_value_is_backed_up_whole_once_per_run_and_period() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set("m", "p", b"first").unwrap();
    assert!(backups(dir.path(), "p").is_empty(), "nothing to back up before the first value");
    s.set("m", "p", b"second").unwrap();
    s.set("m", "p", b"third").unwrap();
    assert_eq!(backups(dir.path(), "p"), [b"first".to_vec()]);
    // A new run backs up again on its first write (the slot follows the clock: look in every slot).
    drop(s);
    let s = open(dir.path());
    s.set("m", "p", b"fourth").unwrap();
    assert!(backups(dir.path(), "p").iter().any(|b| b == b"third"));
    // A deletion backs up too, and a fold backs up the stored value it replaces.
    drop(s);
    let s = open(dir.path());
    s.set("m", "d", br#"{"v":0}"#).unwrap();
    drop(s);
    let s = open(dir.path());
    s.doc_patch("m", "d", "", br#"{"v":1}"#, None).unwrap();
    s.compact().unwrap();
    assert!(backups(dir.path(), "d").iter().any(|b| b == br#"{"v":0}"#), "{:?}", backups(dir.path(), "d"));
}

#[test]
fn a_full_disk_is_an_error_keeps_the_old_value_and_the_store_works_once_space_is_freed() {
    let dir = tempfile::tempdir().unwrap();
    let (s, inner) = open_inner(dir.path());
    s.set("m", "k", b"old").unwrap();
    s.set("m", "d", br#"{"a":1}"#).unwrap();
    // SQLite answers SQLITE_FULL when the file may not grow: what ENOSPC gives it too.
    let pages: i64 = inner.writer.connection().query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    inner.writer.connection().pragma_update(None, "max_page_count", pages).unwrap();
    let big = vec![b'x'; 1 << 20];
    let err = s.set("m", "k", &big).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert!(err.to_string().contains("full"), "{err}");
    let patch = format!(r#"{{"b":"{}"}}"#, "y".repeat(1 << 20));
    assert!(matches!(s.doc_patch("m", "d", "", patch.as_bytes(), None), Err(StoreError::Io { .. })));
    assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(s.doc_get("m", "d", "").unwrap().unwrap().value.as_ref(), br#"{"a":1}"#);
    // Space freed: the same writes go through.
    inner.writer.connection().pragma_update(None, "max_page_count", 1 << 30).unwrap();
    s.set("m", "k", &big).unwrap();
    s.doc_patch("m", "d", "", patch.as_bytes(), None).unwrap();
    drop((s, inner));
    let s = open(dir.path());
    assert_eq!(s.get("m", "k").unwrap().unwrap().len(), big.len());
    assert_eq!(s.doc_get("m", "d", "a").unwrap().unwrap().value.as_ref(), b"1");
}

#[test]
fn an_old_files_layout_is_imported_once_and_kept_aside() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("emulator/.hist")).unwrap();
    fs::create_dir_all(d.join("other")).unwrap();
    fs::write(d.join("emulator/profile.1"), br#"{"_id":"1"}"#).unwrap();
    fs::write(d.join("emulator/nicknames"), br#"{"a":"1"}"#).unwrap();
    fs::write(d.join("emulator/.tmp-1-0-profile.1"), b"half").unwrap();
    fs::write(d.join("emulator/.hist/profile.1.2"), br#"{"_id":"old"}"#).unwrap();
    fs::write(d.join("other/k"), b"raw bytes").unwrap();
    let s = open(d);
    assert_eq!(s.namespaces().unwrap(), ["emulator", "other"]);
    assert_eq!(s.list("emulator", "").unwrap(), ["nicknames", "profile.1"]);
    assert_eq!(s.get("emulator", "profile.1").unwrap().as_deref(), Some(&br#"{"_id":"1"}"#[..]));
    assert_eq!(s.get("other", "k").unwrap().as_deref(), Some(&b"raw bytes"[..]));
    let history: Vec<u8> = raw(d)
        .query_row("SELECT value FROM history WHERE ns = 'emulator' AND key = 'profile.1' AND slot = 2", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(history, br#"{"_id":"old"}"#);
    // The old folders are kept, moved aside, with every file.
    assert!(!d.join("emulator").exists());
    assert_eq!(fs::read(d.join(".files-layout/emulator/profile.1")).unwrap(), br#"{"_id":"1"}"#);
    assert!(d.join(".files-layout/other/k").exists());
    s.set("emulator", "profile.1", b"new").unwrap();
    drop(s);
    // A crash between the import's commit and the moves: the next open only moves, never re-imports.
    fs::create_dir_all(d.join("emulator")).unwrap();
    fs::write(d.join("emulator/profile.1"), b"stale file").unwrap();
    let s = open(d);
    assert_eq!(s.get("emulator", "profile.1").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(fs::read(d.join(".files-layout/emulator.1/profile.1")).unwrap(), b"stale file");
}

#[test]
fn an_unreadable_old_file_stops_the_open_with_its_name_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("m")).unwrap();
    fs::write(dir.path().join("m/a"), b"kept").unwrap();
    // A key whose file cannot be read (a link whose target is gone; root reads past permissions).
    std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("m/profile.1")).unwrap();
    let err = Store::open(dir.path(), false).unwrap_err().to_string();
    assert!(err.contains("profile.1"), "{err}");
    assert!(dir.path().join("m/a").exists(), "the old folder must stay where it was");
    // Fixed by the player (the link points at a file again): the next open imports both.
    fs::write(dir.path().join("nowhere"), b"linked").unwrap();
    let s = open(dir.path());
    assert_eq!(s.get("m", "profile.1").unwrap().as_deref(), Some(&b"linked"[..]));
    assert_eq!(s.get("m", "a").unwrap().as_deref(), Some(&b"kept"[..]));
}

#[test]
fn documents_read_and_patch_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    assert_eq!(s.doc_get("m", "p", "a").unwrap(), None);
    assert!(s.doc_keys("m", "p", "").unwrap().is_empty());
    // The first patch makes the document.
    let v1 = s.doc_patch("m", "p", "items.x1", br#"{"_tpl":"t","loc":{"x":1}}"#, None).unwrap();
    let got = s.doc_get("m", "p", "items.x1.loc").unwrap().unwrap();
    assert_eq!((got.value.as_ref(), got.version), (&br#"{"x":1}"#[..], v1));
    assert_eq!(s.doc_get("m", "p", "items.nothing").unwrap().unwrap().value.as_ref(), b"null");
    assert_eq!(s.doc_get("m", "p", "items.x1._tpl.deeper").unwrap().unwrap().value.as_ref(), b"null");
    let v2 = s.doc_patch("m", "p", "items", br#"{"x2":{"_tpl":"u"},"x1":{"loc":null}}"#, Some(v1)).unwrap();
    assert_eq!(s.doc_keys("m", "p", "items").unwrap(), ["x1", "x2"]);
    assert_eq!(s.doc_get("m", "p", "items.x1").unwrap().unwrap().value.as_ref(), br#"{"_tpl":"t"}"#);
    // Conditional patches conflict like set_if_version, and then change nothing.
    let err = s.doc_patch("m", "p", "", br#"{"z":1}"#, Some(v1)).unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert_eq!(s.get_versioned("m", "p").unwrap().unwrap().version, v2);
    // The whole value reads back as the document.
    let whole: Value = serde_json::from_slice(&s.get("m", "p").unwrap().unwrap()).unwrap();
    assert_eq!(whole, json!({"items": {"x1": {"_tpl": "t"}, "x2": {"_tpl": "u"}}}));
    // Errors name what and why, and change nothing.
    let cases: [(&str, &[u8], &str); 4] = [
        ("items.x1._tpl.z", b"1", "not an object"),
        ("", b"[1]", "must stay an object"),
        ("items", b"{nope", "not valid JSON"),
        ("bad\\q", b"1", "not an escape"),
    ];
    for (path, patch, why) in cases {
        let err = s.doc_patch("m", "p", path, patch, None).unwrap_err();
        assert!(matches!(err, StoreError::Document { .. }) && err.to_string().contains(why), "{path}: {err}");
    }
    assert!(matches!(s.doc_keys("m", "p", "items.x1._tpl"), Err(StoreError::Document { .. })));
    s.set("m", "raw", b"not json").unwrap();
    let err = s.doc_get("m", "raw", "a").unwrap_err();
    assert!(err.to_string().contains("not a document"), "{err}");
    assert_eq!(s.get_versioned("m", "p").unwrap().unwrap().version, v2);
    // Patches survive a restart before any fold, and after one.
    drop(s);
    let s = open(dir.path());
    assert_eq!(serde_json::from_slice::<Value>(&s.get("m", "p").unwrap().unwrap()).unwrap(), whole);
    assert_eq!(s.compact().unwrap(), 1);
    let left: i64 = raw(dir.path()).query_row("SELECT count(*) FROM patches", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0);
    drop(s);
    let s = open(dir.path());
    assert_eq!(serde_json::from_slice::<Value>(&s.get("m", "p").unwrap().unwrap()).unwrap(), whole);
}

#[test]
fn many_patches_are_folded_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    // Patches of 1 KB: past FOLD_AFTER_BYTES after 64 of them.
    let pad = "p".repeat(1000);
    let count = 3 * doc::FOLD_AFTER_BYTES / 1000;
    for i in 0..count {
        s.doc_patch("m", "p", "", format!(r#"{{"n":{i},"pad":"{pad}"}}"#).as_bytes(), None).unwrap();
    }
    let conn = raw(dir.path());
    let mut left = i64::MAX;
    let below = (doc::FOLD_AFTER_BYTES / 1000) as i64;
    for _ in 0..500 {
        left = conn.query_row("SELECT count(*) FROM patches", [], |r| r.get(0)).unwrap();
        if left <= below {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(left <= below, "{left} patch records of {count} were never folded");
    assert_eq!(s.doc_get("m", "p", "n").unwrap().unwrap().value.as_ref(), format!("{}", count - 1).as_bytes());
}

#[test]
fn folds_come_once_per_half_a_document_of_patches() {
    assert!(!doc::fold_due(64, 6_000, 1 << 20), "a 1 MB document folds after 512 KB of patches, not 64 records");
    assert!(doc::fold_due(64, 600 << 10, 1 << 20));
    assert!(doc::fold_due(10, doc::FOLD_AFTER_BYTES, 3_000), "a small document folds after the minimum");
    assert!(doc::fold_due(doc::FOLD_AFTER_RECORDS, 10, 1 << 20), "the records a load replays are bounded");
}

#[test]
fn concurrent_commits_share_transactions_and_none_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(Store::open(dir.path(), true).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..20 {
                    s.set("m", &format!("k{t}"), format!("{i}").as_bytes()).unwrap();
                    s.doc_patch("m", "shared", "", format!(r#"{{"t{t}":{i}}}"#).as_bytes(), None).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    drop(Arc::into_inner(s).unwrap());
    let s = open(dir.path());
    for t in 0..8 {
        assert_eq!(s.get("m", &format!("k{t}")).unwrap().as_deref(), Some(&b"19"[..]));
        assert_eq!(s.doc_get("m", "shared", &format!("t{t}")).unwrap().unwrap().value.as_ref(), b"19");
    }
}

fn quotas(bytes: u64, keys: u64) -> Quotas {
    Quotas { default: Quota { bytes, keys }, namespaces: HashMap::from([("big".to_owned(), Quota::default())]) }
}

#[test]
fn a_namespace_is_held_to_its_quota_by_whole_writes_patches_and_first_patches() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set_quotas(quotas(1000, 100));
    s.set("m", "a", &[b'x'; 600]).unwrap();
    let err = s.set("m", "b", &[b'x'; 401]).unwrap_err();
    assert!(matches!(err, StoreError::Quota { what: "bytes", quota: 1000, .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("namespace `m`") && message.contains("1000 bytes"), "{message}");
    assert_eq!(s.get("m", "b").unwrap(), None, "nothing was written");
    s.set("m", "b", &[b'x'; 400]).unwrap();
    assert_eq!(s.usage("m"), Usage { bytes: 1000, keys: 2, history: 0 });
    // A document's patches count (path and patch), and so does the first patch of a key.
    s.set("m", "b", br#"{"v":1}"#).unwrap();
    let used = s.usage("m").bytes;
    let patch = format!(r#"{{"s":"{}"}}"#, "y".repeat((1000 - used) as usize));
    assert!(matches!(s.doc_patch("m", "b", "", patch.as_bytes(), None), Err(StoreError::Quota { .. })));
    assert!(matches!(s.doc_patch("m", "new", "", patch.as_bytes(), None), Err(StoreError::Quota { .. })));
    s.doc_patch("m", "b", "", br#"{"w":2}"#, None).unwrap();
    assert_eq!(s.usage("m").bytes, used + br#"{"w":2}"#.len() as u64);
    // Shrinking is always allowed, even over a lowered quota; other namespaces are not touched.
    s.set_quotas(quotas(10, 100));
    assert!(matches!(s.set("m", "c", b"1"), Err(StoreError::Quota { .. })));
    s.set("m", "a", b"short").unwrap();
    assert!(s.delete("m", "a").unwrap());
    s.set("big", "k", &[b'x'; 5000]).unwrap();
    assert!(matches!(s.set("other", "k", &[b'x'; 11]), Err(StoreError::Quota { .. })));
}

#[test]
fn a_namespace_is_held_to_its_quota_of_keys() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set_quotas(quotas(1 << 20, 2));
    s.set("m", "a", b"1").unwrap();
    s.doc_patch("m", "b", "", b"{}", None).unwrap();
    let err = s.set("m", "c", b"1").unwrap_err();
    assert!(matches!(err, StoreError::Quota { what: "keys", quota: 2, would_hold: 3, .. }), "{err}");
    s.set("m", "a", b"rewriting a key adds none").unwrap();
    s.delete("m", "a").unwrap();
    s.set("m", "c", b"1").unwrap();
}

#[test]
fn the_running_usage_is_what_the_database_holds_after_folds_failures_and_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (s, inner) = open_inner(dir.path());
    s.set("m", "k", b"old").unwrap();
    s.set("m", "d", br#"{"a":1}"#).unwrap();
    for i in 0..100 {
        s.doc_patch("m", "d", "list", format!(r#"{{"n{i}":{i},"n{}":null}}"#, i / 2).as_bytes(), None).unwrap();
    }
    s.compact().unwrap();
    // A commit that fails (a full disk) gives its reservation back.
    let pages: i64 = inner.writer.connection().query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    inner.writer.connection().pragma_update(None, "max_page_count", pages).unwrap();
    assert!(matches!(s.set("m", "k", &vec![b'x'; 1 << 20]), Err(StoreError::Io { .. })));
    inner.writer.connection().pragma_update(None, "max_page_count", 1 << 30).unwrap();
    s.doc_patch("m", "d", "", br#"{"after":"fold"}"#, None).unwrap();
    let running = s.usage("m");
    drop((s, inner));
    let s = open(dir.path());
    assert_eq!(s.usage("m"), running, "counted at open as it was kept while running");
    assert_eq!(running.keys, 2);
}

#[test]
fn a_read_waits_for_a_write_of_its_key_in_progress_and_answers_what_it_committed() {
    // A durable commit whose caller gave up (deadline, client gone) runs on; the same session's next
    // request must not read the old value beside it and write over the late commit.
    let dir = tempfile::tempdir().unwrap();
    let (s, inner) = open_inner(dir.path());
    let s = Arc::new(s);
    s.set("m", "profile", b"old").unwrap();
    s.set("m", "other", b"x").unwrap();
    assert!(s.answers_from_memory("m", "profile", false));
    let held = inner.writer.connection(); // the commit cannot finish while this is held
    let late = std::thread::spawn({
        let s = s.clone();
        move || s.set("m", "profile", b"new").unwrap()
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while s.answers_from_memory("m", "profile", false) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(!s.answers_from_memory("m", "profile", false), "the write is in progress");
    assert!(s.committing());
    assert_eq!(s.get("m", "other").unwrap().as_deref(), Some(&b"x"[..]), "other keys do not wait");
    let reader = std::thread::spawn({
        let s = s.clone();
        move || s.get("m", "profile").unwrap()
    });
    std::thread::sleep(Duration::from_millis(50));
    assert!(!reader.is_finished(), "the read waits for the write");
    drop(held);
    late.join().unwrap();
    assert_eq!(reader.join().unwrap().as_deref(), Some(&b"new"[..]));
    assert!(s.answers_from_memory("m", "profile", false) && !s.committing());
    // A write handed to another thread is fenced from when it is handed over.
    let fence = s.fence("m", "profile");
    assert!(!s.answers_from_memory("m", "profile", false));
    drop(fence);
    assert!(s.answers_from_memory("m", "profile", false));
}

/// The database's files (with its log and shared memory), in bytes.
fn disk_use(dir: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| fs::metadata(dir.join(format!("{}{suffix}", sql::FILE))).ok())
        .map(|m| m.len())
        .sum()
}

/// The backups of `ns` as the database holds them, costed as the budget counts them.
fn history_cost(dir: &Path, ns: &str) -> u64 {
    let sql = format!("SELECT coalesce(sum({}), 0) FROM history WHERE ns = ?1", crate::quota::BACKUP_COST_SQL);
    raw(dir).query_row(&sql, [ns], |r| r.get::<_, i64>(0)).unwrap() as u64
}

#[test]
fn a_namespace_writing_and_deleting_distinct_keys_stays_within_four_times_its_quota_on_disk() {
    // Issue 29: each delete copied the old value into `history`, uncounted and never pruned: a
    // namespace under a 1 MiB quota writing and deleting distinct keys left hundreds of MB.
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let quota = 2 << 20;
    s.set_quotas(quotas(quota, 1000));
    let empty = disk_use(dir.path());
    let value = vec![b'v'; 4000];
    // 3000 distinct keys of 4000 bytes written, overwritten once and deleted: 24 MB of old values,
    // twelve times the quota.
    for n in 0..3000 {
        let key = format!("churn.{n}");
        s.set("m", &key, &value).unwrap();
        s.set("m", &key, &value[..3999]).unwrap();
        assert!(s.delete("m", &key).unwrap());
    }
    let usage = s.usage("m");
    assert_eq!((usage.bytes, usage.keys), (0, 0));
    assert!(usage.history <= quota, "the backups cost {} bytes; their budget is {quota}", usage.history);
    assert_eq!(usage.history, history_cost(dir.path(), "m"), "the running count is what the database holds");
    // The newest backups are kept, the oldest gave way: the last key deleted can be restored.
    assert_eq!(backups(dir.path(), "churn.2999"), [value[..3999].to_vec()], "a delete keeps what it deleted");
    assert!(backups(dir.path(), "churn.0").is_empty());
    // On disk, log included, once the maintenance thread has checkpointed the log (a second after
    // the last commit).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut used = disk_use(dir.path());
    while used > empty + 4 * quota && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        used = disk_use(dir.path());
    }
    assert!(
        used <= empty + 4 * quota,
        "the store's files hold {used} bytes after 24 MB written and deleted under a {quota}-byte quota \
         (empty: {empty}); the bound is four times the quota"
    );
    // Counted at open as it was while running.
    drop(s);
    let s = open(dir.path());
    assert_eq!(s.usage("m").history, history_cost(dir.path(), "m"));
}

#[test]
fn a_delete_keeps_the_value_it_deleted_as_the_keys_one_backup() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set("m", "k", b"one").unwrap();
    s.set("m", "k", b"two").unwrap();
    // Older backups of the key, in other slots (as a key written over 15 minutes has).
    raw(dir.path())
        .execute_batch(
            "INSERT OR REPLACE INTO history (ns, key, slot, saved_ms, value) VALUES ('m', 'k', 1, 1, 'a'), ('m', 'k', 2, 2, 'b'), ('m', 'k', 3, 3, 'c')",
        )
        .unwrap();
    drop(s);
    let s = open(dir.path());
    // Not due for a backup in this run's first 5 minutes, had it been an overwrite: a delete is.
    s.set("m", "k", b"three").unwrap();
    s.set("m", "k", b"four").unwrap();
    assert!(s.delete("m", "k").unwrap());
    assert_eq!(backups(dir.path(), "k"), [b"four".to_vec()]);
    assert_eq!(s.usage("m").history, history::cost("m", "k", 4) as u64);
    assert_eq!(s.usage("m").history, history_cost(dir.path(), "m"));
}

#[test]
fn the_hosts_bookkeeping_namespaces_are_never_backed_up() {
    // Issue 29: every fired one-shot timer left its record in `history` (300 timers: 18 MB).
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set("timers.m", "o.1", &[b't'; 1000]).unwrap();
    s.set("timers.m", "p.tick", b"1").unwrap();
    s.set("timers.m", "p.tick", b"2").unwrap();
    assert!(s.delete("timers.m", "o.1").unwrap());
    s.set("timersx", "k", b"1").unwrap();
    assert!(s.delete("timersx", "k").unwrap());
    assert!(history_cost(dir.path(), "timers.m") > 0, "backed up until the host says otherwise");
    // The host marks its bookkeeping: what is there goes, and nothing more is backed up.
    assert_eq!(s.without_backups("timers.").unwrap(), 2);
    assert_eq!(s.usage("timers.m").history, 0);
    for n in 0..300 {
        let key = format!("o.{n}");
        s.set("timers.m", &key, &[b't'; 1000]).unwrap();
        assert!(s.delete("timers.m", &key).unwrap());
        s.set("timers.m", "p.tick", n.to_string().as_bytes()).unwrap();
    }
    drop(s);
    let s = open(dir.path());
    s.without_backups("timers.").unwrap();
    s.set("timers.m", "p.tick", b"after a restart").unwrap();
    assert_eq!(history_cost(dir.path(), "timers.m"), 0);
    assert_eq!(s.usage("timers.m").history, 0);
    // Other namespaces are still backed up, one sharing the prefix's letters included.
    assert!(history_cost(dir.path(), "timersx") > 0);
}

#[test]
fn an_old_folder_found_beside_live_values_never_replaces_them_and_says_which_it_kept() {
    // Issue 29: a namespace-named folder appearing in a store that never imported overwrote live
    // values, with no backup.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = open(d);
    s.set("m", "profile.1", b"live").unwrap();
    drop(s);
    fs::create_dir_all(d.join("m/.hist")).unwrap();
    fs::write(d.join("m/profile.1"), b"old file").unwrap();
    fs::write(d.join("m/new"), b"only in the file").unwrap();
    fs::write(d.join("m/.hist/profile.1.1"), b"older file").unwrap();
    let report = import::from_files_layout(d, &sql::open(d, false).unwrap()).unwrap();
    assert_eq!(report.kept, [("m".to_owned(), "profile.1".to_owned())]);
    assert_eq!(report.moved, [(d.join("m"), d.join(".files-layout/m"), true)]);
    let s = open(d);
    assert_eq!(s.get("m", "profile.1").unwrap().as_deref(), Some(&b"live"[..]));
    assert_eq!(s.get("m", "new").unwrap().as_deref(), Some(&b"only in the file"[..]));
    assert_eq!(fs::read(d.join(".files-layout/m/profile.1")).unwrap(), b"old file", "the file is kept");
}

#[test]
fn a_folder_found_after_the_import_is_moved_aside_unread_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir_all(d.join("m")).unwrap();
    fs::write(d.join("m/k"), b"imported").unwrap();
    drop(open(d));
    fs::create_dir_all(d.join("m")).unwrap();
    fs::write(d.join("m/k"), b"late file").unwrap();
    let report = import::from_files_layout(d, &sql::open(d, false).unwrap()).unwrap();
    assert!(report.kept.is_empty());
    assert_eq!(report.moved, [(d.join("m"), d.join(".files-layout/m.1"), false)]);
    let s = open(d);
    assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"imported"[..]));
    assert_eq!(fs::read(d.join(".files-layout/m.1/k")).unwrap(), b"late file");
}
