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
//! ```
//!
//! A call outside its grants is refused with `denied` and a message naming the grant it lacks. Prefixes
//! are whole path segments: `templates.items` covers `templates.items.x`, not `templates.itemsx`.

use crate::db::parse_path;
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
}

/// A mod's grants, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    db_write: Vec<Vec<String>>,
    store_read: BTreeSet<String>,
    store_write: BTreeSet<String>,
}

impl Grants {
    /// Validates the table: each db path parses, each namespace is a mod id.
    pub fn new(table: &GrantsToml) -> Result<Grants, String> {
        let mut grants = Grants::default();
        for path in &table.db_write {
            grants.db_write.push(parse_path(path).map_err(|e| format!("[grants] db_write: {e}"))?);
        }
        for (list, set) in [(&table.store_read, &mut grants.store_read), (&table.store_write, &mut grants.store_write)]
        {
            for namespace in list {
                if !super::manifest::valid_id(namespace) {
                    return Err(format!("[grants]: `{namespace}` is not a mod id (a store namespace)"));
                }
                set.insert(namespace.clone());
            }
        }
        Ok(grants)
    }

    /// May the mod patch the db at `path`? The error names the grant it lacks.
    pub fn check_db_write(&self, path: &str) -> Result<(), String> {
        let segments = parse_path(path).map_err(|e| e.to_string())?;
        if self.db_write.iter().any(|grant| segments.starts_with(grant)) {
            return Ok(());
        }
        let shown = if path.is_empty() { "the db root".to_owned() } else { format!("db path `{path}`") };
        Err(format!("writing {shown} needs a grant: add it to db_write under [grants] in mod.toml"))
    }

    /// May the mod `own` read (or, with `write`, change) store namespace `namespace`?
    pub fn check_store(&self, own: &str, namespace: &str, write: bool) -> Result<(), String> {
        if namespace == own || self.store_write.contains(namespace) || (!write && self.store_read.contains(namespace)) {
            return Ok(());
        }
        let (verb, list) = if write { ("writing", "store_write") } else { ("reading", "store_read or store_write") };
        Err(format!("{verb} store namespace `{namespace}` needs a grant: add it to {list} under [grants] in mod.toml"))
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
                    format!("db write: {}", crate::db::join_path(&names))
                }
            })
            .collect();
        out.extend(self.store_write.iter().map(|ns| format!("store read+write: {ns}")));
        out.extend(
            self.store_read.iter().filter(|ns| !self.store_write.contains(*ns)).map(|ns| format!("store read: {ns}")),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(db: &[&str], read: &[&str], write: &[&str]) -> Grants {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Grants::new(&GrantsToml { db_write: owned(db), store_read: owned(read), store_write: owned(write) }).unwrap()
    }

    #[test]
    fn db_grants_cover_whole_segments_under_them() {
        let g = grants(&["templates.items", "a\\.b"], &[], &[]);
        assert!(g.check_db_write("templates.items").is_ok());
        assert!(g.check_db_write("templates.items.x._props").is_ok());
        assert!(g.check_db_write("a\\.b.c").is_ok());
        for refused in ["templates.itemsx", "templates", "", "a.b.c", "globals"] {
            let e = g.check_db_write(refused).unwrap_err();
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
        assert!(g.check_store("me", "emulator", true).unwrap_err().contains("store_write"));
        assert!(g.check_store("me", "shared", true).is_ok());
        assert!(g.check_store("me", "other", false).unwrap_err().contains("`other`"));
        assert_eq!(g.describe(), ["store read+write: shared", "store read: emulator"]);
    }

    #[test]
    fn bad_grants_are_refused() {
        let bad = |t: GrantsToml| Grants::new(&t).unwrap_err();
        assert!(bad(GrantsToml { db_write: vec!["a\\q".into()], ..Default::default() }).contains("db_write"));
        assert!(bad(GrantsToml { store_read: vec!["../x".into()], ..Default::default() }).contains("not a mod id"));
    }
}
