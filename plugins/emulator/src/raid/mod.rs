//! A raid's round trip: from leaving the menu to `match/local/end` applying the raid's result to the
//! profile (`end.rs`, with `progress.rs` for what it carries besides items; the player's scav is `scav.rs`). The routes and their SPT sources (`Routers/Static|Dynamic/*.cs`):
//!
//! - `MatchStaticRouter` → `MatchCallbacks`/`MatchController`/`LocationLifecycleService`:
//!   `/client/match/group/exit_from_menu`, `/client/putMetrics`, `/client/analytics/event-disconnect`,
//!   `/client/raid/configuration-by-profile` (null), `/client/raid/configuration` (kept, for the bots'
//!   difficulty), `/client/getMetricsConfig` (`match.metrics`), `/client/match/local/start`,
//!   `/client/match/local/end`;
//! - `InraidStaticRouter` → `InraidCallbacks`/`InRaidController`: `/singleplayer/settings/raid/menu`,
//!   `/singleplayer/scav/traitorscavhostile`, `/singleplayer/bosstypes` (bare);
//! - `InraidDynamicRouter`: `/client/location/getLocalloot` (SPT registers the player, answers null);
//! - `WeatherStaticRouter` → `WeatherController.GenerateLocal`: `/client/localGame/weather`;
//! - `GameStaticRouter` → `RaidTimeAdjustmentService`: `/singleplayer/settings/getRaidTime` (bare);
//! - `BotStaticRouter`/`BotDynamicRouter` → `BotController`: `/client/game/bot/generate`,
//!   `/singleplayer/settings/bot/difficulties`, `…/bot/difficulty/<type>/<level>`, `…/bot/maxCap/<map>`,
//!   `…/bot/limit/<type>` (bare).
//!
//! Store keys: `raid.<uid>`, the raid in progress: `{serverId, raidId, location, side, started, seed, issued:
//! {<item id>: [<tpl>, <units>]}, issuedCount}` (`serverId` is SPT's `<map>.<side> <seconds>`, which two
//! raids in one second share; `raidId` is this raid's own), every item the raid handed out (its loot at start, the
//! bots' inventories at each `bot/generate`), so its end can tell a found item from an invented one;
//! `raidconfig.<uid>`, the last raid configuration the client sent (SPT's members only: `config.rs`).
//!
//! What SPT reads from its config files (`inraid.json`, `bot.json`, `lostondeath.json`, `health.json`,
//! `trader.json`) is read at its place in them under the db's `configs` (`configs.bot.maxBotCap`…: the
//! generator writes them, `modhost import-spt-db` brings a real configs folder); our own settings (the
//! experience cap, Fence's standing gain per raid, the local weather's ranges) are under
//! `emulator.raid`. A database without them gets SPT's values ([`setting`]).

pub(crate) mod airdrop;
pub(crate) mod bots;
mod config;
mod end;
pub(crate) mod loot;
pub(crate) mod plugin_settings;
mod progress;
mod report;
pub(crate) mod scav;

use loot::{Issued, Rng};

use crate::clock::{self, now};
use crate::ids::new_id;
use crate::input;
use crate::profile::{self, player};
use crate::templates::Templates;
use modhost_sdk::{Error, Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Items one raid may hand out in all (loot and every bot generated for it).
pub(crate) const MAX_ISSUED: u64 = 20_000;
/// Bot waves one `bot/generate` may ask for.
const MAX_CONDITIONS: usize = 32;
/// Bots one wave generates at most, and one request in all.
const MAX_PER_WAVE: u64 = 50;
const MAX_BOTS: usize = 200;
/// The largest small body these routes read (start, configuration, bots, quotes).
const MAX_BODY: usize = 64 << 10;

/// Adds the raid's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    let router = router
        .route("/client/match/group/exit_from_menu", null)
        .route("/client/raid/configuration-by-profile", null)
        .route("/client/putMetrics", null)
        .route("/client/analytics/event-disconnect", null)
        .route("/client/location/getLocalloot", null)
        .route("/client/raid/configuration", config::configuration)
        .route("/client/getMetricsConfig", metrics)
        .route("/client/localGame/weather", weather)
        .route("/client/match/local/start", start)
        .route("/client/match/local/end", end::end)
        .route("/client/game/bot/generate", generate_bots)
        .route("/singleplayer/settings/raid/menu", raid_menu)
        .route("/singleplayer/settings/getRaidTime", raid_time)
        .route("/singleplayer/settings/bot/difficulties", difficulties)
        .prefix("/singleplayer/settings/bot/difficulty/", difficulty)
        .prefix("/singleplayer/settings/bot/maxCap", max_cap)
        .prefix("/singleplayer/settings/bot/limit/", limit)
        .route("/singleplayer/bosstypes", boss_types)
        .route("/singleplayer/scav/traitorscavhostile", traitor_chance);
    let router = airdrop::routes(router);
    plugin_settings::routes(router)
}

/// SPT's config values for a raid, for a database without them.
fn default_setting(name: &str) -> Value {
    match name {
        "raidMenuSettings" => json!({"aiAmount": "AsOnline", "aiDifficulty": "AsOnline", "bossEnabled": true,
            "scavWars": false, "taggedAndCursed": false, "enablePve": true, "randomWeather": false, "randomTime": false}),
        "playerScavHostileChancePercent" => json!(15),
        "bosses" => json!(["bossBully", "bossGluhar", "bossKilla", "bossKojaniy", "bossSanitar", "bossTagilla"]),
        "maxBotCap" => json!({"default": 18}),
        "presetBatch" => json!({}),
        "lostOnDeath" => json!({"equipment": {"ArmBand": false, "Compass": false, "Scabbard": false,
            "SecuredContainer": false, "PocketItems": true}, "questItems": true, "specialSlotItems": false}),
        "deathHealthMultiplier" => json!(0.3),
        "survivedSecondsRequirement" => json!(420),
        "maxRaidExperience" => json!(500_000),
        "fenceStandingMin" => json!(-7),
        "fenceStandingMax" => json!(15),
        "scavExtractStandingGain" => json!(0.01),
        "maxFenceStandingGain" => json!(1.0),
        "season" => json!(0),
        "weather" => json!({"periodSeconds": 1800, "periods": 8}),
        _ => Value::Null,
    }
}

/// Where a setting is in the db: SPT's own at its place in SPT's config files (`configs.<file>.<member>`,
/// as `modhost import-spt-db` brings them), ours under `emulator.raid`.
fn setting_path(name: &str) -> String {
    let spt: &[&str] = match name {
        "raidMenuSettings" => &["configs", "inraid", "raidMenuSettings"],
        "playerScavHostileChancePercent" => &["configs", "inraid", "playerScavHostileChancePercent"],
        "bosses" => &["configs", "bot", "bosses"],
        "maxBotCap" => &["configs", "bot", "maxBotCap"],
        "presetBatch" => &["configs", "bot", "presetBatch"],
        "lostOnDeath" => &["configs", "lostondeath"],
        "deathHealthMultiplier" => &["configs", "health", "healthMultipliers", "death"],
        "fenceStandingMin" => &["configs", "trader", "fence", "playerRepMin"],
        "fenceStandingMax" => &["configs", "trader", "fence", "playerRepMax"],
        "scavExtractStandingGain" => &["configs", "inraid", "scavExtractStandingGain"],
        ours => return db::path(&["emulator", "raid", ours]),
    };
    db::path(spt)
}

/// The setting `name` from the db ([`setting_path`]), else SPT's value.
pub(crate) fn setting(name: &str) -> Value {
    db::get::<Value>(&setting_path(name)).unwrap_or_else(|_| default_setting(name))
}

/// A bare answer of the setting `name`, by reference when the db has it, else SPT's value.
fn bare_setting(name: &str) -> Response {
    let path = setting_path(name);
    if db::exists(&path) { Response::db(&path) } else { Response::json(&default_setting(name)) }
}

fn null(_: &Request) -> Result<Response> {
    Ok(envelope::null())
}

fn metrics(_: &Request) -> Result<Response> {
    if db::exists("match.metrics") { Ok(envelope::ok_db("match.metrics")) } else { Ok(envelope::null()) }
}

fn raid_menu(_: &Request) -> Result<Response> {
    Ok(bare_setting("raidMenuSettings"))
}

fn boss_types(_: &Request) -> Result<Response> {
    Ok(bare_setting("bosses"))
}

fn traitor_chance(_: &Request) -> Result<Response> {
    Ok(bare_setting("playerScavHostileChancePercent"))
}

/// A map name as the db keys it: lower case, letters, digits and `_` only.
fn map_name(raw: &str) -> String {
    raw.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(48).collect::<String>().to_ascii_lowercase()
}

/// The difficulty the session's raid configuration chose in its dropdown, unless "as online".
fn chosen_difficulty(req: &Request) -> Result<Option<String>> {
    match profile::session_profile(req)? {
        Some(uid) => config::chosen_difficulty(&uid),
        None => Ok(None),
    }
}

/// `/singleplayer/settings/bot/difficulty/<type>/<level>`: that type's settings at that level (the
/// raid's dropdown wins over the level asked, as in SPT), or `bots.core` for level `core`. Bare.
fn difficulty(req: &Request) -> Result<Response> {
    let mut parts = req.rest().trim_matches('/').split('/');
    let (Some(kind), Some(level), None) = (parts.next(), parts.next(), parts.next()) else {
        return Ok(envelope::error(1, "bot/difficulty/<type>/<difficulty>: expected a type and a difficulty"));
    };
    if level == "core" {
        return Ok(if db::exists("bots.core") { Response::db("bots.core") } else { Response::json(&json!({})) });
    }
    let bot_type = bots::existing_type(kind);
    let level = bots::level_of(&bot_type, &chosen_difficulty(req)?.unwrap_or_else(|| level.to_owned()));
    let path = db::path(&["bots", "types", &bot_type, "difficulty", &level]);
    if !db::exists(&path) {
        return Ok(envelope::error(1, &format!("no difficulty settings for bot type {bot_type}")));
    }
    Ok(Response::db(&path))
}

/// `/singleplayer/settings/bot/difficulties`: every type's levels, `{type: {level: settings}}`, the PMC
/// types under their roles too (`pmcbear`, `pmcusec`). Bare, composed of db references.
fn difficulties(_: &Request) -> Result<Response> {
    let mut answer = Response::empty().with_bytes(b"{".to_vec());
    let mut first = true;
    for kind in db::keys("bots.types").unwrap_or_default().into_iter().take(256) {
        let path = db::path(&["bots", "types", &kind, "difficulty"]);
        if !db::exists(&path) {
            continue;
        }
        let mut names = vec![kind.to_ascii_lowercase()];
        match kind.as_str() {
            "bear" => names.push("pmcbear".to_owned()),
            "usec" => names.push("pmcusec".to_owned()),
            _ => {}
        }
        for name in names {
            let head = format!("{}{}:", if first { "" } else { "," }, serde_json::to_string(&name)?);
            answer = answer.with_bytes(head.into_bytes()).with_db(&path);
            first = false;
        }
    }
    Ok(answer.with_bytes(b"}".to_vec()))
}

/// `/singleplayer/settings/bot/maxCap/<map>`: the map's bot cap, else the default. Bare.
fn max_cap(req: &Request) -> Result<Response> {
    let map = map_name(req.rest().trim_matches('/'));
    let caps = setting("maxBotCap");
    let cap = caps[&map].as_u64().or_else(|| caps["default"].as_u64()).unwrap_or(18);
    Ok(Response::json(&cap))
}

/// `/singleplayer/settings/bot/limit/<type>`: how many of a type to generate at once. Bare.
fn limit(req: &Request) -> Result<Response> {
    let kind = req.rest().trim_matches('/');
    Ok(Response::json(&setting("presetBatch")[kind].as_u64().unwrap_or(10)))
}

#[derive(Deserialize)]
struct RaidTimeRequest {
    #[serde(default, rename = "Side")]
    side: String,
    #[serde(default, rename = "Location")]
    location: String,
}

/// `/singleplayer/settings/getRaidTime`: the map's escape time and the survival requirement (SPT's
/// PMC answer; the scav's random shortening is not done). Bare `RaidChanges`.
fn raid_time(req: &Request) -> Result<Response> {
    let body: RaidTimeRequest = input::parse(req, "getRaidTime", MAX_BODY)?;
    let map = map_name(&body.location);
    let Ok(minutes) = db::get::<Value>(&db::path(&["locations", &map, "base", "EscapeTimeLimit"])) else {
        return Ok(envelope::error(1, &format!("getRaidTime: no location `{map}`")));
    };
    let survive = db::get::<f64>("globals.config.exp.match_end.survived_seconds_requirement")
        .ok()
        .or_else(|| setting("survivedSecondsRequirement").as_f64())
        .unwrap_or(420.0);
    let _ = body.side;
    Ok(Response::json(&json!({
        "dynamicLootPercent": 100, "staticLootPercent": 100, "simulatedRaidStartSeconds": 0,
        "raidTimeMinutes": minutes, "newSurviveTimeSeconds": survive, "originalSurvivalTimeSeconds": survive,
        "exitChanges": [],
    })))
}

/// The civil date and time of a Unix timestamp: `("YYYY-MM-DD", "HH:MM:SS")`.
fn date_time(ts: u64) -> (String, String) {
    let (year, month, day) = clock::civil(ts);
    let secs = ts % 86_400;
    (format!("{year:04}-{month:02}-{day:02}"), format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60))
}

/// `/client/localGame/weather`: `{season, weather: [...]}`, one entry per period from the current one
/// on, each drawn from the configured ranges with the period's start as its seed (so every request in
/// a period sees the same weather).
fn weather(_: &Request) -> Result<Response> {
    let config = setting("weather");
    let period = config["periodSeconds"].as_u64().unwrap_or(1800).clamp(60, 86_400);
    let periods = config["periods"].as_u64().unwrap_or(8).clamp(1, 48);
    let start = now() / period * period;
    let range = |rng: &mut Rng, name: &str, low: f64, high: f64| -> f64 {
        let (lo, hi) = (config[name][0].as_f64().unwrap_or(low), config[name][1].as_f64().unwrap_or(high));
        let v = lo + rng.unit() * (hi - lo).max(0.0);
        (v * 1000.0).round() / 1000.0
    };
    let mut entries = Vec::new();
    for n in 0..periods {
        let at = start + n * period;
        let mut rng = Rng::new(at);
        let (date, time) = date_time(at);
        entries.push(json!({
            "pressure": range(&mut rng, "pressure", 750.0, 770.0),
            "temp": range(&mut rng, "temp", 10.0, 25.0),
            "fog": range(&mut rng, "fog", 0.0, 0.02),
            "rain_intensity": range(&mut rng, "rain_intensity", 0.0, 0.5),
            "rain": range(&mut rng, "rain", 1.0, 3.0).round(),
            "wind_gustiness": range(&mut rng, "wind_gustiness", 0.0, 1.0),
            "wind_direction": 1 + rng.below(8),
            "wind_speed": range(&mut rng, "wind_speed", 0.0, 4.0),
            "cloud": range(&mut rng, "cloud", -1.0, 1.0),
            "time": format!("{date} {time}"),
            "date": date,
            "timestamp": at,
            "sptInRaidTimestamp": at,
        }));
    }
    Ok(envelope::ok(&json!({"season": setting("season").as_u64().unwrap_or(0), "weather": entries})))
}

#[derive(Deserialize)]
struct StartRequest {
    #[serde(default)]
    location: String,
    #[serde(default, rename = "playerSide")]
    player_side: String,
    #[serde(default, rename = "sptSkipLootGeneration")]
    skip_loot: bool,
    #[serde(default)]
    transition: Option<Value>,
}

/// The raid record's store key.
pub(crate) fn record_key(uid: &str) -> String {
    format!("raid.{uid}")
}

/// `/client/match/local/start`: `{serverId, serverSettings, profile: {insuredItems}, locationLoot,
/// transitionType, transition}`. Generates the map's loot and records the raid (and all it issued);
/// a raid still open is replaced (the client starts anew after a crash).
fn start(req: &Request) -> Result<Response> {
    let uid = match player(req, "match/local/start")? {
        Ok(uid) => uid,
        Err(refusal) => return Ok(refusal),
    };
    let body: StartRequest = input::parse(req, "match/local/start", MAX_BODY)?;
    let map = map_name(&body.location);
    let side = match body.player_side.to_ascii_lowercase().as_str() {
        "pmc" => "pmc",
        "savage" | "scav" => "savage",
        other => return Ok(envelope::error(1, &format!("match/local/start: unknown playerSide `{other}`"))),
    };
    let Ok(mut base) = db::get::<Value>(&db::path(&["locations", &map, "base"])) else {
        return Ok(envelope::error(1, &format!("match/local/start: no location `{map}`")));
    };
    if side == "savage" && scav::ensure(&uid)?.is_none() {
        return Ok(envelope::error(1, "match/local/start: the profile does not exist"));
    }
    let seed = scav::seed();
    let mut templates = Templates::default();
    let (spawns, issued) =
        if body.skip_loot { (Vec::new(), Vec::new()) } else { loot::generate(&map, seed, &mut templates) };
    base["UnixDateTime"] = json!(now());
    base["Loot"] = Value::Array(spawns);

    let server_id = format!("{map}.{side} {}", now());
    let mut issued_map = Map::new();
    for item in &issued {
        issued_map.insert(item.id.clone(), json!([item.tpl, item.count]));
    }
    let record = json!({
        "serverId": server_id, "raidId": new_id(), "location": map, "side": side, "started": now(), "seed": seed,
        "issued": issued_map, "issuedCount": issued.len(),
    });
    store::set(&record_key(&uid), &record)?;

    let insured = store::doc_get::<Value>(&format!("profile.{uid}"), "InsuredItems")?.map(|(v, _)| v);
    let insured = insured.filter(Value::is_array).unwrap_or_else(|| json!([]));
    let transition = body.transition.filter(Value::is_object).unwrap_or_else(
        || json!({"transitionType": 0, "transitionRaidId": new_id(), "transitionCount": 0, "visitedLocations": []}),
    );
    let head = format!(r#"{{"err":0,"errmsg":null,"data":{{"serverId":{},"serverSettings":"#, json!(server_id));
    let tail = format!(
        r#","profile":{},"locationLoot":{},"transitionType":0,"transition":{}}}}}"#,
        json!({"insuredItems": insured}),
        serde_json::to_string(&base)?,
        transition
    );
    let answer = Response::empty().with_bytes(head.into_bytes());
    let answer = if db::exists("templates.locationServices") {
        answer.with_db("templates.locationServices")
    } else {
        answer.with_bytes(b"null".to_vec())
    };
    Ok(answer.with_bytes(tail.into_bytes()))
}

/// Adds `items` to the raid's issued record of `uid`. `Ok(false)` when no raid is open; an error when
/// the raid would pass [`MAX_ISSUED`]. One patch at the version read, retried when another came between.
pub(crate) fn record_issued(uid: &str, items: &[Issued]) -> Result<bool> {
    let key = record_key(uid);
    for _ in 0..8 {
        let Some((count, version)) = store::doc_get::<Value>(&key, "issuedCount")? else { return Ok(false) };
        let count = count.as_u64().unwrap_or(0);
        let total = count + items.len() as u64;
        if total > MAX_ISSUED {
            return Err(Error::TooLarge(format!("a raid hands out at most {MAX_ISSUED} items; this one has {count}")));
        }
        let issued: Map<String, Value> = items.iter().map(|i| (i.id.clone(), json!([i.tpl, i.count]))).collect();
        match store::doc_patch_if_version(&key, "", &json!({"issued": issued, "issuedCount": total}), version) {
            Ok(_) => return Ok(true),
            Err(Error::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    Err(Error::Conflict("the raid record kept changing; try again".to_owned()))
}

#[derive(Deserialize)]
struct Condition {
    #[serde(default, rename = "Role")]
    role: String,
    #[serde(default, rename = "Limit")]
    limit: i64,
    #[serde(default, rename = "Difficulty")]
    difficulty: String,
}

#[derive(Deserialize)]
struct GenerateRequest {
    #[serde(default, deserialize_with = "input::at_most::<MAX_CONDITIONS, _, _>")]
    conditions: Vec<Condition>,
}

/// `/client/game/bot/generate`: `{conditions: [{Role, Limit, Difficulty}]}` → the bots, each wave the
/// larger of its `Limit` and the role's preset batch (at most [`MAX_PER_WAVE`], [`MAX_BOTS`] in all).
/// Every item they carry is recorded as issued by the open raid.
fn generate_bots(req: &Request) -> Result<Response> {
    let uid = match player(req, "bot/generate")? {
        Ok(uid) => uid,
        Err(refusal) => return Ok(refusal),
    };
    let body: GenerateRequest = input::parse(req, "bot/generate", MAX_BODY)?;
    let Ok(base) = db::get::<Value>("bots.base") else {
        return Ok(envelope::error(1, "bot/generate: the database has no bots.base"));
    };
    let chosen = chosen_difficulty(req)?;
    let presets = setting("presetBatch");
    let mut rng = Rng::new(scav::seed());
    let mut templates = Templates::default();
    let mut kinds: HashMap<String, Value> = HashMap::new();
    let mut out: Vec<Value> = Vec::new();
    let mut issued = Vec::new();
    for condition in &body.conditions {
        let bot_type = bots::existing_type(&condition.role);
        let kind = kinds
            .entry(bot_type.clone())
            .or_insert_with(|| db::get::<Value>(&db::path(&["bots", "types", &bot_type])).unwrap_or(Value::Null));
        if !kind.is_object() {
            continue;
        }
        let kind = kind.clone();
        let level = bots::level_of(&bot_type, chosen.as_deref().unwrap_or(&condition.difficulty));
        let preset = presets[&condition.role].as_u64().unwrap_or(0);
        let count = preset.max(condition.limit.max(0) as u64).min(MAX_PER_WAVE);
        for _ in 0..count {
            if out.len() >= MAX_BOTS {
                break;
            }
            let role: String = condition.role.chars().filter(|c| c.is_ascii_alphanumeric()).take(48).collect();
            let bot = bots::bot(&base, &kind, &role, &level, &mut rng, &mut templates);
            for item in bot["Inventory"]["items"].as_array().into_iter().flatten() {
                if item.get("parentId").is_some() {
                    issued.push(Issued::of(item));
                }
            }
            out.push(bot);
        }
    }
    if let Err(Error::TooLarge(why)) = record_issued(&uid, &issued) {
        return Ok(envelope::error(1, &format!("bot/generate: {why}")));
    }
    Ok(envelope::ok(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(date_time(0), ("1970-01-01".to_owned(), "00:00:00".to_owned()));
        assert_eq!(date_time(951_782_400 + 3_661), ("2000-02-29".to_owned(), "01:01:01".to_owned()));
    }

    #[test]
    fn map_names_are_reduced_to_keys() {
        assert_eq!(map_name("Factory4_Day"), "factory4_day");
        assert_eq!(map_name("../a.b"), "ab");
    }
}
