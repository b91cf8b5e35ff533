//! The hideout's tables (SPT's `database/hideout/` and `configs/scavcase.json`), small and fixed in
//! size, with SPT's ids where the game's rules name them (the water collector's and the bitcoin farm's
//! recipes, the fuel, filters, graphics card and bitcoin):
//!
//! - `hideout.areas`: ten areas of SPT's shape, each level with requirements of every kind the game
//!   checks (items, other areas' levels, trader loyalty, a skill, a finished quest), a construction
//!   time, slots and bonuses: the stash (3: `StashSize` to a bigger stash), the generator (4: six fuel
//!   slots, `FuelConsumption`), the water collector (6: needs fuel, a filter slot), the medstation (7),
//!   the workbench (10), the scav case (14), air filtering (17: filter slots), the bitcoin farm (20:
//!   graphics card slots), the gym (23, which the QTE names) and the cultist circle (27);
//! - `hideout.production`: a workbench craft, a locked generator craft, a medstation craft that needs
//!   power for all its time, the water collector and the bitcoin farm (continuous), a scav case recipe;
//! - `hideout.qte`, `hideout.settings` (SPT's values), `hideout.customisation`;
//! - the templates those name, with handbook prices (what the scav case's rarities are read from);
//! - `configs.scavcase` (the rouble value range of each rarity, SPT's defaults) and
//!   `configs.hideout.cultistCircle` (SPT's craft times and reward budget);
//! - the cultist circle's container template, which its level 1 gives the player;
//! - the start characters' `Hideout.Areas`: every area at level 0, the stash at 1 (SPT's templates).

use crate::{RIFLE, ROUBLES, STASH, TRADER, hex_id, put};
use serde_json::{Map, Value, json};

/// Metal fuel tank (`MaxResource` 100).
pub const FUEL: &str = "5d1b36a186f7742523398433";
/// Water filter (`MaxResource` 100).
pub const WATER_FILTER: &str = "5d1b385e86f774252167b98a";
/// Gas analyser's neighbour: the FP-100 air filter (`MaxResource` 300).
pub const AIR_FILTER: &str = "590c595c86f7747884343ad7";
/// Graphics card.
pub const GPU: &str = "57347ca924597744596b4e71";
/// Physical bitcoin.
pub const BITCOIN: &str = "59faff1d86f7746c51718c9c";
/// Purified water, the water collector's product.
pub const PURIFIED_WATER: &str = "5d1b376e86f774252519444e";
/// A bigger stash, the stash's level 2 (`StashSize`).
pub const BIG_STASH: &str = "5811ce662459770f6f490f32";
/// SPT's water collector recipe.
pub const WATER_RECIPE: &str = "5d5589c1f934db045e6c5492";
/// The cultist circle's container (`Inventory.hideoutAreaStashes."27"`), with SPT's grid.
pub const CIRCLE_STASH: &str = "66740c3739b9da6ce402ee65";
/// The cultist circle's one recipe.
pub const CIRCLE_RECIPE: &str = "00000000000000000000a103";
/// The workbench's level-1 improvement (5 000 roubles, 300 seconds).
pub const WORKBENCH_IMPROVEMENT: &str = "00000000000000000000a105";
/// SPT's bitcoin farm recipe.
pub const BITCOIN_RECIPE: &str = "5d5c205bd582a50d042a3c0e";
/// The generated workbench craft: a rifle into 10 000 roubles in an hour, no power needed.
pub const WORKBENCH_RECIPE: &str = "00000000000000000000a100";
/// The generated medstation craft: crackers into a medkit in 30 minutes, power for all of it.
pub const MEDSTATION_RECIPE: &str = "00000000000000000000a104";
/// The generated scav case recipe: 2 500 roubles for 40 minutes.
pub const SCAV_RECIPE: &str = "00000000000000000000a102";

/// The id of generated hideout record `n` (areas, QTE, customisation), apart from the items'.
fn id(n: u64) -> String {
    hex_id(1 << 51 | n)
}

/// Adds the tables above to `db`.
pub(crate) fn add(db: &mut Map<String, Value>) {
    areas(db);
    production(db);
    templates(db);
    tables(db);
    put(
        db,
        &["configs", "scavcase"],
        json!({
            "rewardItemValueRangeRub": {"common": {"min": 1, "max": 20_000}, "rare": {"min": 20_001, "max": 60_000},
                                        "superrare": {"min": 60_001, "max": 1_200_000}},
            "rewardItemParentBlacklist": [], "rewardItemBlacklist": [], "allowMultipleMoneyRewardsPerRarity": false,
        }),
    );
    // SPT's `configs/hideout.json` `cultistCircle`, without its direct rewards and task rewards.
    put(
        db,
        &["configs", "hideout", "cultistCircle"],
        json!({
            "maxRewardItemCount": 5, "maxAttemptsToPickRewardsWithinBudget": 5,
            "rewardPriceMultiplerMinMax": {"min": 0.7, "max": 1.4},
            "craftTimeThreshholds": [{"min": 1, "max": 350_000, "craftTimeSeconds": 43_200},
                                     {"min": 350_001, "max": 399_999, "craftTimeSeconds": 50_400},
                                     {"min": 400_000, "max": 99_999_999, "craftTimeSeconds": 50_400}],
            "craftTimeOverride": -1, "rewardItemBlacklist": [],
        }),
    );
    start_areas(db);
}

/// An `Item` requirement.
fn items(tpl: &str, count: u64) -> Value {
    json!({"templateId": tpl, "count": count, "isFunctional": false, "isEncoded": false,
           "isSpawnedInSession": false, "type": "Item"})
}

/// An `Area` requirement.
fn area_level(kind: u32, level: u32) -> Value {
    json!({"areaType": kind, "requiredLevel": level, "type": "Area"})
}

/// A bonus of SPT's shape.
fn bonus(n: u64, kind: &str, value: f64, template: Option<&str>) -> Value {
    let mut b = json!({"id": id(600 + n), "type": kind, "value": value, "passive": true, "production": false,
                       "visible": true});
    if let Some(t) = template {
        b["templateId"] = json!(t);
    }
    b
}

/// Level `level` of an area: (requirements, bonuses, slots, construction seconds).
type Stage = (Vec<Value>, Vec<Value>, u32, u32);

/// An area of SPT's shape: `stages` from level 1 (level 0 is "not built").
fn area(kind: u32, needs_fuel: bool, stages: Vec<Stage>) -> Value {
    let empty: Stage = (vec![], vec![], 0, 0);
    let mut levels = Map::new();
    for (level, (requirements, bonuses, slots, time)) in std::iter::once(empty).chain(stages).enumerate() {
        levels.insert(
            level.to_string(),
            json!({"requirements": requirements, "bonuses": bonuses, "slots": slots, "constructionTime": time,
                   "description": "", "container": "", "autoUpgrade": false, "displayInterface": true,
                   "improvements": [], "globalCounterId": null}),
        );
    }
    json!({
        "_id": id(200 + u64::from(kind)), "type": kind, "enabled": true, "needsFuel": needs_fuel,
        "takeFromSlotLocked": false, "craftGivesExp": true, "displayLevel": true, "requirements": [],
        "stages": levels, "enableAreaRequirements": false, "parentArea": null,
    })
}

fn areas(db: &mut Map<String, Value>) {
    let money = |n: u64| items(ROUBLES, n);
    let areas = vec![
        // The vents build in 2 seconds: a construction a test can wait for on the host's clock.
        area(0, false, vec![(vec![money(5_000)], vec![], 0, 2)]),
        area(
            3,
            false,
            vec![
                (vec![], vec![bonus(1, "StashSize", 0.0, Some(STASH))], 0, 0),
                (vec![money(100_000)], vec![bonus(2, "StashSize", 0.0, Some(BIG_STASH))], 0, 1_200),
            ],
        ),
        area(
            4,
            false,
            vec![
                (vec![money(50_000)], vec![], 6, 600),
                (
                    vec![
                        money(150_000),
                        area_level(3, 1),
                        json!({"traderId": TRADER, "loyaltyLevel": 2, "type": "TraderLoyalty"}),
                    ],
                    vec![bonus(3, "FuelConsumption", -25.0, None)],
                    6,
                    3_600,
                ),
                (
                    vec![money(300_000), json!({"skillName": "Endurance", "skillLevel": 5, "type": "Skill"})],
                    vec![bonus(4, "FuelConsumption", -10.0, None)],
                    6,
                    7_200,
                ),
            ],
        ),
        area(6, true, vec![(vec![money(30_000), area_level(4, 1)], vec![], 1, 1_800)]),
        area(
            7,
            true,
            vec![(
                vec![money(20_000), json!({"questId": crate::menu::id(1), "type": "QuestComplete"})],
                vec![bonus(5, "HealthRegeneration", 20.0, None)],
                0,
                600,
            )],
        ),
        area(10, true, vec![(vec![money(10_000)], vec![], 0, 600)]),
        area(14, false, vec![(vec![money(25_000)], vec![], 0, 0)]),
        area(17, true, vec![(vec![money(40_000), area_level(4, 1)], vec![], 3, 1_800)]),
        area(20, true, vec![(vec![money(60_000), area_level(4, 1)], vec![], 10, 3_600)]),
        area(23, false, vec![(vec![money(15_000)], vec![], 0, 0)]),
        area(27, false, vec![(vec![money(35_000)], vec![], 0, 0)]),
    ];
    let mut areas = areas;
    if let Some(circle) = areas.iter_mut().find(|a| a["type"] == 27) {
        circle["stages"]["1"]["container"] = json!(CIRCLE_STASH);
    }
    if let Some(workbench) = areas.iter_mut().find(|a| a["type"] == 10) {
        workbench["stages"]["1"]["improvements"] = json!([{"id": WORKBENCH_IMPROVEMENT, "requirements": [money(5_000)], "improvementTime": 300, "bonuses": []}]);
    }
    put(db, &["hideout", "areas"], json!(areas));
}

/// A recipe of SPT's shape.
fn recipe(id: &str, area: u32, requirements: Vec<Value>, product: &str, count: u64, time: u64) -> Value {
    json!({"_id": id, "areaType": area, "requirements": requirements, "productionTime": time,
           "endProduct": product, "isEncoded": false, "locked": false, "needFuelForAllProductionTime": false,
           "continuous": false, "count": count, "productionLimitCount": 0, "isCodeProduction": false})
}

fn production(db: &mut Map<String, Value>) {
    let mut locked = recipe("00000000000000000000a101", 4, vec![area_level(4, 2)], RIFLE, 1, 7_200);
    locked["locked"] = json!(true);
    locked["needFuelForAllProductionTime"] = json!(true);
    locked["productionLimitCount"] = json!(1);
    let mut medstation = recipe(
        MEDSTATION_RECIPE,
        7,
        vec![area_level(7, 1), items(crate::trade::CRACKERS, 1)],
        crate::trade::MEDKIT,
        1,
        1_800,
    );
    medstation["needFuelForAllProductionTime"] = json!(true);
    let mut water = recipe(
        WATER_RECIPE,
        6,
        vec![area_level(6, 1), json!({"templateId": WATER_FILTER, "resource": 66, "type": "Resource"})],
        PURIFIED_WATER,
        1,
        8_000,
    );
    water["continuous"] = json!(true);
    water["productionLimitCount"] = json!(1);
    let mut bitcoin = recipe(BITCOIN_RECIPE, 20, vec![area_level(20, 1)], BITCOIN, 1, 145_000);
    bitcoin["continuous"] = json!(true);
    bitcoin["productionLimitCount"] = json!(3);
    let workbench = recipe(
        WORKBENCH_RECIPE,
        10,
        vec![area_level(10, 1), items(RIFLE, 1), json!({"templateId": crate::trade::REPAIR_KIT, "type": "Tool"})],
        ROUBLES,
        10_000,
        3_600,
    );
    put(
        db,
        &["hideout", "production"],
        json!({
            "recipes": [workbench, locked, medstation, water, bitcoin],
            "scavRecipes": [{"_id": SCAV_RECIPE, "requirements": [items(ROUBLES, 2_500)], "productionTime": 2_400,
                             "endProducts": {"Common": {"min": 2, "max": 3}, "Rare": {"min": 0, "max": 1},
                                             "Superrare": {"min": 0, "max": 0}}}],
            "cultistRecipes": [{"_id": CIRCLE_RECIPE}],
        }),
    );
}

fn templates(db: &mut Map<String, Value>) {
    let item = |tpl: &str, name: &str, parent: &str, props: Value| json!({"_id": tpl, "_name": name, "_parent": parent, "_type": "Item", "_props": props});
    let resource = |name: &str, w: u32, h: u32, max: u32| json!({"Name": name, "Width": w, "Height": h, "StackMaxSize": 1, "MaxResource": max, "Resource": max});
    let added = [
        (item(FUEL, "barter_fuel1", "5d650c3e815116009f6201d2", resource("Metal fuel tank", 1, 2, 100)), 55_000),
        (item(WATER_FILTER, "water_filter", "57864ee62459775490116fc1", resource("Water filter", 1, 2, 100)), 75_000),
        (item(AIR_FILTER, "air_filter", "57864ee62459775490116fc1", resource("FP-100 filter", 2, 2, 300)), 120_000),
        (
            item(
                GPU,
                "video_card",
                "57864ee62459775490116fc1",
                json!({"Name": "Graphics card", "Width": 2, "Height": 1, "StackMaxSize": 1}),
            ),
            200_000,
        ),
        (
            item(
                BITCOIN,
                "bitcoin",
                "57864a3d24597754843f8721",
                json!({"Name": "Physical bitcoin", "Width": 1, "Height": 1, "StackMaxSize": 1}),
            ),
            300_000,
        ),
        (
            item(PURIFIED_WATER, "water_purified", "5448e8d64bdc2dce718b4568", resource("Purified water", 1, 2, 100)),
            18_000,
        ),
    ];
    for (template, price) in added {
        let tpl = template["_id"].as_str().unwrap_or_default().to_owned();
        crate::trade::add_template(db, &tpl, template);
        crate::trade::add_price(db, &tpl, price);
    }
    let circle = json!({"_id": CIRCLE_STASH, "_name": "hideout_area_container_circleofcultists_stash_1",
                        "_parent": "63da6da4784a55176c018dba", "_type": "Item",
                        "_props": {"Name": "Circle of cultists stash", "Width": 1, "Height": 1,
                                   "Grids": [{"_name": "CircleOfCultistsGrid1",
                                              "_props": {"cellsH": 5, "cellsV": 5, "filters": []}}]}});
    crate::trade::add_template(db, CIRCLE_STASH, circle);
    // The stash's level 2: SPT's bigger stash is the same container with more rows.
    let stash = db.get("templates").and_then(|t| t.get("items")).and_then(|i| i.get(STASH)).cloned();
    if let Some(mut big) = stash {
        big["_id"] = json!(BIG_STASH);
        big["_name"] = json!("Stash 10x88");
        big["_props"]["Grids"][0]["_props"]["cellsV"] = json!(88);
        crate::trade::add_template(db, BIG_STASH, big);
    }
}

fn tables(db: &mut Map<String, Value>) {
    put(
        db,
        &["hideout", "qte"],
        json!([{
            "id": id(110), "area": 23, "areaLevel": 1,
            "quickTimeEvents": [{"type": "ShrinkingCircle", "position": {"x": 0.5, "y": 0.25}, "speed": 2,
                                 "successRange": {"x": 0.45, "y": 0.1}, "key": "Mouse0", "startDelay": 0.8, "endDelay": 0.2}],
            "requirements": [{"energy": 30, "hydration": 30, "type": "Health"},
                             {"bodyPart": "Chest", "effectName": "Fracture", "excluded": true, "type": "BodyPartBuff"}],
            "results": {"singleSuccessEffect": {"energy": -2, "hydration": -2, "rewardsRange": []},
                        "singleFailEffect": {"energy": -4, "hydration": -4, "rewardsRange": []},
                        "finishEffect": {"energy": 0, "hydration": 0,
                                         "rewardsRange": [{"result": "Exit", "time": 86400, "type": "MusclePain"}]}},
        }]),
    );
    // SPT's `hideout/settings.json`.
    put(
        db,
        &["hideout", "settings"],
        json!({
            "generatorSpeedWithoutFuel": 0.15, "generatorFuelFlowRate": 0.0013, "airFilterUnitFlowRate": 0.0047,
            "cultistAmuletBonusPercent": 15, "gpuBoostRate": 0.041225,
        }),
    );
    put(
        db,
        &["hideout", "customisation"],
        json!({
            "globals": [{"id": id(120), "conditions": [], "type": "wall", "index": 0, "systemName": "Wall_Default",
                         "isEnabled": true, "itemId": id(121)}],
            "slots": [{"id": id(122), "conditions": [], "type": "statuetteSlot", "index": 0, "systemName": "Statuette_Gym_1",
                       "isEnabled": true, "slotId": "Statuette_Gym_1", "areaTypeId": 23}],
        }),
    );
}

/// Every start character's `Hideout.Areas`: each area of the table at level 0, the stash at 1.
fn start_areas(db: &mut Map<String, Value>) {
    let kinds: Vec<Value> =
        db["hideout"]["areas"].as_array().into_iter().flatten().map(|a| a["type"].clone()).collect();
    let areas: Vec<Value> = kinds
        .into_iter()
        .map(|kind| {
            let level = if kind == 3 { 1 } else { 0 };
            json!({"type": kind, "level": level, "active": true, "passiveBonusesEnabled": true, "completeTime": 0,
                   "constructing": false, "slots": [], "lastRecipe": ""})
        })
        .collect();
    let Some(Value::Object(editions)) = db.get_mut("templates").and_then(|t| t.get_mut("profiles")) else { return };
    for edition in editions.values_mut() {
        for side in ["bear", "usec"] {
            if let Some(hideout) = edition.get_mut(side).and_then(|s| s.pointer_mut("/character/Hideout")) {
                hideout["Areas"] = json!(areas);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::database;

    #[test]
    fn the_hideout_tables_name_what_the_rules_read() {
        let db = database(3);
        let areas = db["hideout"]["areas"].as_array().expect("areas");
        let kinds: Vec<u64> = areas.iter().filter_map(|a| a["type"].as_u64()).collect();
        assert_eq!(kinds, [0, 3, 4, 6, 7, 10, 14, 17, 20, 23, 27]);
        let generator = areas.iter().find(|a| a["type"] == 4).expect("generator");
        assert_eq!(generator["stages"]["1"]["slots"], 6);
        let kinds_required: Vec<&str> = generator["stages"]["2"]["requirements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["type"].as_str())
            .collect();
        assert_eq!(kinds_required, ["Item", "Area", "TraderLoyalty"]);
        assert_eq!(db["templates"]["items"][super::FUEL]["_props"]["MaxResource"], 100);
        assert!(
            db["templates"]["handbook"]["Items"].as_array().expect("handbook").iter().any(|i| i["Id"] == super::GPU)
        );
        let start = &db["templates"]["profiles"]["Standard"]["bear"]["character"]["Hideout"]["Areas"];
        assert_eq!(start.as_array().map(Vec::len), Some(areas.len()));
        assert_eq!(db["templates"]["items"][super::BIG_STASH]["_props"]["Grids"][0]["_props"]["cellsV"], 88);
    }
}
