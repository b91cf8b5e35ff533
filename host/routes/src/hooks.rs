//! [`HookTable`]: the hooks on paths, each with its rank in the one order hooks run in, and which of
//! them a URL reaches. Matching is the route table's (exact or byte prefix, the query ignored), but
//! every matching hook applies, not the best one.
//!
//! A table with no hooks answers at once with nothing and allocates nothing: a route nobody hooks
//! pays one branch.

use crate::MatchKind;
use std::collections::HashMap;

/// Hooks by path, each with its rank (smaller runs first).
#[derive(Debug, Clone)]
pub struct HookTable<T> {
    exact: HashMap<String, Vec<(usize, T)>>,
    prefixes: Vec<(String, usize, T)>,
}

impl<T> Default for HookTable<T> {
    fn default() -> Self {
        HookTable { exact: HashMap::new(), prefixes: Vec::new() }
    }
}

impl<T> HookTable<T> {
    /// Adds a hook on `path` with its `rank` in the run order.
    pub fn insert(&mut self, path: &str, kind: MatchKind, rank: usize, value: T) {
        match kind {
            MatchKind::Exact => self.exact.entry(path.to_owned()).or_default().push((rank, value)),
            MatchKind::Prefix => self.prefixes.push((path.to_owned(), rank, value)),
        }
    }

    /// Whether no hook is registered.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.prefixes.is_empty()
    }

    /// The hooks `url` (a path, optionally with a query) reaches, in run order.
    pub fn find(&self, url: &str) -> Vec<&T> {
        if self.is_empty() {
            return Vec::new();
        }
        let path = url.split_once('?').map_or(url, |(p, _)| p);
        let exact = self.exact.get(path).into_iter().flatten().map(|(rank, v)| (*rank, v));
        let prefixed = self.prefixes.iter().filter(|(p, _, _)| path.starts_with(p.as_str())).map(|(_, r, v)| (*r, v));
        let mut found: Vec<(usize, &T)> = exact.chain(prefixed).collect();
        found.sort_by_key(|(rank, _)| *rank);
        found.into_iter().map(|(_, v)| v).collect()
    }

    /// The hooks that reach some URL of the route `route` (`kind` as registered), in run order: a
    /// route's chain, for `modhost mods` and the status page.
    pub fn reaching(&self, route: &str, kind: MatchKind) -> Vec<&T> {
        let exact = self
            .exact
            .iter()
            .filter(|(path, _)| match kind {
                MatchKind::Exact => path.as_str() == route,
                MatchKind::Prefix => path.starts_with(route),
            })
            .flat_map(|(_, hooks)| hooks.iter().map(|(rank, v)| (*rank, v)));
        let prefixed = self
            .prefixes
            .iter()
            .filter(|(p, _, _)| route.starts_with(p.as_str()) || (kind == MatchKind::Prefix && p.starts_with(route)))
            .map(|(_, rank, v)| (*rank, v));
        let mut found: Vec<(usize, &T)> = exact.chain(prefixed).collect();
        found.sort_by_key(|(rank, _)| *rank);
        found.into_iter().map(|(_, v)| v).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_matching_hook_applies_in_rank_order() {
        let mut t = HookTable::default();
        assert!(t.find("/client/items").is_empty());
        t.insert("/client/", MatchKind::Prefix, 2, "c");
        t.insert("/client/items", MatchKind::Exact, 1, "b");
        t.insert("/client/items", MatchKind::Exact, 3, "d");
        t.insert("/client/item", MatchKind::Prefix, 0, "a");
        t.insert("/other", MatchKind::Exact, 4, "x");
        assert_eq!(t.find("/client/items?x=1"), [&"a", &"b", &"c", &"d"]);
        assert_eq!(t.find("/client/itemsx"), [&"a", &"c"]);
        assert_eq!(t.find("/client"), Vec::<&&str>::new());
        assert_eq!(t.reaching("/client/items", MatchKind::Exact), [&"a", &"b", &"c", &"d"]);
        assert_eq!(t.reaching("/client/locale/", MatchKind::Prefix), [&"c"]);
        assert_eq!(t.reaching("/", MatchKind::Prefix), [&"a", &"b", &"c", &"d", &"x"]);
    }
}
