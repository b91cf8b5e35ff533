//! The player's profile as the game keeps it, shared by every phase: which profile a session plays,
//! loading and opening the stored document, and per-player data beside it. The routes that create,
//! list and select profiles are the boot's (`boot/profiles.rs`).
//!
//! A session is either an account's (`launcher/account.rs`: login hands its id out as the session) or,
//! for clients and tests that never meet the launcher, any id the client sends.
//!
//! - `shape`: how a profile is stored (items keyed by id, with indexes) and turned into SPT's shape;
//! - `doc`: a profile read and changed by path within one request, written as one patch;
//! - `inventory`: the inventory model every action shares over a [`doc::Doc`];
//! - `nicknames`: the shared index of taken nicknames.
//!
//! Store keys (the emulator's namespace):
//! - `profile.<uid>`: the profile document, in the stored shape (`shape.rs`); one in SPT's shape
//!   (brought in with `modhost store put`) is converted on first touch ([`open`]);
//! - `session.<session id>`: `{"uid": …}`, the profile the session plays;
//! - `nicknames`: `{lower-case nickname: uid}` (`nicknames.rs`);
//! - `userdata.<uid>`: what SPT's full profile keeps beside the character, in SPT's spelling
//!   (`userbuilds`, `dialogues`, `friends`, `customisationUnlocks`; absent means empty), read by
//!   member ([`userdata`]).
//!
//! The other modules' keys: `account.<id>` and `usernames` (`launcher/account.rs`), `scav.<uid>`
//! (`raid/scav.rs`), `raid.<uid>` and `raidconfig.<uid>` (`raid/mod.rs`); all of them in one table in
//! `docs/game.md`.

pub(crate) mod doc;
pub(crate) mod inventory;
pub(crate) mod nicknames;
pub(crate) mod shape;

use crate::templates::Templates;
use modhost_sdk::{Request, Response, Result, db, envelope, store};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shape::{INDEX, SHAPE};

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

/// Makes `session` play the profile `uid`.
pub(crate) fn bind(session: &str, uid: &str) -> Result<()> {
    store::set(&format!("session.{session}"), &json!({ "uid": uid }))?;
    Ok(())
}

/// Forgets which profile `session` plays (a wipe, a removed account).
pub(crate) fn unbind(session: &str) -> Result<()> {
    store::delete(&format!("session.{session}"))?;
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

/// The profile the session plays, or the error envelope the client shows when it has none (`what`
/// names what needed it).
pub(crate) fn player(req: &Request, what: &str) -> Result<std::result::Result<String, Response>> {
    match session_profile(req)? {
        Some(uid) => Ok(Ok(uid)),
        None => Ok(Err(envelope::error(
            1,
            &format!("{what} needs a session that plays a profile; log in and select one first"),
        ))),
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

/// The suits player `uid` bought (`items/customization.rs`), as the customization routes list them.
pub(crate) fn bought_suits(uid: &str) -> Result<Vec<Value>> {
    let found = store::doc_get::<Value>(&format!("profile.{uid}"), shape::UNLOCKS)?;
    Ok(found.and_then(|(list, _)| list.as_array().cloned()).unwrap_or_default())
}

/// A member of the player's `userdata.<uid>` document (SPT's full-profile members).
pub(crate) fn userdata<T: DeserializeOwned>(uid: &str, member: &str) -> Result<Option<T>> {
    doc_read(&format!("userdata.{uid}"), &[member])
}

/// Deletes the profile `uid` and frees its nickname (a wipe, a removed account).
pub(crate) fn discard(uid: &str) -> Result<()> {
    let key = format!("profile.{uid}");
    let nickname = store::doc_get::<Value>(&key, "Info")?
        .and_then(|(info, _)| info["Nickname"].as_str().map(str::to_owned))
        .unwrap_or_default();
    store::delete(&key)?;
    nicknames::release(&nickname, uid)
}
