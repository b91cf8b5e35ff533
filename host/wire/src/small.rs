//! A zlib stream for small answers, made without a zlib state: greedy LZ77 over a 4096-entry hash
//! table, coded with deflate's fixed Huffman codes in one final block (RFC 1951 §3.2.6), between the
//! zlib header and the Adler-32 of the input (RFC 1950).
//!
//! Why not zlib: a zlib-rs state has a 65 536-entry hash head that `reset` must clear (128 KiB) and a
//! fresh state allocates about 270 KB, so even a reused state costs about 5 µs before the first byte
//! of a 40-byte answer, several times the compression itself. Here the table is 8 KiB on the stack.
//! Fixed codes and greedy matching cost some ratio against zlib's level 6 (a 422-byte envelope: 119
//! bytes against 111; 1016 bytes: 199 against 158; 4013 bytes: 619 against 404), which matters nothing
//! on a player's own loopback at these sizes, while the time does: a 4 KB answer (a Move's, with its
//! profile changes) costs 9.8 µs here against 18.3 µs through a reused zlib state. Past 4 KiB the
//! time saved shrinks (8 KB: 19 against 24 µs) and the ratio lost grows, so larger answers still go
//! through zlib (`deflate-bench` prints both).

/// The largest input coded here: every match distance then fits deflate's 32 KiB window, and
/// positions fit the table's `u16`s.
pub(crate) const MAX_INPUT: usize = 4 << 10;

const HASH_BITS: u32 = 12;
const MIN_MATCH: usize = 3;
const MAX_MATCH: usize = 258;

const LENGTH_BASE: [u16; 29] =
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA: [u8; 29] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
    8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] =
    [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/// Bits written least significant first, as deflate packs them.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits {
    fn put(&mut self, value: u32, len: u32) {
        self.acc |= u64::from(value) << self.count;
        self.count += len;
        while self.count >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.count -= 8;
        }
    }

    /// A Huffman code, which deflate writes most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        self.put(code.reverse_bits() >> (32 - len), len);
    }

    /// A literal/length symbol (0-285) in the fixed code.
    fn symbol(&mut self, symbol: u32) {
        match symbol {
            0..=143 => self.code(0x30 + symbol, 8),
            144..=255 => self.code(0x190 + symbol - 144, 9),
            256..=279 => self.code(symbol - 256, 7),
            _ => self.code(0xC0 + symbol - 280, 8),
        }
    }

    fn matched(&mut self, length: usize, distance: usize) {
        let l = LENGTH_BASE.iter().rposition(|&b| usize::from(b) <= length).unwrap_or(0);
        self.symbol(257 + l as u32);
        self.put((length - usize::from(LENGTH_BASE[l])) as u32, u32::from(LENGTH_EXTRA[l]));
        let d = DIST_BASE.iter().rposition(|&b| usize::from(b) <= distance).unwrap_or(0);
        self.code(d as u32, 5);
        self.put((distance - usize::from(DIST_BASE[d])) as u32, u32::from(DIST_EXTRA[d]));
    }

    fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

fn hash(bytes: &[u8]) -> usize {
    let v = u32::from(bytes[0]) << 16 | u32::from(bytes[1]) << 8 | u32::from(bytes[2]);
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before `b` could overflow.
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    b << 16 | a
}

/// The zlib stream of `data` (at most [`MAX_INPUT`] bytes).
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    debug_assert!(data.len() <= MAX_INPUT);
    let mut bits = Bits { out: Vec::with_capacity(data.len() / 2 + 16), acc: 0, count: 0 };
    // zlib header: deflate with a 32 KiB window, default level; the check bits make it a multiple of 31.
    bits.out.extend_from_slice(&[0x78, 0x9c]);
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE 01: fixed Huffman codes
    // The last position (plus one; 0 = none) where each hash of three bytes was seen.
    let mut head = [0u16; 1 << HASH_BITS];
    let n = data.len();
    let mut i = 0;
    while i + MIN_MATCH <= n {
        let h = hash(&data[i..]);
        let candidate = usize::from(head[h]);
        head[h] = (i + 1) as u16;
        if candidate > 0 && data[candidate - 1..candidate - 1 + MIN_MATCH] == data[i..i + MIN_MATCH] {
            let from = candidate - 1;
            let mut length = MIN_MATCH;
            while length < MAX_MATCH && i + length < n && data[from + length] == data[i + length] {
                length += 1;
            }
            bits.matched(length, i - from);
            // Remember the positions inside the match too: later repeats find them.
            for j in i + 1..(i + length).min(n + 1 - MIN_MATCH) {
                head[hash(&data[j..])] = (j + 1) as u16;
            }
            i += length;
        } else {
            bits.symbol(u32::from(data[i]));
            i += 1;
        }
    }
    for &byte in &data[i..] {
        bits.symbol(u32::from(byte));
    }
    bits.symbol(256); // end of block
    let mut out = bits.finish();
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::ZlibDecoder;
    use std::io::Read;

    fn inflate(zlib: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        ZlibDecoder::new(zlib).read_to_end(&mut out).expect("a valid zlib stream");
        out
    }

    #[test]
    fn edge_inputs_inflate_to_themselves() {
        let long_run = vec![b'a'; MAX_INPUT];
        let cases: [&[u8]; 7] =
            [b"", b"a", b"ab", b"abc", b"abcabcabcabc", &long_run, br#"{"err":0,"errmsg":null,"data":"hello"}"#];
        for data in cases {
            assert_eq!(inflate(&deflate(data)), data, "{} bytes", data.len());
        }
        // Every byte value, every length and distance code: a run of each length 3..=258 at growing distances.
        let mut all: Vec<u8> = (0..=255u8).collect();
        for len in 3..=258usize {
            let start = all.len().saturating_sub(len + (len * 7) % 300);
            let chunk: Vec<u8> = all[start..].iter().take(len).copied().collect();
            all.extend_from_slice(&chunk);
            if all.len() > MAX_INPUT {
                all.truncate(MAX_INPUT);
                break;
            }
        }
        assert_eq!(inflate(&deflate(&all)), all);
        assert!(deflate(&long_run).len() < 100, "a run compresses");
    }

    #[test]
    fn adler32_matches_zlibs() {
        // zlib's own check value of "Wikipedia" (RFC 1950's algorithm), and of nothing.
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        let big = vec![0xFFu8; MAX_INPUT];
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &big {
            a = (a + u64::from(x)) % 65_521;
            b = (b + a) % 65_521;
        }
        assert_eq!(adler32(&big), (b << 16 | a) as u32);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            /// Any bytes, and bytes from a small alphabet (many matches), inflate back.
            #[test]
            fn round_trips(raw in prop::collection::vec(any::<u8>(), 0..MAX_INPUT), small in prop::collection::vec(0u8..4, 0..MAX_INPUT)) {
                prop_assert_eq!(inflate(&deflate(&raw)), raw);
                prop_assert_eq!(inflate(&deflate(&small)), small);
            }
        }
    }
}
