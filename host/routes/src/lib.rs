//! modhost's route table: which mod answers which URL path, and the one list of paths the host keeps
//! for itself ([`RESERVED`], [`host_path`]).
//!
//! Key types: [`RouteTable`], [`HookTable`] (every hook a URL reaches, in run order), (immutable once built; replaced whole on reload) and [`RouteTableBuilder`]
//! (refuses two owners of one route, naming both). Matching: the query string is ignored, an exact route
//! beats any prefix, and among prefixes the longest wins; registration order never matters. The SDK's
//! `Router` matches the same way inside a mod; a test in `modhost-tests` checks the two agree. This
//! crate knows nothing of wasmtime or hyper: the value stored per route is generic.

#![warn(missing_docs)]

mod hooks;

pub use hooks::HookTable;

use std::collections::HashMap;

/// How a route claims paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatchKind {
    /// The path must equal the route.
    Exact,
    /// The path must start with the route (byte prefix).
    Prefix,
}

/// A route claimed twice, or a malformed route.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RouteError {
    /// Two mods claim the same route with the same kind.
    #[error("route `{route}` ({kind:?}) is claimed by both `{first}` and `{second}`")]
    Conflict {
        /// The route, as claimed.
        route: String,
        /// Exact or prefix.
        kind: MatchKind,
        /// The mod that claimed it first.
        first: String,
        /// The mod that claimed it again.
        second: String,
    },
    /// A mod claims more than [`MAX_ROUTES_PER_OWNER`] routes.
    #[error("`{owner}` claims {count} routes; the limit is {MAX_ROUTES_PER_OWNER}")]
    TooMany {
        /// The mod that claimed it.
        owner: String,
        /// How many routes it claims.
        count: usize,
    },
    /// The route does not start with `/` or holds a query.
    #[error("route `{route}` of `{owner}` is malformed: it must start with `/` and hold no `?`")]
    Malformed {
        /// The route, as claimed.
        route: String,
        /// The mod that claimed it.
        owner: String,
    },
    /// The route is under a path the host answers itself.
    #[error("route `{route}` of `{owner}` is reserved: the host answers /metrics and /modhost/ itself")]
    Reserved {
        /// The route, as claimed.
        route: String,
        /// The mod that claimed it.
        owner: String,
    },
}

/// The result of a lookup.
#[derive(Debug)]
pub struct Match<'a, T> {
    /// The route as it was registered.
    pub route: &'a str,
    /// What was registered with it.
    pub value: &'a T,
}

#[derive(Debug, Clone)]
struct Entry<T> {
    owner: String,
    value: T,
}

/// An immutable route table.
#[derive(Debug, Clone)]
pub struct RouteTable<T> {
    exact: HashMap<String, Entry<T>>,
    /// Sorted longest first, so the first match is the longest.
    prefixes: Vec<(String, Entry<T>)>,
}

impl<T> Default for RouteTable<T> {
    fn default() -> Self {
        RouteTable { exact: HashMap::new(), prefixes: Vec::new() }
    }
}

impl<T> RouteTable<T> {
    /// The route for `url` (a path, optionally with a query).
    pub fn find(&self, url: &str) -> Option<Match<'_, T>> {
        let path = url.split_once('?').map_or(url, |(p, _)| p);
        if let Some((route, entry)) = self.exact.get_key_value(path) {
            return Some(Match { route, value: &entry.value });
        }
        self.prefixes
            .iter()
            .find(|(prefix, _)| path.starts_with(prefix.as_str()))
            .map(|(route, entry)| Match { route, value: &entry.value })
    }

    /// Every route with its kind and owner, sorted by path: for `modhost mods` and status pages.
    pub fn routes(&self) -> Vec<(&str, MatchKind, &str)> {
        let mut all: Vec<_> = self
            .exact
            .iter()
            .map(|(r, e)| (r.as_str(), MatchKind::Exact, e.owner.as_str()))
            .chain(self.prefixes.iter().map(|(r, e)| (r.as_str(), MatchKind::Prefix, e.owner.as_str())))
            .collect();
        all.sort();
        all
    }
}

/// The host's Prometheus exposition.
pub const METRICS: &str = "/metrics";
/// Where the host's own pages live: `/modhost` and everything under `/modhost/`.
pub const HOST_PAGES: &str = "/modhost";
/// The SPT notifier (its websocket and its poll), which the host serves itself.
pub const NOTIFIER: &str = "/notifierServer";
/// Paths the host answers itself: no route may start with one.
pub const RESERVED: [&str; 3] = [METRICS, HOST_PAGES, NOTIFIER];

/// A path the host answers itself, before any route is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostPath {
    /// [`METRICS`].
    Metrics,
    /// [`HOST_PAGES`] or a path under it.
    Pages,
    /// A path under [`NOTIFIER`] (`/notifierServer/…`).
    Notifier,
}

/// Whether the host answers `path` (no query) itself, and with what. Every other path goes to the
/// route table, where nothing under [`RESERVED`] can be claimed, so `/metricsX` is simply not found.
pub fn host_path(path: &str) -> Option<HostPath> {
    if path == METRICS {
        Some(HostPath::Metrics)
    } else if path == HOST_PAGES || path.strip_prefix(HOST_PAGES).is_some_and(|rest| rest.starts_with('/')) {
        Some(HostPath::Pages)
    } else if path.strip_prefix(NOTIFIER).is_some_and(|rest| rest.starts_with('/')) {
        Some(HostPath::Notifier)
    } else {
        None
    }
}

/// The most routes one mod may claim: enough for any game, few enough that checking them is instant.
pub const MAX_ROUTES_PER_OWNER: usize = 4096;

/// Builds a [`RouteTable`], refusing conflicts.
#[derive(Debug)]
pub struct RouteTableBuilder<T> {
    exact: HashMap<String, Entry<T>>,
    prefixes: HashMap<String, Entry<T>>,
}

impl<T> Default for RouteTableBuilder<T> {
    fn default() -> Self {
        RouteTableBuilder { exact: HashMap::new(), prefixes: HashMap::new() }
    }
}

impl<T: Clone> RouteTableBuilder<T> {
    /// Adds all of `routes` for `owner`, or none of them when any is malformed or already claimed.
    pub fn add_all(&mut self, owner: &str, routes: &[(String, MatchKind)], value: T) -> Result<(), RouteError> {
        self.check(owner, routes)?;
        for (route, kind) in routes {
            let entry = Entry { owner: owner.to_owned(), value: value.clone() };
            match kind {
                MatchKind::Exact => self.exact.insert(route.clone(), entry),
                MatchKind::Prefix => self.prefixes.insert(route.clone(), entry),
            };
        }
        Ok(())
    }

    /// Whether `owner` could add all of `routes`: not too many, none malformed, none already claimed.
    pub fn check(&self, owner: &str, routes: &[(String, MatchKind)]) -> Result<(), RouteError> {
        if routes.len() > MAX_ROUTES_PER_OWNER {
            return Err(RouteError::TooMany { owner: owner.to_owned(), count: routes.len() });
        }
        let mut seen = std::collections::HashSet::with_capacity(routes.len());
        for (route, kind) in routes {
            if !route.starts_with('/') || route.contains('?') {
                return Err(RouteError::Malformed { route: route.clone(), owner: owner.to_owned() });
            }
            if RESERVED.iter().any(|r| route.starts_with(r)) {
                return Err(RouteError::Reserved { route: route.clone(), owner: owner.to_owned() });
            }
            let table = match kind {
                MatchKind::Exact => &self.exact,
                MatchKind::Prefix => &self.prefixes,
            };
            // A mod listing one route twice is a conflict with itself, reported the same way.
            let first = table.get(route).map(|e| e.owner.as_str()).or((!seen.insert((route, kind))).then_some(owner));
            if let Some(first) = first {
                return Err(RouteError::Conflict {
                    route: route.clone(),
                    kind: *kind,
                    first: first.to_owned(),
                    second: owner.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The finished table.
    pub fn build(self) -> RouteTable<T> {
        let mut prefixes: Vec<_> = self.prefixes.into_iter().collect();
        prefixes.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        RouteTable { exact: self.exact, prefixes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use MatchKind::*;

    fn r(path: &str, kind: MatchKind) -> (String, MatchKind) {
        (path.to_owned(), kind)
    }

    fn table() -> RouteTable<&'static str> {
        let mut b = RouteTableBuilder::default();
        b.add_all("a", &[r("/client/", Prefix), r("/client/items", Exact)], "a").unwrap();
        b.add_all("b", &[r("/client/locale/", Prefix), r("/client/items", Prefix)], "b").unwrap();
        b.build()
    }

    #[test]
    fn exact_beats_prefix_longest_prefix_wins_query_ignored() {
        let t = table();
        assert_eq!(*t.find("/client/items").unwrap().value, "a");
        assert_eq!(*t.find("/client/items?x=1").unwrap().value, "a");
        assert_eq!(t.find("/client/items/more").unwrap().route, "/client/items");
        assert_eq!(*t.find("/client/locale/en").unwrap().value, "b");
        assert_eq!(t.find("/client/other").unwrap().route, "/client/");
        assert!(t.find("/nothing").is_none());
        assert!(t.find("/client").is_none());
    }

    #[test]
    fn registration_order_does_not_matter() {
        let mut b = RouteTableBuilder::default();
        b.add_all("b", &[r("/client/locale/", Prefix)], "b").unwrap();
        b.add_all("a", &[r("/client/", Prefix)], "a").unwrap();
        assert_eq!(*b.build().find("/client/locale/en").unwrap().value, "b");
    }

    #[test]
    fn a_conflict_names_both_mods_and_adds_nothing() {
        let mut b = RouteTableBuilder::default();
        b.add_all("first", &[r("/x", Exact)], 1).unwrap();
        let err = b.add_all("second", &[r("/y", Exact), r("/x", Exact)], 2).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("`first`") && text.contains("`second`") && text.contains("/x"), "{text}");
        assert!(b.build().find("/y").is_none());
    }

    #[test]
    fn a_mod_listing_a_route_twice_or_too_many_is_refused() {
        let mut b = RouteTableBuilder::default();
        assert!(matches!(b.add_all("m", &[r("/x", Exact), r("/x", Exact)], 1), Err(RouteError::Conflict { .. })));
        b.add_all("m", &[r("/x", Exact), r("/x", Prefix)], 1).unwrap();
        let many: Vec<_> = (0..=MAX_ROUTES_PER_OWNER).map(|i| r(&format!("/r{i}"), Exact)).collect();
        assert!(matches!(b.add_all("n", &many, 2), Err(RouteError::TooMany { .. })));
    }

    #[test]
    fn malformed_routes_are_refused() {
        let mut b = RouteTableBuilder::default();
        assert!(matches!(b.add_all("m", &[r("x", Exact)], 1), Err(RouteError::Malformed { .. })));
        assert!(matches!(b.add_all("m", &[r("/x?y", Exact)], 1), Err(RouteError::Malformed { .. })));
    }

    #[test]
    fn the_hosts_own_paths_are_reserved() {
        let mut b = RouteTableBuilder::default();
        for route in ["/metrics", "/modhost/status", "/modhost"] {
            assert!(matches!(b.add_all("m", &[r(route, Prefix)], 1), Err(RouteError::Reserved { .. })), "{route}");
        }
        assert!(b.add_all("m", &[r("/metric", Exact), r("/mod", Prefix)], 1).is_ok());
    }

    #[test]
    fn the_host_answers_its_paths_and_only_those() {
        assert_eq!(host_path("/metrics"), Some(HostPath::Metrics));
        for pages in ["/modhost", "/modhost/", "/modhost/status", "/modhost/x/y"] {
            assert_eq!(host_path(pages), Some(HostPath::Pages), "{pages}");
        }
        assert_eq!(host_path("/notifierServer/getwebsocket/x"), Some(HostPath::Notifier));
        for other in ["/metrics/", "/metricsx", "/modhostx", "/", "", "/client/items", "/notifierServerx"] {
            assert_eq!(host_path(other), None, "{other}");
        }
    }
}
