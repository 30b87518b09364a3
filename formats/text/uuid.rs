//! UUID text forms.
//!
//! Written: canonical lowercase `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`
//! (what `msgspec.json.encode` and `str(uuid.UUID)` write).
//!
//! Accepted (exactly msgspec's set): that 36-character hyphenated form or
//! the 32-character form without hyphens, hex digits in either case.
//! Braces, `urn:uuid:` prefixes, misplaced hyphens and whitespace are
//! rejected. The value is the UUID's 128 bits, big-endian as written
//! (`uuid.UUID(int=v)` in Python).

use super::temporal::TextError;

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// ASCII byte to hex value, 0xFF for non-hex bytes.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Folds the hex digits of `digits` into `acc` (64 bits: a UUID's half), OR-ing each digit's
/// table value into `bad` (any non-hex byte leaves bit 7 set there).
#[inline(always)]
fn fold_hex(mut acc: u64, bad: &mut u8, digits: &[u8]) -> u64 {
    for &c in digits {
        let v = HEX_VALUE[c as usize];
        *bad |= v;
        acc = (acc << 4) | u64::from(v & 0x0F);
    }
    acc
}

/// Parses a UUID (36-character hyphenated or 32-character plain hex, any
/// case) into its 128-bit value. Each half is folded in 64-bit arithmetic
/// (a 128-bit shift takes several instructions per digit).
#[inline]
pub fn parse_uuid(s: &[u8]) -> Result<u128, TextError> {
    let mut bad = 0u8;
    let (hi, lo) = match s.len() {
        32 => (
            fold_hex(0, &mut bad, &s[..16]),
            fold_hex(0, &mut bad, &s[16..]),
        ),
        36 if s[8] == b'-' && s[13] == b'-' && s[18] == b'-' && s[23] == b'-' => {
            let hi = fold_hex(0, &mut bad, &s[..8]);
            let hi = fold_hex(hi, &mut bad, &s[9..13]);
            let hi = fold_hex(hi, &mut bad, &s[14..18]);
            let lo = fold_hex(0, &mut bad, &s[19..23]);
            (hi, fold_hex(lo, &mut bad, &s[24..]))
        }
        _ => return Err(TextError::InvalidUuid),
    };
    // Valid values are < 16, so any 0xFF leaves bit 7 set.
    if bad & 0x80 != 0 {
        return Err(TextError::InvalidUuid);
    }
    Ok((u128::from(hi) << 64) | u128::from(lo))
}

/// Two lowercase hex characters for every byte value.
const HEX_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [HEX_LOWER[i >> 4], HEX_LOWER[i & 15]];
        i += 1;
    }
    t
};

/// Where each of the 16 bytes' two characters go in the 36-byte form.
const POSITIONS: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/// Appends the canonical lowercase hyphenated form of `v` (36 bytes).
#[inline]
pub fn write_uuid(out: &mut Vec<u8>, v: u128) {
    out.extend_from_slice(&format_uuid(v));
}

/// The 36 bytes [`write_uuid`] appends, for a caller that makes them into an object of its own.
#[inline]
pub fn format_uuid(v: u128) -> [u8; 36] {
    let mut buf = [b'-'; 36];
    for (&byte, &at) in v.to_be_bytes().iter().zip(POSITIONS.iter()) {
        let [hi, lo] = HEX_PAIRS[usize::from(byte)];
        buf[at] = hi;
        buf[at + 1] = lo;
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: u128 = 0x12345678_9abc_def0_1234_56789abcdef0;

    fn w(v: u128) -> String {
        let mut out = Vec::new();
        write_uuid(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn writes_like_msgspec() {
        // msgspec.json.encode(UUID('12345678-9ABC-DEF0-1234-56789abcdef0'))
        // printed "12345678-9abc-def0-1234-56789abcdef0".
        assert_eq!(w(V), "12345678-9abc-def0-1234-56789abcdef0");
        assert_eq!(w(0), "00000000-0000-0000-0000-000000000000");
        assert_eq!(w(u128::MAX), "ffffffff-ffff-ffff-ffff-ffffffffffff");
        let mut out = b"x".to_vec();
        write_uuid(&mut out, 1);
        assert_eq!(out, b"x00000000-0000-0000-0000-000000000001");
    }

    #[test]
    fn accepts_what_msgspec_accepts() {
        // Each decoded by msgspec to UUID('12345678-9abc-def0-1234-56789abcdef0').
        for s in [
            "12345678-9abc-def0-1234-56789abcdef0",
            "12345678-9ABC-DEF0-1234-56789ABCDEF0",
            "123456789abcdef0123456789abcdef0",
            "123456789ABCDEF0123456789abcdef0",
        ] {
            assert_eq!(parse_uuid(s.as_bytes()), Ok(V), "{s}");
        }
    }

    #[test]
    fn rejects_what_msgspec_rejects() {
        // Each rejected by msgspec with "Invalid UUID".
        for s in [
            "{12345678-9abc-def0-1234-56789abcdef0}",
            "urn:uuid:12345678-9abc-def0-1234-56789abcdef0",
            "12345678-9abc-def01234-56789abcdef0",
            "12345678-9abc-def0-1234-56789abcdef",
            "12345678-9abc-def0-1234-56789abcdef0a",
            "1234-5678-9abc-def0-1234-56789abcdef0",
            "g2345678-9abc-def0-1234-56789abcdef0",
            "12345678_9abc_def0_1234_56789abcdef0",
            "1234567-89abc-def0-1234-56789abcdef0",
            "",
            // and a few more of the same kinds
            "12345678-9abc-def0-1234-56789abcdef ",
            " 2345678-9abc-def0-1234-56789abcdef0",
            "123456789abcdef0123456789abcdef",
            "123456789abcdef0123456789abcdef0-",
            "123456789abcdef0123456789abcdefg",
            "12345678+9abc-def0-1234-56789abcdef0",
            "-12345678-9abc-def0-1234-56789abcdef",
        ] {
            assert_eq!(parse_uuid(s.as_bytes()), Err(TextError::InvalidUuid), "{s}");
        }
        // Non-ASCII bytes in hex positions.
        let mut b = *b"12345678-9abc-def0-1234-56789abcdef0";
        for pos in 0..36 {
            let keep = b[pos];
            for c in [0x80u8, 0xFF, b'G', b'/', b':', b'@', b'`', b'g'] {
                b[pos] = c;
                assert!(parse_uuid(&b).is_err());
            }
            b[pos] = keep;
        }
    }

    #[test]
    fn round_trips() {
        let mut x: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C834;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645)
                .wrapping_add(0x5851_F42D_4C95_7F2D_1405_7B7E_F767_814F);
            let s = w(x);
            assert_eq!(parse_uuid(s.as_bytes()), Ok(x));
            let upper = s.to_ascii_uppercase().replace('-', "");
            assert_eq!(parse_uuid(upper.as_bytes()), Ok(x));
        }
    }
}
