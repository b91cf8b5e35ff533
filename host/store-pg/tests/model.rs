//! The model tests of the store, on both engines: the API against a `BTreeMap`, and documents
//! against merge patches applied to `serde_json` values, with restarts (a reopened SQLite store, a
//! new PostgreSQL connection with a cold cache) and folds. Each PostgreSQL test starts its own server
//! (`modhost_store_pg::testing`) and empties the store between cases.

use modhost_store::{Store, StoreError};
use modhost_store_pg::testing::Server;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use std::collections::BTreeMap;

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

/// A document step: a merge patch at a path, a whole write, a fold, a read, or a restart.
#[derive(Debug, Clone)]
enum DocOp {
    Patch(Vec<&'static str>, Value),
    Set(Value),
    Compact,
    Read(Vec<&'static str>),
    Restart,
}

fn names() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(vec!["a", "b", "c.d", "e"]), 0..3)
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0i64..100).prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 3, |inner| {
        prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c.d", "e"]), inner, 0..3)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
    })
}

fn doc_op() -> impl Strategy<Value = DocOp> {
    prop_oneof![
        4 => (names(), json_value()).prop_map(|(p, v)| DocOp::Patch(p, v)),
        1 => json_value().prop_map(|v| DocOp::Set(json!({ "base": v }))),
        1 => Just(DocOp::Compact),
        2 => names().prop_map(DocOp::Read),
        1 => Just(DocOp::Restart),
    ]
}

/// RFC 7396, on serde_json values: the naive model.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = json!({});
    }
    let object = target.as_object_mut().unwrap();
    for (name, value) in members {
        if value.is_null() {
            object.remove(name);
        } else {
            merge(object.entry(name.clone()).or_insert(Value::Null), value);
        }
    }
}

/// The model's patch at a path: parents are created, a parent that is not an object refuses.
fn patch_at(doc: &Value, names: &[&str], patch: &Value) -> Option<Value> {
    let mut next = doc.clone();
    let mut at = &mut next;
    for (i, name) in names.iter().enumerate() {
        let object = at.as_object_mut()?;
        let last = i + 1 == names.len();
        if last && patch.is_null() {
            object.remove(*name);
            return Some(next);
        }
        let child = object.entry(name.to_string()).or_insert_with(|| json!({}));
        if !last && !child.is_object() {
            return None;
        }
        at = child;
    }
    if names.is_empty() && !patch.is_object() {
        return None;
    }
    merge(at, patch);
    Some(next)
}

fn read(doc: &Value, names: &[&str]) -> Value {
    names.iter().try_fold(doc, |at, name| at.get(name)).cloned().unwrap_or(Value::Null)
}

/// Runs the key/value model over `ops`, opening the store with `open` (again at each restart).
fn kv_model(ops: Vec<Op>, open: &dyn Fn() -> Store) -> Result<(), TestCaseError> {
    let mut store = Some(open());
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
                // Close the old store (its lock, its connections) before the new one opens.
                drop(store.take());
                store = Some(open());
            }
        }
    }
    Ok(())
}

/// Runs the document model over `ops`.
fn doc_model(ops: Vec<DocOp>, open: &dyn Fn() -> Store) -> Result<(), TestCaseError> {
    let mut store = Some(open());
    let mut model: Option<Value> = None;
    for op in ops {
        let s = store.as_ref().unwrap();
        match op {
            DocOp::Patch(names, patch) => {
                let path = modhost_db::join_path(&names);
                let answer = s.doc_patch("ns", "doc", &path, patch.to_string().as_bytes(), None);
                match patch_at(model.as_ref().unwrap_or(&json!({})), &names, &patch) {
                    Some(next) => {
                        prop_assert!(answer.is_ok(), "{:?}", answer);
                        model = Some(next);
                    }
                    None => prop_assert!(matches!(answer, Err(StoreError::Document { .. })), "{:?}", answer),
                }
            }
            DocOp::Set(value) => {
                s.set("ns", "doc", value.to_string().as_bytes()).unwrap();
                model = Some(value);
            }
            DocOp::Compact => {
                s.compact().unwrap();
            }
            DocOp::Read(names) => {
                let path = modhost_db::join_path(&names);
                let got = s.doc_get("ns", "doc", &path).unwrap();
                match &model {
                    None => prop_assert!(got.is_none()),
                    Some(doc) => {
                        let got: Value = serde_json::from_slice(&got.unwrap().value).unwrap();
                        prop_assert_eq!(got, read(doc, &names));
                    }
                }
            }
            DocOp::Restart => {
                drop(store.take());
                store = Some(open());
            }
        }
        let whole = store.as_ref().unwrap().get("ns", "doc").unwrap();
        let whole: Option<Value> = whole.map(|b| serde_json::from_slice(&b).unwrap());
        prop_assert_eq!(&whole, &model);
    }
    Ok(())
}

const CASES: u32 = 128;

/// A model run: the steps, and how to open the store (again at each restart).
type Model<T> = fn(Vec<T>, &dyn Fn() -> Store) -> Result<(), TestCaseError>;

fn sqlite_runs<T: std::fmt::Debug>(ops: impl Strategy<Value = Vec<T>>, model: Model<T>) {
    let mut runner = TestRunner::new(Config { cases: CASES, ..Config::default() });
    runner
        .run(&ops, |ops| {
            let dir = tempfile::tempdir().unwrap();
            model(ops, &|| reopen(dir.path()))
        })
        .unwrap();
}

/// Opens the store at `dir`, waiting out a lock that this process's previous opening still holds
/// through a child: the PostgreSQL tests beside this one spawn processes, and a fork made while the
/// previous `Store` was open keeps a copy of its lock file's descriptor (and so its `flock`) until that
/// child's exec closes it. Seen once in CI as `Lock(Held { holder: <this test's pid> })`. Any other
/// error, or a lock still held after a second, fails the test.
fn reopen(dir: &std::path::Path) -> Store {
    for _ in 0..100 {
        match Store::open(dir, false) {
            Err(StoreError::Lock(_)) => std::thread::sleep(std::time::Duration::from_millis(10)),
            other => return other.unwrap(),
        }
    }
    Store::open(dir, false).unwrap()
}

/// Runs `model` on a PostgreSQL server of the test's own, the store emptied before each case.
fn postgres_runs<T: std::fmt::Debug>(ops: impl Strategy<Value = Vec<T>>, model: Model<T>) {
    let server = Server::start();
    let url = server.url();
    let mut runner = TestRunner::new(Config { cases: CASES, ..Config::default() });
    runner
        .run(&ops, |ops| {
            let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            admin.batch_execute("DROP SCHEMA IF EXISTS modhost CASCADE").unwrap();
            model(ops, &|| modhost_store_pg::connect(&url).unwrap())
        })
        .unwrap();
}

#[test]
fn sqlite_answers_as_a_btreemap_across_restarts() {
    sqlite_runs(prop::collection::vec(op(), 1..40), kv_model);
}

#[test]
fn postgres_answers_as_a_btreemap_across_restarts() {
    postgres_runs(prop::collection::vec(op(), 1..40), kv_model);
}

#[test]
fn a_sqlite_document_answers_as_patches_applied_to_serde_json() {
    sqlite_runs(prop::collection::vec(doc_op(), 1..40), doc_model);
}

#[test]
fn a_postgres_document_answers_as_patches_applied_to_serde_json() {
    postgres_runs(prop::collection::vec(doc_op(), 1..40), doc_model);
}
