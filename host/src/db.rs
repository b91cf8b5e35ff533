//! The game database: one JSON document in memory, read by dotted path, changed by RFC 7396 merge patches.
//!
//! Key types: [`Db`] (the shared handle), [`Snapshot`] (one immutable version of the document) and
//! [`DbError`]. This module knows nothing of wasmtime or hyper.
//!
//! Concurrency: the current document is an `Arc<Value>` behind a `RwLock` that is held only long enough
//! to clone or swap the `Arc`, so a reader never waits on a patch being computed and never sees half of
//! one: it reads the snapshot it took. Patches are serialized by `writer`; each builds the next document
//! and publishes it with one swap. When no reader holds a snapshot (the usual case while mods `init`),
//! the patch is applied in place instead of copying the document.
//!
//! What a reader must not break: every check that can refuse a patch runs before the document is
//! touched, so a refused patch changes nothing.
//!
//! This is the simple engine the foundation needs; the indexed, copy-on-write tree with cached text is
//! the next step (see `docs/architecture.md`).

use serde_json::{Map, Value};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// One immutable version of the document.
pub type Snapshot = Arc<Value>;

/// How deep the document may nest, counting a patch's path and its value together. Serializing,
/// cloning and dropping a `Value` recurse, so a mod that could nest deeper could overflow the host's
/// stack, which aborts the whole process. (The JSON parser's own limit is 128 levels of the text alone.)
pub const MAX_DEPTH: usize = 128;

/// Why a db call failed. Each message names the path and says why.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DbError {
    /// Nothing at this path.
    #[error("no value at `{path}`{detail}")]
    NotFound { path: String, detail: String },
    /// The path itself is malformed.
    #[error("bad path `{path}`: {reason}")]
    BadPath { path: String, reason: String },
    /// The value exists but is the wrong kind for this call.
    #[error("`{path}` {reason}")]
    WrongKind { path: String, reason: String },
    /// The patch text is not JSON (or nests deeper than serde_json's limit of 128).
    #[error("the patch for `{path}` is not valid JSON: {reason}")]
    BadJson { path: String, reason: String },
}

/// Why `db.json` could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    /// The file is not a JSON document (the message has line and column).
    #[error("{path} is not valid JSON: {source}")]
    Parse { path: String, source: serde_json::Error },
    /// The document is valid JSON but not an object.
    #[error("{path} must hold a JSON object at the top level")]
    NotAnObject { path: String },
}

/// The shared database handle.
#[derive(Debug)]
pub struct Db {
    current: RwLock<Snapshot>,
    /// Serializes patches so two concurrent patches cannot lose one another.
    writer: Mutex<()>,
}

impl Db {
    /// A db holding this document (which must be an object).
    pub fn new(document: Map<String, Value>) -> Db {
        Db { current: RwLock::new(Arc::new(Value::Object(document))), writer: Mutex::new(()) }
    }

    /// Loads `db.json`. A document that does not parse is an error giving line and column.
    pub fn load(path: &Path) -> Result<Db, LoadError> {
        let shown = path.display().to_string();
        let text = std::fs::read(path).map_err(|source| LoadError::Read { path: shown.clone(), source })?;
        match serde_json::from_slice(&text) {
            Ok(Value::Object(map)) => Ok(Db::new(map)),
            Ok(_) => Err(LoadError::NotAnObject { path: shown }),
            Err(source) => Err(LoadError::Parse { path: shown, source }),
        }
    }

    /// The current version of the document. Cheap: one `Arc` clone.
    pub fn snapshot(&self) -> Snapshot {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Makes `snapshot` the current version again: for undoing the patches of a mod whose `init`
    /// failed, at boot, when nothing else writes.
    pub fn restore(&self, snapshot: Snapshot) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = snapshot;
    }

    /// The JSON text of the value at `path`.
    pub fn get(&self, path: &str) -> Result<String, DbError> {
        let snapshot = self.snapshot();
        let value = lookup(&snapshot, path)?;
        Ok(value.to_string())
    }

    /// The member names of the object at `path`, in document order.
    pub fn keys(&self, path: &str) -> Result<Vec<String>, DbError> {
        let snapshot = self.snapshot();
        match lookup(&snapshot, path)? {
            Value::Object(map) => Ok(map.keys().cloned().collect()),
            other => Err(DbError::WrongKind {
                path: path.to_owned(),
                reason: format!("is {}, not an object, so it has no keys", kind_of(other)),
            }),
        }
    }

    /// Applies `json` as an RFC 7396 merge patch at `path`, creating missing parents. The empty path is
    /// the root. Invalid JSON, a bad path, or a parent that is not an object changes nothing.
    pub fn patch(&self, path: &str, json: &str) -> Result<(), DbError> {
        let segments = parse_path(path)?;
        let patch: Value = serde_json::from_str(json)
            .map_err(|e| DbError::BadJson { path: path.to_owned(), reason: e.to_string() })?;
        let depth = segments.len() + json_depth(&patch);
        if depth > MAX_DEPTH {
            return Err(DbError::BadPath {
                path: path.to_owned(),
                reason: format!("the path and the patch nest {depth} levels deep; the limit is {MAX_DEPTH}"),
            });
        }
        if segments.is_empty() && !patch.is_object() {
            return Err(DbError::WrongKind {
                path: path.to_owned(),
                reason: "(the root) must stay an object: patch it with an object".to_owned(),
            });
        }

        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        {
            // Fast path: nobody else holds this version, so change it in place. `get_mut` succeeds
            // only when ours is the sole reference, and the write lock keeps new readers out meanwhile.
            let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
            if let Some(doc) = Arc::get_mut(&mut current) {
                check_parents(doc, &segments, path)?;
                apply(doc, &segments, patch);
                return Ok(());
            }
        }
        // Readers hold the current version: build the next one beside it, then publish it.
        let mut next = (*self.snapshot()).clone();
        check_parents(&next, &segments, path)?;
        apply(&mut next, &segments, patch);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(next);
        Ok(())
    }
}

/// The value at `path` in `root`. The empty path is not found (the root is not a value a mod reads).
pub fn lookup<'a>(root: &'a Value, path: &str) -> Result<&'a Value, DbError> {
    let segments = parse_path(path)?;
    if segments.is_empty() {
        return Err(DbError::NotFound { path: String::new(), detail: ": the empty path names no value".into() });
    }
    let mut node = root;
    for (i, name) in segments.iter().enumerate() {
        node = match node {
            Value::Object(map) => map.get(name.as_str()).ok_or_else(|| DbError::NotFound {
                path: path.to_owned(),
                detail: if i == 0 {
                    String::new()
                } else {
                    format!(": `{}` has no member `{name}`", segments[..i].join("."))
                },
            })?,
            other => {
                return Err(DbError::NotFound {
                    path: path.to_owned(),
                    detail: format!(
                        ": `{}` is {}; paths only go through objects",
                        segments[..i].join("."),
                        kind_of(other)
                    ),
                });
            }
        };
    }
    Ok(node)
}

/// Splits a dotted path into member names: `.` separates, `\.` and `\\` are a literal dot and backslash.
/// Empty names (`a..b`, a leading or trailing dot) are refused rather than guessed at.
pub fn parse_path(path: &str) -> Result<Vec<String>, DbError> {
    let bad = |reason: &str| DbError::BadPath { path: path.to_owned(), reason: reason.to_owned() };
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e @ ('.' | '\\')) => current.push(e),
                Some(other) => {
                    return Err(bad(&format!("`\\{other}` is not an escape (only `\\.` and `\\\\` are)")));
                }
                None => return Err(bad("it ends with a lone `\\`")),
            },
            '.' => {
                if current.is_empty() {
                    return Err(bad("it has an empty member name (a leading, trailing or doubled `.`)"));
                }
                segments.push(std::mem::take(&mut current));
            }
            c => current.push(c),
        }
    }
    if current.is_empty() {
        return Err(bad("it has an empty member name (a leading, trailing or doubled `.`)"));
    }
    segments.push(current);
    Ok(segments)
}

/// Refuses a patch whose path goes through something that is not an object. Runs before any change.
fn check_parents(root: &Value, segments: &[String], path: &str) -> Result<(), DbError> {
    let mut node = root;
    for (i, name) in segments.iter().enumerate().take(segments.len().saturating_sub(1)) {
        match node.get(name.as_str()) {
            None => return Ok(()), // the rest is created
            Some(child @ Value::Object(_)) => node = child,
            Some(other) => {
                return Err(DbError::WrongKind {
                    path: path.to_owned(),
                    reason: format!(
                        "cannot be created: `{}` is {}, not an object",
                        segments[..=i].join("."),
                        kind_of(other)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Applies a checked patch (see [`check_parents`]).
fn apply(root: &mut Value, segments: &[String], patch: Value) {
    let Some((last, parents)) = segments.split_last() else {
        merge(root, patch);
        return;
    };
    let mut node = root;
    for name in parents {
        let Value::Object(map) = node else { return };
        node = map.entry(name.clone()).or_insert_with(|| Value::Object(Map::new()));
    }
    let Value::Object(map) = node else { return };
    if patch.is_null() {
        map.shift_remove(last.as_str());
    } else {
        merge(map.entry(last.clone()).or_insert(Value::Null), patch);
    }
}

/// RFC 7396 MergePatch(target, patch). Recursion depth is bounded by the patch's depth, which the JSON
/// parser caps at 128.
fn merge(target: &mut Value, patch: Value) {
    let Value::Object(members) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else { return };
    for (name, value) in members {
        if value.is_null() {
            map.shift_remove(&name);
        } else {
            merge(map.entry(name).or_insert(Value::Null), value);
        }
    }
}

/// How many levels `value` nests (a scalar is 0). Bounded by the parser's limit, so the recursion is too.
fn json_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(json_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(json_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn db(v: Value) -> Db {
        let Value::Object(map) = v else { panic!("test document must be an object") };
        Db::new(map)
    }

    #[test]
    fn get_returns_json_text_and_keys_keep_document_order() {
        let d = db(json!({"t": {"z": 1, "a": [1, 2], "m": "s"}}));
        assert_eq!(d.get("t.a").unwrap(), "[1,2]");
        assert_eq!(d.get("t.m").unwrap(), "\"s\"");
        assert_eq!(d.keys("t").unwrap(), vec!["z", "a", "m"]);
    }

    #[test]
    fn missing_empty_and_through_scalar_paths_are_not_found() {
        let d = db(json!({"a": {"b": 1}, "arr": [1]}));
        assert!(matches!(d.get("a.c"), Err(DbError::NotFound { .. })));
        assert!(matches!(d.get(""), Err(DbError::NotFound { .. })));
        assert!(matches!(d.get("a.b.c"), Err(DbError::NotFound { .. })));
        assert!(matches!(d.get("arr.0"), Err(DbError::NotFound { .. })));
        assert!(matches!(d.keys("arr"), Err(DbError::WrongKind { .. })));
        assert!(matches!(d.keys("nope"), Err(DbError::NotFound { .. })));
    }

    #[test]
    fn escapes_address_names_with_dots_and_backslashes() {
        assert_eq!(parse_path(r"a\.b.c\\d").unwrap(), vec!["a.b", r"c\d"]);
        assert!(matches!(parse_path("a..b"), Err(DbError::BadPath { .. })));
        assert!(matches!(parse_path("a."), Err(DbError::BadPath { .. })));
        assert!(matches!(parse_path(r"a\x"), Err(DbError::BadPath { .. })));
        assert!(matches!(parse_path("a\\"), Err(DbError::BadPath { .. })));
        let d = db(json!({"a.b": {"c\\d": 7}}));
        assert_eq!(d.get(r"a\.b.c\\d").unwrap(), "7");
    }

    #[test]
    fn patch_is_rfc7396() {
        let d = db(json!({"a": {"keep": 1, "drop": 2, "arr": [1, 2], "obj": {"x": 1}}}));
        d.patch("a", r#"{"drop": null, "arr": [3], "obj": {"y": 2}, "new": {"n": null, "m": 1}}"#).unwrap();
        assert_eq!(d.get("a").unwrap(), r#"{"keep":1,"arr":[3],"obj":{"x":1,"y":2},"new":{"m":1}}"#);
        d.patch("a.keep", "null").unwrap();
        assert!(matches!(d.get("a.keep"), Err(DbError::NotFound { .. })));
    }

    #[test]
    fn patch_creates_missing_parents_and_root_patch_merges() {
        let d = db(json!({}));
        d.patch("x.y.z", "5").unwrap();
        assert_eq!(d.get("x").unwrap(), r#"{"y":{"z":5}}"#);
        d.patch("", r#"{"top": true}"#).unwrap();
        assert_eq!(d.get("top").unwrap(), "true");
    }

    #[test]
    fn refused_patches_change_nothing() {
        let d = db(json!({"a": {"s": "str"}}));
        assert!(matches!(d.patch("a", "{not json"), Err(DbError::BadJson { .. })));
        assert!(matches!(d.patch("a.s.deeper", "1"), Err(DbError::WrongKind { .. })));
        assert!(matches!(d.patch("", "[1]"), Err(DbError::WrongKind { .. })));
        assert!(matches!(d.patch("a..b", "1"), Err(DbError::BadPath { .. })));
        // No reader held a snapshot, so these went down the in-place path: still nothing changed.
        assert_eq!(*d.snapshot(), json!({"a": {"s": "str"}}));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let d = db(json!({}));
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(d.patch("x", &deep), Err(DbError::BadJson { .. })));
    }

    #[test]
    fn a_long_path_cannot_nest_the_document_past_the_limit() {
        let d = db(json!({}));
        let long = vec!["a"; 200].join(".");
        assert!(matches!(d.patch(&long, "1"), Err(DbError::BadPath { .. })));
        let path = vec!["a"; 100].join(".");
        let value = "[".repeat(40) + &"]".repeat(40);
        assert!(matches!(d.patch(&path, &value), Err(DbError::BadPath { .. })));
        assert_eq!(*d.snapshot(), json!({}));
        d.patch(&vec!["a"; 100].join("."), "1").unwrap();
    }

    #[test]
    fn restore_undoes_later_patches() {
        let d = db(json!({"a": 1}));
        let before = d.snapshot();
        d.patch("b", "2").unwrap();
        d.restore(before);
        assert_eq!(*d.snapshot(), json!({"a": 1}));
    }

    #[test]
    fn a_snapshot_never_sees_a_later_patch() {
        let d = db(json!({"a": 1}));
        let before = d.snapshot();
        d.patch("a", "2").unwrap();
        assert_eq!(before["a"], 1);
        assert_eq!(d.get("a").unwrap(), "2");
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
    }
}
