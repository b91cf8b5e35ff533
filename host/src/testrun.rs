//! `modhost test-runner <test.wasm> [args…]`: cargo's runner for a mod project's tests.
//!
//! `cargo test` for `wasm32-wasip2` builds the tests into a WASI command component and hands it to the
//! runner. A mod's code imports modhost's `db`, `store` and `log`, which no generic wasm runtime has;
//! here they are real: a generated game db ([`modhost_gamedb::database`], 100 items) and a store in a
//! temporary directory, both fresh for each run, so tests call their handlers as the host would.
//! The mod's id (its store namespace) and grants come from `./mod.toml` (cargo runs the runner in the
//! package's folder) when there is one, and its configuration from the files beside that manifest
//! (`config.default.json`, `config.schema.json`, `config.json`: docs/config.md), checked as a load
//! checks them, so `config.get` answers in tests what it answers on a server.
//!
//! The run answers how it ended ([`Outcome`]): the test binary's exit code, or a trap (on wasm32 a
//! Rust panic aborts, so a failed assertion is a trap), or the deadline. The command prints the last
//! two and exits 101, as a failed native test run does.

pub use crate::sandbox::CommandExit as Outcome;
use crate::sandbox::{ModContext, Runtime};
use crate::settings::{EngineLimits, ModLimits};
use anyhow::Context as _;
use modhost_db::Db;
use modhost_mods::{Grants, Manifest};
use modhost_store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The exit code of a run that trapped or timed out: what libtest exits with when a test fails.
pub const FAILED: i32 = 101;

/// Items in the generated db: enough for the shapes a mod reads, small enough to build in milliseconds.
const DB_ITEMS: u64 = 100;

/// Runs the test binary `wasm` with `args` (cargo's test filter and harness flags) and answers how it
/// ended: its exit code, a trap, or the deadline (the command exits [`FAILED`] on either).
/// `manifest`: the mod's `mod.toml` (default `./mod.toml` if present, else id `test` and no grants).
/// `deadline` bounds the whole run.
pub async fn run(wasm: &Path, args: &[String], manifest: Option<&Path>, deadline: Duration) -> anyhow::Result<Outcome> {
    let bytes = std::fs::read(wasm).with_context(|| format!("reading the test binary {}", wasm.display()))?;
    let (id, grants, folder) = identity(manifest)?;
    let config = match folder {
        Some(folder) => modhost_mods::config::load(&folder).context("the mod's configuration")?.effective,
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    let db = Db::from_text(modhost_gamedb::database(DB_ITEMS).to_string()).context("loading the generated db")?;
    let scratch = tempfile::tempdir().context("creating a scratch store directory")?;
    let store = Store::open(scratch.path(), false).context("opening the scratch store")?;
    let store = Arc::new(store);
    let mut cx = ModContext::new(&id, Arc::new(db), store.clone(), grants);
    cx.config = Arc::new(config);
    let cx = Arc::new(cx);

    // One instance for the whole run, with room for a test harness: more memory than a request gets.
    let engine = EngineLimits { memory_bytes: 512 << 20, max_instances: 2, ..EngineLimits::default() };
    let limits = ModLimits { memory_bytes: 512 << 20, mod_instances: 1, ..ModLimits::default() };
    // No server: the command reaches no session lock, notifier or timer (it has no peers), but a
    // runtime is handed its own all the same.
    let realtime = Arc::new(crate::realtime::Realtime::new(crate::realtime::RealtimeLimits::default(), store, None));
    let runtime = Runtime::new(engine, None, Arc::default(), realtime)?;
    // The program name first, as a shell would pass it; libtest skips it.
    let argv: Vec<String> = std::iter::once(wasm.display().to_string()).chain(args.iter().cloned()).collect();
    // The host's environment is not passed, with one exception: libtest captures each test's output
    // and prints it when the test fails, but on wasm32 a panic aborts the whole binary first, and the
    // captured panic message would be lost with it. Uncaptured, it reaches the terminal.
    let env = [("RUST_TEST_NOCAPTURE", "1")];
    runtime.run_command(&bytes, cx, &limits, &argv, &env, deadline).await
}

/// The store namespace and grants the tests run with, and the folder their configuration is read
/// from: the manifest's (none without a manifest).
fn identity(manifest: Option<&Path>) -> anyhow::Result<(String, Grants, Option<PathBuf>)> {
    let path = match manifest {
        Some(path) => path.to_owned(),
        None if Path::new("mod.toml").exists() => PathBuf::from("mod.toml"),
        None => return Ok(("test".to_owned(), Grants::default(), None)),
    };
    let folder = config_folder(&path);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let parsed = Manifest::parse(&text).with_context(|| format!("in {}", path.display()))?;
    Ok((parsed.id.to_string(), parsed.grants, Some(folder)))
}

/// The folder a manifest's configuration files are read from: the manifest's own. A bare `mod.toml`
/// has the empty path as its parent, which names no folder: the current one.
fn config_folder(manifest: &Path) -> PathBuf {
    match manifest.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::{config_folder, identity};
    use std::path::{Path, PathBuf};

    #[test]
    fn the_config_is_read_beside_the_manifest() {
        assert_eq!(config_folder(Path::new("mod.toml")), PathBuf::from("."));
        assert_eq!(config_folder(Path::new("mods/greeter/mod.toml")), PathBuf::from("mods/greeter"));
        let dir = tempfile::tempdir().expect("a temp dir");
        let manifest = dir.path().join("mod.toml");
        std::fs::write(&manifest, "id = \"greeter\"\nversion = \"0.1.0\"\n").expect("a manifest");
        let (id, _, folder) = identity(Some(&manifest)).expect("the manifest reads");
        assert_eq!((id.as_str(), folder), ("greeter", Some(dir.path().to_owned())));
    }
}
