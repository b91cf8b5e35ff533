//! `modhost store`, as a player runs it: values round-trip byte for byte through put, get, list and
//! delete; a namespace exported to a folder, edited with ordinary tools and imported comes back with
//! exactly the edits; every command refuses while a server (or anything else) holds the root's store,
//! naming its pid; bad keys, bad files and emulator profiles the game could not read are refused with a
//! message naming what and why, and nothing is written. `--store-url` points every command at a
//! PostgreSQL store, and `copy` moves a whole store between SQLite and PostgreSQL either way, checked:
//! tested against a real PostgreSQL server of each test's own (`modhost_store_pg::testing::Server`).
//!
//! What the commands wrote is read back through `Store` itself, as the server would read it. Needs the
//! `modhost` binary of this build (`target/release/modhost`: `cargo build --release -p modhost`;
//! `MODHOST_BIN` names another).

use modhost_store::{MAX_VALUE_BYTES, Store};
use modhost_store_pg::testing::Server;
use modhost_tests::child::ServeChild;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The longest one command may take.
const LIMIT: Duration = Duration::from_secs(60);

/// A profile id, as the game makes them.
const UID: &str = "0123456789abcdef01234567";
const UID2: &str = "fedcba9876543210fedcba98";

/// The modhost binary under test.
fn modhost() -> PathBuf {
    modhost_tests::child::modhost_under_test()
}

/// A finished command.
struct Ran {
    success: bool,
    stdout: Vec<u8>,
    stderr: String,
}

impl Ran {
    fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Runs `modhost store <args…>` to the end (killed past [`LIMIT`]), with `stdin` as its input.
fn store_cmd<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &[u8]) -> Ran {
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut cmd = Command::new(modhost());
    cmd.arg("store")
        .args(args)
        .env_remove("MODHOST_ROOT")
        .env_remove("MODHOST_STORE_URL")
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    // The input is small; a command that does not read it just closes the pipe.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let status = modhost_tests::child::wait_within(&mut child, LIMIT, &shown, &err);
    Ran {
        success: status.success(),
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
    }
}

/// [`store_cmd`] that must succeed.
fn ok<S: AsRef<std::ffi::OsStr>>(args: &[S], stdin: &[u8]) -> Ran {
    let ran = store_cmd(args, stdin);
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    assert!(ran.success, "`modhost store {}` failed:\n{}", shown.join(" "), ran.stderr);
    ran
}

/// [`store_cmd`] that must fail with one `error:` line (and its causes) naming each of `says`.
fn refused<S: AsRef<std::ffi::OsStr>>(args: &[S], says: &[&str]) -> Ran {
    let ran = store_cmd(args, b"");
    let shown: Vec<_> = args.iter().map(|a| a.as_ref().to_string_lossy().into_owned()).collect();
    assert!(!ran.success, "`modhost store {}` succeeded; it should have been refused", shown.join(" "));
    assert!(ran.stderr.contains("error: "), "no `error:` line in:\n{}", ran.stderr);
    for part in says {
        assert!(ran.stderr.contains(part), "`modhost store {}` said:\n{}\nnot `{part}`", shown.join(" "), ran.stderr);
    }
    ran
}

/// Every key and value in the root's store, read through the engine (as the server reads them).
fn contents(root: &Path) -> BTreeMap<(String, String), Vec<u8>> {
    let store = Store::open(&root.join("store"), false).unwrap();
    let mut all = BTreeMap::new();
    for ns in store.namespaces().unwrap() {
        for key in store.list(&ns, "").unwrap() {
            let value = store.get(&ns, &key).unwrap().expect("a listed key has a value");
            all.insert((ns.clone(), key), value.to_vec());
        }
    }
    all
}

/// Every key and value in a PostgreSQL store, read through a fresh connection (no cache of an earlier one).
fn pg_contents(url: &str) -> BTreeMap<(String, String), Vec<u8>> {
    let store = modhost_store_pg::connect(url).unwrap();
    let mut all = BTreeMap::new();
    for ns in store.namespaces().unwrap() {
        for key in store.list(&ns, "").unwrap() {
            let value = store.get(&ns, &key).unwrap().expect("a listed key has a value");
            all.insert((ns.clone(), key), value.to_vec());
        }
    }
    all
}

/// Runs SQL on a test server's database with `psql` (a trigger the store's own API cannot make).
fn psql(url: &str, sql: &str) {
    let output = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .output()
        .expect("running psql (Debian's postgresql-client)");
    assert!(output.status.success(), "psql failed: {}", String::from_utf8_lossy(&output.stderr));
}

fn entry(ns: &str, key: &str, value: &[u8]) -> ((String, String), Vec<u8>) {
    ((ns.to_owned(), key.to_owned()), value.to_vec())
}

/// A profile shaped as `profile/list` answers it (a PMC with `Inventory.items`), pretty-printed as a
/// player's editor would leave it.
fn profile(uid: &str, nickname: &str) -> Vec<u8> {
    format!(
        "{{\n  \"_id\": \"{uid}\",\n  \"Info\": {{ \"Nickname\": \"{nickname}\", \"Side\": \"Usec\" }},\n  \
         \"Inventory\": {{ \"items\": [ {{ \"_id\": \"aaaaaaaaaaaaaaaaaaaaaaaa\", \"_tpl\": \"5449016a4bdc2d6f028b456f\" }} ] }}\n}}\n"
    )
    .into_bytes()
}

/// A fresh root, and this file's tests one at a time: a `Store` a test opens in this process (to
/// seed, to read back, to hold the lock) is inherited by any child another test's thread forks, until
/// that child execs, so a command run right after the `Store` is dropped could still find it held.
fn root() -> (std::sync::MutexGuard<'static, ()>, tempfile::TempDir) {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    (serial, tempfile::tempdir().unwrap())
}

#[test]
fn put_get_list_and_delete_round_trip_values_byte_for_byte() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let binary: Vec<u8> = (0..=255u8).chain(*b"\r\n\0 end").collect();
    let input = files.path().join("value.bin");
    std::fs::write(&input, &binary).unwrap();
    let input = input.to_str().unwrap();

    let ran = ok(&["put", "--root", root, "notes", "a.txt", input], b"");
    assert!(ran.out().contains("a new key"), "{}", ran.out());
    ok(&["put", "--root", root, "notes", "b-2", "-"], b"from stdin");
    ok(&["put", "--root", root, "zeta", "only_key", "-"], b"z");
    assert_eq!(
        contents(dir.path()),
        BTreeMap::from([
            entry("notes", "a.txt", &binary),
            entry("notes", "b-2", b"from stdin"),
            entry("zeta", "only_key", b"z")
        ]),
        "the store holds what was put, as the server reads it"
    );
    // Putting again replaces, and says so.
    let ran = ok(&["put", "--root", root, "notes", "b-2", "-"], b"replaced from stdin");
    assert!(ran.out().contains("it replaced 10 bytes"), "{}", ran.out());

    assert_eq!(ok(&["get", "--root", root, "notes", "a.txt"], b"").stdout, binary, "get to stdout");
    assert_eq!(ok(&["get", "--root", root, "notes", "a.txt", "-"], b"").stdout, binary, "get to `-`");
    let copy = files.path().join("copy.bin");
    ok(&["get", "--root", root, "notes", "a.txt", copy.to_str().unwrap()], b"");
    assert_eq!(std::fs::read(&copy).unwrap(), binary, "get to a file");
    assert_eq!(ok(&["get", "--root", root, "notes", "b-2"], b"").stdout, b"replaced from stdin");

    assert_eq!(ok(&["list", "--root", root], b"").out(), "notes\nzeta\n", "the namespaces");
    assert_eq!(ok(&["list", "--root", root, "notes"], b"").out(), "a.txt\nb-2\n", "a namespace's keys");
    assert_eq!(ok(&["list", "--root", root, "notes", "--prefix", "b"], b"").out(), "b-2\n", "by prefix");
    assert_eq!(ok(&["list", "--root", root, "nobody"], b"").out(), "", "a namespace never written");

    ok(&["delete", "--root", root, "notes", "b-2"], b"");
    refused(&["get", "--root", root, "notes", "b-2"], &["there is no `b-2` in the namespace `notes`"]);
    refused(&["delete", "--root", root, "notes", "b-2"], &["there is no `b-2` in the namespace `notes`"]);
    ok(&["delete", "--root", root, "zeta", "only_key"], b"");
    assert_eq!(ok(&["list", "--root", root], b"").out(), "notes\n", "a namespace without keys is not listed");
    assert_eq!(contents(dir.path()), BTreeMap::from([entry("notes", "a.txt", &binary)]));
}

#[test]
fn an_exported_namespace_edited_with_ordinary_tools_imports_back_with_exactly_the_edits() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let key = format!("profile.{UID}");
    let session = b"{\"uid\":\"0123456789abcdef01234567\"}";
    {
        // Written as the game writes them.
        let store = Store::open(&dir.path().join("store"), false).unwrap();
        store.set("emulator", &key, &profile(UID, "Alice")).unwrap();
        store.set("emulator", "session.s1", session).unwrap();
        store.set("emulator", "nicknames", b"{\"alice\":\"0123456789abcdef01234567\"}").unwrap();
        store.set("othermod", "x", b"not touched").unwrap();
    }
    let before = contents(dir.path());

    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("backup");
    ok(&["export", "--root", root, "emulator", out.to_str().unwrap()], b"");
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["nicknames", key.as_str(), "session.s1"], "one file per key, named by the key, nothing else");
    for name in &names {
        assert_eq!(
            std::fs::read(out.join(name)).unwrap(),
            before[&("emulator".to_owned(), name.clone())],
            "`{name}` holds exactly its value"
        );
    }

    // The player renames their character in an editor, brings in a second one, drops the session file
    // (which leaves that key alone), and their desktop leaves a hidden file behind.
    let edited = String::from_utf8(std::fs::read(out.join(&key)).unwrap()).unwrap().replace("Alice", "Alicia");
    std::fs::write(out.join(&key), &edited).unwrap();
    std::fs::write(out.join(format!("profile.{UID2}")), profile(UID2, "Bob")).unwrap();
    std::fs::remove_file(out.join("session.s1")).unwrap();
    std::fs::write(out.join(".DS_Store"), b"\0\0junk").unwrap();

    let ran = ok(&["import", "--root", root, "emulator", out.to_str().unwrap()], b"");
    assert!(ran.out().contains("unchanged `nicknames`"), "{}", ran.out());
    assert!(ran.stderr.contains("skipped .DS_Store"), "{}", ran.stderr);
    let mut expected = before.clone();
    expected.insert(("emulator".to_owned(), key.clone()), edited.into_bytes());
    expected.insert(("emulator".to_owned(), format!("profile.{UID2}")), profile(UID2, "Bob"));
    assert_eq!(contents(dir.path()), expected, "exactly the edits, byte for byte, and nothing else");

    // A second export replaces the files it writes and leaves the others.
    ok(&["put", "--root", root, "emulator", "session.s1", "-"], b"{\"uid\":\"fedcba9876543210fedcba98\"}");
    ok(&["export", "--root", root, "emulator", out.to_str().unwrap()], b"");
    assert_eq!(std::fs::read(out.join("session.s1")).unwrap(), b"{\"uid\":\"fedcba9876543210fedcba98\"}");
    assert!(out.join(".DS_Store").exists());

    // An empty namespace exports nothing, and says so.
    let empty = folder.path().join("empty");
    let ran = ok(&["export", "--root", root, "nobody", empty.to_str().unwrap()], b"");
    assert!(ran.stderr.contains("holds no keys"), "{}", ran.stderr);
}

#[test]
fn an_import_with_a_file_that_cannot_be_a_key_writes_nothing_and_names_every_such_file() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let f = folder.path();
    std::fs::write(f.join("good"), b"fine").unwrap();
    std::fs::write(f.join("bad name"), b"x").unwrap();
    std::fs::write(f.join("notes.txt~"), b"x").unwrap();
    std::fs::create_dir(f.join("sub")).unwrap();
    refused(
        &["import", "--root", root, "ns", f.to_str().unwrap()],
        &[
            "nothing was imported",
            "3 of the files",
            "bad name: the name is not a key",
            "notes.txt~",
            "sub: not a regular file",
        ],
    );
    assert!(contents(dir.path()).is_empty(), "nothing was written");
    for name in ["bad name", "notes.txt~", "good"] {
        assert!(f.join(name).exists(), "`{name}` was not renamed or removed");
    }
    // With the odd files out of the way, the rest imports.
    std::fs::remove_file(f.join("bad name")).unwrap();
    std::fs::remove_file(f.join("notes.txt~")).unwrap();
    std::fs::remove_dir(f.join("sub")).unwrap();
    ok(&["import", "--root", root, "ns", f.to_str().unwrap()], b"");
    assert_eq!(contents(dir.path()), BTreeMap::from([entry("ns", "good", b"fine")]));
    refused(&["import", "--root", root, "ns", f.join("missing").to_str().unwrap()], &["cannot read the folder"]);
}

#[test]
fn keys_and_namespaces_outside_the_key_rules_are_refused_naming_them() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let long = "k".repeat(181);
    for key in ["a/b", "../escape", ".hidden", "", long.as_str(), "sp ace", "naïve"] {
        refused(&["put", "--root", root, "ns", key, "-"], &[&format!("`{key}` cannot be a key"), "bad key"]);
        refused(&["get", "--root", root, "ns", key], &[&format!("`{key}` cannot be a key")]);
        refused(&["delete", "--root", root, "ns", key], &[&format!("`{key}` cannot be a key")]);
    }
    for ns in ["../etc", ".store", "a b"] {
        refused(&["put", "--root", root, ns, "k", "-"], &[&format!("`{ns}` cannot be a namespace")]);
        refused(&["list", "--root", root, ns], &[&format!("`{ns}` cannot be a namespace")]);
        refused(&["export", "--root", root, ns, dir.path().join("out").to_str().unwrap()], &["cannot be a namespace"]);
    }
    assert!(contents(dir.path()).is_empty(), "nothing was written");
    let mut at_root: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    at_root.sort();
    assert_eq!(at_root, ["store"], "nothing was created outside the store");
}

#[test]
fn an_emulator_profile_the_game_could_not_read_is_refused_unless_raw() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let file = |name: &str, bytes: &[u8]| {
        let path = files.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let key = format!("profile.{UID}");
    let not_json = file("char.txt", b"Nickname: Alice\n");
    refused(&["put", "--root", root, "emulator", &key, &not_json], &["char.txt is not JSON", "--raw"]);
    let bom = file("bom.json", &[b"\xEF\xBB\xBF".as_slice(), &profile(UID, "Alice")].concat());
    refused(&["put", "--root", root, "emulator", &key, &bom], &["byte order mark"]);
    let array = file("array.json", b"[1, 2]");
    refused(&["put", "--root", root, "emulator", &key, &array], &["not an object"]);
    let other = file("other.json", &profile(UID2, "Bob"));
    refused(&["put", "--root", root, "emulator", &key, &other], &[&format!("put it as `profile.{UID2}`")]);
    refused(&["put", "--root", root, "emulator", &key, "-"], &["stdin is not JSON"]);
    assert!(contents(dir.path()).is_empty(), "nothing was written");

    // A valid profile is stored as it is, whitespace and all: never reshaped.
    let alice = profile(UID, "Alice");
    let good = file("alice.json", &alice);
    ok(&["put", "--root", root, "emulator", &key, &good], b"");
    // `--raw` stores anything; other namespaces and other emulator keys are not looked at.
    ok(&["put", "--root", root, "emulator", &format!("profile.{UID2}"), &not_json, "--raw"], b"");
    ok(&["put", "--root", root, "othermod", "profile.x", &not_json], b"");
    let ran = ok(&["put", "--root", root, "emulator", "profile.bob", &good], b"");
    assert!(ran.stderr.contains("warning: the emulator plays only profiles under"), "{}", ran.stderr);
    assert_eq!(ran.stderr.matches("will never select `profile.bob`").count(), 1, "{}", ran.stderr);
    assert_eq!(
        contents(dir.path()),
        BTreeMap::from([
            entry("emulator", &key, &alice),
            entry("emulator", &format!("profile.{UID2}"), b"Nickname: Alice\n"),
            entry("emulator", "profile.bob", &alice),
            entry("othermod", "profile.x", b"Nickname: Alice\n"),
        ])
    );

    // An import checks every profile the same way before writing anything.
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join(format!("profile.{UID}")), profile(UID, "Changed")).unwrap();
    std::fs::write(folder.path().join(format!("profile.{UID2}")), b"{ broken").unwrap();
    let before = contents(dir.path());
    refused(
        &["import", "--root", root, "emulator", folder.path().to_str().unwrap()],
        &["nothing was imported", &format!("profile.{UID2}: the file is not JSON")],
    );
    assert_eq!(contents(dir.path()), before, "nothing was written");
    ok(&["import", "--root", root, "emulator", folder.path().to_str().unwrap(), "--raw"], b"");
    assert_eq!(contents(dir.path())[&("emulator".to_owned(), format!("profile.{UID2}"))], b"{ broken");
    // A profile under a key the game never selects is stored, with one warning.
    std::fs::remove_file(folder.path().join(format!("profile.{UID2}"))).unwrap();
    std::fs::write(folder.path().join("profile.carol"), profile(UID, "Carol")).unwrap();
    let ran = ok(&["import", "--root", root, "emulator", folder.path().to_str().unwrap()], b"");
    assert_eq!(ran.stderr.matches("will never select `profile.carol`").count(), 1, "{}", ran.stderr);
}

#[test]
fn missing_unreadable_and_too_large_inputs_are_refused_naming_them() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let files = tempfile::tempdir().unwrap();
    let missing = files.path().join("missing.json");
    refused(
        &["put", "--root", root, "ns", "k", missing.to_str().unwrap()],
        &["cannot read", "missing.json", "No such file"],
    );
    refused(&["put", "--root", root, "ns", "k", files.path().to_str().unwrap()], &["is a folder, not a file"]);
    let big = files.path().join("big.bin");
    std::fs::File::create(&big).unwrap().set_len(MAX_VALUE_BYTES as u64 + 1).unwrap();
    refused(
        &["put", "--root", root, "ns", "k", big.to_str().unwrap()],
        &["big.bin", &format!("is {} bytes", MAX_VALUE_BYTES + 1), &format!("at most {MAX_VALUE_BYTES} bytes")],
    );
    assert!(contents(dir.path()).is_empty(), "nothing was written");

    ok(&["put", "--root", root, "ns", "k", "-"], b"v");
    let nowhere = files.path().join("no-such-folder").join("out");
    refused(&["get", "--root", root, "ns", "k", nowhere.to_str().unwrap()], &["cannot write", "no-such-folder"]);
    let no_root = dir.path().join("not-a-root");
    refused(&["list", "--root", no_root.to_str().unwrap()], &["there is no modhost root at", "not-a-root"]);
    assert!(!no_root.exists(), "a missing root is not created");
    let file_root = files.path().join("plain-file");
    std::fs::write(&file_root, b"").unwrap();
    refused(&["list", "--root", file_root.to_str().unwrap()], &["is not a directory"]);
}

#[test]
fn every_command_refuses_while_the_store_is_held_naming_the_holder() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("k"), b"from a file").unwrap();
    let folder = folder.path().to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let held = Store::open(&dir.path().join("store"), false).unwrap();
    held.set("ns", "k", b"held").unwrap();
    let holder = format!("a modhost (pid {}) holds the store", std::process::id());
    for args in [
        vec!["list", "--root", root],
        vec!["list", "--root", root, "ns"],
        vec!["get", "--root", root, "ns", "k"],
        vec!["put", "--root", root, "ns", "k", "-"],
        vec!["delete", "--root", root, "ns", "k"],
        vec!["export", "--root", root, "ns", out],
        vec!["import", "--root", root, "ns", folder],
    ] {
        refused(&args, &[&holder, "stop it first"]);
    }
    assert_eq!(held.get("ns", "k").unwrap().as_deref(), Some(&b"held"[..]), "nothing was changed");
    assert!(!Path::new(out).exists(), "nothing was exported");
    drop(held);
    ok(&["put", "--root", root, "ns", "k", "-"], b"after");
    assert_eq!(contents(dir.path()), BTreeMap::from([entry("ns", "k", b"after")]));
}

#[test]
fn a_running_server_keeps_the_cli_out_until_it_stops() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let mut server = ServeChild::spawn(&modhost(), dir.path(), &[]).unwrap();
    let holder = format!("a modhost (pid {}) holds the store", server.pid());
    refused(&["put", "--root", root, "emulator", "session.s", "-"], &[&holder, "stop it first"]);
    refused(&["list", "--root", root], &[&holder]);
    assert!(server.running(), "the server is untouched:\n{}", server.tail());
    drop(server);
    ok(&["put", "--root", root, "emulator", "session.s", "-"], b"{}");
    assert_eq!(ok(&["list", "--root", root, "emulator"], b"").out(), "session.s\n");
}

/// The store a whole-store test moves: several namespaces, binary and empty values, a value of 300 KB,
/// and an emulator profile changed with `doc_patch` (so it has patch records not yet folded into it).
fn seed_for_copy(root: &Path) {
    let store = Store::open(&root.join("store"), false).unwrap();
    let key = format!("profile.{UID}");
    store.set("emulator", &key, &profile(UID, "Alice")).unwrap();
    store.doc_patch("emulator", &key, "Info", br#"{"Nickname":"Alicia","Level":12}"#, None).unwrap();
    store.doc_patch("emulator", &key, "", br#"{"Hideout":{"Areas":[1,2,3]}}"#, None).unwrap();
    store.set("emulator", "session.s1", b"{\"uid\":\"0123456789abcdef01234567\"}").unwrap();
    let binary: Vec<u8> = (0..=255u8).chain(*b"\r\n\0 end").collect();
    store.set("bin", "all-bytes", &binary).unwrap();
    store.set("bin", "empty", b"").unwrap();
    let large: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    store.set("bin", "large", &large).unwrap();
    for i in 0..40 {
        store.set("many", &format!("k{i:02}"), format!("value {i}").as_bytes()).unwrap();
    }
}

#[test]
fn a_whole_store_moves_sqlite_to_postgresql_to_a_fresh_root_byte_for_byte_checked() {
    let (_serial, dir) = root();
    let pg = Server::start();
    let url = pg.database("moved");
    let root = dir.path().to_str().unwrap();
    seed_for_copy(dir.path());
    let before = contents(dir.path());
    let patched = String::from_utf8(before[&("emulator".to_owned(), format!("profile.{UID}"))].clone()).unwrap();
    assert!(patched.contains("Alicia") && patched.contains("Areas"), "the patches are in the profile: {patched}");
    assert_eq!(before.len(), 45);
    let summary = "copied 45 keys in 3 namespaces, checked";

    // SQLite → PostgreSQL.
    let ran = ok(&["copy", "--from", root, "--to", &url], b"");
    assert!(ran.out().contains(summary), "{}", ran.out());
    assert_eq!(pg_contents(&url), before, "PostgreSQL holds every key, byte for byte");
    assert_eq!(contents(dir.path()), before, "the source is unchanged");

    // Every command works on the PostgreSQL store with --store-url.
    assert_eq!(ok(&["list", "--store-url", &url], b"").out(), "bin\nemulator\nmany\n");
    let key = format!("profile.{UID}");
    assert_eq!(ok(&["get", "--store-url", &url, "emulator", &key], b"").stdout, patched.as_bytes());
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("emulator");
    ok(&["export", "--store-url", &url, "emulator", out.to_str().unwrap()], b"");
    assert_eq!(std::fs::read(out.join(&key)).unwrap(), patched.as_bytes(), "exported from PostgreSQL");
    let ran = ok(&["import", "--store-url", &url, "emulator", out.to_str().unwrap()], b"");
    assert!(ran.out().contains("imported 0 keys") && ran.out().contains("(2 unchanged)"), "{}", ran.out());
    refused(&["delete", "--store-url", &url, "emulator", "nope"], &["there is no `nope`", "--store-url postgres://"]);

    // PostgreSQL → a root that does not exist yet (created).
    let fresh = folder.path().join("fresh-root");
    let ran = ok(&["copy", "--from", &url, "--to", fresh.to_str().unwrap()], b"");
    assert!(ran.out().contains(summary), "{}", ran.out());
    assert_eq!(contents(&fresh), before, "the round trip preserved every key, byte for byte");
    assert_eq!(pg_contents(&url), before, "the PostgreSQL source is unchanged");
}

#[test]
fn a_copy_into_a_store_that_holds_keys_is_refused_and_writes_nothing() {
    let (_serial, dir) = root();
    let pg = Server::start();
    let url = pg.database("occupied");
    let root = dir.path().to_str().unwrap();
    seed_for_copy(dir.path());
    let before = contents(dir.path());

    // A PostgreSQL destination holding one key.
    ok(&["put", "--store-url", &url, "othermod", "already", "-"], b"here first");
    let held = BTreeMap::from([entry("othermod", "already", b"here first")]);
    refused(
        &["copy", "--from", root, "--to", &url],
        &["already holds 1 key (", "`othermod/already`", "nothing was written"],
    );
    assert_eq!(pg_contents(&url), held, "nothing was written to PostgreSQL");

    // A SQLite destination holding keys (here: the same keys as the source, from an earlier copy).
    let other = tempfile::tempdir().unwrap();
    let empty = pg.database("empty");
    ok(&["copy", "--from", root, "--to", &empty], b"");
    ok(&["copy", "--from", &empty, "--to", other.path().to_str().unwrap()], b"");
    ok(&["put", "--root", other.path().to_str().unwrap(), "many", "k00", "-"], b"changed");
    let other_before = contents(other.path());
    refused(
        &["copy", "--from", &url, "--to", other.path().to_str().unwrap()],
        &["already holds 45 keys", "`bin/all-bytes`", "…", "nothing was written"],
    );
    assert_eq!(contents(other.path()), other_before, "nothing was written to SQLite");

    // The same store on both sides, and an empty source.
    refused(&["copy", "--from", root, "--to", &format!("{root}/.")], &["are the same store"]);
    refused(&["copy", "--from", &url, "--to", &url], &["are the same store"]);
    let nothing = tempfile::tempdir().unwrap();
    refused(&["copy", "--from", nothing.path().to_str().unwrap(), "--to", &url], &["holds no keys: nothing to copy"]);
    assert_eq!(contents(dir.path()), before, "the source is unchanged");
    assert_eq!(pg_contents(&url), held);
}

#[test]
fn a_copy_that_fails_midway_or_reads_back_other_bytes_says_so() {
    let (_serial, dir) = root();
    let pg = Server::start();
    let root = dir.path().to_str().unwrap();
    seed_for_copy(dir.path());
    let before = contents(dir.path());

    // A database that stores other bytes than it was given for one key: the copy's check catches it.
    let tampered = pg.database("tampered");
    drop(modhost_store_pg::connect(&tampered).unwrap()); // its tables
    psql(
        &tampered,
        "CREATE FUNCTION tamper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF NEW.key = 'k17' THEN NEW.value := 'tampered'::bytea; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER tamper BEFORE INSERT ON modhost.kv FOR EACH ROW EXECUTE FUNCTION tamper();",
    );
    let ran = refused(
        &["copy", "--from", root, "--to", &tampered],
        &["the copy failed its check", "(1 difference)", "`many/k17`: 8 bytes in", "8 different bytes in"],
    );
    assert!(!ran.out().contains("checked"), "{}", ran.out());

    // A database that refuses one write: the copy stops there and says what it left behind.
    let failing = pg.database("failing");
    drop(modhost_store_pg::connect(&failing).unwrap());
    psql(
        &failing,
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
           IF NEW.key = 'k05' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$; \
         CREATE TRIGGER refuse BEFORE INSERT ON modhost.kv FOR EACH ROW EXECUTE FUNCTION refuse();",
    );
    refused(
        &["copy", "--from", root, "--to", &failing],
        &[
            "copying `k05` of `many` failed, so the copy stopped",
            "refused by the test",
            "10 of the 45 keys were copied before it",
            "holds only part of the store",
        ],
    );
    assert_eq!(pg_contents(&failing).len(), 10, "the keys before it, and no more");
    assert_eq!(contents(dir.path()), before, "the source is unchanged");
}

#[test]
fn a_bad_store_url_is_one_clear_error_line() {
    let (_serial, dir) = root();
    let root = dir.path().to_str().unwrap();
    let one_line = |ran: &Ran| {
        assert_eq!(ran.stderr.trim_end().lines().count(), 1, "one line:\n{}", ran.stderr);
        assert!(ran.stderr.starts_with("error: "), "{}", ran.stderr);
    };
    let nowhere = dir.path().join("no-server-here");
    let unreachable = format!("postgres://modhost:secret@/postgres?host={}", nowhere.display());
    // With --store-url, --root is not used: no SQLite store is made there instead.
    one_line(&refused(
        &["list", "--root", root, "--store-url", &unreachable],
        &["cannot open the PostgreSQL store", "is unreachable"],
    ));
    let source = tempfile::tempdir().unwrap();
    seed_for_copy(source.path());
    let ran = refused(
        &["copy", "--from", source.path().to_str().unwrap(), "--to", &unreachable],
        &["is unreachable", "modhost:***@"],
    );
    one_line(&ran);
    assert!(!ran.stderr.contains("secret"), "the password is not shown: {}", ran.stderr);
    one_line(&refused(&["list", "--store-url", "postgres://[::1"], &["is not a PostgreSQL URL"]));
    one_line(&refused(&["list", "--store-url", "mysql://db/x"], &["--store-url takes a postgres://… URL"]));
    one_line(&refused(
        &["copy", "--from", "mysql://db/x", "--to", root],
        &["neither a root's folder nor a postgres://… URL"],
    ));
    // A server that is there, and a database that is not.
    let pg = Server::start();
    let missing = pg.url().replace("/postgres?", "/no_such_db?");
    one_line(&refused(&["get", "--store-url", &missing, "ns", "k"], &["no_such_db", "does not exist"]));
    assert!(!dir.path().join("store").exists(), "no SQLite store was made instead");
}
