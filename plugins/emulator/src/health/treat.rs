//! `Eat`, `Heal` and `RestoreHealth` (SPT's `HealthController.OffRaidEat`, `OffRaidHeal`,
//! `HealthTreatment`). Each stores the health regenerated to now first (`super::settle`), checks
//! everything, then changes it and answers `health` in `profileChanges`.
//!
//! - `Eat {item, count}`: food or drink the player owns (`MaxResource` in its template); `count` units
//!   of its resource (`upd.FoodDrink.HpPercent`, full when absent) are used, at most what is left. A
//!   single-use item (`MaxResource` 1) gives its `effects_health` `Hydration`/`Energy` values whole and
//!   goes; a multi-use one gives each value in proportion to the units used (SPT adds `count` to both,
//!   which makes a salty snack quench thirst), and goes when less than one unit is left. Each within
//!   0 and its maximum.
//! - `Heal {item, part, count}`: a med the player owns (`MaxHpResource` in its template); `count` of its
//!   `upd.MedKit.HpResource` (full when absent) is used, at most what is left; the body part must be the
//!   profile's. As SPT: each effect on the part the med's `effects_damage` names goes and costs its
//!   `cost` of the count, and the rest heals the part, up to its maximum; an emptied med goes.
//! - `RestoreHealth {trader, difference: {BodyParts: {<part>: {Health, Effects}}, Energy, Hydration}}`:
//!   the trader must be a medic (`base.medic`). The client's `items` (its payment) are not read: the
//!   game prices the treatment itself from `globals.config.Health.HealPrice` (each missing hit point at
//!   `HealthPointPrice`, energy and hydration points at theirs) and each named effect's
//!   `globals.config.Health.Effects.<effect>.RemovePrice`, times `1 + heal_price_coef / 100` at the
//!   player's loyalty level, converted into the trader's currency and rounded up; free below level
//!   `TrialLevels`. The money comes off the player's stacks of it (`economy::take_money`); the named
//!   parts are healed full and their named effects removed, energy and hydration filled when named.

use crate::economy::{self, Prices};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, is_root, item, subtree, write};
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

use super::regen::number;

/// The most resource units one action names: far beyond any item's resource.
const MAX_UNITS: u64 = 100_000;

/// The item an action names: owned, not a root; its id, state and template props.
fn used(doc: &mut Doc, templates: &mut Templates, action: &Value) -> Result<(String, Value, Value), Refused> {
    let id = action["item"].as_str().ok_or("the action names no `item`")?;
    let found = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if is_root(doc, id)? {
        return Err(format!("item {id} is a root container").into());
    }
    let props = templates.props(tpl(&found)).cloned().ok_or_else(|| format!("item {id} has no template"))?;
    Ok((id.to_owned(), found, props))
}

/// A whole, positive `count`, bounded.
fn units(action: &Value) -> Result<u64, Refused> {
    action["count"]
        .as_u64()
        .filter(|n| (1..=MAX_UNITS).contains(n))
        .ok_or_else(|| format!("`count` must be a whole number from 1 to {MAX_UNITS}").into())
}

/// Removes item `id` with everything inside it.
fn remove(doc: &mut Doc, templates: &mut Templates, changes: &mut Changes, id: &str) -> Outcome {
    let gone = subtree(doc, id)?;
    for removed in gone.iter().rev() {
        write(doc, templates, removed, None)?;
    }
    for removed in &gone {
        changes.removed(removed);
    }
    Ok(())
}

/// Adds `by` to a `{Current, Maximum}`, within 0 and the maximum.
fn add(value: &mut Value, by: f64) {
    let current = value["Current"].as_f64().unwrap_or(0.0);
    let maximum = value["Maximum"].as_f64().unwrap_or(current);
    value["Current"] = number((current + by).clamp(0.0, maximum.max(0.0)));
}

/// `Eat`: see the module doc.
pub(crate) fn eat(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut food, props) = used(doc, templates, action)?;
    let max = props["MaxResource"].as_f64().filter(|m| *m >= 1.0).ok_or_else(|| format!("item {id} is not food"))?;
    if !props["effects_health"].is_object() {
        return Err(format!("item {id} is not food").into());
    }
    let count = units(action)? as f64;
    let left = food["upd"]["FoodDrink"]["HpPercent"].as_f64().unwrap_or(max);
    if count > left {
        return Err(format!("item {id} has {left} left, not {count}").into());
    }
    let mut health = super::settle(doc)?;
    let single = max == 1.0;
    for factor in ["Hydration", "Energy"] {
        let Some(value) = props["effects_health"][factor]["value"].as_f64() else { continue };
        let gain = if single { value } else { value * count / max };
        add(&mut health[factor], gain);
    }
    let rest = left - count;
    if single || rest < 1.0 {
        remove(doc, templates, changes, &id)?;
    } else {
        if !food["upd"].is_object() {
            food["upd"] = json!({});
        }
        food["upd"]["FoodDrink"] = json!({ "HpPercent": number(rest) });
        write(doc, templates, &id, Some(food))?;
        changes.changed(&id);
    }
    doc.set(&["Health"], health.clone())?;
    changes.answer("health", health);
    Ok(())
}

/// `Heal`: see the module doc.
pub(crate) fn heal(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let (id, mut med, props) = used(doc, templates, action)?;
    let max = props["MaxHpResource"].as_f64().filter(|m| *m >= 1.0).ok_or_else(|| format!("item {id} is not a med"))?;
    let part = action["part"].as_str().ok_or("the heal names no body `part`")?;
    let count = units(action)? as f64;
    let left = med["upd"]["MedKit"]["HpResource"].as_f64().unwrap_or(max);
    if count > left {
        return Err(format!("item {id} has {left} left, not {count}").into());
    }
    let mut health = super::settle(doc)?;
    if !health["BodyParts"][part].is_object() {
        return Err(format!("the profile has no body part `{part}`").into());
    }
    let mut amount = count;
    let body = &mut health["BodyParts"][part];
    if let Some(effects) = body.get_mut("Effects").and_then(Value::as_object_mut) {
        effects.retain(|effect, _| match props["effects_damage"][effect.as_str()].as_object() {
            Some(removes) => {
                amount -= removes.get("cost").and_then(Value::as_f64).unwrap_or(0.0);
                false
            }
            None => true,
        });
    }
    add(&mut body["Health"], amount.max(0.0));
    let rest = left - count;
    if rest <= 0.0 {
        remove(doc, templates, changes, &id)?;
    } else {
        if !med["upd"].is_object() {
            med["upd"] = json!({});
        }
        med["upd"]["MedKit"] = json!({ "HpResource": number(rest) });
        write(doc, templates, &id, Some(med))?;
        changes.changed(&id);
    }
    doc.set(&["Health"], health.clone())?;
    changes.answer("health", health);
    Ok(())
}

/// The most body parts one treatment names (a profile has seven).
const MAX_PARTS: usize = 16;
/// The most effects named on one part.
const MAX_EFFECTS: usize = 32;

/// `RestoreHealth`: see the module doc.
pub(crate) fn restore(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let tid = action["trader"].as_str().ok_or("the treatment names no `trader`")?;
    if db::get::<bool>(&db::path(&["traders", tid, "base", "medic"])) != Ok(true) {
        return Err(format!("trader {tid} does not heal").into());
    }
    let difference = &action["difference"];
    let named = difference["BodyParts"].as_object().cloned().unwrap_or_default();
    if named.len() > MAX_PARTS {
        return Err(format!("a treatment names at most {MAX_PARTS} body parts").into());
    }
    let price: Value = db::get("globals.config.Health.HealPrice").unwrap_or(Value::Null);
    let point = |name: &str| price[name].as_f64().filter(|p| p.is_finite() && *p >= 0.0).unwrap_or(0.0);
    let mut health = super::settle(doc)?;
    let mut roubles = 0.0;
    for (part, asked) in &named {
        let body = &mut health["BodyParts"][part.as_str()];
        if !body.is_object() {
            return Err(format!("the profile has no body part `{part}`").into());
        }
        if asked["Health"].as_f64().is_some_and(|h| h > 0.0) {
            let (current, maximum) =
                (body["Health"]["Current"].as_f64().unwrap_or(0.0), body["Health"]["Maximum"].as_f64().unwrap_or(0.0));
            roubles += (maximum - current).max(0.0) * point("HealthPointPrice");
            body["Health"]["Current"] = number(maximum);
        }
        let effects = asked["Effects"].as_array().map(Vec::as_slice).unwrap_or_default();
        if effects.len() > MAX_EFFECTS {
            return Err(format!("a treatment names at most {MAX_EFFECTS} effects a part").into());
        }
        for effect in effects {
            let name = effect.as_str().ok_or("an effect is named by a string")?;
            let Some(on) = body.get_mut("Effects").and_then(Value::as_object_mut) else {
                return Err(format!("body part {part} has no effect {name}").into());
            };
            if on.shift_remove(name).is_none() {
                return Err(format!("body part {part} has no effect {name}").into());
            }
            let remove: f64 =
                db::get(&db::path(&["globals", "config", "Health", "Effects", name, "RemovePrice"])).unwrap_or(0.0);
            roubles += remove.max(0.0);
        }
        if body["Effects"].as_object().is_some_and(|e| e.is_empty()) {
            body["Effects"] = json!({});
        }
    }
    for (factor, cost) in [("Energy", "EnergyPointPrice"), ("Hydration", "HydrationPointPrice")] {
        if difference[factor].as_f64().is_some_and(|d| d > 0.0) {
            let value = &mut health[factor];
            let (current, maximum) =
                (value["Current"].as_f64().unwrap_or(0.0), value["Maximum"].as_f64().unwrap_or(0.0));
            roubles += (maximum - current).max(0.0) * point(cost);
            value["Current"] = number(maximum);
        }
    }
    let coefficient = economy::coefficient(doc, tid, "heal_price_coef")?;
    let level = doc.get(&["Info", "Level"])?.as_f64().unwrap_or(1.0);
    let trial = price["TrialLevels"].as_f64().is_some_and(|t| level < t);
    let currency = economy::currency(tid)?;
    let mut prices = Prices::default();
    let cost = if trial { 0.0 } else { prices.roubles_to(roubles * (1.0 + coefficient / 100.0), currency).ceil() };
    if !(0.0..9e15).contains(&cost) {
        return Err("the treatment's price is out of range".into());
    }
    economy::take_money(doc, templates, changes, currency, cost as u64)?;
    if cost > 0.0 {
        economy::add_sales(doc, tid, cost)?;
    }
    doc.set(&["Health"], health.clone())?;
    changes.answer("health", health);
    Ok(())
}
