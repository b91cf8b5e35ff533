//! Quests on the menu (QuestStaticRouter → QuestCallbacks → QuestController, QuestHelper and
//! RepeatableQuestController): the quests this player may see, and their repeatable quests' periods.
//!
//! `/client/quest/list` decides per quest of `templates.quests` from a few paths of the profile
//! (`Info`, `Quests`, `TradersInfo`), as SPT's `GetClientQuests` does: a quest the player has is
//! shown whatever its state; otherwise it must not be for the other side (`configs.quest`
//! `bearOnlyQuests` / `usecOnlyQuests`), its trader must exist, and each of its `AvailableForStart`
//! conditions must hold: `Level` (the player's level), `Quest` (another quest in one of the given
//! states), `TraderLoyalty` and `TraderStanding` (a trader the profile has not met yet is at loyalty
//! level 1, standing 0). A reward other editions only get (`availableInGameEditions`,
//! `notAvailableInGameEditions`) is taken out. The quests go by db reference; only those whose
//! rewards change are read whole. Left out: SPT's seasonal-event filter, and the `sptStatus` member
//! SPT adds for itself (a referenced quest cannot be changed; the client reads the state from the
//! profile's `Quests`).
//!
//! `/client/repeatalbeQuests/activityPeriods` (SPT's spelling) answers one period per kind in
//! `configs.quest.repeatableQuests` the player has unlocked (a PMC kind from its `minPlayerLevel`, the
//! scav kind with an intelligence center): the profile's period while it runs on the game's clock,
//! else a new one that ends `resetTime` from now, written to the profile's `RepeatableQuests`, with
//! `numQuests` newly generated quests (`repeatable.rs`), each with its change requirement, and the
//! free changes of the player's edition. The old period's quests move to `inactiveQuests` and their
//! states and counters leave the profile, except those ready to hand in, which stay active (SPT's
//! `ProcessExpiredQuests`). A period is renewed when it is read after its end, however long the
//! server was off, so a returning player finds today's quests, never a backlog.

use super::MAX_BODY;
use super::repeatable;
use crate::clock;
use crate::input;
use crate::profile::{doc_read, player};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Adds the quest routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/quest/list", list).route("/client/repeatalbeQuests/activityPeriods", activity_periods)
}

/// The most quests the list considers (SPT ships about five hundred).
const MAX_QUESTS: usize = 10_000;
/// The most quest states and conditions read from a profile or a quest.
const MAX_STATES: usize = 10_000;
const MAX_CONDITIONS: usize = 64;

/// SPT's `QuestStatusEnum`, by name: profiles written by the client may hold either form.
const STATUSES: [&str; 10] = [
    "Locked",
    "AvailableForStart",
    "Started",
    "AvailableForFinish",
    "Success",
    "Fail",
    "FailRestartable",
    "MarkedAsFailed",
    "Expired",
    "AvailableAfter",
];
const AVAILABLE_FOR_FINISH: u64 = 3;
/// SPT's `HideoutAreas.INTEL_CENTER`.
const INTEL_CENTER: u64 = 11;

/// A quest status as a number, from a number or SPT's name for it.
pub(crate) fn status(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|name| STATUSES.iter().position(|s| *s == name).map(|n| n as u64)))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "PascalCase")]
struct Info {
    #[serde(default)]
    level: Option<f64>,
    #[serde(default)]
    side: String,
    #[serde(default)]
    game_version: String,
}

/// What the list (and a quest action) needs to know of the player.
pub(crate) struct Player {
    info: Info,
    /// Quest id → status, for the quests the profile has.
    quests: Map<String, Value>,
    traders: Map<String, Value>,
}

impl Player {
    pub(crate) fn read(uid: &str) -> Result<Player> {
        let key = format!("profile.{uid}");
        let info: Value = doc_read(&key, &["Info"])?.unwrap_or_default();
        let states: Value = doc_read(&key, &["Quests"])?.unwrap_or_default();
        let traders: Value = doc_read(&key, &["TradersInfo"])?.unwrap_or_default();
        Ok(Player::of(info, &states, traders))
    }

    /// The player from the profile's `Info`, `Quests` and `TradersInfo` (malformed ones count as
    /// empty).
    pub(crate) fn of(info: Value, states: &Value, traders: Value) -> Player {
        let info: Info = serde_json::from_value(info).unwrap_or_default();
        let mut quests = Map::new();
        for state in states.as_array().into_iter().flatten().take(MAX_STATES) {
            if let Some(qid) = state["qid"].as_str() {
                quests.insert(qid.to_owned(), state["status"].clone());
            }
        }
        let traders = match traders {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Player { info, quests, traders }
    }

    /// Whether the profile has quest `id`, in any state.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.quests.contains_key(id)
    }

    /// The player's game edition (`Info.GameVersion`).
    pub(crate) fn edition(&self) -> &str {
        &self.info.game_version
    }

    fn level(&self) -> f64 {
        self.info.level.unwrap_or(1.0)
    }

    fn trader(&self, id: &str, member: &str, unmet: f64) -> f64 {
        self.traders.get(id).and_then(|t| t[member].as_f64()).unwrap_or(unmet)
    }
}

/// SPT's `CompareAvailableForValues` (and `=` for a level, which SPT accepts there).
fn compare(current: f64, method: &str, required: f64) -> bool {
    match method {
        ">=" => current >= required,
        ">" => current > required,
        "<=" => current <= required,
        "<" => current < required,
        "!=" => current != required,
        "==" | "=" => current == required,
        _ => false,
    }
}

/// The first trader or quest a condition's `target` names (a string or a list).
fn targets(target: &Value) -> Vec<&str> {
    match target {
        Value::String(one) => vec![one.as_str()],
        Value::Array(many) => many.iter().filter_map(Value::as_str).take(MAX_CONDITIONS).collect(),
        _ => Vec::new(),
    }
}

/// Whether one `AvailableForStart` condition holds for the player (kinds the list does not decide on
/// hold; [`decides`] names those it does).
pub(crate) fn holds(condition: &Value, player: &Player) -> bool {
    let method = condition["compareMethod"].as_str().unwrap_or(">=");
    let value = condition["value"].as_f64().or_else(|| condition["value"].as_str().and_then(|v| v.parse().ok()));
    match condition["conditionType"].as_str() {
        Some("Level") => value.is_some_and(|v| compare(player.level(), method, v)),
        Some("Quest") => {
            let wanted: Vec<u64> = condition["status"].as_array().into_iter().flatten().filter_map(status).collect();
            targets(&condition["target"])
                .iter()
                .find_map(|q| player.quests.get(*q))
                .and_then(status)
                .is_some_and(|s| wanted.contains(&s))
        }
        Some("TraderLoyalty") => {
            let trader = targets(&condition["target"]).first().copied().unwrap_or_default();
            value.is_some_and(|v| compare(player.trader(trader, "loyaltyLevel", 1.0), method, v))
        }
        Some("TraderStanding") => {
            let trader = targets(&condition["target"]).first().copied().unwrap_or_default();
            value.is_some_and(|v| compare(player.trader(trader, "standing", 0.0), method, v))
        }
        _ => true,
    }
}

/// Whether [`holds`] decides a condition of this kind from the profile.
pub(crate) fn decides(kind: &str) -> bool {
    matches!(kind, "Level" | "Quest" | "TraderLoyalty" | "TraderStanding")
}

/// Whether quest `id`, which the player does not have, is open to it: not for the other side, its
/// trader exists, and each of its `AvailableForStart` conditions holds.
pub(crate) fn open_to(id: &str, player: &Player) -> bool {
    let usec = player.info.side.eq_ignore_ascii_case("usec");
    let other_side: Vec<String> =
        db::get(if usec { "configs.quest.bearOnlyQuests" } else { "configs.quest.usecOnlyQuests" }).unwrap_or_default();
    let trader: String = db::get(&db::path(&["templates", "quests", id, "traderId"])).unwrap_or_default();
    let start: Vec<Value> =
        db::get(&db::path(&["templates", "quests", id, "conditions", "AvailableForStart"])).unwrap_or_default();
    !other_side.iter().any(|q| q == id)
        && db::exists(&db::path(&["traders", &trader, "base"]))
        && start.iter().take(MAX_CONDITIONS).all(|c| holds(c, player))
}

/// Whether a reward is for the player's edition (SPT's `RewardIsForGameEdition`).
pub(crate) fn for_edition(reward: &Value, edition: &str) -> bool {
    let only = reward["availableInGameEditions"].as_array().filter(|l| !l.is_empty());
    let never = reward["notAvailableInGameEditions"].as_array();
    only.is_none_or(|l| l.iter().any(|e| e == edition)) && !never.is_some_and(|l| l.iter().any(|e| e == edition))
}

/// Quest `id` as the client reads it, with the rewards `edition` does not get taken out; `None` when the
/// database has no such quest.
pub(crate) fn for_client(id: &str, edition: &str) -> Option<Value> {
    let mut quest: Value = db::get(&db::path(&["templates", "quests", id])).ok()?;
    if let Some(kinds) = quest["rewards"].as_object_mut() {
        for rewards in kinds.values_mut().filter_map(Value::as_array_mut) {
            rewards.retain(|reward| for_edition(reward, edition));
        }
    }
    Some(quest)
}

/// `/client/quest/list`: the quests this player may see (see the module doc).
fn list(req: &Request) -> Result<Response> {
    if !req.body().iter().all(u8::is_ascii_whitespace) {
        let _: Map<String, Value> = input::parse(req, "quest/list", MAX_BODY)?;
    }
    let uid = match player(req, "the quest list")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let player = Player::read(&uid)?;

    let mut answer = Response::empty().with_bytes(br#"{"err":0,"errmsg":null,"data":["#.to_vec());
    let mut first = true;
    for id in db::keys("templates.quests").unwrap_or_default().iter().take(MAX_QUESTS) {
        if !player.quests.contains_key(id) && !open_to(id, &player) {
            continue;
        }
        answer = answer.with_bytes(if first { Vec::new() } else { b",".to_vec() });
        first = false;
        let path = db::path(&["templates", "quests", id]);
        let rewards: Map<String, Value> = db::get(&format!("{path}.rewards")).unwrap_or_default();
        let edition = player.info.game_version.as_str();
        let all_for_edition =
            rewards.values().filter_map(Value::as_array).flatten().all(|reward| for_edition(reward, edition));
        // Whole quests go by reference; only one whose rewards change is read into the guest.
        let edited = if all_for_edition { None } else { for_client(id, edition) };
        answer = match edited {
            None => answer.with_db(&path),
            Some(quest) => answer.with_bytes(serde_json::to_vec(&quest)?),
        };
    }
    Ok(answer.with_bytes(b"]}".to_vec()))
}

/// A kind of repeatable quests, from `configs.quest.repeatableQuests`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Kind {
    name: String,
    #[serde(default)]
    side: String,
    #[serde(default)]
    reset_time: u64,
    #[serde(default)]
    min_player_level: f64,
}

/// The most kinds and periods read.
const MAX_KINDS: usize = 16;

/// `/client/repeatalbeQuests/activityPeriods`: see the module doc.
fn activity_periods(req: &Request) -> Result<Response> {
    let uid = match player(req, "the repeatable quests")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let key = format!("profile.{uid}");
    let kinds: Vec<Value> = db::get("configs.quest.repeatableQuests").unwrap_or_default();
    let Some((stored, version)) = store::doc_get::<Value>(&key, "RepeatableQuests")? else {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    };
    let mut periods: Vec<Value> = match stored {
        Value::Array(periods) => periods.into_iter().take(MAX_KINDS).collect(),
        _ => Vec::new(),
    };
    let info: Info =
        doc_read::<Value>(&key, &["Info"])?.and_then(|i| serde_json::from_value(i).ok()).unwrap_or_default();
    let level = info.level.unwrap_or(1.0);
    let areas: Vec<Value> = doc_read(&key, &["Hideout", "Areas"])?.unwrap_or_default();
    let intel = areas.iter().any(|a| a["type"].as_u64() == Some(INTEL_CENTER) && a["level"].as_u64() >= Some(1));
    let now = clock::now();

    let mut answer = Vec::new();
    // Read once a period needs renewing: the quest states and the traders.
    let mut states: Option<Vec<Value>> = None;
    let mut traders = Value::Null;
    let mut expired: Vec<String> = Vec::new();
    let mut catalogue = repeatable::Catalogue::default();
    let mut changed = false;
    for raw in kinds.iter().take(MAX_KINDS) {
        let Ok(kind) = Kind::deserialize(raw) else { continue };
        let unlocked = match kind.side.as_str() {
            "Scav" => intel,
            _ => level >= kind.min_player_level,
        };
        if !unlocked {
            continue;
        }
        let at = periods.iter().position(|p| p["name"] == kind.name.as_str());
        if let Some(at) = at
            && periods[at]["endTime"].as_u64().is_some_and(|end| now + 1 < end)
        {
            answer.push(periods[at].clone());
            continue;
        }
        if states.is_none() {
            states = Some(doc_read(&key, &["Quests"])?.unwrap_or_default());
            traders = doc_read(&key, &["TradersInfo"])?.unwrap_or_default();
        }
        let states = states.as_mut().expect("read above");
        // A new period: the old one's quests stop (their states go), except those ready to hand in.
        let old = at.map(|at| periods[at].clone()).unwrap_or(Value::Null);
        let mut active = Vec::new();
        let mut inactive = Vec::new();
        for quest in old["activeQuests"].as_array().into_iter().flatten().take(MAX_STATES) {
            let ready = states
                .iter()
                .take(MAX_STATES)
                .any(|s| s["qid"] == quest["_id"] && status(&s["status"]) == Some(AVAILABLE_FOR_FINISH));
            if ready {
                active.push(quest.clone());
            } else {
                inactive.push(quest.clone());
                expired.extend(quest["_id"].as_str().map(str::to_owned));
            }
        }
        let mut requirements = Map::new();
        for quest in &active {
            let id = quest["_id"].as_str().unwrap_or_default();
            let kept = old["changeRequirement"][id].clone();
            let kept = if kept.is_object() { kept } else { repeatable::requirement(raw, quest) };
            requirements.insert(id.to_owned(), kept);
        }
        let generating = repeatable::Player { uid: &uid, level, traders: &traders };
        let (fresh, fresh_requirements) = repeatable::fresh_quests(raw, generating, &mut catalogue);
        active.extend(fresh);
        requirements.extend(fresh_requirements);
        let (free, free_available) = repeatable::free_changes(raw, &info.game_version);
        let period = json!({
            "id": raw["id"], "name": kind.name, "endTime": now + kind.reset_time,
            "activeQuests": active, "inactiveQuests": inactive, "changeRequirement": requirements,
            "freeChanges": free, "freeChangesAvailable": free_available,
        });
        match at {
            Some(at) => periods[at] = period.clone(),
            None => periods.push(period.clone()),
        }
        changed = true;
        answer.push(period);
    }
    if changed {
        let mut patch = json!({"RepeatableQuests": periods});
        if !expired.is_empty() {
            let states = states.unwrap_or_default();
            let kept: Vec<&Value> =
                states.iter().filter(|s| !s["qid"].as_str().is_some_and(|q| expired.iter().any(|e| e == q))).collect();
            patch["Quests"] = json!(kept);
            // SPT's `RemoveDanglingConditionCounters`: the expired quests' counters go with them.
            let counters: Map<String, Value> = doc_read(&key, &["TaskConditionCounters"])?.unwrap_or_default();
            let dangling: Map<String, Value> = counters
                .iter()
                .filter(|(_, c)| c["sourceId"].as_str().is_some_and(|q| expired.iter().any(|e| e == q)))
                .map(|(id, _)| (id.clone(), Value::Null))
                .collect();
            if !dangling.is_empty() {
                patch["TaskConditionCounters"] = Value::Object(dangling);
            }
        }
        // Written only if nobody wrote the profile meanwhile; otherwise the next call renews it.
        match store::doc_patch_if_version(&key, "", &patch, version) {
            Ok(_) | Err(modhost_sdk::Error::Conflict(_)) => {}
            Err(other) => return Err(other),
        }
    }
    Ok(envelope::ok(&answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(level: f64, quests: Value, traders: Value) -> Player {
        Player {
            info: Info { level: Some(level), side: "Bear".into(), game_version: "standard".into() },
            quests: quests.as_object().cloned().unwrap_or_default(),
            traders: traders.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn conditions_follow_level_quests_and_traders() {
        let p = player(4.0, json!({"q1": "Success", "q2": 2}), json!({"t": {"loyaltyLevel": 2, "standing": 0.3}}));
        assert!(holds(&json!({"conditionType": "Level", "compareMethod": ">=", "value": 4}), &p));
        assert!(!holds(&json!({"conditionType": "Level", "compareMethod": ">=", "value": 5}), &p));
        assert!(holds(&json!({"conditionType": "Quest", "target": "q1", "status": [4]}), &p));
        assert!(holds(&json!({"conditionType": "Quest", "target": ["x", "q2"], "status": [2, 3]}), &p));
        assert!(!holds(&json!({"conditionType": "Quest", "target": "q2", "status": [4]}), &p));
        assert!(!holds(&json!({"conditionType": "Quest", "target": "q3", "status": [4]}), &p));
        assert!(holds(
            &json!({"conditionType": "TraderLoyalty", "target": "t", "compareMethod": ">=", "value": 2}),
            &p
        ));
        assert!(!holds(
            &json!({"conditionType": "TraderLoyalty", "target": "u", "compareMethod": ">=", "value": 2}),
            &p
        ));
        assert!(holds(
            &json!({"conditionType": "TraderStanding", "target": "t", "compareMethod": ">", "value": 0.2}),
            &p
        ));
        assert!(!holds(&json!({"conditionType": "Level", "compareMethod": "??", "value": 1}), &p));
    }

    #[test]
    fn rewards_follow_editions() {
        assert!(for_edition(&json!({}), "standard"));
        assert!(!for_edition(&json!({"notAvailableInGameEditions": ["standard"]}), "standard"));
        assert!(for_edition(&json!({"availableInGameEditions": ["standard"]}), "standard"));
        assert!(!for_edition(&json!({"availableInGameEditions": ["edge_of_darkness"]}), "standard"));
    }
}
