//! The parts of a decimal number's text, as `decimal.Decimal(text).as_tuple()` gives them.
//!
//! Checking a `Decimal` against `Meta(max_digits=, decimal_places=)`, or scaling it to an Avro
//! decimal's unscaled integer, needs its coefficient's digits and its exponent. CPython gives
//! them as `as_tuple()`, a tuple of one int per digit: building and reading it costs thousands
//! of instructions per value, where the text (what `str(value)` gives, or what a decoder read)
//! already holds them. [`parse`] reads the plain forms only (`[+-]digits[.digits][e[+-]digits]`,
//! ASCII); anything else (`NaN`, `Infinity`, whitespace, underscores, non-ASCII digits) is
//! `None`, and the caller asks Python.

/// A finite decimal's text in parts: `-12.340e3` is negative, integer digits `12`, fraction
/// digits `340` and exponent `3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecimalText<'a> {
    pub negative: bool,
    pub integer: &'a [u8],
    pub fraction: &'a [u8],
    /// The exponent written after `e` or `E` (0 when none).
    pub written_exponent: i64,
}

/// Digits of an exponent beyond which the text is left to Python (its value would not fit
/// CPython's own limits, nor an i64 after adding the fraction's length).
const MAX_EXPONENT_DIGITS: usize = 17;

/// The parts of `text`, or `None` when it is not a plain finite decimal literal.
pub fn parse(text: &[u8]) -> Option<DecimalText<'_>> {
    let (negative, rest) = match text.first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let integer = &rest[..int_len];
    let mut rest = &rest[int_len..];
    let mut fraction: &[u8] = &[];
    if let Some((b'.', after)) = rest.split_first() {
        let frac_len = after.iter().take_while(|b| b.is_ascii_digit()).count();
        fraction = &after[..frac_len];
        rest = &after[frac_len..];
    }
    if integer.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut written_exponent = 0i64;
    if let Some((b'e' | b'E', after)) = rest.split_first() {
        let (sign, digits) = match after.first()? {
            b'-' => (-1, &after[1..]),
            b'+' => (1, &after[1..]),
            _ => (1, after),
        };
        if digits.is_empty()
            || digits.len() > MAX_EXPONENT_DIGITS
            || !digits.iter().all(u8::is_ascii_digit)
        {
            return None;
        }
        let value = digits
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
        written_exponent = sign * value;
        rest = &[];
    }
    if !rest.is_empty() {
        return None;
    }
    Some(DecimalText {
        negative,
        integer,
        fraction,
        written_exponent,
    })
}

/// `(digit_count(), exponent())` of [`parse`]'s parts, in one pass over the bytes for the
/// common literal without an exponent (`123.45`, `-0.05`): no iterator chains, no parts kept.
/// A literal with an exponent is read by [`parse`]; `None` where it gives `None`.
pub fn digits_exponent(text: &[u8]) -> Option<(i64, i64)> {
    let mut at = usize::from(matches!(text.first(), Some(b'-' | b'+')));
    // Digits counted from the first nonzero one, over the integer and fraction digits.
    let mut significant = 0i64;
    let mut any = false;
    while let Some(&digit) = text.get(at) {
        if !digit.is_ascii_digit() {
            break;
        }
        significant += i64::from(significant > 0 || digit != b'0');
        any = true;
        at += 1;
    }
    let mut fraction = 0i64;
    if text.get(at) == Some(&b'.') {
        at += 1;
        while let Some(&digit) = text.get(at) {
            if !digit.is_ascii_digit() {
                break;
            }
            significant += i64::from(significant > 0 || digit != b'0');
            fraction += 1;
            any = true;
            at += 1;
        }
    }
    if !any {
        return None;
    }
    if at < text.len() {
        return parse(text).map(|parts| (parts.digit_count(), parts.exponent()));
    }
    Some((significant.max(1), -fraction))
}

impl<'a> DecimalText<'a> {
    /// `as_tuple().exponent`: the written exponent less the fraction's digits.
    pub fn exponent(&self) -> i64 {
        self.written_exponent - self.fraction.len() as i64
    }

    /// The coefficient's digits without leading zeros (empty for zero), as ASCII digits.
    pub fn significant(&self) -> impl Iterator<Item = u8> + 'a {
        let all = self.integer.iter().chain(self.fraction.iter()).copied();
        all.skip_while(|&d| d == b'0')
    }

    /// `len(as_tuple().digits)`: the significant digits, one for zero.
    pub fn digit_count(&self) -> i64 {
        (self.significant().count() as i64).max(1)
    }
}

/// Appends the decimal `unscaled × 10^-scale` in plain notation (`-123.45`, `0.05`, `0.00`),
/// the text whose `Decimal` has the digits of `unscaled` and the exponent `-scale`: the fastest
/// form for CPython's `Decimal(str)` to read (no exponent to convert).
pub fn write_scaled(unscaled: i64, scale: u32, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut n = unscaled.unsigned_abs();
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[start..];
    if unscaled < 0 {
        out.push(b'-');
    }
    let scale = scale as usize;
    if scale == 0 {
        out.extend_from_slice(digits);
    } else if digits.len() > scale {
        let (integer, fraction) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(integer);
        out.push(b'.');
        out.extend_from_slice(fraction);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', scale - digits.len()));
        out.extend_from_slice(digits);
    }
}

#[cfg(test)]
mod tests {
    use super::{digits_exponent, parse, write_scaled};

    #[test]
    fn digits_exponent_agrees_with_parse() {
        let cases = [
            "0",
            "00",
            "0.0",
            "0.00",
            "-0",
            "+0.000",
            "1",
            "10",
            "100.00",
            "123.45",
            "-123.45",
            "0.05",
            "-0.005",
            "007.100",
            ".5",
            "5.",
            "-.5",
            "+5.",
            "1e3",
            "1.5E-7",
            "-0.0e+2",
            "12.340e3",
            "",
            "-",
            "+",
            ".",
            "-.",
            "e3",
            "1e",
            "1.2.3",
            "12a",
            " 1",
            "1 ",
            "NaN",
            "Infinity",
            "1_000",
            "99999999999999999999.99",
            "1e99999999999999999999",
        ];
        for text in cases {
            let expected = parse(text.as_bytes()).map(|p| (p.digit_count(), p.exponent()));
            assert_eq!(digits_exponent(text.as_bytes()), expected, "{text:?}");
        }
    }

    #[test]
    fn scaled_text_is_plain_notation() {
        let cases: &[(i64, u32, &str)] = &[
            (12345, 2, "123.45"),
            (-12345, 2, "-123.45"),
            (5, 2, "0.05"),
            (-5, 3, "-0.005"),
            (0, 2, "0.00"),
            (0, 0, "0"),
            (100, 2, "1.00"),
            (42, 0, "42"),
            (i64::MIN, 4, "-922337203685477.5808"),
            (i64::MAX, 25, "0.0000009223372036854775807"),
        ];
        for &(unscaled, scale, text) in cases {
            let mut out = Vec::new();
            write_scaled(unscaled, scale, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), text);
            let parts = parse(&out).unwrap();
            assert_eq!(parts.exponent(), -i64::from(scale), "{text}");
        }
    }

    /// (text, sign, digit count, exponent) as `Decimal(text).as_tuple()` gives them.
    const CASES: &[(&str, bool, i64, i64)] = &[
        ("0", false, 1, 0),
        ("-0", true, 1, 0),
        ("0.00", false, 1, -2),
        ("007.50", false, 3, -2),
        ("123.45", false, 5, -2),
        ("-123.45", true, 5, -2),
        ("+1", false, 1, 0),
        ("1.", false, 1, 0),
        (".5", false, 1, -1),
        ("1E+3", false, 1, 3),
        ("1.23E-7", false, 3, -9),
        ("0E-8", false, 1, -8),
        ("12345E-2", false, 5, -2),
        ("-1e5", true, 1, 5),
        ("100", false, 3, 0),
    ];

    #[test]
    fn parts_match_pythons_as_tuple() {
        for &(text, negative, count, exponent) in CASES {
            let parts = parse(text.as_bytes()).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(parts.negative, negative, "{text}");
            assert_eq!(parts.digit_count(), count, "{text}");
            assert_eq!(parts.exponent(), exponent, "{text}");
        }
    }

    #[test]
    fn other_forms_are_left_to_python() {
        for text in [
            "",
            "-",
            ".",
            "NaN",
            "-Infinity",
            "inf",
            "1_000",
            " 1",
            "1 ",
            "1e",
            "1e+",
            "1.2.3",
            "1e1.5",
            "١",
            "1e123456789012345678",
        ] {
            assert_eq!(parse(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn significant_digits_drop_leading_zeros() {
        let parts = parse(b"000.0120").unwrap();
        assert_eq!(parts.significant().collect::<Vec<_>>(), b"120");
        assert_eq!(parts.exponent(), -4);
        assert_eq!(parse(b"0.000").unwrap().significant().count(), 0);
    }
}
