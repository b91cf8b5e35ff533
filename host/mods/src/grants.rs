//! Capability grants: what a mod may change beyond its own store namespace.
//!
//! Every mod may read the whole db and read and write its own store namespace. Anything else must be
//! named in its `mod.toml`, where the player sees it (`modhost mods`) before running the mod:
//!
//! ```toml
//! [grants]
//! db_write = ["templates.items", "globals.config"]  # db paths it may patch, and everything under them
//! store_read = ["emulator"]                          # other mods' namespaces it may read
//! store_write = ["emulator"]                         # … and write (implies read)
//! hook = ["/client/game/", "/client/items"]           # routes of other mods it may hook (a path, or a prefix ending in `/`)
//! call = ["emulator"]                                 # mods whose functions it may call
//! push = "broadcast"                                  # push to any session ("any"), or to all at once too
//! timers = "any"                                      # timers naming any session, not only the caller's
//! emit = ["profile.created", "items."]                # topics it may emit beyond its own (a topic, or a prefix ending in `.` or `/`)
//! ```
//!
//! Without `push`, a mod pushes only to the session of the request (or timer) it is handling. Without
//! `timers`, a one-shot timer names only the session of the call that schedules it (none, for a call
//! without one): its firing runs under that session's lock and with that session's rights, so naming
//! another player's session is as much a grant as pushing to it.
//!
//! Topics have owners: a mod's own topics start with its id and a `.` or `/` (`welcome-pack.given`),
//! and any other topic is emitted under an `emit` grant (the game's `profile.created` is the game's
//! grant). Otherwise any mod could speak for the game, and a subscriber that gives something away on
//! `profile.created` would give it to whoever asked (issue 29, item 6). A topic another loaded mod's
//! `emit` grant names is that mod's even when it starts with a third mod's id (`Peers` checks that,
//! as only it knows the other mods).
//!
//! Hooks and calls are grants because of what they reach: a hook reads requests that carry a player's
//! session, and a call runs another mod's code with the caller's data.
//!
//! A call outside its grants is refused with `denied` and a message naming the grant it lacks. Prefixes
//! are whole path segments: `templates.items` covers `templates.items.x`, not `templates.itemsx`.

use crate::ModId;
use modhost_db::{DbError, join_path, parse_path};
use serde::Deserialize;
use std::collections::BTreeSet;

/// The `[grants]` table of `mod.toml`, as written.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GrantsToml {
    /// db paths the mod may patch (`""` is the whole db).
    #[serde(default)]
    pub db_write: Vec<String>,
    /// Other mods' store namespaces the mod may read.
    #[serde(default)]
    pub store_read: Vec<String>,
    /// Other mods' store namespaces the mod may read and write.
    #[serde(default)]
    pub store_write: Vec<String>,
    /// Route paths the mod may hook: a path, or a prefix ending in `/` covering every path under it.
    #[serde(default)]
    pub hook: Vec<String>,
    /// Mods whose functions the mod may call.
    #[serde(default)]
    pub call: Vec<String>,
    /// Whom the mod may push to beyond the session it is handling.
    #[serde(default)]
    pub push: Option<PushGrant>,
    /// Which sessions the mod's one-shot timers may name beyond the one it is handling.
    #[serde(default)]
    pub timers: Option<TimerGrant>,
    /// Topics the mod may emit beyond its own: a topic, or a prefix ending in `.` or `/`.
    #[serde(default)]
    pub emit: Vec<String>,
}

/// `push` under `[grants]`: whom a mod may push notifier messages to beyond the session it handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PushGrant {
    /// Any one session.
    Any,
    /// Any session, and every connected session at once.
    Broadcast,
}

/// `timers` under `[grants]`: which sessions a mod's one-shot timers may name beyond the session of
/// the call that schedules them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerGrant {
    /// Any one session.
    Any,
}

/// A mod's grants, checked. Deserializing one checks it (`mod.toml`'s `[grants]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "GrantsToml")]
pub struct Grants {
    db_write: Vec<Vec<String>>,
    store_read: BTreeSet<ModId>,
    store_write: BTreeSet<ModId>,
    hook: Vec<String>,
    call: BTreeSet<ModId>,
    push: Option<PushGrant>,
    timers: Option<TimerGrant>,
    emit: Vec<String>,
}

/// A `[grants]` table that names something that cannot be granted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantsError {
    /// A `db_write` entry is not a db path.
    #[error("[grants] db_write: {0}")]
    DbPath(DbError),
    /// A store namespace is not a mod id.
    #[error("[grants]: {0} (a store namespace)")]
    Namespace(crate::InvalidModId),
    /// A `call` entry is not a mod id.
    #[error("[grants] call: {0}")]
    Callee(crate::InvalidModId),
    /// A `hook` entry is not a path.
    #[error("[grants] hook: `{0}` is not a route path (it must start with `/`)")]
    HookPath(String),
    /// An `emit` entry is not a topic.
    #[error("[grants] emit: {0}")]
    Topic(crate::DeclareError),
}

/// A call outside the mod's grants: the message names the grant it lacks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// Patching the db at `path` (`""`: the root) needs a `db_write` grant covering it.
    #[error("writing {} needs a grant: add it to db_write under [grants] in mod.toml", shown_path(path))]
    DbWrite {
        /// The path the mod tried to patch.
        path: String,
    },
    /// Reading or writing another mod's store namespace needs `store_read` or `store_write`.
    #[error(
        "{} store namespace `{namespace}` needs a grant: add it to {} under [grants] in mod.toml",
        if *write { "writing" } else { "reading" },
        if *write { "store_write" } else { "store_read or store_write" }
    )]
    Store {
        /// The namespace the mod named.
        namespace: String,
        /// Whether it tried to write.
        write: bool,
    },
    /// The path is not a db path at all.
    #[error(transparent)]
    BadPath(DbError),
    /// Hooking `path` needs a `hook` grant covering it.
    #[error(
        "hooking {path} needs a grant: add \"{path}\" (or a prefix of it ending in `/`) to hook under [grants] in mod.toml"
    )]
    Hook {
        /// The hooked path.
        path: String,
    },
    /// Pushing to a session other than the one being handled needs `push = "any"`.
    #[error(
        "pushing to another session than the one this call handles needs a grant: add push = \"any\" under [grants] in mod.toml"
    )]
    PushOther,
    /// Broadcasting needs `push = "broadcast"`.
    #[error("pushing to every session needs a grant: add push = \"broadcast\" under [grants] in mod.toml")]
    Broadcast,
    /// A timer naming a session other than the one the scheduling call handles (or any, for a call
    /// without a session) needs `timers = "any"`.
    #[error(
        "{} needs a grant: add timers = \"any\" under [grants] in mod.toml",
        if *handling {
            "a timer naming another session than the one this call handles"
        } else {
            "a timer naming a session from a call that handles none"
        }
    )]
    TimerSession {
        /// Whether the scheduling call handles a session.
        handling: bool,
    },
    /// Calling into mod `target` needs a `call` grant naming it.
    #[error("calling mod `{target}` needs a grant: add \"{target}\" to call under [grants] in mod.toml")]
    Call {
        /// The mod called.
        target: String,
    },
    /// Emitting a topic that is not the mod's own (`<id>.…` or `<id>/…`) needs an `emit` grant.
    #[error(
        "emitting topic `{topic}` needs a grant: a mod's own topics start with `{id}.` or `{id}/`; \
         any other topic is emitted only with \"{topic}\" (or a prefix of it ending in `.` or `/`) \
         in emit under [grants] in mod.toml"
    )]
    Emit {
        /// The topic.
        topic: String,
        /// The emitting mod's id.
        id: String,
    },
    /// The topic starts with the mod's id, but another mod's `emit` grant names it: it is theirs.
    #[error("topic `{topic}` belongs to mod `{owner}` (its emit grant names it): no other mod emits it")]
    EmitTaken {
        /// The topic.
        topic: String,
        /// The mod whose grant names it.
        owner: String,
    },
}

/// Whether `topic` is mod `id`'s own: it starts with the id and a `.` or `/`.
pub fn own_topic(id: &str, topic: &str) -> bool {
    topic.strip_prefix(id).is_some_and(|rest| rest.starts_with(['.', '/']))
}

fn shown_path(path: &str) -> String {
    if path.is_empty() { "the db root".to_owned() } else { format!("db path `{path}`") }
}

impl TryFrom<GrantsToml> for Grants {
    type Error = GrantsError;

    fn try_from(table: GrantsToml) -> Result<Grants, GrantsError> {
        Grants::new(&table)
    }
}

impl Grants {
    /// Validates the table: each db path parses, each namespace is a mod id.
    pub fn new(table: &GrantsToml) -> Result<Grants, GrantsError> {
        let mut grants = Grants::default();
        for path in &table.db_write {
            grants.db_write.push(parse_path(path).map_err(GrantsError::DbPath)?);
        }
        for (list, set) in [(&table.store_read, &mut grants.store_read), (&table.store_write, &mut grants.store_write)]
        {
            for namespace in list {
                set.insert(ModId::parse(namespace).map_err(GrantsError::Namespace)?);
            }
        }
        for path in &table.hook {
            if !path.starts_with('/') {
                return Err(GrantsError::HookPath(path.clone()));
            }
            grants.hook.push(path.clone());
        }
        for target in &table.call {
            grants.call.insert(ModId::parse(target).map_err(GrantsError::Callee)?);
        }
        grants.push = table.push;
        grants.timers = table.timers;
        for topic in &table.emit {
            crate::check_topic(topic).map_err(GrantsError::Topic)?;
            grants.emit.push(topic.clone());
        }
        Ok(grants)
    }

    /// May the mod patch the db at `path`? The error names the grant it lacks.
    pub fn check_db_write(&self, path: &str) -> Result<(), Denied> {
        let segments = parse_path(path).map_err(Denied::BadPath)?;
        if self.db_write.iter().any(|grant| segments.starts_with(grant)) {
            return Ok(());
        }
        Err(Denied::DbWrite { path: path.to_owned() })
    }

    /// May the mod `own` read (or, with `write`, change) store namespace `namespace`?
    pub fn check_store(&self, own: &str, namespace: &str, write: bool) -> Result<(), Denied> {
        if namespace == own || self.store_write.contains(namespace) || (!write && self.store_read.contains(namespace)) {
            return Ok(());
        }
        Err(Denied::Store { namespace: namespace.to_owned(), write })
    }

    /// May the mod hook `path` (a route path, exact or a prefix)? A grant covers the path itself and,
    /// when it ends in `/`, every path under it.
    pub fn check_hook(&self, path: &str) -> Result<(), Denied> {
        let covered = |grant: &String| grant == path || (grant.ends_with('/') && path.starts_with(grant.as_str()));
        if self.hook.iter().any(covered) {
            return Ok(());
        }
        Err(Denied::Hook { path: path.to_owned() })
    }

    /// May the mod call functions of mod `target`?
    pub fn check_call(&self, target: &str) -> Result<(), Denied> {
        if self.call.contains(target) {
            return Ok(());
        }
        Err(Denied::Call { target: target.to_owned() })
    }

    /// Whether an `emit` grant covers `topic`: it names the topic, or a prefix of it ending in `.`
    /// or `/`.
    pub fn grants_emit(&self, topic: &str) -> bool {
        let covered =
            |grant: &String| grant == topic || (grant.ends_with(['.', '/']) && topic.starts_with(grant.as_str()));
        self.emit.iter().any(covered)
    }

    /// May mod `id`, holding these grants, emit `topic`? Its own topics (`<id>.…`, `<id>/…`) and
    /// those its `emit` grant covers. (Whether another mod's grant claims one of its own topics is
    /// for the caller, who knows the other mods.)
    pub fn check_emit(&self, id: &str, topic: &str) -> Result<(), Denied> {
        if self.grants_emit(topic) || own_topic(id, topic) {
            return Ok(());
        }
        Err(Denied::Emit { topic: topic.to_owned(), id: id.to_owned() })
    }

    /// May the mod push to a session it is not handling?
    pub fn check_push_other(&self) -> Result<(), Denied> {
        match self.push {
            Some(_) => Ok(()),
            None => Err(Denied::PushOther),
        }
    }

    /// May the mod push to every session at once?
    pub fn check_broadcast(&self) -> Result<(), Denied> {
        match self.push {
            Some(PushGrant::Broadcast) => Ok(()),
            _ => Err(Denied::Broadcast),
        }
    }

    /// May the mod schedule a timer naming a session the scheduling call does not handle?
    /// `handling`: whether that call handles a session at all (for the message).
    pub fn check_timer_session(&self, handling: bool) -> Result<(), Denied> {
        match self.timers {
            Some(TimerGrant::Any) => Ok(()),
            None => Err(Denied::TimerSession { handling }),
        }
    }

    /// Every grant in words, for `modhost mods` and status pages; empty when the mod has none.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .db_write
            .iter()
            .map(|segments| match segments.as_slice() {
                [] => "db write: the whole db".to_owned(),
                _ => {
                    let names: Vec<&str> = segments.iter().map(String::as_str).collect();
                    format!("db write: {}", join_path(&names))
                }
            })
            .collect();
        out.extend(self.store_write.iter().map(|ns| format!("store read+write: {ns}")));
        out.extend(
            self.store_read.iter().filter(|ns| !self.store_write.contains(*ns)).map(|ns| format!("store read: {ns}")),
        );
        out.extend(self.hook.iter().map(|path| format!("hook: {path}")));
        out.extend(self.call.iter().map(|target| format!("call: {target}")));
        match self.push {
            Some(PushGrant::Any) => out.push("push: any session".to_owned()),
            Some(PushGrant::Broadcast) => out.push("push: any session, and to all at once".to_owned()),
            None => {}
        }
        if let Some(TimerGrant::Any) = self.timers {
            out.push("timers: naming any session".to_owned());
        }
        out.extend(self.emit.iter().map(|topic| format!("emit: {topic}")));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(db: &[&str], read: &[&str], write: &[&str]) -> Grants {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        let table = GrantsToml {
            db_write: owned(db),
            store_read: owned(read),
            store_write: owned(write),
            ..Default::default()
        };
        Grants::new(&table).unwrap()
    }

    #[test]
    fn db_grants_cover_whole_segments_under_them() {
        let g = grants(&["templates.items", "a\\.b"], &[], &[]);
        assert!(g.check_db_write("templates.items").is_ok());
        assert!(g.check_db_write("templates.items.x._props").is_ok());
        assert!(g.check_db_write("a\\.b.c").is_ok());
        for refused in ["templates.itemsx", "templates", "", "a.b.c", "globals"] {
            let e = g.check_db_write(refused).unwrap_err().to_string();
            assert!(e.contains("db_write") && e.contains("[grants]"), "{refused}: {e}");
        }
        assert!(grants(&[""], &[], &[]).check_db_write("").is_ok(), "`\"\"` grants the whole db");
        assert!(Grants::default().check_db_write("x").is_err(), "no grant, no write");
    }

    #[test]
    fn store_grants_read_write_and_own() {
        let g = grants(&[], &["emulator"], &["shared"]);
        assert!(g.check_store("me", "me", true).is_ok());
        assert!(g.check_store("me", "emulator", false).is_ok());
        assert!(g.check_store("me", "emulator", true).unwrap_err().to_string().contains("store_write"));
        assert!(g.check_store("me", "shared", true).is_ok());
        assert!(g.check_store("me", "other", false).unwrap_err().to_string().contains("`other`"));
        assert_eq!(g.describe(), ["store read+write: shared", "store read: emulator"]);
    }

    #[test]
    fn push_grants_widen_step_by_step() {
        let none = Grants::default();
        assert!(none.check_push_other().unwrap_err().to_string().contains("push = \"any\""));
        assert!(none.check_broadcast().unwrap_err().to_string().contains("push = \"broadcast\""));
        let any: Grants = toml::from_str::<GrantsToml>("push = \"any\"").map(|t| Grants::new(&t).unwrap()).unwrap();
        assert!(any.check_push_other().is_ok() && any.check_broadcast().is_err());
        let all: Grants = Grants::new(&GrantsToml { push: Some(PushGrant::Broadcast), ..Default::default() }).unwrap();
        assert!(all.check_push_other().is_ok() && all.check_broadcast().is_ok());
        assert_eq!(all.describe(), ["push: any session, and to all at once"]);
        assert!(toml::from_str::<GrantsToml>("push = \"everyone\"").is_err());
    }

    #[test]
    fn a_timer_names_another_session_only_with_the_timers_grant() {
        let none = Grants::default();
        let e = none.check_timer_session(true).unwrap_err().to_string();
        assert!(e.contains("timers = \"any\" under [grants]") && e.contains("than the one this call handles"), "{e}");
        let e = none.check_timer_session(false).unwrap_err().to_string();
        assert!(e.contains("from a call that handles none"), "{e}");
        let any = Grants::new(&toml::from_str::<GrantsToml>("timers = \"any\"").unwrap()).unwrap();
        assert!(any.check_timer_session(true).is_ok() && any.check_timer_session(false).is_ok());
        assert!(any.check_push_other().is_err(), "naming a session in a timer is not pushing to it");
        assert_eq!(any.describe(), ["timers: naming any session"]);
        assert!(toml::from_str::<GrantsToml>("timers = \"all\"").is_err());
    }

    #[test]
    fn hook_and_call_grants_cover_what_they_name() {
        let table = GrantsToml {
            hook: vec!["/client/game/".into(), "/client/items".into()],
            call: vec!["emulator".into()],
            ..Default::default()
        };
        let g = Grants::new(&table).unwrap();
        for ok in ["/client/game/start", "/client/game/", "/client/items"] {
            assert!(g.check_hook(ok).is_ok(), "{ok}");
        }
        for refused in ["/client/items/x", "/client/gamex", "/client/", "/"] {
            let e = g.check_hook(refused).unwrap_err().to_string();
            assert!(e.contains("to hook under [grants]") && e.contains(refused), "{refused}: {e}");
        }
        assert!(g.check_call("emulator").is_ok());
        assert!(g.check_call("other").unwrap_err().to_string().contains("add \"other\" to call"));
        assert_eq!(g.describe(), ["hook: /client/game/", "hook: /client/items", "call: emulator"]);
        assert!(Grants::new(&GrantsToml { hook: vec!["client".into()], ..Default::default() }).is_err());
        assert!(Grants::new(&GrantsToml { call: vec!["No".into()], ..Default::default() }).is_err());
    }

    #[test]
    fn a_mod_emits_its_own_topics_and_others_only_under_an_emit_grant() {
        let none = Grants::default();
        for own in ["forger.x", "forger/x", "forger.profile.created"] {
            assert!(none.check_emit("forger", own).is_ok(), "{own}");
        }
        for other in ["profile.created", "forger", "forgerx.y", "forge.x", "emulator.x"] {
            let e = none.check_emit("forger", other).unwrap_err().to_string();
            assert!(
                e.contains(&format!("emitting topic `{other}` needs a grant")) && e.contains("emit under [grants]"),
                "{e}"
            );
        }
        let game: Grants = toml::from_str("emit = [\"profile.created\", \"items.\"]").unwrap();
        for ok in ["profile.created", "items.moved", "items.x.y", "emulator.x"] {
            assert!(game.check_emit("emulator", ok).is_ok(), "{ok}");
        }
        for refused in ["profile.selected", "items", "itemsx.y", "profile.created.x"] {
            assert!(game.check_emit("emulator", refused).is_err(), "{refused}");
        }
        assert_eq!(game.describe(), ["emit: profile.created", "emit: items."]);
        assert!(toml::from_str::<Grants>("emit = [\"Bad Topic\"]").unwrap_err().to_string().contains("[grants] emit"));
    }

    #[test]
    fn bad_grants_are_refused() {
        let bad = |t: GrantsToml| Grants::new(&t).unwrap_err().to_string();
        assert!(bad(GrantsToml { db_write: vec!["a\\q".into()], ..Default::default() }).contains("db_write"));
        assert!(bad(GrantsToml { store_read: vec!["../x".into()], ..Default::default() }).contains("not a mod id"));
    }
}
