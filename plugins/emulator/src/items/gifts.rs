//! What the game gives other mods to call: the function `give-item` (`mods.call("emulator",
//! "give-item", …)`). The events it emits are `events.rs`'s.
//!
//! `give-item` puts new stacks of one template into the stash of the invocation's session's profile:
//! the host holds that session's lock while it runs (the request's own, or the one `call-for-session`
//! took), so it never races the player's own requests. It places like a purchase does (first fit in
//! the stash grid, stacks up to the template's stack size) and writes once, compare-and-set on the
//! profile's version, with a system letter saying what arrived (`mail/letters.rs`) in the same patch.

use crate::ids;
use crate::mail::{letters, mailbox};
use crate::profile;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Grid, write};
use crate::templates::Templates;
use modhost_sdk::calls::Invocation;
use modhost_sdk::{Error, Result, db};
use serde::Deserialize;
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
    if !ids::is_id(&gift.tpl) || !db::exists(&db::path(&["templates", "items", &gift.tpl])) {
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
        let id = ids::new_id();
        let stack = json!({
            "_id": id, "_tpl": gift.tpl, "parentId": stash, "slotId": "hideout", "location": place,
            "upd": { "StackObjectsCount": units, "SpawnedInSession": false },
        });
        write(&mut doc, &mut templates, &id, Some(stack))?;
        ids.push(id);
        left -= units;
    }
    let message = mailbox::send(&mut doc, letters::gift(&gift.tpl, gift.count))?;
    doc.commit()?;
    mailbox::announce(Some(session), &uid, &message);
    Ok(json!({ "ids": ids }))
}
