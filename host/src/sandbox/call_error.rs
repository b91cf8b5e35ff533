//! [`CallError`]: why a call into a mod produced no answer, and [`Busy`], what the server had no room
//! for; with the conversions that make them from what wasmtime and the guest report (a mod's error
//! value, a failed instantiation, the last lines of a trapped call's output).
//!
//! Which of these count toward quarantine is `quarantine.rs`'s to say.

use super::logcap;
use super::state::Limiter;
use std::time::Duration;
use wasmtime::Trap;

/// The longest reason (a mod's error message, a trap's one line) that reaches the client and the log.
pub(super) const MAX_REASON: usize = 512;

/// Why a call into a mod did not produce an answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CallError {
    /// The mod returned its own error value; `status` is the HTTP status its kind maps to (`invalid`
    /// 400, `not-found` 404, `denied` 403, `conflict` 409, `too-large` 413, anything else 500).
    /// `reason` is the mod's own words, without the kind (what a calling mod gets back, with the kind
    /// kept as the kind).
    #[error("the mod returned an error: {message}")]
    Mod { status: u16, message: String, reason: String },
    /// The call ran past its deadline and was stopped.
    #[error("the mod ran past its deadline of {} ms and was stopped", .0.as_millis())]
    Deadline(Duration),
    /// The guest trapped (a panic, a memory cap, an out-of-bounds access…). `reason` is one line;
    /// the whole text, with the wasm backtrace, went to the log and to `ModContext::last_trap`.
    #[error("the mod trapped: {reason}{}", stderr_suffix(.stderr))]
    Trap {
        reason: String,
        stderr: String,
        /// It trapped growing its memory past its cap.
        memory: bool,
    },
    /// The instance could not be created (its start code trapped or ran out its deadline).
    #[error("the mod could not be instantiated: {0}")]
    Instantiate(String),
    /// The server had no room for the call: a slot, the pool, or the memory budget stayed full.
    #[error("{0}")]
    Busy(Busy),
    /// The mod failed too many calls and is stopped until it is loaded again.
    #[error("the mod is quarantined: {0}")]
    Quarantined(String),
}

/// What the server had no room for (each a 503, never a strike: it is the server's state).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Busy {
    /// Every instance slot (the mod's share or the pool's) stayed taken for the whole wait.
    #[error("every instance slot stayed busy for {} ms", .0.as_millis())]
    Slots(Duration),
    /// A call nested in a chain (an event, a call) found no slot within its short wait: its chain
    /// holds slots of its own, so waiting out its deadline could be waiting for itself.
    #[error(
        "every instance slot stayed busy for {} ms; a call nested in another waits no longer, because \
         its chain holds instances of its own",
        .0.as_millis()
    )]
    NestedSlots(Duration),
    /// A call re-entering a mod already running in its chain found the mod's share full, and the
    /// room for re-entries (as many again) full too. Refused at once: the chain holds one of the
    /// slots it would wait for.
    #[error(
        "mod {module} is already running in this chain and all of its {share} instances are in use, \
         with as many again by chains re-entering it; a call back into a mod its chain is running \
         does not wait for a slot its own chain may hold"
    )]
    Reentry { module: String, share: u32 },
    /// The pooling allocator had no room of a kind (memories, tables, core instances).
    #[error("the instance pool is full: {0}")]
    Pool(String),
    /// The server-wide memory budget stayed full.
    #[error("{0}")]
    Memory(super::budget::BudgetFull),
    /// The call failed after a store call found the store unavailable (a shared store's database
    /// down or restarting): the outage's failure, not the mod's.
    #[error("{0}")]
    Store(String),
    /// The call waited for the memory budget and then ran out its deadline.
    #[error("the call waited for the server's guest memory budget and then ran out its deadline of {} ms", .0.as_millis())]
    MemoryThenDeadline(Duration),
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!(" (its output ended: {stderr})") }
}

/// Why an instantiation failed: a pool or budget with no room is the server's state (503, no
/// strike); anything else is the component's own (its start code trapped or ran out its deadline).
pub(super) fn instantiation_failed(error: &wasmtime::Error, limiter: &Limiter, deadline: Duration) -> CallError {
    if let Some(full) = &limiter.budget_full {
        return CallError::Busy(Busy::Memory(full.clone()));
    }
    if let Some(pool) = error.chain().find_map(|e| e.downcast_ref::<wasmtime::PoolConcurrencyLimitError>()) {
        return CallError::Busy(Busy::Pool(pool.to_string()));
    }
    if matches!(error.downcast_ref::<Trap>(), Some(Trap::Interrupt)) {
        return CallError::Instantiate(format!("its start code ran past the deadline of {} ms", deadline.as_millis()));
    }
    let root = error.root_cause().to_string();
    CallError::Instantiate(logcap::clean(root.lines().next().unwrap_or("it failed"), MAX_REASON))
}

/// A mod's error value, with the HTTP status its kind means: the mod's own words about the request
/// (bad input, nothing there, not allowed) reach the client as a 4xx, not as a server failure.
pub(super) fn describe_mod_error(e: &super::bindings::Error) -> CallError {
    use super::bindings::modhost::plugin::types::Error::*;
    let (status, kind, reason) = match e {
        NotFound(m) => (404, "not found: ", m),
        Invalid(m) => (400, "invalid: ", m),
        WrongKind(m) => (500, "wrong kind: ", m),
        Unreadable(m) => (500, "unreadable: ", m),
        TooLarge(m) => (413, "too large: ", m),
        Denied(m) => (403, "denied: ", m),
        Conflict(m) => (409, "conflict: ", m),
        Io(m) => (500, "i/o: ", m),
        Failed(m) => (500, "", m),
    };
    // The message reaches the log and the client: one line, cut.
    let reason = logcap::clean(reason, MAX_REASON);
    CallError::Mod { status, message: format!("{kind}{reason}"), reason }
}

/// The lines of a trapped call's stdout/stderr that say why, as one line: a Rust panic prints
/// `panicked at <place>:` and its message, then a note on backtraces, which is dropped.
pub(super) fn panic_lines(output: &[u8]) -> String {
    let tail_start = output.len().saturating_sub(1024);
    let tail = String::from_utf8_lossy(&output[tail_start..]);
    let lines: Vec<&str> = tail.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("note: ")).collect();
    let last = lines[lines.len().saturating_sub(3)..].join(" ");
    logcap::clean(&last, MAX_REASON)
}
