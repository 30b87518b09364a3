//! The standard library's objects as pickles carry them, shared by both readers (`from_opcodes.rs` and
//! `from_arena.rs`): the packed states of `datetime`, `date` and `time`, the bytes of protocol 2's
//! `_codecs.encode(text, "latin1")`, a UUID's int, Python 2's module names, and bytes or
//! bytearray values. Each reader finds these in its own way (in the opcode stream, in the
//! machine's arena) and reports a failure in its own way (the fast path gives up, the general
//! path raises); what the bytes mean is decided here, once.

use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateTime, PyTime, PyTzInfo};

use crate::errors::Result;
use crate::plan::BytesSpec;
use crate::py::Obj;

/// A `datetime.datetime` state as its `__reduce__` packs it: 10 bytes, the year (big-endian),
/// the month (its high bit the fold), day, hour, minute, second and the microsecond
/// (big-endian, 3 bytes).
pub(super) struct DateTimeState {
    year: i32,
    month: u8,
    day: u8,
    hour: u8,
    minute: u8,
    second: u8,
    microsecond: u32,
    fold: bool,
}

impl DateTimeState {
    /// `None` unless `data` is 10 bytes long.
    pub(super) fn parse(data: &[u8]) -> Option<Self> {
        let &[y1, y2, month, day, hour, minute, second, u1, u2, u3] = data else {
            return None;
        };
        Some(DateTimeState {
            year: i32::from(u16::from_be_bytes([y1, y2])),
            month: month & 0x7f,
            day,
            hour,
            minute,
            second,
            microsecond: u32::from_be_bytes([0, u1, u2, u3]),
            fold: month & 0x80 != 0,
        })
    }

    /// The datetime, or the exception `datetime` raises for fields out of range.
    pub(super) fn build<'py>(
        &self,
        py: Python<'py>,
        zone: Option<&Bound<'py, PyTzInfo>>,
    ) -> PyResult<Bound<'py, PyDateTime>> {
        PyDateTime::new_with_fold(
            py,
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.microsecond,
            zone,
            self.fold,
        )
    }
}

/// A `datetime.date` state: 4 bytes, the year (big-endian), month and day.
pub(super) struct DateState {
    year: i32,
    month: u8,
    day: u8,
}

impl DateState {
    /// `None` unless `data` is 4 bytes long.
    pub(super) fn parse(data: &[u8]) -> Option<Self> {
        let &[y1, y2, month, day] = data else {
            return None;
        };
        Some(DateState {
            year: i32::from(u16::from_be_bytes([y1, y2])),
            month,
            day,
        })
    }

    /// The date, or the exception `date` raises for fields out of range.
    pub(super) fn build<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDate>> {
        PyDate::new(py, self.year, self.month, self.day)
    }
}

/// A `datetime.time` state: 6 bytes, the hour (its high bit the fold), minute, second and the
/// microsecond (big-endian, 3 bytes).
pub(super) struct TimeState {
    hour: u8,
    minute: u8,
    second: u8,
    microsecond: u32,
    fold: bool,
}

impl TimeState {
    /// `None` unless `data` is 6 bytes long.
    pub(super) fn parse(data: &[u8]) -> Option<Self> {
        let &[hour, minute, second, u1, u2, u3] = data else {
            return None;
        };
        Some(TimeState {
            hour: hour & 0x7f,
            minute,
            second,
            microsecond: u32::from_be_bytes([0, u1, u2, u3]),
            fold: hour & 0x80 != 0,
        })
    }

    /// The time, or the exception `time` raises for fields out of range.
    pub(super) fn build<'py>(
        &self,
        py: Python<'py>,
        zone: Option<&Bound<'py, PyTzInfo>>,
    ) -> PyResult<Bound<'py, PyTime>> {
        PyTime::new_with_fold(
            py,
            self.hour,
            self.minute,
            self.second,
            self.microsecond,
            zone,
            self.fold,
        )
    }
}

/// The bytes `_codecs.encode(text, "latin1")` returns (how protocol 2 writes bytes and the
/// states above), computed without calling it: `None` if a character is above U+00FF.
pub(super) fn latin1(text: &str) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
}

/// A UUID's int from `LONG1`/`LONG4` bytes (little-endian two's complement): `None` unless it
/// is non-negative and fits 128 bits.
pub(super) fn uuid_bits(data: &[u8]) -> Option<u128> {
    let negative = data.last().is_some_and(|b| b & 0x80 != 0);
    let significant = data
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    if negative || significant > 16 {
        return None;
    }
    let mut bytes = [0u8; 16];
    bytes[..significant].copy_from_slice(&data[..significant]);
    Some(u128::from_le_bytes(bytes))
}

/// Module names as Python 2 picklers (and protocol 2 with `fix_imports`) write them.
pub(super) fn module_alias(module: &[u8]) -> &[u8] {
    match module {
        b"__builtin__" => b"builtins",
        b"copy_reg" => b"copyreg",
        other => other,
    }
}

/// A bytes or bytearray value (as the plan's node asks), its length checked.
pub(super) fn make_bytes<'py>(py: Python<'py>, spec: &BytesSpec, data: &[u8]) -> Result<Obj<'py>> {
    spec.length
        .check(data.len(), crate::plan::LengthUnit::Bytes)?;
    Ok(spec.new_value(py, data)?)
}
