//! [`RootLock`]: one modhost per store. An exclusive `flock` on `<store>/.lock`, held while the store
//! is open and released by the kernel when the process ends however it ends (so a crash never leaves a
//! stale lock). The holder writes its pid into the file so a second instance can say who holds it.
//!
//! The lock is what makes the in-memory value cache safe: no other process writes the files behind it.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The held lock; dropping it releases it.
#[derive(Debug)]
pub(crate) struct RootLock {
    _file: File,
}

/// The store is already in use.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error("the store in {dir} is in use by process {holder} (another modhost?); stop it first")]
    Held {
        /// The store's directory.
        dir: String,
        /// The process the lock file names.
        holder: String,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock the store in {dir}: {source}")]
    Io {
        /// The store's directory.
        dir: String,
        /// The underlying error.
        source: io::Error,
    },
}

impl RootLock {
    pub(crate) fn acquire(dir: &Path) -> Result<RootLock, LockError> {
        let shown = dir.display().to_string();
        let io = |source| LockError::Io { dir: shown.clone(), source };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(".lock"))
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = if holder.trim().is_empty() { "unknown".to_owned() } else { holder.trim().to_owned() };
                return Err(LockError::Held { dir: shown, holder });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(RootLock { _file: file })
    }
}
