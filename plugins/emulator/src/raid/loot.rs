//! A raid's location loot, as `match/local/start` answers it in `locationLoot.Loot`: SPT's loose loot
//! (`locations.<map>.looseLoot`: forced spawn points, then a sample of the others weighted by their
//! `probability`, each with one item drawn from its `itemDistribution`) and its static containers
//! (`locations.<map>.staticContainers`, each kept with its `probability`, filled from
//! `locations.<map>.staticLoot.<container tpl>`: a count, then items by weight, placed first-fit in the
//! container's `main` grid).
//!
//! Simple and bounded where SPT is elaborate: at most [`MAX_LOOSE`] loose spawn points, [`MAX_CONTAINERS`]
//! containers of at most [`MAX_PER_CONTAINER`] items, [`MAX_ITEMS`] items in all; no ammo fill from
//! `staticAmmo`, no static weapons, no container groups. The arrays are read as one text each and
//! streamed (a real map's loose loot is megabytes): each element is parsed alone and dropped unless the
//! sample keeps it. Every item gets a fresh id, so each raid's loot is its own; the draw follows the
//! raid's seed, so the same raid draws the same loot.

use crate::ids;
use crate::templates::Templates;
use modhost_sdk::db;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;

/// Loose spawn points kept per raid, forced ones included.
pub(crate) const MAX_LOOSE: usize = 150;
/// Static containers kept per raid.
pub(crate) const MAX_CONTAINERS: usize = 100;
/// Items drawn into one container.
pub(crate) const MAX_PER_CONTAINER: usize = 12;
/// Items issued as loot per raid (containers and their contents included).
pub(crate) const MAX_ITEMS: usize = 4000;
/// Elements of one spawn point's item list followed (a spawn point's item and its parts).
const MAX_SPAWN_ITEMS: usize = 256;
/// Entries of a weight table read (`itemDistribution`, `itemcountDistribution`).
const MAX_WEIGHTS: usize = 4096;

/// A small deterministic generator (splitmix64): the raid's draws follow its seed.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n); 0 when n is 0.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    /// A normal draw (Box-Muller).
    fn normal(&mut self, mean: f64, std: f64) -> f64 {
        let u = self.unit().max(f64::MIN_POSITIVE);
        let v = self.unit();
        mean + std * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// An index into `weights`, each chosen in proportion to its weight; `None` when none is positive.
    pub(crate) fn weighted(&mut self, weights: &[f64]) -> Option<usize> {
        crate::ids::weighted(weights, self.unit())
    }
}

/// An item the raid handed out: its id, template and units.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Issued {
    pub(crate) id: String,
    pub(crate) tpl: String,
    pub(crate) count: u64,
}

impl Issued {
    pub(crate) fn of(item: &Value) -> Issued {
        Issued {
            id: item["_id"].as_str().unwrap_or_default().to_owned(),
            tpl: item["_tpl"].as_str().unwrap_or_default().to_owned(),
            count: item["upd"]["StackObjectsCount"].as_u64().unwrap_or(1),
        }
    }
}

/// The raid's loot on `map`: the spawn templates for `Loot`, and every item in them.
pub(crate) fn generate(map: &str, seed: u64, templates: &mut Templates) -> (Vec<Value>, Vec<Issued>) {
    let mut rng = Rng::new(seed);
    let mut loot = Vec::new();
    loose(map, &mut rng, &mut loot);
    containers(map, &mut rng, templates, &mut loot);
    let mut issued = Vec::new();
    for spawn in &loot {
        for item in spawn["Items"].as_array().into_iter().flatten() {
            issued.push(Issued::of(item));
        }
    }
    (loot, issued)
}

fn loot_items(loot: &[Value]) -> usize {
    loot.iter().map(|s| s["Items"].as_array().map_or(0, Vec::len)).sum()
}

/// The loose loot: every forced spawn point, then a weighted sample of the others.
fn loose(map: &str, rng: &mut Rng, loot: &mut Vec<Value>) {
    let base = ["locations", map, "looseLoot"];
    let count: Value = db::get(&db::path(&[base[0], base[1], base[2], "spawnpointCount"])).unwrap_or(Value::Null);
    let forced = sample(&db::path(&[base[0], base[1], base[2], "spawnpointsForced"]), MAX_LOOSE, rng, |_| 1.0, true);
    for point in forced {
        if let Some(spawn) = spawn_of(&point, rng, true) {
            push_bounded(loot, spawn);
        }
    }
    let mean = count["mean"].as_f64().unwrap_or(0.0);
    let std = count["std"].as_f64().unwrap_or(0.0).abs();
    let wanted = rng.normal(mean, std).round().clamp(0.0, (MAX_LOOSE - loot.len().min(MAX_LOOSE)) as f64) as usize;
    let chosen = sample(
        &db::path(&[base[0], base[1], base[2], "spawnpoints"]),
        wanted,
        rng,
        |p| p["probability"].as_f64().unwrap_or(0.0),
        false,
    );
    for point in chosen {
        if let Some(spawn) = spawn_of(&point, rng, false) {
            push_bounded(loot, spawn);
        }
    }
}

fn push_bounded(loot: &mut Vec<Value>, spawn: Value) {
    let n = spawn["Items"].as_array().map_or(0, Vec::len);
    if loot_items(loot) + n <= MAX_ITEMS {
        loot.push(spawn);
    }
}

/// Up to `keep` elements of the array at `path`, streamed: with `all`, the first `keep`; otherwise a
/// weighted sample without replacement (each element's key is `u^(1/weight)`, the largest keys kept).
fn sample(path: &str, keep: usize, rng: &mut Rng, weight: impl Fn(&Value) -> f64, all: bool) -> Vec<Value> {
    if keep == 0 {
        return Vec::new();
    }
    let Ok(text) = db::get_json(path) else { return Vec::new() };
    let mut kept: Vec<(f64, Value)> = Vec::new();
    let mut on_element = |element: Value| {
        if all {
            if kept.len() < keep {
                kept.push((0.0, element));
            }
            return;
        }
        let w = weight(&element);
        if !(w.is_finite() && w > 0.0) {
            return;
        }
        let key = rng.unit().powf(1.0 / w);
        if kept.len() < keep {
            kept.push((key, element));
        } else if let Some((at, _)) =
            kept.iter().enumerate().min_by(|a, b| a.1.0.total_cmp(&b.1.0)).filter(|(_, (least, _))| *least < key)
        {
            kept[at] = (key, element);
        }
    };
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    // A value that is not an array samples nothing.
    let _ = Stream(&mut on_element).deserialize(&mut deserializer);
    kept.into_iter().map(|(_, element)| element).collect()
}

/// Streams an array's elements to a callback, one parsed at a time.
struct Stream<'f, F>(&'f mut F);

impl<'de, F: FnMut(Value)> DeserializeSeed<'de> for Stream<'_, F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(Value)> Visitor<'de> for Stream<'_, F> {
    type Value = ();

    fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(element) = seq.next_element::<Value>()? {
            (self.0)(element);
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// A spawn point's template with one item (and its parts) under fresh ids: the item its
/// `itemDistribution` draws, or for a forced point its `Root`.
fn spawn_of(point: &Value, rng: &mut Rng, forced: bool) -> Option<Value> {
    let template = &point["template"];
    let items: &[Value] = template["Items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let items = &items[..items.len().min(MAX_SPAWN_ITEMS)];
    let chosen = if forced {
        template["Root"].as_str().map(str::to_owned).or_else(|| items.first()?["_id"].as_str().map(str::to_owned))?
    } else {
        let distribution: &[Value] = point["itemDistribution"].as_array().map(Vec::as_slice).unwrap_or_default();
        let distribution = &distribution[..distribution.len().min(MAX_WEIGHTS)];
        let weights: Vec<f64> = distribution.iter().map(|d| d["relativeProbability"].as_f64().unwrap_or(0.0)).collect();
        distribution[rng.weighted(&weights)?]["composedKey"]["key"].as_str()?.to_owned()
    };
    let with_parts = fresh_tree(items, &chosen)?;
    let mut spawn = template.clone();
    spawn["Root"] = with_parts[0]["_id"].clone();
    spawn["Items"] = Value::Array(with_parts);
    Some(spawn)
}

/// Item `root` of `items` and everything under it, each with a fresh id (parents remapped); the root
/// loses its parent. `None` when `root` is not there.
pub(crate) fn fresh_tree(items: &[Value], root: &str) -> Option<Vec<Value>> {
    let first = items.iter().find(|i| i["_id"] == root)?;
    let mut ids: HashMap<String, String> = HashMap::new();
    let fresh = ids::new_id();
    ids.insert(root.to_owned(), fresh.clone());
    let mut top = first.clone();
    top["_id"] = json!(fresh);
    if let Some(members) = top.as_object_mut() {
        members.shift_remove("parentId");
        members.shift_remove("slotId");
        members.shift_remove("location");
    }
    let mut out = vec![top];
    // Parents before children; each pass adds the items whose parent is already in, so a list in any
    // order is followed, at most its length of passes.
    for _ in 0..items.len() {
        let mut added = false;
        for item in items {
            let (Some(id), Some(parent)) = (item["_id"].as_str(), item["parentId"].as_str()) else { continue };
            if ids.contains_key(id) {
                continue;
            }
            if let Some(new_parent) = ids.get(parent).cloned() {
                let fresh = ids::new_id();
                ids.insert(id.to_owned(), fresh.clone());
                let mut copy = item.clone();
                copy["_id"] = json!(fresh);
                copy["parentId"] = json!(new_parent);
                out.push(copy);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    Some(out)
}

/// The static containers: each kept with its probability, then filled from its loot table.
fn containers(map: &str, rng: &mut Rng, templates: &mut Templates, loot: &mut Vec<Value>) {
    let path = db::path(&["locations", map, "staticContainers", "staticContainers"]);
    let Ok(text) = db::get_json(&path) else { return };
    let mut chosen: Vec<Value> = Vec::new();
    let mut on_element = |container: Value| {
        if chosen.len() >= MAX_CONTAINERS {
            return;
        }
        let always = container["template"]["IsAlwaysSpawn"] == true;
        if always || rng.unit() < container["probability"].as_f64().unwrap_or(0.0) {
            chosen.push(container);
        }
    };
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let _ = Stream(&mut on_element).deserialize(&mut deserializer);
    let mut tables: HashMap<String, Option<Value>> = HashMap::new();
    for container in chosen {
        if let Some(filled) = fill(map, &container, rng, templates, &mut tables) {
            push_bounded(loot, filled);
        }
    }
}

/// One container with fresh ids and its drawn contents placed in its `main` grid.
fn fill(
    map: &str,
    container: &Value,
    rng: &mut Rng,
    templates: &mut Templates,
    tables: &mut HashMap<String, Option<Value>>,
) -> Option<Value> {
    let template = &container["template"];
    let box_tpl = template["Items"][0]["_tpl"].as_str()?.to_owned();
    let id = ids::new_id();
    let mut items = vec![json!({"_id": id, "_tpl": box_tpl, "upd": {"StackObjectsCount": 1}})];
    let table = tables
        .entry(box_tpl.clone())
        .or_insert_with(|| db::get::<Value>(&db::path(&["locations", map, "staticLoot", &box_tpl])).ok());
    if let (Some(table), Some((columns, rows))) = (table.as_ref(), templates.grid(&box_tpl, "main")) {
        let counts: &[Value] = table["itemcountDistribution"].as_array().map(Vec::as_slice).unwrap_or_default();
        let counts = &counts[..counts.len().min(MAX_WEIGHTS)];
        let weights: Vec<f64> = counts.iter().map(|c| c["relativeProbability"].as_f64().unwrap_or(0.0)).collect();
        let count = rng.weighted(&weights).and_then(|i| counts[i]["count"].as_u64()).unwrap_or(0) as usize;
        let pool: &[Value] = table["itemDistribution"].as_array().map(Vec::as_slice).unwrap_or_default();
        let pool = &pool[..pool.len().min(MAX_WEIGHTS)];
        let weights: Vec<f64> = pool.iter().map(|p| p["relativeProbability"].as_f64().unwrap_or(0.0)).collect();
        let (columns, rows) = (columns.clamp(0, 64) as usize, rows.clamp(0, 64) as usize);
        let mut taken = vec![vec![false; columns]; rows];
        for _ in 0..count.min(MAX_PER_CONTAINER) {
            let Some(tpl) = rng.weighted(&weights).and_then(|i| pool[i]["tpl"].as_str()) else { break };
            if templates.props(tpl).is_none() {
                continue;
            }
            let (w, h) = templates.footprint(tpl, false);
            let Some((x, y)) = first_fit(&mut taken, w as usize, h as usize) else { continue };
            let units = match templates.stack_max(tpl) {
                Some(1) => 1,
                max => 1 + rng.below(max.unwrap_or(100).min(100)),
            };
            items.push(json!({
                "_id": ids::new_id(), "_tpl": tpl, "parentId": id, "slotId": "main",
                "location": {"x": x, "y": y, "r": "Horizontal"}, "upd": {"StackObjectsCount": units},
            }));
        }
    }
    let mut filled = template.clone();
    filled["Root"] = json!(id);
    filled["Items"] = Value::Array(items);
    Some(filled)
}

/// The first free place for a `w`×`h` item in `taken`, marked taken.
fn first_fit(taken: &mut [Vec<bool>], w: usize, h: usize) -> Option<(usize, usize)> {
    let rows = taken.len();
    let columns = taken.first().map_or(0, Vec::len);
    if w == 0 || h == 0 || w > columns || h > rows {
        return None;
    }
    for y in 0..=rows - h {
        for x in 0..=columns - w {
            if (y..y + h).all(|r| (x..x + w).all(|c| !taken[r][c])) {
                for row in taken.iter_mut().skip(y).take(h) {
                    row[x..x + w].fill(true);
                }
                return Some((x, y));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_draws_the_same_and_weights_are_followed() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        assert_eq!((0..5).map(|_| a.next()).collect::<Vec<_>>(), (0..5).map(|_| b.next()).collect::<Vec<_>>());
        let mut rng = Rng::new(1);
        let mut hits = [0u32; 3];
        for _ in 0..3000 {
            hits[rng.weighted(&[1.0, 0.0, 3.0]).unwrap()] += 1;
        }
        assert_eq!(hits[1], 0);
        assert!(hits[2] > hits[0] * 2, "{hits:?}");
        assert_eq!(rng.weighted(&[0.0, -1.0, f64::NAN]), None);
    }

    #[test]
    fn a_tree_gets_fresh_ids_with_its_parts_under_them() {
        let items = vec![
            json!({"_id": "a", "_tpl": "t1"}),
            json!({"_id": "c", "_tpl": "t3", "parentId": "b", "slotId": "s"}),
            json!({"_id": "b", "_tpl": "t2", "parentId": "a", "slotId": "s"}),
            json!({"_id": "z", "_tpl": "t4"}),
        ];
        let tree = fresh_tree(&items, "a").unwrap();
        assert_eq!(tree.len(), 3);
        assert!(tree.iter().all(|i| ids::is_id(i["_id"].as_str().unwrap())));
        assert_eq!(tree[1]["parentId"], tree[0]["_id"]);
        assert_eq!(tree[2]["parentId"], tree[1]["_id"]);
        assert!(tree[0].get("parentId").is_none());
        assert!(fresh_tree(&items, "nope").is_none());
    }

    #[test]
    fn first_fit_fills_then_refuses() {
        let mut grid = vec![vec![false; 2]; 2];
        assert_eq!(first_fit(&mut grid, 2, 1), Some((0, 0)));
        assert_eq!(first_fit(&mut grid, 1, 1), Some((0, 1)));
        assert_eq!(first_fit(&mut grid, 2, 1), None);
        assert_eq!(first_fit(&mut grid, 3, 1), None);
    }
}
