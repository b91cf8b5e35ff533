//! Repeatable quests' tables, in SPT's shapes: `configs.quest.repeatableQuests` (the Daily, Weekly
//! and Daily_Savage kinds with their reward scaling, maps, trader whitelist and per-type settings),
//! `configs.quest.questTemplateIds` and `locationIdMap`, and `templates.repeatableQuests` (the quest
//! templates the generator fills, and the Completion item whitelist).
//!
//! Sized for the generated database: its three maps, Prapor, Therapist and Peacekeeper (who pays in
//! euros), and requested items from the generated items' and the trade tables' categories, so each
//! type of quest can be generated, handed in and paid on the default root.

use crate::trade::{PEACEKEEPER, THERAPIST};
use crate::{TRADER, put};
use serde_json::{Map, Value, json};

/// Categories the requests and rewards are drawn from: the generated items', meds, food.
const KNIFE: &str = "5447e1d04bdc2dff2f8b4567";
const MEDS: &str = "543be5664bdc2dd4348b4569";
const FOOD: &str = "543be6674bdc2df1348b4569";

/// Adds the tables above to `db`.
pub(crate) fn add(db: &mut Map<String, Value>) {
    let kinds = [
        ("615ffc701c97c768137e719b", "Daily", "Pmc", 86_400, 3, 5, 2, [1000, 2000, 8000]),
        ("618035d38012292db3081bf0", "Weekly", "Pmc", 604_800, 1, 15, 0, [5000, 10_000, 30_000]),
        ("62825ef60e88d037dc1eb426", "Daily_Savage", "Scav", 86_400, 1, 1, 0, [500, 1000, 4000]),
    ];
    let kinds: Vec<Value> = kinds
        .iter()
        .map(|(id, name, side, reset, count, level, free, experience)| {
            json!({
                "id": id, "name": name, "side": side, "types": ["Elimination", "Completion", "Exploration"],
                "resetTime": reset, "numQuests": count, "minPlayerLevel": level,
                "freeChanges": free, "freeChangesAvailable": free, "keepDailyQuestTypeOnReplacement": false,
                "standingChangeCost": [0, 0.01],
                "rewardScaling": {
                    "levels": [1, 10, 20], "experience": experience, "roubles": [11_000, 20_000, 32_000],
                    "gpCoins": [2, 3, 6], "items": [2, 4, 5], "reputation": [0.01, 0.01, 0.02], "rewardSpread": 0.5,
                    "skillRewardChance": [0, 0.01, 0.05], "skillPointReward": [10, 15, 20],
                },
                "locations": {"any": ["any"], "bigmap": ["bigmap"], "factory4_day": ["factory4_day", "factory4_night"],
                              "Woods": ["Woods"]},
                "traderWhitelist": [
                    {"traderId": TRADER, "name": "prapor", "questTypes": ["Completion", "Exploration", "Elimination"],
                     "rewardBaseWhitelist": [KNIFE, MEDS, FOOD], "rewardCanBeWeapon": false, "weaponRewardChancePercent": 0},
                    {"traderId": THERAPIST, "name": "therapist", "questTypes": ["Completion", "Exploration"],
                     "rewardBaseWhitelist": [MEDS, FOOD], "rewardCanBeWeapon": false, "weaponRewardChancePercent": 0},
                    {"traderId": PEACEKEEPER, "name": "peacekeeper", "questTypes": ["Elimination"],
                     "rewardBaseWhitelist": [KNIFE], "rewardCanBeWeapon": false, "weaponRewardChancePercent": 0},
                ],
                "questConfig": {
                    "Exploration": {"maxExtracts": 4, "maxExtractsWithSpecificExit": 2,
                                    "possibleSkillRewards": ["Endurance", "Strength", "Vitality"],
                                    "specificExits": {"probability": 0.2, "passageRequirementWhitelist": ["None", "TransferItem"]}},
                    "Completion": {"possibleSkillRewards": ["Endurance", "Strength", "Vitality"],
                                   "minRequestedAmount": 1, "maxRequestedAmount": 4, "uniqueItemCount": 2,
                                   "minRequestedBulletAmount": 15, "maxRequestedBulletAmount": 40,
                                   "useWhitelist": true, "useBlacklist": false, "requiredItemsAreFiR": true,
                                   "requiredItemMinDurabilityMinMax": {"min": 60, "max": 80}},
                    "Elimination": [
                        elimination(1, 15, json!([{"key": "Savage", "relativeProbability": 1, "data": {"isBoss": false}}]), 2, 4),
                        elimination(16, 100, json!([
                            {"key": "Savage", "relativeProbability": 15, "data": {"isBoss": false}},
                            {"key": "AnyPmc", "relativeProbability": 4, "data": {"isBoss": false, "isPmc": true}},
                            {"key": "bossKnight", "relativeProbability": 0.4, "data": {"isBoss": true}},
                        ]), 5, 15),
                    ],
                },
                "rewardBaseTypeBlacklist": ["543be5e94bdc2df1348b4568"], "rewardBlacklist": [],
                "rewardAmmoStackMinSize": 5,
            })
        })
        .collect();
    put(db, &["configs", "quest", "repeatableQuests"], Value::Array(kinds));
    put(
        db,
        &["configs", "quest", "questTemplateIds"],
        json!({
            "pmc": {"elimination": "616052ea3054fc0e2c24ce6e", "completion": "61604635c725987e815b1a46",
                    "exploration": "616041eb031af660100c9967"},
            "scav": {"elimination": "62825ef60e88d037dc1eb428", "completion": "628f588ebb558574b2260fe5",
                     "exploration": "62825ef60e88d037dc1eb42c", "pickup": "628f588ebb558574b2260fe5"},
        }),
    );
    put(
        db,
        &["configs", "quest", "locationIdMap"],
        json!({"any": "any", "factory4_day": "55f2d3fd4bdc2d5f408b4567", "factory4_night": "59fc81d786f774390775787e",
               "bigmap": "56f40101d2720b2a4d8b45d6", "Woods": "5704e3c2d2720bac5b8b4567"}),
    );
    put(
        db,
        &["templates", "repeatableQuests"],
        json!({
            "templates": {
                "Elimination": template("Elimination", json!([counter_creator("Elimination")])),
                "Completion": template("Completion", json!([])),
                "Exploration": template("Exploration", json!([counter_creator("Exploration")])),
            },
            "data": {"Completion": {
                "itemsWhitelist": [{"minPlayerLevel": 1, "itemIds": [KNIFE, MEDS, FOOD]}],
                "itemsBlacklist": [{"minPlayerLevel": 1, "itemIds": ["5485a8684bdc2da71d8b4567"]}],
            }},
            "rewards": {}, "samples": [],
        }),
    );
}

/// One level range's `questConfig.Elimination` entry.
fn elimination(min: u32, max: u32, targets: Value, min_kills: u32, max_kills: u32) -> Value {
    json!({
        "levelRange": {"min": min, "max": max}, "possibleSkillRewards": ["Endurance", "Strength", "Vitality"],
        "targets": targets,
        "bodyPartProb": 0.15,
        "bodyParts": [
            {"key": "Head", "relativeProbability": 1, "data": ["Head"]},
            {"key": "Chest", "relativeProbability": 25, "data": ["Chest", "Stomach"]},
            {"key": "Arms", "relativeProbability": 0.5, "data": ["LeftArm", "RightArm"]},
            {"key": "Legs", "relativeProbability": 1, "data": ["LeftLeg", "RightLeg"]},
        ],
        "specificLocationProb": 0.25, "distLocationBlacklist": ["factory4_day", "factory4_night"],
        "distProb": 0.15, "maxDist": 75, "minDist": 10, "maxKills": max_kills, "minKills": min_kills,
        "minBossKills": 1, "maxBossKills": 1, "minPmcKills": 2, "maxPmcKills": 5,
    })
}

/// The counter an Elimination or Exploration template holds (the generator replaces its conditions).
fn counter_creator(kind: &str) -> Value {
    json!({
        "id": "618c1de4d4cd91439f3de4a5", "index": 0, "dynamicLocale": true, "visibilityConditions": [],
        "globalQuestCounterId": "", "parentId": "", "value": 1, "type": kind, "oneSessionOnly": false,
        "completeInSeconds": 0, "doNotResetIfCounterCompleted": false,
        "counter": {"id": "618c1de4d4cd91439f3de4a4", "conditions": []},
        "conditionType": "CounterCreator",
    })
}

/// A repeatable quest template of `kind` with its `AvailableForFinish` conditions.
fn template(kind: &str, finish: Value) -> Value {
    let text = |what: &str| format!("{{templateId}} {what} {{traderId}} 0");
    json!({
        "_id": "67d02f62bcc8d767d075887a", "traderId": TRADER, "location": "any",
        "image": "/files/quest/icon/616d993bc8c5ad2ab30ff6ba.jpg", "type": kind, "isKey": false,
        "restartable": false, "instantComplete": false, "secretQuest": false, "canShowNotificationsInGame": true,
        "rewards": {"Started": [], "Success": [], "Fail": []},
        "conditions": {"AvailableForStart": [], "AvailableForFinish": finish, "Fail": []},
        "side": "Pmc", "name": "{templateId} name {traderId}", "note": "{templateId} note {traderId}",
        "description": text("description"), "successMessageText": text("successMessageText"),
        "failMessageText": text("failMessageText"), "startedMessageText": text("startedMessageText"),
        "changeQuestMessageText": text("changeQuestMessageText"),
        "acceptPlayerMessage": "{templateId} acceptPlayerMessage {traderId}",
        "declinePlayerMessage": "{templateId} declinePlayerMessage {traderId}",
        "completePlayerMessage": "{templateId} completePlayerMessage {traderId}",
        "status": 0, "acceptanceAndFinishingSource": "eft", "progressSource": "eft", "rankingModes": [],
        "gameModes": [], "arenaLocations": [],
        "changeCost": [{"templateId": crate::ROUBLES, "count": 5000}], "changeStandingCost": 0,
        "questStatus": {"id": "mongoId", "uid": "playerId", "qid": "questId", "startTime": 0, "status": 1,
                        "statusTimers": {}},
    })
}

#[cfg(test)]
mod tests {
    use crate::database;

    #[test]
    fn the_repeatable_tables_are_in_spt_shape() {
        let db = database(3);
        let kinds = db["configs"]["quest"]["repeatableQuests"].as_array().expect("kinds");
        assert_eq!(kinds.len(), 3);
        assert!(kinds.iter().all(|k| k["questConfig"]["Elimination"].is_array() && k["rewardScaling"].is_object()));
        let templates = &db["templates"]["repeatableQuests"]["templates"];
        for kind in ["Elimination", "Completion", "Exploration"] {
            assert_eq!(templates[kind]["type"], kind);
        }
        assert_eq!(templates["Exploration"]["conditions"]["AvailableForFinish"][0]["conditionType"], "CounterCreator");
    }
}
