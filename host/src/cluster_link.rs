//! A host's ear on the cluster: on a store several hosts share, the store's signals
//! ([`modhost_store::Signal`]) reach this host's notifier relay (`realtime/relay.rs`) and its game
//! database (`dblog.rs`), each acted on by a task of its own. The listener only marks work: it never
//! waits on a socket or the db.
//!
//! The db follows the log on every `Patched` signal, after a reconnection, and once a second besides
//! (one small query): a generation swapped in by a reload after it replayed the log catches up what
//! came between, and a signal lost with a connection is made up for.

use crate::app::App;
use modhost_store::{Exchange, Listening, Signal};
use std::sync::Arc;
use std::time::Duration;

/// How often the db looks at the log without a signal.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

/// The running link; [`Link::stop`] ends it.
pub(crate) struct Link {
    _listening: Box<dyn Listening>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Link {
    /// Stops the tasks and the listener.
    pub(crate) async fn stop(self) {
        for task in &self.tasks {
            task.abort();
        }
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Starts listening to `exchange` for `app`.
pub(crate) fn start(app: Arc<App>, exchange: &Arc<dyn Exchange>) -> anyhow::Result<Link> {
    let patched = Arc::new(tokio::sync::Notify::new());
    let realtime = app.realtime.clone();
    let heard = {
        let (realtime, patched) = (realtime.clone(), patched.clone());
        move |signal: Signal| {
            if let Some(relay) = &realtime.relay {
                relay.heard(&realtime.hub, &signal);
            }
            if matches!(signal, Signal::Patched(_) | Signal::Reconnected) {
                patched.notify_one();
            }
        }
    };
    let listening = exchange.listen(Box::new(heard))?;
    let mut tasks = Vec::new();
    if realtime.relay.is_some() {
        let stopping = realtime.stopping();
        tasks.push(tokio::spawn(async move {
            if let Some(relay) = &realtime.relay {
                relay.run(&realtime.hub, stopping).await;
            }
        }));
    }
    tasks.push(tokio::spawn(async move {
        let mut tick = tokio::time::interval(FOLLOW_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = patched.notified() => {}
                _ = tick.tick() => {}
            }
            let Some(follow) = app.generation().follow.clone() else { continue };
            if !follow.armed() {
                continue;
            }
            match tokio::task::spawn_blocking(move || follow.catch_up()).await {
                Ok(Ok(n)) if n > 0 => tracing::debug!("applied {n} db patches of the cluster"),
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!("following the cluster's db patches: {e}"),
                Err(e) => tracing::warn!("following the cluster's db patches: {e}"),
            }
        }
    }));
    Ok(Link { _listening: listening, tasks })
}
