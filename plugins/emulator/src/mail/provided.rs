//! `send-mail`, the function other mods call (`mods.call("emulator", "send-mail", …)`): a letter from
//! SPT's system sender into the mailbox of the invocation's session's profile, with attachments by
//! template and count, as SPT's `MailSendService.SendSystemMessageToPlayer` sends a gift.
//!
//! `{text, items: [{tpl, count}], maxStorageSeconds}` → `{"messageId": …}`. Every template must be one
//! the db knows; counts are whole and bounded, made into stacks of the template's `StackMaxSize`. The
//! host holds the session's lock while it runs, and the letter is one compare-and-set write on the
//! profile's version; the client hears of it (`new_message`) and mods hear `mail.sent`.

use super::mailbox::{self, DEFAULT_STORAGE, Letter, SYSTEM_SENDER, kind};
use crate::ids;
use crate::profile;
use crate::profile::doc::Doc;
use crate::templates::Templates;
use modhost_sdk::calls::Invocation;
use modhost_sdk::{Error, Result, db};
use serde::Deserialize;
use serde_json::{Value, json};

/// Templates one letter names, units of one of them, and stacks in all: a gift, not a stash.
const MAX_KINDS: usize = 16;
const MAX_UNITS: u64 = 5_000_000;
const MAX_STACKS: u64 = 256;
/// The longest text, in characters, and the longest storage time (30 days).
const MAX_TEXT: usize = 2_000;
const MAX_STORAGE: u64 = 30 * 24 * 3600;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Attachment {
    tpl: String,
    #[serde(default = "one")]
    count: u64,
}

fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Request {
    #[serde(default)]
    text: String,
    #[serde(default)]
    items: Vec<Attachment>,
    #[serde(default)]
    max_storage_seconds: Option<u64>,
}

/// The stacks `items` make, each checked.
fn stacks(items: &[Attachment], templates: &mut Templates) -> Result<Vec<Value>> {
    if items.len() > MAX_KINDS {
        return Err(Error::Invalid(format!("a letter names at most {MAX_KINDS} templates")));
    }
    let mut out = Vec::new();
    for item in items {
        if !ids::is_id(&item.tpl) || !db::exists(&db::path(&["templates", "items", &item.tpl])) {
            let shown: String = item.tpl.chars().take(64).collect();
            return Err(Error::Invalid(format!("`{shown}` is not an item template")));
        }
        if !(1..=MAX_UNITS).contains(&item.count) {
            return Err(Error::Invalid(format!("count must be 1 to {MAX_UNITS}; it is {}", item.count)));
        }
        let max = templates.stack_max(&item.tpl).unwrap_or(1).max(1);
        let mut left = item.count;
        while left > 0 {
            if out.len() as u64 == MAX_STACKS {
                return Err(Error::Invalid(format!("a letter carries at most {MAX_STACKS} stacks")));
            }
            let units = left.min(max);
            out.push(json!({"_id": ids::new_id(), "_tpl": item.tpl,
                            "upd": {"StackObjectsCount": units, "SpawnedInSession": false}}));
            left -= units;
        }
    }
    Ok(out)
}

/// `send-mail`, for the invocation's session.
pub(super) fn send_mail(call: &Invocation) -> Result<Value> {
    let request: Request = call.json()?;
    if request.text.chars().count() > MAX_TEXT {
        return Err(Error::Invalid(format!("a letter's text has at most {MAX_TEXT} characters")));
    }
    let storage = request.max_storage_seconds.unwrap_or(DEFAULT_STORAGE);
    if !(1..=MAX_STORAGE).contains(&storage) {
        return Err(Error::Invalid(format!("maxStorageSeconds must be 1 to {MAX_STORAGE}")));
    }
    let mut templates = Templates::default();
    let items = stacks(&request.items, &mut templates)?;
    let Some(session) = call.session() else {
        return Err(Error::NotFound("send-mail needs a session (call it for one with call-for-session)".into()));
    };
    let Some(uid) = profile::bound_profile(session)? else {
        return Err(Error::NotFound(format!("session {session} has no profile")));
    };
    let key = format!("profile.{uid}");
    let Some(version) = profile::open(&key, &mut templates)? else {
        return Err(Error::NotFound(format!("the profile of session {session} does not exist")));
    };
    let mut doc = Doc::at(&key, version);
    let letter = Letter {
        from: SYSTEM_SENDER.to_owned(),
        kind: if items.is_empty() { kind::SYSTEM } else { kind::MESSAGE_WITH_ITEMS },
        text: request.text,
        template_id: None,
        items,
        max_storage: storage,
        system_data: None,
    };
    let message = mailbox::send(&mut doc, letter)?;
    doc.commit()?;
    mailbox::announce(Some(session), &uid, &message);
    Ok(json!({ "messageId": message["_id"] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_kinds_are_bounded_before_the_db_is_asked() {
        let many: Vec<Attachment> = (0..=MAX_KINDS).map(|_| Attachment { tpl: "x".into(), count: 1 }).collect();
        assert!(stacks(&many, &mut Templates::default()).is_err());
    }
}
