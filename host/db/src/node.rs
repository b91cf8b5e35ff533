//! [`Node`]: one immutable value of the db tree, shared through `Arc` between every snapshot that has it.
//!
//! Two shapes:
//! - **Text**: a value exactly as it appears in `db.json` or in a patch: a `Bytes` slice of that text,
//!   never copied. An object in this shape is indexed the first time a path goes through it (names and
//!   value ranges, 32 bytes a member; a name → position map above [`LINEAR_MAX`] members), and a
//!   member's node is made, once, the first time it is reached. Until then a subtree costs nothing
//!   beyond its text.
//! - **Object**: an object a patch built. Its members live in persistent maps (`imbl`), so the next
//!   patch copies O(log n) of a 24 000-member object rather than all of it; its text is the
//!   concatenation of its members' texts, built on first read and then cached.
//!
//! What a reader must not break: a node never changes once published. Caches (`OnceLock`) only fill
//! in what is determined by the node's content, so every reader sees the same answer.

use super::scan;
use bytes::Bytes;
use imbl::{HashMap as PHashMap, OrdMap};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// Objects with at most this many members are searched linearly (comparing lengths first, then bytes),
/// larger ones get a hash map. A template's `_props` has about 55 members and there are tens of
/// thousands of templates: a map each would cost about 75 bytes a member, more than the text itself,
/// while a scan of 55 name ranges costs about a hundred nanoseconds.
const LINEAR_MAX: usize = 64;

/// One value of the tree.
#[derive(Debug)]
pub struct Node {
    repr: Repr,
}

#[derive(Debug)]
enum Repr {
    Text { text: Bytes, index: OnceLock<TextIndex> },
    Object { members: Members, text: OnceLock<Bytes> },
}

/// The index of an object held as text.
#[derive(Debug)]
struct TextIndex {
    entries: Vec<Entry>,
    /// Decoded name → position of its last occurrence (JSON's "last duplicate wins"), for large objects.
    by_name: Option<HashMap<Box<str>, u32>>,
    /// Whether a name may occur twice; when not, a linear search stops at the first match.
    may_repeat: bool,
}

/// One member of an object held as text: ranges into the object's text, and its node once made.
#[derive(Debug)]
struct Entry {
    name: [u32; 2],
    value: [u32; 2],
    node: OnceLock<Arc<Node>>,
}

/// The members of an object built by a patch, in order, in persistent maps.
#[derive(Clone, Debug, Default)]
pub(crate) struct Members {
    order: OrdMap<u64, (Arc<str>, Arc<Node>)>,
    by_name: PHashMap<Arc<str>, u64>,
    next: u64,
}

impl Members {
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Node>> {
        let seq = self.by_name.get(name)?;
        self.order.get(seq).map(|(_, node)| node)
    }

    /// Replaces a member in place, or appends a new one (the order `serde_json` keeps too).
    pub(crate) fn insert(&mut self, name: &str, node: Arc<Node>) {
        match self.by_name.get(name) {
            Some(&seq) => {
                let name = self.order.get(&seq).map_or_else(|| Arc::from(name), |(n, _)| n.clone());
                self.order.insert(seq, (name, node));
            }
            None => {
                let name: Arc<str> = Arc::from(name);
                let seq = self.next;
                self.next += 1;
                self.by_name.insert(name.clone(), seq);
                self.order.insert(seq, (name, node));
            }
        }
    }

    pub(crate) fn remove(&mut self, name: &str) {
        if let Some(seq) = self.by_name.remove(name) {
            self.order.remove(&seq);
        }
    }
}

/// What kind of JSON value a node is, for error messages.
pub(crate) fn kind_name(first_byte: Option<u8>) -> &'static str {
    match first_byte {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

impl Node {
    /// A node for valid, trimmed JSON text.
    pub(crate) fn from_text(text: Bytes) -> Node {
        Node { repr: Repr::Text { text, index: OnceLock::new() } }
    }

    /// An object node with these members.
    pub(crate) fn object(members: Members) -> Node {
        Node { repr: Repr::Object { members, text: OnceLock::new() } }
    }

    fn first_byte(&self) -> Option<u8> {
        match &self.repr {
            Repr::Text { text, .. } => text.first().copied(),
            Repr::Object { .. } => Some(b'{'),
        }
    }

    /// Whether this is an object.
    pub(crate) fn is_object(&self) -> bool {
        self.first_byte() == Some(b'{')
    }

    /// Whether this is JSON `null`.
    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.repr, Repr::Text { text, .. } if &text[..] == b"null")
    }

    /// "an object", "an array"…
    pub(crate) fn kind(&self) -> &'static str {
        kind_name(self.first_byte())
    }

    /// The JSON text of this value: a shared slice for text nodes (no copy), built once and cached for
    /// objects a patch made.
    pub fn text(&self) -> Bytes {
        match &self.repr {
            Repr::Text { text, .. } => text.clone(),
            Repr::Object { members, text } => text.get_or_init(|| build_text(members)).clone(),
        }
    }

    /// The member `name` of this object; `None` when this is not an object or has no such member.
    pub(crate) fn child(&self, name: &str) -> Option<Arc<Node>> {
        match &self.repr {
            Repr::Object { members, .. } => members.get(name).cloned(),
            Repr::Text { text, index } => {
                if text.first() != Some(&b'{') {
                    return None;
                }
                let index = index.get_or_init(|| TextIndex::build(text));
                let position = index.find(text, name)?;
                Some(index.node(text, position))
            }
        }
    }

    /// The member names of this object in document order, or `None` when it is not an object.
    pub(crate) fn keys(&self) -> Option<Vec<String>> {
        Some(self.pairs()?.into_iter().map(|(name, _)| name).collect())
    }

    /// The members of this object in order (a duplicate name once, with its last value).
    pub(crate) fn pairs(&self) -> Option<Vec<(String, Arc<Node>)>> {
        match &self.repr {
            Repr::Object { members, .. } => {
                Some(members.order.values().map(|(name, node)| (name.to_string(), node.clone())).collect())
            }
            Repr::Text { text, index } => {
                if text.first() != Some(&b'{') {
                    return None;
                }
                let index = index.get_or_init(|| TextIndex::build(text));
                let repeats = index.may_repeat || index.by_name.as_ref().is_some_and(|m| m.len() < index.entries.len());
                let mut seen = std::collections::HashSet::new();
                let mut out = Vec::with_capacity(index.entries.len());
                for (position, entry) in index.entries.iter().enumerate() {
                    let name = decode_name(text, entry.name);
                    // A repeated name is listed where it first occurs, with its last value (as
                    // serde_json's ordered map and `Members::insert` do).
                    if repeats && !seen.insert(name.clone()) {
                        continue;
                    }
                    let last = if repeats { index.find(text, &name).unwrap_or(position) } else { position };
                    out.push((name, index.node(text, last)));
                }
                Some(out)
            }
        }
    }

    /// Indexes this object, if it is one of at least `min_bytes` of text, and every member object below
    /// it of at least `min_bytes` down to `max_depth` levels, as the first paths through them would.
    /// Answers the objects indexed. For a db about to serve (a reload): the first request through a
    /// 20 MB table then does not pay for scanning it. Objects a patch built are already indexed; their
    /// members are visited.
    ///
    /// Iterative, and bounded in depth: `db.json` may nest without limit (validating it skips values
    /// without recursing), and a node made here is a node dropped later, which recurses. No path can
    /// reach below `max_depth` ([`crate::MAX_DEPTH`]), so nothing there is worth indexing in advance.
    pub(crate) fn warm(self: &Arc<Node>, min_bytes: usize, max_depth: usize) -> usize {
        let mut indexed = 0;
        let mut todo: Vec<(Arc<Node>, usize)> = vec![(self.clone(), 0)];
        while let Some((node, depth)) = todo.pop() {
            if depth > max_depth {
                continue;
            }
            match &node.repr {
                Repr::Object { members, .. } => {
                    todo.extend(members.order.values().map(|(_, child)| (child.clone(), depth + 1)));
                }
                Repr::Text { text, index } => {
                    if text.len() < min_bytes || text.first() != Some(&b'{') {
                        continue;
                    }
                    let index = index.get_or_init(|| TextIndex::build(text));
                    indexed += 1;
                    if depth == max_depth {
                        continue;
                    }
                    let large = index
                        .entries
                        .iter()
                        .enumerate()
                        .filter(|(_, e)| (e.value[1] - e.value[0]) as usize >= min_bytes);
                    todo.extend(large.map(|(position, _)| (index.node(text, position), depth + 1)));
                }
            }
        }
        indexed
    }

    /// This object's members in the persistent form a patch edits: a clone for an object a patch
    /// built (O(1)), a conversion for one held as text (O(n), once per object: the result is shared by
    /// every later version). `None` when this is not an object.
    pub(crate) fn members(&self) -> Option<Members> {
        match &self.repr {
            Repr::Object { members, .. } => Some(members.clone()),
            Repr::Text { .. } => {
                let mut members = Members::default();
                for (name, node) in self.pairs()? {
                    members.insert(&name, node);
                }
                Some(members)
            }
        }
    }
}

impl TextIndex {
    fn build(text: &Bytes) -> TextIndex {
        let span = |r: std::ops::Range<usize>| [r.start as u32, r.end as u32];
        let entries: Vec<Entry> = scan::object_members(text)
            .into_iter()
            .map(|m| Entry { name: span(m.name), value: span(m.value), node: OnceLock::new() })
            .collect();
        let may_repeat = entries.len() <= LINEAR_MAX && {
            let mut seen = std::collections::HashSet::with_capacity(entries.len());
            // An escaped name could equal another spelled differently: assume the worst.
            entries.iter().any(|e| {
                let raw = &text[e.name[0] as usize..e.name[1] as usize];
                raw.contains(&b'\\') || !seen.insert(raw)
            })
        };
        let by_name = (entries.len() > LINEAR_MAX).then(|| {
            let mut map = HashMap::with_capacity(entries.len());
            for (position, entry) in entries.iter().enumerate() {
                map.insert(decode_name(text, entry.name).into_boxed_str(), position as u32);
            }
            map
        });
        TextIndex { entries, by_name, may_repeat }
    }

    /// The position of the (last) member called `name`.
    fn find(&self, text: &[u8], name: &str) -> Option<usize> {
        match &self.by_name {
            Some(map) => map.get(name).map(|&p| p as usize),
            None if self.may_repeat => self.entries.iter().rposition(|e| name_is(text, e.name, name)),
            None => self.entries.iter().position(|e| name_is(text, e.name, name)),
        }
    }

    fn node(&self, text: &Bytes, position: usize) -> Arc<Node> {
        let entry = &self.entries[position];
        entry
            .node
            .get_or_init(|| {
                let [start, end] = entry.value;
                Arc::new(Node::from_text(text.slice(start as usize..end as usize)))
            })
            .clone()
    }
}

/// Whether the quoted name at `span` is `name`, decoding escapes only when there are any.
fn name_is(text: &[u8], span: [u32; 2], name: &str) -> bool {
    let (start, end) = (span[0] as usize + 1, (span[1] as usize).saturating_sub(1));
    let raw = text.get(start..end).unwrap_or_default();
    if raw.len() == name.len() && raw == name.as_bytes() {
        return true;
    }
    // An escaped name is never shorter in the text than decoded, so only those can still match.
    raw.len() > name.len() && raw.contains(&b'\\') && decode_name(text, span) == name
}

/// The name at `span` (quotes included), unescaped.
fn decode_name(text: &[u8], span: [u32; 2]) -> String {
    let quoted = &text[span[0] as usize..span[1] as usize];
    // Patches are fully decoded before they get here; db.json is only checked for structure and UTF-8,
    // so a name with a lone surrogate escape (`"\ud800"`) cannot decode. It keeps its escaped spelling
    // then: still distinct, never merged with another name.
    serde_json::from_slice(quoted).unwrap_or_else(|_| {
        String::from_utf8_lossy(quoted.get(1..quoted.len().saturating_sub(1)).unwrap_or_default()).into_owned()
    })
}

fn build_text(members: &Members) -> Bytes {
    let mut out = Vec::new();
    out.push(b'{');
    for (i, (name, node)) in members.order.values().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a `str` into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, &**name);
        out.push(b':');
        out.extend_from_slice(&node.text());
    }
    out.push(b'}');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        Node::from_text(Bytes::copy_from_slice(text.as_bytes()))
    }

    #[test]
    fn children_are_slices_of_the_parent_text() {
        let n = node(r#"{"a": {"b": [1, 2]}, "c\"d": "x"}"#);
        let a = n.child("a").unwrap();
        assert_eq!(&a.text()[..], br#"{"b": [1, 2]}"#);
        assert_eq!(&a.child("b").unwrap().text()[..], b"[1, 2]");
        assert_eq!(&n.child("c\"d").unwrap().text()[..], br#""x""#);
        assert!(n.child("zz").is_none());
        assert!(a.child("b").unwrap().child("0").is_none());
        // The same member is the same node every time (its caches are shared).
        assert!(Arc::ptr_eq(&n.child("a").unwrap(), &a));
    }

    #[test]
    fn large_objects_use_the_map_and_the_last_duplicate_wins_at_the_first_place() {
        let members: Vec<String> = (0..100).map(|i| format!("\"k{i}\":{i}")).collect();
        let n = node(&format!("{{{},\"k3\":\"last\"}}", members.join(",")));
        assert_eq!(&n.child("k99").unwrap().text()[..], b"99");
        let Repr::Text { index, .. } = &n.repr else { panic!("a text node") };
        assert!(index.get().is_some_and(|i| i.by_name.is_some()), "100 members go through the map");
        assert_eq!(&n.child("k3").unwrap().text()[..], br#""last""#);
        let keys = n.keys().unwrap();
        assert_eq!((keys.len(), keys[3].as_str()), (100, "k3"));
        let small = node(r#"{"a":1,"b":2,"a":3}"#);
        assert_eq!(&small.child("a").unwrap().text()[..], b"3");
        assert_eq!(small.keys().unwrap(), ["a", "b"]);
    }

    #[test]
    fn built_objects_serialize_compactly_in_order() {
        let mut m = Members::default();
        m.insert("b", Arc::new(node("1")));
        m.insert("a.b", Arc::new(node(r#"{"x": true}"#)));
        m.insert("b", Arc::new(node("2")));
        let n = Node::object(m);
        assert_eq!(&n.text()[..], br#"{"b":2,"a.b":{"x": true}}"#);
        assert_eq!(n.keys().unwrap(), ["b", "a.b"]);
    }
}
