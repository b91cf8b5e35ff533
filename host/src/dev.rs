//! `modhost dev`: the edit loop for a mod author. Watches a mod project, and on each settled change
//! builds it (`cargo build --release`; for the TypeScript and Python projects `modhost new --lang`
//! writes, `npm run build` or `sh build.sh`), installs the `.wasm` with its `mod.toml` (and the per-mod
//! config files, when present) into `<root>/mods/<id>/`, and reloads the serving app in-process.
//!
//! Key types: [`Project`] (what `mod.toml` and `Cargo.toml` say), [`Event`] (what one change came to,
//! for the binary to print: the library prints nothing), [`start`].
//!
//! What a reader must not break:
//! - The old version keeps serving when anything fails: a build error stops before the install; an
//!   install writes each file aside under a hidden name and renames it into place, so no reader ever
//!   sees half a file; a load that fails is a refused reload ([`App::reload`] is all or nothing).
//! - One build at a time: the loop runs one cycle after another, and changes that arrive during one
//!   wait in the channel, so they make exactly one more cycle after it (the settle drains them all).
//! - `target/` is never watched (the default root lives there, and cargo writes there), nor
//!   `Cargo.lock` (cargo may rewrite it on a build), so a build never triggers the next one.

use crate::app::App;
use anyhow::Context as _;
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use std::io::{BufRead as _, Read as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Quiet time after the last change before a build starts. Shorter than `--watch`'s 300 ms: a save
/// is a burst of events within a few milliseconds, and this is paid on every edit. A burst split in
/// two still builds what was saved, then once more.
pub const SETTLE: Duration = Duration::from_millis(150);

/// Changes queued while a build runs; past this they are dropped, which loses nothing, since any one
/// of them already makes the next build.
const QUEUED_CHANGES: usize = 1024;

/// The compiler output kept for an [`Event::BuildFailed`]: the first errors are the ones to read.
const DIAGNOSTICS_MAX: usize = 64 << 10;

/// The project files, besides `src/`, whose change means a new build; the config files are installed
/// beside the mod when present.
const WATCHED_FILES: [&str; 7] =
    ["Cargo.toml", "mod.toml", "build.rs", "package.json", "build.sh", CONFIG_FILES[0], CONFIG_FILES[1]];

/// The per-mod config files a mod folder may hold, installed as they are.
const CONFIG_FILES: [&str; 2] = ["config.default.json", "config.schema.json"];

/// A mod project: a `mod.toml` beside a Cargo crate, an npm project or a `build.sh`.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project's folder (canonical).
    pub dir: PathBuf,
    /// The mod's id (`mod.toml`'s `id`): its folder under `<root>/mods/`.
    pub id: String,
    /// Its version (`mod.toml`'s `version`).
    pub version: String,
    /// The crate's library name (`Cargo.toml`'s package name, `-` as `_`): cargo's artifact name.
    /// Empty for a project built by a script.
    lib_name: String,
    /// For a project that is not a crate: the command that builds it and the component it writes.
    script: Option<Script>,
}

/// How a TypeScript or Python project (`modhost new --lang ts|python`) is built.
#[derive(Debug, Clone)]
struct Script {
    /// The program and its arguments (`npm run build`, `sh build.sh`).
    command: [&'static str; 3],
    /// The component it writes, relative to the project.
    output: PathBuf,
}

impl Project {
    /// Reads `dir/mod.toml` and how the project builds: `Cargo.toml` (a crate), `package.json`
    /// (`npm run build`, writing `dist/<id>.wasm`) or `build.sh` (writing `build/<id>.wasm`); an
    /// error names the file and what is wrong.
    pub fn read(dir: &Path) -> anyhow::Result<Project> {
        let dir = std::fs::canonicalize(dir).with_context(|| format!("the project folder {}", dir.display()))?;
        let path = dir.join("mod.toml");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let manifest = modhost_mods::Manifest::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let (id, version) = (manifest.id.to_string(), manifest.version.to_string());
        let script = if dir.join("Cargo.toml").is_file() {
            None
        } else if dir.join("package.json").is_file() {
            Some(Script { command: ["npm", "run", "build"], output: PathBuf::from(format!("dist/{id}.wasm")) })
        } else if dir.join("build.sh").is_file() {
            Some(Script { command: ["sh", "build.sh", ""], output: PathBuf::from(format!("build/{id}.wasm")) })
        } else {
            anyhow::bail!("{} has no Cargo.toml, package.json or build.sh to build the mod with", dir.display());
        };
        if script.is_some() {
            return Ok(Project { id, version, dir, lib_name: String::new(), script });
        }
        let path = dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let cargo: toml::Table = text.parse().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let lib_name = cargo
            .get("lib")
            .and_then(|lib| lib.get("name"))
            .or_else(|| cargo.get("package").and_then(|p| p.get("name")))
            .and_then(toml::Value::as_str)
            .with_context(|| format!("{}: no [package] name", path.display()))?
            .replace('-', "_");
        Ok(Project { id, version, dir, lib_name, script: None })
    }
}

impl Project {
    /// The command that builds it, as typed in its folder: `cargo build --release`, `npm run build`
    /// or `sh build.sh`.
    pub fn build_command(&self) -> String {
        match &self.script {
            Some(script) => script.command.join(" ").trim().to_owned(),
            None => "cargo build --release".to_owned(),
        }
    }
}

/// A successful build.
#[derive(Debug)]
pub struct Built {
    /// The component cargo wrote.
    pub wasm: PathBuf,
    /// How long `cargo build` took.
    pub took: Duration,
}

/// Why a build produced no component.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// cargo could not be started.
    #[error("cannot run `{cargo}`: {source}")]
    Spawn {
        /// The command.
        cargo: String,
        /// Why.
        source: std::io::Error,
    },
    /// The build failed: the compiler's errors (and cargo's own, or the build script's output).
    #[error("the build failed ({status}):\n{output}")]
    Failed {
        /// cargo's exit status.
        status: std::process::ExitStatus,
        /// The diagnostics, up to 64 KiB.
        output: String,
    },
    /// It ran past its deadline and was killed.
    #[error("cargo build ran past {} s and was stopped", .0.as_secs())]
    Timeout(Duration),
    /// It succeeded without writing a `.wasm` for the crate.
    #[error(
        "the build wrote no .wasm for `{0}`: for a crate, is the target wasm32-wasip2 (`[build] target` in \
         .cargo/config.toml) and the crate a cdylib?"
    )]
    NoComponent(String),
}

/// Appends `text` to `out`, up to [`DIAGNOSTICS_MAX`] in all.
fn keep(out: &mut String, text: &str) {
    let room = DIAGNOSTICS_MAX.saturating_sub(out.len());
    if text.len() <= room {
        out.push_str(text);
    } else if room > 0 {
        let cut = (0..=room).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        out.push_str(&text[..cut]);
        out.push_str("\n… (more output cut)\n");
    }
}

/// `cargo build --release` in the project (its `.cargo/config.toml` sets the wasm target), within
/// `deadline`. Blocking: run it off the async workers. The component's path comes from cargo's JSON
/// messages, so a `CARGO_TARGET_DIR` or a renamed lib is found where cargo put it.
pub fn build(project: &Project, deadline: Duration) -> Result<Built, BuildError> {
    if let Some(script) = &project.script {
        return build_script(project, script, deadline);
    }
    let started = Instant::now();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut child = Command::new(&cargo)
        .current_dir(&project.dir)
        .args(["build", "--release", "--message-format=json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| BuildError::Spawn { cargo: cargo.clone(), source })?;
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(BuildError::Spawn { cargo, source: std::io::Error::other("no pipes to cargo") });
    };
    let manifest = project.dir.join("Cargo.toml");
    let lib_name = project.lib_name.clone();
    // Both pipes drained on threads, so a full pipe never stalls cargo, and the deadline is kept here.
    let messages = std::thread::spawn(move || {
        let (mut wasm, mut diagnostics) = (None, String::new());
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
            match message["reason"].as_str() {
                Some("compiler-message") if message["message"]["level"] == "error" => {
                    keep(&mut diagnostics, message["message"]["rendered"].as_str().unwrap_or_default());
                }
                Some("compiler-artifact")
                    if message["target"]["name"] == lib_name.as_str()
                        && message["manifest_path"].as_str().is_some_and(|p| Path::new(p) == manifest) =>
                {
                    let mut files = message["filenames"].as_array().into_iter().flatten().filter_map(|f| f.as_str());
                    if let Some(file) = files.rfind(|f| f.ends_with(".wasm")) {
                        wasm = Some(PathBuf::from(file));
                    }
                }
                _ => {}
            }
        }
        (wasm, diagnostics)
    });
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(DIAGNOSTICS_MAX as u64).read_to_end(&mut text);
        // The rest is read and dropped, or cargo would block on a full pipe.
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&text).into_owned()
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(BuildError::Timeout(deadline));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(source) => break Err(BuildError::Spawn { cargo: cargo.clone(), source }),
        }
    };
    let (wasm, diagnostics) = messages.join().unwrap_or_default();
    let cargo_said = errors.join().unwrap_or_default();
    let status = status?;
    if !status.success() {
        // cargo's own lines (`error: could not compile`, a manifest that does not parse) after the
        // compiler's errors; its progress lines (`Compiling`) are left out.
        let mut output = diagnostics;
        for line in cargo_said.lines().filter(|l| !l.trim_start().starts_with("Compiling")) {
            // cargo repeats some of the compiler's lines (`could not compile`) in its own.
            if !output.contains(line) {
                keep(&mut output, &format!("{line}\n"));
            }
        }
        return Err(BuildError::Failed { status, output });
    }
    let wasm = wasm.ok_or_else(|| BuildError::NoComponent(project.lib_name.clone()))?;
    Ok(Built { wasm, took: started.elapsed() })
}

/// Runs a project's build script within `deadline` and answers the component it wrote. Its output
/// (both pipes, drained on threads so a full pipe never stalls it) is kept, bounded, for a failure.
fn build_script(project: &Project, script: &Script, deadline: Duration) -> Result<Built, BuildError> {
    let started = Instant::now();
    let [program, args @ ..] = script.command;
    let shown = script.command.join(" ").trim().to_owned();
    let mut child = Command::new(program)
        .current_dir(&project.dir)
        .args(args.iter().filter(|a| !a.is_empty()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| BuildError::Spawn { cargo: shown.clone(), source })?;
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut out = String::new();
            if let Some(pipe) = pipe {
                for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
                    keep(&mut out, &format!("{line}\n"));
                }
            }
            out
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(BuildError::Timeout(deadline));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(source) => break Err(BuildError::Spawn { cargo: shown.clone(), source }),
        }
    };
    let output = stdout.join().unwrap_or_default() + &stderr.join().unwrap_or_default();
    let status = status?;
    if !status.success() {
        return Err(BuildError::Failed { status, output });
    }
    let wasm = project.dir.join(&script.output);
    if !wasm.is_file() {
        return Err(BuildError::NoComponent(format!("{shown} (it should write {})", script.output.display())));
    }
    Ok(Built { wasm, took: started.elapsed() })
}

/// Installs the built component with `mod.toml` (and the config files the project has) into
/// `<root>/mods/<id>/`. Each file is copied aside under a hidden name, which `serve --watch` and
/// mod discovery ignore, then renamed over the installed one; a config file the project no longer
/// has is removed from the install.
pub fn install(project: &Project, wasm: &Path, root: &Path) -> anyhow::Result<()> {
    let folder = root.join("mods").join(&project.id);
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    let wasm_name = format!("{}.wasm", project.id);
    let mut files = vec![(wasm.to_owned(), wasm_name.as_str()), (project.dir.join("mod.toml"), "mod.toml")];
    for name in CONFIG_FILES {
        let from = project.dir.join(name);
        if from.is_file() {
            files.push((from, name));
        } else {
            let stale = folder.join(name);
            if stale.exists() {
                std::fs::remove_file(&stale).with_context(|| format!("removing {}", stale.display()))?;
            }
        }
    }
    for (from, name) in files {
        let aside = folder.join(format!(".{name}.dev-part"));
        let to = folder.join(name);
        std::fs::copy(&from, &aside).with_context(|| format!("copying {} to {}", from.display(), aside.display()))?;
        std::fs::rename(&aside, &to).with_context(|| format!("renaming {} to {}", aside.display(), to.display()))?;
    }
    Ok(())
}

/// Whether a change at `path` means a new build: a file under `src/` or one of [`WATCHED_FILES`],
/// not a hidden or temporary file (what editors write beside the one they save).
fn relevant(project: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(project) else { return false };
    let hidden = rel.components().any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')));
    let temp = rel.extension().is_some_and(|e| e == "tmp" || e == "swp") || rel.to_string_lossy().ends_with('~');
    if hidden || temp {
        return false;
    }
    // A Python project keeps its modules at the top (`app.py`).
    let top_level_python = rel.components().count() == 1 && rel.extension().is_some_and(|e| e == "py");
    (rel.starts_with("src") && rel != Path::new("src"))
        || WATCHED_FILES.iter().any(|f| rel == Path::new(f))
        || top_level_python
}

/// What one change came to.
#[derive(Debug)]
pub enum Event {
    /// A cycle starts: these files changed (project-relative, at most a few shown).
    Building {
        /// The changed files.
        changed: Vec<String>,
    },
    /// `mod.toml` or `Cargo.toml` does not read, or the build failed: nothing was installed.
    BuildFailed {
        /// What went wrong: cargo's errors, or the file and key.
        error: String,
    },
    /// Built and installed, but the install or the reload failed: the old version keeps serving.
    Refused {
        /// Why (the reload's reason).
        reason: String,
    },
    /// The reload swapped, but left this mod out (it was not serving before either).
    LeftOut {
        /// Why.
        reason: String,
    },
    /// The new version serves.
    Live {
        /// The mod's version now serving.
        version: String,
        /// The generation serving it.
        generation: u64,
        /// From the first change of this cycle to the swap.
        since_change: Duration,
        /// Of that, the build.
        build: Duration,
        /// Of that, the reload.
        reload: Duration,
    },
}

/// One cycle: read the project, build, install, reload. `changed_at` is when its first change came.
async fn cycle(app: &App, dir: &Path, id: &str, deadline: Duration, changed_at: Instant) -> Event {
    let project = match Project::read(dir) {
        Ok(p) if p.id != id => {
            let error = format!("mod.toml's id changed from `{id}` to `{}`: restart `modhost dev` to serve it", p.id);
            return Event::BuildFailed { error };
        }
        Ok(p) => p,
        Err(e) => return Event::BuildFailed { error: format!("{e:#}") },
    };
    let built = {
        let project = project.clone();
        tokio::task::spawn_blocking(move || build(&project, deadline)).await
    };
    let built = match built {
        Ok(Ok(built)) => built,
        Ok(Err(e)) => return Event::BuildFailed { error: e.to_string() },
        Err(e) => return Event::BuildFailed { error: format!("the build task failed: {e}") },
    };
    if let Err(e) = install(&project, &built.wasm, &app.config.root) {
        return Event::Refused { reason: format!("installing: {e:#}") };
    }
    let reload_started = Instant::now();
    let outcome = app.reload().await;
    if !outcome.ok {
        return Event::Refused { reason: outcome.reason.unwrap_or_else(|| "no reason given".to_owned()) };
    }
    // A folder that could not be read is reported under its path.
    let ours = |name: &str| name == id || Path::new(name).file_name().is_some_and(|n| n == id);
    if let Some(left) = outcome.failed.iter().find(|left| ours(&left.id)) {
        return Event::LeftOut { reason: left.reason.clone() };
    }
    let prefix = format!("{id} ");
    let version = outcome.loaded.iter().find_map(|m| m.strip_prefix(&prefix)).unwrap_or(&project.version);
    Event::Live {
        version: version.to_owned(),
        generation: outcome.generation,
        since_change: changed_at.elapsed(),
        build: built.took,
        reload: reload_started.elapsed(),
    }
}

/// A running dev loop; dropping it stops watching.
pub struct Dev {
    _watcher: RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Dev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dev").finish_non_exhaustive()
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the loop on `project` for `app`: a first cycle at once, then one per settled change. Each
/// cycle's start and outcome go to `report`. A build past `build_deadline` is stopped.
pub fn start(
    app: Arc<App>,
    project: Project,
    build_deadline: Duration,
    report: impl Fn(Event) + Send + Sync + 'static,
) -> anyhow::Result<Dev> {
    let dir = project.dir.clone();
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(Instant, PathBuf)>(QUEUED_CHANGES);
    let filter_dir = dir.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
        Ok(event) if crate::watch::is_write(&event.kind) => {
            let now = Instant::now();
            for path in event.paths.into_iter().filter(|p| relevant(&filter_dir, p)) {
                let _ = tx.try_send((now, path));
            }
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("watching the project: {e}"),
    })?;
    let src = dir.join("src");
    if src.is_dir() {
        watcher.watch(&src, RecursiveMode::Recursive).with_context(|| format!("watching {}", src.display()))?;
    }
    // The folder itself, not its files: an editor that saves by rename makes a new file a file watch misses.
    watcher.watch(&dir, RecursiveMode::NonRecursive).with_context(|| format!("watching {}", dir.display()))?;
    let id = project.id.clone();
    let task = tokio::spawn(async move {
        report(Event::Building { changed: Vec::new() });
        report(cycle(&app, &dir, &id, build_deadline, Instant::now()).await);
        while let Some((changed_at, first)) = rx.recv().await {
            let mut changed = vec![first];
            while let Ok(Some((_, path))) = tokio::time::timeout(SETTLE, rx.recv()).await {
                if !changed.contains(&path) && changed.len() < 64 {
                    changed.push(path);
                }
            }
            let shown = changed.iter().map(|p| p.strip_prefix(&dir).unwrap_or(p).display().to_string()).collect();
            report(Event::Building { changed: shown });
            report(cycle(&app, &dir, &id, build_deadline, changed_at).await);
        }
    });
    Ok(Dev { _watcher: watcher, task })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_and_manifests_matter_and_target_does_not() {
        let p = Path::new("/p");
        for loud in [
            "/p/src/lib.rs",
            "/p/src/deep/mod.rs",
            "/p/Cargo.toml",
            "/p/mod.toml",
            "/p/config.default.json",
            "/p/config.schema.json",
            "/p/package.json",
            "/p/src/mod.ts",
            "/p/app.py",
            "/p/build.sh",
        ] {
            assert!(relevant(p, Path::new(loud)), "{loud}");
        }
        for quiet in [
            "/p/target/wasm32-wasip2/release/m.wasm",
            "/p/target/modhost-dev/mods/m/m.wasm",
            "/p/Cargo.lock",
            "/p/src",
            "/p/src/.lib.rs.swp",
            "/p/src/lib.rs~",
            "/p/src/lib.rs.tmp",
            "/p/.git/index",
            "/p/README.md",
            "/p/dist/m.wasm",
            "/p/node_modules/x/index.py",
            "/p/build/m.wasm",
            "/elsewhere/src/lib.rs",
        ] {
            assert!(!relevant(p, Path::new(quiet)), "{quiet}");
        }
    }

    #[test]
    fn npm_and_script_projects_are_read_with_their_build_command() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mod.toml"), "id = \"m\"\nversion = \"0.1.0\"\n").unwrap();
        let e = Project::read(dir.path()).unwrap_err().to_string();
        assert!(e.contains("no Cargo.toml, package.json or build.sh"), "{e}");
        std::fs::write(dir.path().join("build.sh"), "exit 3\n").unwrap();
        let script = Project::read(dir.path()).unwrap();
        assert_eq!(script.script.as_ref().unwrap().output, Path::new("build/m.wasm"));
        let e = build(&script, Duration::from_secs(30)).unwrap_err().to_string();
        assert!(e.contains("the build failed"), "{e}");
        std::fs::write(dir.path().join("build.sh"), "mkdir -p build && echo wasm > build/m.wasm\n").unwrap();
        assert!(build(&script, Duration::from_secs(30)).unwrap().wasm.ends_with("build/m.wasm"));
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        let npm = Project::read(dir.path()).unwrap();
        assert_eq!(npm.script.unwrap().command, ["npm", "run", "build"]);
    }

    #[test]
    fn kept_diagnostics_are_bounded_on_a_char_boundary() {
        let mut out = String::new();
        keep(&mut out, &"é".repeat(DIAGNOSTICS_MAX));
        assert!(out.len() <= DIAGNOSTICS_MAX + 32, "{}", out.len());
        assert!(out.ends_with("(more output cut)\n"));
        let before = out.len();
        keep(&mut out, "more");
        assert_eq!(out.len(), before, "nothing past the cap");
    }

    #[test]
    fn install_writes_aside_then_renames_and_drops_stale_config() {
        let dir = tempfile::tempdir().unwrap();
        let project_dir = dir.path().join("p");
        std::fs::create_dir_all(&project_dir).unwrap();
        std::fs::write(project_dir.join("mod.toml"), "id = \"m\"\nversion = \"0.1.0\"\n").unwrap();
        std::fs::write(project_dir.join("Cargo.toml"), "[package]\nname = \"m-crate\"\n").unwrap();
        std::fs::write(project_dir.join("config.default.json"), "{}").unwrap();
        let wasm = dir.path().join("built.wasm");
        std::fs::write(&wasm, b"\0asm").unwrap();
        let project = Project::read(&project_dir).unwrap();
        assert_eq!((project.id.as_str(), project.lib_name.as_str()), ("m", "m_crate"));
        let root = dir.path().join("root");
        let folder = root.join("mods/m");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("config.schema.json"), "{}").unwrap();
        install(&project, &wasm, &root).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["config.default.json", "m.wasm", "mod.toml"], "nothing left aside, stale config gone");
        assert_eq!(std::fs::read(folder.join("m.wasm")).unwrap(), b"\0asm");
    }
}
