//! The mods' timers: one-shot ones they schedule and periodic ones they declare, due times kept in
//! the store so a timer survives a restart and one that came due while the server was off fires once
//! at the next start.

/// The scheduler.
#[derive(Debug, Default)]
pub(crate) struct Timers {}

impl Timers {
    pub(crate) fn new() -> Timers {
        Timers {}
    }
}
