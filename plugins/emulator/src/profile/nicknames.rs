//! The nicknames players have taken: store key `nicknames`, `{lower-case nickname: uid}`, shared by
//! every session. The per-session lock does not order different sessions, so each change is a
//! compare-and-set (`store::update`): two players cannot take one name, whatever its case.

use modhost_sdk::{Result, store};
use std::collections::BTreeMap;

/// The store key of the index.
const KEY: &str = "nicknames";

type Index = BTreeMap<String, String>;

/// Claims `nickname` for the profile `uid`; `false` when another profile has it.
pub(crate) fn claim(nickname: &str, uid: &str) -> Result<bool> {
    let lower = nickname.to_lowercase();
    let claimed = store::update(KEY, |names: &mut Index| {
        (!names.contains_key(&lower)).then(|| names.insert(lower.clone(), uid.to_owned()))
    })?;
    Ok(claimed.is_some())
}

/// Frees `nickname` if the profile `uid` holds it.
pub(crate) fn release(nickname: &str, uid: &str) -> Result<()> {
    let lower = nickname.to_lowercase();
    store::update(KEY, |names: &mut Index| {
        names.get(&lower).is_some_and(|owner| owner == uid).then(|| names.remove(&lower))
    })?;
    Ok(())
}

/// The profile that holds `nickname`, if one does.
pub(crate) fn owner(nickname: &str) -> Result<Option<String>> {
    let names: Index = store::get(KEY)?.unwrap_or_default();
    Ok(names.get(&nickname.to_lowercase()).cloned())
}
