//! Sessions: the id a client sends, and the per-session lock held around each handler call.
//!
//! Key types: [`SessionId`] (24 hex digits, normalised to lower case so `ABC…` and `abc…` are one
//! session) and [`SessionLocks`].
//!
//! Why an async mutex per session: a handler call does a read-modify-write of a profile across several
//! host calls and may yield to the runtime in between (epoch yields), so the lock must be held across
//! `.await` without pinning a thread: `tokio::sync::Mutex`, whose uncontended lock is an atomic op.
//! The map from id to mutex is a std `Mutex` held only to find or insert an entry, never across an
//! await. It holds `Weak` references, so a session nobody is using costs one dead entry, swept when the
//! map has doubled since the last sweep; different sessions never wait on each other.
//!
//! **Several hosts** sharing a PostgreSQL store ([`Cluster`]): the mutex orders a session's requests
//! on this host, and a lease in the store ([`modhost_store::Lease`]) orders them across hosts. It is
//! taken after the mutex (so one host asks once per request), for `ttl`, waited for like the mutex
//! while another host holds it, and given back when the guard drops. Every store write of a request
//! carries the lease ([`SessionLocks::lease_of`]), and the database refuses one whose lease is no
//! longer this host's: a host that stalls past its lease cannot commit after another took the session.

use modhost_store::{Lease, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};
use tokio::sync::OwnedMutexGuard;

/// A validated session id: exactly 24 hex digits, stored in lower case.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SessionId([u8; 24]);

/// The client sent a session id that is not exactly 24 hex digits.
#[derive(Debug, thiserror::Error)]
#[error("bad session id: it must be exactly 24 hex digits")]
pub struct BadSessionId;

impl SessionId {
    /// Parses an id, accepting either case.
    pub fn parse(text: &str) -> Result<SessionId, BadSessionId> {
        let bytes: [u8; 24] = text.as_bytes().try_into().map_err(|_| BadSessionId)?;
        if !bytes.iter().all(u8::is_ascii_hexdigit) {
            return Err(BadSessionId);
        }
        Ok(SessionId(bytes.map(|b| b.to_ascii_lowercase())))
    }

    /// The id as text (lower case).
    pub fn as_str(&self) -> &str {
        // Only ASCII hex digits are ever stored.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// The lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockTimeout {
    /// Not within the timeout: another request of the session runs (here, or on another host).
    #[error("another request on this session has not finished")]
    Busy,
    /// The shared store could not be asked for the session's lease.
    #[error("the session's lease could not be taken: {0}")]
    Store(String),
}

/// Held while a handler runs for a session; dropping it lets the next request of that session in
/// (and, with several hosts, gives the session's lease back).
#[derive(Debug)]
pub struct SessionGuard {
    _local: OwnedMutexGuard<()>,
    _lease: Option<HeldLease>,
}

/// The per-session locks.
#[derive(Default, Debug)]
pub struct SessionLocks {
    inner: Mutex<Table>,
    /// With a store shared by several hosts: the leases.
    cluster: Option<Arc<Cluster>>,
}

/// The leases of a store shared with other hosts.
#[derive(Debug)]
pub struct Cluster {
    store: Arc<Store>,
    /// This process, as the leases name it.
    holder: String,
    /// How long a lease lasts: past it, a dead or frozen host's sessions go to the next host asked.
    ttl: Duration,
    /// The leases this host holds now, by session.
    held: Mutex<HashMap<SessionId, Lease>>,
    /// The hosts last seen sharing the store (`members.rs`), as `/modhost/status` shows them.
    seen: Mutex<serde_json::Value>,
}

impl Cluster {
    /// Leases of `store` for this process, each lasting `ttl`.
    pub fn new(store: Arc<Store>, ttl: Duration) -> Cluster {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
        let holder = format!("{host}/{}/{:x}", std::process::id(), nanos as u64);
        Cluster { store, holder, ttl, held: Mutex::new(HashMap::new()), seen: Mutex::new(serde_json::Value::Null) }
    }

    /// The hosts last seen sharing the store (`members.rs`); `null` before the first announcement.
    pub fn seen(&self) -> serde_json::Value {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn set_seen(&self, view: serde_json::Value) {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = view;
    }

    /// This process's name in the leases.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Lease>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One attempt at the lease of `id`, on the blocking pool.
    async fn try_acquire(self: &Arc<Self>, id: SessionId) -> Result<Option<HeldLease>, LockTimeout> {
        let cluster = self.clone();
        let asked =
            tokio::task::spawn_blocking(move || cluster.store.acquire_lease(id.as_str(), &cluster.holder, cluster.ttl))
                .await
                .map_err(|e| LockTimeout::Store(e.to_string()))?
                .map_err(|e| LockTimeout::Store(e.to_string()))?;
        Ok(asked.map(|lease| {
            self.held().insert(id, lease.clone());
            HeldLease { cluster: self.clone(), id, lease }
        }))
    }

    /// The lease of `id`, asked again (briefly apart) while another host holds it, until `deadline`.
    async fn acquire(self: &Arc<Self>, id: SessionId, deadline: Instant) -> Result<HeldLease, LockTimeout> {
        let mut pause = Duration::from_millis(10);
        loop {
            if let Some(held) = self.try_acquire(id).await? {
                return Ok(held);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LockTimeout::Busy);
            }
            tokio::time::sleep(pause.min(left)).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }
}

/// A lease this host holds; given back when dropped.
#[derive(Debug)]
struct HeldLease {
    cluster: Arc<Cluster>,
    id: SessionId,
    lease: Lease,
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        {
            let mut held = self.cluster.held();
            if held.get(&self.id).is_some_and(|l| l.token == self.lease.token) {
                held.remove(&self.id);
            }
        }
        // Given back off the request's path; if it cannot be, it expires by itself.
        let (cluster, lease) = (self.cluster.clone(), self.lease.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || {
                if let Err(e) = cluster.store.release_lease(&lease) {
                    tracing::debug!("session {}: {e} (it expires by itself)", lease.session);
                }
            });
        }
    }
}

#[derive(Default, Debug)]
struct Table {
    locks: HashMap<SessionId, Weak<tokio::sync::Mutex<()>>>,
    /// Size of the map after the last sweep of dead entries.
    swept_at: usize,
}

impl SessionLocks {
    /// Locks whose sessions are leased in `cluster`'s store too (several hosts share it).
    pub fn clustered(cluster: Arc<Cluster>) -> SessionLocks {
        SessionLocks { inner: Mutex::default(), cluster: Some(cluster) }
    }

    /// Takes the lock of `id` (and its lease), waiting at most `timeout`.
    pub async fn lock(&self, id: SessionId, timeout: Duration) -> Result<SessionGuard, LockTimeout> {
        let deadline = Instant::now() + timeout;
        let mutex = self.mutex_for(id);
        let local = tokio::time::timeout(timeout, mutex.lock_owned()).await.map_err(|_| LockTimeout::Busy)?;
        let lease = match &self.cluster {
            Some(cluster) => Some(cluster.acquire(id, deadline).await?),
            None => None,
        };
        Ok(SessionGuard { _local: local, _lease: lease })
    }

    /// Takes the lock of `id` only if it is free and nobody waits for it: a lock released to a
    /// waiter passes to it directly, so this never goes before one. For work that must not queue in
    /// front of the session's requests (a timer's firing), which tries again later instead. With
    /// several hosts, the lease is asked for once.
    pub(crate) async fn try_lock(&self, id: SessionId) -> Option<SessionGuard> {
        let local = self.mutex_for(id).try_lock_owned().ok()?;
        let lease = match &self.cluster {
            Some(cluster) => Some(cluster.try_acquire(id).await.ok()??),
            None => None,
        };
        Some(SessionGuard { _local: local, _lease: lease })
    }

    /// This host in a cluster (several hosts share the store), if it is in one.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// The lease this host holds for `id` now (none on one host's own store): what the session's
    /// writes carry.
    pub(crate) fn lease_of(&self, id: SessionId) -> Option<Lease> {
        self.cluster.as_ref()?.held().get(&id).cloned()
    }

    fn mutex_for(&self, id: SessionId) -> Arc<tokio::sync::Mutex<()>> {
        let mut table = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = table.locks.get(&id).and_then(Weak::upgrade) {
            return live;
        }
        if table.locks.len() >= 2 * table.swept_at.max(64) {
            table.locks.retain(|_, weak| weak.strong_count() > 0);
            table.swept_at = table.locks.len();
        }
        let mutex = Arc::new(tokio::sync::Mutex::new(()));
        table.locks.insert(id, Arc::downgrade(&mutex));
        mutex
    }

    /// How many sessions have an entry (live or not yet swept). For tests and status.
    pub fn len(&self) -> usize {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).locks.len()
    }

    /// Whether no session has an entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_24_hex_digits_in_either_case() {
        let a = SessionId::parse("0123456789ABCDEFabcdef01").unwrap();
        assert_eq!(a.as_str(), "0123456789abcdefabcdef01");
        assert_eq!(a, SessionId::parse("0123456789abcdefABCDEF01").unwrap());
        for bad in ["", "0123", "0123456789abcdefabcdef012", "0123456789abcdefabcdef0g", "ü123456789abcdefabcdef0"] {
            assert!(SessionId::parse(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn one_session_waits_and_times_out_others_do_not() {
        let locks = SessionLocks::default();
        let a = SessionId::parse(&"a".repeat(24)).unwrap();
        let b = SessionId::parse(&"b".repeat(24)).unwrap();
        let held = locks.lock(a, Duration::from_secs(1)).await.unwrap();
        assert!(locks.lock(a, Duration::from_millis(20)).await.is_err());
        assert!(locks.lock(b, Duration::from_millis(20)).await.is_ok());
        drop(held);
        assert!(locks.lock(a, Duration::from_millis(20)).await.is_ok());
    }

    #[tokio::test]
    async fn try_lock_never_goes_before_a_waiter() {
        let locks = Arc::new(SessionLocks::default());
        let a = SessionId::parse(&"a".repeat(24)).unwrap();
        let held = locks.try_lock(a).await.expect("free");
        assert!(locks.try_lock(a).await.is_none(), "taken");
        let waiting = tokio::spawn({
            let locks = locks.clone();
            async move { locks.lock(a, Duration::from_secs(5)).await.map(drop) }
        });
        // Until the waiter is queued (bounded: 100 yields).
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        drop(held);
        assert!(locks.try_lock(a).await.is_none(), "released to the waiter, not to the try");
        waiting.await.unwrap().unwrap();
        assert!(locks.try_lock(a).await.is_some(), "free again");
    }

    #[tokio::test]
    async fn unused_sessions_are_swept() {
        let locks = SessionLocks::default();
        for i in 0..1000u32 {
            let id = SessionId::parse(&format!("{i:024x}")).unwrap();
            drop(locks.lock(id, Duration::from_secs(1)).await.unwrap());
        }
        assert!(locks.len() < 200, "{} entries kept", locks.len());
    }
}
