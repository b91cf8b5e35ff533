//! `RedeemProfileReward {events: [{MessageId, EventId}]}`: a system message's `profileChangeEvents`
//! (SPT's gifts that set a trader's sales sum or standing, the player's experience, a skill, or unlock
//! a trader) are applied, as SPT's `InventoryController.RedeemProfileReward` applies them.
//!
//! The message must be in the player's mailbox from the system sender, and the event one of its own;
//! each event is redeemed once (it leaves the message), the trader it names must exist, and its value
//! is a finite number. The kinds SPT logs as unhandled, and `ExamineAllItems`,
//! `AssortmentUnlockRule` and `HideoutAreaLevel`, are refused by name.

use crate::mail::mailbox::{MAIL, SYSTEM_SENDER};
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome, Refused};
use crate::progression;
use crate::templates::Templates;
use modhost_sdk::db;
use serde_json::{Value, json};

/// The most events one redemption applies (a gift carries a handful).
const MAX_EVENTS: usize = 32;

/// `TradersInfo.<trader>` of a trader of the database, created as not met yet when absent.
fn relation(doc: &mut Doc, trader: &str) -> Result<Value, Refused> {
    if !db::exists(&db::path(&["traders", trader, "base"])) {
        return Err(format!("trader {trader} is not in the database").into());
    }
    super::quests::trader_info(doc, trader)
}

/// `RedeemProfileReward {events}`.
pub(crate) fn redeem(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let events = action["events"].as_array().ok_or("`events` must be a list")?;
    if events.len() > MAX_EVENTS {
        return Err(format!("one redemption applies at most {MAX_EVENTS} events").into());
    }
    for asked in events {
        let (Some(message_id), Some(event_id)) = (asked["MessageId"].as_str(), asked["EventId"].as_str()) else {
            return Err("an event names no `MessageId` and `EventId`".into());
        };
        let path = [MAIL, SYSTEM_SENDER, "messages", message_id, "profileChangeEvents"];
        let mut listed = match doc.get(&path)? {
            Value::Array(list) => list,
            _ => return Err(format!("no system message {message_id} carries rewards").into()),
        };
        let at = listed
            .iter()
            .position(|e| e["_id"] == event_id)
            .ok_or_else(|| format!("message {message_id} has no reward {event_id} left"))?;
        let event = listed.remove(at);
        let value = event["value"].as_f64().filter(|v| v.is_finite()).ok_or("the reward's value is not a number")?;
        let entity = event["entity"].as_str().unwrap_or_default();
        match event["Type"].as_str().unwrap_or_default() {
            "TraderSalesSum" => {
                relation(doc, entity)?;
                doc.set(&["TradersInfo", entity, "salesSum"], json!(value.max(0.0)))?;
            }
            "TraderStanding" => {
                relation(doc, entity)?;
                doc.set(&["TradersInfo", entity, "standing"], json!(value))?;
            }
            "UnlockTrader" => {
                relation(doc, entity)?;
                doc.set(&["TradersInfo", entity, "unlocked"], json!(true))?;
            }
            "ProfileLevel" => {
                let xp = value.max(0.0).floor();
                doc.set(&["Info", "Experience"], json!(xp as i64))?;
                if let Some(level) = progression::level_for(xp) {
                    doc.set(&["Info", "Level"], level)?;
                }
            }
            "SkillPoints" => {
                let mut skills = doc.get(&["Skills", "Common"])?;
                let skill = skills
                    .as_array_mut()
                    .and_then(|l| l.iter_mut().find(|s| s["Id"] == entity))
                    .ok_or_else(|| format!("the profile has no skill {entity:?}"))?;
                skill["Progress"] = json!(value.clamp(0.0, progression::MAX_SKILL_PROGRESS));
                doc.set(&["Skills", "Common"], skills.clone())?;
                changes.answer("skills", doc.get(&["Skills"])?);
            }
            other => return Err(format!("a reward of kind {other:?} is not applied here").into()),
        }
        doc.set(&path, Value::Array(listed))?;
    }
    Ok(())
}
