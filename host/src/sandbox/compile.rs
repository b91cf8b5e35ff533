//! Compiling components, with the precompiled artifact cached on disk.
//!
//! Cranelift takes 30-50 ms for a small Rust mod and 13-17 s for a JavaScript or Python one; loading a
//! cached artifact takes about 0.1 ms. The cache key is the SHA-256 of the wasm plus a hash of the
//! engine's compatibility settings (wasmtime version, target, tunables), so a changed mod or a new
//! modhost build never loads a stale artifact; wasmtime also checks compatibility when it loads one,
//! and an artifact it refuses is compiled again and replaced.
//!
//! The cache holds what the serving mods use: after a boot or a reload swaps in a generation, every
//! other file is deleted ([`prune`]).
//!
//! Safety: loading a precompiled artifact runs machine code from disk. The cache lives under the
//! server's own root, written only by this module (temp file + rename); anyone who can write there can
//! already replace the modhost binary's inputs, so this trusts it as it trusts `mods/`.

use sha2::{Digest, Sha256};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::component::Component;

/// Whether a component came from the cache or from Cranelift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileSource {
    /// Loaded from a precompiled artifact.
    Cached,
    /// Compiled now (and written to the cache when there is one).
    Compiled,
}

/// Compiles `wasm`, or loads it from `cache_dir` when it was compiled before by a compatible engine;
/// also answers the artifact's file name in the cache (none without a cache).
pub(crate) fn load(
    engine: &wasmtime::Engine,
    wasm: &[u8],
    cache_dir: Option<&Path>,
) -> anyhow::Result<(Component, CompileSource, Option<String>)> {
    let Some(dir) = cache_dir else {
        let component =
            Component::new(engine, wasm).map_err(|e| anyhow::Error::from(e).context("compiling the component"))?;
        return Ok((component, CompileSource::Compiled, None));
    };
    let path = artifact_path(engine, wasm, dir);
    let name = path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    if path.exists() {
        // SAFETY: see the module doc: the file was written by `Component::serialize` into our own
        // cache, under a name that pins the wasm's hash and the engine's compatibility hash.
        match unsafe { Component::deserialize_file(engine, &path) } {
            Ok(component) => return Ok((component, CompileSource::Cached, name)),
            Err(e) => tracing::warn!("ignoring cached artifact {}: {e:#}", path.display()),
        }
    }
    let component =
        Component::new(engine, wasm).map_err(|e| anyhow::Error::from(e).context("compiling the component"))?;
    if let Err(e) = write_artifact(&component, dir, &path) {
        // A cache we cannot write only costs time at the next boot.
        tracing::warn!("could not cache the compiled mod at {}: {e:#}", path.display());
    }
    Ok((component, CompileSource::Compiled, name))
}

/// Deletes every file in the cache `dir` whose name `keep` lacks: artifacts of mods no longer loaded
/// (a changed mod, an old modhost build: each would otherwise stay forever) and temp files left by a
/// crash. An artifact a live generation still runs is mapped, so deleting its file costs nothing but
/// a compile at the next boot.
pub(crate) fn prune(dir: &Path, keep: &std::collections::HashSet<&str>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = name.to_str().is_none_or(|n| !keep.contains(n));
        if stale && entry.file_type().is_ok_and(|t| t.is_file()) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => tracing::debug!("pruned {} from the compile cache", entry.path().display()),
                Err(e) => tracing::warn!("pruning {}: {e}", entry.path().display()),
            }
        }
    }
}

fn artifact_path(engine: &wasmtime::Engine, wasm: &[u8], dir: &Path) -> PathBuf {
    let wasm_hash = Sha256::digest(wasm);
    let mut engine_hash = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut engine_hash);
    let mut name = String::with_capacity(90);
    for byte in &wasm_hash[..16] {
        name.push_str(&format!("{byte:02x}"));
    }
    name.push_str(&format!("-{:016x}.cwasm", engine_hash.finish()));
    dir.join(name)
}

fn write_artifact(component: &Component, dir: &Path, path: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let bytes = component.serialize()?;
    let temp = dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        path.file_name().and_then(|n| n.to_str()).unwrap_or("artifact")
    ));
    std::fs::write(&temp, bytes)?;
    std::fs::rename(&temp, path)?;
    Ok(())
}
