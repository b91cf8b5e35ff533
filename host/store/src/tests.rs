//! The store's tests: the API case by case, versions, the lock, backups, fault injection at every
//! step of a commit, and a model test against a `BTreeMap` with restarts.

use super::*;
use std::collections::BTreeMap;
use std::fs;

fn open(dir: &Path) -> Store {
    Store::open(dir, false).unwrap()
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
    assert!(s.delete("m", "k").unwrap());
    assert!(!s.delete("m", "k").unwrap());
    assert_eq!(s.list("nobody", "").unwrap(), Vec::<String>::new());
    // The value is an ordinary file with exactly the bytes.
    assert_eq!(fs::read(dir.path().join("other/k3")).unwrap(), b"x");
}

#[test]
fn bad_keys_are_refused_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    for key in ["", ".hidden", "a/b", "../x", "sp ace", "ü", &"k".repeat(181)] {
        assert!(matches!(s.set("m", key, b"v"), Err(StoreError::InvalidKey { .. })), "{key:?}");
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
    fs::create_dir_all(dir.path().join("m").join("k")).unwrap();
    let s = open(dir.path());
    assert!(matches!(s.get("m", "k"), Err(StoreError::Unreadable { .. })));
    assert!(matches!(s.set("m", "k", b"fresh"), Err(StoreError::Unreadable { .. })));
    fs::remove_dir(dir.path().join("m").join("k")).unwrap();
    assert_eq!(s.get("m", "k").unwrap(), None);
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

#[test]
fn stale_temps_are_removed_at_open_and_never_listed() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("m/.hist")).unwrap();
    fs::write(dir.path().join("m/.tmp-1-0-k"), b"half").unwrap();
    fs::write(dir.path().join("m/.hist/.tmp-1-1-k"), b"half").unwrap();
    fs::write(dir.path().join("m/k"), b"whole").unwrap();
    let s = Store::open(dir.path(), true).unwrap();
    assert!(!dir.path().join("m/.tmp-1-0-k").exists());
    assert!(!dir.path().join("m/.hist/.tmp-1-1-k").exists());
    assert_eq!(s.list("m", "").unwrap(), ["k"]);
    assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"whole"[..]));
    // A temp of a commit in progress (made here by hand) is never listed either.
    fs::write(dir.path().join("m/.tmp-9-9-k2"), b"half").unwrap();
    assert_eq!(s.list("m", "").unwrap(), ["k"]);
}

#[test]
fn the_old_value_is_backed_up_whole_once_per_run_and_period() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    s.set("m", "p", b"first").unwrap();
    assert!(!dir.path().join("m/.hist").exists(), "nothing to back up before the first value");
    s.set("m", "p", b"second").unwrap();
    s.set("m", "p", b"third").unwrap();
    let backups: Vec<_> = fs::read_dir(dir.path().join("m/.hist")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(fs::read(&backups[0]).unwrap(), b"first");
    assert_eq!(s.list("m", "").unwrap(), ["p"]);
    // A new run backs up again on its first write.
    drop(s);
    let s = open(dir.path());
    s.set("m", "p", b"fourth").unwrap();
    // The slot follows the clock, so look in every slot.
    let all: Vec<Vec<u8>> =
        fs::read_dir(dir.path().join("m/.hist")).unwrap().map(|e| fs::read(e.unwrap().path()).unwrap()).collect();
    assert!(all.iter().any(|b| b == b"third"), "{all:?}");
}

/// Which step of a commit fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Create,
    Write,
    Sync,
    Rename,
    SyncDir,
}

/// The real file system, with one step set to fail.
#[derive(Debug, Default)]
struct Faulty {
    fail: Mutex<Option<(Step, i32)>>,
}

impl Faulty {
    fn check(&self, step: Step) -> std::io::Result<()> {
        match *self.fail.lock().unwrap() {
            Some((s, errno)) if s == step => Err(std::io::Error::from_raw_os_error(errno)),
            _ => Ok(()),
        }
    }
}

struct FaultyFile {
    inner: Box<dyn NewFile>,
    backend: Arc<Faulty>,
}

impl NewFile for FaultyFile {
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        // Write half first, as a full disk does.
        self.inner.write_all(&bytes[..bytes.len() / 2])?;
        self.backend.check(Step::Write)?;
        self.inner.write_all(&bytes[bytes.len() / 2..])
    }
    fn sync(&mut self) -> std::io::Result<()> {
        self.backend.check(Step::Sync)?;
        self.inner.sync()
    }
}

#[derive(Debug)]
struct FaultyFs(Arc<Faulty>);

impl Backend for FaultyFs {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        RealFs.read(path)
    }
    fn create_new(&self, path: &Path) -> std::io::Result<Box<dyn NewFile>> {
        self.0.check(Step::Create)?;
        Ok(Box::new(FaultyFile { inner: RealFs.create_new(path)?, backend: self.0.clone() }))
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.0.check(Step::Rename)?;
        RealFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        RealFs.remove(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        self.0.check(Step::SyncDir)?;
        RealFs.sync_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> std::io::Result<()> {
        RealFs.create_dir_all(dir)
    }
    fn list(&self, dir: &Path) -> std::io::Result<Vec<String>> {
        RealFs.list(dir)
    }
}

#[test]
fn a_failure_at_any_step_is_an_error_keeps_the_old_value_and_the_store_works_on() {
    const ENOSPC: i32 = 28;
    const EIO: i32 = 5;
    for step in [Step::Create, Step::Write, Step::Sync, Step::Rename, Step::SyncDir] {
        for errno in [ENOSPC, EIO] {
            let dir = tempfile::tempdir().unwrap();
            let faults = Arc::new(Faulty::default());
            let s = Store::open_with(dir.path(), true, Arc::new(FaultyFs(faults.clone()))).unwrap();
            s.set("m", "k", b"old value").unwrap();
            *faults.fail.lock().unwrap() = Some((step, errno));
            let err = s.set("m", "k", b"new value").expect_err("the commit must fail");
            assert!(matches!(err, StoreError::Io { .. }), "{step:?}: {err}");
            let on_disk = fs::read(dir.path().join("m/k")).unwrap();
            if step == Step::SyncDir {
                // Only the last sync failed: the rename happened, and the error says so.
                assert!(err.to_string().contains("in place"), "{err}");
                assert_eq!(on_disk, b"new value");
                assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"new value"[..]));
            } else {
                assert_eq!(on_disk, b"old value", "{step:?}");
                assert_eq!(s.get("m", "k").unwrap().as_deref(), Some(&b"old value"[..]), "{step:?}");
            }
            let leftovers: Vec<_> = fs::read_dir(dir.path().join("m"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".tmp-"))
                .collect();
            assert!(leftovers.is_empty(), "{step:?}: {leftovers:?}");
            *faults.fail.lock().unwrap() = None;
            s.set("m", "k", b"after").unwrap();
            assert_eq!(fs::read(dir.path().join("m/k")).unwrap(), b"after");
        }
    }
}

mod model {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Set(u8, Vec<u8>),
        SetIfCurrent(u8, Vec<u8>),
        SetIfStale(u8, Vec<u8>),
        Delete(u8),
        Get(u8),
        List(u8),
        Restart,
    }

    fn key(k: u8) -> String {
        ["a", "ab", "b", "b.c", "c-d", "Z_9"][k as usize % 6].to_owned()
    }

    fn op() -> impl Strategy<Value = Op> {
        let value = || prop::collection::vec(any::<u8>(), 0..64);
        prop_oneof![
            (any::<u8>(), value()).prop_map(|(k, v)| Op::Set(k, v)),
            (any::<u8>(), value()).prop_map(|(k, v)| Op::SetIfCurrent(k, v)),
            (any::<u8>(), value()).prop_map(|(k, v)| Op::SetIfStale(k, v)),
            any::<u8>().prop_map(Op::Delete),
            any::<u8>().prop_map(Op::Get),
            any::<u8>().prop_map(Op::List),
            Just(Op::Restart),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn the_store_answers_as_a_btreemap_across_restarts(ops in prop::collection::vec(op(), 1..40)) {
            let dir = tempfile::tempdir().unwrap();
            let mut store = Some(open(dir.path()));
            let mut model: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            for op in ops {
                let s = store.as_ref().unwrap();
                match op {
                    Op::Set(k, v) => {
                        s.set("ns", &key(k), &v).unwrap();
                        model.insert(key(k), v);
                    }
                    Op::SetIfCurrent(k, v) => {
                        let current = s.get_versioned("ns", &key(k)).unwrap().map(|c| c.version);
                        s.set_if_version("ns", &key(k), &v, current).unwrap();
                        model.insert(key(k), v);
                    }
                    Op::SetIfStale(k, v) => {
                        let stale = s.get_versioned("ns", &key(k)).unwrap().map_or(Some(1), |c| Some(c.version + 1_000_000));
                        let refused = matches!(s.set_if_version("ns", &key(k), &v, stale), Err(StoreError::Conflict { .. }));
                        prop_assert!(refused);
                    }
                    Op::Delete(k) => {
                        prop_assert_eq!(s.delete("ns", &key(k)).unwrap(), model.remove(&key(k)).is_some());
                    }
                    Op::Get(k) => {
                        prop_assert_eq!(s.get("ns", &key(k)).unwrap().map(|b| b.to_vec()), model.get(&key(k)).cloned());
                    }
                    Op::List(k) => {
                        let prefix = &key(k)[..1];
                        let expected: Vec<String> = model.keys().filter(|n| n.starts_with(prefix)).cloned().collect();
                        prop_assert_eq!(s.list("ns", prefix).unwrap(), expected);
                    }
                    Op::Restart => {
                        // Close the old store (releasing its lock) before the new one opens.
                        drop(store.take());
                        store = Some(open(dir.path()));
                    }
                }
            }
        }
    }
}
