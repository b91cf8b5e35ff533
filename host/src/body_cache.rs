//! The compressed-body cache: zlib bodies of answers of 8 KiB and more, kept so that the next identical
//! answer is a clone of a shared buffer (no compression, no copy, no compare of the body).
//!
//! Key types: [`Part`] (one piece of an answer), [`Key`], [`BodyCache`].
//!
//! Why a stale hit is impossible by construction: an answer is a list of parts, and the key names each
//! part by what cannot change under it. A literal part is named by the SHA-256 of its bytes. A db-reference
//! part is named by the identity of the immutable db node it read: the key holds that node (`Arc`), so
//! the pointer cannot be reused while the entry lives, and a patch never changes a node but makes new
//! ones, so a patched table has a new key. Nothing has to be invalidated.
//!
//! What it holds, and what bounds it (what a reader must not break):
//! - **Charged as held**: a body is shrunk to its length before it is kept (a compressor's buffer is
//!   sized for the worst case, a quarter of the input and more, and a repetitive 8 KiB answer compresses
//!   to a few dozen bytes), and each entry is charged a fixed overhead besides; entries are also capped
//!   in number, so millions of tiny bodies cannot grow the map's own memory.
//! - **Least recently used first**, in O(1): a linked hash map (`hashlink`), moved on each hit.
//! - **Nothing dead kept**: an entry whose db node nothing else holds can never be hit again (a request
//!   can only name a node it reached from a live db), and it would keep that node's whole `db.json`
//!   text alive after a reload or a patch. Such entries are swept every quarter of the map's size in
//!   inserts, and at each reload.
//! - **One compression per key at a time** (single flight): concurrent misses of one key wait for the
//!   first one's compression instead of each compressing a 20 MB table again. A waiter whose leader
//!   gave up (its client left) takes over. Compression happens outside the lock.

use bytes::Bytes;
use hashlink::LinkedHashMap;
use modhost_db::Node;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OnceCell;

/// Answers smaller than this are compressed every time: cheaper than hashing and bookkeeping.
pub(crate) const MIN_CACHED_BYTES: usize = 8 * 1024;
/// What an entry costs beside its body: the map's slot and links, the body's handle, the key's vector,
/// the allocator's rounding (`cache-bench`: about 480 bytes an entry of one part, all counted).
const ENTRY_BYTES: usize = 448;
/// And per part of its key (a digest or a node handle).
const KEY_PART_BYTES: usize = 40;
/// The most entries kept, whatever their size.
const MAX_ENTRIES: usize = 65_536;

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

impl Key {
    /// Whether some request could still name this key: every db node in it is held by something besides
    /// this key (a live db tree, or a request in flight). One that is not can never be hit again.
    fn reachable(&self) -> bool {
        self.0.iter().all(|part| match part {
            KeyPart::Digest(_) => true,
            KeyPart::Node(node) => Arc::strong_count(node) > 1,
        })
    }
}

/// A kept body and what it is charged.
struct Entry {
    zlib: Bytes,
    cost: usize,
}

/// The compression in progress for one key, which concurrent misses wait for.
type Flight = Arc<OnceCell<Bytes>>;

#[derive(Default)]
struct Inner {
    entries: LinkedHashMap<Key, Entry>,
    /// Compressions in progress, with how many requests wait for each.
    flights: HashMap<Key, (Flight, usize)>,
    bytes: usize,
    inserts_since_sweep: usize,
    hits: u64,
    misses: u64,
}

/// The cache.
pub struct BodyCache {
    budget: usize,
    max_entries: usize,
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

/// Leaves a flight when its waiter is done or gives up (its future dropped): the last one out, or the
/// first after it landed, removes it from the map.
struct Leave<'a> {
    cache: &'a BodyCache,
    key: &'a Key,
    flight: Flight,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let mut inner = self.cache.lock();
        if let Some((flight, waiters)) = inner.flights.get_mut(self.key)
            && Arc::ptr_eq(flight, &self.flight)
        {
            *waiters -= 1;
            if *waiters == 0 || flight.initialized() {
                inner.flights.remove(self.key);
            }
        }
    }
}

impl BodyCache {
    /// A cache holding at most `budget` bytes of compressed bodies, overheads included.
    pub fn new(budget: usize) -> BodyCache {
        BodyCache::with_max_entries(budget, MAX_ENTRIES)
    }

    fn with_max_entries(budget: usize, max_entries: usize) -> BodyCache {
        BodyCache { budget, max_entries, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The compressed body for `key`, if cached.
    #[cfg(test)]
    fn get(&self, key: &Key) -> Option<Bytes> {
        let mut inner = self.lock();
        match inner.entries.to_back(key) {
            Some(entry) => {
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

    /// The compressed body for `key`: the cached one, or the one a concurrent miss of the same key is
    /// computing, or `compress()`'s, which is then kept.
    pub async fn get_or_compress<E, F, Fut>(&self, key: Key, compress: F) -> Result<Bytes, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<u8>, E>>,
    {
        let flight = {
            let mut inner = self.lock();
            if let Some(entry) = inner.entries.to_back(&key) {
                let zlib = entry.zlib.clone();
                inner.hits += 1;
                return Ok(zlib);
            }
            inner.misses += 1;
            let (flight, waiters) = inner.flights.entry(key.clone()).or_default();
            *waiters += 1;
            flight.clone()
        };
        let leave = Leave { cache: self, key: &key, flight };
        let compressed = leave.flight.get_or_try_init(|| async {
            let zlib = compress().await?;
            Ok(self.insert(key.clone(), zlib))
        });
        let zlib = compressed.await?.clone();
        drop(leave);
        Ok(zlib)
    }

    /// Keeps `zlib` for `key` (shrunk to its length), evicting the least recently used entries past the
    /// budget or the entry cap; answers it as shared bytes.
    pub fn insert(&self, key: Key, mut zlib: Vec<u8>) -> Bytes {
        zlib.shrink_to_fit();
        let zlib = Bytes::from(zlib);
        let cost = zlib.len() + ENTRY_BYTES + key.0.len() * KEY_PART_BYTES;
        if cost > self.budget {
            return zlib;
        }
        let mut inner = self.lock();
        inner.bytes += cost;
        if let Some(old) = inner.entries.insert(key, Entry { zlib: zlib.clone(), cost }) {
            inner.bytes -= old.cost;
        }
        inner.inserts_since_sweep += 1;
        if inner.inserts_since_sweep >= inner.entries.len() / 4 {
            sweep(&mut inner);
        }
        while inner.bytes > self.budget || inner.entries.len() > self.max_entries {
            let Some((_, gone)) = inner.entries.pop_front() else { break };
            inner.bytes -= gone.cost;
        }
        zlib
    }

    /// Drops every entry no request can hit again (its db node is held by nothing else): what a
    /// reload or a patch left behind.
    pub fn sweep(&self) {
        sweep(&mut self.lock());
    }

    /// (hits, misses, entries, bytes): for tests and status.
    pub fn stats(&self) -> (u64, u64, usize, usize) {
        let inner = self.lock();
        (inner.hits, inner.misses, inner.entries.len(), inner.bytes)
    }
}

fn sweep(inner: &mut Inner) {
    let mut freed = 0;
    inner.entries.retain(|key, entry| {
        let keep = key.reachable();
        if !keep {
            freed += entry.cost;
        }
        keep
    });
    inner.bytes -= freed;
    inner.inserts_since_sweep = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Part {
        Part::Literal(Bytes::copy_from_slice(s.as_bytes()))
    }

    /// The node of `text` in a db of its own (a db is an object: `{"x": text}`).
    fn node_of(text: &str) -> Arc<Node> {
        modhost_db::Db::from_text(format!("{{\"x\":{text}}}")).unwrap().snapshot().node("x").unwrap()
    }

    #[test]
    fn keys_are_content_for_literals_and_identity_for_nodes() {
        let node = node_of("[1,2,3]");
        let same_text_other_node = node_of("[1,2,3]");
        let a = Key::of(&[lit("{\"data\":"), Part::Node(node.clone()), lit("}")]);
        assert_eq!(a, Key::of(&[lit("{\"data\":"), Part::Node(node.clone()), lit("}")]));
        assert_ne!(a, Key::of(&[lit("{\"data\":"), Part::Node(same_text_other_node), lit("}")]));
        assert_ne!(a, Key::of(&[lit("{\"data\": "), Part::Node(node), lit("}")]));
    }

    /// A body as a compressor hands it over: a buffer sized for the worst case.
    fn compressed(len: usize) -> Vec<u8> {
        let mut v = Vec::with_capacity(64 << 10);
        v.resize(len, 7);
        v
    }

    fn cost(len: usize) -> usize {
        len + ENTRY_BYTES + KEY_PART_BYTES
    }

    #[test]
    fn lru_bounded_in_bytes_overheads_included() {
        let cache = BodyCache::new(3 * cost(40) - 1);
        let key = |s: &str| Key::of(&[lit(s)]);
        cache.insert(key("a"), compressed(40));
        cache.insert(key("b"), compressed(40));
        assert!(cache.get(&key("a")).is_some()); // a is now the most recent
        cache.insert(key("c"), compressed(40));
        assert!(cache.get(&key("b")).is_none(), "the least recently used went first");
        assert!(cache.get(&key("a")).is_some() && cache.get(&key("c")).is_some());
        assert_eq!(cache.stats().3, 2 * cost(40), "each entry is charged its overhead");
        cache.insert(key("huge"), compressed(5000));
        assert!(cache.get(&key("huge")).is_none());
        assert!(cache.stats().3 < 3 * cost(40));
    }

    #[test]
    fn a_body_is_kept_at_its_length_not_its_buffers_capacity() {
        let cache = BodyCache::new(1 << 20);
        let kept = cache.insert(Key::of(&[lit("x")]), compressed(60));
        // Bytes made from a Vec whose length is its capacity take its allocation as it is: unique and
        // exactly as long, so converting back needs no copy and shows the capacity.
        drop(cache);
        let vec = Vec::from(kept);
        assert_eq!((vec.len(), vec.capacity()), (60, 60));
    }

    #[test]
    fn entries_are_capped_in_number_whatever_their_size() {
        let cache = BodyCache::with_max_entries(1 << 30, 100);
        for i in 0..1000 {
            cache.insert(Key::of(&[lit(&i.to_string())]), compressed(1));
        }
        assert_eq!(cache.stats().2, 100);
        assert!(cache.get(&Key::of(&[lit("999")])).is_some() && cache.get(&Key::of(&[lit("0")])).is_none());
    }

    #[test]
    fn entries_of_a_db_nothing_holds_any_more_are_swept() {
        let cache = BodyCache::new(1 << 20);
        let db = modhost_db::Db::from_text(r#"{"t":[1,2,3],"u":[4]}"#).unwrap();
        let table = db.snapshot().node("t").unwrap();
        cache.insert(Key::of(&[lit("{"), Part::Node(table.clone())]), compressed(10));
        cache.insert(Key::of(&[lit("other")]), compressed(10));
        cache.sweep();
        assert_eq!(cache.stats().2, 2, "the db is alive: its table can be asked for again");
        // A reload replaced the db and the last request on it is done.
        drop((db, table));
        cache.sweep();
        assert_eq!(cache.stats().2, 1);
        assert_eq!(cache.stats().3, cost(10));
        // Inserts sweep too, without being asked.
        let db = modhost_db::Db::from_text(r#"{"t":[1]}"#).unwrap();
        cache.insert(Key::of(&[Part::Node(db.snapshot().node("t").unwrap())]), compressed(10));
        drop(db);
        for i in 0..4 {
            cache.insert(Key::of(&[lit(&format!("n{i}"))]), compressed(10));
        }
        assert_eq!(cache.stats().2, 5, "the dead entry went at an insert");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_misses_of_one_key_compress_once() {
        let cache = Arc::new(BodyCache::new(1 << 20));
        let compressions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (release, wait) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (cache, compressions, mut wait) = (cache.clone(), compressions.clone(), wait.clone());
            tasks.push(tokio::spawn(async move {
                let key = Key::of(&[lit("table")]);
                cache
                    .get_or_compress(key, || async move {
                        compressions.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let _ = wait.wait_for(|go| *go).await;
                        Ok::<_, ()>(compressed(100))
                    })
                    .await
            }));
        }
        // Every task has joined the flight (or is about to find the entry) before the leader finishes.
        for _ in 0..200 {
            if cache.lock().flights.values().any(|(_, waiters)| *waiters == 8) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        release.send_replace(true);
        let mut bodies = Vec::new();
        for task in tasks {
            bodies.push(task.await.unwrap().unwrap());
        }
        assert_eq!(compressions.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(bodies.iter().all(|b| b.as_ptr() == bodies[0].as_ptr()), "one shared buffer");
        assert!(cache.lock().flights.is_empty(), "the flight is gone once it landed");
    }

    #[tokio::test]
    async fn a_waiter_takes_over_when_the_leader_gives_up() {
        let cache = BodyCache::new(1 << 20);
        let key = || Key::of(&[lit("table")]);
        let leader = cache.get_or_compress(key(), std::future::pending::<Result<Vec<u8>, ()>>);
        // The leader is polled once (it starts compressing) and then dropped: its client left.
        assert!(tokio::time::timeout(std::time::Duration::from_millis(10), leader).await.is_err());
        assert!(cache.lock().flights.is_empty(), "a flight nobody waits for is removed");
        let body = cache.get_or_compress(key(), || async { Ok::<_, ()>(compressed(5)) }).await.unwrap();
        assert_eq!(body.len(), 5);
    }

    #[test]
    fn a_hit_is_the_same_buffer() {
        let cache = BodyCache::new(1 << 20);
        let zlib = cache.insert(Key::of(&[lit("x")]), vec![7u8; 10_000]);
        assert_eq!(cache.get(&Key::of(&[lit("x")])).unwrap().as_ptr(), zlib.as_ptr());
    }
}
