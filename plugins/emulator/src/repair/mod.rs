//! Repairing an item's durability (SPT's `RepairItemEventRouter`, `RepairController`,
//! `RepairService`, `RepairHelper`): with a repair kit (`kit.rs`, `Repair`) or at a trader
//! (`trader.rs`, `TraderRepair`). Both change the item's `upd.Repairable {Durability, MaxDurability}`
//! the same way ([`restore`], SPT's `UpdateItemDurability`):
//!
//! - the durability rises by the amount repaired, never above the item's current `MaxDurability`;
//! - then the maximum wears: a draw between the degradation bounds times the old maximum times the
//!   quality multiplier (a kit: 1; a trader: its `repair.quality`), rounded to two places. The bounds
//!   are a weapon template's `MinRepairDegradation`/`MaxRepairDegradation` (a kit's:
//!   `MinRepairKitDegradation`/`MaxRepairKitDegradation`, the plain maximum when the kit's is 0), or
//!   for armor (a template with `ArmorMaterial`) its material's in `globals.config.ArmorMaterials`. No
//!   wear when `configs.repair.applyRandomizeDurabilityLoss` is false, or a trader's quality is 0;
//! - the durability is then at most the new maximum, and a face shield's cracks (`FaceShield.Hits`)
//!   are mended.
//!
//! Left out, as the issue allows: the kit's buffs (`AddBuffToItem`) and the skill points a repair
//! gives (`AddRepairSkillPoints`).

pub(crate) mod kit;
pub(crate) mod trader;

use crate::profile::doc::Doc;
use crate::profile::inventory::{Refused, is_root, item};
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

/// The item to repair named by `id`: owned, not a root, with a template that says its
/// `MaxDurability`. Answers its state and template props; an item with no `Repairable` yet is at its
/// template's full durability.
pub(crate) fn repairable(doc: &mut Doc, templates: &mut Templates, id: &str) -> Result<(Value, Value), Refused> {
    let mut found = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if is_root(doc, id)? {
        return Err(format!("item {id} is a root container").into());
    }
    let props = templates.props(tpl(&found)).cloned().unwrap_or(Value::Null);
    let Some(max) = props["MaxDurability"].as_f64().filter(|m| *m > 0.0) else {
        return Err(format!("item {id} cannot be repaired").into());
    };
    if !found["upd"].is_object() {
        found["upd"] = json!({});
    }
    if !found["upd"]["Repairable"].is_object() {
        found["upd"]["Repairable"] = json!({ "Durability": max, "MaxDurability": max });
    }
    Ok((found, props))
}

/// Is the template's item armor (it has an `ArmorMaterial`)?
pub(crate) fn is_armor(props: &Value) -> bool {
    props["ArmorMaterial"].is_string()
}

/// The durability points an item lacks below its current maximum.
pub(crate) fn missing(item: &Value) -> f64 {
    let repairable = &item["upd"]["Repairable"];
    let (current, max) =
        (repairable["Durability"].as_f64().unwrap_or(0.0), repairable["MaxDurability"].as_f64().unwrap_or(0.0));
    (max - current).max(0.0)
}

/// The bounds the maximum's wear is drawn between, for an item of template `props` (see the module
/// doc); `None` when `configs.repair.applyRandomizeDurabilityLoss` turns the wear off.
pub(crate) fn wear_bounds(props: &Value, by_kit: bool) -> Option<(f64, f64)> {
    db::get::<bool>("configs.repair.applyRandomizeDurabilityLoss").unwrap_or(true).then(|| bounds(props, by_kit))
}

/// The degradation bounds of an item: see the module doc.
fn bounds(props: &Value, by_kit: bool) -> (f64, f64) {
    let read = |v: &Value, name: &str| v[name].as_f64().filter(|x| x.is_finite()).unwrap_or(0.0);
    if is_armor(props) {
        let material = props["ArmorMaterial"].as_str().unwrap_or_default();
        let settings: Value =
            db::get(&db::path(&["globals", "config", "ArmorMaterials", material])).unwrap_or(Value::Null);
        return if by_kit {
            (read(&settings, "MinRepairKitDegradation"), read(&settings, "MaxRepairKitDegradation"))
        } else {
            (read(&settings, "MinRepairDegradation"), read(&settings, "MaxRepairDegradation"))
        };
    }
    if by_kit {
        let max = read(props, "MaxRepairKitDegradation");
        let max = if max == 0.0 { read(props, "MaxRepairDegradation") } else { max };
        (read(props, "MinRepairKitDegradation"), max)
    } else {
        (read(props, "MinRepairDegradation"), read(props, "MaxRepairDegradation"))
    }
}

/// SPT's `UpdateItemDurability`: see the module doc. `wear` is [`wear_bounds`]; `quality` the wear
/// multiplier (a kit's is 1); `draw` (in [0, 1)) places the wear between the bounds.
pub(crate) fn restore(item: &mut Value, amount: f64, wear: Option<(f64, f64)>, quality: f64, draw: f64) {
    let repairable = &mut item["upd"]["Repairable"];
    let current = repairable["Durability"].as_f64().unwrap_or(0.0);
    let max = repairable["MaxDurability"].as_f64().unwrap_or(0.0);
    let mut durability = (current + amount.max(0.0)).min(max);
    let mut new_max = max;
    if let Some((low, high)) = wear
        && quality != 0.0
    {
        let (low, high) = (low.min(high), high.max(low));
        let share = low + (high - low) * draw.clamp(0.0, 1.0);
        let wear = (share * max * quality * 100.0).round() / 100.0;
        new_max = (max - wear.max(0.0)).max(0.0);
        durability = durability.min(new_max);
    }
    *repairable = json!({ "Durability": durability, "MaxDurability": new_max });
    if item["upd"]["FaceShield"]["Hits"].as_f64().is_some_and(|h| h > 0.0) {
        item["upd"]["FaceShield"]["Hits"] = json!(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repair_fills_up_to_the_current_maximum_and_never_raises_it() {
        let mut item =
            json!({"upd": {"Repairable": {"Durability": 40, "MaxDurability": 90}, "FaceShield": {"Hits": 2}}});
        restore(&mut item, 100.0, Some((0.0, 0.0)), 1.0, 0.5);
        assert_eq!(item["upd"]["Repairable"]["Durability"], 90.0);
        assert_eq!(item["upd"]["Repairable"]["MaxDurability"], 90.0);
        assert_eq!(item["upd"]["FaceShield"]["Hits"], 0);
    }

    #[test]
    fn the_wear_is_a_draw_between_the_bounds_times_the_old_maximum_and_the_quality() {
        let props = json!({"MinRepairDegradation": 0.1, "MaxRepairDegradation": 0.1});
        let mut item = json!({"upd": {"Repairable": {"Durability": 40, "MaxDurability": 90}}});
        restore(&mut item, 10.0, Some(bounds(&props, false)), 0.5, 0.25);
        assert_eq!(item["upd"]["Repairable"]["MaxDurability"], 85.5, "90 less 0.1 × 90 × 0.5");
        assert_eq!(item["upd"]["Repairable"]["Durability"], 50.0);
    }
}
