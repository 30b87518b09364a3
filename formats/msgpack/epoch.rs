//! Calendar dates to and from days since 1970-01-01 (proleptic Gregorian), for the timestamp
//! extension, which counts seconds since the Unix epoch in UTC.

use crate::text::temporal::{Date, DateTime, Time};

/// Days from 1970-01-01 to `date` (negative before it). Python dates start in year 1, so the
/// arithmetic stays unsigned until the final offset (cheaper divisions).
pub fn days_from_civil(date: &Date) -> i64 {
    let (year, month, day) = (
        u32::from(date.year),
        u32::from(date.month),
        u32::from(date.day),
    );
    // Years start in March so the leap day is the last day of the "year" (January and
    // February of year 1 fall in year 0, still not negative).
    let year = if month <= 2 { year - 1 } else { year };
    let (era, year_of_era) = (i64::from(year / 400), year % 400);
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + i64::from(day_of_era) - 719_468
}

/// An aware datetime as seconds since the epoch and nanoseconds.
pub fn to_timestamp(value: &DateTime) -> (i64, u32) {
    let offset = i64::from(value.offset_seconds.unwrap_or(0));
    let seconds = days_from_civil(&value.date) * 86_400
        + i64::from(value.time.hour) * 3600
        + i64::from(value.time.minute) * 60
        + i64::from(value.time.second)
        - offset;
    (seconds, value.time.microsecond * 1000)
}

/// Seconds from 0001-01-01 to 1970-01-01.
const SECONDS_BEFORE_EPOCH: i64 = 719_162 * 86_400;
/// Seconds from 0001-01-01 to 10000-01-01.
const SECONDS_IN_PYTHON_YEARS: i64 = 3_652_059 * 86_400;

/// Whether a timestamp's whole seconds fall in years 1..=9999 (UTC).
pub fn in_python_years(seconds: i64) -> bool {
    seconds
        .checked_add(SECONDS_BEFORE_EPOCH)
        .is_some_and(|since| (0..SECONDS_IN_PYTHON_YEARS).contains(&since))
}

/// A timestamp as a UTC datetime, with nanoseconds rounded to the nearest microsecond (half
/// up, as msgspec does); `None` outside years 1..=9999.
pub fn from_timestamp(seconds: i64, nanoseconds: u32) -> Option<DateTime> {
    let mut micro = nanoseconds / 1000;
    if nanoseconds % 1000 >= 500 {
        micro += 1;
    }
    // Seconds since 0001-01-01: from here on everything is non-negative, so the divisions by
    // constants compile to multiplications.
    let mut since_year_one = seconds.checked_add(SECONDS_BEFORE_EPOCH)?;
    if micro == 1_000_000 {
        micro = 0;
        since_year_one = since_year_one.checked_add(1)?;
    }
    if !(0..SECONDS_IN_PYTHON_YEARS).contains(&since_year_one) {
        return None;
    }
    let since_year_one = since_year_one as u64;
    let days = (since_year_one / 86_400) as u32;
    let second_of_day = (since_year_one % 86_400) as u32;
    let (year, month, day) = civil_from_days_since_year_one(days);
    Some(DateTime {
        date: Date { year, month, day },
        time: Time {
            hour: (second_of_day / 3600) as u8,
            minute: (second_of_day / 60 % 60) as u8,
            second: (second_of_day % 60) as u8,
            microsecond: micro,
        },
        offset_seconds: Some(0),
    })
}

/// The date `days` after 0001-01-01 (at most 3_652_058, 9999-12-31), with Neri and
/// Schneider's Euclidean affine functions: multiplications and shifts only, no division.
#[inline]
fn civil_from_days_since_year_one(days: u32) -> (u16, u8, u8) {
    // Days since 0000-03-01, the start of a computational year that ends with the leap day.
    let days = days + 306;
    let n1 = 4 * days + 3;
    let century = n1 / 146_097;
    let day_of_century = n1 % 146_097 / 4;
    let n2 = 4 * u64::from(day_of_century) + 3;
    let p2 = 2_939_745 * n2;
    let year_of_century = (p2 >> 32) as u32;
    let day_of_year = ((p2 & 0xffff_ffff) as u32) / 2_939_745 / 4;
    let n3 = 2141 * day_of_year + 197_913;
    let month = n3 >> 16;
    let day = (n3 & 0xffff) / 2141 + 1;
    let january_or_february = day_of_year >= 306;
    let year = 100 * century + year_of_century + u32::from(january_or_february);
    let month = if january_or_february {
        month - 12
    } else {
        month
    };
    (year as u16, month as u8, day as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_days_across_the_calendar() {
        for (year, month, day) in [
            (1, 1, 1),
            (1, 3, 1),
            (1600, 2, 29),
            (1969, 12, 31),
            (1970, 1, 1),
            (2000, 2, 29),
            (2000, 3, 1),
            (2100, 3, 1),
            (9999, 12, 31),
        ] {
            let date = Date { year, month, day };
            let seconds = days_from_civil(&date) * 86_400 + 3661;
            let back = from_timestamp(seconds, 2_500).unwrap();
            assert_eq!(back.date, date);
            assert_eq!(
                (back.time.hour, back.time.minute, back.time.second),
                (1, 1, 1)
            );
            assert_eq!(back.time.microsecond, 3);
        }
        assert_eq!(
            days_from_civil(&Date {
                year: 1970,
                month: 1,
                day: 1
            }),
            0
        );
        assert_eq!(
            days_from_civil(&Date {
                year: 1,
                month: 1,
                day: 1
            }),
            -719_162
        );
    }

    #[test]
    fn every_day_of_python_years_converts_both_ways() {
        let mut previous = (0u16, 0u8, 0u8);
        for days in 0..3_652_059u32 {
            let (year, month, day) = civil_from_days_since_year_one(days);
            assert!(
                (1..=12).contains(&month) && (1..=31).contains(&day),
                "{days}"
            );
            assert!((year, month, day) > previous, "{days}");
            previous = (year, month, day);
            let date = Date { year, month, day };
            assert_eq!(days_from_civil(&date), i64::from(days) - 719_162, "{days}");
        }
        assert_eq!(previous, (9999, 12, 31));
    }

    #[test]
    fn refuses_years_python_cannot_hold() {
        assert!(from_timestamp(-62_135_596_801, 0).is_none());
        assert!(from_timestamp(253_402_300_800, 0).is_none());
        assert!(from_timestamp(i64::MAX, 999_999_999).is_none());
    }
}
