//! The client's boot, from the `/singleplayer/*` settings its plugins read to the profile's status and
//! settings: everything between the launcher starting the game and the main menu.
//!
//! Learnt from SPT's `GameStaticRouter.cs` (`GameCallbacks`, `GameController`: config, mode, start,
//! validate, keepalive, logout, the in-game version label; `/client/checkVersion` is the menu's), `DataStaticRouter.cs` and
//! `DataDynamicRouter.cs` (`DataCallbacks`: settings, globals, items, customization, account
//! customization, languages, menu and global locales), `TraderStaticRouter.cs` (`TraderCallbacks`:
//! trader settings, modded traders), `BundleStaticRouter.cs`, `ClientLogStaticRouter.cs`
//! (`ClientLogCallbacks`: log, release, BSG logging) and `ProfileStaticRouter.cs` /
//! `NotifierStaticRouter.cs` (`ProfileCallbacks`, `ProfileController`: list, create, select,
//! nickname reserved and validate, status, settings; the handlers are `profiles.rs`'s).
//!
//! The `/singleplayer/*` routes answer bare values, the `/client/*` ones the envelope, as SPT's do.
//! Tables answer by db reference: `templates.items`, `templates.customization`,
//! `templates.character`, `globals`, `settings`, `locales.global.<lang>`, `locales.menu.<lang>`,
//! `locales.languages`, `traders.<id>.base` (all of them, in id order, one answer). From `configs.core`
//! and `configs.trader` (SPT's `configs/core.json` and `configs/trader.json`, kept under those paths;
//! defaults when absent): the versions, `bsgLogging`, `release` and `moddedTraders`.
//!
//! Left as SPT leaves them with no mods: `/singleplayer/bundles` lists no bundles (a mod here cannot
//! ship asset bundles to the client).

pub(crate) mod character;
pub(crate) mod files;
pub(crate) mod prestige;
mod profiles;

use crate::launcher::{backend_url, core, server_text, spt_version};
use crate::{clock, input, profile, tables};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, log, store};
use serde::Deserialize;
use serde_json::{Value, json};

/// The largest body `/singleplayer/log` reads: one line of a client's log, with room.
const MAX_LOG_BODY: usize = 16 << 10;
/// The most characters of a client's log line the server's log keeps.
const MAX_LOG_CHARS: usize = 2000;
/// The most traders `traderSettings` answers: bounded like every list.
const MAX_TRADERS: usize = 256;

/// Adds the boot's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    let router = router
        .route("/singleplayer/settings/version", version_label)
        .route("/singleplayer/bundles", bundles)
        .route("/singleplayer/moddedTraders", modded_traders)
        .route("/singleplayer/enableBSGlogging", bsg_logging)
        .route("/singleplayer/release", release)
        .route("/singleplayer/log", client_log)
        .route("/client/game/mode", game_mode)
        .route("/client/game/start", game_start)
        .route("/client/game/version/validate", null_data)
        .route("/client/game/config", game_config)
        .route("/client/game/keepalive", keepalive)
        .route("/client/game/logout", logout)
        .route("/client/languages", languages)
        .prefix("/client/menu/locale/", menu_locale)
        .prefix("/client/locale/", locale)
        .route("/client/items", items)
        .route("/client/customization", customization)
        .route("/client/account/customization", account_customization)
        .route("/client/globals", globals)
        .route("/client/settings", settings)
        .route("/client/trading/api/traderSettings", trader_settings)
        .route("/client/game/profile/list", profiles::list)
        .route("/client/game/profile/create", profiles::create)
        .route("/client/game/profile/select", profiles::select)
        .route("/client/game/profile/nickname/reserved", profiles::reserved_nickname)
        .route("/client/game/profile/nickname/validate", profiles::validate_nickname)
        .route("/client/profile/status", profiles::status)
        .route("/client/profile/settings", profiles::settings);
    let router = character::routes(router);
    let router = prestige::routes(router);
    files::routes(router)
}

fn null_data(_: &Request) -> Result<Response> {
    Ok(envelope::null())
}

/// `/singleplayer/settings/version`: the label the client draws on screen (SPT's
/// `Watermark.GetInGameVersionLabel`).
fn version_label(_: &Request) -> Result<Response> {
    let project: String = core("projectName", "SPT".to_owned());
    Ok(Response::json(&json!({ "Version": format!("{project} {}", spt_version()) })))
}

fn bundles(_: &Request) -> Result<Response> {
    Ok(Response::json(&json!([])))
}

fn modded_traders(_: &Request) -> Result<Response> {
    Ok(tables::bare("configs.trader.moddedTraders", json!({ "clothingService": [] })))
}

fn bsg_logging(_: &Request) -> Result<Response> {
    Ok(tables::bare("configs.core.bsgLogging", json!({ "verbosity": 6, "sendToServer": false })))
}

/// `/singleplayer/release`: the release settings and the texts the client shows about them.
fn release(_: &Request) -> Result<Response> {
    let mut data: Value = core("release", json!({ "betaDisclaimerTimeoutDelay": 30 }));
    if !data.is_object() {
        data = json!({});
    }
    for (member, key) in [
        ("betaDisclaimerText", "release-beta-disclaimer-mods-enabled"),
        ("betaDisclaimerAcceptText", "release-beta-disclaimer-accept"),
        ("serverModsLoadedText", "release-server-mods-loaded"),
        ("serverModsLoadedDebugText", "release-server-mods-debug-message"),
        ("clientModsLoadedText", "release-plugins-loaded"),
        ("clientModsLoadedDebugText", "release-plugins-loaded-debug-message"),
        ("illegalPluginsLoadedText", "release-illegal-plugins-loaded"),
        ("illegalPluginsExceptionText", "release-illegal-plugins-exception"),
        ("releaseSummaryText", "release-summary"),
    ] {
        data[member] = json!(server_text(key));
    }
    // A release build that takes mods (SPT's `ProgramStatics`): not beta, moddable, nothing modded.
    data["isBeta"] = json!(false);
    data["isModdable"] = json!(true);
    data["isModded"] = json!(false);
    Ok(Response::json(&data))
}

/// `/singleplayer/log`: a client plugin's log line, into the server's log (cut to a bounded length).
fn client_log(req: &Request) -> Result<Response> {
    // An object (SPT's `ClientLogRequest`: `Source`, `Level`, `Message`, colours), whatever kinds its
    // members have: a log line is never refused for a level given as a name rather than a number.
    let line: serde_json::Map<String, Value> = input::parse(req, "singleplayer/log", MAX_LOG_BODY)?;
    let member = |name: &str| line.get(name).cloned().unwrap_or(Value::Null);
    let text = |v: &Value| match v {
        Value::String(s) => s.chars().take(MAX_LOG_CHARS).collect(),
        Value::Null => String::new(),
        other => other.to_string().chars().take(MAX_LOG_CHARS).collect(),
    };
    let message = format!("client [{}]: {}", text(&member("Source")), text(&member("Message")));
    // SPT's levels: 0 error, 1 warn, 2 succ, 3 info, 4 custom, 5 debug (or their names).
    match text(&member("Level")).to_ascii_lowercase().as_str() {
        "0" | "error" => log::error(&message),
        "1" | "warn" => log::warn(&message),
        "5" | "debug" => log::debug(&message),
        _ => log::info(&message),
    }
    Ok(envelope::null())
}

/// `/client/game/mode`: single player, on this backend.
fn game_mode(req: &Request) -> Result<Response> {
    Ok(envelope::ok(&json!({ "gameMode": "pve", "backendUrl": backend_url(req) })))
}

fn game_start(_: &Request) -> Result<Response> {
    Ok(envelope::ok(&json!({ "utc_time": clock::now() })))
}

/// The time the PMC has played (SPT reads the `LifeTime` `Pmc` overall counter).
fn time_in_game(uid: &str) -> Result<f64> {
    #[derive(Deserialize)]
    struct Counter {
        #[serde(default, rename = "Key")]
        key: Vec<String>,
        #[serde(default, rename = "Value")]
        value: f64,
    }
    let path = db::path(&["Stats", "Eft", "OverallCounters", "Items"]);
    let counters: Vec<Counter> = match store::doc_get::<Value>(&format!("profile.{uid}"), &path)? {
        Some((items, _)) => serde_json::from_value(items).unwrap_or_default(),
        None => Vec::new(),
    };
    let lifetime =
        |c: &&Counter| c.key.iter().any(|k| k.contains("LifeTime")) && c.key.iter().any(|k| k.contains("Pmc"));
    Ok(counters.iter().find(lifetime).map_or(0.0, |c| c.value))
}

/// `/client/game/config`: every member SPT's `GameController.GetGameConfig` sends. The active
/// profile is the session's PMC (in SPT the session id is the PMC's id; here it is the account's).
fn game_config(req: &Request) -> Result<Response> {
    let host = backend_url(req);
    let uid = profile::session_profile(req)?;
    let (aid, total) = match &uid {
        Some(uid) => {
            let aid = store::doc_get::<Value>(&format!("profile.{uid}"), "aid")?.map_or(Value::Null, |(aid, _)| aid);
            (aid, time_in_game(uid)?)
        }
        None => (Value::Null, 0.0),
    };
    let languages: Value = db::get("locales.languages").unwrap_or_else(|_| json!({ "en": "English" }));
    let mut config = json!({
        "languages": languages,
        "ndaFree": false,
        "reportAvailable": false,
        "twitchEventMember": false,
        "lang": "en",
        "aid": aid,
        "taxonomy": 6,
        "activeProfileId": uid,
        "backend": { "Lobby": host, "Trading": host, "Messaging": host, "Main": host, "RagFair": host },
        "useProtobuf": false,
        "utc_time": clock::now(),
        "totalInGame": total,
        "sessionMode": "pve",
        "purchasedGames": { "eft": true, "arena": false },
        "isGameSynced": true,
    });
    // SPT leaves out what is null (no profile yet).
    if let Some(members) = config.as_object_mut() {
        members.retain(|_, v| !v.is_null());
    }
    Ok(envelope::ok(&config))
}

fn keepalive(_: &Request) -> Result<Response> {
    Ok(envelope::ok(&json!({ "msg": "OK", "utc_time": clock::now() })))
}

/// `/client/game/logout`: SPT saves the profile here; every change here is already stored.
fn logout(_: &Request) -> Result<Response> {
    Ok(envelope::ok(&json!({ "status": "ok" })))
}

fn languages(_: &Request) -> Result<Response> {
    Ok(tables::table("locales.languages", r#"{"en":"English"}"#))
}

/// The language in a locale route's path, reduced to letters, digits and `-` so it can never address
/// anything but a locale.
fn language(req: &Request) -> String {
    req.rest().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(16).collect()
}

/// The table of `kind` (`global` or `menu`) for the request's language, else English, else `{}`.
fn locale_of(req: &Request, kind: &str) -> Response {
    let lang = language(req);
    for candidate in [lang.as_str(), "en"] {
        let path = db::path(&["locales", kind, candidate]);
        if !candidate.is_empty() && db::exists(&path) {
            return envelope::ok_db(&path);
        }
    }
    envelope::ok_json("{}")
}

/// `/client/menu/locale/<lang>`: the menu's strings.
fn menu_locale(req: &Request) -> Result<Response> {
    Ok(locale_of(req, "menu"))
}

/// `/client/locale/<lang>`: the game's strings.
fn locale(req: &Request) -> Result<Response> {
    Ok(locale_of(req, "global"))
}

fn items(_: &Request) -> Result<Response> {
    Ok(tables::table("templates.items", "{}"))
}

fn customization(_: &Request) -> Result<Response> {
    Ok(tables::table("templates.customization", "{}"))
}

fn account_customization(_: &Request) -> Result<Response> {
    Ok(tables::table("templates.character", "[]"))
}

fn globals(_: &Request) -> Result<Response> {
    Ok(tables::table("globals", "{}"))
}

fn settings(_: &Request) -> Result<Response> {
    Ok(tables::table("settings", "{}"))
}

/// `/client/trading/api/traderSettings`: every trader's base, in id order, spliced from the db.
fn trader_settings(_: &Request) -> Result<Response> {
    let mut ids = if db::exists("traders") { db::keys("traders")? } else { Vec::new() };
    ids.sort();
    let mut answer = Response::empty().with_bytes(br#"{"err":0,"errmsg":null,"data":["#.to_vec());
    let mut first = true;
    for id in ids.iter().take(MAX_TRADERS) {
        let base = db::path(&["traders", id, "base"]);
        if !db::exists(&base) {
            continue;
        }
        if !first {
            answer = answer.with_bytes(b",".to_vec());
        }
        first = false;
        answer = answer.with_db(&base);
    }
    Ok(answer.with_bytes(b"]}".to_vec()))
}
