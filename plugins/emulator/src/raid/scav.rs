//! The player's scav: the second character of every account (SPT's `savage` profile).
//!
//! Store key `scav.<uid>` (beside the PMC's `profile.<uid>`): the scav in the stored shape
//! (`profile/shape.rs`), created on first need from `bots.base` and the `assault` bot type the way a bot is
//! (`bots.rs`): `Info.Side` `Savage`, its own id and inventory. A scav raid's end changes it
//! (`end.rs`); when the scav dies it is generated anew, keeping its experience and skills, as
//! SPT's `PlayerScavGenerator` does.

use super::bots;
use super::loot::Rng;
use crate::clock;
use crate::ids;
use crate::profile::shape;
use crate::templates::Templates;
use modhost_sdk::{Error, Result, db, store};
use serde_json::{Value, json};

/// The scav's store key.
pub(crate) fn key(uid: &str) -> String {
    format!("scav.{uid}")
}

/// The scav of the PMC `uid`, in SPT's shape, for the profile list; `None` while it has none.
pub(crate) fn for_list(uid: &str) -> Result<Option<Value>> {
    Ok(ensure(uid)?.map(shape::spt))
}

/// The scav of the PMC `uid` in the stored shape, created when the PMC has none yet; `None` when there
/// is no such PMC.
pub(crate) fn ensure(uid: &str) -> Result<Option<Value>> {
    if let Some(scav) = store::get::<Value>(&key(uid))? {
        return Ok(Some(scav));
    }
    let Some((aid, _)) = store::doc_get::<Value>(&format!("profile.{uid}"), "aid")? else { return Ok(None) };
    let scav = generate(uid, &aid, None)?;
    // Only if still absent: two first requests at once keep one scav.
    match store::set_if_version(&key(uid), &scav, None) {
        Ok(_) => Ok(Some(scav)),
        Err(Error::Conflict(_)) => store::get::<Value>(&key(uid)),
        Err(other) => Err(other),
    }
}

/// The id a scav of the PMC `uid` has: the one it had (a dead scav's successor keeps it), else the
/// PMC's `savage` (the account's scav id, which the launcher's card and `/client/profile/status`
/// name), else a new one.
fn scav_id(uid: &str, previous: Option<&Value>) -> Result<String> {
    let had = previous.and_then(|p| p["_id"].as_str()).map(str::to_owned);
    let named = match had {
        Some(id) => Some(id),
        None => store::doc_get::<Value>(&format!("profile.{uid}"), "savage")?
            .and_then(|(v, _)| v.as_str().map(str::to_owned)),
    };
    Ok(named.filter(|id| ids::is_id(id)).unwrap_or_else(ids::new_id))
}

/// A fresh scav for the PMC `uid` (account `aid`), in the stored shape; `previous` (a scav being
/// replaced) gives its experience, level, skills and stats.
pub(crate) fn generate(uid: &str, aid: &Value, previous: Option<&Value>) -> Result<Value> {
    let base: Value = db::get("bots.base").unwrap_or_else(|_| json!({}));
    let kind: Value = db::get("bots.types.assault").unwrap_or_else(|_| json!({}));
    let mut rng = Rng::new(seed());
    let mut templates = Templates::default();
    let mut scav = bots::bot(&base, &kind, "assault", "normal", &mut rng, &mut templates);
    scav["_id"] = json!(scav_id(uid, previous)?);
    scav["aid"] = aid.clone();
    scav["savage"] = Value::Null;
    let info = &mut scav["Info"];
    info["Side"] = json!("Savage");
    info["RegistrationDate"] = json!(clock::now());
    info["Settings"]["Role"] = json!("assault");
    info["Level"] = json!(1);
    info["Experience"] = json!(0);
    // A scav that replaces one (after a death in a raid, or asked for) waits out SPT's cooldown
    // (`globals.config.SavagePlayCooldown`), a moment on the game's clock, so time the server was off
    // counts towards it; the first scav of a profile is ready at once.
    let cooldown =
        if previous.is_some() { db::get::<u64>("globals.config.SavagePlayCooldown").unwrap_or(0) } else { 0 };
    info["SavageLockTime"] = json!(if cooldown > 0 { clock::now() + cooldown } else { 0 });
    info["PmcId"] = json!(uid);
    if let Some(previous) = previous {
        for field in ["Level", "Experience"] {
            scav["Info"][field] = previous["Info"][field].clone();
        }
        for field in ["Skills", "Stats", "Encyclopedia"] {
            if !previous[field].is_null() {
                scav[field] = previous[field].clone();
            }
        }
    }
    for (field, empty) in [
        ("Encyclopedia", json!({})),
        ("TaskConditionCounters", json!({})),
        ("InsuredItems", json!([])),
        ("Quests", json!([])),
        ("TradersInfo", json!({})),
        ("Bonuses", json!([])),
        ("WishList", json!({})),
        ("Achievements", json!({})),
    ] {
        if scav[field].is_null() {
            scav[field] = empty;
        }
    }
    Ok(shape::stored(scav, &mut templates))
}

/// A fresh seed from WASI's randomness.
pub(crate) fn seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}
