//! JSON output helpers appending to a `Vec<u8>`.
//!
//! Output style (compact, byte-identical to msgspec):
//! - strings (serde_json's escaper): quoted; `"` and `\` are backslash-escaped, control characters
//!   < 0x20 use `\b \f \n \r \t` where they exist and `\u00XX` (lowercase hex)
//!   otherwise; everything else, including non-ASCII and U+007F, is written
//!   raw as UTF-8 (no `\uXXXX` for non-ASCII, `/` is not escaped);
//! - integers: plain decimal (`itoa`);
//! - floats: the shortest text that round-trips (`zmij`), which always
//!   contains a `.` or an `e` so readers decode it back as a float: decimal
//!   notation for 1e-5 <= |v| < 1e16 (`1.0`, `0.1`, `-0.0`, `123.456`,
//!   `1e16` is the first scientific one), scientific otherwise with a bare
//!   exponent (`1e16`, `1e-7`, `1.5e-7`, `1.7976931348623157e308`: no `+`, no
//!   leading zeros). NaN and infinities are refused with [`NonFinite`].

use std::fmt;

use crate::growth::output_room;

/// Error from [`write_f64`]: JSON has no representation for NaN or ±inf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonFinite;

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cannot serialize a non-finite float (NaN or infinity) to JSON")
    }
}

impl std::error::Error for NonFinite {}

/// Appends `s` as a quoted, escaped JSON string, with serde_json's escaper (measured as fast
/// as a hand-written one in `benches/json_wire.rs`, so the project keeps no escaper of its own).
///
/// A short str with nothing to escape (most keys and values) is copied between its quotes
/// directly, 8 bytes at a time, each piece checked for escapes on its way.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if bytes.len() <= PLAIN_SCAN_MAX {
        let start = out.len();
        // The quotes, and the few bytes a short str's last piece writes past its end.
        out.reserve(bytes.len() + 6);
        out.push(b'"');
        if crate::pieces::append_checked(out, bytes, word_needs_escape) {
            out.push(b'"');
            return;
        }
        out.truncate(start);
    }
    if s.len() >= COUNT_ESCAPES_FROM {
        return write_long_str(out, s);
    }
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Strs up to this length are scanned for escapes before the escaper is asked (longer ones
/// would be scanned twice when they do need it).
const PLAIN_SCAN_MAX: usize = 64;

/// Whether any byte of `word` is below 0x20, `"` or `\\` (the classic "has a byte less than
/// n" and "has a zero byte" bit tricks, exact about whether one exists; bytes of 0x80 and up,
/// UTF-8 beyond ASCII, are masked out by `!word`).
#[inline(always)]
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & HIGH != 0
}

/// A long str, kept out of line so the common path stays as it was: it reserves its escaped
/// size (its escapes counted) fallibly, so no growth is left to the escaper. One too large for
/// the memory left ends the encode in a MemoryError (see `errors::output_result`) instead of
/// aborting.
#[cold]
#[inline(never)]
fn write_long_str(out: &mut Vec<u8>, s: &str) {
    if output_room(out, escaped_len(s.as_bytes())) {
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// From this length on, a str's escaped size is counted and reserved before it is written.
const COUNT_ESCAPES_FROM: usize = crate::growth::LARGE;

/// An upper bound of the quoted, escaped size of `s`: `\"` and `\\` take 2 bytes, a control
/// character at most 6 (`\u001f`).
fn escaped_len(s: &[u8]) -> usize {
    2 + s
        .iter()
        .map(|&b| match b {
            b'"' | b'\\' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Appends `v` in decimal.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends the shortest round-tripping representation of `v` (see the
/// module docs for the exact style). NaN and ±inf append nothing and return
/// `Err(NonFinite)`.
#[inline]
pub fn write_f64(out: &mut Vec<u8>, v: f64) -> Result<(), NonFinite> {
    if !v.is_finite() {
        return Err(NonFinite);
    }
    let mut buffer = zmij::Buffer::new();
    let text = buffer.format_finite(v).as_bytes();
    // zmij writes a positive exponent as `e+16`; msgspec and the JSON grammar's shortest form
    // write `e16`, so the output stays byte-identical to msgspec's.
    match text.iter().position(|&b| b == b'+') {
        Some(plus) => {
            out.extend_from_slice(&text[..plus]);
            out.extend_from_slice(&text[plus + 1..]);
        }
        None => out.extend_from_slice(text),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::read::{Number, Reader};
    use super::*;

    fn s(input: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, input);
        String::from_utf8(out).unwrap()
    }

    /// Reads `out` back with the reader and checks it yields `expected`.
    fn read_back(out: &[u8], expected: &str) {
        let mut r = Reader::new(out);
        let got = r.read_str().unwrap().text().to_owned();
        r.finish().unwrap();
        assert_eq!(got, expected);
    }

    #[test]
    fn escape_scan_finds_every_escaped_byte_at_every_position() {
        // The piecewise copy must leave every str with an escape to the escaper: the output
        // is the escaper's own for every byte at every position of every short length.
        let escaper =
            |text: &[u8]| serde_json::to_string(std::str::from_utf8(text).unwrap()).unwrap();
        for length in 0..=70usize {
            let plain = "a".repeat(length);
            assert_eq!(s(&plain), escaper(plain.as_bytes()));
            for at in 0..length {
                for byte in (0u8..0x20).chain([b'"', b'\\', 0x20, b'!', b'#', b'[', 0x7f, b'/']) {
                    let mut text = plain.clone().into_bytes();
                    text[at] = byte;
                    let text = String::from_utf8(text).unwrap();
                    assert_eq!(
                        s(&text),
                        escaper(text.as_bytes()),
                        "{byte:#x} at {at} of {length}"
                    );
                }
            }
        }
        assert_eq!(s("déjà vu: ünïcödé €"), "\"déjà vu: ünïcödé €\"");
        assert_eq!(
            s("d\u{e9}j\u{e0} \"q\" \\ \u{1}"),
            "\"déjà \\\"q\\\" \\\\ \\u0001\""
        );
    }

    #[test]
    fn strings() {
        assert_eq!(s(""), r#""""#);
        assert_eq!(s("abc"), r#""abc""#);
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("\u{8}\u{c}\n\r\t"), r#""\b\f\n\r\t""#);
        assert_eq!(s("\0\u{1}\u{1f}\u{1b}"), r#""\u0000\u0001\u001f\u001b""#);
        assert_eq!(s("/ \u{7f} é 日本 😀"), "\"/ \u{7f} é 日本 😀\"");
        assert_eq!(
            s("a long ascii string with \"quotes\" past eight bytes"),
            r#""a long ascii string with \"quotes\" past eight bytes""#
        );
    }

    #[test]
    fn strings_round_trip() {
        let mut all: String = (0u32..0x800).filter_map(char::from_u32).collect();
        all.push_str("\u{ffff}\u{10000}\u{10ffff}");
        read_back(
            &{
                let mut o = Vec::new();
                write_str(&mut o, &all);
                o
            },
            &all,
        );
        // Specials at every offset around the 8-byte chunks, appending to a
        // non-empty buffer.
        for n in 0..20 {
            for special in ["\"", "\\", "\n", "\u{1}", "é", "\u{7f}"] {
                let text = format!("{}{special}{}", "x".repeat(n), "y".repeat(n));
                let mut out = b"prefix".to_vec();
                write_str(&mut out, &text);
                assert_eq!(&out[..6], b"prefix");
                read_back(&out[6..], &text);
            }
        }
    }

    #[test]
    fn integers() {
        for v in [0i64, 1, -1, 42, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            write_i64(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
            assert_eq!(Reader::new(&out).read_number(), Ok(Number::Int(v)));
        }
    }

    fn f(v: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn float_style() {
        assert_eq!(f(1.0), "1.0");
        assert_eq!(f(-1.0), "-1.0");
        assert_eq!(f(0.0), "0.0");
        assert_eq!(f(-0.0), "-0.0");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1.5e-7), "1.5e-7");
        assert_eq!(f(1e-5), "0.00001");
        assert_eq!(f(1e15), "1000000000000000.0");
        assert_eq!(f(1e16), "1e16");
        assert_eq!(f(1e100), "1e100");
        assert_eq!(f(f64::MAX), "1.7976931348623157e308");
        assert_eq!(f(5e-324), "5e-324");
    }

    #[test]
    fn non_finite() {
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut out = b"x".to_vec();
            assert_eq!(write_f64(&mut out, v), Err(NonFinite));
            assert_eq!(out, b"x");
        }
        assert!(NonFinite.to_string().contains("non-finite"));
    }

    #[test]
    fn floats_round_trip() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut checked = 0;
        let mut out = Vec::new();
        for i in 0..300_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mix raw bit patterns with "nice" decimal values.
            let v = if i % 4 == 0 {
                (state % 1_000_000) as f64 / 1000.0
            } else {
                f64::from_bits(state)
            };
            out.clear();
            if write_f64(&mut out, v).is_err() {
                assert!(!v.is_finite());
                continue;
            }
            let text = std::str::from_utf8(&out).unwrap();
            assert!(text.contains('.') || text.contains('e'), "{text}");
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{text}"
            );
            let mut r = Reader::new(&out);
            match r.read_number() {
                Ok(Number::Float { value, .. }) => {
                    assert_eq!(value.to_bits(), v.to_bits(), "{text}")
                }
                other => panic!("{text}: {other:?}"),
            }
            r.finish().unwrap();
            checked += 1;
        }
        assert!(checked > 290_000);
    }
}
