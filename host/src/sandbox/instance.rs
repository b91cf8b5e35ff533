//! [`LoadedMod`]: one compiled mod ready to run, and every call into it under its limits.
//!
//! By default each call gets a fresh instance from the mod's `InstancePre`: nothing survives from one
//! request (or player) to the next, so a mod cannot keep a cache that goes stale behind the store's
//! back. A mod whose manifest says `reuse = N` keeps instances for up to N calls; an instance that
//! trapped, ran out its deadline or returned an error is never reused.
//!
//! Every call: a memory and table cap (`StoreLimits`) and the server-wide memory budget (`budget.rs`),
//! a cap on bytes copied per host call, and an epoch deadline whose callback yields to tokio at every
//! tick and traps past the deadline. Instantiation (which runs the component's start code) has the
//! call deadline too, on the clock as well as on the epoch.
//!
//! Each call's outcome is counted by the mod's [`Quarantine`] (`quarantine.rs`); what a failed call
//! is, [`CallError`], is `call_error.rs`'s.

use super::bindings::full::exports::modhost::plugin::guest::{
    Declarations as WitDeclarations, Event, Guest, GuestIndices, Invocation, Phase as WitPhase, ResponseEdit, Verdict,
};
use super::bindings::full::exports::modhost::plugin::realtime::{
    AcceptVerdict, Fired, Guest as Realtime, GuestIndices as RealtimeIndices, Message,
    RealtimeDeclarations as WitRealtime,
};
use super::bindings::{MatchKind, Plugin, PluginIndices, Request, Response, Route};
use super::budget::{MemoryBudget, ModMemory};
use super::call_error::{Busy, CallError, MAX_REASON, describe_mod_error, instantiation_failed, panic_lines};
use super::deadline::{CpuShare, Deadline, LongCall, Pace};
use super::logcap;
use super::peers::Chain;
use super::quarantine::Quarantine;
use super::state::{CallState, Limiter, ModContext};
use crate::perf::{Phase, Trace};
use crate::settings::{EngineLimits, ModLimits};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::component::InstancePre;
use wasmtime::{Store, StoreLimitsBuilder, Trap, UpdateDeadline};

/// A mod ready to run.
pub struct LoadedMod {
    cx: Arc<ModContext>,
    pre: InstancePre<CallState>,
    /// Where `routes`, `init` and `handle` are among its exports.
    indices: PluginIndices,
    /// Where the `guest` export's functions are: only a mod of the `full` world has them.
    guest: Option<GuestIndices>,
    /// What it takes part in (hooks, topics, functions), answered by `declare` at load.
    declarations: OnceLock<modhost_mods::Declarations>,
    /// Where the `realtime` export's functions are: only a mod of the `full` world built for API
    /// 0.1.2 or later has them.
    realtime: Option<RealtimeIndices>,
    /// Its websocket routes and periodic timers, answered by `declare-realtime` at load.
    realtime_declarations: OnceLock<modhost_mods::RealtimeDeclarations>,
    limits: ModLimits,
    /// What the engine was built with: whether limits are enforced, the epoch tick, the wasm stack.
    engine: EngineLimits,
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
    /// As many again, for calls re-entering the mod from a chain it runs in when its share is full:
    /// such a chain holds one of the share's slots already (counted for it), and waiting for another
    /// could be waiting for itself. Taken without waiting; it bounds what re-entries may hold.
    reentry_slots: Arc<Semaphore>,
    /// Its strikes toward quarantine, and why it is quarantined once it is.
    quarantine: Quarantine,
    /// Its share of the server-wide memory budget and its counters there (none without limits).
    memory: Option<(Arc<MemoryBudget>, Arc<ModMemory>)>,
    /// Its share of the cores: its calls that run past an epoch tick are paced to `cpu_share` cores'
    /// worth between them (see [`CpuShare`]).
    cpu: Arc<CpuShare>,
    /// Its artifact's file name in the compile cache, which the cache keeps while it is loaded.
    pub(crate) artifact: Option<String>,
}

/// Lines of a trap's whole text (its wasm backtrace) logged.
const MAX_TRAP_LOG_LINES: usize = 64;

/// Idle instances one mod keeps for reuse; more are dropped, so one mod's burst cannot hold slots
/// other mods need.
const MAX_IDLE: usize = 8;

/// The longest a call nested in a chain (an event, a call) waits for its instance slots. Its chain
/// holds slots meanwhile (each caller its own), so chains waiting on each other's slots would wait
/// for their deadlines and be stopped, blamed; short, so the wait ends first and the caller gets an
/// error value it can answer with.
const NESTED_SLOT_WAIT: Duration = Duration::from_millis(250);

/// A live instance, the slot it holds, and the calls it has served.
struct Instance {
    store: Store<CallState>,
    bound: Bound,
    uses: u32,
    _slot: OwnedSemaphorePermit,
    own_slot: OwnSlot,
}

/// Which of its mod's slots an instance holds.
enum OwnSlot {
    /// One of the mod's share (`mod_instances`).
    Share { _permit: OwnedSemaphorePermit },
    /// One of the re-entries' (`reentry_slots`): never kept idle, so a later call that is no
    /// re-entry cannot run on it.
    Reentry { _permit: OwnedSemaphorePermit },
}

/// Where a call stands in its chain, which says how it may wait for its slots.
#[derive(Clone, Copy)]
enum Nesting {
    /// The chain's first call (a request's handler or hook, a timer, a socket's call, a load step):
    /// it holds no slot, so it waits up to its deadline.
    Root,
    /// Nested in a chain that does not run this mod: it waits [`NESTED_SLOT_WAIT`] at most.
    Nested,
    /// Nested in a chain that runs this mod already: its share is not waited for at all.
    Reentry,
}

/// An instance's exports: the `plugin` world's, loaded at instantiation, and the instance itself, for
/// the `guest` export, loaded only by the calls that use it (a request's `handle` never pays for it).
pub(super) struct Bound {
    plugin: Plugin,
    instance: wasmtime::component::Instance,
}

/// What a mod that declared nothing takes part in.
static NOTHING: modhost_mods::Declarations = modhost_mods::Declarations {
    hooks: Vec::new(),
    subscriptions: std::collections::BTreeSet::new(),
    functions: std::collections::BTreeSet::new(),
};

impl std::fmt::Debug for LoadedMod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedMod").field("id", &self.cx.id).field("reuse", &self.reuse).finish_non_exhaustive()
    }
}

impl LoadedMod {
    /// A mod of `pre`, which must export the `plugin` world (the `guest` export is optional).
    pub(crate) fn new(
        cx: Arc<ModContext>,
        pre: InstancePre<CallState>,
        limits: ModLimits,
        engine: EngineLimits,
        reuse: u32,
        slots: Arc<Semaphore>,
        memory: Option<(Arc<MemoryBudget>, Arc<ModMemory>)>,
    ) -> wasmtime::Result<Self> {
        let own_slots = Arc::new(Semaphore::new(limits.mod_instances.max(1) as usize));
        let reentry_slots = Arc::new(Semaphore::new(limits.mod_instances.max(1) as usize));
        let cpu = Arc::new(CpuShare::new(limits.cpu_share as usize));
        let indices = PluginIndices::new(&pre)?;
        let guest = GuestIndices::new(&pre).ok();
        let realtime = RealtimeIndices::new(&pre).ok();
        let quarantine = Quarantine::new(limits.quarantine_after, limits.quarantine_window);
        Ok(LoadedMod {
            cx,
            pre,
            indices,
            guest,
            declarations: OnceLock::new(),
            realtime,
            realtime_declarations: OnceLock::new(),
            limits,
            engine,
            reuse: reuse.max(1),
            idle: Mutex::new(Vec::new()),
            slots,
            own_slots,
            reentry_slots,
            quarantine,
            memory,
            cpu,
            artifact: None,
        })
    }

    /// What it takes part in: hooks, topics, functions (nothing until `declare` ran at load).
    pub fn declarations(&self) -> &modhost_mods::Declarations {
        self.declarations.get().unwrap_or(&NOTHING)
    }

    /// Its websocket routes and periodic timers (nothing until `declare-realtime` ran at load).
    pub fn realtime_declarations(&self) -> &modhost_mods::RealtimeDeclarations {
        static NONE: modhost_mods::RealtimeDeclarations =
            modhost_mods::RealtimeDeclarations { sockets: Vec::new(), timers: Vec::new() };
        self.realtime_declarations.get().unwrap_or(&NONE)
    }

    /// Whether it exports `guest` (it was built for the `full` world).
    pub fn has_guest(&self) -> bool {
        self.guest.is_some()
    }

    /// The shared context as an `Arc` (for the peers' registry).
    pub(crate) fn context_arc(&self) -> &Arc<ModContext> {
        &self.cx
    }

    /// What the mod may change beyond its own store namespace.
    pub fn grants(&self) -> &modhost_mods::Grants {
        &self.cx.grants
    }

    /// What it holds of the server-wide memory budget now, in bytes (0 under `--no-limits`).
    pub fn memory_in_use(&self) -> usize {
        self.memory.as_ref().map_or(0, |(_, m)| m.in_use.load(Ordering::Relaxed))
    }

    /// Its context: counters of denials and peak memory among them.
    pub fn context(&self) -> &ModContext {
        &self.cx
    }

    /// The limits this mod runs under.
    pub fn limits(&self) -> &ModLimits {
        &self.limits
    }

    /// What the engine it runs in was built with (the same for every mod).
    pub fn engine_limits(&self) -> &EngineLimits {
        &self.engine
    }

    /// Why the mod is quarantined, if it is.
    pub fn quarantined(&self) -> Option<String> {
        self.quarantine.reason()
    }

    /// Counts a call's outcome toward quarantine (`body`: the request body's length).
    fn tally<R>(&self, result: &Result<R, CallError>, body: usize) {
        self.quarantine.tally(&self.cx.id, result, body, self.limits.memory_bytes);
    }

    /// The mod's id.
    pub fn id(&self) -> &str {
        &self.cx.id
    }

    /// Asks the mod for its routes (at load).
    pub(crate) async fn routes(&self, chain: Chain) -> Result<Vec<Route>, CallError> {
        let deadline = self.limits.init_deadline;
        self.call(deadline, false, None, chain, async |store, bound| Ok(Ok(bound.plugin.call_routes(store).await?)))
            .await
    }

    /// Asks a mod of the `full` world what it takes part in (at load, after `routes`), and keeps the
    /// answer once `check` accepts it; a mod without the `guest` export declares nothing.
    pub(crate) async fn declare(
        &self,
        chain: Chain,
        check: impl FnOnce(&modhost_mods::Declarations) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let Some(indices) = &self.guest else { return Ok(()) };
        let deadline = self.limits.init_deadline;
        let declared = self
            .call(deadline, false, None, chain, async |store, bound| {
                let guest = indices.load(&mut *store, &bound.instance)?;
                Ok(Ok(guest.call_declare(store).await?))
            })
            .await?;
        let declarations = convert_declarations(declared);
        check(&declarations)?;
        let _ = self.declarations.set(declarations);
        Ok(())
    }

    /// Asks a mod with the `realtime` export for its socket routes and periodic timers (at load,
    /// after `declare`), and keeps the answer once it passes its checks; a mod without the export
    /// declares nothing.
    pub(crate) async fn declare_realtime(&self, chain: Chain) -> anyhow::Result<()> {
        let Some(indices) = &self.realtime else { return Ok(()) };
        let deadline = self.limits.init_deadline;
        let declared = self
            .call(deadline, false, None, chain, async |store, bound| {
                let realtime = indices.load(&mut *store, &bound.instance)?;
                Ok(Ok(realtime.call_declare_realtime(store).await?))
            })
            .await?;
        let declarations = convert_realtime(declared);
        declarations.check()?;
        let _ = self.realtime_declarations.set(declarations);
        Ok(())
    }

    /// Asks the mod whether to accept a websocket on one of its socket routes.
    pub(crate) async fn accept(
        &self,
        connection: &str,
        request: &Request,
        chain: Chain,
    ) -> Result<AcceptVerdict, CallError> {
        self.realtime_call(request.body.len(), chain, async move |store, realtime| {
            realtime.call_accept(store, connection, request).await
        })
        .await
    }

    /// Hands the mod one message of one of its connections.
    pub(crate) async fn on_message(&self, connection: &str, message: &Message, chain: Chain) -> Result<(), CallError> {
        let size = match message {
            Message::Text(text) => text.len(),
            Message::Binary(bytes) => bytes.len(),
        };
        self.realtime_call(size, chain, async move |store, realtime| {
            realtime.call_on_message(store, connection, message).await
        })
        .await
    }

    /// Tells the mod one of its connections closed.
    pub(crate) async fn on_close(
        &self,
        connection: &str,
        code: u16,
        reason: &str,
        chain: Chain,
    ) -> Result<(), CallError> {
        self.realtime_call(0, chain, async move |store, realtime| {
            realtime.call_on_close(store, connection, code, reason).await
        })
        .await
    }

    /// Runs one of its timers.
    pub(crate) async fn on_timer(&self, fired: &Fired, chain: Chain) -> Result<(), CallError> {
        self.realtime_call(fired.payload.len(), chain, async move |store, realtime| {
            realtime.call_on_timer(store, fired).await
        })
        .await
    }

    /// Runs the mod's `init` (at load).
    pub(crate) async fn init(&self, chain: Chain) -> Result<(), CallError> {
        let deadline = self.limits.init_deadline;
        self.call(deadline, false, None, chain, async |store, bound| bound.plugin.call_init(store).await).await
    }

    /// Answers one request. With a `trace` (`--perf`), the checkout, the guest's own time and each host
    /// call are added to it.
    pub(crate) async fn handle(
        &self,
        request: &Request,
        chain: Chain,
        trace: Option<&mut Trace>,
    ) -> Result<Response, CallError> {
        if let Some(reason) = self.quarantined() {
            return Err(CallError::Quarantined(reason));
        }
        let (deadline, body) = (self.limits.call_deadline, request.body.len());
        let result = self
            .call(deadline, true, trace, chain, async move |store, bound| {
                bound.plugin.call_handle(store, request).await
            })
            .await;
        self.tally(&result, body);
        result
    }

    /// Runs its before-hook on `hook` (the path as declared).
    pub(crate) async fn before(&self, hook: &str, request: &Request, chain: Chain) -> Result<Verdict, CallError> {
        self.guest_call(request.body.len(), chain, async move |store, guest| {
            guest.call_before(store, hook, request).await
        })
        .await
    }

    /// Runs its after-hook on `hook` over `response`.
    pub(crate) async fn after(
        &self,
        hook: &str,
        request: &Request,
        response: &Response,
        chain: Chain,
    ) -> Result<Option<ResponseEdit>, CallError> {
        self.guest_call(request.body.len(), chain, async move |store, guest| {
            guest.call_after(store, hook, request, response).await
        })
        .await
    }

    /// Delivers one event.
    pub(crate) async fn on_event(&self, event: &Event, chain: Chain) -> Result<(), CallError> {
        self.guest_call(event.payload.len(), chain, async move |store, guest| guest.call_on_event(store, event).await)
            .await
    }

    /// Runs one of its functions.
    pub(crate) async fn invoke(&self, invocation: &Invocation, chain: Chain) -> Result<Vec<u8>, CallError> {
        self.guest_call(invocation.payload.len(), chain, async move |store, guest| {
            guest.call_invoke(store, invocation).await
        })
        .await
    }

    /// A call into the `guest` export, with `handle`'s rules: the call deadline, reuse, quarantine,
    /// strikes (`input`: the size of what the caller passed, as a request body is for `handle`).
    async fn guest_call<R>(
        &self,
        input: usize,
        chain: Chain,
        f: impl AsyncFnOnce(&mut Store<CallState>, &Guest) -> wasmtime::Result<Result<R, super::bindings::Error>>,
    ) -> Result<R, CallError> {
        // Nothing is routed to a mod that declared nothing; a mod without `guest` declares nothing.
        let load = self
            .guest
            .as_ref()
            .map(|indices| move |store: &mut Store<CallState>, instance: &_| indices.load(store, instance));
        self.export_call("guest", load, input, chain, f).await
    }

    /// A call into the `realtime` export, with `handle`'s rules, as [`Self::guest_call`].
    async fn realtime_call<R>(
        &self,
        input: usize,
        chain: Chain,
        f: impl AsyncFnOnce(&mut Store<CallState>, &Realtime) -> wasmtime::Result<Result<R, super::bindings::Error>>,
    ) -> Result<R, CallError> {
        let load = self
            .realtime
            .as_ref()
            .map(|indices| move |store: &mut Store<CallState>, instance: &_| indices.load(store, instance));
        self.export_call("realtime", load, input, chain, f).await
    }

    /// A call into an optional export (`load` finds it in an instance; none: the mod lacks it).
    async fn export_call<E, R>(
        &self,
        export: &str,
        load: Option<impl FnOnce(&mut Store<CallState>, &wasmtime::component::Instance) -> wasmtime::Result<E>>,
        input: usize,
        chain: Chain,
        f: impl AsyncFnOnce(&mut Store<CallState>, &E) -> wasmtime::Result<Result<R, super::bindings::Error>>,
    ) -> Result<R, CallError> {
        if let Some(reason) = self.quarantined() {
            return Err(CallError::Quarantined(reason));
        }
        let Some(load) = load else {
            let reason = format!("the mod does not export `{export}`");
            return Err(CallError::Mod { status: 500, message: reason.clone(), reason });
        };
        let result = self
            .call(self.limits.call_deadline, true, None, chain, async move |store, bound| {
                let exported = load(&mut *store, &bound.instance)?;
                f(store, &exported).await
            })
            .await;
        self.tally(&result, input);
        result
    }

    async fn call<R>(
        &self,
        deadline: Duration,
        reusable: bool,
        trace: Option<&mut Trace>,
        chain: Chain,
        f: impl AsyncFnOnce(&mut Store<CallState>, &Bound) -> wasmtime::Result<Result<R, super::bindings::Error>>,
    ) -> Result<R, CallError> {
        let reusable = reusable && self.reuse > 1;
        let checkout = trace.is_some().then(Instant::now);
        let nesting = match (chain.nested(), chain.reenters(self.id())) {
            (false, _) => Nesting::Root,
            (true, false) => Nesting::Nested,
            (true, true) => Nesting::Reentry,
        };
        let mut instance = match reusable.then(|| self.take_idle()).flatten() {
            Some(idle) => idle,
            None => self.instantiate(nesting).await?,
        };
        let started = checkout.map(|t| {
            instance.store.data_mut().trace = Some(Trace::default());
            (t, Instant::now())
        });
        instance.store.data_mut().begin_call(chain);

        // The epoch deadline stops a guest running wasm; the clock around the call also stops a guest
        // waiting inside an async WASI call (a sleep, a poll), which never reaches an epoch check.
        // Both read one `Deadline`, which `emit` pauses while subscribers run on their own deadlines
        // (`deadline.rs`). Dropping the call's future cancels it; the instance is then dropped with it.
        let result = if self.engine.enforce {
            let clock = Deadline::start(deadline);
            let pace = Pace { cpu: self.cpu.clone(), tick: self.engine.epoch_tick };
            arm(&mut instance.store, clock.clone(), Some(pace));
            instance.store.data_mut().deadline = Some(clock.clone());
            clock.run(2 * self.engine.epoch_tick, f(&mut instance.store, &instance.bound)).await
        } else {
            Ok(f(&mut instance.store, &instance.bound).await)
        };
        instance.store.data_mut().end_call();
        if let (Some(trace), Some((checkout, call))) = (trace, started) {
            let host = instance.store.data_mut().trace.take().unwrap_or_default();
            trace.add(Phase::Checkout, call - checkout);
            trace.add(Phase::Guest, call.elapsed().saturating_sub(host.host_calls()));
            trace.merge(&host);
        }
        // The call is over: it no longer counts against its mod's share of the cores (an idle instance
        // kept for reuse must not).
        instance.store.data_mut().long_call = None;
        let output = instance.store.data().output.take();
        self.log_output(&mut instance.store.data_mut().log_bytes, &output);
        let limiter = &instance.store.data().limits;
        self.cx.peak_memory.fetch_max(limiter.peak_memory, Ordering::Relaxed);

        let Ok(result) = result else {
            return Err(match limiter.budget_waited {
                true => CallError::Busy(Busy::MemoryThenDeadline(deadline)),
                false => CallError::Deadline(deadline),
            });
        };
        match result {
            Ok(Ok(value)) => {
                instance.uses += 1;
                if reusable && instance.uses < self.reuse && matches!(instance.own_slot, OwnSlot::Share { .. }) {
                    let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                    if idle.len() < MAX_IDLE {
                        idle.push(instance);
                    }
                }
                Ok(value)
            }
            // A failure after the store was found unavailable is the outage's (503), whatever the
            // mod made of the store's error.
            Ok(Err(_)) | Err(_) if let Some(outage) = instance.store.data().store_unavailable.clone() => {
                Err(CallError::Busy(Busy::Store(outage)))
            }
            Ok(Err(mod_error)) => Err(describe_mod_error(&mod_error)),
            Err(trap) => Err(self.classify_trap(&trap, limiter, deadline, &output)),
        }
    }

    /// What a trap means: the server's (a full budget), a deadline, or the mod's own trap, whose whole
    /// text goes to the log (cut and escaped: a backtrace carries the mod's function names) and to
    /// `ModContext::last_trap`, and whose one-line reason goes to the client.
    fn classify_trap(
        &self,
        error: &wasmtime::Error,
        limiter: &Limiter,
        deadline: Duration,
        output: &[u8],
    ) -> CallError {
        if let Some(full) = &limiter.budget_full {
            return CallError::Busy(Busy::Memory(full.clone()));
        }
        if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
            return match limiter.budget_waited {
                true => CallError::Busy(Busy::MemoryThenDeadline(deadline)),
                false => CallError::Deadline(deadline),
            };
        }
        let whole = format!("{error:?}");
        let id = &self.cx.id;
        for line in whole.lines().take(MAX_TRAP_LOG_LINES) {
            tracing::warn!(target: "mod", "[{id}] trap | {}", logcap::clean(line, logcap::MAX_LINE));
        }
        *self.cx.last_trap.lock().unwrap_or_else(PoisonError::into_inner) = Some(whole);
        let root = error.root_cause().to_string();
        let reason = logcap::clean(root.lines().next().unwrap_or("a trap"), MAX_REASON);
        CallError::Trap { reason, stderr: panic_lines(output), memory: limiter.over_cap }
    }

    fn take_idle(&self) -> Option<Instance> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    /// Takes this mod's slot, then one of the pool's, as `nesting` allows (see [`Nesting`]).
    async fn slots(&self, nesting: Nesting) -> Result<(OwnSlot, OwnedSemaphorePermit), CallError> {
        let deadline = self.limits.call_deadline;
        let wait = match nesting {
            Nesting::Root => deadline,
            Nesting::Nested | Nesting::Reentry => NESTED_SLOT_WAIT.min(deadline),
        };
        let busy = || match nesting {
            Nesting::Root => CallError::Busy(Busy::Slots(wait)),
            Nesting::Nested | Nesting::Reentry => CallError::Busy(Busy::NestedSlots(wait)),
        };
        // A re-entry never waits for its mod's share: its chain holds one of those slots, and 64
        // chains re-entering a mod with a share of 64 would each wait for the others to end.
        let own = match nesting {
            Nesting::Reentry => match self.own_slots.clone().try_acquire_owned() {
                Ok(own) => Some(OwnSlot::Share { _permit: own }),
                Err(_) => match self.reentry_slots.clone().try_acquire_owned() {
                    Ok(own) => Some(OwnSlot::Reentry { _permit: own }),
                    Err(_) => {
                        let (module, share) = (self.cx.id.to_string(), self.limits.mod_instances);
                        return Err(CallError::Busy(Busy::Reentry { module, share }));
                    }
                },
            },
            Nesting::Root | Nesting::Nested => None,
        };
        // This mod's share first (unless taken above), then a slot of the pool, both within one wait.
        let slots = async {
            let own = match own {
                Some(own) => own,
                None => OwnSlot::Share { _permit: self.own_slots.clone().acquire_owned().await? },
            };
            let pool = self.slots.clone().acquire_owned().await?;
            Ok::<_, tokio::sync::AcquireError>((own, pool))
        };
        match tokio::time::timeout(wait, slots).await {
            Ok(Ok(slots)) => Ok(slots),
            // The semaphores are never closed; treat that like a full pool all the same.
            Ok(Err(_)) | Err(_) => Err(busy()),
        }
    }

    async fn instantiate(&self, nesting: Nesting) -> Result<Instance, CallError> {
        let wait = self.limits.call_deadline;
        let (own_slot, slot) = self.slots(nesting).await?;
        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory_bytes)
            .table_elements(self.limits.table_elements)
            .trap_on_grow_failure(true)
            .build();
        let limiter = Limiter::new(limits, self.memory.clone());
        let state = CallState::new(self.cx.clone(), limiter, self.limits.output_bytes);
        let mut store = Store::new(self.pre.component().engine(), state);
        let instantiating = if self.engine.enforce {
            store.limiter_async(|s| &mut s.limits);
            store.set_hostcall_fuel(self.limits.hostcall_bytes);
            // Instantiation runs the guest's start code too: give it the call deadline, on the epoch
            // for wasm that runs and on the clock for start code waiting in WASI, where no epoch check
            // runs (a start function that sleeps would otherwise hold the boot or a reload forever).
            arm_deadline(&mut store, wait);
            let grace = wait + 2 * self.engine.epoch_tick;
            tokio::time::timeout(grace, self.pre.instantiate_async(&mut store)).await
        } else {
            Ok(self.pre.instantiate_async(&mut store).await)
        };
        let instance = match instantiating {
            Ok(Ok(instance)) => instance,
            Ok(Err(e)) => return Err(instantiation_failed(&e, &store.data().limits, wait)),
            Err(_) => {
                return Err(CallError::Instantiate(format!(
                    "its start code ran past the deadline of {} ms",
                    wait.as_millis()
                )));
            }
        };
        let plugin = self.indices.load(&mut store, &instance).map_err(|e| CallError::Instantiate(e.to_string()))?;
        Ok(Instance { store, bound: Bound { plugin, instance }, uses: 0, _slot: slot, own_slot })
    }

    /// Logs a call's stdout/stderr under the mod's id, line by line, cleaned and within its log caps.
    fn log_output(&self, used: &mut usize, output: &[u8]) {
        if output.is_empty() {
            return;
        }
        let id = &self.cx.id;
        for line in String::from_utf8_lossy(output).lines() {
            if self.cx.log.admit(id, used, line.len().min(logcap::MAX_LINE)) {
                tracing::info!(target: "mod", "[{id}] {}", logcap::clean(line, logcap::MAX_LINE));
            }
        }
    }
}

/// At every epoch tick the guest yields to tokio; past `deadline` it traps with `Trap::Interrupt`
/// (`deadline::arm`, with a deadline nothing pauses: instantiation, a command).
pub(super) fn arm_deadline(store: &mut Store<CallState>, deadline: Duration) {
    arm(store, Deadline::start(deadline), None);
}

/// At every epoch tick the guest yields to tokio; past `deadline` it traps with `Trap::Interrupt`.
/// With `pace`, a call still running at a tick counts as long in its mod's share of the cores, and
/// while its mod has more long calls than its share it pauses about one tick for each share's worth
/// of the others, never past its deadline.
///
/// The yield is `tokio::task::yield_now`, not wasmtime's plain `Yield`: a task that wakes itself is put
/// in tokio's LIFO slot and polled again at once, so a looping guest would starve the other tasks on its
/// worker; `yield_now` defers the wake-up until the worker has run the others.
fn arm(store: &mut Store<CallState>, deadline: Arc<Deadline>, pace: Option<Pace>) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |mut cx| {
        // Paused: the guest is not running wasm (it waits in a host call), so this is not reached;
        // if it were, it would not be the guest's time either.
        let now = Instant::now();
        let Some(stop_at) = deadline.stop_at() else {
            return Ok(UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now())));
        };
        if now >= stop_at {
            return Ok(UpdateDeadline::Interrupt);
        }
        let Some(Pace { cpu, tick }) = &pace else {
            return Ok(UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now())));
        };
        let state = cx.data_mut();
        if state.long_call.is_none() {
            state.long_call = Some(LongCall::new(cpu));
        }
        let Some(turns) = cpu.turns_to_wait() else {
            return Ok(UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now())));
        };
        let pause = tick.saturating_mul(turns).min(stop_at - now);
        Ok(UpdateDeadline::YieldCustom(1, Box::pin(tokio::time::sleep(pause))))
    });
}

/// The WIT's declarations as the engine checks them.
fn convert_declarations(declared: WitDeclarations) -> modhost_mods::Declarations {
    let hooks = declared
        .hooks
        .into_iter()
        .map(|h| modhost_mods::HookSpec {
            path: h.route.path,
            prefix: matches!(h.route.kind, MatchKind::Prefix),
            phase: match h.phase {
                WitPhase::Before => modhost_mods::Phase::Before,
                WitPhase::After => modhost_mods::Phase::After,
            },
            priority: h.priority,
            body: h.body,
        })
        .collect();
    modhost_mods::Declarations {
        hooks,
        subscriptions: declared.subscriptions.into_iter().collect(),
        functions: declared.functions.into_iter().collect(),
    }
}

/// The WIT's realtime declarations as the engine checks them.
fn convert_realtime(declared: WitRealtime) -> modhost_mods::RealtimeDeclarations {
    modhost_mods::RealtimeDeclarations {
        sockets: declared
            .sockets
            .into_iter()
            .map(|r| modhost_mods::SocketRoute { path: r.path, prefix: matches!(r.kind, MatchKind::Prefix) })
            .collect(),
        timers: declared
            .timers
            .into_iter()
            .map(|t| modhost_mods::Periodic { name: t.name, every_s: t.every_s })
            .collect(),
    }
}
