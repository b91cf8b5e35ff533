//! The mods' timers: one-shot ones they schedule (`timers.schedule`) and periodic ones they declare
//! (`declare-realtime`), with their due times in the store so a timer survives a restart and one that
//! came due while the server was off fires once at the next start.
//!
//! Key types: [`Timers`] (the queue, the per-mod bounds and counters, and the store handle it keeps
//! them in), [`TimerId`] (which timer), [`Due`] (a timer taken to fire) and [`Outcome`] (what its
//! firing did). This is the engine: it knows the store, not the mods. The task that sleeps until the
//! next due time and runs each timer in the serving generation is `crate::scheduler` (it needs the
//! `App` and the sandbox, which import this module).
//!
//! # In memory
//! The queue is a map keyed by `(at, timer)`: `at` the ms the timer is queued for (its due time, or a
//! retry's), `timer` its [`TimerId`]. Ordered by that key, the first entry is the next to fire, two
//! timers queued for the same ms are two entries in id order, and moving or cancelling a timer
//! removes the key its mod's entry says it is queued under (`Place::Queued`, `Every::at_ms`). The
//! value is the timer's due time, which `late-ms` counts from (a retry keeps it).
//!
//! # In the store
//! Each mod's timers live in the namespace `timers.<mod id>`. A mod id is `[a-z0-9_-]` (no dot,
//! `modhost_mods::ModId`), and grants name mod ids, so no mod can read, write or fill that namespace,
//! while it still gets a quota of its own (a mod's 1000 pending timers of 64 KiB cannot crowd out
//! another's) and `modhost store` shows it beside the mod's own.
//! - `o.<id>`: a pending one-shot. The id is 12 hex digits of its due time (ms since the Unix epoch)
//!   then 8 of a per-run counter, so loading a mod's timers at start is one `list` (no value read): the
//!   queue holds only ids and due times, never payloads. The value is a JSON header line
//!   (`{"name","session","due_ms"}`), a newline, then the payload's bytes as they are.
//! - `p.<name>`: a periodic timer's next due time (decimal ms). Written when the timer is first seen
//!   and after each firing, so a restart finds it: past due, it fires once at once (`late-ms` says by
//!   how much), then every `every-s` from then.
//!
//! # Several hosts
//! When the store is shared (`Store::shared`: several hosts on one PostgreSQL), every host holds the
//! timers in its own queue, and a timer fires on the host that claims it in the store first, with a
//! compare-and-set the database checks (`set_if_version`); on SQLite none of this runs (no claim, no
//! extra store call).
//! - A periodic timer is fired by the host that advances its stored next due time (`p.<name>`) from
//!   the due time it was taken at, right before the call ([`Timers::claim_every`]). A host that finds
//!   another due time stored, or loses the race, puts the timer back at the stored due time
//!   ([`Outcome::Later`]) without firing: once per period across the cluster. A firing that ran past
//!   its next due time moves it on from its claim's version (a conflict: another host fired it).
//! - A one-shot is claimed by rewriting its record with a [`Claim`] (holder, time, end) from the
//!   version read ([`Timers::record`]), fired, then deleted (at least once is kept: a host that dies
//!   mid-firing leaves it claimed). A current claim of another host puts it back until the claim's end
//!   (three call deadlines of its mod, `crate::scheduler`); past it, another host takes it over and
//!   fires it. Wall clocks of the hosts are assumed close (well within a call deadline).
//! - A host learns the one-shots other hosts scheduled by listing the stored ones every second
//!   ([`Timers::rescan`], from the scheduler): unknown ids are queued at their due time, queued ones
//!   whose record is gone dropped. So a one-shot scheduled on a host that then stops fires on a live
//!   one, at most a second late; and after the whole cluster was down, the first host up fires
//!   what came due meanwhile, each once.
//! - The per-mod [`MAX_PENDING`] counts the one-shots this host knows, which on a shared store are
//!   the cluster's (up to a second behind), and bounds each listing.
//!
//! # What must not break
//! - At least once: a one-shot's record is written before `schedule` answers, and deleted only after
//!   its `on-timer` returned (a crash in between fires it again at the next start).
//! - A timer never overlaps itself: a periodic timer is put back in the queue only when its firing
//!   finished, its next due time counted from then when it ran past it.
//! - Every list is bounded: at most [`MAX_PENDING`] one-shots per mod (counted at `schedule`, stored
//!   ones included), the declared periodic ones (16 per mod, checked at load).

use crate::session::SessionId;
use modhost_store::{Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One-shot timers one mod may have pending.
pub(crate) const MAX_PENDING: usize = 1000;
/// The largest payload a one-shot timer carries.
pub(crate) const MAX_PAYLOAD: usize = 64 << 10;
/// The longest delay `schedule` accepts: 30 days.
pub(crate) const MAX_DELAY_MS: u64 = 30 * 24 * 3600 * 1000;
/// How long a timer that could not run (its session's lock was taken, no instance slot) waits
/// before it is tried again.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(1);
/// The prefix of the host's timer namespaces: a dot no mod id has.
pub(crate) const NAMESPACE_PREFIX: &str = "timers.";

/// The store namespace of `module`'s timers.
pub(crate) fn namespace(module: &str) -> String {
    format!("{NAMESPACE_PREFIX}{module}")
}

/// Now, in ms since the Unix epoch: due times are wall-clock times, because they outlive the process.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Why `schedule` refused a timer (each becomes the WIT error the comment names).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ScheduleError {
    /// `invalid`.
    #[error("timer name `{0}` is not 1-64 characters of [a-z0-9._-]")]
    BadName(String),
    /// `invalid`.
    #[error("`{0}` is not a session id (24 hex digits)")]
    BadSession(String),
    /// `too-large`.
    #[error("a payload of {0} bytes; a timer carries at most {MAX_PAYLOAD}")]
    Payload(usize),
    /// `too-large`.
    #[error("a delay of {0} ms; timers fire at most 30 days ({MAX_DELAY_MS} ms) ahead")]
    Delay(u64),
    /// `too-large`.
    #[error("{MAX_PENDING} one-shot timers are pending already; cancel one or let one fire first")]
    Pending,
    /// `too-large`: the store quota of the mod's timer namespace.
    #[error("the timer could not be stored: {0}")]
    Quota(String),
    /// `io`: not scheduled.
    #[error("the timer could not be stored: {0}")]
    Io(String),
}

/// A one-shot timer as stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Record {
    pub(crate) name: String,
    pub(crate) session: Option<String>,
    pub(crate) due_ms: u64,
    /// Which host is firing it, while one is (a shared store only; never written on SQLite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) claim: Option<Claim>,
    #[serde(skip)]
    pub(crate) payload: Vec<u8>,
}

/// A host's claim on a one-shot it fires (a shared store): written with `set_if_version` before the
/// call, so two hosts never both win it; past `until_ms` another host may take it over (its holder
/// died or froze mid-firing).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Claim {
    /// The claiming host (`Timers::holder`).
    pub(crate) holder: String,
    /// When it claimed (ms since the epoch).
    pub(crate) at_ms: u64,
    /// Until when the claim holds.
    pub(crate) until_ms: u64,
}

impl Record {
    fn encode(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec(self)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&self.payload);
        Ok(bytes)
    }

    fn decode(bytes: &[u8]) -> Result<Record, String> {
        let newline = bytes.iter().position(|&b| b == b'\n').ok_or("no header line")?;
        let mut record: Record = serde_json::from_slice(&bytes[..newline]).map_err(|e| e.to_string())?;
        record.payload = bytes[newline + 1..].to_vec();
        Ok(record)
    }
}

/// Why a one-shot's record could not be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordError {
    /// The store could not be read: tried again.
    #[error("reading its record: {0}; tried again shortly")]
    Unreadable(String),
    /// What is stored is not a record (never written so by this host): dropped.
    #[error("its stored record is not one ({0}); it is dropped")]
    Corrupt(String),
    /// Another host fires it (a shared store): looked at again at this time (its claim's end, or
    /// shortly after a lost race), when its record is gone or its claim stale.
    #[error("another host is firing it; looked at again at {0}")]
    Held(u64),
}

impl RecordError {
    /// What the firing comes to.
    pub(crate) fn outcome(&self) -> Outcome {
        match self {
            RecordError::Unreadable(_) => Outcome::Retry,
            RecordError::Corrupt(_) => Outcome::Failed,
            RecordError::Held(at) => Outcome::Later(*at),
        }
    }
}

/// Which timer: its mod, and its one-shot's id or its periodic timer's name. With the time it is
/// queued for, its key in the queue.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct TimerId {
    /// The mod it belongs to.
    pub(crate) module: String,
    pub(crate) kind: Kind,
}

impl TimerId {
    fn once(module: &str, id: &str) -> TimerId {
        TimerId { module: module.to_owned(), kind: Kind::Once(id.to_owned()) }
    }

    fn every(module: &str, name: &str) -> TimerId {
        TimerId { module: module.to_owned(), kind: Kind::Every(name.to_owned()) }
    }
}

/// A timer taken from the queue to fire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub(crate) timer: TimerId,
    /// When it was due (ms since the epoch): a retried one keeps its first due time.
    pub(crate) due_ms: u64,
}

/// Which timer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    /// A one-shot, by id.
    Once(String),
    /// A periodic one, by name.
    Every(String),
}

/// What firing a [`Due`] came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// `on-timer` returned `Ok`.
    Done,
    /// It failed (an error value, a trap, its deadline): logged by the caller, counted here; a
    /// one-shot is then gone, a periodic timer keeps its schedule.
    Failed,
    /// It could not run now (its session's lock was taken, the server had no room): tried again
    /// after [`RETRY_AFTER`], counted.
    Retry,
    /// Its mod is not serving (left out of a reload, or quarantined): a one-shot is kept, stored,
    /// until a generation serves the mod again.
    Park,
    /// Its record is gone (cancelled while it was taken, or fired by another host): nothing to do.
    Gone,
    /// Another host has it (a shared store): it goes back in the queue at this time, not counted.
    /// A periodic timer's due time becomes this one (the next due time the store holds).
    Later(u64),
}

/// A pending one-shot, in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In the queue, at this time.
    Queued(u64),
    /// Taken to fire.
    Running,
    /// Waiting for its mod to serve again.
    Parked,
}

#[derive(Debug)]
struct Once {
    due_ms: u64,
    place: Place,
}

/// A periodic timer of a serving mod.
#[derive(Debug)]
struct Every {
    every_s: u32,
    /// The due time of its next firing (while running: of this one); a retry keeps it.
    due_ms: u64,
    /// When it is queued for (its due time, or a retry's time).
    at_ms: u64,
    running: bool,
    /// This host's claim on a firing (a shared store): the due time it claimed, the version of the
    /// stored next due time it wrote, and that next due time. Kept across a retry of that firing.
    claim: Option<EveryClaim>,
}

#[derive(Debug, Clone, Copy)]
struct EveryClaim {
    due_ms: u64,
    version: u64,
    next_ms: u64,
}

/// One mod's timers and counters.
#[derive(Debug, Default)]
struct ModTimers {
    /// Whether its stored one-shots were read into memory (at the scheduler's start, or at its first
    /// `schedule`/`cancel` before that): until then `once` may miss some and the count with it.
    loaded: bool,
    once: HashMap<String, Once>,
    /// `schedule` calls between their count and their commit, counted against [`MAX_PENDING`].
    reserved: usize,
    every: HashMap<String, Every>,
    failed: u64,
    retried: u64,
}

#[derive(Debug, Default)]
struct State {
    queue: Queue,
    mods: HashMap<String, ModTimers>,
}

/// Every queued timer, keyed by `(at, timer)`: `at` the ms it is queued for. The value is its due
/// time (a retry's `at` is later). The scheduler sleeps until the first key's `at`.
#[derive(Debug, Default)]
struct Queue(BTreeMap<(u64, TimerId), u64>);

impl Queue {
    /// Queues `timer` for `at`, due at `due_ms`.
    fn insert(&mut self, at: u64, timer: TimerId, due_ms: u64) {
        self.0.insert((at, timer), due_ms);
    }

    /// Takes `timer`, queued for `at`, out of the queue.
    fn remove(&mut self, at: u64, timer: TimerId) {
        self.0.remove(&(at, timer));
    }

    /// The first queued timer whose mod `room` admits, taken out, when it is queued for `now` or
    /// before. The ones passed over stay queued in their place (their mods' firings are full).
    fn pop_due(&mut self, now: u64, room: &mut impl FnMut(&str) -> bool) -> Option<Due> {
        let key = self.0.keys().take_while(|(at, _)| *at <= now).find(|(_, timer)| room(&timer.module))?.clone();
        let due_ms = self.0.remove(&key)?;
        Some(Due { timer: key.1, due_ms })
    }

    /// When the first queued timer whose mod `room` admits is queued for.
    fn first_at_where(&self, room: &mut impl FnMut(&str) -> bool) -> Option<u64> {
        self.0.keys().find(|(_, timer)| room(&timer.module)).map(|(at, _)| *at)
    }
}

/// What `/modhost/mods` shows of one mod's timers.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModTimerView {
    pub(crate) failed: u64,
    pub(crate) retried: u64,
    pub(crate) pending: usize,
    /// Its periodic timers: (name, every-s, next due in ms since the epoch).
    pub(crate) periodic: Vec<(String, u32, u64)>,
}

/// The server's timers (one set shared by every generation).
#[derive(Debug)]
pub(crate) struct Timers {
    /// The store the timers are kept in (the server's), the one handle every store call here goes
    /// through.
    store: Arc<Store>,
    /// A std mutex, held only to read or change the maps, never across an await or a store call.
    state: Mutex<State>,
    /// Wakes the scheduler: a timer was queued that may be due sooner than the one it sleeps for,
    /// or the serving generation changed.
    pub(crate) wake: tokio::sync::Notify,
    /// The serving generation changed: the periodic timers are reconciled with its mods.
    reloaded: AtomicBool,
    /// The per-run counter of one-shot ids.
    next_id: AtomicU64,
    /// This process, as its one-shot claims name it (a shared store).
    holder: String,
}

fn store_error(e: StoreError) -> String {
    e.to_string()
}

impl Timers {
    /// The timers kept in `store`.
    pub(crate) fn new(store: Arc<Store>) -> Timers {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        Timers {
            store,
            state: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            reloaded: AtomicBool::new(false),
            // Ids are unique by their due time's ms and this counter; a random start keeps two runs
            // within one ms apart in practice, and an id already stored is never taken (below).
            next_id: AtomicU64::new(u64::from(nanos) ^ u64::from(std::process::id())),
            holder: holder_name(),
        }
    }

    /// Runs a call on the store on the blocking pool (SQLite blocks, and the caller is an async
    /// worker).
    async fn blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Store) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let store = self.store.clone();
        match tokio::task::spawn_blocking(move || f(&store)).await {
            Ok(result) => result,
            Err(e) => Err(StoreError::Io { op: "timers", key: String::new(), reason: e.to_string() }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the serving generation as changed and wakes the scheduler (`App::reload`).
    pub(crate) fn reloaded(&self) {
        self.reloaded.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// Whether the serving generation changed since the last call.
    pub(crate) fn take_reloaded(&self) -> bool {
        self.reloaded.swap(false, Ordering::AcqRel)
    }

    /// Reads `module`'s stored one-shots into the queue, once.
    async fn ensure_loaded(&self, module: &str) -> Result<(), StoreError> {
        if self.state().mods.get(module).is_some_and(|m| m.loaded) {
            return Ok(());
        }
        let ns = namespace(module);
        let keys = self.blocking(move |s| s.list(&ns, "o.")).await?;
        let mut state = self.state();
        let State { queue, mods } = &mut *state;
        let timers = mods.entry(module.to_owned()).or_default();
        if timers.loaded {
            return Ok(());
        }
        for key in keys {
            let Some(id) = key.strip_prefix("o.") else { continue };
            let Some(due_ms) = due_of_id(id) else {
                tracing::warn!("mod {module}: stored timer `{key}` has no due time in its id; left as it is");
                continue;
            };
            // `schedule` may have queued it already (between the list and here): keep that one.
            timers.once.entry(id.to_owned()).or_insert_with(|| {
                queue.insert(due_ms, TimerId::once(module, id), due_ms);
                Once { due_ms, place: Place::Queued(due_ms) }
            });
        }
        timers.loaded = true;
        Ok(())
    }

    /// Reads every mod's stored one-shots (at the scheduler's start), whether it is loaded or not: a
    /// mod that is not serving has its timers parked at their due time until it is.
    pub(crate) async fn load_stored(&self) -> Result<(), StoreError> {
        let namespaces = self.blocking(|s| s.namespaces()).await?;
        for ns in namespaces {
            if let Some(module) = ns.strip_prefix(NAMESPACE_PREFIX) {
                self.ensure_loaded(module).await?;
            }
        }
        Ok(())
    }

    /// Schedules a one-shot for `module` (see the WIT's `timers.schedule`); answers its id once its
    /// record is committed.
    pub(crate) async fn schedule(
        &self,
        module: &str,
        name: String,
        delay_ms: u64,
        session: Option<String>,
        payload: Vec<u8>,
    ) -> Result<String, ScheduleError> {
        modhost_mods::check_timer_name(&name).map_err(|_| ScheduleError::BadName(shown(&name)))?;
        let session = match session {
            Some(s) => {
                Some(SessionId::parse(&s).map_err(|_| ScheduleError::BadSession(shown(&s)))?.as_str().to_owned())
            }
            None => None,
        };
        if payload.len() > MAX_PAYLOAD {
            return Err(ScheduleError::Payload(payload.len()));
        }
        if delay_ms > MAX_DELAY_MS {
            return Err(ScheduleError::Delay(delay_ms));
        }
        self.ensure_loaded(module).await.map_err(|e| ScheduleError::Io(store_error(e)))?;
        let due_ms = now_ms().saturating_add(delay_ms);
        let id = {
            let mut state = self.state();
            let timers = state.mods.entry(module.to_owned()).or_default();
            if timers.once.len() + timers.reserved >= MAX_PENDING {
                return Err(ScheduleError::Pending);
            }
            timers.reserved += 1;
            loop {
                let n = self.next_id.fetch_add(1, Ordering::Relaxed) as u32;
                let id = format!("{:012x}{n:08x}", due_ms & 0xffff_ffff_ffff);
                if !timers.once.contains_key(&id) {
                    break id;
                }
            }
        };
        let record = Record { name, session, due_ms, claim: None, payload };
        let written = match record.encode() {
            Ok(bytes) => {
                let (ns, key) = (namespace(module), format!("o.{id}"));
                self.blocking(move |s| s.set(&ns, &key, &bytes)).await.map_err(|e| match e {
                    StoreError::Quota { .. } => ScheduleError::Quota(e.to_string()),
                    e => ScheduleError::Io(e.to_string()),
                })
            }
            Err(e) => Err(ScheduleError::Io(e.to_string())),
        };
        let mut state = self.state();
        let State { queue, mods } = &mut *state;
        let timers = mods.entry(module.to_owned()).or_default();
        timers.reserved = timers.reserved.saturating_sub(1);
        written?;
        timers.once.insert(id.clone(), Once { due_ms, place: Place::Queued(due_ms) });
        queue.insert(due_ms, TimerId::once(module, &id), due_ms);
        drop(state);
        self.wake.notify_one();
        Ok(id)
    }

    /// Cancels `module`'s one-shot `id`; answers whether it was pending. A timer already firing is
    /// not stopped, but its record is gone, so it is not fired again after a restart.
    pub(crate) async fn cancel(&self, module: &str, id: &str) -> Result<bool, String> {
        // An id this module never answered names nothing (and may not even be a valid key).
        if due_of_id(id).is_none() {
            return Ok(false);
        }
        self.ensure_loaded(module).await.map_err(store_error)?;
        let in_memory = {
            let mut state = self.state();
            let State { queue, mods } = &mut *state;
            let timers = mods.entry(module.to_owned()).or_default();
            match timers.once.remove(id) {
                Some(once) => {
                    if let Place::Queued(at) = once.place {
                        queue.remove(at, TimerId::once(module, id));
                    }
                    true
                }
                None => false,
            }
        };
        let (ns, key) = (namespace(module), format!("o.{id}"));
        let stored = self.blocking(move |s| s.delete(&ns, &key)).await.map_err(store_error)?;
        Ok(in_memory || stored)
    }

    /// Reconciles the periodic timers with the serving generation's mods (`serving`: each mod's id and
    /// its declared periodic timers), and queues the parked one-shots of the mods that serve again. A
    /// timer new to the queue starts from its stored next due time (past it: due now, late), or, never
    /// seen, one period from now (stored at once, so a restart before its first firing keeps it).
    pub(crate) async fn sync(&self, serving: &[(String, Vec<(String, u32)>)]) {
        let now = now_ms();
        // Which periodic timers are new: read their stored due times outside the lock.
        let new: Vec<(String, String, u32)> = {
            let state = self.state();
            serving
                .iter()
                .flat_map(|(module, periodic)| periodic.iter().map(move |(name, every)| (module, name, *every)))
                .filter(|(module, name, _)| state.mods.get(*module).is_none_or(|m| !m.every.contains_key(*name)))
                .map(|(module, name, every)| (module.clone(), name.clone(), every))
                .collect()
        };
        let mut starts = Vec::with_capacity(new.len());
        for (module, name, every_s) in new {
            let (ns, key) = (namespace(&module), format!("p.{name}"));
            let stored = self.blocking(move |s| s.get(&ns, &key)).await;
            let due_ms = match stored {
                Ok(Some(text)) => std::str::from_utf8(&text).ok().and_then(|t| t.trim().parse::<u64>().ok()),
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!("mod {module}: reading timer {name}'s next due time: {e}; starting it afresh");
                    None
                }
            };
            let due_ms = match due_ms {
                Some(due) => due,
                None => {
                    let due = now.saturating_add(u64::from(every_s) * 1000);
                    self.store_next(&module, &name, due).await;
                    due
                }
            };
            starts.push((module, name, every_s, due_ms));
        }
        let mut state = self.state();
        let State { queue, mods } = &mut *state;
        // Periodic timers no serving mod declares any more leave the queue (their next due time stays
        // stored for when the mod is back); a running one is not put back when it finishes.
        for (module, timers) in mods.iter_mut() {
            let declared = serving.iter().find(|(m, _)| m == module).map(|(_, p)| p.as_slice()).unwrap_or(&[]);
            timers.every.retain(|name, every| {
                let Some((_, every_s)) = declared.iter().find(|(n, _)| n == name) else {
                    if !every.running {
                        queue.remove(every.at_ms, TimerId::every(module, name));
                    }
                    return false;
                };
                // A changed period applies from its next firing.
                every.every_s = *every_s;
                true
            });
        }
        for (module, name, every_s, due_ms) in starts {
            let timers = mods.entry(module.clone()).or_default();
            if timers.every.contains_key(&name) {
                continue;
            }
            timers.every.insert(name.clone(), Every { every_s, due_ms, at_ms: due_ms, running: false, claim: None });
            queue.insert(due_ms, TimerId { module, kind: Kind::Every(name) }, due_ms);
        }
        for (module, _) in serving {
            let Some(timers) = mods.get_mut(module) else { continue };
            for (id, once) in timers.once.iter_mut().filter(|(_, o)| o.place == Place::Parked) {
                once.place = Place::Queued(once.due_ms);
                queue.insert(once.due_ms, TimerId::once(module, id), once.due_ms);
            }
        }
    }

    async fn store_next(&self, module: &str, name: &str, due_ms: u64) {
        let (ns, key) = (namespace(module), format!("p.{name}"));
        if let Err(e) = self.blocking(move |s| s.set(&ns, &key, due_ms.to_string().as_bytes())).await {
            // The schedule goes on in memory; a restart before the next write repeats or skips a firing.
            tracing::warn!("mod {module}: storing timer {name}'s next due time: {e}");
        }
    }

    /// When the first queued timer of a mod `room` admits is due (ms since the epoch): the scheduler
    /// sleeps until then (or until a firing ends and a mod's share has room again).
    pub(crate) fn next_due(&self, mut room: impl FnMut(&str) -> bool) -> Option<u64> {
        self.state().queue.first_at_where(&mut room)
    }

    /// Takes up to `limit` timers due by `now` out of the queue, marked running, each of a mod that
    /// `room` admits at the time (it counts what it admitted: a mod's share of the firings).
    pub(crate) fn take_due(&self, now: u64, limit: usize, mut room: impl FnMut(&str) -> bool) -> Vec<Due> {
        let mut state = self.state();
        let mut taken = Vec::new();
        while taken.len() < limit {
            let Some(due) = state.queue.pop_due(now, &mut room) else { break };
            let Some(timers) = state.mods.get_mut(&due.timer.module) else { continue };
            match &due.timer.kind {
                Kind::Once(id) => match timers.once.get_mut(id) {
                    Some(once) => once.place = Place::Running,
                    None => continue,
                },
                Kind::Every(name) => match timers.every.get_mut(name) {
                    Some(every) => every.running = true,
                    None => continue,
                },
            }
            taken.push(due);
        }
        taken
    }

    /// Whether several hosts share the store: timers are then claimed before they fire.
    pub(crate) fn shared(&self) -> bool {
        self.store.shared()
    }

    /// A one-shot's stored record, `None` when it is gone (cancelled, or fired by another host). On a
    /// shared store it is also claimed for this host, for `hold` (how long its firing may take), with
    /// a compare-and-set on its record: [`RecordError::Held`] when another host's claim is current or
    /// another host's claim came first.
    pub(crate) async fn record(&self, due: &Due, id: &str, hold: Duration) -> Result<Option<Record>, RecordError> {
        let (ns, key) = (namespace(&due.timer.module), format!("o.{id}"));
        if !self.store.shared() {
            let read = self.blocking(move |s| s.get(&ns, &key)).await;
            let Some(bytes) = read.map_err(|e| RecordError::Unreadable(e.to_string()))? else { return Ok(None) };
            return Record::decode(&bytes).map(Some).map_err(RecordError::Corrupt);
        }
        let holder = self.holder.clone();
        let hold_ms = u64::try_from(hold.as_millis()).unwrap_or(u64::MAX);
        let claimed = self
            .blocking(move |s| {
                let Some(found) = s.get_versioned(&ns, &key)? else { return Ok(Ok(None)) };
                let mut record = match Record::decode(&found.value) {
                    Ok(record) => record,
                    Err(e) => return Ok(Err(RecordError::Corrupt(e))),
                };
                let now = now_ms();
                if let Some(claim) = &record.claim
                    && claim.holder != holder
                    && claim.until_ms > now
                {
                    return Ok(Err(RecordError::Held(claim.until_ms)));
                }
                // Unclaimed, this host's own (a retry), or stale: this host's now.
                record.claim = Some(Claim { holder, at_ms: now, until_ms: now.saturating_add(hold_ms) });
                let bytes = record.encode().map_err(|e| StoreError::Io {
                    op: "claim",
                    key: key.clone(),
                    reason: e.to_string(),
                })?;
                match s.set_if_version(&ns, &key, &bytes, Some(found.version)) {
                    Ok(_) => Ok(Ok(Some(record))),
                    // Another host's claim (or a cancel) came first: looked at again shortly, when
                    // that claim is read and honoured (or the record is gone).
                    Err(StoreError::Conflict { .. }) => {
                        Ok(Err(RecordError::Held(now.saturating_add(RETRY_AFTER.as_millis() as u64))))
                    }
                    Err(e) => Err(e),
                }
            })
            .await;
        claimed.map_err(|e| RecordError::Unreadable(e.to_string()))?
    }

    /// Claims a periodic timer's firing on a shared store (on SQLite: always this host's, no store
    /// call): the host that advances its stored next due time (`p.<name>`) from the due time it was
    /// taken at fires it, with `set_if_version`; a host that finds another due time stored, or loses
    /// the race, gets [`Outcome::Later`] at the stored due time, and does not fire. `None`: fire it.
    pub(crate) async fn claim_every(&self, due: &Due, name: &str) -> Option<Outcome> {
        if !self.store.shared() {
            return None;
        }
        let now = now_ms();
        let next = {
            let state = self.state();
            let every = state.mods.get(&due.timer.module).and_then(|t| t.every.get(name))?;
            // Claimed already, and retried (its call could not run): still this host's.
            if every.claim.is_some_and(|c| c.due_ms == due.due_ms) {
                return None;
            }
            after_period(due.due_ms, every.every_s, now)
        };
        let (ns, key) = (namespace(&due.timer.module), format!("p.{name}"));
        let due_ms = due.due_ms;
        let claimed = self
            .blocking(move |s| {
                let stored = |s: &Store| -> Result<Option<(Option<u64>, u64)>, StoreError> {
                    Ok(s.get_versioned(&ns, &key)?.map(|v| {
                        let due = std::str::from_utf8(&v.value).ok().and_then(|t| t.trim().parse::<u64>().ok());
                        (due, v.version)
                    }))
                };
                let expected = match stored(s)? {
                    // Another host fired it and stored the next one: queued at that one.
                    Some((Some(stored), _)) if stored != due_ms => return Ok(Err(stored)),
                    Some((_, version)) => Some(version),
                    None => None,
                };
                match s.set_if_version(&ns, &key, next.to_string().as_bytes(), expected) {
                    Ok(version) => Ok(Ok(version)),
                    Err(StoreError::Conflict { .. }) => match stored(s)? {
                        Some((Some(stored), _)) => Ok(Err(stored)),
                        _ => Ok(Err(now_ms().saturating_add(RETRY_AFTER.as_millis() as u64))),
                    },
                    Err(e) => Err(e),
                }
            })
            .await;
        match claimed {
            Ok(Ok(version)) => {
                let mut state = self.state();
                let every = state.mods.get_mut(&due.timer.module).and_then(|t| t.every.get_mut(name))?;
                every.claim = Some(EveryClaim { due_ms: due.due_ms, version, next_ms: next });
                None
            }
            Ok(Err(at)) => Some(Outcome::Later(at)),
            Err(e) => {
                // Not fired unclaimed: another host may be firing it.
                tracing::warn!("mod {}: claiming timer {name}: {e}; tried again shortly", due.timer.module);
                Some(Outcome::Retry)
            }
        }
    }

    /// Learns the one-shots other hosts scheduled (a shared store; nothing on SQLite): lists the
    /// stored one-shots of every mod it knows and of `serving`, queues the ids it does not hold at
    /// their due times, and drops the queued or parked ones whose record is gone (fired or cancelled
    /// elsewhere). Bounded: a mod has at most [`MAX_PENDING`] stored one-shots.
    pub(crate) async fn rescan(&self, serving: impl IntoIterator<Item = String>) {
        if !self.store.shared() {
            return;
        }
        let mut modules: Vec<String> = self.state().mods.keys().cloned().collect();
        modules.extend(serving);
        modules.sort();
        modules.dedup();
        let mut added = false;
        for module in modules {
            // The ids held before the listing: only those may be dropped for missing from it (one
            // scheduled here meanwhile is held after its record was written, so it is listed or new).
            let before: Vec<String> =
                self.state().mods.get(&module).map(|m| m.once.keys().cloned().collect()).unwrap_or_default();
            let ns = namespace(&module);
            let keys = match self.blocking(move |s| s.list(&ns, "o.")).await {
                Ok(keys) => keys,
                Err(e) => {
                    tracing::debug!("mod {module}: listing its stored timers: {e}; tried again shortly");
                    continue;
                }
            };
            let listed: std::collections::HashSet<&str> = keys.iter().filter_map(|k| k.strip_prefix("o.")).collect();
            let mut state = self.state();
            let State { queue, mods } = &mut *state;
            let timers = mods.entry(module.clone()).or_default();
            for id in &listed {
                let Some(due_ms) = due_of_id(id) else { continue };
                timers.once.entry((*id).to_owned()).or_insert_with(|| {
                    added = true;
                    queue.insert(due_ms, TimerId::once(&module, id), due_ms);
                    Once { due_ms, place: Place::Queued(due_ms) }
                });
            }
            for id in before.iter().filter(|id| !listed.contains(id.as_str())) {
                let Some(once) = timers.once.get(id) else { continue };
                match once.place {
                    Place::Queued(at) => queue.remove(at, TimerId::once(&module, id)),
                    Place::Parked => {}
                    // Its firing ends it.
                    Place::Running => continue,
                }
                timers.once.remove(id);
            }
            timers.loaded = true;
        }
        if added {
            self.wake.notify_one();
        }
    }

    /// Ends a firing: counts it, deletes a fired one-shot's record, stores a periodic timer's next due
    /// time, or puts the timer back in the queue (a retry) or aside (parked).
    pub(crate) async fn finish(&self, due: &Due, outcome: Outcome) {
        let now = now_ms();
        {
            let mut state = self.state();
            let timers = state.mods.entry(due.timer.module.clone()).or_default();
            match outcome {
                Outcome::Failed => timers.failed += 1,
                Outcome::Retry => timers.retried += 1,
                Outcome::Done | Outcome::Park | Outcome::Gone | Outcome::Later(_) => {}
            }
        }
        match &due.timer.kind {
            Kind::Once(id) => {
                let gone = matches!(outcome, Outcome::Done | Outcome::Failed | Outcome::Gone);
                if gone {
                    // After the call returned, not before: at least once.
                    let (ns, key) = (namespace(&due.timer.module), format!("o.{id}"));
                    if let Err(e) = self.blocking(move |s| s.delete(&ns, &key)).await {
                        tracing::warn!(
                            "mod {}: deleting fired timer {id}: {e}; it fires again after a restart",
                            due.timer.module
                        );
                    }
                }
                let mut state = self.state();
                let State { queue, mods } = &mut *state;
                let Some(timers) = mods.get_mut(&due.timer.module) else { return };
                if gone {
                    timers.once.remove(id);
                    return;
                }
                // Cancelled meanwhile: nothing to put back.
                let Some(once) = timers.once.get_mut(id) else { return };
                if outcome == Outcome::Park {
                    once.place = Place::Parked;
                } else {
                    let at = match outcome {
                        Outcome::Later(at) => at,
                        _ => now.saturating_add(RETRY_AFTER.as_millis() as u64),
                    };
                    once.place = Place::Queued(at);
                    queue.insert(at, due.timer.clone(), due.due_ms);
                }
            }
            Kind::Every(name) => {
                let shared = self.store.shared();
                let store = {
                    let mut state = self.state();
                    let State { queue, mods } = &mut *state;
                    let Some(every) = mods.get_mut(&due.timer.module).and_then(|t| t.every.get_mut(name)) else {
                        return;
                    };
                    every.running = false;
                    let next = match outcome {
                        Outcome::Retry => now.saturating_add(RETRY_AFTER.as_millis() as u64),
                        // Another host fired it: its next due time, as stored.
                        Outcome::Later(at) => at,
                        // Parked: its mod is gone from the serving generation; the next `sync` drops
                        // it or keeps it, and its schedule goes on meanwhile.
                        // Behind (a catch-up, or a firing longer than its period): one period from
                        // now, never a burst of the firings missed.
                        _ => after_period(due.due_ms, every.every_s, now),
                    };
                    let retry_keeps_due = outcome == Outcome::Retry;
                    let due_ms = if retry_keeps_due { due.due_ms } else { next };
                    every.due_ms = due_ms;
                    every.at_ms = next;
                    queue.insert(next, due.timer.clone(), due_ms);
                    if retry_keeps_due {
                        // A claimed firing that is retried stays claimed.
                        None
                    } else if !shared {
                        Some((next, None))
                    } else {
                        // Shared: only the host that claimed this firing stores the next due time (the
                        // claim stored one already; again only when the firing ran past it). Unclaimed
                        // (parked, or another host's), the stored time is left to the hosts firing it.
                        every
                            .claim
                            .take()
                            .filter(|c| c.due_ms == due.due_ms && c.next_ms != next)
                            .map(|c| (next, Some(c.version)))
                    }
                };
                match store {
                    Some((next, None)) => self.store_next(&due.timer.module, name, next).await,
                    Some((next, Some(version))) => {
                        let (ns, key) = (namespace(&due.timer.module), format!("p.{name}"));
                        let write =
                            move |s: &Store| s.set_if_version(&ns, &key, next.to_string().as_bytes(), Some(version));
                        if let Err(e) = self.blocking(write).await {
                            // Another host fired it meanwhile (a conflict): the next claim reads that.
                            tracing::debug!("mod {}: storing timer {name}'s next due time: {e}", due.timer.module);
                        }
                    }
                    None => {}
                }
            }
        }
        self.wake.notify_one();
    }

    /// What `/modhost/mods` shows of `module`'s timers.
    pub(crate) fn view(&self, module: &str) -> ModTimerView {
        let state = self.state();
        let Some(timers) = state.mods.get(module) else { return ModTimerView::default() };
        let mut periodic: Vec<(String, u32, u64)> =
            timers.every.iter().map(|(name, e)| (name.clone(), e.every_s, e.at_ms)).collect();
        periodic.sort();
        ModTimerView { failed: timers.failed, retried: timers.retried, pending: timers.once.len(), periodic }
    }
}

/// The due time after a periodic timer's firing due at `due_ms` that ended at `now`: one period
/// later, or, behind it (a catch-up, or a firing longer than its period), one period from now.
fn after_period(due_ms: u64, every_s: u32, now: u64) -> u64 {
    let period = u64::from(every_s) * 1000;
    let next = due_ms.saturating_add(period);
    if next > now { next } else { now.saturating_add(period) }
}

/// This process's name in its one-shot claims: the machine, the process, and a per-`Timers` part
/// (two hosts in one process, as the tests run them, are two holders).
fn holder_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_owned()).unwrap_or_default();
    format!("{host}/{}/{:x}/{}", std::process::id(), nanos as u64, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A one-shot's due time, from its id (`<12 hex digits of due ms><8 hex digits>`); `None` for what
/// is not such an id.
fn due_of_id(id: &str) -> Option<u64> {
    if id.len() != 20 || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    u64::from_str_radix(&id[..12], 16).ok()
}

/// A name or session a mod sent, cut for a message.
fn shown(text: &str) -> String {
    text.chars().take(64).flat_map(char::escape_default).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_its_payload_bytes_as_they_are_and_an_id_its_due_time() {
        let record = Record { name: "n".into(), session: None, due_ms: 5, claim: None, payload: b"a\nb\0".to_vec() };
        assert_eq!(Record::decode(&record.encode().unwrap()).unwrap(), record);
        assert!(Record::decode(b"no header").is_err());
        assert_eq!(due_of_id("00000000007b00000001"), Some(123));
        for bad in ["", "00000000007b0000000", "00000000007B00000001", "../../../../../../..", "00000000007b0000000g"] {
            assert_eq!(due_of_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_queue_is_keyed_by_time_and_timer_two_at_one_ms_are_two_entries_in_id_order() {
        let mut any = |_: &str| true;
        let mut queue = Queue::default();
        let (first, second) = (TimerId::once("m", "00000000000a00000001"), TimerId::once("m", "00000000000a00000002"));
        let retried = TimerId::every("m", "tick");
        queue.insert(10, second.clone(), 10);
        queue.insert(10, first.clone(), 10);
        // A retry: queued for 5, due at 3.
        queue.insert(5, retried.clone(), 3);
        assert_eq!(queue.first_at_where(&mut any), Some(5));
        assert_eq!(queue.pop_due(4, &mut any), None, "nothing before its time");
        assert_eq!(queue.pop_due(10, &mut any), Some(Due { timer: retried, due_ms: 3 }), "a retry keeps its due time");
        assert_eq!(queue.pop_due(10, &mut any), Some(Due { timer: first.clone(), due_ms: 10 }), "same ms: in id order");
        assert_eq!(queue.pop_due(10, &mut any), Some(Due { timer: second.clone(), due_ms: 10 }));
        assert_eq!(queue.pop_due(u64::MAX, &mut any), None);
        // Removing finds the entry by its key: the other timer of that ms stays.
        queue.insert(10, first.clone(), 10);
        queue.insert(10, second.clone(), 10);
        queue.remove(10, first);
        assert_eq!(queue.pop_due(10, &mut any), Some(Due { timer: second, due_ms: 10 }));
        assert_eq!(queue.first_at_where(&mut any), None);
    }

    #[test]
    fn a_mod_without_room_is_passed_over_and_its_timers_keep_their_place() {
        let mut queue = Queue::default();
        let (hog, other) =
            (TimerId::once("hog", "00000000000100000001"), TimerId::once("other", "00000000000200000001"));
        queue.insert(1, hog.clone(), 1);
        queue.insert(2, other.clone(), 2);
        queue.insert(9, TimerId::every("other", "later"), 9);
        let mut not_hog = |m: &str| m != "hog";
        assert_eq!(queue.first_at_where(&mut not_hog), Some(2));
        assert_eq!(queue.pop_due(5, &mut not_hog), Some(Due { timer: other, due_ms: 2 }), "the hog's is passed over");
        assert_eq!(queue.pop_due(5, &mut not_hog), None, "the other's next is not due yet");
        assert_eq!(queue.pop_due(5, &mut |_| true), Some(Due { timer: hog, due_ms: 1 }), "still first in line");
    }

    #[tokio::test]
    async fn a_cancelled_one_shot_leaves_the_queue_and_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), false).unwrap());
        let timers = Timers::new(store.clone());
        let kept = timers.schedule("m", "kept".into(), 60_000, None, Vec::new()).await.unwrap();
        let cancelled = timers.schedule("m", "gone".into(), 60_000, None, b"x".to_vec()).await.unwrap();
        assert_eq!(store.list("timers.m", "o.").unwrap().len(), 2);
        assert!(timers.cancel("m", &cancelled).await.unwrap());
        assert!(!timers.cancel("m", &cancelled).await.unwrap(), "cancelled once");
        assert_eq!(store.list("timers.m", "o.").unwrap(), vec![format!("o.{kept}")]);
        let taken = timers.take_due(u64::MAX, 16, |_| true);
        assert_eq!(taken.len(), 1, "{taken:?}");
        assert_eq!(taken[0].timer, TimerId::once("m", &kept));
    }

    fn due(module: &str, name: &str, due_ms: u64) -> Due {
        Due { timer: TimerId::every(module, name), due_ms }
    }

    #[tokio::test]
    async fn a_periodic_timer_behind_its_schedule_fires_once_then_one_period_from_now() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(dir.path(), false).unwrap());
        let now = now_ms();
        // Stored as due 10 periods ago: the server was off.
        store.set("timers.m", "p.tick", (now - 10_000).to_string().as_bytes()).unwrap();
        let timers = Timers::new(store.clone());
        timers.sync(&[("m".into(), vec![("tick".into(), 1)])]).await;
        let taken = timers.take_due(now_ms(), 16, |_| true);
        assert_eq!(taken, vec![due("m", "tick", now - 10_000)], "due at once, with its old due time");
        assert!(timers.take_due(now_ms(), 16, |_| true).is_empty(), "never twice at once");
        timers.finish(&taken[0], Outcome::Done).await;
        let next = timers.next_due(|_| true).unwrap();
        assert!(next >= now + 1000 && next <= now_ms() + 1000, "one period from now: {next} vs {now}");
        assert!(timers.take_due(now_ms(), 16, |_| true).is_empty(), "not a burst of the missed firings");
        let stored: u64 =
            std::str::from_utf8(&store.get("timers.m", "p.tick").unwrap().unwrap()).unwrap().parse().unwrap();
        assert_eq!(stored, next, "the next due time is stored");
        // The mod no longer declares it: it leaves the queue.
        timers.sync(&[("m".into(), vec![])]).await;
        assert_eq!(timers.next_due(|_| true), None);
    }
}
