//! The profile's health between raids (SPT's `HealthItemEventRouter`, `HealthStaticRouter`,
//! `HealthController`, `HealthHelper`): `Health` as SPT keeps it (`BodyParts.<part>.Health
//! {Current, Maximum}` and `Effects`, `Hydration`, `Energy`, `Temperature`, `UpdateTime`).
//!
//! - `regen.rs`: regeneration from the time elapsed since `Health.UpdateTime`, a pure function: the
//!   stored health is the state at its `UpdateTime`, and every answer that carries health (the
//!   `items/moving` batch's `health`, `/client/game/profile/list`) shows it regenerated to now
//!   ([`current`], [`shown`]); nothing is written by reading.
//! - `treat.rs`: `Eat`, `Heal` and `RestoreHealth`, which first store the regenerated state
//!   ([`settle`]) and then change it, answering `health` in `profileChanges`.
//! - `/client/hideout/workout` (SPT's `HandleWorkoutEffects`): the skills the gym trained.

pub(crate) mod regen;
pub(crate) mod treat;

use crate::clock;
use crate::input;
use crate::profile::doc::Doc;
use crate::profile::player;
use crate::progression::MAX_SKILL_PROGRESS;
use modhost_sdk::{Error, Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};

/// Adds SPT's `HealthStaticRouter` route to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/hideout/workout", workout)
}

/// Does `health` change with time: something below its maximum, or an effect?
fn regenerates(health: &Value) -> bool {
    let below = |v: &Value| v["Current"].as_f64().zip(v["Maximum"].as_f64()).is_some_and(|(c, m)| c < m);
    below(&health["Energy"])
        || below(&health["Hydration"])
        || health["BodyParts"]
            .as_object()
            .into_iter()
            .flatten()
            .any(|(_, part)| below(&part["Health"]) || part["Effects"].as_object().is_some_and(|e| !e.is_empty()))
}

/// `health` regenerated to now, reading the profile's bonuses with `bonuses` only when it changes.
fn to_now(health: Value, bonuses: impl FnOnce() -> Result<Value>) -> Result<Value> {
    let Some(since) = health["UpdateTime"].as_f64() else { return Ok(health) };
    let now = clock::now();
    if !regenerates(&health) || since >= now as f64 {
        return Ok(health);
    }
    Ok(regen::regenerate(health, now as f64 - since, now, &bonuses()?))
}

/// The batch's profile's health as the game shows it now.
pub(crate) fn current(doc: &mut Doc) -> Result<Value> {
    let health = doc.get(&["Health"])?;
    to_now(health, || doc.get(&["Bonuses"]))
}

/// Stores the health as it is now (regenerated) and answers it: what an action changes.
pub(crate) fn settle(doc: &mut Doc) -> Result<Value> {
    let health = current(doc)?;
    if !health.is_object() {
        return Err(Error::Invalid("the profile has no `Health`".into()));
    }
    doc.set(&["Health"], health.clone())?;
    Ok(health)
}

/// A profile in SPT's shape with its health shown as it is now (the profile list).
pub(crate) fn shown(mut profile: Value) -> Value {
    let health = profile["Health"].take();
    let bonuses = profile["Bonuses"].clone();
    profile["Health"] = to_now(health.clone(), || Ok(bonuses)).unwrap_or(health);
    profile
}

/// The largest workout body read: a skills list of a few kilobytes.
const MAX_WORKOUT_BODY: usize = 256 << 10;

/// The skills a workout trains: SPT copies the client's `Common` skills whole, which would let a
/// client write any skill; the gym trains these two.
const TRAINED: [&str; 2] = ["Strength", "Endurance"];

#[derive(Deserialize)]
struct Workout {
    #[serde(default)]
    skills: WorkoutSkills,
}

#[derive(Deserialize, Default)]
struct WorkoutSkills {
    #[serde(default, rename = "Common", deserialize_with = "input::at_most::<256, _, _>")]
    common: Vec<Value>,
}

/// `/client/hideout/workout {skills: {Common}, effects}`: the trained skills' progress, each within
/// SPT's highest; SPT answers an empty response.
fn workout(req: &Request) -> Result<Response> {
    let uid = match player(req, "a workout")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Workout = input::parse(req, "hideout/workout", MAX_WORKOUT_BODY)?;
    let key = format!("profile.{uid}");
    for _ in 0..store::UPDATE_ATTEMPTS {
        let Some((mut skills, version)) = store::doc_get::<Value>(&key, &db::path(&["Skills", "Common"]))? else {
            return Ok(envelope::error(1, "the session's profile does not exist"));
        };
        let Some(list) = skills.as_array_mut() else { break };
        let mut changed = false;
        for trained in body.skills.common.iter().filter(|s| s["Id"].as_str().is_some_and(|id| TRAINED.contains(&id))) {
            let Some(progress) = trained["Progress"].as_f64().filter(|p| p.is_finite()) else { continue };
            let progress = progress.clamp(0.0, MAX_SKILL_PROGRESS);
            match list.iter_mut().find(|s| s["Id"] == trained["Id"]) {
                Some(skill) => skill["Progress"] = json!(progress),
                None => list.push(json!({"Id": trained["Id"], "Progress": progress, "PointsEarnedDuringSession": 0,
                                         "LastAccess": clock::now()})),
            }
            changed = true;
        }
        if !changed {
            break;
        }
        match store::doc_patch_if_version(&key, "Skills", &json!({ "Common": skills }), version) {
            Ok(_) => break,
            Err(Error::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Ok(envelope::ok(&json!("")))
}
