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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
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

/// The lock was not taken within the timeout.
#[derive(Debug, thiserror::Error)]
#[error("another request on this session has not finished")]
pub struct LockTimeout;

/// Held while a handler runs for a session; dropping it lets the next request of that session in.
pub(crate) type SessionGuard = OwnedMutexGuard<()>;

/// The per-session locks.
#[derive(Default, Debug)]
pub struct SessionLocks {
    inner: Mutex<Table>,
}

#[derive(Default, Debug)]
struct Table {
    locks: HashMap<SessionId, Weak<tokio::sync::Mutex<()>>>,
    /// Size of the map after the last sweep of dead entries.
    swept_at: usize,
}

impl SessionLocks {
    /// Takes the lock of `id`, waiting at most `timeout`.
    pub async fn lock(&self, id: SessionId, timeout: Duration) -> Result<SessionGuard, LockTimeout> {
        let mutex = self.mutex_for(id);
        tokio::time::timeout(timeout, mutex.lock_owned()).await.map_err(|_| LockTimeout)
    }

    /// Takes the lock of `id` only if it is free and nobody waits for it: a lock released to a
    /// waiter passes to it directly, so this never goes before one. For work that must not queue in
    /// front of the session's requests (a timer's firing), which tries again later instead.
    pub(crate) fn try_lock(&self, id: SessionId) -> Option<SessionGuard> {
        self.mutex_for(id).try_lock_owned().ok()
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
        let held = locks.try_lock(a).expect("free");
        assert!(locks.try_lock(a).is_none(), "taken");
        let waiting = tokio::spawn({
            let locks = locks.clone();
            async move { locks.lock(a, Duration::from_secs(5)).await.map(drop) }
        });
        // Until the waiter is queued (bounded: 100 yields).
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        drop(held);
        assert!(locks.try_lock(a).is_none(), "released to the waiter, not to the try");
        waiting.await.unwrap().unwrap();
        assert!(locks.try_lock(a).is_some(), "free again");
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
