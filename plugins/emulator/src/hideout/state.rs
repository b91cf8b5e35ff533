//! The hideout as the profile stores it: SPT's `Hideout` (`Areas`, `Production`, `Improvements`,
//! `Customization`, `MannequinPoses`, `HideoutCounters`, …) as it was at its
//! `sptUpdateLastRunTimestamp` (the anchor). Time passing is `simulate::advance`, a pure function of
//! the anchored state, the profile's bonuses and skills, and the elapsed time: what the game shows is
//! the stored state advanced to now ([`current`], [`shown`]) and reading writes nothing, so a server
//! that was off for six hours shows what one kept running would. An action that changes the hideout
//! first stores the state advanced to now ([`settle`]), changes it, and writes it back ([`store`]).

use super::simulate::{self, ANCHOR};
use crate::clock;
use crate::profile::doc::Doc;
use modhost_sdk::{Error, Result};
use serde_json::Value;

/// The batch's profile's hideout as it is now; nothing is written.
pub(crate) fn current(doc: &mut Doc) -> Result<Value> {
    let mut hideout = doc.get(&["Hideout"])?;
    if !hideout.is_object() {
        return Err(Error::Invalid("the profile has no `Hideout`".into()));
    }
    let context = simulate::Context { bonuses: doc.get(&["Bonuses"])?, skills: doc.get(&["Skills"])? };
    simulate::advance(&mut hideout, &context, clock::now());
    Ok(hideout)
}

/// Stores the hideout as it is now (advanced) and answers it: what an action then changes.
pub(crate) fn settle(doc: &mut Doc) -> Result<Value> {
    let hideout = current(doc)?;
    store(doc, hideout.clone())?;
    Ok(hideout)
}

/// Writes `hideout` (a settled hideout an action changed) back to the batch's profile.
pub(crate) fn store(doc: &mut Doc, hideout: Value) -> Result<()> {
    doc.set(&["Hideout"], hideout)
}

/// A profile in SPT's shape with its hideout shown as it is now (the profile list). The shown
/// hideout keeps the stored anchor: the client never reads it, and a profile read twice with nothing
/// running in its hideout reads the same (a restart between the reads changes nothing).
pub(crate) fn shown(mut profile: Value) -> Value {
    if profile["Hideout"].is_object() {
        let context = simulate::Context { bonuses: profile["Bonuses"].clone(), skills: profile["Skills"].clone() };
        let anchor = profile["Hideout"][ANCHOR].clone();
        simulate::advance(&mut profile["Hideout"], &context, clock::now());
        profile["Hideout"][ANCHOR] = anchor;
    }
    profile
}
