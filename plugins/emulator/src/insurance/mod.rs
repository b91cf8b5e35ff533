//! Insurance (SPT's `InsuranceStaticRouter` → `InsuranceCallbacks`, `InsuranceController`, and the
//! `Insure` item event). Today: the quote the client asks for before a raid. Insuring (`Insure`,
//! dispatched from `items/mod.rs`'s action table) and the return of insured items lost in a raid (a
//! timer, then a mail message through `mail/`) belong here, with `configs.insurance`.

use crate::input;
use crate::profile::{self, player};
use crate::templates::Templates;
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Items and traders an insurance quote names at most.
const MAX_QUOTE_ITEMS: usize = 512;
const MAX_QUOTE_TRADERS: usize = 32;
/// The largest body a quote reads.
const MAX_BODY: usize = 64 << 10;

/// Adds the insurance routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/insurance/items/list/cost", insurance_cost)
}

#[derive(Deserialize)]
struct QuoteRequest {
    #[serde(default, deserialize_with = "input::at_most::<MAX_QUOTE_TRADERS, _, _>")]
    traders: Vec<String>,
    #[serde(default, deserialize_with = "input::at_most::<MAX_QUOTE_ITEMS, _, _>")]
    items: Vec<String>,
}

/// `/client/insurance/items/list/cost`: `{traders, items}` → `{trader: {item: roubles}}`, each the
/// item's handbook price (else its template's `CreditsPrice`) times the trader's
/// `insurance_price_coef` at the player's loyalty level, over 100, rounded up. Items not in the
/// profile and traders without loyalty levels are left out.
fn insurance_cost(req: &Request) -> Result<Response> {
    let uid = match player(req, "an insurance quote")? {
        Ok(uid) => uid,
        Err(refusal) => return Ok(refusal),
    };
    let body: QuoteRequest = input::parse(req, "insurance/items/list/cost", MAX_BODY)?;
    let key = format!("profile.{uid}");
    let mut templates = Templates::default();
    if profile::open(&key, &mut templates)?.is_none() {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    }
    let mut tpls: Vec<(String, String)> = Vec::new();
    for id in &body.items {
        if let Some((tpl, _)) = store::doc_get::<Value>(&key, &db::path(&["Inventory", "items", id, "_tpl"]))?
            && let Some(tpl) = tpl.as_str()
        {
            tpls.push((id.clone(), tpl.to_owned()));
        }
    }
    let handbook: Vec<Value> =
        if tpls.is_empty() { Vec::new() } else { db::get("templates.handbook.Items").unwrap_or_default() };
    let price = |tpl: &str, templates: &mut Templates| -> f64 {
        handbook
            .iter()
            .find(|h| h["Id"] == tpl)
            .and_then(|h| h["Price"].as_f64())
            .or_else(|| templates.props(tpl).and_then(|p| p["CreditsPrice"].as_f64()))
            .unwrap_or(1.0)
    };
    let mut out = Map::new();
    for tid in &body.traders {
        let Ok(levels) = db::get::<Vec<Value>>(&db::path(&["traders", tid, "base", "loyaltyLevels"])) else { continue };
        let level = store::doc_get::<Value>(&key, &db::path(&["TradersInfo", tid, "loyaltyLevel"]))?
            .and_then(|(l, _)| l.as_u64())
            .unwrap_or(1)
            .max(1);
        let Some(coef) =
            levels.get(level as usize - 1).or(levels.last()).and_then(|l| l["insurance_price_coef"].as_f64())
        else {
            continue;
        };
        let quotes: Map<String, Value> = tpls
            .iter()
            .map(|(id, tpl)| (id.clone(), json!((price(tpl, &mut templates) * coef / 100.0).ceil().max(1.0))))
            .collect();
        out.insert(tid.clone(), Value::Object(quotes));
    }
    Ok(envelope::ok(&out))
}
