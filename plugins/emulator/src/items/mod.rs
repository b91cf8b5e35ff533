//! `/client/game/profile/items/moving`, SPT's item events: the session's actions, in order, answered
//! with the SPT envelope (`warnings`, `profileChanges`). Each action's name maps to its handler in
//! [`action`]'s table: the inventory actions (`actions.rs`), trading (`trading.rs`) and the quest
//! actions (`quests.rs`) live here; an action of another system (the hideout's, the flea market's,
//! insurance's) is handled in that system's folder and named in the same table. `gifts.rs` is the
//! function `give-item` other mods call, which places items the way a purchase does.
//!
//! Every action has the one signature [`Action`], so it validates against the profile before it
//! writes and answers why it did nothing as a warning. A failed or unknown action becomes a
//! warning with its reason, never a silent success, and changes nothing; the rest of the batch still
//! applies.
//!
//! The profile is read by path, as a [`Doc`] at the version the batch began from: each action reads
//! only the items and index entries it touches, its writes join one merge patch (the batch's later
//! actions see them; a refused action's are taken back), and the patch is written once, at the end,
//! with `doc_patch_if_version`, so a change another request made in between is never overwritten (the
//! batch then answers err 1 and nothing of it applies). A profile written in SPT's shape is converted
//! to the stored shape first, once (`profile::open`).

mod actions;
pub(crate) mod customization;
mod examine;
mod from_mail;
mod gifts;
pub(crate) mod loot;
mod maps;
mod marks;
mod notes;
pub(crate) mod quests;
mod rewards;
mod savage;
mod selling;
mod trading;
mod wishlist;

use crate::events;
use crate::input;
use crate::mail::{letters, mailbox};
use crate::profile;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::templates::Templates;
use modhost_sdk::{Error, Request, Response, Result, Router, envelope};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The most actions one batch may hold (the client sends a handful at a time).
const MAX_ACTIONS: usize = 512;
/// The largest batch body the game reads: 512 actions of a few hundred bytes each, with room to spare.
const MAX_BODY: usize = 1 << 20;

#[derive(Deserialize)]
struct Batch {
    #[serde(default, deserialize_with = "input::at_most::<MAX_ACTIONS, _, _>")]
    data: Vec<Value>,
}

/// One action: it changes the profile and records what it changed, or answers why it did nothing.
pub(crate) type Action = fn(&mut Doc, &Value, &mut Templates, &mut Changes) -> Outcome;

fn action(name: &str) -> Option<Action> {
    Some(match name {
        "Move" => actions::move_item,
        "Split" => actions::split,
        "Merge" => actions::merge,
        "Transfer" => actions::transfer,
        "Remove" | "Discard" => actions::remove,
        "Fold" => actions::fold,
        "Toggle" => actions::toggle,
        "Tag" => actions::tag,
        "TradingConfirm" => trading::confirm,
        "QuestAccept" => quests::accept,
        "QuestHandover" => quests::handover,
        "QuestComplete" => quests::complete,
        "SellAllFromSavage" => savage::sell_all,
        "Eat" => crate::health::treat::eat,
        "Heal" => crate::health::treat::heal,
        "RestoreHealth" => crate::health::treat::restore,
        "Repair" => crate::repair::kit::repair,
        "TraderRepair" => crate::repair::trader::repair,
        "Insure" => crate::insurance::insure::insure,
        "RagFairBuyOffer" => crate::ragfair::buy,
        "RagFairAddOffer" => crate::ragfair::add_offer,
        "RagFairRemoveOffer" => crate::ragfair::remove_offer,
        "RagFairRenewOffer" => crate::ragfair::renew_offer,
        "Swap" => actions::swap,
        "ApplyInventoryChanges" => actions::apply_changes,
        "Bind" => marks::bind,
        "Unbind" => marks::unbind,
        "SetFavoriteItems" => marks::favorites,
        "PinLock" => marks::pin_lock,
        "Examine" => examine::examine,
        "ReadEncyclopedia" => examine::read_encyclopedia,
        "CreateMapMarker" => maps::create,
        "EditMapMarker" => maps::edit,
        "DeleteMapMarker" => maps::delete,
        "OpenRandomLootContainer" => loot::open,
        "RedeemProfileReward" => rewards::redeem,
        "QuestFail" => quests::fail,
        "RepeatableQuestChange" => quests::change_repeatable,
        "AddNote" => notes::add,
        "EditNote" => notes::edit,
        "DeleteNote" => notes::delete,
        "AddToWishList" => wishlist::add,
        "RemoveFromWishList" => wishlist::remove,
        "ChangeWishlistItemCategory" => wishlist::recategorise,
        "CustomizationBuy" => customization::buy,
        "CustomizationSet" => customization::set,
        "HideoutUpgrade" => crate::hideout::areas::upgrade,
        "HideoutUpgradeComplete" => crate::hideout::areas::upgrade_complete,
        "HideoutImproveArea" => crate::hideout::areas::improve,
        "HideoutPutItemsInAreaSlots" => crate::hideout::slots::put_items,
        "HideoutTakeItemsFromAreaSlots" => crate::hideout::slots::take_items,
        "HideoutToggleArea" => crate::hideout::slots::toggle,
        "HideoutSingleProductionStart" => crate::hideout::production::single_start,
        "HideoutContinuousProductionStart" => crate::hideout::production::continuous_start,
        "HideoutScavCaseProductionStart" => crate::hideout::production::scav_case_start,
        "HideoutCircleOfCultistProductionStart" => crate::hideout::production::circle_start,
        "HideoutTakeProduction" => crate::hideout::production::take,
        "HideoutCancelProductionCommand" => crate::hideout::production::cancel,
        "HideoutDeleteProductionCommand" => crate::hideout::production::delete,
        "RecordShootingRangePoints" => crate::hideout::extras::shooting_range,
        "HideoutQuickTimeEvent" => crate::hideout::extras::quick_time_event,
        "HideoutCustomizationApply" => crate::hideout::extras::customization_apply,
        "HideoutCustomizationSetMannequinPose" => crate::hideout::extras::mannequin_pose,
        _ => return None,
    })
}

/// What a batch that met another writer answers.
fn conflict() -> Response {
    envelope::error(1, "another request changed this profile; nothing was applied")
}

/// Adds the item events' route and the functions other mods call to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/game/profile/items/moving", moving).provide_json("give-item", gifts::give_item)
}

/// `/client/game/profile/items/moving`.
fn moving(req: &Request) -> Result<Response> {
    let Some(uid) = profile::session_profile(req)? else {
        return Ok(envelope::error(1, "this session has no profile"));
    };
    let batch: Batch = input::parse(req, "items/moving", MAX_BODY)?;
    let key = format!("profile.{uid}");
    let mut templates = Templates::default();
    let version = match profile::open(&key, &mut templates) {
        Ok(Some(version)) => version,
        Ok(None) => return Ok(envelope::error(1, "the session's profile does not exist")),
        Err(Error::Conflict(_)) => return Ok(conflict()),
        Err(other) => return Err(other),
    };
    let mut doc = Doc::at(&key, version);
    let mut changes = Changes::default();
    let mut warnings = Vec::new();
    let mut applied = Vec::new();
    for (index, step) in batch.data.iter().enumerate() {
        let before = (doc.savepoint(), changes.clone());
        let result = match step["Action"].as_str() {
            Some(name) => match action(name) {
                Some(apply) => apply(&mut doc, step, &mut templates, &mut changes),
                None => Err(format!("the action `{name}` is not supported yet").into()),
            },
            None => Err("the action has no `Action`".into()),
        };
        match result {
            Ok(()) => applied.push(step),
            Err(Refused::Reason(reason)) => {
                doc.restore(before.0);
                changes = before.1;
                warnings.push(json!({ "index": index, "errmsg": reason, "code": "0", "data": {} }));
            }
            Err(Refused::Store(Error::Conflict(_))) => return Ok(conflict()),
            Err(Refused::Store(other)) => return Err(other),
        }
    }
    // Each purchase is told of by the trader's letter, in the batch's patch (`mail/letters.rs`).
    let mut told = Vec::new();
    for bought in applied.iter().filter(|a| a["Action"] == "TradingConfirm" && a["type"] == "buy_from_trader") {
        match mailbox::send(&mut doc, letters::purchase(bought["tid"].as_str().unwrap_or_default())) {
            Ok(message) => told.push(message),
            Err(Error::Conflict(_)) => return Ok(conflict()),
            Err(other) => return Err(other),
        }
    }
    // The answer is read before the commit: afterwards the document is at a newer version. Its members
    // are those SPT's `EventOutputHolder` always sends.
    let read = |doc: &mut Doc, changes: &Changes| -> Result<Map<String, Value>> {
        // Only a quest's reward changes skills: other batches answer none rather than read them (a
        // store call on every drag).
        let (statuses, skills): (Vec<Value>, Value) = if changes.quests.is_empty() {
            (Vec::new(), json!({ "Common": [], "Mastering": [], "Points": 0 }))
        } else {
            let all = doc.get(&["Quests"])?;
            let changed = all
                .as_array()
                .into_iter()
                .flatten()
                .filter(|s| s["qid"].as_str().is_some_and(|q| changes.quests.iter().any(|c| c == q)));
            (changed.cloned().collect(), doc.get(&["Skills"])?)
        };
        let opened: Vec<Value> = if changes.opened.is_empty() {
            Vec::new()
        } else {
            let edition = doc.get(&["Info", "GameVersion"])?;
            let edition = edition.as_str().unwrap_or_default();
            changes.opened.iter().filter_map(|q| crate::menu::quests::for_client(q, edition)).collect()
        };
        // Built member by member, moving each value in: `json!` would copy every value it is given
        // (it serializes them into new values), and the answer is the largest thing a drag builds.
        let mut answer = Map::new();
        let mut member = |name: &str, value: Value| answer.insert(name.to_owned(), value);
        member("_id", Value::String(uid.clone()));
        member("experience", doc.get(&["Info", "Experience"])?);
        member("quests", Value::Array(opened));
        member("ragFairOffers", json!([]));
        member("weaponBuilds", json!([]));
        member("equipmentBuilds", json!([]));
        member("items", changes.to_json(doc)?);
        member("production", json!({}));
        member("improvements", json!({}));
        member("health", crate::health::current(doc)?);
        member("traderRelations", doc.get(&["TradersInfo"])?);
        member("skills", skills);
        member("questsStatus", Value::Array(statuses));
        // SPT's `ProfileChange` always writes these two (`JsonIgnore(Never)`), null when unset.
        member("recipeUnlocked", Value::Null);
        member("repeatableQuests", Value::Null);
        // An action's own member replaces the default in its place.
        for (name, value) in &changes.answers {
            member(name, value.clone());
        }
        Ok(Map::from_iter([(uid.clone(), Value::Object(answer))]))
    };
    let answer = match read(&mut doc, &changes) {
        Ok(answer) => answer,
        Err(Error::Conflict(_)) => return Ok(conflict()),
        Err(other) => return Err(other),
    };
    match doc.commit() {
        Ok(_) => {}
        Err(Error::Conflict(_)) => return Ok(conflict()),
        Err(other) => return Err(other),
    }
    announce(req.session().unwrap_or_default(), &uid, &applied);
    for (name, delay, payload) in &changes.later {
        crate::hideout::ready::arm(req.session(), name, *delay, payload);
    }
    for message in &told {
        mailbox::announce(req.session(), &uid, message);
    }
    crate::ragfair::committed(req.session().unwrap_or_default(), &uid, &applied);
    let out = Map::from_iter([
        ("warnings".to_owned(), Value::Array(warnings)),
        ("profileChanges".to_owned(), Value::Object(answer)),
    ]);
    Ok(envelope::ok(&out))
}

/// After the batch is written: `items.moved` with the actions that applied, and `trade.done` for each
/// purchase among them (none when nothing applied).
fn announce(session: &str, uid: &str, applied: &[&Value]) {
    if applied.is_empty() {
        return;
    }
    // Serialized straight from the batch: `json!` would copy every action first.
    #[derive(Serialize)]
    struct Moved<'a> {
        session: &'a str,
        uid: &'a str,
        actions: &'a [&'a Value],
    }
    events::announce(events::ITEMS_MOVED, &Moved { session, uid, actions: applied });
    for sale in applied.iter().filter(|a| a["Action"] == "SellAllFromSavage") {
        savage::settle(session, uid);
        events::announce(
            events::TRADE_SOLD,
            &json!({ "session": session, "uid": uid, "trader": savage::FENCE, "action": sale["Action"] }),
        );
    }
    for done in
        applied.iter().filter(|a| ["Eat", "Heal", "RestoreHealth"].contains(&a["Action"].as_str().unwrap_or_default()))
    {
        events::announce(events::HEALTH_HEALED, &json!({ "session": session, "uid": uid, "action": done }));
    }
    for done in
        applied.iter().filter(|a| ["Repair", "TraderRepair"].contains(&a["Action"].as_str().unwrap_or_default()))
    {
        events::announce(events::ITEM_REPAIRED, &json!({ "session": session, "uid": uid, "action": done }));
    }
    for trade in applied.iter().filter(|a| a["Action"] == "TradingConfirm") {
        if trade["type"] == "sell_to_trader" {
            let sold = json!({ "session": session, "uid": uid, "trader": trade["tid"], "action": trade["type"], "items": trade["items"] });
            events::announce(events::TRADE_SOLD, &sold);
            continue;
        }
        let items = json!([{ "id": trade["item_id"], "count": trade["count"] }]);
        let done =
            json!({ "session": session, "uid": uid, "trader": trade["tid"], "action": trade["type"], "items": items });
        events::announce(events::TRADE_DONE, &done);
    }
}
