//! The hideout's small actions (SPT's `HideoutController`): the shooting range's record
//! (`RecordShootingRangePoints`), the gym's quick-time events (`HideoutQuickTimeEvent`), hideout
//! customization (`HideoutCustomizationApply`) and the mannequins' poses
//! (`HideoutCustomizationSetMannequinPose`).
//!
//! Where SPT trusts the client, these check: a record only goes up and is a bounded whole number; a
//! workout names one of the db's QTEs, in an area built to its level, by a player meeting its health
//! requirements (energy, hydration, no excluded effect such as a broken arm), with no more results than
//! the QTE has events; a customization is one of the db's enabled offers whose quest conditions the
//! player met; a pose names a bounded id and pose. The gym's skill gains are the workout route's
//! (`health/mod.rs`); a workout here costs energy and hydration per result and leaves muscle pain.

use super::state;
use crate::health;
use crate::health::regen::number;
use crate::menu::quests::status;
use crate::profile::doc::Doc;
use crate::profile::inventory::{Changes, Outcome};
use crate::templates::Templates;
use modhost_sdk::db;
use serde_json::{Value, json};

/// The overall counter the shooting range's record is kept under (SPT's key).
const RANGE_KEY: &str = "ShootingRangePoints";
/// The highest score the range records (a round of the range scores a few hundred).
const MAX_POINTS: u64 = 1_000_000;
/// The most poses one action sets (a hideout has three mannequins; room for more).
const MAX_POSES: usize = 16;
/// The longest pose name accepted (the client's are short identifiers).
const MAX_POSE_CHARS: usize = 64;
/// Energy and hydration never drop below this after a workout (SPT's floor).
const FLOOR: f64 = 1.0;

/// `RecordShootingRangePoints {points}`: the record in `Stats.Eft.OverallCounters`.
pub(crate) fn shooting_range(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let points = action["points"]
        .as_u64()
        .filter(|p| *p <= MAX_POINTS)
        .ok_or_else(|| format!("`points` must be a whole number up to {MAX_POINTS}"))?;
    let path = ["Stats", "Eft", "OverallCounters", "Items"];
    let counters = record(doc.get(&path)?, points)?;
    doc.set(&path, counters)?;
    Ok(())
}

/// `counters` (SPT's `OverallCounters.Items`) with the range's record at least `points`.
fn record(counters: Value, points: u64) -> Result<Value, String> {
    let mut counters = match counters {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        _ => return Err("the profile's overall counters are malformed".into()),
    };
    match counters.iter_mut().find(|c| c["Key"].as_array().is_some_and(|k| k.iter().any(|k| k == RANGE_KEY))) {
        Some(counter) => {
            // A record: a lower score than the kept one leaves it (SPT overwrites it with any score).
            let kept = counter["Value"].as_u64().unwrap_or(0);
            counter["Value"] = json!(kept.max(points));
        }
        None => counters.push(json!({"Key": [RANGE_KEY], "Value": points})),
    }
    Ok(Value::Array(counters))
}

/// `HideoutQuickTimeEvent {id, results: [bool]}`: a workout's cost in energy and hydration.
pub(crate) fn quick_time_event(doc: &mut Doc, action: &Value, _: &mut Templates, changes: &mut Changes) -> Outcome {
    let id = action["id"].as_str().ok_or("the action names no QTE `id`")?;
    let results = action["results"].as_array().ok_or("`results` must be a list of true and false")?;
    let results = results.iter().map(|r| r.as_bool().ok_or("`results` must be a list of true and false"));
    let results = results.collect::<Result<Vec<bool>, _>>()?;
    let qtes: Value = db::get(&db::path(&["hideout", "qte"])).unwrap_or(Value::Null);
    let qte = qtes
        .as_array()
        .into_iter()
        .flatten()
        .find(|q| q["id"] == id)
        .ok_or_else(|| format!("QTE {id} is not in the database"))?;
    let (area, level) = (qte["area"].as_i64().unwrap_or(-1), qte["areaLevel"].as_i64().unwrap_or(0));
    let hideout = state::current(doc)?;
    let built = hideout["Areas"].as_array().into_iter().flatten().find(|a| a["type"].as_i64() == Some(area));
    if built.and_then(|a| a["level"].as_i64()).unwrap_or(0) < level.max(1) {
        return Err(format!("QTE {id} needs area {area} built to level {}", level.max(1)).into());
    }
    let health = workout(health::settle(doc)?, qte, &results)?;
    doc.set(&["Health"], health.clone())?;
    changes.answer("health", health);
    Ok(())
}

/// `health` after a workout of `qte` with `results`: the QTE's requirements checked, each result's
/// energy and hydration applied (never below [`FLOOR`]), and muscle pain on the chest (mild, or severe
/// over mild).
fn workout(mut health: Value, qte: &Value, results: &[bool]) -> Result<Value, String> {
    let events = qte["quickTimeEvents"].as_array().map_or(0, Vec::len);
    if results.len() > events {
        return Err(format!("the QTE has {events} events, not {}", results.len()));
    }
    for requirement in qte["requirements"].as_array().into_iter().flatten() {
        match requirement["type"].as_str() {
            Some("Health") => {
                for factor in ["Energy", "Hydration"] {
                    let needed = requirement[factor.to_lowercase()].as_f64().unwrap_or(0.0);
                    let has = health[factor]["Current"].as_f64().unwrap_or(0.0);
                    if has < needed {
                        return Err(format!(
                            "a workout needs {needed} {}, the player has {has}",
                            factor.to_lowercase()
                        ));
                    }
                }
            }
            Some("BodyPartBuff") if requirement["excluded"] == true => {
                let (part, effect) =
                    (requirement["bodyPart"].as_str().unwrap_or(""), requirement["effectName"].as_str().unwrap_or(""));
                if health["BodyParts"][part]["Effects"].get(effect).is_some() {
                    return Err(format!("a workout is not possible with {effect} on {part}"));
                }
            }
            _ => {}
        }
    }
    for success in results {
        let effect = &qte["results"][if *success { "singleSuccessEffect" } else { "singleFailEffect" }];
        for factor in ["Energy", "Hydration"] {
            let by = effect[factor.to_lowercase()].as_f64().unwrap_or(0.0);
            let value = &mut health[factor];
            let current = value["Current"].as_f64().unwrap_or(0.0);
            let maximum = value["Maximum"].as_f64().unwrap_or(current);
            value["Current"] = number((current + by).clamp(FLOOR, maximum.max(FLOOR)));
        }
    }
    let pain = qte["results"]["finishEffect"]["rewardsRange"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["type"] == "MusclePain")
        .and_then(|r| r["time"].as_f64());
    if let Some(time) = pain {
        let chest = &mut health["BodyParts"]["Chest"];
        if !chest["Effects"].is_object() {
            chest["Effects"] = json!({});
        }
        let effects = &mut chest["Effects"];
        if effects.get("MildMusclePain").is_some() {
            effects.as_object_mut().map(|e| e.shift_remove("MildMusclePain"));
            effects["SevereMusclePain"] = json!({"Time": time});
        } else if effects.get("SevereMusclePain").is_none() {
            effects["MildMusclePain"] = json!({"Time": time});
        }
    }
    Ok(health)
}

/// `HideoutCustomizationApply {offerId}`: the offer's item on the hideout's wall, floor, light,
/// ceiling or shooting range mark.
pub(crate) fn customization_apply(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let offer = action["offerId"].as_str().ok_or("the action names no `offerId`")?;
    let offers: Value = db::get(&db::path(&["hideout", "customisation"])).unwrap_or(Value::Null);
    let found = offers["globals"].as_array().into_iter().flatten().find(|g| g["id"] == offer);
    let found = found.ok_or_else(|| format!("customization {offer} is not in the database"))?;
    let quests = doc.get(&["Quests"])?;
    let (place, item) = customization(found, &quests)?;
    let mut hideout = state::settle(doc)?;
    if !hideout["Customization"].is_object() {
        hideout["Customization"] = json!({});
    }
    hideout["Customization"][place] = json!(item);
    state::store(doc, hideout)?;
    Ok(())
}

/// Where `offer` goes in `Hideout.Customization` and the item it puts there, if it is enabled and the
/// player's `quests` meet its quest conditions.
fn customization(offer: &Value, quests: &Value) -> Result<(&'static str, String), String> {
    let id = offer["id"].as_str().unwrap_or_default();
    if offer["isEnabled"] != true {
        return Err(format!("customization {id} is not enabled"));
    }
    for condition in offer["conditions"].as_array().into_iter().flatten().filter(|c| c["conditionType"] == "Quest") {
        let target = condition["target"].as_str().unwrap_or_default();
        let held = quests.as_array().into_iter().flatten().find(|q| q["qid"] == target).map(|q| q["status"].clone());
        let met = held.is_some_and(|s| {
            condition["status"].as_array().is_some_and(|wanted| wanted.iter().any(|w| status(w) == status(&s)))
        });
        if !met {
            return Err(format!("customization {id} needs quest {target} done"));
        }
    }
    let place = match offer["type"].as_str() {
        Some("wall") => "Wall",
        Some("floor") => "Floor",
        Some("light") => "Light",
        Some("ceiling") => "Ceiling",
        Some("shootingRangeMark") => "ShootingRangeMark",
        other => return Err(format!("customization {id} has an unknown type {other:?}")),
    };
    let item = offer["itemId"].as_str().ok_or_else(|| format!("customization {id} names no item"))?;
    Ok((place, item.to_owned()))
}

/// `HideoutCustomizationSetMannequinPose {poses: {mannequin: pose}}`.
pub(crate) fn mannequin_pose(doc: &mut Doc, action: &Value, _: &mut Templates, _: &mut Changes) -> Outcome {
    let poses = action["poses"].as_object().ok_or("`poses` must map mannequins to poses")?;
    if poses.len() > MAX_POSES {
        return Err(format!("at most {MAX_POSES} poses are set at once").into());
    }
    let mut hideout = state::settle(doc)?;
    if !hideout["MannequinPoses"].is_object() {
        hideout["MannequinPoses"] = json!({});
    }
    for (mannequin, pose) in poses {
        if mannequin.len() != 24 || !mannequin.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("mannequin {mannequin:?} is not an item id").into());
        }
        let pose = pose.as_str().filter(|p| {
            !p.is_empty() && p.len() <= MAX_POSE_CHARS && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        let pose = pose.ok_or_else(|| {
            format!("the pose of {mannequin} must be a name of up to {MAX_POSE_CHARS} letters, digits or _")
        })?;
        hideout["MannequinPoses"][mannequin] = json!(pose);
    }
    state::store(doc, hideout)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gym() -> Value {
        json!({"id": "q", "area": 23, "areaLevel": 1, "quickTimeEvents": [{}, {}, {}],
               "requirements": [{"energy": 30, "hydration": 30, "type": "Health"},
                                {"bodyPart": "LeftArm", "effectName": "Fracture", "excluded": true, "type": "BodyPartBuff"}],
               "results": {"finishEffect": {"rewardsRange": [{"result": "Exit", "time": 86400, "type": "MusclePain"}]},
                           "singleSuccessEffect": {"energy": -2, "hydration": -2},
                           "singleFailEffect": {"energy": -4, "hydration": -4}}})
    }

    fn health(energy: f64, hydration: f64) -> Value {
        json!({"Energy": {"Current": energy, "Maximum": 100}, "Hydration": {"Current": hydration, "Maximum": 100},
               "BodyParts": {"Chest": {"Health": {"Current": 80, "Maximum": 80}}, "LeftArm": {"Health": {"Current": 60, "Maximum": 60}}}})
    }

    #[test]
    fn the_range_keeps_the_best_score() {
        let first = record(Value::Null, 120).unwrap();
        assert_eq!(first, json!([{"Key": [RANGE_KEY], "Value": 120}]));
        assert_eq!(record(first.clone(), 90).unwrap(), first, "a lower score is no record");
        assert_eq!(record(first, 300).unwrap()[0]["Value"], 300);
        assert!(record(json!({}), 1).is_err());
    }

    #[test]
    fn a_workout_costs_per_result_and_leaves_pain_that_worsens() {
        let after = workout(health(50.0, 40.0), &gym(), &[true, false, true]).unwrap();
        assert_eq!(after["Energy"]["Current"].as_f64(), Some(42.0));
        assert_eq!(after["Hydration"]["Current"].as_f64(), Some(32.0));
        assert_eq!(after["BodyParts"]["Chest"]["Effects"], json!({"MildMusclePain": {"Time": 86400.0}}));
        let again = workout(
            json!({"Energy": {"Current": 31, "Maximum": 100}, "Hydration": {"Current": 31, "Maximum": 100},
                                   "BodyParts": after["BodyParts"].clone()}),
            &gym(),
            &[false, false, false],
        )
        .unwrap();
        assert_eq!(again["Energy"]["Current"].as_f64(), Some(19.0));
        let mut harsh = gym();
        harsh["results"]["singleFailEffect"]["energy"] = json!(-40);
        let floored = workout(health(35.0, 35.0), &harsh, &[false, false]).unwrap();
        assert_eq!(floored["Energy"]["Current"].as_f64(), Some(FLOOR), "never below the floor");
        assert_eq!(again["BodyParts"]["Chest"]["Effects"], json!({"SevereMusclePain": {"Time": 86400.0}}));
    }

    #[test]
    fn a_workout_is_refused_tired_thirsty_broken_or_with_extra_results() {
        assert!(workout(health(29.0, 50.0), &gym(), &[true]).unwrap_err().to_string().contains("energy"));
        assert!(workout(health(50.0, 29.0), &gym(), &[true]).unwrap_err().to_string().contains("hydration"));
        let mut broken = health(50.0, 50.0);
        broken["BodyParts"]["LeftArm"]["Effects"] = json!({"Fracture": {"Time": -1}});
        assert!(workout(broken, &gym(), &[true]).unwrap_err().to_string().contains("Fracture"));
        assert!(workout(health(50.0, 50.0), &gym(), &[true; 4]).is_err());
    }

    #[test]
    fn a_customization_needs_its_quest_and_maps_its_type() {
        let offer = json!({"id": "c", "type": "floor", "isEnabled": true, "itemId": "i",
                           "conditions": [{"conditionType": "Quest", "target": "t", "status": [4]}]});
        assert!(customization(&offer, &json!([])).is_err());
        assert!(customization(&offer, &json!([{"qid": "t", "status": "Started"}])).is_err());
        assert_eq!(
            customization(&offer, &json!([{"qid": "t", "status": "Success"}])).unwrap(),
            ("Floor", "i".to_owned())
        );
        let block = json!({"id": "c", "type": "wall", "isEnabled": true, "itemId": "w", "conditions": [{"conditionType": "Block"}]});
        assert_eq!(customization(&block, &json!([])).unwrap().0, "Wall");
        let off = json!({"id": "c", "type": "wall", "isEnabled": false, "itemId": "w"});
        assert!(customization(&off, &json!([])).is_err());
        let odd = json!({"id": "c", "type": "roof", "isEnabled": true, "itemId": "w"});
        assert!(customization(&odd, &json!([])).is_err());
    }
}
