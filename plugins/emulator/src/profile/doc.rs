//! A store document read by path and changed through one merge patch: the view an `items/moving`
//! batch has of its profile.
//!
//! Reads go to the store a path at a time (`store::doc_get`), so a batch costs what it touches, not the
//! profile's size; each answer is kept, and every one must carry the version the batch started from
//! (another writer in between is a conflict, never a mix of two states). Writes replace the value at a
//! path and land in one RFC 7396 merge patch held in the guest: later reads see them (a batch's later
//! actions see its earlier ones), [`Doc::savepoint`] and [`Doc::restore`] undo a refused action's
//! writes, and [`Doc::commit`] sends the patch once, at the root, with `doc_patch_if_version`.
//!
//! The patch is always relative to the stored document, never to an earlier write: a write at a path
//! stores the difference between the stored value there and the new one (`null` for each member it
//! drops), so composing several writes cannot resurrect a member a merge would keep.

use modhost_sdk::{Error, Result, db, store};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// One document at one version, with the batch's pending changes.
pub(crate) struct Doc {
    key: String,
    version: u64,
    /// Stored values read so far, by escaped path (the store's answers, unchanged by writes).
    stored: HashMap<String, Value>,
    /// The pending merge patch, rooted at the document (always an object).
    patch: Value,
}

/// What the pending patch says about a path.
enum Pending {
    /// Nothing: the stored value stands.
    Untouched,
    /// A non-object at the path or above it: the value is that (indexed by what is left of the path).
    Replaced(Value),
    /// An object patch at the path: the stored value merged with it.
    Merged(Value),
}

impl Doc {
    /// The document under `key`, as it is at `version`.
    pub(crate) fn at(key: &str, version: u64) -> Doc {
        Doc { key: key.to_owned(), version, stored: HashMap::new(), patch: Value::Object(Map::new()) }
    }

    /// The store key of the document (`profile.<uid>`).
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The stored value at `path` (before this batch's changes). Derived from an enclosing value
    /// already read when there is one; otherwise one store call. Answers a reference into what was
    /// read, so a caller that only looks (a diff, an index lookup) copies nothing.
    fn stored(&mut self, path: &[&str]) -> Result<&Value> {
        // The escaped path is built once: each prefix's escaped form is a prefix of it, ending where
        // one of its names ends, so the reads already kept are looked up by slices of it.
        let mut escaped = String::new();
        let mut ends = Vec::with_capacity(path.len() + 1);
        ends.push(0);
        for (i, name) in path.iter().enumerate() {
            if i > 0 {
                escaped.push('.');
            }
            // `db::path` of one name is that name escaped: the project's one escaping, name by name.
            escaped.push_str(&db::path(&[name]));
            ends.push(escaped.len());
        }
        if let Some(len) = (0..=path.len()).rev().find(|len| self.stored.contains_key(&escaped[..ends[*len]])) {
            let found = &self.stored[&escaped[..ends[len]]];
            return Ok(index(found, &path[len..]));
        }
        let Some((value, version)) = store::doc_get::<Value>(&self.key, &escaped)? else {
            return Err(Error::Conflict(format!("{} was deleted during the batch", self.key)));
        };
        if version != self.version {
            return Err(Error::Conflict(format!("{} changed during the batch", self.key)));
        }
        Ok(self.stored.entry(escaped).or_insert(value))
    }

    fn pending(&self, path: &[&str]) -> Pending {
        let mut node = &self.patch;
        for (depth, name) in path.iter().enumerate() {
            match node {
                Value::Object(members) => match members.get(*name) {
                    Some(below) => node = below,
                    None => return Pending::Untouched,
                },
                replaced => return Pending::Replaced(index(replaced, &path[depth..]).clone()),
            }
        }
        match node {
            Value::Object(_) => Pending::Merged(node.clone()),
            replaced => Pending::Replaced(replaced.clone()),
        }
    }

    /// How many names of `path` lead to the first value the patch replaced by a non-object, if it
    /// replaced one there (never the root: the patch is an object). Walks the patch without copying
    /// any of it, which [`Doc::pending`] of each prefix would.
    fn replaced_at(&self, path: &[&str]) -> Option<usize> {
        let mut node = &self.patch;
        for (depth, name) in path.iter().enumerate() {
            match node {
                Value::Object(members) => node = members.get(*name)?,
                _ => return Some(depth),
            }
        }
        (!node.is_object()).then_some(path.len())
    }

    /// The value at `path` as this batch has left it; `null` when nothing is there.
    pub(crate) fn get(&mut self, path: &[&str]) -> Result<Value> {
        match self.pending(path) {
            Pending::Untouched => self.stored(path).cloned(),
            Pending::Replaced(value) => Ok(value),
            Pending::Merged(patch) => Ok(merge(self.stored(path)?.clone(), &patch)),
        }
    }

    /// Makes the value at `path` (not the root) `value`; `null` removes it.
    pub(crate) fn set(&mut self, path: &[&str], value: Value) -> Result<()> {
        let Some((last, parents)) = path.split_last() else {
            return Err(Error::failed("the emulator never replaces a whole profile by patch"));
        };
        // A parent the patch already replaced by a non-object (an item removed earlier in the batch,
        // say) is rebuilt around the new value and written in its place.
        if let Some(depth) = self.replaced_at(parents) {
            let mut rebuilt = value;
            for name in path[depth..].iter().rev() {
                rebuilt = Value::Object(Map::from_iter([((*name).to_owned(), rebuilt)]));
            }
            return self.set(&path[..depth], rebuilt);
        }
        // Only an object needs the stored value: anything else replaces whatever is there.
        let change = if value.is_object() { diff(self.stored(path)?, value) } else { Some(value) };
        let mut node = &mut self.patch;
        for name in parents {
            let members = node.as_object_mut().expect("the parents in the patch are objects (checked above)");
            node = members.entry((*name).to_owned()).or_insert_with(|| Value::Object(Map::new()));
        }
        let members = node.as_object_mut().expect("the parents in the patch are objects (checked above)");
        match change {
            Some(change) => {
                members.insert((*last).to_owned(), change);
            }
            None => {
                members.shift_remove(*last);
            }
        }
        Ok(())
    }

    /// The pending changes, to restore if what follows is refused.
    pub(crate) fn savepoint(&self) -> Value {
        self.patch.clone()
    }

    /// Forgets every change since `savepoint`.
    pub(crate) fn restore(&mut self, savepoint: Value) {
        self.patch = savepoint;
    }

    /// Is the object at `path` an object or absent, as this batch has left it? Asks the store for its
    /// member names only (not the value) when the batch has not written it.
    pub(crate) fn object_or_absent(&mut self, path: &[&str]) -> Result<bool> {
        match self.pending(path) {
            Pending::Replaced(value) => Ok(value.is_null() || value.is_object()),
            Pending::Merged(_) => Ok(true),
            Pending::Untouched => match store::doc_keys(&self.key, &db::path(path)) {
                Ok(_) => Ok(true),
                Err(Error::Invalid(_)) => Ok(false),
                Err(other) => Err(other),
            },
        }
    }

    /// Writes the pending changes as one merge patch, if there are any, only if nobody wrote the
    /// document since the batch began. Answers the new version.
    pub(crate) fn commit(self) -> Result<Option<u64>> {
        if self.patch.as_object().is_none_or(Map::is_empty) {
            return Ok(None);
        }
        store::doc_patch_if_version(&self.key, "", &self.patch, self.version).map(Some)
    }
}

/// `value` at `path` below it; `null` when the path names nothing (as the store reads it).
fn index<'a>(mut value: &'a Value, path: &[&str]) -> &'a Value {
    for name in path {
        value = match value {
            Value::Object(members) => members.get(*name).unwrap_or(&Value::Null),
            _ => &Value::Null,
        };
    }
    value
}

/// RFC 7396: `patch` applied to `target`. Members keep their places; new ones go last.
pub(crate) fn merge(target: Value, patch: &Value) -> Value {
    let Value::Object(changes) = patch else { return patch.clone() };
    let mut members = match target {
        Value::Object(members) => members,
        _ => Map::new(),
    };
    for (name, change) in changes {
        if change.is_null() {
            members.shift_remove(name);
        } else {
            let slot = members.entry(name.clone()).or_insert(Value::Null);
            *slot = merge(slot.take(), change);
        }
    }
    Value::Object(members)
}

/// The merge patch that turns `old` into `new`; `None` when they are equal. Takes `new` by value so
/// the patch is made of its parts, not copies.
fn diff(old: &Value, new: Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(before), Value::Object(after)) => {
            let mut change = Map::new();
            for name in before.keys().filter(|name| !after.contains_key(*name)) {
                change.insert(name.clone(), Value::Null);
            }
            for (name, value) in after {
                let member = match before.get(&name) {
                    Some(was) => diff(was, value),
                    None => (!value.is_null()).then_some(value),
                };
                if let Some(member) = member {
                    change.insert(name, member);
                }
            }
            (!change.is_empty()).then_some(Value::Object(change))
        }
        (old, new) if *old == new => None,
        (_, new) => Some(new),
    }
}
