//! The compressed-body cache as it was before issue 17 (commit c282bb1), verbatim but for its tests, an
//! unused constant and these lines: `cache-bench`'s baseline. Do not fix it; it is what the current cache is measured against.
//!
//! The compressed-body cache: zlib bodies of answers of 8 KiB and more, kept so that the next identical
//! answer is a clone of a shared buffer (no compression, no copy, no compare of the body).
//!
//! Key types: [`Part`] (one piece of an answer), [`BodyCache`].
//!
//! Why a stale hit is impossible by construction: an answer is a list of parts, and the key names each
//! part by what cannot change under it. A literal part is named by the SHA-256 of its bytes. A db-reference
//! part is named by the identity of the immutable db node it read: the key holds that node (`Arc`), so
//! the pointer cannot be reused while the entry lives, and a patch never changes a node but makes new
//! ones, so a patched table has a new key. Nothing has to be invalidated.
//!
//! Bounded in bytes, evicting the least recently used entry. Compression happens outside the lock (on
//! the blocking pool, for large bodies), so first requests for different tables compress in parallel.

#![expect(dead_code, unreachable_pub, reason = "kept verbatim: only what the benchmark calls is used")]
use bytes::Bytes;
use modhost_db::Node;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

/// One piece of an answer.
#[derive(Clone, Debug)]
pub enum Part {
    /// Bytes as they are.
    Literal(Bytes),
    /// The JSON text of an immutable db node.
    Node(Arc<Node>),
}

impl Part {
    /// The part's bytes (a shared slice: no copy).
    pub fn bytes(&self) -> Bytes {
        match self {
            Part::Literal(b) => b.clone(),
            Part::Node(n) => n.text(),
        }
    }
}

/// A part of a key: the digest of a literal, or a node compared by identity.
#[derive(Clone, Debug)]
enum KeyPart {
    Digest([u8; 32]),
    Node(Arc<Node>),
}

impl PartialEq for KeyPart {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (KeyPart::Digest(a), KeyPart::Digest(b)) => a == b,
            (KeyPart::Node(a), KeyPart::Node(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for KeyPart {}

impl Hash for KeyPart {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            KeyPart::Digest(d) => d.hash(state),
            KeyPart::Node(n) => (Arc::as_ptr(n) as usize).hash(state),
        }
    }
}

/// The key of one answer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key(Vec<KeyPart>);

impl Key {
    /// The key of these parts.
    pub fn of(parts: &[Part]) -> Key {
        Key(parts
            .iter()
            .map(|p| match p {
                Part::Literal(b) => KeyPart::Digest(Sha256::digest(b).into()),
                Part::Node(n) => KeyPart::Node(n.clone()),
            })
            .collect())
    }
}

struct Entry {
    zlib: Bytes,
    last_used: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, Entry>,
    bytes: usize,
    clock: u64,
    hits: u64,
    misses: u64,
}

/// The cache.
pub struct BodyCache {
    budget: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for BodyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.lock();
        f.debug_struct("BodyCache")
            .field("budget", &self.budget)
            .field("bytes", &inner.bytes)
            .field("entries", &inner.entries.len())
            .finish()
    }
}

impl BodyCache {
    /// A cache holding at most `budget` bytes of compressed bodies.
    pub fn new(budget: usize) -> BodyCache {
        BodyCache { budget, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The compressed body for `key`, if cached.
    pub fn get(&self, key: &Key) -> Option<Bytes> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        match inner.entries.get_mut(key) {
            Some(entry) => {
                entry.last_used = now;
                let zlib = entry.zlib.clone();
                inner.hits += 1;
                Some(zlib)
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    /// Keeps `zlib` for `key`, evicting the least recently used entries past the budget.
    pub fn insert(&self, key: Key, zlib: Bytes) {
        if zlib.len() > self.budget {
            return;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let entry = Entry { zlib, last_used: inner.clock };
        inner.bytes += entry.zlib.len();
        if let Some(old) = inner.entries.insert(key, entry) {
            inner.bytes -= old.zlib.len();
        }
        while inner.bytes > self.budget {
            let Some(oldest) = inner.entries.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some(gone) = inner.entries.remove(&oldest) {
                inner.bytes -= gone.zlib.len();
            }
        }
    }

    /// (hits, misses, entries, bytes): for tests and status.
    pub fn stats(&self) -> (u64, u64, usize, usize) {
        let inner = self.lock();
        (inner.hits, inner.misses, inner.entries.len(), inner.bytes)
    }
}
