//! Learning about items: `Examine` (an item is examined: it enters the profile's `Encyclopedia` and the
//! player earns its template's `ExamineExperience`) and `ReadEncyclopedia` (entries are marked read).
//!
//! SPT grants the experience on every examine; here it is granted once per template (the first time it
//! enters the encyclopedia), so examining one item over and over earns nothing more. SPT's `Intellect`
//! skill points for examining are left out.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused, item};
use crate::progression;
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Value, json};

/// The most entries one `ReadEncyclopedia` marks (a real database has about four thousand items).
const MAX_READ: usize = 8_192;

/// The template an `Examine` is about: `item` is a template of the database, or an item of the
/// player's, or an item of the trader `fromOwner` names.
fn examined(doc: &mut Doc, action: &Value, templates: &mut Templates) -> Result<String, Refused> {
    let id = action["item"].as_str().ok_or("the action names no `item`")?;
    if templates.props(id).is_some() {
        return Ok(id.to_owned());
    }
    let owner = &action["fromOwner"];
    match owner["type"].as_str() {
        None | Some("Profile") => {
            let found = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
            Ok(tpl(&found).to_owned())
        }
        Some("Trader") => {
            let trader = owner["id"].as_str().ok_or("`fromOwner` names no trader `id`")?;
            let items: Vec<Value> = db::get(&db::path(&["traders", trader, "assort", "items"]))
                .map_err(|_| format!("trader {trader} has no assort"))?;
            items
                .iter()
                .find(|i| i["_id"] == id)
                .map(|i| tpl(i).to_owned())
                .ok_or_else(|| format!("trader {trader} offers no item {id}").into())
        }
        Some(other) => Err(format!("an item of a {other} is examined by its template id; {id} is not one").into()),
    }
}

/// `Examine {item, fromOwner?}`.
pub(crate) fn examine(doc: &mut Doc, action: &Value, templates: &mut Templates, _: &mut Changes) -> Outcome {
    let template = examined(doc, action, templates)?;
    if templates.props(&template).is_none() {
        return Err(format!("template {template} is not in the database").into());
    }
    if !doc.object_or_absent(&["Encyclopedia"])? {
        return Err("the profile's `Encyclopedia` is malformed".into());
    }
    if !doc.get(&["Encyclopedia", &template])?.is_null() {
        // Examined before: nothing more to learn or earn.
        return Ok(());
    }
    let reward = templates.props(&template).and_then(|p| p["ExamineExperience"].as_f64()).unwrap_or(0.0).max(0.0);
    doc.set(&["Encyclopedia", &template], json!(false))?;
    if reward > 0.0 {
        let xp = doc.get(&["Info", "Experience"])?.as_f64().unwrap_or(0.0) + reward;
        // Experience is a whole number in SPT's profile.
        doc.set(&["Info", "Experience"], json!(xp.floor() as i64))?;
        if let Some(level) = progression::level_for(xp) {
            doc.set(&["Info", "Level"], level)?;
        }
    }
    Ok(())
}

/// `ReadEncyclopedia {ids}`: each a template of the database, marked read.
pub(crate) fn read_encyclopedia(doc: &mut Doc, action: &Value, templates: &mut Templates, _: &mut Changes) -> Outcome {
    let ids = action["ids"].as_array().ok_or("`ids` must be a list of templates")?;
    if ids.len() > MAX_READ {
        return Err(format!("one read marks at most {MAX_READ} entries").into());
    }
    if !doc.object_or_absent(&["Encyclopedia"])? {
        return Err("the profile's `Encyclopedia` is malformed".into());
    }
    for id in ids {
        let id = id.as_str().ok_or("`ids` must be template ids")?;
        if templates.props(id).is_none() {
            return Err(format!("template {id} is not in the database").into());
        }
        doc.set(&["Encyclopedia", id], json!(true))?;
    }
    Ok(())
}
