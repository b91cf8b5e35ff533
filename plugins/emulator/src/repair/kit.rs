//! `Repair {repairKitsInfo: [{_id, count}], target}`: repairing with repair kits (SPT's
//! `RepairService.RepairItemByKit`).
//!
//! Checked before anything changes: the target is the player's and repairable (`super::repairable`);
//! each kit is the player's, named once, a repair kit (`MaxRepairResource` in its template) whose
//! `TargetItemFilter`, when it has one, names the target's category, holding at least the `count` of
//! resource named from it (`upd.RepairKit.Resource`, full when absent). Then each kit loses its count
//! (an empty kit stays, as in SPT) and the target gains the points they buy (`super::restore`, with a
//! kit's degradation bounds): the resource spent divided by SPT's `GetKitDivisor` — for a weapon
//! `globals.config.RepairSettings.durabilityPointCostGuns`, for armor `durabilityPointCostArmor` times
//! `1 + Destructibility` of its material times `1 + ArmorClass / armorClassDivisor`, each less the
//! profile's repair bonuses (`RepairWeaponBonus`/`RepairArmorBonus`) and the Intellect skill's
//! `RepairPointsCostReduction` per level. SPT reads only the first kit's count for the points but
//! spends every kit's; here the points are those of all the resource spent.

use super::{is_armor, repairable, restore, wear_bounds};
use crate::economy::is_of;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, is_root, item, write};
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

/// The most kits one repair names (the client sends one).
const MAX_KITS: usize = 8;

/// `Repair`: see the module doc.
pub(crate) fn repair(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let target = action["target"].as_str().ok_or("the repair names no `target`")?;
    let (mut repaired, props) = repairable(doc, templates, target)?;
    let named = action["repairKitsInfo"].as_array().map(Vec::as_slice).unwrap_or_default();
    if named.is_empty() || named.len() > MAX_KITS {
        return Err(format!("a repair names from 1 to {MAX_KITS} repair kits").into());
    }
    let mut kits: Vec<(String, Value, f64)> = Vec::new();
    for kit in named {
        let id = kit["_id"].as_str().ok_or("a repair kit names no `_id`")?;
        let count =
            kit["count"].as_f64().filter(|c| c.is_finite() && *c > 0.0).ok_or("a kit's `count` must be above 0")?;
        let mut found = item(doc, id)?.ok_or_else(|| format!("repair kit {id} is not in this profile"))?;
        if is_root(doc, id)? || id == target || kits.iter().any(|(k, _, _)| k == id) {
            return Err(format!("item {id} cannot be a repair kit here (a root, the target, or named twice)").into());
        }
        let kit_props = templates.props(tpl(&found)).cloned().unwrap_or(Value::Null);
        let Some(max) = kit_props["MaxRepairResource"].as_f64() else {
            return Err(format!("item {id} is not a repair kit").into());
        };
        if let Some(filter) = kit_props["TargetItemFilter"].as_array().filter(|f| !f.is_empty()) {
            let filter: Vec<String> = filter.iter().filter_map(|f| f.as_str().map(str::to_owned)).collect();
            if !is_of(tpl(&repaired), &filter) {
                return Err(format!("repair kit {id} cannot repair item {target}").into());
            }
        }
        let left = found["upd"]["RepairKit"]["Resource"].as_f64().unwrap_or(max);
        if count > left {
            return Err(format!("repair kit {id} has {left} resource left, not {count}").into());
        }
        if !found["upd"].is_object() {
            found["upd"] = json!({});
        }
        found["upd"]["RepairKit"] = json!({ "Resource": left - count });
        kits.push((id.to_owned(), found, count));
    }
    let spent: f64 = kits.iter().map(|(_, _, c)| c).sum();
    let points = spent / divisor(doc, &props)?;
    restore(&mut repaired, points, wear_bounds(&props, true), 1.0, crate::ids::unit());
    for (id, kit, _) in kits {
        write(doc, templates, &id, Some(kit))?;
        changes.changed(&id);
    }
    write(doc, templates, target, Some(repaired))?;
    changes.changed(target);
    Ok(())
}

/// The sum of the profile's `Bonuses` of `kind`, as SPT's `GetBonusMultiplierValue`: `1 + sum / 100`.
fn bonus(bonuses: &Value, kind: &str) -> f64 {
    let sum: f64 = bonuses
        .as_array()
        .into_iter()
        .flatten()
        .take(1000)
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b["value"].as_f64())
        .filter(|v| v.is_finite())
        .sum();
    1.0 + sum / 100.0
}

/// SPT's `GetKitDivisor`: the kit resource one durability point costs (see the module doc); never
/// below a small positive floor, so a bonus cannot make points free.
fn divisor(doc: &mut Doc, props: &Value) -> Result<f64, Refused> {
    let config: Value = db::get("globals.config").map(|c: Value| {
        json!({"RepairSettings": c["RepairSettings"], "reduction": c["SkillsSettings"]["Intellect"]["RepairPointsCostReduction"]})
    }).unwrap_or(Value::Null);
    let settings = &config["RepairSettings"];
    let bonuses = doc.get(&["Bonuses"])?;
    let skills = doc.get(&["Skills", "Common"])?;
    let intellect = skills
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["Id"] == "Intellect")
        .and_then(|s| s["Progress"].as_f64())
        .unwrap_or(0.0);
    let reduction = config["reduction"].as_f64().unwrap_or(0.0) * (intellect / 100.0).trunc();
    let divisor = if is_armor(props) {
        let material = props["ArmorMaterial"].as_str().unwrap_or_default();
        let destructibility: f64 =
            db::get(&db::path(&["globals", "config", "ArmorMaterials", material, "Destructibility"])).unwrap_or(0.0);
        let class = props["ArmorClass"].as_f64().unwrap_or(0.0);
        let class_divisor = settings["armorClassDivisor"].as_f64().filter(|d| *d > 0.0).unwrap_or(6.0);
        settings["durabilityPointCostArmor"].as_f64().unwrap_or(0.335)
            * (1.0 - (bonus(&bonuses, "RepairArmorBonus") - 1.0) - reduction)
            * (1.0 + destructibility)
            * (1.0 + class / class_divisor)
    } else {
        settings["durabilityPointCostGuns"].as_f64().unwrap_or(0.5)
            * (1.0 - (bonus(&bonuses, "RepairWeaponBonus") - 1.0) - reduction)
    };
    Ok(divisor.max(0.01))
}
