//! The quest actions of `items/moving` (SPT's `QuestItemEventRouter` → `QuestController`,
//! `QuestHelper`, `QuestRewardHelper`): `QuestAccept`, `QuestHandover` and `QuestComplete`.
//!
//! A quest's state is the profile's `Quests` entry (`{qid, startTime, status, statusTimers,
//! completedConditions, availableAfter}`, SPT's `QuestStatus`) and its handed-over units are
//! `TaskConditionCounters.<condition id>`. SPT trusts the client for all three actions; here each is
//! checked against `templates.quests`, so a player cannot take a quest it may not see, hand over what
//! it does not own, or collect rewards for work not done:
//!
//! - `QuestAccept {qid}`: a quest the player does not have must be open to it (the quest list's rules:
//!   side, trader, `AvailableForStart`); a failed quest that is `restartable` starts again from
//!   nothing. It becomes `Started`.
//! - `QuestHandover {qid, conditionId, items: [{id, count}]}`: the condition is a `HandoverItem` or
//!   `WeaponAssembly` of the started quest, each item is the player's, of a target template, found in
//!   raid when the condition says so. Units beyond what the condition still needs stay; the rest are
//!   taken (a whole item with what is inside it). The counter grows by what was taken, and the
//!   condition is completed when it reaches the condition's `value`.
//! - `QuestComplete {qid}`: each `AvailableForFinish` condition (the top-level ones) must be done: in
//!   the quest's completed conditions (a raid's end brings those, `raid/progress.rs`), a handover whose
//!   counter reached its value, or a `Level`/`Quest`/`TraderLoyalty`/`TraderStanding`/`Skill` that holds
//!   now. The quest becomes `Success` and its `Success` rewards for the player's edition apply:
//!   `Experience` (the level follows), `TraderStanding`, `TraderUnlock`, `Skill`, and `Item`s, which go
//!   into the stash with fresh ids (SPT sends them by mail). No room in the stash: nothing happens.
//!   `AssortmentUnlock` needs nothing written (the trader's assort reads the quest's state). A quest
//!   of the profile whose `Fail` conditions name this one's success fails (SPT's
//!   `GetQuestsFromProfileFailedByCompletingQuest`), and the quests the success opens go to the client
//!   in the answer's `quests`.
//!
//! - `QuestFail {qid, removeExcessItems}`: the client fails a started quest when one of its `Fail`
//!   conditions holds (a time limit, a quest of the other branch done). SPT trusts it; here the quest
//!   must be started and have `Fail` conditions at all (a quest that cannot fail is never failed by a
//!   client's word). It becomes `Fail` and its `Fail` rewards apply (usually a standing loss).
//! - `RepeatableQuestChange {qid}`: SPT replaces an active repeatable quest by a newly generated one
//!   for a fee. No repeatable quests are generated yet, so it is refused with the reason (an unknown
//!   quest, or one that is not an active repeatable of this profile).
//!
//! Every quest whose state changed is in the answer's `questsStatus`.
//!
//! Left out: generating repeatable quests (so changing one), `Started` rewards, time-gated follow-ups
//! (`availableAfter`), and the rewards of kinds not named above (productions, achievements,
//! customization, pockets).

use crate::clock;
use crate::menu::quests::{self, Player, status};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, count, give_items, is_root, item, set_count, subtree, write};
use crate::progression;
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

/// SPT's `QuestStatusEnum` values the actions deal in.
const STARTED: u64 = 2;
const AVAILABLE_FOR_FINISH: u64 = 3;
const SUCCESS: u64 = 4;
const FAIL: u64 = 5;
const FAIL_RESTARTABLE: u64 = 6;
/// Quests, conditions, rewards, handed-over stacks and reward items read at most.
const MAX_QUESTS: usize = 10_000;
const MAX_CONDITIONS: usize = 256;
const MAX_REWARDS: usize = 64;
const MAX_HANDOVER: usize = 64;
/// The kinds of condition a handover serves.
const HANDOVER: [&str; 2] = ["HandoverItem", "WeaponAssembly"];

/// The quest the action names, as a `templates.quests` path, and its id.
fn named_quest(action: &Value) -> Result<(String, String), String> {
    let qid = action["qid"].as_str().ok_or("the action names no quest `qid`")?;
    let path = db::path(&["templates", "quests", qid]);
    if !db::exists(&path) {
        return Err(format!("quest {qid} does not exist"));
    }
    Ok((qid.to_owned(), path))
}

/// The profile's quest states, and the index of `qid`'s among them.
fn states(doc: &mut Doc, qid: &str) -> Result<(Vec<Value>, Option<usize>), modhost_sdk::Error> {
    let states = match doc.get(&["Quests"])? {
        Value::Array(list) => list,
        _ => Vec::new(),
    };
    let at = states.iter().take(MAX_QUESTS).position(|s| s["qid"] == qid);
    Ok((states, at))
}

/// The quest an action names, which the profile has started (or made ready to hand in).
struct Started {
    qid: String,
    /// Its `templates.quests` path.
    path: String,
    /// The profile's quest states, and the index of this one's.
    states: Vec<Value>,
    at: usize,
}

fn started(doc: &mut Doc, action: &Value) -> Result<Started, crate::profile::inventory::Refused> {
    let (qid, path) = named_quest(action)?;
    let (states, at) = states(doc, &qid)?;
    match at.filter(|at| matches!(status(&states[*at]["status"]), Some(STARTED | AVAILABLE_FOR_FINISH))) {
        Some(at) => Ok(Started { qid, path, states, at }),
        None => Err(format!("quest {qid} is not started").into()),
    }
}

/// A quest's `AvailableForFinish` conditions.
fn finish_conditions(path: &str) -> Vec<Value> {
    let found: Vec<Value> = db::get(&format!("{path}.conditions.AvailableForFinish")).unwrap_or_default();
    found.into_iter().take(MAX_CONDITIONS).collect()
}

/// A number a condition or reward gives as a number or a string.
fn number(value: &Value) -> Option<f64> {
    value.as_f64().or_else(|| value.as_str().and_then(|v| v.parse().ok())).filter(|v| v.is_finite())
}

/// The templates a condition targets (a string or a list).
fn targets(condition: &Value) -> Vec<&str> {
    match &condition["target"] {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).take(MAX_CONDITIONS).collect(),
        _ => Vec::new(),
    }
}

/// The player as the quest rules read it, from the batch's view of the profile.
fn player(doc: &mut Doc) -> Result<Player, modhost_sdk::Error> {
    Ok(Player::of(doc.get(&["Info"])?, &doc.get(&["Quests"])?, doc.get(&["TradersInfo"])?))
}

/// `QuestAccept {qid, type}`.
pub(crate) fn accept(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    if action["type"] == "repeatable" {
        return Err("repeatable quests are not generated here".into());
    }
    let (qid, path) = named_quest(action)?;
    let (mut states, at) = states(doc, &qid)?;
    let now = clock::now();
    let fresh = json!({"qid": qid, "startTime": now, "status": STARTED, "statusTimers": {STARTED.to_string(): now},
                       "completedConditions": [], "availableAfter": 0});
    match at {
        Some(at) => {
            let state = status(&states[at]["status"]);
            let restartable = db::get::<bool>(&format!("{path}.restartable")).unwrap_or(false);
            if !(matches!(state, Some(FAIL | FAIL_RESTARTABLE)) && restartable) {
                return Err(format!("quest {qid} is already in this profile (status {})", states[at]["status"]).into());
            }
            states[at] = fresh;
        }
        None => {
            if !quests::open_to(&qid, &player(doc)?) {
                return Err(format!("quest {qid} is not open to this player").into());
            }
            if states.len() >= MAX_QUESTS {
                return Err("this profile holds too many quests".into());
            }
            states.push(fresh);
        }
    }
    doc.set(&["Quests"], Value::Array(states))?;
    changes.quests.push(qid);
    Ok(())
}

/// `QuestHandover {qid, conditionId, items: [{id, count}]}`.
pub(crate) fn handover(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let Started { qid, path, mut states, at } = started(doc, action)?;
    let condition_id = action["conditionId"].as_str().ok_or("the handover names no `conditionId`")?;
    let condition = finish_conditions(&path)
        .into_iter()
        .find(|c| c["id"] == condition_id && HANDOVER.iter().any(|k| c["conditionType"] == *k))
        .ok_or_else(|| format!("quest {qid} has no handover condition {condition_id}"))?;
    let wanted = number(&condition["value"]).unwrap_or(0.0).max(0.0) as u64;
    let counted = doc.get(&["TaskConditionCounters", condition_id, "value"])?.as_f64().unwrap_or(0.0).max(0.0) as u64;
    let mut need = wanted.saturating_sub(counted);
    if need == 0 {
        return Err(format!("condition {condition_id} of quest {qid} is already satisfied").into());
    }
    let named = action["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    if named.is_empty() || named.len() > MAX_HANDOVER {
        return Err(format!("a handover names 1 to {MAX_HANDOVER} items").into());
    }
    let found_in_raid = condition["onlyFoundInRaid"] == true;
    let allowed = targets(&condition);

    // Every item is checked before any is taken.
    let mut plan: Vec<(String, Value, u64)> = Vec::new();
    for entry in named {
        let id = entry["id"].as_str().ok_or("a handed-over item names no `id`")?;
        let units = entry["count"].as_u64().filter(|n| *n >= 1).ok_or("a handed-over `count` must be at least 1")?;
        let held = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
        if is_root(doc, id)? || plan.iter().any(|(p, _, _)| p == id) {
            return Err(format!("item {id} cannot be handed over (a root container, or named twice)").into());
        }
        if !allowed.contains(&tpl(&held)) {
            return Err(format!("item {id} ({}) is not what condition {condition_id} asks for", tpl(&held)).into());
        }
        if found_in_raid && held["upd"]["SpawnedInSession"] != true {
            return Err(format!("item {id} was not found in raid, which condition {condition_id} asks for").into());
        }
        if units > count(&held) {
            return Err(format!("item {id} holds {}, not {units}", count(&held)).into());
        }
        let take = units.min(need);
        need -= take;
        if take > 0 {
            plan.push((id.to_owned(), held, take));
        }
    }
    let mut given = 0;
    for (id, mut held, take) in plan {
        given += take;
        if take < count(&held) {
            let rest = count(&held) - take;
            set_count(&mut held, rest);
            write(doc, templates, &id, Some(held))?;
            changes.changed(&id);
        } else {
            let gone = subtree(doc, &id)?;
            for removed in gone.iter().rev() {
                write(doc, templates, removed, None)?;
            }
            // The client removes what was inside on its own (SPT answers the item alone).
            changes.removed(&id);
        }
    }
    let total = counted + given;
    let counter = json!({"id": condition_id, "sourceId": qid, "type": condition["conditionType"], "value": total});
    if !doc.object_or_absent(&["TaskConditionCounters"])? {
        return Err("the profile's `TaskConditionCounters` is malformed".into());
    }
    doc.set(&["TaskConditionCounters", condition_id], counter)?;
    if total >= wanted {
        let done = &mut states[at]["completedConditions"];
        if !done.is_array() {
            *done = json!([]);
        }
        if let Some(done) = done.as_array_mut()
            && !done.iter().any(|c| c == condition_id)
        {
            done.push(json!(condition_id));
        }
        doc.set(&["Quests"], Value::Array(states))?;
        changes.quests.push(qid);
    }
    Ok(())
}

/// Whether a condition of this kind is checked here, from the profile, when the quest completes (a
/// handover's counter, or what [`done`] reads now), rather than taken as completed from a raid.
pub(crate) fn checked_here(kind: &str) -> bool {
    HANDOVER.contains(&kind) || quests::decides(kind) || kind == "Skill"
}

/// Whether one `AvailableForFinish` condition is done (see the module doc).
fn done(doc: &mut Doc, condition: &Value, completed: &[Value], player: &Player) -> Result<bool, modhost_sdk::Error> {
    let id = condition["id"].as_str().unwrap_or_default();
    if completed.iter().any(|c| c == id) {
        return Ok(true);
    }
    let kind = condition["conditionType"].as_str().unwrap_or_default();
    if HANDOVER.contains(&kind) {
        let counted = doc.get(&["TaskConditionCounters", id, "value"])?.as_f64().unwrap_or(0.0);
        return Ok(number(&condition["value"]).is_some_and(|wanted| counted >= wanted));
    }
    if quests::decides(kind) {
        return Ok(quests::holds(condition, player));
    }
    if kind == "Skill" {
        let skill = targets(condition).first().copied().unwrap_or_default();
        let progress = progression::skill_progress(&doc.get(&["Skills", "Common"])?, skill);
        // A skill's level is its progress over 100.
        return Ok(number(&condition["value"]).is_some_and(|level| progress / 100.0 >= level));
    }
    Ok(false)
}

/// `QuestComplete {qid}`.
pub(crate) fn complete(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let Started { qid, path, mut states, at } = started(doc, action)?;
    let completed = states[at]["completedConditions"].as_array().cloned().unwrap_or_default();
    let player = player(doc)?;
    for condition in finish_conditions(&path) {
        // A condition with a parent is part of another (SPT's counters' sub-conditions).
        if condition["parentId"].as_str().is_some_and(|p| !p.is_empty()) {
            continue;
        }
        if !done(doc, &condition, &completed, &player)? {
            return Err(format!(
                "quest {qid} is not done: condition {} ({}) is not met",
                condition["id"], condition["conditionType"]
            )
            .into());
        }
    }

    // The quests this one's success opens: those that name it in their `AvailableForStart`, not open
    // before (read now, while it is not yet a success).
    let waiting: Vec<String> = db::keys("templates.quests")
        .unwrap_or_default()
        .into_iter()
        .take(MAX_QUESTS)
        .filter(|id| !player.has(id) && names(&db::path(&["templates", "quests", id]), "AvailableForStart", &qid))
        .filter(|id| !quests::open_to(id, &player))
        .collect();

    let now = clock::now();
    set_status(&mut states[at], SUCCESS, now);
    changes.quests.push(qid.clone());
    // SPT's `GetQuestsFromProfileFailedByCompletingQuest`: a quest of the profile, not yet handed in or
    // failed, whose `Fail` conditions name this one's success.
    for state in states.iter_mut().take(MAX_QUESTS) {
        let Some(other) = state["qid"].as_str().map(str::to_owned) else { continue };
        if other == qid || matches!(status(&state["status"]), Some(SUCCESS | FAIL | FAIL_RESTARTABLE)) {
            continue;
        }
        if names(&db::path(&["templates", "quests", &other]), "Fail", &qid) {
            set_status(state, FAIL, now);
            changes.quests.push(other);
        }
    }
    doc.set(&["Quests"], Value::Array(states))?;
    let after = self::player(doc)?;
    changes.opened.extend(waiting.into_iter().filter(|id| quests::open_to(id, &after)));

    apply_rewards(doc, templates, changes, &path, "Success", player.edition())
}

/// Applies the quest's `which` rewards (`Success`, `Fail`) for the player's edition: the items first
/// (without room for them, nothing applies), then experience, standing, unlocks and skills.
fn apply_rewards(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    path: &str,
    which: &str,
    edition: &str,
) -> Outcome {
    let rewards: Vec<Value> = db::get(&format!("{path}.rewards.{which}")).unwrap_or_default();
    let rewards: Vec<Value> =
        rewards.into_iter().take(MAX_REWARDS).filter(|r| quests::for_edition(r, edition)).collect();
    // The items first: without room for them, nothing of the completion applies.
    let mut grid = None;
    for reward in rewards.iter().filter(|r| r["type"] == "Item") {
        give_items(doc, templates, changes, reward, &mut grid)?;
    }
    for reward in &rewards {
        let value = number(&reward["value"]).unwrap_or(0.0);
        let target = reward["target"].as_str().unwrap_or_default();
        match reward["type"].as_str() {
            Some("Experience") => {
                let xp = doc.get(&["Info", "Experience"])?.as_f64().unwrap_or(0.0) + value.max(0.0);
                doc.set(&["Info", "Experience"], json!(xp.floor()))?;
                if let Some(level) = progression::level_for(xp) {
                    doc.set(&["Info", "Level"], level)?;
                }
            }
            Some("TraderStanding") if !target.is_empty() => {
                let standing = trader_info(doc, target)?["standing"].as_f64().unwrap_or(0.0) + value;
                doc.set(&["TradersInfo", target, "standing"], json!(standing))?;
            }
            Some("TraderUnlock") if !target.is_empty() => {
                trader_info(doc, target)?;
                doc.set(&["TradersInfo", target, "unlocked"], json!(true))?;
            }
            Some("Skill") if !target.is_empty() => {
                let mut skills = doc.get(&["Skills", "Common"])?;
                if let Some(skill) = skills.as_array_mut().and_then(|l| l.iter_mut().find(|s| s["Id"] == target)) {
                    let progress = skill["Progress"].as_f64().unwrap_or(0.0) + value;
                    skill["Progress"] = json!(progress.clamp(0.0, progression::MAX_SKILL_PROGRESS));
                    doc.set(&["Skills", "Common"], skills)?;
                } else if let Some(list) = skills.as_array_mut() {
                    list.push(json!({"Id": target, "Progress": value.clamp(0.0, progression::MAX_SKILL_PROGRESS),
                                     "PointsEarnedDuringSession": 0, "LastAccess": 0}));
                    doc.set(&["Skills", "Common"], skills)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Sets a quest state's status, stamped in its `statusTimers`.
fn set_status(state: &mut Value, to: u64, now: u64) {
    state["status"] = json!(to);
    if !state["statusTimers"].is_object() {
        state["statusTimers"] = json!({});
    }
    state["statusTimers"][to.to_string()] = json!(now);
}

/// Whether the quest at `path` has, among its `kind` conditions, a `Quest` condition on `qid`'s
/// success.
fn names(path: &str, kind: &str, qid: &str) -> bool {
    let conditions: Vec<Value> = db::get(&format!("{path}.conditions.{kind}")).unwrap_or_default();
    conditions.iter().take(MAX_CONDITIONS).any(|c| {
        c["conditionType"] == "Quest"
            && targets(c).contains(&qid)
            && c["status"].as_array().is_some_and(|s| s.iter().any(|s| status(s) == Some(SUCCESS)))
    })
}

/// The profile's `TradersInfo.<trader>`, written first as a trader not met yet when it is absent.
pub(crate) fn trader_info(doc: &mut Doc, trader: &str) -> Result<Value, crate::profile::inventory::Refused> {
    if !doc.object_or_absent(&["TradersInfo"])? {
        return Err("the profile's `TradersInfo` is malformed".into());
    }
    let found = doc.get(&["TradersInfo", trader])?;
    if found.is_object() {
        return Ok(found);
    }
    let fresh = progression::trader_met(trader, 0.0);
    doc.set(&["TradersInfo", trader], fresh.clone())?;
    Ok(fresh)
}

/// `QuestFail {qid, removeExcessItems}`.
pub(crate) fn fail(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let Started { qid, path, mut states, at } = started(doc, action)?;
    let fail_conditions: Vec<Value> = db::get(&format!("{path}.conditions.Fail")).unwrap_or_default();
    if fail_conditions.is_empty() {
        return Err(format!("quest {qid} has no condition it can fail by").into());
    }
    let edition = player(doc)?.edition().to_owned();
    set_status(&mut states[at], FAIL, clock::now());
    doc.set(&["Quests"], Value::Array(states))?;
    changes.quests.push(qid);
    apply_rewards(doc, templates, changes, &path, "Fail", &edition)
}

/// `RepeatableQuestChange {qid}`: refused, saying why (no repeatable quests are generated).
pub(crate) fn change_repeatable(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let qid = action["qid"].as_str().ok_or("the action names no quest `qid`")?;
    let active = doc.get(&["RepeatableQuests"])?;
    let is_active = active
        .as_array()
        .into_iter()
        .flatten()
        .take(MAX_CONDITIONS)
        .flat_map(|kind| kind["activeQuests"].as_array().into_iter().flatten().take(MAX_QUESTS))
        .any(|q| q["_id"] == qid);
    if !is_active {
        return Err(format!("quest {qid} is not an active repeatable quest of this profile").into());
    }
    Err(format!("repeatable quest {qid} cannot be changed: no replacement quests are generated yet").into())
}
