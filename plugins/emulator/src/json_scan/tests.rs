//! The scanner against serde_json: it must accept exactly what serde_json accepts (as `IgnoredAny`,
//! after one UTF-8 check), and find the array's elements, ids and parents where serde_json finds them.
//!
//! The one divergence, on purpose: serde_json skips a value (`IgnoredAny`) at any nesting, the scanner
//! refuses one deeper than its bound, as the game always has (`input::MAX_DEPTH`, 128). The reference
//! below is serde_json's answer and that bound. Numbers of any magnitude (`1e400`) and `\u` escapes
//! that are lone surrogates are grammatical JSON, and serde_json skips them too: both accept them, and
//! a string the game reads that holds a lone surrogate is refused when it is decoded.

use super::*;
/// The game's nesting bound (input.rs's `MAX_DEPTH`), written out: the scanner takes it as an argument.
const MAX_DEPTH: usize = 128;
use proptest::prelude::*;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

const PATH: [&str; 4] = ["results", "profile", "Inventory", "items"];

fn scan_items(text: &[u8]) -> Result<Scanned<'_>, ScanError> {
    scan(text, &PATH, MAX_DEPTH, 60_000)
}

/// An object's members in order, names as bytes (decoded without checking surrogates, so a name
/// that is a lone surrogate does not fail the object), values as their text.
struct Entries<'a>(Vec<(Vec<u8>, &'a RawValue)>);

struct Name(Vec<u8>);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name;
            fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
                out.write_str("a name")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Name, E> {
                Ok(Name(v.to_vec()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Name, E> {
                Ok(Name(v.as_bytes().to_vec()))
            }
        }
        d.deserialize_bytes(V)
    }
}

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
                out.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((name, value)) = map.next_entry::<Name, &'de RawValue>()? {
                    out.push((name.0, value));
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// An array's elements as their text.
fn elements_of(raw: &RawValue) -> Vec<&RawValue> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<&'de RawValue>;
        fn expecting(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
            out.write_str("an array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(element) = seq.next_element()? {
                out.push(element);
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(raw.get());
    de.deserialize_seq(V).expect("an array serde_json accepted")
}

fn offset(text: &str, raw: &RawValue) -> Range<usize> {
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    start..start + raw.get().len()
}

/// The first array at `path` in the text's order, as serde_json finds it.
fn find<'a>(raw: &'a RawValue, path: &[&str]) -> Option<&'a RawValue> {
    let Some((name, rest)) = path.split_first() else {
        return raw.get().starts_with('[').then_some(raw);
    };
    if !raw.get().starts_with('{') {
        return None;
    }
    let entries: Entries = serde_json::from_str(raw.get()).expect("an object serde_json accepted");
    entries.0.into_iter().filter(|(n, _)| n == name.as_bytes()).find_map(|(_, value)| find(value, rest))
}

/// What serde_json makes of an element's member `name`.
fn member(text: &str, entries: &Entries, name: &str) -> Member {
    let mut found = entries.0.iter().filter(|(n, _)| n == name.as_bytes());
    match (found.next(), found.next()) {
        (None, _) => Member::Absent,
        (Some(_), Some(_)) => Member::Other,
        (Some((_, raw)), None) if raw.get() == "null" => Member::Null,
        (Some((_, raw)), None) if raw.get().starts_with('"') => {
            let span = offset(text, raw);
            Member::Text(span.start + 1..span.end - 1, raw.get().contains('\\'))
        }
        _ => Member::Other,
    }
}

/// Nesting deeper than `max`, counted byte by byte (`input`'s reference scan).
fn deeper_than(json: &[u8], max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in json {
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
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// serde_json's verdict on `bytes`, and what it finds at the path: `None` when it refuses.
fn reference(bytes: &[u8]) -> Option<(Option<Range<usize>>, Vec<Element>)> {
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str::<IgnoredAny>(text).ok()?;
    if deeper_than(bytes, MAX_DEPTH) {
        return None;
    }
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r']);
    let root: &RawValue = serde_json::from_str(trimmed).ok()?;
    let Some(array) = find(root, &PATH) else { return Some((None, Vec::new())) };
    let elements = elements_of(array)
        .into_iter()
        .map(|raw| {
            let span = offset(text, raw);
            if raw.get().starts_with('{') {
                let entries: Entries = serde_json::from_str(raw.get()).expect("an object");
                let (id, parent) = (member(text, &entries, "_id"), member(text, &entries, "parentId"));
                Element { span, object: true, id, parent }
            } else {
                Element { span, object: false, id: Member::Absent, parent: Member::Absent }
            }
        })
        .collect();
    Some((Some(offset(text, array)), elements))
}

fn agree(bytes: &[u8]) -> Result<(), TestCaseError> {
    let ours = scan_items(bytes);
    let theirs = reference(bytes);
    let shown = String::from_utf8_lossy(bytes);
    match (ours, theirs) {
        (Ok(scanned), Some((array, elements))) => {
            prop_assert_eq!(scanned.array, array, "{}", shown);
            prop_assert_eq!(scanned.elements, elements, "{}", shown);
        }
        (Err(_), None) => {}
        (Ok(_), None) => prop_assert!(false, "the scanner accepts what serde_json refuses: {}", shown),
        (Err(e), Some(_)) => prop_assert!(false, "the scanner refuses ({}) what serde_json accepts: {}", e, shown),
    }
    Ok(())
}

/// A JSON value as text is built: members may repeat, names and numbers are as written.
#[derive(Debug, Clone)]
enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    fn write(&self, out: &mut String, spaced: bool) {
        let gap = if spaced { " \n\t" } else { "" };
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Num(n) => out.push_str(n),
            J::Str(s) => out.push_str(s),
            J::Arr(items) => {
                out.push('[');
                for (n, item) in items.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(gap);
                    item.write(out, spaced);
                }
                out.push_str(gap);
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (n, (name, value)) in members.iter().enumerate() {
                    if n > 0 {
                        out.push(',');
                    }
                    out.push_str(gap);
                    out.push_str(name);
                    out.push_str(gap);
                    out.push(':');
                    value.write(out, spaced);
                }
                out.push_str(gap);
                out.push('}');
            }
        }
    }
}

/// A string literal, quotes included: serde_json's escaping of random text, or one written with
/// escapes serde_json would not use (`\u0069`, `\/`).
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_\"\\\\/\u{0}-\u{1f}\u{e9}\u{1F600}-]{0,12}"
            .prop_map(|s| serde_json::to_string(&s).expect("a string")),
        Just(r#""_\u0069d""#.to_owned()),
        Just(r#""parent\u0049d""#.to_owned()),
        Just(r#""it\u0065ms""#.to_owned()),
        Just(r#""a\/b\ud83d\ude00""#.to_owned()),
        Just(r#""\ud800""#.to_owned()),
    ]
}

/// A member name: often one the scanner looks for.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["_id", "parentId", "_tpl", "upd", "items"]).prop_map(|n| format!("\"{n}\"")),
        1 => string(),
    ]
}

fn number() -> impl Strategy<Value = String> {
    "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?"
}

fn value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        number().prop_map(J::Num),
        string().prop_map(J::Str),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(J::Arr),
            prop::collection::vec((name(), inner), 0..5).prop_map(J::Obj),
        ]
    })
}

/// An item: `_id` and `parentId` mostly strings, sometimes missing, another kind, or given twice.
fn item() -> impl Strategy<Value = J> {
    let id = prop_oneof![6 => string().prop_map(J::Str), 1 => value()];
    let members = prop::collection::vec((name(), value()), 0..3);
    (id.clone(), id, members, 0..4u8, 0..4u8).prop_map(|(id, parent, mut members, id_at, parent_at)| {
        // 3: absent; otherwise at a position among the other members.
        if parent_at < 3 {
            members.insert((parent_at as usize).min(members.len()), ("\"parentId\"".into(), parent));
        }
        if id_at < 3 {
            members.insert((id_at as usize).min(members.len()), ("\"_id\"".into(), id));
        }
        J::Obj(members)
    })
}

/// `value` inside `levels` arrays.
fn nested(levels: usize, value: J) -> J {
    (0..levels).fold(value, |inner, _| J::Arr(vec![inner]))
}

/// A report: the items array at the path among other members, maybe with a deep value in it (the
/// array is 5 levels deep, its elements 6).
fn document() -> impl Strategy<Value = J> {
    let items = prop::collection::vec(prop_oneof![5 => item(), 1 => value()], 0..6);
    let deep = prop_oneof![3 => Just(0usize), 1 => 118..128usize];
    (items, deep, value(), value(), any::<bool>()).prop_map(|(mut items, deep, other, sibling, escaped)| {
        if deep > 0 {
            items.push(nested(deep, J::Null));
        }
        let name = if escaped { r#""it\u0065ms""# } else { "\"items\"" };
        let inventory = J::Obj(vec![("\"equipment\"".into(), other), (name.into(), J::Arr(items))]);
        let profile = J::Obj(vec![("\"Inventory\"".into(), inventory)]);
        let results = J::Obj(vec![("\"result\"".into(), sibling), ("\"profile\"".into(), profile)]);
        J::Obj(vec![("\"serverId\"".into(), J::Str("\"s\"".into())), ("\"results\"".into(), results)])
    })
}

/// A change to a text: most make it invalid, some leave it valid elsewhere.
#[derive(Debug, Clone)]
enum Corruption {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, &'static str),
}

fn corruption() -> impl Strategy<Value = Corruption> {
    let inserted = prop::sample::select(vec![
        "\u{0}", "\u{1f}", "\n", "\\", "\\u", "\\ud800", "\\x", "[", "]", "{", "}", "\"", ",", ":", " ", "-", "0", ".",
        "e", "tru", "\u{7f}", "\u{e9}",
    ]);
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Corruption::Flip(at, byte)),
        any::<usize>().prop_map(Corruption::Truncate),
        (any::<usize>(), inserted).prop_map(|(at, what)| Corruption::Insert(at, what)),
    ]
}

fn corrupt(mut text: Vec<u8>, corruption: &Corruption) -> Vec<u8> {
    let len = text.len().max(1);
    match *corruption {
        Corruption::Flip(at, byte) => {
            if let Some(b) = text.get_mut(at % len) {
                *b = byte;
            }
        }
        Corruption::Truncate(at) => text.truncate(at % len),
        Corruption::Insert(at, what) => {
            let at = at % (text.len() + 1);
            text.splice(at..at, what.bytes());
        }
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_serde_json_on_reports(doc in document(), spaced in any::<bool>(),
                                        changes in prop::collection::vec(corruption(), 0..3)) {
        let mut text = String::new();
        doc.write(&mut text, spaced);
        agree(text.as_bytes())?;
        let mut bytes = text.into_bytes();
        for change in &changes {
            bytes = corrupt(bytes, change);
            agree(&bytes)?;
        }
    }

    #[test]
    fn agrees_with_serde_json_on_any_value(value in value(), spaced in any::<bool>(),
                                          changes in prop::collection::vec(corruption(), 0..3)) {
        let mut text = String::new();
        value.write(&mut text, spaced);
        agree(text.as_bytes())?;
        let mut bytes = text.into_bytes();
        for change in &changes {
            bytes = corrupt(bytes, change);
            agree(&bytes)?;
        }
    }
}

#[test]
fn finds_the_items_their_ids_and_parents() {
    let body = br#" {"results":{"x":[1],"profile":{"Inventory":{"items":[ {"_id":"a","parentId":null,"upd":{"_id":5}},
        {"parentId":"a","_id":"b\u0041"}, 7, {"_id":1,"parentId":"p","parentId":"q"} ] }}}} "#;
    let scanned = scan_items(body).expect("valid");
    let text = scanned.text;
    let array = scanned.array.clone().expect("found");
    assert!(text[array].starts_with("[ {\"_id\":\"a\""));
    let [a, b, seven, last] = &scanned.elements[..] else { panic!("four elements: {:?}", scanned.elements) };
    assert_eq!(a.id.text(text).as_deref(), Some("a"));
    assert_eq!(a.parent, Member::Null);
    assert_eq!(b.id.text(text).as_deref(), Some("bA"));
    assert!(matches!(b.id.text(text), Some(Cow::Owned(_))));
    assert_eq!(b.parent.text(text).as_deref(), Some("a"));
    assert_eq!(&text[seven.span.clone()], "7");
    assert!(!seven.object);
    assert_eq!((&last.id, &last.parent), (&Member::Other, &Member::Other), "a number; a name given twice");
}

#[test]
fn refusals_name_the_byte_and_the_fault() {
    let err = |text: &[u8]| scan_items(text).expect_err("refused").to_string();
    assert_eq!(err(br#"{"a":"x\qy"}"#), "invalid escape at byte 8");
    assert_eq!(err(b"{\"a\":\"x\x01\"}"), "control character in a string at byte 7");
    assert_eq!(err(br#"{"a":01}"#), "expected `,` or `}` at byte 6");
    assert_eq!(err(br#"{"a":1} x"#), "trailing characters after the value at byte 8");
    assert_eq!(err(br#"{"a":"#), "expected a value, found the end at byte 5");
    assert_eq!(err(br#"{"a":"abc"#), "unterminated string at byte 9");
    assert_eq!(err(b"[\"\xff\"]"), "not UTF-8 at byte 2");
    assert_eq!(err(br#"{"a":1.}"#), "expected a digit after the decimal point at byte 7");
    assert_eq!(err(br#"[nul]"#), "expected `true`, `false` or `null` at byte 1");
    let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(err(deep.as_bytes()), format!("nesting too deep at byte {MAX_DEPTH}"));
    let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(scan_items(ok.as_bytes()).is_ok(), "exactly the bound");
}

#[test]
fn the_array_is_bounded_while_it_is_read() {
    let body = format!(r#"{{"results":{{"profile":{{"Inventory":{{"items":[{}"#, "0,".repeat(1_000_000));
    let err = scan(body.as_bytes(), &PATH, MAX_DEPTH, 3).expect_err("too many");
    assert_eq!(err.cause, Cause::TooMany);
    assert_eq!(err.at, body.find('[').expect("an array") + 1 + 6);
}

#[test]
fn specials_are_found_at_every_offset_of_a_word() {
    for pad in 0..17 {
        let x = "x".repeat(pad);
        for (inside, ok) in [("\\\"", true), ("\\\\", true), ("\u{1}", false), ("\\q", false), ("\u{7f}", true)] {
            let body = format!(r#"["{x}{inside}{x}", "{x}"]"#);
            assert_eq!(scan_items(body.as_bytes()).is_ok(), ok, "{body:?}");
        }
    }
}
