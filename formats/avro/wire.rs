//! Avro's binary primitives: zigzag varints, length-prefixed bytes, little-endian floats, and
//! the calendar arithmetic behind the date/time logical types. No Python here.

use super::{Error, Result};

#[inline]
pub fn write_long(out: &mut Vec<u8>, value: i64) {
    let mut n = ((value << 1) ^ (value >> 63)) as u64;
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline]
pub fn write_bytes(out: &mut Vec<u8>, data: &[u8]) {
    // Fallible for large data (small writes keep the exact growth of before): a str or bytes
    // too large for the memory left ends the encode in a MemoryError (see
    // `errors::output_result`), not an abort.
    if data.len() >= crate::growth::LARGE && !crate::growth::output_room(out, data.len() + 10) {
        return;
    }
    write_long(out, data.len() as i64);
    out.extend_from_slice(data);
}

/// A cursor over the input; every read is bounds-checked and fails with a DecodeError.
pub struct Input<'a> {
    pub data: &'a [u8],
    pub pos: usize,
}

#[cold]
pub fn truncated(what: &str, pos: usize) -> Error {
    Error::decode(format!(
        "malformed Avro: input ends inside {what} at byte {pos}"
    ))
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// A zigzag varint of at most 10 bytes; an overlong or overflowing one is refused.
    #[inline]
    pub fn long(&mut self) -> Result<i64> {
        // Most lengths, counts, indices and small numbers fit in one byte.
        if let Some(&byte) = self.data.get(self.pos) {
            if byte < 0x80 {
                self.pos += 1;
                return Ok(i64::from(byte >> 1) ^ -i64::from(byte & 1));
            }
        }
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(truncated("a varint", self.pos));
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(Error::decode(format!(
                    "malformed Avro: varint longer than 64 bits at byte {}",
                    self.pos - 1
                )));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        Ok(((value >> 1) as i64) ^ -((value & 1) as i64))
    }

    /// A varint that must be an Avro int (32 bits).
    #[inline]
    pub fn int(&mut self) -> Result<i32> {
        let start = self.pos;
        let value = self.long()?;
        i32::try_from(value).map_err(|_| {
            Error::decode(format!(
                "malformed Avro: int {value} out of 32-bit range at byte {start}"
            ))
        })
    }

    /// A length or count: non-negative and within `limit`.
    #[inline]
    pub fn length(&mut self, what: &str) -> Result<usize> {
        let start = self.pos;
        let value = self.long()?;
        if value < 0 {
            return Err(Error::decode(format!(
                "malformed Avro: negative {what} {value} at byte {start}"
            )));
        }
        Ok(value as usize)
    }

    #[inline]
    pub fn fixed(&mut self, size: usize) -> Result<&'a [u8]> {
        if size > self.remaining() {
            return Err(Error::decode(format!(
                "malformed Avro: {size} bytes needed at byte {}, only {} left",
                self.pos,
                self.remaining()
            )));
        }
        let slice = &self.data[self.pos..self.pos + size];
        self.pos += size;
        Ok(slice)
    }

    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let size = self.length("length")?;
        self.fixed(size)
    }

    #[inline]
    pub fn boolean(&mut self) -> Result<bool> {
        match self.fixed(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(Error::decode(format!(
                "malformed Avro: boolean byte {other} at byte {}",
                self.pos - 1
            ))),
        }
    }

    #[inline]
    pub fn float(&mut self) -> Result<f32> {
        let raw = self.fixed(4)?;
        Ok(f32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    #[inline]
    pub fn double(&mut self) -> Result<f64> {
        let raw = self.fixed(8)?;
        let mut buf = [0u8; 8];
        buf.copy_from_slice(raw);
        Ok(f64::from_le_bytes(buf))
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01, for days in `MIN_DAYS..=MAX_DAYS` (callers check): the
/// arithmetic runs unsigned on days counted from 0000-03-01, which compiles to multiplications.
pub fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = (days + 719_468) as u64;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        (yoe + era * 400) as i64 + i64::from(m <= 2),
        m as u8,
        d as u8,
    )
}

/// Days of 0001-01-01 and 9999-12-31, the range of Python's `date`.
pub const MIN_DAYS: i64 = -719_162;
pub const MAX_DAYS: i64 = 2_932_896;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for value in [0i64, -1, 1, 63, -64, 64, i64::MAX, i64::MIN, 300, -300] {
            let mut out = Vec::new();
            write_long(&mut out, value);
            let mut input = Input::new(&out);
            assert_eq!(input.long().unwrap(), value);
            assert_eq!(input.remaining(), 0);
        }
    }

    #[test]
    fn overlong_varints_fail() {
        let data = [0xffu8; 11];
        assert!(Input::new(&data).long().is_err());
        assert!(Input::new(&[0x80]).long().is_err());
    }

    #[test]
    fn calendar_round_trips() {
        for days in [MIN_DAYS, -1, 0, 1, 11_016, 19_000, MAX_DAYS] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, i64::from(m), i64::from(d)), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(MIN_DAYS), (1, 1, 1));
        assert_eq!(civil_from_days(MAX_DAYS), (9999, 12, 31));
    }
}
