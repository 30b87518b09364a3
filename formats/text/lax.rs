//! What lax mode (`strict=False`) reads out of a string, and its conversions of a number to a
//! datetime or a duration: the rules of msgspec's `strict=False`, so that a port keeps what its
//! decoder accepts and refuses.
//!
//! - [`number`]: a string holding a JSON number (its grammar exactly: `-` the only sign, no
//!   leading zero, digits on both sides of a `.`), or a float named `nan`, `inf` or `infinity`
//!   in any case, with an optional `-`.
//! - [`null_word`], [`bool_word`]: `null`, `true` and `false` in any case.
//! - [`timestamp`]: a Unix timestamp given as a float, as whole seconds and nanoseconds (the
//!   nanoseconds truncated, then rounded half up to microseconds by the datetime conversion).
//! - [`duration_from_seconds`], [`duration_from_int`]: seconds as a duration, microseconds
//!   rounded half away from zero, within Python's `timedelta` range.

use super::temporal::{Duration, MAX_DURATION_DAYS};

/// A number read from a string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaxNumber {
    /// The text is a JSON integer literal (of any size): the caller reads it exactly.
    Int,
    /// A JSON number with a fraction or an exponent, or a named float. `named` is set for
    /// `nan`, `inf` and `infinity`; an unnamed infinity is a number too large for a float.
    Float { value: f64, named: bool },
}

/// The number `text` holds, or `None` when it holds none.
pub fn number(text: &[u8]) -> Option<LaxNumber> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if let Some(value) = named_float(digits) {
        let negative = digits.len() != text.len();
        return Some(LaxNumber::Float {
            value: if negative { -value } else { value },
            named: true,
        });
    }
    let mut i = integer_digits(digits)?;
    let mut integer = true;
    if digits.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while digits.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        integer = false;
    }
    if matches!(digits.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(digits.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let start = i;
        while digits.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        integer = false;
    }
    if i != digits.len() {
        return None;
    }
    if integer {
        return Some(LaxNumber::Int);
    }
    // JSON's number grammar is a subset of Rust's float grammar, ASCII throughout.
    let value = std::str::from_utf8(text).ok()?.parse::<f64>().ok()?;
    Some(LaxNumber::Float {
        value,
        named: false,
    })
}

/// The length of the integer part at the start of `text`: `0`, or digits with no leading zero.
fn integer_digits(text: &[u8]) -> Option<usize> {
    match text.first() {
        Some(b'0') => Some(1),
        Some(b'1'..=b'9') => Some(text.iter().take_while(|b| b.is_ascii_digit()).count()),
        _ => None,
    }
}

/// `nan`, `inf` or `infinity` in any case.
fn named_float(text: &[u8]) -> Option<f64> {
    if text.eq_ignore_ascii_case(b"nan") {
        Some(f64::NAN)
    } else if text.eq_ignore_ascii_case(b"inf") || text.eq_ignore_ascii_case(b"infinity") {
        Some(f64::INFINITY)
    } else {
        None
    }
}

/// Whether `text` is `null` in any case.
pub fn null_word(text: &[u8]) -> bool {
    text.eq_ignore_ascii_case(b"null")
}

/// `true` or `false` in any case.
pub fn bool_word(text: &[u8]) -> Option<bool> {
    if text.eq_ignore_ascii_case(b"true") {
        Some(true)
    } else if text.eq_ignore_ascii_case(b"false") {
        Some(false)
    } else {
        None
    }
}

/// Whether a float holds an integer that converts to an int exactly as lax mode takes it:
/// integral and no larger in magnitude than 2^53 (beyond, not every integer is a float).
pub fn integral_float(value: f64) -> bool {
    const LIMIT: f64 = 9_007_199_254_740_992.0;
    value.fract() == 0.0 && value.abs() <= LIMIT
}

/// A finite Unix timestamp as whole seconds (towards negative infinity) and nanoseconds
/// (0..1e9, truncated from the float); `None` for a non-finite one or one beyond 64 bits of
/// seconds.
pub fn timestamp(value: f64) -> Option<(i64, u32)> {
    if !value.is_finite() {
        return None;
    }
    let whole = value.trunc();
    // 2^63 as a float: the first whole number i64 cannot hold.
    if whole.abs() >= 9_223_372_036_854_775_808.0 {
        return None;
    }
    let mut seconds = whole as i64;
    let mut nanoseconds = ((value - whole) * 1e9).trunc() as i64;
    if nanoseconds < 0 {
        seconds = seconds.checked_sub(1)?;
        nanoseconds += 1_000_000_000;
    }
    Some((seconds, nanoseconds as u32))
}

/// Microseconds in a day.
const US_PER_DAY: i128 = 86_400_000_000;

/// A duration of `total` microseconds, if Python's `timedelta` holds it.
fn duration_from_micros(total: i128) -> Option<Duration> {
    let days = total.div_euclid(US_PER_DAY);
    if days.abs() > i128::from(MAX_DURATION_DAYS) {
        return None;
    }
    let rest = total.rem_euclid(US_PER_DAY);
    Some(Duration {
        days: days as i64,
        seconds: (rest / 1_000_000) as u32,
        microseconds: (rest % 1_000_000) as u32,
    })
}

/// `seconds` as a duration, if Python's `timedelta` holds it.
pub fn duration_from_int(seconds: i64) -> Option<Duration> {
    duration_from_micros(i128::from(seconds) * 1_000_000)
}

/// A float number of seconds as a duration: whole seconds towards zero, the fraction rounded
/// to microseconds half away from zero; `None` when it is not finite or `timedelta` does not
/// hold it.
pub fn duration_from_seconds(value: f64) -> Option<Duration> {
    if !value.is_finite() {
        return None;
    }
    let whole = value.trunc();
    // Beyond this many seconds no timedelta reaches (about 2.7e12 years).
    if whole.abs() > 1e17 {
        return None;
    }
    let micros = ((value - whole) * 1e6).round() as i128;
    duration_from_micros(whole as i128 * 1_000_000 + micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_json_grammar() {
        for text in ["0", "-0", "12", "-7", "123456789012345678901234567890"] {
            assert_eq!(number(text.as_bytes()), Some(LaxNumber::Int), "{text}");
        }
        for (text, value) in [
            ("1.5", 1.5),
            ("-0.0", -0.0),
            ("1e3", 1000.0),
            ("1E+2", 100.0),
        ] {
            assert_eq!(
                number(text.as_bytes()),
                Some(LaxNumber::Float {
                    value,
                    named: false
                }),
                "{text}"
            );
        }
        for text in [
            "", "-", "+1", "01", "1.", ".5", "1e", "1e+", " 1", "1 ", "0x1", "1_0", "--1", "+inf",
        ] {
            assert_eq!(number(text.as_bytes()), None, "{text}");
        }
        assert!(matches!(
            number(b"2e308"),
            Some(LaxNumber::Float { value, named: false }) if value.is_infinite()
        ));
    }

    #[test]
    fn named_floats_in_any_case() {
        for (text, value) in [("inf", f64::INFINITY), ("-Infinity", f64::NEG_INFINITY)] {
            assert_eq!(
                number(text.as_bytes()),
                Some(LaxNumber::Float { value, named: true })
            );
        }
        assert!(matches!(
            number(b"-nAn"),
            Some(LaxNumber::Float { value, named: true }) if value.is_nan()
        ));
        assert_eq!(number(b"infinit"), None);
    }

    #[test]
    fn words() {
        assert!(null_word(b"NuLL") && !null_word(b"nul") && !null_word(b" null"));
        assert_eq!(bool_word(b"TRUE"), Some(true));
        assert_eq!(bool_word(b"fAlse"), Some(false));
        assert_eq!(bool_word(b"1"), None);
    }

    #[test]
    fn integral_floats_up_to_two_to_the_53() {
        assert!(integral_float(9_007_199_254_740_992.0) && integral_float(-3.0));
        assert!(!integral_float(9_007_199_254_740_994.0) && !integral_float(0.5));
        assert!(!integral_float(f64::NAN) && !integral_float(f64::INFINITY));
    }

    #[test]
    fn timestamps_split_into_seconds_and_nanoseconds() {
        assert_eq!(timestamp(1.5), Some((1, 500_000_000)));
        assert_eq!(timestamp(-1.5), Some((-2, 500_000_000)));
        assert_eq!(timestamp(-0.0), Some((0, 0)));
        // -5e-7 is a little below -0.0000005: its nanoseconds truncate to -500.
        assert_eq!(timestamp(-5e-7), Some((-1, 999_999_500)));
        assert_eq!(timestamp(f64::NAN), None);
        assert_eq!(timestamp(1e19), None);
    }

    #[test]
    fn durations_round_half_away_from_zero() {
        let micros = |d: Duration| {
            i128::from(d.days) * US_PER_DAY
                + i128::from(d.seconds) * 1_000_000
                + i128::from(d.microseconds)
        };
        assert_eq!(duration_from_seconds(1.5).map(micros), Some(1_500_000));
        assert_eq!(duration_from_seconds(-5e-7).map(micros), Some(-1));
        assert_eq!(duration_from_seconds(5e-7).map(micros), Some(1));
        assert_eq!(duration_from_int(-1).map(micros), Some(-1_000_000));
        assert!(duration_from_int(86_399_999_999_999).is_some());
        assert!(duration_from_int(86_400_000_000_000).is_none());
        assert!(duration_from_int(-86_399_999_913_600).is_some());
        assert!(duration_from_int(-86_399_999_913_601).is_none());
        assert!(duration_from_seconds(f64::NAN).is_none());
        assert!(duration_from_seconds(1e16).is_none());
    }
}
