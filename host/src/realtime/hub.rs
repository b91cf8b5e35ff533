//! [`Hub`]: the SPT notifier's state. One socket per session (a newer one replaces the older, which
//! is closed with a close frame), and, for a session without one, a queue of the messages pushed to
//! it, delivered when it connects or answered to its poll.
//!
//! Every part is bounded: sockets server-wide ([`RealtimeLimits::max_sockets`]); a queue in messages
//! and bytes, the oldest dropped first and counted; the sessions with a queue, the one used least
//! recently dropped first (counted too); a socket's outbox in bytes (`socket.rs`): a push that finds
//! it full closes the socket, whose client is not reading, and queues the message instead.
//!
//! Queued messages are a pool every mod shares, so each mod has a share of it: the bytes it has
//! queued (its [`QueueShare`]) and the sessions it has messages queued for
//! ([`RealtimeLimits::queued_sessions_per_mod`]), and all queues together hold at most
//! [`RealtimeLimits::queue_total_bytes`]. A push past either is refused ([`QueueFull`], an error value
//! for the pushing mod), never taken from what another mod queued: a mod pushing to thousands of
//! sessions it made up fills its own share, not the server's memory or the other mods' queues. Each
//! queued message remembers its mod, so its bytes go back to that mod's share when it is delivered,
//! polled, dropped or evicted.
//!
//! The hub's lock is a std mutex held for a map operation, never across an await, and a push never
//! waits on a socket: a client that reads slowly cannot hold up a mod, a request or another player.
//!
//! What a reader must not break: a socket is attached only once its upgrade completed, by the task
//! that then serves it, and detached when that task ends however it ends (`front/notifier.rs` holds
//! a guard), so every socket the hub knows has a task writing its outbox: a push answered
//! [`Delivery::Delivered`] is in a live socket's outbox, and one to a session without a live socket
//! is queued. Registered at the upgrade request instead, an upgrade the client reset left its
//! session here for good (issue 29: 50 resets leaked about 30, the cap filled, pushes to them were
//! counted delivered and lost).

use super::RealtimeLimits;
use super::socket::{Outbox, Refused};
use crate::session::SessionId;
use hashlink::LruCache;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// The largest message a mod may push (the SPT client's notifications are a few KiB).
pub(crate) const MAX_PUSH: usize = 256 << 10;
/// What a notifier socket's outbox may hold: a client this far behind is not reading.
const OUTBOX_BYTES: usize = 1 << 20;

/// What became of a pushed message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Written to the session's socket's outbox.
    Delivered,
    /// Queued for the session.
    Queued,
}

/// The server's notifier sockets and queues.
#[derive(Debug)]
pub(crate) struct Hub {
    limits: RealtimeLimits,
    inner: Mutex<Inner>,
    /// Wakes the polls waiting for a message (each checks its own session's queue).
    queued_wake: tokio::sync::Notify,
    /// Counters since the start, for the status page and `/metrics`.
    pub(crate) counters: Counters,
}

/// What the hub has done since the server started.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Messages written to a socket's outbox.
    pub(crate) delivered: AtomicU64,
    /// Messages queued for a session without a socket.
    pub(crate) queued: AtomicU64,
    /// Queued messages dropped: a queue over its bounds, or a session's queue evicted.
    pub(crate) dropped: AtomicU64,
    /// Sockets opened.
    pub(crate) opened: AtomicU64,
    /// Sockets closed because a newer one of the same session replaced them.
    pub(crate) replaced: AtomicU64,
    /// Sockets closed because their outbox was full (the client was not reading).
    pub(crate) stalled: AtomicU64,
    /// Upgrades refused because the server had its most sockets open.
    pub(crate) refused: AtomicU64,
}

#[derive(Debug)]
struct Inner {
    sockets: HashMap<SessionId, Open>,
    queues: LruCache<SessionId, Queue>,
    next_id: u64,
    /// Bytes queued across all sessions (at most `queue_total_bytes`).
    queued_bytes: usize,
    /// What each mod has queued now; a mod with nothing queued has no entry.
    by_mod: HashMap<Arc<str>, Held>,
}

/// What one mod holds of the queues.
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    bytes: usize,
    /// Sessions with at least one message of this mod queued.
    sessions: usize,
}

/// A queued message and the mod that pushed it (whose share it is charged to).
#[derive(Debug)]
struct Queued {
    text: Utf8Bytes,
    by: Arc<str>,
}

#[derive(Debug)]
struct Open {
    /// Tells this socket apart from a newer one of the same session.
    id: u64,
    outbox: Arc<Outbox>,
}

#[derive(Debug, Default)]
struct Queue {
    messages: VecDeque<Queued>,
    bytes: usize,
    /// Messages this session lost to the queue's bounds.
    dropped: u64,
}

/// A socket the hub accepted: the task serving it writes `outbox`, starting with what was queued.
#[derive(Debug)]
pub(crate) struct Attached {
    /// Its id, for [`Hub::detach`].
    pub(crate) id: u64,
    /// What to write to it.
    pub(crate) outbox: Arc<Outbox>,
}

/// Who pushes, and how many bytes it may have queued: its share of the queues (`ModLimits::push_queue_bytes`).
#[derive(Debug, Clone)]
pub(crate) struct QueueShare {
    /// The pushing mod's id.
    pub(crate) by: Arc<str>,
    /// The bytes it may have queued at once, across all sessions.
    pub(crate) bytes: usize,
}

/// Why a push that had to be queued was refused: a bound of the queues every mod shares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum QueueFull {
    /// The mod's own share of bytes is full.
    #[error(
        "the session has no socket open and this mod has {held} bytes queued for sessions without one already; \
         its share of the notifier's queues is {share} bytes (push_queue_mib); a push fits again once players \
         connect or poll"
    )]
    ModBytes { held: usize, share: usize },
    /// The mod has messages queued for as many sessions as it may.
    #[error(
        "the session has no socket open and this mod has messages queued for {0} sessions without one \
         already, its most; a push to a new one fits again once players connect or poll"
    )]
    ModSessions(usize),
    /// All queues together hold the server's bound.
    #[error(
        "the session has no socket open and the notifier's queues hold the server's most ({0} bytes) \
         already; a push fits again once players connect or poll"
    )]
    Server(usize),
}

/// The server has its most notifier sockets open.
#[derive(Debug, thiserror::Error)]
#[error("the server has its most notifier sockets open ({0}); try again later")]
pub(crate) struct TooManySockets(pub(crate) usize);

/// How many hex digits of a session id the status page shows: enough for a player to find their
/// row, far too few to act as the session (an id is all a request needs to act as its player).
const SHOWN_SESSION_DIGITS: usize = 6;

/// One session's state, for the status page.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SessionView {
    /// The session id's first [`SHOWN_SESSION_DIGITS`] hex digits, never the whole id.
    pub(crate) session_prefix: String,
    /// Whether it has a socket open.
    pub(crate) connected: bool,
    /// Messages queued for it.
    pub(crate) queued: usize,
    /// Messages it lost to its queue's bounds.
    pub(crate) dropped: u64,
}

impl Inner {
    /// Gives `message`'s bytes back to its mod's share (and, when it was its mod's last message in
    /// its session, the session too).
    fn uncharge(&mut self, message: &Queued, last_of_its_mod: bool) {
        self.queued_bytes = self.queued_bytes.saturating_sub(message.text.len());
        if let Some(held) = self.by_mod.get_mut(&message.by) {
            held.bytes = held.bytes.saturating_sub(message.text.len());
            held.sessions = held.sessions.saturating_sub(usize::from(last_of_its_mod));
            if held.bytes == 0 && held.sessions == 0 {
                self.by_mod.remove(&message.by);
            }
        }
    }

    /// A queue taken out of the map (delivered, polled or evicted): its charges given back, its
    /// messages in order.
    fn release(&mut self, queue: Queue) -> Vec<Utf8Bytes> {
        let mut seen: Vec<Arc<str>> = Vec::new();
        let mut texts = Vec::with_capacity(queue.messages.len());
        for message in queue.messages.into_iter().rev() {
            // Newest first, so a mod's session is given back once, with its last message seen here.
            let first_seen = !seen.contains(&message.by);
            if first_seen {
                seen.push(message.by.clone());
            }
            self.uncharge(&message, first_seen);
            texts.push(message.text);
        }
        texts.reverse();
        texts
    }
}

impl Hub {
    pub(crate) fn new(limits: RealtimeLimits) -> Hub {
        let queues = LruCache::new(limits.queued_sessions.max(1));
        Hub {
            limits,
            inner: Mutex::new(Inner {
                sockets: HashMap::new(),
                queues,
                next_id: 1,
                queued_bytes: 0,
                by_mod: HashMap::new(),
            }),
            queued_wake: tokio::sync::Notify::new(),
            counters: Counters::default(),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `session` may open a socket now (its own replaces its older one, so it always may
    /// when it has one), counted as refused when not. Registers nothing: the upgrade is answered on
    /// this, and [`Self::attach`] registers the socket once the upgrade completed (and checks again).
    pub(crate) fn room_for(&self, session: SessionId) -> Result<(), TooManySockets> {
        self.check_room(&self.inner(), session)
    }

    fn check_room(&self, inner: &Inner, session: SessionId) -> Result<(), TooManySockets> {
        if !inner.sockets.contains_key(&session) && inner.sockets.len() >= self.limits.max_sockets {
            self.counters.refused.fetch_add(1, Ordering::Relaxed);
            return Err(TooManySockets(self.limits.max_sockets));
        }
        Ok(())
    }

    /// Registers `session`'s socket, whose upgrade completed: an older one is closed (1000,
    /// replaced), and what was queued for the session is in the new one's outbox, in order. The
    /// caller serves the outbox and calls [`Self::detach`] when it stops, however it stops.
    pub(crate) fn attach(&self, session: SessionId) -> Result<Attached, TooManySockets> {
        let mut inner = self.inner();
        self.check_room(&inner, session)?;
        let id = inner.next_id;
        inner.next_id += 1;
        let outbox = Outbox::new(OUTBOX_BYTES);
        if let Some(queue) = inner.queues.remove(&session) {
            for message in inner.release(queue) {
                // A fresh outbox takes a queue's worth (the queue's cap is the outbox's).
                let _ = outbox.push(Message::Text(message));
            }
        }
        if let Some(old) = inner.sockets.insert(session, Open { id, outbox: outbox.clone() }) {
            old.outbox.close(1000, "replaced by a newer socket of this session");
            self.counters.replaced.fetch_add(1, Ordering::Relaxed);
        }
        self.counters.opened.fetch_add(1, Ordering::Relaxed);
        Ok(Attached { id, outbox })
    }

    /// The socket `id` of `session` ended: forgotten, unless a newer one replaced it already.
    pub(crate) fn detach(&self, session: SessionId, id: u64) {
        let mut inner = self.inner();
        if inner.sockets.get(&session).is_some_and(|open| open.id == id) {
            inner.sockets.remove(&session);
        }
    }

    /// Pushes `message` (JSON text, at most [`MAX_PUSH`]: the caller checked both) to `session`, for
    /// the mod `share` names: queued when the session has no socket, within the mod's share and the
    /// server's bound, else refused.
    pub(crate) fn push(
        &self,
        share: &QueueShare,
        session: SessionId,
        message: Utf8Bytes,
    ) -> Result<Delivery, QueueFull> {
        let mut inner = self.inner();
        let Err(message) = self.deliver_locked(&mut inner, session, message) else { return Ok(Delivery::Delivered) };
        self.enqueue(&mut inner, share, session, message)?;
        drop(inner);
        self.queued_wake.notify_waiters();
        Ok(Delivery::Queued)
    }

    /// Writes `message` to `session`'s socket when it has one here that takes it; else hands the
    /// message back (to be queued, here or, on a shared store, for every host: `relay.rs`).
    pub(crate) fn deliver(&self, session: SessionId, message: Utf8Bytes) -> Result<(), Utf8Bytes> {
        self.deliver_locked(&mut self.inner(), session, message)
    }

    fn deliver_locked(&self, inner: &mut Inner, session: SessionId, message: Utf8Bytes) -> Result<(), Utf8Bytes> {
        let Some(open) = inner.sockets.get(&session) else { return Err(message) };
        match open.outbox.push(Message::Text(message.clone())) {
            Ok(()) => {
                self.counters.delivered.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(refused) => {
                // Its client is not reading (or it is closing): it goes, and the message waits
                // in the queue for the client's next socket.
                if refused == Refused::Full {
                    open.outbox.close(1008, "the client is not reading its messages");
                    self.counters.stalled.fetch_add(1, Ordering::Relaxed);
                }
                inner.sockets.remove(&session);
                Err(message)
            }
        }
    }

    /// The sessions with a socket here.
    pub(crate) fn socket_sessions(&self) -> Vec<SessionId> {
        self.inner().sockets.keys().copied().collect()
    }

    /// Resolves at the next [`Self::wake_polls`] or queued message (registered when made).
    pub(crate) fn poll_wake(&self) -> tokio::sync::futures::Notified<'_> {
        self.queued_wake.notified()
    }

    /// Wakes the polls waiting here, so each looks for its session's messages again (one may be
    /// waiting in the store for it: `relay.rs`).
    pub(crate) fn wake_polls(&self) {
        self.queued_wake.notify_waiters();
    }

    fn enqueue(
        &self,
        inner: &mut Inner,
        share: &QueueShare,
        session: SessionId,
        message: Utf8Bytes,
    ) -> Result<(), QueueFull> {
        let len = message.len();
        let held = inner.by_mod.get(&share.by).copied().unwrap_or_default();
        // Checked before anything is dropped to make room: a refused push changes nothing.
        if held.bytes + len > share.bytes {
            return Err(QueueFull::ModBytes { held: held.bytes, share: share.bytes });
        }
        let new_session = !inner.queues.peek(&session).is_some_and(|q| q.messages.iter().any(|m| m.by == share.by));
        if new_session && held.sessions >= self.limits.queued_sessions_per_mod {
            return Err(QueueFull::ModSessions(held.sessions));
        }
        if inner.queued_bytes + len > self.limits.queue_total_bytes {
            return Err(QueueFull::Server(self.limits.queue_total_bytes));
        }
        self.counters.queued.fetch_add(1, Ordering::Relaxed);
        if inner.queues.peek(&session).is_none() && inner.queues.len() >= self.limits.queued_sessions.max(1) {
            // The LRU cache would evict on insert: count what it drops, and give it back to its mods.
            if let Some((_, evicted)) = inner.queues.remove_lru() {
                self.counters.dropped.fetch_add(evicted.messages.len() as u64, Ordering::Relaxed);
                inner.release(evicted);
            }
        }
        let held = inner.by_mod.entry(share.by.clone()).or_default();
        held.bytes += len;
        held.sessions += usize::from(new_session);
        inner.queued_bytes += len;
        let queue = inner.queues.entry(session).or_insert_with(Queue::default);
        queue.bytes += len;
        queue.messages.push_back(Queued { text: message, by: share.by.clone() });
        let mut dropped = Vec::new();
        while queue.messages.len() > self.limits.queue_messages.max(1)
            || (queue.bytes > self.limits.queue_bytes && queue.messages.len() > 1)
        {
            let Some(oldest) = queue.messages.pop_front() else { break };
            queue.bytes -= oldest.text.len();
            queue.dropped += 1;
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            let last_of_its_mod = !queue.messages.iter().any(|m| m.by == oldest.by);
            dropped.push((oldest, last_of_its_mod));
        }
        for (message, last_of_its_mod) in dropped {
            inner.uncharge(&message, last_of_its_mod);
        }
        Ok(())
    }

    /// Pushes `message` to every open socket; answers how many took it.
    pub(crate) fn broadcast(&self, message: Utf8Bytes) -> u32 {
        let mut inner = self.inner();
        let mut written = 0;
        let mut stalled = Vec::new();
        for (session, open) in &inner.sockets {
            match open.outbox.push(Message::Text(message.clone())) {
                Ok(()) => written += 1,
                Err(Refused::Full) => {
                    open.outbox.close(1008, "the client is not reading its messages");
                    self.counters.stalled.fetch_add(1, Ordering::Relaxed);
                    stalled.push(*session);
                }
                Err(Refused::Closed) => stalled.push(*session),
            }
        }
        for session in stalled {
            inner.sockets.remove(&session);
        }
        self.counters.delivered.fetch_add(u64::from(written), Ordering::Relaxed);
        written
    }

    /// Whether `session` has a socket open.
    pub(crate) fn connected(&self, session: SessionId) -> bool {
        self.inner().sockets.get(&session).is_some_and(|open| !open.outbox.closing())
    }

    /// Takes what is queued for `session`, in order.
    pub(crate) fn take_queued(&self, session: SessionId) -> Vec<Utf8Bytes> {
        let mut inner = self.inner();
        match inner.queues.remove(&session) {
            Some(queue) => inner.release(queue),
            None => Vec::new(),
        }
    }

    /// Bytes queued now, across all sessions and mods.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.inner().queued_bytes
    }

    /// What is queued for `session`, or, when nothing is, what is pushed to it within `wait`
    /// (empty when nothing came): the poll fallback's long poll.
    pub(crate) async fn poll(&self, session: SessionId, wait: std::time::Duration) -> Vec<Utf8Bytes> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the check, so a push between the two is not missed.
            let notified = self.queued_wake.notified();
            let taken = self.take_queued(session);
            if !taken.is_empty() {
                return taken;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Vec::new();
            }
        }
    }

    /// Sockets open now.
    pub(crate) fn open_sockets(&self) -> usize {
        self.inner().sockets.len()
    }

    /// The hub's series for `/metrics` (fixed names, no per-session label: a client cannot grow them).
    pub(crate) fn render_metrics(&self, out: &mut String) {
        use std::fmt::Write as _;
        let c = &self.counters;
        let _ = writeln!(out, "# HELP modhost_notifier_sockets Notifier websockets open.");
        let _ = writeln!(out, "# TYPE modhost_notifier_sockets gauge");
        let _ = writeln!(out, "modhost_notifier_sockets {}", self.open_sockets());
        let _ = writeln!(out, "# HELP modhost_notifier_queued_bytes Bytes queued for sessions without a socket.");
        let _ = writeln!(out, "# TYPE modhost_notifier_queued_bytes gauge");
        let _ = writeln!(out, "modhost_notifier_queued_bytes {}", self.queued_bytes());
        let _ = writeln!(out, "# HELP modhost_notifier_messages_total Pushed messages, by what became of them.");
        let _ = writeln!(out, "# TYPE modhost_notifier_messages_total counter");
        for (outcome, n) in [("delivered", &c.delivered), ("queued", &c.queued), ("dropped", &c.dropped)] {
            let _ =
                writeln!(out, "modhost_notifier_messages_total{{outcome=\"{outcome}\"}} {}", n.load(Ordering::Relaxed));
        }
        let _ = writeln!(out, "# HELP modhost_notifier_closed_total Sockets the server closed or refused, by why.");
        let _ = writeln!(out, "# TYPE modhost_notifier_closed_total counter");
        for (why, n) in [("replaced", &c.replaced), ("stalled", &c.stalled), ("refused", &c.refused)] {
            let _ = writeln!(out, "modhost_notifier_closed_total{{why=\"{why}\"}} {}", n.load(Ordering::Relaxed));
        }
    }

    /// Every session with a socket or a queue (at most `limit`), for the status page.
    pub(crate) fn sessions(&self, limit: usize) -> Vec<SessionView> {
        let inner = self.inner();
        let mut views: Vec<SessionView> = inner
            .sockets
            .keys()
            .map(|s| SessionView { session_prefix: shown(*s), connected: true, queued: 0, dropped: 0 })
            .take(limit)
            .collect();
        for (session, queue) in inner.queues.iter() {
            if views.len() >= limit {
                break;
            }
            views.push(SessionView {
                session_prefix: shown(*session),
                connected: inner.sockets.contains_key(session),
                queued: queue.messages.len(),
                dropped: queue.dropped,
            });
        }
        views
    }
}

/// What the status page shows of `session`: its first digits.
fn shown(session: SessionId) -> String {
    session.as_str().chars().take(SHOWN_SESSION_DIGITS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(n: u8) -> SessionId {
        SessionId::parse(&format!("{:024x}", n)).unwrap()
    }

    fn limits() -> RealtimeLimits {
        RealtimeLimits { queue_messages: 3, queued_sessions: 2, max_sockets: 2, ..RealtimeLimits::default() }
    }

    /// Mod `id`'s share of `bytes`.
    fn by(id: &str, bytes: usize) -> QueueShare {
        QueueShare { by: id.into(), bytes }
    }

    /// Pushes for mod `m` with a share larger than anything here.
    fn push(hub: &Hub, session: SessionId, message: &str) -> Delivery {
        hub.push(&by("m", 1 << 20), session, message.to_owned().into()).unwrap()
    }

    #[test]
    fn a_queue_keeps_the_newest_and_counts_what_it_dropped() {
        let hub = Hub::new(limits());
        for i in 0..5 {
            assert_eq!(push(&hub, session(1), &format!("{{\"n\":{i}}}")), Delivery::Queued);
        }
        assert_eq!(hub.sessions(10)[0].dropped, 2);
        let taken: Vec<String> = hub.take_queued(session(1)).iter().map(|m| m.to_string()).collect();
        assert_eq!(taken, ["{\"n\":2}", "{\"n\":3}", "{\"n\":4}"]);
        assert_eq!(hub.counters.dropped.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_least_recently_used_queue_goes_first() {
        let hub = Hub::new(limits());
        push(&hub, session(1), "{}");
        push(&hub, session(2), "{}");
        push(&hub, session(1), "{}");
        push(&hub, session(3), "{}");
        assert!(hub.take_queued(session(2)).is_empty());
        assert_eq!(hub.take_queued(session(1)).len(), 2);
        assert_eq!(hub.counters.dropped.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_socket_takes_the_queue_and_a_newer_one_replaces_it() {
        let hub = Hub::new(limits());
        push(&hub, session(1), "{\"a\":1}");
        let first = hub.attach(session(1)).unwrap();
        assert!(hub.take_queued(session(1)).is_empty());
        assert_eq!(push(&hub, session(1), "{}"), Delivery::Delivered);
        let second = hub.attach(session(1)).unwrap();
        assert!(first.outbox.closing());
        assert!(!second.outbox.closing());
        hub.detach(session(1), first.id);
        assert!(hub.connected(session(1)), "the older socket's end leaves the newer one");
        hub.detach(session(1), second.id);
        assert!(!hub.connected(session(1)));
        assert_eq!(push(&hub, session(1), "{}"), Delivery::Queued);
    }

    #[test]
    fn room_is_checked_without_registering_anything() {
        let hub = Hub::new(limits());
        for _ in 0..10 {
            assert!(hub.room_for(session(1)).is_ok());
        }
        assert_eq!(hub.open_sockets(), 0, "only an attached socket is registered");
        assert_eq!(push(&hub, session(1), "{}"), Delivery::Queued, "no socket: queued");
        let _a = hub.attach(session(1)).unwrap();
        let _b = hub.attach(session(2)).unwrap();
        assert!(hub.room_for(session(3)).is_err());
        assert!(hub.room_for(session(2)).is_ok(), "a replacement takes no new place");
    }

    #[test]
    fn the_status_view_names_a_session_by_its_first_digits_only() {
        let hub = Hub::new(limits());
        let id = SessionId::parse("0123456789abcdef01234567").unwrap();
        push(&hub, id, "{}");
        let _socket = hub.attach(session(2)).unwrap();
        let mut shown: Vec<String> = hub.sessions(10).into_iter().map(|v| v.session_prefix).collect();
        shown.sort();
        assert_eq!(shown, ["000000", "012345"]);
    }

    #[test]
    fn sockets_are_capped_and_broadcast_reaches_each_open_one() {
        let hub = Hub::new(limits());
        let _a = hub.attach(session(1)).unwrap();
        let _b = hub.attach(session(2)).unwrap();
        assert!(hub.attach(session(3)).is_err());
        assert!(hub.attach(session(2)).is_ok(), "a replacement is not a new socket");
        assert_eq!(hub.broadcast("{}".into()), 2);
    }

    #[test]
    fn each_mod_queues_within_its_share_and_all_within_the_servers_bound_and_taking_gives_it_back() {
        let limits = RealtimeLimits { queue_total_bytes: 10, queued_sessions_per_mod: 2, ..RealtimeLimits::default() };
        let hub = Hub::new(limits);
        let (hog, other) = (by("hog", 6), by("other", 6));
        let four = || Utf8Bytes::from("[11]");
        assert_eq!(hub.push(&hog, session(1), four()), Ok(Delivery::Queued));
        assert_eq!(hub.push(&hog, session(2), "[]".into()), Ok(Delivery::Queued));
        // Its share of bytes is full: refused, and nothing it or anyone queued is dropped for it.
        assert_eq!(hub.push(&hog, session(1), "[]".into()), Err(QueueFull::ModBytes { held: 6, share: 6 }));
        assert_eq!(hub.push(&by("hog", 100), session(3), "1".into()), Err(QueueFull::ModSessions(2)));
        assert_eq!(hub.push(&other, session(3), four()), Ok(Delivery::Queued));
        // 10 bytes queued: the server's bound refuses the next byte whoever pushes it.
        assert_eq!(hub.push(&other, session(3), "1".into()), Err(QueueFull::Server(10)));
        assert_eq!(hub.queued_bytes(), 10);
        assert_eq!(hub.counters.dropped.load(Ordering::Relaxed), 0);
        // The poll takes session 1's message: its bytes and its session go back to the hog's share.
        assert_eq!(hub.take_queued(session(1)).len(), 1);
        assert_eq!(hub.push(&hog, session(4), "[1]".into()), Ok(Delivery::Queued));
        assert_eq!(hub.queued_bytes(), 9);
        // A socket takes what was queued for its session, and gives that back too.
        let _socket = hub.attach(session(3)).unwrap();
        assert_eq!(hub.queued_bytes(), 5);
        assert_eq!(hub.push(&other, session(3), four()), Ok(Delivery::Delivered));
    }

    #[test]
    fn what_a_full_queue_drops_goes_back_to_its_mods_share() {
        let hub = Hub::new(RealtimeLimits { queue_messages: 2, ..RealtimeLimits::default() });
        // Room for three: the third push is queued, and the oldest dropped, within the share.
        let share = by("m", 6);
        for _ in 0..5 {
            assert_eq!(hub.push(&share, session(1), "[]".into()), Ok(Delivery::Queued));
        }
        assert_eq!((hub.queued_bytes(), hub.counters.dropped.load(Ordering::Relaxed)), (4, 3));
    }
}
