//! RFC 7396 merge patches on the immutable tree: every change builds new nodes along the patched path
//! and shares everything else with the version before it.
//!
//! Recursion: `patch_at` recurses once per path segment and `merge` once per level of the patch, and
//! `Db::patch` refuses a path plus patch deeper than [`super::MAX_DEPTH`], so both are bounded.

use super::DbError;
use super::node::{Members, Node};
use std::sync::Arc;

/// RFC 7396 MergePatch(target, patch): an object patch merges member by member (`null` removes);
/// anything else replaces the target. The result shares every untouched member with `target`.
///
/// `null_member`: whether the patch has a `null` object member anywhere. Without one, merging into
/// nothing (or into a value that is not an object) is the patch itself, so its node is taken as it is:
/// a large new subtree costs its text, not a persistent map per object of it.
pub(crate) fn merge(target: Option<&Arc<Node>>, patch: &Arc<Node>, null_member: bool) -> Arc<Node> {
    if !null_member && !target.is_some_and(|t| t.is_object()) {
        return patch.clone();
    }
    let Some(pairs) = patch.pairs() else {
        // Not an object: the patch's own node (its exact text) is the new value.
        return patch.clone();
    };
    let mut members = target.and_then(|t| t.members()).unwrap_or_default();
    for (name, value) in pairs {
        if value.is_null() {
            members.remove(&name);
        } else {
            let merged = merge(members.get(&name), &value, null_member);
            members.insert(&name, merged);
        }
    }
    Arc::new(Node::object(members))
}

/// Applies `patch` at the member path `segments` below `node`, creating missing parents as objects.
/// `done` counts the segments above `node`, for error messages.
pub(crate) fn patch_at(
    node: &Arc<Node>,
    segments: &[String],
    done: usize,
    patch: &Arc<Node>,
    null_member: bool,
) -> Result<Arc<Node>, DbError> {
    let Some((name, rest)) = segments.split_first() else {
        return Ok(merge(Some(node), patch, null_member));
    };
    let mut members = node.members().ok_or_else(|| DbError::WrongKind {
        path: String::new(),
        reason: format!("cannot be patched: {} is {}, not an object", describe(segments, done), node.kind()),
    })?;
    let existing = members.get(name).cloned();
    if rest.is_empty() {
        if patch.is_null() {
            members.remove(name);
        } else {
            members.insert(name, merge(existing.as_ref(), patch, null_member));
        }
    } else {
        let child = match existing {
            Some(child) if child.is_object() => child,
            Some(other) => {
                return Err(DbError::WrongKind {
                    path: String::new(),
                    reason: format!("cannot be created: member `{name}` is {}, not an object", other.kind()),
                });
            }
            None => Arc::new(Node::object(Members::default())),
        };
        members.insert(name, patch_at(&child, rest, done + 1, patch, null_member)?);
    }
    Ok(Arc::new(Node::object(members)))
}

fn describe(segments: &[String], done: usize) -> String {
    if done == 0 { "the root".to_owned() } else { format!("the value above member `{}`", segments[0]) }
}
