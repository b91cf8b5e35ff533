//! `/client/game/profile/items/moving`: the session's inventory actions, in order, answered with the
//! SPT envelope (`warnings`, `profileChanges`). A failed or unknown action becomes a warning with its
//! reason, never a silent success, and changes nothing; the rest of the batch still applies.
//!
//! The profile is read with its version and written back once, with `set_if_version`, so a change
//! another request made in between is never overwritten (the batch then answers err 1 and nothing of
//! it applies).

use crate::inventory::{Changes, Templates, items};
use crate::{actions, profile, trading};
use modhost_sdk::{Error, Request, Response, Result, envelope, store};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct Batch {
    #[serde(default)]
    data: Vec<Value>,
}

/// One action: it changes the profile and records what it changed, or answers why it did nothing.
type Action = fn(&mut Value, &Value, &mut Templates, &mut Changes) -> std::result::Result<(), String>;

fn action(name: &str) -> Option<Action> {
    Some(match name {
        "Move" => actions::move_item,
        "Split" => actions::split,
        "Merge" => actions::merge,
        "Transfer" => actions::transfer,
        "Remove" | "Discard" => actions::remove,
        "Fold" => actions::fold,
        "Toggle" => actions::toggle,
        "Tag" => actions::tag,
        "TradingConfirm" => trading::confirm,
        _ => return None,
    })
}

/// `/client/game/profile/items/moving`.
pub(crate) fn moving(req: &Request) -> Result<Response> {
    let Some(uid) = profile::session_profile(req)? else {
        return Ok(envelope::error(1, "this session has no profile"));
    };
    let batch: Batch = req.json().map_err(|e| Error::Invalid(format!("items/moving: {e}")))?;
    let key = format!("profile.{uid}");
    let Some((mut profile, version)) = store::get_versioned::<Value>(&key)? else {
        return Ok(envelope::error(1, "the session's profile does not exist"));
    };
    let mut templates = Templates::default();
    let mut changes = Changes::default();
    let mut warnings = Vec::new();
    for (index, step) in batch.data.iter().enumerate() {
        let result = match step["Action"].as_str() {
            Some(name) => match action(name) {
                Some(apply) => apply(&mut profile, step, &mut templates, &mut changes),
                None => Err(format!("the action `{name}` is not supported yet")),
            },
            None => Err("the action has no `Action`".to_owned()),
        };
        if let Err(reason) = result {
            warnings.push(json!({ "index": index, "errmsg": reason, "code": "0", "data": {} }));
        }
    }
    if !changes.is_empty() {
        match store::set_if_version(&key, &profile, Some(version)) {
            Ok(_) => {}
            Err(Error::Conflict(_)) => {
                return Ok(envelope::error(1, "another request changed this profile; nothing was applied"));
            }
            Err(other) => return Err(other),
        }
    }
    let answer = json!({
        uid.clone(): {
            "_id": uid,
            "experience": profile["Info"]["Experience"],
            "items": changes.to_json(items(&profile)),
            "health": profile["Health"],
            "traderRelations": profile["TradersInfo"],
            "skills": { "Common": [], "Mastering": [], "Points": 0 },
            "production": null,
        }
    });
    Ok(envelope::ok(&json!({ "warnings": warnings, "profileChanges": answer })))
}
