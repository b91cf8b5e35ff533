//! Giving memory back after a burst of connections ends. Each open connection holds some KiB of heap
//! (hyper's read and head buffers, the task); glibc keeps what they free in its arenas, so after 1000
//! stalled connections closed the server stayed 1.6-2.5x its idle RSS, and crept up across bursts
//! (`stall-bench`). [`watch`] asks glibc to return free pages (`malloc_trim`) once a burst of at least
//! [`BURST`] connections has ended, at most once a second: about a millisecond on the blocking pool
//! for a heap of tens of MiB, nothing in between.
//!
//! What a reader must not break: the trim runs off the async workers, and never per connection.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Connections that must have closed since the last peak before a trim is worth it.
const BURST: usize = 64;
/// How often the count of open connections is looked at.
const EVERY: Duration = Duration::from_secs(1);

/// Watches `connections` (a semaphore of `max` permits, one per open connection) until the task is
/// aborted, trimming the heap after each burst that has ended.
pub(super) fn watch(connections: Arc<Semaphore>, max: usize) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut peak = 0usize;
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let open = max.saturating_sub(connections.available_permits());
            peak = peak.max(open);
            if peak - open >= BURST {
                peak = open;
                let _ = tokio::task::spawn_blocking(trim).await;
            }
        }
    })
}

/// Returns the allocator's free memory to the OS, where the allocator can (glibc).
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only reorganises glibc's own free lists and is thread-safe; the argument
    // (bytes to keep at the top of the heap) has no invalid value.
    unsafe {
        libc::malloc_trim(0);
    }
}
