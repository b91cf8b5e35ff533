//! The SPT launcher's routes (`/launcher/*`): connect, ping, versions, accounts (register, login, get,
//! change username, password or edition, remove), the profile cards (`profile/info`, `profiles`) and
//! the server-mods routes. Learnt from SPT's `LauncherStaticRouter.cs` (`LauncherCallbacks`,
//! `LauncherController`), `ProfileStaticRouter.cs` (the two `/launcher/profile*` card routes,
//! `ProfileController.GetMiniProfile`) and `LauncherV2StaticRouter.cs` (`LauncherV2Callbacks`,
//! `LauncherV2Controller`: the same accounts under `/launcher/v2/*`, each answer wrapped in
//! `{"Response": …}`).
//!
//! Like SPT's, these answer bare values, not the envelope, and login answers plain text: the account
//! id (the session the game then plays under) or `FAILED`; register and the changes answer `OK` or
//! `FAILED`. Unlike SPT's, login checks the password (SPT's v1 login compares the username only), a
//! removal needs the account's credentials, and a body that is not what the route reads is a 400
//! naming the route.
//!
//! Accounts are `account.rs`'s; removing one (and wiping its character) is done here, since it spans
//! the account and its profile. Read from the db: `templates.profiles` (the editions and the locale
//! keys of their descriptions), `locales.server.en` (those descriptions), `globals.config.exp.level.
//! exp_table` (levels on the profile card) and `configs.core` (SPT's `configs/core.json`: the SPT and
//! compatible EFT versions, the server's name, `allowProfileWipe`); each has a default when absent.
//!
//! The server-mods routes answer what SPT answers with no server mods loaded (`{}` and `[]`): a mod
//! cannot see which other mods the host has loaded, and a profile records none.

pub(crate) mod account;

use crate::input;
use crate::profile::{self, shape};
use crate::progression::{exp_table, experience};
use crate::raid::scav;
use account::Account;
use modhost_sdk::{Error, Request, Response, Result, Router, db, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The backend's address as the client and the launcher will use it: this host, as the request
/// named it.
pub(crate) fn backend_url(req: &Request) -> String {
    format!("http://{}", req.header("host").unwrap_or("127.0.0.1:6969"))
}

/// The largest body a launcher route reads: a username, a password, an edition and a change.
const MAX_BODY: usize = 4 << 10;
/// The most accounts (and profiles without one) the profile list reads: bounded like every list.
const MAX_LISTED: usize = 1000;

/// Adds the launcher's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/launcher/ping", ping)
        .route("/launcher/server/connect", connect)
        .route("/launcher/server/version", server_version)
        .route("/launcher/profile/compatibleTarkovVersion", compatible_version)
        .route("/launcher/server/loadedServerMods", loaded_mods)
        .route("/launcher/server/serverModsUsedByProfile", mods_used)
        .route("/launcher/profile/register", register)
        .route("/launcher/profile/login", login)
        .route("/launcher/profile/get", get)
        .route("/launcher/profile/change/username", change_username)
        .route("/launcher/profile/change/password", change_password)
        .route("/launcher/profile/change/wipe", wipe)
        .route("/launcher/profile/remove", remove)
        .route("/launcher/profile/info", info)
        .route("/launcher/profiles", profiles)
        .route("/launcher/v2/ping", v2_ping)
        .route("/launcher/v2/types", v2_types)
        .route("/launcher/v2/login", v2_login)
        .route("/launcher/v2/register", v2_register)
        .route("/launcher/v2/passwordChange", v2_password_change)
        .route("/launcher/v2/remove", v2_remove)
        .route("/launcher/v2/version", v2_version)
        .route("/launcher/v2/mods", v2_mods)
        .route("/launcher/v2/profiles", v2_profiles)
        .route("/launcher/v2/profile", v2_profile)
}

/// A value of SPT's `configs/core.json`, kept at `configs.core.<name>`.
pub(crate) fn core<T: serde::de::DeserializeOwned>(name: &str, default: T) -> T {
    let path = db::path(&["configs", "core", name]);
    if db::exists(&path) { db::get(&path).unwrap_or(default) } else { default }
}

/// The SPT version this server answers as.
pub(crate) fn spt_version() -> String {
    core("sptVersion", "4.0.0".to_owned())
}

/// The EFT client version it serves.
pub(crate) fn tarkov_version() -> String {
    core("compatibleTarkovVersion", "0.16.0.36625".to_owned())
}

/// A text of the server's own locale (`locales.server.en`), else its key (as SPT's localisation does).
pub(crate) fn server_text(key: &str) -> String {
    let path = db::path(&["locales", "server", "en", key]);
    db::get(&path).unwrap_or_else(|_| key.to_owned())
}

/// Every answer here is a bare JSON value.
fn bare(value: &Value) -> Response {
    Response::json(value)
}

/// `OK` or `FAILED`, as SPT's register and change routes answer.
fn ok_or_failed(ok: bool) -> Response {
    Response::text(if ok { "OK" } else { "FAILED" })
}

#[derive(Deserialize, Default)]
struct Credentials {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    edition: String,
    #[serde(default)]
    change: String,
}

fn credentials(req: &Request, what: &str) -> Result<Credentials> {
    input::parse(req, what, MAX_BODY)
}

/// The account the body's credentials open, if they open one.
fn opened(req: &Request, what: &str) -> Result<Option<Account>> {
    let body = credentials(req, what)?;
    account::login(&body.username, &body.password)
}

fn ping(_: &Request) -> Result<Response> {
    Ok(bare(&json!("pong!")))
}

/// The editions a player may register with, and what each gives (`launcher-*` texts).
fn descriptions() -> Result<Map<String, Value>> {
    let mut out = Map::new();
    for edition in account::editions()? {
        let key: String =
            db::get(&db::path(&["templates", "profiles", &edition, "descriptionLocaleKey"])).unwrap_or_default();
        out.insert(edition, json!(server_text(&key)));
    }
    Ok(out)
}

/// `/launcher/server/connect`: the backend's address, its name and the editions.
fn connect(req: &Request) -> Result<Response> {
    let descriptions = descriptions()?;
    let editions: Vec<&String> = descriptions.keys().collect();
    Ok(bare(&json!({
        "backendUrl": backend_url(req),
        "name": core("serverName", "modhost".to_owned()),
        "editions": editions,
        "profileDescriptions": descriptions,
    })))
}

fn server_version(_: &Request) -> Result<Response> {
    Ok(bare(&json!(spt_version())))
}

fn compatible_version(_: &Request) -> Result<Response> {
    Ok(bare(&json!(tarkov_version())))
}

fn loaded_mods(_: &Request) -> Result<Response> {
    Ok(bare(&json!({})))
}

fn mods_used(_: &Request) -> Result<Response> {
    Ok(bare(&json!([])))
}

/// Checks a registration's inputs and registers; `None` when the username is taken.
fn register_account(body: &Credentials) -> Result<Option<Account>> {
    account::check_username(&body.username).map_err(Error::Invalid)?;
    account::check_password(&body.password).map_err(Error::Invalid)?;
    let edition = account::pick_edition(&body.edition).map_err(Error::Invalid)?;
    account::register(&body.username, &body.password, &edition)
}

/// `/launcher/profile/register`: `{username, password, edition}` → `OK`, or `FAILED` when the name is
/// taken.
fn register(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/profile/register")?;
    Ok(ok_or_failed(register_account(&body)?.is_some()))
}

/// `/launcher/profile/login`: `{username, password}` → the account id as plain text, or `FAILED`.
fn login(req: &Request) -> Result<Response> {
    Ok(match opened(req, "launcher/profile/login")? {
        Some(account) => Response::text(&account.id),
        None => Response::text("FAILED"),
    })
}

/// SPT's account `info` (its `Info`), without the password SPT would echo.
fn account_info(account: &Account) -> Value {
    json!({
        "id": account.id, "scavId": account.scav, "aid": account.aid, "username": account.username,
        "wipe": account.wipe, "edition": account.edition,
    })
}

/// `/launcher/profile/get`: the account's `info`, or `null`.
fn get(req: &Request) -> Result<Response> {
    Ok(match opened(req, "launcher/profile/get")? {
        Some(account) => bare(&account_info(&account)),
        None => bare(&Value::Null),
    })
}

fn change_username(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/profile/change/username")?;
    account::check_username(&body.change).map_err(Error::Invalid)?;
    let Some(mut account) = account::login(&body.username, &body.password)? else { return Ok(ok_or_failed(false)) };
    Ok(ok_or_failed(account::rename(&mut account, &body.change)?))
}

fn change_password(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/profile/change/password")?;
    account::check_password(&body.change).map_err(Error::Invalid)?;
    let Some(mut account) = account::login(&body.username, &body.password)? else { return Ok(ok_or_failed(false)) };
    account::set_password(&mut account, &body.change)?;
    Ok(ok_or_failed(true))
}

/// `/launcher/profile/change/wipe`: `{username, password, edition}`. The character is discarded and
/// the account marked wiped with the edition, so the game asks for a new character (SPT keeps the old
/// one until then; nothing reads it meanwhile). `FAILED` when `allowProfileWipe` is off.
fn wipe(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/profile/change/wipe")?;
    let edition = account::pick_edition(&body.edition).map_err(Error::Invalid)?;
    if !core("allowProfileWipe", true) {
        return Ok(ok_or_failed(false));
    }
    let Some(mut account) = account::login(&body.username, &body.password)? else { return Ok(ok_or_failed(false)) };
    if let Some(uid) = account.profile.take() {
        profile::discard(&uid)?;
    }
    profile::unbind(&account.id)?;
    account.edition = edition;
    account.wipe = true;
    account::save(&account)?;
    Ok(ok_or_failed(true))
}

/// `/launcher/profile/remove`: `{username, password}` → `true` once the account and its character are
/// gone. (SPT removes the session's profile without asking for anything.)
fn remove(req: &Request) -> Result<Response> {
    let removed = remove_account(req, "launcher/profile/remove")?;
    Ok(bare(&json!(removed)))
}

fn remove_account(req: &Request, what: &str) -> Result<bool> {
    let Some(account) = opened(req, what)? else { return Ok(false) };
    // The character and the session's binding go first (`profile/`'s keys), then the account: a
    // removal cut short leaves an account that can still log in and remove itself again.
    if let Some(uid) = &account.profile {
        profile::discard(uid)?;
    }
    profile::unbind(&account.id)?;
    account::remove(&account)?;
    Ok(true)
}

/// SPT's default `spt` member of a profile (`ProfileHelper.GetDefaultSptDataObject`).
fn spt_data() -> Value {
    json!({
        "version": format!("{} ({})", spt_version(), tarkov_version().rsplit('.').next().unwrap_or_default()),
        "mods": [], "receivedGifts": [], "blacklistedItemTpls": [], "freeRepeatableRefreshUsedCount": {},
        "migrations": {}, "cultistRewards": {}, "extraRepeatableQuests": {},
    })
}

/// A profile card (SPT's `MiniProfile`) for an account, a character, or both.
fn mini_profile(account: Option<&Account>, uid: Option<&str>, table: &[i64]) -> Result<Value> {
    let info = match uid {
        Some(uid) => store::doc_get::<Value>(&format!("profile.{uid}"), "Info")?.map(|(info, _)| info),
        None => None,
    };
    let max_level = table.len().saturating_sub(1);
    let username = account.map(|a| a.username.clone()).unwrap_or_default();
    let edition = match account {
        Some(account) => account.edition.clone(),
        None => info.as_ref().and_then(|i| i["GameVersion"].as_str()).unwrap_or_default().to_owned(),
    };
    let profile_id = account.map(|a| a.id.clone()).or(uid.map(str::to_owned)).unwrap_or_default();
    let has_password = account.is_some_and(Account::has_password);
    let Some(info) = info.filter(|i| i["Level"].is_number()) else {
        // No character yet: SPT's defaults.
        return Ok(json!({
            "username": username, "nickname": "unknown", "side": "unknown", "currlvl": 0, "currexp": 0,
            "prevexp": 0, "nextlvl": experience(table, 2), "maxlvl": max_level, "edition": edition,
            "profileId": profile_id, "sptData": spt_data(), "hasPassword": has_password,
        }));
    };
    let level = info["Level"].as_i64().unwrap_or(1);
    Ok(json!({
        "username": username, "nickname": info["Nickname"], "side": info["Side"], "currlvl": level,
        "currexp": info["Experience"].as_i64().unwrap_or(0),
        "prevexp": if level == 0 { 0 } else { experience(table, level) },
        "nextlvl": experience(table, level + 1), "maxlvl": max_level, "edition": edition,
        "profileId": profile_id, "sptData": spt_data(), "hasPassword": has_password,
    }))
}

/// `/launcher/profile/info`: the session's card. The session is the account (as login handed out).
fn info(req: &Request) -> Result<Response> {
    let Some(account) = account::of_session(req.session())? else {
        return Err(Error::NotFound("no account for this session: log in first".to_owned()));
    };
    Ok(bare(&mini_profile(Some(&account), account.profile.as_deref(), &exp_table())?))
}

/// Every card: each account's, then each character no account owns (brought in with `modhost store
/// put`, or made by a session that never logged in), at most [`MAX_LISTED`]. A password-protected
/// account's card leaves out its id, which is its session.
fn all_cards() -> Result<Vec<Value>> {
    let table = exp_table();
    let mut out = Vec::new();
    let mut owned = std::collections::HashSet::new();
    for key in store::list("account.")?.into_iter().take(MAX_LISTED) {
        let Some(account) = account::load(key.trim_start_matches("account."))? else { continue };
        if let Some(uid) = &account.profile {
            owned.insert(uid.clone());
        }
        let mut card = mini_profile(Some(&account), account.profile.as_deref(), &table)?;
        if account.has_password() {
            // The account id is the session the client plays under: a credential, shown to no one
            // but its owner (`info`). An account without a password opens for its username anyway.
            card["profileId"] = json!("");
        }
        out.push(card);
    }
    for key in store::list("profile.")? {
        if out.len() >= MAX_LISTED {
            break;
        }
        let uid = key.trim_start_matches("profile.");
        if !owned.contains(uid) {
            out.push(mini_profile(None, Some(uid), &table)?);
        }
    }
    Ok(out)
}

/// `/launcher/profiles`: every card, a bare list.
fn profiles(_: &Request) -> Result<Response> {
    Ok(bare(&json!(all_cards()?)))
}

/// A v2 answer: `{"Response": …}` (SPT's v2 models have no JSON names, so C#'s spelling stands).
fn v2(value: Value) -> Response {
    bare(&json!({ "Response": value }))
}

/// A v2 answer with every card beside it, as register, password change and remove send.
fn v2_with_cards(value: Value) -> Result<Response> {
    Ok(bare(&json!({ "Response": value, "Profiles": all_cards()? })))
}

fn v2_ping(_: &Request) -> Result<Response> {
    Ok(v2(json!("Pong!")))
}

fn v2_types(_: &Request) -> Result<Response> {
    Ok(v2(Value::Object(descriptions()?)))
}

fn v2_login(req: &Request) -> Result<Response> {
    Ok(v2(json!(opened(req, "launcher/v2/login")?.is_some())))
}

fn v2_register(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/v2/register")?;
    let registered = register_account(&body)?.is_some();
    v2_with_cards(json!(registered))
}

fn v2_password_change(req: &Request) -> Result<Response> {
    let body = credentials(req, "launcher/v2/passwordChange")?;
    account::check_password(&body.change).map_err(Error::Invalid)?;
    let changed = match account::login(&body.username, &body.password)? {
        Some(mut account) => {
            account::set_password(&mut account, &body.change)?;
            true
        }
        None => false,
    };
    v2_with_cards(json!(changed))
}

fn v2_remove(req: &Request) -> Result<Response> {
    let removed = remove_account(req, "launcher/v2/remove")?;
    v2_with_cards(json!(removed))
}

fn v2_version(_: &Request) -> Result<Response> {
    Ok(v2(json!({ "SptVersion": spt_version(), "EftVersion": tarkov_version() })))
}

fn v2_mods(_: &Request) -> Result<Response> {
    Ok(v2(json!({})))
}

fn v2_profiles(_: &Request) -> Result<Response> {
    Ok(v2(json!(all_cards()?)))
}

/// `/launcher/v2/profile`: the session's whole profile file as SPT keeps it (`info`, `characters`,
/// `spt`), the password left out.
fn v2_profile(req: &Request) -> Result<Response> {
    let Some(account) = account::of_session(req.session())? else {
        return Err(Error::NotFound("no account for this session: log in first".to_owned()));
    };
    let (pmc, scav) = match &account.profile {
        Some(uid) => {
            (profile::load(uid)?.map(shape::spt).unwrap_or(Value::Null), scav::for_list(uid)?.unwrap_or(Value::Null))
        }
        None => (Value::Null, Value::Null),
    };
    Ok(v2(json!({
        "info": account_info(&account),
        "characters": { "pmc": pmc, "scav": scav },
        "spt": spt_data(),
    })))
}
