//! Item templates: what the db's `templates.items.<tpl>._props` says about an item (its size, its
//! grids, how many units a stack holds), read once per template per request, the templates the game
//! itself names (money, a profile's root containers), and what the handbook says an item is worth.
//!
//! A leaf: the profile's shape, its inventory model, trading, raids and quests all read templates.

use modhost_sdk::db;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The rouble's template.
pub(crate) const ROUBLES: &str = "5449016a4bdc2d6f028b456f";
/// A profile's root containers: the equipment, the pockets in it, the stash, the quest items' two
/// stores and the sorting table.
pub(crate) const EQUIPMENT: &str = "55d7217a4bdc2d86028b456d";
pub(crate) const POCKETS: &str = "627a4e6b255f7527fb05a0f6";
pub(crate) const STASH: &str = "5811ce572459770cba1a34ea";
pub(crate) const QUEST_RAID: &str = "5963866286f7747bf429b572";
pub(crate) const QUEST_STASH: &str = "5963866b86f7747bfa6d1e0c";
pub(crate) const SORTING_TABLE: &str = "602543c13fee350cd564d032";

/// The longest side, in cells, an item is indexed and placed with: a template claiming more is
/// clamped, so a wild `Width` cannot make one item write thousands of index entries.
pub(crate) const MAX_SIDE: i64 = 64;

/// The root of every item template's lineage (SPT's `Item` node): a filter naming it admits anything.
pub(crate) const ITEM_ROOT: &str = "54009119af1c881c07000029";

/// How far up a template's `_parent` chain is followed: real lineages are about five deep.
const MAX_LINEAGE: usize = 16;

/// Template props read from the db, each once per batch; each template's `_parent`, read only by a
/// slot or grid filter that must know an item's categories; and each template's [`Dims`].
#[derive(Default)]
pub(crate) struct Templates(
    HashMap<String, Option<Value>>,
    HashMap<String, Option<String>>,
    HashMap<String, Option<Dims>>,
);

/// What placing and stacking read of a template: its size and its stack limit. Read from `_props`
/// without the rest of it (a template's props are a kilobyte or more, and every item a drag writes
/// needs these three numbers), as the values they are, so a member of an odd type reads as the whole
/// props would.
#[derive(Deserialize)]
pub(crate) struct Dims {
    #[serde(rename = "Width", default)]
    width: Value,
    #[serde(rename = "Height", default)]
    height: Value,
    #[serde(rename = "StackMaxSize", default)]
    stack_max: Value,
}

impl Dims {
    fn of(props: &Value) -> Dims {
        Dims {
            width: props["Width"].clone(),
            height: props["Height"].clone(),
            stack_max: props["StackMaxSize"].clone(),
        }
    }
}

impl Templates {
    /// `templates.items.<tpl>._props`, if the template exists.
    pub(crate) fn props(&mut self, tpl: &str) -> Option<&Value> {
        self.0
            .entry(tpl.to_owned())
            .or_insert_with(|| db::get::<Value>(&db::path(&["templates", "items", tpl, "_props"])).ok())
            .as_ref()
    }

    /// [`Dims`] of `tpl`, if the template exists: from its props when they were read already, else
    /// read alone.
    fn dims(&mut self, tpl: &str) -> Option<&Dims> {
        if !self.2.contains_key(tpl) {
            let dims = match self.0.get(tpl) {
                Some(props) => props.as_ref().map(Dims::of),
                None => db::get::<Dims>(&db::path(&["templates", "items", tpl, "_props"])).ok(),
            };
            self.2.insert(tpl.to_owned(), dims);
        }
        self.2[tpl].as_ref()
    }

    /// Width and height of an item of `tpl` (1×1 when the template does not say, each side at most
    /// [`MAX_SIDE`]), swapped when rotated.
    pub(crate) fn footprint(&mut self, tpl: &str, rotated: bool) -> (i64, i64) {
        let dims = self.dims(tpl);
        let dim = |v: Option<&Value>| v.and_then(Value::as_i64).filter(|v| *v > 0).unwrap_or(1).min(MAX_SIDE);
        let (w, h) = (dim(dims.map(|d| &d.width)), dim(dims.map(|d| &d.height)));
        if rotated { (h, w) } else { (w, h) }
    }

    /// The size (columns, rows) of grid `name` of a container of `tpl`, if it has one.
    pub(crate) fn grid(&mut self, tpl: &str, name: &str) -> Option<(i64, i64)> {
        let grid = self.props(tpl)?["Grids"].as_array()?.iter().find(|g| g["_name"] == name)?;
        Some((grid["_props"]["cellsH"].as_i64()?, grid["_props"]["cellsV"].as_i64()?))
    }

    /// `tpl` and its categories, nearest first (its `_parent`, that one's, …), as far as the db has them.
    pub(crate) fn lineage(&mut self, tpl: &str) -> Vec<String> {
        let mut out = vec![tpl.to_owned()];
        while out.len() < MAX_LINEAGE {
            let last = out.last().expect("starts with one").clone();
            let parent = self
                .1
                .entry(last.clone())
                .or_insert_with(|| db::get::<String>(&db::path(&["templates", "items", &last, "_parent"])).ok())
                .clone();
            match parent {
                Some(parent) if !parent.is_empty() && !out.contains(&parent) => out.push(parent),
                _ => break,
            }
        }
        out
    }

    /// How many units one stack of `tpl` may hold; `None` when unlimited (`StackMaxSize` absent or 0).
    pub(crate) fn stack_max(&mut self, tpl: &str) -> Option<u64> {
        self.dims(tpl).and_then(|d| d.stack_max.as_u64()).filter(|n| *n > 0)
    }
}

/// The template of an item.
pub(crate) fn tpl(item: &Value) -> &str {
    item["_tpl"].as_str().unwrap_or_default()
}

/// Is a location rotated? The client writes `r` as `"Vertical"` or `1`.
pub(crate) fn rotated(location: &Value) -> bool {
    location["r"] == "Vertical" || location["r"] == 1
}

/// The most handbook entries read for prices (a real handbook has about four thousand).
pub(crate) const MAX_PRICES: usize = 200_000;

/// Every item's handbook price, by template.
pub(crate) fn handbook_prices() -> BTreeMap<String, f64> {
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Entry {
        id: String,
        #[serde(default)]
        price: f64,
    }
    let entries: Vec<Entry> = db::get("templates.handbook.Items").unwrap_or_default();
    entries.into_iter().take(MAX_PRICES).map(|e| (e.id, e.price)).collect()
}
