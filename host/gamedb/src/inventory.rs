//! What the inventory actions read from the database, generated small in SPT's shape, each only when
//! the database lacks it (an imported SPT database has them all):
//!
//! - the root containers' templates a new profile names: the equipment ([`EQUIPMENT`], SPT's slots,
//!   with filters on the weapon, pockets and secure container slots) and the sorting table
//!   ([`SORTING_TABLE`], a 10x45 `hideout` grid, as SPT's `GetSortingTableSlotMap`);
//! - a map item ([`MAP`], under SPT's `Map` category) for the map markers;
//! - a random loot container ([`LOOT_BOX`]) and its rewards in `configs.inventory.randomLootContainers`
//!   (SPT's `configs/inventory.json` shape), drawing from the rifle and the first generated items;
//! - two suits in `templates.customization` (an upper body, [`SUIT_UPPER`], and legs, [`SUIT_LOWER`])
//!   and the trader's offers of them in `traders.<id>.suits`: one the new player may buy
//!   ([`SUIT_OFFER`], for [`SUIT_PRICE`] roubles), one from level 10 ([`SUIT_OFFER_LOCKED`]).

use crate::{RIFLE, ROUBLES, TRADER, hex_id, put};
use serde_json::{Map, Value, json};

/// The equipment's template (a profile's root container of slots).
pub const EQUIPMENT: &str = "55d7217a4bdc2d86028b456d";
/// The sorting table's template.
pub const SORTING_TABLE: &str = "602543c13fee350cd564d032";
/// A map item's template.
pub const MAP: &str = "5900b89686f7744e704a8747";
/// A random loot container's template.
pub const LOOT_BOX: &str = "634959225289190e5e773b3b";
/// How many rewards the loot box gives.
pub const LOOT_BOX_REWARDS: u64 = 3;
/// A suit for the upper body, and one for the legs.
pub const SUIT_UPPER: &str = "5d1f609d86f7744bca3f1689";
/// A suit for the legs.
pub const SUIT_LOWER: &str = "5d1f60ae86f7744bcc04998b";
/// The trader's offer of [`SUIT_UPPER`], open to a new player.
pub const SUIT_OFFER: &str = "5d1f65e586f7744bce0ef714";
/// The trader's offer of [`SUIT_LOWER`], from level 10.
pub const SUIT_OFFER_LOCKED: &str = "5d1f661686f7744bcb0adfb5";
/// What [`SUIT_OFFER`] costs, in roubles.
pub const SUIT_PRICE: u64 = 12_000;

/// The categories the equipment's slot filters name (the generated templates' direct parents).
const ASSAULT_RIFLE: &str = "5447b5f14bdc2d61278b4567";
const POCKETS_CATEGORY: &str = "557596e64bdc2dc2118b4571";
const SECURE_CATEGORY: &str = "5448bf274bdc2dfc2f8b456a";
/// SPT's `Item` root: a filter naming it takes anything.
const ITEM_ROOT: &str = "54009119af1c881c07000029";

/// Adds the inventory's tables to `db` (the whole document).
pub(crate) fn add(db: &mut Map<String, Value>) {
    let slot = |name: &str, filter: &str| {
        json!({"_name": name, "_id": format!("{name}-equipment-slot"), "_parent": EQUIPMENT, "_required": false,
               "_mergeSlotWithChildren": false, "_props": {"filters": [{"Filter": [filter], "ExcludedFilter": []}]}})
    };
    let mut slots: Vec<Value> = [
        "SecondPrimaryWeapon",
        "Holster",
        "Scabbard",
        "FaceCover",
        "Headwear",
        "Earpiece",
        "TacticalVest",
        "ArmorVest",
        "Eyewear",
        "ArmBand",
        "Backpack",
        "Dogtag",
    ]
    .iter()
    .map(|name| slot(name, ITEM_ROOT))
    .collect();
    slots.insert(0, slot("FirstPrimaryWeapon", ASSAULT_RIFLE));
    slots.push(slot("Pockets", POCKETS_CATEGORY));
    slots.push(slot("SecuredContainer", SECURE_CATEGORY));
    let grid = |name: &str, h: u32, v: u32| {
        json!({"_name": name, "_id": format!("{name}-sorting-grid"), "_parent": SORTING_TABLE,
               "_props": {"cellsH": h, "cellsV": v, "filters": [], "minCount": 0, "maxCount": 0, "maxWeight": 0}})
    };
    let templates = [
        (
            EQUIPMENT,
            "Default Inventory",
            "55d720f24bdc2d88028b456d",
            json!({"Width": 1, "Height": 1, "Grids": [], "Slots": slots}),
        ),
        (
            SORTING_TABLE,
            "Sorting table",
            "6050cac987d3f925bf016837",
            json!({"Width": 1, "Height": 1, "Grids": [grid("hideout", 10, 45)]}),
        ),
        (
            MAP,
            "item_map_factory",
            "567849dd4bdc2d150f8b456e",
            json!({"Width": 1, "Height": 1, "StackMaxSize": 1, "ExamineExperience": 4}),
        ),
        (
            LOOT_BOX,
            "random_loot_container_gift",
            "62f109593b54472778797866",
            json!({"Width": 1, "Height": 1, "StackMaxSize": 1, "ExamineExperience": 2}),
        ),
    ];
    for (id, name, parent, props) in templates {
        if !exists(db, &["templates", "items", id]) {
            put(
                db,
                &["templates", "items", id],
                json!({"_id": id, "_name": name, "_parent": parent, "_type": "Item", "_props": props}),
            );
        }
    }
    if !exists(db, &["configs", "inventory", "randomLootContainers", LOOT_BOX]) {
        let mut pool = Map::new();
        pool.insert(RIFLE.into(), json!(1));
        for n in 0..3 {
            pool.insert(hex_id(n), json!(2));
        }
        put(
            db,
            &["configs", "inventory", "randomLootContainers", LOOT_BOX],
            json!({"rewardCount": LOOT_BOX_REWARDS, "foundInRaid": true, "rewardTplPool": pool}),
        );
    }
    suits(db);
}

/// The two suits and the trader's offers of them.
fn suits(db: &mut Map<String, Value>) {
    let suit = |id: &str, parent: &str, props: Value| {
        let mut all = json!({"Name": id, "ShortName": id, "Description": "", "Side": ["Usec", "Bear"],
                             "AvailableAsDefault": false, "ProfileVersions": []});
        all.as_object_mut().expect("an object").extend(props.as_object().expect("an object").clone());
        json!({"_id": id, "_name": format!("suit_{id}"), "_parent": parent, "_type": "Item", "_props": all})
    };
    for (id, value) in [
        (
            SUIT_UPPER,
            suit(
                SUIT_UPPER,
                "5cd944ca1388ce03a44dc2a4",
                json!({"Body": "5cc0858d14c02e000c6bea66", "Hands": "5cc2e68f14c02e28b47de290"}),
            ),
        ),
        (SUIT_LOWER, suit(SUIT_LOWER, "5cd944d01388ce000a659df9", json!({"Feet": "5cc085bb14c02e000e67a5c5"}))),
    ] {
        if !exists(db, &["templates", "customization", id]) {
            put(db, &["templates", "customization", id], value);
        }
    }
    if exists(db, &["traders", TRADER, "suits"]) {
        return;
    }
    let offer = |id: &str, suite: &str, level: u32, price: u64| {
        json!({"_id": id, "tid": TRADER, "suiteId": suite, "isActive": true, "isHiddenInPVE": false,
               "externalObtain": false, "internalObtain": true,
               "requirements": {"loyaltyLevel": 1, "profileLevel": level, "standing": 0, "skillRequirements": [],
                                "questRequirements": [], "achievementRequirements": [],
                                "itemRequirements": [{"id": null, "count": price, "_tpl": ROUBLES, "onlyFunctional": true,
                                                      "type": "ItemRequirement"}],
                                "requiredTid": TRADER}})
    };
    put(
        db,
        &["traders", TRADER, "suits"],
        json!([offer(SUIT_OFFER, SUIT_UPPER, 1, SUIT_PRICE), offer(SUIT_OFFER_LOCKED, SUIT_LOWER, 10, 30_000)]),
    );
}

/// Whether `db` has a value at `path`.
fn exists(db: &Map<String, Value>, path: &[&str]) -> bool {
    let Some((first, rest)) = path.split_first() else { return true };
    let mut node = match db.get(*first) {
        Some(node) => node,
        None => return false,
    };
    for name in rest {
        match node.get(*name) {
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}
