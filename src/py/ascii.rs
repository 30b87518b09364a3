//! Short texts copied in fixed-size pieces straight between a str's buffer and an output
//! buffer: the strs of untyped data are mostly a few to a few dozen bytes, where a `memcpy`
//! call and `Vec`'s checks before every byte written cost more than the copy. A piece is a
//! 16-byte vector (SSE2, which every x86-64 has), or two overlapping 8- or 4-byte words, each
//! read within the text and written within room reserved first; the last piece of a text
//! overlaps the one before rather than reading past the end. JSON's escapes are looked for in
//! the same pieces on their way.

/// The longest text these copies take; longer ones take the general paths.
pub const SHORT: usize = 64;

#[cfg(target_arch = "x86_64")]
mod piece {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_set_epi64x, _mm_storeu_si128,
    };

    /// 16 bytes.
    pub type Piece = __m128i;

    /// 16 bytes at `at`.
    ///
    /// # Safety
    /// `at..at + 16` is readable.
    #[inline(always)]
    pub unsafe fn load(at: *const u8) -> Piece {
        // SAFETY: the caller's readable 16 bytes; unaligned loads are allowed.
        unsafe { _mm_loadu_si128(at.cast()) }
    }

    /// Stores 16 bytes at `at`.
    ///
    /// # Safety
    /// `at..at + 16` is writable.
    #[inline(always)]
    pub unsafe fn store(at: *mut u8, piece: Piece) {
        // SAFETY: the caller's writable 16 bytes; unaligned stores are allowed.
        unsafe { _mm_storeu_si128(at.cast(), piece) }
    }

    /// Two words as one piece, `low` first.
    #[inline(always)]
    pub fn words(low: u64, high: u64) -> Piece {
        // SAFETY: SSE2, part of x86-64.
        unsafe { _mm_set_epi64x(high as i64, low as i64) }
    }

    /// Whether a byte of `piece` is one JSON escapes: `"`, `\` or a control character.
    #[inline(always)]
    pub fn escapes(piece: Piece) -> bool {
        // SAFETY: SSE2, part of x86-64; a byte is below 0x20 exactly when its unsigned maximum
        // with 0x1f is 0x1f.
        unsafe {
            let quote = _mm_cmpeq_epi8(piece, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(piece, _mm_set1_epi8(b'\\' as i8));
            let low = _mm_set1_epi8(0x1f);
            let control = _mm_cmpeq_epi8(_mm_max_epu8(piece, low), low);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) != 0
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod piece {
    /// 16 bytes, as two words.
    pub type Piece = [u64; 2];

    /// # Safety
    /// `at..at + 16` is readable.
    #[inline(always)]
    pub unsafe fn load(at: *const u8) -> Piece {
        // SAFETY: the caller's readable 16 bytes, read unaligned.
        unsafe {
            [
                at.cast::<u64>().read_unaligned(),
                at.add(8).cast::<u64>().read_unaligned(),
            ]
        }
    }

    /// # Safety
    /// `at..at + 16` is writable.
    #[inline(always)]
    pub unsafe fn store(at: *mut u8, piece: Piece) {
        // SAFETY: the caller's writable 16 bytes, written unaligned.
        unsafe {
            at.cast::<u64>().write_unaligned(piece[0]);
            at.add(8).cast::<u64>().write_unaligned(piece[1]);
        }
    }

    #[inline(always)]
    pub fn words(low: u64, high: u64) -> Piece {
        [low, high]
    }

    /// Whether a byte of `piece` is one JSON escapes (the "has a byte less than n" and "has a
    /// zero byte" word tricks, exact about whether one exists), on native-endian words.
    #[inline(always)]
    pub fn escapes(piece: Piece) -> bool {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        piece.iter().any(|&word| {
            let control = word.wrapping_sub(ONES * 0x20) & !word;
            let quote = word ^ (ONES * u64::from(b'"'));
            let quote = quote.wrapping_sub(ONES) & !quote;
            let backslash = word ^ (ONES * u64::from(b'\\'));
            let backslash = backslash.wrapping_sub(ONES) & !backslash;
            (control | quote | backslash) & HIGH != 0
        })
    }
}

use piece::{escapes, load, store, words, Piece};

/// Spaces: what fills a piece of a text shorter than 8 bytes (no JSON escape).
const SPACES: u64 = 0x2020_2020_2020_2020;

/// Copies `src` (at most [`SHORT`] bytes) to `dst` in pieces, when `check` finds nothing in
/// them: true; false, with part of it perhaps written, otherwise.
///
/// # Safety
/// `dst..dst + src.len() + 8` is writable (a text shorter than 8 bytes is written as a whole
/// word) and does not overlap `src`.
#[inline(always)]
unsafe fn copy(dst: *mut u8, src: &[u8], check: impl Fn(Piece) -> bool) -> bool {
    let len = src.len();
    let at = src.as_ptr();
    // SAFETY: every read is within `src` (the last piece of each size ends at its end) and
    // every write within `dst..dst + max(len, 8)`, the caller's.
    unsafe {
        if len >= 16 {
            let mut offset = 0;
            while offset + 16 < len {
                let piece = load(at.add(offset));
                if check(piece) {
                    return false;
                }
                store(dst.add(offset), piece);
                offset += 16;
            }
            let piece = load(at.add(len - 16));
            if check(piece) {
                return false;
            }
            store(dst.add(len - 16), piece);
        } else if len >= 8 {
            let first = at.cast::<u64>().read_unaligned();
            let last = at.add(len - 8).cast::<u64>().read_unaligned();
            if check(words(first, last)) {
                return false;
            }
            dst.cast::<u64>().write_unaligned(first);
            dst.add(len - 8).cast::<u64>().write_unaligned(last);
        } else {
            // Up to 7 bytes: gathered into one word in a register (the rest spaces), written
            // whole. Built by shifts, not byte stores into a stack word read back whole: that
            // read cannot be forwarded from the narrower stores before it and stalls the core
            // for a dozen cycles per short key (`perf` put a fifth of `any_dict` there).
            let text = if len >= 4 {
                let first = u64::from(u32::from_le_bytes(at.cast::<[u8; 4]>().read_unaligned()));
                let last = u64::from(u32::from_le_bytes(
                    at.add(len - 4).cast::<[u8; 4]>().read_unaligned(),
                ));
                // The two overlap on bytes that are the same in both.
                first | last << (8 * (len - 4))
            } else if len > 0 {
                // Bytes 0, len / 2 and len - 1: every byte of a text of 1 to 3.
                u64::from(*at)
                    | u64::from(*at.add(len / 2)) << (8 * (len / 2))
                    | u64::from(*at.add(len - 1)) << (8 * (len - 1))
            } else {
                0
            };
            let word = text | SPACES & (u64::MAX << (8 * len));
            if check(words(word, SPACES)) {
                return false;
            }
            dst.cast::<[u8; 8]>().write_unaligned(word.to_le_bytes());
        }
    }
    true
}

/// Appends `text` (at most [`SHORT`] bytes) to `out` as a JSON string, quoted, when none of
/// its bytes needs escaping: true; false, with nothing appended, otherwise.
#[inline(always)]
pub fn json_string(out: &mut Vec<u8>, text: &[u8]) -> bool {
    debug_assert!(text.len() <= SHORT);
    let len = text.len();
    // The quotes, and the whole word a text shorter than 8 bytes is written as.
    out.reserve(len + 10);
    let start = out.len();
    // SAFETY: `reserve` made room for `len + 10` bytes from `start`: the opening quote, the
    // copy (at most `len + 8` bytes written from `start + 1`) and the closing quote; the
    // length is set only once all `len + 2` bytes are written.
    unsafe {
        let dst = out.as_mut_ptr().add(start);
        if !copy(dst.add(1), text, escapes) {
            return false;
        }
        *dst = b'"';
        *dst.add(len + 1) = b'"';
        out.set_len(start + len + 2);
    }
    true
}

/// Appends `text` (at most [`SHORT`] bytes) to `out`.
#[inline(always)]
pub fn append(out: &mut Vec<u8>, text: &[u8]) {
    debug_assert!(text.len() <= SHORT);
    let len = text.len();
    out.reserve(len + 8);
    let start = out.len();
    // SAFETY: room for `len + 8` bytes from `start` (the copy writes at most that much); the
    // length covers only the `len` bytes copied.
    unsafe {
        copy(out.as_mut_ptr().add(start), text, |_| false);
        out.set_len(start + len);
    }
}

/// Copies `text` (at most [`SHORT`] bytes) into a fresh str's buffer, writing nothing past
/// its length.
///
/// # Safety
/// `dst..dst + text.len()` is writable and does not overlap `text`.
#[inline(always)]
pub unsafe fn fill(dst: *mut u8, text: &[u8]) {
    debug_assert!(text.len() <= SHORT);
    let len = text.len();
    let at = text.as_ptr();
    // SAFETY: every read is within `text` and every write within `dst..dst + len` (the last
    // piece of each size ends at the end).
    unsafe {
        if len >= 16 {
            let mut offset = 0;
            while offset + 16 < len {
                store(dst.add(offset), load(at.add(offset)));
                offset += 16;
            }
            store(dst.add(len - 16), load(at.add(len - 16)));
        } else if len >= 8 {
            let first = at.cast::<u64>().read_unaligned();
            let last = at.add(len - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(first);
            dst.add(len - 8).cast::<u64>().write_unaligned(last);
        } else if len >= 4 {
            let first = at.cast::<u32>().read_unaligned();
            let last = at.add(len - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(first);
            dst.add(len - 4).cast::<u32>().write_unaligned(last);
        } else {
            for index in 0..len {
                *dst.add(index) = *at.add(index);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_after_any_prefix() {
        let text: Vec<u8> = (0..SHORT as u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=SHORT {
            for prefix in [&b""[..], b"x", b"prefix!!"] {
                let mut out = prefix.to_vec();
                append(&mut out, &text[..len]);
                assert_eq!(out, [prefix, &text[..len]].concat());
                let mut out = prefix.to_vec();
                assert!(json_string(&mut out, &text[..len]));
                assert_eq!(out, [prefix, b"\"", &text[..len], b"\""].concat());
            }
        }
    }

    #[test]
    fn fill_writes_exactly_the_text() {
        let text: Vec<u8> = (0..SHORT as u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=SHORT {
            let mut buffer = vec![0xeeu8; SHORT + 16];
            // SAFETY: the buffer has room for the text, and does not overlap it.
            unsafe { fill(buffer.as_mut_ptr().add(8), &text[..len]) };
            assert!(buffer[..8].iter().all(|&b| b == 0xee));
            assert_eq!(&buffer[8..8 + len], &text[..len]);
            assert!(buffer[8 + len..].iter().all(|&b| b == 0xee), "{len}");
        }
    }

    #[test]
    fn every_escape_at_every_position_is_found() {
        for len in 1..=SHORT {
            for at in 0..len {
                for byte in (0u8..0x20).chain([b'"', b'\\']) {
                    let mut text = vec![b'a'; len];
                    text[at] = byte;
                    let mut out = b"x".to_vec();
                    assert!(!json_string(&mut out, &text), "{byte:#x} at {at} of {len}");
                    assert_eq!(out, b"x");
                }
                for byte in [b' ', b'!', b'#', b'/', 0x7f, 0x80, 0xff] {
                    let mut text = vec![b'a'; len];
                    text[at] = byte;
                    let mut out = Vec::new();
                    assert!(json_string(&mut out, &text), "{byte:#x} at {at} of {len}");
                }
            }
        }
    }
}
