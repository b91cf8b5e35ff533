//! `OpenRandomLootContainer {item}`: a container of random loot the player owns (a gift box, a
//! pumpkin, an "Event container") is opened: it goes, with anything inside it, and its rewards come
//! into the stash (the sorting table when the stash is full, as SPT's `UseSortingTable`).
//!
//! The rewards follow SPT's config, read at its place in the db: `configs.inventory.randomLootContainers
//! .<template>` = `{rewardCount, foundInRaid, rewardTplPool: {template: weight}}`; `rewardCount`
//! templates are drawn from the pool by weight, one unit each, found in raid when the config or the
//! container says so. A container the config does not list is refused, as are SPT's sealed weapon
//! crates (`event_container_airdrop`), whose loot comes from the airdrop tables, not generated here.
//! No room for every reward: nothing happens.

use crate::ids;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Grid, Outcome, Refused, is_root, item, subtree, write};
use crate::templates::{Templates, tpl};
use modhost_sdk::db;
use serde_json::{Map, Value, json};

/// The most rewards one container gives (SPT's largest gives seven).
const MAX_REWARDS: u64 = 64;
/// The most templates of one pool read (SPT's largest has a few dozen).
const MAX_POOL: usize = 1_024;

/// `OpenRandomLootContainer {item, to}`.
pub(crate) fn open(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = action["item"].as_str().ok_or("the action names no container `item`")?;
    let container = item(doc, id)?.ok_or_else(|| format!("item {id} is not in this profile"))?;
    if is_root(doc, id)? {
        return Err(format!("item {id} is a root container").into());
    }
    let kind = tpl(&container).to_owned();
    let name: String = db::get(&db::path(&["templates", "items", &kind, "_name"])).unwrap_or_default();
    if name.contains("event_container_airdrop") {
        return Err(format!("{kind} is a sealed weapon crate, whose loot is not generated here").into());
    }
    let config: Value = db::get(&db::path(&["configs", "inventory", "randomLootContainers", &kind]))
        .map_err(|_| format!("item {id} ({kind}) is not a container of random loot"))?;
    let count = config["rewardCount"].as_u64().unwrap_or(0).min(MAX_REWARDS);
    let pool: Vec<(String, u64)> = config["rewardTplPool"]
        .as_object()
        .map(Map::iter)
        .into_iter()
        .flatten()
        .take(MAX_POOL)
        .filter_map(|(t, w)| Some((t.clone(), w.as_u64().filter(|w| *w > 0)?)))
        .filter(|(t, _)| templates.props(t).is_some())
        .collect();
    let total: u64 = pool.iter().map(|(_, w)| *w).fold(0, u64::saturating_add);
    if count == 0 || total == 0 {
        return Err(format!("the rewards of {kind} name no template of the database").into());
    }
    let found = config["foundInRaid"] == true || container["upd"]["SpawnedInSession"] == true;

    // The container goes first (its contents with it): its cells are free for what it held.
    let gone = subtree(doc, id)?;
    for removed in gone.iter().rev() {
        write(doc, templates, removed, None)?;
    }
    for removed in &gone {
        changes.removed(removed);
    }
    let mut places: Vec<(String, Grid)> = Vec::new();
    for root in ["stash", "sortingTable"] {
        if let Some(parent) = doc.get(&["Inventory", root])?.as_str().map(str::to_owned)
            && let Some(grid) = Grid::of(doc, templates, &parent, "hideout")?
        {
            places.push((parent, grid));
        }
    }
    for _ in 0..count {
        let mut roll = ids::below(total);
        let reward = pool
            .iter()
            .find(|(_, w)| {
                let hit = roll < *w;
                roll = roll.saturating_sub(*w);
                hit
            })
            .map(|(t, _)| t.clone())
            .ok_or("the reward pool is empty")?;
        let (w, h) = templates.footprint(&reward, false);
        let mut placed = None;
        for (parent, grid) in places.iter_mut() {
            if let Some(location) = grid.place(doc, w, h)? {
                placed = Some((parent.clone(), location));
                break;
            }
        }
        let (parent, location) = placed.ok_or_else(|| Refused::from(format!("no room for the rewards of {kind}")))?;
        let fresh = ids::new_id();
        let given = json!({"_id": fresh, "_tpl": reward, "parentId": parent, "slotId": "hideout", "location": location,
                           "upd": {"StackObjectsCount": 1, "SpawnedInSession": found}});
        write(doc, templates, &fresh, Some(given))?;
        changes.created(&fresh);
    }
    Ok(())
}
