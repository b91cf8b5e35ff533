//! [`Deadline`]: one call's deadline, which stops while the call waits for another mod's time.
//!
//! A call's time is its own. When a mod emits an event, its subscribers run inside that host call,
//! each in its own instance under its own deadline (`instance.rs`), and the emitter waits: that wait
//! is the subscribers' time, not the emitter's. So `emit` pauses the emitter's deadline while it
//! delivers (`mods.rs`), and the deadline moves on by as long as the pause lasted. A subscriber that
//! spins then runs out its own deadline and is counted against itself; the emitter's call, which may
//! already have written what the event announces, goes on and answers (issue 29, item 5).
//!
//! Two things stop a call past its deadline, and both read this one: the epoch callback
//! (`instance.rs`' `arm`), for a guest running wasm, and [`Deadline::run`], the clock around the whole call, for
//! a guest waiting inside an async host call where no epoch check runs. Must not break: while paused
//! neither fires, and a pause that ends (or is dropped, when the call is cancelled) always resumes.
//!
//! Beside it, [`CpuShare`]: a mod's share of the cores, by which the epoch callback paces the mod's
//! calls that run past a tick ([`Pace`]).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One call's deadline. Shared (an `Arc`) by the epoch callback, the clock around the call and the
/// call's `CallState` (which pauses it).
#[derive(Debug)]
pub(crate) struct Deadline {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// When the call is stopped, if it is not paused then.
    stop_at: Instant,
    /// Pauses in progress (nested host calls of one store cannot overlap, but a count costs
    /// nothing and keeps a stray second pause from resuming early), and since when.
    paused: Option<(u32, Instant)>,
}

/// The call the deadline ran out on.
#[derive(Debug)]
pub(crate) struct Elapsed;

impl Deadline {
    /// A deadline `after` from now.
    pub(crate) fn start(after: Duration) -> Arc<Deadline> {
        Arc::new(Deadline { state: Mutex::new(State { stop_at: Instant::now() + after, paused: None }) })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// When the call is stopped; `None` while it is paused.
    pub(crate) fn stop_at(&self) -> Option<Instant> {
        let state = self.state();
        state.paused.is_none().then_some(state.stop_at)
    }

    /// Pauses the deadline until the answer is dropped: the time in between is not the call's.
    pub(crate) fn pause(self: &Arc<Self>) -> Paused {
        let mut state = self.state();
        state.paused = match state.paused {
            None => Some((1, Instant::now())),
            Some((n, since)) => Some((n + 1, since)),
        };
        Paused(self.clone())
    }

    /// Runs `call` until it ends or the deadline, plus `grace`, has passed (a pause stops the
    /// clock). The grace lets the epoch callback, which stops wasm at the deadline itself, act first.
    pub(crate) async fn run<F: Future>(&self, grace: Duration, call: F) -> Result<F::Output, Elapsed> {
        let mut call = std::pin::pin!(call);
        loop {
            // While paused, look again after a grace: the pause's end is not known in advance.
            let wake = match self.stop_at() {
                Some(stop_at) => stop_at + grace,
                None => Instant::now() + grace,
            };
            match tokio::time::timeout_at(wake.into(), call.as_mut()).await {
                Ok(output) => return Ok(output),
                Err(_) if self.stop_at().is_some_and(|stop_at| Instant::now() >= stop_at + grace) => {
                    return Err(Elapsed);
                }
                Err(_) => continue,
            }
        }
    }
}

/// A pause of a [`Deadline`]; dropping it resumes the deadline, moved on by the pause's length.
#[derive(Debug)]
pub(crate) struct Paused(Arc<Deadline>);

impl Drop for Paused {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.paused = match state.paused {
            Some((n, since)) if n > 1 => Some((n - 1, since)),
            Some((_, since)) => {
                state.stop_at += since.elapsed();
                None
            }
            None => None,
        };
    }
}

/// A mod's share of the cores. Calls that end within an epoch tick (nearly all) never see it. A call
/// still running at a tick is a long one, counted here until it ends; at each tick a long call
/// yields, and when the mod has more long calls than its share it also pauses for the others'
/// turns, so its long calls between them run about `share` cores' worth and the rest of the
/// workers' time goes to every other mod's requests. Without it, 64 calls of one mod spinning (or
/// faulting in 120 MiB each) were 64 tasks in the workers' run queues, and another mod's request
/// waited behind each one's 10 ms slice: seconds.
///
/// No permit is held, so a paused call never holds up another (a nested call into the same mod
/// runs at once) and the deadline still stops it at its tick.
#[derive(Debug)]
pub(crate) struct CpuShare {
    /// Its calls running past a tick now.
    long: AtomicUsize,
    /// How many of them run at full speed between them (`ModLimits::cpu_share`).
    share: usize,
}

/// One long call, counted in its mod's [`CpuShare`] until its call state drops it (at the call's
/// end, or with the instance when the call was dropped).
#[derive(Debug)]
pub(crate) struct LongCall(Arc<CpuShare>);

impl LongCall {
    /// Counts a call as long in `cpu` until the answer drops.
    pub(crate) fn new(cpu: &Arc<CpuShare>) -> LongCall {
        cpu.long.fetch_add(1, Ordering::Relaxed);
        LongCall(cpu.clone())
    }
}

impl Drop for LongCall {
    fn drop(&mut self) {
        self.0.long.fetch_sub(1, Ordering::Relaxed);
    }
}

impl CpuShare {
    /// A share of `share` cores (at least one).
    pub(crate) fn new(share: usize) -> CpuShare {
        CpuShare { long: AtomicUsize::new(0), share: share.max(1) }
    }

    /// How many ticks a long call waits now: `long` calls share `share` cores, so each runs a tick
    /// then waits `(long - share) / share` ticks; `None` while the mod is within its share.
    pub(crate) fn turns_to_wait(&self) -> Option<u32> {
        let long = self.long.load(Ordering::Relaxed);
        (long > self.share).then(|| u32::try_from((long - self.share).div_ceil(self.share)).unwrap_or(u32::MAX))
    }
}

/// A mod's share of the cores for one call ([`CpuShare`]), and the epoch tick.
pub(crate) struct Pace {
    pub(crate) cpu: Arc<CpuShare>,
    pub(crate) tick: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pause_moves_the_deadline_on_by_its_length_and_the_clock_waits_it_out() {
        let grace = Duration::from_millis(20);
        // 100 ms of its own, and a pause three times as long in the middle: the call finishes.
        let deadline = Deadline::start(Duration::from_millis(100));
        let call = async {
            tokio::time::sleep(Duration::from_millis(30)).await;
            let paused = deadline.pause();
            tokio::time::sleep(Duration::from_millis(300)).await;
            drop(paused);
            tokio::time::sleep(Duration::from_millis(30)).await;
            "done"
        };
        assert_eq!(deadline.run(grace, call).await.ok(), Some("done"), "the pause counted against the call");
        // No pause: a call that runs past the deadline and its grace is stopped.
        let deadline = Deadline::start(Duration::from_millis(100));
        assert!(deadline.run(grace, tokio::time::sleep(Duration::from_secs(30))).await.is_err());
    }
}
