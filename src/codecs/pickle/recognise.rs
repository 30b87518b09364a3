//! The pickle shapes both readers recognise (`from_opcodes.rs`, which reads the opcodes once
//! and builds as it goes, and `from_arena.rs`, which converts the inert machine's arena): which
//! globals are which standard constructors (`Standard`) and which plan types each builds, how
//! many arguments each call takes, the packed states of `datetime`, `date` and `time`, the
//! encodings of protocol 2's `_codecs.encode(text, "latin1")`, a UUID's state keys and int,
//! a timedelta's arguments, Python 2's module names, and bytes or bytearray values. Each reader
//! finds these in its own way (in the opcode stream, in the arena) and reports a failure in its
//! own way (the fast path gives up, the general path raises); what a shape means is decided
//! here, once.

use pyo3::prelude::*;
use pyo3::types::{PyDate, PyDateTime, PyDelta, PyTime, PyTzInfo};

use crate::errors::Result;
use crate::plan::{BytesSpec, Node};
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

/// The globals both readers recognise by name alone: the standard constructors and helpers a
/// pickle of the supported types calls. What a name means is decided here; each reader checks a
/// global against these (never imports it) and builds the value with its own constructors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Standard {
    DateTime,
    Date,
    Time,
    TimeDelta,
    /// `datetime.timezone(offset[, name])`.
    TimeZone,
    Decimal,
    Uuid,
    /// `zoneinfo.ZoneInfo`, pickled as `getattr(ZoneInfo, "_unpickle")(key, from_cache)`.
    ZoneInfo,
    /// `builtins.set(items)` and `frozenset(items)`: how protocols 2 and 3 write sets.
    Set,
    FrozenSet,
    /// `builtins.bytes()` (protocol 2's empty bytes) and `bytearray(...)`.
    Bytes,
    ByteArray,
    /// `_codecs.encode(text, "latin1")`: how protocol 2 writes bytes and packed states.
    CodecsEncode,
    /// `builtins.getattr(owner, name)`: how protocols 2 and 3 name a nested class, an enum
    /// member by name, and `ZoneInfo._unpickle`.
    GetAttr,
    /// `polycodec.UNSET`, pickled by reference (`UnsetType.__reduce__`).
    Unset,
}

impl Standard {
    /// The module (after `module_alias`) and name the global is written with.
    #[inline]
    pub(super) const fn names(self) -> (&'static [u8], &'static [u8]) {
        match self {
            Standard::DateTime => (b"datetime", b"datetime"),
            Standard::Date => (b"datetime", b"date"),
            Standard::Time => (b"datetime", b"time"),
            Standard::TimeDelta => (b"datetime", b"timedelta"),
            Standard::TimeZone => (b"datetime", b"timezone"),
            Standard::Decimal => (b"decimal", b"Decimal"),
            Standard::Uuid => (b"uuid", b"UUID"),
            Standard::ZoneInfo => (b"zoneinfo", b"ZoneInfo"),
            Standard::Set => (b"builtins", b"set"),
            Standard::FrozenSet => (b"builtins", b"frozenset"),
            Standard::Bytes => (b"builtins", b"bytes"),
            Standard::ByteArray => (b"builtins", b"bytearray"),
            Standard::CodecsEncode => (b"_codecs", b"encode"),
            Standard::GetAttr => (b"builtins", b"getattr"),
            Standard::Unset => (b"polycodec", b"UNSET"),
        }
    }

    /// Whether `module`/`name` (module already aliased) is this global.
    #[inline]
    pub(super) fn is(self, module: &[u8], name: &[u8]) -> bool {
        let (own_module, own_name) = self.names();
        name == own_name && module == own_module
    }

    /// The standard global `module`/`name` is, if any.
    pub(super) fn of(module: &[u8], name: &[u8]) -> Option<Standard> {
        const ALL: [Standard; 15] = [
            Standard::DateTime,
            Standard::Date,
            Standard::Time,
            Standard::TimeDelta,
            Standard::TimeZone,
            Standard::Decimal,
            Standard::Uuid,
            Standard::ZoneInfo,
            Standard::Set,
            Standard::FrozenSet,
            Standard::Bytes,
            Standard::ByteArray,
            Standard::CodecsEncode,
            Standard::GetAttr,
            Standard::Unset,
        ];
        ALL.into_iter().find(|global| global.is(module, name))
    }

    /// How many arguments its `REDUCE` takes in the pickles the stdlib writes (the readers
    /// refuse, or give up on, any other count).
    pub(super) fn arguments(self) -> std::ops::RangeInclusive<usize> {
        match self {
            // (state) or (state, tzinfo)
            Standard::DateTime | Standard::Time => 1..=2,
            // (state); (digits)
            Standard::Date | Standard::Decimal => 1..=1,
            // (days, seconds, microseconds), trailing zeros left out
            Standard::TimeDelta => 0..=3,
            // (offset) or (offset, name)
            Standard::TimeZone => 1..=2,
            // ZoneInfo._unpickle(key, from_cache); _codecs.encode(text, encoding); getattr
            Standard::ZoneInfo | Standard::CodecsEncode | Standard::GetAttr => 2..=2,
            // set(), set(items)
            Standard::Set | Standard::FrozenSet => 0..=1,
            // bytes(); bytearray(), bytearray(data), bytearray(text, encoding)
            Standard::Bytes => 0..=0,
            Standard::ByteArray => 0..=2,
            // NEWOBJ with no arguments (the state comes by BUILD); a bare global
            Standard::Uuid | Standard::Unset => 0..=0,
        }
    }

    /// Whether a call of this global makes a value for a position of type `node`.
    pub(super) fn builds(self, node: &Node) -> bool {
        matches!(
            (node, self),
            (Node::DateTime(_), Standard::DateTime)
                | (Node::Date, Standard::Date)
                | (Node::Time(_), Standard::Time)
                | (Node::TimeDelta, Standard::TimeDelta)
                | (Node::Decimal(_), Standard::Decimal)
                | (Node::Uuid, Standard::Uuid)
                | (
                    Node::Bytes(_),
                    Standard::CodecsEncode | Standard::Bytes | Standard::ByteArray
                )
                | (Node::Sequence(_), Standard::Set | Standard::FrozenSet)
        )
    }
}

/// The encodings `_codecs.encode(text, encoding)` is accepted with (protocol 2 writes "latin1").
#[inline]
pub(super) fn is_latin1_encoding(encoding: &[u8]) -> bool {
    matches!(encoding, b"latin1" | b"latin-1")
}

/// The attribute `getattr(zoneinfo.ZoneInfo, ...)` names in a pickled `ZoneInfo`.
pub(super) const ZONEINFO_UNPICKLE: &[u8] = b"_unpickle";

/// A key of a pickled UUID's state dict (`UUID.__getstate__`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum UuidKey {
    /// The 128-bit value.
    Int,
    /// `SafeUUID`, which is not kept.
    IsSafe,
}

impl UuidKey {
    pub(super) fn of(key: &[u8]) -> Option<UuidKey> {
        match key {
            b"int" => Some(UuidKey::Int),
            b"is_safe" => Some(UuidKey::IsSafe),
            _ => None,
        }
    }
}

/// The arguments of `datetime.timedelta(days, seconds, microseconds)` as the stdlib pickles it
/// (ints, trailing zeros left out), gathered one at a time.
#[derive(Default)]
pub(super) struct TimeDeltaArgs {
    parts: [i32; 3],
    count: usize,
}

/// Why a timedelta argument was not taken.
pub(super) enum TimeDeltaArgError {
    /// More than three arguments.
    TooMany,
    /// A component beyond an i32 (the stdlib's own limits are checked when it is built).
    OutOfRange,
}

impl TimeDeltaArgs {
    pub(super) fn push(&mut self, number: i64) -> std::result::Result<(), TimeDeltaArgError> {
        let slot = self
            .parts
            .get_mut(self.count)
            .ok_or(TimeDeltaArgError::TooMany)?;
        *slot = i32::try_from(number).map_err(|_| TimeDeltaArgError::OutOfRange)?;
        self.count += 1;
        Ok(())
    }

    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The timedelta (normalized, as its constructor does), or the exception `timedelta`
    /// raises beyond its range.
    pub(super) fn build<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDelta>> {
        let [days, seconds, microseconds] = self.parts;
        PyDelta::new(py, days, seconds, microseconds, true)
    }
}
