//! How a profile is kept in the store, and how it turns into the SPT shape the client reads and back.
//!
//! SPT's shape holds `Inventory.items` as an array, so finding one item, a container's contents or
//! the items on a grid's cells means scanning all of them. The stored shape keys the items by id
//! (`Inventory.items.<id>`) and keeps indexes beside them, in a top-level `_modhost` member the client
//! never sees, so an action reads only the entries it needs (`store::doc_get` by path):
//!
//! - `_modhost.owner`: the session that made the profile without an account (`boot/profiles.rs`);
//! - `_modhost.shape`: [`SHAPE`]; a profile without it (one written in SPT's shape, brought in with
//!   `modhost store put`, say) is converted on first touch, once ([`stored`]).
//! - `_modhost.children.<parent>.<child>`: the child's `slotId`, for "what is inside" (removing a
//!   container, "has items inside") without a scan.
//! - `_modhost.rows.<parent>.<container>.<y>.<id>`: `[x, width]` for each row `y` a placed item covers,
//!   so a grid check reads only the rows of the footprint (each at most a grid's width of entries),
//!   never every child of the stash, which holds most of a late-game profile.
//! - `_modhost.stacks.<tpl>.<id>`: `1` for every item whose template stacks (`StackMaxSize` other than
//!   1), so buying can top up stacks of the goods (and find money) without a scan.
//!
//! Every entry is a function of one item and its template ([`entries`]): the conversion builds the
//! indexes from them and every change of an item replaces its old entries with its new ones in the same
//! patch (`inventory::write`), so the two can never disagree. An empty map means the same as no map
//! (a container whose last child left keeps `{}`: removing it would mean reading all of its siblings).

use crate::templates::{Templates, rotated, tpl};
use serde_json::{Map, Value, json};

/// The version of the stored shape.
pub(crate) const SHAPE: u64 = 1;
/// The member holding the indexes.
pub(crate) const INDEX: &str = "_modhost";
/// The member holding the player's mailbox (`mail/mailbox.rs`), kept in the profile so taking an
/// attachment is one write with the stash; never sent as part of the character.
pub(crate) const MAIL: &str = "_mail";
/// The member holding the suits the player bought (`items/customization.rs`), in the profile so the
/// payment and the unlock are one write; never sent as part of the character.
pub(crate) const UNLOCKS: &str = "_unlocks";
/// The member holding the player's own flea offers (`ragfair/player.rs`): `<offer id>` =
/// `{offer, paid}`, shown to the client as `RagfairInfo.offers`.
pub(crate) const FLEA: &str = "_flea";

/// One index entry: its path and its value.
pub(crate) type Entry = (Vec<String>, Value);

/// The index entries of item `id`.
pub(crate) fn entries(id: &str, item: &Value, templates: &mut Templates) -> Vec<Entry> {
    let path = |names: &[&str]| -> Vec<String> {
        std::iter::once(INDEX).chain(names.iter().copied()).map(str::to_owned).collect()
    };
    let mut out = Vec::new();
    if let Some(parent) = item["parentId"].as_str() {
        let slot = item["slotId"].as_str().unwrap_or_default();
        out.push((path(&["children", parent, id]), json!(slot)));
        let location = &item["location"];
        if let (Some(slot), Some(x), Some(y)) =
            (item["slotId"].as_str(), location["x"].as_i64(), location["y"].as_i64())
        {
            let (w, h) = templates.footprint(tpl(item), rotated(location));
            for row in y..y.saturating_add(h) {
                out.push((path(&["rows", parent, slot, &row.to_string(), id]), json!([x, w])));
            }
        }
    }
    let template = tpl(item);
    if !template.is_empty() && templates.stack_max(template) != Some(1) {
        out.push((path(&["stacks", template, id]), json!(1)));
    }
    out
}

/// Whether `profile` (a whole stored value) is already in the stored shape.
pub(crate) fn is_stored(profile: &Value) -> bool {
    profile[INDEX]["shape"] == SHAPE
}

/// A profile in the stored shape, from one in SPT's (or an older stored one): items keyed by id, the
/// indexes rebuilt from them. An item without a usable id (none, or one already taken) is kept under
/// a key no client id can name, so nothing a player brought in is lost.
pub(crate) fn stored(mut profile: Value, templates: &mut Templates) -> Value {
    if !profile.is_object() {
        profile = json!({});
    }
    if !profile["Inventory"].is_object() {
        profile["Inventory"] = json!({});
    }
    let listed: Vec<Value> = match profile["Inventory"]["items"].take() {
        Value::Array(items) => items,
        Value::Object(items) => items.into_iter().map(|(_, item)| item).collect(),
        _ => Vec::new(),
    };
    let mut items = Map::new();
    for (n, item) in listed.into_iter().enumerate() {
        let key = match item["_id"].as_str() {
            Some(id) if !id.is_empty() && !items.contains_key(id) => id.to_owned(),
            _ => format!("~{n}"),
        };
        items.insert(key, item);
    }
    let mut index = json!({ "shape": SHAPE });
    // Who owns it (`boot/profiles.rs`) is not a function of the items: it survives a rebuild.
    if let Some(owner) = profile[INDEX].get("owner").filter(|o| o.is_string()) {
        index["owner"] = owner.clone();
    }
    for (key, item) in &items {
        if key.starts_with('~') {
            continue;
        }
        for (path, value) in entries(key, item, templates) {
            let mut node = &mut index;
            for name in &path[1..] {
                node = node.as_object_mut().expect("index nodes are objects").entry(name.clone()).or_insert(json!({}));
            }
            *node = value;
        }
    }
    profile["Inventory"]["items"] = Value::Object(items);
    profile[INDEX] = index;
    profile
}

/// The client's `RagfairInfo` of a stored profile: [`FLEA`] becomes its `offers` (SPT's array), with
/// SPT's defaults for a profile that never listed one.
fn ragfair_info(profile: &mut Value) {
    let markers = match profile.as_object_mut().and_then(|m| m.shift_remove(FLEA)) {
        Some(Value::Object(markers)) => markers,
        // A profile in SPT's shape keeps its own list.
        _ if profile["RagfairInfo"]["offers"].is_array() => return,
        _ => Map::new(),
    };
    if !profile["RagfairInfo"].is_object() {
        profile["RagfairInfo"] = json!({});
    }
    let info = &mut profile["RagfairInfo"];
    if !info["rating"].is_number() {
        info["rating"] = json!(0.0);
    }
    if !info["isRatingGrowing"].is_boolean() {
        info["isRatingGrowing"] = json!(true);
    }
    info["offers"] = Value::Array(markers.values().map(|m| public_offer(&m["offer"])).collect());
}

/// A flea offer as the client reads it: SPT's `RagfairOffer`, without the game's own (`_`-prefixed)
/// members.
pub(crate) fn public_offer(offer: &Value) -> Value {
    let mut out = offer.clone();
    if let Some(members) = out.as_object_mut() {
        members.retain(|name, _| !name.starts_with('_') || name == "_id");
    }
    out
}

/// A profile in SPT's shape, as the client reads it: the items as an array, in the order they were
/// added, and no indexes or mailbox (`mail/mailbox.rs`; the mail routes answer it). A profile still in
/// SPT's shape passes unchanged.
pub(crate) fn spt(mut profile: Value) -> Value {
    if let Some(members) = profile.as_object_mut() {
        members.shift_remove(INDEX);
        members.shift_remove(MAIL);
        members.shift_remove(UNLOCKS);
    }
    ragfair_info(&mut profile);
    if profile["Inventory"]["items"].is_object() {
        let Value::Object(items) = profile["Inventory"]["items"].take() else { unreachable!("checked an object") };
        profile["Inventory"]["items"] = Value::Array(items.into_iter().map(|(_, item)| item).collect());
    }
    profile
}
