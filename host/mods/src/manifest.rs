//! `mod.toml`: what a mod says about itself.
//!
//! ```toml
//! id = "hello"          # the folder name under mods/, the store namespace, the log prefix
//! name = "Hello"        # optional, for people
//! version = "0.1.0"     # semver
//! authors = ["Ann"]     # optional
//! modhost = "^0.1"      # optional: the modhost API versions it works with (semver range)
//! reuse = 1             # optional: calls per instance (1 = a fresh instance per request)
//! load_after = ["x"]    # optional, soft: when `x` is installed, load after it
//! load_before = ["y"]   # optional, soft: when `y` is installed, load before it
//! conflicts = ["z"]     # optional: refuse to load when `z` is installed
//!
//! [requires]            # optional: mods that must load first, with a semver range each
//! emulator = "^0.1"
//!
//! [grants]              # optional: what it may change beyond its own store namespace (grants.rs)
//! db_write = ["templates.items"]
//! store_read = ["emulator"]
//! ```
//!
//! The relations between mods (`requires`, `load_after`, `load_before`, `conflicts`) are resolved
//! into a load order by `resolve.rs`.
//!
//! A mod's limits are not here: the player sets them (`<root>/modhost.toml`), so a mod cannot raise
//! its own.
//!
//! Unknown fields are an error, so a misspelt setting is reported rather than silently ignored.

use crate::ModId;
use crate::grants::Grants;
use semver::{Version, VersionReq};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The version of the modhost API (the `wit/` package `modhost:plugin`) this host implements; a
/// manifest's `modhost` range is checked against it.
pub const API_VERSION: Version = Version::new(0, 1, 2);

/// A parsed, validated manifest.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The mod's id (validated as it is read).
    pub id: ModId,
    /// A display name.
    #[serde(default)]
    pub name: Option<String>,
    /// The mod's version.
    pub version: Version,
    /// Who wrote it.
    #[serde(default)]
    pub authors: Vec<String>,
    /// The modhost API versions it works with (absent: any).
    #[serde(default)]
    pub modhost: Option<VersionReq>,
    /// Mods that must be installed, in these version ranges, and load before this one.
    #[serde(default)]
    pub requires: BTreeMap<ModId, VersionReq>,
    /// Mods this one loads after when they are installed (not required).
    #[serde(default)]
    pub load_after: Vec<ModId>,
    /// Mods this one loads before when they are installed.
    #[serde(default)]
    pub load_before: Vec<ModId>,
    /// Mods this one refuses to run beside.
    #[serde(default)]
    pub conflicts: Vec<ModId>,
    /// Calls served by one instance before it is dropped. 1 (the default) is a fresh instance per
    /// request; more trades isolation between requests for a few µs per call.
    #[serde(default = "one")]
    pub reuse: u32,
    /// What it may change beyond its own store namespace (validated as it is read).
    #[serde(default)]
    pub grants: Grants,
}

fn one() -> u32 {
    1
}

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not valid TOML, or a field is missing, unknown or of the wrong type.
    #[error("mod.toml is malformed: {0}")]
    Syntax(String),
    /// A field's value breaks its rule.
    #[error("mod.toml: {0}")]
    Invalid(String),
}

impl Manifest {
    /// Parses and validates `mod.toml` text.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        // Ids and grants are checked as they are read (`ModId`, `Grants`): a bad one is a syntax
        // error that toml places at its line.
        let manifest: Manifest = toml::from_str(text).map_err(|e| ManifestError::Syntax(e.to_string()))?;
        if manifest.reuse == 0 {
            return Err(ManifestError::Invalid("reuse must be at least 1".into()));
        }
        let relations = [
            ("requires", manifest.requires.keys().collect::<Vec<_>>()),
            ("load_after", manifest.load_after.iter().collect()),
            ("load_before", manifest.load_before.iter().collect()),
            ("conflicts", manifest.conflicts.iter().collect()),
        ];
        for (field, ids) in relations {
            for other in ids {
                if *other == manifest.id {
                    return Err(ManifestError::Invalid(format!("{field} names the mod itself (`{other}`)")));
                }
            }
        }
        if let Some(both) = manifest.conflicts.iter().find(|c| manifest.requires.contains_key(*c)) {
            return Err(ManifestError::Invalid(format!("`{both}` is both required and a conflict")));
        }
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_and_full_manifests_parse() {
        let m = Manifest::parse("id = \"hello\"\nversion = \"0.1.0\"").unwrap();
        assert_eq!((m.id.as_str(), m.reuse), ("hello", 1));
        let m = Manifest::parse("id = \"a-b_1\"\nname = \"AB\"\nversion = \"1.0.0\"\nreuse = 50").unwrap();
        assert_eq!(m.reuse, 50);
    }

    #[test]
    fn bad_manifests_say_why() {
        let e = Manifest::parse("id = \"Hello\"\nversion = \"1.0.0\"").unwrap_err().to_string();
        assert!(e.contains("a-z"), "{e}");
        let e = Manifest::parse("id = \"x\"\nversion = \"1.0.0\"\nreuze = 3").unwrap_err().to_string();
        assert!(e.contains("reuze"), "{e}");
        assert!(Manifest::parse("id = \"x\"").is_err());
        assert!(Manifest::parse("id = \"x\"\nversion = \"1.0.0\"\nreuse = 0").is_err());
        assert!(Manifest::parse("id = \"../x\"\nversion = \"1.0.0\"").is_err());
        let e = Manifest::parse("id = \"x\"\nversion = \"1.0.0\"\n[grants]\ndb_wrte = []").unwrap_err().to_string();
        assert!(e.contains("db_wrte"), "{e}");
        let e =
            Manifest::parse("id = \"x\"\nversion = \"1.0.0\"\n[grants]\nstore_read = [\"A\"]").unwrap_err().to_string();
        assert!(e.contains("not a mod id"), "{e}");
        let m = Manifest::parse("id = \"x\"\nversion = \"1.0.0\"\n[grants]\ndb_write = [\"a.b\"]").unwrap();
        assert_eq!(m.grants.describe(), ["db write: a.b"]);
        let e = Manifest::parse("id = \"x\"\nversion = \"1\"").unwrap_err().to_string();
        assert!(e.contains("version"), "{e}");
    }

    #[test]
    fn relations_parse_and_are_checked() {
        let m = Manifest::parse(
            "id = \"x\"\nversion = \"1.2.3\"\nauthors = [\"Ann\"]\nmodhost = \"^0.1\"\nload_after = [\"a\"]\n\
             load_before = [\"b\"]\nconflicts = [\"c\"]\n[requires]\nemulator = \">=0.1, <0.3\"",
        )
        .unwrap();
        assert!(m.requires["emulator"].matches(&Version::new(0, 2, 9)));
        assert!(!m.requires["emulator"].matches(&Version::new(0, 3, 0)));
        assert!(m.modhost.unwrap().matches(&API_VERSION));
        let bad = |extra: &str| {
            Manifest::parse(&format!("id = \"x\"\nversion = \"1.0.0\"\n{extra}")).unwrap_err().to_string()
        };
        assert!(bad("load_after = [\"x\"]").contains("itself"));
        assert!(bad("conflicts = [\"Nope\"]").contains("not a mod id"));
        let e = bad("[requires]\ny = \"not a range\"");
        assert!(e.contains("y = \"not a range\"") && e.contains("version"), "{e}");
        assert!(bad("conflicts = [\"y\"]\n[requires]\ny = \"*\"").contains("both required and a conflict"));
        assert!(bad("modhost = \"~~1\"").contains("modhost"));
    }

    /// The API version is the `wit/` package's: a WIT change that bumps one must bump the other.
    #[test]
    fn api_version_is_the_wit_package_version() {
        let world = include_str!("../../../wit/world.wit");
        assert!(
            world.contains(&format!("package modhost:plugin@{API_VERSION};")),
            "wit/world.wit and API_VERSION differ"
        );
    }
}
