//! What the tree's layout promises, checked:
//! - the engines (`modhost-db`, `-store`, `-routes`, `-mods`, `-gamedb`, `-wire`) know nothing of wasmtime,
//!   hyper or tokio: none is in their normal dependency trees;
//! - no module of a host crate imports one that imports it back;
//! - one build serves `make run` (`cargo build -p modhost`) and `make test` (`cargo test`): every crate
//!   the server builds gets the same features in both, so neither command rebuilds what the other built.
//!
//! Cargo unifies features per invocation: a feature that only a test's dev-dependency turns on (png
//! turning on flate2's `default`, say) gives the server's dependencies a second variant, and the other
//! command rebuilds wasmtime and half its tree. `host/Cargo.toml` turns those features on for the
//! server too; this test fails, naming the crate and the features, when a dependency change brings a
//! difference back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_owned()
}

/// Each package (`name vX.Y.Z`) the selection builds, with the feature sets it is built with (one per
/// variant: a crate can be built for the target and again for build scripts and proc-macros).
fn features(selection: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(workspace())
        .args(["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"])
        .args(selection)
        .output()
        .expect("running cargo tree");
    assert!(out.status.success(), "cargo tree {selection:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut all: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((package, features)) = line.trim_end_matches(" (*)").split_once('|') else { continue };
        // `name vX.Y.Z (path)` for workspace crates: the name and version are the key.
        let key = package.split(' ').take(2).collect::<Vec<_>>().join(" ");
        all.entry(key).or_default().insert(features.to_owned());
    }
    all
}

/// The packages `selection` builds with other features than the test build (`test`) gives them.
fn differences(selection: &[&str], test: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let built = features(selection);
    assert!(
        built.len() > 100 && built.keys().any(|p| p.starts_with("wasmtime v")),
        "cargo tree listed too little: {built:?}"
    );
    built
        .iter()
        .filter_map(|(package, sets)| {
            let other = test.get(package)?;
            (other != sets).then(|| format!("{package}: {selection:?} builds {sets:?}, `cargo test` builds {other:?}"))
        })
        .collect()
}

#[test]
fn the_server_and_the_benchmarks_build_their_dependencies_with_the_features_the_tests_build_them_with() {
    let test = features(&["-e", "normal,build,dev"]);
    let mut differ = differences(&["-p", "modhost", "-e", "normal,build"], &test);
    differ.extend(differences(&["-p", "modhost-benches", "-e", "normal,build"], &test));
    // `cargo run -p modhost-tests --bin wrap-core`, how a C mod is wrapped (docs/mods-c.md).
    differ.extend(differences(&["-p", "modhost-tests", "-e", "normal,build"], &test));
    assert!(
        differ.is_empty(),
        "these crates would be built twice, once per command; turn the missing features on in \
         host/Cargo.toml (\"one build for `make run` and `make test`\"):\n{}",
        differ.join("\n")
    );
}

#[test]
fn the_engines_know_nothing_of_wasmtime_hyper_or_tokio() {
    for engine in ["modhost-db", "modhost-store", "modhost-routes", "modhost-mods", "modhost-gamedb", "modhost-wire"] {
        let tree = features(&["-p", engine, "-e", "normal"]);
        assert!(tree.keys().any(|p| p.starts_with(&format!("{engine} v"))), "cargo tree did not list {engine}");
        let runtime: Vec<&String> = tree
            .keys()
            .filter(|p| {
                ["wasmtime", "hyper", "tokio"]
                    .iter()
                    .any(|r| p.starts_with(&format!("{r} v")) || p.starts_with(&format!("{r}-")))
            })
            .collect();
        assert!(runtime.is_empty(), "{engine} depends on {runtime:?}: an engine must build and test without them");
    }
}

/// The crates whose modules the layout tests read: the host's and the game's (the crate mod authors
/// copy), and the SDK.
const CRATES: &[&str] = &[
    "host",
    "host/db",
    "host/store",
    "host/routes",
    "host/mods",
    "host/gamedb",
    "host/wire",
    "plugins/emulator",
    "sdk",
];

/// The modules of one crate's `src/` and, for each, the sibling modules it names (`crate::x`, or
/// `super::x` inside a folder). Comments are skipped; `lib.rs`, `main.rs` and `bin/` are the roots.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "bin") {
                    stack.push(path);
                }
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().to_string_lossy().into_owned();
            if !rel.ends_with(".rs") || rel == "lib.rs" || rel == "main.rs" {
                continue;
            }
            let text: String = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|line| line.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            // `crate::x`, `crate::x::y`, and each item of `crate::{x, y::z}`.
            let named = |prefix: &str| -> BTreeSet<String> {
                let word = |rest: &str| -> String {
                    rest.trim_start().chars().take_while(|c| c.is_ascii_lowercase() || *c == '_').collect()
                };
                let mut names = BTreeSet::new();
                for (at, _) in text.match_indices(prefix) {
                    let rest = &text[at + prefix.len()..];
                    match rest.strip_prefix('{') {
                        Some(group) => {
                            let group = &group[..group.find('}').unwrap_or(group.len())];
                            names.extend(group.split(',').map(word));
                        }
                        None => {
                            names.insert(word(rest));
                        }
                    }
                }
                names.retain(|name| !name.is_empty() && name != "self");
                names
            };
            // A module is its top-level name (`front/answer.rs` is `front`), and inside a folder also
            // its own name among its siblings (`front::answer`).
            let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
            let top = parts[0].to_owned();
            graph.entry(top.clone()).or_default().extend(named("crate::").into_iter().filter(|m| *m != top));
            if let [folder, module] = parts.as_slice()
                && *module != "mod"
            {
                let siblings = named("super::").into_iter().chain(named(&format!("crate::{folder}::")));
                let node = format!("{folder}::{module}");
                graph
                    .entry(node.clone())
                    .or_default()
                    .extend(siblings.filter(|m| m != module && m != "mod").map(|m| format!("{folder}::{m}")));
            }
        }
    }
    graph
}

/// A cycle in `graph`, if there is one (depth-first search).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_owned());
            return Some(found);
        }
        if !done.insert(node.to_owned()) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten().filter(|n| graph.contains_key(*n)) {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    // The checker itself: a cycle it must see.
    let mut seeded = BTreeMap::new();
    seeded.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    seeded.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert!(cycle(&seeded).is_some());

    for krate in CRATES {
        let graph = imports(&workspace().join(krate).join("src"));
        // One-file crates (routes, gamedb) have no modules to cycle through.
        assert!(
            !["host", "plugins/emulator"].contains(krate) || graph.len() > 10,
            "{krate}: too few modules found: {graph:?}"
        );
        if let Some(found) = cycle(&graph) {
            panic!("{krate}: an import cycle: {}", found.join(" → "));
        }
    }
}

/// Every `.rs` file under `src` that is not a crate root, each with the file that must declare it
/// (`mod name;`) and that name: a file's folder's `mod.rs` (or `lib.rs`/`main.rs` at a root), and for a
/// folder's own `mod.rs` the same one level up. Roots: `lib.rs`, `main.rs`, `bin/<name>.rs` and
/// `bin/<name>/main.rs`.
fn declarations(src: &Path) -> Vec<(PathBuf, Vec<PathBuf>, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(stem) =
                path.file_stem().and_then(|s| s.to_str()).filter(|_| path.extension() == Some("rs".as_ref()))
            else {
                continue;
            };
            let rel = path.strip_prefix(src).unwrap();
            let in_bin = rel.starts_with("bin");
            let depth = rel.components().count();
            let root = (depth == 1 && ["lib", "main"].contains(&stem))
                || (in_bin && depth == 2)
                || (in_bin && depth == 3 && stem == "main");
            if root {
                continue;
            }
            let (name, at) = if stem == "mod" {
                (dir.file_name().unwrap().to_string_lossy().into_owned(), dir.parent().unwrap().to_owned())
            } else {
                (stem.to_owned(), dir.clone())
            };
            // `at/mod.rs` (or a root), or `at.rs` beside the folder (`config.rs` with `config/tests.rs`).
            let mut parents: Vec<PathBuf> = ["mod.rs", "lib.rs", "main.rs"].iter().map(|p| at.join(p)).collect();
            parents.push(at.with_extension("rs"));
            out.push((path, parents, name));
        }
    }
    out
}

/// Does `text` declare module `name` (`mod name;`, with any attributes and visibility)? Comments are
/// skipped.
fn declares(text: &str, name: &str) -> bool {
    text.lines().map(|line| line.split("//").next().unwrap_or("").trim()).any(|line| {
        let mut rest = line;
        while let Some(attribute) = rest.strip_prefix("#[") {
            rest = attribute.split_once(']').map_or("", |(_, after)| after.trim_start());
        }
        rest.strip_suffix(&format!("mod {name};"))
            .is_some_and(|vis| vis.is_empty() || vis.trim_end().starts_with("pub"))
    })
}

#[test]
fn every_file_is_named_by_its_crate_root_or_its_folders_mod_rs() {
    // The checker itself: a declaration with a visibility counts, a commented one and a longer name
    // do not.
    assert!(declares("mod a;\npub(crate) mod b;", "b") && declares("#[cfg(test)] mod t;", "t"));
    assert!(!declares("// mod c;\nmod cc;", "c") && !declares("use x::mod c;", "c"));
    for krate in CRATES {
        let src = workspace().join(krate).join("src");
        for (file, parents, name) in declarations(&src) {
            let named = parents.iter().any(|p| std::fs::read_to_string(p).is_ok_and(|text| declares(&text, &name)));
            assert!(named, "{}: no `mod {name};` in {parents:?}", file.display());
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                !text.contains("#[path"),
                "{}: a `#[path]` hides a file from its folder's `mod.rs`",
                file.display()
            );
        }
    }
}
