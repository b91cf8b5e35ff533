//! The main menu: weather (`weather.rs`), locations, the handbook, builds, customization storage,
//! the server list and group state, achievements, prestige, the survey and the version check; quests
//! (`quests.rs`: the quest list, and which quests a player may take, shared with the quest actions
//! and a raid's end; the repeatable quests' periods, whose quests `repeatable.rs` generates) and
//! traders (`traders.rs`). The notifier's channel is asked for here too
//! (`notify.rs`). Friends and mail are `mail/`'s, the hideout's tables `hideout/`'s.
//!
//! Each route answers in the shape SPT's callback sends (SPT's router and callback are named on each
//! function). Static tables go by db reference (`tables.rs`), so they never cross into the guest:
//! `templates.handbook`, `templates.achievements`, `templates.prestige`, and `/client/locations`,
//! which is composed from `locations.<map>.base` for every map folder and `locations.base.paths`.
//!
//! What SPT takes from its configs (not database) is read from db paths of ours that keep SPT's
//! config shape: `configs.core` (`compatibleTarkovVersion`, `survey`) for the version check and the
//! survey.
//!
//! Per player, read by path (`store::doc_get`), never the whole profile: the secure container in the
//! profile's equipment for the default builds, `Achievements` (member names only) for the statistic,
//! and `userdata.<uid>` (`profile/mod.rs`): `userbuilds` and `customisationUnlocks`.

pub(crate) mod builds;
pub(crate) mod feedback;
pub(crate) mod group;
pub(crate) mod quests;
pub(crate) mod repeatable;
pub(crate) mod suits;
pub(crate) mod traders;
mod weather;

use crate::notify;
use crate::profile::{doc_read, player, userdata};
use crate::tables::table;
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Adds the menu's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    let router = router
        .route("/client/notifier/channel/create", notify::channel)
        .route("/client/weather", weather::weather)
        .route("/client/locations", locations)
        .route("/client/handbook/templates", |_| Ok(table("templates.handbook", r#"{"Categories":[],"Items":[]}"#)))
        .route("/client/builds/list", builds)
        .route("/client/customization/storage", customization_storage)
        .route("/client/trading/customization/storage", customization_unlocks)
        .route("/client/server/list", server_list)
        .route("/client/match/group/current", |_| Ok(envelope::ok(&json!({"squad": []}))))
        .route("/client/checkVersion", check_version)
        .route("/client/achievement/list", achievements)
        .route("/client/achievement/statistic", achievement_statistic)
        .route("/client/prestige/list", |_| Ok(table("templates.prestige", r#"{"elements":[]}"#)))
        .route("/client/survey", survey);
    let router = quests::routes(router);
    let router = builds::routes(router);
    let router = feedback::routes(router);
    let router = group::routes(router);
    let router = suits::routes(router);
    traders::routes(router)
}

/// The largest body a menu route reads: the client sends `{}` or a few small members.
pub(crate) const MAX_BODY: usize = 4 << 10;

// ---------------------------------------------------------------------------------------------------
// Locations (LocationStaticRouter → LocationCallbacks.GetLocationData → LocationController.GenerateAll)

/// The most maps `/client/locations` lists (SPT ships about twenty).
const MAX_MAPS: usize = 256;

/// `/client/locations`: `{locations: {<_Id>: <base>}, paths}`, each base and the paths spliced in by
/// the host. A map folder without a `base` (or whose base has no `_Id`) is left out, as SPT does.
fn locations(_: &Request) -> Result<Response> {
    let mut answer = Response::empty().with_bytes(br#"{"err":0,"errmsg":null,"data":{"locations":{"#.to_vec());
    let folders = db::keys("locations").unwrap_or_default();
    let mut first = true;
    for folder in folders.iter().filter(|f| f.as_str() != "base").take(MAX_MAPS) {
        let base = db::path(&["locations", folder, "base"]);
        let Ok(id) = db::get::<String>(&db::path(&["locations", folder, "base", "_Id"])) else { continue };
        let mut key = if first { Vec::new() } else { b",".to_vec() };
        key.extend(serde_json::to_vec(&id)?);
        key.push(b':');
        answer = answer.with_bytes(key).with_db(&base);
        first = false;
    }
    answer = answer.with_bytes(br#"},"paths":"#.to_vec());
    answer = if db::exists("locations.base.paths") {
        answer.with_db("locations.base.paths")
    } else {
        answer.with_bytes(b"[]".to_vec())
    };
    Ok(answer.with_bytes(b"}}".to_vec()))
}

// ---------------------------------------------------------------------------------------------------
// Builds (BuildStaticRouter → BuildsCallbacks.GetBuilds → BuildController.GetUserBuilds)

/// `/client/builds/list`: the player's builds (`userdata.<uid>.userbuilds`), then SPT's default
/// equipment presets (`templates.defaultEquipmentPresets`) with their secure container made the one
/// the player wears, as SPT does.
fn builds(req: &Request) -> Result<Response> {
    let uid = match player(req, "the build list")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let mut builds: Map<String, Value> = userdata(&uid, "userbuilds")?.unwrap_or_default();
    for kind in ["equipmentBuilds", "weaponBuilds", "magazineBuilds"] {
        if !builds.get(kind).is_some_and(Value::is_array) {
            builds.insert(kind.to_owned(), json!([]));
        }
    }
    let mut presets: Vec<Value> = db::get("templates.defaultEquipmentPresets").unwrap_or_default();
    if let Some(secure) = secure_container(&uid)? {
        for preset in &mut presets {
            if let Some(items) = preset.get_mut("Items").and_then(Value::as_array_mut) {
                for item in items.iter_mut().filter(|i| i["slotId"] == "SecuredContainer") {
                    item["_tpl"] = json!(secure);
                }
            }
        }
    }
    if let Some(Value::Array(equipment)) = builds.get_mut("equipmentBuilds") {
        equipment.extend(presets);
    }
    Ok(envelope::ok(&builds))
}

/// The template of the secure container the player wears, found through the stored profile's
/// children index (`_modhost.children.<equipment>`), not by scanning the inventory.
fn secure_container(uid: &str) -> Result<Option<String>> {
    let key = format!("profile.{uid}");
    let Some(equipment) = doc_read::<String>(&key, &["Inventory", "equipment"])? else { return Ok(None) };
    let children: Map<String, Value> =
        doc_read(&key, &[crate::profile::shape::INDEX, "children", &equipment]).unwrap_or(None).unwrap_or_default();
    let Some((id, _)) = children.iter().find(|(_, slot)| *slot == "SecuredContainer") else { return Ok(None) };
    doc_read::<String>(&key, &["Inventory", "items", id, "_tpl"])
}

// ---------------------------------------------------------------------------------------------------
// Customization (CustomizationStaticRouter → CustomizationCallbacks → CustomizationController)

/// `/client/customization/storage`: `templates.customisationStorage` (what every player has), then the
/// player's own unlocks. By reference when the player has none.
fn customization_storage(req: &Request) -> Result<Response> {
    let unlocks: Vec<Value> = match player(req, "the customization storage")? {
        Ok(uid) => {
            let mut unlocks: Vec<Value> = userdata(&uid, "customisationUnlocks")?.unwrap_or_default();
            unlocks.extend(crate::profile::bought_suits(&uid)?);
            unlocks
        }
        Err(_) => Vec::new(),
    };
    if unlocks.is_empty() {
        return Ok(table("templates.customisationStorage", "[]"));
    }
    let mut all: Vec<Value> = db::get("templates.customisationStorage").unwrap_or_default();
    all.extend(unlocks);
    Ok(envelope::ok(&all))
}

/// `/client/trading/customization/storage`: the player's own unlocks only.
fn customization_unlocks(req: &Request) -> Result<Response> {
    let uid = match player(req, "the customization unlocks")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let mut unlocks: Vec<Value> = userdata(&uid, "customisationUnlocks")?.unwrap_or_default();
    unlocks.extend(crate::profile::bought_suits(&uid)?);
    Ok(envelope::ok(&unlocks))
}

// ---------------------------------------------------------------------------------------------------
// Game (GameStaticRouter → GameCallbacks → GameController)

/// `/client/server/list`: this backend, as the client reached it (`Host`), as SPT's `ServerDetails`.
fn server_list(req: &Request) -> Result<Response> {
    let host = req.header("host").unwrap_or("127.0.0.1:6969");
    let (ip, port) = split_host(host);
    Ok(envelope::ok(&json!([{"ip": ip, "port": port}])))
}

/// `host[:port]` (or `[v6]:port`) into the address and the port, 80 when none is given.
fn split_host(host: &str) -> (String, u16) {
    if let Some((ip, port)) = host.rsplit_once(':')
        && !ip.is_empty()
        && (!ip.contains(':') || ip.ends_with(']'))
        && let Ok(port) = port.parse::<u16>()
    {
        return (ip.trim_start_matches('[').trim_end_matches(']').to_owned(), port);
    }
    (host.trim_start_matches('[').trim_end_matches(']').to_owned(), 80)
}

/// `/client/checkVersion`: valid, with the game version the server is made for.
fn check_version(_: &Request) -> Result<Response> {
    let version: String = db::get("configs.core.compatibleTarkovVersion").unwrap_or_default();
    Ok(envelope::ok(&json!({"isvalid": true, "latestVersion": version})))
}

/// `/client/survey`: SPT's survey (`configs.core.survey`: `{locale, survey}`), or `null` when there is
/// none.
fn survey(_: &Request) -> Result<Response> {
    Ok(table("configs.core.survey", "null"))
}

// ---------------------------------------------------------------------------------------------------
// Achievements (AchievementStaticRouter → AchievementCallbacks → AchievementController)

/// `/client/achievement/list`: `{elements: templates.achievements}`, by reference.
fn achievements(_: &Request) -> Result<Response> {
    let answer = Response::empty().with_bytes(br#"{"err":0,"errmsg":null,"data":{"elements":"#.to_vec());
    let answer = if db::exists("templates.achievements") {
        answer.with_db("templates.achievements")
    } else {
        answer.with_bytes(b"[]".to_vec())
    };
    Ok(answer.with_bytes(b"}}".to_vec()))
}

/// The most profiles the statistic reads.
const MAX_PROFILES: usize = 10_000;

/// `/client/achievement/statistic`: for each achievement, the share (in percent) of the server's
/// profiles that have it, from each profile's `Achievements` member names.
fn achievement_statistic(_: &Request) -> Result<Response> {
    #[derive(Deserialize)]
    struct Achievement {
        #[serde(default)]
        id: String,
    }
    let all: Vec<Achievement> = db::get("templates.achievements").unwrap_or_default();
    let keys = store::list("profile.")?;
    let mut counts = vec![0u64; all.len()];
    let mut profiles = 0u64;
    for key in keys.iter().take(MAX_PROFILES) {
        // A profile with an unreadable `Achievements` counts as one without any.
        let have = store::doc_keys(key, "Achievements").unwrap_or_default();
        profiles += 1;
        for (n, achievement) in all.iter().enumerate() {
            if have.contains(&achievement.id) {
                counts[n] += 1;
            }
        }
    }
    let mut elements = Map::new();
    for (achievement, count) in all.iter().zip(counts) {
        if !achievement.id.is_empty() {
            elements.insert(achievement.id.clone(), json!(count * 100 / profiles.max(1)));
        }
    }
    Ok(envelope::ok(&json!({"elements": elements})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_into_address_and_port() {
        assert_eq!(split_host("127.0.0.1:6969"), ("127.0.0.1".to_owned(), 6969));
        assert_eq!(split_host("localhost"), ("localhost".to_owned(), 80));
        assert_eq!(split_host("[::1]:7000"), ("::1".to_owned(), 7000));
        assert_eq!(split_host("::1"), ("::1".to_owned(), 80));
    }
}
