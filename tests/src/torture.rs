//! What the store's kill-torture test writes and checks: self-describing values, each saying how long
//! it is and what its checksum is, so a torn value (a mix of two writes, or a cut one) is always
//! detected; and document patches whose every prefix has one known result ([`doc_after`]).

use serde_json::{Value, json};

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

/// The `seq` a whole value says it is.
pub fn seq_of(bytes: &[u8]) -> Option<u64> {
    let newline = bytes.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&bytes[..newline]).ok()?;
    header.split(' ').find_map(|f| f.strip_prefix("seq=")?.parse().ok())
}

/// How many members the torture document's `items` cycles through.
const SLOTS: u64 = 50;

/// Patch `n` of the torture document (applied at its root): `n`, one of the `items` slots, and a
/// 2 KB pad that depends on `n`.
pub fn doc_patch(n: u64) -> String {
    json!({ "n": n, "items": { (n % SLOTS).to_string(): n }, "pad": pad(n) }).to_string()
}

/// The torture document after patches 1 to `n` (`None` before the first).
pub fn doc_after(n: u64) -> Option<Value> {
    if n == 0 {
        return None;
    }
    let items: serde_json::Map<String, Value> = (n.saturating_sub(SLOTS - 1)..=n)
        .filter(|seq| *seq >= 1)
        .map(|seq| ((seq % SLOTS).to_string(), json!(seq)))
        .collect();
    Some(json!({ "n": n, "items": items, "pad": pad(n) }))
}

fn pad(n: u64) -> String {
    (0..2048).map(|i| (b'a' + ((n as usize + i * 7) % 26) as u8) as char).collect()
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
        assert_eq!(seq_of(&b), Some(5));
    }

    #[test]
    fn the_document_model_is_the_patches_applied() {
        // Applying patches 1..=n by hand gives doc_after(n), for n past a full cycle of slots.
        let mut doc = json!({});
        for n in 1..=(SLOTS * 2 + 3) {
            let patch: Value = serde_json::from_str(&doc_patch(n)).unwrap();
            doc["n"] = patch["n"].clone();
            doc["pad"] = patch["pad"].clone();
            for (k, v) in patch["items"].as_object().unwrap() {
                doc["items"][k] = v.clone();
            }
            assert_eq!(Some(&doc), doc_after(n).as_ref(), "n = {n}");
        }
        assert_ne!(doc_after(7), doc_after(8));
    }
}
