//! The task that fires the mods' timers: it sleeps until the first due time `realtime::timers`
//! holds, then runs each due timer in the serving generation, one tokio task per firing.
//!
//! Key type: [`Scheduler`], started by `Server::run` once the first generation serves and stopped
//! (and awaited) when the server stops, before the store is released: every firing holds the `App`.
//! It reads and writes the store only through `realtime::timers`, which holds the server's store
//! handle (the mods' `schedule` and `cancel` go through the same one).
//!
//! A firing looks its mod up in the generation serving at that moment, so after a reload it runs the
//! new generation's mod; a mod that is no longer loaded (or is quarantined) has its one-shots parked,
//! still stored, until a generation serves it again. A timer naming a session runs under that
//! session's lock, and with that session's rights (the chain's session, as a request's), taken only
//! when it is free: a taken one (a request running or waiting) puts the timer back for a retry
//! (counted), never a firing without the lock, and never a firing queued ahead of the session's
//! requests. What must not break: the lock guard is dropped before the store is written, and no
//! firing outlives [`Scheduler::stop`].
//!
//! Firings at once are bounded server-wide (`RealtimeLimits::timer_firings`: each holds an instance
//! slot, and a burst of due timers after a long downtime must not take every slot from the
//! requests) and per mod (`ModLimits::timer_firings`, its share): a mod whose firings are all
//! running has its due timers wait in the queue, in their place, while other mods' timers are taken
//! past them, so one mod's slow or spinning timers delay only its own.
//!
//! On a shared store (several hosts, `realtime::timers`' "Several hosts"), each firing is claimed in
//! the store before its call (a one-shot for [`CLAIM_DEADLINES`] call deadlines of its mod), and the
//! loop wakes at least every [`RESCAN`] to learn the one-shots other hosts scheduled.

use crate::app::App;
use crate::realtime::timers::{Due, Kind, Outcome, RecordError, now_ms};
use crate::sandbox::{CallError, Chain, Fired, Step};
use crate::session::SessionId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::task::{JoinHandle, JoinSet};

/// How often a host on a shared store lists the stored one-shots, to learn those other hosts
/// scheduled (and forget those fired or cancelled elsewhere): a timer scheduled on another host fires
/// at most this late here, when that host is gone.
const RESCAN: Duration = Duration::from_secs(1);

/// How long a one-shot's claim holds (a shared store), in call deadlines of its mod: a firing waits
/// for its instance slots up to one deadline, then runs for up to one, and the third covers starting
/// the instance, the store writes around the call, and clocks that differ between hosts. Past it,
/// another host takes the one-shot over (its claimer died or froze mid-firing).
const CLAIM_DEADLINES: u32 = 3;

/// How long a stopping server waits for the firings still running before it drops them (a dropped
/// one-shot fires again at the next start: its record is deleted only after its call returned).
const STOP_WAIT: Duration = Duration::from_secs(5);

/// The scheduler's task.
#[derive(Debug)]
pub(crate) struct Scheduler {
    stop: tokio::sync::watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// Starts the scheduler of `app`'s timers: its stored one-shots are read, the serving mods' periodic
/// timers queued.
pub(crate) fn start(app: Arc<App>) -> Scheduler {
    let (stop, stopping) = tokio::sync::watch::channel(false);
    Scheduler { stop, task: tokio::spawn(run(app, stopping)) }
}

impl Scheduler {
    /// Stops it and waits until no firing holds the app.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn run(app: Arc<App>, mut stopping: tokio::sync::watch::Receiver<bool>) {
    let timers = &app.realtime.timers;
    if let Err(e) = timers.load_stored().await {
        tracing::warn!(
            "timers: reading the stored one-shot timers: {e}; those not read fire once their mod schedules or cancels one"
        );
    }
    sync(&app).await;
    let mut firing = JoinSet::new();
    let most = app.config.realtime.timer_firings.max(1);
    let running = Running::default();
    let shared = timers.shared();
    let mut rescanned = tokio::time::Instant::now();
    loop {
        if timers.take_reloaded() {
            sync(&app).await;
        }
        if shared && rescanned.elapsed() >= RESCAN {
            let serving: Vec<String> = app.generation().mods.iter().map(|m| m.id().to_owned()).collect();
            timers.rescan(serving).await;
            rescanned = tokio::time::Instant::now();
        }
        let shares = Shares::serving(&app);
        let mut batch: HashMap<String, usize> = HashMap::new();
        let room = |module: &str| {
            let taken = batch.entry(module.to_owned()).or_default();
            let fits = running.count(module) + *taken < shares.of(module);
            *taken += usize::from(fits);
            fits
        };
        for due in timers.take_due(now_ms(), most.saturating_sub(firing.len()), room) {
            let slot = running.take(&due.timer.module);
            firing.spawn(fire(app.clone(), due, slot));
        }
        // Full: only a firing's end makes room (for the server, or for a mod whose share is full).
        // Otherwise until the first due time of a mod with room, or a wake-up (a timer queued
        // sooner, a reload).
        let next = timers.next_due(|module| running.count(module) < shares.of(module));
        let mut sleep = match next {
            Some(at) if firing.len() < most => Duration::from_millis(at.saturating_sub(now_ms())),
            _ => Duration::from_secs(3600),
        };
        if shared {
            sleep = sleep.min(RESCAN.saturating_sub(rescanned.elapsed()));
        }
        tokio::select! {
            () = tokio::time::sleep(sleep) => {}
            () = timers.wake.notified() => {}
            Some(_) = firing.join_next(), if !firing.is_empty() => {}
            _ = stopping.changed() => break,
        }
    }
    let all = async { while firing.join_next().await.is_some() {} };
    if tokio::time::timeout(STOP_WAIT, all).await.is_err() {
        tracing::warn!(
            "timers: stopping: some timers did not finish in time; their one-shots fire again at the next start"
        );
        firing.abort_all();
        while firing.join_next().await.is_some() {}
    }
}

/// Reconciles the periodic timers with the serving generation.
async fn sync(app: &App) {
    let generation = app.generation();
    let serving: Vec<(String, Vec<(String, u32)>)> = generation
        .mods
        .iter()
        .map(|m| {
            let mut periodic: Vec<(String, u32)> = Vec::new();
            for timer in &m.realtime_declarations().timers {
                // One timer per name: the first declared.
                if !periodic.iter().any(|(name, _)| *name == timer.name) {
                    periodic.push((timer.name.clone(), timer.every_s));
                }
            }
            (m.id().to_owned(), periodic)
        })
        .collect();
    app.realtime.timers.sync(&serving).await;
}

/// Each mod's share of the firings (`ModLimits::timer_firings`), as the serving generation has it.
struct Shares {
    by_mod: HashMap<String, usize>,
    /// For a mod the generation does not serve (its firing parks at once).
    default: usize,
}

impl Shares {
    fn serving(app: &App) -> Shares {
        let generation = app.generation();
        let by_mod = generation.mods.iter().map(|m| (m.id().to_owned(), m.limits().timer_firings as usize)).collect();
        Shares { by_mod, default: app.config.limits.timer_firings as usize }
    }

    fn of(&self, module: &str) -> usize {
        self.by_mod.get(module).copied().unwrap_or(self.default).max(1)
    }
}

/// The firings running now, per mod; each firing's [`Slot`] gives its count back when it ends
/// (however it ends: a firing aborted at shutdown too).
#[derive(Clone, Default)]
struct Running(Arc<Mutex<HashMap<String, usize>>>);

impl Running {
    fn count(&self, module: &str) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).get(module).copied().unwrap_or(0)
    }

    fn take(&self, module: &str) -> Slot {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner).entry(module.to_owned()).or_default() += 1;
        Slot { running: self.clone(), module: module.to_owned() }
    }
}

/// One running firing of `module`, counted in its mod's share until dropped.
struct Slot {
    running: Running,
    module: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut running = self.running.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = running.get_mut(&self.module) {
            *n -= 1;
            if *n == 0 {
                running.remove(&self.module);
            }
        }
    }
}

async fn fire(app: Arc<App>, due: Due, _slot: Slot) {
    let outcome = run_one(&app, &due).await;
    app.realtime.timers.finish(&due, outcome).await;
}

/// Runs one timer; the session lock it took is released when this returns.
async fn run_one(app: &App, due: &Due) -> Outcome {
    let generation = app.generation();
    let Some(module) = generation.mods.iter().find(|m| m.id() == due.timer.module).cloned() else {
        return Outcome::Park;
    };
    drop(generation);
    if module.quarantined().is_some() {
        return Outcome::Park;
    }
    let hold = module.limits().call_deadline * CLAIM_DEADLINES;
    let (name, id, session, payload) = match &due.timer.kind {
        Kind::Once(id) => match app.realtime.timers.record(due, id, hold).await {
            Ok(Some(record)) => (record.name, Some(id.clone()), record.session, record.payload),
            Ok(None) => return Outcome::Gone,
            Err(e @ RecordError::Held(_)) => {
                tracing::debug!("mod {}: timer {id}: {e}", due.timer.module);
                return e.outcome();
            }
            Err(e) => {
                tracing::warn!("mod {}: timer {id}: {e}", due.timer.module);
                return e.outcome();
            }
        },
        Kind::Every(name) => (name.clone(), None, None, Vec::new()),
    };
    let session_id = match session.as_deref().map(SessionId::parse) {
        None => None,
        Some(Ok(id)) => Some(id),
        Some(Err(e)) => {
            tracing::warn!("mod {}: timer {name}: its stored session: {e}", due.timer.module);
            return Outcome::Failed;
        }
    };
    // Only a free lock, never a place in its queue: a firing that waited in line would go before the
    // requests that come after it, and a mod's few timers re-arming themselves would keep the player's
    // requests waiting past their timeout (503) for good. Taken this way, a request waits for one
    // firing at most (its call deadline), as it would for another request of its session.
    let _guard = match session_id {
        None => None,
        Some(id) => match app.sessions.try_lock(id).await {
            Some(guard) => Some(guard),
            None => {
                tracing::debug!(
                    "mod {}: timer {name} for session {}: the session is busy; tried again in {} ms",
                    due.timer.module,
                    id.as_str(),
                    crate::realtime::timers::RETRY_AFTER.as_millis()
                );
                return Outcome::Retry;
            }
        },
    };
    // A periodic timer is claimed last, right before its call (a shared store): the host that
    // advances its stored next due time fires it.
    if let Kind::Every(name) = &due.timer.kind
        && let Some(outcome) = app.realtime.timers.claim_every(due, name).await
    {
        return outcome;
    }
    let late_ms = now_ms().saturating_sub(due.due_ms);
    let fired = Fired { name: name.clone(), id, session, payload, due_ms: due.due_ms, late_ms };
    let chain = Chain::root(&module.context_arc().id, Step::Timer(name.clone()), session_id);
    match module.on_timer(&fired, chain).await {
        Ok(()) => Outcome::Done,
        Err(CallError::Busy(e)) => {
            tracing::warn!("mod {}: timer {name} could not run: {e}; tried again shortly", due.timer.module);
            Outcome::Retry
        }
        Err(CallError::Quarantined(_)) => Outcome::Park,
        Err(e) => {
            tracing::warn!("mod {}: timer {name} failed: {e}", due.timer.module);
            Outcome::Failed
        }
    }
}
