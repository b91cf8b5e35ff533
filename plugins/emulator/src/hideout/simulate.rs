//! Time passing in the hideout, as a pure function of the stored state (`state.rs`) and the elapsed
//! time. Today: the anchor moves to `to`; nothing else changes yet.

use serde_json::{Value, json};

/// The member of `Hideout` that holds the anchor's time, in seconds of the game's clock.
pub(crate) const ANCHOR: &str = "sptUpdateLastRunTimestamp";

/// What the simulation reads from the rest of the profile.
#[expect(dead_code, reason = "the simulation, being written, reads them")]
pub(crate) struct Context {
    /// The profile's `Bonuses` (fuel consumption, craft speed, …).
    pub(crate) bonuses: Value,
    /// The profile's `Skills` (hideout management, crafting).
    pub(crate) skills: Value,
}

/// Advances `hideout`, anchored at its `sptUpdateLastRunTimestamp`, to `to` (game seconds). A `to`
/// before the anchor changes nothing.
pub(crate) fn advance(hideout: &mut Value, _context: &Context, to: u64) {
    let from = hideout[ANCHOR].as_u64().unwrap_or(to);
    if to < from {
        return;
    }
    hideout[ANCHOR] = json!(to);
}
