//! [`Exchange`]: what hosts sharing one store pass one another through it. Only a shared engine has
//! one ([`crate::Store::exchange`]); a player's own SQLite store has none, and its host keeps all of
//! this in memory.
//!
//! - **Mail**: a notifier message for a session whose socket is not on the pushing host waits in the
//!   store, within the pushing mod's share, until a host where the session is connected (or polling)
//!   takes it; a [`Signal::Mail`] tells every host that one arrived.
//! - **The game database's patch log**: a mod's runtime `db.patch` is appended in one order for the
//!   whole cluster (the log's head row is locked while the appending host catches up and applies it),
//!   so every host applies the same patches in the same order; a host that starts late replays it.
//! - **Broadcasts**: a message for every socket of every host.
//!
//! The engine delivers [`Signal`]s to one listener per host; a signal may be lost while the
//! connection is down, so [`Signal::Reconnected`] tells the host to look at everything again.

use crate::StoreError;

/// One runtime patch of the game database, as the log holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedPatch {
    /// Its place in the cluster's one order (from 1, increasing by one).
    pub seq: u64,
    /// The mod that made it.
    pub by: String,
    /// The db path it patches.
    pub path: String,
    /// The merge patch, JSON.
    pub json: String,
}

/// The bounds a message for a session without a socket is held to (the notifier's, `RealtimeLimits`).
#[derive(Clone, Copy, Debug)]
pub struct MailLimits {
    /// Messages kept per session; past it the oldest go.
    pub messages: usize,
    /// Bytes kept per session (the newest message always stays).
    pub bytes: usize,
    /// Bytes the pushing mod may have waiting, over all sessions and hosts.
    pub mod_bytes: usize,
    /// Sessions the pushing mod may have messages waiting for.
    pub mod_sessions: usize,
}

/// What became of a mailed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mailed {
    /// Waiting for its session; `dropped` older messages of the session went to make room.
    Queued {
        /// Older messages of the session dropped over its bounds.
        dropped: u64,
    },
    /// Refused: the mod has `held` bytes waiting, and its share is `share`.
    ModBytes {
        /// Bytes the mod has waiting.
        held: usize,
        /// Its share.
        share: usize,
    },
    /// Refused: the mod has messages waiting for this many sessions already.
    ModSessions(usize),
}

/// A waiting message taken for delivery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    /// The mod that pushed it.
    pub by: String,
    /// The message.
    pub text: String,
}

/// What the patch log did with a patch ([`Exchange::log_patch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logged {
    /// Appended at this place.
    At(u64),
    /// The host's `apply` refused it: nothing was appended.
    Refused,
    /// The log holds `held` bytes and may hold `max`: nothing was appended.
    Full {
        /// Bytes the log holds.
        held: u64,
        /// What it may hold.
        max: u64,
    },
}

/// Something another host (or this one) did that a host may need to act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A message is waiting for this session.
    Mail(String),
    /// The patch log grew to this place.
    Patched(u64),
    /// A broadcast, by its id, sent by `from`.
    Broadcast {
        /// Its id ([`Exchange::broadcast_text`]).
        id: u64,
        /// The host that sent it (which delivered it to its own sockets already).
        from: String,
    },
    /// The listener connected again after losing its connection: signals may have been missed.
    Reconnected,
}

/// A listener's thread; it stops when this is dropped.
pub trait Listening: Send + Sync + std::fmt::Debug {}

/// What hosts sharing one store pass one another (see the module's header).
pub trait Exchange: Send + Sync + std::fmt::Debug {
    /// Leaves `text`, pushed by mod `by`, for `session`, within `limits`.
    fn mail(&self, session: &str, by: &str, text: &str, limits: &MailLimits) -> Result<Mailed, StoreError>;
    /// Takes every message waiting for `session`, oldest first.
    fn take_mail(&self, session: &str) -> Result<Vec<Mail>, StoreError>;
    /// Sends `text` to every host's sockets, as `from`.
    fn broadcast(&self, from: &str, text: &str) -> Result<(), StoreError>;
    /// The text of broadcast `id`, while it is kept (a minute).
    fn broadcast_text(&self, id: u64) -> Result<Option<String>, StoreError>;
    /// The log's patches after `seq`, in order.
    fn patches_after(&self, seq: u64) -> Result<Vec<LoggedPatch>, StoreError>;
    /// Appends `patch` (the mod that made it, the path, the JSON), after `apply` accepted it: `apply` is handed
    /// the patches after `after` (the caller has applied up to there) while the log's head is
    /// locked, applies them and then this patch, and answers whether this one applied. It may be
    /// called again if the transaction is retried (it must then undo its own patch first).
    fn log_patch(
        &self,
        after: u64,
        patch: (&str, &str, &str),
        max_bytes: u64,
        apply: &mut dyn FnMut(&[LoggedPatch]) -> bool,
    ) -> Result<Logged, StoreError>;
    /// Starts a new patch log when no other host than `holder` has been heard from lately (the
    /// whole cluster had stopped: as on one host, the db starts again from `db.json` and the mods'
    /// `init`s). Answers whether it did.
    fn begin_log(&self, holder: &str) -> Result<bool, StoreError>;
    /// Calls `on` with every signal, from a thread of its own, until the answer is dropped.
    fn listen(&self, on: Box<dyn Fn(Signal) + Send + Sync>) -> Result<Box<dyn Listening>, StoreError>;
}
