//! What a mod takes part in beyond its own routes ([`Declarations`]: the hooks it puts on other
//! mods' routes, the topics it hears, the functions it provides), checked against its grants, and the
//! one order every hook runs in ([`order_hooks`]).
//!
//! A mod answers these from its `guest.declare` export at load; the server (`generation.rs`) checks
//! them here before the mod serves. Pure: no wasmtime, no I/O.

use crate::{Denied, Grants, Manifest, ModId};
use std::collections::{BTreeSet, HashMap};

/// Hooks, subscriptions and functions a mod may declare, each.
pub const MAX_DECLARED: usize = 64;
/// The longest topic, function name or hooked path.
pub const MAX_NAME: usize = 128;

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Before the route's owner: may change the request or answer in its place.
    Before,
    /// After the owner: may change the answer.
    After,
}

/// One hook as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    /// The path it hooks, starting with `/`.
    pub path: String,
    /// Whether `path` is a prefix (else exact).
    pub prefix: bool,
    /// Before or after.
    pub phase: Phase,
    /// Among hooks the load order leaves unordered, higher runs first.
    pub priority: i32,
    /// After-hooks: whether it reads the answer's body.
    pub body: bool,
}

/// What one mod declared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declarations {
    /// Its hooks, in the order declared.
    pub hooks: Vec<HookSpec>,
    /// The topics it hears.
    pub subscriptions: BTreeSet<String>,
    /// The functions it provides.
    pub functions: BTreeSet<String>,
}

/// A declaration the host refuses, naming what and why: the mod is not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclareError {
    /// More than [`MAX_DECLARED`] of a kind.
    #[error("it declares {count} {what}; at most {MAX_DECLARED} are allowed")]
    TooMany {
        /// Hooks, subscriptions or functions.
        what: &'static str,
        /// How many it declared.
        count: usize,
    },
    /// A topic or function name breaks the naming rule.
    #[error("{what} `{name}` is not 1-{MAX_NAME} characters of {rule}")]
    BadName {
        /// Topic or function.
        what: &'static str,
        /// The name, cut.
        name: String,
        /// The characters allowed.
        rule: &'static str,
    },
    /// A hook's path is not a route path, or is one the host answers itself.
    #[error("a hook on `{0}`: {1}")]
    BadHook(String, &'static str),
    /// The same path and phase declared twice.
    #[error("two {phase:?} hooks on `{path}`")]
    Duplicate {
        /// The path.
        path: String,
        /// The phase.
        phase: Phase,
    },
    /// A hook without its grant.
    #[error(transparent)]
    Denied(#[from] Denied),
}

/// Checks a topic (`[a-z0-9._/-]`, 1-[`MAX_NAME`] characters); `Err` says why.
pub fn check_topic(topic: &str) -> Result<(), DeclareError> {
    check_name("topic", topic, "[a-z0-9._/-]", |c| c == '/')
}

/// Checks a function name (`[a-z0-9._-]`, 1-[`MAX_NAME`] characters); `Err` says why.
pub fn check_function(name: &str) -> Result<(), DeclareError> {
    check_name("function", name, "[a-z0-9._-]", |_| false)
}

fn check_name(what: &'static str, name: &str, rule: &'static str, extra: fn(char) -> bool) -> Result<(), DeclareError> {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') || extra(c);
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(ok) {
        let name = name.chars().take(MAX_NAME).collect();
        return Err(DeclareError::BadName { what, name, rule });
    }
    Ok(())
}

impl Declarations {
    /// Whether nothing is declared: the mod is never called but for its routes.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty() && self.subscriptions.is_empty() && self.functions.is_empty()
    }

    /// Whether the mod hears `topic`.
    pub fn hears(&self, topic: &str) -> bool {
        self.subscriptions.contains(topic)
    }

    /// Whether the mod provides `function`.
    pub fn provides(&self, function: &str) -> bool {
        self.functions.contains(function)
    }

    /// Checks counts, names and paths, and that `grants` cover every hook. `reserved` are the paths
    /// the host answers itself (no hook can reach them).
    pub fn check(&self, grants: &Grants, reserved: &[&str]) -> Result<(), DeclareError> {
        for (what, count) in [
            ("hooks", self.hooks.len()),
            ("subscriptions", self.subscriptions.len()),
            ("functions", self.functions.len()),
        ] {
            if count > MAX_DECLARED {
                return Err(DeclareError::TooMany { what, count });
            }
        }
        self.subscriptions.iter().try_for_each(|t| check_topic(t))?;
        self.functions.iter().try_for_each(|f| check_function(f))?;
        let mut seen = BTreeSet::new();
        for hook in &self.hooks {
            let path = &hook.path;
            if !path.starts_with('/') || path.len() > MAX_NAME {
                return Err(DeclareError::BadHook(
                    path.chars().take(MAX_NAME).collect(),
                    "a path starts with `/` and has at most 128 characters",
                ));
            }
            if path.contains('?') {
                return Err(DeclareError::BadHook(path.clone(), "the query is never part of a match"));
            }
            if reserved.iter().any(|r| path.starts_with(r) || (hook.prefix && r.starts_with(path.as_str()))) {
                return Err(DeclareError::BadHook(path.clone(), "the host answers these paths itself"));
            }
            if !seen.insert((path.as_str(), hook.prefix, hook.phase)) {
                return Err(DeclareError::Duplicate { path: path.clone(), phase: hook.phase });
            }
            grants.check_hook(path)?;
        }
        Ok(())
    }
}

/// One mod as [`order_hooks`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct HookOwner<'a> {
    /// Its manifest (its relations to other mods).
    pub manifest: &'a Manifest,
    /// What it declared.
    pub declarations: &'a Declarations,
}

/// The order every hook of a generation runs in, as `(mod index, hook index)` pairs into `mods`
/// (given in load order). A mod's hooks come after the hooks of every mod it loads after (it requires
/// them, or names them in `load_after`, or they name it in `load_before`, directly or through other
/// mods); hooks the load order leaves unordered go by priority (higher first), then by mod id, then
/// in the order declared. A route's chain is the hooks that match it, in this order.
pub fn order_hooks(mods: &[HookOwner<'_>]) -> Vec<(usize, usize)> {
    let index: HashMap<&str, usize> = mods.iter().enumerate().map(|(i, m)| (m.manifest.id.as_str(), i)).collect();
    // before[j]: the mods that load before j by a relation (direct edges, then closed transitively).
    let mut before: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); mods.len()];
    for (j, m) in mods.iter().enumerate() {
        let named = m.manifest.requires.keys().chain(&m.manifest.load_after);
        before[j].extend(named.filter_map(|id| index.get(id.as_str()).copied()));
        for later in &m.manifest.load_before {
            if let Some(&k) = index.get(later.as_str()) {
                before[k].insert(j);
            }
        }
    }
    // Load order is a topological order of these edges (resolution refused every cycle), so one pass
    // in load order closes them.
    for j in 0..mods.len() {
        let direct: Vec<usize> = before[j].iter().copied().filter(|&i| i < j).collect();
        for i in direct {
            let inherited = before[i].clone();
            before[j].extend(inherited);
        }
    }

    let hooks: Vec<(usize, usize)> =
        mods.iter().enumerate().flat_map(|(m, o)| (0..o.declarations.hooks.len()).map(move |h| (m, h))).collect();
    let key = |&(m, h): &(usize, usize)| {
        let id: &ModId = &mods[m].manifest.id;
        (std::cmp::Reverse(mods[m].declarations.hooks[h].priority), id.as_str(), h)
    };
    let mut placed = vec![false; hooks.len()];
    let mut order = Vec::with_capacity(hooks.len());
    while order.len() < hooks.len() {
        // Ready: every hook of every mod this one loads after is placed already.
        let ready = (0..hooks.len())
            .filter(|&n| !placed[n])
            .filter(|&n| {
                let m = hooks[n].0;
                (0..hooks.len()).all(|o| placed[o] || !before[m].contains(&hooks[o].0))
            })
            .min_by(|&a, &b| key(&hooks[a]).cmp(&key(&hooks[b])));
        // A relation cycle cannot reach here (resolution refused it); place the rest by key anyway.
        let next = ready.unwrap_or_else(|| {
            (0..hooks.len()).filter(|&n| !placed[n]).min_by(|&a, &b| key(&hooks[a]).cmp(&key(&hooks[b]))).unwrap_or(0)
        });
        placed[next] = true;
        order.push(hooks[next]);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GrantsToml;

    fn manifest(text: &str) -> Manifest {
        Manifest::parse(&format!("version = \"1.0.0\"\n{text}")).unwrap()
    }

    fn hook(path: &str, priority: i32) -> HookSpec {
        HookSpec { path: path.into(), prefix: false, phase: Phase::Before, priority, body: false }
    }

    fn decl(hooks: Vec<HookSpec>) -> Declarations {
        Declarations { hooks, ..Default::default() }
    }

    #[test]
    fn hooks_follow_the_load_relations_then_priority_then_id() {
        let (a, b, c, d) = (
            manifest("id = \"a\""),
            manifest("id = \"b\""),
            manifest("id = \"c\"\nload_after = [\"z\"]"),
            manifest("id = \"d\"\n[requires]\na = \"*\""),
        );
        let z = manifest("id = \"z\"\nload_before = [\"b\"]");
        let (da, db, dc, dd, dz) = (
            decl(vec![hook("/x", 0), hook("/y", 9)]),
            decl(vec![hook("/x", 5)]),
            decl(vec![hook("/x", 100)]),
            decl(vec![hook("/x", 50)]),
            decl(vec![hook("/x", -1)]),
        );
        // Load order: a, z, b, c, d (z before b and c by relations).
        let mods = [
            HookOwner { manifest: &a, declarations: &da },
            HookOwner { manifest: &z, declarations: &dz },
            HookOwner { manifest: &b, declarations: &db },
            HookOwner { manifest: &c, declarations: &dc },
            HookOwner { manifest: &d, declarations: &dd },
        ];
        let named: Vec<String> =
            order_hooks(&mods).iter().map(|&(m, h)| format!("{}{}", mods[m].manifest.id, h)).collect();
        // Ready at first: a's hooks (9, 0) and z's (-1); b and c wait for z, d for all of a's. By
        // priority: a1, a0; then d0 (50) is ready and beats z0 (-1), which then frees c0 (100), b0 (5).
        assert_eq!(named, ["a1", "a0", "d0", "z0", "c0", "b0"], "{named:?}");
    }

    #[test]
    fn declarations_are_checked_against_names_paths_and_grants() {
        let grants = Grants::new(&GrantsToml { hook: vec!["/client/".into()], ..Default::default() }).unwrap();
        let reserved = ["/modhost", "/metrics"];
        assert!(decl(vec![hook("/client/items", 0)]).check(&grants, &reserved).is_ok());
        let e = decl(vec![hook("/other", 0)]).check(&grants, &reserved).unwrap_err().to_string();
        assert!(e.contains("hooking /other needs a grant"), "{e}");
        let e = decl(vec![hook("/modhost/status", 0)]).check(&grants, &reserved).unwrap_err().to_string();
        assert!(e.contains("answers these paths itself"), "{e}");
        let prefix_over_host = HookSpec { prefix: true, ..hook("/", 0) };
        assert!(decl(vec![prefix_over_host]).check(&grants, &reserved).is_err());
        let e = decl(vec![hook("/client/a", 0), hook("/client/a", 1)]).check(&grants, &reserved).unwrap_err();
        assert!(e.to_string().contains("two Before hooks"), "{e}");
        let bad_topic = Declarations { subscriptions: ["Profile Created".to_owned()].into(), ..Default::default() };
        assert!(bad_topic.check(&grants, &reserved).unwrap_err().to_string().contains("[a-z0-9._/-]"));
        let many = Declarations { functions: (0..65).map(|i| format!("f{i}")).collect(), ..Default::default() };
        assert!(many.check(&grants, &reserved).unwrap_err().to_string().contains("65 functions"));
        assert!(check_topic("profile.created").is_ok() && check_topic("a/b-c_d").is_ok());
        assert!(check_function("give-item").is_ok() && check_function("a/b").is_err() && check_function("").is_err());
    }
}
