//! Self-describing values for the store's kill-torture test: each says how long it is and what its
//! checksum is, so a torn value (a mix of two writes, or a cut one) is always detected.

/// The value of write `seq`: 4 KB for even, 84 KB for odd writes; a header line, then the body.
pub fn value(seq: u64) -> Vec<u8> {
    let len = if seq.is_multiple_of(2) { 4 * 1024 } else { 84 * 1024 };
    let body: Vec<u8> = (0..len).map(|i| b'a' + ((seq as usize + i * 7) % 26) as u8).collect();
    let mut out = format!("MODHOST len={len} seq={seq} sum={}\n", checksum(&body)).into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Whether `bytes` is one whole value as [`value`] wrote it.
pub fn is_whole(bytes: &[u8]) -> bool {
    let Some(newline) = bytes.iter().position(|&b| b == b'\n') else { return false };
    let header = String::from_utf8_lossy(&bytes[..newline]).into_owned();
    let field = |name: &str| -> Option<u64> {
        header.split(' ').find_map(|f| f.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
    };
    let body = &bytes[newline + 1..];
    match (field("len"), field("sum")) {
        (Some(len), Some(sum)) => body.len() as u64 == len && checksum(body) == sum,
        _ => false,
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_values_pass_and_torn_ones_fail() {
        let a = value(4);
        let b = value(5);
        assert!(is_whole(&a) && is_whole(&b));
        assert!(!is_whole(&a[..a.len() - 1]));
        let mut mixed = b.clone();
        mixed[..a.len()].copy_from_slice(&a);
        assert!(!is_whole(&mixed));
        assert!(!is_whole(b""));
    }
}
