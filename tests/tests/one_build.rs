//! One build serves `make run` (`cargo build -p modhost`) and `make test` (`cargo test`): every crate
//! the server builds gets the same features in both, so neither command rebuilds what the other built.
//!
//! Cargo unifies features per invocation: a feature that only a test's dev-dependency turns on (png
//! turning on flate2's `default`, say) gives the server's dependencies a second variant, and the other
//! command rebuilds wasmtime and half its tree. `host/Cargo.toml` turns those features on for the
//! server too; this test fails, naming the crate and the features, when a dependency change brings a
//! difference back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Each package (`name vX.Y.Z`) the selection builds, with the feature sets it is built with (one per
/// variant: a crate can be built for the target and again for build scripts and proc-macros).
fn features(selection: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace");
    let out = Command::new(cargo)
        .current_dir(workspace)
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

#[test]
fn the_server_builds_its_dependencies_with_the_features_the_tests_build_them_with() {
    let run = features(&["-p", "modhost", "-e", "normal,build"]);
    let test = features(&["-e", "normal,build,dev"]);
    assert!(
        run.len() > 100 && run.keys().any(|p| p.starts_with("wasmtime v")),
        "cargo tree listed too little: {run:?}"
    );
    let differ: Vec<String> = run
        .iter()
        .filter_map(|(package, sets)| {
            let other = test.get(package)?;
            (other != sets).then(|| format!("{package}: `make run` builds {sets:?}, `make test` builds {other:?}"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "these crates would be built twice, once per command; turn the missing features on in \
         host/Cargo.toml (\"one build for `make run` and `make test`\"):\n{}",
        differ.join("\n")
    );
}
