//! Load order: which of the found mods can run together, and in what order.
//!
//! Input: the manifests in discovery order (built-ins, then `mods/` folders by name). Output: the
//! mods to load, in order, and the ones refused, each with a sentence that names the mods involved.
//!
//! The rules, applied in this order:
//! 1. A second mod with an id already found is refused; so is a mod whose `modhost` range does not
//!    include [`super::API_VERSION`].
//! 2. A mod whose `requires` names a mod that is absent, refused, or outside the range is refused,
//!    and so, in turn, are the mods that require it.
//! 3. A mod whose `conflicts` names a mod that survived step 2 is refused (the mod that declares the
//!    conflict is the one that knows it cannot run beside the other), then step 2 runs again.
//! 4. The survivors are ordered topologically: a required mod first, `load_after`/`load_before`
//!    respected when the other mod is installed. Ties go to the mod found first, so the order is
//!    stable from boot to boot. A cycle refuses the mods on it (the sentence shows the cycle and each
//!    edge's reason), their dependents follow by step 2, and ordering starts again without them.
//!
//! Pure: no I/O, no wasmtime. The server (`modhost`'s `generation.rs`) loads the result in order.

use super::Manifest;
use semver::Version;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

/// The outcome: indices into the input.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Resolution {
    /// The mods to load, in load order.
    pub order: Vec<usize>,
    /// The mods refused, with why, in input order.
    pub refused: Vec<(usize, String)>,
}

/// Resolves `mods` (in discovery order) against the host's API version `api`.
pub fn resolve(mods: &[&Manifest], api: &Version) -> Resolution {
    let mut why: Vec<Option<String>> = vec![None; mods.len()];
    // The first mod found with each id; a later one with the same id is refused.
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, m) in mods.iter().enumerate() {
        if let Some(&first) = by_id.get(m.id.as_str()) {
            why[i] = Some(format!("another mod with id `{}` was found first (version {})", m.id, mods[first].version));
            continue;
        }
        by_id.insert(&m.id, i);
        if let Some(range) = m.modhost.as_ref().filter(|r| !r.matches(api)) {
            why[i] = Some(format!("it needs modhost API {range}; this host implements {api}"));
        }
    }

    let live = |why: &Vec<Option<String>>| (0..mods.len()).filter(|&i| why[i].is_none()).collect::<Vec<_>>();
    refuse_unmet(mods, &by_id, &mut why);
    for i in live(&why) {
        let conflict = mods[i].conflicts.iter().find_map(|c| by_id.get(c.as_str()).filter(|&&j| why[j].is_none()));
        if let Some(&j) = conflict {
            why[i] = Some(format!("it conflicts with `{}` {}, which is installed", mods[j].id, mods[j].version));
        }
    }
    refuse_unmet(mods, &by_id, &mut why);

    let order = loop {
        let (order, stuck) = topological(mods, &by_id, &why);
        if stuck.is_empty() {
            break order;
        }
        let cycle = find_cycle(mods, &by_id, &stuck);
        let text = describe_cycle(mods, &cycle);
        for &i in &cycle {
            why[i] = Some(format!("a load-order cycle: {text}"));
        }
        refuse_unmet(mods, &by_id, &mut why);
    };
    let refused = why.into_iter().enumerate().filter_map(|(i, w)| w.map(|w| (i, w))).collect();
    Resolution { order, refused }
}

/// Step 2 to a fixed point: refuses every live mod with an unmet `requires`.
fn refuse_unmet(mods: &[&Manifest], by_id: &HashMap<&str, usize>, why: &mut [Option<String>]) {
    loop {
        let mut changed = false;
        for i in 0..mods.len() {
            if why[i].is_some() {
                continue;
            }
            for (dep, range) in &mods[i].requires {
                let reason = match by_id.get(dep.as_str()) {
                    None => Some(format!("it requires `{dep}` {range}, which is not installed")),
                    Some(&j) if why[j].is_some() => Some(format!("it requires `{dep}`, which was left out")),
                    Some(&j) if !range.matches(&mods[j].version) => {
                        Some(format!("it requires `{dep}` {range}, but `{dep}` {} is installed", mods[j].version))
                    }
                    Some(_) => None,
                };
                if reason.is_some() {
                    why[i] = reason;
                    changed = true;
                    break;
                }
            }
        }
        if !changed {
            return;
        }
    }
}

/// Why `before` must load before `after`, when it must.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edge {
    Requires,
    LoadAfter,
    LoadBefore,
}

/// The ordering edges among the live mods: `(before, after) → reason`.
fn edges(mods: &[&Manifest], by_id: &HashMap<&str, usize>, why: &[Option<String>]) -> BTreeMap<(usize, usize), Edge> {
    let live = |id: &str| by_id.get(id).copied().filter(|&j| why[j].is_none());
    let mut edges = BTreeMap::new();
    for (i, m) in mods.iter().enumerate().filter(|(i, _)| why[*i].is_none()) {
        for dep in m.requires.keys().filter_map(|d| live(d)) {
            edges.entry((dep, i)).or_insert(Edge::Requires);
        }
        for other in m.load_after.iter().filter_map(|d| live(d)) {
            edges.entry((other, i)).or_insert(Edge::LoadAfter);
        }
        for other in m.load_before.iter().filter_map(|d| live(d)) {
            edges.entry((i, other)).or_insert(Edge::LoadBefore);
        }
    }
    edges
}

/// Kahn's algorithm over the live mods, the lowest index first among those ready. Returns the order
/// and the live mods it could not place (those on or behind a cycle).
fn topological(mods: &[&Manifest], by_id: &HashMap<&str, usize>, why: &[Option<String>]) -> (Vec<usize>, Vec<usize>) {
    let edges = edges(mods, by_id, why);
    let mut indegree = vec![0usize; mods.len()];
    for &(_, after) in edges.keys() {
        indegree[after] += 1;
    }
    let mut ready: BinaryHeap<Reverse<usize>> =
        (0..mods.len()).filter(|&i| why[i].is_none() && indegree[i] == 0).map(Reverse).collect();
    let mut order = Vec::new();
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for (&(_, after), _) in edges.range((i, 0)..=(i, usize::MAX)) {
            indegree[after] -= 1;
            if indegree[after] == 0 {
                ready.push(Reverse(after));
            }
        }
    }
    let stuck = (0..mods.len()).filter(|&i| why[i].is_none() && !order.contains(&i)).collect();
    (order, stuck)
}

/// A cycle among `stuck`, as `(mod, edge to the next)` in order. Every stuck mod has a stuck
/// predecessor (else Kahn would have placed it), so walking predecessors must revisit a mod.
fn find_cycle(mods: &[&Manifest], by_id: &HashMap<&str, usize>, stuck: &[usize]) -> Vec<usize> {
    let why: Vec<Option<String>> =
        (0..mods.len()).map(|i| if stuck.contains(&i) { None } else { Some(String::new()) }).collect();
    let edges = edges(mods, by_id, &why);
    let predecessor = |i: usize| edges.keys().find(|&&(_, after)| after == i).map(|&(before, _)| before);
    let mut path = vec![stuck[0]];
    loop {
        let Some(prev) = predecessor(*path.last().unwrap_or(&stuck[0])) else { return path };
        if let Some(at) = path.iter().position(|&p| p == prev) {
            let mut cycle: Vec<usize> = path[at..].to_vec();
            cycle.reverse();
            return cycle;
        }
        path.push(prev);
    }
}

/// `a → b (b requires a) → a (a load_after b)`: the cycle with each edge's reason.
fn describe_cycle(mods: &[&Manifest], cycle: &[usize]) -> String {
    let mut text = format!("`{}`", mods[cycle[0]].id);
    for (k, &before) in cycle.iter().enumerate() {
        let after = cycle[(k + 1) % cycle.len()];
        let (b, a) = (&mods[before].id, &mods[after].id);
        let reason = if mods[after].requires.contains_key(b) {
            format!("{a} requires {b}")
        } else if mods[after].load_after.contains(b) {
            format!("{a} has load_after {b}")
        } else {
            format!("{b} has load_before {a}")
        };
        text.push_str(&format!(" → `{a}` ({reason})"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::API_VERSION;

    fn m(toml: &str) -> Manifest {
        Manifest::parse(toml).unwrap_or_else(|e| panic!("{e}: {toml}"))
    }

    /// `id version [key = value lines]`.
    fn mk(id: &str, version: &str, rest: &str) -> Manifest {
        m(&format!("id = \"{id}\"\nversion = \"{version}\"\n{rest}"))
    }

    fn run(mods: &[Manifest]) -> (Vec<String>, Vec<(String, String)>) {
        let refs: Vec<&Manifest> = mods.iter().collect();
        let r = resolve(&refs, &API_VERSION);
        let order = r.order.iter().map(|&i| mods[i].id.to_string()).collect();
        let refused = r.refused.iter().map(|(i, w)| (mods[*i].id.to_string(), w.clone())).collect();
        (order, refused)
    }

    #[test]
    fn no_relations_keeps_discovery_order() {
        let mods = [mk("b", "1.0.0", ""), mk("a", "1.0.0", ""), mk("c", "1.0.0", "")];
        assert_eq!(run(&mods), (vec!["b".into(), "a".into(), "c".into()], vec![]));
    }

    #[test]
    fn requires_and_soft_edges_order_the_mods() {
        let mods = [
            mk("app", "1.0.0", "load_after = [\"absent\", \"late\"]\n[requires]\nlib = \"^1.2\""),
            mk("late", "1.0.0", ""),
            mk("lib", "1.4.0", "load_before = [\"late\"]"),
        ];
        let (order, refused) = run(&mods);
        assert_eq!(order, ["lib", "late", "app"]);
        assert!(refused.is_empty());
    }

    #[test]
    fn missing_out_of_range_and_transitive_dependencies_are_refused_by_name() {
        let mods = [
            mk("a", "1.0.0", "[requires]\nghost = \"*\""),
            mk("b", "1.0.0", "[requires]\na = \"^1\""),
            mk("c", "1.0.0", "[requires]\nlib = \">=2\""),
            mk("lib", "1.9.0", ""),
            mk("ok", "1.0.0", "[requires]\nlib = \"1\""),
        ];
        let (order, refused) = run(&mods);
        assert_eq!(order, ["lib", "ok"]);
        let reason = |id: &str| refused.iter().find(|(r, _)| r == id).map(|(_, w)| w.clone()).unwrap();
        assert_eq!(reason("a"), "it requires `ghost` *, which is not installed");
        assert_eq!(reason("b"), "it requires `a`, which was left out");
        assert_eq!(reason("c"), "it requires `lib` >=2, but `lib` 1.9.0 is installed");
    }

    #[test]
    fn a_conflict_refuses_the_mod_that_declares_it_and_its_dependents() {
        let mods = [
            mk("old", "0.3.0", ""),
            mk("new", "1.0.0", "conflicts = [\"old\"]"),
            mk("addon", "1.0.0", "[requires]\nnew = \"1\""),
            mk("quiet", "1.0.0", "conflicts = [\"gone\"]"),
        ];
        let (order, refused) = run(&mods);
        assert_eq!(order, ["old", "quiet"]);
        assert_eq!(refused[0], ("new".into(), "it conflicts with `old` 0.3.0, which is installed".into()));
        assert_eq!(refused[1], ("addon".into(), "it requires `new`, which was left out".into()));
    }

    #[test]
    fn a_conflict_with_a_refused_mod_is_no_conflict() {
        let mods = [mk("old", "1.0.0", "[requires]\nghost = \"*\""), mk("new", "1.0.0", "conflicts = [\"old\"]")];
        assert_eq!(run(&mods).0, ["new"]);
    }

    #[test]
    fn a_cycle_is_named_with_its_reasons_and_the_rest_still_load() {
        let mods = [
            mk("x", "1.0.0", "[requires]\nz = \"*\""),
            mk("y", "1.0.0", "[requires]\nx = \"*\""),
            mk("z", "1.0.0", "load_after = [\"y\"]"),
            mk("fan", "1.0.0", "[requires]\ny = \"*\""),
            mk("soft", "1.0.0", "load_after = [\"y\"]"),
            mk("free", "1.0.0", ""),
        ];
        let (order, refused) = run(&mods);
        assert_eq!(order, ["soft", "free"]);
        let cycle: Vec<_> = refused.iter().filter(|(_, w)| w.contains("cycle")).collect();
        assert_eq!(cycle.len(), 3, "{refused:?}");
        let text = &cycle[0].1;
        assert!(text.contains("x requires z") && text.contains("y requires x") && text.contains("z has load_after y"));
        assert!(refused.contains(&("fan".into(), "it requires `y`, which was left out".into())));
    }

    #[test]
    fn duplicates_and_api_ranges_are_refused() {
        let mods = [mk("a", "1.0.0", ""), mk("a", "2.0.0", ""), mk("future", "1.0.0", "modhost = \">=9\"")];
        let (order, refused) = run(&mods);
        assert_eq!(order, ["a"]);
        assert!(refused[0].1.contains("another mod with id `a` was found first (version 1.0.0)"));
        assert!(refused[1].1.contains("needs modhost API >=9"), "{refused:?}");
    }

    #[test]
    fn order_is_stable_and_a_permutation_of_the_survivors() {
        // A chain declared backwards plus independent mods: the chain is forced, the rest keep order.
        let mods = [
            mk("d", "1.0.0", "[requires]\nc = \"*\""),
            mk("c", "1.0.0", "[requires]\nb = \"*\""),
            mk("i1", "1.0.0", ""),
            mk("b", "1.0.0", "load_after = [\"i2\"]"),
            mk("i2", "1.0.0", ""),
        ];
        assert_eq!(run(&mods).0, ["i1", "i2", "b", "c", "d"]);
        assert_eq!(run(&mods), run(&mods));
    }
}
