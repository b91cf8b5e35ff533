//! Websocket routes of mods: the registry of their open connections ([`ModSockets`]), the ids that
//! name them, and the caps on them. No wasmtime here: the calls into the mod on a connection's
//! messages and close are `front/modsock.rs`'s (which owns the socket's task).
//!
//! Ids: `<route>-<secret>`: the index of the socket route in the mod's `declare-realtime` list (so
//! the SDK knows which of the mod's handlers a message is for: `on-message` names no route), then 128
//! bits from the OS's random source as 32 hex digits ([`new_id`]). A mod learns an id only from
//! `accept` (its own connections); `sockets.send` and `sockets.close` with an id that is
//! unknown, closed, or another mod's all answer `not-found` with the same words, so a mod can learn
//! nothing of other mods' connections, not even that an id exists.
//!
//! Caps: a connection holds at most [`socket::MAX_MESSAGE`] bytes queued (its [`Outbox`]); a message
//! sent or received is at most [`socket::MAX_MESSAGE`]; a mod has at most
//! `RealtimeLimits::mod_sockets_per_mod` connections open and the server at most
//! `RealtimeLimits::max_sockets` of all mods' together (besides the notifier's own bound), counted from
//! the moment the upgrade asks the mod to accept until the socket's task ends. Past a cap the upgrade
//! is answered 503 and the mod is not called.
//!
//! Reloads: a connection is served by the loaded mod that accepted it. A reload closes every
//! connection accepted by an older generation with 1012 ("service restart", [`ModSockets::retire`]),
//! and its old mod hears `on-close` with that code; the client reconnects and the new mod accepts
//! (and authenticates) it again. Kept open instead, a connection would hold its old mod, and with it
//! the old generation's whole db, for as long as a player stays connected, and its calls would run
//! code the player replaced.
//!
//! What a reader must not break: an id leaves the registry when the mod closes it (so `on-close` is
//! not called for the mod's own close) or when its socket ends (before `on-close` runs, so nothing
//! sends on a connection its mod was told is gone); the counts are released only when the socket's
//! task ends ([`Ticket`]'s drop), so a closing socket still counts.

use super::RealtimeLimits;
use super::socket::{self, Outbox, Refused};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio_tungstenite::tungstenite::Message;

/// The longest close reason (a close frame's payload is at most 125 bytes, 2 of them the code).
pub(crate) const MAX_REASON: usize = 123;

/// Every open connection on a mod's websocket route, and the counts the caps are checked on.
#[derive(Debug)]
pub(crate) struct ModSockets {
    /// A std mutex: every critical section is a map lookup or update, never held across an await.
    state: Mutex<State>,
    /// Connections of all mods together.
    max_total: usize,
    /// Connections of one mod.
    max_per_mod: usize,
}

#[derive(Debug, Default)]
struct State {
    /// The connections a mod may send on, by id. An id leaves when its mod closes it or it ends.
    open: HashMap<String, Entry>,
    /// Connections per mod id, from the upgrade's `accept` to the end of the socket's task.
    counts: HashMap<Arc<str>, usize>,
    /// The sum of `counts`.
    total: usize,
    /// The serving generation, as [`ModSockets::retire`] last heard it: a connection accepted under
    /// an older one is closed as it registers (its accept ran across a reload).
    generation: u64,
}

#[derive(Debug)]
struct Entry {
    owner: Arc<str>,
    generation: u64,
    outbox: Arc<Outbox>,
}

/// Why an upgrade was not even put to the mod.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// The server-wide cap.
    #[error("the server has {0} mod websockets open, its limit")]
    Server(usize),
    /// The mod's cap.
    #[error("mod {0} has {1} websockets open, its limit")]
    Mod(String, usize),
    /// The OS gave no random bytes for an id.
    #[error("no connection id could be made: {0}")]
    Random(String),
}

/// Why `sockets.send` or `sockets.close` failed (the WIT glue words each for the mod).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SendError {
    /// Unknown, closed, or another mod's.
    NotFound,
    /// A message over [`socket::MAX_MESSAGE`] bytes (its size).
    TooLarge(usize),
    /// The connection's queue is full: its client does not read. The connection is closed (1008).
    Full,
    /// A close code outside 1000 and 3000-4999, or a reason over [`MAX_REASON`] bytes.
    BadClose(String),
}

/// A fresh connection id: 128 bits from the OS, as 32 lowercase hex digits.
pub(crate) fn new_id() -> Result<String, Unavailable> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Unavailable::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl ModSockets {
    pub(crate) fn new(limits: &RealtimeLimits) -> ModSockets {
        ModSockets { state: Mutex::default(), max_total: limits.max_sockets, max_per_mod: limits.mod_sockets_per_mod }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts one more connection of `owner` against the caps, with a fresh id for its socket route
    /// number `route` (its index in the mod's list). Its [`Ticket`] gives the count back when dropped.
    pub(crate) fn reserve(
        realtime: &Arc<super::Realtime>,
        owner: &Arc<str>,
        route: usize,
    ) -> Result<Ticket, Unavailable> {
        let this = &realtime.sockets;
        let mut state = this.state();
        if state.total >= this.max_total {
            return Err(Unavailable::Server(this.max_total));
        }
        let count = state.counts.get(owner).copied().unwrap_or(0);
        if count >= this.max_per_mod {
            return Err(Unavailable::Mod(owner.to_string(), this.max_per_mod));
        }
        // 128 random bits do not collide in practice; checked anyway, as an id must name one connection.
        let mut id = format!("{route}-{}", new_id()?);
        for _ in 0..4 {
            if !state.open.contains_key(&id) {
                break;
            }
            id = format!("{route}-{}", new_id()?);
        }
        state.total += 1;
        *state.counts.entry(owner.clone()).or_default() += 1;
        Ok(Ticket { realtime: realtime.clone(), owner: owner.clone(), id })
    }

    /// Queues `message` on connection `id` of mod `owner`.
    pub(crate) fn send(&self, owner: &str, id: &str, message: Message) -> Result<(), SendError> {
        let size = message.len();
        if size > socket::MAX_MESSAGE {
            return Err(SendError::TooLarge(size));
        }
        let outbox = self.outbox_of(owner, id)?;
        match outbox.push(message) {
            Ok(()) => Ok(()),
            Err(Refused::Closed) => Err(SendError::NotFound),
            Err(Refused::Full) => {
                // The client stopped reading: it is closed rather than the server holding more for it.
                outbox.close(1008, "the client does not read what it is sent");
                Err(SendError::Full)
            }
        }
    }

    /// Closes connection `id` of mod `owner` with `code` and `reason`, at the mod's asking: the id is
    /// forgotten now, so the mod's `on-close` is not called for it.
    pub(crate) fn close(&self, owner: &str, id: &str, code: u16, reason: &str) -> Result<(), SendError> {
        if !(code == 1000 || (3000..=4999).contains(&code)) {
            return Err(SendError::BadClose(format!("close code {code}: a mod closes with 1000 or 3000-4999")));
        }
        if reason.len() > MAX_REASON {
            return Err(SendError::BadClose(format!("a close reason of {} bytes; at most {MAX_REASON}", reason.len())));
        }
        let mut state = self.state();
        match state.open.get(id) {
            Some(entry) if &*entry.owner == owner && !entry.outbox.closing() => {}
            _ => return Err(SendError::NotFound),
        }
        if let Some(entry) = state.open.remove(id) {
            entry.outbox.close(code, reason);
        }
        Ok(())
    }

    /// Closes (1012) every connection accepted before generation `number` started serving.
    pub(crate) fn retire(&self, number: u64) {
        let mut state = self.state();
        state.generation = state.generation.max(number);
        for entry in state.open.values().filter(|e| e.generation < number) {
            entry.outbox.close(1012, "the mods were reloaded: reconnect");
        }
    }

    fn outbox_of(&self, owner: &str, id: &str) -> Result<Arc<Outbox>, SendError> {
        match self.state().open.get(id) {
            Some(entry) if &*entry.owner == owner => Ok(entry.outbox.clone()),
            _ => Err(SendError::NotFound),
        }
    }

    /// Connections of `owner` counted now (open or being accepted).
    #[cfg(test)]
    fn count(&self, owner: &str) -> usize {
        self.state().counts.get(owner).copied().unwrap_or(0)
    }
}

/// One connection counted against the caps, from its upgrade to the end of its socket's task.
#[derive(Debug)]
pub(crate) struct Ticket {
    realtime: Arc<super::Realtime>,
    owner: Arc<str>,
    id: String,
}

impl Ticket {
    /// The connection's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The mod accepted it: its mod may send on it from now on. Accepted under generation
    /// `generation`; if a reload retired that one meanwhile, it is closed at once (1012).
    pub(crate) fn open(&self, generation: u64, outbox: Arc<Outbox>) {
        let mut state = self.realtime.sockets.state();
        if generation < state.generation {
            outbox.close(1012, "the mods were reloaded: reconnect");
        }
        state.open.insert(self.id.clone(), Entry { owner: self.owner.clone(), generation, outbox });
    }

    /// Forgets the id (the socket ended); whether it was still registered, i.e. its mod did not
    /// close it itself.
    pub(crate) fn forget(&self) -> bool {
        self.realtime.sockets.state().open.remove(&self.id).is_some()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.realtime.sockets.state();
        state.open.remove(&self.id);
        state.total = state.total.saturating_sub(1);
        if let Some(count) = state.counts.get_mut(&self.owner) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                state.counts.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The realtime parts, their (unused) store in the directory returned with them.
    fn realtime(per_mod: usize, total: usize) -> (Arc<super::super::Realtime>, tempfile::TempDir) {
        let limits = RealtimeLimits { mod_sockets_per_mod: per_mod, max_sockets: total, ..RealtimeLimits::default() };
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(modhost_store::Store::open(dir.path(), false).unwrap());
        (Arc::new(super::super::Realtime::new(limits, store, None)), dir)
    }

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let (a, b) = (new_id().unwrap(), new_id().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{a}");
        assert_ne!(a, b);
        let (rt, _store) = realtime(4, 8);
        let ticket = ModSockets::reserve(&rt, &"m".into(), 3).unwrap();
        assert!(ticket.id().starts_with("3-") && ticket.id().len() == 34, "{}", ticket.id());
    }

    #[test]
    fn a_connection_is_only_its_mods() {
        let (rt, _store) = realtime(4, 8);
        let owner: Arc<str> = "a".into();
        let ticket = ModSockets::reserve(&rt, &owner, 0).unwrap();
        let outbox = Outbox::new(socket::MAX_MESSAGE);
        assert_eq!(
            rt.sockets.send("a", ticket.id(), Message::text("early")),
            Err(SendError::NotFound),
            "not yet accepted"
        );
        ticket.open(1, outbox.clone());
        assert_eq!(rt.sockets.send("a", ticket.id(), Message::text("hi")), Ok(()));
        assert_eq!(rt.sockets.send("b", ticket.id(), Message::text("hi")), Err(SendError::NotFound));
        assert_eq!(rt.sockets.close("b", ticket.id(), 1000, ""), Err(SendError::NotFound));
        assert_eq!(rt.sockets.send("a", "00", Message::text("hi")), Err(SendError::NotFound));
        assert!(matches!(rt.sockets.close("a", ticket.id(), 1001, ""), Err(SendError::BadClose(_))));
        assert!(matches!(rt.sockets.close("a", ticket.id(), 4000, &"r".repeat(124)), Err(SendError::BadClose(_))));
        assert_eq!(rt.sockets.close("a", ticket.id(), 4000, "bye"), Ok(()));
        assert!(outbox.closing());
        assert_eq!(rt.sockets.send("a", ticket.id(), Message::text("hi")), Err(SendError::NotFound), "closed");
        assert!(!ticket.forget(), "the mod's own close: no on-close");
    }

    #[test]
    fn the_caps_count_until_the_ticket_drops() {
        let (rt, _store) = realtime(2, 3);
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        let t1 = ModSockets::reserve(&rt, &a, 0).unwrap();
        let _t2 = ModSockets::reserve(&rt, &a, 0).unwrap();
        assert_eq!(ModSockets::reserve(&rt, &a, 0).unwrap_err(), Unavailable::Mod("a".into(), 2));
        let _t3 = ModSockets::reserve(&rt, &b, 1).unwrap();
        assert_eq!(ModSockets::reserve(&rt, &b, 1).unwrap_err(), Unavailable::Server(3));
        drop(t1);
        assert_eq!(rt.sockets.count("a"), 1);
        assert!(ModSockets::reserve(&rt, &a, 0).is_ok());
    }

    #[test]
    fn a_full_queue_closes_1008_and_a_message_over_the_cap_is_refused() {
        let (rt, _store) = realtime(4, 8);
        let owner: Arc<str> = "a".into();
        let ticket = ModSockets::reserve(&rt, &owner, 0).unwrap();
        let outbox = Outbox::new(socket::MAX_MESSAGE);
        ticket.open(1, outbox.clone());
        let big = Message::binary(vec![0u8; socket::MAX_MESSAGE + 1]);
        assert_eq!(rt.sockets.send("a", ticket.id(), big), Err(SendError::TooLarge(socket::MAX_MESSAGE + 1)));
        let half = || Message::binary(vec![0u8; socket::MAX_MESSAGE / 2]);
        assert_eq!(rt.sockets.send("a", ticket.id(), half()), Ok(()));
        assert_eq!(rt.sockets.send("a", ticket.id(), half()), Ok(()));
        assert_eq!(rt.sockets.send("a", ticket.id(), half()), Err(SendError::Full));
        assert!(outbox.closing());
        assert!(ticket.forget(), "closed by the host, not the mod: on-close is called");
    }

    #[test]
    fn a_reload_closes_older_connections_with_1012() {
        let (rt, _store) = realtime(4, 8);
        let owner: Arc<str> = "a".into();
        let old = ModSockets::reserve(&rt, &owner, 0).unwrap();
        let old_box = Outbox::new(64);
        old.open(1, old_box.clone());
        rt.sockets.retire(2);
        assert!(old_box.closing());
        let late = ModSockets::reserve(&rt, &owner, 0).unwrap();
        let late_box = Outbox::new(64);
        late.open(1, late_box.clone());
        assert!(late_box.closing(), "accepted by the old generation across the reload");
        let new = ModSockets::reserve(&rt, &owner, 0).unwrap();
        let new_box = Outbox::new(64);
        new.open(2, new_box.clone());
        assert!(!new_box.closing());
    }
}
