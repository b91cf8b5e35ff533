//! Running mods: the wasmtime engine, compiling components (with a cache), instances and their limits,
//! and the thin glue that exposes the host's WIT interfaces (db, store, log, config, mods, push,
//! sockets, timers) to guests.
//!
//! Layout:
//! - `bindings`: the two `bindgen!`s: the `plugin` world's, and the `full` world's for its optional
//!   `guest` and `realtime` exports alone (its imports map to the `plugin` bindings).
//! - `engine`: engine configuration (pooling allocator, epochs) and the epoch ticker.
//! - `compile`: compile or load a cached precompiled artifact.
//! - `state`: the per-`Store` data ([`ModContext`], `CallState`) and the memory limiter.
//! - `budget`: the server-wide budget of guest linear memory, charged by the limiter.
//! - `logcap`: what a mod may put into the host log (caps per call and per second, escaping).
//! - `db`, `store`, `log`, `config`, `mods`, `push`, `sockets`, `timers`: the `Host` impl of each WIT
//!   interface, one file each (engine errors → WIT errors, grants checked first). `config` is the
//!   mod's own configuration, the player's per-mod settings, not the server's (`crate::settings`).
//! - `output`: a mod's stdout/stderr, bounded, into the host log.
//! - `instance`: [`LoadedMod`], one call under limits; fresh instance per call or opt-in reuse.
//! - `deadline`: one call's deadline, which `emit` pauses while subscribers run on their own, and a
//!   mod's share of the cores that paces its long calls.
//! - `call_error`: [`CallError`], why a call produced no answer, and the conversions that make one.
//! - `quarantine`: a mod's strikes per cause and why it is stopped once it has too many.
//! - `peers`: [`Peers`], a generation's mods as events and calls reach them, and the [`Chain`] a call
//!   runs in.
//! - `command`: [`Runtime::run_command`], a WASI command (a mod's test binary) against the same linker.
//!
//! The session locks and the realtime parts a call reaches are the server's, handed to [`Runtime::new`].

mod bindings;
mod budget;
mod call_error;
mod command;
mod compile;
mod config;
mod db;
mod deadline;
mod engine;
mod instance;
mod log;
mod logcap;
mod mods;
mod output;
mod peers;
mod push;
mod quarantine;
mod sockets;
mod state;
mod store;
mod timers;

pub(crate) use bindings::full::exports::modhost::plugin::guest::Verdict;
pub(crate) use bindings::full::exports::modhost::plugin::realtime::{AcceptVerdict, Fired, Message as SocketMessage};
pub(crate) use bindings::{Chunk, MatchKind as WitMatchKind, Request, Response};
pub(crate) use budget::{MemoryBudget, ModUsage};
pub(crate) use call_error::{Busy, CallError};
pub use command::CommandExit;
pub use compile::CompileSource;
pub use instance::LoadedMod;
pub use state::ModContext;

use crate::settings::{EngineLimits, ModLimits};
use bindings::Plugin;
pub(crate) use peers::{Chain, Peers, Step};
use state::CallState;
use std::path::PathBuf;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::error::Context as _;

/// The engine, the linker every mod is instantiated against, and the epoch ticker.
pub(crate) struct Runtime {
    engine: wasmtime::Engine,
    linker: Linker<CallState>,
    /// What the engine and its pool were built with.
    limits: EngineLimits,
    cache_dir: Option<PathBuf>,
    /// One permit per live instance, across all mods: the pooling allocator's size.
    slots: Arc<tokio::sync::Semaphore>,
    /// The server-wide budget of guest linear memory (none under `--no-limits`).
    budget: Option<Arc<MemoryBudget>>,
    /// The per-session locks, the server's (shared by every generation): the front takes a
    /// request's, a `call-for-session` another's.
    sessions: Arc<crate::session::SessionLocks>,
    /// The notifier, mods' sockets and timers, the server's (shared by every generation like the
    /// session locks).
    realtime: Arc<crate::realtime::Realtime>,
    _ticker: engine::EpochTicker,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("limits", &self.limits)
            .field("cache_dir", &self.cache_dir)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Builds the engine and linker. `cache_dir` holds precompiled artifacts (none: always compile).
    /// `sessions` and `realtime` are the server's, made by whoever builds it: calls reach them (a
    /// `call-for-session` takes another session's lock, a push reaches the hub, a mod schedules timers).
    pub(crate) fn new(
        limits: EngineLimits,
        cache_dir: Option<PathBuf>,
        sessions: Arc<crate::session::SessionLocks>,
        realtime: Arc<crate::realtime::Realtime>,
    ) -> anyhow::Result<Runtime> {
        Ok(Self::build(limits, cache_dir, sessions, realtime)?)
    }

    fn build(
        limits: EngineLimits,
        cache_dir: Option<PathBuf>,
        sessions: Arc<crate::session::SessionLocks>,
        realtime: Arc<crate::realtime::Realtime>,
    ) -> wasmtime::Result<Runtime> {
        let engine = engine::build(&limits).context("configuring the wasm engine")?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).context("linking WASI")?;
        Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).context("linking the plugin world")?;
        let ticker = engine::EpochTicker::start(&engine, limits.epoch_tick)
            .map_err(wasmtime::Error::from)
            .context("starting the epoch ticker")?;
        let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_instances as usize));
        let budget = limits.enforce.then(|| {
            let bytes = limits.guest_memory_bytes.unwrap_or_else(|| budget::default_bytes(limits.memory_bytes));
            tracing::info!("guest memory budget: {} MiB across all instances", bytes >> 20);
            Arc::new(MemoryBudget::new(bytes, limits.memory_bytes, limits.memory_wait))
        });
        Ok(Runtime { engine, linker, limits, cache_dir, slots, budget, sessions, realtime, _ticker: ticker })
    }

    /// The per-session locks it was given.
    pub(crate) fn sessions(&self) -> &Arc<crate::session::SessionLocks> {
        &self.sessions
    }

    /// The notifier, mods' sockets and timers it was given.
    pub(crate) fn realtime(&self) -> &Arc<crate::realtime::Realtime> {
        &self.realtime
    }

    /// The server-wide memory budget, with what each mod holds (none under `--no-limits`).
    pub(crate) fn budget(&self) -> Option<&Arc<MemoryBudget>> {
        self.budget.as_ref()
    }

    /// Deletes the compile cache's artifacts that none of `keep` (file names of loaded mods'
    /// artifacts) names, and temp files left by a crash: the cache holds what the serving mods use.
    pub(crate) fn prune_cache<'a>(&self, keep: impl IntoIterator<Item = &'a str>) {
        if let Some(dir) = &self.cache_dir {
            compile::prune(dir, &keep.into_iter().collect());
        }
    }

    /// Compiles (or loads from the cache) and links one mod. `reuse` is its manifest's `reuse`;
    /// `limits` are the ones the player set for it (within what the engine was built for).
    pub(crate) fn load(
        &self,
        wasm: &[u8],
        cx: Arc<ModContext>,
        reuse: u32,
        limits: ModLimits,
    ) -> anyhow::Result<(LoadedMod, CompileSource)> {
        cx.db_patch_bytes.store(limits.db_patch_bytes, std::sync::atomic::Ordering::Relaxed);
        cx.push_queue_bytes.store(limits.push_queue_bytes, std::sync::atomic::Ordering::Relaxed);
        // Before compiling: an import of an API version this host does not serve is one clear line,
        // not a link error about the first function that is missing.
        modhost_mods::required_api(wasm).map_err(|e| anyhow::anyhow!("{e}"))?;
        let (component, source, artifact) = compile::load(&self.engine, wasm, self.cache_dir.as_deref())?;
        let pre = self.linker.instantiate_pre(&component).context("linking the component")?;
        let memory = self.budget.as_ref().map(|budget| (budget.clone(), budget.account(&cx.id)));
        let mut loaded = LoadedMod::new(cx, pre, limits, self.limits, reuse, self.slots.clone(), memory)
            .context("the component does not export the `plugin` world")?;
        loaded.artifact = artifact;
        Ok((loaded, source))
    }
}
