//! [`LoadedMod`]: one compiled mod ready to run, and every call into it under its limits.
//!
//! By default each call gets a fresh instance from the mod's `InstancePre`: nothing survives from one
//! request (or player) to the next, so a mod cannot keep a cache that goes stale behind the store's
//! back. A mod whose manifest says `reuse = N` keeps instances for up to N calls; an instance that
//! trapped, ran out its deadline or returned an error is never reused.
//!
//! Every call: a memory and table cap (`StoreLimits`), a cap on bytes copied per host call, and an
//! epoch deadline whose callback yields to tokio at every tick and traps past the deadline.

use super::bindings::{Plugin, PluginPre, Request, Response, Route};
use super::state::{CallState, ModContext};
use crate::config::Limits;
use crate::perf::{Phase, Trace};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::{Store, StoreLimitsBuilder, Trap, UpdateDeadline};

/// Why a call into a mod did not produce an answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The mod returned its own error value; `status` is the HTTP status its kind maps to (`invalid`
    /// 400, `not-found` 404, `denied` 403, `conflict` 409, `too-large` 413, anything else 500).
    #[error("the mod returned an error: {message}")]
    Mod { status: u16, message: String },
    /// The call ran past its deadline and was stopped.
    #[error("the mod ran past its deadline of {} ms and was stopped", .0.as_millis())]
    Deadline(Duration),
    /// The guest trapped (a panic, a memory cap, an out-of-bounds access…).
    #[error("the mod trapped: {reason}{}", stderr_suffix(.stderr))]
    Trap { reason: String, stderr: String },
    /// The instance could not be created.
    #[error("the mod could not be instantiated: {0}")]
    Instantiate(String),
    /// Every instance slot stayed taken for the whole wait.
    #[error("every instance slot stayed busy for {} ms", .0.as_millis())]
    Busy(Duration),
    /// The mod failed too many calls in a row and is stopped until it is loaded again.
    #[error("the mod is quarantined: {0}")]
    Quarantined(String),
}

impl CallError {
    /// Whether this failure counts toward quarantine: the guest itself broke (a trap, a deadline),
    /// not an error value it chose to return or a full pool.
    fn is_strike(&self) -> bool {
        matches!(self, CallError::Trap { .. } | CallError::Deadline(_) | CallError::Instantiate(_))
    }
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!(" (its output ended: {stderr})") }
}

/// A mod ready to run.
pub struct LoadedMod {
    cx: Arc<ModContext>,
    pre: PluginPre<CallState>,
    limits: Limits,
    /// Calls per instance before it is dropped; 1 means a fresh instance per call.
    reuse: u32,
    /// Idle instances kept for reuse (at most [`MAX_IDLE`]).
    idle: Mutex<Vec<Instance>>,
    /// The instance slots of the whole runtime, shared by every mod: one permit per live instance, so
    /// a request waits for a slot instead of failing when the pooling allocator is full.
    slots: Arc<Semaphore>,
    /// This mod's own share of the slots (`mod_instances`), taken first: a mod whose calls hang fills
    /// its share, never the whole pool.
    own_slots: Arc<Semaphore>,
    /// Failed calls in a row (traps, deadlines), and why the mod is quarantined once there were
    /// `quarantine_after` of them.
    strikes: AtomicU32,
    quarantine: Mutex<Option<String>>,
    /// Whether `quarantine` is set: every request asks, and an atomic load answers without the lock.
    is_quarantined: AtomicBool,
}

/// Idle instances one mod keeps for reuse; more are dropped, so one mod's burst cannot hold slots
/// other mods need.
const MAX_IDLE: usize = 8;

/// A live instance, the slot it holds, and the calls it has served.
struct Instance {
    store: Store<CallState>,
    plugin: Plugin,
    uses: u32,
    _slot: OwnedSemaphorePermit,
    _own_slot: OwnedSemaphorePermit,
}

impl std::fmt::Debug for LoadedMod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedMod").field("id", &self.cx.id).field("reuse", &self.reuse).finish_non_exhaustive()
    }
}

impl LoadedMod {
    pub(crate) fn new(
        cx: Arc<ModContext>,
        pre: PluginPre<CallState>,
        limits: Limits,
        reuse: u32,
        slots: Arc<Semaphore>,
    ) -> Self {
        let own_slots = Arc::new(Semaphore::new(limits.mod_instances.max(1) as usize));
        LoadedMod {
            cx,
            pre,
            limits,
            reuse: reuse.max(1),
            idle: Mutex::new(Vec::new()),
            slots,
            own_slots,
            strikes: AtomicU32::new(0),
            quarantine: Mutex::new(None),
            is_quarantined: AtomicBool::new(false),
        }
    }

    /// What the mod may change beyond its own store namespace.
    pub fn grants(&self) -> &modhost_mods::Grants {
        &self.cx.grants
    }

    /// Its context: counters of denials and peak memory among them.
    pub fn context(&self) -> &ModContext {
        &self.cx
    }

    /// The limits this mod runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Why the mod is quarantined, if it is.
    pub fn quarantined(&self) -> Option<String> {
        if !self.is_quarantined.load(Ordering::Acquire) {
            return None;
        }
        self.quarantine.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Counts a call's outcome toward quarantine: a strike for a broken guest, a reset for anything else.
    fn tally<R>(&self, result: &Result<R, CallError>) {
        match result {
            Err(e) if e.is_strike() => {
                let strikes = self.strikes.fetch_add(1, Ordering::Relaxed) + 1;
                let limit = self.limits.quarantine_after;
                if limit > 0 && strikes >= limit {
                    let reason = format!("{strikes} calls in a row failed; the last: {e}");
                    tracing::error!("mod {} quarantined until it is loaded again: {reason}", self.cx.id);
                    *self.quarantine.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
                    self.is_quarantined.store(true, Ordering::Release);
                }
            }
            _ => self.strikes.store(0, Ordering::Relaxed),
        }
    }

    /// The mod's id.
    pub fn id(&self) -> &str {
        &self.cx.id
    }

    /// Asks the mod for its routes (at load).
    pub(crate) async fn routes(&self) -> Result<Vec<Route>, CallError> {
        let deadline = self.limits.init_deadline;
        self.call(deadline, false, None, async |store, plugin| Ok(Ok(plugin.call_routes(store).await?))).await
    }

    /// Runs the mod's `init` (at load).
    pub(crate) async fn init(&self) -> Result<(), CallError> {
        let deadline = self.limits.init_deadline;
        self.call(deadline, false, None, async |store, plugin| plugin.call_init(store).await).await
    }

    /// Answers one request. With a `trace` (`--perf`), the checkout, the guest's own time and each host
    /// call are added to it.
    pub(crate) async fn handle(&self, request: Request, trace: Option<&mut Trace>) -> Result<Response, CallError> {
        if let Some(reason) = self.quarantined() {
            return Err(CallError::Quarantined(reason));
        }
        let deadline = self.limits.call_deadline;
        let result = self
            .call(deadline, true, trace, async move |store, plugin| plugin.call_handle(store, &request).await)
            .await;
        self.tally(&result);
        result
    }

    async fn call<R>(
        &self,
        deadline: Duration,
        reusable: bool,
        trace: Option<&mut Trace>,
        f: impl AsyncFnOnce(&mut Store<CallState>, &Plugin) -> wasmtime::Result<Result<R, super::bindings::Error>>,
    ) -> Result<R, CallError> {
        let reusable = reusable && self.reuse > 1;
        let checkout = trace.is_some().then(Instant::now);
        let mut instance = match reusable.then(|| self.take_idle()).flatten() {
            Some(idle) => idle,
            None => self.instantiate().await?,
        };
        let started = checkout.map(|t| {
            instance.store.data_mut().trace = Some(Trace::default());
            (t, Instant::now())
        });

        // The epoch deadline stops a guest running wasm; the timeout also stops a guest waiting inside
        // an async WASI call (a sleep, a poll), which never reaches an epoch check. Dropping the call's
        // future cancels it; the instance is then dropped with it.
        let result = if self.limits.enforce {
            arm_deadline(&mut instance.store, deadline);
            let grace = deadline + 2 * self.limits.epoch_tick;
            tokio::time::timeout(grace, f(&mut instance.store, &instance.plugin)).await
        } else {
            Ok(f(&mut instance.store, &instance.plugin).await)
        };
        if let (Some(trace), Some((checkout, call))) = (trace, started) {
            let host = instance.store.data_mut().trace.take().unwrap_or_default();
            trace.add(Phase::Checkout, call - checkout);
            trace.add(Phase::Guest, call.elapsed().saturating_sub(host.host_calls()));
            trace.merge(&host);
        }
        let output = instance.store.data().output.take();
        self.log_output(&output);
        self.cx.peak_memory.fetch_max(instance.store.data().limits.peak_memory, Ordering::Relaxed);

        let Ok(result) = result else {
            return Err(CallError::Deadline(deadline));
        };
        match result {
            Ok(Ok(value)) => {
                instance.uses += 1;
                if reusable && instance.uses < self.reuse {
                    let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                    if idle.len() < MAX_IDLE {
                        idle.push(instance);
                    }
                }
                Ok(value)
            }
            Ok(Err(mod_error)) => Err(describe_mod_error(&mod_error)),
            Err(trap) => Err(classify_trap(&trap, deadline, &output)),
        }
    }

    fn take_idle(&self) -> Option<Instance> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    async fn instantiate(&self) -> Result<Instance, CallError> {
        let wait = self.limits.call_deadline;
        // This mod's share first, then a slot of the pool, both within one wait.
        let slots = async {
            let own = self.own_slots.clone().acquire_owned().await?;
            let pool = self.slots.clone().acquire_owned().await?;
            Ok::<_, tokio::sync::AcquireError>((own, pool))
        };
        let (own_slot, slot) = match tokio::time::timeout(wait, slots).await {
            Ok(Ok(slots)) => slots,
            // The semaphores are never closed; treat that like a full pool all the same.
            Ok(Err(_)) | Err(_) => return Err(CallError::Busy(wait)),
        };
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .table_elements(self.limits.table_elements)
            .trap_on_grow_failure(true)
            .build();
        let state = CallState::new(self.cx.clone(), limits, self.limits.output_bytes);
        let mut store = Store::new(self.pre.engine(), state);
        if self.limits.enforce {
            store.limiter(|s| &mut s.limits);
            store.set_hostcall_fuel(self.limits.hostcall_bytes);
            // Instantiation runs the guest's start code too: give it the call deadline.
            arm_deadline(&mut store, self.limits.call_deadline);
        }
        let plugin =
            self.pre.instantiate_async(&mut store).await.map_err(|e| CallError::Instantiate(format!("{e:#}")))?;
        Ok(Instance { store, plugin, uses: 0, _slot: slot, _own_slot: own_slot })
    }

    fn log_output(&self, output: &[u8]) {
        if output.is_empty() {
            return;
        }
        self.cx.logged.fetch_add(output.len() as u64, Ordering::Relaxed);
        for line in String::from_utf8_lossy(output).lines() {
            tracing::info!(target: "mod", "[{}] {line}", self.cx.id);
        }
    }
}

/// At every epoch tick the guest yields to tokio; past `deadline` it traps with `Trap::Interrupt`.
///
/// The yield is `tokio::task::yield_now`, not wasmtime's plain `Yield`: a task that wakes itself is put
/// in tokio's LIFO slot and polled again at once, so a looping guest would starve the other tasks on its
/// worker; `yield_now` defers the wake-up until the worker has run the others.
pub(super) fn arm_deadline(store: &mut Store<CallState>, deadline: Duration) {
    let stop_at = Instant::now() + deadline;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= stop_at {
            Ok(UpdateDeadline::Interrupt)
        } else {
            Ok(UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now())))
        }
    });
}

/// A mod's error value, with the HTTP status its kind means: the mod's own words about the request
/// (bad input, nothing there, not allowed) reach the client as a 4xx, not as a server failure.
fn describe_mod_error(e: &super::bindings::Error) -> CallError {
    use super::bindings::modhost::plugin::types::Error::*;
    let (status, message) = match e {
        NotFound(m) => (404, format!("not found: {m}")),
        Invalid(m) => (400, format!("invalid: {m}")),
        WrongKind(m) => (500, format!("wrong kind: {m}")),
        Unreadable(m) => (500, format!("unreadable: {m}")),
        TooLarge(m) => (413, format!("too large: {m}")),
        Denied(m) => (403, format!("denied: {m}")),
        Conflict(m) => (409, format!("conflict: {m}")),
        Io(m) => (500, format!("i/o: {m}")),
        Failed(m) => (500, m.clone()),
    };
    CallError::Mod { status, message }
}

fn classify_trap(error: &wasmtime::Error, deadline: Duration, output: &[u8]) -> CallError {
    if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
        return CallError::Deadline(deadline);
    }
    // The last lines a guest wrote before trapping usually say why (a Rust panic prints its message).
    let tail_start = output.len().saturating_sub(1024);
    let stderr = String::from_utf8_lossy(&output[tail_start..]).trim().to_owned();
    CallError::Trap { reason: format!("{error:#}"), stderr }
}
