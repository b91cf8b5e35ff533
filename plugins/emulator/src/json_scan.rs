//! One validating pass over a JSON body that also finds, without building anything, the elements of
//! one array in it (a raid's end: `results.profile.Inventory.items`, the whole stash) and each
//! element's top-level `_id` and `parentId`.
//!
//! Why it exists: a raid's end sends a megabyte of JSON, 99.6% of it that array, and reads only the
//! raid's few items of it; every other item matters only for its id and parent. A general-purpose
//! parser costs too much just to walk past them in wasm: serde_json skipping the body as `IgnoredAny`
//! takes ~1.4 ms a megabyte (its string skipping goes a `usize`, 4 bytes, at a time on wasm32), and
//! simd-json with simd128 more (its tape alone 2.1 ms); the end's budget for the whole parse is about
//! 2 ms. This scanner goes eight bytes at a time through strings (a `u64`: wasm has native 64-bit
//! integers), as `too_deep` in input.rs does, and looks at a string's bytes one by one only where a quote,
//! a backslash or a control character is; names, numbers and punctuation go a byte at a time, with
//! the state in locals and no `memcmp` call (a byte loop in wasm). Over a real 1 MB end body in
//! wasmtime it takes ~1.46 ms (~680 MB/s), ids and parents of its 4873 items included.
//!
//! What it guarantees, when it answers `Ok`: the body is UTF-8 (one `std::str::from_utf8`) and one
//! JSON text per RFC 8259 — structure, closed strings, valid escapes (a `\u` escape is four hex
//! digits, as the grammar has it; whether it pairs as a surrogate is for whoever decodes the string),
//! no raw control character in a string, well-formed numbers (of any magnitude) and literals, nothing
//! after the value but whitespace — nesting no deeper than the bound it is given; and the spans it
//! reports are of that text. It accepts exactly what `serde_json::from_str::<IgnoredAny>` accepts
//! but for nesting, which serde_json does not bound when it skips (the property test in
//! `json_scan/tests.rs` holds it to that). Every loop advances through the input, so it ends within
//! the input's length, and it does not panic on any input; an error names the byte offset and what
//! was wrong there.
//!
//! Member names are compared unescaped (`"it\u0065ms"` is `items`, as serde_json reads it); the first
//! array at the path is the one reported (a name given twice is for the parse that follows to refuse).

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// What [`scan`] found in a valid body.
#[derive(Debug)]
pub(crate) struct Scanned<'a> {
    /// The body as text.
    pub(crate) text: &'a str,
    /// The span of the array at the path, brackets included, if the body has one there.
    pub(crate) array: Option<Range<usize>>,
    /// That array's elements, in order.
    pub(crate) elements: Vec<Element>,
}

/// An element of the array at the path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Element {
    /// The element's text.
    pub(crate) span: Range<usize>,
    /// Whether it is an object (else `id` and `parent` are [`Member::Absent`]).
    pub(crate) object: bool,
    /// Its top-level `_id` member.
    pub(crate) id: Member,
    /// Its top-level `parentId` member.
    pub(crate) parent: Member,
}

/// A top-level member of an element, as far as the scan tells it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Member {
    Absent,
    Null,
    /// A string: the span of what is between its quotes, and whether that has a backslash.
    Text(Range<usize>, bool),
    /// Another kind of value, or the name given more than once.
    Other,
}

impl Member {
    /// The string's value: borrowed from `text` unless escaped (then decoded; `None` when it does
    /// not decode, a lone surrogate). `None` for anything but a string.
    pub(crate) fn text<'a>(&self, text: &'a str) -> Option<Cow<'a, str>> {
        match self {
            Member::Text(span, false) => text.get(span.clone()).map(Cow::Borrowed),
            Member::Text(span, true) => unescape(text.get(span.start.saturating_sub(1)..span.end + 1)?).map(Cow::Owned),
            _ => None,
        }
    }
}

/// Why a body was refused, and where.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScanError {
    /// The byte offset of the fault.
    pub(crate) at: usize,
    pub(crate) cause: Cause,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cause {
    /// Not UTF-8.
    Utf8,
    /// Not JSON: what was expected or wrong.
    Syntax(&'static str),
    /// An array or object opens deeper than the bound.
    TooDeep,
    /// The array at the path has more elements than the bound.
    TooMany,
}

impl fmt::Display for ScanError {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause {
            Cause::Utf8 => write!(out, "not UTF-8 at byte {}", self.at),
            Cause::Syntax(what) => write!(out, "{what} at byte {}", self.at),
            Cause::TooDeep => write!(out, "nesting too deep at byte {}", self.at),
            Cause::TooMany => write!(out, "too many elements at byte {}", self.at),
        }
    }
}

/// Checks `body` is one JSON text nesting at most `max_depth` arrays and objects, and finds the
/// array at member `path` (object members from the top, e.g. `["results", "profile"]`) with its
/// elements, at most `max_elements` of them.
pub(crate) fn scan<'a>(
    body: &'a [u8],
    path: &[&str],
    max_depth: usize,
    max_elements: usize,
) -> Result<Scanned<'a>, ScanError> {
    let text = std::str::from_utf8(body).map_err(|e| ScanError { at: e.valid_up_to(), cause: Cause::Utf8 })?;
    let (array, elements) = run(body, path, max_depth, max_elements)?;
    Ok(Scanned { text, array, elements })
}

/// No depth: the array is not open (depths are at most `max_depth + 1`, far below; `+ 1` stays exact).
const NONE: usize = usize::MAX >> 1;

type Scan<T> = Result<T, ScanError>;

fn fail<T>(at: usize, what: &'static str) -> Scan<T> {
    Err(ScanError { at, cause: Cause::Syntax(what) })
}

/// Past whitespace from `pos`.
#[inline(always)]
fn ws(b: &[u8], mut pos: usize) -> usize {
    while let Some(&c) = b.get(pos) {
        // Nothing above a space is whitespace: one comparison for the usual byte.
        if c > b' ' || !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        pos += 1;
    }
    pos
}

/// A string's rest, from after its opening quote (`pos`) to after its closing one; whether it has an
/// escape. Eight bytes at a time until a quote, backslash or control character.
#[inline(always)]
fn string(b: &[u8], mut pos: usize) -> Scan<(usize, bool)> {
    let mut escaped = false;
    loop {
        // Skip words with nothing special in them.
        while let Some(word) = b.get(pos..pos + 8) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            let marks = string_specials(u64::from_le_bytes(bytes));
            if marks != 0 {
                pos += (marks.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
        // Byte at a time from the special byte (or through the last few bytes).
        let Some(&byte) = b.get(pos) else { return fail(pos, "unterminated string") };
        match byte {
            b'"' => return Ok((pos + 1, escaped)),
            b'\\' => {
                escaped = true;
                pos = escape(b, pos)?;
            }
            0..0x20 => return fail(pos, "control character in a string"),
            _ => pos += 1,
        }
    }
}

/// An escape, from its backslash at `at`; answers the position after it.
#[cold]
fn escape(b: &[u8], at: usize) -> Scan<usize> {
    match b.get(at + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 2),
        Some(b'u') => {
            for i in 0..4 {
                if !b.get(at + 2 + i).is_some_and(u8::is_ascii_hexdigit) {
                    return fail(at + 2 + i, "a \\u escape needs four hex digits");
                }
            }
            Ok(at + 6)
        }
        Some(_) => fail(at + 1, "invalid escape"),
        None => fail(at + 1, "unterminated string"),
    }
}

/// `true`, `false` or `null` at `pos` (the first byte told which `word` to expect); answers the
/// position after it. Compared as one number: a `memcmp` call costs more than the word in wasm.
#[inline(always)]
fn literal(b: &[u8], pos: usize, word: &[u8; 5]) -> Scan<usize> {
    let len = if word[4] == b' ' { 4 } else { 5 };
    let four = |at: usize| b.get(at..at + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
    let want = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
    if four(pos) != Some(want) || (len == 5 && b.get(pos + 4) != Some(&word[4])) {
        return fail(pos, "expected `true`, `false` or `null`");
    }
    Ok(pos + len)
}

/// Whether `name` is `wanted`, without a `memcmp` call for names of at most eight bytes.
#[inline(always)]
fn same(name: &[u8], wanted: &[u8]) -> bool {
    if name.len() != wanted.len() {
        return false;
    }
    if name.len() > 8 {
        return name == wanted;
    }
    let word = |bytes: &[u8]| {
        let mut padded = [0u8; 8];
        padded[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(padded)
    };
    word(name) == word(wanted)
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` from `pos`; answers the position after it.
#[inline(always)]
fn number(b: &[u8], mut pos: usize) -> Scan<usize> {
    let digit = |pos: usize| b.get(pos).is_some_and(u8::is_ascii_digit);
    let digits = |mut pos: usize| {
        while digit(pos) {
            pos += 1;
        }
        pos
    };
    if b.get(pos) == Some(&b'-') {
        pos += 1;
    }
    match b.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => pos = digits(pos + 1),
        _ => return fail(pos, "expected a digit"),
    }
    match b.get(pos) {
        Some(b'.' | b'e' | b'E') => {}
        _ => return Ok(pos),
    }
    if b.get(pos) == Some(&b'.') {
        pos += 1;
        if !digit(pos) {
            return fail(pos, "expected a digit after the decimal point");
        }
        pos = digits(pos);
    }
    if let Some(b'e' | b'E') = b.get(pos) {
        pos += 1;
        if let Some(b'+' | b'-') = b.get(pos) {
            pos += 1;
        }
        if !digit(pos) {
            return fail(pos, "expected a digit in the exponent");
        }
        pos = digits(pos);
    }
    Ok(pos)
}

/// The whole text: values, each followed by what closes containers or separates members. The state
/// is in locals (not a struct behind a reference) so that it stays in registers.
fn run(b: &[u8], path: &[&str], max_depth: usize, max_elements: usize) -> Scan<(Option<Range<usize>>, Vec<Element>)> {
    let mut pos = 0;
    // `true` for an object. Bounded by `max_depth`.
    let mut stack: Vec<bool> = Vec::with_capacity(max_depth.min(256) + 1);
    // How many of the open containers, from the outermost, are objects at a prefix of the path.
    let mut on_path = 0usize;
    // Whether the value about to start is at the path's prefix as long as the open containers.
    let mut pending = true;
    // While the array at the path is open: the depth (open containers) of its elements.
    let mut elem_depth = NONE;
    // The member of an element object whose value is about to start: 1 `_id`, 2 `parentId`, 0 other.
    let mut field = 0u8;
    let mut array: Option<Range<usize>> = None;
    let mut elements: Vec<Element> = Vec::new();
    // Records an element's `_id` (1) or `parentId` (2); a second one makes it `Other`.
    let set = |elements: &mut Vec<Element>, field: u8, value: Member| {
        if let Some(element) = elements.last_mut() {
            let slot = if field == 1 { &mut element.id } else { &mut element.parent };
            *slot = if *slot == Member::Absent { value } else { Member::Other };
        }
    };
    'value: loop {
        pos = ws(b, pos);
        let start = pos;
        let depth = stack.len();
        let first = b.get(start).copied();
        if depth == elem_depth {
            if elements.len() == max_elements {
                return Err(ScanError { at: start, cause: Cause::TooMany });
            }
            let object = first == Some(b'{');
            elements.push(Element { span: start..start, object, id: Member::Absent, parent: Member::Absent });
        }
        // Taken once: a value in an array inside an element is no member of it.
        let member = if depth == elem_depth + 1 { std::mem::take(&mut field) } else { 0 };
        let Some(first) = first else { return fail(start, "expected a value, found the end") };
        let kind = match first {
            b'"' => {
                let (end, escaped) = string(b, pos + 1)?;
                pos = end;
                Member::Text(start + 1..pos - 1, escaped)
            }
            b'{' | b'[' => {
                if depth >= max_depth {
                    return Err(ScanError { at: start, cause: Cause::TooDeep });
                }
                let object = first == b'{';
                if pending {
                    if depth == path.len() {
                        if !object && array.is_none() {
                            array = Some(start..start);
                            elem_depth = depth + 1;
                        }
                    } else if object {
                        on_path = depth + 1;
                    }
                }
                pending = false;
                stack.push(object);
                pos = ws(b, pos + 1);
                let close = if object { b'}' } else { b']' };
                if b.get(pos) != Some(&close) {
                    if object {
                        (pos, pending, field) = key(b, pos, stack.len(), on_path, path, elem_depth)?;
                    }
                    if member != 0 {
                        set(&mut elements, member, Member::Other);
                    }
                    continue 'value;
                }
                // Empty: closed at once (below).
                pos += 1;
                stack.pop();
                on_path = on_path.min(stack.len());
                if stack.len() + 1 == elem_depth {
                    if let Some(array) = &mut array {
                        array.end = pos;
                    }
                    elem_depth = NONE;
                }
                Member::Other
            }
            b'-' | b'0'..=b'9' => {
                pos = number(b, pos)?;
                Member::Other
            }
            b't' => {
                pos = literal(b, pos, b"true ")?;
                Member::Other
            }
            b'f' => {
                pos = literal(b, pos, b"false")?;
                Member::Other
            }
            b'n' => {
                pos = literal(b, pos, b"null ")?;
                Member::Null
            }
            _ => return fail(start, "expected a value"),
        };
        if member != 0 {
            set(&mut elements, member, kind);
        }
        pending = false;
        // After a value: a separator, a close (then after that container's value), or the end.
        loop {
            if stack.len() == elem_depth
                && let Some(element) = elements.last_mut()
            {
                element.span.end = pos;
            }
            let Some(&object) = stack.last() else {
                pos = ws(b, pos);
                if pos != b.len() {
                    return fail(pos, "trailing characters after the value");
                }
                return Ok((array, elements));
            };
            pos = ws(b, pos);
            match b.get(pos) {
                Some(b',') => {
                    pos += 1;
                    if object {
                        (pos, pending, field) = key(b, pos, stack.len(), on_path, path, elem_depth)?;
                    }
                    continue 'value;
                }
                Some(b'}') if object => {}
                Some(b']') if !object => {}
                _ if object => return fail(pos, "expected `,` or `}`"),
                _ => return fail(pos, "expected `,` or `]`"),
            }
            // The container closes.
            pos += 1;
            stack.pop();
            on_path = on_path.min(stack.len());
            if stack.len() + 1 == elem_depth {
                if let Some(array) = &mut array {
                    array.end = pos;
                }
                elem_depth = NONE;
            }
        }
    }
}

/// A member's name and its colon from `pos`, in an object `depth` deep. Answers the position after
/// the colon, whether the value after it is on the path (`on_path` of the open containers are), and
/// whether it is an element's `_id` (1) or `parentId` (2) (elements are `elem_depth` deep).
#[inline(always)]
fn key(
    b: &[u8],
    pos: usize,
    depth: usize,
    on_path: usize,
    path: &[&str],
    elem_depth: usize,
) -> Scan<(usize, bool, u8)> {
    let pos = ws(b, pos);
    if b.get(pos) != Some(&b'"') {
        return fail(pos, "expected a member name (a string)");
    }
    let start = pos + 1;
    let (end, escaped) = string(b, start)?;
    let (mut pending, mut field) = (false, 0);
    let on_path = on_path == depth && depth <= path.len();
    if on_path || depth == elem_depth + 1 {
        let name = &b[start..end - 1];
        let is = |wanted: &str| {
            if escaped {
                // The span is valid UTF-8 (the body is) between quotes: decoded as serde_json does.
                let quoted = std::str::from_utf8(&b[start - 1..end]).ok();
                quoted.and_then(unescape).is_some_and(|name| name == wanted)
            } else {
                same(name, wanted.as_bytes())
            }
        };
        pending = on_path && is(path[depth - 1]);
        if depth == elem_depth + 1 {
            field = if is("_id") {
                1
            } else if is("parentId") {
                2
            } else {
                0
            };
        }
    }
    let pos = ws(b, end);
    if b.get(pos) != Some(&b':') {
        return fail(pos, "expected `:` after a member name");
    }
    Ok((pos + 1, pending, field))
}

/// A word with bit 7 of each byte set where that byte is `"`, `\` or below 0x20, and no other bit.
fn string_specials(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const LOW7: u64 = ONES * 0x7f;
    // Exact per byte, as in input.rs's `special_bytes`: no borrow crosses into the next byte.
    let zero = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | zero(word & (ONES * 0xe0))
}

/// A JSON string's value, quotes included in `quoted`; `None` when it does not decode (a lone
/// surrogate). Escaped strings are rare in a report, so serde_json decodes them.
fn unescape(quoted: &str) -> Option<String> {
    serde_json::from_str(quoted).ok()
}

#[cfg(test)]
mod tests;
