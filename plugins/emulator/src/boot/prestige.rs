//! Prestige (SPT's `PrestigeStaticRouter` → `PrestigeCallbacks.ObtainPrestige` → `PrestigeController`,
//! and `PrestigeHelper.ProcessPendingPrestige` at the next character's creation).
//!
//! `/client/prestige/obtain` `[{id, location}]` (the items to carry over): as SPT, the next prestige
//! level is made pending (`userdata.<uid>.pendingPrestige`: `{prestigeLevel, items}`) and the account
//! is marked wiped, so the client asks for a new character; its creation ([`carry`], called by
//! `profiles.rs`) applies it. SPT checks nothing here; the game refuses, naming why and changing
//! nothing:
//! - a session without a launcher account (there is no account to wipe);
//! - no prestige level above the profile's `Info.PrestigeLevel` in `templates.prestige.elements`;
//! - a condition of that level that does not hold (`Level`, `Quest`, `TraderLoyalty`,
//!   `TraderStanding`, checked as the quest list checks them, `menu/quests.rs`), or one of a kind the
//!   game does not check yet (said so, rather than granted);
//! - more than [`MAX_TRANSFER`] items, or an item the profile does not have.
//!
//! At creation the new character gets, from the old one: each common and mastering skill at 5% of its
//! progress, SPT's "Prestigious" achievement, `Prestige.<level id>` stamped now, and
//! `Info.PrestigeLevel`. Left out: the prestige's rewards (customization) and the items carried over
//! (SPT mails them; kept in the pending record, not yet sent).

use crate::clock::now;
use crate::input;
use crate::launcher::account;
use crate::menu::quests::{self, Player};
use crate::profile::{doc_read, player, userdata};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};

/// The largest body read: the items to carry over, a few dozen ids with their places.
const MAX_BODY: usize = 64 << 10;
/// The most items carried over (SPT's prestige stash is a few cells).
const MAX_TRANSFER: usize = 100;
/// The most conditions one level is checked for.
const MAX_CONDITIONS: usize = 64;
/// The share of a skill's progress the next character keeps (SPT's `PrestigeHelper`).
const SKILL_KEPT: f64 = 0.05;
/// SPT's "Prestigious" achievement.
const PRESTIGIOUS: &str = "676091c0f457869a94017a23";
/// The most skills carried.
const MAX_SKILLS: usize = 1000;

/// Adds the prestige route to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/prestige/obtain", obtain)
}

#[derive(Deserialize)]
struct Transfer {
    id: String,
    #[serde(default)]
    location: Value,
}

#[derive(Deserialize)]
#[serde(transparent)]
struct Obtain(#[serde(deserialize_with = "input::at_most::<MAX_TRANSFER, _, _>")] Vec<Transfer>);

/// Why the player cannot take the next level, if they cannot; else the level's number and id.
fn next_level(uid: &str) -> Result<std::result::Result<(u64, String), String>> {
    let key = format!("profile.{uid}");
    let current = doc_read::<u64>(&key, &["Info", "PrestigeLevel"])?.unwrap_or(0);
    let elements: Vec<Value> = db::get("templates.prestige.elements").unwrap_or_default();
    let Some(next) = usize::try_from(current).ok().and_then(|n| elements.get(n)) else {
        return Ok(Err(format!("there is no prestige level above {current}")));
    };
    let player = Player::read(uid)?;
    for condition in next["conditions"].as_array().into_iter().flatten().take(MAX_CONDITIONS) {
        let kind = condition["conditionType"].as_str().unwrap_or_default();
        if !quests::decides(kind) {
            return Ok(Err(format!(
                "prestige {} asks for a `{kind}` condition, which the game does not check yet",
                current + 1
            )));
        }
        if !quests::holds(condition, &player) {
            return Ok(Err(format!(
                "prestige {} needs {kind} {} {}",
                current + 1,
                condition["compareMethod"].as_str().unwrap_or(">="),
                if condition["value"].is_null() { &condition["target"] } else { &condition["value"] }
            )));
        }
    }
    Ok(Ok((current + 1, next["id"].as_str().unwrap_or_default().to_owned())))
}

/// `/client/prestige/obtain`: see the module's header.
fn obtain(req: &Request) -> Result<Response> {
    let uid = match player(req, "a prestige")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Obtain = input::parse(req, "prestige/obtain", MAX_BODY)?;
    let Some(mut account) = account::load(req.session().unwrap_or_default())? else {
        return Ok(envelope::error(1, "a prestige needs a launcher account: the next character is created on it"));
    };
    let (level, _) = match next_level(&uid)? {
        Ok(next) => next,
        Err(why) => return Ok(envelope::error(1, &why)),
    };
    let key = format!("profile.{uid}");
    let mut items = Vec::with_capacity(body.0.len());
    for transfer in &body.0 {
        if doc_read::<Value>(&key, &["Inventory", "items", &transfer.id])?.is_none() {
            return Ok(envelope::error(1, &format!("the profile has no item {}", transfer.id)));
        }
        items.push(json!({ "id": transfer.id, "location": transfer.location }));
    }
    store::doc_patch(
        &format!("userdata.{uid}"),
        "",
        &json!({ "pendingPrestige": { "prestigeLevel": level, "items": items } }),
    )?;
    account.wipe = true;
    account::save(&account)?;
    Ok(envelope::null())
}

/// A new character `pmc` made on an account whose previous character was `previous`: the previous
/// one's pending prestige applied (see the module's header); `pmc` unchanged when there is none.
pub(crate) fn carry(mut pmc: Value, previous: &str) -> Result<Value> {
    let Some(pending) = userdata::<Value>(previous, "pendingPrestige")? else { return Ok(pmc) };
    let Some(level) = pending["prestigeLevel"].as_u64() else { return Ok(pmc) };
    let key = format!("profile.{previous}");
    for kind in ["Common", "Mastering"] {
        let old: Vec<Value> = doc_read(&key, &["Skills", kind])?.unwrap_or_default();
        if !pmc["Skills"][kind].is_array() {
            pmc["Skills"][kind] = json!([]);
        }
        let Some(new) = pmc["Skills"][kind].as_array_mut() else { continue };
        for skill in old.iter().take(MAX_SKILLS) {
            let progress = skill["Progress"].as_f64().unwrap_or(0.0) * SKILL_KEPT;
            match new.iter_mut().find(|s| s["Id"] == skill["Id"]) {
                Some(existing) => existing["Progress"] = json!(progress),
                None => {
                    let mut kept = skill.clone();
                    kept["Progress"] = json!(progress);
                    new.push(kept);
                }
            }
        }
    }
    if !pmc["Achievements"].is_object() {
        pmc["Achievements"] = json!({});
    }
    pmc["Achievements"][PRESTIGIOUS] = json!(now());
    let elements: Vec<Value> = db::get("templates.prestige.elements").unwrap_or_default();
    if let Some(id) =
        usize::try_from(level.saturating_sub(1)).ok().and_then(|n| elements.get(n)).and_then(|e| e["id"].as_str())
    {
        if !pmc["Prestige"].is_object() {
            pmc["Prestige"] = json!({});
        }
        pmc["Prestige"][id] = json!(now());
    }
    pmc["Info"]["PrestigeLevel"] = json!(level);
    Ok(pmc)
}
