//! Documents: a stored value that is a JSON object, read and changed by path without moving the whole
//! value. The parsed document is the db engine's immutable tree ([`Snapshot`]): a path read costs the
//! path (and answers a shared slice of the stored text when no patch touched it), and a merge patch
//! builds new nodes only along its path. A patch is committed as one small record in `patches`; the
//! maintenance thread (`fold.rs`) folds records into the stored whole value later, off the request path.
//! On load, the stored value plus its records in order is exactly the last acknowledged document.

use crate::{Entry, Id, Known, Local, MAX_VALUE_BYTES, StoreError, check_expected, check_key};
use bytes::Bytes;
use modhost_db::{DbError, Patch, Snapshot};
use rusqlite::{Connection, params};

/// A key is folded (its whole value rewritten without its records) when its records weigh half its
/// stored value, and at least this much: a fold costs the document's size, so folding once per half a
/// document of patches keeps its cost per patch byte constant whatever the document's size.
pub(crate) const FOLD_AFTER_BYTES: usize = 64 << 10;
/// ...or when it has this many records, which bounds what a load replays.
pub(crate) const FOLD_AFTER_RECORDS: u32 = 4096;

/// Whether a key with these records and this stored size is due a fold.
pub fn fold_due(pending: u32, pending_bytes: usize, stored: usize) -> bool {
    pending >= FOLD_AFTER_RECORDS || pending_bytes >= FOLD_AFTER_BYTES.max(stored / 2)
}

/// One patch record of the `patches` table.
pub(crate) struct Record {
    pub(crate) seq: i64,
    path: String,
    patch: String,
}

impl Record {
    pub(crate) fn len(&self) -> usize {
        self.path.len() + self.patch.len()
    }

    pub(crate) fn apply(&self, doc: &Snapshot) -> Result<Snapshot, DbError> {
        doc.patched(&Patch::parse(&self.path, &self.patch)?)
    }
}

/// The key's patch records, oldest first.
pub(crate) fn pending(conn: &Connection, id: &Id) -> rusqlite::Result<Vec<Record>> {
    let mut query =
        conn.prepare_cached("SELECT seq, path, patch FROM patches WHERE ns = ?1 AND key = ?2 ORDER BY seq")?;
    let rows = query.query_map(params![id.0, id.1], |row| {
        let patch = crate::sql::bytes(row, 2)?;
        Ok(Record { seq: row.get(0)?, path: row.get(1)?, patch: String::from_utf8_lossy(&patch).into_owned() })
    })?;
    rows.collect()
}

/// Checks a `doc-patch` call's key, size and text before any engine work: the parsed patch, or the
/// error every engine answers.
pub fn check_patch(namespace: &str, key: &str, path: &str, patch: &[u8]) -> Result<Patch, StoreError> {
    check_key(namespace)?;
    check_key(key)?;
    if patch.len() > MAX_VALUE_BYTES {
        return Err(StoreError::TooLarge { key: key.to_owned(), len: patch.len() });
    }
    let text = std::str::from_utf8(patch)
        .map_err(|e| StoreError::Document { key: key.to_owned(), reason: format!("the patch is not UTF-8: {e}") })?;
    Patch::parse(path, text).map_err(document_error(key))
}

/// Parses a stored value as a document.
pub fn parse(key: &str, bytes: Bytes) -> Result<Snapshot, StoreError> {
    Snapshot::parse(bytes, "the value")
        .map_err(|e| StoreError::Document { key: key.to_owned(), reason: format!("{e}, so it is not a document") })
}

/// A db engine error about the document under `key`, as the store's error.
pub fn document_error(key: &str) -> impl Fn(DbError) -> StoreError {
    move |e| StoreError::Document { key: key.to_owned(), reason: e.to_string() }
}

impl Local {
    /// Applies `patch` (JSON) as an RFC 7396 merge patch at `path` in the document under `key`, as one
    /// atomic commit, only if the key is at `expected` when that is given. An absent key becomes the
    /// patched `{}`. Answers the new version.
    pub(crate) fn patch_document(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        let parsed = check_patch(namespace, key, path, patch)?;
        let inner = &self.inner;
        let id: Id = (namespace.to_owned(), key.to_owned());
        let _writing = inner.writing(&id);
        let _stripe = inner.stripe(&id);
        let current = inner.entry_locked(&id)?;
        check_expected(key, current.as_ref().map(|c| c.version), expected.map(Some))?;
        let Some(current) = current else {
            // The first patch of a key makes a whole value: there is no stored value to patch yet.
            let doc = parse(key, Bytes::from_static(b"{}"))?.patched(&parsed).map_err(document_error(key))?;
            let (version, _) = inner.write_locked(&id, Some(&doc.text()), None)?;
            inner.update_entry(&id, version, |e| e.doc = Some(doc));
            return Ok(version);
        };
        let base = match &current.doc {
            Some(doc) => doc.clone(),
            None => parse(key, current.bytes.clone().unwrap_or_default())?,
        };
        let next = base.patched(&parsed).map_err(document_error(key))?;
        let pending_bytes = current.pending_bytes + path.len() + patch.len();
        if current.stored + pending_bytes > MAX_VALUE_BYTES {
            return Err(StoreError::TooLarge { key: key.to_owned(), len: current.stored + pending_bytes });
        }
        let record = (path.len() + patch.len()) as i64;
        let reserved = inner.ledger.reserve(&id.0, key, record, 0)?;
        let (ns, k, p, body) = (id.0.clone(), id.1.clone(), path.to_owned(), patch.to_vec());
        let seq = inner
            .commit(Box::new(move |conn| {
                conn.prepare_cached("INSERT INTO patches (ns, key, path, patch) VALUES (?1, ?2, ?3, ?4)")?
                    .execute(params![ns, k, p, body])?;
                Ok(conn.last_insert_rowid())
            }))
            .map_err(crate::io_error("write", key))?;
        reserved.keep();
        let version = inner.new_version(&id);
        let entry = Entry {
            version,
            bytes: None,
            doc: Some(next),
            pending: current.pending + 1,
            pending_bytes,
            last_seq: seq,
            stored: current.stored,
            epoch: current.epoch,
        };
        let fold = fold_due(entry.pending, entry.pending_bytes, entry.stored);
        inner.remember(id.clone(), Known::Present(entry));
        if fold {
            self.maintenance.fold_soon(id);
        }
        Ok(version)
    }

    /// The key's parsed document and version, parsing (and caching) it on first use.
    pub(crate) fn load_document(&self, namespace: &str, key: &str) -> Result<Option<(Snapshot, u64)>, StoreError> {
        check_key(namespace)?;
        check_key(key)?;
        let id: Id = (namespace.to_owned(), key.to_owned());
        let Some(entry) = self.inner.entry(&id)? else { return Ok(None) };
        if let Some(doc) = entry.doc {
            return Ok(Some((doc, entry.version)));
        }
        let doc = parse(key, entry.bytes.unwrap_or_default())?;
        let parsed = doc.clone();
        self.inner.update_entry(&id, entry.version, move |e| e.doc = Some(parsed));
        Ok(Some((doc, entry.version)))
    }
}
