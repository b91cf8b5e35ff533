//! Insured items lost in a raid come back by mail (SPT's `InsuranceService.StoreGearLostInRaidToSendLater`,
//! `StartPostRaidInsuranceLostProcess`, `InsuranceController.ProcessReturn`), called by the raid's end
//! (`raid/end.rs`) in the patch that takes the lost items away.
//!
//! Which items: those the profile's `InsuredItems` names that the raid's end decided were lost (SPT
//! takes the client's `lostInsuredItems` list): items the player took into the raid and did not bring
//! out, each by its id, decided once by `raid/end.rs` (`Returned`) from the server's copy of what came
//! in and the report, with the units that went missing with it. An item comes back with those units
//! only (its stack cut to them), so what came out under another id (a stack split or merged in the
//! raid) is never also returned; with none missing it comes back not at all. Never one in a special
//! slot, in a slot `configs.insurance`'s `blacklistedEquipment` names, or in the secure container.
//! Every lost item leaves `InsuredItems` (it is gone from the profile). For each trader the returned
//! ones were insured with:
//!
//! - now, the trader's "I will look for your things" letter (`dialogue.insuranceStart`);
//! - after the trader's return time (`base.insurance.min_return_hour` to `max_return_hour`, or
//!   `configs.insurance.returnTimeOverrideSeconds`, times the edition's
//!   `globals.config.Insurance.EditionSendingMessageTime` multiplier), an `INSURANCE_RETURN` letter
//!   (`dialogue.insuranceFound`) carrying what is left after what SPT strips: ammunition in slots
//!   `slotIdsToAlwaysRemove` names, each item with `100 - returnChancePercent` per cent of being kept
//!   by whoever found it (with what is in it), and a weapon's valuable parts (`mod_*` slots, worth at
//!   least `minAttachmentRoublePriceToBeTaken`), unless `chanceNoAttachmentsTakenPercent` spares them.
//!   With nothing left it is `insuranceFailed`; from a map whose base disables insurance (SPT: the
//!   lab), `insuranceFailedLabs` with nothing. The attachments may be taken for the trader's
//!   `max_storage_time` hours (or `storageTimeOverrideSeconds`).
//!
//! Both are the mailbox's pending letters (`mail/mailbox.rs`): recorded in the profile with their due
//! time in the game's time, armed on the host's timer, and delivered by the timer or by the mail's
//! next read after they are due, once. So a server that was off at the due time delivers them when it
//! starts again. The roll is made at the raid's end (SPT rolls when it sends): the same odds, and the
//! profile then holds exactly what will arrive.

use super::insure::insured;
use crate::clock;
use crate::events;
use crate::mail::mailbox::{self, Letter, OnDelivery, kind};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Refused, count, set_count};
use crate::templates::{self, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};

/// How deep an item's parents are followed.
const MAX_DEPTH: usize = 64;
/// The longest time a letter waits (the host's timers go no further, and no trader takes longer).
const MAX_DELAY: u64 = 30 * 24 * 3600;
/// SPT's defaults when `configs.insurance` is absent.
const DEFAULT_RETURN_CHANCE: f64 = 85.0;
const DEFAULT_MIN_PART_PRICE: f64 = 15_000.0;
const DEFAULT_NO_PARTS_TAKEN: f64 = 10.0;

/// A percentage roll: true with `percent` per cent.
fn chance(percent: f64) -> bool {
    use std::hash::BuildHasher;
    let roll = std::collections::hash_map::RandomState::new().hash_one(0u8) % 10_000;
    (roll as f64) < percent * 100.0
}

/// A whole number in `low..=high`.
fn between(low: u64, high: u64) -> u64 {
    use std::hash::BuildHasher;
    if high <= low {
        return low;
    }
    low + std::collections::hash_map::RandomState::new().hash_one(1u8) % (high - low + 1)
}

/// Stages the return of the insured items this raid took: `before` is the raid's items before it (by
/// id, as stored), `lost` the end's decision of those that did not come back, each with the units that
/// went missing with it; `record` the raid's record (its map). Timers are armed for `session` now; one
/// whose patch is then not written finds no letter and does nothing.
pub(crate) fn lost(
    doc: &mut Doc,
    session: Option<&str>,
    record: &Value,
    before: &HashMap<String, Value>,
    lost: &BTreeMap<String, u64>,
) -> Result<(), Refused> {
    if !doc.key().starts_with("profile.") {
        return Ok(());
    }
    let list = insured(doc)?;
    if list.is_empty() {
        return Ok(());
    }
    let config: Value = db::get("configs.insurance").unwrap_or(Value::Null);
    let equipment = doc.get(&["Inventory", "equipment"])?.as_str().unwrap_or_default().to_owned();
    let mut by_trader: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    let mut still = Vec::new();
    let mut gone = false;
    for entry in list {
        let (Some(id), Some(tid)) = (entry["itemId"].as_str(), entry["tid"].as_str()) else { continue };
        let Some(&units) = lost.get(id) else {
            still.push(entry);
            continue;
        };
        gone = true;
        // Gone from the profile either way; returned when something of it is missing and it was
        // somewhere an item can be lost.
        if units > 0 && can_be_lost(id, before, &equipment, &config) {
            by_trader.entry(tid.to_owned()).or_default().push((id.to_owned(), units));
        }
    }
    if !gone {
        return Ok(());
    }
    doc.set(&["InsuredItems"], Value::Array(still))?;
    if by_trader.is_empty() {
        return Ok(());
    }
    let uid = doc.get(&["_id"])?.as_str().unwrap_or_default().to_owned();
    let edition = doc.get(&["Info", "GameVersion"])?.as_str().unwrap_or_default().to_owned();
    let map = record["location"].as_str().unwrap_or_default().to_owned();
    let now = clock::now();
    for (tid, ids) in by_trader {
        let items: Vec<Value> =
            ids.iter().filter_map(|(id, units)| before.get(id).map(|item| returned_as(item, *units))).collect();
        let returned = strip(items, &tid, &config);
        let terms: Value = db::get(&db::path(&["traders", &tid, "base", "insurance"])).unwrap_or(Value::Null);
        let dialogue: Value = db::get(&db::path(&["traders", &tid, "dialogue"])).unwrap_or(Value::Null);
        let system_data = json!({"date": mail_date(now), "time": mail_time(now), "location": map});

        let start = Letter {
            from: tid.clone(),
            kind: kind::NPC_TRADER,
            text: "I will look for your things".to_owned(),
            template_id: pick(&dialogue["insuranceStart"]),
            items: Vec::new(),
            max_storage: 0,
            system_data: Some(system_data.clone()),
        };
        let started = mailbox::send_later(doc, start, now, OnDelivery::default())?;
        mailbox::schedule(session, &uid, &started, 0);

        let disabled = db::get::<Value>(&db::path(&["locations", &map, "base", "Insurance"])).is_ok_and(|v| v == false);
        let (items, template) = if disabled {
            let failed = pick(&dialogue["insuranceFailedLabs"]).or_else(|| pick(&dialogue["insuranceFailed"]));
            (Vec::new(), failed)
        } else if returned.is_empty() {
            (returned, pick(&dialogue["insuranceFailed"]))
        } else {
            (returned, pick(&dialogue["insuranceFound"]))
        };
        let count = items.len();
        let found = Letter {
            from: tid.clone(),
            kind: kind::INSURANCE_RETURN,
            text: "I found some of your things".to_owned(),
            template_id: template,
            items,
            max_storage: storage(&config, &terms),
            system_data: Some(system_data),
        };
        let delay = delay(&config, &terms, &edition);
        let then = OnDelivery {
            topic: Some(events::INSURANCE_RETURNED.to_owned()),
            payload: json!({"uid": uid, "trader": tid, "items": count, "location": map}),
        };
        let pending = mailbox::send_later(doc, found, now.saturating_add(delay), then)?;
        mailbox::schedule(session, &uid, &pending, delay);
    }
    Ok(())
}

/// Lost item `item` as it comes back: its copy from before the raid holding the `units` that went
/// missing with it (fewer than it held when part of its stack came out).
fn returned_as(item: &Value, units: u64) -> Value {
    let mut item = item.clone();
    if units < count(&item) {
        set_count(&mut item, units);
    }
    item
}

/// Could item `id` be lost (SPT's `ItemCannotBeLostOnDeath`, and `blacklistedEquipment`)? Not in a
/// special slot, a blacklisted equipment slot, or the secure container.
fn can_be_lost(id: &str, before: &HashMap<String, Value>, equipment: &str, config: &Value) -> bool {
    let blacklisted = config["blacklistedEquipment"].as_array().cloned().unwrap_or_default();
    let mut at = id;
    for _ in 0..MAX_DEPTH {
        let Some(item) = before.get(at) else { return true };
        let slot = item["slotId"].as_str().unwrap_or_default();
        if slot.to_ascii_lowercase().starts_with("specialslot") {
            return false;
        }
        match item["parentId"].as_str() {
            Some(parent) if parent == equipment => {
                return slot != "SecuredContainer" && !blacklisted.iter().any(|b| b == slot);
            }
            Some(parent) => at = parent,
            None => return true,
        }
    }
    true
}

/// What comes back of `items` insured with `tid` (see the module doc).
fn strip(items: Vec<Value>, tid: &str, config: &Value) -> Vec<Value> {
    let always: Vec<&str> = config["slotIdsToAlwaysRemove"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut items: Vec<Value> =
        items.into_iter().filter(|i| !always.contains(&i["slotId"].as_str().unwrap_or_default())).collect();
    let keep = config["returnChancePercent"][tid].as_f64().unwrap_or(DEFAULT_RETURN_CHANCE);
    let ids: HashSet<String> = items.iter().filter_map(|i| i["_id"].as_str().map(str::to_owned)).collect();
    let attached = |item: &Value| {
        item["slotId"].as_str().is_some_and(|s| s.starts_with("mod_"))
            && item["parentId"].as_str().is_some_and(|p| ids.contains(p))
    };
    // Items on their own: each kept by the finder with the trader's odds, with what is inside it.
    let mut gone: HashSet<String> = HashSet::new();
    for item in items.iter().filter(|i| !attached(i)) {
        if chance(100.0 - keep) {
            gone.insert(item["_id"].as_str().unwrap_or_default().to_owned());
        }
    }
    // Parts: unless spared, each valuable one rolled; as many as lose their roll go, the most valuable
    // first (SPT draws them weighted by price).
    if !chance(config["chanceNoAttachmentsTakenPercent"].as_f64().unwrap_or(DEFAULT_NO_PARTS_TAKEN)) {
        let min = config["minAttachmentRoublePriceToBeTaken"].as_f64().unwrap_or(DEFAULT_MIN_PART_PRICE);
        let prices = templates::handbook_prices();
        let mut parts: Vec<(f64, String)> = items
            .iter()
            .filter(|i| attached(i))
            .map(|i| (prices.get(tpl(i)).copied().unwrap_or(0.0), i["_id"].as_str().unwrap_or_default().to_owned()))
            .filter(|(price, _)| *price >= min)
            .collect();
        let taken = parts.iter().filter(|_| chance(100.0 - keep)).count();
        parts.sort_by(|a, b| b.0.total_cmp(&a.0));
        gone.extend(parts.into_iter().take(taken).map(|(_, id)| id));
    }
    // What is inside a taken item goes with it.
    for _ in 0..MAX_DEPTH {
        let more: Vec<String> = items
            .iter()
            .filter(|i| i["parentId"].as_str().is_some_and(|p| gone.contains(p)))
            .filter_map(|i| i["_id"].as_str().map(str::to_owned))
            .filter(|id| !gone.contains(id))
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    items.retain(|i| !gone.contains(i["_id"].as_str().unwrap_or_default()));
    items
}

/// A random one of a trader's message templates (`dialogue.<kind>`).
fn pick(templates: &Value) -> Option<String> {
    let list: Vec<&str> = templates.as_array()?.iter().filter_map(Value::as_str).collect();
    (!list.is_empty()).then(|| list[between(0, list.len() as u64 - 1) as usize].to_owned())
}

/// Seconds until the insured items come back (see the module doc), at most [`MAX_DELAY`].
fn delay(config: &Value, terms: &Value, edition: &str) -> u64 {
    if let Some(seconds) = config["returnTimeOverrideSeconds"].as_f64().filter(|s| *s > 0.0) {
        return (seconds as u64).min(MAX_DELAY);
    }
    let min = terms["min_return_hour"].as_u64().unwrap_or(24);
    let max = terms["max_return_hour"].as_u64().unwrap_or(36).max(min);
    let mut seconds = between(min * 3600, max * 3600) as f64;
    let path = db::path(&["globals", "config", "Insurance", "EditionSendingMessageTime", edition, "multiplier"]);
    if let Ok(multiplier) = db::get::<f64>(&path)
        && multiplier.is_finite()
        && multiplier > 0.0
    {
        seconds *= multiplier;
    }
    (seconds as u64).min(MAX_DELAY)
}

/// Seconds the returned items may be collected: `storageTimeOverrideSeconds`, else the trader's
/// `max_storage_time` hours (SPT's `GetMaxInsuranceStorageTime`).
fn storage(config: &Value, terms: &Value) -> u64 {
    if let Some(seconds) = config["storageTimeOverrideSeconds"].as_f64().filter(|s| *s > 0.0) {
        return seconds as u64;
    }
    terms["max_storage_time"].as_u64().unwrap_or(96).saturating_mul(3600)
}

/// SPT's mail date, `dd.MM.yyyy` (UTC), of `at` seconds since the epoch.
fn mail_date(at: u64) -> String {
    let (year, month, day) = clock::civil(at);
    format!("{day:02}.{month:02}.{year:04}")
}

/// SPT's mail time, `HH:mm` (UTC).
fn mail_time(at: u64) -> String {
    format!("{:02}:{:02}", at % 86_400 / 3600, at % 3600 / 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mail_dates_and_times_are_spts() {
        assert_eq!(mail_date(0), "01.01.1970");
        assert_eq!(mail_date(1_764_720_000), "03.12.2025");
        assert_eq!(mail_date(951_782_400), "29.02.2000");
        assert_eq!(mail_time(1_764_720_000 + 13 * 3600 + 7 * 60 + 59), "13:07");
    }

    #[test]
    fn what_is_stripped_ammunition_always_and_a_lost_item_with_its_contents() {
        let items = vec![
            json!({"_id": "rig", "_tpl": "r", "parentId": "eq", "slotId": "TacticalVest"}),
            json!({"_id": "mag", "_tpl": "m", "parentId": "rig", "slotId": "1"}),
            json!({"_id": "ammo", "_tpl": "a", "parentId": "mag", "slotId": "cartridges"}),
        ];
        let config = json!({"returnChancePercent": {"t": 100}, "slotIdsToAlwaysRemove": ["cartridges"],
                            "chanceNoAttachmentsTakenPercent": 100});
        let back: Vec<Value> = strip(items.clone(), "t", &config);
        assert_eq!(back.iter().map(|i| i["_id"].as_str().unwrap()).collect::<Vec<_>>(), ["rig", "mag"]);
        let never = json!({"returnChancePercent": {"t": 0}, "chanceNoAttachmentsTakenPercent": 100});
        assert!(strip(items, "t", &never).is_empty(), "a 0% trader returns nothing");
    }

    #[test]
    fn special_slots_the_secure_container_and_blacklisted_slots_are_never_lost() {
        let before: HashMap<String, Value> = [
            ("sc", json!({"_id": "sc", "parentId": "eq", "slotId": "SecuredContainer"})),
            ("gold", json!({"_id": "gold", "parentId": "sc", "slotId": "main"})),
            ("key", json!({"_id": "key", "parentId": "eq", "slotId": "SpecialSlot1"})),
            ("vest", json!({"_id": "vest", "parentId": "eq", "slotId": "TacticalVest"})),
            ("arm", json!({"_id": "arm", "parentId": "eq", "slotId": "ArmBand"})),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let config = json!({"blacklistedEquipment": ["ArmBand"]});
        let lost: Vec<&str> = ["sc", "gold", "key", "vest", "arm"]
            .into_iter()
            .filter(|id| can_be_lost(id, &before, "eq", &config))
            .collect();
        assert_eq!(lost, ["vest"]);
    }
}
