//! The boot's profile routes (SPT's `ProfileStaticRouter` → `ProfileController`,
//! `CreateProfileService`): create, list and select a character, the nickname checks, the profile
//! status and settings. What a profile is and where it is kept is `profile/`'s.
//!
//! A new PMC is the start character of the account's edition and the chosen side
//! (`templates.profiles.<edition>.<bear|usec>.character`, SPT's `templates/profiles.json`) with fresh
//! item ids, as SPT's `CreateProfileService` makes it; a db without that table gets a built-in start.
//!
//! **Whose profile it is.** Profile ids are not secrets (`/launcher/profiles` lists them), so a
//! session plays only a profile that is its own ([`may_play`]): an account's is the one it names; one a
//! session made without an account is that session's (`_modhost.owner`, written at create); one with
//! no owner that no account names (brought in with `modhost store put`) goes to the first session that
//! takes it, which then owns it. Every route that acts on a profile reads the session's binding
//! (`profile::session_profile`), and the only writes of a binding are here, after that check.

use crate::clock::now;
use crate::events;
use crate::ids::{is_id, new_id};
use crate::input;
use crate::launcher::account;
use crate::profile::shape::{self, INDEX};
use crate::profile::{bind, discard, load, nicknames, session_profile};
use crate::raid::scav;
use crate::templates::{EQUIPMENT, POCKETS, QUEST_RAID, QUEST_STASH, ROUBLES, SORTING_TABLE, STASH, Templates};
use modhost_sdk::{Request, Response, Result, db, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};

/// The largest body `create` and `select` read: a nickname, a side and two ids.
const MAX_BODY: usize = 4 << 10;
/// SPT's `BackendErrorCodes.NicknameNotUnique`: the nickname is someone else's.
const NICKNAME_NOT_UNIQUE: i32 = 225;
/// SPT's `BackendErrorCodes.NicknameNotValid`, what its client shows for a refused nickname.
const NICKNAME_NOT_VALID: i32 = 226;
/// SPT's bounds on a nickname, in characters (its client refuses to send a longer one).
const NICKNAME_CHARS: std::ops::RangeInclusive<usize> = 3..=15;

/// Why `nickname` cannot be a player's name, if it cannot: it is kept in every profile list and in
/// the index every create reads, so its size is bounded like SPT bounds it.
pub(crate) fn valid_nickname(nickname: &str) -> std::result::Result<(), String> {
    let chars = nickname.chars().count();
    if !NICKNAME_CHARS.contains(&chars) {
        let (min, max) = (NICKNAME_CHARS.start(), NICKNAME_CHARS.end());
        return Err(format!("a nickname has {min} to {max} characters; this one has {chars}"));
    }
    if nickname.chars().any(char::is_control) {
        return Err("a nickname cannot hold control characters".to_owned());
    }
    Ok(())
}

#[derive(Deserialize)]
struct Create {
    #[serde(default)]
    nickname: String,
    #[serde(default)]
    side: String,
    #[serde(default, rename = "headId")]
    head_id: String,
    #[serde(default, rename = "voiceId")]
    voice_id: String,
}

/// `/client/game/profile/create`: `{nickname, side, headId}` → `{"uid": …}`; binds the session.
pub(crate) fn create(req: &Request) -> Result<Response> {
    let Some(session) = req.session() else {
        return Ok(envelope::error(1, "creating a profile needs a session"));
    };
    let body: Create = input::parse(req, "profile/create", MAX_BODY)?;
    let nickname = body.nickname.trim().to_owned();
    if let Err(why) = valid_nickname(&nickname) {
        return Ok(envelope::error(NICKNAME_NOT_VALID, &why));
    }
    let side = if body.side.eq_ignore_ascii_case("bear") { "Bear" } else { "Usec" };
    let mut account = account::load(session)?;
    let uid = new_id();

    // Claim the nickname in the shared index (compare-and-set: another session may be claiming too).
    if !nicknames::claim(&nickname, &uid)? {
        return Ok(envelope::error(NICKNAME_NOT_UNIQUE, "The nickname is already in use"));
    }
    let edition = match &account {
        Some(account) => account.edition.clone(),
        None => account::pick_edition("").unwrap_or_default(),
    };
    let start = Start {
        uid: &uid,
        nickname: &nickname,
        side,
        head: &body.head_id,
        voice: &body.voice_id,
        scav: account.as_ref().map(|a| a.scav.as_str()),
    };
    let template = db::path(&["templates", "profiles", &edition, &side.to_lowercase(), "character"]);
    let pmc = match db::exists(&template).then(|| db::get::<Value>(&template)).transpose()? {
        Some(character) => from_template(character, &start),
        None => new_profile(&start),
    };
    // A prestige the previous character obtained goes to this one (`prestige.rs`).
    let pmc = match account.as_ref().and_then(|a| a.profile.as_deref()) {
        Some(previous) => super::prestige::carry(pmc, previous)?,
        None => pmc,
    };
    let mut profile = shape::stored(pmc, &mut Templates::default());
    profile[INDEX][OWNER] = json!(session);
    store::set(&format!("profile.{uid}"), &profile)?;
    bind(session, &uid)?;
    if let Some(account) = account.as_mut() {
        // The account plays the new character; one it played before (a create after a wipe) goes.
        let previous = account.profile.replace(uid.clone());
        account.wipe = false;
        account::save(account)?;
        if let Some(previous) = previous.filter(|p| *p != uid) {
            discard(&previous)?;
        }
    }
    // After the writes: a subscriber may call back into the game for this profile.
    let created = json!({ "session": session, "uid": uid, "nickname": nickname, "side": side });
    events::announce(events::PROFILE_CREATED, &created);
    Ok(envelope::ok(&json!({ "uid": uid })))
}

/// `/client/game/profile/list`: the session's PMC and its scav (`raid/scav.rs`), or `[]` while the account
/// has no character (new or wiped: the client then asks for one). A session that is no account and
/// plays nothing yet is bound to the only profile there is, if there is exactly one (a profile brought
/// in with `modhost store put`, played without the launcher).
pub(crate) fn list(req: &Request) -> Result<Response> {
    let account = account::of_session(req.session())?;
    if account.as_ref().is_some_and(|a| a.wipe || a.profile.is_none()) {
        return Ok(envelope::ok_json("[]"));
    }
    let mut uid = session_profile(req)?;
    if uid.is_none()
        && account.is_none()
        && let Some(session) = req.session()
    {
        let all = store::list("profile.")?;
        if let [only] = all.as_slice() {
            let only = only.trim_start_matches("profile.").to_owned();
            if may_play(session, None, &only)? {
                bind(session, &only)?;
                uid = Some(only);
            }
        }
    }
    let mut profiles: Vec<Value> = Vec::new();
    if let Some(uid) = uid
        && let Some(pmc) = load(&uid)?
    {
        profiles.push(crate::hideout::shown(crate::health::shown(shape::spt(pmc))));
        if let Some(scav) = scav::for_list(&uid)? {
            profiles.push(scav);
        }
    }
    Ok(envelope::ok(&profiles))
}

#[derive(Deserialize)]
struct Select {
    uid: String,
}

/// `/client/game/profile/select`: `{uid}` → binds the session to that profile.
pub(crate) fn select(req: &Request) -> Result<Response> {
    let Some(session) = req.session() else {
        return Ok(envelope::error(1, "selecting a profile needs a session"));
    };
    let body: Select = input::parse(req, "profile/select", MAX_BODY)?;
    if !is_id(&body.uid) || load(&body.uid)?.is_none() {
        return Ok(envelope::error(1, "no such profile"));
    }
    let account = account::load(session)?;
    if !may_play(session, account.as_ref(), &body.uid)? {
        // The same answer as for an unknown uid would hide nothing (`/launcher/profiles` lists them):
        // say why, so a player who picked the wrong one knows.
        return Ok(envelope::error(1, "that profile is another player's: a session selects only its own"));
    }
    bind(session, &body.uid)?;
    events::announce(events::PROFILE_SELECTED, &json!({ "session": session, "uid": body.uid }));
    Ok(envelope::ok(&json!({ "status": "ok" })))
}

/// The member of a profile's `_modhost` index naming the session that made it without an account.
const OWNER: &str = "owner";

/// Whether `session` (whose account, if it is one, is `account`) may play the profile `uid`; an
/// ownerless profile no account names becomes `session`'s here (see the module's header).
fn may_play(session: &str, account: Option<&account::Account>, uid: &str) -> Result<bool> {
    if let Some(account) = account {
        return Ok(account.profile.as_deref() == Some(uid));
    }
    let key = format!("profile.{uid}");
    let path = db::path(&[INDEX, OWNER]);
    for _ in 0..store::UPDATE_ATTEMPTS {
        let Some((owner, version)) = store::doc_get::<Option<String>>(&key, &path)? else { return Ok(false) };
        if let Some(owner) = owner {
            return Ok(owner == session);
        }
        if account::any_names(uid)? {
            return Ok(false);
        }
        // The claim patches the index alone, compare-and-set: of two sessions claiming at once, one
        // owns it and the other reads that owner on its next pass.
        match store::doc_patch_if_version(&key, INDEX, &json!({ OWNER: session }), version) {
            Ok(_) => return Ok(true),
            Err(modhost_sdk::Error::Conflict(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(modhost_sdk::Error::Conflict(format!(
        "profile {uid} changed {} times while being claimed",
        store::UPDATE_ATTEMPTS
    )))
}

/// `/client/game/profile/nickname/reserved`: the name the creation screen proposes, the account's
/// username (SPT's), else `SPTarkov`.
pub(crate) fn reserved_nickname(req: &Request) -> Result<Response> {
    let account = account::of_session(req.session())?;
    let name = account.map(|a| a.username).unwrap_or_else(|| "SPTarkov".to_owned());
    Ok(envelope::ok(&name))
}

#[derive(Deserialize)]
struct Nickname {
    #[serde(default)]
    nickname: String,
}

/// `/client/game/profile/nickname/validate`: `{nickname}` → `{"status": "ok"}`, or SPT's errors for
/// a name that cannot be one (226) or is another player's (225).
pub(crate) fn validate_nickname(req: &Request) -> Result<Response> {
    let body: Nickname = input::parse(req, "profile/nickname/validate", MAX_BODY)?;
    let nickname = body.nickname.trim();
    if nickname.chars().count() < *NICKNAME_CHARS.start() {
        return Ok(envelope::error(NICKNAME_NOT_VALID, "The nickname is too short"));
    }
    if let Err(why) = valid_nickname(nickname) {
        return Ok(envelope::error(NICKNAME_NOT_VALID, &why));
    }
    let own = session_profile(req)?;
    if nicknames::owner(nickname)?.is_some_and(|owner| Some(owner) != own) {
        return Ok(envelope::error(NICKNAME_NOT_UNIQUE, "The nickname is already in use"));
    }
    Ok(envelope::ok(&json!({ "status": "ok" })))
}

/// `/client/profile/status`: the scav and the PMC, both free (no raid under way), as SPT answers.
pub(crate) fn status(req: &Request) -> Result<Response> {
    let account = account::of_session(req.session())?;
    let uid = session_profile(req)?;
    let savage = match &uid {
        Some(uid) => store::doc_get::<Value>(&format!("profile.{uid}"), "savage")?
            .and_then(|(s, _)| s.as_str().map(str::to_owned)),
        None => None,
    };
    let scav = savage.or(account.map(|a| a.scav));
    let free = |id: &str| json!({ "profileid": id, "status": "Free", "sid": "", "ip": "", "port": 0 });
    let profiles: Vec<Value> = scav.iter().chain(uid.iter()).map(|id| free(id)).collect();
    Ok(envelope::ok(&json!({ "maxPveCountExceeded": false, "profiles": profiles })))
}

#[derive(Deserialize)]
struct Settings {
    #[serde(default, rename = "memberCategory")]
    member_category: Option<i64>,
    #[serde(default, rename = "squadInviteRestriction")]
    squad_invite_restriction: Option<bool>,
}

/// `/client/profile/settings`: `{memberCategory?, squadInviteRestriction?}` → into the PMC's `Info`;
/// `true`, or `false` when the session plays no PMC (SPT's `SetChosenProfileIcon`).
pub(crate) fn settings(req: &Request) -> Result<Response> {
    let body: Settings = input::parse(req, "profile/settings", MAX_BODY)?;
    let Some(uid) = session_profile(req)? else { return Ok(envelope::ok(&false)) };
    let key = format!("profile.{uid}");
    if load_info_exists(&key)? {
        let mut patch = serde_json::Map::new();
        if let Some(category) = body.member_category {
            patch.insert("SelectedMemberCategory".to_owned(), json!(category));
        }
        if let Some(restriction) = body.squad_invite_restriction {
            patch.insert("SquadInviteRestriction".to_owned(), json!(restriction));
        }
        if !patch.is_empty() {
            store::doc_patch(&key, "Info", &Value::Object(patch))?;
        }
        return Ok(envelope::ok(&true));
    }
    Ok(envelope::ok(&false))
}

/// Is there a profile under `key` with an `Info` object to change?
fn load_info_exists(key: &str) -> Result<bool> {
    Ok(store::doc_get::<Value>(key, "Info")?.is_some_and(|(info, _)| info.is_object()))
}

/// What a new PMC is made of, beside its start.
struct Start<'a> {
    uid: &'a str,
    nickname: &'a str,
    side: &'a str,
    head: &'a str,
    voice: &'a str,
    /// The account's scav id (SPT's `savage`), when the session is an account.
    scav: Option<&'a str>,
}

/// The most items a start character may hold: the db is trusted, but every list is bounded.
const MAX_START_ITEMS: usize = 10_000;

/// A PMC from an edition's start character: every item gets a fresh id (and every reference to one
/// follows it), and the player's choices go in.
fn from_template(mut pmc: Value, start: &Start) -> Value {
    let mut fresh: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    if let Some(items) = pmc["Inventory"]["items"].as_array_mut() {
        items.truncate(MAX_START_ITEMS);
        for item in items.iter() {
            if let Some(id) = item["_id"].as_str() {
                fresh.entry(id.to_owned()).or_insert_with(new_id);
            }
        }
        for item in items.iter_mut() {
            for member in ["_id", "parentId"] {
                if let Some(id) = item[member].as_str().and_then(|id| fresh.get(id)) {
                    item[member] = json!(id);
                }
            }
        }
    }
    let inventory = &mut pmc["Inventory"];
    for member in
        ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable", "hideoutCustomizationStashId"]
    {
        if let Some(id) = inventory[member].as_str().and_then(|id| fresh.get(id)) {
            inventory[member] = json!(id);
        }
    }
    for member in ["hideoutAreaStashes", "fastPanel"] {
        if let Some(map) = inventory[member].as_object_mut() {
            for value in map.values_mut() {
                if let Some(id) = value.as_str().and_then(|id| fresh.get(id)) {
                    *value = json!(id);
                }
            }
        }
    }
    personalise(pmc, start)
}

/// The player's own members of a new PMC.
fn personalise(mut pmc: Value, start: &Start) -> Value {
    pmc["_id"] = json!(start.uid);
    pmc["aid"] = json!(now());
    pmc["savage"] = start.scav.map_or(Value::Null, |scav| json!(scav));
    let info = &mut pmc["Info"];
    info["Nickname"] = json!(start.nickname);
    info["LowerNickname"] = json!(start.nickname.to_lowercase());
    info["Side"] = json!(start.side);
    info["RegistrationDate"] = json!(now());
    if !start.voice.is_empty() {
        info["Voice"] = json!(start.voice);
        pmc["Customization"]["Voice"] = json!(start.voice);
    }
    if !start.head.is_empty() {
        pmc["Customization"]["Head"] = json!(start.head);
    }
    pmc
}

/// The built-in start, for a db without `templates.profiles`.
fn new_profile(start: &Start) -> Value {
    let (equipment, stash, quest_raid, quest_stash, sorting) = (new_id(), new_id(), new_id(), new_id(), new_id());
    let body_part = |max: u32| json!({ "Health": { "Current": max, "Maximum": max } });
    let pmc = json!({
        "_id": "",
        "aid": 0,
        "savage": null,
        "Info": {
            "Nickname": "", "LowerNickname": "", "Side": "", "Voice": "",
            "Level": 1, "Experience": 0, "RegistrationDate": 0, "GameVersion": "standard",
        },
        "Customization": { "Head": "", "Body": "", "Feet": "", "Hands": "", "Voice": "", "DogTag": "" },
        "Health": {
            "Hydration": { "Current": 100, "Maximum": 100 },
            "Energy": { "Current": 100, "Maximum": 100 },
            "Temperature": { "Current": 36.6, "Maximum": 40 },
            "BodyParts": {
                "Head": body_part(35), "Chest": body_part(85), "Stomach": body_part(70),
                "LeftArm": body_part(60), "RightArm": body_part(60), "LeftLeg": body_part(65), "RightLeg": body_part(65),
            },
        },
        "Inventory": {
            "items": [
                { "_id": equipment, "_tpl": EQUIPMENT },
                { "_id": new_id(), "_tpl": POCKETS, "parentId": equipment, "slotId": "Pockets" },
                { "_id": stash, "_tpl": STASH },
                { "_id": quest_raid, "_tpl": QUEST_RAID },
                { "_id": quest_stash, "_tpl": QUEST_STASH },
                { "_id": sorting, "_tpl": SORTING_TABLE },
                {
                    "_id": new_id(), "_tpl": ROUBLES, "parentId": stash, "slotId": "hideout",
                    "location": { "x": 0, "y": 0, "r": "Horizontal" },
                    "upd": { "StackObjectsCount": 500000 },
                },
            ],
            "equipment": equipment, "stash": stash, "questRaidItems": quest_raid,
            "questStashItems": quest_stash, "sortingTable": sorting,
            "hideoutAreaStashes": {}, "fastPanel": {}, "favoriteItems": [],
        },
        "Skills": { "Common": [], "Mastering": [], "Points": 0 },
        "Stats": { "Eft": {} },
        "Encyclopedia": {},
        "TaskConditionCounters": {},
        "InsuredItems": [],
        "Hideout": { "Areas": [], "Improvements": {}, "Customization": {}, "MannequinPoses": {}, "Production": {}, "Seed": "0" },
        "Bonuses": [],
        "Notes": { "Notes": [] },
        "Quests": [],
        "RagfairInfo": {},
        "TradersInfo": {},
        "WishList": {},
        "Achievements": {},
    });
    personalise(pmc, start)
}
