//! The members SPT's models always write, filled into the generated tables after every phase added
//! its own (`tests/tests/host/game_shapes.rs` checks each route's answer against SPT's models, read
//! into `tests/data/spt-shapes.json`). Each value is what SPT's own database holds there, or the
//! empty value of the model's type where SPT's data varies.
//!
//! Done as one pass over the finished document, not in each generator, so a table another module
//! adds later (a new map, quest or item) gets the same members without knowing this list; and an
//! existing value is never replaced.

use serde_json::{Map, Value, json};

/// Fills in what SPT's models always write and the generated tables leave out.
pub(crate) fn add(db: &mut Map<String, Value>) {
    if let Some(config) = db.get_mut("globals").and_then(|g| g.get_mut("config")).and_then(Value::as_object_mut) {
        // SPT's `Config.content` is an object (`Content`: `ip`, `port`, `root`); a string here is a
        // deserializer error in the client.
        if !config.get("content").is_some_and(Value::is_object) {
            config.insert("content".into(), json!({"ip": "", "port": 666, "root": ""}));
        }
        fill(config, "ArenaEftTransferSettings", || {
            json!({
                "ArenaManagerReputationTaxMultiplier": 0.04, "CharismaTaxMultiplier": 0.005,
                "CreditPriceTaxMultiplier": 0.05, "RubTaxMultiplier": 0.12,
                "TransferLimitsByGameEdition": {"default": 1_500_000, "edge_of_darkness": 2_500_000, "unheard_edition": 2_500_000},
                "TransferLimitsSettings": {"ResetInterval": 86400}
            })
        });
        fill(config, "EventType", || json!(["None"]));
        fill(config, "Mastering", || json!([]));
        fill(config, "RestrictionsInRaid", || json!([]));
    }
    let templates = db.get_mut("templates").and_then(Value::as_object_mut);
    if let Some(templates) = templates {
        // BSG's items carry `[]` for no effects (SPT's `ArrayToObjectFactoryConverter`).
        for item in objects(templates.get_mut("items")) {
            if let Some(props) = item.get_mut("_props").and_then(Value::as_object_mut) {
                fill(props, "effects_health", || json!([]));
                fill(props, "effects_damage", || json!([]));
            }
        }
        for quest in objects(templates.get_mut("quests")) {
            fill(quest, "changeCost", || json!([]));
            fill(quest, "changeStandingCost", || json!(0));
        }
    }
    let profiles = db.get_mut("templates").and_then(|t| t.get_mut("profiles"));
    for edition in objects(profiles) {
        for side in ["bear", "usec"] {
            if let Some(character) =
                edition.get_mut(side).and_then(|s| s.get_mut("character")).and_then(Value::as_object_mut)
            {
                character_members(character);
            }
        }
    }
    // Every generated bot and the player's scav start from `bots.base`.
    if let Some(base) = db.get_mut("bots").and_then(|b| b.get_mut("base")).and_then(Value::as_object_mut) {
        profile_members(base);
    }
    for location in objects(db.get_mut("locations")) {
        let Some(base) = location.get_mut("base").and_then(Value::as_object_mut) else { continue };
        // SPT writes both spellings of the raid's time limit; the client reads the snake-case one.
        let minutes = base.get("EscapeTimeLimit").cloned().unwrap_or(json!(40));
        fill(base, "escape_time_limit", || minutes);
        for key in ["exits", "secretExits"] {
            for exit in base.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(exit) = exit.as_object_mut() {
                    let count = exit.get("Count").cloned().unwrap_or(json!(0));
                    fill(exit, "CountPve", || count);
                }
            }
        }
    }
}

/// The item that is the hideout's customization stash (SPT's `HIDEOUTAREACONTAINER_CUSTOMIZATION`).
const CUSTOMIZATION_STASH: &str = "673c7b00cbf4b984b5099181";
/// Its id in the start characters (their other roots are `tpl…01` to `tpl…07`, `boot.rs`).
const CUSTOMIZATION_STASH_ID: &str = "tpl000000000000000000008";

/// A start character's members SPT's `PmcData` always writes, with the values of SPT's own
/// `templates/profiles.json` (null where SPT's is null: `[JsonIgnore(Condition = Never)]` writes it).
fn character_members(character: &mut Map<String, Value>) {
    if let Some(inventory) = character.get_mut("Inventory").and_then(Value::as_object_mut)
        && !inventory.contains_key("hideoutCustomizationStashId")
    {
        // SPT's `CreateProfileService` adds the container when the profile lacks it; the client
        // files the hideout's customization under it.
        inventory.insert("hideoutCustomizationStashId".into(), json!(CUSTOMIZATION_STASH_ID));
        if let Some(items) = inventory.get_mut("items").and_then(Value::as_array_mut) {
            items.push(json!({"_id": CUSTOMIZATION_STASH_ID, "_tpl": CUSTOMIZATION_STASH}));
        }
    }
    profile_members(character);
}

/// The members SPT's `PmcData` (a PMC's and a scav's profile, and a bot's `BotBase`) always writes.
fn profile_members(character: &mut Map<String, Value>) {
    fill(character, "CheckedChambers", || json!([]));
    if let Some(info) = character.get_mut("Info").and_then(Value::as_object_mut) {
        for key in ["lastCompletedWipe", "lastCompletedEvent", "lastWipeTimestamp"] {
            fill(info, key, || Value::Null);
        }
    }
    if let Some(hideout) = character.get_mut("Hideout").and_then(Value::as_object_mut) {
        fill(
            hideout,
            "HideoutCounters",
            || json!({"fuelCounter": 0, "airFilterCounter": 0, "waterFilterCounter": 0, "craftingTimeCounter": 0}),
        );
    }
    if let Some(eft) = character.get_mut("Stats").and_then(|s| s.get_mut("Eft")).and_then(Value::as_object_mut) {
        fill(eft, "Aggressor", || Value::Null);
        fill(eft, "LastPlayerState", || Value::Null);
        fill(eft, "CarriedQuestItems", || json!([]));
        fill(eft, "DroppedItems", || json!([]));
        fill(eft, "FoundInRaidItems", || json!([]));
        fill(eft, "Victims", || json!([]));
        fill(eft, "SessionCounters", || json!({"Items": []}));
        fill(eft, "DamageHistory", || json!({}));
        if let Some(history) = eft.get_mut("DamageHistory").and_then(Value::as_object_mut) {
            // `BodyParts` null is written `[]` (SPT's `ArrayToObjectFactoryConverter`), as its data has it.
            fill(history, "LethalDamagePart", || json!("Head"));
            fill(history, "LethalDamage", || Value::Null);
            fill(history, "BodyParts", || json!([]));
        }
        fill(eft, "ExperienceBonusMult", || json!(0));
        fill(eft, "SessionExperienceMult", || json!(0));
        fill(eft, "TotalSessionExperience", || json!(0));
        fill(eft, "LastSessionDate", || json!(0));
        fill(eft, "SurvivorClass", || json!("Unknown"));
    }
}

/// Inserts `key` when it is absent.
fn fill(object: &mut Map<String, Value>, key: &str, value: impl FnOnce() -> Value) {
    if !object.contains_key(key) {
        object.insert(key.into(), value());
    }
}

/// The object values of the object `table` (none when it is absent or not an object).
fn objects(table: Option<&mut Value>) -> impl Iterator<Item = &mut Map<String, Value>> {
    table.and_then(Value::as_object_mut).into_iter().flat_map(|t| t.values_mut()).filter_map(Value::as_object_mut)
}
