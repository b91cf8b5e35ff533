//! The wire's bounded inflate on any bytes: it never panics, never answers more than its limit, and
//! what it answers is what flate2's own decoder makes of the same stream (when that decoder reads it).

#![no_main]

use libfuzzer_sys::fuzz_target;
use modhost_wire::{InflateError, inflate_body};
use std::io::Read;

fuzz_target!(|input: (u16, &[u8])| {
    let (limit, body) = (usize::from(input.0), input.1);
    match inflate_body(body, limit) {
        Ok(Some(inflated)) => {
            assert!(inflated.len() <= limit, "{} bytes over a limit of {limit}", inflated.len());
            let mut reference = Vec::new();
            let decoder = flate2::read::ZlibDecoder::new(body).take(limit as u64 + 1).read_to_end(&mut reference);
            if decoder.is_ok() {
                assert_eq!(inflated, reference);
            }
        }
        Ok(None) => assert!(!modhost_wire::looks_like_zlib(body)),
        Err(InflateError::TooLarge { .. }) | Err(_) => {}
    }
});
