//! Checking a patch's JSON without building it: every string decodes (escapes, surrogate pairs), every
//! number parses, serde_json's 128-level limit holds, and whether any object member is `null` (what
//! lets a merge share the patch's text instead of rebuilding it member by member, `patch.rs`).
//!
//! Why not `serde_json::Value`: a value costs tens of bytes per element and a map per object, so a
//! 65 MiB patch took 3 GB to check. This visits the same tokens and keeps nothing but the depth
//! serde_json already tracks; strings are borrowed from the text (or decoded into serde_json's scratch
//! buffer when they hold escapes), never collected.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What checking found.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Checked {
    /// Some object member (at any depth) is `null`: a merge removes it, so the patch cannot be taken
    /// as it is.
    pub(crate) null_member: bool,
}

/// Checks `json` as one complete JSON value.
pub(crate) fn check(json: &str) -> Result<Checked, serde_json::Error> {
    let mut found = Checked::default();
    let mut de = serde_json::Deserializer::from_str(json);
    de.deserialize_any(Value { found: &mut found })?;
    de.end()?;
    Ok(found)
}

/// Visits one value; `null` is seen by the map that holds it.
struct Value<'a> {
    found: &'a mut Checked,
}

impl<'de> de::DeserializeSeed<'de> for Value<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Answers whether the value was `null`.
impl<'de> Visitor<'de> for Value<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element_seed(Value { found: &mut *self.found })?.is_some() {}
        Ok(false)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_key_seed(Name)?.is_some() {
            if map.next_value_seed(Value { found: &mut *self.found })? {
                self.found.null_member = true;
            }
        }
        Ok(false)
    }
}

/// A member name: decoded (so a bad escape is an error) and dropped.
struct Name;

impl<'de> de::DeserializeSeed<'de> for Name {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Name {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_value_refuses_is_refused_and_nulls_are_found() {
        for bad in [r#"{"a":"\ud800"}"#, r#"{"\ud800":1}"#, r#"{"a":1"#, "[1,]", r#""\x""#, "1 2", "nan"] {
            assert!(serde_json::from_str::<serde_json::Value>(bad).is_err(), "{bad}");
            assert!(check(bad).is_err(), "{bad}");
        }
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        assert!(check(&deep).is_err(), "serde_json's depth limit still holds");
        assert!(!check(r#"{"a":{"b":[null]},"c":"null"}"#).unwrap().null_member);
        assert!(check(r#"{"a":{"b":null}}"#).unwrap().null_member);
        assert!(!check("null").unwrap().null_member);
    }
}
