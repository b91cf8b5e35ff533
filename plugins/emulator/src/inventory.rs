//! The inventory model the actions share: the templates an inventory names (sizes, grids, stack
//! limits), the items of a profile as a tree, where an item may go, and what a batch changed.
//!
//! Every action validates before it writes, so a refused action changes nothing; these helpers only
//! read, except [`Changes`], which records ids for the answer.

use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The fields of `Inventory` that name root containers, which never move and are never removed.
const ROOTS: [&str; 5] = ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable"];

/// Template props read from the db, each once per batch.
#[derive(Default)]
pub(crate) struct Templates(HashMap<String, Option<Value>>);

impl Templates {
    /// `templates.items.<tpl>._props`, if the template exists.
    pub(crate) fn props(&mut self, tpl: &str) -> Option<&Value> {
        self.0
            .entry(tpl.to_owned())
            .or_insert_with(|| db::get::<Value>(&db::path(&["templates", "items", tpl, "_props"])).ok())
            .as_ref()
    }

    /// Width and height of an item of `tpl` (1×1 when the template does not say), swapped when rotated.
    pub(crate) fn footprint(&mut self, tpl: &str, rotated: bool) -> (i64, i64) {
        let props = self.props(tpl);
        let dim = |k: &str| props.and_then(|p| p[k].as_i64()).filter(|v| *v > 0).unwrap_or(1);
        let (w, h) = (dim("Width"), dim("Height"));
        if rotated { (h, w) } else { (w, h) }
    }

    /// The size (columns, rows) of grid `name` of a container of `tpl`, if it has one.
    pub(crate) fn grid(&mut self, tpl: &str, name: &str) -> Option<(i64, i64)> {
        let grid = self.props(tpl)?["Grids"].as_array()?.iter().find(|g| g["_name"] == name)?;
        Some((grid["_props"]["cellsH"].as_i64()?, grid["_props"]["cellsV"].as_i64()?))
    }

    /// How many units one stack of `tpl` may hold; `None` when unlimited (`StackMaxSize` absent or 0).
    pub(crate) fn stack_max(&mut self, tpl: &str) -> Option<u64> {
        self.props(tpl).and_then(|p| p["StackMaxSize"].as_u64()).filter(|n| *n > 0)
    }
}

/// The profile's items.
pub(crate) fn items(profile: &Value) -> &[Value] {
    profile["Inventory"]["items"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The profile's items, to change. Answers an error when the profile has no item list.
pub(crate) fn items_mut(profile: &mut Value) -> Result<&mut Vec<Value>, String> {
    profile["Inventory"]["items"].as_array_mut().ok_or_else(|| "the profile has no items".to_owned())
}

/// Where item `id` is in `items`.
pub(crate) fn find(items: &[Value], id: &str) -> Option<usize> {
    items.iter().position(|i| i["_id"] == id)
}

/// Is `id` one of the profile's root containers?
pub(crate) fn is_root(profile: &Value, id: &str) -> bool {
    ROOTS.iter().any(|k| profile["Inventory"][*k] == id)
}

/// The template of an item.
pub(crate) fn tpl(item: &Value) -> &str {
    item["_tpl"].as_str().unwrap_or_default()
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

/// The item at `at` and everything inside it, as indexes (the item first). Bounded by the item count,
/// so a corrupt tree with a cycle still ends.
pub(crate) fn subtree(items: &[Value], at: usize) -> Vec<usize> {
    let mut out = vec![at];
    let mut next = 0;
    while next < out.len() && out.len() <= items.len() {
        let id = &items[out[next]]["_id"];
        let children: Vec<usize> =
            (0..items.len()).filter(|i| !out.contains(i) && items[*i]["parentId"] == *id).collect();
        out.extend(children);
        next += 1;
    }
    out
}

/// Is a location rotated? The client writes `r` as `"Vertical"` or `1`.
pub(crate) fn rotated(location: &Value) -> bool {
    location["r"] == "Vertical" || location["r"] == 1
}

/// Checks that an item of template `item_tpl` may go to `to` (`{id, container, location}`): the parent
/// exists in this profile; when `moving` names an item already there, the parent is not that item or
/// inside it; and in a grid, the footprint lies inside the grid and overlaps nothing else there.
pub(crate) fn check_place(
    items: &[Value],
    templates: &mut Templates,
    moving: Option<&str>,
    item_tpl: &str,
    to: &Value,
) -> Result<(), String> {
    let parent = to["id"].as_str().ok_or("the destination names no parent `id`")?;
    let container = to["container"].as_str().ok_or("the destination names no `container`")?;
    let Some(parent_at) = find(items, parent) else {
        return Err(format!("destination {parent} is not in this profile"));
    };
    if let Some(id) = moving {
        // No cycle: walk up from the destination; meeting the item means it would go into itself.
        let mut cursor = Some(parent_at);
        for _ in 0..=items.len() {
            let Some(c) = cursor else { break };
            if items[c]["_id"] == id {
                return Err(format!("item {id} cannot go into itself or its own contents"));
            }
            cursor = items[c]["parentId"].as_str().and_then(|p| find(items, p));
        }
    }
    let Some((cells_h, cells_v)) = templates.grid(tpl(&items[parent_at]), container) else { return Ok(()) };
    let location = &to["location"];
    let (Some(x), Some(y)) = (location["x"].as_i64(), location["y"].as_i64()) else {
        return Err("a place in a grid needs a location {x, y, r}".to_owned());
    };
    let (w, h) = templates.footprint(item_tpl, rotated(location));
    if x < 0 || y < 0 || x + w > cells_h || y + h > cells_v {
        return Err(format!("a {w}x{h} item at ({x},{y}) does not fit the {cells_h}x{cells_v} grid"));
    }
    for other in items {
        if moving.is_some_and(|id| other["_id"] == id) || other["parentId"] != parent || other["slotId"] != container {
            continue;
        }
        let (Some(ox), Some(oy)) = (other["location"]["x"].as_i64(), other["location"]["y"].as_i64()) else {
            continue;
        };
        let (ow, oh) = templates.footprint(tpl(other), rotated(&other["location"]));
        if x < ox + ow && ox < x + w && y < oy + oh && oy < y + h {
            return Err(format!("the place is taken by item {}", other["_id"]));
        }
    }
    Ok(())
}

/// The cells of one grid container, to find free places for new items.
pub(crate) struct Grid {
    columns: i64,
    rows: i64,
    taken: Vec<bool>,
}

impl Grid {
    /// Grid `container` of item `parent`, with the cells its placed children take.
    pub(crate) fn of(items: &[Value], templates: &mut Templates, parent: &str, container: &str) -> Option<Grid> {
        let (columns, rows) = templates.grid(tpl(&items[find(items, parent)?]), container)?;
        let mut grid = Grid { columns, rows, taken: vec![false; (columns.max(0) * rows.max(0)) as usize] };
        for item in items.iter().filter(|i| i["parentId"] == parent && i["slotId"] == container) {
            let (Some(x), Some(y)) = (item["location"]["x"].as_i64(), item["location"]["y"].as_i64()) else {
                continue;
            };
            let (w, h) = templates.footprint(tpl(item), rotated(&item["location"]));
            grid.mark(x, y, w, h);
        }
        Some(grid)
    }

    /// Marks a footprint taken (the part inside the grid).
    fn mark(&mut self, x: i64, y: i64, w: i64, h: i64) {
        for row in y.max(0)..(y + h).min(self.rows) {
            for col in x.max(0)..(x + w).min(self.columns) {
                self.taken[(row * self.columns + col) as usize] = true;
            }
        }
    }

    fn free(&self, x: i64, y: i64, w: i64, h: i64) -> bool {
        x + w <= self.columns
            && y + h <= self.rows
            && (y..y + h).all(|row| (x..x + w).all(|col| !self.taken[(row * self.columns + col) as usize]))
    }

    /// The first free place for a `w`×`h` item, from the top left, row by row, upright before rotated;
    /// the place is marked taken. Answers the location `{x, y, r}`.
    pub(crate) fn place(&mut self, w: i64, h: i64) -> Option<Value> {
        let orientations: &[(i64, i64, &str)] =
            if w == h { &[(w, h, "Horizontal")] } else { &[(w, h, "Horizontal"), (h, w, "Vertical")] };
        for &(w, h, r) in orientations {
            for y in 0..self.rows {
                for x in 0..self.columns {
                    if self.free(x, y, w, h) {
                        self.mark(x, y, w, h);
                        return Some(json!({ "x": x, "y": y, "r": r }));
                    }
                }
            }
        }
        None
    }
}

/// The ids a batch created, changed and removed, in order, for the answer's `profileChanges.items`.
#[derive(Default)]
pub(crate) struct Changes {
    new: Vec<String>,
    change: Vec<String>,
    del: Vec<String>,
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

    /// Records a removed item.
    pub(crate) fn removed(&mut self, id: &str) {
        self.del.push(id.to_owned());
    }

    /// Did the batch change anything?
    pub(crate) fn is_empty(&self) -> bool {
        self.new.is_empty() && self.change.is_empty() && self.del.is_empty()
    }

    /// `{new, change, del}` with each item's final state: an item created and then changed is only new,
    /// one created and then removed is in neither list, and a removed one is only `{_id}` in `del`.
    pub(crate) fn to_json(&self, items: &[Value]) -> Value {
        let alive = |id: &String| find(items, id).map(|at| items[at].clone());
        let new: Vec<Value> = self.new.iter().filter_map(alive).collect();
        let change: Vec<Value> = self.change.iter().filter(|id| !self.new.contains(id)).filter_map(alive).collect();
        let del: Vec<Value> =
            self.del.iter().filter(|id| !self.new.contains(id)).map(|id| json!({ "_id": id })).collect();
        json!({ "new": new, "change": change, "del": del })
    }
}
