//! [`CallState`]: the data of one wasmtime `Store` (one instance's view of the host), [`ModContext`]
//! (what all of a mod's calls share), and the memory limiter. The `Host` impl of each WIT interface
//! is its own file beside this one: `db.rs`, `store.rs`, `log.rs`, `config.rs`, `mods.rs`, `push.rs`,
//! `sockets.rs`, `timers.rs`.
//!
//! Every engine error is an error value the guest sees, never a trap: a bad path, bad JSON or a
//! missing key is the mod's to handle. Traps come only from wasmtime's own limits (memory, deadline,
//! bytes copied per host call).

use super::bindings::{Error, modhost::plugin};
use super::budget::{BudgetFull, Charge, MemoryBudget, ModMemory};
use super::logcap::LogRate;
use super::output::GuestOutput;
use crate::perf::{Phase, Trace};
use modhost_db::Db;
use modhost_mods::Grants;
use modhost_store::Store;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
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
    /// Its hooks that failed and were skipped (`hook_errors = "skip"`), since it was loaded.
    pub hooks_skipped: AtomicU64,
    /// Events delivered to it that it failed on (an error, a trap, its deadline), since it was
    /// loaded: a subscriber's failure is its own, never the emitter's.
    pub events_failed: AtomicU64,
    /// The largest linear memory an instance asked for, in bytes (granted or not).
    pub peak_memory: AtomicUsize,
    /// Its log budget per second and the lines it dropped (`logcap.rs`).
    pub(crate) log: LogRate,
    /// The whole text of its last trap (wasm backtrace included): the client gets one line, the log
    /// and `modhost check` get this.
    pub last_trap: Mutex<Option<String>>,
    /// The largest document one `db.patch` may carry: the player's limit for this mod, set when it is
    /// loaded (`Runtime::load`).
    pub db_patch_bytes: AtomicUsize,
    /// Bytes of pushed messages it may have queued for sessions without a socket (its share of the
    /// notifier's queues): the player's limit for this mod, set when it is loaded.
    pub push_queue_bytes: AtomicUsize,
    /// Its effective configuration (`config.rs`): `{}` when it has none.
    pub config: Arc<serde_json::Value>,
    /// The generation it belongs to, for events and calls (`peers.rs`); empty outside a server
    /// (`modhost test-runner`), where an event reaches nobody and a call finds no mod.
    pub(crate) peers: std::sync::OnceLock<std::sync::Weak<super::peers::Peers>>,
    /// On a store several hosts share, its generation's db following the cluster's patch log
    /// (`dblog.rs`): runtime patches go through it once the generation is built.
    pub(crate) follow: Option<Arc<crate::dblog::Follow>>,
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
            hooks_skipped: AtomicU64::new(0),
            events_failed: AtomicU64::new(0),
            peak_memory: AtomicUsize::new(0),
            log: LogRate::default(),
            last_trap: Mutex::new(None),
            db_patch_bytes: AtomicUsize::new(crate::settings::ModLimits::default().db_patch_bytes),
            push_queue_bytes: AtomicUsize::new(crate::settings::ModLimits::default().push_queue_bytes),
            config: Arc::new(serde_json::Value::Object(serde_json::Map::new())),
            peers: std::sync::OnceLock::new(),
            follow: None,
        }
    }

    /// Log lines it wrote over its caps (dropped) since it was loaded.
    pub fn log_dropped(&self) -> u64 {
        self.log.dropped.load(Ordering::Relaxed)
    }

    /// Log bytes it wrote that reached the host's log since it was loaded (`modhost check` reports it).
    pub fn log_bytes(&self) -> u64 {
        self.log.logged.load(Ordering::Relaxed)
    }

    /// The whole text of the mod's last trap, backtrace included, if it trapped since it was loaded.
    pub fn last_trap(&self) -> Option<String> {
        self.last_trap.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(super) fn denied(&self, why: modhost_mods::Denied) -> Error {
        self.denials.fetch_add(1, Ordering::Relaxed);
        Error::Denied(format!("mod {}: {why}", self.id))
    }
}

/// wasmtime's `StoreLimits` (the per-instance caps), the server-wide memory budget, and what the
/// instance asked for: its largest memory, and why a growth failed (so a memory trap is told apart
/// from other traps, and a full budget from the mod's own cap).
pub(crate) struct Limiter {
    limits: StoreLimits,
    /// The budget and this store's charge against it: given back when the store drops.
    budget: Option<(Arc<MemoryBudget>, Charge)>,
    pub(crate) peak_memory: usize,
    /// A growth went past the instance's cap (or the pool's): the trap that follows is the mod's.
    pub(crate) over_cap: bool,
    /// A growth found no room in the budget within its wait: the call's failure is the server's.
    pub(crate) budget_full: Option<BudgetFull>,
    /// A growth waited for room: a deadline after it is the server's business too.
    pub(crate) budget_waited: bool,
}

impl Limiter {
    pub(crate) fn new(limits: StoreLimits, budget: Option<(Arc<MemoryBudget>, Arc<ModMemory>)>) -> Limiter {
        let budget = budget.map(|(budget, owner)| (budget, MemoryBudget::charge(owner)));
        Limiter { limits, budget, peak_memory: 0, over_cap: false, budget_full: None, budget_waited: false }
    }
}

#[async_trait::async_trait]
impl wasmtime::ResourceLimiterAsync for Limiter {
    async fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        use wasmtime::ResourceLimiter as _;
        self.peak_memory = self.peak_memory.max(desired);
        let allowed = self.limits.memory_growing(current, desired, maximum).inspect_err(|_| self.over_cap = true)?;
        if !allowed || maximum.is_some_and(|max| desired > max) {
            // Refused, or past the pool's slot: wasmtime fails the growth (and traps). Nothing to charge.
            self.over_cap = true;
            return Ok(allowed);
        }
        if let Some((budget, charge)) = &mut self.budget {
            // Marked before the wait: a call stopped at its deadline meanwhile is the server's failure.
            let before = std::mem::replace(&mut self.budget_waited, true);
            match budget.grow(charge, desired.saturating_sub(current)).await {
                Ok(waited) => self.budget_waited = before || waited,
                Err(full) => {
                    let message = full.to_string();
                    self.budget_full = Some(full);
                    return Err(wasmtime::Error::msg(message));
                }
            }
        }
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        use wasmtime::ResourceLimiter as _;
        self.over_cap = true;
        self.limits.memory_grow_failed(error)
    }

    async fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        use wasmtime::ResourceLimiter as _;
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        use wasmtime::ResourceLimiter as _;
        self.limits.table_grow_failed(error)
    }

    fn instances(&self) -> usize {
        use wasmtime::ResourceLimiter as _;
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        use wasmtime::ResourceLimiter as _;
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        use wasmtime::ResourceLimiter as _;
        self.limits.memories()
    }
}

/// The most random bytes one WASI `get-random-bytes` call may ask for; a larger ask traps.
const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// The data of one `Store`: one instance's view of the host.
pub(crate) struct CallState {
    pub(crate) cx: Arc<ModContext>,
    pub(crate) limits: Limiter,
    pub(crate) output: GuestOutput,
    /// Log bytes this call wrote (its cap is `logcap::BYTES_PER_CALL`); reset when a reused instance
    /// starts its next call.
    pub(crate) log_bytes: usize,
    /// `--perf` only: the time of this call's host calls, by phase.
    pub(crate) trace: Option<Trace>,
    /// What the running call is part of: its caller's frames, its session (`peers.rs`).
    pub(crate) chain: super::peers::Chain,
    /// Set when a store call of this call found the store unavailable (a shared store's database
    /// down): a call that then fails is the outage's, answered 503.
    pub(crate) store_unavailable: Option<String>,
    /// The running call's deadline, which `emit` pauses while subscribers run on their own
    /// (`deadline.rs`); none between calls and without limits.
    pub(crate) deadline: Option<Arc<super::deadline::Deadline>>,
    /// Set while the running call counts as long in its mod's share of the cores
    /// (`instance.rs`, `CpuShare`); dropping it gives the count back.
    pub(crate) long_call: Option<super::deadline::LongCall>,
    /// Built the first time the guest calls into WASI. Most handlers never do (a db read and an
    /// answer), and building one seeds two random generators and boxes a dozen streams: about a
    /// microsecond per fresh instance for nothing.
    wasi: Option<WasiCtx>,
    table: ResourceTable,
}

impl CallState {
    pub(crate) fn new(cx: Arc<ModContext>, limits: Limiter, output_bytes: usize) -> Self {
        let output = GuestOutput::new(output_bytes);
        CallState {
            cx,
            limits,
            output,
            log_bytes: 0,
            trace: None,
            chain: super::peers::Chain::default(),
            store_unavailable: None,
            deadline: None,
            long_call: None,
            wasi: None,
            table: ResourceTable::new(),
        }
    }

    /// A state whose WASI context the caller built: `modhost test-runner` gives a test binary inherited
    /// stdio and its arguments, which a mod never gets. Nothing is written to `output` then.
    pub(crate) fn with_wasi(cx: Arc<ModContext>, limits: StoreLimits, wasi: WasiCtx) -> Self {
        CallState {
            cx,
            limits: Limiter::new(limits, None),
            output: GuestOutput::new(0),
            log_bytes: 0,
            trace: None,
            chain: super::peers::Chain::default(),
            store_unavailable: None,
            deadline: None,
            long_call: None,
            wasi: Some(wasi),
            table: ResourceTable::new(),
        }
    }

    /// Resets what one call counts, before each call (a reused instance serves several), and sets
    /// the chain it runs in.
    pub(crate) fn begin_call(&mut self, chain: super::peers::Chain) {
        self.log_bytes = 0;
        self.store_unavailable = None;
        self.chain = chain;
        let limits = &mut self.limits;
        (limits.over_cap, limits.budget_full, limits.budget_waited) = (false, None, false);
    }

    /// Ends a call, whatever the instance's fate: what the chain holds (the frames, and the session
    /// locks a `call-for-session` took for it) is released now, not when the instance is dropped; a
    /// reused instance would otherwise keep another player's session locked while it sits idle. Its
    /// deadline goes too, and its count as a long call in its mod's share of the cores (an idle
    /// instance counted as running would slow its mod's other calls).
    pub(crate) fn end_call(&mut self) {
        self.chain = super::peers::Chain::default();
        self.deadline = None;
        self.long_call = None;
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
        // Random bytes are generated on the async worker inside the call: wasmtime's default of 64 MiB
        // per `get-random-bytes` holds a worker for tens of milliseconds; a seed needs 16 bytes.
        let ctx = self.wasi.get_or_insert_with(|| {
            WasiCtx::builder().stdout(output.clone()).stderr(output.clone()).max_random_size(MAX_RANDOM_BYTES).build()
        });
        WasiCtxView { ctx, table: &mut self.table }
    }
}

impl plugin::types::Host for CallState {}
