//! `serve --watch`: reload when a mod's files or `db.json` change.
//!
//! `notify` delivers inotify events; only writes count (create, modify, remove, rename, a file closed
//! after writing), never reads: a reload reads `db.json` and lists `mods/`, and counting that would
//! reload forever. Events settle for [`SETTLE`] before a reload starts, so a `.wasm` copied in pieces
//! or a build that rewrites several files makes one reload; changes that arrive during a reload make
//! exactly one more after it. A reload that fails on a half-written file is followed by the one its
//! last write triggers.
//!
//! Watched: `<root>/mods/` (recursively), `<root>/db.json` and `<root>/modhost.toml` (the player's
//! limits, applied anew by each reload). Not watched: the store, the compile cache, `perf.txt`.

use crate::app::App;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Quiet time after the last change before a reload starts.
pub const SETTLE: Duration = Duration::from_millis(300);

/// A running watcher; dropping it stops watching.
pub struct Watch {
    _watcher: RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch").finish_non_exhaustive()
    }
}

impl Watch {
    /// Stops watching and waits until the reload task (and its hold on the app) is gone.
    pub async fn stop(self) {
        let mut this = self;
        this.task.abort();
        let _ = (&mut this.task).await;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whether an event is a write (reads and metadata-only opens are not). `dev.rs` counts the same.
pub(crate) fn is_write(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    }
}

/// Whether a change at `path` should reload: a file under `mods/` (not a hidden or temporary one,
/// which editors and copiers write before renaming), `db.json`, or the player's `modhost.toml`.
fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else { return false };
    let hidden = rel.components().any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')));
    let temp = rel.extension().is_some_and(|e| e == "tmp" || e == "swp") || rel.to_string_lossy().ends_with('~');
    if hidden || temp {
        return false;
    }
    rel == Path::new("db.json") || rel == Path::new("modhost.toml") || rel.starts_with("mods")
}

/// Starts watching `app`'s root; each settled change runs [`App::reload`].
pub fn start(app: Arc<App>) -> anyhow::Result<Watch> {
    let root = std::fs::canonicalize(&app.config.root)?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
    let filter_root = root.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
        Ok(event) if is_write(&event.kind) => {
            for path in event.paths.into_iter().filter(|p| relevant(&filter_root, p)) {
                let _ = tx.send(path);
            }
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("watching the mods: {e}"),
    })?;
    watcher.watch(&root.join("mods"), RecursiveMode::Recursive)?;
    // The root itself, not db.json: a db.json replaced by rename is a new file a file watch would miss.
    watcher.watch(&root, RecursiveMode::NonRecursive)?;
    tracing::info!("watching {}, db.json and modhost.toml for changes", root.join("mods").display());
    let task = tokio::spawn(async move {
        while let Some(first) = rx.recv().await {
            let mut changed = vec![first];
            // Settle: keep collecting until SETTLE passes without a change.
            while let Ok(Some(path)) = tokio::time::timeout(SETTLE, rx.recv()).await {
                if !changed.contains(&path) && changed.len() < 64 {
                    changed.push(path);
                }
            }
            let shown: Vec<String> =
                changed.iter().take(3).map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string()).collect();
            let more = if changed.len() > 3 { ", …" } else { "" };
            tracing::info!("changed: {}{more}; reloading", shown.join(", "));
            app.reload().await;
        }
    });
    Ok(Watch { _watcher: watcher, task })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_not_changes() {
        use notify::event::{CreateKind, ModifyKind};
        assert!(is_write(&EventKind::Create(CreateKind::File)));
        assert!(is_write(&EventKind::Modify(ModifyKind::Any)));
        assert!(is_write(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(!is_write(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!is_write(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(!is_write(&EventKind::Access(AccessKind::Read)));
    }

    #[test]
    fn only_mods_and_the_db_matter() {
        let root = Path::new("/r");
        assert!(relevant(root, Path::new("/r/db.json")));
        assert!(relevant(root, Path::new("/r/mods/hello/hello.wasm")));
        assert!(relevant(root, Path::new("/r/mods/hello/mod.toml")));
        assert!(relevant(root, Path::new("/r/mods/hello")));
        assert!(relevant(root, Path::new("/r/modhost.toml")));
        for quiet in [
            "/r/perf.txt",
            "/r/store/emulator/x.json",
            "/r/cache/ab.cwasm",
            "/r/db.json.new",
            "/r/mods/.hello.wasm.part",
            "/r/mods/hello/.mod.toml.swp",
            "/r/mods/hello/hello.wasm.tmp",
            "/elsewhere/db.json",
        ] {
            assert!(!relevant(root, Path::new(quiet)), "{quiet}");
        }
    }
}
