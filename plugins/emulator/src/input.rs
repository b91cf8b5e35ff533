//! What the game accepts from a client before it parses anything: a size cap per route and lists
//! bounded while they are read, so a request cannot make the game's instance run out of memory.
//!
//! Why here and not only in the host: the host caps a body at the player's limit (16 MiB inflated by
//! default), which a mod's JSON parse can multiply tens of times (`[0,0,…]` becomes 32 bytes a
//! zero as a `Value`). The game knows how large its requests really are; a body over that, or a list
//! longer than the game would ever act on, is answered 413 or 400 without being built in memory.
//! Nesting is bounded too ([`MAX_DEPTH`]), members the game does not read included: serde skips an
//! unread member without counting its depth.

use modhost_sdk::{Error, Request, Result};
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, SeqAccess, Visitor};
use std::fmt;
use std::marker::PhantomData;

/// The body of `req` parsed as `T`, refused whole (413) when it is over `max` bytes. `what` names the
/// route in the error.
pub(crate) fn parse<T: DeserializeOwned>(req: &Request, what: &str, max: usize) -> Result<T> {
    let len = req.body().len();
    if len > max {
        return Err(Error::TooLarge(format!("{what}: the body is {len} bytes; the game reads at most {max}")));
    }
    if let Some(at) = too_deep(req.body(), MAX_DEPTH) {
        return Err(Error::Invalid(format!("{what}: the body nests deeper than {MAX_DEPTH} levels (at byte {at})")));
    }
    req.json().map_err(|e| Error::Invalid(format!("{what}: {e}")))
}

/// The deepest nesting of arrays and objects a body may have: serde_json's own limit for what it
/// builds, and several times what any request of the client nests (a raid's report, the deepest,
/// about a dozen).
pub(crate) const MAX_DEPTH: usize = 128;

/// Where `json` first opens an array or object deeper than `max`, if it does (outside strings; the
/// text need not be valid JSON, the parse that follows judges that).
fn too_deep(json: &[u8], max: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &byte) in json.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(at);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The body, when the client sends one, parsed as a JSON object: a route whose SPT request type has
/// members refuses what is not one (400), and one over `max` bytes (413), before answering. An empty
/// (or all-whitespace) body is fine: the client sends none to some of these routes.
pub(crate) fn object_or_empty(req: &Request, what: &str, max: usize) -> Result<()> {
    if req.body().iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let _: serde_json::Map<String, serde_json::Value> = parse(req, what, max)?;
    Ok(())
}

/// Deserializes a list of at most `MAX` elements, failing at the first one past it instead of
/// building the whole list first (`#[serde(deserialize_with = "input::at_most::<512, _, _>")]`).
pub(crate) fn at_most<'de, const MAX: usize, D, T>(deserializer: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Bounded<const MAX: usize, T>(PhantomData<T>);

    impl<'de, const MAX: usize, T: Deserialize<'de>> Visitor<'de> for Bounded<MAX, T> {
        type Value = Vec<T>;

        fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(out, "a list of at most {MAX} elements")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<T>, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX));
            while let Some(element) = seq.next_element()? {
                if out.len() == MAX {
                    return Err(serde::de::Error::custom(format_args!("a list holds at most {MAX} elements")));
                }
                out.push(element);
            }
            Ok(out)
        }
    }

    deserializer.deserialize_seq(Bounded::<MAX, T>(PhantomData))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize, Debug)]
    struct Batch {
        #[serde(deserialize_with = "at_most::<3, _, _>")]
        data: Vec<u32>,
    }

    #[test]
    fn nesting_is_bounded_in_members_the_game_never_reads() {
        let deep = |n: usize| format!(r#"{{"data":[],"a":{}{}}}"#, "[".repeat(n), "]".repeat(n));
        assert_eq!(too_deep(deep(MAX_DEPTH - 1).as_bytes(), MAX_DEPTH), None, "the object is one level");
        assert_eq!(too_deep(deep(MAX_DEPTH).as_bytes(), MAX_DEPTH), Some(15 + MAX_DEPTH - 1));
        assert_eq!(too_deep(deep(100_000).as_bytes(), MAX_DEPTH), Some(15 + MAX_DEPTH - 1));
        // Brackets inside strings, escaped quotes included, are text.
        let text = format!(r#"{{"a":"\"{}"}}"#, "[".repeat(1000));
        assert_eq!(too_deep(text.as_bytes(), MAX_DEPTH), None);
    }

    #[test]
    fn a_list_at_its_bound_parses_and_one_past_it_is_refused() {
        let ok: Batch = serde_json::from_str(r#"{"data":[1,2,3]}"#).expect("three elements");
        assert_eq!(ok.data, [1, 2, 3]);
        let err = serde_json::from_str::<Batch>(r#"{"data":[1,2,3,4]}"#).expect_err("four elements");
        assert!(err.to_string().contains("at most 3"), "{err}");
    }

    #[test]
    fn a_long_list_is_refused_before_it_is_read_whole() {
        // A million elements, then a syntax error: refused for length, never reaching the error.
        let text = format!(r#"{{"data":[{}"#, "0,".repeat(1_000_000));
        let err = serde_json::from_str::<Batch>(&text).expect_err("too long");
        assert!(err.to_string().contains("at most 3"), "{err}");
    }
}
