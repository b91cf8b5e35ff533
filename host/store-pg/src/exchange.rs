//! The hosts' [`Exchange`] on PostgreSQL: mail for sessions (`mail`), broadcasts (`broadcasts`), the
//! game database's patch log (`db_log` and its head row), and the signals that tell every host of
//! them: `NOTIFY modhost` sent in the transaction that made the change (so it arrives only once the
//! change is committed, and is dropped with a rolled-back one), heard by one `LISTEN`ing connection
//! per host on a thread of its own.
//!
//! - A mod's share of the mail is checked with its row in `mail_shares` locked, so two hosts pushing
//!   for one mod at once are counted one after the other; a session's mail is trimmed to its bounds
//!   in the same transaction. Mail is notifier traffic, as the one-host queue (memory) is: its
//!   commits skip their own fsync (the leases' connections).
//! - The patch log's order is the order its head row was locked in: an append locks it, hands the
//!   host every patch it has not applied, and commits the new patch with the head advanced, so a
//!   patch's place is also its commit order and no reader ever sees a gap.
//!
//! The signal's payload names what changed: `m <session>`, `p <seq>`, `b <id> <host>`.

use crate::pool::statement;
use crate::{Fail, Shared};
use modhost_store::{Exchange, Listening, Logged, LoggedPatch, Mail, MailLimits, Mailed, Signal, StoreError};
use postgres::fallible_iterator::FallibleIterator as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const CHANNEL: &str = "modhost";
/// How often the listener looks whether it should stop, and waits before connecting again.
const LISTEN_TICK: Duration = Duration::from_millis(500);
/// A cluster whose hosts were all silent this long had stopped: its patch log starts again.
const STOPPED_SECS: f64 = 10.0;

const SHARE_ROW: &str = "INSERT INTO modhost.mail_shares (by_mod) VALUES ($1) ON CONFLICT DO NOTHING";
const SHARE_LOCK: &str = "SELECT 1 FROM modhost.mail_shares WHERE by_mod = $1 FOR UPDATE";
const SHARE_HELD: &str = "SELECT coalesce(sum(octet_length(text)), 0)::BIGINT, count(DISTINCT session)::BIGINT,
        coalesce(bool_or(session = $2), false)
    FROM modhost.mail WHERE by_mod = $1";
const MAIL: &str = "INSERT INTO modhost.mail (session, by_mod, text) VALUES ($1, $2, $3)";
/// The session's oldest messages past its count or its bytes (the newest always stays).
const TRIM: &str = "DELETE FROM modhost.mail WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER newest AS n, sum(octet_length(text)) OVER newest AS b
        FROM modhost.mail WHERE session = $1 WINDOW newest AS (ORDER BY id DESC)
    ) kept WHERE n > $2 OR (b > $3 AND n > 1))";
const NOTIFY: &str = "SELECT pg_notify('modhost', $1)";
const TAKE: &str = "DELETE FROM modhost.mail WHERE session = $1 RETURNING id, by_mod, text";
/// Broadcasts kept: a minute's, and at most the newest [`KEPT_BROADCASTS`] (a mod broadcasting in a
/// loop fills these rows, never the database's disk: at most 256 messages of 256 KiB).
const FORGET_BROADCASTS: &str = "DELETE FROM modhost.broadcasts
    WHERE id <= $1 - $2::BIGINT OR sent_at < clock_timestamp() - INTERVAL '1 minute'";
const KEPT_BROADCASTS: i64 = 256;
const BROADCAST: &str = "INSERT INTO modhost.broadcasts (text, sent_at) VALUES ($1, clock_timestamp()) RETURNING id";
const BROADCAST_TEXT: &str = "SELECT text FROM modhost.broadcasts WHERE id = $1";
const HEAD: &str = "SELECT seq, bytes, extract(epoch FROM clock_timestamp() - begun_at)::FLOAT8
    FROM modhost.db_log_head WHERE one = 1 FOR UPDATE";
const AFTER: &str = "SELECT seq, by_mod, path, patch FROM modhost.db_log WHERE seq > $1 ORDER BY seq";
const APPEND: &str = "INSERT INTO modhost.db_log (seq, by_mod, path, patch) VALUES ($1, $2, $3, $4)";
const ADVANCE: &str = "UPDATE modhost.db_log_head SET seq = $1, bytes = bytes + $2 WHERE one = 1";
const OTHERS_ALIVE: &str = "SELECT count(*) FROM modhost.hosts
    WHERE holder <> $1 AND seen_at > clock_timestamp() - $2::FLOAT8 * INTERVAL '1 second'";
const CLEAR_LOG: &str = "DELETE FROM modhost.db_log";
const RESTART_LOG: &str = "UPDATE modhost.db_log_head SET bytes = 0, begun_at = clock_timestamp() WHERE one = 1";

/// The exchange of one store's hosts.
pub(crate) struct PgExchange {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for PgExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgExchange({})", self.shared.pool.shown())
    }
}

fn as_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Exchange for PgExchange {
    fn mail(&self, session: &str, by: &str, text: &str, limits: &MailLimits) -> Result<Mailed, StoreError> {
        let key = format!("mail for session {session}");
        let io = |reason: String| StoreError::Io { op: "queue", key: key.clone(), reason };
        self.shared.run_on(&self.shared.leases, "queue", &key, io, |client, statements| {
            let mut tx = client.transaction()?;
            let share_row = statement(statements, &mut tx, SHARE_ROW)?;
            tx.execute(&share_row, &[&by])?;
            let share_lock = statement(statements, &mut tx, SHARE_LOCK)?;
            tx.execute(&share_lock, &[&by])?;
            let held_query = statement(statements, &mut tx, SHARE_HELD)?;
            let row = tx.query_one(&held_query, &[&by, &session])?;
            let (held, sessions, has_session): (i64, i64, bool) = (row.get(0), row.get(1), row.get(2));
            let held = usize::try_from(held).unwrap_or(0);
            // Checked before anything is dropped to make room: a refused push changes nothing.
            if held + text.len() > limits.mod_bytes {
                return Ok(Mailed::ModBytes { held, share: limits.mod_bytes });
            }
            let sessions = usize::try_from(sessions).unwrap_or(0);
            if !has_session && sessions >= limits.mod_sessions {
                return Ok(Mailed::ModSessions(sessions));
            }
            let mail = statement(statements, &mut tx, MAIL)?;
            tx.execute(&mail, &[&session, &by, &text])?;
            let trim = statement(statements, &mut tx, TRIM)?;
            let dropped = tx.execute(&trim, &[&session, &as_i64(limits.messages.max(1)), &as_i64(limits.bytes)])?;
            let notify = statement(statements, &mut tx, NOTIFY)?;
            tx.execute(&notify, &[&format!("m {session}")])?;
            tx.commit()?;
            Ok(Mailed::Queued { dropped })
        })
    }

    fn take_mail(&self, session: &str) -> Result<Vec<Mail>, StoreError> {
        let key = format!("mail for session {session}");
        let io = |reason: String| StoreError::Io { op: "take", key: key.clone(), reason };
        self.shared.run_on(&self.shared.leases, "take", &key, io, |client, statements| {
            let take = statement(statements, client, TAKE)?;
            let mut rows: Vec<(i64, Mail)> = client
                .query(&take, &[&session])?
                .iter()
                .map(|row| (row.get(0), Mail { by: row.get(1), text: row.get(2) }))
                .collect();
            rows.sort_by_key(|(id, _)| *id);
            Ok(rows.into_iter().map(|(_, mail)| mail).collect())
        })
    }

    fn broadcast(&self, from: &str, text: &str) -> Result<(), StoreError> {
        let key = "a broadcast".to_owned();
        let io = |reason: String| StoreError::Io { op: "send", key: key.clone(), reason };
        self.shared.run_on(&self.shared.leases, "send", &key, io, |client, statements| {
            let mut tx = client.transaction()?;
            let insert = statement(statements, &mut tx, BROADCAST)?;
            let id: i64 = tx.query_one(&insert, &[&text])?.get(0);
            let forget = statement(statements, &mut tx, FORGET_BROADCASTS)?;
            tx.execute(&forget, &[&id, &KEPT_BROADCASTS])?;
            let notify = statement(statements, &mut tx, NOTIFY)?;
            tx.execute(&notify, &[&format!("b {id} {from}")])?;
            tx.commit()?;
            Ok(())
        })
    }

    fn broadcast_text(&self, id: u64) -> Result<Option<String>, StoreError> {
        let key = format!("broadcast {id}");
        let io = |reason: String| StoreError::Unreadable { key: key.clone(), reason };
        self.shared.read("read", &key, io, |client, statements| {
            let query = statement(statements, client, BROADCAST_TEXT)?;
            Ok(client.query_opt(&query, &[&(id as i64)])?.map(|row| row.get(0)))
        })
    }

    fn patches_after(&self, seq: u64) -> Result<Vec<LoggedPatch>, StoreError> {
        let key = "the db patch log".to_owned();
        let io = |reason: String| StoreError::Unreadable { key: key.clone(), reason };
        self.shared.read("read", &key, io, |client, statements| {
            let query = statement(statements, client, AFTER)?;
            Ok(client.query(&query, &[&(seq as i64)])?.iter().map(logged).collect())
        })
    }

    fn log_patch(
        &self,
        after: u64,
        (by, path, json): (&str, &str, &str),
        max_bytes: u64,
        apply: &mut dyn FnMut(&[LoggedPatch]) -> bool,
    ) -> Result<Logged, StoreError> {
        self.shared.transact("append to", "the db patch log", |tx, statements| {
            let head = statement(statements, tx, HEAD)?;
            let row = tx.query_one(&head, &[])?;
            let (seq, held): (i64, i64) = (row.get(0), row.get(1));
            let (seq, held) = (seq as u64, held as u64);
            if held + json.len() as u64 > max_bytes {
                return Ok(Logged::Full { held, max: max_bytes });
            }
            let missing = statement(statements, tx, AFTER)?;
            let missing: Vec<LoggedPatch> = tx.query(&missing, &[&(after as i64)])?.iter().map(logged).collect();
            if !apply(&missing) {
                return Ok(Logged::Refused);
            }
            let next = seq + 1;
            let append = statement(statements, tx, APPEND)?;
            tx.execute(&append, &[&(next as i64), &by, &path, &json])?;
            let advance = statement(statements, tx, ADVANCE)?;
            tx.execute(&advance, &[&(next as i64), &as_i64(json.len())])?;
            let notify = statement(statements, tx, NOTIFY)?;
            tx.execute(&notify, &[&format!("p {next}")])?;
            Ok(Logged::At(next))
        })
    }

    fn begin_log(&self, holder: &str) -> Result<bool, StoreError> {
        self.shared.transact("begin", "the db patch log", |tx, statements| {
            let head = statement(statements, tx, HEAD)?;
            let begun_secs_ago: f64 = tx.query_one(&head, &[])?.get(2);
            let others = statement(statements, tx, OTHERS_ALIVE)?;
            let others: i64 = tx.query_one(&others, &[&holder, &STOPPED_SECS])?.get(0);
            // A host started together with this one may have begun it a moment ago, before it
            // first announced itself: its log is this cluster's.
            if others > 0 || begun_secs_ago < STOPPED_SECS {
                return Ok(false);
            }
            tx.batch_execute(CLEAR_LOG).map_err(Fail::Pg)?;
            tx.batch_execute(RESTART_LOG).map_err(Fail::Pg)?;
            Ok(true)
        })
    }

    fn listen(&self, on: Box<dyn Fn(Signal) + Send + Sync>) -> Result<Box<dyn Listening>, StoreError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopping) = (self.shared.clone(), stop.clone());
        std::thread::Builder::new()
            .name("modhost-listen".into())
            .spawn(move || listen(&shared, &stopping, &*on))
            .map_err(|e| StoreError::Io { op: "listen", key: "signals".into(), reason: e.to_string() })?;
        Ok(Box::new(Listener { stop }))
    }
}

fn logged(row: &postgres::Row) -> LoggedPatch {
    LoggedPatch { seq: row.get::<_, i64>(0) as u64, by: row.get(1), path: row.get(2), json: row.get(3) }
}

/// The listener's thread: stops when its [`Listener`] is dropped.
#[derive(Debug)]
struct Listener {
    stop: Arc<AtomicBool>,
}

impl Listening for Listener {}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Listens until `stop`, connecting again whenever the connection is lost; every (re)connection is
/// signalled, since what was sent while no connection listened is not heard.
fn listen(shared: &Shared, stop: &AtomicBool, on: &dyn Fn(Signal)) {
    let mut warned = false;
    while !stop.load(Ordering::Relaxed) {
        let mut client = match shared.leases.connect() {
            Ok(client) => client,
            Err(e) => {
                if !warned {
                    tracing::warn!("the cluster's signals are not heard: {e}; trying again");
                    warned = true;
                }
                std::thread::sleep(LISTEN_TICK);
                continue;
            }
        };
        if let Err(e) = client.batch_execute(&format!("LISTEN {CHANNEL}")) {
            tracing::warn!("LISTEN {CHANNEL}: {}", crate::reason(&e));
            std::thread::sleep(LISTEN_TICK);
            continue;
        }
        if warned {
            tracing::info!("the cluster's signals are heard again");
            warned = false;
        }
        on(Signal::Reconnected);
        'heard: while !stop.load(Ordering::Relaxed) {
            {
                let mut notifications = client.notifications();
                let mut heard = notifications.timeout_iter(LISTEN_TICK);
                loop {
                    match heard.next() {
                        Ok(None) => break,
                        Ok(Some(n)) => match parse(n.payload()) {
                            Some(signal) => on(signal),
                            None => tracing::debug!("an unknown signal `{}`", n.payload().escape_debug()),
                        },
                        Err(e) => {
                            tracing::warn!("the cluster's signals: {}", crate::reason(&e));
                            break 'heard;
                        }
                    }
                }
            }
            if client.is_closed() {
                break;
            }
        }
        // Dropped here, on this thread (a client's goodbye blocks on its own runtime).
        drop(client);
    }
}

/// A signal from its payload.
fn parse(payload: &str) -> Option<Signal> {
    let (kind, rest) = payload.split_once(' ')?;
    match kind {
        "m" => Some(Signal::Mail(rest.to_owned())),
        "p" => rest.parse().ok().map(Signal::Patched),
        "b" => {
            let (id, from) = rest.split_once(' ')?;
            Some(Signal::Broadcast { id: id.parse().ok()?, from: from.to_owned() })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use modhost_store::Signal;

    #[test]
    fn payloads_name_what_changed() {
        assert_eq!(parse("m 0123456789abcdef01234567"), Some(Signal::Mail("0123456789abcdef01234567".into())));
        assert_eq!(parse("p 42"), Some(Signal::Patched(42)));
        assert_eq!(parse("b 7 host-a 1"), Some(Signal::Broadcast { id: 7, from: "host-a 1".into() }));
        assert_eq!(parse("p x"), None);
        assert_eq!(parse("z 1"), None);
        assert_eq!(parse("m"), None);
    }
}
