//! The notifier across hosts. On a store several hosts share, a push whose session has no socket on
//! the pushing host is left in the store ([`modhost_store::Exchange::mail`]) instead of this host's
//! queue: the store signals it to every host, and the host where the session's socket is (or where
//! it polls) takes it and delivers it. A client that reconnects to any host gets what waited for it:
//! a socket attached here fetches its session's mail at once.
//!
//! [`Relay::heard`] runs on the store's listener thread and only marks work; [`Relay::run`], a task,
//! does it: takes the mail of the marked sessions (on the blocking pool) and writes it to their
//! sockets. A message whose socket went meanwhile is left in the store again, for the next one.
//!
//! Broadcasts go to this host's sockets at once and, through the store, to every other host's.
//!
//! Bounds: the marked sessions are this host's sockets (at most `max_sockets`); broadcasts waiting
//! to be fetched at most [`PENDING_BROADCASTS`] (past it the oldest are skipped, counted as dropped);
//! the mail in the store is held to the same per-session and per-mod bounds as the one-host queue.

use super::RealtimeLimits;
use super::hub::{Delivery, Hub, QueueFull, QueueShare};
use crate::session::SessionId;
use modhost_store::{Exchange, MailLimits, Mailed, Signal, StoreError};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Broadcasts of other hosts heard and not fetched yet, at most (the store keeps as many).
const PENDING_BROADCASTS: usize = 256;

/// Why a push to a session without a socket here did not go.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unsent {
    /// A bound of the queues.
    #[error("{0}")]
    Full(QueueFull),
    /// The store could not take it.
    #[error("{0}")]
    Store(StoreError),
}

/// This host's side of the notifier across hosts.
#[derive(Debug)]
pub(crate) struct Relay {
    exchange: Arc<dyn Exchange>,
    /// This host's name in the cluster (its broadcasts are not fetched back).
    holder: String,
    limits: RealtimeLimits,
    /// Sessions with a socket here that have mail waiting in the store.
    due: Mutex<HashSet<SessionId>>,
    /// Other hosts' broadcasts to fetch and deliver here.
    broadcasts: Mutex<VecDeque<u64>>,
    wake: tokio::sync::Notify,
}

impl Relay {
    pub(crate) fn new(exchange: Arc<dyn Exchange>, holder: String, limits: RealtimeLimits) -> Relay {
        Relay {
            exchange,
            holder,
            limits,
            due: Mutex::default(),
            broadcasts: Mutex::default(),
            wake: tokio::sync::Notify::new(),
        }
    }

    fn mail_limits(&self, mod_bytes: usize) -> MailLimits {
        MailLimits {
            messages: self.limits.queue_messages,
            bytes: self.limits.queue_bytes,
            mod_bytes: mod_bytes.min(self.limits.queue_total_bytes),
            mod_sessions: self.limits.queued_sessions_per_mod,
        }
    }

    /// Pushes `message` to `session` for the mod `share` names: to its socket here if it has one,
    /// else into the store for whichever host it is (or will be) connected to.
    pub(crate) async fn push(
        &self,
        hub: &Hub,
        share: &QueueShare,
        session: SessionId,
        message: Utf8Bytes,
    ) -> Result<Delivery, Unsent> {
        let Err(message) = hub.deliver(session, message) else { return Ok(Delivery::Delivered) };
        let (exchange, limits, by) = (self.exchange.clone(), self.mail_limits(share.bytes), share.by.clone());
        let mailed =
            tokio::task::spawn_blocking(move || exchange.mail(session.as_str(), &by, message.as_str(), &limits))
                .await
                .map_err(|e| Unsent::Store(StoreError::Io { op: "queue", key: "mail".into(), reason: e.to_string() }))?
                .map_err(Unsent::Store)?;
        match mailed {
            Mailed::Queued { dropped } => {
                hub.counters.queued.fetch_add(1, Ordering::Relaxed);
                hub.counters.dropped.fetch_add(dropped, Ordering::Relaxed);
                Ok(Delivery::Queued)
            }
            Mailed::ModBytes { held, share } => Err(Unsent::Full(QueueFull::ModBytes { held, share })),
            Mailed::ModSessions(n) => Err(Unsent::Full(QueueFull::ModSessions(n))),
        }
    }

    /// Sends `message` to every socket here and, through the store, every other host's; answers
    /// how many sockets here took it.
    pub(crate) async fn broadcast(&self, hub: &Hub, message: Utf8Bytes) -> Result<u32, StoreError> {
        let written = hub.broadcast(message.clone());
        let (exchange, from) = (self.exchange.clone(), self.holder.clone());
        tokio::task::spawn_blocking(move || exchange.broadcast(&from, message.as_str()))
            .await
            .map_err(|e| StoreError::Io { op: "send", key: "a broadcast".into(), reason: e.to_string() })??;
        Ok(written)
    }

    /// What is queued for `session` (here, or in the store), or, when nothing is, what arrives
    /// within `wait`: the poll fallback across hosts.
    pub(crate) async fn poll(&self, hub: &Hub, session: SessionId, wait: Duration) -> Vec<Utf8Bytes> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before the look, so a signal between the two is not missed.
            let notified = hub.poll_wake();
            let mut taken = hub.take_queued(session);
            if taken.is_empty() {
                taken = self.take(session).await.into_iter().map(|(_, text)| text).collect();
            }
            if !taken.is_empty() {
                return taken;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Vec::new();
            }
        }
    }

    /// Takes `session`'s mail from the store, oldest first, with the mods that pushed it; nothing
    /// (said in the log) when the store fails.
    async fn take(&self, session: SessionId) -> Vec<(String, Utf8Bytes)> {
        let exchange = self.exchange.clone();
        let taken = tokio::task::spawn_blocking(move || exchange.take_mail(session.as_str()))
            .await
            .map_err(|e| e.to_string())
            .and_then(|taken| taken.map_err(|e| e.to_string()));
        match taken {
            Ok(mail) => mail.into_iter().map(|m| (m.by, Utf8Bytes::from(m.text))).collect(),
            Err(e) => {
                tracing::warn!("the notifier's mail for {}: {e}", session.as_str());
                Vec::new()
            }
        }
    }

    /// `session`'s socket attached here: what waits for it in the store is fetched.
    pub(crate) fn attached(&self, session: SessionId) {
        self.due.lock().unwrap_or_else(PoisonError::into_inner).insert(session);
        self.wake.notify_one();
    }

    /// A signal from the store (on its listener's thread): marks the work, wakes the task.
    pub(crate) fn heard(&self, hub: &Hub, signal: &Signal) {
        match signal {
            Signal::Mail(session) => {
                let Ok(session) = SessionId::parse(session) else { return };
                if hub.connected(session) {
                    self.attached(session);
                }
                hub.wake_polls();
            }
            Signal::Broadcast { id, from } if *from != self.holder => {
                let mut pending = self.broadcasts.lock().unwrap_or_else(PoisonError::into_inner);
                if pending.len() >= PENDING_BROADCASTS {
                    pending.pop_front();
                    hub.counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
                pending.push_back(*id);
                drop(pending);
                self.wake.notify_one();
            }
            Signal::Reconnected => {
                // Mail may have come while no one listened: every socket here looks.
                self.due.lock().unwrap_or_else(PoisonError::into_inner).extend(hub.socket_sessions());
                self.wake.notify_one();
                hub.wake_polls();
            }
            Signal::Broadcast { .. } | Signal::Patched(_) => {}
        }
    }

    /// Delivers what [`Self::heard`] marked, until `stopping`.
    pub(crate) async fn run(&self, hub: &Hub, mut stopping: tokio::sync::watch::Receiver<bool>) {
        loop {
            tokio::select! {
                () = self.wake.notified() => {}
                _ = stopping.changed() => return,
            }
            let due: Vec<SessionId> = self.due.lock().unwrap_or_else(PoisonError::into_inner).drain().collect();
            for session in due {
                for (by, text) in self.take(session).await {
                    if let Err(text) = hub.deliver(session, text) {
                        // Its socket went meanwhile: back into the store for its next one.
                        let share = QueueShare { by: by.into(), bytes: self.limits.queue_total_bytes };
                        if let Err(e) = self.push(hub, &share, session, text).await {
                            tracing::warn!("a message for {} was dropped: {e}", session.as_str());
                            hub.counters.dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            let broadcasts: Vec<u64> =
                self.broadcasts.lock().unwrap_or_else(PoisonError::into_inner).drain(..).collect();
            for id in broadcasts {
                let exchange = self.exchange.clone();
                match tokio::task::spawn_blocking(move || exchange.broadcast_text(id)).await {
                    Ok(Ok(Some(text))) => {
                        hub.broadcast(text.into());
                    }
                    Ok(Ok(None)) => {}
                    Ok(Err(e)) => tracing::warn!("a broadcast of another host: {e}"),
                    Err(e) => tracing::warn!("a broadcast of another host: {e}"),
                }
            }
        }
    }
}
