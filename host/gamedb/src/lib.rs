//! A deterministic generator of SPT-shaped game databases at any scale (`modhost gen-db`), for tests,
//! benchmarks and a new player's first `db.json`. Each holds the roubles, a rifle, the stash, and
//! `items` generated templates with a long tail of props; a handbook, globals with filler bot presets,
//! English locales with three strings per item, and a trader selling the rifle: the tables and sizes
//! the SPT client's boot sequence reads, so the benchmark mix meets a real database's shape. Beside
//! them, small and fixed in size, whatever else a client reads from the launcher to the end of a raid,
//! one module per phase (`boot.rs`, `menu.rs`, `raid.rs`), so the default root answers every route.
//!
//! The paths mirror SPT's database folder (a folder is an object, `<name>.json` a member `<name>`), as
//! `modhost import-spt-db` (`spt.rs`) writes a real one; what SPT reads from its configs, not its
//! database, is under `configs.<file>`.
//!
//! About 1.7 KB of document per item beside about 130 KB of fixed tables: 30 items ≈ 170 KB,
//! 3000 ≈ 5 MB, 10 000 ≈ 17 MB, 24 000 ≈ 41 MB.

#![warn(missing_docs)]
// Whole item templates are built with one `json!` each, deeper than the default macro limit.
#![recursion_limit = "256"]

mod boot;
pub mod flea;
pub mod hideout;
pub mod inventory;
mod mail;
mod menu;
mod raid;
mod repeatable;
mod shapes;
pub mod spt;
pub mod trade;

use serde_json::{Map, Value, json};

/// The roubles' template id.
pub const ROUBLES: &str = "5449016a4bdc2d6f028b456f";
/// The rifle the trader sells.
pub const RIFLE: &str = "5644bd2b4bdc2d3b4c8b4572";
/// The stash template (a 10x68 grid).
pub const STASH: &str = "5811ce572459770cba1a34ea";
/// The trader (Prapor).
pub const TRADER: &str = "54cb50c76803fa8b248b4571";

/// The id of generated item `n`: 24 hex digits, deterministic, distinct for distinct `n`.
pub fn hex_id(n: u64) -> String {
    // splitmix64 is a bijection on u64, so the first 64 bits already make ids distinct.
    let a = splitmix64(n);
    let b = splitmix64(a);
    format!("{a:016x}{:08x}", b >> 32)
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn item(n: u64) -> Value {
    let id = hex_id(n);
    json!({
        "_id": id,
        "_name": format!("bench_item_{n}"),
        "_parent": "5447e1d04bdc2dff2f8b4567",
        "_type": "Item",
        "_props": {
            "Name": format!("bench_item_{n}"),
            "ShortName": format!("bi{n}"),
            "Description": format!("A generated item, number {n}, for benchmarks and tests."),
            "Weight": format!("{}.{}", n % 40, n % 10).parse::<f64>().unwrap_or(0.0),
            "Width": 1 + n % 4,
            "Height": 1 + n % 3,
            "StackMaxSize": 1 + n % 60,
            "CreditsPrice": 100 + 7 * n,
            "Prefab": {"path": format!("assets/content/items/bench/item_{n}.bundle"), "rcid": ""},
            "UsePrefab": {"path": "", "rcid": ""},
            "ItemSound": "generic",
            "Rarity": "Common",
            "SpawnChance": 10,
            "BackgroundColor": "default",
            "LootExperience": 20,
            "ExamineExperience": 10,
            "HideEntrails": false,
            "RepairCost": 0,
            "RepairSpeed": 0,
            "ExtraSizeLeft": 0,
            "ExtraSizeRight": 0,
            "ExtraSizeUp": 0,
            "ExtraSizeDown": 0,
            "ExtraSizeForceAdd": false,
            "MergesWithChildren": false,
            "CanSellOnRagfair": true,
            "CanRequireOnRagfair": true,
            "ConflictingItems": [],
            "Unlootable": false,
            "UnlootableFromSlot": "FirstPrimaryWeapon",
            "UnlootableFromSide": [],
            "AnimationVariantsNumber": 0,
            "DiscardingBlock": false,
            "DropSoundType": "None",
            "RagFairCommissionModifier": 1,
            "IsAlwaysAvailableForInsurance": false,
            "DiscardLimit": -1,
            "Foldable": n.is_multiple_of(7),
            "MaxResource": 0,
            "Resource": 0,
            "DogTagQualities": false,
            "Grids": [],
            "Slots": [],
            "CanPutIntoDuringTheRaid": true,
            "CantRemoveFromSlotsDuringRaid": [],
            "KeyIds": [],
            "IsUnremovable": false,
            "IsUngivable": false,
            "IsSpecialSlotOnly": false,
            "QuestItem": false,
            "QuestStashMaxCount": 0,
            "InsuranceDisabled": false,
            "ExaminedByDefault": true,
            "NotShownInSlot": false,
            "LootExperienceModifier": 0
        }
    })
}

/// The database with `items` generated templates, as a `serde_json::Value`.
pub fn database(items: u64) -> Value {
    let mut templates = serde_json::Map::new();
    templates.insert(
        ROUBLES.into(),
        json!({
            "_id": ROUBLES, "_name": "item_money_rouble", "_parent": "543be5dd4bdc2dd4348b456a", "_type": "Item",
            "_props": {"Name": "Roubles", "ShortName": "RUB", "Width": 1, "Height": 1, "StackMaxSize": 500000}
        }),
    );
    templates.insert(
        RIFLE.into(),
        json!({
            "_id": RIFLE, "_name": "weapon_izhmash_ak74", "_parent": "5447b5f14bdc2d61278b4567", "_type": "Item",
            "_props": {"Name": "AK-74", "ShortName": "AK-74", "Width": 4, "Height": 2, "StackMaxSize": 1}
        }),
    );
    templates.insert(
        STASH.into(),
        json!({
            "_id": STASH, "_name": "Standard stash 10x28", "_parent": "566abbb64bdc2d144c8b457d", "_type": "Item",
            "_props": {"Name": "Stash", "Width": 1, "Height": 1,
                       "Grids": [{"_name": "hideout", "_props": {"cellsH": 10, "cellsV": 68}}]}
        }),
    );
    let mut handbook = vec![json!({"Id": RIFLE, "ParentId": "5b5f78dc86f77409407a7f8e", "Price": 22000})];
    let mut locale = serde_json::Map::new();
    for (id, name, short, description) in [
        (ROUBLES, "Roubles", "RUB", "Russian rouble."),
        (RIFLE, "AK-74 5.45x39 assault rifle", "AK-74", "The rifle every trader test buys."),
        (STASH, "Stash", "Stash", "Where a player keeps what they own."),
    ] {
        locale.insert(format!("{id} Name"), name.into());
        locale.insert(format!("{id} ShortName"), short.into());
        locale.insert(format!("{id} Description"), description.into());
    }
    for n in 0..items {
        let id = hex_id(n);
        templates.insert(id.clone(), item(n));
        handbook.push(json!({"Id": id, "ParentId": "5b5f78dc86f77409407a7f8e", "Price": 100 + 7 * n}));
        locale.insert(format!("{id} Name"), format!("Bench item {n}").into());
        locale.insert(format!("{id} ShortName"), format!("bi{n}").into());
        locale.insert(format!("{id} Description"), format!("The generated item number {n}.").into());
    }
    let bot_presets: Vec<Value> = (0..items / 4)
        .map(|n| json!({"_id": hex_id(1 << 40 | n), "Role": "assault", "BotDifficulty": "normal", "VerticalRotationSpeed": 1.0, "HorizontalRotationSpeed": 1.0}))
        .collect();
    let mut db = json!({
        "templates": {
            "items": templates,
            "handbook": {"Categories": [], "Items": handbook},
            "quests": {},
            "achievements": []
        },
        "globals": {"config": {"content": "generated", "RagFair": {"enabled": true}}, "bot_presets": bot_presets},
        "locales": {
            "global": {"en": locale},
            "menu": {"en": {"menu": {"Play": "Play"}}},
            "languages": {"en": "English"}
        },
        "traders": {
            TRADER: {
                "base": {"_id": TRADER, "nickname": "Prapor", "currency": "RUB"},
                "assort": {
                    "items": [{"_id": "6000000000000000000000a1", "_tpl": RIFLE, "parentId": "hideout", "slotId": "hideout",
                               "upd": {"StackObjectsCount": 100}}],
                    "barter_scheme": {"6000000000000000000000a1": [[{"count": 25000, "_tpl": ROUBLES}]]},
                    "loyal_level_items": {"6000000000000000000000a1": 1}
                }
            }
        },
        "hideout": {"areas": []},
        "locations": {},
        "settings": {"config": {}}
    });
    if let Some(db) = db.as_object_mut() {
        boot::add(db);
        menu::add(db);
        raid::add(db);
        trade::add(db);
        mail::add(db);
        flea::add(db);
        inventory::add(db);
        hideout::add(db);
        repeatable::add(db);
        shapes::add(db);
    }
    db
}

/// Puts `value` at `path` in `db`, creating the objects on the way (a member that is not an object is
/// replaced by one): how each part of the generator adds its tables beside the others'.
pub(crate) fn put(db: &mut Map<String, Value>, path: &[&str], value: Value) {
    match path {
        [] => {}
        [last] => {
            db.insert((*last).to_owned(), value);
        }
        [first, rest @ ..] => {
            let slot = db.entry(*first).or_insert(Value::Null);
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            if let Value::Object(inner) = slot {
                put(inner, rest, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_24_hex_and_distinct() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(hex_id).collect();
        assert_eq!(ids.len(), 10_000);
        assert!(ids.iter().all(|id| id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())));
    }

    #[test]
    fn size_grows_with_items_as_documented() {
        let small = database(30).to_string().len();
        let mid = database(3000).to_string().len();
        // The phases' tables are fixed in size (about 120 KB) and stay small beside the items, so a new
        // root's default db boots at once; each item adds about 1.7 KB.
        assert!((100_000..256_000).contains(&small), "{small}");
        assert!((3_500_000..7_000_000).contains(&mid), "{mid}");
        let per_item = (mid - small) / 2970;
        assert!((1_200..2_400).contains(&per_item), "{per_item} bytes an item");
        let db = database(3);
        assert_eq!(db["templates"]["items"][hex_id(2)]["_props"]["Width"], 3);
        assert!(db["locales"]["global"]["en"][format!("{} Name", hex_id(0))].is_string());
    }
}
