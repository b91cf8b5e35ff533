//! Connections to PostgreSQL: a small pool of synchronous clients, each with the statements it has
//! prepared, and the store's schema, created on first connect.
//!
//! Why a hand-written pool of a few lines rather than `r2d2`/`deadpool`: the store needs exactly a
//! bounded free list that drops broken connections, keeps each connection's prepared statements with
//! it, and says why when the server is unreachable; a pool crate would add a dependency (deadpool's is
//! async) for the same few lines.

use postgres::{Client, Config, NoTls, Statement};
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// The store's tables, in their own schema so that they never meet another program's. Keys and
/// namespaces compare byte by byte (`COLLATE "C"`), as SQLite's do: listings are sorted the same on
/// both engines whatever the database's locale.
pub(crate) const SCHEMA: &str = r#"
    CREATE SCHEMA IF NOT EXISTS modhost;
    CREATE TABLE IF NOT EXISTS modhost.kv (
        ns TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
        value BYTEA NOT NULL, version BIGINT NOT NULL,
        -- The key's patch records not yet folded, and their bytes: kept here so that a patch reads
        -- one row, not every record before it.
        pending BIGINT NOT NULL DEFAULT 0, pending_bytes BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (ns, key)
    );
    -- Document patches not yet folded into kv.value, applied in seq order on load.
    CREATE TABLE IF NOT EXISTS modhost.patches (
        seq BIGSERIAL PRIMARY KEY, ns TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL,
        path TEXT NOT NULL, patch BYTEA NOT NULL
    );
    CREATE INDEX IF NOT EXISTS patches_by_key ON modhost.patches (ns, key, seq);
    CREATE TABLE IF NOT EXISTS modhost.history (
        ns TEXT COLLATE "C" NOT NULL, key TEXT COLLATE "C" NOT NULL, slot BIGINT NOT NULL,
        saved_ms BIGINT NOT NULL, value BYTEA NOT NULL,
        PRIMARY KEY (ns, key, slot)
    );
    CREATE INDEX IF NOT EXISTS history_by_age ON modhost.history (ns, saved_ms);
    -- Each namespace's running usage, changed in the transaction of every write that changes it:
    -- the quota is checked against what every host committed.
    CREATE TABLE IF NOT EXISTS modhost.usage (
        ns TEXT COLLATE "C" PRIMARY KEY, bytes BIGINT NOT NULL DEFAULT 0, keys BIGINT NOT NULL DEFAULT 0,
        history BIGINT NOT NULL DEFAULT 0
    );
    -- Versions: one sequence for every key of every host, so a version is never handed out twice.
    CREATE SEQUENCE IF NOT EXISTS modhost.versions;
    -- Sessions' leases: the host that serves a session, until when, and the fencing token its writes
    -- carry (raised by every grant).
    -- The hosts, as each last announced itself (every few seconds): what the status page shows.
    CREATE TABLE IF NOT EXISTS modhost.hosts (
        holder TEXT PRIMARY KEY, report TEXT NOT NULL, seen_at TIMESTAMPTZ NOT NULL
    );
    CREATE TABLE IF NOT EXISTS modhost.leases (
        session TEXT COLLATE "C" PRIMARY KEY, holder TEXT NOT NULL, token BIGINT NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
    );
    -- What hosts pass one another (exchange.rs): notifier messages waiting for a session, by the
    -- mod that pushed them; a row per mod, locked while its share is checked; broadcasts, kept a
    -- minute; the game database's runtime patches, in the order of their head row.
    CREATE TABLE IF NOT EXISTS modhost.mail (
        id BIGSERIAL PRIMARY KEY, session TEXT COLLATE "C" NOT NULL, by_mod TEXT COLLATE "C" NOT NULL,
        text TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS mail_by_session ON modhost.mail (session, id);
    CREATE INDEX IF NOT EXISTS mail_by_mod ON modhost.mail (by_mod, session);
    CREATE TABLE IF NOT EXISTS modhost.mail_shares (by_mod TEXT COLLATE "C" PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS modhost.broadcasts (
        id BIGSERIAL PRIMARY KEY, text TEXT NOT NULL, sent_at TIMESTAMPTZ NOT NULL
    );
    CREATE TABLE IF NOT EXISTS modhost.db_log (
        seq BIGINT PRIMARY KEY, by_mod TEXT NOT NULL, path TEXT NOT NULL, patch TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS modhost.db_log_head (
        one INT PRIMARY KEY CHECK (one = 1), seq BIGINT NOT NULL, bytes BIGINT NOT NULL,
        begun_at TIMESTAMPTZ NOT NULL
    );
    INSERT INTO modhost.db_log_head VALUES (1, 0, 0, clock_timestamp()) ON CONFLICT DO NOTHING;
"#;

/// Connections kept open; a caller past them waits for one to be given back.
const MAX_CONNECTIONS: usize = 8;
/// How long a connection attempt may take before the store answers that the server is unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection's prepared statements, by their text.
pub(crate) type Statements = HashMap<&'static str, Statement>;

/// One connection and the statements prepared on it.
pub(crate) struct Conn {
    pub(crate) client: Client,
    statements: Statements,
}

/// The statement for `sql` on this connection, prepared once.
pub(crate) fn statement(
    statements: &mut Statements,
    client: &mut impl postgres::GenericClient,
    sql: &'static str,
) -> Result<Statement, postgres::Error> {
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = client.prepare(sql)?;
    statements.insert(sql, statement.clone());
    Ok(statement)
}

impl Conn {
    /// The client and its statement cache, borrowed apart (a transaction borrows the client).
    pub(crate) fn parts(&mut self) -> (&mut Client, &mut Statements) {
        (&mut self.client, &mut self.statements)
    }
}

pub(crate) struct Pool {
    config: Config,
    /// Where the server is, for messages (the URL without its password).
    shown: String,
    free: Mutex<Free>,
    returned: Condvar,
}

#[derive(Default)]
struct Free {
    idle: Vec<Conn>,
    open: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pool({})", self.shown)
    }
}

/// A connection taken from the pool; given back when dropped, unless it broke.
pub(crate) struct Taken<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl std::ops::Deref for Taken<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn.as_ref().expect("a taken connection")
    }
}

impl std::ops::DerefMut for Taken<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("a taken connection")
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else { return };
        let mut free = self.pool.free();
        if conn.client.is_closed() {
            free.open -= 1;
        } else {
            free.idle.push(conn);
        }
        drop(free);
        self.pool.returned.notify_one();
    }
}

impl Pool {
    /// A pool for `url` (`postgres://user:password@host:port/database`, or `?host=/socket/folder`),
    /// each connection started with `settings` (`-c name=value …`, after the URL's own `options`).
    pub(crate) fn new(url: &str, settings: &str) -> Result<Pool, String> {
        let mut config =
            Config::from_str(url).map_err(|e| format!("`{}` is not a PostgreSQL URL: {e}", redact(url)))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let options = format!("{} {settings}", config.get_options().unwrap_or_default());
        config.options(options.trim());
        config.application_name("modhost");
        Ok(Pool { config, shown: redact(url), free: Mutex::new(Free::default()), returned: Condvar::new() })
    }

    /// Where the server is, without a password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// A new client connected to the server, outside the pool (for the schema, for `LISTEN`).
    pub(crate) fn connect(&self) -> Result<Client, String> {
        self.config
            .connect(NoTls)
            .map_err(|e| format!("PostgreSQL at {} is unreachable: {}", self.shown, crate::reason(&e)))
    }

    /// A connection: an idle one, a new one while fewer than the cap are open, or the next one given
    /// back.
    pub(crate) fn take(&self) -> Result<Taken<'_>, String> {
        let mut free = self.free();
        loop {
            if let Some(conn) = free.idle.pop() {
                if conn.client.is_closed() {
                    free.open -= 1;
                    continue;
                }
                return Ok(Taken { pool: self, conn: Some(conn) });
            }
            if free.open < MAX_CONNECTIONS {
                free.open += 1;
                drop(free);
                return match self.connect() {
                    Ok(client) => Ok(Taken { pool: self, conn: Some(Conn { client, statements: HashMap::new() }) }),
                    Err(e) => {
                        self.free().open -= 1;
                        self.returned.notify_one();
                        Err(e)
                    }
                };
            }
            free = self.returned.wait(free).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn free(&self) -> MutexGuard<'_, Free> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // A client says goodbye to the server as it drops, blocking on its own runtime, which panics
        // on a thread that runs an async runtime's tasks; the store may be dropped on one.
        let idle = std::mem::take(&mut self.free().idle);
        if !idle.is_empty() {
            let _ = std::thread::spawn(move || drop(idle)).join();
        }
    }
}

/// `url` without the password it may carry.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            match user.split_once(':') {
                Some((name, _)) => format!("{}{name}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(super::redact("postgres://mod:secret@db:5432/w"), "postgres://mod:***@db:5432/w");
        assert_eq!(super::redact("postgres://mod@/w?host=/tmp"), "postgres://mod@/w?host=/tmp");
    }
}
