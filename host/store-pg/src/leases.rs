//! Sessions' leases on PostgreSQL: which host serves a session, until when, and the fencing token
//! that host's writes carry; and the hosts' announcements of themselves (`hosts`), what a status page
//! shows of the cluster.
//!
//! A grant is one statement: the row is taken when it is absent, expired, or the asker's already,
//! and its token raised either way; otherwise nothing is granted and the asker tries again. Every
//! write made under a lease first checks, in its own transaction, that the lease is still the
//! writer's and unexpired, and keeps the lease's row share-locked until it commits: another host's
//! grant (an update of that row) waits for the commit, so no write of an old holder ever lands after
//! a new holder was granted the session. A holder that stalls mid-transaction is ended by the server
//! (`idle_in_transaction_session_timeout`), its transaction rolled back.

use crate::pool::{Statements, statement};
use crate::{Fail, Shared};
use modhost_store::{HostSeen, Lease, StoreError};
use postgres::Transaction;
use std::time::Duration;

const GRANT: &str = "INSERT INTO modhost.leases AS l (session, holder, token, expires_at)
    VALUES ($1, $2, 1, clock_timestamp() + $3::FLOAT8 * INTERVAL '1 second')
    ON CONFLICT (session) DO UPDATE
        SET holder = excluded.holder, token = l.token + 1, expires_at = excluded.expires_at
        WHERE l.expires_at <= clock_timestamp() OR l.holder = excluded.holder
    RETURNING token";
const RELEASE: &str = "UPDATE modhost.leases SET expires_at = clock_timestamp()
    WHERE session = $1 AND holder = $2 AND token = $3";
const CHECK: &str = "SELECT 1 FROM modhost.leases
    WHERE session = $1 AND holder = $2 AND token = $3 AND expires_at > clock_timestamp() FOR SHARE";

/// Grants `session` to `holder` for `ttl`, or answers `None` while another host holds it.
pub(crate) fn acquire(
    shared: &Shared,
    session: &str,
    holder: &str,
    ttl: Duration,
) -> Result<Option<Lease>, StoreError> {
    let key = format!("session {session}");
    let io = |reason: String| StoreError::Io { op: "lease", key: key.clone(), reason };
    shared.run_on(&shared.leases, "lease", &key, io, |client, statements| {
        let grant = statement(statements, client, GRANT)?;
        match client.query_opt(&grant, &[&session, &holder, &ttl.as_secs_f64()]) {
            Ok(row) => {
                Ok(row.map(|row| Lease { session: session.to_owned(), holder: holder.to_owned(), token: row.get(0) }))
            }
            // The old holder's write still holds the row: not granted yet.
            Err(e) if e.code().is_some_and(|c| *c == postgres::error::SqlState::LOCK_NOT_AVAILABLE) => Ok(None),
            Err(e) => Err(Fail::Pg(e)),
        }
    })
}

/// Ends `lease` now, if it is still current: another host may be granted the session at once.
pub(crate) fn release(shared: &Shared, lease: &Lease) -> Result<(), StoreError> {
    let key = format!("session {}", lease.session);
    let io = |reason: String| StoreError::Io { op: "release the lease of", key: key.clone(), reason };
    shared.run_on(&shared.leases, "release the lease of", &key, io, |client, statements| {
        let release = statement(statements, client, RELEASE)?;
        client.execute(&release, &[&lease.session, &lease.holder, &lease.token])?;
        Ok(())
    })
}

/// Inside a write's transaction: refuses the write unless `lease` (when it carries one) is still
/// the writer's, and holds the lease's row until the commit.
pub(crate) fn check(
    tx: &mut Transaction<'_>,
    statements: &mut Statements,
    lease: Option<&Lease>,
    key: &str,
) -> Result<(), Fail> {
    let Some(lease) = lease else { return Ok(()) };
    let check = statement(statements, tx, CHECK)?;
    match tx.query_opt(&check, &[&lease.session, &lease.holder, &lease.token])? {
        Some(_) => Ok(()),
        None => Err(Fail::Store(StoreError::LeaseLost {
            key: key.to_owned(),
            reason: format!(
                "the lease of session {} (token {}) is no longer this host's: it expired or another host was granted the session",
                lease.session, lease.token
            ),
        })),
    }
}

const ANNOUNCE: &str = "INSERT INTO modhost.hosts (holder, report, seen_at) VALUES ($1, $2, clock_timestamp())
    ON CONFLICT (holder) DO UPDATE SET report = excluded.report, seen_at = excluded.seen_at";
const SEEN: &str = "SELECT holder, report,
        (extract(epoch FROM clock_timestamp() - seen_at) * 1000)::BIGINT FROM modhost.hosts
    WHERE seen_at > clock_timestamp() - INTERVAL '1 minute' ORDER BY holder";
const FORGET: &str = "DELETE FROM modhost.hosts WHERE seen_at < clock_timestamp() - INTERVAL '1 hour'";

/// Records `holder`'s report and answers the hosts heard from in the last minute; hosts silent for an
/// hour are forgotten (the table holds the hosts of about the last hour).
pub(crate) fn announce(shared: &Shared, holder: &str, report: &str) -> Result<Vec<HostSeen>, StoreError> {
    let key = format!("host {holder}");
    let io = |reason: String| StoreError::Io { op: "announce", key: key.clone(), reason };
    shared.run_on(&shared.leases, "announce", &key, io, |client, statements| {
        let announce = statement(statements, client, ANNOUNCE)?;
        client.execute(&announce, &[&holder, &report])?;
        let forget = statement(statements, client, FORGET)?;
        client.execute(&forget, &[])?;
        let seen = statement(statements, client, SEEN)?;
        let rows = client.query(&seen, &[])?;
        Ok(rows
            .iter()
            .map(|row| HostSeen { holder: row.get(0), report: row.get(1), age_ms: row.get::<_, i64>(2).max(0) as u64 })
            .collect())
    })
}
