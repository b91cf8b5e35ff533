//! The host side of the WIT `store` interface: the durable store engine (`modhost-store`) for a guest.
//! A mod's own namespace is its id; any other needs a `store_read`/`store_write` grant, checked before
//! the engine runs. Engine errors become WIT error values. Calls that answer from memory run inline;
//! the rest (listings, large values, cache misses, durable commits) on the blocking pool ([`Cost`]).

use super::bindings::{Error, modhost::plugin};
use super::state::{CallState, ModContext};
use crate::perf::Phase;
use modhost_store::{Lease, Store, StoreError};
use std::sync::Arc;

fn store_error(e: StoreError) -> Error {
    let message = e.to_string();
    match e {
        StoreError::InvalidKey { .. } | StoreError::Document { .. } => Error::Invalid(message),
        StoreError::TooLarge { .. } => Error::TooLarge(message),
        // The player sets quotas; say where, so the mod's author can tell their player.
        StoreError::Quota { .. } => {
            Error::TooLarge(format!("{message} (the player sets it: `store_mib`, `store_keys` in modhost.toml)"))
        }
        StoreError::Unreadable { .. } => Error::Unreadable(message),
        StoreError::Conflict { .. } => Error::Conflict(message),
        StoreError::Io { .. } | StoreError::Lock(_) | StoreError::LeaseLost { .. } | StoreError::Unavailable { .. } => {
            Error::Io(message)
        }
    }
}

/// [`store_error`], noting on the call when the store itself was unavailable: a call that then fails
/// is answered 503, not as the mod's failure (`instance.rs`).
pub(super) fn noted(unavailable: &mut Option<String>, e: StoreError) -> Error {
    if let StoreError::Unavailable { .. } = &e {
        *unavailable = Some(e.to_string());
    }
    store_error(e)
}

/// Values and patches up to this size are committed inline: copying and writing them costs
/// microseconds, less than a trip to the blocking pool.
const INLINE_MAX: usize = 256 << 10;

/// How long a store call may take, decided before it runs: `Short` calls run inline on the async
/// worker, `Long` ones on the blocking pool.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cost {
    Short,
    Long,
}

impl Cost {
    /// A read of `key`: short when it answers from memory (cached, no write of it in progress).
    fn read(store: &Store, namespace: &str, key: &str, document: bool) -> Cost {
        if store.answers_from_memory(namespace, key, document) { Cost::Short } else { Cost::Long }
    }

    /// A write of `len` bytes to `key`: long in durable mode (fsyncs), when large, when the key must
    /// be read from the database first, or when other commits are running (it would wait for them).
    fn write(store: &Store, namespace: &str, key: &str, document: bool, len: usize) -> Cost {
        let long = store.durable()
            || len > INLINE_MAX
            || store.committing()
            || Cost::read(store, namespace, key, document) == Cost::Long;
        if long { Cost::Long } else { Cost::Short }
    }
}

/// Runs a store call in `namespace`, after checking the mod's grant for it (a write, of `write_key`,
/// needs `store_write`): inline when it is `Short`, on the blocking pool when it is `Long`, so that a
/// listing of many keys, a 64 MiB value or a wait behind fsyncs never holds an async worker.
async fn on_store<T: Send + 'static>(
    cx: &Arc<ModContext>,
    unavailable: &mut Option<String>,
    namespace: String,
    write_key: Option<&str>,
    cost: impl FnOnce(&Store, &str) -> Cost,
    call: impl FnOnce(&Store, &str) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Error> {
    cx.grants.check_store(&cx.id, &namespace, write_key.is_some()).map_err(|why| cx.denied(why))?;
    if cost(&cx.store, &namespace) == Cost::Short {
        return call(&cx.store, &namespace).map_err(|e| noted(unavailable, e));
    }
    // A write is fenced from now, not from when a blocking thread picks it up: if this call is given
    // up meanwhile (its deadline), the session's next request must still read what the write commits.
    let fence = write_key.map(|key| cx.store.fence(&namespace, key));
    let cx = cx.clone();
    let blocking = move || {
        let outcome = call(&cx.store, &namespace);
        drop(fence);
        outcome
    };
    match tokio::task::spawn_blocking(blocking).await {
        Ok(result) => result.map_err(|e| noted(unavailable, e)),
        Err(e) => Err(Error::Io(format!("the store call did not finish: {e}"))),
    }
}

fn versioned(found: Option<modhost_store::Versioned>) -> Option<plugin::store::Versioned> {
    found.map(|v| plugin::store::Versioned { value: v.value.to_vec(), version: v.version })
}

impl CallState {
    /// The lease the running call's session holds on this host, when several hosts share the store:
    /// every write of the call carries it, and is refused once it is no longer this host's.
    fn lease(&self) -> Option<Lease> {
        let session = self.chain.session?;
        self.cx.peers.get()?.upgrade()?.sessions.lease_of(session)
    }
}

impl plugin::store::Host for CallState {
    async fn get(&mut self, key: String) -> Result<Option<Vec<u8>>, Error> {
        let own = self.cx.id.to_string();
        self.ns_get(own, key).await
    }

    async fn get_versioned(&mut self, key: String) -> Result<Option<plugin::store::Versioned>, Error> {
        let own = self.cx.id.to_string();
        self.ns_get_versioned(own, key).await
    }

    async fn set(&mut self, key: String, value: Vec<u8>) -> Result<u64, Error> {
        let own = self.cx.id.to_string();
        self.ns_set(own, key, value).await
    }

    async fn set_if_version(&mut self, key: String, value: Vec<u8>, expected: Option<u64>) -> Result<u64, Error> {
        let own = self.cx.id.to_string();
        self.ns_set_if_version(own, key, value, expected).await
    }

    async fn delete(&mut self, key: String) -> Result<bool, Error> {
        let own = self.cx.id.to_string();
        self.ns_delete(own, key).await
    }

    async fn list(&mut self, prefix: String) -> Result<Vec<String>, Error> {
        let own = self.cx.id.to_string();
        self.ns_list(own, prefix).await
    }

    async fn doc_get(&mut self, key: String, path: String) -> Result<Option<plugin::store::Versioned>, Error> {
        let own = self.cx.id.to_string();
        self.ns_doc_get(own, key, path).await
    }

    async fn doc_keys(&mut self, key: String, path: String) -> Result<Vec<String>, Error> {
        let own = self.cx.id.to_string();
        self.ns_doc_keys(own, key, path).await
    }

    async fn doc_patch(&mut self, key: String, path: String, patch: Vec<u8>) -> Result<u64, Error> {
        let own = self.cx.id.to_string();
        self.ns_doc_patch(own, key, path, patch).await
    }

    async fn doc_patch_if_version(
        &mut self,
        key: String,
        path: String,
        patch: Vec<u8>,
        expected: u64,
    ) -> Result<u64, Error> {
        let own = self.cx.id.to_string();
        self.ns_doc_patch_if_version(own, key, path, patch, expected).await
    }

    async fn ns_get(&mut self, namespace: String, key: String) -> Result<Option<Vec<u8>>, Error> {
        let start = self.clock();
        let k = key.clone();
        let found = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            None,
            |s, ns| Cost::read(s, ns, &k, false),
            move |s, ns| s.get(ns, &key),
        )
        .await;
        self.clocked(Phase::StoreGet, start, found.map(|v| v.map(|v| v.to_vec())))
    }

    async fn ns_get_versioned(
        &mut self,
        namespace: String,
        key: String,
    ) -> Result<Option<plugin::store::Versioned>, Error> {
        let start = self.clock();
        let k = key.clone();
        let found = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            None,
            |s, ns| Cost::read(s, ns, &k, false),
            move |s, ns| s.get_versioned(ns, &key),
        )
        .await;
        self.clocked(Phase::StoreGet, start, found.map(versioned))
    }

    async fn ns_set(&mut self, namespace: String, key: String, value: Vec<u8>) -> Result<u64, Error> {
        let start = self.clock();
        let lease = self.lease();
        let (k, len) = (key.clone(), value.len());
        let done = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            Some(&k),
            |s, ns| Cost::write(s, ns, &k, false, len),
            move |s, ns| s.leased(lease.as_ref()).set(ns, &key, &value),
        )
        .await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_set_if_version(
        &mut self,
        namespace: String,
        key: String,
        value: Vec<u8>,
        expected: Option<u64>,
    ) -> Result<u64, Error> {
        let start = self.clock();
        let lease = self.lease();
        let (k, len) = (key.clone(), value.len());
        let done = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            Some(&k),
            |s, ns| Cost::write(s, ns, &k, false, len),
            move |s, ns| s.leased(lease.as_ref()).set_if_version(ns, &key, &value, expected),
        )
        .await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_delete(&mut self, namespace: String, key: String) -> Result<bool, Error> {
        let start = self.clock();
        let lease = self.lease();
        let k = key.clone();
        let done = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            Some(&k),
            |s, ns| Cost::write(s, ns, &k, false, 0),
            move |s, ns| s.leased(lease.as_ref()).delete(ns, &key),
        )
        .await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_list(&mut self, namespace: String, prefix: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let keys = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            None,
            |_, _| Cost::Long,
            move |s, ns| s.list(ns, &prefix),
        )
        .await;
        self.clocked(Phase::StoreList, start, keys)
    }

    async fn ns_doc_get(
        &mut self,
        namespace: String,
        key: String,
        path: String,
    ) -> Result<Option<plugin::store::Versioned>, Error> {
        let start = self.clock();
        let k = key.clone();
        let found = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            None,
            |s, ns| Cost::read(s, ns, &k, true),
            move |s, ns| s.doc_get(ns, &key, &path),
        )
        .await;
        self.clocked(Phase::StoreGet, start, found.map(versioned))
    }

    async fn ns_doc_keys(&mut self, namespace: String, key: String, path: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let k = key.clone();
        let keys = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            None,
            |s, ns| Cost::read(s, ns, &k, true),
            move |s, ns| s.doc_keys(ns, &key, &path),
        )
        .await;
        self.clocked(Phase::StoreGet, start, keys)
    }

    async fn ns_doc_patch(
        &mut self,
        namespace: String,
        key: String,
        path: String,
        patch: Vec<u8>,
    ) -> Result<u64, Error> {
        let start = self.clock();
        let lease = self.lease();
        let (k, len) = (key.clone(), patch.len());
        let done = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            Some(&k),
            |s, ns| Cost::write(s, ns, &k, true, len),
            move |s, ns| s.leased(lease.as_ref()).doc_patch(ns, &key, &path, &patch, None),
        )
        .await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_doc_patch_if_version(
        &mut self,
        namespace: String,
        key: String,
        path: String,
        patch: Vec<u8>,
        expected: u64,
    ) -> Result<u64, Error> {
        let start = self.clock();
        let lease = self.lease();
        let (k, len) = (key.clone(), patch.len());
        let done = on_store(
            &self.cx,
            &mut self.store_unavailable,
            namespace,
            Some(&k),
            |s, ns| Cost::write(s, ns, &k, true, len),
            move |s, ns| s.leased(lease.as_ref()).doc_patch(ns, &key, &path, &patch, Some(expected)),
        )
        .await;
        self.clocked(Phase::StoreSet, start, done)
    }
}
