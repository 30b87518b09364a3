//! RFC 3339 datetimes, dates and times, and ISO 8601 durations.
//!
//! # Wire forms written (identical to `msgspec.json.encode`)
//!
//! | value | form |
//! | --- | --- |
//! | date | `YYYY-MM-DD` |
//! | time | `HH:MM:SS`, then `.ffffff` (always 6 digits) when microseconds are non-zero |
//! | datetime | date `T` time |
//! | offset | none when naive; `Z` for UTC; `+HH:MM` / `-HH:MM`; `±HH:MM:SS` when it has seconds |
//! | duration | `[-]P[<days>D][T<seconds>[.<fraction>]S]`, `P0D` when zero |
//!
//! Whole-minute offsets are written as msgspec writes them; an offset with
//! seconds keeps them as `±HH:MM:SS` (Python's `isoformat` form), where
//! msgspec would round to the minute and lose them. Durations keep the whole
//! sub-day part in seconds (`PT5400S`, not `PT1H30M`), drop trailing zeros
//! from the fraction, and write negative values as a leading `-` before the
//! magnitude (`timedelta(seconds=-1)` is `-PT1S`).
//!
//! # Forms accepted
//!
//! * date: exactly `YYYY-MM-DD`, year 0001..=9999, real calendar days.
//! * time: `HH:MM:SS` with an optional fraction of one or more digits
//!   (rounded half up to microseconds; a carry into the next second is
//!   propagated, wrapping a bare time past midnight, as msgspec does), and
//!   an optional offset: `Z`, `z`, `+HH:MM`, `+HHMM` or `+HH:MM:SS` (the last
//!   is what Python's `isoformat()` writes for second-precision offsets).
//!   Offsets must stay below 24 hours.
//! * datetime: date, then `T`, `t` or a space, then time. A fraction that
//!   rounds up past 23:59:59.999999 moves to the next day.
//! * duration: `[+-]P[nY][nM][nW][nD][T[nH][nM][nS]]`, any letter case, with
//!   at least one component, each unit at most once and in this order; only
//!   the last component may carry a fraction (cut to 11 digits, then rounded
//!   half up to microseconds, as msgspec does). A year counts 365 days and a
//!   month (`M` before `T`) 30, as pydantic counts them (it writes 400 days as
//!   `P1Y35D`); msgspec refuses both, and weeks. `Y` or `W` after `T` is
//!   [`TextError::DurationUnit`]; totals beyond Python's `timedelta` range
//!   (±999999999 days) are [`TextError::DurationRange`].
//!
//! Rejected: leap second 60, hour 24, year 0000, reduced forms (`HH:MM`,
//! `+HH`), basic forms (`YYYYMMDD`), commas as decimal marks, surrounding
//! whitespace, and anything else not listed.

use std::fmt;

/// A calendar date (proleptic Gregorian, year 1..=9999).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Date {
    /// 1..=9999.
    pub year: u16,
    /// 1..=12.
    pub month: u8,
    /// 1..=days in the month.
    pub day: u8,
}

/// A wall-clock time without offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time {
    /// 0..=23.
    pub hour: u8,
    /// 0..=59.
    pub minute: u8,
    /// 0..=59.
    pub second: u8,
    /// 0..=999_999.
    pub microsecond: u32,
}

/// A date and time with an optional UTC offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateTime {
    /// The local date.
    pub date: Date,
    /// The local time.
    pub time: Time,
    /// Seconds east of UTC, strictly within ±86400; `None` for a naive value.
    /// For a Python offset, pass `days * 86400 + seconds` of its timedelta.
    pub offset_seconds: Option<i32>,
}

/// A time of day with an optional UTC offset (Python's `datetime.time`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeOfDay {
    /// The local time.
    pub time: Time,
    /// Seconds east of UTC, strictly within ±86400; `None` for a naive value.
    pub offset_seconds: Option<i32>,
}

/// A signed duration normalised like Python's `timedelta`: only `days` may
/// be negative, `0 <= seconds < 86400`, `0 <= microseconds < 1_000_000`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Duration {
    /// Whole days, -999_999_999..=999_999_999 for values Python accepts.
    pub days: i64,
    /// 0..86_400.
    pub seconds: u32,
    /// 0..1_000_000.
    pub microseconds: u32,
}

/// Largest day count of a Python `timedelta`, in either direction.
pub const MAX_DURATION_DAYS: i64 = 999_999_999;

/// The field of a date or time that held an out-of-range value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// Year 0000 (Python's range is 1..=9999).
    Year,
    /// Month outside 1..=12.
    Month,
    /// Day 0 or past the end of the month.
    Day,
    /// Hour outside 0..=23.
    Hour,
    /// Minute outside 0..=59.
    Minute,
    /// Second outside 0..=59 (leap seconds are not representable).
    Second,
    /// UTC offset hour above 23, or minute or second above 59.
    Offset,
}

/// Why a text form was rejected. [`TextError::message`] gives a short,
/// static, human-readable reason suitable for a Python exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextError {
    /// Not of the shape `YYYY-MM-DDTHH:MM:SS[.f][offset]`.
    MalformedDatetime,
    /// Not of the shape `YYYY-MM-DD`.
    MalformedDate,
    /// Not of the shape `HH:MM:SS[.f][offset]`.
    MalformedTime,
    /// A datetime field was out of range.
    DatetimeField(Field),
    /// A date field was out of range.
    DateField(Field),
    /// A time field was out of range.
    TimeField(Field),
    /// Rounding the fraction moved the datetime past 9999-12-31.
    DatetimeOverflow,
    /// Not an ISO 8601 duration of the accepted shape.
    MalformedDuration,
    /// A duration used years, months or weeks.
    DurationUnit,
    /// A duration beyond ±999999999 days.
    DurationRange,
    /// Not a 36-character hyphenated or 32-character plain hex UUID.
    InvalidUuid,
    /// Not padded standard-alphabet base64.
    InvalidBase64,
}

const FIELD_NAMES: [&[&str; 7]; 3] = [
    &[
        "invalid datetime: year out of range",
        "invalid datetime: month out of range",
        "invalid datetime: day out of range",
        "invalid datetime: hour out of range",
        "invalid datetime: minute out of range",
        "invalid datetime: second out of range",
        "invalid datetime: UTC offset out of range",
    ],
    &[
        "invalid date: year out of range",
        "invalid date: month out of range",
        "invalid date: day out of range",
        "invalid date: hour out of range",
        "invalid date: minute out of range",
        "invalid date: second out of range",
        "invalid date: UTC offset out of range",
    ],
    &[
        "invalid time: year out of range",
        "invalid time: month out of range",
        "invalid time: day out of range",
        "invalid time: hour out of range",
        "invalid time: minute out of range",
        "invalid time: second out of range",
        "invalid time: UTC offset out of range",
    ],
];

impl TextError {
    /// A short static description, e.g. `"invalid datetime: month out of range"`.
    pub fn message(&self) -> &'static str {
        match *self {
            TextError::MalformedDatetime => {
                "invalid datetime: expected RFC 3339 YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+HH:MM]"
            }
            TextError::MalformedDate => "invalid date: expected RFC 3339 YYYY-MM-DD",
            TextError::MalformedTime => {
                "invalid time: expected RFC 3339 HH:MM:SS[.ffffff][Z|+HH:MM]"
            }
            TextError::DatetimeField(f) => FIELD_NAMES[0][f as usize],
            TextError::DateField(f) => FIELD_NAMES[1][f as usize],
            TextError::TimeField(f) => FIELD_NAMES[2][f as usize],
            TextError::DatetimeOverflow => "invalid datetime: rounds past 9999-12-31",
            TextError::MalformedDuration => {
                "invalid duration: expected ISO 8601 [-]P[nY][nM][nW][nD][T[nH][nM][nS]]"
            }
            TextError::DurationUnit => {
                "invalid duration: only units Y, M, W and D before T and H, M and S after it are \
                 supported"
            }
            TextError::DurationRange => "invalid duration: out of range (±999999999 days)",
            TextError::InvalidUuid => "invalid UUID",
            TextError::InvalidBase64 => "invalid base64 encoded string",
        }
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for TextError {}

/// True for Gregorian leap years.
#[inline]
pub const fn is_leap_year(year: u16) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// Days in `month` (1..=12) of `year`; 0 for an invalid month.
#[inline]
pub const fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

// ---------------------------------------------------------------- parsing

/// Internal failure, mapped to a [`TextError`] by the public entry points.
enum Fault {
    Malformed,
    Field(Field),
    Overflow,
}

impl From<Field> for Fault {
    #[inline]
    fn from(f: Field) -> Self {
        Fault::Field(f)
    }
}

/// Two ASCII digits at `s[i..i + 2]`.
#[inline]
fn two(s: &[u8], i: usize) -> Result<u8, Fault> {
    match s.get(i..i + 2) {
        Some(&[a, b]) => {
            let (a, b) = (a.wrapping_sub(b'0'), b.wrapping_sub(b'0'));
            if a < 10 && b < 10 {
                Ok(a * 10 + b)
            } else {
                Err(Fault::Malformed)
            }
        }
        _ => Err(Fault::Malformed),
    }
}

#[inline]
fn expect(s: &[u8], i: usize, c: u8) -> Result<(), Fault> {
    if s.get(i) == Some(&c) {
        Ok(())
    } else {
        Err(Fault::Malformed)
    }
}

/// An 8-byte template for [`Chunk::read`]: `#` is any ASCII digit, every other byte must be
/// itself.
struct Chunk {
    /// 0xFF in the digit lanes.
    digits: u64,
    /// The literal bytes, 0 in the digit lanes.
    fixed: u64,
}

const LANES_30: u64 = 0x3030_3030_3030_3030;
const LANES_06: u64 = 0x0606_0606_0606_0606;
const LANES_F0: u64 = 0xF0F0_F0F0_F0F0_F0F0;

impl Chunk {
    const fn new(template: &[u8; 8]) -> Chunk {
        let (mut digits, mut fixed, mut i) = (0u64, 0u64, 0);
        while i < 8 {
            if template[i] == b'#' {
                digits |= 0xFF << (8 * i);
            } else {
                fixed |= (template[i] as u64) << (8 * i);
            }
            i += 1;
        }
        Chunk { digits, fixed }
    }

    /// The eight bytes at `s[at..]` if they fit the template: each digit lane holds its
    /// value (0..=9), every other lane 0. Eight bytes checked with a few word operations:
    /// a digit lane is 0x30..=0x39 exactly when its high nibble is 3 both as read and after
    /// adding 6 (a carry out of a lane needs a lane >= 0xFA, which the first test refuses).
    #[inline(always)]
    fn read(&self, s: &[u8], at: usize) -> Option<u64> {
        let mut word = [0u8; 8];
        word.copy_from_slice(s.get(at..at + 8)?);
        let w = u64::from_le_bytes(word);
        let lanes = w & self.digits;
        let high = LANES_F0 & self.digits;
        let threes = LANES_30 & self.digits;
        let ok = w & !self.digits == self.fixed
            && lanes & high == threes
            && (lanes + (LANES_06 & self.digits)) & high == threes;
        ok.then(|| lanes - threes)
    }
}

/// Lane `i` of a word [`Chunk::read`] returned.
#[inline(always)]
fn lane(word: u64, i: u32) -> u8 {
    (word >> (8 * i)) as u8
}

/// The two-digit number in lanes `i` and `i + 1`.
#[inline(always)]
fn pair(word: u64, i: u32) -> u8 {
    lane(word, i) * 10 + lane(word, i + 1)
}

const YMD: Chunk = Chunk::new(b"####-##-");
const DAY_HOUR_MINUTE: Chunk = Chunk::new(b"##T##:##");
const SECOND_FRACTION: Chunk = Chunk::new(b":##.####");
const FRACTION_UTC: Chunk = Chunk::new(b".######Z");
const MINUTE_SECOND_UTC: Chunk = Chunk::new(b"#:##:##Z");

/// The date of `YYYY-MM-` (as [`YMD`] read it) and `day`, if it is a real one.
#[inline(always)]
fn checked_date(first: u64, day: u8) -> Option<Date> {
    let year = u16::from(pair(first, 0)) * 100 + u16::from(pair(first, 2));
    let month = pair(first, 5);
    let valid = year != 0 && (1..=12).contains(&month) && day != 0;
    (valid && day <= days_in_month(year, month)).then_some(Date { year, month, day })
}

/// The UTC datetimes polycodec and msgspec write, `YYYY-MM-DDTHH:MM:SSZ` and
/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`, read as fixed templates (no fraction to round). `None` for
/// anything else, valid or not: the general parser then reads it (and words any error).
/// `parse_datetime` gives the same value for every text this accepts: a reader that knows
/// where a string of one of these two lengths would end can try this on the raw bytes first.
#[inline]
pub fn canonical_utc(s: &[u8]) -> Option<DateTime> {
    let fraction = match s.len() {
        20 => false,
        27 => true,
        _ => return None,
    };
    let first = YMD.read(s, 0)?;
    let second = DAY_HOUR_MINUTE.read(s, 8)?;
    let (minute, seconds, microsecond) = if fraction {
        let third = SECOND_FRACTION.read(s, 16)?;
        let fourth = FRACTION_UTC.read(s, 19)?;
        let mut microsecond = 0u32;
        for i in 1..7 {
            microsecond = microsecond * 10 + u32::from(lane(fourth, i));
        }
        (pair(second, 6), pair(third, 1), microsecond)
    } else {
        let tail = MINUTE_SECOND_UTC.read(s, 12)?;
        (pair(second, 6), pair(tail, 5), 0)
    };
    let hour = pair(second, 3);
    if hour > 23 || minute > 59 || seconds > 59 {
        return None;
    }
    Some(DateTime {
        date: checked_date(first, pair(second, 0))?,
        time: Time {
            hour,
            minute,
            second: seconds,
            microsecond,
        },
        offset_seconds: Some(0),
    })
}

/// `YYYY-MM-DD` at the start of `s` (the caller checks what follows).
fn parse_ymd(s: &[u8]) -> Result<Date, Fault> {
    if let (Some(first), Some(&[d1, d2])) = (YMD.read(s, 0), s.get(8..10)) {
        let (d1, d2) = (d1.wrapping_sub(b'0'), d2.wrapping_sub(b'0'));
        if d1 < 10 && d2 < 10 {
            if let Some(date) = checked_date(first, d1 * 10 + d2) {
                return Ok(date);
            }
        }
    }
    let year = u16::from(two(s, 0)?) * 100 + u16::from(two(s, 2)?);
    expect(s, 4, b'-')?;
    let month = two(s, 5)?;
    expect(s, 7, b'-')?;
    let day = two(s, 8)?;
    if year == 0 {
        return Err(Field::Year.into());
    }
    if month == 0 || month > 12 {
        return Err(Field::Month.into());
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err(Field::Day.into());
    }
    Ok(Date { year, month, day })
}

/// `HH:MM:SS[.f+]` at the start of `s`. Returns the time (after rounding the
/// fraction to microseconds), the bytes consumed, and whether rounding
/// carried past 23:59:59.999999 (the time is then 00:00:00).
fn parse_hms(s: &[u8]) -> Result<(Time, usize, bool), Fault> {
    let hour = two(s, 0)?;
    expect(s, 2, b':')?;
    let minute = two(s, 3)?;
    expect(s, 5, b':')?;
    let second = two(s, 6)?;
    if hour > 23 {
        return Err(Field::Hour.into());
    }
    if minute > 59 {
        return Err(Field::Minute.into());
    }
    if second > 59 {
        return Err(Field::Second.into());
    }
    let mut time = Time {
        hour,
        minute,
        second,
        microsecond: 0,
    };
    if s.get(8) != Some(&b'.') {
        return Ok((time, 8, false));
    }
    let digits = s[9..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len() - 9);
    if digits == 0 {
        return Err(Fault::Malformed);
    }
    let frac = &s[9..9 + digits];
    let mut us = 0u32;
    for i in 0..6 {
        us = us * 10 + frac.get(i).map_or(0, |d| u32::from(d - b'0'));
    }
    // Round half up on the seventh digit, exactly as msgspec does.
    let carry = if frac.get(6).is_some_and(|&d| d >= b'5') {
        us += 1;
        us == 1_000_000
    } else {
        false
    };
    let mut day_carry = false;
    if carry {
        us = 0;
        time.second += 1;
        if time.second == 60 {
            time.second = 0;
            time.minute += 1;
            if time.minute == 60 {
                time.minute = 0;
                time.hour += 1;
                if time.hour == 24 {
                    time.hour = 0;
                    day_carry = true;
                }
            }
        }
    }
    time.microsecond = us;
    Ok((time, 9 + digits, day_carry))
}

/// The whole of `s` as an offset: empty (naive), `Z`/`z`, `±HH:MM`,
/// `±HHMM` or `±HH:MM:SS`.
fn parse_offset(s: &[u8]) -> Result<Option<i32>, Fault> {
    let (negative, rest) = match s {
        [] => return Ok(None),
        [b'Z' | b'z'] => return Ok(Some(0)),
        [b'+', rest @ ..] => (false, rest),
        [b'-', rest @ ..] => (true, rest),
        _ => return Err(Fault::Malformed),
    };
    let (h, m, sec) = match rest.len() {
        4 => (two(rest, 0)?, two(rest, 2)?, 0),
        5 => {
            expect(rest, 2, b':')?;
            (two(rest, 0)?, two(rest, 3)?, 0)
        }
        8 => {
            expect(rest, 2, b':')?;
            expect(rest, 5, b':')?;
            (two(rest, 0)?, two(rest, 3)?, two(rest, 6)?)
        }
        _ => return Err(Fault::Malformed),
    };
    if h > 23 || m > 59 || sec > 59 {
        return Err(Field::Offset.into());
    }
    let total = i32::from(h) * 3600 + i32::from(m) * 60 + i32::from(sec);
    Ok(Some(if negative { -total } else { total }))
}

fn next_day(d: Date) -> Result<Date, Fault> {
    if d.day < days_in_month(d.year, d.month) {
        Ok(Date {
            day: d.day + 1,
            ..d
        })
    } else if d.month < 12 {
        Ok(Date {
            month: d.month + 1,
            day: 1,
            ..d
        })
    } else if d.year < 9999 {
        Ok(Date {
            year: d.year + 1,
            month: 1,
            day: 1,
        })
    } else {
        Err(Fault::Overflow)
    }
}

fn datetime_inner(s: &[u8]) -> Result<DateTime, Fault> {
    if let Some(value) = canonical_utc(s) {
        return Ok(value);
    }
    let mut date = parse_ymd(s)?;
    if !matches!(s.get(10), Some(b'T' | b't' | b' ')) {
        return Err(Fault::Malformed);
    }
    let rest = &s[11..];
    let (time, used, day_carry) = parse_hms(rest)?;
    let offset_seconds = parse_offset(&rest[used..])?;
    if day_carry {
        date = next_day(date)?;
    }
    Ok(DateTime {
        date,
        time,
        offset_seconds,
    })
}

/// Parses an RFC 3339 datetime (see the module docs for the exact forms).
///
/// Validates the calendar (leap years, days per month), rejects leap
/// seconds and hour 24, rounds extra fraction digits half up to
/// microseconds, and limits offsets to less than 24 hours.
#[inline]
pub fn parse_datetime(s: &[u8]) -> Result<DateTime, TextError> {
    datetime_inner(s).map_err(|f| match f {
        Fault::Malformed => TextError::MalformedDatetime,
        Fault::Field(f) => TextError::DatetimeField(f),
        Fault::Overflow => TextError::DatetimeOverflow,
    })
}

/// Parses an RFC 3339 full-date `YYYY-MM-DD` (nothing before or after).
#[inline]
pub fn parse_date(s: &[u8]) -> Result<Date, TextError> {
    let r = if s.len() == 10 {
        parse_ymd(s)
    } else {
        Err(Fault::Malformed)
    };
    r.map_err(|f| match f {
        Fault::Field(f) => TextError::DateField(f),
        _ => TextError::MalformedDate,
    })
}

/// Parses a time of day `HH:MM:SS[.f][offset]`.
///
/// A fraction that rounds past 23:59:59.999999 wraps to 00:00:00, which is
/// what msgspec returns for such input.
#[inline]
pub fn parse_time(s: &[u8]) -> Result<TimeOfDay, TextError> {
    let r = parse_hms(s).and_then(|(time, used, _)| {
        Ok(TimeOfDay {
            time,
            offset_seconds: parse_offset(&s[used..])?,
        })
    });
    r.map_err(|f| match f {
        Fault::Field(f) => TextError::TimeField(f),
        _ => TextError::MalformedTime,
    })
}

const US_PER_DAY: u128 = 86_400_000_000;
/// Integer parts are clamped here: far past the range, still overflow-free.
const INT_CAP: u128 = 1_000_000_000_000_000_000_000_000;
/// Fraction digits kept; later digits are checked but ignored. msgspec keeps
/// eleven (found by comparing thousands of fractional D/H/M inputs).
const FRAC_KEEP: u32 = 11;

/// Parses an ISO 8601 duration into a normalised [`Duration`] (see the
/// module docs for the accepted forms). A fraction is cut to its first 11
/// digits (as msgspec does), then converted exactly and rounded half up to
/// microseconds; for seconds this is the same as rounding on the 7th digit.
pub fn parse_duration(s: &[u8]) -> Result<Duration, TextError> {
    let mut i = 0;
    let negative = match s.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    if !matches!(s.get(i), Some(b'P' | b'p')) {
        return Err(TextError::MalformedDuration);
    }
    i += 1;
    // Largest magnitude Python's timedelta holds for this sign.
    let max_total =
        MAX_DURATION_DAYS as u128 * US_PER_DAY + if negative { 0 } else { US_PER_DAY - 1 };
    let mut total: u128 = 0;
    let mut in_time = false;
    let mut last_rank = 0u8;
    let mut any = false;
    let mut fractional = false;
    while let Some(&c) = s.get(i) {
        if c == b'T' || c == b't' {
            if in_time || !s.get(i + 1).is_some_and(u8::is_ascii_digit) {
                return Err(TextError::MalformedDuration);
            }
            in_time = true;
            i += 1;
            continue;
        }
        if fractional || !c.is_ascii_digit() {
            // Only the last component may have a fraction.
            return Err(TextError::MalformedDuration);
        }
        let mut int: u128 = 0;
        while let Some(d) = s.get(i).filter(|b| b.is_ascii_digit()) {
            int = (int * 10 + u128::from(d - b'0')).min(INT_CAP);
            i += 1;
        }
        let mut frac: u128 = 0;
        let mut scale: u128 = 1;
        if s.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while let Some(d) = s.get(i).filter(|b| b.is_ascii_digit()) {
                if i - start < FRAC_KEEP as usize {
                    frac = frac * 10 + u128::from(d - b'0');
                    scale *= 10;
                }
                i += 1;
            }
            if i == start {
                return Err(TextError::MalformedDuration);
            }
            fractional = true;
        }
        let unit = s.get(i).map_or(0, u8::to_ascii_uppercase);
        // A year and a month have no fixed length: they count what pydantic counts them as
        // (365 and 30 days), so its `P1Y35D` reads as the 400 days it wrote.
        let (rank, unit_us) = match (unit, in_time) {
            (b'Y', false) => (1, 365 * US_PER_DAY),
            (b'M', false) => (2, 30 * US_PER_DAY),
            (b'W', false) => (3, 7 * US_PER_DAY),
            (b'D', false) => (4, US_PER_DAY),
            (b'H', true) => (5, 3_600_000_000),
            (b'M', true) => (6, 60_000_000),
            (b'S', true) => (7, 1_000_000),
            (b'Y' | b'W', true) => return Err(TextError::DurationUnit),
            _ => return Err(TextError::MalformedDuration),
        };
        if rank <= last_rank {
            return Err(TextError::MalformedDuration);
        }
        last_rank = rank;
        any = true;
        i += 1;
        // `int` is capped at 10^27, which times a year's microseconds passes u128: saturated,
        // it is out of range all the same.
        total = total
            .saturating_add(int.saturating_mul(unit_us))
            .saturating_add((frac * unit_us * 2 + scale) / (scale * 2));
        // Checked per component, before later syntax, as msgspec does.
        if total > max_total {
            return Err(TextError::DurationRange);
        }
    }
    if !any {
        return Err(TextError::MalformedDuration);
    }
    // total <= max_total: the day count fits i64, the remainder u64.
    let q = (total / US_PER_DAY) as i64;
    let r = (total % US_PER_DAY) as u64;
    Ok(if !negative || total == 0 {
        Duration {
            days: q,
            seconds: (r / 1_000_000) as u32,
            microseconds: (r % 1_000_000) as u32,
        }
    } else if r == 0 {
        Duration {
            days: -q,
            seconds: 0,
            microseconds: 0,
        }
    } else {
        let rest = US_PER_DAY as u64 - r;
        Duration {
            days: -q - 1,
            seconds: (rest / 1_000_000) as u32,
            microseconds: (rest % 1_000_000) as u32,
        }
    })
}

// ---------------------------------------------------------------- writing

/// `"00" "01" .. "99"`, then again from 100 on: the two ASCII digits of `i % 100` at index
/// `i`, so that a byte-sized part (month, day, hour, minute, second) needs no division.
const PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [b'0' + (i % 100 / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    t
};

/// Writes the two digits of `v % 100` at `buf[at..at + 2]`.
#[inline(always)]
fn put2(buf: &mut [u8], at: usize, v: u32) {
    put_pair(buf, at, (v % 100) as u8);
}

/// Writes the two digits of `v % 100` at `buf[at..at + 2]`, for a byte-sized `v`.
#[inline(always)]
fn put_pair(buf: &mut [u8], at: usize, v: u8) {
    buf[at..at + 2].copy_from_slice(&PAIRS[usize::from(v)]);
}

/// Writes `YYYY-MM-DD` into `buf[0..10]`.
#[inline(always)]
fn put_date(buf: &mut [u8], d: &Date) {
    put2(buf, 0, u32::from(d.year) / 100);
    put2(buf, 2, u32::from(d.year));
    buf[4] = b'-';
    put_pair(buf, 5, d.month);
    buf[7] = b'-';
    put_pair(buf, 8, d.day);
}

/// Writes `HH:MM:SS[.ffffff]` at `buf[at..]`, returning the end index.
#[inline(always)]
fn put_time(buf: &mut [u8], at: usize, t: &Time) -> usize {
    put_pair(buf, at, t.hour);
    buf[at + 2] = b':';
    put_pair(buf, at + 3, t.minute);
    buf[at + 5] = b':';
    put_pair(buf, at + 6, t.second);
    if t.microsecond == 0 {
        return at + 8;
    }
    let us = t.microsecond;
    buf[at + 8] = b'.';
    put2(buf, at + 9, us / 10_000);
    // The last four digits: both pairs are below 100, as `(us / 100) % 100` and `us % 100`.
    let rest = us % 10_000;
    put_pair(buf, at + 11, (rest / 100) as u8);
    put_pair(buf, at + 13, (rest % 100) as u8);
    at + 15
}

/// Writes the offset suffix at `buf[at..]`, returning the end index: `Z` for UTC, `±HH:MM`
/// for whole minutes (as msgspec), and `±HH:MM:SS` (as Python's `isoformat`) for offsets with
/// seconds, which msgspec would round to the minute: nothing is lost.
#[inline(always)]
fn put_offset(buf: &mut [u8], at: usize, offset: Option<i32>) -> usize {
    let Some(off) = offset else {
        return at;
    };
    if off == 0 {
        buf[at] = b'Z';
        return at + 1;
    }
    let magnitude = off.unsigned_abs();
    buf[at] = if off < 0 { b'-' } else { b'+' };
    put2(buf, at + 1, magnitude / 3600);
    buf[at + 3] = b':';
    put2(buf, at + 4, magnitude / 60 % 60);
    if magnitude % 60 == 0 {
        return at + 6;
    }
    buf[at + 6] = b':';
    put2(buf, at + 7, magnitude % 60);
    at + 9
}

/// Appends `YYYY-MM-DDTHH:MM:SS[.ffffff][Z|±HH:MM[:SS]]`, as msgspec does for whole-minute
/// offsets.
///
/// Fields are assumed in range (as produced by Python or by
/// [`parse_datetime`]); out-of-range values are written modulo 100 per
/// two-digit group rather than panicking.
#[inline]
pub fn write_datetime(out: &mut Vec<u8>, dt: &DateTime) {
    let mut buf = [0u8; DATETIME_MAX_LEN];
    let end = format_datetime(&mut buf, dt);
    out.extend_from_slice(&buf[..end]);
}

/// The longest text [`format_datetime`] writes: `YYYY-MM-DDTHH:MM:SS.ffffff±HH:MM:SS`.
pub const DATETIME_MAX_LEN: usize = 35;

/// Writes what [`write_datetime`] appends at the start of `buf`, returning its length (19 to
/// [`DATETIME_MAX_LEN`] bytes), for a caller that makes the text into an object of its own.
#[inline(always)]
pub fn format_datetime(buf: &mut [u8; DATETIME_MAX_LEN], dt: &DateTime) -> usize {
    put_date(buf, &dt.date);
    buf[10] = b'T';
    let end = put_time(buf, 11, &dt.time);
    put_offset(buf, end, dt.offset_seconds)
}

/// `YYYY-MM-DD`, what [`write_date`] appends.
#[inline(always)]
pub fn format_date(d: &Date) -> [u8; 10] {
    let mut buf = [0u8; 10];
    put_date(&mut buf, d);
    buf
}

/// Appends `YYYY-MM-DD`.
#[inline]
pub fn write_date(out: &mut Vec<u8>, d: &Date) {
    out.extend_from_slice(&format_date(d));
}

/// Appends `HH:MM:SS[.ffffff][Z|±HH:MM[:SS]]`, as msgspec does for whole-minute offsets.
#[inline]
pub fn write_time(out: &mut Vec<u8>, t: &TimeOfDay) {
    let mut buf = [0u8; 24];
    let end = put_time(&mut buf, 0, &t.time);
    let end = put_offset(&mut buf, end, t.offset_seconds);
    out.extend_from_slice(&buf[..end]);
}

/// Appends an ISO 8601 duration exactly as msgspec writes a `timedelta`:
/// `P0D` for zero, otherwise `[-]P[<d>D][T<s>[.<f>]S]` where the magnitude
/// is split into whole days and the remaining seconds (< 86400) and the
/// fraction has no trailing zeros. E.g. `timedelta(days=-3, seconds=3661.5)`
/// → `-P2DT82738.5S`.
///
/// Expects a normalised value (`seconds < 86400`, `microseconds < 10^6`).
pub fn write_duration(out: &mut Vec<u8>, d: &Duration) {
    let (negative, days, sub_us) = {
        let sub = u64::from(d.seconds) * 1_000_000 + u64::from(d.microseconds);
        if d.days >= 0 {
            (false, d.days as u64, sub)
        } else if sub == 0 {
            (true, d.days.unsigned_abs(), 0)
        } else {
            (
                true,
                d.days.unsigned_abs() - 1,
                (US_PER_DAY as u64).saturating_sub(sub),
            )
        }
    };
    if days == 0 && sub_us == 0 {
        out.extend_from_slice(b"P0D");
        return;
    }
    let mut ibuf = itoa::Buffer::new();
    if negative {
        out.push(b'-');
    }
    out.push(b'P');
    if days != 0 {
        out.extend_from_slice(ibuf.format(days).as_bytes());
        out.push(b'D');
    }
    if sub_us != 0 {
        out.push(b'T');
        out.extend_from_slice(ibuf.format(sub_us / 1_000_000).as_bytes());
        let us = (sub_us % 1_000_000) as u32;
        if us != 0 {
            let mut frac = [b'.', 0, 0, 0, 0, 0, 0];
            put2(&mut frac, 1, us / 10_000);
            put2(&mut frac, 3, us / 100);
            put2(&mut frac, 5, us);
            let mut len = 7;
            while frac[len - 1] == b'0' {
                len -= 1;
            }
            out.extend_from_slice(&frac[..len]);
        }
        out.push(b'S');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(clippy::too_many_arguments)] // test shorthand: one value per field
    fn dt(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, us: u32, off: Option<i32>) -> DateTime {
        DateTime {
            date: Date {
                year: y,
                month: mo,
                day: d,
            },
            time: Time {
                hour: h,
                minute: mi,
                second: s,
                microsecond: us,
            },
            offset_seconds: off,
        }
    }

    fn tod(h: u8, mi: u8, s: u8, us: u32, off: Option<i32>) -> TimeOfDay {
        TimeOfDay {
            time: Time {
                hour: h,
                minute: mi,
                second: s,
                microsecond: us,
            },
            offset_seconds: off,
        }
    }

    fn dur(days: i64, seconds: u32, microseconds: u32) -> Duration {
        Duration {
            days,
            seconds,
            microseconds,
        }
    }

    fn w_dt(v: &DateTime) -> String {
        let mut out = Vec::new();
        write_datetime(&mut out, v);
        String::from_utf8(out).unwrap()
    }
    fn w_time(v: &TimeOfDay) -> String {
        let mut out = Vec::new();
        write_time(&mut out, v);
        String::from_utf8(out).unwrap()
    }
    fn w_date(v: &Date) -> String {
        let mut out = Vec::new();
        write_date(&mut out, v);
        String::from_utf8(out).unwrap()
    }
    fn w_dur(v: &Duration) -> String {
        let mut out = Vec::new();
        write_duration(&mut out, v);
        String::from_utf8(out).unwrap()
    }

    // Expected strings below are what msgspec 0.23.0 `msgspec.json.encode`
    // printed for the equivalent Python values (the oracle), quotes removed.

    #[test]
    fn write_datetime_digits_match_format_for_every_part_value() {
        // Every in-range value of each part (microseconds in steps that cover each digit
        // position), against the same text made by `format!`.
        let mut cases = Vec::new();
        for year in [1, 9, 10, 99, 100, 999, 1000, 1970, 2024, 9999] {
            cases.push(dt(year, 1, 1, 0, 0, 0, 0, None));
        }
        for part in 0u32..60 {
            let p = part as u8;
            cases.push(dt(2024, 1 + p % 12, 1 + p % 31, p % 24, p, p, 0, Some(0)));
        }
        for us in (1..1_000_000)
            .step_by(997)
            .chain([999_999, 10, 100, 10_000, 100_000])
        {
            cases.push(dt(2024, 12, 31, 23, 59, 59, us, None));
        }
        for case in cases {
            let (d, t) = (case.date, case.time);
            let mut want = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                d.year, d.month, d.day, t.hour, t.minute, t.second
            );
            if t.microsecond != 0 {
                want.push_str(&format!(".{:06}", t.microsecond));
            }
            if case.offset_seconds == Some(0) {
                want.push('Z');
            }
            assert_eq!(w_dt(&case), want);
            let mut buf = [0u8; DATETIME_MAX_LEN];
            let length = format_datetime(&mut buf, &case);
            assert_eq!(&buf[..length], want.as_bytes());
        }
    }

    #[test]
    fn write_datetime_matches_msgspec() {
        let cases: &[(DateTime, &str)] = &[
            (dt(2024, 1, 2, 3, 4, 5, 0, None), "2024-01-02T03:04:05"),
            (
                dt(2024, 1, 2, 3, 4, 5, 123456, None),
                "2024-01-02T03:04:05.123456",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 120000, None),
                "2024-01-02T03:04:05.120000",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 1000, None),
                "2024-01-02T03:04:05.001000",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 1, None),
                "2024-01-02T03:04:05.000001",
            ),
            (dt(2024, 1, 2, 3, 4, 5, 0, Some(0)), "2024-01-02T03:04:05Z"),
            (
                dt(2024, 1, 2, 3, 4, 5, 500, Some(19800)),
                "2024-01-02T03:04:05.000500+05:30",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 0, Some(-8 * 3600)),
                "2024-01-02T03:04:05-08:00",
            ),
            // timezone(timedelta(hours=5, minutes=30, seconds=15)): msgspec writes +05:30 and
            // loses the seconds; polycodec keeps them as isoformat() does.
            (
                dt(2024, 1, 2, 3, 4, 5, 0, Some(19815)),
                "2024-01-02T03:04:05+05:30:15",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 0, Some(-19815)),
                "2024-01-02T03:04:05-05:30:15",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 0, Some(1)),
                "2024-01-02T03:04:05+00:00:01",
            ),
            (dt(1, 1, 1, 0, 0, 0, 0, None), "0001-01-01T00:00:00"),
            (
                dt(9999, 12, 31, 23, 59, 59, 999999, None),
                "9999-12-31T23:59:59.999999",
            ),
            (
                dt(2024, 1, 2, 3, 4, 5, 0, Some(86340)),
                "2024-01-02T03:04:05+23:59",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(w_dt(v), *want, "{v:?}");
        }
    }

    #[test]
    fn write_offset_is_lossless() {
        // Whole minutes as msgspec writes them; seconds kept as Python's isoformat writes them
        // (msgspec would round these to the minute).
        let cases: &[(i32, &str)] = &[
            (0, "Z"),
            (-1, "-00:00:01"),
            (30, "+00:00:30"),
            (60, "+00:01"),
            (-60, "-00:01"),
            (90, "+00:01:30"),
            (19800, "+05:30"),
            (-19801, "-05:30:01"),
            (-8100, "-02:15"),
            (86340, "+23:59"),
            (86399, "+23:59:59"),
            (-86399, "-23:59:59"),
        ];
        for &(off, suffix) in cases {
            let got = w_dt(&dt(2024, 1, 2, 0, 0, 0, 0, Some(off)));
            assert_eq!(got, format!("2024-01-02T00:00:00{suffix}"), "{off}");
            assert_eq!(
                parse_datetime(got.as_bytes()).unwrap().offset_seconds,
                Some(off)
            );
            let got = w_time(&tod(1, 0, 0, 999_999, Some(off)));
            assert_eq!(got, format!("01:00:00.999999{suffix}"), "{off}");
            assert_eq!(
                parse_time(got.as_bytes()).unwrap().offset_seconds,
                Some(off)
            );
        }
    }

    #[test]
    fn write_date_and_time_match_msgspec() {
        let d = |y, m, d| Date {
            year: y,
            month: m,
            day: d,
        };
        assert_eq!(w_date(&d(2024, 2, 29)), "2024-02-29");
        assert_eq!(w_date(&d(1, 1, 1)), "0001-01-01");
        assert_eq!(w_date(&d(9999, 12, 31)), "9999-12-31");
        assert_eq!(w_time(&tod(3, 4, 5, 0, None)), "03:04:05");
        assert_eq!(w_time(&tod(0, 0, 0, 0, None)), "00:00:00");
        assert_eq!(w_time(&tod(3, 4, 5, 6, None)), "03:04:05.000006");
        assert_eq!(w_time(&tod(3, 4, 5, 0, Some(0))), "03:04:05Z");
        assert_eq!(w_time(&tod(3, 4, 5, 0, Some(-8100))), "03:04:05-02:15");
        assert_eq!(
            w_time(&tod(23, 59, 59, 999999, Some(-86340))),
            "23:59:59.999999-23:59"
        );
    }

    #[test]
    fn write_duration_matches_msgspec() {
        let cases: &[(Duration, &str)] = &[
            (dur(0, 0, 0), "P0D"),
            (dur(0, 1, 0), "PT1S"),
            (dur(1, 0, 0), "P1D"),
            (dur(-1, 0, 0), "-P1D"),
            (dur(-1, 86399, 0), "-PT1S"),
            (dur(0, 0, 1), "PT0.000001S"),
            (dur(-1, 86399, 999999), "-PT0.000001S"),
            (dur(3, 3661, 500000), "P3DT3661.5S"),
            (dur(-3, 3661, 500000), "-P2DT82738.5S"),
            (dur(14, 0, 0), "P14D"),
            (dur(1, 3600, 0), "P1DT3600S"),
            (dur(0, 5400, 0), "PT5400S"),
            (dur(0, 60, 0), "PT60S"),
            (dur(999999999, 86399, 999999), "P999999999DT86399.999999S"),
            (dur(-999999999, 0, 0), "-P999999999D"),
            (dur(0, 0, 100), "PT0.0001S"),
            (dur(0, 0, 1000), "PT0.001S"),
            (dur(0, 3600, 0), "PT3600S"),
            (dur(0, 86399, 0), "PT86399S"),
            (dur(1, 0, 1), "P1DT0.000001S"),
        ];
        for (v, want) in cases {
            assert_eq!(w_dur(v), *want, "{v:?}");
        }
    }

    #[test]
    fn parse_datetime_accepts_what_msgspec_accepts() {
        // Inputs msgspec.json.decode(..., type=datetime) accepted, with the
        // value it returned.
        let utc = Some(0);
        let cases: &[(&str, DateTime)] = &[
            ("2024-01-02T03:04:05", dt(2024, 1, 2, 3, 4, 5, 0, None)),
            ("2024-01-02 03:04:05", dt(2024, 1, 2, 3, 4, 5, 0, None)),
            ("2024-01-02t03:04:05", dt(2024, 1, 2, 3, 4, 5, 0, None)),
            ("2024-01-02T03:04:05Z", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            ("2024-01-02T03:04:05z", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            ("2024-01-02 03:04:05Z", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            ("2024-01-02T03:04:05+00:00", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            ("2024-01-02T03:04:05-00:00", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            ("2024-01-02T03:04:05-0000", dt(2024, 1, 2, 3, 4, 5, 0, utc)),
            (
                "2024-01-02T03:04:05+0530",
                dt(2024, 1, 2, 3, 4, 5, 0, Some(19800)),
            ),
            (
                "2024-01-02T03:04:05+05:30",
                dt(2024, 1, 2, 3, 4, 5, 0, Some(19800)),
            ),
            (
                "2024-01-02T03:04:05+23:59",
                dt(2024, 1, 2, 3, 4, 5, 0, Some(86340)),
            ),
            (
                "2024-01-02T03:04:05-23:59",
                dt(2024, 1, 2, 3, 4, 5, 0, Some(-86340)),
            ),
            (
                "2024-01-02T03:04:05.1",
                dt(2024, 1, 2, 3, 4, 5, 100000, None),
            ),
            (
                "2024-01-02T03:04:05.12",
                dt(2024, 1, 2, 3, 4, 5, 120000, None),
            ),
            (
                "2024-01-02T03:04:05.123456",
                dt(2024, 1, 2, 3, 4, 5, 123456, None),
            ),
            (
                "2024-01-02T03:04:05.1234567",
                dt(2024, 1, 2, 3, 4, 5, 123457, None),
            ),
            (
                "2024-01-02T03:04:05.1234565",
                dt(2024, 1, 2, 3, 4, 5, 123457, None),
            ),
            (
                "2024-01-02T03:04:05.1234575",
                dt(2024, 1, 2, 3, 4, 5, 123458, None),
            ),
            (
                "2024-01-02T03:04:05.123456789",
                dt(2024, 1, 2, 3, 4, 5, 123457, None),
            ),
            (
                "2024-01-02T03:04:05.123456789123",
                dt(2024, 1, 2, 3, 4, 5, 123457, None),
            ),
            (
                "2024-01-02T03:04:05.123456789123456789123456789Z",
                dt(2024, 1, 2, 3, 4, 5, 123457, utc),
            ),
            (
                "2024-01-02T03:04:05.0000000000000000000000000009",
                dt(2024, 1, 2, 3, 4, 5, 0, None),
            ),
            (
                "2024-01-02T03:04:05.0000005",
                dt(2024, 1, 2, 3, 4, 5, 1, None),
            ),
            (
                "2024-01-02T03:04:05.0000004999",
                dt(2024, 1, 2, 3, 4, 5, 0, None),
            ),
            (
                "2024-01-02T03:04:05.9999995",
                dt(2024, 1, 2, 3, 4, 6, 0, None),
            ),
            (
                "2024-01-02T23:59:59.9999995",
                dt(2024, 1, 3, 0, 0, 0, 0, None),
            ),
            (
                "2024-02-28T23:59:59.9999999",
                dt(2024, 2, 29, 0, 0, 0, 0, None),
            ),
            (
                "2023-12-31T23:59:59.9999999+01:00",
                dt(2024, 1, 1, 0, 0, 0, 0, Some(3600)),
            ),
            (
                "2024-01-02T03:04:05.1234565+01:00",
                dt(2024, 1, 2, 3, 4, 5, 123457, Some(3600)),
            ),
            (
                "2024-01-02T03:04:05.123Z",
                dt(2024, 1, 2, 3, 4, 5, 123000, utc),
            ),
            (
                "2024-01-02T03:04:05.5+0100",
                dt(2024, 1, 2, 3, 4, 5, 500000, Some(3600)),
            ),
            (
                "2024-01-02T03:04:05.5z",
                dt(2024, 1, 2, 3, 4, 5, 500000, utc),
            ),
            ("0001-01-01T00:00:00", dt(1, 1, 1, 0, 0, 0, 0, None)),
            (
                "0001-01-01T00:00:00+01:00",
                dt(1, 1, 1, 0, 0, 0, 0, Some(3600)),
            ),
            (
                "9999-12-31T23:59:59-01:00",
                dt(9999, 12, 31, 23, 59, 59, 0, Some(-3600)),
            ),
            ("2024-02-29T00:00:00", dt(2024, 2, 29, 0, 0, 0, 0, None)),
            ("2000-02-29T00:00:00", dt(2000, 2, 29, 0, 0, 0, 0, None)),
        ];
        for (s, want) in cases {
            assert_eq!(parse_datetime(s.as_bytes()), Ok(*want), "{s}");
        }
    }

    #[test]
    fn parse_datetime_accepts_python_isoformat_extras() {
        // datetime.isoformat() for an offset with seconds (msgspec rejects
        // this form; Python's fromisoformat reads it).
        assert_eq!(
            parse_datetime(b"2024-01-02T03:04:05+05:30:15"),
            Ok(dt(2024, 1, 2, 3, 4, 5, 0, Some(19815)))
        );
        assert_eq!(
            parse_datetime(b"2024-01-02T03:04:05-05:30:15"),
            Ok(dt(2024, 1, 2, 3, 4, 5, 0, Some(-19815)))
        );
        // isoformat(' ') with microseconds
        assert_eq!(
            parse_datetime(b"2024-01-02 03:04:05.000007"),
            Ok(dt(2024, 1, 2, 3, 4, 5, 7, None))
        );
    }

    #[test]
    fn parse_datetime_rejects() {
        use Field::*;
        use TextError::*;
        // Every input here was rejected by msgspec too ("Invalid RFC3339
        // encoded datetime"); the comments note what Python's
        // fromisoformat does where it differs.
        let cases: &[(&str, TextError)] = &[
            ("2024-01-02T03:04:05+05", MalformedDatetime), // py accepts
            ("2024-01-02T03:04:05+00", MalformedDatetime),
            ("2024-01-02T03:04:05+24:00", DatetimeField(Offset)),
            ("2024-01-02T03:04:05+23:60", DatetimeField(Offset)),
            ("2024-01-02T03:04:05+2400", DatetimeField(Offset)),
            ("2024-01-02T03:04:05+05:30:60", DatetimeField(Offset)),
            ("2024-01-02T03:04:05+5:30", MalformedDatetime),
            ("2024-01-02T03:04:05+05:3", MalformedDatetime),
            ("2024-01-02T03:04:05+053", MalformedDatetime),
            ("2024-01-02T03:04:05+01:", MalformedDatetime),
            ("2024-01-02T03:04:05+1", MalformedDatetime),
            ("2024-01-02T03:04:05+01:00:00.5", MalformedDatetime), // py accepts
            ("2024-01-02T03:04:05+0100:00", MalformedDatetime),
            ("9999-12-31T23:59:59.9999995", DatetimeOverflow), // py truncates
            ("2024-01-02T03:04:05.", MalformedDatetime),
            ("2024-01-02T03:04:05.Z", MalformedDatetime),
            ("2024-01-02T03:04:05.+01:00", MalformedDatetime),
            ("2024-01-02T03:04:05,5", MalformedDatetime), // py accepts
            ("2024-01-02T03:04:60", DatetimeField(Second)),
            ("2024-12-31T23:59:60Z", DatetimeField(Second)),
            ("2024-01-02T24:00:00", DatetimeField(Hour)),
            ("2024-01-02T24:00", MalformedDatetime),
            ("0000-01-01T00:00:00", DatetimeField(Year)),
            ("2024-01-02T03:04", MalformedDatetime), // py accepts
            ("2024-01-02T03", MalformedDatetime),    // py accepts
            ("2024-01-02", MalformedDatetime),       // py accepts
            ("20240102T030405", MalformedDatetime),  // py accepts
            ("2024-02-30T00:00:00", DatetimeField(Day)),
            ("2023-02-29T00:00:00", DatetimeField(Day)),
            ("1900-02-29T00:00:00", DatetimeField(Day)),
            ("2024-04-31T00:00:00", DatetimeField(Day)),
            ("2024-13-01T00:00:00", DatetimeField(Month)),
            ("2024-00-01T00:00:00", DatetimeField(Month)),
            ("2024-01-00T00:00:00", DatetimeField(Day)),
            ("2024-01-02T25:00:00", DatetimeField(Hour)),
            ("2024-01-02T03:61:00", DatetimeField(Minute)),
            ("2024-01-02T03:04:05 ", MalformedDatetime),
            (" 2024-01-02T03:04:05", MalformedDatetime),
            ("+2024-01-02T03:04:05", MalformedDatetime),
            ("2024-1-02T03:04:05", MalformedDatetime),
            ("2024-01-02T03:04:05Z ", MalformedDatetime),
            ("2024-01-02T03:04:05ZZ", MalformedDatetime),
            ("2024-01-02_03:04:05", MalformedDatetime),
            ("2024-01-02T03:04:0a", MalformedDatetime),
            ("2024-01-02T03:04Z", MalformedDatetime), // py accepts
            ("2024-01-02T03:04+01:00", MalformedDatetime), // py accepts
            ("", MalformedDatetime),
            ("2024-01-02T", MalformedDatetime),
            ("2024-01-02T03:04:05\u{0}", MalformedDatetime),
            ("２024-01-02T03:04:05", MalformedDatetime),
        ];
        for (s, want) in cases {
            assert_eq!(parse_datetime(s.as_bytes()), Err(*want), "{s}");
        }
    }

    #[test]
    fn parse_date_cases() {
        use Field::*;
        use TextError::*;
        let d = |y, m, d| Date {
            year: y,
            month: m,
            day: d,
        };
        // Accepted by msgspec with these values.
        assert_eq!(parse_date(b"2024-01-02"), Ok(d(2024, 1, 2)));
        assert_eq!(parse_date(b"2024-02-29"), Ok(d(2024, 2, 29)));
        assert_eq!(parse_date(b"0001-01-01"), Ok(d(1, 1, 1)));
        assert_eq!(parse_date(b"9999-12-31"), Ok(d(9999, 12, 31)));
        // Rejected by msgspec ("Invalid RFC3339 encoded date").
        let bad: &[(&str, TextError)] = &[
            ("2023-02-29", DateField(Day)),
            ("0000-01-01", DateField(Year)),
            ("20240102", MalformedDate), // py accepts
            ("2024-1-2", MalformedDate),
            ("2024-01-02T00:00:00", MalformedDate),
            ("2024-01-02 ", MalformedDate),
            ("2024-W01-1", MalformedDate), // py accepts
            ("2024-001", MalformedDate),
            ("+2024-01-02", MalformedDate),
            ("2024-01-32", DateField(Day)),
            ("2024-04-31", DateField(Day)),
            ("2024-13-01", DateField(Month)),
            ("", MalformedDate),
        ];
        for (s, want) in bad {
            assert_eq!(parse_date(s.as_bytes()), Err(*want), "{s}");
        }
    }

    #[test]
    fn parse_time_cases() {
        use Field::*;
        use TextError::*;
        // Accepted by msgspec with these values.
        let ok: &[(&str, TimeOfDay)] = &[
            ("03:04:05", tod(3, 4, 5, 0, None)),
            ("03:04:05.5", tod(3, 4, 5, 500000, None)),
            ("03:04:05.123456", tod(3, 4, 5, 123456, None)),
            ("03:04:05.1234565", tod(3, 4, 5, 123457, None)),
            ("03:04:05.1234567Z", tod(3, 4, 5, 123457, Some(0))),
            ("23:59:59.9999995", tod(0, 0, 0, 0, None)), // msgspec wraps
            ("03:04:05.9999995", tod(3, 4, 6, 0, None)),
            ("00:00:00.0000005", tod(0, 0, 0, 1, None)),
            ("03:04:05Z", tod(3, 4, 5, 0, Some(0))),
            ("03:04:05z", tod(3, 4, 5, 0, Some(0))),
            ("03:04:05+00:00", tod(3, 4, 5, 0, Some(0))),
            ("03:04:05-0000", tod(3, 4, 5, 0, Some(0))),
            ("03:04:05+05:30", tod(3, 4, 5, 0, Some(19800))),
            ("03:04:05+0530", tod(3, 4, 5, 0, Some(19800))),
            ("03:04:05-23:59", tod(3, 4, 5, 0, Some(-86340))),
            // Python isoformat() extra (msgspec rejects it):
            ("03:04:05+05:30:15", tod(3, 4, 5, 0, Some(19815))),
        ];
        for (s, want) in ok {
            assert_eq!(parse_time(s.as_bytes()), Ok(*want), "{s}");
        }
        // Rejected by msgspec ("Invalid RFC3339 encoded time").
        let bad: &[(&str, TextError)] = &[
            ("03:04:05+05", MalformedTime), // py accepts
            ("03:04", MalformedTime),       // py accepts
            ("03:04Z", MalformedTime),      // py accepts
            ("03", MalformedTime),          // py accepts
            ("030405", MalformedTime),      // py accepts
            ("24:00:00", TimeField(Hour)),
            ("23:59:60", TimeField(Second)),
            ("23:60:00", TimeField(Minute)),
            ("T03:04:05", MalformedTime), // py accepts
            ("t03:04:05", MalformedTime),
            ("03:04:05.", MalformedTime),
            ("3:04:05", MalformedTime),
            ("03:04:05+2400", TimeField(Offset)),
            ("03:04:05+05:60", TimeField(Offset)),
            ("03:04:05 ", MalformedTime),
            ("", MalformedTime),
        ];
        for (s, want) in bad {
            assert_eq!(parse_time(s.as_bytes()), Err(*want), "{s}");
        }
    }

    #[test]
    fn parse_duration_accepts_what_msgspec_accepts() {
        // Accepted by msgspec.json.decode(..., type=timedelta), with the
        // normalised (days, seconds, microseconds) it returned.
        let cases: &[(&str, Duration)] = &[
            ("P0D", dur(0, 0, 0)),
            ("PT0S", dur(0, 0, 0)),
            ("-PT0S", dur(0, 0, 0)),
            ("-P0D", dur(0, 0, 0)),
            ("P1D", dur(1, 0, 0)),
            ("-P1D", dur(-1, 0, 0)),
            ("+P1D", dur(1, 0, 0)),
            ("p1d", dur(1, 0, 0)),
            ("P1d", dur(1, 0, 0)),
            ("PT1S", dur(0, 1, 0)),
            ("PT1.5S", dur(0, 1, 500000)),
            ("PT0.5S", dur(0, 0, 500000)),
            ("PT0.000001S", dur(0, 0, 1)),
            ("PT0.0000005S", dur(0, 0, 1)),
            ("PT0.0000015S", dur(0, 0, 2)),
            ("PT0.0000025S", dur(0, 0, 3)),
            ("PT0.00000049S", dur(0, 0, 0)),
            ("PT0.9999995S", dur(0, 1, 0)),
            ("PT1.1234567891S", dur(0, 1, 123457)),
            ("PT1M", dur(0, 60, 0)),
            ("PT1H", dur(0, 3600, 0)),
            ("PT1.5H", dur(0, 5400, 0)),
            ("PT1.5M", dur(0, 90, 0)),
            ("P1.5D", dur(1, 43200, 0)),
            ("PT1H1M1S", dur(0, 3661, 0)),
            ("PT1H1.5M", dur(0, 3690, 0)),
            ("PT1H1S", dur(0, 3601, 0)),
            ("P1DT1H", dur(1, 3600, 0)),
            ("P1DT1.5H", dur(1, 5400, 0)),
            ("P1DT2H3M4.5S", dur(1, 7384, 500000)),
            ("-P1DT2H3M4.5S", dur(-2, 79015, 500000)),
            ("-p1dt1h", dur(-2, 82800, 0)),
            ("P1Dt1H", dur(1, 3600, 0)),
            ("Pt1H", dur(0, 3600, 0)),
            ("P1DT1h1m1s", dur(1, 3661, 0)),
            ("P1DT86399.9999995S", dur(2, 0, 0)),
            ("P999999999D", dur(999999999, 0, 0)),
            ("P999999999DT86399.999999S", dur(999999999, 86399, 999999)),
            ("-P999999999D", dur(-999999999, 0, 0)),
            ("-P999999999DT0.0000004S", dur(-999999999, 0, 0)),
            ("PT86400S", dur(1, 0, 0)),
            ("PT100000S", dur(1, 13600, 0)),
            ("PT1000000000000S", dur(11574074, 6400, 0)),
            ("PT01S", dur(0, 1, 0)),
            ("P01D", dur(1, 0, 0)),
            ("PT00000000000000000000000000001S", dur(0, 1, 0)),
            ("P00000000000000000000000000001D", dur(1, 0, 0)),
            ("PT0.0000000000000000000000000000000001S", dur(0, 0, 0)),
            ("PT1.0000000000000000000000001S", dur(0, 1, 0)),
            ("PT1.5000000000000000000000000000000000H", dur(0, 5400, 0)),
            ("PT23.99999999999H", dur(1, 0, 0)),
            ("P3DT3661.5S", dur(3, 3661, 500000)),
            ("-P2DT82738.5S", dur(-3, 3661, 500000)),
            ("PT0.1234567H", dur(0, 444, 444120)),
            ("PT0.00000001H", dur(0, 0, 36)),
            ("PT0.0000001H", dur(0, 0, 360)),
            ("PT0.000000001H", dur(0, 0, 4)),
            ("P0.0000001D", dur(0, 0, 8640)),
            ("P0.00000001D", dur(0, 0, 864)),
            ("P0.1234567891234D", dur(0, 10666, 666580)),
            ("P0.0000000000058D", dur(0, 0, 0)),
            ("P83.0493182433060055230D", dur(83, 4261, 96221)),
            ("P81.380337141939954D", dur(81, 32861, 129063)),
            ("PT0.1M", dur(0, 6, 0)),
            ("PT0.0000001M", dur(0, 0, 6)),
            ("PT0.00000001M", dur(0, 0, 1)),
            ("PT0.000000008M", dur(0, 0, 0)),
            ("PT0.000000009M", dur(0, 0, 1)),
        ];
        for (s, want) in cases {
            assert_eq!(parse_duration(s.as_bytes()), Ok(*want), "{s}");
        }
    }

    #[test]
    fn parse_duration_reads_years_months_and_weeks_as_pydantic_does() {
        // What pydantic 2 writes (a year of 365 days first) and reads (a month of 30 days, a
        // week of 7), with the timedelta its TypeAdapter gave for each.
        let cases: &[(&str, Duration)] = &[
            ("P1Y35D", dur(400, 0, 0)),
            ("P1Y", dur(365, 0, 0)),
            ("P2Y", dur(730, 0, 0)),
            ("P1Y1DT3.5S", dur(366, 3, 500000)),
            ("-P1Y34DT23H59M59.999995S", dur(-400, 0, 5)),
            (
                "P2739726Y9DT23H59M59.999999S",
                dur(999999999, 86399, 999999),
            ),
            ("-P2739726Y9D", dur(-999999999, 0, 0)),
            ("P1M", dur(30, 0, 0)),
            ("P12M", dur(360, 0, 0)),
            ("P1W", dur(7, 0, 0)),
            ("P1.5W", dur(10, 43200, 0)),
            ("P0.5M", dur(15, 0, 0)),
            ("P0.5Y", dur(182, 43200, 0)),
            ("P0.0000001Y", dur(0, 3, 153600)),
            ("P1Y2M3W4D", dur(450, 0, 0)),
            ("P1M1W", dur(37, 0, 0)),
            ("P1YT1S", dur(365, 1, 0)),
            ("+P1Y", dur(365, 0, 0)),
            ("-P1Y", dur(-365, 0, 0)),
            ("p1y2m", dur(425, 0, 0)),
        ];
        for (s, want) in cases {
            assert_eq!(parse_duration(s.as_bytes()), Ok(*want), "{s}");
        }
    }

    #[test]
    fn parse_duration_rejects() {
        use TextError::*;
        // Each rejected by msgspec with the matching kind of error
        // (Invalid ISO8601 duration / Only units 'D', 'H', 'M', and 'S' are
        // supported / Duration is out of range), but for years, months and weeks
        // before T, which are read as pydantic reads them (see the test below).
        let cases: &[(&str, TextError)] = &[
            ("PT1W", DurationUnit),
            ("PT1Y", DurationUnit),
            ("PT1Y1S", DurationUnit),
            ("P1D1W", MalformedDuration),
            ("P1M1Y", MalformedDuration),
            ("P1W1M", MalformedDuration),
            ("P1Y1Y", MalformedDuration),
            ("P1.5Y1M", MalformedDuration),
            ("PY", MalformedDuration),
            ("P2739726Y10D", DurationRange),
            ("P2739727Y", DurationRange),
            ("-P2739726Y10D", DurationRange),
            ("P33333334M", DurationRange),
            ("P142857143W", DurationRange),
            ("P99999999999999999999999999999999Y", DurationRange),
            ("PT1.5H1M", MalformedDuration),
            ("PT1.0H1M", MalformedDuration),
            ("PT1.5M1S", MalformedDuration),
            ("PT1.5S1S", MalformedDuration),
            ("P0.5DT1S", MalformedDuration),
            ("P1DT", MalformedDuration),
            ("PT", MalformedDuration),
            ("P", MalformedDuration),
            ("-P", MalformedDuration),
            ("-", MalformedDuration),
            ("", MalformedDuration),
            ("P1D1D", MalformedDuration),
            ("PT1S1H", MalformedDuration),
            ("PT1H1H", MalformedDuration),
            ("P1D2H", MalformedDuration),
            ("PT1D", MalformedDuration),
            ("P1S", MalformedDuration),
            ("P1H", MalformedDuration),
            ("P1X", MalformedDuration),
            ("P1DT1H1M1S1", MalformedDuration),
            ("PT1H1M1S ", MalformedDuration),
            ("P1DTT1H", MalformedDuration),
            ("PTP1D", MalformedDuration),
            ("--P1D", MalformedDuration),
            ("-+P1D", MalformedDuration),
            ("PT1e3S", MalformedDuration),
            ("PT1,5S", MalformedDuration),
            ("PT.5S", MalformedDuration),
            ("PT1.S", MalformedDuration),
            ("P+1D", MalformedDuration),
            ("P-1D", MalformedDuration),
            ("PT-1S", MalformedDuration),
            (" P1D", MalformedDuration),
            ("P1D ", MalformedDuration),
            ("1D", MalformedDuration),
            ("P1000000000D", DurationRange),
            ("-P999999999DT1S", DurationRange),
            ("P999999999DT86400S", DurationRange),
            ("P999999999DT86399.9999995S", DurationRange),
            ("-P999999999DT0.0000005S", DurationRange),
            ("PT99999999999999999999S", DurationRange),
            ("P99999999999999999999D", DurationRange),
            ("PT2562047788015215H", DurationRange),
            ("PT153722867280912930M", DurationRange),
            ("PT9223372036854775807S", DurationRange),
            ("PT9223372036854775808S", DurationRange),
            ("P106751991167300D", DurationRange),
            (
                "P99999999999999999999999999999999999999999999DT99999999999999999999999999999H",
                DurationRange,
            ),
        ];
        for (s, want) in cases {
            assert_eq!(parse_duration(s.as_bytes()), Err(*want), "{s}");
        }
    }

    /// A small deterministic generator for the round-trip sweeps.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.0 >> 33
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn datetime_round_trips() {
        let mut rng = Lcg(7);
        for _ in 0..20_000 {
            let year = 1 + rng.below(9999) as u16;
            let month = 1 + rng.below(12) as u8;
            let day = 1 + rng.below(u64::from(days_in_month(year, month))) as u8;
            let us = match rng.below(3) {
                0 => 0,
                1 => rng.below(1_000_000) as u32,
                _ => rng.below(1000) as u32 * 1000,
            };
            let off = match rng.below(3) {
                0 => None,
                1 => Some(0),
                _ => Some((rng.below(2 * 1439 + 1) as i32 - 1439) * 60),
            };
            let v = dt(
                year,
                month,
                day,
                rng.below(24) as u8,
                rng.below(60) as u8,
                rng.below(60) as u8,
                us,
                off,
            );
            let s = w_dt(&v);
            assert_eq!(parse_datetime(s.as_bytes()), Ok(v), "{s}");
            let t = TimeOfDay {
                time: v.time,
                offset_seconds: v.offset_seconds,
            };
            let s = w_time(&t);
            assert_eq!(parse_time(s.as_bytes()), Ok(t), "{s}");
            let s = w_date(&v.date);
            assert_eq!(parse_date(s.as_bytes()), Ok(v.date), "{s}");
        }
    }

    #[test]
    fn every_calendar_day_round_trips() {
        let mut count = 0;
        for year in [1u16, 4, 100, 400, 1900, 2000, 2023, 2024, 9999] {
            for month in 1..=12 {
                for day in 1..=31u8 {
                    let d = Date { year, month, day };
                    let s = w_date(&d);
                    if day <= days_in_month(year, month) {
                        assert_eq!(parse_date(s.as_bytes()), Ok(d));
                        count += 1;
                    } else {
                        assert_eq!(
                            parse_date(s.as_bytes()),
                            Err(TextError::DateField(Field::Day))
                        );
                    }
                }
            }
        }
        assert_eq!(count, 9 * 365 + 4); // 4, 400, 2000, 2024 are leap
    }

    #[test]
    fn duration_round_trips() {
        let mut rng = Lcg(11);
        let check = |v: Duration| {
            let s = w_dur(&v);
            assert_eq!(parse_duration(s.as_bytes()), Ok(v), "{s}");
        };
        for days in [-999_999_999, -1, 0, 1, 999_999_999] {
            for (s, us) in [(0, 0), (0, 1), (86399, 999_999), (1, 0), (43200, 500_000)] {
                check(dur(days, s, us));
            }
        }
        for _ in 0..20_000 {
            let days = rng.below(2 * 999_999_999 + 1) as i64 - 999_999_999;
            let days = if rng.below(2) == 0 { days % 1000 } else { days };
            let v = dur(
                days,
                rng.below(86400) as u32,
                if rng.below(2) == 0 {
                    0
                } else {
                    rng.below(1_000_000) as u32
                },
            );
            if v.days == -999_999_999 || v.days == 999_999_999 || v.days.abs() < 999_999_999 {
                check(v);
            }
        }
    }

    #[test]
    fn messages_are_specific() {
        assert_eq!(
            TextError::DatetimeField(Field::Month).message(),
            "invalid datetime: month out of range"
        );
        assert_eq!(
            TextError::TimeField(Field::Offset).to_string(),
            "invalid time: UTC offset out of range"
        );
        assert_eq!(
            TextError::DateField(Field::Day).message(),
            "invalid date: day out of range"
        );
        assert!(TextError::DurationRange.message().contains("out of range"));
    }
}
