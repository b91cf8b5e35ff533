//! Builds guest crates (mods) for `wasm32-wasip2` from a build script, all in one `cargo` invocation,
//! and tells the caller where each component landed.
//!
//! modhost's `host` uses it to embed the built-in plugins; `tests` uses it to build the examples and the
//! test fixtures once per test build (not once per test). The guests share one target directory,
//! `<workspace>/target/wasm-guests`, so their common dependencies compile once.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every mod is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// Builds the named packages of the workspace at `workspace` in release mode for [`TARGET`] and returns
/// `(package, path to its .wasm)` in the order given. Prints `cargo:rerun-if-changed` for `watch`.
///
/// Panics with a message that says what to run when the target is not installed or the build fails:
/// a build script has no better way to report.
pub fn build(workspace: &Path, packages: &[&str], watch: &[&str]) -> Vec<(String, PathBuf)> {
    for path in watch {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    check_target_installed();

    let target_dir = workspace.join("target").join("wasm-guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace).args(["build", "--release", "--target", TARGET, "--target-dir"]).arg(&target_dir);
    for package in packages {
        cmd.args(["-p", package]);
    }
    // Small components: no DWARF (the name section stays, so traps still name functions).
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false").env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo");
    // Flags meant for the host build must not leak into the guest build; nor must clippy (under
    // `cargo clippy` the workspace wrapper is clippy-driver): the guests are built, not linted, here,
    // so a lint run and a test run share the same guest artifacts. CI lints the guests on their own.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
        "CLIPPY_CONF_DIR",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().unwrap_or_else(|e| panic!("could not run cargo to build the guests: {e}"));
    assert!(status.success(), "building the guests {packages:?} for {TARGET} failed (see the errors above)");

    packages
        .iter()
        .map(|p| {
            let wasm = target_dir.join(TARGET).join("release").join(format!("{}.wasm", p.replace('-', "_")));
            assert!(wasm.exists(), "the guest build did not produce {}", wasm.display());
            ((*p).to_owned(), wasm)
        })
        .collect()
}

fn check_target_installed() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if let Some(sysroot) = sysroot
        && !sysroot.join("lib").join("rustlib").join(TARGET).exists()
    {
        panic!(
            "the Rust target {TARGET} is not installed, and mods are built for it.\n\
             Run `rustup target add {TARGET}` (or `make setup`), then build again."
        );
    }
}
