//! Realtime: what reaches players and mods outside a request's answer.
//!
//! - `hub`: the SPT notifier: one websocket per session (`/notifierServer/getwebsocket/<session>`),
//!   the queue of messages for a session without one, and the poll fallback that answers from it.
//! - `socket`: one open websocket: its writes, pings, caps and close.
//! - `modsock`: websocket routes of mods, their connections and the calls into the mod.
//! - `timers`: the mods' timers, stored so they survive restarts.
//! - `relay`: on a store several hosts share, the notifier's messages across hosts.
//!
//! The HTTP side (the upgrade's handshake, the poll's answer) is the front's (`front/upgrade.rs`,
//! `front/notifier.rs`); nothing here knows of hyper.
//!
//! [`Realtime`] is the server's one set of these, created by the server at start (`server.rs`) and
//! shared by every generation: a reload does not close the players' notifier sockets (a mod's connections it does
//! close, 1012: they belong to the mod that accepted them, `modsock.rs`).

pub(crate) mod hub;
pub(crate) mod modsock;
pub(crate) mod relay;
pub(crate) mod socket;
pub(crate) mod timers;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The bounds of the realtime parts (tests shorten the times).
#[derive(Clone, Debug)]
pub struct RealtimeLimits {
    /// An open socket that received nothing for this long is sent a ping.
    pub ping_idle: Duration,
    /// A pinged socket that answers nothing for this long is closed.
    pub pong_wait: Duration,
    /// Notifier sockets open at once, server-wide (each also counts as a connection); mods'
    /// websocket connections have a bound of the same size of their own (`modsock.rs`).
    pub max_sockets: usize,
    /// Websocket connections one mod may have open at once (`modsock.rs`): past it an upgrade on its
    /// routes is answered 503, so one mod's clients cannot take every socket of the server.
    pub mod_sockets_per_mod: usize,
    /// Messages queued for one session without a socket; past it the oldest is dropped.
    pub queue_messages: usize,
    /// Bytes queued for one session without a socket; past it the oldest messages are dropped.
    pub queue_bytes: usize,
    /// Sessions with a queue, server-wide; past it the queue used least recently is dropped.
    pub queued_sessions: usize,
    /// Bytes queued across all sessions, server-wide: past it a push that must be queued is refused
    /// (each mod also has a share of its own, `ModLimits::push_queue_bytes`).
    pub queue_total_bytes: usize,
    /// Sessions one mod may have messages queued for at once: past it its push to another session
    /// without a socket is refused, so its pushes cannot evict the other mods' queues.
    pub queued_sessions_per_mod: usize,
    /// Timers firing at once, server-wide (each mod also has a share, `ModLimits::timer_firings`):
    /// each holds an instance slot while it runs, and a burst of due timers (a restart after a long
    /// downtime) must not take every slot from the requests.
    pub timer_firings: usize,
    /// How long a poll (`/notifierServer/get/<session>`) waits for a message before it answers a ping.
    pub poll_wait: Duration,
}

impl Default for RealtimeLimits {
    fn default() -> Self {
        RealtimeLimits {
            ping_idle: Duration::from_secs(30),
            pong_wait: Duration::from_secs(30),
            max_sockets: 2048,
            mod_sockets_per_mod: 256,
            queue_messages: 64,
            queue_bytes: 1 << 20,
            queued_sessions: 4096,
            // 4096 sessions of 1 MiB each were 4 GiB (issue 29); a mod's share is 16 MiB.
            queue_total_bytes: 128 << 20,
            queued_sessions_per_mod: 1024,
            timer_firings: 64,
            poll_wait: Duration::from_secs(15),
        }
    }
}

/// The server's realtime parts.
#[derive(Debug)]
pub(crate) struct Realtime {
    /// The notifier.
    pub(crate) hub: hub::Hub,
    /// Mods' websocket connections.
    pub(crate) sockets: modsock::ModSockets,
    /// Mods' timers.
    pub(crate) timers: timers::Timers,
    /// On a store several hosts share, the notifier across them.
    pub(crate) relay: Option<relay::Relay>,
    /// Tells every socket task the server is stopping.
    stop: tokio::sync::watch::Sender<bool>,
    /// The socket tasks, so a stopping server waits for them (a mod's connection holds the mod, and
    /// the mod the store).
    tasks: Mutex<tokio::task::JoinSet<()>>,
}

impl Realtime {
    /// The server's realtime parts; its timers are kept in `store` (the server's). `holder`: this
    /// host's name when the store is shared by several hosts (the notifier then spans them).
    pub(crate) fn new(limits: RealtimeLimits, store: Arc<modhost_store::Store>, holder: Option<&str>) -> Realtime {
        let relay = store
            .exchange()
            .zip(holder)
            .map(|(exchange, holder)| relay::Relay::new(exchange, holder.to_owned(), limits.clone()));
        Realtime {
            relay,
            hub: hub::Hub::new(limits.clone()),
            sockets: modsock::ModSockets::new(&limits),
            timers: timers::Timers::new(store),
            stop: tokio::sync::watch::channel(false).0,
            tasks: Mutex::new(tokio::task::JoinSet::new()),
        }
    }

    /// Runs a socket's task; it ends when the server stops (see [`Self::stopping`]).
    pub(crate) fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) {
        let mut tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        while tasks.try_join_next().is_some() {}
        tasks.spawn(task);
    }

    /// Resolves when the server begins to stop.
    pub(crate) fn stopping(&self) -> tokio::sync::watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Closes every socket (each task sends its close frame) and waits up to `wait` for the tasks,
    /// then drops the rest.
    pub(crate) async fn shutdown(&self, wait: Duration) {
        let _ = self.stop.send(true);
        let mut tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        let all = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(wait, all).await.is_err() {
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
        }
    }
}
