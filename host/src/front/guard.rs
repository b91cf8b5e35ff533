//! [`Guarded`]: a TCP stream that enforces the deadlines hyper does not, by watching its own reads and
//! writes.
//!
//! - **Idle**: a connection waiting for its next request gets `idle` (5 s) for the first byte.
//! - **Head**: from a request's first byte, `head` (3 s) to finish its head. Past it the client gets a
//!   best-effort `408` and the connection closes.
//! - **Write stall**: an answer must make progress: if the client reads nothing for `write_stall`, the
//!   connection closes. A slow reader that keeps reading is never cut off, however long the answer:
//!   progress is our writes, or the kernel's send queue shrinking between them (the kernel wakes a
//!   blocked writer only when half its buffer has drained), and the idle deadline does not run while
//!   an answer's write is blocked.
//!
//! The phase (idle / in a head / busy) is set by the reads seen here and by the request handler
//! ([`ConnPhase::busy`], [`ConnPhase::idle`]); the body deadline is the handler's (it answers 408 itself).
//!
//! With `--perf`, the stream also times what only it sees: a head from its first byte, and an answer
//! until its last byte is written (reported when the next request starts or the connection ends).

use crate::perf::{Perf, Phase};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

const IDLE: u8 = 0;
const HEAD: u8 = 1;
const BUSY: u8 = 2;

/// The deadlines of one connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct Deadlines {
    /// Waiting for the first byte of a request.
    pub(super) idle: Duration,
    /// From a request's first byte to its complete head.
    pub(super) head: Duration,
    /// An answer's longest stretch without progress.
    pub(super) write_stall: Duration,
}

/// Where a connection is, shared between the stream and the request handler: the phase the deadlines
/// follow, and, with `--perf` only, the timing of what only the stream sees ([`WireTiming`]).
#[derive(Debug)]
pub(super) struct ConnPhase {
    state: AtomicU8,
    timing: Option<WireTiming>,
}

/// `--perf` only: when the current head's first byte arrived (ns since [`anchor`], 0 = unknown), and
/// the route of the last answer with when it was ready, until its last byte is written. Kept apart
/// from the phase: the deadlines never read it, and without `--perf` it does not exist.
#[derive(Debug)]
struct WireTiming {
    perf: Arc<Perf>,
    head_started: AtomicU64,
    answered: Mutex<Option<(String, std::time::Instant)>>,
}

/// A fixed instant to express others as numbers, so an atomic can hold them.
fn anchor() -> std::time::Instant {
    static ANCHOR: OnceLock<std::time::Instant> = OnceLock::new();
    *ANCHOR.get_or_init(std::time::Instant::now)
}

impl ConnPhase {
    /// A connection's phase; with `perf`, its heads and answers are timed.
    pub(super) fn new(perf: Option<Arc<Perf>>) -> ConnPhase {
        let timing = perf.map(|perf| WireTiming { perf, head_started: AtomicU64::new(0), answered: Mutex::new(None) });
        ConnPhase { state: AtomicU8::new(IDLE), timing }
    }

    /// A request's head is complete: its handler runs. Answers how long the head took to arrive
    /// (with `--perf`, when its first byte was seen).
    pub(super) fn busy(&self) -> Option<std::time::Duration> {
        self.state.store(BUSY, Ordering::Relaxed);
        let timing = self.timing.as_ref()?;
        let started = timing.head_started.swap(0, Ordering::Relaxed).checked_sub(1)?;
        let started = anchor() + std::time::Duration::from_nanos(started);
        Some(std::time::Instant::now().saturating_duration_since(started))
    }

    /// The handler has answered: the next bytes start the next request.
    pub(super) fn idle(&self) {
        self.state.store(IDLE, Ordering::Relaxed);
    }

    /// With `--perf`: the answer of `route` is ready; its sending is timed from now.
    pub(super) fn answered(&self, route: &str) {
        if let Some(timing) = &self.timing {
            *timing.answered.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((route.to_owned(), std::time::Instant::now()));
        }
    }

    fn head_started(&self, at: Instant) {
        if let Some(timing) = &self.timing {
            let nanos = at.into_std().saturating_duration_since(anchor()).as_nanos();
            timing.head_started.store(u64::try_from(nanos).unwrap_or(u64::MAX - 1) + 1, Ordering::Relaxed);
        }
    }

    /// Reports the last answer's sending, which ended with the last write.
    fn sent(&self, last_write: Option<Instant>) {
        let Some(timing) = &self.timing else { return };
        let answered = timing.answered.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let (Some((route, ready)), Some(written)) = (answered, last_write) {
            let written = written.into_std();
            if written >= ready {
                timing.perf.record_late(&route, Phase::Send, written - ready);
            }
        }
    }
}

/// A stream with deadlines.
pub(super) struct Guarded {
    stream: TcpStream,
    phase: Arc<ConnPhase>,
    deadlines: Deadlines,
    /// The read deadline in force and the phase it was armed for.
    /// One timer per direction, made once and reset, never reallocated: a kept-alive connection arms
    /// them on every request. `read_armed` says which phase the read timer counts for.
    read_timer: Pin<Box<Sleep>>,
    read_armed: Option<u8>,
    write_timer: Pin<Box<Sleep>>,
    write_armed: bool,
    /// When an answer last made progress: an answer still being written (to a slow reader) is not
    /// idleness, so the idle clock starts again from it.
    last_write: Option<Instant>,
    /// While a write waits: the bytes the kernel still held for the client when the stall timer was
    /// last looked at ([`unsent_bytes`]). The kernel wakes a blocked writer only once half its send
    /// buffer (MiBs, autotuned) has drained, which a client reading 128 KiB/s takes longer than
    /// `write_stall` to do: the queue shrinking is the progress that counts.
    unsent: Option<u32>,
}

impl Guarded {
    /// Wraps `stream`; `phase` is shared with the request handler.
    pub(super) fn new(stream: TcpStream, phase: Arc<ConnPhase>, deadlines: Deadlines) -> Guarded {
        let far = Instant::now() + Duration::from_secs(86_400);
        Guarded {
            stream,
            phase,
            deadlines,
            read_timer: Box::pin(tokio::time::sleep_until(far)),
            read_armed: None,
            write_timer: Box::pin(tokio::time::sleep_until(far)),
            write_armed: false,
            last_write: None,
            unsent: None,
        }
    }

    fn expired(kind: &str) -> io::Error {
        io::Error::new(io::ErrorKind::TimedOut, format!("the {kind} deadline passed"))
    }
}

impl AsyncRead for Guarded {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before && this.phase.state.load(Ordering::Relaxed) == IDLE {
                    // The first byte of a request: its head has `head` from now.
                    let now = Instant::now();
                    this.phase.state.store(HEAD, Ordering::Relaxed);
                    this.phase.sent(this.last_write);
                    this.phase.head_started(now);
                    this.read_timer.as_mut().reset(now + this.deadlines.head);
                    this.read_armed = Some(HEAD);
                }
                return Poll::Ready(result);
            }
            Poll::Pending => {}
        }
        let phase = this.phase.state.load(Ordering::Relaxed);
        let limit = match phase {
            IDLE => this.deadlines.idle,
            HEAD => this.deadlines.head,
            _ => {
                // A handler is running (reading the body under its own deadline, or answering).
                this.read_armed = None;
                return Poll::Pending;
            }
        };
        if this.read_armed != Some(phase) {
            this.read_timer.as_mut().reset(Instant::now() + limit);
            this.read_armed = Some(phase);
        }
        let timer = &mut this.read_timer;
        if timer.as_mut().poll(cx).is_ready() {
            // An answer still blocked in a write is not idleness: the handler returned, but the client
            // is still being sent its answer; the write-stall deadline watches that. (Without this, a
            // reader slower than the kernel's buffers was cut off at the last write + idle.)
            if phase == IDLE && this.write_armed {
                timer.as_mut().reset(Instant::now() + limit);
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            if phase == IDLE
                && let Some(written) = this.last_write
                && written + limit > Instant::now()
            {
                timer.as_mut().reset(written + limit);
                if timer.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            if phase == HEAD {
                // Best effort: the socket is writable unless the client stopped reading too.
                let _ = this.stream.try_write(
                    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: 49\r\nConnection: close\r\n\r\n{\"err\":\"the request head did not arrive in time\"}",
                );
            }
            return Poll::Ready(Err(Guarded::expired(if phase == HEAD { "head" } else { "idle" })));
        }
        Poll::Pending
    }
}

impl Guarded {
    /// The write deadline around one write attempt: progress restarts the stall clock; a write that
    /// waits longer than `write_stall` fails.
    fn guard_write(&mut self, cx: &mut Context<'_>, attempt: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match attempt {
            Poll::Ready(result) => {
                self.write_armed = false;
                self.unsent = None;
                self.last_write = Some(Instant::now());
                Poll::Ready(result)
            }
            Poll::Pending => {
                let stall = self.deadlines.write_stall;
                if !self.write_armed {
                    self.write_timer.as_mut().reset(Instant::now() + stall);
                    self.write_armed = true;
                    self.unsent = unsent_bytes(&self.stream);
                }
                loop {
                    ready!(self.write_timer.as_mut().poll(cx));
                    // The client read some of what the kernel held since the last look: progress.
                    let now = unsent_bytes(&self.stream);
                    match (self.unsent, now) {
                        (Some(before), Some(now)) if now < before => {
                            self.unsent = Some(now);
                            self.write_timer.as_mut().reset(Instant::now() + stall);
                        }
                        _ => return Poll::Ready(Err(Guarded::expired("write"))),
                    }
                }
            }
        }
    }
}

/// Bytes the kernel holds for the client (sent but not acknowledged, or not sent yet): `SIOCOUTQ`.
/// `None` where it cannot be read; the write-stall deadline then counts only our own writes.
fn unsent_bytes(stream: &TcpStream) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut unsent: libc::c_int = 0;
        // SAFETY: TIOCOUTQ (SIOCOUTQ for a socket) writes one `int` through the pointer, which points
        // at one; the descriptor is the stream's own and open while it is borrowed.
        let done = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCOUTQ, &mut unsent) };
        (done == 0).then(|| u32::try_from(unsent).ok()).flatten()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stream;
        None
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.phase.sent(self.last_write);
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.guard_write(cx, attempt)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.guard_write(cx, attempt)
    }

    /// Vectored writes let hyper send a head and a large body without copying the body into its buffer.
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
