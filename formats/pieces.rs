//! Short byte strings appended in fixed-size pieces: 8-byte words (the last one overlapping the
//! one before) or two 4-byte halves, each a plain load and store, where `extend_from_slice` of
//! a length known only at run time calls `memcpy` (about twenty instructions for a few bytes,
//! for every str of an encode). Each piece can be checked on its way (JSON's escapes).

/// A word of 8 bytes from `at` (little-endian); the caller keeps `at + 8` within `bytes`.
#[inline(always)]
pub fn word(bytes: &[u8], at: usize) -> u64 {
    let mut eight = [0u8; 8];
    eight.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(eight)
}

/// 4 bytes from `at` (little-endian); the caller keeps `at + 4` within `bytes`.
#[inline(always)]
fn half(bytes: &[u8], at: usize) -> u32 {
    let mut four = [0u8; 4];
    four.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(four)
}

/// Appends `bytes` to `out` piece by piece, unless `refuse` refuses a piece: then false, with
/// part of `bytes` appended (the caller cuts `out` back). `refuse` sees every byte of `bytes`
/// in some piece, as a little-endian word; a piece of fewer than 8 bytes is padded with spaces.
/// For strings of a few dozen bytes (a long one takes `extend_from_slice`).
#[inline(always)]
pub fn append_checked(out: &mut Vec<u8>, bytes: &[u8], refuse: impl Fn(u64) -> bool) -> bool {
    let len = bytes.len();
    let start = out.len();
    if len >= 8 {
        let mut at = 0;
        while at + 8 < len {
            let piece = word(bytes, at);
            if refuse(piece) {
                return false;
            }
            out.extend_from_slice(&piece.to_le_bytes());
            at += 8;
        }
        // The last 8 bytes, over the end of the piece before.
        let last = word(bytes, len - 8);
        if refuse(last) {
            return false;
        }
        out.truncate(start + len - 8);
        out.extend_from_slice(&last.to_le_bytes());
    } else if len >= 4 {
        let (first, last) = (half(bytes, 0), half(bytes, len - 4));
        if refuse(u64::from(first) | u64::from(last) << 32) {
            return false;
        }
        out.extend_from_slice(&first.to_le_bytes());
        out.truncate(start + len - 4);
        out.extend_from_slice(&last.to_le_bytes());
    } else {
        let mut padded = [b' '; 8];
        padded[..len].copy_from_slice(bytes);
        if refuse(u64::from_le_bytes(padded)) {
            return false;
        }
        out.extend_from_slice(&padded[..4]);
        out.truncate(start + len);
    }
    true
}

/// Appends `bytes` to `out` piece by piece (see [`append_checked`]).
#[inline(always)]
pub fn append(out: &mut Vec<u8>, bytes: &[u8]) {
    append_checked(out, bytes, |_| false);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_every_length_after_any_prefix() {
        let text: Vec<u8> = (0..80u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=text.len() {
            for prefix in [&b""[..], b"x", b"prefix!!"] {
                let mut out = prefix.to_vec();
                append(&mut out, &text[..len]);
                assert_eq!(&out[..prefix.len()], prefix);
                assert_eq!(&out[prefix.len()..], &text[..len]);
            }
        }
    }

    #[test]
    fn every_byte_is_seen_by_the_check() {
        for len in 0..40usize {
            for at in 0..len {
                let mut text = vec![b'a'; len];
                text[at] = b'"';
                let mut out = Vec::new();
                let quote = |piece: u64| piece.to_le_bytes().contains(&b'"');
                assert!(!append_checked(&mut out, &text, quote), "{len} {at}");
            }
            let mut out = Vec::new();
            let text = vec![b'a'; len];
            assert!(append_checked(&mut out, &text, |piece| piece
                .to_le_bytes()
                .contains(&b'"')));
            assert_eq!(out, text);
        }
    }
}
