//! What the game gives other mods: the function `give-item` (`mods.call("emulator", "give-item", …)`),
//! and the events it emits at its key points ([`announce`]).
//!
//! `give-item` puts new stacks of one template into the stash of the invocation's session's profile:
//! the host holds that session's lock while it runs (the request's own, or the one `call-for-session`
//! took), so it never races the player's own requests. It places like a purchase does (first fit in
//! the stash grid, stacks up to the template's stack size) and writes once, compare-and-set on the
//! profile's version.
//!
//! Events are emitted after the game's own writes: a subscriber may call back into the game (a
//! welcome gift on `profile.created`) and must find the profile written. An event that no mod hears
//! costs one host call; one that fails is logged, and the player's request goes on.

use crate::doc::Doc;
use crate::inventory::{Grid, Templates, write};
use crate::profile;
use modhost_sdk::calls::Invocation;
use modhost_sdk::{Error, Result, db, events, log};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The most items one `give-item` call gives.
const MAX_COUNT: u64 = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Gift {
    tpl: String,
    #[serde(default = "one")]
    count: u64,
}

fn one() -> u64 {
    1
}

/// `give-item {tpl, count}` → `{"ids": [new stack ids]}`, for the invocation's session.
pub(crate) fn give_item(call: &Invocation) -> Result<Value> {
    let gift: Gift = call.json()?;
    if !(1..=MAX_COUNT).contains(&gift.count) {
        return Err(Error::Invalid(format!("count must be 1 to {MAX_COUNT}; it is {}", gift.count)));
    }
    if !profile::is_id(&gift.tpl) || !db::exists(&db::path(&["templates", "items", &gift.tpl])) {
        return Err(Error::Invalid(format!(
            "`{}` is not an item template",
            gift.tpl.chars().take(64).collect::<String>()
        )));
    }
    let Some(session) = call.session() else {
        return Err(Error::NotFound("give-item needs a session (call it for one with call-for-session)".into()));
    };
    let Some(uid) = profile::bound_profile(session)? else {
        return Err(Error::NotFound(format!("session {session} has no profile")));
    };
    let key = format!("profile.{uid}");
    let mut templates = Templates::default();
    let Some(version) = profile::open(&key, &mut templates)? else {
        return Err(Error::NotFound(format!("the profile of session {session} does not exist")));
    };
    let mut doc = Doc::at(&key, version);
    let stash =
        doc.get(&["Inventory", "stash"])?.as_str().ok_or_else(|| Error::failed("the profile has no stash"))?.to_owned();
    let mut grid = Grid::of(&mut doc, &mut templates, &stash, "hideout")?
        .ok_or_else(|| Error::failed("the profile's stash has no grid"))?;
    let (w, h) = templates.footprint(&gift.tpl, false);
    let max = templates.stack_max(&gift.tpl).unwrap_or(1).max(1);
    let (mut left, mut ids) = (gift.count, Vec::new());
    while left > 0 {
        let units = max.min(left);
        let Some(place) = grid.place(&mut doc, w, h)? else {
            return Err(Error::TooLarge(format!("no room in the stash for {} of {}", gift.count, gift.tpl)));
        };
        let id = profile::new_id();
        let stack = json!({
            "_id": id, "_tpl": gift.tpl, "parentId": stash, "slotId": "hideout", "location": place,
            "upd": { "StackObjectsCount": units, "SpawnedInSession": false },
        });
        write(&mut doc, &mut templates, &id, Some(stack))?;
        ids.push(id);
        left -= units;
    }
    doc.commit()?;
    crate::notify::gift(session, &gift.tpl, gift.count);
    Ok(json!({ "ids": ids }))
}

/// Emits `topic` with `payload`; a failure is logged, never the request's.
pub(crate) fn announce(topic: &str, payload: &impl Serialize) {
    if let Err(e) = events::emit(topic, payload) {
        log::warn(&format!("emitting {topic}: {e}"));
    }
}
