//! `mod.toml`: what a mod says about itself.
//!
//! ```toml
//! id = "hello"          # the folder name under mods/, the store namespace, the log prefix
//! name = "Hello"        # optional, for people
//! version = "0.1.0"
//! reuse = 1             # optional: calls per instance (1 = a fresh instance per request)
//!
//! [grants]              # optional: what it may change beyond its own store namespace (grants.rs)
//! db_write = ["templates.items"]
//! store_read = ["emulator"]
//! ```
//!
//! A mod's limits are not here: the player sets them (`<root>/modhost.toml`), so a mod cannot raise
//! its own.
//!
//! Unknown fields are an error, so a misspelt setting is reported rather than silently ignored.

use super::grants::{Grants, GrantsToml};
use serde::Deserialize;

/// A parsed, validated manifest.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The mod's id: 1-64 characters of `[a-z0-9_-]`, starting with a letter or digit.
    pub id: String,
    /// A display name.
    #[serde(default)]
    pub name: Option<String>,
    /// The mod's version (semver).
    pub version: String,
    /// Calls served by one instance before it is dropped. 1 (the default) is a fresh instance per
    /// request; more trades isolation between requests for a few µs per call.
    #[serde(default = "one")]
    pub reuse: u32,
    /// What it may change beyond its own store namespace.
    #[serde(default)]
    pub grants: GrantsToml,
}

/// Is `id` a valid mod id: 1-64 characters of `[a-z0-9_-]`, starting with a letter or digit?
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && id.as_bytes()[0].is_ascii_alphanumeric()
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
        let manifest: Manifest = toml::from_str(text).map_err(|e| ManifestError::Syntax(e.to_string()))?;
        if !valid_id(&manifest.id) {
            return Err(ManifestError::Invalid(format!(
                "id `{}` must be 1-64 characters of a-z, 0-9, `-` and `_`, starting with a letter or digit",
                manifest.id
            )));
        }
        if manifest.reuse == 0 {
            return Err(ManifestError::Invalid("reuse must be at least 1".into()));
        }
        Grants::new(&manifest.grants).map_err(ManifestError::Invalid)?;
        Ok(manifest)
    }

    /// The mod's grants (validated by [`Manifest::parse`]).
    pub fn grants(&self) -> Grants {
        Grants::new(&self.grants).unwrap_or_default()
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
        let e = Manifest::parse("id = \"Hello\"\nversion = \"1\"").unwrap_err().to_string();
        assert!(e.contains("a-z"), "{e}");
        let e = Manifest::parse("id = \"x\"\nversion = \"1\"\nreuze = 3").unwrap_err().to_string();
        assert!(e.contains("reuze"), "{e}");
        assert!(Manifest::parse("id = \"x\"").is_err());
        assert!(Manifest::parse("id = \"x\"\nversion = \"1\"\nreuse = 0").is_err());
        assert!(Manifest::parse("id = \"../x\"\nversion = \"1\"").is_err());
        let e = Manifest::parse("id = \"x\"\nversion = \"1\"\n[grants]\ndb_wrte = []").unwrap_err().to_string();
        assert!(e.contains("db_wrte"), "{e}");
        let e = Manifest::parse("id = \"x\"\nversion = \"1\"\n[grants]\nstore_read = [\"A\"]").unwrap_err().to_string();
        assert!(e.contains("not a mod id"), "{e}");
        let m = Manifest::parse("id = \"x\"\nversion = \"1\"\n[grants]\ndb_write = [\"a.b\"]").unwrap();
        assert_eq!(m.grants().describe(), ["db write: a.b"]);
    }
}
