//! Builds the guests the tests load (the examples and the fixtures) once per test build, in one cargo
//! invocation, and tells the tests where each `.wasm` is (`guests.rs` in OUT_DIR).

use std::fmt::Write as _;
use std::path::PathBuf;

/// (package, const name in `modhost_tests::guests`).
const GUESTS: &[(&str, &str)] = &[
    ("hello", "HELLO"),
    ("welcome-pack", "WELCOME_PACK"),
    ("fixture-guest", "FIXTURE"),
    ("fixture-peer", "PEER"),
    ("fixture-timer", "TIMER"),
    ("fixture-echo", "ECHO"),
];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("tests/ sits in the workspace").to_owned();
    let packages: Vec<&str> = GUESTS.iter().map(|(p, _)| *p).collect();
    let built = modhost_sdk_build::build(
        &workspace,
        &packages,
        &["examples", "tests/fixtures", "sdk/src", "wit", "Cargo.lock"],
    );
    let mut out = String::new();
    for ((package, name), (_, wasm)) in GUESTS.iter().zip(&built) {
        writeln!(out, "/// The `{package}` component.\npub const {name}: &str = {:?};", wasm.display().to_string())
            .expect("writing to a String");
    }
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("guests.rs");
    std::fs::write(dest, out).expect("writing guests.rs");
}
