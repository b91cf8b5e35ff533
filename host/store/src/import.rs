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

use crate::check_key;
use rusqlite::{Connection, OptionalExtension, params};
use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// Where the old namespace directories are kept after the import.
pub(crate) const ASIDE: &str = ".files-layout";

/// Imports the old layout found in `dir`, if any.
pub(crate) fn from_files_layout(dir: &Path, conn: &Connection) -> Result<(), String> {
    let mut namespaces = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) && check_key(&name).is_ok() {
            namespaces.push(name);
        }
    }
    if namespaces.is_empty() {
        return Ok(());
    }
    namespaces.sort();
    let done: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE name = 'files_imported'", [], |row| row.get(0))
        .optional()
        .map_err(|e| e.to_string())?;
    if done.is_none() {
        let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
        let mut keys = 0usize;
        for ns in &namespaces {
            keys += import_namespace(&tx, &dir.join(ns), ns)?;
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
        fs::rename(dir.join(ns), &target).map_err(|e| {
            format!("imported, but cannot move {} aside to {}: {e}", dir.join(ns).display(), target.display())
        })?;
    }
    Ok(())
}

/// Imports one namespace directory's keys and backups; answers how many keys.
fn import_namespace(conn: &Connection, folder: &Path, ns: &str) -> Result<usize, String> {
    let mut keys = 0;
    for (name, path) in files(folder)? {
        if check_key(&name).is_err() {
            // A commit a crash interrupted (`.tmp-…`) or a file that was never a key.
            continue;
        }
        let value = fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        conn.execute("INSERT OR REPLACE INTO kv (ns, key, value) VALUES (?1, ?2, ?3)", params![ns, name, value])
            .map_err(|e| e.to_string())?;
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
            "INSERT OR REPLACE INTO history (ns, key, slot, saved_ms, value) VALUES (?1, ?2, ?3, ?4, ?5)",
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
