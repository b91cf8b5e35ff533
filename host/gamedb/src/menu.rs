//! What the client's main menu reads from the database, generated small in SPT's shape:
//!
//! - `locations.base` (`{locations: {}, paths: […]}`: the routes between maps) and
//!   `locations.<map>.base` for three maps (bigmap, factory4_day, woods): SPT's
//!   `LocationBase` with the members the menu and a raid read (`Id`, `_Id`, `Name`, `Enabled`,
//!   `Locked`, `exits`, `waves`, `BossLocationSpawn`, `SpawnPointParams`, `AirdropParameters`, the
//!   escape time, bot limits…). The raid's loot tables go beside them (`locations.<map>.looseLoot`…).
//! - `templates.quests`: seven quests for Prapor that cover what `/client/quest/list` decides on: one
//!   open to all, one from level 5, one after another's success, one BEAR-only and one USEC-only
//!   (listed in `configs.quest`), one from loyalty level 2, and one whose reward only some editions get;
//! - `templates.achievements`, `templates.prestige`, `templates.customisationStorage`,
//!   `templates.defaultEquipmentPresets`, `templates.prices` (the flea's prices);
//! - two more offers in Prapor's assort (one from loyalty level 2, with a part; one unlocked by a
//!   quest, in `traders.<id>.questassort`), so the assort the client gets depends on the player;
//! - `configs.weather` (SPT's `configs/weather.json`: `acceleration`, `weather.seasonValues`,
//!   `seasonDates`, `overrideSeason`), the members of `configs.core` the menu reads
//!   (`compatibleTarkovVersion`, `sptFriendNickname`, `survey`, `features.chatbotFeatures`),
//!   `configs.quest` (`bearOnlyQuests`, `usecOnlyQuests`; the repeatable quests' are `repeatable.rs`'s) and `configs.trader`
//!   (`updateTime`, `updateTimeDefault`): not database but SPT's configs, each member put on its own
//!   so the boot's and the raid's members of the same files stay beside them.

use crate::{RIFLE, ROUBLES, TRADER, hex_id, put};
use serde_json::{Map, Value, json};

/// The maps generated: (folder, `_Id`, `Name`, escape minutes).
const MAPS: [(&str, &str, &str, u32); 3] = [
    ("bigmap", "56f40101d2720b2a4d8b45d6", "Customs", 40),
    ("factory4_day", "55f2d3fd4bdc2d5f408b4567", "Factory", 20),
    ("woods", "5704e3c2d2720bac5b8b4567", "Woods", 40),
];

/// SPT's chat bots (`configs/core.json` `features.chatbotFeatures.ids`).
const COMMANDO: &str = "6723fd51c5924c57ce0ca01e";
const SPT_FRIEND: &str = "6723fd51c5924c57ce0ca01f";

/// The id of generated menu record `n` (quests, achievements, recipes…), apart from the items'.
pub(crate) fn id(n: u64) -> String {
    hex_id(1 << 50 | n)
}

/// Adds the menu's tables to `db` (the whole document).
pub(crate) fn add(db: &mut Map<String, Value>) {
    locations(db);
    quests(db);
    templates(db);
    trader(db);
    configs(db);
}

fn locations(db: &mut Map<String, Value>) {
    let mut paths = Vec::new();
    for pair in MAPS.windows(2) {
        paths.push(json!({"Source": pair[0].1, "Destination": pair[1].1, "Event": false}));
        paths.push(json!({"Source": pair[1].1, "Destination": pair[0].1, "Event": false}));
    }
    put(db, &["locations", "base"], json!({"locations": {}, "paths": paths}));
    for (n, (folder, map_id, name, minutes)) in MAPS.iter().enumerate() {
        put(db, &["locations", folder, "base"], location(n as u64, folder, map_id, name, *minutes));
    }
}

/// One map's `LocationBase`.
fn location(n: u64, folder: &str, map_id: &str, name: &str, minutes: u32) -> Value {
    let zone = format!("Zone{name}");
    let mut base = json!({
        "Id": folder, "_Id": map_id, "Name": name, "Description": format!("The generated {name}."),
        "Enabled": true, "Locked": false, "Insurance": true, "IsSecret": false, "SafeLocation": false,
        "DisabledForScav": false, "Area": 2.5, "IconX": 100 * n, "IconY": 200, "AveragePlayTime": minutes / 2,
        "AveragePlayerLevel": 1, "RequiredPlayerLevelMin": 0, "RequiredPlayerLevelMax": 100,
        "MinPlayers": 1, "MaxPlayers": 10, "MaxCoopGroup": 6, "PmcMaxPlayersInGroup": 5, "ScavMaxPlayersInGroup": 4,
        "EscapeTimeLimit": minutes, "EscapeTimeLimitCoop": minutes, "EscapeTimeLimitPVE": minutes,
        "exit_count": 2, "exit_access_time": 60, "exit_time": 1, "users_gather_seconds": 0,
        "users_spawn_seconds_n": 120, "users_spawn_seconds_n2": 180, "users_summon_seconds": 0,
        "sav_summon_seconds": 60, "matching_min_seconds": 45,
        "BotMax": 15, "BotMaxPvE": 15, "BotMaxPlayer": 0, "BotStart": 0, "BotStop": 0, "BotSpawnPeriodCheck": 15,
        "BotSpawnCountStep": 3, "BotSpawnTimeOnMin": 0, "BotSpawnTimeOnMax": 0, "BotSpawnTimeOffMin": 0,
        "BotSpawnTimeOffMax": 0, "BotEasy": 0, "BotNormal": 0, "BotHard": 0, "BotImpossible": 0, "BotAssault": 0,
        "BotMarksman": 0, "MaxBotPerZone": 4, "MinMaxBots": [], "OpenZones": zone,
        "GlobalLootChanceModifier": 0.3, "GlobalContainerChanceModifier": 1,
        "AccessKeys": [], "AccessKeysPvE": [], "MinPlayerLvlAccessKeys": 0, "Banners": [], "Events": {},
        "Preview": {"path": "", "rcid": ""},
        "Scene": {"path": format!("maps/{folder}_preset.bundle"), "rcid": format!("{folder}.scenespreset.asset")},
        "Rules": "AvoidOwnPmc", "NewSpawn": false, "OldSpawn": true, "OfflineNewSpawn": false, "OfflineOldSpawn": true,
        "UnixDateTime": 1_621_511_450, "Loot": [], "doors": [], "filter_ex": [], "limits": [], "transits": [],
        "secretExits": [], "maxItemCountInLocation": [],
    });
    // Two `json!`s: one would pass the macro's recursion limit.
    let tables = json!({
        "exits": [
            exit(&format!("{name} Gate"), "Individual", "None", 100),
            exit(&format!("{name} Car"), "SharedTimer", "TransferItem", 50),
        ],
        "waves": [{
            "BotPreset": "normal", "BotSide": "Savage", "WildSpawnType": "assault", "SpawnPoints": zone,
            "KeepZoneOnSpawn": true, "SpawnMode": ["regular", "pve"], "isPlayers": false, "number": 0,
            "slots_min": 1, "slots_max": 3, "time_min": -1, "time_max": -1,
        }],
        "BossLocationSpawn": [{
            "BossName": "bossKnight", "BossChance": 20, "BossZone": zone, "BossDifficult": "normal",
            "BossEscortType": "exUsec", "BossEscortDifficult": "normal", "BossEscortAmount": "1", "BossPlayer": false,
            "Delay": 0, "DependKarma": false, "DependKarmaPVE": false, "ForceSpawn": false, "IgnoreMaxBots": true,
            "RandomTimeSpawn": true, "SpawnMode": ["regular", "pve"], "Supports": null, "Time": -1,
            "TriggerId": "", "TriggerName": "",
        }],
        "SpawnPointParams": [
            spawn_point(n, 0, "Player", "Pmc", &zone),
            spawn_point(n, 1, "Bot", "Savage", &zone),
        ],
        "AirdropParameters": [{
            "AirdropPointDeactivateDistance": 50, "MinPlayersCountToSpawnAirdrop": 6, "PlaneAirdropChance": 0.2,
            "PlaneAirdropCooldownMin": 600, "PlaneAirdropCooldownMax": 700, "PlaneAirdropEnd": 1200,
            "PlaneAirdropMax": 1, "PlaneAirdropStartMin": 300, "PlaneAirdropStartMax": 900,
            "UnsuccessfulTryPenalty": 600,
        }],
        "BotLocationModifier": {
            "AccuracySpeed": 1, "DistToActivate": 130, "DistToSleep": 150, "GainSight": 1, "Scattering": 1,
            "VisibleDistance": 1, "MagnetPower": 20, "MarksmanAccuratyCoef": 1, "AdditionalHostilitySettings": [],
        },
    });
    if let (Value::Object(members), Value::Object(more)) = (&mut base, tables) {
        members.extend(more);
    }
    base
}

fn exit(name: &str, kind: &str, requirement: &str, chance: u32) -> Value {
    json!({
        "Name": name, "EntryPoints": "House,Old Station", "Chance": chance, "ChancePVE": chance, "Count": 0,
        "CountPVE": 0, "EventAvailable": false, "ExfiltrationTime": 8, "ExfiltrationTimePVE": 8,
        "ExfiltrationType": kind, "Id": "", "MinTime": 0, "MaxTime": 0, "MinTimePVE": 0, "MaxTimePVE": 0,
        "PassageRequirement": requirement, "PlayersCount": 0, "PlayersCountPVE": 0, "RequirementTip": "",
    })
}

fn spawn_point(map: u64, n: u64, category: &str, side: &str, zone: &str) -> Value {
    json!({
        "Id": format!("{:08x}-0000-4000-8000-{:012x}", map, n), "BotZoneName": zone, "Categories": [category],
        "Sides": [side], "CorePointId": n, "DelayToCanSpawnSec": 4, "Infiltration": "House",
        "Position": {"x": 10.0 * n as f64, "y": 1.0, "z": -20.0}, "Rotation": 90.0,
        "ColliderParams": {"_parent": "SpawnSphereParams", "_props": {"Center": {"x": 0, "y": 0, "z": 0}, "Radius": 20}},
    })
}

/// A quest condition of SPT's shape.
fn condition(n: u64, kind: &str, extra: Value) -> Value {
    let mut base = json!({"id": id(300 + n), "index": 0, "dynamicLocale": false, "visibilityConditions": [],
                          "globalQuestCounterId": "", "parentId": "", "conditionType": kind});
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    base
}

fn quests(db: &mut Map<String, Value>) {
    let roubles = |n: u64, amount: u64, editions: Value| {
        json!({"id": id(400 + n), "index": 0, "type": "Item", "target": id(410 + n), "value": amount,
               "unknown": false, "findInRaid": false, "availableInGameEditions": [], "notAvailableInGameEditions": editions,
               "items": [{"_id": id(410 + n), "_tpl": ROUBLES, "upd": {"StackObjectsCount": amount}}]})
    };
    let level = |n: u64, at_least: u64| condition(n, "Level", json!({"compareMethod": ">=", "value": at_least}));
    let after = |n: u64, quest: &str| {
        condition(n, "Quest", json!({"target": quest, "status": [4], "availableAfter": 0, "dispersion": 0}))
    };
    let loyalty = |n: u64, at_least: u64| {
        condition(n, "TraderLoyalty", json!({"target": TRADER, "compareMethod": ">=", "value": at_least}))
    };
    let specs: [(&str, Vec<Value>, Value); 7] = [
        ("Debut", vec![level(0, 1)], json!([])),
        ("Shootout picnic", vec![level(1, 5)], json!([])),
        ("Delivery from the past", vec![after(2, &id(1))], json!([])),
        ("Bear business", vec![level(3, 1)], json!([])),
        ("Usec business", vec![level(4, 1)], json!([])),
        ("Loyal customer", vec![loyalty(5, 2)], json!([])),
        ("Collector's cut", vec![level(6, 1)], json!(["standard"])),
    ];
    let mut table = Map::new();
    for (n, (name, start, editions)) in specs.into_iter().enumerate() {
        let n = n as u64 + 1;
        let quest_id = id(n);
        let rewards = json!({
            "Started": [], "Fail": [],
            "Success": [
                {"id": id(420 + n), "index": 0, "type": "Experience", "value": 1000 * n, "unknown": false,
                 "availableInGameEditions": [], "notAvailableInGameEditions": []},
                roubles(n, 5000 * n, editions),
            ],
        });
        let finish =
            condition(50 + n, "HandoverItem", json!({"target": [RIFLE], "value": 1, "onlyFoundInRaid": false}));
        table.insert(
            quest_id.clone(),
            json!({
                "_id": quest_id, "QuestName": name, "traderId": TRADER, "location": "any", "type": "PickUp",
                "side": "Pmc", "image": "/files/quest/icon/generated.jpg", "restartable": false,
                "instantComplete": false, "secretQuest": false,
                "name": format!("{quest_id} name"), "description": format!("{quest_id} description"),
                "successMessageText": format!("{quest_id} successMessageText"),
                "conditions": {"AvailableForStart": start, "AvailableForFinish": [finish], "Fail": []},
                "rewards": rewards,
            }),
        );
    }
    put(db, &["templates", "quests"], Value::Object(table));
}

fn templates(db: &mut Map<String, Value>) {
    let achievements: Vec<Value> = (0..3u64)
        .map(|n| {
            let rarity = ["Common", "Rare", "Legendary"][n as usize];
            json!({
                "id": id(500 + n), "imageUrl": format!("/files/achievement/generated_{n}.png"), "assetPath": "",
                "rewards": [], "conditions": {"availableForFinish": [condition(500 + n, "CounterCreator",
                    json!({"value": 10 * (n + 1), "type": "Completion", "completeInSeconds": 0,
                           "counter": {"id": id(510 + n), "conditions": [{"id": id(520 + n), "dynamicLocale": false,
                               "target": "Savage", "compareMethod": ">=", "value": 1, "conditionType": "Kills"}]}}))],
                    "fail": []},
                "instantComplete": false, "showNotificationsInGame": true, "showProgress": true, "prefab": "",
                "rarity": rarity, "hidden": false, "showConditions": true,
                "progressBarEnabled": true, "side": "All", "index": n,
            })
        })
        .collect();
    put(db, &["templates", "achievements"], json!(achievements));
    let prestige: Vec<Value> = (0..2u64)
        .map(|n| {
            json!({
                "id": id(530 + n),
                "conditions": [condition(530 + n, "Level", json!({"compareMethod": ">=", "value": 55}))],
                "rewards": [{"id": id(540 + n), "index": 0, "type": "CustomizationDirect", "target": id(550 + n),
                             "unknown": false, "availableInGameEditions": [], "notAvailableInGameEditions": []}],
                "transferConfigs": {"stashConfig": {"xCellCount": 2, "yCellCount": 2, "filters": {"includedItems": [], "excludedItems": []}},
                                    "skillConfig": {"transferMultiplier": 0.05}, "masteringConfig": {"transferMultiplier": 0.05}},
                "image": format!("/files/prestige/prestige_{}.png", n + 1), "bigImage": "",
            })
        })
        .collect();
    put(db, &["templates", "prestige"], json!({"elements": prestige}));
    put(
        db,
        &["templates", "customisationStorage"],
        json!([
            {"id": id(560), "source": "default", "type": "dogTag"},
            {"id": id(561), "source": "default", "type": "environment"},
            {"id": id(562), "source": "default", "type": "suite"},
        ]),
    );
    // One default equipment build, as SPT lists its presets after the player's own builds.
    let root = id(570);
    put(
        db,
        &["templates", "defaultEquipmentPresets"],
        json!([{
            "Id": id(571), "Name": "Generated default", "Root": root, "BuildType": 0, "type": "equipment",
            "Items": [
                {"_id": root, "_tpl": "55d7217a4bdc2d86028b456d"},
                {"_id": id(572), "_tpl": "544a11ac4bdc2d470e8b456a", "parentId": root, "slotId": "SecuredContainer"},
            ],
        }]),
    );
    put(db, &["templates", "prices"], json!({ROUBLES: 1, RIFLE: 31_000}));
}

/// Two more offers in Prapor's assort: one from loyalty level 2 (a rifle with a part under it) and one
/// the quest "Debut" unlocks on success.
fn trader(db: &mut Map<String, Value>) {
    let (gated, part, quested) = ("6000000000000000000000b1", "6000000000000000000000b2", "6000000000000000000000b3");
    let assort = db
        .get_mut("traders")
        .and_then(|t| t.get_mut(TRADER))
        .and_then(|t| t.get_mut("assort"))
        .and_then(Value::as_object_mut);
    let Some(assort) = assort else { return };
    if let Some(Value::Array(items)) = assort.get_mut("items") {
        items.push(json!({"_id": gated, "_tpl": RIFLE, "parentId": "hideout", "slotId": "hideout",
                          "upd": {"StackObjectsCount": 5, "BuyRestrictionMax": 2, "BuyRestrictionCurrent": 0}}));
        items.push(json!({"_id": part, "_tpl": RIFLE, "parentId": gated, "slotId": "mod_magazine"}));
        items.push(json!({"_id": quested, "_tpl": RIFLE, "parentId": "hideout", "slotId": "hideout",
                          "upd": {"UnlimitedCount": true, "StackObjectsCount": 999_999}}));
    }
    if let Some(Value::Object(schemes)) = assort.get_mut("barter_scheme") {
        schemes.insert(gated.into(), json!([[{"count": 40_000, "_tpl": ROUBLES}]]));
        schemes.insert(quested.into(), json!([[{"count": 20_000, "_tpl": ROUBLES}]]));
    }
    if let Some(Value::Object(levels)) = assort.get_mut("loyal_level_items") {
        levels.insert(gated.into(), json!(2));
        levels.insert(quested.into(), json!(1));
    }
    put(db, &["traders", TRADER, "questassort"], json!({"started": {}, "success": {quested: id(1)}, "fail": {}}));
}

fn configs(db: &mut Map<String, Value>) {
    let weighted = |values: Value, weights: Value| json!({"values": values, "weights": weights});
    let season = |day: (i32, i32), night: (i32, i32), rain_weights: Value| {
        json!({
            "clouds": weighted(json!([-1, -0.5, 0, 0.4, 0.8, 1]), json!([40, 20, 15, 10, 10, 5])),
            "windSpeed": weighted(json!([0, 1, 2, 3, 4]), json!([6, 3, 2, 1, 1])),
            "windDirection": weighted(json!([1, 2, 3, 4, 5, 6, 7, 8]), json!([1, 1, 1, 1, 1, 1, 1, 1])),
            "windGustiness": {"min": 0, "max": 1},
            "rain": weighted(json!([1, 2, 3, 4, 5]), rain_weights),
            "rainIntensity": {"min": 0, "max": 1},
            "fog": weighted(json!([0.0013, 0.002, 0.006]), json!([35, 4, 1])),
            "temp": {"day": {"min": day.0, "max": day.1}, "night": {"min": night.0, "max": night.1}},
            "pressure": {"min": 760, "max": 780},
        })
    };
    put(db, &["configs", "weather", "acceleration"], json!(7));
    put(
        db,
        &["configs", "weather", "weather"],
        json!({
            "generateWeatherAmountHours": 24,
            "seasonValues": {
                "default": season((9, 32), (2, 16), json!([20, 1, 1, 1, 1])),
                "WINTER": season((-5, 3), (-22, -5), json!([0, 1, 1, 1, 1])),
            },
        }),
    );
    let date = |kind: u32, name: &str, start: (u32, u32), end: (u32, u32)| {
        json!({"seasonType": kind, "name": name, "startDay": start.0.to_string(), "startMonth": start.1.to_string(),
               "endDay": end.0.to_string(), "endMonth": end.1.to_string()})
    };
    put(
        db,
        &["configs", "weather", "seasonDates"],
        json!([
            date(5, "SPRING_EARLY", (1, 1), (20, 3)),
            date(3, "SPRING", (20, 3), (2, 6)),
            date(0, "SUMMER", (2, 6), (15, 10)),
            date(1, "AUTUMN", (15, 10), (1, 11)),
            date(4, "AUTUMN_LATE", (1, 11), (21, 12)),
            date(2, "WINTER", (21, 12), (31, 12)),
        ]),
    );
    put(db, &["configs", "weather", "overrideSeason"], Value::Null);

    put(db, &["configs", "core", "compatibleTarkovVersion"], json!("0.16.0.36625"));
    put(db, &["configs", "core", "sptFriendNickname"], json!("SPT"));
    put(
        db,
        &["configs", "core", "features", "chatbotFeatures"],
        json!({
            "ids": {"commando": COMMANDO, "spt": SPT_FRIEND},
            "enabledBots": {COMMANDO: true, SPT_FRIEND: true},
        }),
    );
    put(
        db,
        &["configs", "core", "survey"],
        json!({
            "locale": {"en": {"question_1": "How did the generated server do?", "question_1_answer_1": "Well",
                              "question_1_answer_2": "Badly", "title": "A survey", "time": "1 minute",
                              "description": "One question.", "farewell": "Thanks"}},
            "survey": {
                "id": 1, "isNew": false,
                "welcomePageData": {"titleLocaleKey": "title", "timeLocaleKey": "time", "descriptionLocaleKey": "description"},
                "farewellPageData": {"textLocaleKey": "farewell"},
                "pages": [[0]],
                "questions": [{"id": 0, "sortIndex": 1, "titleLocaleKey": "question_1", "hintLocaleKey": "",
                               "answerLimit": 1, "answerType": "SingleOption",
                               "answers": [{"id": 0, "questionId": 0, "sortIndex": 1, "localeKey": "question_1_answer_1"},
                                           {"id": 1, "questionId": 0, "sortIndex": 2, "localeKey": "question_1_answer_2"}]}],
            },
        }),
    );

    put(db, &["configs", "quest", "bearOnlyQuests"], json!([id(4)]));
    put(db, &["configs", "quest", "usecOnlyQuests"], json!([id(5)]));
    put(
        db,
        &["configs", "trader", "updateTime"],
        json!([{"traderId": TRADER, "name": "prapor", "seconds": {"min": 3000, "max": 4000}}]),
    );
    put(db, &["configs", "trader", "updateTimeDefault"], json!(3600));
}

#[cfg(test)]
mod tests {
    use crate::database;

    #[test]
    fn the_menu_tables_are_in_spt_shape() {
        let db = database(3);
        assert_eq!(db["locations"]["bigmap"]["base"]["_Id"], "56f40101d2720b2a4d8b45d6");
        assert!(db["locations"]["base"]["paths"].as_array().is_some_and(|p| !p.is_empty()));
        assert_eq!(db["templates"]["quests"].as_object().map(|q| q.len()), Some(7));
        assert!(db["templates"]["prestige"]["elements"].is_array());
        assert!(db["configs"]["weather"]["weather"]["seasonValues"]["default"]["clouds"]["values"].is_array());
        // The boot's members of configs.core stay beside the menu's.
        assert!(db["configs"]["core"]["survey"]["survey"].is_object());
        let assort = &db["traders"][crate::TRADER]["assort"];
        assert_eq!(assort["loyal_level_items"]["6000000000000000000000b1"], 2);
    }
}
