//! The boundary between the store's API and an engine: [`Backend`], what an engine implements, and
//! [`Store`], the one type the host's glue and the CLI hold, whichever engine is under it.
//!
//! Two engines implement it: SQLite in this crate (`Local`, one process per root, opened by
//! [`Store::open`]) and PostgreSQL in `modhost-store-pg` (many hosts sharing one database, handed in
//! through [`Store::from_backend`]). Keeping the trait here, and that engine in a crate of its own,
//! keeps this crate free of the async runtime the PostgreSQL client brings.
//!
//! What is the same for every engine lives on [`Store`], once: `get` and `delete` as forms of a
//! write, and path reads (`doc_get`, `doc_keys`) over the parsed document an engine answers.

use crate::doc::document_error;
use crate::{Exchange, Local, Quotas, StoreError, Usage, Versioned, WriteFence};
use bytes::Bytes;
use modhost_db::{DbError, Snapshot};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// What a store engine provides. Every method's contract is the one documented on [`Store`]; an
/// engine checks keys with [`crate::check_key`] and answers the same [`StoreError`]s for the same
/// causes, so a mod cannot tell the engines apart but by speed.
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// The value and its version ([`Store::get_versioned`]).
    fn get_versioned(&self, namespace: &str, key: &str) -> Result<Option<Versioned>, StoreError>;
    /// A whole write (`Some`) or a deletion (`None`), only at `expected` when that is given
    /// (`Some(None)`: only if absent). Answers the new version (0 after a deletion) and whether the
    /// key existed before.
    fn write(
        &self,
        namespace: &str,
        key: &str,
        value: Option<&[u8]>,
        expected: Option<Option<u64>>,
        lease: Option<&Lease>,
    ) -> Result<(u64, bool), StoreError>;
    /// [`Store::list`].
    fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError>;
    /// [`Store::namespaces`].
    fn namespaces(&self) -> Result<Vec<String>, StoreError>;
    /// The key's parsed document and its version; `None` when the key is absent.
    fn document(&self, namespace: &str, key: &str) -> Result<Option<(Snapshot, u64)>, StoreError>;
    /// [`Store::doc_patch`].
    fn doc_patch(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
        lease: Option<&Lease>,
    ) -> Result<u64, StoreError>;
    /// [`Store::set_quotas`].
    fn set_quotas(&self, quotas: Quotas);
    /// [`Store::without_backups`].
    fn without_backups(&self, prefix: &str) -> Result<u64, StoreError>;
    /// [`Store::usage`].
    fn usage(&self, namespace: &str) -> Usage;
    /// [`Store::answers_from_memory`].
    fn answers_from_memory(&self, namespace: &str, key: &str, document: bool) -> bool;
    /// [`Store::fence`].
    fn fence(&self, namespace: &str, key: &str) -> WriteFence;
    /// [`Store::committing`].
    fn committing(&self) -> bool;
    /// [`Store::durable`].
    fn durable(&self) -> bool;
    /// [`Store::compact`].
    fn compact(&self) -> Result<usize, StoreError>;
    /// [`Store::shared`]. One process's store by default.
    fn shared(&self) -> bool {
        false
    }
    /// [`Store::acquire_lease`]. Without other hosts there is nothing to take: always granted.
    fn acquire_lease(&self, session: &str, holder: &str, _ttl: Duration) -> Result<Option<Lease>, StoreError> {
        Ok(Some(Lease { session: session.to_owned(), holder: holder.to_owned(), token: 0 }))
    }
    /// [`Store::release_lease`].
    fn release_lease(&self, _lease: &Lease) -> Result<(), StoreError> {
        Ok(())
    }
    /// [`Store::announce`]. Without other hosts, no one to tell.
    fn announce(&self, _holder: &str, _report: &str) -> Result<Vec<HostSeen>, StoreError> {
        Ok(Vec::new())
    }
    /// [`Store::exchange`]. Without other hosts, none.
    fn exchange(&self) -> Option<Arc<dyn Exchange>> {
        None
    }
}

/// Another host of a shared store, as it last announced itself ([`Store::announce`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSeen {
    /// Its name in the leases.
    pub holder: String,
    /// What it said of itself (the host's JSON: its address, generation and mods).
    pub report: String,
    /// How long ago it said it, in ms.
    pub age_ms: u64,
}

/// A session's lease on a store shared by several hosts: while it is current, this host alone
/// serves the session, and a write that carries it commits only while it is still current (the
/// database checks the holder and the token in the write's transaction: a fencing token).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The session (its id as text).
    pub session: String,
    /// Which host holds it (unique per process).
    pub holder: String,
    /// Raised by every grant of the session's lease, to any host.
    pub token: i64,
}

/// The store: durable values by namespace and key, on whichever engine it was opened with.
#[derive(Debug)]
pub struct Store {
    engine: Box<dyn Backend>,
}

impl Store {
    /// Opens the SQLite store in `dir` (creating it), takes its lock, imports an old files-layout
    /// store found there, and starts the maintenance thread (folds, checkpoints).
    pub fn open(dir: &Path, durable: bool) -> Result<Store, StoreError> {
        Ok(Store::from_backend(Box::new(Local::open(dir, durable)?)))
    }

    /// A store over another engine (PostgreSQL: `modhost-store-pg`).
    pub fn from_backend(engine: Box<dyn Backend>) -> Store {
        Store { engine }
    }

    /// The value under `key` in `namespace`, or `None` if it was never written.
    pub fn get(&self, namespace: &str, key: &str) -> Result<Option<Bytes>, StoreError> {
        Ok(self.get_versioned(namespace, key)?.map(|v| v.value))
    }

    /// The value and its version, or `None` if it was never written.
    pub fn get_versioned(&self, namespace: &str, key: &str) -> Result<Option<Versioned>, StoreError> {
        self.engine.get_versioned(namespace, key)
    }

    /// Commits `value` under `key` atomically; answers the new version.
    pub fn set(&self, namespace: &str, key: &str, value: &[u8]) -> Result<u64, StoreError> {
        self.leased(None).set(namespace, key, value)
    }

    /// Commits `value` only if the key is still at `expected` (`None`: only if it does not exist).
    pub fn set_if_version(
        &self,
        namespace: &str,
        key: &str,
        value: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        self.leased(None).set_if_version(namespace, key, value, expected)
    }

    /// Removes `key`; answers whether it existed.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        self.leased(None).delete(namespace, key)
    }

    /// The writes of a request that holds `lease` (none: not fenced): each commits only while the
    /// lease is still this host's, and is refused with [`StoreError::LeaseLost`] after.
    pub fn leased<'a>(&'a self, lease: Option<&'a Lease>) -> Leased<'a> {
        Leased { store: self, lease }
    }

    /// Whether several hosts share this store, so that a session's lock must be a lease in it.
    pub fn shared(&self) -> bool {
        self.engine.shared()
    }

    /// Takes `session`'s lease for `holder` for `ttl`: granted (with a token higher than any before)
    /// when it is free, expired, or `holder`'s already; `None` while another host holds it.
    pub fn acquire_lease(&self, session: &str, holder: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        self.engine.acquire_lease(session, holder, ttl)
    }

    /// Gives a lease back at once (another host may take the session now), if it is still current.
    pub fn release_lease(&self, lease: &Lease) -> Result<(), StoreError> {
        self.engine.release_lease(lease)
    }

    /// What the hosts sharing this store pass one another through it (mail for sessions, the game
    /// database's patch log, broadcasts); none on one host's own store.
    pub fn exchange(&self) -> Option<Arc<dyn Exchange>> {
        self.engine.exchange()
    }

    /// Records what `holder` (this host) says of itself, and answers every host heard from in the
    /// last minute, this one included (none on one host's own store).
    pub fn announce(&self, holder: &str, report: &str) -> Result<Vec<HostSeen>, StoreError> {
        self.engine.announce(holder, report)
    }

    /// The keys in `namespace` starting with `prefix`, sorted.
    pub fn list(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.engine.list(namespace, prefix)
    }

    /// The namespaces that hold at least one key, sorted.
    pub fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        self.engine.namespaces()
    }

    /// The JSON text at `path` in the document under `key`, with the key's version; `None` when the
    /// key is absent. A path that names nothing answers `null`; the empty path, the whole document.
    pub fn doc_get(&self, namespace: &str, key: &str, path: &str) -> Result<Option<Versioned>, StoreError> {
        let Some((doc, version)) = self.engine.document(namespace, key)? else { return Ok(None) };
        let value = if path.is_empty() {
            doc.text()
        } else {
            match doc.get(path) {
                Ok(text) => text,
                Err(DbError::NotFound { .. }) => Bytes::from_static(b"null"),
                Err(e) => return Err(document_error(key)(e)),
            }
        };
        Ok(Some(Versioned { value, version }))
    }

    /// The member names of the object at `path` in the document under `key`, in document order; empty
    /// when the key or the path names nothing.
    pub fn doc_keys(&self, namespace: &str, key: &str, path: &str) -> Result<Vec<String>, StoreError> {
        let Some((doc, _)) = self.engine.document(namespace, key)? else { return Ok(Vec::new()) };
        let found = if path.is_empty() { Ok(doc.root_keys()) } else { doc.keys(path) };
        match found {
            Ok(keys) => Ok(keys),
            Err(DbError::NotFound { .. }) => Ok(Vec::new()),
            Err(e) => Err(document_error(key)(e)),
        }
    }

    /// Applies `patch` (JSON) as an RFC 7396 merge patch at `path` in the document under `key`, as one
    /// atomic commit, only if the key is at `expected` when that is given. An absent key becomes the
    /// patched `{}`. Answers the new version.
    pub fn doc_patch(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        self.leased(None).doc_patch(namespace, key, path, patch, expected)
    }

    /// Holds every namespace to `quotas` from now on (the defaults until this is called). Writes that
    /// would take a namespace over its quota are refused with [`StoreError::Quota`].
    pub fn set_quotas(&self, quotas: Quotas) {
        self.engine.set_quotas(quotas)
    }

    /// Never backs up the namespaces whose names start with `prefix` from now on, and deletes the
    /// backups they hold; answers how many. For the host's own bookkeeping (its timers' records): no
    /// one restores a fired timer, and backing up each one would grow the store with every firing.
    pub fn without_backups(&self, prefix: &str) -> Result<u64, StoreError> {
        self.engine.without_backups(prefix)
    }

    /// What `namespace` holds now, as its quota counts it.
    pub fn usage(&self, namespace: &str) -> Usage {
        self.engine.usage(namespace)
    }

    /// Whether a read of `key` (a document read with `document`) answers from memory now, without
    /// the database or a wait for a write of it in progress: what a caller on an async worker asks
    /// before running the read inline. A moment later the answer may have changed; it is a hint.
    pub fn answers_from_memory(&self, namespace: &str, key: &str, document: bool) -> bool {
        self.engine.answers_from_memory(namespace, key, document)
    }

    /// Marks a write of `key` as in progress from now until the fence is dropped: for a caller that
    /// hands the write to another thread, so that no read of the key runs between this call and the
    /// write's start (a reader could otherwise see the old value while the write waits to run, then be
    /// overtaken by it). Drop it after the write returns.
    pub fn fence(&self, namespace: &str, key: &str) -> WriteFence {
        self.engine.fence(namespace, key)
    }

    /// Whether commits are queued or running now: a write would wait for them.
    pub fn committing(&self) -> bool {
        self.engine.committing()
    }

    /// Whether commits survive power loss.
    pub fn durable(&self) -> bool {
        self.engine.durable()
    }

    /// Folds every key's pending patch records into its stored value now (and, on SQLite,
    /// checkpoints the log): what the maintenance thread does in the background. Answers how many
    /// keys were folded.
    pub fn compact(&self) -> Result<usize, StoreError> {
        self.engine.compact()
    }
}

/// A store's writes under a session's lease ([`Store::leased`]).
pub struct Leased<'a> {
    store: &'a Store,
    lease: Option<&'a Lease>,
}

impl Leased<'_> {
    /// [`Store::set`], fenced.
    pub fn set(&self, namespace: &str, key: &str, value: &[u8]) -> Result<u64, StoreError> {
        Ok(self.store.engine.write(namespace, key, Some(value), None, self.lease)?.0)
    }

    /// [`Store::set_if_version`], fenced.
    pub fn set_if_version(
        &self,
        namespace: &str,
        key: &str,
        value: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        Ok(self.store.engine.write(namespace, key, Some(value), Some(expected), self.lease)?.0)
    }

    /// [`Store::delete`], fenced.
    pub fn delete(&self, namespace: &str, key: &str) -> Result<bool, StoreError> {
        Ok(self.store.engine.write(namespace, key, None, None, self.lease)?.1)
    }

    /// [`Store::doc_patch`], fenced.
    pub fn doc_patch(
        &self,
        namespace: &str,
        key: &str,
        path: &str,
        patch: &[u8],
        expected: Option<u64>,
    ) -> Result<u64, StoreError> {
        self.store.engine.doc_patch(namespace, key, path, patch, expected, self.lease)
    }
}
