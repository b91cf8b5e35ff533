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

/// The index of `weights` that `unit` (a draw in `[0, 1)`) falls on, each chosen in proportion to
/// its weight; `None` when none is positive (a weight not finite or not positive is never chosen).
pub(crate) fn weighted(weights: &[f64], unit: f64) -> Option<usize> {
    let counts = |w: &f64| w.is_finite() && *w > 0.0;
    let total: f64 = weights.iter().filter(|w| counts(w)).sum();
    if total <= 0.0 {
        return None;
    }
    let mut at = unit * total;
    for (i, w) in weights.iter().enumerate().filter(|(_, w)| counts(w)) {
        if at < *w {
            return Some(i);
        }
        at -= w;
    }
    // Rounding can leave `at` just past the last weight.
    weights.iter().rposition(counts)
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

    #[test]
    fn weighted_picks_fall_on_positive_weights_in_proportion() {
        let weights = [0.0, 1.0, f64::NAN, 3.0];
        assert_eq!(weighted(&weights, 0.0), Some(1));
        assert_eq!(weighted(&weights, 0.24), Some(1));
        assert_eq!(weighted(&weights, 0.25), Some(3));
        assert_eq!(weighted(&weights, 0.999_999), Some(3));
        assert_eq!(weighted(&[0.0, -1.0], 0.5), None);
    }
}
