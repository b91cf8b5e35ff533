//! Crafts (SPT's `HideoutController` production methods and `ScavCaseRewardGenerator`), each checked
//! against the recipe tables (`hideout.production`) and the profile:
//!
//! - `HideoutSingleProductionStart {recipeId, items, tools}`: a recipe of the db, unlocked (a `locked`
//!   one must be in `UnlockedInfo.unlockedProductionRecipe`), its area built to its level and its other
//!   requirements met, no other craft running in that area; its `Item` requirements are taken from
//!   the named stacks (as a purchase's payment is checked), its `Tool`s must be the player's and are
//!   kept. The craft then runs as `simulate.rs` says (power, `needFuelForAllProductionTime`).
//! - `HideoutContinuousProductionStart {recipeId}`: the water collector or the bitcoin farm, once.
//! - `HideoutScavCaseProductionStart {recipeId, items}`: a scav recipe's price taken; the rewards are
//!   drawn at the start, as SPT's are: for each rarity of the recipe's `endProducts`, between `min` and
//!   `max` items whose handbook price is in `configs.scavcase.rewardItemValueRangeRub.<rarity>`.
//! - `HideoutTakeProduction {recipeId}`: only a finished craft (or the farm's coins): its products go
//!   into the stash, found in raid; a single craft or the scav case ends, a continuous one starts over.
//! - `HideoutCircleOfCultistProductionStart {}`: what lies in the cultist circle's grid (its container
//!   from `Inventory.hideoutAreaStashes."27"`) is sacrificed; its handbook value times a random
//!   multiplier (`configs.hideout.cultistCircle.rewardPriceMultiplerMinMax`) is the budget; rewards are
//!   drawn from the handbook into the circle's grid until the budget or `maxRewardItemCount` is reached,
//!   and the circle runs for the craft time of the budget's threshold (`craftTimeThreshholds`), then
//!   is `AvailableForFinish` (`simulate.rs`) until the client deletes it. SPT's direct rewards (set
//!   sacrifices) and hideout/task rewards are not given.
//! - `HideoutCancelProductionCommand {recipeId}` ends a running single craft (its items are not
//!   returned, as in the game); `HideoutDeleteProductionCommand {recipeId}` removes any craft's entry.
//!
//! Every answer carries the hideout's `Production` as it now is (`profileChanges.production`).

use super::areas;
use super::simulate::{BITCOIN_RECIPE, WATER_RECIPE};
use super::state;
use crate::clock;
use crate::ids::below;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Outcome, Refused, children, count, give_items, item, subtree, write};
use crate::templates::{Templates, handbook_prices, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

/// SPT's scav case area.
const SCAV_CASE: u64 = 14;
/// The most rewards of one rarity a scav case gives (SPT's recipes give a handful).
const MAX_REWARDS: u64 = 16;
/// The most templates a reward is drawn among before giving up on a rarity.
const MAX_DRAWS: usize = 64;
/// SPT's cultist circle area, its grid, and its craft time when no threshold matches (12 hours).
const CIRCLE: u64 = 27;
const CIRCLE_GRID: &str = "CircleOfCultistsGrid1";
const CIRCLE_FALLBACK_SECONDS: u64 = 43_200;
/// SPT's `Money` category: the scav case draws items, not money.
const MONEY: &str = "543be5dd4bdc2deb348b4569";

/// The recipe `id` from the db's list `list` (`recipes`, `scavRecipes`).
fn recipe(list: &str, id: &str) -> Result<Value, Refused> {
    let recipes: Vec<Value> = db::get(&db::path(&["hideout", "production", list])).unwrap_or_default();
    recipes.into_iter().find(|r| r["_id"] == id).ok_or_else(|| format!("recipe {id} is not in the database").into())
}

/// The action's `recipeId`.
fn recipe_id(action: &Value) -> Result<String, Refused> {
    Ok(action["recipeId"].as_str().ok_or("the action names no `recipeId`")?.to_owned())
}

/// A new craft of SPT's `Production` shape.
fn craft(recipe_id: &str, time: u64, continuous: bool, needs_fuel_all: bool) -> Value {
    json!({"Progress": 0, "inProgress": true, "RecipeId": recipe_id, "StartTimestamp": clock::now().to_string(),
           "ProductionTime": time, "Products": [], "GivenItemsInStart": [], "Interrupted": false, "Code": "",
           "Decoded": false, "AvailableForFinish": false, "needFuelForAllProductionTime": needs_fuel_all,
           "SkipTime": 0, "sptIsScavCase": false, "sptIsContinuous": continuous, "sptIsCultistCircle": false})
}

/// Stamps a new craft of `recipe` with what the simulation reads of its recipe and area
/// (`state::rates`), so reading the hideout reads no table.
fn stamp(mut craft: Value, recipe: &Value) -> Value {
    let needs =
        recipe["areaType"].as_u64().and_then(|kind| areas::table(kind).ok()).is_none_or(|a| a["needsFuel"] == true);
    craft[state::NEEDS_FUEL] = json!(needs);
    craft[state::LIMIT] = json!(recipe["productionLimitCount"].as_u64().unwrap_or(0));
    craft
}

/// Stores `hideout` and answers its crafts.
fn stored(doc: &mut Doc, changes: &mut Changes, hideout: Value) -> Outcome {
    changes.answer("production", hideout["Production"].clone());
    state::store(doc, hideout)?;
    Ok(())
}

/// Adds `craft` under `id` to the hideout's `Production`, and arms the timer that tells the mods
/// when it is done (`ready.rs`).
fn add(doc: &mut Doc, changes: &mut Changes, hideout: &mut Value, id: &str, craft: Value) -> Outcome {
    let time = craft["ProductionTime"].as_u64().unwrap_or(0);
    if id != BITCOIN_RECIPE && time > 0 {
        super::ready::production(doc, changes, id, time)?;
    }
    if !hideout["Production"].is_object() {
        hideout["Production"] = json!({});
    }
    hideout["Production"][id] = craft;
    Ok(())
}

/// `HideoutSingleProductionStart {recipeId, items, tools}`.
pub(crate) fn single_start(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = recipe_id(action)?;
    let wanted = recipe("recipes", &id)?;
    if wanted["continuous"] == true {
        return Err(format!("recipe {id} is continuous; it starts with HideoutContinuousProductionStart").into());
    }
    if wanted["locked"] == true {
        let unlocked = doc.get(&["UnlockedInfo", "unlockedProductionRecipe"])?;
        if !unlocked.as_array().is_some_and(|u| u.iter().any(|r| r == id.as_str())) {
            return Err(format!("recipe {id} is locked for this player").into());
        }
    }
    let mut hideout = state::settle(doc)?;
    let area = wanted["areaType"].as_u64().ok_or_else(|| format!("recipe {id} names no area"))?;
    if areas::level(&hideout, area) == 0 {
        return Err(format!("area {area} is not built").into());
    }
    let running: Vec<String> = hideout["Production"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, c)| c["inProgress"] == true && c["sptIsContinuous"] != true && c["sptIsScavCase"] != true)
        .map(|(r, _)| r.clone())
        .collect();
    for other in running {
        if other == id || recipe("recipes", &other).is_ok_and(|r| r["areaType"] == area) {
            return Err(format!("area {area} is already crafting ({other})").into());
        }
    }
    let requirements = wanted["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    areas::check(doc, &hideout, requirements)?;
    for tool in requirements.iter().filter(|r| r["type"] == "Tool") {
        let want = tool["templateId"].as_str().unwrap_or_default();
        let named = action["tools"].as_array().into_iter().flatten().filter_map(|t| t["id"].as_str());
        let mut owned = false;
        for named in named {
            if item(doc, named)?.is_some_and(|i| tpl(&i) == want) {
                owned = true;
                break;
            }
        }
        if !owned {
            return Err(format!("recipe {id} needs the tool {want}; the action names none the player owns").into());
        }
    }
    areas::hand_over(doc, templates, changes, action, &areas::price(requirements))?;
    let time = wanted["productionTime"].as_u64().unwrap_or(0);
    let new = stamp(craft(&id, time, false, wanted["needFuelForAllProductionTime"] == true), &wanted);
    add(doc, changes, &mut hideout, &id, new)?;
    stored(doc, changes, hideout)
}

/// `HideoutContinuousProductionStart {recipeId}`.
pub(crate) fn continuous_start(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = recipe_id(action)?;
    let recipe = recipe("recipes", &id)?;
    if recipe["continuous"] != true {
        return Err(format!("recipe {id} is not continuous").into());
    }
    let mut hideout = state::settle(doc)?;
    if hideout["Production"].get(&id).is_some_and(|c| c["inProgress"] == true) {
        return Err(format!("recipe {id} is already running").into());
    }
    let requirements = recipe["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    areas::check(doc, &hideout, requirements)?;
    let time = recipe["productionTime"].as_u64().unwrap_or(0);
    let new = stamp(craft(&id, time, true, recipe["needFuelForAllProductionTime"] == true), &recipe);
    add(doc, changes, &mut hideout, &id, new)?;
    stored(doc, changes, hideout)
}

/// `HideoutScavCaseProductionStart {recipeId, items}`.
pub(crate) fn scav_case_start(
    doc: &mut Doc,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
) -> Outcome {
    let id = recipe_id(action)?;
    let recipe = recipe("scavRecipes", &id)?;
    let mut hideout = state::settle(doc)?;
    if areas::level(&hideout, SCAV_CASE) == 0 {
        return Err(format!("the scav case (area {SCAV_CASE}) is not built").into());
    }
    if hideout["Production"].as_object().into_iter().flatten().any(|(_, c)| c["sptIsScavCase"] == true) {
        return Err("the scav case is already in use; take what it holds first".into());
    }
    let requirements = recipe["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    areas::hand_over(doc, templates, changes, action, &areas::price(requirements))?;
    let products = scav_rewards(templates, &recipe["endProducts"]);
    let mut case = craft(&id, recipe["productionTime"].as_u64().unwrap_or(0), false, false);
    case["sptIsScavCase"] = json!(true);
    case["Products"] = json!(products);
    add(doc, changes, &mut hideout, &id, case)?;
    stored(doc, changes, hideout)
}

/// The scav case's rewards for a recipe's `endProducts` (`{Common|Rare|Superrare: {min, max}}`).
fn scav_rewards(templates: &mut Templates, end_products: &Value) -> Vec<Value> {
    let config: Value = db::get(&db::path(&["configs", "scavcase"])).unwrap_or(Value::Null);
    let blacklist = config["rewardItemBlacklist"].as_array().cloned().unwrap_or_default();
    let prices = handbook_prices();
    let mut rewards = Vec::new();
    for (rarity, range) in end_products.as_object().into_iter().flatten() {
        let (min, max) = (range["min"].as_u64().unwrap_or(0), range["max"].as_u64().unwrap_or(0));
        let n = if max <= min { min } else { min + below(max - min + 1) }.min(MAX_REWARDS);
        let value = &config["rewardItemValueRangeRub"][rarity.to_lowercase()];
        let (low, high) = (value["min"].as_f64().unwrap_or(0.0), value["max"].as_f64().unwrap_or(f64::MAX));
        let pool: Vec<&String> = prices
            .iter()
            .filter(|(t, p)| **p >= low && **p <= high && !blacklist.iter().any(|b| b == t.as_str()))
            .map(|(t, _)| t)
            .collect();
        for _ in 0..n {
            // A template of the price list may be a category or money: draw again, a bounded number of times.
            for _ in 0..MAX_DRAWS {
                if pool.is_empty() {
                    break;
                }
                let pick = pool[below(pool.len() as u64) as usize].clone();
                let is_item = templates.props(&pick).is_some() && !templates.lineage(&pick).iter().any(|c| c == MONEY);
                if is_item {
                    rewards.push(json!({"_id": crate::ids::new_id(), "_tpl": pick, "upd": {"StackObjectsCount": 1}}));
                    break;
                }
            }
        }
    }
    rewards
}

/// `HideoutTakeProduction {recipeId}`.
pub(crate) fn take(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = recipe_id(action)?;
    let mut hideout = state::settle(doc)?;
    let craft = hideout["Production"].get(&id).cloned().ok_or_else(|| format!("no craft of recipe {id} is running"))?;
    let done = craft["Progress"].as_f64().unwrap_or(0.0) >= craft["ProductionTime"].as_f64().unwrap_or(f64::MAX);
    let given: Vec<Value> = if id == BITCOIN_RECIPE {
        let coins = craft["Products"].as_array().cloned().unwrap_or_default();
        if coins.is_empty() {
            return Err("the bitcoin farm has made no coin yet".into());
        }
        hideout["Production"][&id]["Products"] = json!([]);
        coins
    } else {
        if !done {
            return Err(format!("the craft of recipe {id} is not finished").into());
        }
        if craft["sptIsScavCase"] == true {
            remove(&mut hideout, &id);
            craft["Products"].as_array().cloned().unwrap_or_default()
        } else {
            let recipe = recipe("recipes", &id)?;
            let product = recipe["endProduct"].as_str().ok_or_else(|| format!("recipe {id} names no product"))?;
            let count = recipe["count"].as_u64().unwrap_or(1).max(1);
            if id == WATER_RECIPE || recipe["continuous"] == true {
                // A continuous craft starts over.
                let restarted = &mut hideout["Production"][&id];
                restarted["Progress"] = json!(0);
                restarted["StartTimestamp"] = json!(clock::now().to_string());
                let time = restarted["ProductionTime"].as_u64().unwrap_or(0);
                super::ready::production(doc, changes, &id, time)?;
            } else {
                remove(&mut hideout, &id);
            }
            vec![json!({"_id": crate::ids::new_id(), "_tpl": product, "upd": {"StackObjectsCount": count}})]
        }
    };
    let mut grid = None;
    for product in given {
        let root = product["_id"].clone();
        let reward = json!({"items": [product], "target": root, "findInRaid": true});
        give_items(doc, templates, changes, &reward, &mut grid)?;
    }
    stored(doc, changes, hideout)
}

/// Removes the craft of `id`.
fn remove(hideout: &mut Value, id: &str) {
    if let Some(crafts) = hideout["Production"].as_object_mut() {
        crafts.remove(id);
    }
}

/// `HideoutCancelProductionCommand {recipeId}`.
pub(crate) fn cancel(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = recipe_id(action)?;
    let mut hideout = state::settle(doc)?;
    let craft = hideout["Production"].get(&id).ok_or_else(|| format!("no craft of recipe {id} is running"))?;
    if craft["sptIsContinuous"] == true || craft["sptIsScavCase"] == true {
        return Err(format!("the craft of recipe {id} cannot be cancelled").into());
    }
    remove(&mut hideout, &id);
    stored(doc, changes, hideout)
}

/// `HideoutDeleteProductionCommand {recipeId}`.
pub(crate) fn delete(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = recipe_id(action)?;
    let mut hideout = state::settle(doc)?;
    if hideout["Production"].get(&id).is_none() {
        return Err(format!("no craft of recipe {id} is in the hideout").into());
    }
    remove(&mut hideout, &id);
    stored(doc, changes, hideout)
}

/// `HideoutCircleOfCultistProductionStart {}`: what lies in the circle's grid is sacrificed.
pub(crate) fn circle_start(doc: &mut Doc, _: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let mut hideout = state::settle(doc)?;
    if areas::level(&hideout, CIRCLE) == 0 {
        return Err(format!("the cultist circle (area {CIRCLE}) is not built").into());
    }
    if hideout["Production"].as_object().into_iter().flatten().any(|(_, c)| c["sptIsCultistCircle"] == true) {
        return Err("the circle is busy; take what it gave and clear it first".into());
    }
    let recipes: Vec<Value> = db::get(&db::path(&["hideout", "production", "cultistRecipes"])).unwrap_or_default();
    let id = recipes.first().and_then(|r| r["_id"].as_str()).ok_or("the database has no cultist recipe")?.to_owned();
    let circle = doc.get(&["Inventory", "hideoutAreaStashes", &CIRCLE.to_string()])?;
    let circle = circle.as_str().ok_or("the profile has no cultist circle container")?.to_owned();
    let config: Value = db::get(&db::path(&["configs", "hideout", "cultistCircle"])).unwrap_or(Value::Null);

    // The sacrifice: every item in the circle's grid, with what is inside it, priced by the handbook.
    let prices = handbook_prices();
    let mut given = Vec::new();
    for root in children(doc, &circle)? {
        for part in subtree(doc, &root)? {
            given.extend(item(doc, &part)?);
        }
    }
    if given.is_empty() {
        return Err("nothing lies in the circle".into());
    }
    let value: f64 = given.iter().map(|i| prices.get(tpl(i)).copied().unwrap_or(0.0) * count(i) as f64).sum();
    let (low, high) = (
        config["rewardPriceMultiplerMinMax"]["min"].as_f64().unwrap_or(0.7),
        config["rewardPriceMultiplerMinMax"]["max"].as_f64().unwrap_or(1.4),
    );
    let multiplier = low + (high - low).max(0.0) * below(1_000_001) as f64 / 1_000_000.0;
    let budget = (value * multiplier).round();
    let time = config["craftTimeThreshholds"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["min"].as_f64().unwrap_or(0.0) <= budget && budget <= t["max"].as_f64().unwrap_or(0.0))
        .and_then(|t| t["craftTimeSeconds"].as_u64())
        .unwrap_or(CIRCLE_FALLBACK_SECONDS);
    let time = config["craftTimeOverride"].as_u64().unwrap_or(time);
    for part in given.iter().rev() {
        let gone = part["_id"].as_str().unwrap_or_default();
        write(doc, templates, gone, None)?;
        changes.removed(gone);
    }

    // The rewards: drawn from the handbook until the budget is spent, into the circle's grid.
    let mut grid = Grid::of(doc, templates, &circle, CIRCLE_GRID)?.ok_or("the circle's container has no grid")?;
    let blacklist = config["rewardItemBlacklist"].as_array().cloned().unwrap_or_default();
    let pool: Vec<(&String, f64)> =
        prices.iter().filter(|(t, _)| !blacklist.iter().any(|b| b == t.as_str())).map(|(t, p)| (t, *p)).collect();
    let most = config["maxRewardItemCount"].as_u64().unwrap_or(5).min(MAX_REWARDS);
    let (mut spent, mut rewards) = (0.0, 0);
    for _ in 0..MAX_DRAWS {
        if spent >= budget || rewards >= most || pool.is_empty() {
            break;
        }
        let (pick, price) = pool[below(pool.len() as u64) as usize];
        if templates.props(pick).is_none() || templates.lineage(pick).iter().any(|c| c == MONEY) {
            continue;
        }
        let (w, h) = templates.footprint(pick, false);
        let Some(location) = grid.place(doc, w, h)? else { break };
        let fresh = crate::ids::new_id();
        let reward = json!({"_id": fresh, "_tpl": pick, "parentId": circle, "slotId": CIRCLE_GRID, "location": location,
                            "upd": {"StackObjectsCount": 1, "SpawnedInSession": true}});
        write(doc, templates, &fresh, Some(reward))?;
        changes.created(&fresh);
        spent += price;
        rewards += 1;
    }
    let mut craft = craft(&id, time, false, false);
    craft["sptIsCultistCircle"] = json!(true);
    craft["GivenItemsInStart"] = json!(given);
    add(doc, changes, &mut hideout, &id, craft)?;
    stored(doc, changes, hideout)
}
