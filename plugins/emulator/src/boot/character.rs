//! What the menu changes or shows of a character (SPT's `ProfileStaticRouter` → `ProfileCallbacks`,
//! `ProfileController`): nickname and voice change, the player's scav made anew, another player's
//! profile card and the search for players by nickname. Creating, listing and selecting a character
//! are the boot's (`boot/profiles.rs`).
//!
//! - `/client/game/profile/nickname/change` `{nickname}`: the rules `nickname/validate` applies (SPT's
//!   226 `NicknameNotValid` for one too short or not a name, 225 `NicknameNotUnique` for another
//!   player's), then the shared index (`profile/nicknames.rs`) takes the new name, compare-and-set,
//!   before the old is freed; `{status: 0, nicknamechangedate}`, as SPT;
//! - `/client/game/profile/voice/change` `{voice}`: a voice of `templates.customization` into
//!   `Info.Voice` (SPT takes any string; an id the db does not have is refused here); null;
//! - `/client/game/profile/savage/regenerate`: a new scav (`raid/scav.rs`, keeping the old one's level,
//!   experience and skills), `[scav]`; refused while a raid is open, whose end writes the scav;
//! - `/client/profile/view` `{accountId}`: SPT's `GetOtherProfileResponse` of the profile with that
//!   `aid` (the player's own when none has it, as SPT falls back). The equipment shown is what the
//!   character wears (SPT sends the whole inventory, stash included; a stash is not another player's
//!   to see), with the hideout's posters and the favourites, as SPT's;
//! - `/client/game/profile/search` `{nickname}`: chat cards (SPT's `SearchFriendResponse`) of the
//!   players whose nickname contains the text, from the nickname index, never a scan of profiles; at
//!   most [`MAX_FOUND`].

use super::profiles::valid_nickname;
use crate::clock::now;
use crate::ids::is_id;
use crate::input;
use crate::profile::{doc_read, load, nicknames, player, shape};
use crate::raid::{record_key, scav};
use modhost_sdk::{Request, Response, Result, Router, db, envelope, store};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The largest body these routes read: a nickname or an id.
const MAX_BODY: usize = 4 << 10;
/// SPT's `BackendErrorCodes.NicknameNotUnique` and `NicknameNotValid`.
const NICKNAME_NOT_UNIQUE: i32 = 225;
const NICKNAME_NOT_VALID: i32 = 226;
/// The shortest nickname, as `nickname/validate` counts.
const MIN_NICKNAME: usize = 3;
/// The most players a search answers.
const MAX_FOUND: usize = 100;
/// The most profiles a view looks through for an `aid`.
const MAX_PROFILES: usize = 10_000;
/// The most items a view answers (a character's equipment and hideout, with room).
const MAX_VIEW_ITEMS: usize = 5000;

/// Adds the character routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/game/profile/nickname/change", change_nickname)
        .route("/client/game/profile/voice/change", change_voice)
        .route("/client/game/profile/savage/regenerate", regenerate_scav)
        .route("/client/profile/view", view)
        .route("/client/game/profile/search", search)
}

#[derive(Deserialize)]
struct Nickname {
    #[serde(default)]
    nickname: String,
}

/// `/client/game/profile/nickname/change`: see the module's header.
fn change_nickname(req: &Request) -> Result<Response> {
    let uid = match player(req, "a nickname change")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Nickname = input::parse(req, "profile/nickname/change", MAX_BODY)?;
    let nickname = body.nickname.trim().to_owned();
    if nickname.chars().count() < MIN_NICKNAME {
        return Ok(envelope::error(NICKNAME_NOT_VALID, "The nickname is too short"));
    }
    if let Err(why) = valid_nickname(&nickname) {
        return Ok(envelope::error(NICKNAME_NOT_VALID, &why));
    }
    let key = format!("profile.{uid}");
    let Some(old) = doc_read::<String>(&key, &["Info", "Nickname"])? else {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    };
    match nicknames::owner(&nickname)? {
        Some(owner) if owner != uid => {
            return Ok(envelope::error(NICKNAME_NOT_UNIQUE, "The nickname is already in use"));
        }
        // The player's own name in another case: the index already holds it for this profile.
        Some(_) => {}
        None => {
            if !nicknames::claim(&nickname, &uid)? {
                return Ok(envelope::error(NICKNAME_NOT_UNIQUE, "The nickname is already in use"));
            }
            nicknames::release(&old, &uid)?;
        }
    }
    store::doc_patch(&key, "Info", &json!({ "Nickname": nickname, "LowerNickname": nickname.to_lowercase() }))?;
    Ok(envelope::ok(&json!({ "status": 0, "nicknamechangedate": now() })))
}

#[derive(Deserialize)]
struct Voice {
    #[serde(default)]
    voice: String,
}

/// `/client/game/profile/voice/change`: see the module's header.
fn change_voice(req: &Request) -> Result<Response> {
    let uid = match player(req, "a voice change")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: Voice = input::parse(req, "profile/voice/change", MAX_BODY)?;
    if !is_id(&body.voice) || !db::exists(&db::path(&["templates", "customization", &body.voice])) {
        return Ok(envelope::error(1, &format!("the database has no voice {}", body.voice)));
    }
    store::doc_patch(&format!("profile.{uid}"), "Info", &json!({ "Voice": body.voice }))?;
    Ok(envelope::null())
}

/// `/client/game/profile/savage/regenerate`: see the module's header.
fn regenerate_scav(req: &Request) -> Result<Response> {
    input::object_or_empty(req, "profile/savage/regenerate", MAX_BODY)?;
    let uid = match player(req, "a new scav")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    if store::get::<Value>(&record_key(&uid))?.is_some() {
        return Ok(envelope::error(1, "a raid is under way; its end writes the scav"));
    }
    let Some(aid) = doc_read::<Value>(&format!("profile.{uid}"), &["aid"])? else {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    };
    let previous = store::get::<Value>(&scav::key(&uid))?;
    let fresh = scav::generate(&uid, &aid, previous.as_ref())?;
    store::set(&scav::key(&uid), &fresh)?;
    Ok(envelope::ok(&json!([shape::spt(fresh)])))
}

/// A profile's chat card (SPT's `GetChatRoomMemberFromPmcProfile`).
fn card(uid: &str) -> Result<Option<Value>> {
    let key = format!("profile.{uid}");
    let Some(info) = doc_read::<Value>(&key, &["Info"])? else { return Ok(None) };
    let aid = doc_read::<Value>(&key, &["aid"])?.unwrap_or(json!(0));
    Ok(Some(json!({
        "_id": uid, "aid": aid,
        "Info": {
            "Nickname": info["Nickname"], "Side": info["Side"], "Level": info["Level"],
            "MemberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
            "SelectedMemberCategory": info.get("SelectedMemberCategory").cloned().unwrap_or(json!(0)),
        },
    })))
}

/// `/client/game/profile/search`: see the module's header.
fn search(req: &Request) -> Result<Response> {
    if player(req, "a player search")?.is_err() {
        return Ok(envelope::ok_json("[]"));
    }
    let body: Nickname = input::parse(req, "profile/search", MAX_BODY)?;
    let wanted = body.nickname.trim().to_lowercase();
    if wanted.is_empty() {
        return Ok(envelope::ok_json("[]"));
    }
    let names: BTreeMap<String, String> = store::get("nicknames")?.unwrap_or_default();
    let mut found = Vec::new();
    for (_, uid) in names.iter().filter(|(name, _)| name.contains(&wanted)) {
        if found.len() == MAX_FOUND {
            break;
        }
        if let Some(card) = card(uid)? {
            found.push(card);
        }
    }
    Ok(envelope::ok(&found))
}

#[derive(Deserialize)]
struct View {
    #[serde(default, rename = "accountId")]
    account_id: Value,
}

/// The profile whose `aid` is `aid`, looked for among at most [`MAX_PROFILES`].
fn by_aid(aid: &Value) -> Result<Option<String>> {
    let wanted = match aid {
        Value::String(s) => s.parse::<i64>().ok(),
        other => other.as_i64(),
    };
    let Some(wanted) = wanted else { return Ok(None) };
    for key in store::list("profile.")?.iter().take(MAX_PROFILES) {
        let Some((aid, _)) = store::doc_get::<Value>(key, "aid")? else { continue };
        if aid.as_i64() == Some(wanted) {
            return Ok(Some(key.trim_start_matches("profile.").to_owned()));
        }
    }
    Ok(None)
}

/// `items` whose id is in `roots`, each with everything under it (at most [`MAX_VIEW_ITEMS`]).
fn with_children(items: &[Value], roots: &HashSet<String>) -> Vec<Value> {
    let mut children: HashMap<&str, Vec<&Value>> = HashMap::new();
    for item in items {
        if let Some(parent) = item["parentId"].as_str() {
            children.entry(parent).or_default().push(item);
        }
    }
    let mut out: Vec<Value> = Vec::new();
    let mut queue: Vec<&Value> =
        items.iter().filter(|i| i["_id"].as_str().is_some_and(|id| roots.contains(id))).collect();
    while let Some(item) = queue.pop() {
        if out.len() == MAX_VIEW_ITEMS {
            break;
        }
        out.push(item.clone());
        if let Some(under) = item["_id"].as_str().and_then(|id| children.get(id)) {
            queue.extend(under.iter().copied());
        }
    }
    out
}

/// What SPT's `GetOtherProfileResponse` shows of a side's stats.
fn stats(profile: &Value) -> Value {
    json!({ "eft": {
        "totalInGameTime": profile["Stats"]["Eft"]["TotalInGameTime"].as_f64().unwrap_or(0.0),
        "overAllCounters": profile["Stats"]["Eft"].get("OverallCounters").cloned().unwrap_or(json!({"Items": []})),
    }})
}

/// `/client/profile/view`: see the module's header.
fn view(req: &Request) -> Result<Response> {
    let own = match player(req, "a profile view")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let body: View = input::parse(req, "profile/view", MAX_BODY)?;
    let uid = by_aid(&body.account_id)?.unwrap_or(own);
    let Some(stored) = load(&uid)? else { return Ok(envelope::error(1, "no such profile")) };
    let pmc = shape::spt(stored);
    let scav = scav::for_list(&uid)?.unwrap_or(Value::Null);
    let items = pmc["Inventory"]["items"].as_array().cloned().unwrap_or_default();
    let inventory = &pmc["Inventory"];
    let mut hideout: HashSet<String> =
        inventory["hideoutAreaStashes"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    if let Some(stash) = inventory["hideoutCustomizationStashId"].as_str() {
        hideout.insert(stash.to_owned());
    }
    let equipment_id = inventory["equipment"].as_str().unwrap_or_default().to_owned();
    let equipment = with_children(&items, &HashSet::from([equipment_id.clone()]));
    let favourites: HashSet<String> = inventory["favoriteItems"]
        .as_array()
        .map(|l| l.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    let info = &pmc["Info"];
    let c = &pmc["Customization"];
    let answer = json!({
        "id": pmc["_id"], "aid": pmc["aid"],
        "info": {
            "nickname": info["Nickname"], "side": info["Side"], "experience": info["Experience"],
            "memberCategory": info.get("MemberCategory").cloned().unwrap_or(json!(0)),
            "bannedState": info.get("BannedState").cloned().unwrap_or(json!(false)),
            "bannedUntil": info.get("BannedUntil").cloned().unwrap_or(json!(0)),
            "registrationDate": info["RegistrationDate"],
        },
        "customization": { "head": c["Head"], "body": c["Body"], "feet": c["Feet"], "hands": c["Hands"], "dogtag": c["DogTag"] },
        "skills": pmc["Skills"],
        "equipment": { "Id": equipment_id, "Items": equipment },
        "achievements": pmc.get("Achievements").cloned().unwrap_or(json!({})),
        "favoriteItems": with_children(&items, &favourites),
        "pmcStats": stats(&pmc),
        "scavStats": stats(&scav),
        "hideout": pmc["Hideout"],
        "customizationStash": inventory["hideoutCustomizationStashId"],
        "hideoutAreaStashes": inventory.get("hideoutAreaStashes").cloned().unwrap_or(Value::Object(Map::new())),
        "items": with_children(&items, &hideout),
    });
    Ok(envelope::ok(&answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subtree_is_its_root_and_everything_under_it() {
        let items = vec![
            json!({"_id": "a"}),
            json!({"_id": "b", "parentId": "a"}),
            json!({"_id": "c", "parentId": "b"}),
            json!({"_id": "d", "parentId": "x"}),
        ];
        let mut ids: Vec<String> = with_children(&items, &HashSet::from(["a".to_owned()]))
            .iter()
            .map(|i| i["_id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        assert_eq!(ids, ["a", "b", "c"]);
    }
}
