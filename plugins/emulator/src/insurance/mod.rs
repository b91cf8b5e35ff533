//! Insurance (SPT's `InsuranceStaticRouter` → `InsuranceCallbacks`, `InsuranceController`,
//! `InsuranceService`, the `Insure` item event and `configs.insurance`):
//!
//! - the quote the client asks for before a raid (here: `/client/insurance/items/list/cost`);
//! - `insure.rs`: `Insure {tid, items}`, paid in roubles at the quote's price, recorded in the
//!   profile's `InsuredItems` as SPT keeps them (`[{tid, itemId}]`);
//! - `returns.rs`: on a raid's end, the insured items the player lost come back after the trader's
//!   return time as a letter with attachments (`mail/mailbox.rs`'s pending letters: a host timer, and
//!   the mail's next read once due, so a server that was off still delivers them).
//!
//! One price everywhere (SPT's `GetRoublePriceToInsureItemWithTrader`): the item's handbook price
//! (else its template's `CreditsPrice`, else 1) times the trader's `insurance_price_coef` at the
//! player's loyalty level, over 100, rounded up, at least 1.

pub(crate) mod insure;
pub(crate) mod returns;

use crate::input;
use crate::profile::doc::Doc;
use crate::profile::{self, player};
use crate::templates::{self, Templates};
use modhost_sdk::{Error, Request, Response, Result, Router, db, envelope};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Items and traders an insurance quote names at most.
const MAX_QUOTE_ITEMS: usize = 512;
const MAX_QUOTE_TRADERS: usize = 32;
/// The largest body a quote reads.
const MAX_BODY: usize = 64 << 10;

/// Adds the insurance routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/insurance/items/list/cost", insurance_cost)
}

/// The handbook's prices, read once per request, when the first item is priced.
#[derive(Default)]
pub(crate) struct Handbook(Option<BTreeMap<String, f64>>);

/// What insuring costs with one trader: its coefficient at the player's loyalty level.
pub(crate) struct Pricing {
    coef: f64,
}

impl Pricing {
    /// Trader `tid`'s pricing for the profile `doc` is; `None` when the trader has no loyalty levels.
    pub(crate) fn of(doc: &mut Doc, tid: &str) -> Result<Option<Pricing>> {
        let Ok(levels) = db::get::<Vec<Value>>(&db::path(&["traders", tid, "base", "loyaltyLevels"])) else {
            return Ok(None);
        };
        let level = doc.get(&["TradersInfo", tid, "loyaltyLevel"])?.as_u64().unwrap_or(1).max(1);
        let coef = levels.get(level as usize - 1).or(levels.last()).and_then(|l| l["insurance_price_coef"].as_f64());
        Ok(coef.filter(|c| c.is_finite() && *c >= 0.0).map(|coef| Pricing { coef }))
    }

    /// Roubles to insure one item of `tpl`.
    pub(crate) fn price(&self, tpl: &str, templates: &mut Templates, handbook: &mut Handbook) -> u64 {
        let prices = handbook.0.get_or_insert_with(templates::handbook_prices);
        let base = prices
            .get(tpl)
            .copied()
            .or_else(|| templates.props(tpl).and_then(|p| p["CreditsPrice"].as_f64()))
            .filter(|p| p.is_finite() && *p >= 0.0)
            .unwrap_or(1.0);
        (base * self.coef / 100.0).ceil().clamp(1.0, 1e15) as u64
    }
}

#[derive(Deserialize)]
struct QuoteRequest {
    #[serde(default, deserialize_with = "input::at_most::<MAX_QUOTE_TRADERS, _, _>")]
    traders: Vec<String>,
    #[serde(default, deserialize_with = "input::at_most::<MAX_QUOTE_ITEMS, _, _>")]
    items: Vec<String>,
}

/// `/client/insurance/items/list/cost`: `{traders, items}` → `{trader: {template: roubles}}`, as SPT's
/// `InsuranceController.Cost` keys it (by the item's template). Items not in the profile and traders
/// without loyalty levels are left out.
fn insurance_cost(req: &Request) -> Result<Response> {
    let uid = match player(req, "an insurance quote")? {
        Ok(uid) => uid,
        Err(refusal) => return Ok(refusal),
    };
    let body: QuoteRequest = input::parse(req, "insurance/items/list/cost", MAX_BODY)?;
    let key = format!("profile.{uid}");
    let mut templates = Templates::default();
    let version = match profile::open(&key, &mut templates) {
        Ok(Some(version)) => version,
        Ok(None) => return Ok(envelope::error(1, "the session's profile does not exist")),
        Err(Error::Conflict(_)) => return Ok(envelope::error(1, "the profile changed; try again")),
        Err(other) => return Err(other),
    };
    let mut doc = Doc::at(&key, version);
    let mut tpls: Vec<String> = Vec::new();
    for id in body.items.iter().filter(|id| crate::ids::is_id(id)) {
        if let Some(item) = crate::profile::inventory::item(&mut doc, id)? {
            tpls.push(templates::tpl(&item).to_owned());
        }
    }
    let (mut out, mut handbook) = (Map::new(), Handbook::default());
    for tid in body.traders.iter().filter(|t| crate::ids::is_id(t)) {
        let Some(pricing) = Pricing::of(&mut doc, tid)? else { continue };
        let quotes: Map<String, Value> =
            tpls.iter().map(|tpl| (tpl.clone(), json!(pricing.price(tpl, &mut templates, &mut handbook)))).collect();
        out.insert(tid.clone(), Value::Object(quotes));
    }
    Ok(envelope::ok(&out))
}
