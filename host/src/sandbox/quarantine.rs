//! [`Quarantine`]: one loaded mod's strikes and, once it has too many, why it is stopped.
//!
//! Quarantine is for a mod that is broken for everyone, so no client can reach it by choosing its
//! input (the policy, and why: `docs/architecture.md`, "Quarantine"). Strikes count per cause over a
//! window, only while no call of the mod has succeeded within it; what the request itself explains
//! (a memory trap or a deadline on a large body), what the server's state explains (a full pool or
//! budget) and the mod's own error values are never strikes. A quarantined mod stays so until it is
//! loaded again (a new `LoadedMod`, a new `Quarantine`).

use super::call_error::CallError;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A strike's cause: each counts on its own, so one kind of failure never adds to another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    Trap,
    Memory,
    Deadline,
    Instantiate,
}

impl Cause {
    const ALL: usize = 4;

    fn name(self) -> &'static str {
        match self {
            Cause::Trap => "traps",
            Cause::Memory => "memory traps",
            Cause::Deadline => "deadlines",
            Cause::Instantiate => "failed instantiations",
        }
    }

    /// Whether `error` is a strike toward quarantine, and of which cause. `body` is the request
    /// body's length (0 for `routes` and `init`), `memory_cap` the mod's memory cap.
    fn of(error: &CallError, body: usize, memory_cap: usize) -> Option<Cause> {
        let large = body >= memory_cap / LARGE_BODY_SHARE;
        match error {
            // The request's size explains these: its failure, not the mod's.
            CallError::Trap { memory: true, .. } | CallError::Deadline(_) if large => None,
            CallError::Trap { memory: true, .. } => Some(Cause::Memory),
            CallError::Trap { .. } => Some(Cause::Trap),
            CallError::Deadline(_) => Some(Cause::Deadline),
            CallError::Instantiate(_) => Some(Cause::Instantiate),
            CallError::Mod { .. } | CallError::Busy(_) | CallError::Quarantined(_) => None,
        }
    }
}

/// A body this large (against the mod's memory cap) explains a memory trap or a deadline by itself:
/// 1/256 of the cap, 512 KiB at 128 MiB. Parsing JSON into values takes 16-64 bytes per input byte,
/// so a body under this cannot fill the cap by size alone.
const LARGE_BODY_SHARE: usize = 256;

/// One mod's strikes, its last success, and why it is quarantined once it is.
#[derive(Debug)]
pub(super) struct Quarantine {
    /// Strikes of one cause within `window` that quarantine the mod (`quarantine_after`; 0: never).
    after: u32,
    /// How long a strike counts, and how long a success keeps input-made failures from striking.
    window: Duration,
    /// Recent strikes per cause (at most `after` each).
    strikes: Mutex<[VecDeque<Instant>; Cause::ALL]>,
    /// When a call last succeeded (or returned the mod's own error value), in ms since `born` plus
    /// one; 0: never. An atomic, so the success path takes no lock.
    last_success: AtomicU64,
    born: Instant,
    /// Why the mod is quarantined, once it is.
    reason: Mutex<Option<String>>,
    /// Whether `reason` is set: every request asks, and an atomic load answers without the lock.
    is_quarantined: AtomicBool,
}

impl Quarantine {
    /// No strikes yet: `after` strikes of one cause within `window` quarantine the mod.
    pub(super) fn new(after: u32, window: Duration) -> Quarantine {
        Quarantine {
            after,
            window,
            strikes: Mutex::default(),
            last_success: AtomicU64::new(0),
            born: Instant::now(),
            reason: Mutex::new(None),
            is_quarantined: AtomicBool::new(false),
        }
    }

    /// Why the mod is quarantined, if it is.
    pub(super) fn reason(&self) -> Option<String> {
        if !self.is_quarantined.load(Ordering::Acquire) {
            return None;
        }
        self.reason.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Counts a call's outcome (of mod `id`, whose memory cap is `memory_cap`; `body`: the request
    /// body's length).
    pub(super) fn tally<R>(&self, id: &str, result: &Result<R, CallError>, body: usize, memory_cap: usize) {
        let error = match result {
            Ok(_) | Err(CallError::Mod { .. }) => {
                let ms = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX - 1);
                self.last_success.store(ms + 1, Ordering::Relaxed);
                return;
            }
            Err(error) => error,
        };
        let Some(cause) = Cause::of(error, body, memory_cap) else { return };
        let (now, window) = (Instant::now(), self.window);
        let last_success = match self.last_success.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(self.born + Duration::from_millis(ms - 1)),
        };
        // A mod that answered a call within the window works: a trap or a deadline now comes from
        // this request's input, which a client chooses. Instantiation takes no input: always a strike.
        if cause != Cause::Instantiate && last_success.is_some_and(|t| now.duration_since(t) < window) {
            return;
        }
        let limit = self.after as usize;
        let mut strikes = self.strikes.lock().unwrap_or_else(PoisonError::into_inner);
        let recent = &mut strikes[cause as usize];
        recent.retain(|t| now.duration_since(*t) < window && last_success.is_none_or(|s| *t > s));
        recent.push_back(now);
        while recent.len() > limit.max(1) {
            recent.pop_front();
        }
        if limit > 0 && recent.len() >= limit {
            let reason = format!(
                "{limit} calls in a row failed ({} within {} s, none succeeding); the last: {error}",
                cause.name(),
                window.as_secs()
            );
            drop(strikes);
            tracing::error!("mod {id} quarantined until it is loaded again: {reason}");
            *self.reason.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
            self.is_quarantined.store(true, Ordering::Release);
        }
    }
}
