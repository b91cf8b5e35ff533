//! Step 10 of a request's path: the zlib form of an answer. Under 8 KiB it is deflated inline; larger
//! ones go through the compressed-body cache (`body_cache.rs`, keyed so a stale hit is impossible), and
//! a miss over 256 KiB is deflated on the blocking pool so it never holds an async worker.

use crate::app::App;
use crate::body_cache::{Key, MIN_CACHED_BYTES, Part};
use bytes::Bytes;
use modhost_wire as wire;

/// Bodies larger than this are deflated on the blocking pool, not on an async worker.
const DEFLATE_INLINE_MAX: usize = 256 << 10;

/// The zlib form of an answer: from the cache when the same parts were compressed before (a clone of
/// the cached buffer) or are being compressed by a concurrent request (waited for), else compressed
/// now, off the async workers when large, and cached if large.
pub(super) async fn compress(app: &App, parts: Vec<Part>) -> Result<Bytes, tokio::task::JoinError> {
    let total: usize = parts.iter().map(|p| p.bytes().len()).sum();
    if total < MIN_CACHED_BYTES {
        let bytes: Vec<Bytes> = parts.iter().map(Part::bytes).collect();
        return Ok(Bytes::from(wire::deflate_parts(&bytes)));
    }
    let key = Key::of(&parts);
    app.body_cache
        .get_or_compress(key, || async move {
            let bytes: Vec<Bytes> = parts.iter().map(Part::bytes).collect();
            if total <= DEFLATE_INLINE_MAX {
                Ok(wire::deflate_parts(&bytes))
            } else {
                tokio::task::spawn_blocking(move || wire::deflate_parts(&bytes)).await
            }
        })
        .await
}
