//! One open websocket ([`run`]): it writes what its [`Outbox`] holds, in order, hands each message it
//! reads to its owner, pings a socket that went quiet and closes one that stops answering, and ends
//! with a close frame when its owner, the client or the stopping server asks.
//!
//! Bounds: a message (and a frame) of at most 1 MiB read; 4 KiB of read buffer
//! (tungstenite allocates it up front: the default 128 KiB would be 128 MiB for 1000 idle sockets);
//! the outbox's bytes capped ([`Outbox::push`] refuses past it, and the owner closes the socket); a
//! write that makes no progress for the connection's write-stall deadline fails (the front's
//! `Guarded` stream underneath enforces it), which ends the socket. So a client that never reads
//! holds at most its outbox and the kernel's buffers.

use futures_util::{SinkExt as _, StreamExt as _};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

/// The largest message a client may send (its frames together).
pub(crate) const MAX_MESSAGE: usize = 1 << 20;
/// The largest frame a client may send: a whole message. Browsers and most clients send a message as
/// one frame, so a smaller frame cap would be the real message cap (it was 256 KiB, and a 300 KiB
/// message closed the socket 1009); tungstenite holds a frame and the message it adds to, so a
/// socket reading holds at most about twice this.
pub(crate) const MAX_FRAME: usize = MAX_MESSAGE;
/// Bytes read from the socket at once (and held by every idle socket).
const READ_BUFFER: usize = 4 << 10;

/// What an open socket sends: its messages, in order, and at most one close.
///
/// Shared by the socket's task and whoever sends on it (the notifier's hub, a mod's `sockets.send`):
/// pushing never waits, so a slow client can never hold up a mod or another player.
#[derive(Debug)]
pub(crate) struct Outbox {
    state: Mutex<OutboxState>,
    wake: Notify,
    /// The most bytes it holds.
    cap: usize,
}

#[derive(Debug, Default)]
struct OutboxState {
    messages: VecDeque<Message>,
    bytes: usize,
    /// The close asked for; once set, nothing more is queued.
    close: Option<(u16, String)>,
}

/// Why [`Outbox::push`] refused a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The socket is closing or closed.
    Closed,
    /// The socket's outbox is full: its client is not reading.
    Full,
}

impl Outbox {
    /// An outbox holding at most `cap` bytes of messages.
    pub(crate) fn new(cap: usize) -> Arc<Outbox> {
        Arc::new(Outbox { state: Mutex::default(), wake: Notify::new(), cap })
    }

    /// Queues `message`. Refused when the socket is closing, or when it would pass the cap (a
    /// message larger than the cap is queued only into an empty outbox).
    pub(crate) fn push(&self, message: Message) -> Result<(), Refused> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.close.is_some() {
            return Err(Refused::Closed);
        }
        let size = message.len();
        if state.bytes > 0 && state.bytes + size > self.cap {
            return Err(Refused::Full);
        }
        state.bytes += size;
        state.messages.push_back(message);
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    /// Asks the socket to close with `code` and `reason` after what is queued (the first close asked
    /// for wins).
    pub(crate) fn close(&self, code: u16, reason: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.close.is_none() {
            state.close = Some((code, reason.to_owned()));
        }
        drop(state);
        self.wake.notify_one();
    }

    /// Whether a close was asked for.
    pub(crate) fn closing(&self) -> bool {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).close.is_some()
    }

    fn pop(&self) -> Next {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(message) = state.messages.pop_front() {
            state.bytes -= message.len();
            return Next::Send(message);
        }
        match &state.close {
            Some((code, reason)) => Next::Close(*code, reason.clone()),
            None => Next::Wait,
        }
    }
}

enum Next {
    Send(Message),
    Close(u16, String),
    Wait,
}

/// How a socket ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ended {
    /// The close code: the client's, ours, or 1006 when the connection just ended.
    pub(crate) code: u16,
    /// Its reason.
    pub(crate) reason: String,
}

impl Ended {
    fn abnormal(reason: impl Into<String>) -> Ended {
        Ended { code: 1006, reason: reason.into() }
    }
}

/// The times of one socket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Quiet for this long: ping.
    pub(crate) ping_idle: Duration,
    /// Pinged and quiet for this long: close.
    pub(crate) pong_wait: Duration,
}

/// What reads from a socket: the messages its client sends. Answering `Err` closes the socket with
/// that code and reason.
pub(crate) trait Reader: Send {
    /// One text or binary message.
    fn message(&mut self, message: Message) -> impl Future<Output = Result<(), (u16, String)>> + Send;
}

/// A reader that drops what it reads: the notifier's client sends nothing the server acts on.
pub(crate) struct Ignore;

impl Reader for Ignore {
    async fn message(&mut self, _message: Message) -> Result<(), (u16, String)> {
        Ok(())
    }
}

/// The websocket config of every socket the server serves.
pub(crate) fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        // Every message is written at once: nothing waits in tungstenite's buffer for the next.
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_MESSAGE + (64 << 10))
        .max_frame_size(Some(MAX_FRAME))
        .max_message_size(Some(MAX_MESSAGE))
}

/// Serves one upgraded connection until it ends: writes `outbox`, reads into `reader`, pings, and
/// closes when asked, when the client closes, when it stops answering pings, or when `stopping`
/// turns true (1001, the server is going away).
pub(crate) async fn run<S, R>(
    io: S,
    outbox: &Outbox,
    mut reader: R,
    timing: Timing,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
    R: Reader,
{
    let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config())).await;
    // When the client was last heard from, and whether our ping is unanswered.
    let mut heard = tokio::time::Instant::now();
    let mut pinged = false;
    loop {
        // Everything queued goes out before anything else is waited for.
        match outbox.pop() {
            Next::Send(message) => {
                if let Err(e) = ws.send(message).await {
                    return Ended::abnormal(format!("writing failed: {e}"));
                }
                continue;
            }
            Next::Close(code, reason) => return close(&mut ws, code, &reason).await,
            Next::Wait => {}
        }
        let deadline = heard + if pinged { timing.ping_idle + timing.pong_wait } else { timing.ping_idle };
        tokio::select! {
            () = outbox.wake.notified() => {}
            read = ws.next() => match read {
                None => return Ended::abnormal("the connection ended"),
                Some(Err(e)) => {
                    return match e {
                        tokio_tungstenite::tungstenite::Error::Capacity(e) => close(&mut ws, 1009, &e.to_string()).await,
                        tokio_tungstenite::tungstenite::Error::Protocol(e) => close(&mut ws, 1002, &e.to_string()).await,
                        e => Ended::abnormal(format!("reading failed: {e}")),
                    };
                }
                Some(Ok(message)) => {
                    heard = tokio::time::Instant::now();
                    pinged = false;
                    match message {
                        // tungstenite queues the pong itself; it goes out with the next write or read.
                        Message::Ping(_) | Message::Pong(_) => {
                            let _ = ws.flush().await;
                        }
                        Message::Close(frame) => {
                            // tungstenite answers the close; the stream then ends.
                            let _ = ws.flush().await;
                            return match frame {
                                Some(frame) => Ended { code: frame.code.into(), reason: frame.reason.to_string() },
                                None => Ended { code: 1005, reason: String::new() },
                            };
                        }
                        Message::Text(_) | Message::Binary(_) => {
                            if let Err((code, reason)) = reader.message(message).await {
                                return close(&mut ws, code, &reason).await;
                            }
                        }
                        Message::Frame(_) => {}
                    }
                }
            },
            () = tokio::time::sleep_until(deadline) => {
                if pinged {
                    return close(&mut ws, 1011, "no answer to the server's ping").await;
                }
                pinged = true;
                if let Err(e) = ws.send(Message::Ping(Default::default())).await {
                    return Ended::abnormal(format!("writing failed: {e}"));
                }
            }
            // The `Ref` is dropped inside: it is not `Send`, and the socket's task must be.
            () = async { let _ = stopping.wait_for(|s| *s).await; } => {
                return close(&mut ws, 1001, "the server is stopping").await;
            }
        }
    }
}

/// Sends our close frame and waits (briefly) for the client's answer.
async fn close<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>, code: u16, reason: &str) -> Ended {
    let frame = CloseFrame { code: CloseCode::from(code), reason: reason.to_owned().into() };
    let _ = ws.close(Some(frame)).await;
    // The client's close (or the end); never long: a client that does not answer is dropped.
    let _ = tokio::time::timeout(Duration::from_secs(1), async { while let Some(Ok(_)) = ws.next().await {} }).await;
    Ended { code, reason: reason.to_owned() }
}
