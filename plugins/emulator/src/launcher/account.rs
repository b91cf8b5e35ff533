//! Accounts: what the launcher registers and logs in with (SPT's `info` part of a profile file).
//!
//! Store keys (the emulator's namespace; see also `profile/mod.rs`):
//! - `account.<id>`: an [`Account`]; `id` (24 hex digits) is what login hands out and what the client
//!   then sends as its session id, so `session.<id>` binds it to its PMC once one is created;
//! - `usernames`: `{lower-case username: id}`, shared by every registration, so it is updated with
//!   compare-and-set (`set_if_version`) and retried on conflict, like `nicknames`: two accounts cannot
//!   take one name, whatever its case.
//!
//! A password is never stored: an account keeps a random salt and the SHA-256 of the salt and the
//! password, iterated ([`ROUNDS`]), compared in constant time. An account registered without a
//! password (SPT allows it) logs in with an empty one.

use crate::ids::{is_id, new_id};
use modhost_sdk::{Result, db, store};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// How many times the salted hash is iterated: enough to make guessing a stolen store slow, little
/// enough (well under a millisecond natively) for every login to pay it.
const ROUNDS: u32 = 2048;
/// The longest username, in characters (the launcher's field; SPT sets none, an index needs one).
const USERNAME_CHARS: usize = 64;
/// The longest password, in characters.
const PASSWORD_CHARS: usize = 128;

/// One account, as stored.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub(crate) struct Account {
    /// The account id, also its session id.
    pub(crate) id: String,
    pub(crate) username: String,
    /// The salted hash; `None` for an account without a password.
    #[serde(default)]
    pub(crate) secret: Option<Secret>,
    /// The edition it plays: a key of `templates.profiles`.
    #[serde(default)]
    pub(crate) edition: String,
    /// SPT's numeric account id (`aid`), shown to other players.
    #[serde(default)]
    pub(crate) aid: u32,
    /// The id its scav gets (SPT's `scavId`), fixed at registration like SPT's.
    #[serde(default)]
    pub(crate) scav: String,
    /// The PMC it plays, once created.
    #[serde(default)]
    pub(crate) profile: Option<String>,
    /// Wiped (or new): the client is asked to create a character.
    #[serde(default)]
    pub(crate) wipe: bool,
}

/// A salted, iterated SHA-256 of a password.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct Secret {
    salt: String,
    sha256: String,
}

impl Secret {
    fn new(password: &str) -> Secret {
        let salt = format!("{}{}", new_id(), new_id());
        let sha256 = digest(&salt, password);
        Secret { salt, sha256 }
    }

    fn matches(&self, password: &str) -> bool {
        let other = digest(&self.salt, password);
        // Constant time: every byte is compared whatever the first difference.
        self.sha256.len() == other.len()
            && self.sha256.bytes().zip(other.bytes()).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
    }
}

fn digest(salt: &str, password: &str) -> String {
    let mut hash = Sha256::new().chain_update(salt.as_bytes()).chain_update(password.as_bytes()).finalize();
    for _ in 1..ROUNDS {
        hash = Sha256::new().chain_update(hash).chain_update(salt.as_bytes()).finalize();
    }
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

impl Account {
    /// Does `password` open this account?
    pub(crate) fn opens(&self, password: &str) -> bool {
        match &self.secret {
            Some(secret) => secret.matches(password),
            None => password.is_empty(),
        }
    }

    pub(crate) fn has_password(&self) -> bool {
        self.secret.is_some()
    }
}

fn key(id: &str) -> String {
    format!("account.{id}")
}

/// The account `id`, if there is one (`None` too for anything that is not an id).
pub(crate) fn load(id: &str) -> Result<Option<Account>> {
    if !is_id(id) {
        return Ok(None);
    }
    store::get(&key(id))
}

pub(crate) fn save(account: &Account) -> Result<()> {
    store::set(&key(&account.id), account)?;
    Ok(())
}

/// Why `username` cannot name an account, if it cannot.
pub(crate) fn check_username(username: &str) -> std::result::Result<(), String> {
    let chars = username.chars().count();
    if chars == 0 || chars > USERNAME_CHARS {
        return Err(format!("a username has 1 to {USERNAME_CHARS} characters; this one has {chars}"));
    }
    if username.chars().any(char::is_control) || username.trim() != username {
        return Err("a username holds no control characters and no leading or trailing spaces".to_owned());
    }
    Ok(())
}

/// Why `password` cannot be a password, if it cannot.
pub(crate) fn check_password(password: &str) -> std::result::Result<(), String> {
    let chars = password.chars().count();
    if chars > PASSWORD_CHARS {
        return Err(format!("a password has at most {PASSWORD_CHARS} characters; this one has {chars}"));
    }
    Ok(())
}

/// The editions a player may register with: the keys of `templates.profiles`, in the db's order.
pub(crate) fn editions() -> Result<Vec<String>> {
    if db::exists("templates.profiles") { db::keys("templates.profiles") } else { Ok(Vec::new()) }
}

/// `edition` if the db has it; the first edition (SPT's "Standard" leads its table) when none is asked
/// for. `Err` names the editions when the one asked for does not exist.
pub(crate) fn pick_edition(edition: &str) -> std::result::Result<String, String> {
    let known = editions().map_err(|e| e.to_string())?;
    if edition.is_empty() {
        return Ok(known.first().cloned().unwrap_or_else(|| "Standard".to_owned()));
    }
    if known.is_empty() || known.iter().any(|e| e == edition) {
        return Ok(edition.to_owned());
    }
    Err(format!("no edition {edition:?}; the server has {}", known.join(", ")))
}

/// The account a username names, if any (compared without case, as the index keeps them).
pub(crate) fn find(username: &str) -> Result<Option<Account>> {
    let names: BTreeMap<String, String> = store::get("usernames")?.unwrap_or_default();
    match names.get(&username.to_lowercase()) {
        Some(id) => load(id),
        None => Ok(None),
    }
}

/// The account `username` and `password` open, if they open one.
pub(crate) fn login(username: &str, password: &str) -> Result<Option<Account>> {
    if check_username(username).is_err() || check_password(password).is_err() {
        return Ok(None);
    }
    Ok(find(username)?.filter(|account| account.opens(password)))
}

/// Changes the username index with `change` (given the current index, answers whether to write it),
/// compare-and-set, so registrations in other sessions are never lost. Answers whether it wrote.
fn update_usernames(mut change: impl FnMut(&mut BTreeMap<String, String>) -> bool) -> Result<bool> {
    Ok(store::update("usernames", |names: &mut BTreeMap<String, String>| change(names).then_some(()))?.is_some())
}

/// Claims `username` for account `id`; `false` when another account has it.
fn claim(username: &str, id: &str) -> Result<bool> {
    let lower = username.to_lowercase();
    update_usernames(|names| match names.get(&lower) {
        Some(_) => false,
        None => {
            names.insert(lower.clone(), id.to_owned());
            true
        }
    })
}

/// Releases `username` if account `id` holds it.
fn release(username: &str, id: &str) -> Result<()> {
    let lower = username.to_lowercase();
    update_usernames(|names| {
        if names.get(&lower).is_some_and(|owner| owner == id) {
            names.remove(&lower);
            true
        } else {
            false
        }
    })?;
    Ok(())
}

/// Registers a new account; `None` when the username is taken. The inputs are checked by the caller.
pub(crate) fn register(username: &str, password: &str, edition: &str) -> Result<Option<Account>> {
    let id = new_id();
    let aid = u32::from_str_radix(&id[..7], 16).unwrap_or(1).max(1);
    let account = Account {
        id: id.clone(),
        username: username.to_owned(),
        secret: (!password.is_empty()).then(|| Secret::new(password)),
        edition: edition.to_owned(),
        aid,
        scav: new_id(),
        profile: None,
        wipe: true,
    };
    // The account first: nobody can reach it before the index names it, and if the name turns out
    // to be taken it is removed again, so the index never names an account that is not there.
    save(&account)?;
    if !claim(username, &id)? {
        store::delete(&key(&id))?;
        return Ok(None);
    }
    Ok(Some(account))
}

/// Renames `account`; `false` when the new name is taken (by another account).
pub(crate) fn rename(account: &mut Account, username: &str) -> Result<bool> {
    // The same name in another case: the index entry stays, only the spelling changes.
    if account.username.to_lowercase() == username.to_lowercase() {
        account.username = username.to_owned();
        save(account)?;
        return Ok(true);
    }
    if !claim(username, &account.id)? {
        return Ok(false);
    }
    let old = std::mem::replace(&mut account.username, username.to_owned());
    save(account)?;
    release(&old, &account.id)?;
    Ok(true)
}

/// Sets a new password (an empty one removes it).
pub(crate) fn set_password(account: &mut Account, password: &str) -> Result<()> {
    account.secret = (!password.is_empty()).then(|| Secret::new(password));
    save(account)
}

/// Removes the account and frees its name (its character is the launcher's to discard first).
pub(crate) fn remove(account: &Account) -> Result<()> {
    store::delete(&key(&account.id))?;
    release(&account.username, &account.id)
}

/// Whether some account plays the character `uid` (one read per account: for the rare claim of a
/// character without an owner, never on a request's usual path).
pub(crate) fn any_names(uid: &str) -> Result<bool> {
    for key in store::list("account.")? {
        if load(key.trim_start_matches("account."))?.is_some_and(|a| a.profile.as_deref() == Some(uid)) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The account of the request's session, if the session is one.
pub(crate) fn of_session(session: Option<&str>) -> Result<Option<Account>> {
    match session {
        Some(session) => load(session),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_opens_with_its_password_only() {
        let secret = Secret::new("hunter2");
        assert!(secret.matches("hunter2"));
        assert!(!secret.matches("hunter3"));
        assert!(!secret.matches(""));
        assert_ne!(secret.sha256, digest("", "hunter2"), "the salt is part of the hash");
        assert_ne!(Secret::new("hunter2").salt, secret.salt, "each secret has its own salt");
    }

    #[test]
    fn an_account_without_a_password_opens_with_an_empty_one() {
        let account = Account::default();
        assert!(account.opens(""));
        assert!(!account.opens("x"));
    }

    #[test]
    fn usernames_are_bounded() {
        assert!(check_username("Runner").is_ok());
        assert!(check_username("").is_err());
        assert!(check_username(" padded").is_err());
        assert!(check_username(&"n".repeat(65)).is_err());
        assert!(check_username("tab\there").is_err());
        assert!(check_password(&"p".repeat(129)).is_err());
    }
}
