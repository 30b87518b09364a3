//! Base64 for `bytes` values (RFC 4648 section 4, standard alphabet).
//!
//! Written: standard alphabet (`+`, `/`) with `=` padding to a multiple of
//! four characters, exactly as `msgspec.json.encode(b"...")`.
//!
//! Accepted (exactly msgspec's set): padded standard-alphabet text whose
//! length is a multiple of four, with `=` only as the last one or two
//! characters. Unpadded text, the URL-safe alphabet (`-`, `_`), whitespace
//! and embedded padding are rejected. Non-zero unused bits in the last
//! character (e.g. `Zh==`) are ignored, as msgspec ignores them.
//!
//! Encoding takes 3 input bytes per step and writes them as two 12-bit
//! lookups; decoding takes 4 characters per step through one 256-entry
//! table and checks validity once per step.

use super::temporal::TextError;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Two output characters for every 12-bit value.
const ENC12: [[u8; 2]; 4096] = {
    let mut t = [[0u8; 2]; 4096];
    let mut i = 0;
    while i < 4096 {
        t[i] = [ALPHABET[i >> 6], ALPHABET[i & 63]];
        i += 1;
    }
    t
};

/// Character to 6-bit value; 0xFF for bytes outside the alphabet
/// (including `=`).
const DEC: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// Length of the encoding of `n` bytes.
#[inline]
pub const fn encoded_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// Number of bytes `s` decodes to if it is valid: exact for valid input,
/// an upper bound (never an underestimate) otherwise.
#[inline]
pub fn decoded_len_hint(s: &[u8]) -> usize {
    let pad = match s {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    (s.len() / 4 * 3).saturating_sub(pad)
}

/// Appends the padded standard base64 encoding of `data` to `out`.
pub fn encode(out: &mut Vec<u8>, data: &[u8]) {
    // Fallible: bytes too large for the memory left end the encode in a MemoryError (see
    // `errors::output_result`), not an abort.
    if data.len() >= crate::growth::LARGE
        && !crate::growth::output_room(out, encoded_len(data.len()))
    {
        return;
    }
    let start = out.len();
    out.resize(start + encoded_len(data.len()), 0);
    encode_to_slice(data, &mut out[start..]);
}

/// Writes the encoding of `data` into `dst[..encoded_len(data.len())]`.
///
/// # Panics
/// If `dst` is shorter than [`encoded_len`]`(data.len())`.
pub fn encode_to_slice(data: &[u8], dst: &mut [u8]) {
    let chunks = data.chunks_exact(3);
    let tail = chunks.remainder();
    let full = data.len() / 3 * 4;
    for (src, dst) in chunks.zip(dst[..full].chunks_exact_mut(4)) {
        let n = (usize::from(src[0]) << 16) | (usize::from(src[1]) << 8) | usize::from(src[2]);
        let [a, b] = ENC12[n >> 12];
        let [c, d] = ENC12[n & 0xFFF];
        dst.copy_from_slice(&[a, b, c, d]);
    }
    match *tail {
        [x] => {
            let [a, b] = ENC12[usize::from(x) << 4];
            dst[full..full + 4].copy_from_slice(&[a, b, b'=', b'=']);
        }
        [x, y] => {
            let n = (usize::from(x) << 16) | (usize::from(y) << 8);
            let [a, b] = ENC12[n >> 12];
            let [c, _] = ENC12[n & 0xFFF];
            dst[full..full + 4].copy_from_slice(&[a, b, c, b'=']);
        }
        _ => {}
    }
}

/// Decodes `s` and appends the bytes to `out`. On error `out` is left as
/// it was.
pub fn decode(s: &[u8], out: &mut Vec<u8>) -> Result<(), TextError> {
    let start = out.len();
    out.resize(start + decoded_len_hint(s), 0);
    match decode_to_slice(s, &mut out[start..]) {
        Ok(n) => {
            out.truncate(start + n);
            Ok(())
        }
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Decodes `s` into the front of `dst`, returning the number of bytes
/// written. `dst` must hold at least [`decoded_len_hint`]`(s)` bytes; a
/// shorter `dst` is reported as [`TextError::InvalidBase64`].
pub fn decode_to_slice(s: &[u8], dst: &mut [u8]) -> Result<usize, TextError> {
    if s.is_empty() {
        return Ok(0);
    }
    if !s.len().is_multiple_of(4) {
        return Err(TextError::InvalidBase64);
    }
    let need = decoded_len_hint(s);
    if dst.len() < need {
        return Err(TextError::InvalidBase64);
    }
    let (body, last) = s.split_at(s.len() - 4);
    let mut bad = 0u8;
    for (src, out) in body.chunks_exact(4).zip(dst.chunks_exact_mut(3)) {
        let (a, b, c, d) = (
            DEC[usize::from(src[0])],
            DEC[usize::from(src[1])],
            DEC[usize::from(src[2])],
            DEC[usize::from(src[3])],
        );
        bad |= a | b | c | d;
        let n = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(d);
        out.copy_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    // Every valid value is < 64, so any 0xFF leaves bit 7 set.
    if bad & 0x80 != 0 {
        return Err(TextError::InvalidBase64);
    }
    let at = body.len() / 4 * 3;
    let a = DEC[usize::from(last[0])];
    let b = DEC[usize::from(last[1])];
    let (c, d, kept) = match (last[2], last[3]) {
        (b'=', b'=') => (0, 0, 1),
        (c, b'=') => (DEC[usize::from(c)], 0, 2),
        (c, d) => (DEC[usize::from(c)], DEC[usize::from(d)], 3),
    };
    if (a | b | c | d) & 0x80 != 0 {
        return Err(TextError::InvalidBase64);
    }
    let n = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(d);
    let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
    dst[at..at + kept].copy_from_slice(&bytes[..kept]);
    Ok(at + kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(data: &[u8]) -> String {
        let mut out = Vec::new();
        encode(&mut out, data);
        String::from_utf8(out).unwrap()
    }

    fn dec(s: &str) -> Result<Vec<u8>, TextError> {
        let mut out = Vec::new();
        decode(s.as_bytes(), &mut out).map(|()| out)
    }

    #[test]
    fn encodes_like_msgspec() {
        // msgspec.json.encode(<bytes>) output, quotes removed.
        let cases: &[(&[u8], &str)] = &[
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (b"\xff\xfe\xfd\xfb", "//79+w=="),
            (b"\xfb\xff", "+/8="),
        ];
        for (data, want) in cases {
            assert_eq!(enc(data), *want);
            assert_eq!(encoded_len(data.len()), want.len());
        }
    }

    #[test]
    fn decodes_what_msgspec_decodes() {
        // Accepted by msgspec.json.decode(..., type=bytes) with these values.
        let cases: &[(&str, &[u8])] = &[
            ("", b""),
            ("Zg==", b"f"),
            ("Zm8=", b"fo"),
            ("Zm9v", b"foo"),
            ("Zm9vYg==", b"foob"),
            ("Zm9vYmFy", b"foobar"),
            ("//79+w==", b"\xff\xfe\xfd\xfb"),
            ("+/8=", b"\xfb\xff"),
            ("Zh==", b"f"), // non-zero unused bits are ignored
            ("Zm9=", b"fo"),
        ];
        for (s, want) in cases {
            assert_eq!(dec(s).as_deref(), Ok(*want), "{s}");
            assert_eq!(decoded_len_hint(s.as_bytes()), want.len(), "{s}");
        }
    }

    #[test]
    fn rejects_what_msgspec_rejects() {
        // Each rejected by msgspec with "Invalid base64 encoded string".
        for s in [
            "Zg=",
            "Zg",
            "Zm8",
            "__79-w==",
            "//79+w",
            "Zg==Zg==",
            "Z===",
            "Zm8 =",
            "Zm 8=",
            "====",
            "=",
            "Zm9v\n",
            "Zm9vY",
            "Zm9vYm",
            "Zm9vYmE",
            "Zm9vYmF",
            // further rejections of the same kinds
            "Zm9vYm=y",
            "=m9v",
            "Zm9v====",
            "Zg==\0",
            "Zm9v\u{e9}A==",
            "-_8=",
        ] {
            assert_eq!(dec(s), Err(TextError::InvalidBase64), "{s:?}");
        }
    }

    #[test]
    fn failed_decode_leaves_output_alone() {
        let mut out = b"keep".to_vec();
        assert!(decode(b"Zm9vYmFy!!!!", &mut out).is_err());
        assert_eq!(out, b"keep");
        assert!(decode(b"Zm9v", &mut out).is_ok());
        assert_eq!(out, b"keepfoo");
        let mut small = [0u8; 2];
        assert_eq!(
            decode_to_slice(b"Zm9v", &mut small),
            Err(TextError::InvalidBase64)
        );
    }

    #[test]
    fn every_byte_in_every_position_round_trips() {
        for len in 0..=9usize {
            for b in 0..=255u8 {
                for pos in 0..len {
                    let mut data = vec![0x5Au8; len];
                    data[pos] = b;
                    let s = enc(&data);
                    assert_eq!(dec(&s).unwrap(), data);
                }
            }
        }
    }

    #[test]
    fn long_inputs_round_trip() {
        let mut x = 0x1234_5678u32;
        let data: Vec<u8> = (0..10_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        for len in [0, 1, 2, 3, 4, 100, 1000, 9_999, 10_000] {
            let s = enc(&data[..len]);
            assert_eq!(s.len(), encoded_len(len));
            assert_eq!(dec(&s).unwrap(), &data[..len]);
        }
    }

    #[test]
    fn rejects_every_invalid_byte_in_every_position() {
        let valid = *b"Zm9vYmFy";
        for pos in 0..valid.len() {
            for c in 0..=255u8 {
                if DEC[usize::from(c)] != 0xFF {
                    continue;
                }
                let mut s = valid;
                s[pos] = c;
                let mut out = Vec::new();
                let ok = decode(&s, &mut out).is_ok();
                // '=' is fine only as the final padding character ("Zm9vYmF=").
                let padding_ok = c == b'=' && pos == 7;
                assert_eq!(ok, padding_ok, "{pos} {c}");
            }
        }
    }
}
