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
//! - `RepeatableQuestChange {qid}`: an active repeatable quest of the profile (`menu/repeatable.rs`
//!   generates them), not handed in, is replaced by a newly generated one of its kind (of the same
//!   type when the kind's `keepDailyQuestTypeOnReplacement`). It costs one of the period's
//!   `freeChangesAvailable` (the editions SPT gives free changes to), else the period's
//!   `changeRequirement.<qid>`: its `changeCost` paid from the stash (0.1% less per Charisma level,
//!   SPT's rule) and its `changeStandingCost` off the quest's trader. Not enough money: refused,
//!   nothing changed. The old quest's state and counters leave the profile; the answer's
//!   `repeatableQuests` holds the changed period (without its inactive quests, as SPT's).
//!
//! Generated repeatable quests are quests like the others: their definitions are read from the
//! profile's `RepeatableQuests` ([`Definition`]) where the db's are read from `templates.quests`.
//! `QuestAccept` takes one with `type: "repeatable"` while it is active; a handover also checks an
//! item's durability against a condition's `minDurability`.
//!
//! Every quest whose state changed is in the answer's `questsStatus`.
//!
//! Left out: `Started` rewards, time-gated follow-ups
//! (`availableAfter`), and the rewards of kinds not named above (productions, achievements,
//! customization, pockets).

use crate::clock;
use crate::economy::take_money;
use crate::menu::quests::{self, Player, status};
use crate::menu::repeatable;
use crate::profile::doc::Doc;
use crate::profile::inventory::{
    Changes, Outcome, Refused, count, give_items, is_root, item, set_count, subtree, write,
};
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

/// A quest's definition: the database's (`templates.quests.<qid>`) or, for a generated repeatable
/// quest, the one in the profile's `RepeatableQuests` (`menu/repeatable.rs`).
pub(crate) struct Definition {
    /// `{AvailableForStart, AvailableForFinish, Fail}`.
    conditions: Value,
    /// `{Started, Success, Fail}`.
    rewards: Value,
    restartable: bool,
    repeatable: bool,
}

impl Definition {
    /// Quest `qid`'s definition: the database's, else an active repeatable quest of `periods` (the
    /// profile's `RepeatableQuests`).
    pub(crate) fn find(qid: &str, periods: impl FnOnce() -> Value) -> Option<Definition> {
        let path = db::path(&["templates", "quests", qid]);
        if db::exists(&path) {
            return Some(Definition {
                conditions: db::get(&format!("{path}.conditions")).unwrap_or_default(),
                rewards: db::get(&format!("{path}.rewards")).unwrap_or_default(),
                restartable: db::get::<bool>(&format!("{path}.restartable")).unwrap_or(false),
                repeatable: false,
            });
        }
        let periods = periods();
        let (_, quest) = repeatable::active(&periods, qid)?;
        Some(Definition {
            conditions: quest["conditions"].clone(),
            rewards: quest["rewards"].clone(),
            restartable: false,
            repeatable: true,
        })
    }

    /// Its conditions of `kind` (`AvailableForFinish`, `Fail`).
    pub(crate) fn conditions(&self, kind: &str) -> Vec<Value> {
        self.conditions[kind].as_array().into_iter().flatten().take(MAX_CONDITIONS).cloned().collect()
    }
}

/// The quest the action names, its id and its definition.
fn named_quest(doc: &mut Doc, action: &Value) -> Result<(String, Definition), Refused> {
    let qid = action["qid"].as_str().ok_or("the action names no quest `qid`")?;
    let mut periods = Ok(Value::Null);
    let found = Definition::find(qid, || {
        periods = doc.get(&["RepeatableQuests"]);
        periods.as_ref().cloned().unwrap_or_default()
    });
    periods?;
    let definition = found.ok_or_else(|| format!("quest {qid} does not exist"))?;
    Ok((qid.to_owned(), definition))
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
    quest: Definition,
    /// The profile's quest states, and the index of this one's.
    states: Vec<Value>,
    at: usize,
}

fn started(doc: &mut Doc, action: &Value) -> Result<Started, crate::profile::inventory::Refused> {
    let (qid, quest) = named_quest(doc, action)?;
    let (states, at) = states(doc, &qid)?;
    match at.filter(|at| matches!(status(&states[*at]["status"]), Some(STARTED | AVAILABLE_FOR_FINISH))) {
        Some(at) => Ok(Started { qid, quest, states, at }),
        None => Err(format!("quest {qid} is not started").into()),
    }
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
    let (qid, quest) = named_quest(doc, action)?;
    match (action["type"] == "repeatable", quest.repeatable) {
        (true, false) => return Err(format!("quest {qid} is not a repeatable quest").into()),
        (false, true) => {
            return Err(format!("quest {qid} is a repeatable quest: it is accepted with `type: repeatable`").into());
        }
        _ => {}
    }
    let (mut states, at) = states(doc, &qid)?;
    let now = clock::now();
    let fresh = json!({"qid": qid, "startTime": now, "status": STARTED, "statusTimers": {STARTED.to_string(): now},
                       "completedConditions": [], "availableAfter": 0});
    match at {
        Some(at) => {
            let state = status(&states[at]["status"]);
            if !(matches!(state, Some(FAIL | FAIL_RESTARTABLE)) && quest.restartable) {
                return Err(format!("quest {qid} is already in this profile (status {})", states[at]["status"]).into());
            }
            states[at] = fresh;
        }
        None => {
            // A repeatable quest is open to the player it was generated for while its period runs.
            if !quest.repeatable && !quests::open_to(&qid, &player(doc)?) {
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
    let Started { qid, quest, mut states, at } = started(doc, action)?;
    let condition_id = action["conditionId"].as_str().ok_or("the handover names no `conditionId`")?;
    let condition = quest
        .conditions("AvailableForFinish")
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
    let min_durability = number(&condition["minDurability"]).unwrap_or(0.0);
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
        let repairable = &held["upd"]["Repairable"];
        if let (Some(now), Some(max)) = (repairable["Durability"].as_f64(), repairable["MaxDurability"].as_f64())
            && max > 0.0
            && now / max * 100.0 < min_durability
        {
            return Err(
                format!("item {id} is worn below the {min_durability}% condition {condition_id} asks for").into()
            );
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
    let Started { qid, quest, mut states, at } = started(doc, action)?;
    let completed = states[at]["completedConditions"].as_array().cloned().unwrap_or_default();
    let player = player(doc)?;
    for condition in quest.conditions("AvailableForFinish") {
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
    // before (read now, while it is not yet a success). No quest waits on a generated one.
    let waiting: Vec<String> =
        if quest.repeatable { Vec::new() } else { db::keys("templates.quests").unwrap_or_default() }
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

    apply_rewards(doc, templates, changes, &quest, "Success", player.edition())
}

/// Applies the quest's `which` rewards (`Success`, `Fail`) for the player's edition: the items first
/// (without room for them, nothing applies), then experience, standing, unlocks and skills.
fn apply_rewards(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    quest: &Definition,
    which: &str,
    edition: &str,
) -> Outcome {
    let rewards: Vec<Value> = quest.rewards[which]
        .as_array()
        .into_iter()
        .flatten()
        .take(MAX_REWARDS)
        .filter(|r| quests::for_edition(r, edition))
        .cloned()
        .collect();
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
    let Started { qid, quest, mut states, at } = started(doc, action)?;
    if quest.conditions("Fail").is_empty() {
        return Err(format!("quest {qid} has no condition it can fail by").into());
    }
    let edition = player(doc)?.edition().to_owned();
    set_status(&mut states[at], FAIL, clock::now());
    doc.set(&["Quests"], Value::Array(states))?;
    changes.quests.push(qid);
    apply_rewards(doc, templates, changes, &quest, "Fail", &edition)
}

/// `RepeatableQuestChange {qid}`: see the module doc.
pub(crate) fn change_repeatable(
    doc: &mut Doc,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let qid = action["qid"].as_str().ok_or("the action names no quest `qid`")?;
    let mut periods = doc.get(&["RepeatableQuests"])?;
    let (at, old) = repeatable::active(&periods, qid)
        .map(|(at, quest)| (at, quest.clone()))
        .ok_or_else(|| format!("quest {qid} is not an active repeatable quest of this profile"))?;
    let (mut states, state) = states(doc, qid)?;
    if let Some(state) = state
        && matches!(status(&states[state]["status"]), Some(SUCCESS))
    {
        return Err(format!("repeatable quest {qid} is handed in already; only an open one can be changed").into());
    }
    let name = periods[at]["name"].as_str().unwrap_or_default().to_owned();
    let kind = repeatable::kind(&name).ok_or_else(|| format!("repeatable quests of kind {name} are not configured"))?;

    let info = doc.get(&["Info"])?;
    let level = info["Level"].as_f64().unwrap_or(1.0);
    let traders = doc.get(&["TradersInfo"])?;
    let uid = doc.key().strip_prefix("profile.").unwrap_or_default().to_owned();
    let same_type = (kind["keepDailyQuestTypeOnReplacement"] == true).then(|| old["type"].as_str().unwrap_or_default());
    let mut pool = repeatable::Pool::new(&kind, level, same_type);
    let player = repeatable::Player { uid: &uid, level, traders: &traders };
    let mut catalogue = repeatable::Catalogue::default();
    let fresh = repeatable::Generator::new(&kind, player, &mut catalogue)
        .quest(&mut pool)
        .ok_or_else(|| format!("no {name} quest could be generated to replace {qid}"))?;
    let fresh_id = fresh["_id"].as_str().unwrap_or_default().to_owned();

    // The cost: a free change while the period has one (for the editions that get them), else the
    // quest's requirement: its money (less 0.1% per Charisma level) and standing with its trader.
    let period = &mut periods[at];
    let free_left = period["freeChangesAvailable"].as_u64().unwrap_or(0);
    if free_left > 0 && repeatable::free_changes(&kind, info["GameVersion"].as_str().unwrap_or_default()).0 > 0 {
        period["freeChangesAvailable"] = json!(free_left - 1);
    } else {
        period["freeChangesAvailable"] = json!(0);
        let mut requirement = period["changeRequirement"][qid].clone();
        if !requirement.is_object() {
            requirement = json!({"changeCost": old["changeCost"], "changeStandingCost": 0});
        }
        let charisma = progression::skill_progress(&doc.get(&["Skills", "Common"])?, "Charisma");
        let discount = 1.0 - (charisma / 100.0).trunc() * 0.001;
        for cost in requirement["changeCost"].as_array().into_iter().flatten().take(MAX_REWARDS) {
            let tpl = cost["templateId"].as_str().ok_or("a change cost names no `templateId`")?;
            let count = (number(&cost["count"]).unwrap_or(0.0).max(0.0) * discount).trunc() as u64;
            take_money(doc, templates, changes, tpl, count)?;
        }
        let trader = old["traderId"].as_str().unwrap_or_default();
        let lost = number(&requirement["changeStandingCost"]).unwrap_or(0.0);
        if !trader.is_empty() && lost != 0.0 {
            let standing = trader_info(doc, trader)?["standing"].as_f64().unwrap_or(0.0) - lost;
            doc.set(&["TradersInfo", trader, "standing"], json!(standing))?;
        }
    }

    // The replacement, and the old quest's state and counters out of the profile.
    if let Some(active) = period["activeQuests"].as_array_mut() {
        active.retain(|q| q["_id"] != qid);
    }
    let requirement = repeatable::requirement(&kind, &fresh);
    match period["activeQuests"].as_array_mut() {
        Some(active) => active.push(fresh),
        None => period["activeQuests"] = json!([fresh]),
    }
    if !period["changeRequirement"].is_object() {
        period["changeRequirement"] = json!({});
    }
    if let Some(requirements) = period["changeRequirement"].as_object_mut() {
        requirements.remove(qid);
        requirements.insert(fresh_id, requirement);
    }
    let mut shown = period.clone();
    shown["inactiveQuests"] = json!([]);
    doc.set(&["RepeatableQuests"], periods)?;
    if let Some(state) = state {
        states.remove(state);
        doc.set(&["Quests"], Value::Array(states))?;
    }
    if let Value::Object(mut counters) = doc.get(&["TaskConditionCounters"])? {
        let before = counters.len();
        counters.retain(|_, c| c["sourceId"] != qid);
        if counters.len() != before {
            doc.set(&["TaskConditionCounters"], Value::Object(counters))?;
        }
    }
    changes.answer("repeatableQuests", json!([shown]));
    Ok(())
}
