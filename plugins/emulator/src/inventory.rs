//! `/client/game/profile/items/moving`: inventory actions on the session's profile, in order, answered
//! with the SPT envelope (`warnings`, `profileChanges`). A failed or unknown action becomes a warning
//! with its reason, never a silent success, and changes nothing; the rest of the batch still applies.
//!
//! The profile is read with its version and written back with `set_if_version`, so a change another
//! session made in between is never overwritten (the batch then answers err 1).

use crate::profile;
use modhost_sdk::{Error, Request, Response, Result, db, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;

#[derive(Deserialize)]
struct Batch {
    #[serde(default)]
    data: Vec<Value>,
}

/// A grid's size and an item's footprint come from the templates in the db; read each once a batch.
#[derive(Default)]
struct Templates(HashMap<String, Option<Value>>);

impl Templates {
    fn props(&mut self, tpl: &str) -> Option<&Value> {
        self.0
            .entry(tpl.to_owned())
            .or_insert_with(|| db::get::<Value>(&db::path(&["templates", "items", tpl, "_props"])).ok())
            .as_ref()
    }

    /// Width and height of an item of `tpl`, swapped when rotated.
    fn footprint(&mut self, tpl: &str, rotated: bool) -> (i64, i64) {
        let props = self.props(tpl);
        let dim = |k: &str| props.and_then(|p| p[k].as_i64()).filter(|v| *v > 0).unwrap_or(1);
        let (w, h) = (dim("Width"), dim("Height"));
        if rotated { (h, w) } else { (w, h) }
    }

    /// The size of grid `name` of a container of `tpl`, if it has one.
    fn grid(&mut self, tpl: &str, name: &str) -> Option<(i64, i64)> {
        let grids = self.props(tpl)?["Grids"].as_array()?.clone();
        let grid = grids.iter().find(|g| g["_name"] == name)?;
        Some((grid["_props"]["cellsH"].as_i64()?, grid["_props"]["cellsV"].as_i64()?))
    }
}

fn rotated(location: &Value) -> bool {
    location["r"] == "Vertical" || location["r"] == 1
}

/// `/client/game/profile/items/moving`.
pub(crate) fn moving(req: &Request) -> Result<Response> {
    let Some(uid) = profile::session_profile(req)? else {
        return Ok(envelope::error(1, "this session has no profile"));
    };
    let batch: Batch = req.json().map_err(|e| Error::Invalid(format!("items/moving: {e}")))?;
    let key = format!("profile.{uid}");
    let Some((mut profile, version)) = store::get_versioned::<Value>(&key)? else {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    };
    let mut templates = Templates::default();
    let mut warnings = Vec::new();
    let mut changed = Vec::new();
    for (index, action) in batch.data.iter().enumerate() {
        let result = match action["Action"].as_str() {
            Some("Move") => apply_move(&mut profile, action, &mut templates),
            Some(other) => Err(format!("the action `{other}` is not supported yet")),
            None => Err("the action has no `Action`".to_owned()),
        };
        match result {
            Ok(item) => changed.push(item),
            Err(reason) => warnings.push(json!({ "index": index, "errmsg": reason, "code": "0", "data": {} })),
        }
    }
    if !changed.is_empty() {
        match store::set_if_version(&key, &profile, Some(version)) {
            Ok(_) => {}
            Err(Error::Conflict(_)) => {
                return Ok(envelope::error(1, "another request changed this profile; nothing was applied"));
            }
            Err(other) => return Err(other),
        }
    }
    let changes = json!({
        uid.clone(): {
            "_id": uid,
            "experience": profile["Info"]["Experience"],
            "items": { "new": [], "change": changed, "del": [] },
            "health": profile["Health"],
            "traderRelations": {},
            "skills": { "Common": [], "Mastering": [], "Points": 0 },
            "production": null,
        }
    });
    Ok(envelope::ok(&json!({ "warnings": warnings, "profileChanges": changes })))
}

/// Validates and applies one `Move`; answers the moved item, or why it was refused (nothing changed).
fn apply_move(profile: &mut Value, action: &Value, templates: &mut Templates) -> std::result::Result<Value, String> {
    let inventory = &profile["Inventory"];
    let roots: Vec<&str> = ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable"]
        .iter()
        .filter_map(|k| inventory[*k].as_str())
        .collect();
    let items = inventory["items"].as_array().ok_or("the profile has no items")?;
    let id = action["item"].as_str().ok_or("Move names no item")?;
    let to = &action["to"];
    let parent = to["id"].as_str().ok_or("Move names no destination")?;
    let container = to["container"].as_str().ok_or("Move names no container")?;
    let location = &to["location"];

    let index_of = |id: &str| items.iter().position(|i| i["_id"] == id);
    let Some(at) = index_of(id) else { return Err(format!("item {id} is not in this profile")) };
    if roots.contains(&id) {
        return Err(format!("item {id} is a root container and cannot move"));
    }
    let Some(parent_at) = index_of(parent) else { return Err(format!("destination {parent} is not in this profile")) };
    // No cycle: walk up from the destination; meeting the item means it would go into itself.
    let mut cursor = Some(parent_at);
    for _ in 0..=items.len() {
        let Some(c) = cursor else { break };
        if items[c]["_id"] == id {
            return Err(format!("item {id} cannot go into itself or its own contents"));
        }
        cursor = items[c]["parentId"].as_str().and_then(index_of);
    }

    // In a grid, the footprint must lie inside it and overlap nothing else there.
    let parent_tpl = items[parent_at]["_tpl"].as_str().unwrap_or_default().to_owned();
    if let Some((cells_h, cells_v)) = templates.grid(&parent_tpl, container) {
        let (Some(x), Some(y)) = (location["x"].as_i64(), location["y"].as_i64()) else {
            return Err("a move into a grid needs a location {x, y, r}".to_owned());
        };
        let tpl = items[at]["_tpl"].as_str().unwrap_or_default().to_owned();
        let (w, h) = templates.footprint(&tpl, rotated(location));
        if x < 0 || y < 0 || x + w > cells_h || y + h > cells_v {
            return Err(format!("a {w}x{h} item at ({x},{y}) does not fit the {cells_h}x{cells_v} grid"));
        }
        for other in items {
            if other["_id"] == id || other["parentId"] != parent || other["slotId"] != container {
                continue;
            }
            let (Some(ox), Some(oy)) = (other["location"]["x"].as_i64(), other["location"]["y"].as_i64()) else {
                continue;
            };
            let otpl = other["_tpl"].as_str().unwrap_or_default().to_owned();
            let (ow, oh) = templates.footprint(&otpl, rotated(&other["location"]));
            if x < ox + ow && ox < x + w && y < oy + oh && oy < y + h {
                return Err(format!("the place is taken by item {}", other["_id"]));
            }
        }
    }

    let item = &mut profile["Inventory"]["items"][at];
    item["parentId"] = json!(parent);
    item["slotId"] = json!(container);
    match location {
        Value::Null => {
            if let Some(map) = item.as_object_mut() {
                map.remove("location");
            }
        }
        location => item["location"] = location.clone(),
    }
    Ok(item.clone())
}
