//! Steps 0 and 1 of a request's path: the listener, the connections that arrive while the mods load
//! ([`EarlyAccept`]), the accept loop with its connection limit, keep-alive's request count, and the
//! drain at shutdown ([`serve`]).
//!
//! What a reader must not break: hyper's header timeout is silently off unless a timer is installed
//! (`TokioTimer` below); connection tasks are tracked, so `serve` returns only after every one has
//! ended and dropped its `App` (the store's lock is free when the server's `run` returns).

use crate::app::App;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use modhost_wire as wire;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

/// Time open requests get to finish after shutdown begins.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(5);
/// Requests one connection may carry; the last is answered `Connection: close`.
const MAX_REQUESTS_PER_CONNECTION: u32 = 512;

/// Connections accepted while the mods are still loading. Each waits (up to `wait`) for the server to
/// be ready and is then handed to [`serve`]; one still waiting at its deadline is answered 503 with
/// `Retry-After` and closed. So a client that connects during boot is never refused.
#[derive(Debug)]
pub(crate) struct EarlyAccept {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    ready: tokio::sync::watch::Sender<bool>,
    handed: tokio::sync::mpsc::Receiver<TcpStream>,
    task: tokio::task::JoinHandle<()>,
}

impl EarlyAccept {
    /// Accepts on `listener` until [`serve`] takes over, holding at most `max_connections`.
    pub(crate) fn start(listener: Arc<TcpListener>, wait: Duration, max_connections: usize) -> EarlyAccept {
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, ready_rx) = tokio::sync::watch::channel(false);
        let (hand, handed) = tokio::sync::mpsc::channel(max_connections);
        let pending = Arc::new(Semaphore::new(max_connections));
        let task = tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                    },
                    _ = &mut stopped => break,
                };
                let Ok(permit) = pending.clone().try_acquire_owned() else { continue };
                let (mut ready, hand) = (ready_rx.clone(), hand.clone());
                tokio::spawn(async move {
                    let _permit = permit;
                    let ready = matches!(tokio::time::timeout(wait, ready.wait_for(|r| *r)).await, Ok(Ok(_)));
                    match ready {
                        true => {
                            let _ = hand.send(stream).await;
                        }
                        false => {
                            let body = wire::error_body("the server is still loading its mods", &[]);
                            let head = format!(
                                "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                body.len()
                            );
                            let mut stream = stream;
                            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await;
                            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, &body).await;
                        }
                    }
                });
            }
        });
        EarlyAccept { stop: Some(stop), ready, handed, task }
    }

    /// Stops accepting and releases the waiting connections to whoever reads [`Self::handed`].
    async fn finish(mut self) -> tokio::sync::mpsc::Receiver<TcpStream> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
        let _ = self.ready.send(true);
        let (_, empty) = tokio::sync::mpsc::channel(1);
        std::mem::replace(&mut self.handed, empty)
    }
}

impl Drop for EarlyAccept {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts and serves connections until `shutdown` resolves, starting with those that arrived while
/// the mods were loading; at most `max_connections` are open at once, the next is closed at once.
pub(crate) async fn serve(
    listener: Arc<TcpListener>,
    early: EarlyAccept,
    app: Arc<App>,
    max_connections: usize,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let mut handed = early.finish().await;
    let mut http = http1::Builder::new();
    let deadlines = app.config.http;
    // hyper's own header timeout (which runs from the start of the wait, idle time included) stays on
    // as a backstop behind `Guarded`'s idle and head deadlines. It was suspected of issue 17's
    // truncated slow reader (cut at idle + head, 8 s) and is not the cause: with it on and `Guarded`
    // fixed the reader gets every byte (hyper starts it only once the answer is written); the cause
    // was `Guarded`'s idle deadline running from the last write while the next one was blocked.
    http.timer(TokioTimer::new())
        .header_read_timeout(deadlines.idle + deadlines.head)
        .keep_alive(true)
        .max_buf_size(64 << 10);
    let guard =
        super::guard::Deadlines { idle: deadlines.idle, head: deadlines.head, write_stall: deadlines.write_stall };
    let http = Arc::new(http);
    let connections = Arc::new(Semaphore::new(max_connections));
    // Tells every connection that the server is stopping: one still waiting for its first byte ends,
    // one of hyper's finishes its request and closes.
    let (stop, stopping) = tokio::sync::watch::channel(false);
    // Connection tasks are tracked so that `serve` returns only after every one has ended and dropped
    // its `App`: the store's lock is released when `run` returns, and a restart can take it at once.
    let mut tasks = tokio::task::JoinSet::new();
    // Memory the connections of a burst freed goes back to the OS once the burst has ended.
    let reclaim = super::reclaim::watch(connections.clone(), max_connections);
    tokio::pin!(shutdown);

    loop {
        let stream = tokio::select! {
            Some(stream) = handed.recv() => stream,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    // Out of file descriptors, usually: back off instead of spinning.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(permit) = connections.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (app, http, mut stopping) = (app.clone(), http.clone(), stopping.clone());
        tasks.spawn(async move {
            // hyper is handed the connection at its first byte, not before: hyper's connection holds
            // two 8 KiB buffers from its first poll (its head write buffer at once, its read buffer
            // on the first read), which a connection that sends nothing would keep for the idle
            // deadline. The wait is the idle deadline itself, and ends with shutdown. `peek`, not
            // `readable`: readiness reported a fresh socket readable at once (measured with strace:
            // hyper's 8 KiB read came back EAGAIN), a peek waits for a byte or the end.
            let mut first = [0u8; 1];
            tokio::select! {
                peeked = tokio::time::timeout(guard.idle, stream.peek(&mut first)) => {
                    if !matches!(peeked, Ok(Ok(1..))) {
                        return;
                    }
                }
                _ = stopping.changed() => return,
            }
            // Requests served on this connection: the last one allowed says `Connection: close`.
            let served = Arc::new(AtomicU32::new(0));
            // The connection's slot, which a websocket it upgrades to takes with it (`upgrade.rs`).
            let permit = super::upgrade::Slot(Arc::new(std::sync::Mutex::new(Some(permit))));
            let phase = Arc::new(super::guard::ConnPhase::new(app.perf.clone()));
            let stream = super::guard::Guarded::new(stream, phase.clone(), guard);
            let slot = permit.clone();
            let service = service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                let (app, served, phase) = (app.clone(), served.clone(), phase.clone());
                if super::upgrade::asks_for_websocket(request.headers()) {
                    request.extensions_mut().insert(slot.clone());
                }
                async move {
                    let head = phase.busy();
                    let (mut response, route) = super::dispatch::respond(&app, request, head).await;
                    phase.answered(&route);
                    // An upgraded connection stays busy: its socket keeps its own time (pings), and
                    // `Guarded`'s idle and head deadlines must not cut it.
                    if response.status() != hyper::StatusCode::SWITCHING_PROTOCOLS {
                        phase.idle();
                    }
                    if served.fetch_add(1, Ordering::Relaxed) + 1 >= MAX_REQUESTS_PER_CONNECTION {
                        // hyper closes after writing an answer that says so: the header never lies.
                        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
                    }
                    Ok::<_, Infallible>(response)
                }
            });
            // Upgrades on: a websocket takes the connection over. hyper-util's graceful watcher does
            // not take an upgradeable connection, so the shutdown signal is watched here.
            let mut connection = std::pin::pin!(http.serve_connection(TokioIo::new(stream), service).with_upgrades());
            let ended = tokio::select! {
                ended = connection.as_mut() => ended,
                () = async { let _ = stopping.wait_for(|s| *s).await; } => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
        // Reap finished connections so the set stays as small as the number open.
        while tasks.try_join_next().is_some() {}
    }

    drop(listener);
    reclaim.abort();
    let _ = stop.send(true);
    // Sockets are no longer hyper's: each is told to close (1001), beside the requests' drain.
    let realtime = app.realtime.clone();
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(DRAIN_TIMEOUT, async { tokio::join!(drain, realtime.shutdown(DRAIN_TIMEOUT)) })
        .await
        .is_err()
    {
        tracing::warn!("shutdown: some requests did not finish in time");
        tasks.abort_all();
    }
    while tasks.join_next().await.is_some() {}
    Ok(())
}
