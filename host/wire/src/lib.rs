//! The SPT client's wire rules, as pure functions: zlib bodies both ways, when a client asked for an
//! uncompressed answer, and the host's error body. No hyper, tokio or wasmtime here: the server's
//! front (`modhost`'s `front/`) applies these, and `tests/fuzz` `wire_inflate` fuzzes them alone.
//!
//! What a reader must not break: inflating is bounded by a byte limit, so a zlib bomb is refused after
//! producing at most that many bytes, never expanded in full.
//!
//! Deflating costs what a zlib state costs to set up more than what compressing costs, for the small
//! answers most requests get, so it goes by size: up to 4 KiB, `small.rs` codes the answer with no
//! zlib state at all (an 8 KiB table on the stack); up to 256 KiB, through the thread's zlib state,
//! reset between answers (byte for byte what a fresh state writes); larger, a state of its own.

#![warn(missing_docs)]

mod small;

use flate2::{Compress, Compression, FlushCompress, FlushDecompress, Status};

/// Whether `body` starts with a zlib header (RFC 1950: deflate method, and the check bits).
pub fn looks_like_zlib(body: &[u8]) -> bool {
    match body {
        [cmf, flg, ..] => cmf & 0x0F == 8 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

/// Why a request body was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InflateError {
    /// It looked like zlib but was not a valid stream.
    #[error("the request body looks zlib-compressed but does not inflate: {0}")]
    Corrupt(String),
    /// It inflates to more than the limit.
    #[error("the request body inflates to more than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

/// The body as a handler sees it: inflated when it looks like zlib, passed through when it does not
/// (the "unframed" tolerance for tools that send plain JSON). At most `limit` bytes are produced.
pub fn inflate_body(body: &[u8], limit: usize) -> Result<Option<Vec<u8>>, InflateError> {
    if !looks_like_zlib(body) {
        return Ok(None);
    }
    // Most bodies inflate to well under this: inflate them directly.
    let direct = limit.min(DIRECT_INFLATE_MAX);
    match inflate_into(body, direct)? {
        Some(out) => Ok(Some(out)),
        None if direct >= limit => Err(InflateError::TooLarge { limit }),
        None => {
            // Larger: first measure the stream with a small scratch buffer, so a bomb costs no memory,
            // then inflate it for real into a buffer of exactly its size.
            let size = inflated_size(body, limit)?;
            let out = inflate_into(body, size)?.ok_or(InflateError::TooLarge { limit })?;
            Ok(Some(out))
        }
    }
}

/// Bodies that inflate to at most this are inflated in one pass; larger ones are measured first.
const DIRECT_INFLATE_MAX: usize = 1 << 20;

/// Inflates `body` into at most `cap` bytes: `None` when it would be larger.
///
/// `decompress_vec` fills the vector up to its capacity, and a `Vec` may hold more capacity than was
/// asked for, so the bound is checked on what was written, never assumed from the capacity: the
/// output is allowed one byte past `cap`, which proves the stream larger. (Found by the round-trip
/// proptest: growth by `reserve` doubled past the cap and a 7000-byte stream passed a 6000 limit.)
fn inflate_into(body: &[u8], cap: usize) -> Result<Option<Vec<u8>>, InflateError> {
    let allowed = cap.saturating_add(1);
    let mut inflater = flate2::Decompress::new(true);
    let mut out = Vec::with_capacity(body.len().saturating_mul(4).clamp(4096.min(allowed), allowed));
    loop {
        if out.len() > cap {
            return Ok(None);
        }
        if out.len() == out.capacity() {
            // Grow by up to the size so far (at least 4 KiB), never past one byte over the cap.
            out.reserve_exact(out.len().max(4096).min(allowed - out.len()));
        }
        let consumed = usize::try_from(inflater.total_in()).unwrap_or(usize::MAX);
        let input = body.get(consumed..).unwrap_or_default();
        let status = inflater
            .decompress_vec(input, &mut out, FlushDecompress::Finish)
            .map_err(|e| InflateError::Corrupt(e.to_string()))?;
        match status {
            Status::StreamEnd if out.len() > cap => return Ok(None),
            Status::StreamEnd => return Ok(Some(out)),
            Status::Ok => continue,
            // No progress with room left in `out` means the input ended before the stream did.
            Status::BufError if out.len() < out.capacity() => {
                return Err(InflateError::Corrupt("the stream is truncated".to_owned()));
            }
            Status::BufError => continue,
        }
    }
}

/// How many bytes `body` inflates to, counted through a 64 KiB scratch buffer; past `limit` it stops.
fn inflated_size(body: &[u8], limit: usize) -> Result<usize, InflateError> {
    let mut inflater = flate2::Decompress::new(true);
    let mut scratch = vec![0u8; 64 * 1024];
    loop {
        let consumed = usize::try_from(inflater.total_in()).unwrap_or(usize::MAX);
        let before = inflater.total_out();
        let status = inflater
            .decompress(body.get(consumed..).unwrap_or_default(), &mut scratch, FlushDecompress::Finish)
            .map_err(|e| InflateError::Corrupt(e.to_string()))?;
        let total = usize::try_from(inflater.total_out()).unwrap_or(usize::MAX);
        if total > limit {
            return Err(InflateError::TooLarge { limit });
        }
        match status {
            Status::StreamEnd => return Ok(total),
            Status::BufError if inflater.total_out() == before => {
                return Err(InflateError::Corrupt("the stream is truncated".to_owned()));
            }
            Status::Ok | Status::BufError => continue,
        }
    }
}

/// zlib-deflates a response body (level 6, as the client expects).
pub fn deflate(body: &[u8]) -> Vec<u8> {
    deflate_parts(&[body])
}

/// Answers up to this size (and over 4 KiB) are deflated through the calling thread's reused zlib state; larger ones
/// get a state of their own (their setup is small beside their compression, and the blocking-pool
/// threads that compress them then never each keep a state).
pub const REUSED_STATE_MAX: usize = 256 << 10;

/// The zlib level the SPT client is served at.
const LEVEL: u32 = 6;

std::thread_local! {
    /// One deflate state per thread, reset between answers. Setting up a zlib state allocates and
    /// clears about 270 KB (window, hash chains, pending buffer): that was 51 µs of a 400-byte answer's
    /// deflate, while `reset` only clears the hash heads.
    static DEFLATER: std::cell::RefCell<Option<Compress>> = const { std::cell::RefCell::new(None) };
}

/// zlib-deflates the concatenation of `parts` (a complete zlib stream). Small answers are concatenated
/// first (a copy of at most 4 KiB); larger ones never are.
pub fn deflate_parts<B: AsRef<[u8]>>(parts: &[B]) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.as_ref().len()).sum();
    if total <= small::MAX_INPUT {
        return match parts {
            [one] => small::deflate(one.as_ref()),
            _ => small::deflate(&parts.iter().flat_map(|p| p.as_ref().iter().copied()).collect::<Vec<u8>>()),
        };
    }
    if total <= REUSED_STATE_MAX {
        let reused = DEFLATER.with(|cell| {
            // Never re-entered in practice; a nested call (or a state a panic left mid-stream, which
            // `reset` fixes anyway) simply falls back to a fresh state.
            let mut slot = cell.try_borrow_mut().ok()?;
            let state = slot.get_or_insert_with(|| Compress::new(Compression::new(LEVEL), true));
            state.reset();
            deflate_with(state, parts, total)
        });
        if let Some(zlib) = reused {
            return zlib;
        }
    }
    deflate_with(&mut Compress::new(Compression::new(LEVEL), true), parts, total).unwrap_or_default()
}

/// Runs `parts` through `state` (fresh or just reset) to the end of the stream. `None` only if zlib
/// reports an error, which a valid state fed from memory does not.
fn deflate_with<B: AsRef<[u8]>>(state: &mut Compress, parts: &[B], total: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(total / 4 + 64);
    for part in parts {
        let mut input = part.as_ref();
        while !input.is_empty() {
            make_room(&mut out);
            let before = state.total_in();
            state.compress_vec(input, &mut out, FlushCompress::None).ok()?;
            let used = usize::try_from(state.total_in() - before).ok()?;
            input = &input[used..];
        }
    }
    loop {
        make_room(&mut out);
        if state.compress_vec(&[], &mut out, FlushCompress::Finish).ok()? == Status::StreamEnd {
            return Some(out);
        }
    }
}

/// `compress_vec` writes only into spare capacity: keep some.
fn make_room(out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 64 {
        out.reserve(out.capacity().max(256));
    }
}

/// Whether the client asked for an uncompressed answer: `Accept-Encoding` names `identity` and not
/// `deflate`. Without the header the SPT client's default, zlib, applies.
pub fn wants_identity(accept_encoding: Option<&str>) -> bool {
    let Some(value) = accept_encoding else {
        return false;
    };
    let mut identity = false;
    for coding in value.split(',') {
        let name = coding.split(';').next().unwrap_or("").trim();
        if name.eq_ignore_ascii_case("deflate") {
            return false;
        }
        identity |= name.eq_ignore_ascii_case("identity");
    }
    identity
}

/// A host-made error body: `{"err":"<sentence>", …extra}` (a string `err`, unlike a mod's envelope).
pub fn error_body(sentence: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    object.insert("err".into(), sentence.into());
    for (k, v) in extra {
        object.insert((*k).into(), (*v).into());
    }
    serde_json::Value::Object(object).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_round_trip_and_detection() {
        let body = br#"{"hello":"world"}"#;
        let z = deflate(body);
        assert!(looks_like_zlib(&z));
        assert!(!looks_like_zlib(body));
        assert_eq!(inflate_body(&z, 1 << 20).unwrap().unwrap(), body);
        assert_eq!(inflate_body(body, 1 << 20).unwrap(), None);
    }

    #[test]
    fn corrupt_and_truncated_streams_are_refused() {
        let z = deflate(&[b'x'; 10_000]);
        assert!(matches!(inflate_body(&z[..z.len() / 2], 1 << 20), Err(InflateError::Corrupt(_))));
        let mut bad = z.clone();
        bad[5] ^= 0xFF;
        bad[6] ^= 0xFF;
        assert!(inflate_body(&bad, 1 << 20).is_err());
        // A header alone ("x\x9c") and nothing after it.
        assert!(matches!(inflate_body(&[0x78, 0x9c], 1 << 20), Err(InflateError::Corrupt(_))));
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let bomb = deflate(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 100_000);
        assert_eq!(inflate_body(&bomb, 1 << 20), Err(InflateError::TooLarge { limit: 1 << 20 }));
        let exact = deflate(&vec![7u8; 1 << 20]);
        assert_eq!(inflate_body(&exact, 1 << 20).unwrap().unwrap().len(), 1 << 20);
    }

    #[test]
    fn bodies_over_the_direct_size_are_measured_then_inflated_exactly() {
        let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        let z = deflate(&big);
        assert_eq!(inflate_body(&z, 4 << 20).unwrap().unwrap(), big);
        assert!(matches!(inflate_body(&z, 2 << 20), Err(InflateError::TooLarge { .. })));
        assert!(matches!(inflate_body(&z[..z.len() - 100], 4 << 20), Err(InflateError::Corrupt(_))));
    }

    #[test]
    fn a_tiny_limit_does_not_panic() {
        let z = deflate(b"hello world");
        assert_eq!(inflate_body(&z, 100).unwrap().unwrap(), b"hello world");
        assert!(matches!(inflate_body(&z, 5), Err(InflateError::TooLarge { limit: 5 })));
    }

    /// What the host wrote before the state was reused: a fresh encoder per answer.
    fn fresh_deflate(parts: &[&[u8]]) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), Compression::new(LEVEL));
        for part in parts {
            encoder.write_all(part).unwrap();
        }
        encoder.finish().unwrap()
    }

    #[test]
    fn answers_in_a_row_through_the_reused_state_inflate_to_themselves() {
        let json = |n: u32| -> Vec<u8> {
            br#"{"err":0,"errmsg":null,"data":{"items":["#.iter().copied().chain((0..n).flat_map(|i| format!("{i},").into_bytes())).chain(*b"0]}}").collect()
        };
        // Over 4 KiB, so through the reused zlib state.
        let (first, second) = (json(2000), json(1500));
        let third: Vec<u8> = (0..50_000u32).map(|i| (i % 7) as u8).collect();
        let small = br#"{"err":0,"errmsg":null,"data":"a small answer, coded without zlib"}"#.to_vec();
        // Several in a row on one thread: each starts from the state the previous one left.
        for _ in 0..3 {
            for (body, parts) in [
                (&first, vec![&first[..100], &first[100..]]),
                (&second, vec![&second[..]]),
                (&third, vec![&third[..], &[][..]]),
            ] {
                let zlib = deflate_parts(&parts);
                assert_eq!(inflate_body(&zlib, 1 << 20).unwrap().as_ref(), Some(body));
                // Byte for byte what a fresh state writes: reuse changes nothing on the wire.
                assert_eq!(zlib, fresh_deflate(&parts));
            }
            // Small answers in between (no zlib state) are valid streams too, in parts or whole.
            let zlib = deflate_parts(&[&small[..10], &small[10..]]);
            assert!(looks_like_zlib(&zlib));
            assert_eq!(inflate_body(&zlib, 1 << 20).unwrap().as_ref(), Some(&small));
        }
        // Empty and large answers (a state of their own) are complete streams too.
        assert_eq!(inflate_body(&deflate_parts::<&[u8]>(&[]), 10).unwrap(), Some(Vec::new()));
        let large: Vec<u8> = (0..(REUSED_STATE_MAX as u32 + 10)).map(|i| (i % 251) as u8).collect();
        assert_eq!(inflate_body(&deflate(&large), 1 << 20).unwrap(), Some(large));
        // And the reused state still works after a large one.
        assert_eq!(deflate(&second), fresh_deflate(&[&second]));
    }

    #[test]
    fn identity_only_when_asked_without_deflate() {
        assert!(!wants_identity(None));
        assert!(wants_identity(Some("identity")));
        assert!(wants_identity(Some("gzip, Identity;q=1")));
        assert!(!wants_identity(Some("identity, deflate")));
        assert!(!wants_identity(Some("deflate")));
    }

    /// Found by the proptest below: the output buffer grew past the limit (amortized growth doubles
    /// it), and a stream that filled the growth was answered whole, over the limit; a limit of 0 let
    /// one byte through.
    #[test]
    fn inflating_never_answers_more_than_the_limit_when_the_buffer_grows_past_it() {
        for (len, limit) in [(7000, 6000), (5000, 4097), (1, 0), (9000, 8191)] {
            let zlib = deflate(&vec![b'a'; len]);
            assert_eq!(inflate_body(&zlib, limit), Err(InflateError::TooLarge { limit }), "{len} bytes, limit {limit}");
            assert_eq!(inflate_body(&zlib, len).map(|o| o.map(|v| v.len())), Ok(Some(len)));
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            /// Any bytes behind a zlib header (so inflating is tried) and any limit: no panic, and never
            /// more than the limit. The coverage-guided version is `tests/fuzz` `wire_inflate`.
            #[test]
            fn inflating_any_bytes_is_bounded(tail in prop::collection::vec(any::<u8>(), 0..512), limit in 0usize..4096) {
                let mut body = vec![0x78, 0x9c];
                body.extend_from_slice(&tail);
                if let Ok(Some(out)) = inflate_body(&body, limit) {
                    prop_assert!(out.len() <= limit);
                }
            }

            /// What the host deflates inflates back, within a limit at least its size, and is refused
            /// as too large under a smaller one.
            #[test]
            fn deflate_then_inflate_round_trips(payload in prop::collection::vec(any::<u8>(), 1..4096), spare in 0usize..64) {
                let zlib = deflate(&payload);
                prop_assert_eq!(inflate_body(&zlib, payload.len() + spare), Ok(Some(payload.clone())));
                prop_assert_eq!(inflate_body(&zlib, payload.len() - 1), Err(InflateError::TooLarge { limit: payload.len() - 1 }));
            }
        }
    }
}
