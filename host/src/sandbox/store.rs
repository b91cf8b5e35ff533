//! The host side of the WIT `store` interface: the durable store engine (`modhost-store`) for a guest.
//! A mod's own namespace is its id; any other needs a `store_read`/`store_write` grant, checked before
//! the engine runs. Engine errors become WIT error values.

use super::bindings::{Error, modhost::plugin};
use super::state::{CallState, ModContext};
use crate::perf::Phase;
use modhost_store::{Store, StoreError};
use std::sync::Arc;

fn store_error(e: StoreError) -> Error {
    let message = e.to_string();
    match e {
        StoreError::InvalidKey { .. } | StoreError::Document { .. } => Error::Invalid(message),
        StoreError::TooLarge { .. } => Error::TooLarge(message),
        StoreError::Unreadable { .. } => Error::Unreadable(message),
        StoreError::Conflict { .. } => Error::Conflict(message),
        StoreError::Io { .. } | StoreError::Lock(_) => Error::Io(message),
    }
}

/// Runs a store call in `namespace`, after checking the mod's grant for it: inline in the default mode
/// (a commit is a few syscalls), on the blocking pool in durable mode for writes (a commit waits for
/// fsyncs, which must not hold an async worker).
async fn on_store<T: Send + 'static>(
    cx: &Arc<ModContext>,
    namespace: String,
    write: bool,
    call: impl FnOnce(&Store, &str) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, Error> {
    cx.grants.check_store(&cx.id, &namespace, write).map_err(|why| cx.denied(why))?;
    if !write || !cx.store.durable() {
        return call(&cx.store, &namespace).map_err(store_error);
    }
    let cx = cx.clone();
    match tokio::task::spawn_blocking(move || call(&cx.store, &namespace)).await {
        Ok(result) => result.map_err(store_error),
        Err(e) => Err(Error::Io(format!("the store call did not finish: {e}"))),
    }
}

fn versioned(found: Option<modhost_store::Versioned>) -> Option<plugin::store::Versioned> {
    found.map(|v| plugin::store::Versioned { value: v.value.to_vec(), version: v.version })
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
        let found = on_store(&self.cx, namespace, false, move |s, ns| s.get(ns, &key)).await;
        self.clocked(Phase::StoreGet, start, found.map(|v| v.map(|v| v.to_vec())))
    }

    async fn ns_get_versioned(
        &mut self,
        namespace: String,
        key: String,
    ) -> Result<Option<plugin::store::Versioned>, Error> {
        let start = self.clock();
        let found = on_store(&self.cx, namespace, false, move |s, ns| s.get_versioned(ns, &key)).await;
        self.clocked(Phase::StoreGet, start, found.map(versioned))
    }

    async fn ns_set(&mut self, namespace: String, key: String, value: Vec<u8>) -> Result<u64, Error> {
        let start = self.clock();
        let done = on_store(&self.cx, namespace, true, move |s, ns| s.set(ns, &key, &value)).await;
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
        let done = on_store(&self.cx, namespace, true, move |s, ns| s.set_if_version(ns, &key, &value, expected)).await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_delete(&mut self, namespace: String, key: String) -> Result<bool, Error> {
        let start = self.clock();
        let done = on_store(&self.cx, namespace, true, move |s, ns| s.delete(ns, &key)).await;
        self.clocked(Phase::StoreSet, start, done)
    }

    async fn ns_list(&mut self, namespace: String, prefix: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let keys = on_store(&self.cx, namespace, false, move |s, ns| s.list(ns, &prefix)).await;
        self.clocked(Phase::StoreList, start, keys)
    }

    async fn ns_doc_get(
        &mut self,
        namespace: String,
        key: String,
        path: String,
    ) -> Result<Option<plugin::store::Versioned>, Error> {
        let start = self.clock();
        let found = on_store(&self.cx, namespace, false, move |s, ns| s.doc_get(ns, &key, &path)).await;
        self.clocked(Phase::StoreGet, start, found.map(versioned))
    }

    async fn ns_doc_keys(&mut self, namespace: String, key: String, path: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let keys = on_store(&self.cx, namespace, false, move |s, ns| s.doc_keys(ns, &key, &path)).await;
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
        let done = on_store(&self.cx, namespace, true, move |s, ns| s.doc_patch(ns, &key, &path, &patch, None)).await;
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
        let done =
            on_store(&self.cx, namespace, true, move |s, ns| s.doc_patch(ns, &key, &path, &patch, Some(expected)))
                .await;
        self.clocked(Phase::StoreSet, start, done)
    }
}
