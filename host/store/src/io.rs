//! [`Backend`]: every file-system call the store makes, behind a trait, so tests can make any step fail
//! (ENOSPC, EIO) and check that the store answers an error, keeps the old value and goes on working.
//! [`RealFs`] is the one the server uses.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// A file being written: the temp file of one commit.
pub trait NewFile: Send {
    /// Writes all of `bytes`.
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Flushes the file's data and metadata to the device (fsync).
    fn sync(&mut self) -> io::Result<()>;
}

/// The file-system calls of the store.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// Reads a whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Creates a file that must not exist yet (`O_CREAT | O_EXCL`).
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn NewFile>>;
    /// Renames `from` over `to`, atomically replacing it.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Flushes a directory's entries to the device (fsync on the directory).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// The names in a directory (an absent directory is empty).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealFs;

struct RealFile(File);

impl NewFile for RealFile {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.write_all(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.0.sync_all()
    }
}

impl Backend for RealFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn NewFile>> {
        Ok(Box::new(RealFile(OpenOptions::new().write(true).create_new(true).open(path)?)))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        match fs::read_dir(dir) {
            Ok(entries) => entries.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }
}
