//! [`CallState`]: the data of one wasmtime `Store`, and the thin `Host` impls that expose the db, store
//! and log engines to a guest, converting engine errors into WIT error values.
//!
//! Every engine error is an error value the guest sees, never a trap: a bad path, bad JSON or a
//! missing key is the mod's to handle. Traps come only from wasmtime's own limits (memory, deadline,
//! bytes copied per host call).

use super::bindings::{Error, modhost::plugin};
use super::output::GuestOutput;
use crate::perf::{Phase, Trace};
use modhost_db::{Db, DbError};
use modhost_mods::Grants;
use modhost_store::{Store, StoreError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// What a mod's calls share: its identity and the engines it reaches.
#[derive(Debug)]
pub struct ModContext {
    /// The mod's id: its log prefix and its store namespace.
    pub id: Arc<str>,
    /// The game database.
    pub db: Arc<Db>,
    /// The durable store.
    pub store: Arc<Store>,
    /// What it may change beyond its own store namespace.
    pub grants: Grants,
    /// Calls refused for want of a grant, and the largest linear memory an instance asked for:
    /// what `modhost check` reports per route.
    pub denials: AtomicU64,
    pub peak_memory: AtomicUsize,
}

impl ModContext {
    /// A context with no denials or memory seen yet.
    pub fn new(id: &str, db: Arc<Db>, store: Arc<Store>, grants: Grants) -> ModContext {
        ModContext { id: id.into(), db, store, grants, denials: AtomicU64::new(0), peak_memory: AtomicUsize::new(0) }
    }

    fn denied(&self, why: modhost_mods::Denied) -> Error {
        self.denials.fetch_add(1, Ordering::Relaxed);
        Error::Denied(format!("mod {}: {why}", self.id))
    }
}

/// wasmtime's `StoreLimits`, and the largest memory the instance asked for (granted or not).
pub(crate) struct Limiter {
    limits: StoreLimits,
    pub(crate) peak_memory: usize,
}

impl Limiter {
    pub(crate) fn new(limits: StoreLimits) -> Limiter {
        Limiter { limits, peak_memory: 0 }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.peak_memory = self.peak_memory.max(desired);
        self.limits.memory_growing(current, desired, maximum)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

/// The data of one `Store`: one instance's view of the host.
pub(crate) struct CallState {
    pub(crate) cx: Arc<ModContext>,
    pub(crate) limits: Limiter,
    pub(crate) output: GuestOutput,
    /// `--perf` only: the time of this call's host calls, by phase.
    pub(crate) trace: Option<Trace>,
    wasi: WasiCtx,
    table: ResourceTable,
}

impl CallState {
    pub(crate) fn new(cx: Arc<ModContext>, limits: StoreLimits, output_bytes: usize) -> Self {
        let output = GuestOutput::new(output_bytes);
        // No preopened directories, no environment, no arguments, no sockets (denied by default):
        // clocks, random, and stdout/stderr into `output`.
        let wasi = WasiCtx::builder().stdout(output.clone()).stderr(output.clone()).build();
        CallState { cx, limits: Limiter::new(limits), output, trace: None, wasi, table: ResourceTable::new() }
    }

    /// A state whose WASI context the caller built: `modhost test-runner` gives a test binary inherited
    /// stdio and its arguments, which a mod never gets. Nothing is written to `output` then.
    pub(crate) fn with_wasi(cx: Arc<ModContext>, limits: StoreLimits, wasi: WasiCtx) -> Self {
        CallState {
            cx,
            limits: Limiter::new(limits),
            output: GuestOutput::new(0),
            trace: None,
            wasi,
            table: ResourceTable::new(),
        }
    }

    /// Starts timing a host call, when this call is traced: one branch when it is not.
    fn clock(&self) -> Option<Instant> {
        self.trace.as_ref().map(|_| Instant::now())
    }

    /// Adds the host call started at `start` to `phase`.
    fn clocked<T>(&mut self, phase: Phase, start: Option<Instant>, value: T) -> T {
        if let (Some(trace), Some(start)) = (&mut self.trace, start) {
            trace.add(phase, start.elapsed());
        }
        value
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

fn db_error(e: DbError) -> Error {
    let message = e.to_string();
    match e {
        DbError::NotFound { .. } => Error::NotFound(message),
        DbError::BadPath { .. } | DbError::BadJson { .. } => Error::Invalid(message),
        DbError::WrongKind { .. } => Error::WrongKind(message),
    }
}

fn store_error(e: StoreError) -> Error {
    let message = e.to_string();
    match e {
        StoreError::InvalidKey { .. } => Error::Invalid(message),
        StoreError::TooLarge { .. } => Error::TooLarge(message),
        StoreError::Unreadable { .. } => Error::Unreadable(message),
        StoreError::Conflict { .. } => Error::Conflict(message),
        StoreError::Io { .. } | StoreError::Lock(_) => Error::Io(message),
    }
}

impl plugin::types::Host for CallState {}

impl plugin::db::Host for CallState {
    fn get(&mut self, path: String) -> Result<String, Error> {
        let start = self.clock();
        let text = self.cx.db.get(&path).map_err(db_error).and_then(|text| {
            // The db holds validated JSON, which is UTF-8; a failure here would be a host bug,
            // reported to the mod as an error rather than a panic.
            String::from_utf8(text.to_vec())
                .map_err(|e| Error::Failed(format!("db text at `{path}` is not UTF-8: {e}")))
        });
        self.clocked(Phase::DbGet, start, text)
    }

    fn exists(&mut self, path: String) -> Result<bool, Error> {
        let start = self.clock();
        let found = self.cx.db.exists(&path).map_err(db_error);
        self.clocked(Phase::DbGet, start, found)
    }

    fn keys(&mut self, path: String) -> Result<Vec<String>, Error> {
        let start = self.clock();
        let keys = self.cx.db.keys(&path).map_err(db_error);
        self.clocked(Phase::DbKeys, start, keys)
    }

    fn patch(&mut self, path: String, json: String) -> Result<(), Error> {
        let start = self.clock();
        let done = match self.cx.grants.check_db_write(&path) {
            Ok(()) => self.cx.db.patch(&path, &json).map_err(db_error),
            Err(why) => Err(self.cx.denied(why)),
        };
        self.clocked(Phase::DbPatch, start, done)
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
}

/// The longest log line a mod can write; the rest is cut.
const MAX_LOG_LINE: usize = 8 * 1024;

impl plugin::log::Host for CallState {
    fn log(&mut self, level: plugin::log::Level, message: String) {
        use plugin::log::Level;
        let mut end = message.len().min(MAX_LOG_LINE);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let (id, message) = (&*self.cx.id, &message[..end]);
        match level {
            Level::Trace => tracing::trace!(target: "mod", "[{id}] {message}"),
            Level::Debug => tracing::debug!(target: "mod", "[{id}] {message}"),
            Level::Info => tracing::info!(target: "mod", "[{id}] {message}"),
            Level::Warn => tracing::warn!(target: "mod", "[{id}] {message}"),
            Level::Error => tracing::error!(target: "mod", "[{id}] {message}"),
        }
    }
}
