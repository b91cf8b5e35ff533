//! What the game accepts from a client before it parses anything: a size cap per route and lists
//! bounded while they are read, so a request cannot make the game's instance run out of memory.
//!
//! Why here and not only in the host: the host caps a body at the player's limit (16 MiB inflated by
//! default), which a mod's JSON parse can multiply tens of times (`[0,0,…]` becomes 32 bytes a
//! zero as a `Value`). The game knows how large its requests really are; a body over that, or a list
//! longer than the game would ever act on, is answered 413 or 400 without being built in memory.
//! Nesting is bounded too ([`MAX_DEPTH`]), members the game does not read included: serde skips an
//! unread member without counting its depth.
//!
//! Speed matters here: a raid's end sends the whole profile (a megabyte for a full stash), so every
//! pass over a body is word-at-a-time or a single validating pass, and [`parse`] can fill types that
//! borrow from the body (`&str`, `Cow<str>`, `&RawValue`) instead of copying every string out of it.
//! Such a body, mostly a list the route only looks through, is not parsed whole: [`scan`] checks it
//! in one validating pass (`json_scan`) that finds the list's elements, and the route parses what it
//! reads (`raid/report.rs`). Both refuse alike: the size cap, UTF-8, [`MAX_DEPTH`], JSON.

use crate::json_scan;
use modhost_sdk::{Error, Request, Result};
use serde::Deserialize;
use serde::de::{Deserializer, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// The body of `req` parsed as `T`, refused whole (413) when it is over `max` bytes. `what` names the
/// route in the error. `T` may borrow from the body (see [`parse_text`]).
pub(crate) fn parse<'a, T: Deserialize<'a>>(req: &'a Request, what: &str, max: usize) -> Result<T> {
    parse_text(req.body(), what, max)
}

/// [`parse`] over bytes: the size cap, the nesting bound, UTF-8 checked once for the whole body, then
/// the parse. An empty (or all-whitespace) body is JSON `null`, as `Request::json` has it.
pub(crate) fn parse_text<'a, T: Deserialize<'a>>(body: &'a [u8], what: &str, max: usize) -> Result<T> {
    at_most_bytes(body, what, max)?;
    if let Some(at) = too_deep(body, MAX_DEPTH) {
        return Err(Error::Invalid(format!("{what}: the body nests deeper than {MAX_DEPTH} levels (at byte {at})")));
    }
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) { b"null" } else { body };
    // One validation of the whole text lets serde_json parse from a `&str` (it then skips checking
    // each string again), and borrow strings without escapes as they are.
    let text = std::str::from_utf8(body)
        .map_err(|e| Error::Invalid(format!("{what}: json: request body: not UTF-8 at byte {}", e.valid_up_to())))?;
    // The wording of `Request::json`'s error, which this replaces.
    serde_json::from_str(text).map_err(|e| Error::Invalid(format!("{what}: json: request body: {e}")))
}

/// A body over `max` bytes, refused whole (413).
fn at_most_bytes(body: &[u8], what: &str, max: usize) -> Result<()> {
    let len = body.len();
    if len > max {
        return Err(Error::TooLarge(format!("{what}: the body is {len} bytes; the game reads at most {max}")));
    }
    Ok(())
}

/// The body checked whole in one validating pass ([`json_scan`]) instead of [`parse`]'s: for a body
/// too large to parse whole at speed, of which the caller parses parts (a raid's end: the items of
/// the array at `path`, at most `max_elements` of them). Refused as [`parse`] refuses: 413 over `max`
/// bytes, 400 when it is not UTF-8, not JSON, or nests deeper than [`MAX_DEPTH`], in the same words.
pub(crate) fn scan<'a>(
    body: &'a [u8],
    what: &str,
    max: usize,
    path: &[&str],
    max_elements: usize,
) -> Result<json_scan::Scanned<'a>> {
    at_most_bytes(body, what, max)?;
    json_scan::scan(body, path, MAX_DEPTH, max_elements).map_err(|e| {
        let at = e.at;
        Error::Invalid(match e.cause {
            json_scan::Cause::TooDeep => {
                format!("{what}: the body nests deeper than {MAX_DEPTH} levels (at byte {at})")
            }
            json_scan::Cause::TooMany => {
                format!("{what}: json: request body: a list holds at most {max_elements} elements (at byte {at})")
            }
            _ => format!("{what}: json: request body: {e}"),
        })
    })
}

/// The deepest nesting of arrays and objects a body may have: serde_json's own limit for what it
/// builds, and several times what any request of the client nests (a raid's report, the deepest,
/// about a dozen).
pub(crate) const MAX_DEPTH: usize = 128;

/// Where `json` first opens an array or object deeper than `max`, if it does (outside strings; the
/// text need not be valid JSON, the parse that follows judges that).
///
/// Eight bytes at a time: a word's quotes, backslashes and brackets are found with a few integer
/// operations, and only those bytes are looked at one by one (most of a body is names, ids and
/// numbers). Inside a string a backslash escapes the byte after it, whichever word that is in, so an
/// escaped quote does not end the string.
fn too_deep(json: &[u8], max: usize) -> Option<usize> {
    let (mut depth, mut in_string) = (0usize, false);
    // The next byte that counts: one past an escaped byte, or the start.
    let mut from = 0usize;
    let mut words = json.chunks_exact(8);
    let mut base = 0usize;
    let mut scan = |word: u64, base: usize| -> Option<usize> {
        let mut marks = special_bytes(word);
        while marks != 0 {
            let at = base + (marks.trailing_zeros() / 8) as usize;
            marks &= marks - 1;
            if at < from {
                continue;
            }
            match (in_string, json[at]) {
                (true, b'\\') => from = at + 2,
                (true, b'"') => in_string = false,
                (true, _) => {}
                (false, b'"') => in_string = true,
                (false, b'[' | b'{') => {
                    depth += 1;
                    if depth > max {
                        return Some(at);
                    }
                }
                (false, b']' | b'}') => depth = depth.saturating_sub(1),
                (false, _) => {}
            }
        }
        None
    };
    for word in words.by_ref() {
        let word = u64::from_le_bytes(word.try_into().expect("chunks of 8"));
        if let Some(at) = scan(word, base) {
            return Some(at);
        }
        base += 8;
    }
    // The last few bytes, padded with zeros (never special).
    let mut tail = [0u8; 8];
    let rest = words.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    scan(u64::from_le_bytes(tail), base)
}

/// A word with bit 7 of each byte set where that byte is `"`, `\`, `[`, `]`, `{` or `}`, and no
/// other bit set.
fn special_bytes(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const LOW7: u64 = ONES * 0x7f;
    // Bit 7 of each byte of the answer: set where that byte of `x` is zero. Exact, unlike the usual
    // `(x - ONES) & !x` (whose borrow can mark the byte above a zero): each byte's sum stays below
    // 0x100, so nothing carries into the next.
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let eq = |byte: u8| zero(word ^ (ONES * u64::from(byte)));
    // `[` and `{` differ only in bit 5 (0x5b, 0x7b), as do `]` and `}`; no other byte sets to those.
    let folded = word | (ONES * 0x20);
    let bracket = |byte: u8| zero(folded ^ (ONES * u64::from(byte)));
    eq(b'"') | eq(b'\\') | bracket(b'{') | bracket(b'}')
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

/// An optional string that borrows from the body when it has no escapes
/// (`#[serde(borrow, default, deserialize_with = "input::optional_text")]`): serde borrows a bare
/// `Cow<str>` member when told to, but fills an `Option<Cow<str>>` with a copy.
pub(crate) fn optional_text<'de: 'a, 'a, D>(deserializer: D) -> std::result::Result<Option<Cow<'a, str>>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(Option::<Text<'a>>::deserialize(deserializer)?.map(|text| text.0))
}

/// A string member as the body has it: a bare `Cow<str>`, so serde borrows it (see [`optional_text`]).
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

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
        // `parse` refuses such a body before parsing it, with the same error as ever.
        let err = parse_text::<serde_json::Value>(deep(100_000).as_bytes(), "route", 1 << 20).expect_err("too deep");
        assert!(err.to_string().contains("route: the body nests deeper than 128 levels (at byte 142)"), "{err}");
    }

    /// The byte-at-a-time scan the word-at-a-time one replaced: what it must agree with.
    fn too_deep_bytewise(json: &[u8], max: usize) -> Option<usize> {
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

    #[test]
    fn an_escaped_quote_does_not_end_a_string_at_any_offset_in_a_word() {
        // A string holding an escaped quote and brackets, then real nesting one level too deep: the
        // escape, the quote and the brackets fall at every offset of an 8-byte word in turn.
        for pad in 0..16 {
            let inside = format!(r#"{}\"{}"#, "x".repeat(pad), "[".repeat(MAX_DEPTH + 5));
            let body = format!(r#"["{inside}",{}{}]"#, "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            let at = too_deep(body.as_bytes(), MAX_DEPTH);
            assert_eq!(at, Some(body.len() - MAX_DEPTH - 2), "pad {pad}: only the real nesting counts");
            assert_eq!(at, too_deep_bytewise(body.as_bytes(), MAX_DEPTH));
            // An escaped backslash does end the string before the quote: the brackets after it count.
            let body = format!(r#"["{}\\",{}]"#, "x".repeat(pad), "[".repeat(MAX_DEPTH));
            assert_eq!(too_deep(body.as_bytes(), MAX_DEPTH), too_deep_bytewise(body.as_bytes(), MAX_DEPTH));
            assert!(too_deep(body.as_bytes(), MAX_DEPTH).is_some(), "pad {pad}: {body}");
        }
    }

    #[test]
    fn the_word_scan_agrees_with_the_byte_scan() {
        // Pseudo-random texts over the bytes that matter (and a few that do not), at small bounds so
        // that both answers occur.
        let alphabet = b"[]{}\"\\\\ax:,|;\x5b\x7b\x00\xff";
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..20_000 {
            let len = round % 70;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            for max in [1, 3] {
                assert_eq!(too_deep(&text, max), too_deep_bytewise(&text, max), "{:?}", String::from_utf8_lossy(&text));
            }
        }
    }

    #[derive(Deserialize)]
    struct Borrowing<'a> {
        #[serde(borrow)]
        id: Cow<'a, str>,
        #[serde(borrow, default, deserialize_with = "optional_text")]
        parent: Option<Cow<'a, str>>,
    }

    #[test]
    fn strings_borrow_from_the_body_unless_escaped() {
        let body = br#"{"id":"abc","parent":"p\u0041"}"#;
        let parsed: Borrowing = parse_text(body, "route", 1024).expect("parses");
        assert!(matches!(parsed.id, Cow::Borrowed("abc")));
        assert_eq!(parsed.parent.as_deref(), Some("pA"));
        let parsed: Borrowing = parse_text(br#"{"id":"abc","parent":"p"}"#, "route", 1024).expect("parses");
        assert!(matches!(parsed.parent, Some(Cow::Borrowed("p"))));
        let parsed: Borrowing = parse_text(br#"{"id":"abc","parent":null}"#, "route", 1024).expect("parses");
        assert!(parsed.parent.is_none());
        let err = parse_text::<Borrowing>(b"{\"id\":\"\xff\"}", "route", 1024).err().expect("not UTF-8");
        assert!(err.to_string().contains("not UTF-8 at byte 7"), "{err}");
        let err = parse_text::<Borrowing>(b"{}", "route", 1).err().expect("too large");
        assert!(matches!(err, Error::TooLarge(_)), "{err}");
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
