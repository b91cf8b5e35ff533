//! Builds the built-in plugins for wasm32-wasip2 and embeds them, with their `mod.toml`, so
//! `cargo build --release` produces a `modhost` that needs no other file.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The built-in plugins, in load order: (package, folder under plugins/).
const BUILTINS: &[(&str, &str)] = &[("emulator", "plugins/emulator")];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir.parent().expect("host/ sits in the workspace").to_owned();
    let packages: Vec<&str> = BUILTINS.iter().map(|(p, _)| *p).collect();
    let built = modhost_sdk_build::build(&workspace, &packages, &["plugins", "sdk/src", "wit", "Cargo.lock"]);

    let mut out =
        String::from("/// (name, mod.toml, component)\npub(super) static MODS: &[(&str, &str, &[u8])] = &[\n");
    for ((package, folder), (_, wasm)) in BUILTINS.iter().zip(&built) {
        let toml = workspace.join(folder).join("mod.toml");
        writeln!(
            out,
            "    ({package:?}, include_str!({:?}), include_bytes!({:?})),",
            toml.display().to_string(),
            wasm.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("builtin_mods.rs");
    std::fs::write(dest, out).expect("writing builtin_mods.rs");
}
