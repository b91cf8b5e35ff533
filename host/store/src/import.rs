//! The one-time import of a store in the old layout (one directory per namespace, one file per key,
//! backups in `<namespace>/.hist/<key>.<1..3>`) into the SQLite database, at the first open that finds
//! one.
//!
//! Nothing is deleted: after the import commits, each namespace directory is moved, whole, into
//! `<store>/.files-layout/`, where a player can still read it. The import is one transaction that also
//! records itself in `meta`, so a crash before its commit imports again from scratch at the next open,
//! and a crash between the commit and the moves only finishes the moves (a value written since is
//! never overwritten by an old file). A file that cannot be read stops the open with its name: a
//! profile is never left behind silently.
//!
//! What must not break: the import never replaces a value (or a backup) the database already holds.
//! A namespace-named folder can appear in a store that has been running on SQLite (a player copying an
//! old store in): its files are older than the live values, so those stay, and each key whose file was
//! not imported is logged with where the file is kept. A folder that appears after the import ran is
//! moved aside unread, and that is logged too, naming where it went: a player looking for it finds it.

use crate::check_key;
use rusqlite::{Connection, OptionalExtension, params};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Where the old namespace directories are kept after the import.
pub(crate) const ASIDE: &str = ".files-layout";

/// What an open did with the old layout it found (each part is logged as well).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Report {
    /// Keys whose file was not imported because the database already held a value for them
    /// (namespace, key).
    pub(crate) kept: Vec<(String, String)>,
    /// Folders moved aside: from, to, and whether their keys were imported (false: the import had
    /// run before, so they were moved unread).
    pub(crate) moved: Vec<(PathBuf, PathBuf, bool)>,
}

/// Imports the old layout found in `dir`, if any.
pub(crate) fn from_files_layout(dir: &Path, conn: &Connection) -> Result<Report, String> {
    let mut report = Report::default();
    let mut namespaces = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) && check_key(&name).is_ok() {
            namespaces.push(name);
        }
    }
    if namespaces.is_empty() {
        return Ok(report);
    }
    namespaces.sort();
    let done: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE name = 'files_imported'", [], |row| row.get(0))
        .optional()
        .map_err(|e| e.to_string())?;
    let importing = done.is_none();
    if importing {
        let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
        let mut keys = 0usize;
        for ns in &namespaces {
            keys += import_namespace(&tx, &dir.join(ns), ns, &mut report.kept)?;
        }
        let note = format!("{keys} keys in {} namespaces", namespaces.len());
        tx.execute("INSERT INTO meta (name, value) VALUES ('files_imported', ?1)", params![note])
            .map_err(|e| e.to_string())?;
        tx.commit().map_err(|e| format!("the import's commit failed: {e}"))?;
        tracing::info!("imported the old one-file-per-key store ({note}); its folders are kept in {ASIDE}/");
    }
    let aside = dir.join(ASIDE);
    fs::create_dir_all(&aside).map_err(|e| format!("cannot create {}: {e}", aside.display()))?;
    for ns in &namespaces {
        let mut target = aside.join(ns);
        for n in 1..1000 {
            if !target.exists() {
                break;
            }
            target = aside.join(format!("{ns}.{n}"));
        }
        let from = dir.join(ns);
        fs::rename(&from, &target)
            .map_err(|e| format!("imported, but cannot move {} aside to {}: {e}", from.display(), target.display()))?;
        if !importing {
            tracing::warn!(
                "the store folder {} looks like an old-layout namespace, but the old store was imported \
                 before ({}): it was not imported, and is kept, moved to {}; `modhost store import \
                 {ns} <that folder>` stores its files if they are wanted",
                from.display(),
                done.as_deref().unwrap_or_default(),
                target.display()
            );
        }
        report.moved.push((from, target, importing));
    }
    for (ns, key) in &report.kept {
        tracing::warn!(
            "the old store's file for `{ns}/{key}` was not imported: the store already holds a value for it, \
             which was kept; the file is in {}",
            report
                .moved
                .iter()
                .find(|(from, ..)| from.ends_with(ns))
                .map_or_else(|| aside.join(ns).display().to_string(), |(_, to, _)| to.display().to_string())
        );
    }
    Ok(report)
}

/// Imports one namespace directory's keys and backups; answers how many keys.
/// A key the database already holds is not imported (its live value is newer than the file); it is
/// added to `kept`. Backups already held are not replaced either.
fn import_namespace(
    conn: &Connection,
    folder: &Path,
    ns: &str,
    kept: &mut Vec<(String, String)>,
) -> Result<usize, String> {
    let mut keys = 0;
    for (name, path) in files(folder)? {
        if check_key(&name).is_err() {
            // A commit a crash interrupted (`.tmp-…`) or a file that was never a key.
            continue;
        }
        let value = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let added = conn
            .execute("INSERT OR IGNORE INTO kv (ns, key, value) VALUES (?1, ?2, ?3)", params![ns, name, value])
            .map_err(|e| e.to_string())?;
        if added == 0 {
            kept.push((ns.to_owned(), name));
            continue;
        }
        keys += 1;
    }
    for (name, path) in files(&folder.join(".hist"))? {
        let Some((key, slot)) = name.rsplit_once('.') else { continue };
        let (Ok(slot), Ok(())) = (slot.parse::<i64>(), check_key(key).map_err(|_| ())) else { continue };
        if !(1..=3).contains(&slot) {
            continue;
        }
        let value = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let saved = fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        conn.execute(
            "INSERT OR IGNORE INTO history (ns, key, slot, saved_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![ns, key, slot, saved, value],
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(keys)
}

/// The regular files of a directory (none when it does not exist), by name.
fn files(folder: &Path) -> Result<Vec<(String, std::path::PathBuf)>, String> {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", folder.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", folder.display()))?;
        // Follows symlinks: a value a player linked in is a value; one whose target is gone is an
        // error, not a silent skip.
        let path = entry.path();
        let meta = fs::metadata(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if meta.is_file() {
            out.push((entry.file_name().to_string_lossy().into_owned(), path));
        }
    }
    out.sort();
    Ok(out)
}
