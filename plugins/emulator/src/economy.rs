//! A trader's economy, shared by buying, selling, healing and repairing (a leaf over `profile`: `items`,
//! `health` and `repair` all read it): the trader's currency and
//! what the handbook says money and items are worth, what a trader buys, the player's loyalty level
//! with a trader and its coefficients, SPT's `TraderHelper.LevelUp`, and money given to or taken from
//! the player's stash.
//!
//! Learnt from SPT's `PaymentService` (`GiveProfileMoney`, `AddPaymentToOutput`), `HandbookHelper`
//! (`InRUB`, `FromRUB`), `TraderHelper` (`LevelUp`, `GetLoyaltyLevel`) and `ItemHelper`
//! (`IsOfBaseclasses`, `GetItemQualityModifier`).
//!
//! Money is conserved exactly: what is given lands whole in the stash (topping up loose stacks of the
//! currency, then new stacks first-fit) or nothing is given and the action is refused; what is taken
//! comes off stacks the player owns, each named stack checked, and a shortfall refuses the action.

use crate::ids;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Refused, count, is_root, item, set_count, write};
use crate::profile::shape::INDEX;
use crate::progression;
use crate::templates::{ROUBLES, Templates, handbook_prices, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Dollars' and euros' templates.
pub(crate) const DOLLARS: &str = "5696686a4bdc2da3298b456a";
pub(crate) const EUROS: &str = "569668774bdc2da2298b4568";

/// The three money templates.
pub(crate) const MONEY: [&str; 3] = [ROUBLES, DOLLARS, EUROS];

/// How far up a template's `_parent` chain a category is looked for: real chains are under ten deep.
const MAX_PARENT_DEPTH: usize = 32;

/// The highest loyalty level SPT lets a trader reach (`TraderHelper.LevelUp`).
const MAX_LOYALTY: u64 = 4;

/// Game editions whose purchase limits are 20% higher (SPT's `GetAccountTypeAdjustedTraderPurchaseLimit`).
const LIMIT_BONUS_EDITIONS: [&str; 2] = ["edge_of_darkness", "unheard_edition"];

/// The money template of trader `tid`'s `base.currency` (`RUB`, `USD`, `EUR`).
pub(crate) fn currency(tid: &str) -> Result<&'static str, String> {
    let named: String = db::get(&db::path(&["traders", tid, "base", "currency"]))
        .map_err(|_| format!("trader {tid} does not exist or has no currency"))?;
    Ok(match named.as_str() {
        "USD" => DOLLARS,
        "EUR" => EUROS,
        _ => ROUBLES,
    })
}

/// The handbook's prices, read once per action that needs them.
#[derive(Default)]
pub(crate) struct Prices(Option<BTreeMap<String, f64>>);

impl Prices {
    /// The handbook price of `tpl` in roubles (a rouble is worth one); 0 when the handbook lists none.
    pub(crate) fn of(&mut self, tpl: &str) -> f64 {
        if tpl == ROUBLES {
            return 1.0;
        }
        self.0
            .get_or_insert_with(handbook_prices)
            .get(tpl)
            .copied()
            .filter(|p| p.is_finite() && *p > 0.0)
            .unwrap_or(0.0)
    }

    /// `amount` of money `tpl` in roubles (SPT's `InRUB`).
    pub(crate) fn in_roubles(&mut self, amount: f64, tpl: &str) -> f64 {
        amount * self.of(tpl)
    }

    /// `roubles` in money `tpl` (SPT's `FromRUB`); a currency the handbook has no price for counts as
    /// a rouble.
    pub(crate) fn roubles_to(&mut self, roubles: f64, tpl: &str) -> f64 {
        let rate = self.of(tpl);
        if rate > 0.0 { roubles / rate } else { roubles }
    }
}

/// Is template `tpl`, or any template up its `_parent` chain, one of `categories` (SPT's
/// `IsOfBaseclasses`)?
pub(crate) fn is_of(tpl: &str, categories: &[String]) -> bool {
    if categories.is_empty() {
        return false;
    }
    let mut at = tpl.to_owned();
    for _ in 0..MAX_PARENT_DEPTH {
        if categories.contains(&at) {
            return true;
        }
        match db::get::<String>(&db::path(&["templates", "items", &at, "_parent"])) {
            Ok(parent) if !parent.is_empty() => at = parent,
            _ => return false,
        }
    }
    false
}

/// A trader's `items_buy` or `items_buy_prohibited`: categories and single templates.
#[derive(Default)]
pub(crate) struct BuyList {
    category: Vec<String>,
    id_list: Vec<String>,
}

impl BuyList {
    /// `traders.<tid>.base.<member>`.
    pub(crate) fn of(tid: &str, member: &str) -> BuyList {
        let read = |list: &str| db::get::<Vec<String>>(&db::path(&["traders", tid, "base", member, list]));
        BuyList { category: read("category").unwrap_or_default(), id_list: read("id_list").unwrap_or_default() }
    }

    /// What trader `tid` will not repair: `base.repair.excluded_category` and `excluded_id_list`.
    pub(crate) fn of_repair(tid: &str) -> BuyList {
        let read = |list: &str| db::get::<Vec<String>>(&db::path(&["traders", tid, "base", "repair", list]));
        BuyList {
            category: read("excluded_category").unwrap_or_default(),
            id_list: read("excluded_id_list").unwrap_or_default(),
        }
    }

    /// Does the list name `tpl`, itself or by category?
    pub(crate) fn names(&self, tpl: &str) -> bool {
        self.id_list.iter().any(|t| t == tpl) || is_of(tpl, &self.category)
    }
}

/// Does trader `tid` buy items of `tpl`: named by `items_buy` and not by `items_buy_prohibited`.
pub(crate) struct Buys {
    allowed: BuyList,
    prohibited: BuyList,
}

impl Buys {
    pub(crate) fn of(tid: &str) -> Buys {
        Buys { allowed: BuyList::of(tid, "items_buy"), prohibited: BuyList::of(tid, "items_buy_prohibited") }
    }

    pub(crate) fn buys(&self, tpl: &str) -> bool {
        self.allowed.names(tpl) && !self.prohibited.names(tpl)
    }
}

/// The player's loyalty level with `tid` (1 for a trader not met yet).
pub(crate) fn loyalty(doc: &mut Doc, tid: &str) -> Result<u64, Refused> {
    Ok(doc.get(&["TradersInfo", tid, "loyaltyLevel"])?.as_u64().unwrap_or(1).max(1))
}

/// Coefficient `name` (`buy_price_coef`, `heal_price_coef`, `repair_price_coef`, …) of the trader's
/// loyalty level the player has reached; 0 when the trader lists none.
pub(crate) fn coefficient(doc: &mut Doc, tid: &str, name: &str) -> Result<f64, Refused> {
    let level = loyalty(doc, tid)?;
    let levels: Vec<Value> = db::get(&db::path(&["traders", tid, "base", "loyaltyLevels"])).unwrap_or_default();
    let at = (level as usize).saturating_sub(1).min(levels.len().saturating_sub(1));
    Ok(levels.get(at).and_then(|l| l[name].as_f64()).filter(|c| c.is_finite()).unwrap_or(0.0))
}

/// A purchase limit (`BuyRestrictionMax`) as it applies to this player's edition.
pub(crate) fn purchase_limit(doc: &mut Doc, max: u64) -> Result<u64, Refused> {
    let edition = doc.get(&["Info", "GameVersion"])?;
    let bonus = edition.as_str().is_some_and(|e| LIMIT_BONUS_EDITIONS.contains(&e));
    Ok(if bonus { (max as f64 * 1.2).floor() as u64 } else { max })
}

/// Adds `amount` (in the trader's currency) to the player's `salesSum` with `tid`, then SPT's
/// `LevelUp`: the loyalty level is the number of the trader's levels whose player level, sales sum
/// and standing the player reaches (at most [`MAX_LOYALTY`]). A trader not met yet is met here.
pub(crate) fn add_sales(doc: &mut Doc, tid: &str, amount: f64) -> Result<(), Refused> {
    if !doc.object_or_absent(&["TradersInfo"])? || !doc.object_or_absent(&["TradersInfo", tid])? {
        return Err("the profile's `TradersInfo` is malformed".into());
    }
    if doc.get(&["TradersInfo", tid])?.is_null() {
        doc.set(&["TradersInfo", tid], progression::trader_met(tid, 0.0))?;
    }
    let sales = doc.get(&["TradersInfo", tid, "salesSum"])?.as_f64().unwrap_or(0.0) + amount.max(0.0);
    // Whole numbers stay whole (the client reads an integer when it is one).
    let sales = if sales.fract() == 0.0 && sales < 9e15 { json!(sales as u64) } else { json!(sales) };
    doc.set(&["TradersInfo", tid, "salesSum"], sales)?;
    level_up(doc, tid)
}

/// SPT's `TraderHelper.LevelUp` for trader `tid`.
pub(crate) fn level_up(doc: &mut Doc, tid: &str) -> Result<(), Refused> {
    let levels: Vec<Value> = db::get(&db::path(&["traders", tid, "base", "loyaltyLevels"])).unwrap_or_default();
    if levels.is_empty() {
        return Ok(());
    }
    let player = doc.get(&["Info", "Level"])?.as_f64().unwrap_or(1.0);
    let sales = doc.get(&["TradersInfo", tid, "salesSum"])?.as_f64().unwrap_or(0.0);
    let standing = doc.get(&["TradersInfo", tid, "standing"])?.as_f64().unwrap_or(0.0);
    let standing = (standing * 100.0).round() / 100.0;
    let reached = levels
        .iter()
        .filter(|l| {
            l["minLevel"].as_f64().unwrap_or(0.0) <= player
                && l["minSalesSum"].as_f64().unwrap_or(0.0) <= sales
                && l["minStanding"].as_f64().unwrap_or(0.0) <= standing
        })
        .count() as u64;
    let level = reached.clamp(1, MAX_LOYALTY);
    if doc.get(&["TradersInfo", tid, "loyaltyLevel"])?.as_u64() != Some(level) {
        doc.set(&["TradersInfo", tid, "loyaltyLevel"], json!(level))?;
    }
    Ok(())
}

/// SPT's `GetItemQualityModifier`: an item's condition from 0 to 1 (a med's, food's, key's, fuel's
/// or repair kit's resource left; a repairable item's durability, square-rooted); never quite 0.
pub(crate) fn quality(templates: &mut Templates, item: &Value) -> f64 {
    let upd = &item["upd"];
    let Some(props) = templates.props(tpl(item)) else { return 1.0 };
    let ratio = |have: &Value, max: &Value| match (have.as_f64(), max.as_f64()) {
        (Some(have), Some(max)) if max > 0.0 => Some(have / max),
        _ => None,
    };
    let result = if upd["MedKit"].is_object() {
        ratio(&upd["MedKit"]["HpResource"], &props["MaxHpResource"])
    } else if upd["Repairable"].is_object() {
        let durability = upd["Repairable"]["Durability"].as_f64().unwrap_or(0.0);
        let max = props["MaxDurability"].as_f64().or(upd["Repairable"]["MaxDurability"].as_f64()).unwrap_or(0.0);
        // SPT answers 1 for a durability it cannot read.
        if durability <= 0.0 || max <= 0.0 { Some(1.0) } else { Some((durability / max).sqrt()) }
    } else if upd["FoodDrink"].is_object() {
        ratio(&upd["FoodDrink"]["HpPercent"], &props["MaxResource"])
    } else if upd["Key"]["NumberOfUsages"].as_f64().is_some_and(|n| n > 0.0)
        && props["MaximumNumberOfUsage"].as_f64().is_some_and(|n| n > 0.0)
    {
        // Keys count their uses upwards.
        let max = props["MaximumNumberOfUsage"].as_f64().unwrap_or(1.0);
        Some((max - upd["Key"]["NumberOfUsages"].as_f64().unwrap_or(0.0)) / max)
    } else if upd["Resource"]["UnitsConsumed"].as_f64().is_some_and(|n| n > 0.0) {
        ratio(&upd["Resource"]["Value"], &props["MaxResource"])
    } else if upd["RepairKit"].is_object() {
        ratio(&upd["RepairKit"]["Resource"], &props["MaxRepairResource"])
    } else {
        Some(1.0)
    };
    let result = result.filter(|r| r.is_finite()).unwrap_or(1.0).clamp(0.0, 1.0);
    if result == 0.0 { 0.01 } else { result }
}

/// Is item `id` in the stash: the stash itself or below it?
fn in_stash(doc: &mut Doc, stash: &str, mut id: String) -> Result<bool, Refused> {
    for _ in 0..MAX_PARENT_DEPTH * 8 {
        if id == stash {
            return Ok(true);
        }
        match item(doc, &id)?.and_then(|i| i["parentId"].as_str().map(str::to_owned)) {
            Some(parent) => id = parent,
            None => return Ok(false),
        }
    }
    Ok(false)
}

/// The player's stacks of money `currency` (through the stacks index, in the order they were added).
fn stacks_of(doc: &mut Doc, currency: &str) -> Result<Vec<String>, Refused> {
    Ok(match doc.get(&[INDEX, "stacks", currency])? {
        Value::Object(ids) => ids.into_iter().map(|(id, _)| id).collect(),
        _ => Vec::new(),
    })
}

/// Gives `amount` units of money `currency` into the stash: loose stash stacks are topped up to the
/// template's stack size first, then new stacks go first-fit into the stash grid. No room for all of
/// it: refused (the caller's action is undone whole).
pub(crate) fn give_money(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    currency: &str,
    amount: u64,
) -> Result<(), Refused> {
    if amount == 0 {
        return Ok(());
    }
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let max = templates.stack_max(currency);
    let mut left = amount;
    for id in stacks_of(doc, currency)? {
        if left == 0 {
            break;
        }
        let Some(mut stack) = item(doc, &id)? else { continue };
        if tpl(&stack) != currency || stack["parentId"] != stash.as_str() || stack["slotId"] != "hideout" {
            continue;
        }
        let add = max.map_or(left, |m| m.saturating_sub(count(&stack))).min(left);
        if add > 0 {
            let total = count(&stack) + add;
            set_count(&mut stack, total);
            write(doc, templates, &id, Some(stack))?;
            changes.changed(&id);
            left -= add;
        }
    }
    let mut grid = Grid::of(doc, templates, &stash, "hideout")?.ok_or("the stash has no grid")?;
    let (w, h) = templates.footprint(currency, false);
    while left > 0 {
        // Each new stack takes at least one cell, so this ends within the grid's size.
        let units = max.map_or(left, |m| m.min(left));
        let place = grid.place(doc, w, h)?.ok_or_else(|| format!("no room in the stash for {amount} of {currency}"))?;
        let id = ids::new_id();
        let stack = json!({
            "_id": id, "_tpl": currency, "parentId": stash, "slotId": "hideout", "location": place,
            "upd": { "StackObjectsCount": units, "SpawnedInSession": false },
        });
        write(doc, templates, &id, Some(stack))?;
        changes.created(&id);
        left -= units;
    }
    Ok(())
}

/// Takes `amount` units of money `currency` from the player's stacks in the stash (SPT's
/// `AddPaymentToOutput`, which pays from the stash): the smallest stacks first, so the player keeps
/// fewer, fuller stacks; an emptied stack is removed. Not enough: refused, nothing taken.
pub(crate) fn take_money(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    currency: &str,
    amount: u64,
) -> Result<(), Refused> {
    if amount == 0 {
        return Ok(());
    }
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    let mut owned: Vec<(String, Value)> = Vec::new();
    for id in stacks_of(doc, currency)? {
        if let Some(stack) = item(doc, &id)?
            && tpl(&stack) == currency
            && in_stash(doc, &stash, id.clone())?
        {
            owned.push((id, stack));
        }
    }
    let have: u64 = owned.iter().map(|(_, s)| count(s)).fold(0u64, u64::saturating_add);
    if have < amount {
        return Err(format!("the price is {amount} of {currency}; the stash holds {have}").into());
    }
    owned.sort_by_key(|(_, s)| count(s));
    let mut due = amount;
    for (id, mut stack) in owned {
        if due == 0 {
            break;
        }
        let units = count(&stack);
        let take = units.min(due);
        due -= take;
        if take == units {
            write(doc, templates, &id, None)?;
            changes.removed(&id);
        } else {
            set_count(&mut stack, units - take);
            write(doc, templates, &id, Some(stack))?;
            changes.changed(&id);
        }
    }
    Ok(())
}

/// The most stacks one payment may name (a purchase pays with a handful).
pub(crate) const MAX_PAYMENT_STACKS: usize = 64;

/// One stack a player pays with: its id, the stack as it is, and the units named (or planned) from it.
pub(crate) type Paying = (String, Value, u64);

/// The stacks a purchase names as payment (`[{id, count}]`: a trader's `scheme_items`, a flea offer's
/// `items`, a suit's `items`), each checked (the player's, not a root, named once, holding what is
/// named, of a template the price asks for) and together covering `price`.
pub(crate) fn named_payment(
    doc: &mut Doc,
    named: &[Value],
    price: &BTreeMap<String, u64>,
) -> Result<Vec<Paying>, Refused> {
    if named.len() > MAX_PAYMENT_STACKS {
        return Err(format!("a purchase names at most {MAX_PAYMENT_STACKS} payment stacks").into());
    }
    let mut payment: Vec<Paying> = Vec::new();
    let mut offered: BTreeMap<String, u64> = BTreeMap::new();
    for named in named {
        let id = named["id"].as_str().ok_or("a payment names no stack `id`")?;
        let amount = named["count"].as_u64().filter(|n| *n >= 1).ok_or("a payment's `count` must be at least 1")?;
        let stack = item(doc, id)?.ok_or_else(|| format!("payment stack {id} is not in this profile"))?;
        if is_root(doc, id)? || payment.iter().any(|(p, _, _)| p == id) {
            return Err(format!("payment stack {id} cannot pay (a root container, or named twice)").into());
        }
        if count(&stack) < amount {
            return Err(format!("payment stack {id} holds {}, not {amount}", count(&stack)).into());
        }
        if !price.contains_key(tpl(&stack)) {
            return Err(format!("payment stack {id} ({}) is not part of the price", tpl(&stack)).into());
        }
        let sum = offered.entry(tpl(&stack).to_owned()).or_insert(0);
        *sum = sum.saturating_add(amount);
        payment.push((id.to_owned(), stack, amount));
    }
    for (what, cost) in price {
        let have = offered.get(what).copied().unwrap_or(0);
        if have < *cost {
            return Err(format!("the price is {cost} of {what}; the payment names {have}").into());
        }
    }
    Ok(payment)
}

/// Takes exactly `price` from `payment` (checked by [`named_payment`]), stack by stack in the order
/// named.
pub(crate) fn pay(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    payment: Vec<Paying>,
    price: &BTreeMap<String, u64>,
) -> Result<(), Refused> {
    let mut due = price.clone();
    let mut plan = Vec::new();
    for (id, stack, amount) in payment {
        let Some(owed) = due.get_mut(tpl(&stack)) else { continue };
        let take = amount.min(*owed);
        *owed -= take;
        plan.push((id, stack, take));
    }
    spend(doc, templates, changes, plan)
}

/// Takes the planned units from each stack (at most what it holds); an emptied stack is removed.
pub(crate) fn spend(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    plan: Vec<Paying>,
) -> Result<(), Refused> {
    for (id, mut stack, take) in plan {
        if take == 0 {
            continue;
        }
        let rest = count(&stack).saturating_sub(take);
        if rest == 0 {
            write(doc, templates, &id, None)?;
            changes.removed(&id);
        } else {
            set_count(&mut stack, rest);
            write(doc, templates, &id, Some(stack))?;
            changes.changed(&id);
        }
    }
    Ok(())
}
