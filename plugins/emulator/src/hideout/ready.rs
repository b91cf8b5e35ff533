//! The moments the hideout reaches on its own: an area's construction done, a craft finished. Each
//! is a timer of the host's (`hideout.ready`), armed when the batch that started it is written
//! (`items/mod.rs` arms what an action listed in `Changes::later`), so it is stored with the host's
//! timers, survives a restart and fires once, late when the server was off. When it fires it reads
//! the hideout as it is now (`state::current`; it writes nothing) and, when the thing is done, tells
//! the mods: `emulator.hideout.area.ready` `{session, uid, area, level}` or `emulator.hideout.production.ready`
//! `{session, uid, recipeId}`. A craft slowed by a generator that ran dry is not done yet: the timer
//! is armed again for what is left at full speed, a bounded number of times. A timer whose area or
//! craft is gone does nothing; one whose craft was started again since looks at the new one (there
//! is one pending timer per area and recipe of a profile, [`arm_once`]).
//!
//! The SPT client has no notification for either (SPT's `NotificationEventType` lists none): it
//! counts a craft's or a construction's time itself, so nothing is pushed to it here; a mod that
//! wants the player told (a chat bot's letter, a push to a companion app) hears the event.
//!

use super::state;
use crate::clock;
use crate::events;
use crate::profile;
use crate::profile::doc::Doc;
use crate::profile::inventory::Changes;
use crate::profile::shape::INDEX;
use crate::templates::Templates;
use modhost_sdk::timers::Fired;
use modhost_sdk::{Error, Result, log, timers};
use serde::Deserialize;
use serde_json::{Value, json};

/// The host timer's name.
pub(crate) const READY_TIMER: &str = "hideout.ready";
/// How often a timer is armed again for a thing not done yet (a craft without power for days).
const MAX_TRIES: u32 = 24;
/// The shortest wait before looking again, in seconds.
const MIN_WAIT: u64 = 60;

#[derive(Deserialize)]
struct Ready {
    uid: String,
    #[serde(default)]
    area: Option<u64>,
    #[serde(default)]
    recipe: Option<String>,
    #[serde(default)]
    tries: u32,
}

/// Arms the timer for area `kind` being built, done in `delay` seconds (see [`arm_once`]).
pub(crate) fn area(doc: &mut Doc, changes: &mut Changes, kind: u64, delay: u64) -> Result<()> {
    let uid = state::uid(doc).to_owned();
    arm_once(doc, changes, &["area", &kind.to_string()], delay, json!({"uid": uid, "area": kind}))
}

/// Arms the timer for the craft of `recipe`, done in `delay` seconds at full speed (see [`arm_once`]).
pub(crate) fn production(doc: &mut Doc, changes: &mut Changes, recipe: &str, delay: u64) -> Result<()> {
    let uid = state::uid(doc).to_owned();
    arm_once(doc, changes, &["production", recipe], delay, json!({"uid": uid, "recipe": recipe}))
}

/// Lists the timer in `changes.later` (armed once the batch is written) unless one for the same area
/// or recipe is still pending: the due time of the last one armed is kept in the profile's index
/// (`_modhost.ready.<thing>`), written in the same batch. So a client that starts and deletes a craft
/// in a loop arms one timer, not one per start: a profile holds at most one pending timer per area and
/// recipe of the db (and the ones a firing timer arms again), never a share of the game's timers that
/// grows with its requests. The one pending timer looks at whatever the thing is when it fires.
fn arm_once(doc: &mut Doc, changes: &mut Changes, thing: &[&str], delay: u64, payload: Value) -> Result<()> {
    let mut path = vec![INDEX, "ready"];
    path.extend_from_slice(thing);
    let now = clock::now();
    if doc.get(&path)?.as_u64().is_some_and(|due| due > now) {
        return Ok(());
    }
    doc.set(&path, json!(now + delay))?;
    changes.later.push((READY_TIMER.to_owned(), delay, payload));
    Ok(())
}

/// The `hideout.ready` timer.
pub(crate) fn fired(timer: &Fired) -> Result<()> {
    let ready: Ready = timer.json()?;
    if !crate::ids::is_id(&ready.uid) {
        return Err(Error::Invalid("a hideout.ready timer names no profile".into()));
    }
    let key = format!("profile.{}", ready.uid);
    let Some(version) = profile::open(&key, &mut Templates::default())? else { return Ok(()) };
    let hideout = state::current(&mut Doc::at(&key, version))?;
    let now = clock::now();
    let session = timer.session().unwrap_or_default();
    let left = if let Some(kind) = ready.area {
        let areas = hideout["Areas"].as_array().map(Vec::as_slice).unwrap_or_default();
        let Some(area) = areas.iter().find(|a| a["type"].as_u64() == Some(kind)) else { return Ok(()) };
        if area["constructing"] != true {
            return Ok(());
        }
        let level = area["level"].as_u64().unwrap_or(0) + 1;
        let due = area["completeTime"].as_u64().unwrap_or(0);
        if due <= now {
            let payload = json!({"session": session, "uid": ready.uid, "area": kind, "level": level});
            events::announce(events::HIDEOUT_AREA_READY, &payload);
            return Ok(());
        }
        due - now
    } else if let Some(recipe) = &ready.recipe {
        let Some(craft) = hideout["Production"].get(recipe) else { return Ok(()) };
        let (progress, total) =
            (craft["Progress"].as_f64().unwrap_or(0.0), craft["ProductionTime"].as_f64().unwrap_or(0.0));
        if progress >= total || craft["AvailableForFinish"] == true {
            let payload = json!({"session": session, "uid": ready.uid, "recipeId": recipe});
            events::announce(events::HIDEOUT_PRODUCTION_READY, &payload);
            return Ok(());
        }
        (total - progress).ceil().max(0.0) as u64
    } else {
        return Err(Error::Invalid("a hideout.ready timer names no area or craft".into()));
    };
    if ready.tries < MAX_TRIES {
        let mut payload: Value = timer.json()?;
        payload["tries"] = json!(ready.tries + 1);
        arm(timer.session(), READY_TIMER, left.max(MIN_WAIT), &payload);
    }
    Ok(())
}

/// Arms timer `name` in `delay` seconds for `session`; a timer that cannot be stored is logged (the
/// player's hideout is right without it: only the mods' event is lost).
pub(crate) fn arm(session: Option<&str>, name: &str, delay: u64, payload: &Value) {
    if let Err(e) = timers::schedule_json(name, std::time::Duration::from_secs(delay), session, payload) {
        log::warn(&format!("arming {name} in {delay} s: {e}"));
    }
}
