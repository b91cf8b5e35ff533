//! Clothing and dog tags: `CustomizationBuy` (a trader's suit offer, paid for) and `CustomizationSet`
//! (wear a suit, show a dog tag), SPT's `CustomizationController`.
//!
//! - `CustomizationBuy {offer, items: [{id, count}]}`: the offer is a suit in a trader's
//!   `traders.<tid>.suits`, active, of the player's side, not already the player's, whose
//!   requirements hold (the trader's loyalty level and standing, the player's level, the quests it
//!   names done). Its price is the offer's `itemRequirements`, not what the client says: the named
//!   stacks are the player's, of the price's templates, and together hold at least the price; exactly
//!   the price is taken, in the order named (an emptied stack goes). The suit becomes the player's.
//! - `CustomizationSet {customizations: [{id, type}]}`: a `suite` the player has (the database's
//!   `templates.customisationStorage`, one bought, or a template `AvailableAsDefault`) dresses the
//!   upper body (`Body`, `Hands`) or the legs (`Feet`), as its category says; a `dogTag` the player has
//!   is shown.
//!
//! Where the bought suits are kept: SPT keeps them in the full profile's `customisationUnlocks`, which
//! the game keeps in `userdata.<uid>` (`profile/mod.rs`). A purchase takes the money and gives the suit
//! in one write, and the store compares and sets one document at a time, so the game keeps what a
//! player buys in the profile document itself, under [`UNLOCKS`] (never sent to the client as part of
//! the character), and the customization routes read both ([`bought`]).

use crate::economy;
use crate::menu::quests::status;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::templates::Templates;
use modhost_sdk::db;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The profile member holding the suits the player bought (SPT's `CustomisationStorage` entries).
pub(crate) use crate::profile::shape::UNLOCKS;
/// SPT's categories of suits: the upper body and the legs.
const UPPER: &str = "5cd944ca1388ce03a44dc2a4";
const LOWER: &str = "5cd944d01388ce000a659df9";
/// The most traders and suit offers read to find one (a real database has a few dozen of each).
const MAX_TRADERS: usize = 256;
const MAX_SUITS: usize = 1_024;
/// The most payment stacks a purchase names, and customizations one `CustomizationSet` applies.
const MAX_PAYMENT: usize = 64;
const MAX_SET: usize = 16;
/// The most suits a player owns (SPT sells about a hundred).
const MAX_UNLOCKS: usize = 4_096;
/// SPT's `QuestStatusEnum.Success`.
const SUCCESS: u64 = 4;

/// What the player owns of customizations: the database's defaults, `userdata`'s unlocks, and those
/// bought here.
fn owned(doc: &mut Doc) -> std::result::Result<Vec<Value>, Refused> {
    let mut all: Vec<Value> = db::get("templates.customisationStorage").unwrap_or_default();
    if let Some(uid) = doc.key().strip_prefix("profile.") {
        all.extend(crate::profile::userdata::<Vec<Value>>(uid, "customisationUnlocks")?.unwrap_or_default());
    }
    all.extend(doc.get(&[UNLOCKS])?.as_array().cloned().unwrap_or_default());
    Ok(all)
}

/// The suit offer `offer` of any trader: its trader and the offer.
fn suit_offer(offer: &str) -> Option<(String, Value)> {
    for trader in db::keys("traders").unwrap_or_default().into_iter().take(MAX_TRADERS) {
        let suits: Vec<Value> = db::get(&db::path(&["traders", &trader, "suits"])).unwrap_or_default();
        if let Some(found) = suits.into_iter().take(MAX_SUITS).find(|s| s["_id"] == offer) {
            return Some((trader, found));
        }
    }
    None
}

/// A number a requirement gives.
fn number(value: &Value) -> f64 {
    value.as_f64().unwrap_or(0.0)
}

/// `CustomizationBuy {offer, items}`.
pub(crate) fn buy(doc: &mut Doc, action: &Value, templates: &mut Templates, changes: &mut Changes) -> Outcome {
    let offer = action["offer"].as_str().ok_or("the action names no suit `offer`")?;
    let (trader, suit) = suit_offer(offer).ok_or_else(|| format!("no trader offers suit {offer}"))?;
    let suite = suit["suiteId"].as_str().ok_or_else(|| format!("offer {offer} names no suit"))?.to_owned();
    if suit["isActive"] == false {
        return Err(format!("offer {offer} is not active").into());
    }
    let side = doc.get(&["Info", "Side"])?.as_str().unwrap_or_default().to_owned();
    let sides: Vec<String> = db::get(&db::path(&["templates", "customization", &suite, "_props", "Side"]))
        .map_err(|_| format!("suit {suite} is not in the database"))?;
    if !sides.iter().any(|s| s.eq_ignore_ascii_case(&side)) {
        return Err(format!("suit {suite} is not worn by a {side}").into());
    }
    let mut unlocks = doc.get(&[UNLOCKS])?.as_array().cloned().unwrap_or_default();
    if owned(doc)?.iter().any(|u| u["id"] == suite.as_str()) {
        return Err(format!("suit {suite} is already the player's").into());
    }
    if unlocks.len() >= MAX_UNLOCKS {
        return Err(format!("a player owns at most {MAX_UNLOCKS} suits").into());
    }

    let needs = &suit["requirements"];
    let relation = doc.get(&["TradersInfo", &trader])?;
    let level = doc.get(&["Info", "Level"])?.as_f64().unwrap_or(1.0);
    if number(&relation["loyaltyLevel"]).max(1.0) < number(&needs["loyaltyLevel"]) {
        return Err(format!("suit {suite} needs loyalty level {} with {trader}", needs["loyaltyLevel"]).into());
    }
    if number(&relation["standing"]) < number(&needs["standing"]) {
        return Err(format!("suit {suite} needs standing {} with {trader}", needs["standing"]).into());
    }
    if level < number(&needs["profileLevel"]) {
        return Err(format!("suit {suite} needs level {}", needs["profileLevel"]).into());
    }
    let quests = needs["questRequirements"].as_array().cloned().unwrap_or_default();
    if !quests.is_empty() {
        let states = doc.get(&["Quests"])?;
        for quest in quests.iter().take(MAX_SUITS) {
            let done = states
                .as_array()
                .into_iter()
                .flatten()
                .any(|s| s["qid"] == *quest && status(&s["status"]) == Some(SUCCESS));
            if !done {
                return Err(format!("suit {suite} needs quest {quest} done").into());
            }
        }
    }
    for unchecked in ["skillRequirements", "achievementRequirements"] {
        if needs[unchecked].as_array().is_some_and(|l| !l.is_empty()) {
            return Err(format!("suit {suite} has {unchecked}, which are not checked here").into());
        }
    }

    let mut price: BTreeMap<String, u64> = BTreeMap::new();
    for wanted in needs["itemRequirements"].as_array().into_iter().flatten().take(MAX_PAYMENT) {
        let (Some(what), Some(n)) = (wanted["_tpl"].as_str(), wanted["count"].as_u64()) else {
            return Err(format!("offer {offer} has a malformed price").into());
        };
        *price.entry(what.to_owned()).or_insert(0) += n;
    }
    pay(doc, action, templates, changes, &price)?;
    unlocks.push(json!({"id": suite, "source": "unlockedInGame", "type": "suite"}));
    doc.set(&[UNLOCKS], Value::Array(unlocks))?;
    Ok(())
}

/// Takes exactly `price` from the stacks the action names (`items: [{id, count}]`), checked first.
fn pay(
    doc: &mut Doc,
    action: &Value,
    templates: &mut Templates,
    changes: &mut Changes,
    price: &BTreeMap<String, u64>,
) -> Outcome {
    let named = action["items"].as_array().map(Vec::as_slice).unwrap_or_default();
    let payment = economy::named_payment(doc, named, price)?;
    economy::pay(doc, templates, changes, payment, price)
}

/// `CustomizationSet {customizations: [{id, type, source}]}`.
pub(crate) fn set(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let list = action["customizations"].as_array().ok_or("`customizations` must be a list")?;
    if list.len() > MAX_SET {
        return Err(format!("one change sets at most {MAX_SET} customizations").into());
    }
    let owned = owned(doc)?;
    let has = |id: &str, kind: &str| owned.iter().any(|o| o["id"] == id && (o["type"] == kind || o["type"].is_null()));
    for chosen in list {
        let id = chosen["id"].as_str().ok_or("a customization names no `id`")?;
        match chosen["type"].as_str() {
            Some("dogTag") => {
                if !has(id, "dogTag") {
                    return Err(format!("dog tag {id} is not the player's").into());
                }
                doc.set(&["Customization", "DogTag"], json!(id))?;
            }
            Some("suite") => {
                let template: Value = db::get(&db::path(&["templates", "customization", id]))
                    .map_err(|_| format!("suit {id} is not in the database"))?;
                let side = doc.get(&["Info", "Side"])?;
                let sides = template["_props"]["Side"].as_array().cloned().unwrap_or_default();
                if !sides.iter().any(|s| s.as_str().zip(side.as_str()).is_some_and(|(a, b)| a.eq_ignore_ascii_case(b)))
                {
                    return Err(format!("suit {id} is not worn by a {side}").into());
                }
                if !has(id, "suite") && template["_props"]["AvailableAsDefault"] != true {
                    return Err(format!("suit {id} is not the player's").into());
                }
                let props = &template["_props"];
                match template["_parent"].as_str() {
                    Some(UPPER) => {
                        let (Some(body), Some(hands)) = (props["Body"].as_str(), props["Hands"].as_str()) else {
                            return Err(format!("suit {id} names no body and hands").into());
                        };
                        doc.set(&["Customization", "Body"], json!(body))?;
                        doc.set(&["Customization", "Hands"], json!(hands))?;
                    }
                    Some(LOWER) => {
                        let feet = props["Feet"].as_str().ok_or_else(|| format!("suit {id} names no feet"))?;
                        doc.set(&["Customization", "Feet"], json!(feet))?;
                    }
                    _ => return Err(format!("{id} is not a suit").into()),
                }
            }
            other => return Err(format!("a customization of type {other:?} cannot be set here").into()),
        }
    }
    Ok(())
}
