//! Time passing in the hideout, as a pure function of the stored state (`state.rs`), the rates the db
//! and the profile set ([`Rates`]) and the elapsed time (SPT's `HideoutHelper.UpdatePlayerHideout`,
//! without its loop).
//!
//! The one property everything here keeps: advancing to `t1` and then to `t2` gives exactly what
//! advancing to `t2` at once gives, so a server that settled the hideout every few seconds and one
//! that was off for six hours agree to the unit. That is why quantities are integers inside: whole
//! seconds of the game's clock, resources (fuel, filters) in millionths of a unit, progress in
//! microseconds, speeds in millionths per second; and why every limit is a countdown taken with
//! `min` (the generator runs while fuel is left, the water collector while a filter is left and
//! power is on, a craft until it is done). SPT floors the bitcoin farm's progress on every tick, so
//! its answer depends on how often it ticked; this one does not.
//!
//! - The generator (area 4), while `active`, burns fuel from its slots in order; with none left it
//!   stops. Air filtering (17) drains its filters while there is power.
//! - A craft of an area that needs fuel runs at full speed with power, at `generatorSpeedWithoutFuel`
//!   without it, and not at all without it when its recipe says `needFuelForAllProductionTime`.
//! - The water collector (6) collects only with power and a filter, and drains the filter as it does.
//! - The bitcoin farm (20) makes coins at `1 + (GPUs − 1) × gpuBoostRate` with power, up to its limit;
//!   full, its progress stays 0.
//! - The scav case and the cultist circle run on time alone; a finished circle is `AvailableForFinish`.

use serde_json::{Value, json};
use std::collections::HashMap;

/// The member of `Hideout` that holds the anchor's time, in seconds of the game's clock.
pub(crate) const ANCHOR: &str = "sptUpdateLastRunTimestamp";

/// Millionths: the fixed point every rate and resource is counted in.
const MICRO: f64 = 1_000_000.0;

/// SPT's `HideoutAreas`.
pub(crate) const GENERATOR: u64 = 4;
pub(crate) const WATER_COLLECTOR: u64 = 6;
pub(crate) const AIR_FILTERING: u64 = 17;
pub(crate) const BITCOIN_FARM: u64 = 20;

/// SPT's recipe ids of the two continuous crafts with rules of their own.
pub(crate) const BITCOIN_RECIPE: &str = "5d5c205bd582a50d042a3c0e";
pub(crate) const WATER_RECIPE: &str = "5d5589c1f934db045e6c5492";
/// The physical bitcoin's template.
pub(crate) const BITCOIN: &str = "59faff1d86f7746c51718c9c";

/// What the simulation reads from the db and the rest of the profile, already as integer rates.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rates {
    /// Fuel burnt per second of power, in millionths of a unit (bonuses applied).
    pub(crate) fuel: u64,
    /// Air filter drained per second of power, in millionths.
    pub(crate) air_filter: u64,
    /// Water filter drained per second of collecting, in millionths.
    pub(crate) water_filter: u64,
    /// A craft's speed without power, in millionths (`generatorSpeedWithoutFuel`).
    pub(crate) unpowered: u64,
    /// `gpuBoostRate`.
    pub(crate) gpu_boost: f64,
    /// The bitcoin recipe's production time, seconds, and how many coins the farm holds.
    pub(crate) bitcoin_time: u64,
    pub(crate) bitcoin_limit: usize,
    /// Per recipe id: whether its area needs fuel to run at full speed.
    pub(crate) needs_fuel: HashMap<String, bool>,
}

/// A number of millionths as the float SPT stores.
fn stored(micro: u64) -> Value {
    json!(micro as f64 / MICRO)
}

/// A stored float as millionths (exact for every value [`stored`] writes).
fn micros(value: &Value) -> u64 {
    value.as_f64().filter(|v| v.is_finite() && *v > 0.0).map_or(0, |v| (v * MICRO).round() as u64)
}

/// The area of `kind` in `hideout.Areas`.
fn area(hideout: &mut Value, kind: u64) -> Option<&mut Value> {
    hideout["Areas"].as_array_mut()?.iter_mut().find(|a| a["type"].as_u64() == Some(kind))
}

/// The resources left in an area's slots, in slot order: `(slot index, millionths)`.
fn resources(area: &Value) -> Vec<(usize, u64)> {
    let slots = area["slots"].as_array().map(Vec::as_slice).unwrap_or_default();
    slots
        .iter()
        .enumerate()
        .filter_map(|(i, slot)| Some((i, micros(&slot["item"].as_array()?.first()?["upd"]["Resource"]["Value"]))))
        .collect()
}

/// Takes `amount` millionths from an area's slots in order; an emptied item stays at 0 (fuel) or
/// leaves its slot (`remove_empty`: filters, as SPT's).
fn drain(area: &mut Value, mut amount: u64, remove_empty: bool) {
    for (i, left) in resources(area) {
        if amount == 0 {
            break;
        }
        if left == 0 {
            continue;
        }
        let take = left.min(amount);
        amount -= take;
        let slot = &mut area["slots"][i];
        if left == take && remove_empty {
            if let Some(slot) = slot.as_object_mut() {
                slot.remove("item");
            }
        } else {
            slot["item"][0]["upd"]["Resource"]["Value"] = stored(left - take);
        }
    }
}

/// Seconds a countdown of `left` millionths lasts at `rate` a second (`u64::MAX`: forever).
fn lasts(left: u64, rate: u64) -> u64 {
    if rate == 0 { u64::MAX } else { left.div_ceil(rate) }
}

/// Advances `hideout`, anchored at its `sptUpdateLastRunTimestamp`, to `to` (game seconds). A `to`
/// before the anchor changes nothing.
pub(crate) fn advance(hideout: &mut Value, rates: &Rates, to: u64) {
    let from = hideout[ANCHOR].as_u64().unwrap_or(to);
    if to < from {
        return;
    }
    let dt = to - from;

    // Power: how many of the `dt` seconds the generator ran.
    let mut powered = 0;
    if let Some(generator) = area(hideout, GENERATOR)
        && generator["active"] == true
    {
        let fuel: u64 = resources(generator).iter().map(|(_, left)| left).sum();
        powered = dt.min(lasts(fuel, rates.fuel));
        drain(generator, rates.fuel.saturating_mul(powered).min(fuel), false);
        if fuel <= rates.fuel.saturating_mul(dt) && rates.fuel > 0 {
            generator["active"] = json!(false);
        }
    }
    if let Some(filters) = area(hideout, AIR_FILTERING) {
        let left: u64 = resources(filters).iter().map(|(_, l)| l).sum();
        drain(filters, rates.air_filter.saturating_mul(powered).min(left), true);
    }
    let water_filter: u64 = area(hideout, WATER_COLLECTOR).map_or(0, |a| resources(a).iter().map(|(_, l)| l).sum());
    let gpus = area(hideout, BITCOIN_FARM).map_or(0, |a| {
        a["slots"]
            .as_array()
            .map_or(0, |s| s.iter().filter(|s| s["item"].as_array().is_some_and(|i| !i.is_empty())).count())
    });

    let mut water_drained = 0;
    if let Some(productions) = hideout["Production"].as_object_mut() {
        for (id, craft) in productions.iter_mut() {
            if !craft.is_object() || craft["inProgress"] == false {
                continue;
            }
            let total = micros(&craft["ProductionTime"]);
            let progress = micros(&craft["Progress"]);
            if id == BITCOIN_RECIPE {
                bitcoin(craft, rates, gpus, powered);
                continue;
            }
            let remaining = total.saturating_sub(progress);
            let gained = if id == WATER_RECIPE {
                // Collecting needs power and a filter, and drains the filter as it goes.
                let seconds = powered.min(lasts(water_filter, rates.water_filter)).min(remaining.div_ceil(1_000_000));
                water_drained = rates.water_filter.saturating_mul(seconds).min(water_filter);
                seconds * 1_000_000
            } else if craft["sptIsScavCase"] == true || craft["sptIsCultistCircle"] == true {
                dt.saturating_mul(1_000_000)
            } else if rates.needs_fuel.get(id.as_str()).copied().unwrap_or(true) {
                let unpowered = if craft["needFuelForAllProductionTime"] == true { 0 } else { rates.unpowered };
                powered.saturating_mul(1_000_000).saturating_add((dt - powered).saturating_mul(unpowered))
            } else {
                dt.saturating_mul(1_000_000)
            };
            let now = progress.saturating_add(gained).min(total);
            craft["Progress"] = stored(now);
            if craft["sptIsCultistCircle"] == true && now >= total {
                // What the client expects of a finished circle (SPT's `FlagCultistCircleCraftAsComplete`).
                craft["AvailableForFinish"] = json!(true);
                craft["inProgress"] = json!(false);
                craft["Progress"] = json!(0);
            }
        }
    }
    if water_drained > 0
        && let Some(collector) = area(hideout, WATER_COLLECTOR)
    {
        drain(collector, water_drained, true);
    }
    if let Some(improvements) = hideout["Improvements"].as_object_mut() {
        for improvement in improvements.values_mut() {
            if improvement["improveCompleteTimestamp"].as_u64().is_some_and(|at| at <= to) {
                improvement["completed"] = json!(true);
            }
        }
    }
    hideout[ANCHOR] = json!(to);
}

/// The bitcoin farm over `powered` seconds with `gpus` cards: progress at `1 + (gpus − 1) ×
/// gpuBoostRate` of real time, a coin each `bitcoin_time`, none past the limit (then progress 0).
fn bitcoin(craft: &mut Value, rates: &Rates, gpus: usize, powered: u64) {
    let total = rates.bitcoin_time.saturating_mul(1_000_000);
    let coins = |craft: &Value| craft["Products"].as_array().map_or(0, Vec::len);
    if gpus == 0 || total == 0 || coins(craft) >= rates.bitcoin_limit {
        if coins(craft) >= rates.bitcoin_limit {
            craft["Progress"] = stored(0);
        }
        return;
    }
    let speed = ((1.0 + (gpus as f64 - 1.0) * rates.gpu_boost) * MICRO).round().max(0.0) as u64;
    let mut progress = micros(&craft["Progress"]).saturating_add(speed.saturating_mul(powered));
    if !craft["Products"].is_array() {
        craft["Products"] = json!([]);
    }
    while progress >= total && coins(craft) < rates.bitcoin_limit {
        progress -= total;
        if let Some(products) = craft["Products"].as_array_mut() {
            products.push(json!({"_id": crate::ids::new_id(), "_tpl": BITCOIN, "upd": {"StackObjectsCount": 1}}));
        }
    }
    if coins(craft) >= rates.bitcoin_limit {
        progress = 0;
    }
    craft["Progress"] = stored(progress);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates() -> Rates {
        Rates {
            fuel: 1_300,
            air_filter: 4_700,
            water_filter: 3_330,
            unpowered: 150_000,
            gpu_boost: 0.04,
            bitcoin_time: 40_000,
            bitcoin_limit: 3,
            needs_fuel: HashMap::from([
                ("craft".to_owned(), true),
                ("dsp".to_owned(), true),
                ("lav".to_owned(), false),
            ]),
        }
    }

    fn slot(tpl: &str, resource: Option<f64>) -> Value {
        match resource {
            Some(r) => {
                json!({"locationIndex": 0, "item": [{"_id": "i", "_tpl": tpl, "upd": {"Resource": {"Value": r}}}]})
            }
            None => json!({"locationIndex": 0, "item": [{"_id": "g", "_tpl": tpl}]}),
        }
    }

    /// A late-game hideout: two tanks, a water filter, air filters, 4 GPUs, a craft of each kind.
    fn hideout(fuel: f64) -> Value {
        let production = |t: u64, extra: Value| {
            let mut p = json!({"Progress": 0, "inProgress": true, "ProductionTime": t, "Products": []});
            p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            p
        };
        json!({
            ANCHOR: 1_000,
            "Areas": [
                {"type": GENERATOR, "level": 3, "active": true, "slots": [slot("f", Some(fuel)), slot("f", Some(fuel))]},
                {"type": AIR_FILTERING, "level": 1, "active": true, "slots": [slot("a", Some(300.0))]},
                {"type": WATER_COLLECTOR, "level": 3, "active": true, "slots": [slot("w", Some(100.0))]},
                {"type": BITCOIN_FARM, "level": 3, "active": true,
                 "slots": [slot("gpu", None), slot("gpu", None), slot("gpu", None), slot("gpu", None)]},
            ],
            "Production": {
                "craft": production(20_000, json!({})),
                "dsp": production(20_000, json!({"needFuelForAllProductionTime": true})),
                "lav": production(20_000, json!({})),
                WATER_RECIPE: production(30_000, json!({})),
                BITCOIN_RECIPE: production(40_000, json!({})),
                "scav": production(2_400, json!({"sptIsScavCase": true})),
                "circle": production(3_600, json!({"sptIsCultistCircle": true})),
            },
            "Improvements": {"x": {"completed": false, "improveCompleteTimestamp": 5_000}},
        })
    }

    /// What must agree between two runs (coin ids are new each run).
    fn view(mut h: Value) -> Value {
        for craft in h["Production"].as_object_mut().unwrap().values_mut() {
            let n = craft["Products"].as_array().map_or(0, Vec::len);
            craft["Products"] = json!(n);
        }
        h
    }

    #[test]
    fn settling_often_agrees_with_settling_once() {
        for fuel in [5.0, 30.0, 100.0] {
            let mut once = hideout(fuel);
            advance(&mut once, &rates(), 1_000 + 6 * 3_600);
            for step in [1, 7, 600, 3_599] {
                let mut often = hideout(fuel);
                let mut t = 1_000;
                while t < 1_000 + 6 * 3_600 {
                    t = (t + step).min(1_000 + 6 * 3_600);
                    advance(&mut often, &rates(), t);
                }
                assert_eq!(view(often), view(once.clone()), "fuel {fuel}, a settle every {step} s");
            }
        }
    }

    #[test]
    fn without_fuel_the_generator_stops_and_crafts_slow_down() {
        let mut h = hideout(1.0);
        // 2 units at 0.0013/s: 1539 s of power, then off.
        advance(&mut h, &rates(), 1_000 + 10_000);
        assert_eq!(h["Areas"][0]["active"], false);
        let powered = 2_000_000u64.div_ceil(1_300);
        assert_eq!(powered, 1_539);
        let p = &h["Production"];
        assert_eq!(micros(&p["dsp"]["Progress"]), powered * 1_000_000, "a craft that needs power stops");
        assert_eq!(micros(&p["craft"]["Progress"]), powered * 1_000_000 + (10_000 - powered) * 150_000);
        assert_eq!(micros(&p["lav"]["Progress"]), 10_000 * 1_000_000, "an area without fuel needs runs on");
        assert_eq!(micros(&p["scav"]["Progress"]), 2_400 * 1_000_000, "capped at its time");
        assert_eq!(p["circle"]["AvailableForFinish"], true);
        assert_eq!(h["Improvements"]["x"]["completed"], true);
    }

    #[test]
    fn the_bitcoin_farm_follows_spts_formula_to_its_limit() {
        let mut h = hideout(100.0);
        advance(&mut h, &rates(), 1_000 + 86_400);
        // 4 GPUs: 1.12 of real time; 200 units of fuel last 42.7 h, so power all day.
        let progress = 86_400 * 1_120_000u64;
        let farm = &h["Production"][BITCOIN_RECIPE];
        assert_eq!(farm["Products"].as_array().unwrap().len() as u64, progress / 40_000_000_000);
        assert_eq!(micros(&farm["Progress"]), progress % 40_000_000_000);
        advance(&mut h, &rates(), 1_000 + 3 * 86_400);
        let farm = &h["Production"][BITCOIN_RECIPE];
        assert_eq!(farm["Products"].as_array().unwrap().len(), 3, "full at its limit");
        assert_eq!(micros(&farm["Progress"]), 0);
    }

    #[test]
    fn the_water_collector_needs_power_and_a_filter_and_drains_it() {
        let mut h = hideout(100.0);
        h["Areas"][2]["slots"] = json!([slot("w", Some(1.0))]);
        advance(&mut h, &rates(), 1_000 + 3_600);
        // 1 unit at 0.00333/s lasts 301 s, then the filter is gone and collecting stops.
        assert_eq!(micros(&h["Production"][WATER_RECIPE]["Progress"]), 301 * 1_000_000);
        assert!(h["Areas"][2]["slots"][0].get("item").is_none());
    }

    #[test]
    fn time_before_the_anchor_changes_nothing() {
        let mut h = hideout(100.0);
        let before = h.clone();
        advance(&mut h, &rates(), 10);
        assert_eq!(h, before);
    }
}
