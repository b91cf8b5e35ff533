//! Byte-level scanning of JSON text that has already been validated (by serde_json, at load or before a
//! patch): where an object's members' names and values start and end, and how deep a text nests.
//!
//! Hand-written because serde_json does not expose byte offsets, and offsets are what let an object be
//! indexed without copying or re-serializing its members: a member's value is a slice of its parent's
//! text. Every loop here is iterative, so no input can overflow the stack. The input is assumed valid;
//! on invalid input the functions still terminate and never panic (they stop at the end of the text).

use std::ops::Range;

/// One member of an object: the byte ranges of its name (quotes included) and of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MemberSpan {
    pub(crate) name: Range<usize>,
    pub(crate) value: Range<usize>,
}

fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && matches!(text[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// `i` is at an opening quote; answers the index just past the closing quote.
fn string_end(text: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    text.len()
}

/// `i` is at the first byte of a value; answers the index just past it.
fn value_end(text: &[u8], i: usize) -> usize {
    match text.get(i) {
        Some(b'"') => string_end(text, i),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut j = i;
            while j < text.len() {
                match text[j] {
                    b'"' => {
                        j = string_end(text, j);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            text.len()
        }
        _ => {
            let mut j = i;
            while j < text.len() && !matches!(text[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            j
        }
    }
}

/// The members of the object `text` (which starts with `{`), in document order.
pub(crate) fn object_members(text: &[u8]) -> Vec<MemberSpan> {
    let mut members = Vec::new();
    let mut i = skip_ws(text, 1);
    while i < text.len() && text[i] == b'"' {
        let name_end = string_end(text, i);
        let colon = skip_ws(text, name_end);
        let value_start = skip_ws(text, colon + 1);
        let end = value_end(text, value_start);
        members.push(MemberSpan { name: i..name_end, value: value_start..end });
        i = skip_ws(text, end);
        if text.get(i) == Some(&b',') {
            i = skip_ws(text, i + 1);
        }
    }
    members
}

/// How many levels of objects and arrays `text` nests (a scalar is 0).
pub(crate) fn nesting_depth(text: &[u8]) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i);
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// `text` without leading and trailing JSON whitespace.
pub(crate) fn trim(text: &[u8]) -> Range<usize> {
    let start = skip_ws(text, 0);
    let mut end = text.len();
    while end > start && matches!(text[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str) -> Vec<(&str, &str)> {
        object_members(text.as_bytes()).into_iter().map(|m| (&text[m.name], &text[m.value])).collect()
    }

    #[test]
    fn spans_of_every_kind_of_member() {
        let text = r#"{ "a" : 1 , "b\"}" :"x,}]\"" ,"c":{"d":[1,{"e":"]"}]},"f":[],"g":true,"h":null, "i": -1.5e3 }"#;
        assert_eq!(
            members(text),
            [
                (r#""a""#, "1"),
                (r#""b\"}""#, r#""x,}]\"""#),
                (r#""c""#, r#"{"d":[1,{"e":"]"}]}"#),
                (r#""f""#, "[]"),
                (r#""g""#, "true"),
                (r#""h""#, "null"),
                (r#""i""#, "-1.5e3"),
            ]
        );
        assert!(members("{}").is_empty());
        assert!(members("{ }").is_empty());
    }

    #[test]
    fn depth_counts_brackets_outside_strings() {
        assert_eq!(nesting_depth(b"1"), 0);
        assert_eq!(nesting_depth(br#"{"a":[{"b":"[[[["}]}"#), 3);
        assert_eq!(nesting_depth("[".repeat(500).as_bytes()), 500);
    }

    #[test]
    fn truncated_input_terminates() {
        for text in [r#"{"a":"#, r#"{"a":"unterminated"#, r#"{"a":[1,2"#, r#"{""#, "{"] {
            let _ = object_members(text.as_bytes());
            let _ = nesting_depth(text.as_bytes());
        }
    }
}
