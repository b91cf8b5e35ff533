//! What a mod may put into the host's log, and how it is made safe to read: every mod-supplied text
//! that reaches the log (its `log` calls, its stdout/stderr, its error reasons, its trap messages)
//! goes through [`clean`], which cuts it and escapes control characters, so a `\n` in a message can
//! never forge a host log line and one call can never write hundreds of megabytes.
//!
//! Volume is capped twice: per call ([`BYTES_PER_CALL`], counted in the call's state) and per mod per
//! second ([`BYTES_PER_SECOND`], [`LogRate`], shared by all of a mod's calls). Dropped lines are
//! counted; the first drop in a second says so in the log, and the next second's first line reports
//! how many were dropped, so the log shows that something is missing and never how much it grew.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The longest log line a mod can write; the rest is cut.
pub(crate) const MAX_LINE: usize = 8 * 1024;
/// Log bytes one call may write (its `log` calls and its stdout/stderr lines together).
pub(crate) const BYTES_PER_CALL: usize = 64 * 1024;
/// Log bytes one mod may write per second, across all its calls.
pub(crate) const BYTES_PER_SECOND: usize = 256 * 1024;

/// `text` cut to at most `max` bytes (on a character boundary, saying how much was cut) with every
/// control character escaped (`\n` as `\\n`, others as `\\u{..}`), so it is one line of plain text.
pub(crate) fn clean(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = String::with_capacity(end + 16);
    for c in text[..end].chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    if end < text.len() {
        let _ = write!(out, "… ({} bytes cut)", text.len() - end);
    }
    out
}

/// One mod's log budget per second, and what it dropped.
#[derive(Debug)]
pub(crate) struct LogRate {
    window: Mutex<Window>,
    /// Lines dropped since the mod was loaded (both caps).
    pub(crate) dropped: AtomicU64,
    /// Bytes that reached the log since the mod was loaded.
    pub(crate) logged: AtomicU64,
}

#[derive(Debug)]
struct Window {
    started: Instant,
    bytes: usize,
    dropped_lines: u64,
    dropped_bytes: u64,
}

impl Default for LogRate {
    fn default() -> Self {
        let window = Window { started: Instant::now(), bytes: 0, dropped_lines: 0, dropped_bytes: 0 };
        LogRate { window: Mutex::new(window), dropped: AtomicU64::new(0), logged: AtomicU64::new(0) }
    }
}

impl LogRate {
    /// Whether a line of `bytes` may go to the log now, given the `used` bytes of its call so far
    /// (updated when it may). Logs, under the mod's id, the notices that lines are being dropped.
    pub(crate) fn admit(&self, id: &str, used: &mut usize, bytes: usize) -> bool {
        let mut window = self.window.lock().unwrap_or_else(PoisonError::into_inner);
        if window.started.elapsed() >= Duration::from_secs(1) {
            if window.dropped_lines > 0 {
                tracing::warn!(
                    target: "mod",
                    "[{id}] {} log lines ({} bytes) over the cap were dropped",
                    window.dropped_lines,
                    window.dropped_bytes
                );
            }
            *window = Window { started: Instant::now(), bytes: 0, dropped_lines: 0, dropped_bytes: 0 };
        }
        if used.saturating_add(bytes) > BYTES_PER_CALL || window.bytes.saturating_add(bytes) > BYTES_PER_SECOND {
            if window.dropped_lines == 0 {
                tracing::warn!(
                    target: "mod",
                    "[{id}] log over its cap ({} KiB a call, {} KiB a second): dropping lines, counted",
                    BYTES_PER_CALL >> 10,
                    BYTES_PER_SECOND >> 10
                );
            }
            window.dropped_lines += 1;
            window.dropped_bytes += bytes as u64;
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        window.bytes += bytes;
        *used += bytes;
        self.logged.fetch_add(bytes as u64, Ordering::Relaxed);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_escapes_control_characters_and_cuts_on_a_char_boundary() {
        assert_eq!(clean("a\nINFO forged\r\x1b[31m", 100), "a\\nINFO forged\\r\\u{1b}[31m");
        assert_eq!(clean("ééé", 3), "é… (4 bytes cut)");
        assert_eq!(clean("plain", 5), "plain");
    }

    #[test]
    fn a_call_and_a_second_are_capped_and_drops_are_counted() {
        let rate = LogRate::default();
        let mut call = 0;
        assert!(rate.admit("m", &mut call, BYTES_PER_CALL));
        assert!(!rate.admit("m", &mut call, 1), "over the call's cap");
        let mut others = 0;
        for _ in 0..(BYTES_PER_SECOND / BYTES_PER_CALL - 1) {
            let mut fresh = 0;
            assert!(rate.admit("m", &mut fresh, BYTES_PER_CALL));
        }
        assert!(!rate.admit("m", &mut others, 1), "over the mod's second");
        assert_eq!(rate.dropped.load(Ordering::Relaxed), 2);
    }
}
