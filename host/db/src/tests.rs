//! The db's tests: the semantics case by case, RFC 7396's Appendix A, a model-based property test
//! against a naive `serde_json` implementation, and a race between readers and writers.

use super::*;
use serde_json::{Map, Value, json};

fn db(v: Value) -> Db {
    Db::from_text(v.to_string()).unwrap()
}

fn get(d: &Db, path: &str) -> String {
    String::from_utf8(d.get(path).unwrap().to_vec()).unwrap()
}

#[test]
fn get_returns_the_exact_text_and_keys_keep_document_order() {
    let d = Db::from_text(r#" {"t": {"z": 1.10, "a": [1, 2 ], "m": "s\u00e9"}} "#).unwrap();
    assert_eq!(get(&d, "t.a"), "[1, 2 ]");
    assert_eq!(get(&d, "t.z"), "1.10");
    assert_eq!(get(&d, "t.m"), r#""s\u00e9""#);
    assert_eq!(d.keys("t").unwrap(), ["z", "a", "m"]);
}

#[test]
fn missing_empty_and_through_scalar_paths_are_not_found() {
    let d = db(json!({"a": {"b": 1}, "arr": [1]}));
    for path in ["a.c", "", "a.b.c", "arr.0", "nope.x"] {
        assert!(matches!(d.get(path), Err(DbError::NotFound { .. })), "{path}");
    }
    assert!(matches!(d.keys("arr"), Err(DbError::WrongKind { .. })));
    assert!(matches!(d.keys("a.b"), Err(DbError::WrongKind { .. })));
    assert!(matches!(d.keys("nope"), Err(DbError::NotFound { .. })));
    for path in ["a.c", "", "a.b.c", "arr.0", "nope.x"] {
        assert_eq!(d.exists(path), Ok(false), "{path}");
    }
    for path in ["a", "a.b", "arr"] {
        assert_eq!(d.exists(path), Ok(true), "{path}");
    }
    assert!(matches!(d.exists("a\\q\\"), Err(DbError::BadPath { .. })), "a bad path is an error, not absent");
}

#[test]
fn escapes_and_empty_names() {
    assert_eq!(parse_path(r"a\.b.c\\d").unwrap(), ["a.b", r"c\d"]);
    assert_eq!(parse_path("a..b").unwrap(), ["a", "", "b"]);
    assert_eq!(parse_path("a.").unwrap(), ["a", ""]);
    assert!(parse_path("").unwrap().is_empty());
    assert!(matches!(parse_path(r"a\x"), Err(DbError::BadPath { .. })));
    assert!(matches!(parse_path("a\\"), Err(DbError::BadPath { .. })));
    let d = db(json!({"a.b": {"c\\d": 7, "": {"": 8}}}));
    assert_eq!(get(&d, r"a\.b.c\\d"), "7");
    assert_eq!(get(&d, r"a\.b.."), "8");
    assert_eq!(join_path(&["a.b", "", ""]), r"a\.b..");
}

#[test]
fn patch_creates_missing_parents_and_a_root_patch_merges() {
    let d = db(json!({}));
    d.patch("x.y.z", "5").unwrap();
    assert_eq!(get(&d, "x"), r#"{"y":{"z":5}}"#);
    d.patch("", r#"{"top": true}"#).unwrap();
    assert_eq!(get(&d, "top"), "true");
    assert_eq!(get(&d, "x"), r#"{"y":{"z":5}}"#, "a root patch merges, it does not replace");
    assert_eq!(d.keys("").err().map(|e| matches!(e, DbError::NotFound { .. })), Some(true));
}

#[test]
fn refused_patches_change_nothing() {
    let d = db(json!({"a": {"s": "str", "arr": []}}));
    let before = d.snapshot();
    assert!(matches!(d.patch("a", "{not json"), Err(DbError::BadJson { .. })));
    assert!(matches!(d.patch("a", "1 2"), Err(DbError::BadJson { .. })));
    assert!(matches!(d.patch("a.s.deeper", "1"), Err(DbError::WrongKind { .. })));
    assert!(matches!(d.patch("a.arr.x", "1"), Err(DbError::WrongKind { .. })));
    assert!(matches!(d.patch("", "[1]"), Err(DbError::WrongKind { .. })));
    assert!(matches!(d.patch(r"a\q", "1"), Err(DbError::BadPath { .. })));
    assert!(matches!(d.patch("a", r#"{"\ud800": 1}"#), Err(DbError::BadJson { .. })));
    assert!(d.snapshot().same_version(&before));
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let d = db(json!({}));
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    assert!(matches!(d.patch("x", &deep), Err(DbError::BadJson { .. })));
    assert!(matches!(d.patch(&vec!["a"; 200].join("."), "1"), Err(DbError::BadPath { .. })));
    let value = "[".repeat(40) + &"]".repeat(40);
    assert!(matches!(d.patch(&vec!["a"; 100].join("."), &value), Err(DbError::BadPath { .. })));
    d.patch(&vec!["a"; 100].join("."), "1").unwrap();
    assert_eq!(get(&d, &vec!["a"; 100].join(".")), "1");
    // A deep db.json is only ever sliced, never recursed into: it loads and reads.
    let deep = Db::from_text(format!("{{\"d\":{}1{}}}", "[".repeat(100_000), "]".repeat(100_000))).unwrap();
    assert_eq!(deep.get("d").unwrap().len(), 200_001);
}

#[test]
fn a_snapshot_never_sees_a_later_patch_and_restore_goes_back() {
    let d = db(json!({"a": 1}));
    let before = d.snapshot();
    d.patch("a", "2").unwrap();
    assert_eq!(&before.get("a").unwrap()[..], b"1");
    assert_eq!(get(&d, "a"), "2");
    d.restore(before);
    assert_eq!(get(&d, "a"), "1");
}

#[test]
fn untouched_values_keep_their_text_and_share_it() {
    let d = db(json!({"t": {"items": {"a": {"w": 1}, "b": {"w": 2}}}, "other": [1, 2, 3]}));
    let items = d.get("t.items").unwrap();
    d.patch("t.items.a.w", "5").unwrap();
    // Siblings of the patched path are the same nodes as before, with the same text buffer.
    assert_eq!(d.get("t.items.b").unwrap().as_ptr(), items[r#"{"a":{"w":1},"#.len() + 4..].as_ptr());
    assert_eq!(get(&d, "t.items"), r#"{"a":{"w":5},"b":{"w":2}}"#);
}

#[test]
fn load_reports_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.json");
    std::fs::write(&path, "{\n  \"a\": 1,\n  oops\n}").unwrap();
    let err = Db::load(&path).unwrap_err().to_string();
    assert!(err.contains("line 3"), "{err}");
    std::fs::write(&path, "[1]").unwrap();
    assert!(matches!(Db::load(&path), Err(LoadError::NotAnObject { .. })));
    std::fs::write(&path, "{} {}").unwrap();
    assert!(matches!(Db::load(&path), Err(LoadError::Parse { .. })));
}

/// RFC 7396, Appendix A: every example, applied to the member `x`.
#[test]
fn rfc7396_appendix_a() {
    let cases = [
        (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
        (json!({"a":"b"}), json!({"a":null}), json!({})),
        (json!({"a":"b","b":"c"}), json!({"a":null}), json!({"b":"c"})),
        (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
        (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
        (json!({"a":{"b":"c"}}), json!({"a":{"b":"d","c":null}}), json!({"a":{"b":"d"}})),
        (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
        (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
        (json!({"a":"b"}), json!(["c"]), json!(["c"])),
        (json!({"a":"foo"}), json!(null), json!(null)),
        (json!({"a":"foo"}), json!("bar"), json!("bar")),
        (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
        (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
        (json!({}), json!({"a":{"bb":{"ccc":null}}}), json!({"a":{"bb":{}}})),
    ];
    for (target, patch, expected) in cases {
        let d = db(json!({ "x": target }));
        d.patch("x", &patch.to_string()).unwrap();
        let got: Value = match d.get("x") {
            Ok(text) => serde_json::from_slice(&text).unwrap(),
            Err(DbError::NotFound { .. }) => Value::Null,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(got, expected, "{target} + {patch}");
    }
}

/// The naive reference: a `serde_json::Value` (document order kept) and the RFC 7396 algorithm.
mod model {
    use super::*;

    #[derive(Debug, PartialEq, Eq)]
    pub(super) enum Outcome {
        Text(String),
        Keys(Vec<String>),
        Done,
        NotFound,
        WrongKind,
    }

    pub(super) fn walk<'a>(root: &'a Value, names: &[String]) -> Option<&'a Value> {
        names.iter().try_fold(root, |node, name| node.as_object()?.get(name))
    }

    pub(super) fn get(root: &Value, names: &[String]) -> Outcome {
        match walk(root, names) {
            Some(v) if !names.is_empty() => Outcome::Text(v.to_string()),
            _ => Outcome::NotFound,
        }
    }

    pub(super) fn keys(root: &Value, names: &[String]) -> Outcome {
        match walk(root, names) {
            Some(Value::Object(m)) if !names.is_empty() => Outcome::Keys(m.keys().cloned().collect()),
            Some(_) if !names.is_empty() => Outcome::WrongKind,
            _ => Outcome::NotFound,
        }
    }

    pub(super) fn merge(target: &mut Value, patch: &Value) {
        let Value::Object(members) = patch else {
            *target = patch.clone();
            return;
        };
        if !target.is_object() {
            *target = Value::Object(Map::new());
        }
        let Value::Object(map) = target else { return };
        for (name, value) in members {
            if value.is_null() {
                map.shift_remove(name);
            } else {
                merge(map.entry(name.clone()).or_insert(Value::Null), value);
            }
        }
    }

    pub(super) fn patch(root: &mut Value, names: &[String], patch: &Value) -> Outcome {
        let Some((last, parents)) = names.split_last() else {
            if !patch.is_object() {
                return Outcome::WrongKind;
            }
            merge(root, patch);
            return Outcome::Done;
        };
        let mut node = &*root;
        for name in parents {
            match node.get(name) {
                None => break,
                Some(child @ Value::Object(_)) => node = child,
                Some(_) => return Outcome::WrongKind,
            }
        }
        let mut node = root;
        for name in parents {
            let Value::Object(map) = node else { return Outcome::WrongKind };
            node = map.entry(name.clone()).or_insert_with(|| Value::Object(Map::new()));
        }
        let Value::Object(map) = node else { return Outcome::WrongKind };
        if patch.is_null() {
            map.shift_remove(last);
        } else {
            merge(map.entry(last.clone()).or_insert(Value::Null), patch);
        }
        Outcome::Done
    }
}

mod properties {
    use super::model::{self, Outcome};
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> + Clone {
        prop_oneof![
            Just(String::new()),
            Just("a".to_owned()),
            Just("b".to_owned()),
            Just("a.b".to_owned()),
            Just(r"c\d".to_owned()),
            Just("sp ace".to_owned()),
            Just("é✓".to_owned()),
            Just(r#"q"uote"#.to_owned()),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-1000i64..1000).prop_map(|n| json!(n)),
            name().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec((name(), inner), 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn document() -> impl Strategy<Value = Value> {
        prop::collection::vec((name(), value()), 0..5).prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    #[derive(Debug, Clone)]
    enum Op {
        Get(Vec<String>),
        Keys(Vec<String>),
        Patch(Vec<String>, Value),
    }

    fn op() -> impl Strategy<Value = Op> {
        let path = || prop::collection::vec(name(), 0..4);
        prop_oneof![
            path().prop_map(Op::Get),
            path().prop_map(Op::Keys),
            (path(), value()).prop_map(|(p, v)| Op::Patch(p, v)),
        ]
    }

    fn path_of(names: &[String]) -> String {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        join_path(&names)
    }

    /// `join_path` cannot express "one empty name" (it is the empty path, the root): skip such ops.
    fn expressible(names: &[String]) -> bool {
        !(names.len() == 1 && names[0].is_empty())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn the_tree_answers_as_the_naive_model(doc in document(), ops in prop::collection::vec(op(), 1..24)) {
            let d = Db::from_text(doc.to_string()).unwrap();
            let mut model = doc;
            for op in ops {
                let (ours, theirs) = match &op {
                    Op::Get(names) if expressible(names) => {
                        let ours = match d.get(&path_of(names)) {
                            Ok(t) => Outcome::Text(String::from_utf8(t.to_vec()).unwrap()),
                            Err(DbError::NotFound { .. }) => Outcome::NotFound,
                            Err(e) => panic!("{e}"),
                        };
                        (ours, model::get(&model, names))
                    }
                    Op::Keys(names) if expressible(names) => {
                        let ours = match d.keys(&path_of(names)) {
                            Ok(k) => Outcome::Keys(k),
                            Err(DbError::NotFound { .. }) => Outcome::NotFound,
                            Err(DbError::WrongKind { .. }) => Outcome::WrongKind,
                            Err(e) => panic!("{e}"),
                        };
                        (ours, model::keys(&model, names))
                    }
                    Op::Patch(names, value) if expressible(names) => {
                        let ours = match d.patch(&path_of(names), &value.to_string()) {
                            Ok(()) => Outcome::Done,
                            Err(DbError::WrongKind { .. }) => Outcome::WrongKind,
                            Err(e) => panic!("{e}"),
                        };
                        (ours, model::patch(&mut model, names, value))
                    }
                    _ => continue,
                };
                prop_assert_eq!(ours, theirs, "{:?}", op);
            }
            // And the whole document reads back the same.
            let whole = d.snapshot();
            for key in model.as_object().unwrap().keys() {
                if key.is_empty() { continue; }
                let text = whole.get(&join_path(&[key])).unwrap();
                prop_assert_eq!(String::from_utf8(text.to_vec()).unwrap(), model[key].to_string());
            }
        }

        /// The hand-written scanner against serde_json on any layout of the same document: compact,
        /// and pretty with an indent of random whitespace (so members sit after spaces, tabs, CRs and
        /// newlines). Every member two levels down reads as the value serde_json reads there. The
        /// coverage-guided version, on arbitrary bytes, is `tests/fuzz` `db_scan`.
        #[test]
        fn scanning_agrees_with_serde_json_on_any_layout(
            doc in document(),
            indent in prop::collection::vec(prop::sample::select(vec![b' ', b'\t', b'\n', b'\r']), 0..4),
        ) {
            use serde::Serialize as _;
            let mut pretty = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(&indent);
            doc.serialize(&mut serde_json::Serializer::with_formatter(&mut pretty, formatter)).unwrap();
            for text in [doc.to_string().into_bytes(), pretty] {
                let d = Db::from_text(text).unwrap();
                for (name, member) in doc.as_object().unwrap() {
                    if name.is_empty() { continue; }
                    let read: Value = serde_json::from_slice(&d.get(&join_path(&[name])).unwrap()).unwrap();
                    prop_assert_eq!(&read, member);
                    for (inner, value) in member.as_object().into_iter().flatten() {
                        let at = join_path(&[name, inner]);
                        let read: Value = serde_json::from_slice(&d.get(&at).unwrap()).unwrap();
                        prop_assert_eq!(&read, value, "at {}", at);
                    }
                }
            }
        }
    }
}

/// Readers racing writers: stable values always read exactly; a patched value reads wholly old or
/// wholly new; a value that exists never reads as missing. 8 readers, 2 writers, bounded in time.
#[test]
fn readers_never_see_half_a_patch() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let stable = json!({"x": [1, 2, 3], "y": "text"});
    let d = Arc::new(db(json!({"stable": stable, "w": {"v": {"n": 0, "copy": 0}, "other": true}})));
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_millis(1500);

    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (d, stop) = (d.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = w * 1_000_000;
                while !stop.load(Ordering::Relaxed) && i < w * 1_000_000 + 200_000 {
                    i += 1;
                    d.patch("w.v", &format!(r#"{{"n":{i},"copy":{i}}}"#)).unwrap();
                    d.patch(&format!("w.extra{}", i % 7), &i.to_string()).unwrap();
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let (d, stop, stable) = (d.clone(), stop.clone(), stable.to_string());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) && reads < 5_000_000 {
                    reads += 1;
                    assert_eq!(&d.get("stable").unwrap()[..], stable.as_bytes());
                    let v: Value = serde_json::from_slice(&d.get("w.v").unwrap()).unwrap();
                    assert_eq!(v["n"], v["copy"], "half a patch: {v}");
                    let whole: Value = serde_json::from_slice(&d.get("w").unwrap()).unwrap();
                    assert_eq!(whole["v"]["n"], whole["v"]["copy"]);
                    assert_eq!(whole["other"], true);
                }
                reads
            })
        })
        .collect();
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(reads > 0);
}

#[test]
fn warm_indexes_the_large_objects_and_changes_no_answer() {
    let long = "x".repeat(200);
    let v = json!({"big": {"a": long, "b": {"c": 1}, "inner": {"x": long}}, "small": {"d": 2}});
    let d = db(v.clone());
    // The root, `big` and `big.inner`: `big.a` is large but a string, `big.b` and `small` are small.
    assert_eq!(d.warm(150), 3);
    assert_eq!(serde_json::from_slice::<Value>(&d.get("big").unwrap()).unwrap(), v["big"]);
    assert_eq!(get(&d, "big.b.c"), "1");
    // After a patch the root is an object a patch built: warming visits its members.
    d.patch("small", r#"{"e": 3}"#).unwrap();
    let fresh = db(v);
    fresh.patch("small", r#"{"e": 3}"#).unwrap();
    assert_eq!(fresh.warm(150), 2, "big and big.inner, below the patched root");
    assert_eq!(d.warm(1 << 20), 0, "nothing is that large");
}

/// `db.json` nested `levels` deep: `{"a":{"a":…{"a":1}…}}`, every level over `WARM` bytes.
fn nested(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

#[test]
fn a_db_nested_far_deeper_than_any_path_warms_and_drops_without_overflowing_the_stack() {
    // 100 000 levels: recursion over them took the 2 MiB of a thread's stack and aborted the process
    // (a reload warms the db it loaded; the generation it replaces is dropped after).
    let text = nested(100_000);
    let d = Db::from_text(text.clone()).unwrap();
    let indexed = d.warm(16);
    assert_eq!(indexed, MAX_DEPTH + 1, "indexed down to the depth a path can reach, no further");
    let path = vec!["a"; MAX_DEPTH].join(".");
    assert!(get(&d, &path).starts_with("{\"a\":{\"a\":"));
    drop(d);
    // A patch still works on such a document, and the path limit still holds.
    let d = Db::from_text(text).unwrap();
    d.patch(&vec!["a"; 100].join("."), r#"{"b": 2}"#).unwrap();
    assert_eq!(get(&d, &format!("{}.b", vec!["a"; 100].join("."))), "2");
    assert!(matches!(d.patch(&vec!["a"; MAX_DEPTH + 1].join("."), "{}"), Err(DbError::BadPath { .. })));
}

#[test]
fn a_patch_into_nothing_is_kept_as_its_text_not_rebuilt_object_by_object() {
    let d = db(json!({"t": {}}));
    // No null member: the patch, as it is written, is the new value (its spacing shows it was not
    // rebuilt into maps and serialized again).
    let patch = r#"{ "x" : { "y" : [1, 2] , "z" : "s" } }"#;
    d.patch("t.new", patch).unwrap();
    assert_eq!(get(&d, "t.new"), patch);
    assert_eq!(get(&d, "t.new.x.z"), r#""s""#);
    // With a null member the merge must drop it, so it is built.
    d.patch("t.other", r#"{ "x" : { "gone" : null, "kept" : 1 } }"#).unwrap();
    assert_eq!(get(&d, "t.other"), r#"{"x":{"kept":1}}"#);
    // Into an existing object the merge is member by member, as before.
    d.patch("t.new", r#"{"x": {"z": null}}"#).unwrap();
    assert_eq!(get(&d, "t.new"), r#"{"x":{"y":[1, 2]}}"#);
}

#[test]
fn an_abandoned_patch_publishes_nothing() {
    let d = db(json!({"t": {"a": 1}}));
    let patch = Patch::parse("t", r#"{"a": 2}"#).unwrap();
    assert!(!d.apply(&patch, || false).unwrap());
    assert_eq!(get(&d, "t.a"), "1");
    assert!(d.apply(&patch, || true).unwrap());
    assert_eq!(get(&d, "t.a"), "2");
}
