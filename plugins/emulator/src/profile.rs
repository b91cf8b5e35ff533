//! Profiles: create, list, select, and which profile a session plays.
//!
//! Store keys (the emulator's namespace):
//! - `profile.<uid>`: the profile document, in the stored shape (`shape.rs`: items keyed by id, with
//!   indexes); one in SPT's shape (brought in with `modhost store put`) is converted on first touch;
//! - `session.<session id>`: `{"uid": …}`, the profile the session plays;
//! - `nicknames`: `{lower-case nickname: uid}`, shared by every session, so it is updated with
//!   compare-and-set (`set_if_version`) and retried on conflict: two players cannot take one name.

use crate::input;
use crate::inventory::Templates;
use crate::shape::{self, INDEX, SHAPE};
use modhost_sdk::{Error, Request, Response, Result, db, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The rouble's template.
pub(crate) const ROUBLES: &str = "5449016a4bdc2d6f028b456f";
const EQUIPMENT: &str = "55d7217a4bdc2d86028b456d";
const POCKETS: &str = "627a4e6b255f7527fb05a0f6";
const STASH: &str = "5811ce572459770cba1a34ea";
const QUEST_RAID: &str = "5963866286f7747bf429b572";
const QUEST_STASH: &str = "5963866b86f7747bfa6d1e0c";
const SORTING_TABLE: &str = "602543c13fee350cd564d032";

/// A fresh 24-hex-digit id. Randomness comes from WASI (`RandomState` is seeded from it).
pub(crate) fn new_id() -> String {
    use std::hash::BuildHasher;
    let state = std::collections::hash_map::RandomState::new();
    let a = state.hash_one(1u8);
    let b = state.hash_one(2u8);
    format!("{a:016x}{:08x}", b >> 32)
}

/// Is `id` 24 hex digits, the shape of every id the client makes?
pub(crate) fn is_id(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// The profile the request's session plays, if any.
pub(crate) fn session_profile(req: &Request) -> Result<Option<String>> {
    let Some(session) = req.session() else { return Ok(None) };
    bound_profile(session)
}

/// The profile `session` plays, if any.
pub(crate) fn bound_profile(session: &str) -> Result<Option<String>> {
    let bound: Option<Value> = store::get(&format!("session.{session}"))?;
    Ok(bound.and_then(|b| b["uid"].as_str().map(str::to_owned)))
}

fn bind(session: &str, uid: &str) -> Result<()> {
    store::set(&format!("session.{session}"), &json!({ "uid": uid }))?;
    Ok(())
}

/// Loads a profile, in the shape it is stored in. Unreadable is an error, never "absent": a profile is
/// never recreated over one that could not be read.
pub(crate) fn load(uid: &str) -> Result<Option<Value>> {
    store::get(&format!("profile.{uid}"))
}

/// The version of the profile under `key`, converted to the stored shape first if it is not in it
/// yet (one whole read and write, once; [`Error::Conflict`] when another write came between the two);
/// `None` when there is no such profile. When it is already converted this reads one number.
pub(crate) fn open(key: &str, templates: &mut Templates) -> Result<Option<u64>> {
    let Some((marker, version)) = store::doc_get::<Value>(key, &db::path(&[INDEX, "shape"]))? else {
        return Ok(None);
    };
    if marker == SHAPE {
        return Ok(Some(version));
    }
    let Some((whole, version)) = store::get_versioned::<Value>(key)? else { return Ok(None) };
    if shape::is_stored(&whole) {
        // Another request converted it in between.
        return Ok(Some(version));
    }
    store::set_if_version(key, &shape::stored(whole, templates), Some(version)).map(Some)
}

/// The largest body `create` and `select` read: a nickname, a side and two ids.
const MAX_BODY: usize = 4 << 10;
/// SPT's `BackendErrorCodes.NicknameNotValid`, what its client shows for a refused nickname.
const NICKNAME_NOT_VALID: i32 = 256;
/// SPT's bounds on a nickname, in characters (its client refuses to send a longer one).
const NICKNAME_CHARS: std::ops::RangeInclusive<usize> = 3..=15;

/// Why `nickname` cannot be a player's name, if it cannot: it is kept in every profile list and in
/// the index every create reads, so its size is bounded like SPT bounds it.
fn valid_nickname(nickname: &str) -> std::result::Result<(), String> {
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
    let uid = new_id();

    // Claim the nickname in the shared index, retrying when another session wrote it first.
    let lower = nickname.to_lowercase();
    let mut claimed = false;
    for _ in 0..16 {
        let (mut names, version): (BTreeMap<String, String>, Option<u64>) = match store::get_versioned("nicknames")? {
            Some((names, version)) => (names, Some(version)),
            None => (BTreeMap::new(), None),
        };
        if names.contains_key(&lower) {
            return Ok(envelope::error(255, "the nickname is already taken"));
        }
        names.insert(lower.clone(), uid.clone());
        match store::set_if_version("nicknames", &names, version) {
            Ok(_) => {
                claimed = true;
                break;
            }
            Err(Error::Conflict(_)) => continue,
            Err(other) => return Err(other),
        }
    }
    if !claimed {
        return Err(Error::failed("the nickname index kept changing; try again"));
    }
    let profile = shape::stored(new_profile(&uid, &nickname, side, &body.head_id), &mut Templates::default());
    store::set(&format!("profile.{uid}"), &profile)?;
    bind(session, &uid)?;
    // After the writes: a subscriber may call back into the game for this profile.
    let created = json!({ "session": session, "uid": uid, "nickname": nickname, "side": side });
    crate::gifts::announce("profile.created", &created);
    Ok(envelope::ok(&json!({ "uid": uid })))
}

/// `/client/game/profile/list`: the session's profile (binding the only one there is, if the session
/// has none yet).
pub(crate) fn list(req: &Request) -> Result<Response> {
    let mut uid = session_profile(req)?;
    if uid.is_none()
        && let Some(session) = req.session()
    {
        let all = store::list("profile.")?;
        if let [only] = all.as_slice() {
            let only = only.trim_start_matches("profile.").to_owned();
            bind(session, &only)?;
            uid = Some(only);
        }
    }
    let profiles: Vec<Value> = match uid {
        Some(uid) => load(&uid)?.map(shape::spt).into_iter().collect(),
        None => Vec::new(),
    };
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
    bind(session, &body.uid)?;
    crate::gifts::announce("profile.selected", &json!({ "session": session, "uid": body.uid }));
    Ok(envelope::ok(&json!({ "status": "ok", "notifier": {}, "notifierServer": "" })))
}

/// The launcher's list: every profile, in short form, without the envelope.
pub(crate) fn launcher_profiles(_: &Request) -> Result<Response> {
    let mut out = Vec::new();
    for key in store::list("profile.")? {
        if let Some(p) = store::get::<Value>(&key)? {
            out.push(json!({ "uid": p["_id"], "nickname": p["Info"]["Nickname"], "side": p["Info"]["Side"] }));
        }
    }
    Ok(Response::json(&json!({ "ok": true, "profiles": out })))
}

fn new_profile(uid: &str, nickname: &str, side: &str, head: &str) -> Value {
    let (equipment, stash, quest_raid, quest_stash, sorting) = (new_id(), new_id(), new_id(), new_id(), new_id());
    let body_part = |max: u32| json!({ "Health": { "Current": max, "Maximum": max } });
    json!({
        "_id": uid,
        "aid": now(),
        "savage": null,
        "Info": {
            "Nickname": nickname, "LowerNickname": nickname.to_lowercase(), "Side": side, "Voice": "",
            "Level": 1, "Experience": 0, "RegistrationDate": now(), "GameVersion": "standard",
        },
        "Customization": { "Head": head, "Body": "", "Feet": "", "Hands": "", "Voice": "", "DogTag": "" },
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
    })
}
