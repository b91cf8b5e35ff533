//! Bots: their difficulty settings (bare, from `bots.types.<type>.difficulty.<level>` and `bots.core`)
//! and their generation (`/client/game/bot/generate`), from `bots.base` and `bots.types.<type>`.
//!
//! A generated bot is `bots.base` with its own ids, a name from the type's `firstName`/`lastName`, a
//! level in the type's range, health from its `health.BodyParts`, and an inventory: one item for each
//! equipment slot whose pool (`inventory.equipment.<slot>`) is not empty and whose chance
//! (`chances.equipment.<slot>`, 100 when absent) comes up, then loose loot drawn from
//! `inventory.items.Pockets` (how many from `generation.items.looseLoot.weights`) into the pockets'
//! grids. No weapon mods, ammo or other containers' loot: what a bot carries is small, and every item
//! it carries is recorded as issued, so a player may take it out of the raid. The player's scav is
//! built the same way (`scav.rs`).

use super::loot::Rng;
use crate::clock;
use crate::ids::new_id;
use crate::templates::Templates;
use modhost_sdk::db;
use serde_json::{Map, Value, json};

/// SPT's PMC roles and the bot type each is generated from.
pub(crate) fn type_of(role: &str) -> String {
    match role.to_ascii_lowercase().as_str() {
        "pmcbear" => "bear".to_owned(),
        "pmcusec" => "usec".to_owned(),
        other => other.chars().filter(|c| c.is_ascii_alphanumeric()).take(48).collect(),
    }
}

/// The bot type `role` is generated from: its own when the db has it, else `assault` (as SPT falls back).
pub(crate) fn existing_type(role: &str) -> String {
    let wanted = type_of(role);
    if !wanted.is_empty() && db::exists(&db::path(&["bots", "types", &wanted])) { wanted } else { "assault".to_owned() }
}

/// The difficulty level a request names, as SPT maps it (`medium` is `normal`); one the type lacks is
/// `normal`.
pub(crate) fn level_of(bot_type: &str, wanted: &str) -> String {
    let wanted = match wanted.to_ascii_lowercase().as_str() {
        "medium" | "asonline" | "" => "normal".to_owned(),
        other => other.chars().filter(|c| c.is_ascii_alphanumeric()).take(16).collect(),
    };
    if db::exists(&db::path(&["bots", "types", bot_type, "difficulty", &wanted])) {
        wanted
    } else {
        "normal".to_owned()
    }
}

/// The weighted table `{key: weight}` at `table`, drawn once.
fn draw_key(table: &Value, rng: &mut Rng) -> Option<String> {
    let entries: Vec<(&String, f64)> =
        table.as_object()?.iter().take(4096).map(|(k, w)| (k, w.as_f64().unwrap_or(0.0))).collect();
    let weights: Vec<f64> = entries.iter().map(|(_, w)| *w).collect();
    rng.weighted(&weights).map(|i| entries[i].0.clone())
}

/// A bot's or the scav's inventory items: the roots (equipment, stash, quest and sorting containers),
/// the equipment drawn from the type's pools, and loose loot in the pockets. Answers the items and the
/// `Inventory` members naming the roots.
pub(crate) fn inventory(kind: &Value, rng: &mut Rng, templates: &mut Templates) -> (Vec<Value>, Map<String, Value>) {
    let (equipment, stash, quest_raid, quest_stash, sorting) = (new_id(), new_id(), new_id(), new_id(), new_id());
    // SPT's `BotInventoryGenerator` gives every bot the hideout's customization container too: its
    // `Inventory.hideoutCustomizationStashId` is a member SPT's `BotBaseInventory` always writes.
    let customization = new_id();
    let mut items = vec![
        json!({"_id": equipment, "_tpl": "55d7217a4bdc2d86028b456d"}),
        json!({"_id": stash, "_tpl": "566abbc34bdc2d92178b4576"}),
        json!({"_id": quest_raid, "_tpl": "5963866286f7747bf429b572"}),
        json!({"_id": quest_stash, "_tpl": "5963866b86f7747bfa6d1e0c"}),
        json!({"_id": sorting, "_tpl": "602543c13fee350cd564d032"}),
        json!({"_id": customization, "_tpl": "673c7b00cbf4b984b5099181"}),
    ];
    let mut pockets = None;
    if let Some(slots) = kind["inventory"]["equipment"].as_object() {
        for (slot, pool) in slots.iter().take(32) {
            let chance = kind["chances"]["equipment"][slot].as_f64().unwrap_or(100.0);
            if rng.unit() * 100.0 >= chance {
                continue;
            }
            let Some(tpl) = draw_key(pool, rng) else { continue };
            if templates.props(&tpl).is_none() {
                continue;
            }
            let id = new_id();
            if slot == "Pockets" {
                pockets = Some((id.clone(), tpl.clone()));
            }
            items.push(json!({"_id": id, "_tpl": tpl, "parentId": equipment, "slotId": slot,
                              "upd": {"StackObjectsCount": 1}}));
        }
    }
    if let Some((pockets, pockets_tpl)) = pockets {
        let loose = draw_key(&kind["generation"]["items"]["looseLoot"]["weights"], rng)
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
            .min(4);
        for n in 0..loose {
            let grid = format!("pocket{}", n + 1);
            let Some((columns, rows)) = templates.grid(&pockets_tpl, &grid) else { break };
            let Some(tpl) = draw_key(&kind["inventory"]["items"]["Pockets"], rng) else { break };
            let (w, h) = templates.footprint(&tpl, false);
            if templates.props(&tpl).is_none() || w > columns || h > rows {
                continue;
            }
            let units = match templates.stack_max(&tpl) {
                Some(1) => 1,
                max => 1 + rng.below(max.unwrap_or(100).min(100)),
            };
            items.push(json!({"_id": new_id(), "_tpl": tpl, "parentId": pockets, "slotId": grid,
                              "location": {"x": 0, "y": 0, "r": "Horizontal"}, "upd": {"StackObjectsCount": units}}));
        }
    }
    let roots = Map::from_iter([
        ("equipment".to_owned(), json!(equipment)),
        ("stash".to_owned(), json!(stash)),
        ("questRaidItems".to_owned(), json!(quest_raid)),
        ("questStashItems".to_owned(), json!(quest_stash)),
        ("sortingTable".to_owned(), json!(sorting)),
        ("hideoutCustomizationStashId".to_owned(), json!(customization)),
    ]);
    (items, roots)
}

/// Health in SPT's profile shape from a type's `health` (its first `BodyParts` set, the maxima).
pub(crate) fn health(kind: &Value) -> Value {
    let mut parts = Map::new();
    if let Some(set) = kind["health"]["BodyParts"][0].as_object() {
        for (part, range) in set.iter().take(16) {
            let max = range["max"].as_f64().unwrap_or(50.0);
            parts.insert(part.clone(), json!({"Health": {"Current": max, "Maximum": max}}));
        }
    }
    let vital = |name: &str| {
        let max = kind["health"][name]["max"].as_f64().unwrap_or(100.0);
        json!({"Current": max, "Maximum": max})
    };
    json!({"Hydration": vital("Hydration"), "Energy": vital("Energy"), "Temperature": vital("Temperature"),
           "BodyParts": parts, "UpdateTime": clock::now(), "Immortal": false})
}

/// A name from the type's lists.
fn name(kind: &Value, rng: &mut Rng) -> String {
    let pick = |list: &Value, rng: &mut Rng| -> Option<String> {
        let list = list.as_array()?;
        list.get(rng.below(list.len() as u64) as usize)?.as_str().map(str::to_owned)
    };
    let first = pick(&kind["firstName"], rng).unwrap_or_else(|| "Bot".to_owned());
    match pick(&kind["lastName"], rng) {
        Some(last) => format!("{first} {last}"),
        None => first,
    }
}

/// One bot of `role` at `level` (a difficulty), from `base` (`bots.base`) and `kind` (its type).
pub(crate) fn bot(
    base: &Value,
    kind: &Value,
    role: &str,
    level: &str,
    rng: &mut Rng,
    templates: &mut Templates,
) -> Value {
    let mut bot = base.clone();
    let id = new_id();
    let nickname = name(kind, rng);
    let levels = &kind["experience"]["level"];
    let (min, max) = (levels["min"].as_u64().unwrap_or(1), levels["max"].as_u64().unwrap_or(1));
    let lvl = (min + rng.below(max.saturating_sub(min) + 1)).max(1);
    bot["_id"] = json!(id);
    bot["aid"] = json!(rng.below(1 << 30));
    let info = &mut bot["Info"];
    info["Nickname"] = json!(nickname);
    info["LowerNickname"] = json!(nickname.to_lowercase());
    // The client reads every generated bot as a Savage (SPT says so of its PMCs too).
    info["Side"] = json!("Savage");
    info["Level"] = json!(lvl);
    if let Some(voice) = draw_key(&kind["appearance"]["voice"], rng) {
        info["Voice"] = json!(voice);
    }
    info["Settings"]["Role"] = json!(role);
    info["Settings"]["BotDifficulty"] = json!(level);
    info["Settings"]["StandingForKill"] = kind["experience"]["standingForKill"][level].clone();
    info["Settings"]["AggressorBonus"] = kind["experience"]["aggressorBonus"][level].clone();
    let reward = &kind["experience"]["reward"][level];
    let (low, high) = (reward["min"].as_i64().unwrap_or(-1), reward["max"].as_i64().unwrap_or(-1));
    info["Settings"]["Experience"] = json!(low + rng.below(high.saturating_sub(low).max(0) as u64 + 1) as i64);
    for (part, key) in [("Head", "head"), ("Body", "body"), ("Feet", "feet"), ("Hands", "hands")] {
        if let Some(choice) = draw_key(&kind["appearance"][key], rng) {
            bot["Customization"][part] = json!(choice);
        }
    }
    bot["Health"] = health(kind);
    let (items, roots) = inventory(kind, rng, templates);
    let mut inventory = bot["Inventory"].as_object().cloned().unwrap_or_default();
    inventory.extend(roots);
    inventory.insert("items".to_owned(), Value::Array(items));
    bot["Inventory"] = Value::Object(inventory);
    bot
}
