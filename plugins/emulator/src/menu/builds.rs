//! Saving and deleting the player's builds (SPT's `BuildStaticRouter` → `BuildsCallbacks` →
//! `BuildController`): `/client/builds/weapon/save`, `/client/builds/equipment/save`,
//! `/client/builds/magazine/save` and `/client/builds/delete`, each answering null as SPT does.
//! `/client/builds/list` (`menu/mod.rs`) reads what these write.
//!
//! Where: `userdata.<uid>.userbuilds` (`{weaponBuilds, equipmentBuilds, magazineBuilds}`, SPT's
//! `UserBuilds`), written as one merge patch of that member. SPT stores what the client sent; here a
//! build is checked before it is kept, since every later `builds/list` answers it:
//! - a name of 1 to [`MAX_NAME`] characters without control characters, an id of 24 hex digits;
//! - a weapon or equipment build: 1 to [`MAX_BUILD_ITEMS`] items, each of a template the db knows, the
//!   first one the root and every other one the child of an earlier one (a tree, no strays); the ids
//!   are made fresh (SPT's `ReplaceIDs`) so a build never shares an id with the stash;
//! - a magazine build: at most [`MAX_MAGAZINE_ROWS`] rows of ammunition the db knows, each a count
//!   of at most [`MAX_MAGAZINE_COUNT`];
//! - at most [`MAX_BUILDS`] builds of each kind: one more is refused, naming the bound.
//!
//! A build saved under an id (or, for equipment and magazines, a name) already kept replaces it, as
//! SPT's does. A refusal is an error envelope naming why; nothing is written.

use crate::ids::{is_id, new_id};
use crate::input;
use crate::profile::{player, userdata};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The largest body a save reads: a weapon with a hundred parts is about 20 KB.
const MAX_BODY: usize = 256 << 10;
/// The most items one weapon or equipment build holds (a full kit with every mod is well under this).
const MAX_BUILD_ITEMS: usize = 500;
/// The most builds of one kind a player keeps: every `builds/list` answers them all.
const MAX_BUILDS: usize = 100;
/// The longest build name, in characters (the client's field is shorter).
const MAX_NAME: usize = 64;
/// The most rows a magazine build has (a magazine holds at most a few hundred rounds in a few rows).
const MAX_MAGAZINE_ROWS: usize = 100;
/// The most rounds one row of a magazine build counts.
const MAX_MAGAZINE_COUNT: u64 = 1000;
/// The longest caliber string kept (SPT's are like `Caliber556x45NATO`).
const MAX_CALIBER: usize = 64;

/// Adds the build routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/builds/weapon/save", save_weapon)
        .route("/client/builds/equipment/save", save_equipment)
        .route("/client/builds/magazine/save", save_magazine)
        .route("/client/builds/delete", delete)
}

const KINDS: [&str; 3] = ["weaponBuilds", "equipmentBuilds", "magazineBuilds"];

/// The player's builds, every kind present as a list.
fn builds_of(uid: &str) -> Result<Map<String, Value>> {
    let mut builds: Map<String, Value> = userdata(uid, "userbuilds")?.unwrap_or_default();
    for kind in KINDS {
        if !builds.get(kind).is_some_and(Value::is_array) {
            builds.insert(kind.to_owned(), json!([]));
        }
    }
    Ok(builds)
}

fn write(uid: &str, builds: Map<String, Value>) -> Result<()> {
    store::doc_patch(&format!("userdata.{uid}"), "", &json!({ "userbuilds": builds }))?;
    Ok(())
}

/// Why `name` cannot name a build, if it cannot.
fn check_name(name: &str) -> std::result::Result<(), String> {
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME {
        return Err(format!("a build's name has 1 to {MAX_NAME} characters; this one has {chars}"));
    }
    if name.chars().any(char::is_control) {
        return Err("a build's name cannot hold control characters".to_owned());
    }
    Ok(())
}

#[derive(Deserialize)]
struct Preset {
    #[serde(default, rename = "Id")]
    id: String,
    #[serde(default, rename = "Name")]
    name: String,
    #[serde(default, rename = "Items", deserialize_with = "input::at_most::<MAX_BUILD_ITEMS, _, _>")]
    items: Vec<Value>,
}

/// The build's items checked (see the module's header) and given fresh ids; the root's new id first.
fn checked_items(items: &[Value]) -> std::result::Result<(String, Vec<Value>), String> {
    if items.is_empty() {
        return Err("a build has at least one item".to_owned());
    }
    let mut fresh: HashMap<&str, String> = HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for (n, item) in items.iter().enumerate() {
        let id = item["_id"].as_str().filter(|id| !id.is_empty() && id.len() <= 64);
        let Some(id) = id else { return Err(format!("item {n} of the build has no `_id`")) };
        let Some(tpl) = item["_tpl"].as_str().filter(|t| is_id(t)) else {
            return Err(format!("item {id} of the build has no valid `_tpl`"));
        };
        if !db::exists(&db::path(&["templates", "items", tpl])) {
            return Err(format!("item {id} of the build is of template {tpl}, which the database does not have"));
        }
        if fresh.contains_key(id) {
            return Err(format!("item {id} is in the build twice"));
        }
        let mut kept = Map::new();
        kept.insert("_id".to_owned(), json!(new_id()));
        kept.insert("_tpl".to_owned(), json!(tpl));
        if n > 0 {
            let parent = item["parentId"].as_str().and_then(|p| fresh.get(p));
            let Some(parent) = parent else {
                return Err(format!("item {id} of the build is not attached to an earlier item of it"));
            };
            let Some(slot) = item["slotId"].as_str().filter(|s| !s.is_empty() && s.len() <= 64) else {
                return Err(format!("item {id} of the build has no `slotId`"));
            };
            kept.insert("parentId".to_owned(), json!(parent));
            kept.insert("slotId".to_owned(), json!(slot));
        }
        // What the build keeps of an item's state: its stack (ammunition in a magazine), nothing else.
        if let Some(count) = item["upd"]["StackObjectsCount"].as_u64().filter(|c| (1..=MAX_MAGAZINE_COUNT).contains(c))
        {
            kept.insert("upd".to_owned(), json!({ "StackObjectsCount": count }));
        }
        fresh.insert(id, kept["_id"].as_str().unwrap_or_default().to_owned());
        out.push(Value::Object(kept));
    }
    let root = out[0]["_id"].as_str().unwrap_or_default().to_owned();
    Ok((root, out))
}

/// Puts `build` into the player's `kind` list, replacing the first that `same` matches; refused past
/// [`MAX_BUILDS`].
fn keep(uid: &str, kind: &str, build: Value, same: impl Fn(&Value) -> bool) -> Result<Response> {
    let mut builds = builds_of(uid)?;
    let list = builds.get_mut(kind).and_then(Value::as_array_mut).expect("every kind is a list");
    if let Some(at) = list.iter().position(same) {
        list[at] = build;
    } else if list.len() >= MAX_BUILDS {
        return Ok(envelope::error(1, &format!("a player keeps at most {MAX_BUILDS} {kind}; delete one first")));
    } else {
        list.push(build);
    }
    write(uid, builds)?;
    Ok(envelope::null())
}

/// A checked weapon or equipment save: the player, the request, the root's new id, the items.
type Checked = (String, Preset, String, Vec<Value>);

/// The checked preset of a weapon or equipment save, or the refusal.
fn preset(req: &Request, what: &str) -> Result<std::result::Result<Checked, Response>> {
    let uid = match player(req, what)? {
        Ok(uid) => uid,
        Err(answer) => return Ok(Err(answer)),
    };
    let body: Preset = input::parse(req, what, MAX_BODY)?;
    if !is_id(&body.id) {
        return Ok(Err(envelope::error(1, "a build's `Id` is 24 hex digits")));
    }
    if let Err(why) = check_name(&body.name) {
        return Ok(Err(envelope::error(1, &why)));
    }
    match checked_items(&body.items) {
        Ok((root, items)) => Ok(Ok((uid, body, root, items))),
        Err(why) => Ok(Err(envelope::error(1, &why))),
    }
}

/// `/client/builds/weapon/save`: SPT's `WeaponBuild` `{Id, Name, Root, Items}`, replacing one of the
/// same id.
fn save_weapon(req: &Request) -> Result<Response> {
    let (uid, body, root, items) = match preset(req, "builds/weapon/save")? {
        Ok(checked) => checked,
        Err(answer) => return Ok(answer),
    };
    let build = json!({ "Id": body.id, "Name": body.name, "Root": root, "Items": items });
    keep(&uid, "weaponBuilds", build, |b| b["Id"] == body.id.as_str())
}

/// SPT's `EquipmentBuildType.Custom`: a build the player made.
const CUSTOM: u32 = 0;

/// `/client/builds/equipment/save`: SPT's `EquipmentBuild` `{Id, Name, Root, Items, BuildType}`,
/// replacing one of the same id or name.
fn save_equipment(req: &Request) -> Result<Response> {
    let (uid, body, root, items) = match preset(req, "builds/equipment/save")? {
        Ok(checked) => checked,
        Err(answer) => return Ok(answer),
    };
    let build = json!({ "Id": body.id, "Name": body.name, "Root": root, "Items": items, "BuildType": CUSTOM });
    keep(&uid, "equipmentBuilds", build, |b| b["Id"] == body.id.as_str() || b["Name"] == body.name.as_str())
}

#[derive(Deserialize)]
struct Magazine {
    #[serde(default, rename = "Id")]
    id: String,
    #[serde(default, rename = "Name")]
    name: String,
    #[serde(default, rename = "Caliber")]
    caliber: String,
    #[serde(default, rename = "TopCount")]
    top_count: u64,
    #[serde(default, rename = "BottomCount")]
    bottom_count: u64,
    #[serde(default, rename = "Items", deserialize_with = "input::at_most::<MAX_MAGAZINE_ROWS, _, _>")]
    items: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    #[serde(default, rename = "TemplateId")]
    template_id: String,
    #[serde(default, rename = "Count")]
    count: u64,
}

/// `/client/builds/magazine/save`: SPT's `MagazineBuild`, replacing one of the same name.
fn save_magazine(req: &Request) -> Result<Response> {
    let uid = match player(req, "builds/magazine/save")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Magazine = input::parse(req, "builds/magazine/save", MAX_BODY)?;
    if !is_id(&body.id) {
        return Ok(envelope::error(1, "a build's `Id` is 24 hex digits"));
    }
    if let Err(why) = check_name(&body.name) {
        return Ok(envelope::error(1, &why));
    }
    if body.caliber.chars().count() > MAX_CALIBER || body.caliber.chars().any(char::is_control) {
        return Ok(envelope::error(1, &format!("a caliber is at most {MAX_CALIBER} printable characters")));
    }
    if body.top_count > MAX_MAGAZINE_COUNT || body.bottom_count > MAX_MAGAZINE_COUNT {
        return Ok(envelope::error(1, &format!("a magazine build counts at most {MAX_MAGAZINE_COUNT} rounds")));
    }
    let mut rows = Vec::with_capacity(body.items.len());
    for row in &body.items {
        if row.count > MAX_MAGAZINE_COUNT {
            return Ok(envelope::error(1, &format!("a row counts at most {MAX_MAGAZINE_COUNT} rounds")));
        }
        // SPT writes a `null` template for an empty row; one that names a template names a known one.
        if !row.template_id.is_empty()
            && (!is_id(&row.template_id) || !db::exists(&db::path(&["templates", "items", &row.template_id])))
        {
            return Ok(envelope::error(1, &format!("the database has no template {}", row.template_id)));
        }
        let tpl = if row.template_id.is_empty() { Value::Null } else { json!(row.template_id) };
        rows.push(json!({ "TemplateId": tpl, "Count": row.count }));
    }
    let build = json!({
        "Id": body.id, "Name": body.name, "Caliber": body.caliber,
        "TopCount": body.top_count, "BottomCount": body.bottom_count, "Items": rows,
    });
    keep(&uid, "magazineBuilds", build, |b| b["Name"] == body.name.as_str())
}

#[derive(Deserialize)]
struct Delete {
    #[serde(default)]
    id: String,
}

/// `/client/builds/delete`: `{id}`, removed from whichever kind has it (weapons, then equipment, then
/// magazines, as SPT looks); an id no build has changes nothing (SPT logs it and answers null too).
fn delete(req: &Request) -> Result<Response> {
    let uid = match player(req, "builds/delete")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Delete = input::parse(req, "builds/delete", MAX_BODY)?;
    let mut builds = builds_of(&uid)?;
    for kind in KINDS {
        let list = builds.get_mut(kind).and_then(Value::as_array_mut).expect("every kind is a list");
        if let Some(at) = list.iter().position(|b| b["Id"] == body.id.as_str()) {
            list.remove(at);
            write(&uid, builds)?;
            return Ok(envelope::null());
        }
    }
    Ok(envelope::null())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_bounded_and_printable() {
        assert!(check_name("M4 meta").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name(&"x".repeat(MAX_NAME + 1)).is_err());
        assert!(check_name("a\u{7}b").is_err());
    }
}
