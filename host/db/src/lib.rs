//! The game database: one JSON document in memory, read by dotted path, changed by RFC 7396 merge
//! patches. This crate knows nothing of wasmtime, hyper or tokio.
//!
//! Key types: [`Db`] (the shared handle), [`Snapshot`] (one immutable version), [`DbError`].
//!
//! How it is fast (see `node.rs`): the document is a tree of immutable [`Node`]s shared through `Arc`.
//! Loading validates the text once and keeps it; an object is indexed the first time a path goes through
//! it; a value that no patch touched answers `get` with a slice of the original text (no copy, no
//! serialization); a patch builds new nodes only along its path, with persistent maps for the members,
//! so it costs the patch and the path, not the document.
//!
//! Concurrency: the current root is an `Arc<Node>` behind a `RwLock` held only to clone or swap that
//! `Arc`. A reader takes a snapshot (one `Arc` clone) and reads it without locks: it never waits for a
//! patch being computed and never sees half of one. Patches are serialized by `writer`; each computes
//! the new root beside the old and publishes it with one swap.
//!
//! What a reader must not break: nodes never change after they are published (caches only fill in), and
//! every check that can refuse a patch runs before the new root is published, so a refused patch
//! changes nothing. Recursion over anything a mod sent is bounded by [`MAX_DEPTH`].

#![warn(missing_docs)]

mod check;
mod node;
mod patch;
mod scan;

pub use node::Node;

use bytes::Bytes;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// How deep the document may nest, counting a patch's path and its value together. Serializing a
/// built object recurses through its children, so a mod that could nest deeper could overflow the
/// host's stack, which aborts the whole process. (serde_json's parser also stops at 128 levels.)
pub const MAX_DEPTH: usize = 128;

/// Why a db call failed. Each message names the path and says why.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum DbError {
    /// Nothing at this path.
    #[error("no value at `{path}`{detail}")]
    NotFound {
        /// The path, as the call named it.
        path: String,
        /// What is there instead, when that helps.
        detail: String,
    },
    /// The path itself is malformed, or too deep.
    #[error("bad path `{path}`: {reason}")]
    BadPath {
        /// The path, as the call named it.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// The value exists but is the wrong kind for this call.
    #[error("`{path}` {reason}")]
    WrongKind {
        /// The path, as the call named it.
        path: String,
        /// Why, in words.
        reason: String,
    },
    /// The patch text is not JSON.
    #[error("the patch for `{path}` is not valid JSON: {reason}")]
    BadJson {
        /// The path, as the call named it.
        path: String,
        /// Why, in words.
        reason: String,
    },
}

/// Why `db.json` could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a JSON document (the message has line and column).
    #[error("{path} is not valid JSON: {source}")]
    Parse {
        /// The file.
        path: String,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// The document is valid JSON but not an object.
    #[error("{path} must hold a JSON object at the top level")]
    NotAnObject {
        /// The file.
        path: String,
    },
    /// The document holds bytes that are not UTF-8.
    #[error("{path} is not UTF-8 (at byte {offset})")]
    NotUtf8 {
        /// The file.
        path: String,
        /// The first byte that is not UTF-8.
        offset: usize,
    },
    /// Offsets inside the tree are 32-bit.
    #[error("{path} is {len} bytes; the limit is 4 GiB")]
    TooLarge {
        /// The file.
        path: String,
        /// The size, in bytes.
        len: usize,
    },
}

/// One immutable version of the document.
#[derive(Clone, Debug)]
pub struct Snapshot(Arc<Node>);

impl Snapshot {
    /// The JSON text of the value at `path`: a shared slice of the loaded text when no patch touched it.
    pub fn get(&self, path: &str) -> Result<Bytes, DbError> {
        Ok(self.node(path)?.text())
    }

    /// The member names of the object at `path`, in document order.
    pub fn keys(&self, path: &str) -> Result<Vec<String>, DbError> {
        let node = self.node(path)?;
        node.keys().ok_or_else(|| DbError::WrongKind {
            path: path.to_owned(),
            reason: format!("is {}, not an object, so it has no keys", node.kind()),
        })
    }

    /// The node at `path`. The empty path is not found: the root is not a value a mod reads.
    pub fn node(&self, path: &str) -> Result<Arc<Node>, DbError> {
        let segments = parse_path(path)?;
        if segments.is_empty() {
            return Err(DbError::NotFound { path: String::new(), detail: ": the empty path names no value".into() });
        }
        let mut node = self.0.clone();
        for (i, name) in segments.iter().enumerate() {
            node = match node.child(name) {
                Some(child) => child,
                None if node.is_object() => {
                    let detail = if i == 0 { String::new() } else { format!(": its parent has no member `{name}`") };
                    return Err(DbError::NotFound { path: path.to_owned(), detail });
                }
                None => {
                    let detail =
                        format!(": member `{name}` is asked of {}; paths only go through objects", node.kind());
                    return Err(DbError::NotFound { path: path.to_owned(), detail });
                }
            };
        }
        Ok(node)
    }

    /// Whether two snapshots are the same version.
    pub fn same_version(&self, other: &Snapshot) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The shared database handle.
#[derive(Debug)]
pub struct Db {
    current: RwLock<Snapshot>,
    /// Serializes patches so two concurrent patches cannot lose one another.
    writer: Mutex<()>,
}

impl Db {
    /// A db holding this document, which must be a JSON object.
    pub fn from_text(text: impl Into<Bytes>) -> Result<Db, LoadError> {
        Db::from_bytes(text.into(), "the document")
    }

    /// Loads `db.json`: validates it once (a bad document is an error giving line and column) and keeps
    /// its text; nothing is indexed until a path goes through it.
    pub fn load(path: &Path) -> Result<Db, LoadError> {
        let shown = path.display().to_string();
        let text = std::fs::read(path).map_err(|source| LoadError::Read { path: shown.clone(), source })?;
        Db::from_bytes(Bytes::from(text), &shown)
    }

    fn from_bytes(text: Bytes, shown: &str) -> Result<Db, LoadError> {
        if text.len() > u32::MAX as usize {
            return Err(LoadError::TooLarge { path: shown.to_owned(), len: text.len() });
        }
        validate(&text).map_err(|source| LoadError::Parse { path: shown.to_owned(), source })?;
        // Skipping values does not check the bytes inside strings; text answered to mods must be UTF-8.
        if let Err(e) = std::str::from_utf8(&text) {
            return Err(LoadError::NotUtf8 { path: shown.to_owned(), offset: e.valid_up_to() });
        }
        let range = scan::trim(&text);
        let text = text.slice(range);
        if text.first() != Some(&b'{') {
            return Err(LoadError::NotAnObject { path: shown.to_owned() });
        }
        Ok(Db { current: RwLock::new(Snapshot(Arc::new(Node::from_text(text)))), writer: Mutex::new(()) })
    }

    /// The current version of the document. Cheap: one `Arc` clone under a lock held for just that.
    pub fn snapshot(&self) -> Snapshot {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Indexes every object of at least `min_bytes` of text in the current version (see
    /// `Node::warm`); answers how many. A reload warms its new db before swapping it in.
    pub fn warm(&self, min_bytes: usize) -> usize {
        self.snapshot().0.warm(min_bytes, MAX_DEPTH)
    }

    /// Whether a patch is being computed now (a caller on an async worker would wait for it). A hint:
    /// a moment later it may be done.
    pub fn patching(&self) -> bool {
        matches!(self.writer.try_lock(), Err(std::sync::TryLockError::WouldBlock))
    }

    /// Makes `snapshot` the current version again: for undoing the patches of a mod whose `init` failed.
    pub fn restore(&self, snapshot: Snapshot) {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = snapshot;
    }

    /// The JSON text of the value at `path` in the current version.
    pub fn get(&self, path: &str) -> Result<Bytes, DbError> {
        self.snapshot().get(path)
    }

    /// Whether a value is at `path` in the current version (no copy). A bad path is an error; an absent
    /// member, a path through an array or a scalar, and the empty path are `false`.
    pub fn exists(&self, path: &str) -> Result<bool, DbError> {
        match self.snapshot().node(path) {
            Ok(_) => Ok(true),
            Err(DbError::NotFound { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The member names of the object at `path` in the current version.
    pub fn keys(&self, path: &str) -> Result<Vec<String>, DbError> {
        self.snapshot().keys(path)
    }

    /// Applies `json` as an RFC 7396 merge patch at `path`, creating missing parents. The empty path is
    /// the root (and then the patch must be an object). Invalid JSON, a bad or too deep path, or a parent
    /// that is not an object changes nothing.
    pub fn patch(&self, path: &str, json: &str) -> Result<(), DbError> {
        self.apply(&Patch::parse(path, json)?, || true).map(|_| ())
    }

    /// Applies a parsed patch, publishing it only if `still_wanted()` answers true once it is computed
    /// (checked under the writer lock, so [`Db::restore`] is ordered with it: a patch abandoned by a
    /// caller that gave up never lands after the caller moved on). Answers whether it was published.
    pub fn apply(&self, patch: &Patch, still_wanted: impl FnOnce() -> bool) -> Result<bool, DbError> {
        let _writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let next = self.snapshot().patched(patch)?;
        if !still_wanted() {
            return Ok(false);
        }
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = next;
        Ok(true)
    }
}

/// A merge patch checked and parsed once, ready to apply to any snapshot ([`Snapshot::patched`]).
#[derive(Clone, Debug)]
pub struct Patch {
    path: String,
    segments: Vec<String>,
    node: Arc<Node>,
    /// Whether some object member of the patch is `null`; without one, a merge where nothing is
    /// takes the patch's text as it is.
    null_member: bool,
}

impl Patch {
    /// Checks `json` as an RFC 7396 merge patch for `path`: the path parses, the text is JSON that
    /// decodes fully, path and patch together nest at most [`MAX_DEPTH`] levels, and a patch of the
    /// root is an object.
    pub fn parse(path: &str, json: &str) -> Result<Patch, DbError> {
        let segments = parse_path(path)?;
        if json.len() > u32::MAX as usize {
            return Err(DbError::BadJson { path: path.to_owned(), reason: "the patch is over 4 GiB".to_owned() });
        }
        // A patch comes from a mod: decode it fully (escapes, surrogates, serde_json's 128-level limit),
        // not just its structure, so every name that enters the tree decodes; without building it.
        let checked =
            check::check(json).map_err(|e| DbError::BadJson { path: path.to_owned(), reason: e.to_string() })?;
        let text = Bytes::copy_from_slice(json.as_bytes());
        let text = text.slice(scan::trim(&text));
        let depth = segments.len() + scan::nesting_depth(&text);
        if depth > MAX_DEPTH {
            return Err(DbError::BadPath {
                path: path.to_owned(),
                reason: format!("the path and the patch nest {depth} levels deep; the limit is {MAX_DEPTH}"),
            });
        }
        let node = Arc::new(Node::from_text(text));
        if segments.is_empty() && !node.is_object() {
            return Err(DbError::WrongKind {
                path: path.to_owned(),
                reason: "(the root) must stay an object: patch it with an object".to_owned(),
            });
        }
        Ok(Patch { path: path.to_owned(), segments, node, null_member: checked.null_member })
    }
}

impl Snapshot {
    /// A document of its own (not the game db): `text` must be one JSON object, checked as
    /// [`Db::load`] checks `db.json`; `shown` names it in errors.
    pub fn parse(text: Bytes, shown: &str) -> Result<Snapshot, LoadError> {
        Ok(Db::from_bytes(text, shown)?.snapshot())
    }

    /// This version with `patch` applied, sharing every untouched node; `self` is unchanged. A parent
    /// that is not an object is an error and builds nothing.
    pub fn patched(&self, patch: &Patch) -> Result<Snapshot, DbError> {
        let next =
            patch::patch_at(&self.0, &patch.segments, 0, &patch.node, patch.null_member).map_err(|e| match e {
                DbError::WrongKind { reason, .. } => DbError::WrongKind { path: patch.path.clone(), reason },
                other => other,
            })?;
        Ok(Snapshot(next))
    }

    /// The member names of the root object, in document order.
    pub fn root_keys(&self) -> Vec<String> {
        self.0.keys().unwrap_or_default()
    }

    /// The JSON text of the whole document: the loaded text while no patch touched it, else built.
    pub fn text(&self) -> Bytes {
        self.0.text()
    }
}

/// Checks that `text` is one JSON value. serde_json skips ignored values without recursing, so this
/// has no depth limit; depth is bounded where it matters (`MAX_DEPTH`, for patches).
fn validate(text: &[u8]) -> Result<(), serde_json::Error> {
    serde_json::from_slice::<serde::de::IgnoredAny>(text).map(|_| ())
}

/// Splits a dotted path into member names: `.` separates, `\.` and `\\` are a literal dot and
/// backslash. The empty path is the root (no names); otherwise every piece is a name, the empty name
/// included (`a..b` is `a`, ``, `b`).
pub fn parse_path(path: &str) -> Result<Vec<String>, DbError> {
    let bad = |reason: String| DbError::BadPath { path: path.to_owned(), reason };
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
                Some(other) => return Err(bad(format!("`\\{other}` is not an escape (only `\\.` and `\\\\` are)"))),
                None => return Err(bad("it ends with a lone `\\`".to_owned())),
            },
            '.' => segments.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    segments.push(current);
    if segments.len() > MAX_DEPTH {
        return Err(bad(format!("it has {} members; the limit is {MAX_DEPTH}", segments.len())));
    }
    Ok(segments)
}

/// Builds a path from member names, escaping `.` and `\` (the inverse of [`parse_path`]).
pub fn join_path(names: &[&str]) -> String {
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        for c in name.chars() {
            if c == '.' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests;
