//! Ids: the 24-hex-digit ids the client makes for items, profiles and sessions, fresh ones, and the
//! game's random draws (both from WASI's randomness).
//!
//! A leaf: every phase names things by id, so nothing here may import another game module.

/// A fresh 24-hex-digit id. Randomness comes from WASI (`RandomState` is seeded from it).
pub(crate) fn new_id() -> String {
    use std::hash::BuildHasher;
    let state = std::collections::hash_map::RandomState::new();
    let a = state.hash_one(1u8);
    let b = state.hash_one(2u8);
    format!("{a:016x}{:08x}", b >> 32)
}

/// A random number below `n` (`n` > 0), from WASI's randomness.
pub(crate) fn below(n: u64) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(n) % n
}

/// A random number in `[0, 1)`, from WASI's randomness (53 bits, as many as an `f64` holds).
pub(crate) fn unit() -> f64 {
    below(1 << 53) as f64 / (1u64 << 53) as f64
}

/// Is `id` 24 hex digits, the shape of every id the client makes?
pub(crate) fn is_id(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_have_the_clients_shape_and_differ() {
        let (a, b) = (new_id(), new_id());
        assert!(is_id(&a) && is_id(&b), "{a} {b}");
        assert_ne!(a, b);
        assert!(!is_id("0123") && !is_id("zz3456789abcdef012345678"));
    }
}
