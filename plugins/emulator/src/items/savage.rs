//! `SellAllFromSavage`: the player's scav's loot sold to Fence after a scav raid (SPT's
//! `TradeController.SellScavItemsToFence`), the money arriving by mail from Fence, as SPT sends it
//! (`MESSAGE_WITH_ITEMS`, kept 72 hours).
//!
//! SPT mails the `totalValue` the client sends and leaves the scav's items where they are; here the
//! game prices what it sells (as `selling.rs` does, at Fence's coefficient and the PMC's loyalty with
//! him) and takes it from the scav: everything in the scav's equipment slots and pockets, with what is
//! inside, of templates Fence buys; the pockets, secure container, armband and dogtag stay.
//!
//! The scav is its own store document (`scav.<uid>`, `raid/scav.rs`) and the batch writes the PMC's,
//! and the store sets one document at a time. So the sale is written in two steps that never pay twice:
//! the batch's patch carries the letter and a record of the sale (`_modhost.scavSale`: the scav's
//! version it priced and the items sold); after the commit ([`settle`]) the items leave the scav,
//! compare-and-set on that version. A crash in between leaves the record: the next `SellAllFromSavage`
//! settles it first (the scav still at that version still holds the sold items, which then go); a scav
//! changed since (a new raid, a new scav) is not sold from twice, since the record names its version.

use crate::economy::{self, Buys, Prices};
use crate::mail::mailbox::{self, Letter};
use crate::notify;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, children, count, item, subtree, write};
use crate::profile::shape::INDEX;
use crate::templates::{Templates, tpl};
use modhost_sdk::{Error, Result, db, store};
use serde_json::{Value, json};

/// The scav's store key: `raid/scav.rs`'s `key` (named here, since `raid` imports `items`).
fn scav_key(uid: &str) -> String {
    format!("scav.{uid}")
}

/// Fence.
pub(crate) const FENCE: &str = "579dc571d53a0658a154fbec";

/// The equipment slots that stay with the scav.
const KEPT_SLOTS: [&str; 4] = ["Pockets", "SecuredContainer", "ArmBand", "Dogtag"];

/// How long Fence's letter keeps the money (SPT: 72 hours).
const MAX_STORAGE_SECONDS: u64 = 72 * 3600;

/// SPT's `MessageType.MESSAGE_WITH_ITEMS`.
const MESSAGE_WITH_ITEMS: u8 = 13;

/// `SellAllFromSavage {totalValue, fromOwner, toOwner}`: see the module doc.
pub(crate) fn sell_all(doc: &mut Doc, _action: &Value, templates: &mut Templates, _changes: &mut Changes) -> Outcome {
    let uid = doc.get(&["_id"])?.as_str().ok_or("the profile has no `_id`")?.to_owned();
    if !doc.get(&[INDEX, "scavSale"])?.is_null() {
        settle_record(&uid, &doc.get(&[INDEX, "scavSale"])?)?;
    }
    let key = scav_key(&uid);
    let Some(version) = crate::profile::open(&key, templates)? else {
        return Err("this player has no scav".into());
    };
    let mut scav_doc = Doc::at(&key, version);
    let sold = sellable(&mut scav_doc)?;
    let buys = Buys::of(FENCE);
    let mut prices = Prices::default();
    let (mut roubles, mut ids) = (0.0, Vec::new());
    for top in sold {
        let Some(found) = item(&mut scav_doc, &top)? else { continue };
        if !buys.buys(tpl(&found)) {
            continue;
        }
        for part in subtree(&mut scav_doc, &top)? {
            let Some(inner) = item(&mut scav_doc, &part)? else { continue };
            if buys.buys(tpl(&inner)) {
                roubles += prices.of(tpl(&inner)) * count(&inner) as f64 * economy::quality(templates, &inner);
            }
            ids.push(part);
        }
    }
    if ids.is_empty() {
        return Err("the scav has nothing Fence buys".into());
    }
    let coefficient = economy::coefficient(doc, FENCE, "buy_price_coef")?;
    let currency = economy::currency(FENCE)?;
    let rate = prices.of(currency).max(1.0);
    let money = (roubles * (100.0 - coefficient).max(0.0) / 100.0 / rate).floor() as u64;
    let max = templates.stack_max(currency).unwrap_or(u64::MAX).max(1);
    let mut stacks = Vec::new();
    let mut left = money;
    while left > 0 && stacks.len() < mailbox::MAX_LETTER_ITEMS {
        let units = left.min(max);
        stacks.push(json!({"_id": crate::ids::new_id(), "_tpl": currency, "upd": {"StackObjectsCount": units}}));
        left -= units;
    }
    let template_id = db::get::<Vec<String>>(&db::path(&["traders", FENCE, "dialogue", "soldItems"]))
        .ok()
        .and_then(|texts| texts.into_iter().next());
    let letter = Letter {
        from: FENCE.to_owned(),
        kind: MESSAGE_WITH_ITEMS,
        text: if template_id.is_some() { String::new() } else { format!("Sold for {money}") },
        template_id,
        items: stacks,
        max_storage: MAX_STORAGE_SECONDS,
        system_data: None,
    };
    let message = mailbox::send(doc, letter)?;
    doc.set(&[INDEX, "scavSale"], json!({ "version": version, "items": ids, "message": message, "money": money }))?;
    Ok(())
}

/// The scav's items sold: those in its equipment slots (but the kept ones) and in its pockets.
fn sellable(scav: &mut Doc) -> Result<Vec<String>> {
    let equipment = scav.get(&["Inventory", "equipment"])?.as_str().unwrap_or_default().to_owned();
    let mut out = Vec::new();
    for child in children(scav, &equipment)? {
        let Some(found) = item(scav, &child)? else { continue };
        let slot = found["slotId"].as_str().unwrap_or_default();
        if slot == "Pockets" {
            out.extend(children(scav, &child)?);
        } else if !KEPT_SLOTS.contains(&slot) {
            out.push(child);
        }
    }
    Ok(out)
}

/// After the batch that sold is written: the sold items leave the scav, and the player hears of
/// Fence's letter.
pub(crate) fn settle(session: &str, uid: &str) {
    let record = store::doc_get::<Value>(&format!("profile.{uid}"), &db::path(&[INDEX, "scavSale"]));
    if let Ok(Some((record, _))) = record
        && !record.is_null()
    {
        if let Err(e) = settle_record(uid, &record) {
            modhost_sdk::log::warn(&format!("settling a scav sale of {uid}: {e}"));
        }
        notify::message(session, &record["message"]);
    }
}

/// Takes a recorded sale's items from the scav if it is still at the version the sale priced.
fn settle_record(uid: &str, record: &Value) -> std::result::Result<(), Error> {
    let key = scav_key(uid);
    let Some((_, version)) = store::doc_get::<Value>(&key, "_id")? else { return Ok(()) };
    if record["version"].as_u64() != Some(version) {
        return Ok(());
    }
    let mut scav_doc = Doc::at(&key, version);
    let mut templates = Templates::default();
    let ids: Vec<String> =
        record["items"].as_array().into_iter().flatten().filter_map(|i| i.as_str().map(str::to_owned)).collect();
    // Children before parents, so each container's children map empties and goes with it.
    for id in ids.iter().rev() {
        if item(&mut scav_doc, id)?.is_some() {
            write(&mut scav_doc, &mut templates, id, None)?;
        }
    }
    match scav_doc.commit() {
        Ok(_) | Err(Error::Conflict(_)) => Ok(()),
        Err(other) => Err(other),
    }
}
