//! The player's wish list: `AddToWishList`, `RemoveFromWishList` and `ChangeWishlistItemCategory` on
//! the profile's `WishList`, `{template: category}` (SPT's `WishlistController`).
//!
//! Each template must be one of the database's, a category a small whole number, the list bounded; a
//! template removed or re-categorised must be on the list.

use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::templates::Templates;
use serde_json::{Map, Value, json};

/// The most templates on a wish list (the client's list view shows a few hundred comfortably).
const MAX_WISHES: usize = 1_024;
/// The highest category the client numbers (its groups are 0 to 5; room for more).
const MAX_CATEGORY: u64 = 64;

fn wishes(doc: &mut Doc) -> Result<Map<String, Value>, Refused> {
    match doc.get(&["WishList"])? {
        Value::Object(list) => Ok(list),
        Value::Null => Ok(Map::new()),
        _ => Err("the profile's `WishList` is malformed".into()),
    }
}

fn category(value: &Value) -> Result<u64, String> {
    value
        .as_u64()
        .filter(|c| *c <= MAX_CATEGORY)
        .ok_or_else(|| format!("a category is a whole number up to {MAX_CATEGORY}"))
}

fn save(doc: &mut Doc, list: Map<String, Value>) -> Outcome {
    doc.set(&["WishList"], Value::Object(list))?;
    Ok(())
}

/// `AddToWishList {items: {template: category}}`.
pub(crate) fn add(doc: &mut Doc, action: &Value, templates: &mut Templates, _: &mut Changes) -> Outcome {
    let sent = action["items"].as_object().ok_or("`items` must map templates to categories")?;
    if sent.len() > MAX_WISHES {
        return Err(format!("a wish list holds at most {MAX_WISHES} templates").into());
    }
    let mut list = wishes(doc)?;
    for (wished, group) in sent {
        if templates.props(wished).is_none() {
            return Err(format!("template {wished} is not in the database").into());
        }
        list.insert(wished.clone(), json!(category(group)?));
    }
    if list.len() > MAX_WISHES {
        return Err(format!("a wish list holds at most {MAX_WISHES} templates").into());
    }
    save(doc, list)
}

/// `RemoveFromWishList {items: [template]}`.
pub(crate) fn remove(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let sent = action["items"].as_array().ok_or("`items` must be a list of templates")?;
    if sent.len() > MAX_WISHES {
        return Err(format!("a wish list holds at most {MAX_WISHES} templates").into());
    }
    let mut list = wishes(doc)?;
    for wished in sent {
        let wished = wished.as_str().ok_or("`items` must be templates")?;
        if list.shift_remove(wished).is_none() {
            return Err(format!("template {wished} is not on the wish list").into());
        }
    }
    save(doc, list)
}

/// `ChangeWishlistItemCategory {item, category}`.
pub(crate) fn recategorise(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let wished = action["item"].as_str().ok_or("the action names no template `item`")?;
    let group = category(&action["category"])?;
    let mut list = wishes(doc)?;
    let Some(entry) = list.get_mut(wished) else {
        return Err(format!("template {wished} is not on the wish list").into());
    };
    *entry = json!(group);
    save(doc, list)
}
