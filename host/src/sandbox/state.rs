//! [`CallState`]: the data of one wasmtime `Store` (one instance's view of the host), [`ModContext`]
//! (what all of a mod's calls share), and the memory limiter. The `Host` impl of each WIT interface
//! is its own file beside this one: `db.rs`, `store.rs`, `log.rs`.
//!
//! Every engine error is an error value the guest sees, never a trap: a bad path, bad JSON or a
//! missing key is the mod's to handle. Traps come only from wasmtime's own limits (memory, deadline,
//! bytes copied per host call).

use super::bindings::{Error, modhost::plugin};
use super::output::GuestOutput;
use crate::perf::{Phase, Trace};
use modhost_db::Db;
use modhost_mods::Grants;
use modhost_store::Store;
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
    /// Calls refused for want of a grant: what `modhost check` reports per route.
    pub denials: AtomicU64,
    /// The largest linear memory an instance asked for, in bytes (granted or not).
    pub peak_memory: AtomicUsize,
    /// The largest document one `db.patch` may carry: the player's limit for this mod, set when it is
    /// loaded (`Runtime::load`).
    pub db_patch_bytes: AtomicUsize,
}

impl ModContext {
    /// A context with no denials or memory seen yet.
    pub fn new(id: &str, db: Arc<Db>, store: Arc<Store>, grants: Grants) -> ModContext {
        ModContext {
            id: id.into(),
            db,
            store,
            grants,
            denials: AtomicU64::new(0),
            peak_memory: AtomicUsize::new(0),
            db_patch_bytes: AtomicUsize::new(crate::config::Limits::default().db_patch_bytes),
        }
    }

    pub(super) fn denied(&self, why: modhost_mods::Denied) -> Error {
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
    /// Built the first time the guest calls into WASI. Most handlers never do (a db read and an
    /// answer), and building one seeds two random generators and boxes a dozen streams: about a
    /// microsecond per fresh instance for nothing.
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl CallState {
    pub(crate) fn new(cx: Arc<ModContext>, limits: StoreLimits, output_bytes: usize) -> Self {
        let output = GuestOutput::new(output_bytes);
        CallState { cx, limits: Limiter::new(limits), output, trace: None, wasi: None, table: ResourceTable::new() }
    }

    /// A state whose WASI context the caller built: `modhost test-runner` gives a test binary inherited
    /// stdio and its arguments, which a mod never gets. Nothing is written to `output` then.
    pub(crate) fn with_wasi(cx: Arc<ModContext>, limits: StoreLimits, wasi: WasiCtx) -> Self {
        CallState {
            cx,
            limits: Limiter::new(limits),
            output: GuestOutput::new(0),
            trace: None,
            wasi: Some(wasi),
            table: ResourceTable::new(),
        }
    }

    /// Starts timing a host call, when this call is traced: one branch when it is not.
    pub(super) fn clock(&self) -> Option<Instant> {
        self.trace.as_ref().map(|_| Instant::now())
    }

    /// Adds the host call started at `start` to `phase`.
    pub(super) fn clocked<T>(&mut self, phase: Phase, start: Option<Instant>, value: T) -> T {
        if let (Some(trace), Some(start)) = (&mut self.trace, start) {
            trace.add(phase, start.elapsed());
        }
        value
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let output = &self.output;
        // No preopened directories, no environment, no arguments, no sockets (denied by default):
        // clocks, random, and stdout/stderr into `output`.
        let ctx =
            self.wasi.get_or_insert_with(|| WasiCtx::builder().stdout(output.clone()).stderr(output.clone()).build());
        WasiCtxView { ctx, table: &mut self.table }
    }
}

impl plugin::types::Host for CallState {}
