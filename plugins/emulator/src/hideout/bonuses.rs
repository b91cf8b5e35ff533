//! The bonuses a built level gives (SPT's `HideoutHelper.ApplyPlayerUpgradesBonus`): a `StashSize`
//! bonus makes the stash the bonus's bigger template (the client reads the grid from it); every other
//! bonus (fuel use, regeneration, craft speed, …) is listed in the profile's `Bonuses`, where the rules
//! that honour it read it (`state.rs` reads `FuelConsumption`). A bonus listed once stays once.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, item, write};
use crate::templates::Templates;
use serde_json::{Value, json};

/// The most bonuses a profile lists (a fully built hideout gives about a hundred).
const MAX_BONUSES: usize = 1_024;

/// Applies one bonus of a level just built.
pub(crate) fn apply(doc: &mut Doc, templates: &mut Templates, changes: &mut Changes, bonus: &Value) -> Outcome {
    if bonus["type"] == "StashSize" {
        let tpl = bonus["templateId"].as_str().ok_or("a `StashSize` bonus names no `templateId`")?;
        if templates.grid(tpl, "hideout").is_none() {
            return Err(format!("the stash template {tpl} is not in the database").into());
        }
        let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
        let mut item = item(doc, &stash)?.ok_or("the profile's stash item is missing")?;
        if item["_tpl"] != tpl {
            item["_tpl"] = json!(tpl);
            write(doc, templates, &stash, Some(item))?;
            changes.changed(&stash);
        }
        return Ok(());
    }
    let mut bonuses = doc.get(&["Bonuses"])?;
    if !bonuses.is_array() {
        bonuses = json!([]);
    }
    let list = bonuses.as_array_mut().ok_or("the profile's bonuses are malformed")?;
    if list.iter().any(|b| b["id"] == bonus["id"] && !bonus["id"].is_null()) {
        return Ok(());
    }
    if list.len() >= MAX_BONUSES {
        return Err(format!("the profile lists {MAX_BONUSES} bonuses already").into());
    }
    list.push(bonus.clone());
    doc.set(&["Bonuses"], bonuses)?;
    Ok(())
}
