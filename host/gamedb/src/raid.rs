//! What the client's raid reads from the database, generated: small synthetic tables in SPT's shapes.
//!
//! - `locations.<map>.looseLoot`, `.staticContainers`, `.staticLoot`, `.staticAmmo` for the maps the
//!   menu's part generates bases for ([`MAPS`]): spawn points whose items are the generated templates,
//!   a few static containers (of [`DRAWER`], a container with a `main` grid) and their loot tables;
//! - `bots.types.<role>` for [`ROLES`] (difficulty per level, health, names, an inventory pool),
//!   `bots.core` and `bots.base` (the bot profile every generated bot starts from);
//! - `match.metrics` (the client's metrics configuration), `templates.locationServices` (the
//!   `serverSettings` of `match/local/start`);
//! - what a raid reads of SPT's config files (not database), at their place in them:
//!   `configs.inraid.{raidMenuSettings, playerScavHostileChancePercent}`, `configs.bot.{bosses,
//!   maxBotCap, presetBatch}`, `configs.lostondeath`, `configs.health.healthMultipliers`; and our own
//!   settings under `emulator.raid` (the experience cap, the local weather's ranges). The emulator's
//!   `raid.rs` falls back to the same values when a database lacks them;
//! - the templates the raid needs and a small database may lack (the drawer, the pockets with their
//!   grids and special slots, a secure container), each only when absent.

use crate::{RIFLE, ROUBLES, hex_id, put};
use serde_json::{Map, Value, json};

/// The maps whose loot is generated (the menu's part generates their `base`).
pub(crate) const MAPS: [&str; 3] = ["bigmap", "factory4_day", "woods"];
/// The bot roles generated.
pub(crate) const ROLES: [&str; 4] = ["assault", "marksman", "bear", "usec"];
/// A static container's template: a drawer with a 4×4 `main` grid.
pub(crate) const DRAWER: &str = "578f87b7245977356274f2cd";
/// The pockets' template (the one every new profile has).
pub(crate) const POCKETS: &str = "627a4e6b255f7527fb05a0f6";
/// A secure container's template (2×2 `main`).
pub(crate) const SECURE: &str = "544a11ac4bdc2d470e8b456a";

/// How many generated templates the loot and bots draw from.
const LOOT_TEMPLATES: u64 = 24;

/// Adds the raid's tables to `db` (the whole document).
pub(crate) fn add(db: &mut Map<String, Value>) {
    add_templates(db);
    // SPT's globals: the seconds a new scav waits after the last one died.
    put(db, &["globals", "config", "SavagePlayCooldown"], json!(1500));
    let pool = loot_pool(db);
    for (m, map) in MAPS.iter().enumerate() {
        let salt = (m as u64 + 1) << 44;
        put(db, &["locations", map, "looseLoot"], loose_loot(&pool, salt));
        put(db, &["locations", map, "staticContainers"], static_containers(map, salt));
        put(db, &["locations", map, "staticLoot"], static_loot(&pool));
        put(
            db,
            &["locations", map, "staticAmmo"],
            json!({"Caliber545x39": [{"tpl": pool[0], "relativeProbability": 1}]}),
        );
    }
    for role in ROLES {
        put(db, &["bots", "types", role], bot_type(role, &pool));
    }
    put(db, &["bots", "core"], json!({"SAVAGE_KILL_DIST": 90, "SOUND_DOOR_OPEN_METERS": 10.0, "GUNSHOT_SPREAD": 280}));
    put(db, &["bots", "base"], bot_base());
    put(
        db,
        &["match", "metrics"],
        json!({
            "Keys": [0, 8, 10, 13, 16, 20, 26, 30, 33, 45, 53, 66, 100, 500, 750, 1000],
            "NetProcessingBins": [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 16, 20, 26, 30, 33, 45, 53, 66, 100, 500, 750, 1000],
            "RenderBins": [0, 4, 8, 10, 13, 16, 20, 26, 30, 33, 45, 53, 66, 100, 500, 750, 1000],
            "GameUpdateBins": [0, 4, 8, 10, 13, 16, 20, 26, 30, 33, 45, 53, 66, 100, 500, 750, 1000],
            "MemoryMeasureInterval": 180,
            "PauseReasons": [1, 2, 4, 8, 16],
        }),
    );
    put(
        db,
        &["templates", "locationServices"],
        json!({
            "TraderServerSettings": {"TraderServices": {}},
            "BTRServerSettings": {"ChanceSpawn": 0.0, "SpawnPeriod": {"x": 0, "y": 0}, "MoveSpeed": 22.0, "ServerMapBTRSettings": {}},
        }),
    );
    configs(db);
}

/// The templates loot and bots draw from: the first generated ones, and the roubles.
fn loot_pool(db: &Map<String, Value>) -> Vec<String> {
    let items = db.get("templates").and_then(|t| t.get("items"));
    let mut pool: Vec<String> =
        (0..LOOT_TEMPLATES).map(hex_id).filter(|id| items.is_some_and(|items| items.get(id).is_some())).collect();
    pool.push(ROUBLES.to_owned());
    pool
}

fn add_templates(db: &mut Map<String, Value>) {
    let grid = |name: &str, h: u32, v: u32| json!({"_name": name, "_id": format!("{name}-grid"), "_parent": "", "_props": {"cellsH": h, "cellsV": v, "filters": [], "minCount": 0, "maxCount": 0, "maxWeight": 0}});
    let slot = |name: &str| json!({"_name": name, "_id": format!("{name}-slot"), "_parent": "", "_props": {"filters": []}, "_required": false});
    let templates = [
        (
            DRAWER,
            "container_drawer",
            "566965d44bdc2d814c8b4571",
            json!({"Width": 1, "Height": 1, "Grids": [grid("main", 4, 4)]}),
        ),
        (
            POCKETS,
            "pockets",
            "557596e64bdc2dc2118b4571",
            json!({"Width": 1, "Height": 1, "StackMaxSize": 1,
                   "Grids": [grid("pocket1", 1, 1), grid("pocket2", 1, 1), grid("pocket3", 1, 1), grid("pocket4", 1, 1)],
                   "Slots": [slot("SpecialSlot1"), slot("SpecialSlot2"), slot("SpecialSlot3")]}),
        ),
        (
            SECURE,
            "item_equipment_secured_alpha",
            "5448bf274bdc2dfc2f8b456a",
            json!({"Width": 2, "Height": 2, "StackMaxSize": 1, "Grids": [grid("main", 2, 2)]}),
        ),
    ];
    for (id, name, parent, props) in templates {
        let exists = db.get("templates").and_then(|t| t.get("items")).and_then(|i| i.get(id)).is_some();
        if !exists {
            put(
                db,
                &["templates", "items", id],
                json!({"_id": id, "_name": name, "_parent": parent, "_type": "Item", "_props": props}),
            );
        }
    }
}

/// A spawn point at `n`: a position, a probability, and two or three candidate items.
fn loose_loot(pool: &[String], salt: u64) -> Value {
    let spawnpoints: Vec<Value> = (0..8u64)
        .map(|n| {
            let candidates: Vec<(String, String)> = (0..(2 + n % 2))
                .map(|k| (format!("{}", 1000 + n * 10 + k), pool[((n * 3 + k) as usize) % pool.len()].clone()))
                .collect();
            let items: Vec<Value> = candidates
                .iter()
                .map(|(key, tpl)| json!({"_id": key, "_tpl": tpl, "upd": {"StackObjectsCount": 1}}))
                .collect();
            let distribution: Vec<Value> = candidates
                .iter()
                .enumerate()
                .map(|(k, (key, _))| json!({"composedKey": {"key": key}, "relativeProbability": 1 + k}))
                .collect();
            let position = json!({"x": n as f64 * 1.5, "y": 0.5, "z": -(n as f64)});
            json!({
                "locationId": format!("({}, 0.5, {})", n as f64 * 1.5, -(n as f64)),
                "probability": 0.2 + (n % 5) as f64 * 0.15,
                "template": {
                    "Id": format!("loot_{n} [{}]", hex_id(salt | n)), "IsContainer": false, "useGravity": true,
                    "randomRotation": false, "Position": position, "Rotation": {"x": 0, "y": 0, "z": 0},
                    "IsGroupPosition": false, "GroupPositions": [], "IsAlwaysSpawn": false,
                    "Root": hex_id(salt | 1 << 20 | n), "Items": items,
                },
                "itemDistribution": distribution,
            })
        })
        .collect();
    let forced = json!({
        "locationId": "(0, 1, 0)", "probability": 1,
        "template": {
            "Id": "forced_0", "IsContainer": false, "useGravity": false, "randomRotation": false,
            "Position": {"x": 0, "y": 1, "z": 0}, "Rotation": {"x": 0, "y": 0, "z": 0},
            "IsGroupPosition": false, "GroupPositions": [], "IsAlwaysSpawn": true,
            "Root": hex_id(salt | 1 << 21), "Items": [{"_id": hex_id(salt | 1 << 21), "_tpl": RIFLE, "upd": {"StackObjectsCount": 1}}],
        },
    });
    json!({"spawnpointCount": {"mean": 5.0, "std": 1.0}, "spawnpointsForced": [forced], "spawnpoints": spawnpoints})
}

fn static_containers(map: &str, salt: u64) -> Value {
    let containers: Vec<Value> = (0..4u64)
        .map(|n| {
            let id = hex_id(salt | 1 << 22 | n);
            json!({
                "probability": if n < 2 { 1.0 } else { 0.5 },
                "template": {
                    "Id": format!("container_{map}_{n:05}"), "IsContainer": true, "useGravity": false, "randomRotation": false,
                    "Position": {"x": n, "y": 0, "z": 0}, "Rotation": {"x": 0, "y": 0, "z": 0},
                    "IsGroupPosition": false, "GroupPositions": [], "IsAlwaysSpawn": n == 0,
                    "Root": id, "Items": [{"_id": id, "_tpl": DRAWER, "upd": {"StackObjectsCount": 1}}],
                },
            })
        })
        .collect();
    json!({"staticWeapons": [], "staticContainers": containers, "staticForced": []})
}

fn static_loot(pool: &[String]) -> Value {
    let items: Vec<Value> =
        pool.iter().enumerate().map(|(n, tpl)| json!({"tpl": tpl, "relativeProbability": 10 + (n % 7) * 5})).collect();
    json!({DRAWER: {
        "itemcountDistribution": [{"count": 0, "relativeProbability": 1}, {"count": 1, "relativeProbability": 4}, {"count": 2, "relativeProbability": 3}, {"count": 3, "relativeProbability": 1}],
        "itemDistribution": items,
    }})
}

/// One difficulty level's settings: a few of each category SPT's bots have.
fn difficulty(level: u32) -> Value {
    let f = f64::from(level);
    json!({
        "Aiming": {"MAX_AIM_TIME": 1.5 - 0.3 * f, "BOTTOM_COEF": 0.1},
        "Boss": {"BOSS_DIST_TO_WARNING": 34},
        "Change": {"SMOKE_VISION_DIST": 0.6},
        "Core": {"VisibleAngle": 120 + 10 * level, "VisibleDistance": 130 + 20 * level, "GainSightCoef": 0.1, "ScatteringPerMeter": 0.1 - 0.02 * f, "AimingType": "normal"},
        "Cover": {"RETURN_TO_ATTACK_AFTER_AMBUSH_MIN": 20},
        "Grenade": {"CHANCE_TO_THROW": 0.2 + 0.1 * f},
        "Hearing": {"CHANCE_TO_HEAR_SIMPLE_SOUND_0_1": 0.5},
        "Lay": {"CHECK_SHOOT_WHEN_LAYING": false},
        "Look": {"FAR_DISTANCE": 160},
        "Mind": {"CAN_RECEIVE_PLAYER_REQUESTS_SAVAGE": true},
        "Move": {"RUN_TO_COVER_MIN": 2},
        "Patrol": {"LOOK_TIME_BASE": 12},
        "Scattering": {"MinScatter": 0.03},
        "Shoot": {"RECOIL_PER_METER": 0.1},
    })
}

fn bot_type(role: &str, pool: &[String]) -> Value {
    let pmc = role == "bear" || role == "usec";
    let loot: Map<String, Value> = pool.iter().enumerate().map(|(n, tpl)| (tpl.clone(), json!(1 + n % 3))).collect();
    let part = |hp: u32| json!({"min": hp, "max": hp});
    json!({
        "appearance": {"body": {"5cc2e59214c02e000f16684e": 1}, "feet": {"5cde9fb87d6c8b0474535da9": 1},
                       "hands": {"5cc2e68f14c02e28b47de290": 1}, "head": {"5cc2e4d014c02e000d0115f8": 1},
                       "voice": {if pmc { "Bear_1" } else { "Scav_1" }: 1}},
        "chances": {"equipment": {"FirstPrimaryWeapon": 100, "Pockets": 100, "SecuredContainer": if pmc { 100 } else { 0 }},
                    "weaponMods": {}, "equipmentMods": {}},
        "difficulty": {"easy": difficulty(0), "normal": difficulty(1), "hard": difficulty(2), "impossible": difficulty(3)},
        "experience": {"aggressorBonus": {"easy": 0.01, "normal": 0.02, "hard": 0.02},
                       "level": {"min": if pmc { 1 } else { 0 }, "max": if pmc { 40 } else { 1 }},
                       "reward": {"easy": {"min": 80, "max": 100}, "normal": {"min": 100, "max": 120}, "hard": {"min": 120, "max": 150}},
                       "standingForKill": {"easy": -0.03, "normal": -0.04, "hard": -0.05}, "useSimpleAnimator": false},
        "firstName": if pmc { json!(["Sergei", "Mikhail", "Anton"]) } else { json!(["Vasya", "Kolya", "Tolik", "Grisha"]) },
        "lastName": if pmc { json!([]) } else { json!(["Petrov", "Sidorov", "Ivanov"]) },
        "generation": {"items": {"looseLoot": {"weights": {"0": 1, "1": 3, "2": 2, "3": 1}, "whitelist": {}}}},
        "health": {
            "BodyParts": [{"Head": part(35), "Chest": part(85), "Stomach": part(70), "LeftArm": part(60),
                           "RightArm": part(60), "LeftLeg": part(65), "RightLeg": part(65)}],
            "Energy": {"min": 100, "max": 100}, "Hydration": {"min": 100, "max": 100}, "Temperature": {"min": 36, "max": 37},
        },
        "inventory": {
            "Ammo": {},
            "equipment": {"FirstPrimaryWeapon": {RIFLE: 1}, "Pockets": {POCKETS: 1}, "SecuredContainer": {SECURE: 1},
                          "Backpack": {}, "TacticalVest": {}, "Headwear": {}, "ArmorVest": {}},
            "items": {"Pockets": loot, "Backpack": {}, "TacticalVest": {}, "SecuredContainer": {}, "SpecialLoot": {}},
            "mods": {},
        },
        "skills": {"Common": {}},
    })
}

/// The profile every generated bot starts from (SPT's `bots/base.json`, trimmed to what it holds).
fn bot_base() -> Value {
    json!({
        "_id": "", "aid": 0, "savage": null,
        "Info": {"Nickname": "BOTNAME", "LowerNickname": "", "Side": "Savage", "Voice": "Scav_1", "Level": 1,
                 "Experience": 0, "RegistrationDate": 0, "GameVersion": "", "AccountType": 0, "MemberCategory": 0,
                 "SelectedMemberCategory": 0, "lockedMoveCommands": false, "SavageLockTime": 0, "LastTimePlayedAsSavage": 0,
                 "Settings": {"Role": "assault", "BotDifficulty": "normal", "Experience": -1, "StandingForKill": -0.04, "AggressorBonus": 0.02},
                 "NicknameChangeDate": 0, "NeedWipeOptions": [], "lastCompletedWipe": null, "lastCompletedEvent": null,
                 "BannedState": false, "BannedUntil": 0, "IsStreamerModeAvailable": false, "SquadInviteRestriction": false,
                 "HasCoopExtension": false, "isMigratedSkills": false, "HasPveGame": false},
        "Customization": {"Head": "", "Body": "", "Feet": "", "Hands": ""},
        "Health": {"UpdateTime": 0, "Immortal": false},
        "Inventory": {"fastPanel": {}, "hideoutAreaStashes": {}, "favoriteItems": []},
        "Skills": {"Common": [], "Mastering": [], "Points": 0},
        "Stats": {"Eft": {"SessionCounters": {"Items": []}, "OverallCounters": {"Items": []}, "Aggressor": null, "DroppedItems": [],
                          "FoundInRaidItems": [], "Victims": [], "CarriedQuestItems": [], "DamageHistory": {}, "SurvivorClass": "Unknown",
                          "TotalInGameTime": 0, "TotalSessionExperience": 0}},
        "Encyclopedia": {}, "TaskConditionCounters": {}, "InsuredItems": [], "Hideout": null, "Quests": [],
        "TradersInfo": {}, "UnlockedInfo": {"unlockedProductionRecipe": []}, "RagfairInfo": {}, "Achievements": {},
        "RepeatableQuests": [], "Bonuses": [], "Notes": {"Notes": []}, "CarExtractCounts": {}, "CoopExtractCounts": {},
        "SurvivorClass": "Unknown", "WishList": {}, "moneyTransferLimitData": {}, "isPmc": false,
    })
}

/// What a raid reads of SPT's config files, each at its place in them (`configs.<file>.<member>`, as
/// `modhost import-spt-db` brings a real configs folder), and the settings of our own
/// (`emulator.raid`): SPT's values, with the bots' tables cut to the generated maps and roles.
fn configs(db: &mut Map<String, Value>) {
    let inraid = json!({"aiAmount": "AsOnline", "aiDifficulty": "AsOnline", "bossEnabled": true, "scavWars": false,
                        "taggedAndCursed": false, "enablePve": true, "randomWeather": false, "randomTime": false});
    put(db, &["configs", "inraid", "raidMenuSettings"], inraid);
    put(db, &["configs", "inraid", "playerScavHostileChancePercent"], json!(15));
    put(db, &["configs", "inraid", "scavExtractStandingGain"], json!(0.01));
    put(db, &["configs", "trader", "fence", "playerRepMin"], json!(-7));
    put(db, &["configs", "trader", "fence", "playerRepMax"], json!(15));
    let bosses = json!([
        "bossBully",
        "bossGluhar",
        "bossKilla",
        "bossKojaniy",
        "bossSanitar",
        "bossTagilla",
        "bossKnight",
        "bossZryachiy"
    ]);
    put(db, &["configs", "bot", "bosses"], bosses);
    put(db, &["configs", "bot", "maxBotCap"], json!({"default": 18, "bigmap": 26, "factory4_day": 12, "woods": 23}));
    put(db, &["configs", "bot", "presetBatch"], json!({"assault": 20, "marksman": 10, "pmcBEAR": 10, "pmcUSEC": 10}));
    put(
        db,
        &["configs", "lostondeath"],
        json!({"equipment": {"ArmBand": false, "Compass": false, "Headwear": true, "Earpiece": true, "FaceCover": true,
                             "ArmorVest": true, "Eyewear": true, "TacticalVest": true, "PocketItems": true, "Backpack": true,
                             "Holster": true, "FirstPrimaryWeapon": true, "SecondPrimaryWeapon": true, "Scabbard": false,
                             "SecuredContainer": false},
               "questItems": true, "specialSlotItems": false}),
    );
    put(db, &["configs", "health", "healthMultipliers"], json!({"death": 0.3, "blacked": 0.1}));
    put(
        db,
        &["emulator", "raid"],
        json!({
            "survivedSecondsRequirement": 420,
            "maxRaidExperience": 500000,
            "maxFenceStandingGain": 1.0,
            "season": 0,
            "weather": {"temp": [10, 25], "pressure": [750, 770], "cloud": [-1.0, 1.0], "wind_speed": [0, 4],
                        "wind_gustiness": [0.0, 1.0], "rain": [1, 3], "rain_intensity": [0.0, 0.5], "fog": [0.0, 0.02],
                        "periodSeconds": 1800, "periods": 8},
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_raid_tables_are_small() {
        let mut without = crate::database(30);
        let with = without.to_string().len();
        for map in MAPS {
            for table in ["looseLoot", "staticContainers", "staticLoot", "staticAmmo"] {
                without["locations"][map].as_object_mut().map(|m| m.shift_remove(table));
            }
        }
        for top in ["bots", "match", "emulator"] {
            without.as_object_mut().map(|m| m.shift_remove(top));
        }
        let size = with - without.to_string().len();
        assert!(size < 64_000, "the raid's tables take {size} bytes of a small database");
    }

    #[test]
    fn the_raid_tables_sit_at_spt_paths() {
        let db = crate::database(40);
        for map in MAPS {
            let loose = &db["locations"][map]["looseLoot"];
            assert!(loose["spawnpoints"].as_array().is_some_and(|s| !s.is_empty()), "{map}");
            // Every candidate key names an item of its spawn point.
            for point in loose["spawnpoints"].as_array().unwrap() {
                for key in point["itemDistribution"].as_array().unwrap() {
                    let items = point["template"]["Items"].as_array().unwrap();
                    assert!(items.iter().any(|i| i["_id"] == key["composedKey"]["key"]), "{point}");
                }
            }
            assert!(db["locations"][map]["staticLoot"][DRAWER]["itemDistribution"].is_array());
        }
        for role in ROLES {
            assert!(db["bots"]["types"][role]["difficulty"]["normal"]["Core"].is_object(), "{role}");
        }
        assert!(db["match"]["metrics"]["Keys"].is_array());
        assert_eq!(db["templates"]["items"][DRAWER]["_props"]["Grids"][0]["_name"], "main");
        assert!(db["configs"]["lostondeath"]["equipment"]["SecuredContainer"] == false);
        assert_eq!(db["configs"]["health"]["healthMultipliers"]["death"], 0.3);
    }
}
