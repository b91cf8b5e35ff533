//! `TraderRepair {tid, repairItems: [{_id, count}]}`: a trader repairs (SPT's
//! `RepairService.RepairItemByTrader` and `PayForRepair`).
//!
//! Checked before anything changes: the trader repairs (`base.repair.availability`), each item is the
//! player's, named once, repairable (`super::repairable`), not of the trader's
//! `repair.excluded_category`/`excluded_id_list`, and `count` (the points to repair) is above 0 and at
//! most what the item lacks below its current maximum, rounded up. The price is SPT's: the template's
//! `RepairCost` times the points times the repair rate (`1 + repair_price_coef / 100` at the player's
//! loyalty level, 1 when the coefficient is 0 or less) times `configs.repair.priceMultiplier`, in
//! roubles, converted into the trader's repair currency (`repair.currency`, else `base.currency`) and
//! rounded; the money comes off the player's stacks of it (`economy::take_money`: not enough refuses
//! the whole repair) and adds to the trader's `salesSum`. Each item then gains its points, its maximum
//! wearing by the trader's `repair.quality` (`super::restore`, a trader's degradation bounds).

use super::{missing, repairable, restore, wear_bounds};
use crate::economy::{self, BuyList, MONEY, Prices};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, write};
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::Value;

/// The most items one trader repair names.
const MAX_ITEMS: usize = 64;

/// `TraderRepair`: see the module doc.
pub(crate) fn repair(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let tid = action["tid"].as_str().ok_or("the repair names no trader `tid`")?;
    let terms: Value = db::get(&db::path(&["traders", tid, "base", "repair"])).unwrap_or(Value::Null);
    if terms["availability"] != true {
        return Err(format!("trader {tid} does not repair").into());
    }
    let named = action["repairItems"].as_array().map(Vec::as_slice).unwrap_or_default();
    if named.is_empty() || named.len() > MAX_ITEMS {
        return Err(format!("a repair names from 1 to {MAX_ITEMS} items").into());
    }
    let excluded = BuyList::of_repair(tid);
    let coefficient = economy::coefficient(doc, tid, "repair_price_coef")?;
    let rate = if coefficient <= 0.0 { 1.0 } else { coefficient / 100.0 + 1.0 };
    let multiplier: f64 = db::get("configs.repair.priceMultiplier").unwrap_or(1.0);
    let quality = terms["quality"].as_f64().filter(|q| q.is_finite()).unwrap_or(0.0);
    let mut roubles = 0.0;
    let mut repairs: Vec<(String, Value, Value, f64)> = Vec::new();
    for entry in named {
        let id = entry["_id"].as_str().ok_or("a repaired item names no `_id`")?;
        if repairs.iter().any(|(r, _, _, _)| r == id) {
            return Err(format!("item {id} is named twice").into());
        }
        let (found, props) = repairable(doc, templates, id)?;
        if excluded.names(tpl(&found)) {
            return Err(format!("trader {tid} does not repair items of {}", tpl(&found)).into());
        }
        let lacks = missing(&found).ceil();
        let points = entry["count"].as_f64().filter(|c| c.is_finite() && *c > 0.0 && *c <= lacks);
        let Some(points) = points else {
            return Err(format!("item {id} lacks {lacks} durability; `count` must be above 0 and at most that").into());
        };
        roubles += props["RepairCost"].as_f64().unwrap_or(0.0).max(0.0) * points * rate * multiplier;
        repairs.push((id.to_owned(), found, props, points));
    }
    let named_currency = terms["currency"].as_str().and_then(|c| MONEY.iter().copied().find(|m| *m == c));
    let currency = match named_currency {
        Some(money) => money,
        None => economy::currency(tid)?,
    };
    let price = Prices::default().roubles_to(roubles, currency).round();
    if !(0.0..9e15).contains(&price) {
        return Err("the repair's price is out of range".into());
    }
    economy::take_money(doc, templates, changes, currency, price as u64)?;
    if price > 0.0 {
        economy::add_sales(doc, tid, price)?;
    }
    for (id, mut item, props, points) in repairs {
        restore(&mut item, points, wear_bounds(&props, false), quality, crate::ids::unit());
        write(doc, templates, &id, Some(item))?;
        changes.changed(&id);
    }
    Ok(())
}
