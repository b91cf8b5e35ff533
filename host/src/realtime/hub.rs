//! [`Hub`]: the SPT notifier's state. One socket per session (a newer one replaces the older, which
//! is closed with a close frame), and, for a session without one, a queue of the messages pushed to
//! it, delivered when it connects or answered to its poll.
//!
//! Every part is bounded: sockets server-wide ([`RealtimeLimits::max_sockets`]); a queue in messages
//! and bytes, the oldest dropped first and counted; the sessions with a queue, the one used least
//! recently dropped first (counted too); a socket's outbox in bytes (`socket.rs`): a push that finds
//! it full closes the socket, whose client is not reading, and queues the message instead.
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
}

#[derive(Debug)]
struct Open {
    /// Tells this socket apart from a newer one of the same session.
    id: u64,
    outbox: Arc<Outbox>,
}

#[derive(Debug, Default)]
struct Queue {
    messages: VecDeque<Utf8Bytes>,
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

impl Hub {
    pub(crate) fn new(limits: RealtimeLimits) -> Hub {
        let queues = LruCache::new(limits.queued_sessions.max(1));
        Hub {
            limits,
            inner: Mutex::new(Inner { sockets: HashMap::new(), queues, next_id: 1 }),
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
            for message in queue.messages {
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

    /// Pushes `message` (JSON text, at most [`MAX_PUSH`]: the caller checked both) to `session`.
    pub(crate) fn push(&self, session: SessionId, message: Utf8Bytes) -> Delivery {
        let mut inner = self.inner();
        if let Some(open) = inner.sockets.get(&session) {
            match open.outbox.push(Message::Text(message.clone())) {
                Ok(()) => {
                    self.counters.delivered.fetch_add(1, Ordering::Relaxed);
                    return Delivery::Delivered;
                }
                Err(refused) => {
                    // Its client is not reading (or it is closing): it goes, and the message waits
                    // in the queue for the client's next socket.
                    if refused == Refused::Full {
                        open.outbox.close(1008, "the client is not reading its messages");
                        self.counters.stalled.fetch_add(1, Ordering::Relaxed);
                    }
                    inner.sockets.remove(&session);
                }
            }
        }
        self.enqueue(&mut inner, session, message);
        drop(inner);
        self.queued_wake.notify_waiters();
        Delivery::Queued
    }

    fn enqueue(&self, inner: &mut Inner, session: SessionId, message: Utf8Bytes) {
        self.counters.queued.fetch_add(1, Ordering::Relaxed);
        if inner.queues.get(&session).is_none() && inner.queues.len() >= self.limits.queued_sessions.max(1) {
            // The LRU cache would evict on insert: count what it drops.
            if let Some((_, evicted)) = inner.queues.remove_lru() {
                self.counters.dropped.fetch_add(evicted.messages.len() as u64, Ordering::Relaxed);
            }
        }
        let queue = inner.queues.entry(session).or_insert_with(Queue::default);
        queue.bytes += message.len();
        queue.messages.push_back(message);
        while queue.messages.len() > self.limits.queue_messages.max(1)
            || (queue.bytes > self.limits.queue_bytes && queue.messages.len() > 1)
        {
            let Some(oldest) = queue.messages.pop_front() else { break };
            queue.bytes -= oldest.len();
            queue.dropped += 1;
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
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
        self.inner().queues.remove(&session).map(|q| q.messages.into()).unwrap_or_default()
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

    #[test]
    fn a_queue_keeps_the_newest_and_counts_what_it_dropped() {
        let hub = Hub::new(limits());
        for i in 0..5 {
            assert_eq!(hub.push(session(1), format!("{{\"n\":{i}}}").into()), Delivery::Queued);
        }
        assert_eq!(hub.sessions(10)[0].dropped, 2);
        let taken: Vec<String> = hub.take_queued(session(1)).iter().map(|m| m.to_string()).collect();
        assert_eq!(taken, ["{\"n\":2}", "{\"n\":3}", "{\"n\":4}"]);
        assert_eq!(hub.counters.dropped.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_least_recently_used_queue_goes_first() {
        let hub = Hub::new(limits());
        hub.push(session(1), "{}".into());
        hub.push(session(2), "{}".into());
        hub.push(session(1), "{}".into());
        hub.push(session(3), "{}".into());
        assert!(hub.take_queued(session(2)).is_empty());
        assert_eq!(hub.take_queued(session(1)).len(), 2);
        assert_eq!(hub.counters.dropped.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_socket_takes_the_queue_and_a_newer_one_replaces_it() {
        let hub = Hub::new(limits());
        hub.push(session(1), "{\"a\":1}".into());
        let first = hub.attach(session(1)).unwrap();
        assert!(hub.take_queued(session(1)).is_empty());
        assert_eq!(hub.push(session(1), "{}".into()), Delivery::Delivered);
        let second = hub.attach(session(1)).unwrap();
        assert!(first.outbox.closing());
        assert!(!second.outbox.closing());
        hub.detach(session(1), first.id);
        assert!(hub.connected(session(1)), "the older socket's end leaves the newer one");
        hub.detach(session(1), second.id);
        assert!(!hub.connected(session(1)));
        assert_eq!(hub.push(session(1), "{}".into()), Delivery::Queued);
    }

    #[test]
    fn room_is_checked_without_registering_anything() {
        let hub = Hub::new(limits());
        for _ in 0..10 {
            assert!(hub.room_for(session(1)).is_ok());
        }
        assert_eq!(hub.open_sockets(), 0, "only an attached socket is registered");
        assert_eq!(hub.push(session(1), "{}".into()), Delivery::Queued, "no socket: queued");
        let _a = hub.attach(session(1)).unwrap();
        let _b = hub.attach(session(2)).unwrap();
        assert!(hub.room_for(session(3)).is_err());
        assert!(hub.room_for(session(2)).is_ok(), "a replacement takes no new place");
    }

    #[test]
    fn the_status_view_names_a_session_by_its_first_digits_only() {
        let hub = Hub::new(limits());
        let id = SessionId::parse("0123456789abcdef01234567").unwrap();
        hub.push(id, "{}".into());
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
}
