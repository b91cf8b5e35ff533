//! The inventory model the actions share, over the profile as a [`Doc`]: the templates an inventory
//! names (sizes, grids, stack limits), items read one at a time by id, what is inside an item (from the
//! children index), where an item may go (from the row index: only the destination's rows are read),
//! writing an item with its index entries, and what a batch changed.
//!
//! Actions validate before they write, and `items/mod.rs` restores the batch's patch when one is refused
//! anyway, so a refused action changes nothing. What each reads is bounded by what it touches: an item,
//! its parents, a footprint's rows, a subtree; never the whole inventory.

use super::doc::Doc;
use super::shape::{self, INDEX};
use crate::ids;
use crate::templates::{ITEM_ROOT, Templates, rotated, tpl};
use modhost_sdk::Error;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};

/// The fields of `Inventory` that name root containers, which never move and are never removed.
const ROOTS: [&str; 6] =
    ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable", "hideoutCustomizationStashId"];

/// How deep the parent chain of an item is followed: far beyond any real nesting (a weapon's parts
/// nest a few levels), so only a corrupt chain stops it.
const MAX_DEPTH: usize = 256;

/// The most items one subtree is followed to (a removal's reach): a real container holds hundreds.
const MAX_SUBTREE: usize = 20_000;

/// Why an action did nothing: a reason the player sees as a warning, or a store failure (a conflict,
/// an I/O error) that ends the whole batch.
pub(crate) enum Refused {
    /// The action was refused; the batch goes on.
    Reason(String),
    /// The store failed; nothing of the batch applies.
    Store(Error),
}

impl From<String> for Refused {
    fn from(reason: String) -> Refused {
        Refused::Reason(reason)
    }
}

impl From<&str> for Refused {
    fn from(reason: &str) -> Refused {
        Refused::Reason(reason.to_owned())
    }
}

impl From<Error> for Refused {
    fn from(e: Error) -> Refused {
        Refused::Store(e)
    }
}

/// What every action answers: nothing, or why it did nothing.
pub(crate) type Outcome = Result<(), Refused>;

/// Item `id`, as the batch has left it; `None` when the profile has no such item.
pub(crate) fn item(doc: &mut Doc, id: &str) -> Result<Option<Value>, Error> {
    let found = doc.get(&["Inventory", "items", id])?;
    Ok(found.is_object().then_some(found))
}

/// Is `id` one of the profile's root containers?
pub(crate) fn is_root(doc: &mut Doc, id: &str) -> Result<bool, Error> {
    for field in ROOTS {
        if doc.get(&["Inventory", field])? == id {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The ids of the items directly inside `id`.
pub(crate) fn children(doc: &mut Doc, id: &str) -> Result<Vec<String>, Error> {
    Ok(match doc.get(&[INDEX, "children", id])? {
        Value::Object(members) => members.into_iter().map(|(child, _)| child).collect(),
        _ => Vec::new(),
    })
}

/// Item `id` and everything inside it, parents before their children (the item first). Follows the
/// children index at most [`MAX_SUBTREE`] items deep, so a corrupt index with a cycle still ends.
pub(crate) fn subtree(doc: &mut Doc, id: &str) -> Result<Vec<String>, Error> {
    let mut out = vec![id.to_owned()];
    let mut seen: HashSet<String> = out.iter().cloned().collect();
    let mut next = 0;
    while next < out.len() && out.len() < MAX_SUBTREE {
        for child in children(doc, &out[next].clone())? {
            if seen.insert(child.clone()) {
                out.push(child);
            }
        }
        next += 1;
    }
    Ok(out)
}

/// Makes item `id` `new` (`None` removes it), with its index entries: the old ones that no longer hold
/// are removed and the new ones written, in the same patch.
pub(crate) fn write(doc: &mut Doc, templates: &mut Templates, id: &str, new: Option<Value>) -> Result<(), Error> {
    let old = item(doc, id)?;
    let before = old.as_ref().map(|o| shape::entries(id, o, templates)).unwrap_or_default();
    let after = new.as_ref().map(|n| shape::entries(id, n, templates)).unwrap_or_default();
    for (path, _) in before.iter().filter(|(path, _)| !after.iter().any(|(p, _)| p == path)) {
        doc.set(&path.iter().map(String::as_str).collect::<Vec<_>>(), Value::Null)?;
    }
    for (path, value) in after.into_iter().filter(|entry| !before.contains(entry)) {
        doc.set(&path.iter().map(String::as_str).collect::<Vec<_>>(), value)?;
    }
    let gone = new.is_none();
    doc.set(&["Inventory", "items", id], new.unwrap_or(Value::Null))?;
    // A removed item's own children map goes too once it is empty (its contents were removed first,
    // or it had none), so removals leave no `{}` behind.
    if gone && old.is_some() && doc.get(&[INDEX, "children", id])?.as_object().is_some_and(|m| m.is_empty()) {
        doc.set(&[INDEX, "children", id], Value::Null)?;
    }
    Ok(())
}

/// Units in a stack: `upd.StackObjectsCount`, 1 when absent (an unstacked item).
pub(crate) fn count(item: &Value) -> u64 {
    item["upd"]["StackObjectsCount"].as_u64().unwrap_or(1)
}

/// Sets the units in a stack.
pub(crate) fn set_count(item: &mut Value, n: u64) {
    if !item["upd"].is_object() {
        item["upd"] = json!({});
    }
    item["upd"]["StackObjectsCount"] = json!(n);
}

/// The placed items on row `y` of grid `container` of `parent`: `(id, x, width)` each.
fn row(doc: &mut Doc, parent: &str, container: &str, y: i64) -> Result<Vec<(String, i64, i64)>, Error> {
    Ok(match doc.get(&[INDEX, "rows", parent, container, &y.to_string()])? {
        Value::Object(members) => {
            members.into_iter().filter_map(|(id, span)| Some((id, span[0].as_i64()?, span[1].as_i64()?))).collect()
        }
        _ => Vec::new(),
    })
}

/// What a destination is in its parent's template.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Place {
    /// A cell of one of its `Grids`: the item has a location.
    Grid,
    /// One of its `Slots` (one item each) or `StackSlots` (a magazine's cartridges): no grid
    /// location.
    Slot,
}

/// Does a container's `filters` (SPT's `[{Filter, ExcludedFilter}]`) admit an item of `item_tpl`? An
/// entry admits the template when its `Filter` names it or one of its categories and its
/// `ExcludedFilter` names neither; no filters at all admit anything. The lineage is read only when a
/// filter is not the whole-`Item` one, so a stash's grid costs no template reads.
pub(crate) fn admits(templates: &mut Templates, filters: &Value, item_tpl: &str) -> bool {
    let Some(entries) = filters.as_array().filter(|f| !f.is_empty()) else { return true };
    let names = |list: &Value| -> Vec<String> {
        list.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    let mut lineage: Option<Vec<String>> = None;
    for entry in entries.iter().take(MAX_FILTERS) {
        let (allowed, excluded) = (names(&entry["Filter"]), names(&entry["ExcludedFilter"]));
        if excluded.is_empty() && allowed.iter().any(|a| a == ITEM_ROOT) {
            return true;
        }
        let lineage = lineage.get_or_insert_with(|| templates.lineage(item_tpl));
        let named = |list: &[String]| lineage.iter().any(|t| list.contains(t));
        if named(&allowed) && !named(&excluded) {
            return true;
        }
    }
    false
}

/// The most filter entries of one slot or grid read (a real one has one or two).
const MAX_FILTERS: usize = 16;

/// Checks that an item of template `item_tpl` may go to `to` (`{id, container, location}`): the parent
/// exists in this profile; when `moving` names an item already there, the parent is not that item or
/// inside it; the container is one of the parent template's `Grids`, `Slots` or `StackSlots`, whose
/// `filters` admit the template; in a grid, the footprint lies inside the grid and overlaps nothing
/// else there; a slot holds nothing else. Answers which kind of place it is (a slot's item keeps no
/// location). Reads the parent chain, the parent's template and the footprint's rows (a slot: the
/// parent's children), nothing else.
pub(crate) fn check_place(
    doc: &mut Doc,
    templates: &mut Templates,
    moving: Option<&str>,
    item_tpl: &str,
    to: &Value,
) -> Result<Place, Refused> {
    let parent = to["id"].as_str().ok_or("the destination names no parent `id`")?;
    let container = to["container"].as_str().ok_or("the destination names no `container`")?;
    let Some(parent_item) = item(doc, parent)? else {
        return Err(format!("destination {parent} is not in this profile").into());
    };
    if let Some(id) = moving {
        // No cycle: walk up from the destination; meeting the item means it would go into itself.
        let mut cursor = Some(parent.to_owned());
        for _ in 0..MAX_DEPTH {
            let Some(at) = cursor else { break };
            if at == id {
                return Err(format!("item {id} cannot go into itself or its own contents").into());
            }
            cursor = item(doc, &at)?.and_then(|i| i["parentId"].as_str().map(str::to_owned));
        }
    }
    let parent_tpl = tpl(&parent_item).to_owned();
    let Some(props) = templates.props(&parent_tpl) else {
        return Err(format!("destination {parent}'s template {parent_tpl} is not in the database").into());
    };
    let named =
        |kind: &str| props[kind].as_array().and_then(|list| list.iter().find(|c| c["_name"] == container)).cloned();
    let (place, declared) = match named("Grids") {
        Some(grid) => (Place::Grid, grid),
        None => match named("Slots").or_else(|| named("StackSlots")) {
            Some(slot) => (Place::Slot, slot),
            None => {
                return Err(
                    format!("{parent_tpl} (item {parent}) has no grid or slot named {}", json!(container)).into()
                );
            }
        },
    };
    if !admits(templates, &declared["_props"]["filters"], item_tpl) {
        return Err(format!("{} of {parent_tpl} does not take an item of {item_tpl}", json!(container)).into());
    }
    if place == Place::Slot {
        for (other, slot) in children_with_slots(doc, parent)? {
            if slot == container && moving != Some(other.as_str()) {
                return Err(format!("slot {} is taken by item {}", json!(container), json!(other)).into());
            }
        }
        return Ok(Place::Slot);
    }
    let (cells_h, cells_v) = (
        declared["_props"]["cellsH"].as_i64().unwrap_or(0).max(0),
        declared["_props"]["cellsV"].as_i64().unwrap_or(0).max(0),
    );
    let location = &to["location"];
    let (Some(x), Some(y)) = (location["x"].as_i64(), location["y"].as_i64()) else {
        return Err("a place in a grid needs a location {x, y, r} of whole numbers".into());
    };
    let (w, h) = templates.footprint(item_tpl, rotated(location));
    // Bounded by the grid before any sum, so no coordinate a client sends can overflow.
    let fits = |at: i64, side: i64, cells: i64| at >= 0 && cells.checked_sub(side).is_some_and(|room| at <= room);
    if !fits(x, w, cells_h) || !fits(y, h, cells_v) {
        return Err(format!("a {w}x{h} item at ({x},{y}) does not fit the {cells_h}x{cells_v} grid").into());
    }
    for y in y..y + h {
        for (other, ox, ow) in row(doc, parent, container, y)? {
            if moving != Some(other.as_str()) && x < ox.saturating_add(ow) && ox < x + w {
                return Err(format!("the place is taken by item {}", json!(other)).into());
            }
        }
    }
    Ok(Place::Grid)
}

/// The items directly inside `id`, each with its `slotId`.
fn children_with_slots(doc: &mut Doc, id: &str) -> Result<Vec<(String, String)>, Error> {
    Ok(match doc.get(&[INDEX, "children", id])? {
        Value::Object(members) => {
            members.into_iter().map(|(child, slot)| (child, slot.as_str().unwrap_or_default().to_owned())).collect()
        }
        _ => Vec::new(),
    })
}

/// The cells of one grid container, to find free places for new items. Rows are read from the row
/// index as the search reaches them, each once.
pub(crate) struct Grid {
    parent: String,
    container: String,
    columns: i64,
    rows: i64,
    /// Taken cells by row, for the rows read so far (and places handed out).
    taken: HashMap<i64, Vec<bool>>,
}

impl Grid {
    /// Grid `container` of item `parent`, if the parent is in the profile and has that grid.
    pub(crate) fn of(
        doc: &mut Doc,
        templates: &mut Templates,
        parent: &str,
        container: &str,
    ) -> Result<Option<Grid>, Error> {
        let Some(parent_item) = item(doc, parent)? else { return Ok(None) };
        let Some((columns, rows)) = templates.grid(tpl(&parent_item), container) else { return Ok(None) };
        Ok(Some(Grid {
            parent: parent.to_owned(),
            container: container.to_owned(),
            columns: columns.max(0),
            rows: rows.max(0),
            taken: HashMap::new(),
        }))
    }

    /// Row `y`'s taken cells.
    fn row(&mut self, doc: &mut Doc, y: i64) -> Result<&mut Vec<bool>, Error> {
        if !self.taken.contains_key(&y) {
            let mut cells = vec![false; self.columns as usize];
            for (_, x, w) in row(doc, &self.parent, &self.container, y)? {
                for col in x.max(0)..(x + w).min(self.columns) {
                    cells[col as usize] = true;
                }
            }
            self.taken.insert(y, cells);
        }
        Ok(self.taken.get_mut(&y).expect("inserted above"))
    }

    fn free(&mut self, doc: &mut Doc, x: i64, y: i64, w: i64, h: i64) -> Result<bool, Error> {
        if x + w > self.columns || y + h > self.rows {
            return Ok(false);
        }
        for row in y..y + h {
            let cells = self.row(doc, row)?;
            if (x..x + w).any(|col| cells[col as usize]) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The first free place for a `w`×`h` item, from the top left, row by row, upright before rotated;
    /// the place is marked taken. Answers the location `{x, y, r}`.
    pub(crate) fn place(&mut self, doc: &mut Doc, w: i64, h: i64) -> Result<Option<Value>, Error> {
        let orientations: &[(i64, i64, &str)] =
            if w == h { &[(w, h, "Horizontal")] } else { &[(w, h, "Horizontal"), (h, w, "Vertical")] };
        for &(w, h, r) in orientations {
            // A footprint the grid cannot hold is not searched for (the grid may be very tall).
            if w > self.columns || h > self.rows {
                continue;
            }
            for y in 0..=self.rows - h {
                for x in 0..=self.columns - w {
                    if self.free(doc, x, y, w, h)? {
                        for row in y..y + h {
                            self.row(doc, row)?[x as usize..(x + w) as usize].fill(true);
                        }
                        return Ok(Some(json!({ "x": x, "y": y, "r": r })));
                    }
                }
            }
        }
        Ok(None)
    }
}

/// The most items one reward names (a weapon with its parts: a few dozen).
const MAX_GIVEN_ITEMS: usize = 256;

/// An item reward (`{items, target, findInRaid}`: a quest's `Item` reward, a craft's product) into the
/// stash's grid: the root at a free place (split into stacks of its template's `StackMaxSize`), the
/// parts under it with fresh ids; found in raid when `findInRaid`. `grid` is the stash's, found on
/// the first call and kept for the next.
pub(crate) fn give_items(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    reward: &Value,
    grid: &mut Option<Grid>,
) -> Outcome {
    let items: Vec<&Value> = reward["items"].as_array().into_iter().flatten().take(MAX_GIVEN_ITEMS).collect();
    let root_id = reward["target"].as_str().unwrap_or_default();
    let Some(root) = items.iter().find(|i| i["_id"] == root_id).or(items.first()).copied() else {
        return Ok(());
    };
    let root_tpl = tpl(root).to_owned();
    if templates.props(&root_tpl).is_none() {
        return Err(format!("a reward's template {root_tpl} is not in the database").into());
    }
    let stash = doc.get(&["Inventory", "stash"])?.as_str().ok_or("the profile has no stash")?.to_owned();
    if grid.is_none() {
        *grid = Some(Grid::of(doc, templates, &stash, "hideout")?.ok_or("the stash has no grid")?);
    }
    let grid = grid.as_mut().expect("set above");
    let parts: Vec<&Value> = items.iter().copied().filter(|i| i["_id"] != root["_id"]).collect();
    let mut left = count(root).max(1);
    let max = if parts.is_empty() { templates.stack_max(&root_tpl).unwrap_or(1).max(1) } else { 1 };
    let found = reward["findInRaid"] == true;
    let (w, h) = templates.footprint(&root_tpl, false);
    while left > 0 {
        let units = left.min(max);
        left -= units;
        let place = grid.place(doc, w, h)?.ok_or_else(|| format!("no room in the stash for {root_tpl}"))?;
        let id = ids::new_id();
        let mut upd = root["upd"].clone();
        if !upd.is_object() {
            upd = json!({});
        }
        upd["StackObjectsCount"] = json!(units);
        upd["SpawnedInSession"] = json!(found);
        let stack = json!({"_id": id, "_tpl": root_tpl, "parentId": stash, "slotId": "hideout", "location": place,
                           "upd": upd});
        write(doc, templates, &id, Some(stack))?;
        changes.created(&id);
        copy_parts(doc, templates, changes, &parts, root["_id"].as_str().unwrap_or_default(), &id)?;
    }
    Ok(())
}

/// Copies an offer's or a reward's `parts` (the items under its root `root`, parents first) under the
/// new root `copy`, each with a fresh id, recording them in `changes`.
pub(crate) fn copy_parts(
    doc: &mut Doc,
    templates: &mut Templates,
    changes: &mut Changes,
    parts: &[&Value],
    root: &str,
    copy: &str,
) -> Result<(), Error> {
    let mut ids = std::collections::BTreeMap::from([(root.to_owned(), copy.to_owned())]);
    for part in parts {
        let (Some(old), Some(parent)) = (part["_id"].as_str(), part["parentId"].as_str().and_then(|p| ids.get(p)))
        else {
            continue;
        };
        let mut item = (*part).clone();
        let fresh = ids::new_id();
        item["_id"] = json!(fresh);
        item["parentId"] = json!(parent);
        write(doc, templates, &fresh, Some(item))?;
        changes.created(&fresh);
        ids.insert(old.to_owned(), fresh);
    }
    Ok(())
}

/// The ids a batch created, changed and removed, in order, for the answer's `profileChanges.items`; and
/// the quests it changed or opened.
#[derive(Default, Clone)]
pub(crate) struct Changes {
    new: Vec<String>,
    change: Vec<String>,
    del: Vec<String>,
    /// Quests whose state a quest action changed (`questsStatus`), and quests it opened (`quests`).
    pub(crate) quests: Vec<String>,
    pub(crate) opened: Vec<String>,
    /// Other members of the answer's `profileChanges.<uid>` an action changed (`health`,
    /// `ragFairOffers`, `weaponBuilds`, `traderRelations`, …), each replacing the batch's default for
    /// that member; set with [`Changes::answer`].
    pub(crate) answers: serde_json::Map<String, Value>,
    /// Host timers to arm once the batch is written: `(name, delay in seconds, payload)`
    /// (`hideout/ready.rs`); a refused action's are dropped with the rest of its changes.
    pub(crate) later: Vec<(String, u64, Value)>,
}

impl Changes {
    /// Records a new item.
    pub(crate) fn created(&mut self, id: &str) {
        self.new.push(id.to_owned());
    }

    /// Records a changed item.
    pub(crate) fn changed(&mut self, id: &str) {
        if !self.change.iter().any(|c| c == id) {
            self.change.push(id.to_owned());
        }
    }

    /// Makes `member` of the answer's `profileChanges.<uid>` `value`.
    pub(crate) fn answer(&mut self, member: &str, value: Value) {
        self.answers.insert(member.to_owned(), value);
    }

    /// Records a removed item.
    pub(crate) fn removed(&mut self, id: &str) {
        self.del.push(id.to_owned());
    }

    /// `{new, change, del}` with each item's final state: an item created and then changed is only new,
    /// one created and then removed is in neither list, and a removed one is only `{_id}` in `del`.
    pub(crate) fn to_json(&self, doc: &mut Doc) -> Result<Value, Error> {
        let mut alive = |ids: &mut dyn Iterator<Item = &String>| -> Result<Vec<Value>, Error> {
            let mut out = Vec::new();
            for id in ids {
                out.extend(item(doc, id)?);
            }
            Ok(out)
        };
        let new = alive(&mut self.new.iter())?;
        let change = alive(&mut self.change.iter().filter(|id| !self.new.contains(id)))?;
        let del: Vec<Value> =
            self.del.iter().filter(|id| !self.new.contains(id)).map(|id| json!({ "_id": id })).collect();
        // Moved in, not through `json!`, which would copy every item once more.
        Ok(Value::Object(serde_json::Map::from_iter([
            ("new".to_owned(), Value::Array(new)),
            ("change".to_owned(), Value::Array(change)),
            ("del".to_owned(), Value::Array(del)),
        ])))
    }
}
