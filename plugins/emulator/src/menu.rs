//! The main menu: weather, locations, hideout tables, builds, friends and mail, customization
//! storage, the server list and group state, achievements, prestige, the survey and the version
//! check; quests (`quests.rs`) and traders (`traders.rs`) have modules of their own.
//!
//! Each route answers in the shape SPT's callback sends (SPT's router and callback are named on each
//! function). Static tables go by db reference, so they never cross into the guest: the hideout's
//! (`hideout.areas`, `hideout.qte`, `hideout.settings`, `hideout.production`,
//! `hideout.customisation`), `templates.achievements`, `templates.prestige`, and `/client/locations`,
//! which is composed from `locations.<map>.base` for every map folder and `locations.base.paths`.
//!
//! What SPT takes from its configs (not database) is read from db paths of ours that keep SPT's
//! config shape: `configs.weather` (`acceleration`, `weather.seasonValues`, `seasonDates`,
//! `overrideSeason`) for the weather; `configs.core` (`compatibleTarkovVersion`, `survey`,
//! `sptFriendNickname`, `features.chatbotFeatures`) for the version check, the survey and the chat
//! bots on the friend list.
//!
//! Per player, read by path (`store::doc_get`), never the whole profile:
//! - the profile (`profile.<uid>`, see `profile.rs`): its `Info` for friends, the secure container
//!   in its equipment for the default builds, `Achievements` (member names only) for the statistic;
//! - `userdata.<uid>` (store key): what SPT's full profile keeps beside the character, in SPT's
//!   spelling: `userbuilds` (`{equipmentBuilds, weaponBuilds, magazineBuilds}`), `dialogues` (by
//!   dialogue id), `friends` (profile ids) and `customisationUnlocks`. Absent means empty.

#[path = "quests.rs"]
pub(crate) mod quests;
#[path = "traders.rs"]
mod traders;

use crate::{input, profile};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// Adds the menu's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    let router = router
        .route("/client/weather", weather)
        .route("/client/locations", locations)
        .route("/client/hideout/areas", |_| Ok(table("hideout.areas", "[]")))
        .route("/client/hideout/qte/list", |_| Ok(table("hideout.qte", "[]")))
        .route("/client/hideout/settings", |_| Ok(table("hideout.settings", "{}")))
        .route("/client/hideout/production/recipes", |_| {
            Ok(table("hideout.production", r#"{"recipes":[],"scavRecipes":[],"cultistRecipes":[]}"#))
        })
        .route("/client/hideout/customization/offer/list", |_| {
            Ok(table("hideout.customisation", r#"{"globals":[],"slots":[]}"#))
        })
        .route("/client/builds/list", builds)
        .route("/client/friend/list", friends)
        .route("/client/friend/request/list/inbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/friend/request/list/outbox", |_| Ok(envelope::ok_json("[]")))
        .route("/client/mail/dialog/list", mail_dialogs)
        .route("/client/chatServer/list", chat_servers)
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
    traders::routes(router)
}

/// The largest body a menu route reads: the client sends `{}` or a few small members.
pub(crate) const MAX_BODY: usize = 4 << 10;

/// A db table by reference, or `fallback` (JSON text) when the db has none.
fn table(path: &str, fallback: &str) -> Response {
    if db::exists(path) { envelope::ok_db(path) } else { envelope::ok_json(fallback) }
}

/// The profile the session plays, or the error envelope the client shows when it has none.
pub(crate) fn player(req: &Request, what: &str) -> Result<std::result::Result<String, Response>> {
    match profile::session_profile(req)? {
        Some(uid) => Ok(Ok(uid)),
        None => Ok(Err(envelope::error(1, &format!("{what} needs a session that plays a profile")))),
    }
}

/// The value at `path` in the store document `key`, as `T`; `None` when the document or the value is
/// absent (or `null`). A value of the wrong kind is an error naming where it was.
pub(crate) fn doc_read<T: DeserializeOwned>(key: &str, path: &[&str]) -> Result<Option<T>> {
    let Some((value, _)) = store::doc_get::<Value>(key, &db::path(path))? else { return Ok(None) };
    if value.is_null() {
        return Ok(None);
    }
    serde_json::from_value(value)
        .map(Some)
        .map_err(|e| modhost_sdk::Error::Invalid(format!("`{}` in {key}: {e}", path.join("."))))
}

/// A member of the player's `userdata.<uid>` document (SPT's full-profile members).
fn userdata<T: DeserializeOwned>(uid: &str, member: &str) -> Result<Option<T>> {
    doc_read(&format!("userdata.{uid}"), &[member])
}

/// The body, when the client sends one, parsed as a JSON object: a route whose SPT request type has
/// members refuses what is not one (400), and one too large (413), before answering.
fn typed_body(req: &Request, what: &str) -> Result<()> {
    if req.body().iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let _: Map<String, Value> = input::parse(req, what, MAX_BODY)?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------------
// Weather (WeatherStaticRouter → WeatherCallbacks.GetWeather → WeatherController.Generate)

/// SPT's `Season` names, by number.
const SEASONS: [&str; 7] = ["SUMMER", "AUTUMN", "WINTER", "SPRING", "AUTUMN_LATE", "SPRING_EARLY", "STORM"];

#[derive(Deserialize, Default)]
struct Weighted {
    #[serde(default)]
    values: Vec<f64>,
    #[serde(default)]
    weights: Vec<f64>,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct MinMax {
    #[serde(default)]
    min: f64,
    #[serde(default)]
    max: f64,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SeasonValues {
    #[serde(default)]
    clouds: Weighted,
    #[serde(default)]
    wind_speed: Weighted,
    #[serde(default)]
    wind_direction: Weighted,
    #[serde(default)]
    wind_gustiness: MinMax,
    #[serde(default)]
    rain: Weighted,
    #[serde(default)]
    rain_intensity: MinMax,
    #[serde(default)]
    fog: Weighted,
    #[serde(default)]
    temp: DayNight,
    #[serde(default)]
    pressure: MinMax,
}

#[derive(Deserialize, Default)]
struct DayNight {
    #[serde(default)]
    day: MinMax,
    #[serde(default)]
    night: MinMax,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SeasonDate {
    season_type: u32,
    start_day: Number,
    start_month: Number,
    end_day: Number,
    end_month: Number,
}

/// SPT's config writes day and month numbers as strings.
#[derive(Deserialize)]
#[serde(untagged)]
enum Number {
    Text(String),
    Int(u32),
}

impl Number {
    fn get(&self) -> u32 {
        match self {
            Number::Text(text) => text.trim().parse().unwrap_or(0),
            Number::Int(n) => *n,
        }
    }
}

/// A source of randomness seeded from WASI (as `profile::new_id`).
struct Dice(u64);

impl Dice {
    fn new() -> Dice {
        use std::hash::BuildHasher;
        Dice(std::collections::hash_map::RandomState::new().hash_one(0u8) | 1)
    }

    /// A number in [0, 1).
    fn unit(&mut self) -> f64 {
        // xorshift64*: plenty for picking weather.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn between(&mut self, range: MinMax, decimals: i32) -> f64 {
        let scale = 10f64.powi(decimals);
        ((range.min + (range.max - range.min) * self.unit()) * scale).round() / scale
    }

    /// One of `table.values` with the odds of its weights (`fallback` for an empty or weightless table).
    fn weighted(&mut self, table: &Weighted, fallback: f64) -> f64 {
        let total: f64 = table.weights.iter().take(table.values.len()).filter(|w| **w > 0.0).sum();
        if total <= 0.0 {
            return table.values.first().copied().unwrap_or(fallback);
        }
        let mut roll = self.unit() * total;
        for (value, weight) in table.values.iter().zip(&table.weights) {
            if *weight <= 0.0 {
                continue;
            }
            if roll < *weight {
                return *value;
            }
            roll -= weight;
        }
        table.values.last().copied().unwrap_or(fallback)
    }
}

/// A civil date (year, month, day) from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// The season on (month, day): SPT's `configs.weather.seasonDates` ranges (inclusive, year ignored),
/// unless `overrideSeason` names one; summer when no range holds the date.
fn season(month: u32, day: u32) -> u32 {
    if let Ok(season) = db::get::<u32>("configs.weather.overrideSeason") {
        return season;
    }
    let dates: Vec<SeasonDate> = db::get("configs.weather.seasonDates").unwrap_or_default();
    let today = (month, day);
    dates
        .iter()
        .find(|d| (d.start_month.get(), d.start_day.get()) <= today && today <= (d.end_month.get(), d.end_day.get()))
        .map_or(0, |d| d.season_type)
}

/// `/client/weather`: the time in Tarkov and a weather drawn from the season's odds, in SPT's
/// `WeatherData` shape. Tarkov's clock runs `acceleration` times real time from 03:00.
fn weather(_: &Request) -> Result<Response> {
    let now = profile::now();
    let acceleration: f64 = db::get("configs.weather.acceleration").unwrap_or(7.0);
    let (year, month, day) = civil((now / 86_400) as i64);
    let date = format!("{year:04}-{month:02}-{day:02}");
    let in_raid = ((3 * 3600) as f64 + now as f64 * acceleration).rem_euclid(86_400.0) as u64;
    let (hour, minute, second) = (in_raid / 3600, in_raid / 60 % 60, in_raid % 60);
    let time = format!("{hour:02}:{minute:02}:{second:02}");
    let season = season(month, day);

    let name = SEASONS.get(season as usize).copied().unwrap_or("default");
    let values: SeasonValues = db::get(&db::path(&["configs", "weather", "weather", "seasonValues", name]))
        .or_else(|_| db::get("configs.weather.weather.seasonValues.default"))
        .unwrap_or_default();
    let mut dice = Dice::new();
    let cloud = dice.weighted(&values.clouds, 0.0);
    // No rain without clouds (SPT's rule).
    let rain = if cloud <= 0.6 { 0.0 } else { dice.weighted(&values.rain, 1.0) };
    let night = hour > 21 || hour <= 5;
    let temp = dice.between(if night { values.temp.night } else { values.temp.day }, 2);
    Ok(envelope::ok(&json!({
        "acceleration": acceleration,
        "time": time,
        "date": date,
        "season": season,
        "weather": {
            "pressure": dice.between(values.pressure, 3),
            "temp": temp,
            "fog": dice.weighted(&values.fog, 0.0),
            "rain_intensity": if rain > 1.0 { dice.between(values.rain_intensity, 3) } else { 0.0 },
            "rain": rain,
            "wind_gustiness": dice.between(values.wind_gustiness, 2),
            "wind_direction": dice.weighted(&values.wind_direction, 1.0) as u32,
            "wind_speed": dice.weighted(&values.wind_speed, 0.0),
            "cloud": cloud,
            "time": format!("{date} {time}"),
            "date": date,
            "timestamp": now,
            "sptInRaidTimestamp": now,
        },
    })))
}

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
        doc_read(&key, &[crate::shape::INDEX, "children", &equipment]).unwrap_or(None).unwrap_or_default();
    let Some((id, _)) = children.iter().find(|(_, slot)| *slot == "SecuredContainer") else { return Ok(None) };
    doc_read::<String>(&key, &["Inventory", "items", id, "_tpl"])
}

// ---------------------------------------------------------------------------------------------------
// Friends, mail and chat (DialogStaticRouter → DialogueCallbacks → DialogueController)

/// The most friends and dialogues a list answers.
const MAX_FRIENDS: usize = 1000;
const MAX_DIALOGUES: usize = 1000;

/// `/client/friend/list`: the enabled chat bots (`configs.core.features.chatbotFeatures`), then the
/// player's friends (`userdata.<uid>.friends`) that still have a profile, as `UserDialogInfo`.
fn friends(req: &Request) -> Result<Response> {
    let mut friends = chat_bots();
    if let Ok(uid) = player(req, "the friend list")? {
        let ids: Vec<String> = userdata(&uid, "friends")?.unwrap_or_default();
        for friend in ids.iter().filter(|id| profile::is_id(id)).take(MAX_FRIENDS) {
            let Some(info) = doc_read::<Value>(&format!("profile.{friend}"), &["Info"])? else { continue };
            let aid = doc_read::<Value>(&format!("profile.{friend}"), &["aid"])?.unwrap_or(json!(0));
            friends.push(json!({"_id": friend, "aid": aid, "Info": dialog_details(&info)}));
        }
    }
    Ok(envelope::ok(&json!({"Friends": friends, "Ignore": [], "InIgnoreList": []})))
}

/// What a chat member shows of a profile's `Info` (SPT's `UserDialogDetails`).
fn dialog_details(info: &Value) -> Value {
    json!({
        "Nickname": info["Nickname"], "Side": info["Side"], "Level": info["Level"],
        "MemberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
        "SelectedMemberCategory": info.get("SelectedMemberCategory").cloned().unwrap_or(json!(0)),
    })
}

/// SPT's chat bots that the config enables: the SPT friend and Commando, as their `GetChatBot` shows
/// them (developer members of level 1).
fn chat_bots() -> Vec<Value> {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    struct Features {
        #[serde(default)]
        ids: Map<String, Value>,
        #[serde(default)]
        enabled_bots: Map<String, Value>,
    }
    const DEVELOPER: u32 = 2;
    let features: Features = db::get("configs.core.features.chatbotFeatures").unwrap_or_default();
    let spt_name: String = db::get("configs.core.sptFriendNickname").unwrap_or_else(|_| "SPT".to_owned());
    let mut bots = Vec::new();
    for (name, id) in &features.ids {
        let Some(id) = id.as_str() else { continue };
        if features.enabled_bots.get(id) != Some(&json!(true)) {
            continue;
        }
        let (nickname, aid) =
            if name == "spt" { (spt_name.clone(), 1_234_566) } else { ("Commando".to_owned(), 1_234_567) };
        bots.push(json!({
            "_id": id, "aid": aid,
            "Info": {"Level": 1, "MemberCategory": DEVELOPER, "SelectedMemberCategory": DEVELOPER,
                     "Nickname": nickname, "Side": "Usec"},
        }));
    }
    bots
}

/// `/client/mail/dialog/list`: one `DialogueInfo` per dialogue in `userdata.<uid>.dialogues`, with its
/// newest message as the preview.
fn mail_dialogs(req: &Request) -> Result<Response> {
    typed_body(req, "mail/dialog/list")?;
    let uid = match player(req, "the mail list")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let dialogues: Map<String, Value> = userdata(&uid, "dialogues")?.unwrap_or_default();
    const NPC_TRADER: u32 = 1;
    let list: Vec<Value> = dialogues
        .iter()
        .take(MAX_DIALOGUES)
        .map(|(id, dialogue)| {
            let preview = dialogue["messages"].as_array().and_then(|m| m.last()).map(|m| {
                json!({"dt": m["dt"], "type": m["type"], "templateId": m["templateId"], "uid": m["uid"],
                       "text": m["text"], "systemData": m["systemData"]})
            });
            json!({
                "_id": id,
                "type": dialogue.get("type").cloned().unwrap_or(json!(NPC_TRADER)),
                "message": preview,
                "new": dialogue.get("new").cloned().unwrap_or(json!(0)),
                "attachmentsNew": dialogue.get("attachmentsNew").cloned().unwrap_or(json!(0)),
                "pinned": dialogue.get("pinned").cloned().unwrap_or(json!(false)),
                "Users": dialogue.get("Users").cloned().unwrap_or(Value::Null),
            })
        })
        .collect();
    Ok(envelope::ok(&list))
}

/// `/client/chatServer/list`: SPT's one local chat server.
fn chat_servers(req: &Request) -> Result<Response> {
    typed_body(req, "chatServer/list")?;
    Ok(envelope::ok(&json!([{
        "_id": profile::new_id(), "RegistrationId": 20, "DateTime": profile::now(), "IsDeveloper": true,
        "Regions": ["EUR"], "VersionId": "bgkidft87ddd", "Ip": "", "Port": 0,
        "Chats": [{"_id": "0", "Members": 0}],
    }])))
}

// ---------------------------------------------------------------------------------------------------
// Customization (CustomizationStaticRouter → CustomizationCallbacks → CustomizationController)

/// `/client/customization/storage`: `templates.customisationStorage` (what every player has), then the
/// player's own unlocks. By reference when the player has none.
fn customization_storage(req: &Request) -> Result<Response> {
    let unlocks: Vec<Value> = match player(req, "the customization storage")? {
        Ok(uid) => userdata(&uid, "customisationUnlocks")?.unwrap_or_default(),
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
    let unlocks: Vec<Value> = userdata(&uid, "customisationUnlocks")?.unwrap_or_default();
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
    fn dates_from_days() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(19_782), (2024, 2, 29));
        assert_eq!(civil(20_454), (2026, 1, 1));
    }

    #[test]
    fn hosts_split_into_address_and_port() {
        assert_eq!(split_host("127.0.0.1:6969"), ("127.0.0.1".to_owned(), 6969));
        assert_eq!(split_host("localhost"), ("localhost".to_owned(), 80));
        assert_eq!(split_host("[::1]:7000"), ("::1".to_owned(), 7000));
        assert_eq!(split_host("::1"), ("::1".to_owned(), 80));
    }

    #[test]
    fn weighted_picks_follow_the_weights() {
        let mut dice = Dice(0x1234_5678);
        let table = Weighted { values: vec![1.0, 2.0], weights: vec![0.0, 5.0] };
        assert!((0..100).all(|_| dice.weighted(&table, 9.0) == 2.0));
        let empty = Weighted::default();
        assert_eq!(dice.weighted(&empty, 9.0), 9.0);
        let range = MinMax { min: 760.0, max: 780.0 };
        assert!((0..100).all(|_| (760.0..=780.0).contains(&dice.between(range, 3))));
    }
}
