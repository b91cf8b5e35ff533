//! `TradingConfirm` `sell_to_trader`: selling to a trader (SPT's `TradeHelper.sellItem` and
//! `PaymentService.GiveProfileMoney`).
//!
//! `{tid, items: [{id, count}], price}`. The client's `price` is not read: SPT pays it as sent, which
//! lets a client name any sum. The game prices each item itself, as the client computes what it
//! shows: the handbook price (`templates.handbook.Items`) of the item and of everything inside it
//! that the trader buys (SPT's `GetPriceOfItemAndChildren`: a sold container or weapon goes with its
//! contents, as SPT removes them with it), each times its units and its condition
//! (`economy::quality`: durability, a med's or food's resource, a key's uses), the whole times
//! `100 − buy_price_coef` percent at the player's loyalty level, converted into the trader's currency
//! (`base.currency`) by the handbook's price of it and rounded down.
//!
//! Checked before anything changes: the trader exists; each named item is the player's, not a root
//! container, not named twice nor inside another item sold, and of a template the trader buys
//! (`items_buy` by category up the template's `_parent` chain or by id, not `items_buy_prohibited`);
//! `count` is the whole stack or, for a stack with nothing inside it, a part of it. Then the items go,
//! the money lands in the stash (`economy::give_money`: no room refuses the sale), the trader's
//! `salesSum` grows by it and SPT's `LevelUp` runs (a sale changes no standing in SPT).
//!
//! `SellAllFromSavage` (`scav.rs`) sells the player's scav's inventory to Fence.

use crate::economy::{self, Buys, Prices};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, count, is_root, item, set_count, subtree, write};
use crate::templates::{Templates, tpl};
use serde_json::Value;

/// The most items one sale names (the client sells a selection of a screenful).
const MAX_SOLD: usize = 256;

/// `sell_to_trader`: see the module doc.
pub(crate) fn sell(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let tid = action["tid"].as_str().ok_or("the sale names no trader `tid`")?;
    let currency = economy::currency(tid)?;
    let named = action["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    if named.is_empty() {
        return Err("the sale names no items".into());
    }
    if named.len() > MAX_SOLD {
        return Err(format!("a sale names at most {MAX_SOLD} items").into());
    }
    let buys = Buys::of(tid);
    let mut prices = Prices::default();
    let mut sold: Vec<Sold> = Vec::new();
    for entry in named {
        let id = entry["id"].as_str().ok_or("a sold item names no `id`")?.trim();
        let Some(found) = item(doc, id)? else {
            return Err(format!("Unable to sell item {id}, cannot be found in player inventory").into());
        };
        if is_root(doc, id)? {
            return Err(format!("item {id} is a root container and cannot be sold").into());
        }
        if sold.iter().any(|s| s.all.iter().any(|a| a == id)) {
            return Err(format!("item {id} is named twice, or is inside another item sold").into());
        }
        if !buys.buys(tpl(&found)) {
            return Err(format!("trader {tid} does not buy items of {}", tpl(&found)).into());
        }
        let all = subtree(doc, id)?;
        if let Some(other) = sold.iter().find(|s| all.contains(&s.id)) {
            return Err(format!("item {} is inside item {id}, sold with it; name it once", other.id).into());
        }
        let have = count(&found);
        let units = match entry["count"].as_u64() {
            None => have,
            Some(n) if n == have => have,
            Some(n) if n >= 1 && n < have && all.len() == 1 => n,
            Some(n) => return Err(format!("cannot sell {n} of a stack of {have} (item {id})").into()),
        };
        let mut roubles = 0.0;
        for (at, part) in all.iter().enumerate() {
            let Some(inner) = item(doc, part)? else { continue };
            if !buys.buys(tpl(&inner)) {
                continue;
            }
            let n = if at == 0 { units } else { count(&inner) };
            roubles += prices.of(tpl(&inner)) * n as f64 * economy::quality(templates, &inner);
        }
        sold.push(Sold { id: id.to_owned(), item: found, units, all, roubles });
    }
    let coefficient = economy::coefficient(doc, tid, "buy_price_coef")?;
    let roubles: f64 = sold.iter().map(|s| s.roubles).sum();
    let money = paid(roubles, coefficient, prices.of(currency));
    if !(0.0..9e15).contains(&money) {
        return Err("the sale's price is out of range".into());
    }
    let money = money as u64;

    // Checked: the items go, then the money comes (into the room they leave).
    for s in sold {
        if s.units < count(&s.item) {
            let mut rest = s.item;
            let left = count(&rest) - s.units;
            set_count(&mut rest, left);
            write(doc, templates, &s.id, Some(rest))?;
            changes.changed(&s.id);
            continue;
        }
        for gone in s.all.iter().rev() {
            write(doc, templates, gone, None)?;
        }
        for gone in &s.all {
            changes.removed(gone);
        }
    }
    economy::give_money(doc, templates, changes, currency, money)?;
    economy::add_sales(doc, tid, money as f64)?;
    Ok(())
}

/// One item sold: its id and state, the units sold, it and everything inside it (parents first), and
/// what the trader pays for it in roubles before the trader's coefficient.
struct Sold {
    id: String,
    item: Value,
    units: u64,
    all: Vec<String>,
    roubles: f64,
}

/// What the trader pays, in its currency (`rate` roubles each; a rate the handbook lacks counts as
/// a rouble), for `roubles` of handbook value at its coefficient `coefficient`: rounded down.
fn paid(roubles: f64, coefficient: f64, rate: f64) -> f64 {
    let rate = if rate > 0.0 { rate } else { 1.0 };
    (roubles * (100.0 - coefficient).max(0.0) / 100.0 / rate).floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_price_is_the_handbooks_less_the_coefficient_in_the_traders_currency_rounded_down() {
        assert_eq!(paid(22_000.0, 50.0, 1.0), 11_000.0);
        assert_eq!(paid(22_000.0, 45.0, 1.0), 12_100.0);
        assert_eq!(paid(22_000.0, 50.0, 143.0), 76.0, "11000 roubles are 76.9 dollars");
        assert_eq!(paid(22_000.0, 150.0, 1.0), 0.0, "a coefficient past 100 pays nothing, never less");
    }
}
