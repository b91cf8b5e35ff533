//! `modhost import-spt-db`: a database folder as SPT ships it (`globals.json`, `templates/`,
//! `locales/`, `traders/<id>/`, `locations/<map>/`, `hideout/`, `bots/`, …) made into the one db
//! document the host loads as `<root>/db.json`.
//!
//! The layout contract (the emulator and the generator rely on it): a folder is an object member named
//! after the folder, `<name>.json` is a member `<name>` holding the file's JSON, so
//! `traders/<id>/base.json` is db path `traders.<id>.base`. Members are written in sorted order (byte
//! order of their names), so one folder always makes the same document.
//!
//! A real database is several hundred MB, so nothing here builds a tree: each file streams through
//! a fixed buffer ([`READ_CHUNK`]) that is validated as JSON by serde_json (visited, never
//! materialized) and copied to the output as it goes. Memory is the buffer, the output's buffer and
//! one folder's listing, whatever the files' sizes. The output is written beside `--out` and renamed
//! over it only when the whole import succeeded: a failed import never leaves a half `db.json` (nor
//! touches the old one).
//!
//! What is refused, naming the file: invalid or empty JSON (with line and column), text that is not
//! UTF-8, a file nesting so deep that the document would pass [`MAX_NESTING`], two members of one
//! name (`x/` beside `x.json`), a name that is not UTF-8, a symlink back into its own ancestors, a tree
//! deeper than [`MAX_FOLDER_DEPTH`] or larger than [`MAX_ENTRIES`], a document past the db's 4 GiB. A
//! folder without `globals.json` and `templates/items.json` is not an SPT database. Files that are
//! not `.json` (images, readmes) and hidden entries (`.git`, `.DS_Store`) are skipped and counted.
//!
//! SPT's configs (`configs/core.json`, `weather.json`, `inraid.json`, …) sit beside its database, not
//! in it, yet the game reads some of their values (versions, the weather's seasons, the raid's
//! rules). Given a configs folder, the import writes it as one more member of the root, `configs`,
//! by the same rule (`configs/core.json` is `configs.core`); the game falls back to SPT's values for
//! what a database without it lacks.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::fmt;
use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How many folders deep the tree may go below the database folder (SPT's own goes 2 deep:
/// `locations/<map>/`). Also bounds a symlink maze that is not a loop.
pub const MAX_FOLDER_DEPTH: usize = 16;
/// How many files and folders an import may visit (SPT's database has about 300).
pub const MAX_ENTRIES: u64 = 100_000;
/// How many arrays and objects may enclose one another in the whole document, counting the root and
/// the folders' objects. serde_json's default recursion limit (128) stops a reader at this depth, and
/// the mods read db values with serde_json, so no deeper value is written.
pub const MAX_NESTING: usize = 127;
/// The largest document the db engine loads (its offsets are 32-bit).
pub const MAX_DOCUMENT_BYTES: u64 = u32::MAX as u64;
/// The read buffer each file streams through.
pub const READ_CHUNK: usize = 256 * 1024;
/// Skipped paths a summary keeps to show (the count is exact).
const SKIPPED_SHOWN: usize = 5;
/// The UTF-8 byte order mark some editors on Windows put before JSON.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What an import did.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// JSON files imported.
    pub files: u64,
    /// Folders imported (the database folder included).
    pub folders: u64,
    /// Bytes of JSON read (byte order marks excluded).
    pub bytes_in: u64,
    /// Bytes of the document written.
    pub bytes_out: u64,
    /// Files and hidden entries skipped: not `.json`, or hidden.
    pub skipped: u64,
    /// The first few skipped paths.
    pub skipped_examples: Vec<PathBuf>,
    /// Wall time of the import.
    pub elapsed: Duration,
}

/// Why an import failed. Every message names the path.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The folder lacks the files every SPT database has.
    #[error("{path} is not an SPT database folder: it has no {missing}{hint}")]
    NotSptDatabase {
        /// The folder.
        path: PathBuf,
        /// What it lacks, in words (`globals.json and templates/items.json`).
        missing: String,
        /// A suggestion (`; did you mean …/database?`), or empty.
        hint: String,
    },
    /// A file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A `.json` file is not valid JSON (or not UTF-8, or nests too deep).
    #[error("{path}:{line}:{column}: {reason}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column (bytes, after a byte order mark).
        column: usize,
        /// What is wrong there.
        reason: String,
    },
    /// A `.json` file holds no value (nothing, or only whitespace and a byte order mark).
    #[error("{path} is empty: a .json file must hold a JSON value")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A name that cannot be a member name.
    #[error("{path}: the name is not UTF-8, so it cannot be a db member")]
    BadName {
        /// The entry.
        path: PathBuf,
    },
    /// Two entries of one folder make the same member.
    #[error("{first} and {second} would both be the member `{name}`")]
    Duplicate {
        /// The member name.
        name: String,
        /// One entry.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// A folder is (through a symlink) one of its own ancestors.
    #[error("{path} loops back to {ancestor} (a symlink loop)")]
    SymlinkLoop {
        /// The folder reached.
        path: PathBuf,
        /// The ancestor it is.
        ancestor: PathBuf,
    },
    /// The tree is deeper than [`MAX_FOLDER_DEPTH`].
    #[error("{path} is more than {MAX_FOLDER_DEPTH} folders below the database folder")]
    TooDeep {
        /// The first folder past the limit.
        path: PathBuf,
    },
    /// The tree has more than [`MAX_ENTRIES`] entries.
    #[error("{path} holds more than {MAX_ENTRIES} files and folders")]
    TooMany {
        /// The database folder.
        path: PathBuf,
    },
    /// The document would pass [`MAX_DOCUMENT_BYTES`].
    #[error("the document passes {MAX_DOCUMENT_BYTES} bytes (the db's limit) at {path}")]
    TooLarge {
        /// The file that took it past.
        path: PathBuf,
    },
    /// `--out` cannot be written there.
    #[error("cannot write {path}: {reason}")]
    Out {
        /// The output path.
        path: PathBuf,
        /// Why, in words.
        reason: String,
    },
    /// Writing the document failed (disk full, …).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Imports the SPT database `folder` into the document `out`, replacing it only when the whole import
/// succeeded (the document is written to a hidden file beside `out`, then renamed over it).
///
/// `configs`: SPT's configs folder, imported as the member `configs` (see the module doc).
pub fn import(folder: &Path, configs: Option<&Path>, out: &Path) -> Result<Summary, ImportError> {
    let started = Instant::now();
    check_database(folder)?;
    let aside = aside_path(folder, out)?;
    let file = fs::File::create(&aside).map_err(|source| ImportError::Write { path: aside.clone(), source })?;
    // Removes the half document on every early return.
    let guard = RemoveOnDrop(Some(aside.clone()));
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    let mut summary = write_document(folder, configs, &mut writer)?;
    let file = writer.into_inner().map_err(|e| ImportError::Write { path: aside.clone(), source: e.into_error() })?;
    // On disk before the rename, so a crash cannot leave a renamed but empty db.json.
    file.sync_all().map_err(|source| ImportError::Write { path: aside.clone(), source })?;
    drop(file);
    fs::rename(&aside, out).map_err(|source| ImportError::Write { path: out.to_owned(), source })?;
    std::mem::forget(guard);
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Writes the document of the SPT database `folder` to `out` (any writer), checking the folder's
/// layout first, with `configs` as the member `configs` when given. [`import`] is this plus the file
/// handling.
pub fn write_document(folder: &Path, configs: Option<&Path>, out: &mut impl Write) -> Result<Summary, ImportError> {
    let started = Instant::now();
    check_database(folder)?;
    let mut walk = Walk {
        root: folder.to_owned(),
        configs: configs.map(Path::to_owned),
        out: Counted { inner: out, written: 0 },
        summary: Summary::default(),
        ancestors: Vec::new(),
        entries: 0,
        buf: vec![0; READ_CHUNK].into_boxed_slice(),
    };
    walk.object(folder, 0)?;
    walk.out.flush().map_err(|source| ImportError::Write { path: folder.to_owned(), source })?;
    walk.summary.bytes_out = walk.out.written;
    walk.summary.elapsed = started.elapsed();
    Ok(walk.summary)
}

/// Refuses a folder that is not an SPT database, saying what it lacks (and where one may be).
fn check_database(folder: &Path) -> Result<(), ImportError> {
    let meta = fs::metadata(folder).map_err(|source| ImportError::Read { path: folder.to_owned(), source })?;
    if !meta.is_dir() {
        return Err(ImportError::Read {
            path: folder.to_owned(),
            source: io::Error::new(io::ErrorKind::NotADirectory, "not a folder"),
        });
    }
    let required = ["globals.json", "templates/items.json"];
    let missing: Vec<&str> = required.iter().copied().filter(|f| !folder.join(f).is_file()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    // Where the database sits in an SPT install or checkout, when the player named a parent.
    let hint = ["database", "Assets/database", "SPT_Data/Server/database", "SPT_Data/database"]
        .iter()
        .map(|sub| folder.join(sub))
        .find(|candidate| required.iter().all(|f| candidate.join(f).is_file()))
        .map(|found| format!("; did you mean {}?", found.display()))
        .unwrap_or_default();
    Err(ImportError::NotSptDatabase { path: folder.to_owned(), missing: missing.join(" and "), hint })
}

/// The hidden file beside `out` that the document is written to, after checking `out` can be written
/// there: its folder exists, it is not a folder, and it is not inside the database (where the next
/// import would read it back as a member).
fn aside_path(folder: &Path, out: &Path) -> Result<PathBuf, ImportError> {
    let refuse = |reason: String| ImportError::Out { path: out.to_owned(), reason };
    let name = out.file_name().ok_or_else(|| refuse("it names no file".to_owned()))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    if !parent.is_dir() {
        return Err(refuse(format!("the folder {} does not exist", parent.display())));
    }
    if out.is_dir() {
        return Err(refuse("it is a folder".to_owned()));
    }
    if let (Ok(parent), Ok(folder)) = (fs::canonicalize(&parent), fs::canonicalize(folder))
        && parent.starts_with(&folder)
    {
        return Err(refuse(format!("it is inside the database folder {}", folder.display())));
    }
    let mut aside = std::ffi::OsString::from(".");
    aside.push(name);
    aside.push(format!(".import-{}", std::process::id()));
    Ok(parent.join(aside))
}

/// Deletes a file when dropped, unless forgotten.
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// A writer that counts what went through it.
struct Counted<'a, W: Write> {
    inner: &'a mut W,
    written: u64,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One member of a folder's object.
struct Member {
    /// The member name (a folder's name, a file's without `.json`).
    name: String,
    path: PathBuf,
    folder: bool,
}

/// A member name as JSON text: quoted, with `"`, `\` and control characters escaped.
pub fn member_name(name: &str) -> String {
    // Serializing a &str cannot fail.
    serde_json::to_string(name).unwrap_or_default()
}

/// The walk over the folder, writing as it goes.
struct Walk<'a, W: Write> {
    root: PathBuf,
    /// SPT's configs folder, written as the root's member `configs`.
    configs: Option<PathBuf>,
    out: Counted<'a, W>,
    summary: Summary,
    /// The canonical paths of the folders being written, outermost first: a symlink to one of them is
    /// a loop.
    ancestors: Vec<PathBuf>,
    entries: u64,
    buf: Box<[u8]>,
}

impl<W: Write> Walk<'_, W> {
    /// Writes the object of `dir`, which is `depth` folders below the database folder.
    fn object(&mut self, dir: &Path, depth: usize) -> Result<(), ImportError> {
        if depth > MAX_FOLDER_DEPTH {
            return Err(ImportError::TooDeep { path: dir.to_owned() });
        }
        let canonical = fs::canonicalize(dir).map_err(|source| ImportError::Read { path: dir.to_owned(), source })?;
        if let Some(ancestor) = self.ancestors.iter().find(|a| **a == canonical) {
            return Err(ImportError::SymlinkLoop { path: dir.to_owned(), ancestor: ancestor.clone() });
        }
        self.ancestors.push(canonical);
        self.summary.folders += 1;
        let members = self.members(dir)?;
        self.put(b"{")?;
        for (i, member) in members.iter().enumerate() {
            if i > 0 {
                self.put(b",")?;
            }
            self.put(member_name(&member.name).as_bytes())?;
            self.put(b":")?;
            if member.folder {
                self.object(&member.path, depth + 1)?;
            } else {
                // The root's object and one per folder enclose the file's value.
                self.file(&member.path, MAX_NESTING - (depth + 1))?;
            }
        }
        self.put(b"}")?;
        self.ancestors.pop();
        Ok(())
    }

    /// The members of `dir`, sorted by name, with the skipped entries counted.
    fn members(&mut self, dir: &Path) -> Result<Vec<Member>, ImportError> {
        let read_err = |source| ImportError::Read { path: dir.to_owned(), source };
        let mut members = Vec::new();
        for entry in fs::read_dir(dir).map_err(read_err)? {
            let entry = entry.map_err(read_err)?;
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(ImportError::TooMany { path: self.root.clone() });
            }
            let path = entry.path();
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(ImportError::BadName { path });
            };
            if file_name.starts_with('.') {
                self.skip(path);
                continue;
            }
            // Follows symlinks: a database may link in a folder kept elsewhere (loops are caught above).
            let meta = fs::metadata(&path).map_err(|source| ImportError::Read { path: path.clone(), source })?;
            if meta.is_dir() {
                members.push(Member { name: file_name, path, folder: true });
            } else if let Some(stem) = file_name.strip_suffix(".json")
                && meta.is_file()
            {
                members.push(Member { name: stem.to_owned(), path, folder: false });
            } else {
                self.skip(path);
            }
        }
        if dir == self.root
            && let Some(configs) = &self.configs
        {
            // A `configs` folder inside the database as well is two members of one name (refused below).
            members.push(Member { name: "configs".to_owned(), path: configs.clone(), folder: true });
        }
        members.sort_by(|a, b| a.name.cmp(&b.name));
        if let Some(pair) = members.windows(2).find(|pair| pair[0].name == pair[1].name) {
            return Err(ImportError::Duplicate {
                name: pair[0].name.clone(),
                first: pair[0].path.clone(),
                second: pair[1].path.clone(),
            });
        }
        Ok(members)
    }

    fn skip(&mut self, path: PathBuf) {
        self.summary.skipped += 1;
        if self.summary.skipped_examples.len() < SKIPPED_SHOWN {
            self.summary.skipped_examples.push(path);
        }
    }

    /// Streams the JSON file `path` into the document, validating it on the way; its value may nest
    /// `nesting` arrays and objects deep.
    fn file(&mut self, path: &Path, nesting: usize) -> Result<(), ImportError> {
        let file = fs::File::open(path).map_err(|source| ImportError::Read { path: path.to_owned(), source })?;
        let mut tee = Tee {
            file,
            buf: &mut self.buf,
            start: 0,
            pos: 0,
            len: 0,
            first: true,
            content: false,
            read: 0,
            out: &mut self.out,
            read_error: None,
            write_error: None,
        };
        let mut de = serde_json::Deserializer::from_reader(&mut tee);
        let parsed = Nest { left: nesting }.deserialize(&mut de).and_then(|()| de.end());
        // The rest of the last buffer (empty when serde_json read to the end, as `end` does).
        let finished = parsed.map(|()| tee.finish());
        if let Some(source) = tee.write_error.take() {
            return Err(ImportError::Write { path: self.root.clone(), source });
        }
        if let Some(source) = tee.read_error.take() {
            return Err(ImportError::Read { path: path.to_owned(), source });
        }
        match finished {
            Ok(Ok(())) => {}
            Ok(Err(source)) => return Err(ImportError::Write { path: self.root.clone(), source }),
            Err(_) if !tee.content => return Err(ImportError::Empty { path: path.to_owned() }),
            Err(e) => {
                let suffix = format!(" at line {} column {}", e.line(), e.column());
                let message = e.to_string();
                let reason = message.strip_suffix(&suffix).unwrap_or(&message).to_owned();
                return Err(ImportError::Json { path: path.to_owned(), line: e.line(), column: e.column(), reason });
            }
        }
        self.summary.files += 1;
        self.summary.bytes_in += tee.read;
        if self.out.written > MAX_DOCUMENT_BYTES {
            return Err(ImportError::TooLarge { path: path.to_owned() });
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), ImportError> {
        self.out.write_all(bytes).map_err(|source| ImportError::Write { path: self.root.clone(), source })
    }
}

/// A file read through a fixed buffer: serde_json reads from it, and every buffer it has read is
/// copied to the document before the buffer is refilled. A leading byte order mark is dropped.
struct Tee<'a, W: Write> {
    file: fs::File,
    buf: &'a mut [u8],
    /// Where the buffer's bytes for the document start (past a byte order mark).
    start: usize,
    /// The next byte serde_json reads.
    pos: usize,
    len: usize,
    /// Nothing read yet (so a byte order mark may come).
    first: bool,
    /// A byte other than whitespace was read: an error at the end is then not "empty".
    content: bool,
    /// Bytes of JSON read.
    read: u64,
    out: &'a mut W,
    /// Kept apart from JSON errors: serde_json wraps what `read` returns.
    read_error: Option<io::Error>,
    write_error: Option<io::Error>,
}

impl<W: Write> Tee<'_, W> {
    /// Copies the buffer to the document, then fills it again.
    fn refill(&mut self) -> io::Result<()> {
        if let Err(e) = self.out.write_all(&self.buf[self.start..self.len]) {
            let shown = io::Error::new(e.kind(), e.to_string());
            self.write_error = Some(e);
            return Err(shown);
        }
        let mut len = 0;
        // Fill the whole buffer, so the byte order mark is seen whole and reads stay large.
        while len < self.buf.len() {
            match self.file.read(&mut self.buf[len..]) {
                Ok(0) => break,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let shown = io::Error::new(e.kind(), e.to_string());
                    self.read_error = Some(e);
                    return Err(shown);
                }
            }
        }
        self.start = 0;
        if std::mem::take(&mut self.first) && self.buf[..len].starts_with(BOM) {
            self.start = BOM.len();
        }
        self.pos = self.start;
        self.len = len;
        self.read += (len - self.start) as u64;
        if !self.content {
            self.content = self.buf[self.start..len].iter().any(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        }
        Ok(())
    }

    /// Copies what is left of the buffer to the document.
    fn finish(&mut self) -> io::Result<()> {
        let rest = &self.buf[self.start..self.len];
        self.start = self.len;
        self.out.write_all(rest)
    }
}

impl<W: Write> Read for Tee<'_, W> {
    #[inline]
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.len {
            self.refill()?;
        }
        // serde_json reads one byte at a time: a byte copied by hand, not by a call to memmove.
        if let ([slot], Some(&byte)) = (&mut *dst, self.buf[..self.len].get(self.pos)) {
            *slot = byte;
            self.pos += 1;
            return Ok(1);
        }
        let n = dst.len().min(self.len - self.pos);
        dst[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Visits a JSON value without keeping it, refusing arrays and objects nested more than `left` deep.
/// Strings are visited (not skipped) so serde_json checks they are UTF-8.
#[derive(Clone, Copy)]
struct Nest {
    left: usize,
}

impl Nest {
    fn inside<E: de::Error>(self) -> Result<Nest, E> {
        match self.left.checked_sub(1) {
            Some(left) => Ok(Nest { left }),
            None => Err(E::custom(format_args!(
                "nested too deep: the document may nest {MAX_NESTING} arrays and objects, its folders included"
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Nest {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Nest {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.inside()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.inside()?;
        // Keys are visited as strings too (UTF-8 checked); they never nest.
        while map.next_key_seed(Nest { left: 0 })?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// A minimal database folder: the two files every SPT database has.
    fn database() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("templates")).unwrap();
        fs::write(dir.path().join("globals.json"), r#"{"config": {"a": 1}}"#).unwrap();
        fs::write(dir.path().join("templates/items.json"), r#"{"x": {"_id": "x"}}"#).unwrap();
        dir
    }

    fn document(dir: &Path) -> Result<(String, Summary), ImportError> {
        let mut out = Vec::new();
        let summary = write_document(dir, None, &mut out)?;
        Ok((String::from_utf8(out).unwrap(), summary))
    }

    #[test]
    fn member_names_are_escaped_json_strings() {
        assert_eq!(member_name("plain"), r#""plain""#);
        assert_eq!(member_name(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(member_name("tab\there"), r#""tab\there""#);
        assert_eq!(member_name("é"), "\"é\"");

        let dir = database();
        fs::write(dir.path().join(r#"we"ird\name.json"#), "[1]").unwrap();
        let (text, _) = document(dir.path()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc[r#"we"ird\name"#], serde_json::json!([1]), "{text}");
    }

    #[test]
    fn a_configs_folder_becomes_the_roots_configs_member_once() {
        let dir = database();
        let configs = tempfile::tempdir().unwrap();
        fs::write(configs.path().join("core.json"), r#"{"sptVersion": "4.0.0"}"#).unwrap();
        fs::write(configs.path().join("weather.json"), r#"{"acceleration": 7}"#).unwrap();
        let mut out = Vec::new();
        write_document(dir.path(), Some(configs.path()), &mut out).unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["configs"]["core"]["sptVersion"], "4.0.0");
        assert_eq!(doc["configs"]["weather"]["acceleration"], 7);
        let names: Vec<&String> = doc.as_object().unwrap().keys().collect();
        assert_eq!(names, ["configs", "globals", "templates"], "in sorted order with the others");

        // A database that has a `configs` of its own as well: two members of one name.
        fs::create_dir(dir.path().join("configs")).unwrap();
        let mut out = Vec::new();
        let twice = write_document(dir.path(), Some(configs.path()), &mut out);
        assert!(matches!(twice, Err(ImportError::Duplicate { .. })), "{twice:?}");
    }

    #[test]
    fn members_come_in_sorted_order_folders_and_files_alike() {
        let dir = database();
        for name in ["zeta", "alpha", "Mid", "beta"] {
            fs::write(dir.path().join(format!("{name}.json")), format!("\"{name}\"")).unwrap();
        }
        fs::create_dir(dir.path().join("gamma")).unwrap();
        fs::write(dir.path().join("gamma/b.json"), "2").unwrap();
        fs::write(dir.path().join("gamma/a.json"), "1").unwrap();
        let (text, summary) = document(dir.path()).unwrap();
        assert_eq!(
            text,
            r#"{"Mid":"Mid","alpha":"alpha","beta":"beta","gamma":{"a":1,"b":2},"globals":{"config": {"a": 1}},"templates":{"items":{"x": {"_id": "x"}}},"zeta":"zeta"}"#
        );
        assert_eq!((summary.files, summary.folders, summary.bytes_out), (8, 3, text.len() as u64));
        // The same folder makes the same bytes.
        assert_eq!(document(dir.path()).unwrap().0, text);
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_other_files_are_skipped() {
        let dir = database();
        fs::write(dir.path().join("bom.json"), b"\xEF\xBB\xBF{\"k\": \"\xC3\xA9\"}\n").unwrap();
        fs::write(dir.path().join("readme.md"), "# not json").unwrap();
        fs::write(dir.path().join(".hidden.json"), "{").unwrap();
        let (text, summary) = document(dir.path()).unwrap();
        assert!(text.starts_with("{\"bom\":{\"k\": \"é\"}\n,"), "{text}");
        assert_eq!(summary.skipped, 2);
        let sizes: u64 = ["bom.json", "globals.json", "templates/items.json"]
            .iter()
            .map(|f| fs::metadata(dir.path().join(f)).unwrap().len())
            .sum();
        assert_eq!(summary.bytes_in, sizes - 3);
        // A BOM and nothing else is an empty file.
        fs::write(dir.path().join("bom.json"), b"\xEF\xBB\xBF \n").unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::Empty { .. })));
    }

    #[test]
    fn a_file_larger_than_the_buffer_streams_whole() {
        let dir = database();
        let big: Vec<String> = (0..READ_CHUNK / 4).map(|n| format!("\"s{n}\"")).collect();
        let big = format!("\u{feff}[{}]", big.join(","));
        fs::write(dir.path().join("big.json"), &big).unwrap();
        let (text, _) = document(dir.path()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["big"], serde_json::from_str::<Value>(&big[3..]).unwrap());
    }

    #[test]
    fn bad_files_are_named_with_line_and_column() {
        let dir = database();
        fs::write(dir.path().join("bad.json"), "{\n  \"a\": 1,\n  \"b\": tru,\n}").unwrap();
        let e = document(dir.path()).unwrap_err();
        assert!(matches!(&e, ImportError::Json { line: 3, column: 11, .. }), "{e}");
        assert!(e.to_string().contains("bad.json:3:11: "), "{e}");

        fs::write(dir.path().join("bad.json"), "{} {}").unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::Json { line: 1, column: 4, .. })));
        fs::write(dir.path().join("bad.json"), b"[\"\xFF\"]").unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::Json { .. })));
        fs::write(dir.path().join("bad.json"), "").unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::Empty { .. })));
    }

    #[test]
    fn nesting_stops_where_a_reader_would() {
        let dir = database();
        fs::create_dir(dir.path().join("deep")).unwrap();
        // At depth 1 the root's and the folder's objects enclose the file: it may nest 125 more.
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        fs::write(dir.path().join("deep/x.json"), nested(MAX_NESTING - 2)).unwrap();
        let (text, _) = document(dir.path()).unwrap();
        serde_json::from_str::<Value>(&text).unwrap();
        fs::write(dir.path().join("deep/x.json"), nested(MAX_NESTING - 1)).unwrap();
        let e = document(dir.path()).unwrap_err();
        assert!(e.to_string().contains("nested too deep"), "{e}");
    }

    #[test]
    fn duplicates_loops_and_depth_are_refused() {
        let dir = database();
        fs::create_dir(dir.path().join("twin")).unwrap();
        fs::write(dir.path().join("twin.json"), "1").unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::Duplicate { name, .. }) if name == "twin"));
        fs::remove_file(dir.path().join("twin.json")).unwrap();

        std::os::unix::fs::symlink(dir.path(), dir.path().join("twin/back")).unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::SymlinkLoop { .. })));
        fs::remove_file(dir.path().join("twin/back")).unwrap();

        let mut deep = dir.path().join("twin");
        for _ in 0..MAX_FOLDER_DEPTH {
            deep = deep.join("d");
        }
        fs::create_dir_all(&deep).unwrap();
        assert!(matches!(document(dir.path()), Err(ImportError::TooDeep { .. })));
    }

    #[test]
    fn a_folder_that_is_not_a_database_says_what_it_lacks() {
        let parent = tempfile::tempdir().unwrap();
        let e = document(parent.path()).unwrap_err();
        assert!(e.to_string().ends_with("has no globals.json and templates/items.json"), "{e}");
        let db = database();
        fs::rename(db.path(), parent.path().join("database")).unwrap();
        let e = document(parent.path()).unwrap_err();
        assert!(e.to_string().contains("did you mean"), "{e}");
        fs::remove_file(parent.path().join("database/globals.json")).unwrap();
        let e = document(&parent.path().join("database")).unwrap_err();
        assert!(e.to_string().ends_with("has no globals.json"), "{e}");
    }

    #[test]
    fn import_replaces_out_only_when_it_succeeds() {
        let dir = database();
        let outdir = tempfile::tempdir().unwrap();
        let out = outdir.path().join("db.json");
        fs::write(&out, "old").unwrap();
        fs::write(dir.path().join("bad.json"), "{").unwrap();
        assert!(import(dir.path(), None, &out).is_err());
        assert_eq!(fs::read_to_string(&out).unwrap(), "old");
        assert_eq!(fs::read_dir(outdir.path()).unwrap().count(), 1, "the half document is removed");
        fs::remove_file(dir.path().join("bad.json")).unwrap();
        let summary = import(dir.path(), None, &out).unwrap();
        assert_eq!(fs::metadata(&out).unwrap().len(), summary.bytes_out);
        assert_eq!(fs::read_dir(outdir.path()).unwrap().count(), 1);

        let missing = outdir.path().join("nope/db.json");
        assert!(matches!(import(dir.path(), None, &missing), Err(ImportError::Out { .. })));
        let inside = dir.path().join("db.json");
        assert!(matches!(import(dir.path(), None, &inside), Err(ImportError::Out { .. })));
    }
}
