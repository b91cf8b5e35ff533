//! [`ModId`]: a mod's id, validated once where it is read.
//!
//! An id is the folder name under `mods/`, the mod's store namespace and its log prefix, so it must be
//! safe as all three: 1-64 characters of `[a-z0-9_-]`, starting with a letter or digit. A `ModId` can
//! only be made by [`ModId::parse`] (or by deserializing, which calls it), so code that holds one never
//! checks again, and a store namespace built from one is never a path.

use std::fmt;

/// The longest id, in bytes.
pub const MAX_ID_LEN: usize = 64;

/// A valid mod id.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ModId(String);

/// A string that is not a mod id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a mod id: it must be 1-{MAX_ID_LEN} characters of a-z, 0-9, `-` and `_`, starting with a letter or digit"
)]
pub struct InvalidModId(pub String);

impl ModId {
    /// Checks `id` against the rule.
    pub fn parse(id: &str) -> Result<ModId, InvalidModId> {
        let valid = !id.is_empty()
            && id.len() <= MAX_ID_LEN
            && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
            && id.as_bytes()[0].is_ascii_alphanumeric();
        if valid { Ok(ModId(id.to_owned())) } else { Err(InvalidModId(id.to_owned())) }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ModId {
    type Error = InvalidModId;

    fn try_from(id: String) -> Result<ModId, InvalidModId> {
        ModId::parse(&id)
    }
}

impl From<ModId> for String {
    fn from(id: ModId) -> String {
        id.0
    }
}

impl std::ops::Deref for ModId {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for ModId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for ModId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for ModId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for ModId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ModId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_rule() {
        for good in ["a", "emulator", "9lives", "a-b_c", &"x".repeat(MAX_ID_LEN)] {
            assert_eq!(ModId::parse(good).unwrap().as_str(), good);
        }
        for bad in ["", "-a", "_a", "A", "a/b", "../x", "a.b", "é", &"x".repeat(MAX_ID_LEN + 1)] {
            let e = ModId::parse(bad).unwrap_err();
            assert!(e.to_string().contains("is not a mod id"), "{bad}: {e}");
        }
    }

    #[test]
    fn deserializing_validates() {
        #[derive(serde::Deserialize)]
        struct T {
            #[expect(dead_code, reason = "only deserialized")]
            id: ModId,
        }
        assert!(toml::from_str::<T>("id = \"ok\"").is_ok());
        let e = toml::from_str::<T>("id = \"Not/ok\"").err().unwrap().to_string();
        assert!(e.contains("is not a mod id"), "{e}");
    }
}
