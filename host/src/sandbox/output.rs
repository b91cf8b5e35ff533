//! [`GuestOutput`]: where a mod's stdout and stderr go: a bounded in-memory buffer per call, logged with
//! the mod's id when the call ends, and quoted (its tail) in the 500 body when the call traps, so a
//! panic message reaches the mod's author.
//!
//! Hand-written because wasmtime-wasi's `MemoryOutputPipe` traps the guest when it is full (and a Rust
//! guest's `println!` then panics); this one keeps the first `capacity` bytes and drops the rest quietly.

use bytes::Bytes;
use std::sync::{Arc, Mutex, PoisonError};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// A cloneable handle on one call's output buffer.
#[derive(Clone, Debug)]
pub(crate) struct GuestOutput {
    buffer: Arc<Mutex<Vec<u8>>>,
    capacity: usize,
}

impl GuestOutput {
    pub(crate) fn new(capacity: usize) -> Self {
        GuestOutput { buffer: Arc::default(), capacity }
    }

    /// Takes what was written so far, leaving the buffer empty.
    pub(crate) fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.buffer.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn append(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        let room = self.capacity.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        // Always writable: what does not fit is dropped, never an error the guest must handle.
        Ok(64 * 1024)
    }
}

impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.append(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}
