//! The hideout as the profile stores it: SPT's `Hideout` (`Areas`, `Production`, `Improvements`,
//! `Customization`, `MannequinPoses`, `HideoutCounters`, …) as it was at its
//! `sptUpdateLastRunTimestamp` (the anchor). Time passing is `simulate::advance`, a pure function of
//! the anchored state, the profile's bonuses and skills, and the elapsed time: what the game shows is
//! the stored state advanced to now ([`current`], [`shown`]) and reading writes nothing, so a server
//! that was off for six hours shows what one kept running would. An action that changes the hideout
//! first stores the state advanced to now ([`settle`]), changes it, and writes it back ([`store`]).

use super::simulate::{self, ANCHOR, BITCOIN_RECIPE, Rates};
use crate::clock;
use crate::profile::doc::Doc;
use modhost_sdk::db;
use modhost_sdk::{Error, Result};
use serde_json::Value;

/// The batch's profile's hideout as it is now; nothing is written.
pub(crate) fn current(doc: &mut Doc) -> Result<Value> {
    let mut hideout = doc.get(&["Hideout"])?;
    if !hideout.is_object() {
        return Err(Error::Invalid("the profile has no `Hideout`".into()));
    }
    let rates = rates(&hideout, &doc.get(&["Bonuses"])?);
    simulate::advance(&mut hideout, &rates, clock::now());
    Ok(hideout)
}

/// Stores the hideout as it is now (advanced) and answers it: what an action then changes.
pub(crate) fn settle(doc: &mut Doc) -> Result<Value> {
    let hideout = current(doc)?;
    store(doc, hideout.clone())?;
    Ok(hideout)
}

/// The uid of the batch's profile (its store key is `profile.<uid>`).
pub(crate) fn uid(doc: &Doc) -> &str {
    doc.key().strip_prefix("profile.").unwrap_or_default()
}

/// Writes `hideout` (a settled hideout an action changed) back to the batch's profile.
pub(crate) fn store(doc: &mut Doc, hideout: Value) -> Result<()> {
    doc.set(&["Hideout"], hideout)
}

/// A profile in SPT's shape with its hideout shown as it is now (the profile list). The shown
/// hideout keeps the stored anchor: the client never reads it, and a profile read twice with nothing
/// running in its hideout reads the same (a restart between the reads changes nothing).
pub(crate) fn shown(mut profile: Value) -> Value {
    if profile["Hideout"].is_object() {
        let rates = rates(&profile["Hideout"], &profile["Bonuses"]);
        let anchor = profile["Hideout"][ANCHOR].clone();
        simulate::advance(&mut profile["Hideout"], &rates, clock::now());
        profile["Hideout"][ANCHOR] = anchor;
    }
    profile
}

/// A craft's stamp: whether its area needs fuel to run at full speed.
pub(crate) const NEEDS_FUEL: &str = "sptAreaNeedsFuel";
/// A craft's stamp: how many products it holds at most (the bitcoin farm's coins).
pub(crate) const LIMIT: &str = "sptProductionLimit";

/// The rates `hideout` runs at: SPT's `hideout.settings`, the profile's `FuelConsumption` bonuses, and
/// per running craft its stamps ([`NEEDS_FUEL`], [`LIMIT`], its `ProductionTime`).
fn rates(hideout: &Value, bonuses: &Value) -> Rates {
    let settings: Value = db::get(&db::path(&["hideout", "settings"])).unwrap_or(Value::Null);
    let setting =
        |name: &str, default: f64| settings[name].as_f64().filter(|v| v.is_finite() && *v >= 0.0).unwrap_or(default);
    let bonus: f64 = bonuses
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "FuelConsumption")
        .filter_map(|b| b["value"].as_f64())
        .sum();
    let fuel = (setting("generatorFuelFlowRate", 0.0013) * (1.0 + bonus / 100.0).max(0.0) * 1e6).round() as u64;
    let mut rates = Rates {
        fuel,
        air_filter: (setting("airFilterUnitFlowRate", 0.0047) * 1e6).round() as u64,
        water_filter: 3_330,
        unpowered: (setting("generatorSpeedWithoutFuel", 0.15) * 1e6).round() as u64,
        gpu_boost: setting("gpuBoostRate", 0.041_225),
        ..Rates::default()
    };
    // What each craft runs at was stamped into it when it started (`production.rs`), so a read reads
    // no recipe table (SPT's are hundreds of kilobytes); a craft stored without the stamps (started
    // before they existed) has its recipe and area looked up.
    let mut unstamped = Vec::new();
    for (id, craft) in hideout["Production"].as_object().into_iter().flatten() {
        if craft["sptIsScavCase"] == true || craft["sptIsCultistCircle"] == true {
            // They run on time alone (`simulate.rs`).
            continue;
        }
        match craft[NEEDS_FUEL].as_bool() {
            Some(needs) => {
                rates.needs_fuel.insert(id.clone(), needs);
            }
            None => unstamped.push(id.clone()),
        }
        if id == BITCOIN_RECIPE {
            rates.bitcoin_time = craft["ProductionTime"].as_u64().unwrap_or(0);
            rates.bitcoin_limit = craft[LIMIT].as_u64().unwrap_or(3) as usize;
        }
    }
    if unstamped.is_empty() {
        return rates;
    }
    let recipes: Vec<Value> = db::get(&db::path(&["hideout", "production", "recipes"])).unwrap_or_default();
    let areas: Vec<Value> = db::get(&db::path(&["hideout", "areas"])).unwrap_or_default();
    for recipe in recipes.iter().filter(|r| unstamped.iter().any(|id| r["_id"] == id.as_str())) {
        let id = recipe["_id"].as_str().unwrap_or_default().to_owned();
        let needs = areas.iter().find(|a| a["type"] == recipe["areaType"]).is_none_or(|a| a["needsFuel"] == true);
        if id == BITCOIN_RECIPE && hideout["Production"][&id][LIMIT].is_null() {
            rates.bitcoin_limit = recipe["productionLimitCount"].as_u64().unwrap_or(3) as usize;
        }
        rates.needs_fuel.insert(id, needs);
    }
    rates
}
