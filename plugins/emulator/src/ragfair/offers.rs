//! The flea's offers in the store, and the indexes a search reads instead of the offers.
//!
//! Offers are shared by every player and are not part of any profile, so each is a store document of
//! its own, `flea.offer.<id>`: SPT's `RagfairOffer` (what `find` answers) plus the game's own members
//! `_kind` (`trader`, `generated`, `player`) and, for a player's offer, `_owner` (the profile id) and
//! `_session` (whom the sale's mail is pushed to). One document per offer keeps a purchase's write
//! (its quantity, compare-and-set on the offer's version) as small as the offer.
//!
//! A search never reads the offers it does not answer. Its indexes:
//! - `flea.tpl.<tpl>`: `{offer id: Entry}` for every offer selling template `tpl`, where an [`Entry`]
//!   holds everything the filters and the sorts of SPT's `SearchRequestData` need (price in roubles,
//!   currency, quantity, expiry, condition, owner type, rating, `intId`); a search reads one such
//!   document per template in scope, filters and sorts the entries in memory (a few dozen bytes
//!   each), and reads only the page's offers (at most [`MAX_PAGE`]).
//! - `flea.tpls`: `{tpl: handbook parent}` for every template that ever had an offer: a category's
//!   search maps its handbook subtree to templates through it without reading the handbook's items.
//! - `flea.int`: `{intId: offer id}`, for `offer/findbyid` (the client names an offer by `intId`).
//! - `flea.req.<tpl>`: `{offer id: tpl sold}` for the offers asking for `tpl` as barter (the "needed"
//!   search).
//! - `flea.exp` and `flea.exp.<bucket>`: the offers that end in each [`BUCKET`]-second window (`flea.exp`
//!   lists the windows that have any), so the refresh timer finds what expired without a scan.
//!
//! Writes go offer first, then its entries: a crash between them leaves an offer no index names (the
//! next refresh of its template replaces it) or, on removal, an entry whose offer is gone (a search
//! skips it and drops it). Neither moves a player's money or items: a player's own offers are held
//! in their profile (`player.rs`), and these documents are a copy kept in step with it.

use modhost_sdk::{Result, db, store};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The most offers one page of a search answers: the client asks for 15 to 100.
pub(crate) const MAX_PAGE: usize = 100;
/// The width of an expiry window, in seconds.
pub(crate) const BUCKET: u64 = 600;

/// Money templates and their `SearchRequestData.currency` codes (1 roubles, 2 dollars, 3 euros).
pub(crate) const ROUBLES: &str = crate::templates::ROUBLES;
pub(crate) const DOLLARS: &str = "5696686a4bdc2da3298b456a";
pub(crate) const EUROS: &str = "569668774bdc2da2298b4568";

/// SPT's `MemberCategory.Trader`: a trader's offer.
pub(crate) const MEMBER_TRADER: u64 = 4;

/// What a search knows of an offer without reading it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    /// Price of one unit in roubles (SPT's `requirementsCost`; a pack's whole price).
    pub(crate) p: f64,
    /// Ends at (seconds).
    pub(crate) e: u64,
    /// Units left.
    pub(crate) q: u64,
    /// Owner type: 1 a trader, 2 a player (generated or real): `offerOwnerType`'s codes.
    pub(crate) t: u8,
    /// Currency: 0 barter, 1 roubles, 2 dollars, 3 euros.
    pub(crate) c: u8,
    /// Condition in percent of the root item (100 when it has none).
    pub(crate) d: u8,
    /// Sold as one piece (a pack).
    #[serde(default)]
    pub(crate) k: bool,
    /// The seller's rating.
    pub(crate) r: f64,
    /// SPT's `intId`, the order offers were made in (sort by id).
    pub(crate) i: u64,
    /// A real player's profile id (their own offers are theirs to see, not to buy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) o: Option<String>,
}

/// The currency code of one requirement list.
pub(crate) fn currency(requirements: &[Value]) -> u8 {
    match requirements {
        [only] => match only["_tpl"].as_str() {
            Some(ROUBLES) => 1,
            Some(DOLLARS) => 2,
            Some(EUROS) => 3,
            _ => 0,
        },
        _ => 0,
    }
}

/// The root item's condition in percent: durability, a medkit's or food's resource, a key's uses.
pub(crate) fn condition(root: &Value, props: Option<&Value>) -> u8 {
    let upd = &root["upd"];
    let of = |now: Option<f64>, max: Option<f64>| match (now, max) {
        (Some(now), Some(max)) if max > 0.0 => Some((now / max * 100.0).clamp(0.0, 100.0)),
        _ => None,
    };
    let max = |name: &str| props.and_then(|p| p[name].as_f64());
    let pct = of(upd["Repairable"]["Durability"].as_f64(), upd["Repairable"]["MaxDurability"].as_f64())
        .or_else(|| of(upd["MedKit"]["HpResource"].as_f64(), max("MaxHpResource")))
        .or_else(|| upd["FoodDrink"]["HpPercent"].as_f64().and_then(|hp| of(Some(hp), max("MaxResource"))))
        .or_else(|| {
            let uses = upd["Key"]["NumberOfUsages"].as_f64()?;
            let most = max("MaximumNumberOfUsage")?;
            of(Some(most - uses), Some(most))
        });
    pct.unwrap_or(100.0).round() as u8
}

/// The index entry of `offer`.
pub(crate) fn entry(offer: &Value) -> Entry {
    let requirements = offer["requirements"].as_array().map(Vec::as_slice).unwrap_or_default();
    let trader = offer["user"]["memberType"].as_u64() == Some(MEMBER_TRADER);
    Entry {
        p: offer["requirementsCost"].as_f64().unwrap_or(0.0),
        e: offer["endTime"].as_u64().unwrap_or(0),
        q: offer["quantity"].as_u64().unwrap_or(0),
        t: if trader { 1 } else { 2 },
        c: currency(requirements),
        d: offer["_condition"].as_u64().unwrap_or(100).min(100) as u8,
        k: offer["sellInOnePiece"] == true,
        r: offer["user"]["rating"].as_f64().unwrap_or(0.0),
        i: offer["intId"].as_u64().unwrap_or(0),
        o: offer["_owner"].as_str().map(str::to_owned),
    }
}

/// The template an offer sells (its root item's).
pub(crate) fn sells(offer: &Value) -> Option<&str> {
    let root = offer["root"].as_str()?;
    offer["items"].as_array()?.iter().find(|i| i["_id"] == root)?["_tpl"].as_str()
}

fn key(id: &str) -> String {
    format!("flea.offer.{id}")
}

/// The offer `id` with its version, if it exists.
pub(crate) fn get(id: &str) -> Result<Option<(Value, u64)>> {
    if !crate::ids::is_id(id) {
        return Ok(None);
    }
    store::get_versioned(&key(id))
}

/// A new intId block of `n`, from the shared counter.
pub(crate) fn int_ids(n: u64) -> Result<u64> {
    let first = store::update("flea.next", |next: &mut u64| {
        let first = (*next).max(1);
        *next = first + n;
        Some(first)
    })?;
    Ok(first.unwrap_or(1))
}

/// The handbook parent of `tpl`, for `flea.tpls` (a category search's map).
fn parent(tpl: &str) -> String {
    db::get::<String>(&db::path(&["templates", "items", tpl, "_parent"])).unwrap_or_default()
}

/// Writes a new or changed offer and its index entries (the offer first).
pub(crate) fn put(offer: &Value) -> Result<()> {
    let (Some(id), Some(tpl)) = (offer["_id"].as_str(), sells(offer)) else {
        return Err(modhost_sdk::Error::failed("an offer without an id or a root item"));
    };
    store::set(&key(id), offer)?;
    index(id, tpl, offer)
}

/// The index entries of `offer` (written after it).
pub(crate) fn index(id: &str, tpl: &str, offer: &Value) -> Result<()> {
    store::doc_patch(&format!("flea.tpl.{tpl}"), "", &json!({ id: entry(offer) }))?;
    if store::doc_get::<Value>("flea.tpls", &db::path(&[tpl]))?.is_none_or(|(v, _)| v.is_null()) {
        store::doc_patch("flea.tpls", "", &json!({ tpl: handbook_parent(tpl) }))?;
    }
    if let Some(int) = offer["intId"].as_u64() {
        store::doc_patch("flea.int", "", &json!({ int.to_string(): id }))?;
    }
    for needed in barter_parts(offer) {
        store::doc_patch(&format!("flea.req.{needed}"), "", &json!({ id: tpl }))?;
    }
    let ends = offer["endTime"].as_u64().unwrap_or(0);
    let bucket = (ends / BUCKET).to_string();
    store::doc_patch(&format!("flea.exp.{bucket}"), "", &json!({ id: tpl }))?;
    store::doc_patch("flea.exp", "", &json!({ bucket: 1 }))?;
    Ok(())
}

/// The templates an offer asks for that are not money (SPT's "needed" search finds it by them).
fn barter_parts(offer: &Value) -> Vec<&str> {
    let money = [ROUBLES, DOLLARS, EUROS];
    offer["requirements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["_tpl"].as_str())
        .filter(|t| !money.contains(t) && crate::ids::is_id(t))
        .collect()
}

/// The handbook category a template is listed under: the handbook's own entry when the db names one
/// in `templates.handbook.Items`, else the template's parent. The handbook is read once per instance
/// (a refresh lists many templates at once).
fn handbook_parent(tpl: &str) -> String {
    static PARENTS: std::sync::OnceLock<std::collections::HashMap<String, String>> = std::sync::OnceLock::new();
    #[derive(Deserialize)]
    struct Item {
        #[serde(rename = "Id")]
        id: String,
        #[serde(rename = "ParentId", default)]
        parent: String,
    }
    let parents = PARENTS.get_or_init(|| {
        let items: Vec<Item> = db::get("templates.handbook.Items").unwrap_or_default();
        items.into_iter().take(crate::templates::MAX_PRICES).map(|i| (i.id, i.parent)).collect()
    });
    parents.get(tpl).cloned().unwrap_or_else(|| parent(tpl))
}

/// Only the quantity (and its entry) of an offer, after a purchase or a sale.
pub(crate) fn set_quantity(id: &str, tpl: &str, offer: &Value, version: u64, quantity: u64) -> Result<()> {
    let mut changed = offer.clone();
    changed["quantity"] = json!(quantity);
    store::doc_patch_if_version(&key(id), "", &json!({ "quantity": quantity }), version)?;
    store::doc_patch(&format!("flea.tpl.{tpl}"), "", &json!({ id: entry(&changed) }))?;
    Ok(())
}

/// Removes offer `id` and its entries (the offer first; an entry left by a crash is dropped by the
/// next search that meets it).
pub(crate) fn remove(id: &str, offer: &Value) -> Result<()> {
    store::delete(&key(id))?;
    unindex(id, offer)
}

fn unindex(id: &str, offer: &Value) -> Result<()> {
    if let Some(tpl) = sells(offer) {
        store::doc_patch(&format!("flea.tpl.{tpl}"), "", &json!({ id: null }))?;
    }
    if let Some(int) = offer["intId"].as_u64() {
        store::doc_patch("flea.int", "", &json!({ int.to_string(): null }))?;
    }
    for needed in barter_parts(offer) {
        store::doc_patch(&format!("flea.req.{needed}"), "", &json!({ id: null }))?;
    }
    let bucket = (offer["endTime"].as_u64().unwrap_or(0) / BUCKET).to_string();
    store::doc_patch(&format!("flea.exp.{bucket}"), "", &json!({ id: null }))?;
    Ok(())
}

/// Moves an offer's expiry entry when its end time changes (a renewal, a removal's 71 seconds).
pub(crate) fn reschedule(id: &str, tpl: &str, old_end: u64, new_end: u64) -> Result<()> {
    let (old, new) = ((old_end / BUCKET).to_string(), (new_end / BUCKET).to_string());
    if old != new {
        store::doc_patch(&format!("flea.exp.{new}"), "", &json!({ id: tpl }))?;
        store::doc_patch("flea.exp", "", &json!({ new: 1 }))?;
        store::doc_patch(&format!("flea.exp.{old}"), "", &json!({ id: null }))?;
    }
    Ok(())
}

/// The entries of template `tpl`'s offers.
pub(crate) fn entries(tpl: &str) -> Result<Map<String, Value>> {
    Ok(match store::get::<Value>(&format!("flea.tpl.{tpl}"))? {
        Some(Value::Object(members)) => members,
        _ => Map::new(),
    })
}

/// Drops a stale entry (its offer is gone).
pub(crate) fn drop_entry(tpl: &str, id: &str) -> Result<()> {
    store::doc_patch(&format!("flea.tpl.{tpl}"), "", &json!({ id: null }))?;
    Ok(())
}

/// `{tpl: handbook parent}` of every template that has had an offer.
pub(crate) fn templates() -> Result<Map<String, Value>> {
    Ok(match store::get::<Value>("flea.tpls")? {
        Some(Value::Object(members)) => members,
        _ => Map::new(),
    })
}

/// The offer id of `intId`.
pub(crate) fn by_int(int: u64) -> Result<Option<String>> {
    Ok(store::doc_get::<Option<String>>("flea.int", &int.to_string())?.and_then(|(id, _)| id))
}

/// The offer as the client reads it: SPT's `RagfairOffer`, without the game's own members.
pub(crate) use crate::profile::shape::public_offer as for_client;
