//! `/client/ragfair/find` and `/client/ragfair/search` (SPT answers both with `GetOffers`), and
//! `/client/ragfair/offer/findbyid`: the flea's search.
//!
//! A search first decides which templates are in scope (a template, a handbook category's subtree, a
//! weapon's linked items, the offers that need a template as payment, a build's parts, or everything),
//! then reads one index document per template in scope (`offers.rs`: an [`Entry`] per offer), filters
//! and sorts the entries in memory as SPT's `RagfairOfferHelper`/`RagfairSortHelper` do, and reads
//! only the page's offers. The cost is the entries in scope plus one page, never the offers.

use super::offers::{self, Entry, MAX_PAGE};
use crate::clock;
use crate::input;
use modhost_sdk::{Request, Response, Result, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The largest search body: a handful of numbers and ids, and a build of at most [`MAX_BUILD`] parts.
const MAX_BODY: usize = 16 << 10;
/// The most parts a build search names (a weapon has a few dozen).
const MAX_BUILD: usize = 128;
/// How deep the handbook's categories nest at most (a few levels in SPT's).
const MAX_CATEGORY_DEPTH: usize = 16;
/// The most templates a linked search follows (a weapon's slots accept hundreds of mods).
const MAX_LINKED: usize = 4096;

/// SPT's `SearchRequestData`, every member optional as the client sends them.
#[derive(Deserialize, Default, Debug, Clone)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Search {
    pub(crate) page: u64,
    pub(crate) limit: u64,
    pub(crate) sort_type: u64,
    pub(crate) sort_direction: u64,
    pub(crate) currency: u64,
    pub(crate) price_from: f64,
    pub(crate) price_to: f64,
    pub(crate) quantity_from: u64,
    pub(crate) quantity_to: u64,
    pub(crate) condition_from: u64,
    pub(crate) condition_to: u64,
    pub(crate) one_hour_expiration: bool,
    pub(crate) remove_bartering: bool,
    pub(crate) offer_owner_type: u64,
    pub(crate) only_functional: bool,
    pub(crate) update_offer_count: bool,
    pub(crate) handbook_id: String,
    pub(crate) linked_search_id: String,
    pub(crate) needed_search_id: String,
    #[serde(deserialize_with = "bounded_build")]
    pub(crate) build_items: BTreeMap<String, u64>,
    pub(crate) build_count: u64,
}

/// A build's parts, at most [`MAX_BUILD`] of them.
fn bounded_build<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<BTreeMap<String, u64>, D::Error> {
    let parts: Option<BTreeMap<String, Value>> = Option::deserialize(d)?;
    let parts = parts.unwrap_or_default();
    if parts.len() > MAX_BUILD {
        return Err(serde::de::Error::custom(format_args!("a build names at most {MAX_BUILD} parts")));
    }
    Ok(parts.into_iter().map(|(tpl, n)| (tpl, n.as_u64().unwrap_or(1))).collect())
}

/// One offer in scope: its id, template and entry.
pub(crate) type Found = (String, String, Entry);

/// `/client/ragfair/find` and `/client/ragfair/search`.
pub(crate) fn find(req: &Request) -> Result<Response> {
    let search: Search = if req.body().iter().all(u8::is_ascii_whitespace) {
        Search::default()
    } else {
        input::parse(req, "ragfair/find", MAX_BODY)?
    };
    Ok(envelope::ok(&answer(&search)?))
}

/// The answer to `search`: SPT's `GetOffersResult`.
pub(crate) fn answer(search: &Search) -> Result<Value> {
    let now = clock::now();
    let all = offers::templates()?;
    let scope = scope(search, &all)?;
    let mut found = Vec::new();
    for tpl in &scope {
        collect(tpl, search, now, &mut found)?;
    }
    if !search.needed_search_id.is_empty() {
        let needing = needing(&search.needed_search_id)?;
        found.retain(|(id, _, _)| needing.contains_key(id));
    }
    let categories = if search.update_offer_count {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        let pool_is_found = !search.linked_search_id.is_empty() || !search.needed_search_id.is_empty();
        if pool_is_found || scope.len() == all.len() {
            for (_, tpl, _) in &found {
                *counts.entry(tpl.clone()).or_default() += 1;
            }
        } else {
            // SPT counts every offer's template for the category tree, whatever the scope.
            let mut every = Vec::new();
            for tpl in all.keys() {
                collect(tpl, search, now, &mut every)?;
            }
            for (_, tpl, _) in &every {
                *counts.entry(tpl.clone()).or_default() += 1;
            }
        }
        json!(counts)
    } else {
        json!({})
    };
    sort(&mut found, search.sort_type, search.sort_direction == 1);
    let total = found.len();
    let limit = (search.limit.clamp(1, MAX_PAGE as u64)) as usize;
    let start = (search.page as usize).saturating_mul(limit).min(total);
    let mut page = Vec::new();
    for (id, tpl, _) in &found[start..(start + limit).min(total)] {
        match offers::get(id)? {
            Some((offer, _)) => page.push(offers::for_client(&offer)),
            None => offers::drop_entry(tpl, id)?,
        }
    }
    Ok(json!({
        "offers": page,
        "offersCount": total,
        "selectedCategory": search.handbook_id,
        "categories": categories,
    }))
}

/// The templates a search looks at.
fn scope(search: &Search, all: &Map<String, Value>) -> Result<Vec<String>> {
    let listed =
        |tpls: &mut dyn Iterator<Item = String>| -> Vec<String> { tpls.filter(|t| all.contains_key(t)).collect() };
    if !search.build_items.is_empty() {
        return Ok(listed(&mut search.build_items.keys().cloned()));
    }
    if !search.linked_search_id.is_empty() {
        return Ok(listed(&mut linked(&search.linked_search_id).into_iter()));
    }
    if !search.needed_search_id.is_empty() {
        let needing = needing(&search.needed_search_id)?;
        let tpls: BTreeSet<String> = needing.values().filter_map(|t| t.as_str().map(str::to_owned)).collect();
        return Ok(listed(&mut tpls.into_iter()));
    }
    let id = search.handbook_id.as_str();
    if id.is_empty() {
        return Ok(all.keys().cloned().collect());
    }
    if all.contains_key(id) || db::exists(&db::path(&["templates", "items", id, "_props"])) {
        return Ok(listed(&mut std::iter::once(id.to_owned())));
    }
    let subtree = categories(id);
    Ok(all
        .iter()
        .filter(|(_, parent)| parent.as_str().is_some_and(|p| subtree.contains(p)))
        .map(|(t, _)| t.clone())
        .collect())
}

/// A handbook category and every category under it.
fn categories(root: &str) -> HashSet<String> {
    #[derive(Deserialize)]
    struct Category {
        #[serde(rename = "Id")]
        id: String,
        #[serde(rename = "ParentId", default)]
        parent: Option<String>,
    }
    let all: Vec<Category> = db::get("templates.handbook.Categories").unwrap_or_default();
    let mut subtree: HashSet<String> = HashSet::from([root.to_owned()]);
    for _ in 0..MAX_CATEGORY_DEPTH {
        let before = subtree.len();
        for c in &all {
            if c.parent.as_ref().is_some_and(|p| subtree.contains(p)) {
                subtree.insert(c.id.clone());
            }
        }
        if subtree.len() == before {
            break;
        }
    }
    subtree
}

/// The templates linked to `tpl` (SPT's linked search): what its slots, chambers and cartridges take.
fn linked(tpl: &str) -> Vec<String> {
    let props: Value = db::get(&db::path(&["templates", "items", tpl, "_props"])).unwrap_or_default();
    let mut out = BTreeSet::new();
    for list in ["Slots", "Chambers", "Cartridges"] {
        for slot in props[list].as_array().into_iter().flatten() {
            for filter in slot["_props"]["filters"].as_array().into_iter().flatten() {
                for t in filter["Filter"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                    if out.len() < MAX_LINKED {
                        out.insert(t.to_owned());
                    }
                }
            }
        }
    }
    out.into_iter().collect()
}

/// The offers asking for `tpl` as (part of) their price (`flea.req.<tpl>`): offer id → the template
/// each sells.
fn needing(tpl: &str) -> Result<Map<String, Value>> {
    Ok(match store::get::<Value>(&format!("flea.req.{tpl}"))? {
        Some(Value::Object(members)) => members,
        _ => Map::new(),
    })
}

/// Adds the offers of `tpl` that pass the search's filters to `found`.
fn collect(tpl: &str, search: &Search, now: u64, found: &mut Vec<Found>) -> Result<()> {
    for (id, entry) in offers::entries(tpl)? {
        let Ok(entry) = serde_json::from_value::<Entry>(entry) else { continue };
        if passes(&entry, search, now) {
            found.push((id, tpl.to_owned(), entry));
        }
    }
    Ok(())
}

/// SPT's filters of a search, on an entry.
pub(crate) fn passes(e: &Entry, s: &Search, now: u64) -> bool {
    if e.e <= now || e.q == 0 {
        return false;
    }
    if s.price_from > 0.0 && e.p < s.price_from || s.price_to > 0.0 && e.p > s.price_to {
        return false;
    }
    if s.quantity_from > 0 && e.q < s.quantity_from || s.quantity_to > 0 && e.q > s.quantity_to {
        return false;
    }
    if s.condition_from > 0 && u64::from(e.d) < s.condition_from
        || s.condition_to > 0 && s.condition_to < 100 && u64::from(e.d) > s.condition_to
    {
        return false;
    }
    if s.one_hour_expiration && e.e.saturating_sub(now) > 3600 {
        return false;
    }
    if s.remove_bartering && e.c == 0 {
        return false;
    }
    if s.currency > 0 && u64::from(e.c) != s.currency {
        return false;
    }
    match s.offer_owner_type {
        1 => e.t == 1,
        2 => e.t == 2,
        _ => true,
    }
}

/// SPT's `RagfairSortHelper`: by id (0), barter (2), rating (3), title (4), price (5), expiry (6);
/// descending when asked. Ties keep the offers' age (their `intId`), so pages never overlap.
pub(crate) fn sort(found: &mut [Found], sort_type: u64, descending: bool) {
    let names: BTreeMap<String, String> = if sort_type == 4 {
        let tpls: BTreeSet<&String> = found.iter().map(|(_, t, _)| t).collect();
        tpls.into_iter()
            .map(|t| {
                let name = db::get::<String>(&db::path(&["locales", "global", "en", &format!("{t} Name")]));
                (t.clone(), name.unwrap_or_else(|_| t.clone()))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    found.sort_by(|(_, ta, a), (_, tb, b)| {
        let by = match sort_type {
            2 => (a.c != 0).cmp(&(b.c != 0)),
            3 => a.r.total_cmp(&b.r),
            4 => names.get(ta).cmp(&names.get(tb)),
            5 => a.p.total_cmp(&b.p),
            6 => a.e.cmp(&b.e),
            _ => std::cmp::Ordering::Equal,
        };
        let by = by.then(a.i.cmp(&b.i));
        if descending { by.reverse() } else { by }
    });
}

/// `/client/ragfair/offer/findbyid {id}`: the offer with that `intId` (or that offer id), or `null`.
pub(crate) fn find_by_id(req: &Request) -> Result<Response> {
    #[derive(Deserialize)]
    struct ById {
        id: Value,
    }
    let asked: ById = input::parse(req, "ragfair/offer/findbyid", 1024)?;
    let id = match &asked.id {
        Value::Number(n) => n.as_u64().map(offers::by_int).transpose()?.flatten(),
        Value::String(s) => match s.parse::<u64>() {
            Ok(n) => offers::by_int(n)?,
            Err(_) => Some(s.clone()),
        },
        _ => None,
    };
    let offer = match id {
        Some(id) => offers::get(&id)?.map(|(o, _)| offers::for_client(&o)),
        None => None,
    };
    Ok(envelope::ok(&offer))
}

/// `/client/ragfair/itemMarketPrice {templateId}`: SPT's `GetItemPriceResult` `{avg, min, max}` of
/// the template's standing offers from players (one unit, in roubles); the flea price when it has
/// none.
pub(crate) fn market_price(req: &Request) -> Result<Response> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Asked {
        template_id: String,
    }
    let asked: Asked = input::parse(req, "ragfair/itemMarketPrice", 1024)?;
    let now = clock::now();
    let prices: Vec<f64> = offers::entries(&asked.template_id)?
        .into_iter()
        .filter_map(|(_, e)| serde_json::from_value::<Entry>(e).ok())
        .filter(|e| e.t == 2 && e.e > now && e.q > 0 && !e.k)
        .map(|e| e.p)
        .collect();
    if prices.is_empty() {
        let p = super::rules::price(&asked.template_id);
        return Ok(envelope::ok(&json!({ "avg": p, "min": p, "max": p })));
    }
    let min = prices.iter().copied().fold(f64::MAX, f64::min);
    let max = prices.iter().copied().fold(0.0, f64::max);
    let avg = prices.iter().sum::<f64>() / prices.len() as f64;
    Ok(envelope::ok(&json!({ "avg": avg.round(), "min": min, "max": max })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(i: u64, p: f64, q: u64, c: u8, t: u8, e: u64) -> Entry {
        Entry { p, e, q, t, c, d: 100, k: false, r: 0.0, i, o: None }
    }

    #[test]
    fn filters_follow_the_search() {
        let now = 1_000;
        let e = entry(1, 500.0, 10, 1, 2, now + 7200);
        let mut s = Search::default();
        assert!(passes(&e, &s, now));
        s.price_from = 600.0;
        assert!(!passes(&e, &s, now), "under priceFrom");
        s = Search { price_to: 400.0, ..Search::default() };
        assert!(!passes(&e, &s, now), "over priceTo");
        s = Search { quantity_from: 11, ..Search::default() };
        assert!(!passes(&e, &s, now));
        s = Search { one_hour_expiration: true, ..Search::default() };
        assert!(!passes(&e, &s, now), "ends in two hours");
        s = Search { currency: 2, ..Search::default() };
        assert!(!passes(&e, &s, now), "roubles, not dollars");
        s = Search { offer_owner_type: 1, ..Search::default() };
        assert!(!passes(&e, &s, now), "a player's, not a trader's");
        s = Search { remove_bartering: true, ..Search::default() };
        assert!(!passes(&entry(2, 1.0, 1, 0, 2, now + 10), &s, now));
        assert!(!passes(&entry(3, 1.0, 1, 1, 2, now), &Search::default(), now), "expired");
        assert!(!passes(&entry(4, 1.0, 0, 1, 2, now + 10), &Search::default(), now), "sold out");
    }

    #[test]
    fn sorting_by_price_both_ways_with_ties_by_age() {
        let mut found: Vec<Found> = [(1, 30.0), (2, 10.0), (3, 20.0), (4, 10.0)]
            .into_iter()
            .map(|(i, p)| (format!("o{i}"), "t".to_owned(), entry(i, p, 1, 1, 2, 10)))
            .collect();
        sort(&mut found, 5, false);
        let ids: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(ids, ["o2", "o4", "o3", "o1"]);
        sort(&mut found, 5, true);
        let ids: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(ids, ["o1", "o3", "o4", "o2"]);
        sort(&mut found, 0, false);
        assert_eq!(found[0].0, "o1");
    }
}
