//! What a raid's report carries into the profile besides its items, experience, health and skills
//! (those are `end.rs`'s): the statistics, the encyclopedia, quest progress and its counters,
//! achievements, the survivor class and Fence's standing.
//!
//! SPT's `LocationLifecycleService.HandlePostRaidPmc` copies each of these from the client wholesale.
//! Here each is bounded, and only what a raid can change is taken; anything else in the report is
//! left as the profile has it (never a refusal: the raid's items must not be lost over a statistic).
//!
//! - `Stats.Eft`: the reported object when its JSON is at most [`MAX_STATS_BYTES`], with
//!   `TotalSessionExperience` 0 as SPT sets it.
//! - `Encyclopedia`: entries are added or changed (never removed) for templates the database knows.
//! - `Quests`: only a quest the profile has `Started` or `AvailableForFinish` changes. Its status may
//!   go between those two or to failed (`MarkedAsFailed` is stored as `Fail`, as SPT's
//!   `ProcessPostRaidQuests` does), stamped in `statusTimers`. Its completed conditions gain the
//!   reported ids that are conditions of the quest (in `templates.quests`, or a generated repeatable
//!   quest's in the profile's `RepeatableQuests`) of a kind a raid fulfils (not
//!   a handover, a level, a loyalty: `QuestComplete` checks those itself). A quest the raid cannot touch
//!   (not started, handed in, unknown) stays as the profile has it.
//! - `TaskConditionCounters`: entries whose `sourceId` is such a quest or an achievement of
//!   `templates.achievements`, with a finite value of at least 0.
//! - `Achievements`: ids of `templates.achievements` the profile lacks, at the reported time (or now).
//! - `SurvivorClass`: SPT's 0–4, by number or name.
//! - Fence's standing (`TradersInfo.<fence>.standing`): the reported value, at most
//!   `maxFenceStandingGain` (our own setting) above the profile's, within `configs.trader.fence`'s
//!   `playerRepMin`/`playerRepMax`; a survived scav raid adds `configs.inraid.scavExtractStandingGain`.
//!
//! On death, with quest items lost, a `FindItem` condition of an active quest whose target is a lost
//! item's template is taken out of the completed conditions, so the player can pick the item up
//! again (SPT's `CheckForAndFixPickupQuestsAfterDeath`).

use super::report::Reported;
use super::setting;
use crate::clock;
use crate::items::quests::{Definition, checked_here};
use crate::menu::quests::status;
use crate::profile::doc::Doc;
use crate::progression;
use crate::templates::Templates;
use modhost_sdk::{Result, db};
use serde_json::{Map, Value, json};
use std::collections::HashSet;

/// The largest `Stats.Eft` taken from a report, as JSON.
pub(super) const MAX_STATS_BYTES: usize = 1 << 20;
/// Entries of the encyclopedia, quests, counters and achievements read from a report.
const MAX_ENCYCLOPEDIA: usize = 50_000;
const MAX_QUESTS: usize = 10_000;
const MAX_COUNTERS: usize = 10_000;
const MAX_ACHIEVEMENTS: usize = 1_000;
/// Conditions one quest may complete.
const MAX_CONDITIONS: usize = 256;
/// SPT's `Traders.FENCE`.
pub(super) const FENCE: &str = "579dc571d53a0658a154fbec";

/// SPT's `QuestStatusEnum` values a raid deals in.
const STARTED: u64 = 2;
const AVAILABLE_FOR_FINISH: u64 = 3;
const FAIL: u64 = 5;
const FAIL_RESTARTABLE: u64 = 6;
const MARKED_AS_FAILED: u64 = 7;
/// SPT's `SurvivorClass` names, by value.
const SURVIVOR_CLASSES: [&str; 5] = ["UNKNOWN", "NEUTRALIZER", "MARAUDER", "PARAMEDIC", "SURVIVOR"];

/// How the raid ended, as far as progress cares.
pub(super) struct Outcome<'a> {
    pub(super) dead: bool,
    pub(super) survived: bool,
    pub(super) scav: bool,
    /// Templates of the quest items the player lost (dead, and `lostOnDeath.questItems`).
    pub(super) lost_quest_items: &'a [String],
}

/// Stages in `doc` what the report carries besides items, experience, health and skills.
pub(super) fn apply(doc: &mut Doc, templates: &mut Templates, reported: &Reported, outcome: &Outcome) -> Result<()> {
    if let Some(stats) = stats(&reported.stats) {
        doc.set(&["Stats", "Eft"], stats)?;
    }
    let encyclopedia = encyclopedia(doc.get(&["Encyclopedia"])?, &reported.encyclopedia, templates);
    doc.set(&["Encyclopedia"], encyclopedia)?;
    if let Some(class) = survivor_class(&reported.survivor_class) {
        doc.set(&["SurvivorClass"], class)?;
    }
    let achievement_ids = achievement_ids();
    let achievements = achievements(doc.get(&["Achievements"])?, &reported.achievements, &achievement_ids);
    doc.set(&["Achievements"], achievements)?;

    // A scav's quests are the PMC's (SPT moves them over; a scav raid writes the scav alone, so here a
    // scav's counters are those of achievements only).
    let (quests, active) = if outcome.scav {
        (None, HashSet::new())
    } else {
        let periods = doc.get(&["RepeatableQuests"])?;
        let (quests, active) = quests(doc.get(&["Quests"])?, &reported.quests, &periods, outcome.lost_quest_items);
        (Some(quests), active)
    };
    if let Some(quests) = quests {
        doc.set(&["Quests"], quests)?;
    }
    let counters = counters(doc.get(&["TaskConditionCounters"])?, &reported.counters, &active, &achievement_ids);
    doc.set(&["TaskConditionCounters"], counters)?;

    let standing =
        fence_standing(doc.get(&["TradersInfo", FENCE, "standing"])?.as_f64().unwrap_or(0.0), reported, outcome);
    if doc.get(&["TradersInfo", FENCE])?.is_object() {
        doc.set(&["TradersInfo", FENCE, "standing"], json!(standing))?;
    } else {
        doc.set(&["TradersInfo", FENCE], progression::trader_met(FENCE, standing))?;
    }
    Ok(())
}

/// The reported `Stats.Eft` to keep, or `None` when it is not an object or too large.
fn stats(reported: &Value) -> Option<Value> {
    let mut eft = reported["Eft"].clone();
    if !eft.is_object() || serde_json::to_vec(&eft).map_or(true, |bytes| bytes.len() > MAX_STATS_BYTES) {
        return None;
    }
    eft["TotalSessionExperience"] = json!(0);
    Some(eft)
}

/// The profile's encyclopedia with the reported entries for known templates added or changed.
fn encyclopedia(server: Value, reported: &Value, templates: &mut Templates) -> Value {
    let mut merged = match server {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for (tpl, seen) in reported.as_object().into_iter().flatten().take(MAX_ENCYCLOPEDIA) {
        if !seen.is_boolean() || merged.get(tpl) == Some(seen) || merged.len() >= MAX_ENCYCLOPEDIA {
            continue;
        }
        if merged.contains_key(tpl) || templates.props(tpl).is_some() {
            merged.insert(tpl.clone(), seen.clone());
        }
    }
    Value::Object(merged)
}

/// SPT's survivor class from a number or its name, as the number.
fn survivor_class(reported: &Value) -> Option<Value> {
    let n = reported.as_u64().or_else(|| {
        let name = reported.as_str()?;
        SURVIVOR_CLASSES.iter().position(|c| c.eq_ignore_ascii_case(name)).map(|n| n as u64)
    })?;
    (n < SURVIVOR_CLASSES.len() as u64).then(|| json!(n))
}

/// The ids of `templates.achievements`.
fn achievement_ids() -> HashSet<String> {
    let all: Vec<Value> = db::get("templates.achievements").unwrap_or_default();
    all.iter().filter_map(|a| a["id"].as_str().map(str::to_owned)).collect()
}

/// The profile's achievements with the reported ones it lacks, when the database has them.
fn achievements(server: Value, reported: &Value, known: &HashSet<String>) -> Value {
    let mut merged = match server {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let now = clock::now();
    for (id, at) in reported.as_object().into_iter().flatten().take(MAX_ACHIEVEMENTS) {
        if merged.contains_key(id) || !known.contains(id) {
            continue;
        }
        let at = at.as_u64().filter(|t| *t <= now).unwrap_or(now);
        merged.insert(id.clone(), json!(at));
    }
    Value::Object(merged)
}

/// The quests after the raid, and the ids of those active in it (the counters' sources).
fn quests(server: Value, reported: &Value, periods: &Value, lost: &[String]) -> (Value, HashSet<String>) {
    let mut quests = match server {
        Value::Array(list) => list,
        _ => Vec::new(),
    };
    let reported: Vec<&Value> = reported.as_array().into_iter().flatten().take(MAX_QUESTS).collect();
    let mut active = HashSet::new();
    let now = clock::now();
    for quest in quests.iter_mut().take(MAX_QUESTS) {
        let Some(qid) = quest["qid"].as_str().map(str::to_owned) else { continue };
        let before = status(&quest["status"]);
        if !matches!(before, Some(STARTED | AVAILABLE_FOR_FINISH)) {
            continue;
        }
        active.insert(qid.clone());
        let conditions = conditions(&qid, periods);
        let Some(report) = reported.iter().find(|r| r["qid"] == qid.as_str()) else {
            drop_lost_finds(quest, &conditions, lost);
            continue;
        };
        let after = match status(&report["status"]) {
            Some(MARKED_AS_FAILED) => Some(FAIL),
            Some(s @ (STARTED | AVAILABLE_FOR_FINISH | FAIL | FAIL_RESTARTABLE)) => Some(s),
            _ => None,
        };
        if let Some(after) = after.filter(|a| Some(*a) != before) {
            quest["status"] = json!(after);
            if !quest["statusTimers"].is_object() {
                quest["statusTimers"] = json!({});
            }
            quest["statusTimers"][after.to_string()] = json!(now);
        }
        let mut done: Vec<Value> = quest["completedConditions"].as_array().cloned().unwrap_or_default();
        for id in report["completedConditions"].as_array().into_iter().flatten().take(MAX_CONDITIONS) {
            // Only what a raid does: a handover, a level or a loyalty is checked when the quest completes.
            let known = id.as_str().is_some_and(|id| {
                conditions
                    .iter()
                    .any(|c| c["id"] == id && !checked_here(c["conditionType"].as_str().unwrap_or_default()))
            });
            if known && !done.contains(id) && done.len() < MAX_CONDITIONS {
                done.push(id.clone());
            }
        }
        quest["completedConditions"] = Value::Array(done);
        drop_lost_finds(quest, &conditions, lost);
    }
    (Value::Array(quests), active)
}

/// The conditions of quest `qid` (to finish it and to fail it): the database's, or a generated
/// repeatable quest's of `periods` (the profile's `RepeatableQuests`).
fn conditions(qid: &str, periods: &Value) -> Vec<Value> {
    let Some(quest) = Definition::find(qid, || periods.clone()) else { return Vec::new() };
    let mut all = quest.conditions("AvailableForFinish");
    all.extend(quest.conditions("Fail"));
    all
}

/// Takes out of `quest`'s completed conditions each `FindItem` whose target is a lost template.
fn drop_lost_finds(quest: &mut Value, conditions: &[Value], lost: &[String]) {
    if lost.is_empty() {
        return;
    }
    let targets = |c: &Value| -> Vec<String> {
        match &c["target"] {
            Value::String(one) => vec![one.clone()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    };
    let reset: Vec<&Value> = conditions
        .iter()
        .filter(|c| c["conditionType"] == "FindItem" && targets(c).iter().any(|t| lost.contains(t)))
        .map(|c| &c["id"])
        .collect();
    if let Some(done) = quest["completedConditions"].as_array_mut() {
        done.retain(|id| !reset.contains(&id));
    }
}

/// The profile's counters with the reported ones of active quests and known achievements.
fn counters(server: Value, reported: &Value, quests: &HashSet<String>, achievements: &HashSet<String>) -> Value {
    let mut merged = match server {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for (id, counter) in reported.as_object().into_iter().flatten().take(MAX_COUNTERS) {
        let source = counter["sourceId"].as_str().unwrap_or_default();
        let value = counter["value"].as_f64().filter(|v| v.is_finite() && *v >= 0.0);
        let kind = counter["type"].as_str().filter(|t| t.len() <= 64);
        let (Some(value), Some(kind)) = (value, kind) else { continue };
        if !(quests.contains(source) || achievements.contains(source)) || id.len() > 64 {
            continue;
        }
        if !merged.contains_key(id) && merged.len() >= MAX_COUNTERS {
            continue;
        }
        merged.insert(id.clone(), json!({"id": id, "sourceId": source, "type": kind, "value": value}));
    }
    Value::Object(merged)
}

/// Fence's standing after the raid.
fn fence_standing(before: f64, reported: &Reported, outcome: &Outcome) -> f64 {
    let min = setting("fenceStandingMin").as_f64().unwrap_or(-7.0);
    let max = setting("fenceStandingMax").as_f64().unwrap_or(15.0);
    let gain = setting("maxFenceStandingGain").as_f64().unwrap_or(1.0).max(0.0);
    let said = reported.traders_info[FENCE]["standing"].as_f64().filter(|s| s.is_finite()).unwrap_or(before);
    let mut standing = said.min(before + gain);
    if outcome.scav && outcome.survived && !outcome.dead {
        standing += setting("scavExtractStandingGain").as_f64().unwrap_or(0.01);
    }
    standing.clamp(min, max.max(min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_kept_when_small_and_an_object() {
        let kept = stats(&json!({"Eft": {"TotalSessionExperience": 900, "OverallCounters": {"Items": []}}})).unwrap();
        assert_eq!(kept["TotalSessionExperience"], 0);
        assert!(kept["OverallCounters"].is_object());
        assert_eq!(stats(&json!({"Eft": 3})), None);
        let huge = json!({"Eft": {"Victims": vec!["x".repeat(1000); 2000]}});
        assert_eq!(stats(&huge), None, "over the cap");
    }

    #[test]
    fn survivor_class_by_number_or_name() {
        assert_eq!(survivor_class(&json!(2)), Some(json!(2)));
        assert_eq!(survivor_class(&json!("Paramedic")), Some(json!(3)));
        assert_eq!(survivor_class(&json!(9)), None);
        assert_eq!(survivor_class(&json!("Hero")), None);
    }

    #[test]
    fn achievements_are_added_never_removed_and_only_known() {
        let known: HashSet<String> = ["a1", "a2"].map(str::to_owned).into();
        let merged = achievements(json!({"a1": 5}), &json!({"a2": 7, "zz": 1, "a1": 99}), &known);
        assert_eq!(merged, json!({"a1": 5, "a2": 7}));
    }

    #[test]
    fn counters_need_an_active_source_and_a_number() {
        let quests: HashSet<String> = ["q1"].map(str::to_owned).into();
        let reported = json!({
            "c1": {"id": "c1", "sourceId": "q1", "type": "Kills", "value": 3},
            "c2": {"id": "c2", "sourceId": "q9", "type": "Kills", "value": 3},
            "c3": {"id": "c3", "sourceId": "q1", "type": "Kills", "value": -1},
        });
        let merged = counters(json!({"old": {"value": 1}}), &reported, &quests, &HashSet::new());
        assert_eq!(merged["c1"]["value"], 3.0);
        assert!(merged.get("c2").is_none() && merged.get("c3").is_none());
        assert_eq!(merged["old"]["value"], 1);
    }

    #[test]
    fn a_lost_find_is_reset() {
        let conditions = vec![
            json!({"id": "find", "conditionType": "FindItem", "target": ["tplA"]}),
            json!({"id": "kill", "conditionType": "CounterCreator"}),
        ];
        let mut quest = json!({"completedConditions": ["find", "kill"]});
        drop_lost_finds(&mut quest, &conditions, &["tplA".to_owned()]);
        assert_eq!(quest["completedConditions"], json!(["kill"]));
    }
}
