//! What selling, healing and repairing read (the emulator's `items/selling.rs`, `items/savage.rs`,
//! `health/`, `repair/`), small and fixed in size:
//!
//! - the category templates (`_type` `Node`) up the rifle's and the generated items' `_parent`
//!   chains, so a trader's `items_buy` categories name them (Prapor buys weapons, Fence everything);
//! - dollars and euros, with handbook prices (143 and 160 roubles);
//! - a med (Salewa: `MaxHpResource` 400, removes bleeds at `effects_damage` costs), a single-use food
//!   (crackers: `MaxResource` 1), a multi-use drink (water: `MaxResource` 60), a weapon repair kit
//!   (`MaxRepairResource` 1000, for weapons) and an armored vest (Aramid, class 3), each with a
//!   handbook price; the rifle gains what repairs read (`MaxDurability`, `RepairCost`, degradation);
//! - Therapist (a medic, roubles, buys meds and food; sells the med, the foods, the kit and the vest
//!   as offers `600000000000000000000001` to `…05`), Peacekeeper (dollars: buys weapons, repairs at quality
//!   0.5 in dollars, sells the rifle for 20 dollars at most 3 a resupply) and Fence (buys everything);
//! - `globals.config`: `Health.HealPrice` (`TrialLevels` 0, so a new player pays), `Health.Effects`'
//!   `RemovePrice`s, `RepairSettings`, `ArmorMaterials.Aramid`, Intellect's `RepairPointsCostReduction`;
//!   `configs.repair` and `configs.health.save` as SPT's files have them.

use crate::{RIFLE, TRADER, put};
use serde_json::{Map, Value, json};

/// Dollars and euros.
pub const DOLLARS: &str = "5696686a4bdc2da3298b456a";
/// Euros.
pub const EUROS: &str = "569668774bdc2da2298b4568";
/// Salewa, a med.
pub const MEDKIT: &str = "544fb45d4bdc2dee738b4568";
/// Crackers, single-use food.
pub const CRACKERS: &str = "5448ff904bdc2d6f028b456e";
/// A bottle of water, a multi-use drink.
pub const WATER: &str = "5448fee04bdc2dbc018b4567";
/// A weapon repair kit.
pub const REPAIR_KIT: &str = "5bc9c29cd4351e003562b8a3";
/// An armored vest.
pub const VEST: &str = "5c0e5edb86f77461f55ed1f7";
/// Therapist, a medic.
pub const THERAPIST: &str = "54cb57776803fa99248b456e";
/// Peacekeeper, a trader in dollars.
pub const PEACEKEEPER: &str = "5935c25fb3acc3127c3d8cd9";
/// Fence.
pub const FENCE: &str = "579dc571d53a0658a154fbec";
/// Peacekeeper's rifle offer (20 dollars, at most 3 a resupply).
pub const DOLLAR_OFFER: &str = "6000000000000000000000c1";

/// The root category and the categories below it the templates here use: (id, name, parent).
const NODES: [(&str, &str, &str); 8] = [
    ("54009119af1c881c07000029", "Item", ""),
    ("5422acb9af1c889c16000029", "Weapon", "54009119af1c881c07000029"),
    ("5447b5f14bdc2d61278b4567", "AssaultRifle", "5422acb9af1c889c16000029"),
    ("5447e1d04bdc2dff2f8b4567", "Knife", "54009119af1c881c07000029"),
    ("543be5664bdc2dd4348b4569", "Meds", "54009119af1c881c07000029"),
    ("5448f39d4bdc2d0a728b4568", "Medkit", "543be5664bdc2dd4348b4569"),
    ("543be6674bdc2df1348b4569", "FoodAndDrink", "54009119af1c881c07000029"),
    ("5448e54d4bdc2dcb718b4568", "Armor", "54009119af1c881c07000029"),
];

/// Adds the tables above to `db`.
pub(crate) fn add(db: &mut Map<String, Value>) {
    for (id, name, parent) in NODES {
        add_template(db, id, json!({"_id": id, "_name": name, "_parent": parent, "_type": "Node", "_props": {}}));
    }
    let item = |id: &str, name: &str, parent: &str, props: Value| json!({"_id": id, "_name": name, "_parent": parent, "_type": "Item", "_props": props});
    let money = |id: &str, name: &str| {
        item(
            id,
            name,
            "543be5dd4bdc2dd4348b456a",
            json!({"Name": name, "Width": 1, "Height": 1, "StackMaxSize": 50_000}),
        )
    };
    add_template(db, DOLLARS, money(DOLLARS, "Dollars"));
    add_template(db, EUROS, money(EUROS, "Euros"));
    add_template(
        db,
        MEDKIT,
        item(
            MEDKIT,
            "salewa",
            "5448f39d4bdc2d0a728b4568",
            json!({
                "Name": "Salewa", "Width": 1, "Height": 2, "StackMaxSize": 1, "MaxHpResource": 400, "hpResourceRate": 85,
                "effects_health": {},
                "effects_damage": {"LightBleeding": {"delay": 0, "duration": 0, "fadeOut": 0, "cost": 45},
                                   "HeavyBleeding": {"delay": 0, "duration": 0, "fadeOut": 0, "cost": 175}},
            }),
        ),
    );
    add_template(
        db,
        CRACKERS,
        item(
            CRACKERS,
            "crackers",
            "543be6674bdc2df1348b4569",
            json!({
                "Name": "Army crackers", "Width": 1, "Height": 1, "StackMaxSize": 1, "MaxResource": 1, "foodUseTime": 5,
                "effects_health": {"Energy": {"value": 15}, "Hydration": {"value": -5}}, "effects_damage": {},
            }),
        ),
    );
    add_template(
        db,
        WATER,
        item(
            WATER,
            "water",
            "543be6674bdc2df1348b4569",
            json!({
                "Name": "Water", "Width": 1, "Height": 2, "StackMaxSize": 1, "MaxResource": 60, "foodUseTime": 10,
                "effects_health": {"Hydration": {"value": 60}}, "effects_damage": {},
            }),
        ),
    );
    add_template(
        db,
        REPAIR_KIT,
        item(
            REPAIR_KIT,
            "repair_kit_weapon",
            "616eb7aea207f41933308f46",
            json!({
                "Name": "Weapon repair kit", "Width": 3, "Height": 2, "StackMaxSize": 1, "MaxRepairResource": 1000,
                "TargetItemFilter": ["5422acb9af1c889c16000029"],
            }),
        ),
    );
    add_template(
        db,
        VEST,
        item(
            VEST,
            "armor_zhuk",
            "5448e54d4bdc2dcb718b4568",
            json!({
                "Name": "Zhuk-3", "Width": 3, "Height": 3, "StackMaxSize": 1, "MaxDurability": 50, "Durability": 50,
                "ArmorMaterial": "Aramid", "ArmorClass": 3, "RepairCost": 80,
            }),
        ),
    );
    // The rifle: what a repair reads.
    if let Some(Value::Object(props)) = db
        .get_mut("templates")
        .and_then(|t| t.get_mut("items"))
        .and_then(|i| i.get_mut(RIFLE))
        .and_then(|r| r.get_mut("_props"))
    {
        for (name, value) in [
            ("MaxDurability", json!(100)),
            ("Durability", json!(100)),
            ("RepairCost", json!(50)),
            ("MinRepairDegradation", json!(0.0)),
            ("MaxRepairDegradation", json!(0.01)),
            ("MinRepairKitDegradation", json!(0.0)),
            ("MaxRepairKitDegradation", json!(0.005)),
        ] {
            props.entry(name).or_insert(value);
        }
    }
    handbook(db);
    traders(db);
    globals(db);
    put(db, &["configs", "repair", "priceMultiplier"], json!(1));
    put(db, &["configs", "repair", "applyRandomizeDurabilityLoss"], json!(true));
    put(db, &["configs", "health", "save"], json!({"health": true, "effects": true}));
}

/// Adds template `id` unless the database already has it.
pub(crate) fn add_template(db: &mut Map<String, Value>, id: &str, template: Value) {
    let exists = db.get("templates").and_then(|t| t.get("items")).and_then(|i| i.get(id)).is_some();
    if !exists {
        put(db, &["templates", "items", id], template);
    }
}

/// Handbook prices of the new templates.
fn handbook(db: &mut Map<String, Value>) {
    for (id, price) in [
        (DOLLARS, 143),
        (EUROS, 160),
        (MEDKIT, 20_000),
        (CRACKERS, 3_000),
        (WATER, 9_000),
        (REPAIR_KIT, 60_000),
        (VEST, 30_000),
    ] {
        add_price(db, id, price);
    }
}

/// Lists template `id` in the handbook at `price` roubles unless it is listed.
pub(crate) fn add_price(db: &mut Map<String, Value>, id: &str, price: u64) {
    let Some(Value::Array(items)) =
        db.get_mut("templates").and_then(|t| t.get_mut("handbook")).and_then(|h| h.get_mut("Items"))
    else {
        return;
    };
    if !items.iter().any(|i| i["Id"] == id) {
        items.push(json!({"Id": id, "ParentId": "5b47574386f77428ca22b33e", "Price": price}));
    }
}

/// A trader's base with every member SPT's has, from Prapor's.
fn base(db: &Map<String, Value>, id: &str, nickname: &str, currency: &str, buys: &[&str], coef: u32) -> Value {
    let mut base = db["traders"][TRADER]["base"].clone();
    base["_id"] = json!(id);
    base["nickname"] = json!(nickname);
    base["currency"] = json!(currency);
    base["medic"] = json!(false);
    base["items_buy"] = json!({"category": buys, "id_list": []});
    let loyalty = |level: u32, sales: u64| {
        json!({"buy_price_coef": coef, "exchange_price_coef": 0, "heal_price_coef": 20, "insurance_price_coef": 20,
               "minLevel": level * 10 - 9, "minSalesSum": sales, "minStanding": 0, "repair_price_coef": 10})
    };
    base["loyaltyLevels"] = json!([loyalty(1, 0), loyalty(2, 1_000_000), loyalty(3, 2_000_000), loyalty(4, 3_000_000)]);
    base
}

fn traders(db: &mut Map<String, Value>) {
    if db.get("traders").and_then(|t| t.get(TRADER)).and_then(|t| t.get("base")).is_none() {
        return;
    }
    let mut therapist =
        base(db, THERAPIST, "Therapist", "RUB", &["543be5664bdc2dd4348b4569", "543be6674bdc2df1348b4569"], 37);
    therapist["medic"] = json!(true);
    therapist["repair"]["availability"] = json!(false);
    let mut peacekeeper = base(db, PEACEKEEPER, "Peacekeeper", "USD", &["5422acb9af1c889c16000029"], 40);
    peacekeeper["repair"] = json!({"availability": true, "currency": DOLLARS, "currency_coefficient": 143,
                                   "excluded_category": [], "excluded_id_list": [], "quality": 0.5});
    let mut fence = base(db, FENCE, "Fence", "RUB", &["54009119af1c881c07000029"], 60);
    fence["repair"]["availability"] = json!(false);
    let empty = || json!({"items": [], "barter_scheme": {}, "loyal_level_items": {}});
    // Therapist sells what the health and repair tests use, for roubles.
    let mut sold = json!({"items": [], "barter_scheme": {}, "loyal_level_items": {}});
    for (n, (tpl, price)) in [(MEDKIT, 15_000), (CRACKERS, 2_000), (WATER, 5_000), (REPAIR_KIT, 40_000), (VEST, 25_000)]
        .into_iter()
        .enumerate()
    {
        let offer = format!("60000000000000000000000{}", n + 1);
        sold["items"].as_array_mut().expect("a list").push(json!({"_id": offer, "_tpl": tpl, "parentId": "hideout",
            "slotId": "hideout", "upd": {"UnlimitedCount": true, "StackObjectsCount": 999_999}}));
        sold["barter_scheme"][&offer] = json!([[{"count": price, "_tpl": crate::ROUBLES}]]);
        sold["loyal_level_items"][&offer] = json!(1);
    }
    put(db, &["traders", THERAPIST], json!({"base": therapist, "assort": sold}));
    let assort = json!({
        "items": [{"_id": DOLLAR_OFFER, "_tpl": RIFLE, "parentId": "hideout", "slotId": "hideout",
                   "upd": {"StackObjectsCount": 50, "BuyRestrictionMax": 3, "BuyRestrictionCurrent": 0}}],
        "barter_scheme": {DOLLAR_OFFER: [[{"count": 20, "_tpl": DOLLARS}]]},
        "loyal_level_items": {DOLLAR_OFFER: 1},
    });
    put(db, &["traders", PEACEKEEPER], json!({"base": peacekeeper, "assort": assort}));
    put(db, &["traders", FENCE], json!({"base": fence, "assort": empty()}));
}

fn globals(db: &mut Map<String, Value>) {
    let effect = |price: u32| json!({"RemovePrice": price, "RemovedAfterDeath": false});
    put(
        db,
        &["globals", "config", "Health", "HealPrice"],
        json!({"EnergyPointPrice": 0, "HealthPointPrice": 30, "HydrationPointPrice": 0, "TrialLevels": 0, "TrialRaids": 30}),
    );
    put(db, &["globals", "config", "Health", "Effects", "Fracture"], effect(1000));
    put(db, &["globals", "config", "Health", "Effects", "LightBleeding"], effect(400));
    put(db, &["globals", "config", "Health", "Effects", "HeavyBleeding"], effect(1200));
    put(
        db,
        &["globals", "config", "RepairSettings"],
        json!({"armorClassDivisor": 6, "durabilityPointCostArmor": 0.335, "durabilityPointCostGuns": 0.5,
               "MinimumLevelToApplyBuff": 10}),
    );
    put(
        db,
        &["globals", "config", "ArmorMaterials", "Aramid"],
        json!({"Destructibility": 0.1875, "ExplosionDestructibility": 0.15, "MaxRepairDegradation": 0.07,
               "MaxRepairKitDegradation": 0.065, "MinRepairDegradation": 0.03, "MinRepairKitDegradation": 0.025}),
    );
    put(db, &["globals", "config", "SkillsSettings", "Intellect", "RepairPointsCostReduction"], json!(0.004));
    // SPT always writes the skill's ratios (the shape check, `shapes.rs`, reads Intellect as a whole once it exists).
    put(db, &["globals", "config", "SkillsSettings", "Intellect", "DependentSkillRatios"], json!([]));
}

#[cfg(test)]
mod tests {
    use crate::database;

    #[test]
    fn the_trade_tables_are_there() {
        let db = database(3);
        assert_eq!(db["traders"][super::THERAPIST]["base"]["medic"], true);
        assert_eq!(db["traders"][super::PEACEKEEPER]["base"]["currency"], "USD");
        assert_eq!(db["templates"]["items"][super::MEDKIT]["_props"]["MaxHpResource"], 400);
        assert_eq!(db["templates"]["items"][crate::RIFLE]["_props"]["MaxDurability"], 100);
        assert_eq!(db["templates"]["items"]["5447b5f14bdc2d61278b4567"]["_parent"], "5422acb9af1c889c16000029");
        assert!(db["globals"]["config"]["Health"]["HealPrice"]["HealthPointPrice"].is_number());
    }
}
