"""The one catalogue of types and values every format is tested with (tests/test_types_matrix.py).

Each :class:`Entry` is a type, one value of it and, for every format, what to expect:

* :class:`Wire` -- supported: polycodec round-trips the value, and the format's oracle reads
  polycodec's bytes as ``wire`` and writes ``wire`` as bytes polycodec reads back (JSON:
  ``json`` and ``msgspec.json``; MessagePack: ``msgpack`` and ``msgspec.msgpack``; Avro:
  ``fastavro`` and apache ``avro`` with the codec's schema; pickle: the stdlib ``pickle``);
* :class:`Refused` -- ``Codec(type, format)`` refuses the type when it compiles, with a message;
* :class:`Unencodable` -- the type compiles, but this value cannot be written (an ``EncodeError``).

A format that is not named in an entry gets its default: JSON and MessagePack expect the entry's
JSON form (``jsonable``), Avro the dict form :func:`test_avro_support.plain` derives from the
value, pickle the value itself. A new format adds its column to :data:`DEFAULTS` and the oracle
in the matrix test, and gets the whole catalogue at once.

Format-specific checks (exact bytes, wire-level edge cases, schemas, options) stay in the
per-format test files.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Dict, FrozenSet, List, Literal, NamedTuple, Optional, Set, Tuple
from typing import TypedDict, Union

import annotated_types

import polycodec
from json_models import (
    EVERYTHING,
    EVERYTHING_JSON,
    MINUS_0800,
    PLUS_0530,
    UTC,
    Color,
    Everything,
    Level,
    Mode,
    Movie,
    Pair,
    Point,
    UserId,
)

#: The expected wire form is derived from the value (Avro: ``plain(value)``).
DERIVED: Any = object()
#: The value decodes back to itself.
SAME: Any = object()


@dataclasses.dataclass(frozen=True)
class Wire:
    """Supported. ``wire`` is what the format's oracle reads from polycodec's output (and what it
    writes for polycodec to read); ``decoded`` what polycodec decodes, when not the value itself."""

    wire: Any = DERIVED
    decoded: Any = SAME
    #: msgspec is an oracle for this value (JSON, MessagePack).
    msgspec: bool = True
    #: msgspec writes the very same bytes (JSON floats are spelled differently).
    same_bytes: bool = True
    #: Apache avro is an oracle for this value (besides fastavro).
    apache: bool = True
    #: The oracle writes the value as polycodec does (Avro: fastavro and apache avro pick another
    #: union branch for some values, e.g. ``1`` in ``Union[int, float]`` as the double 1.0).
    oracle_writes: bool = True


@dataclasses.dataclass(frozen=True)
class Refused:
    """``Codec(type, format)`` raises ``error`` matching ``match`` when it compiles the type."""

    match: str
    error: type[Exception] = TypeError


@dataclasses.dataclass(frozen=True)
class Unencodable:
    """The type compiles but encoding the value raises ``EncodeError`` matching ``match``."""

    match: str


Expectation = Union[Wire, Refused, Unencodable]
#: The key of ``Entry.formats`` that stands for every format (one not named otherwise).
EVERY = "*"
#: The shapes the matrix runs each entry in (see tests/test_types_matrix.py).
SHAPES = ("top", "field", "list", "many", "field-many")


@dataclasses.dataclass(frozen=True)
class Entry:
    id: str
    tp: Any
    value: Any
    #: The value's JSON form (``json.loads`` of the output); also the default MessagePack form.
    jsonable: Any = None
    #: Per format, the expectation for every shape, or a mapping shape -> expectation for the
    #: shapes that differ (the others get the format's default).
    formats: Mapping[str, Union[Expectation, Mapping[str, Expectation]]] = dataclasses.field(
        default_factory=dict
    )

    def expect(self, format: str, shape: str) -> Expectation:
        given = self.formats.get(format, self.formats.get(EVERY))
        if isinstance(given, Mapping):
            given = given.get(shape)
        if given is None:
            return DEFAULTS[format](self)
        return given


def _json_default(entry: Entry) -> Expectation:
    return Wire(entry.jsonable)


DEFAULTS = {
    "json": _json_default,
    "msgpack": _json_default,
    "avro": lambda entry: Wire(),
    "pickle": lambda entry: Wire(),
}


def E(
    id: str, tp: Any, value: Any, jsonable: Any = None, *, every: Any = None, **formats: Any
) -> Entry:
    if every is not None:
        formats[EVERY] = every
    return Entry(id, tp, value, jsonable, formats)


class Hue(enum.Enum):
    """Values that are not the names (JSON and MessagePack write values, Avro names)."""

    RED = "r"
    GREEN = "g"
    BLUE = "b"


class Sides(NamedTuple):
    left: int
    right: str


class Film(TypedDict):
    title: str
    year: int


@dataclasses.dataclass
class Square:
    side: int


@dataclasses.dataclass
class Circle:
    radius: float


#: Records sharing a union need a tag field where the wire does not say which alternative follows
#: (``unions_need_tag`` in ``_polycodec.FORMATS``).
UNTAGGED = Refused("cannot be told apart: they need a shared field")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def utc(value: datetime.datetime) -> datetime.datetime:
    return value.astimezone(UTC)


def aware(value: datetime.datetime) -> dict[str, Expectation]:
    """MessagePack writes an aware datetime as a timestamp, Avro as UTC micros: both decode it
    back in UTC."""
    return {
        "msgpack": Wire(utc(value), decoded=utc(value)),
        "avro": Wire(decoded=utc(value)),
    }


BIG_INT = Unencodable("64 bits")
AVRO_BIG_INT = Unencodable("out of range for an Avro long")
AVRO_ANY = Refused("Any has no Avro form")
AVRO_KEYS = Refused("Avro maps have str keys only")
AVRO_TUPLE = Refused("fixed-length tuple has no faithful Avro form")
AVRO_TIMEDELTA = Refused("timedelta has no faithful Avro form")
AVRO_NAIVE = Unencodable("naive datetime cannot be written as Avro timestamp")
AVRO_AWARE_TIME = Unencodable("aware time cannot be written as Avro time")
#: fastavro and apache avro write these union values in another branch than polycodec.
AVRO_OTHER_BRANCH = Wire(oracle_writes=False)


def avro_decimal_string(text: str) -> Wire:
    """A Decimal without max_digits/decimal_places is an Avro string (the string fallback)."""
    return Wire(text)


Money = Annotated[Decimal, polycodec.Meta(max_digits=12, decimal_places=2)]
Naive = Annotated[datetime.datetime, polycodec.Meta(tz=False)]

ENTRIES: list[Entry] = [
    E("none", type(None), None, None),
    E("none-literal", None, None, None),
    E("true", bool, True, True),
    E("false", bool, False, False),
    E("int-zero", int, 0, 0),
    E("int-one", int, 1, 1),
    E("int-fixint-max", int, 127, 127),
    E("int-uint8", int, 200, 200),
    E("int-uint16", int, 60000, 60000),
    E("int-uint32", int, 2**32 - 1, 2**32 - 1),
    E("int-2-31", int, 2**31, 2**31),
    E("int-minus-one", int, -1, -1),
    E("int-negative-fixint", int, -32, -32),
    E("int-int8", int, -100, -100),
    E("int-int16", int, -30000, -30000),
    E("int-int32", int, -(2**31), -(2**31)),
    E("int-negative", int, -12345, -12345),
    E("int64-max", int, 2**63 - 1, 2**63 - 1),
    E("int64-min", int, -(2**63), -(2**63)),
    E("uint64-max", int, 2**64 - 1, 2**64 - 1, avro=AVRO_BIG_INT),
    E("int-beyond-64-bits", int, 2**64, 2**64, msgpack=BIG_INT, avro=AVRO_BIG_INT),
    E("int-huge-positive", int, 3**200, 3**200, msgpack=BIG_INT, avro=AVRO_BIG_INT),
    E("int-huge-negative", int, -(7**150), -(7**150), msgpack=BIG_INT, avro=AVRO_BIG_INT),
    E("int-below-int64", int, -(2**63) - 1, -(2**63) - 1, msgpack=BIG_INT, avro=AVRO_BIG_INT),
    E("float", float, 1.5, 1.5, json=Wire(1.5, same_bytes=False)),
    E("float-zero", float, 0.0, 0.0, json=Wire(0.0, same_bytes=False)),
    E("float-negative", float, -1.5, -1.5, json=Wire(-1.5, same_bytes=False)),
    E("float-negative-zero", float, -0.0, -0.0, json=Wire(-0.0, same_bytes=False)),
    E("float-tiny", float, 5e-324, 5e-324, json=Wire(5e-324, same_bytes=False)),
    E("float-1e300", float, 1e300, 1e300, json=Wire(1e300, same_bytes=False)),
    E(
        "float-big",
        float,
        1.7976931348623157e308,
        1.7976931348623157e308,
        json=Wire(1.7976931348623157e308, same_bytes=False),
    ),
    E("float-tenth", float, 0.1, 0.1, json=Wire(0.1, same_bytes=False)),
    E("float-integral", float, 3.0, 3.0, json=Wire(3.0, same_bytes=False)),
    E("float-inf", float, float("inf"), json=Unencodable("finite"), msgpack=Wire(float("inf"))),
    E("str-empty", str, "", ""),
    E("str-ascii", str, "hello", "hello"),
    E("str-abc", str, "abc", "abc"),
    E("str-latin", str, "héllo wörld", "héllo wörld"),
    E("str-31", str, "x" * 31, "x" * 31),
    E("str-str8", str, "y" * 32, "y" * 32),
    E("str-str16", str, "z" * 300, "z" * 300),
    E("str-str32", str, "w" * 70000, "w" * 70000),
    E("str-unicode", str, "héllo wörld ✓ 日本 😀", "héllo wörld ✓ 日本 😀"),
    E("str-astral", str, "😀" * 3, "😀" * 3),
    E("str-escapes", str, 'q"b\\s/\n\r\t\b\f', 'q"b\\s/\n\r\t\b\f'),
    E("str-control", str, "\x00\x01\x1f\x7f", "\x00\x01\x1f\x7f"),
    E("str-separators", str, "\u2028\u2029", "\u2028\u2029"),
    E("str-separator-nul", str, "\u2028\x00", "\u2028\x00"),
    E("bytes", bytes, b"\x00\x01\xfe\xff", "AAH+/w==", msgpack=Wire(b"\x00\x01\xfe\xff")),
    E("bytes-empty", bytes, b"", "", msgpack=Wire(b"")),
    E("bytes-padding", bytes, b"ab", "YWI=", msgpack=Wire(b"ab")),
    E("bytes-20", bytes, b"\x00\xff" * 10, b64(b"\x00\xff" * 10), msgpack=Wire(b"\x00\xff" * 10)),
    E("bytes-bin16", bytes, b"\x07" * 300, b64(b"\x07" * 300), msgpack=Wire(b"\x07" * 300)),
    E("bytes-bin32", bytes, b"\x08" * 70000, b64(b"\x08" * 70000), msgpack=Wire(b"\x08" * 70000)),
    E("bytearray", bytearray, bytearray(b"xyz"), "eHl6", msgpack=Wire(b"xyz")),
    E("decimal", Decimal, Decimal("3.14159"), "3.14159", avro=avro_decimal_string("3.14159")),
    E("decimal-negative", Decimal, Decimal("-0.001"), "-0.001", avro=avro_decimal_string("-0.001")),
    E("decimal-exponent", Decimal, Decimal("1E+30"), "1E+30", avro=avro_decimal_string("1E+30")),
    E(
        "decimal-negative-exponent",
        Decimal,
        Decimal("-1E+30"),
        "-1E+30",
        avro=avro_decimal_string("-1E+30"),
    ),
    E(
        "decimal-trailing-zeros",
        Decimal,
        Decimal("2.500"),
        "2.500",
        avro=avro_decimal_string("2.500"),
    ),
    E("decimal-1.50", Decimal, Decimal("1.50"), "1.50", avro=avro_decimal_string("1.50")),
    E(
        "decimal-small",
        Decimal,
        Decimal("0.000001"),
        "0.000001",
        avro=avro_decimal_string("0.000001"),
    ),
    E(
        "decimal-big",
        Decimal,
        Decimal("123456789012345678901234567890.5"),
        "123456789012345678901234567890.5",
        avro=avro_decimal_string("123456789012345678901234567890.5"),
    ),
    E("money-zero", Money, Decimal("0.00"), "0.00"),
    E("money-negative", Money, Decimal("-12.34"), "-12.34"),
    E("money-max", Money, Decimal("9999999999.99"), "9999999999.99"),
    E(
        "datetime-naive",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5),
        "2020-01-02T03:04:05",
        avro=AVRO_NAIVE,
    ),
    E(
        "datetime-micro",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
        "2020-01-02T03:04:05.000006",
        avro=AVRO_NAIVE,
    ),
    E(
        "datetime-utc",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, tzinfo=UTC),
        "2020-01-02T00:00:00Z",
        **aware(datetime.datetime(2020, 1, 2, tzinfo=UTC)),
    ),
    E(
        "datetime-utc-micro",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 0, 0, 0, 5, tzinfo=UTC),
        "2020-01-02T00:00:00.000005Z",
        **aware(datetime.datetime(2020, 1, 2, 0, 0, 0, 5, tzinfo=UTC)),
    ),
    E(
        "datetime-utc-noon",
        datetime.datetime,
        datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        "2024-05-01T12:00:00Z",
        **aware(datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)),
    ),
    E(
        "datetime-beyond-2106",
        datetime.datetime,
        datetime.datetime(2200, 1, 1, tzinfo=UTC),
        "2200-01-01T00:00:00Z",
        **aware(datetime.datetime(2200, 1, 1, tzinfo=UTC)),
    ),
    E(
        "datetime-before-1970",
        datetime.datetime,
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        "1969-12-31T23:59:59.999999Z",
        **aware(datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
    ),
    E(
        "datetime-before-1970-micro",
        datetime.datetime,
        datetime.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        "1969-12-31T23:59:59.000001Z",
        **aware(datetime.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC)),
    ),
    E(
        "datetime-utc-min",
        datetime.datetime,
        datetime.datetime.min.replace(tzinfo=UTC),
        "0001-01-01T00:00:00Z",
        **aware(datetime.datetime.min.replace(tzinfo=UTC)),
    ),
    E(
        "datetime-utc-max",
        datetime.datetime,
        datetime.datetime.max.replace(tzinfo=UTC),
        "9999-12-31T23:59:59.999999Z",
        **aware(datetime.datetime.max.replace(tzinfo=UTC)),
    ),
    E(
        "datetime-offset",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530),
        "2020-01-02T03:04:05.120000+05:30",
        **aware(datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530)),
    ),
    E(
        "datetime-negative-offset",
        datetime.datetime,
        datetime.datetime(1970, 1, 1, tzinfo=MINUS_0800),
        "1970-01-01T00:00:00-08:00",
        **aware(datetime.datetime(1970, 1, 1, tzinfo=MINUS_0800)),
    ),
    E(
        "datetime-min",
        datetime.datetime,
        datetime.datetime.min,
        "0001-01-01T00:00:00",
        avro=AVRO_NAIVE,
    ),
    E(
        "datetime-max",
        datetime.datetime,
        datetime.datetime.max,
        "9999-12-31T23:59:59.999999",
        avro=AVRO_NAIVE,
    ),
    E(
        "naive-micro",
        Naive,
        datetime.datetime(2024, 5, 1, 12, 0, 0, 5),
        "2024-05-01T12:00:00.000005",
    ),
    E("naive-1900", Naive, datetime.datetime(1900, 2, 28), "1900-02-28T00:00:00"),
    E("date", datetime.date, datetime.date(2024, 2, 29), "2024-02-29"),
    E("date-epoch", datetime.date, datetime.date(1970, 1, 1), "1970-01-01"),
    E("date-min", datetime.date, datetime.date.min, "0001-01-01"),
    E("date-max", datetime.date, datetime.date.max, "9999-12-31"),
    E("time-midnight", datetime.time, datetime.time(0, 0), "00:00:00"),
    E("time", datetime.time, datetime.time(23, 59, 59), "23:59:59"),
    E("time-micro", datetime.time, datetime.time(0, 0, 0, 999999), "00:00:00.999999"),
    E("time-max", datetime.time, datetime.time(23, 59, 59, 999999), "23:59:59.999999"),
    E(
        "time-utc",
        datetime.time,
        datetime.time(12, 30, tzinfo=UTC),
        "12:30:00Z",
        avro=AVRO_AWARE_TIME,
    ),
    E(
        "time-offset",
        datetime.time,
        datetime.time(12, 30, tzinfo=MINUS_0800),
        "12:30:00-08:00",
        avro=AVRO_AWARE_TIME,
    ),
    E("timedelta-zero", datetime.timedelta, datetime.timedelta(0), "P0D", avro=AVRO_TIMEDELTA),
    E("timedelta-days", datetime.timedelta, datetime.timedelta(days=2), "P2D", avro=AVRO_TIMEDELTA),
    E(
        "timedelta-seconds",
        datetime.timedelta,
        datetime.timedelta(seconds=90),
        "PT90S",
        avro=AVRO_TIMEDELTA,
    ),
    E(
        "timedelta-mixed",
        datetime.timedelta,
        datetime.timedelta(days=1, seconds=2, microseconds=3),
        "P1DT2.000003S",
        avro=AVRO_TIMEDELTA,
    ),
    E(
        "timedelta-negative",
        datetime.timedelta,
        datetime.timedelta(days=-1, seconds=5),
        "-PT86395S",
        avro=AVRO_TIMEDELTA,
    ),
    E(
        "uuid",
        uuid.UUID,
        uuid.UUID("c0a80101-aaaa-4bbb-8ccc-0123456789ab"),
        "c0a80101-aaaa-4bbb-8ccc-0123456789ab",
    ),
    E(
        "uuid-version-1",
        uuid.UUID,
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "12345678-1234-5678-1234-567812345678",
    ),
    E("uuid-nil", uuid.UUID, uuid.UUID(int=0), "00000000-0000-0000-0000-000000000000"),
    E("enum", Color, Color.RED, "red"),
    E("enum-green", Color, Color.GREEN, "green"),
    E("enum-value-not-name", Hue, Hue.RED, "r"),
    E("enum-value-not-name-last", Hue, Hue.BLUE, "b"),
    E("optional-enum-value-not-name-none", Optional[Hue], None, None),
    E("optional-enum-value-not-name", Optional[Hue], Hue.GREEN, "g"),
    E("int-enum", Level, Level.LOW, 1),
    E("int-enum-high", Level, Level.HIGH, 2),
    E("str-enum", Mode, Mode.FAST, "fast"),
    E("literal-str", Literal["a", "b"], "b", "b"),
    E("literal-str-first", Literal["a", "b"], "a", "a"),
    E("literal-int", Literal[1, 2, 3], 2, 2),
    E("literal-int-first", Literal[1, 2, 3], 1, 1),
    E("literal-int-pair-1", Literal[1, 2], 1, 1),
    E("literal-int-pair-2", Literal[1, 2], 2, 2),
    E(
        "literal-bool",
        Literal[True],
        True,
        True,
        json=Wire(True, msgspec=False),
        msgpack=Wire(True, msgspec=False),
    ),
    E("literal-none", Literal["x", None], None, None),
    E("literal-mixed", Literal["x", 7], 7, 7, avro=Refused("mixing str, int and bool")),
    E("literal-none-only", Optional[Literal["on"]], None, None),
    E("optional-some", Optional[int], 5, 5),
    E("optional-none", Optional[int], None, None),
    E("optional-pep604", int | None, 5, 5),
    E("optional-str-none", Optional[str], None, None),
    E("optional-str", Optional[str], "x", "x"),
    E("optional-enum-none", Optional[Color], None, None),
    E("optional-enum", Optional[Color], Color.GREEN, "green"),
    E("union-int", Union[int, str], 1, 1),
    E("union-str", Union[int, str], "1", "1"),
    E("union-str-word", Union[int, str], "one", "one"),
    E("union-int-float-int", Union[int, float], 1, 1, avro=AVRO_OTHER_BRANCH),
    E(
        "union-int-float-float",
        Union[int, float],
        1.0,
        1.0,
        json=Wire(1.0, same_bytes=False),
    ),
    E("union-bytes-int", Union[bytes, int], b"\x01", "AQ==", msgpack=Wire(b"\x01")),
    E("union-none-bytes-float-none", Union[None, bytes, float], None, None),
    E(
        "union-none-bytes-float-bytes",
        Union[None, bytes, float],
        b"x",
        "eA==",
        msgpack=Wire(b"x"),
    ),
    E(
        "union-none-bytes-float-float",
        Union[None, bytes, float],
        2.5,
        2.5,
        json=Wire(2.5, same_bytes=False),
    ),
    E(
        "union-datetime-none",
        Optional[datetime.datetime],
        datetime.datetime(2021, 5, 6, tzinfo=UTC),
        "2021-05-06T00:00:00Z",
        **aware(datetime.datetime(2021, 5, 6, tzinfo=UTC)),
    ),
    E("union-list-dict", Union[list[int], dict[str, int]], {"a": 1}, {"a": 1}),
    E(
        "union-bool-int-str-none",
        Union[bool, int, str, None],
        False,
        False,
        avro=AVRO_OTHER_BRANCH,
    ),
    E("union-dataclass-str", Union[Point, str], Point(1, 2), {"x": 1, "y": 2}),
    E(
        "union-untagged-records-first",
        Union[Square, Circle],
        Square(2),
        json=UNTAGGED,
        msgpack=UNTAGGED,
    ),
    E(
        "union-untagged-records-second",
        Union[Square, Circle],
        Circle(0.5),
        json=UNTAGGED,
        msgpack=UNTAGGED,
    ),
    E("list", list[int], [1, 2, 3], [1, 2, 3]),
    E("list-empty", list[str], [], []),
    E("list-array16", list[int], list(range(20)), list(range(20))),
    E("typing-list", List[str], ["a"], ["a"]),
    E("typing-list-int", List[int], [1, 2, 3], [1, 2, 3]),
    E("typing-list-empty", List[int], [], []),
    E("sequence", Sequence[int], [1, 2], [1, 2]),
    E("nested-list", list[list[Optional[int]]], [[1, None], [], [3]], [[1, None], [], [3]]),
    E("tuple-fixed", tuple[int, str, bool], (1, "a", False), [1, "a", False], avro=AVRO_TUPLE),
    E("typing-tuple", Tuple[str], ("z",), ["z"], avro=AVRO_TUPLE),
    E("tuple-empty", Tuple[()], (), [], avro=AVRO_TUPLE),
    E("tuple-variadic", tuple[int, ...], (1, 2, 3), [1, 2, 3]),
    E("tuple-variadic-empty", Tuple[int, ...], (), []),
    E("tuple-variadic-floats", Tuple[float, ...], (1.0, 2.5), [1.0, 2.5]),
    E("tuple-variadic-floats-empty", Tuple[float, ...], (), []),
    E("set", set[int], {1, 2, 3}, [1, 2, 3]),
    E("set-empty", Set[str], set(), []),
    E("typing-set", Set[str], {"only"}, ["only"]),
    E("typing-set-a", Set[str], {"a"}, ["a"]),
    E("frozenset", frozenset[int], frozenset({7}), [7]),
    E("frozenset-two", FrozenSet[int], frozenset({1, 2}), [1, 2]),
    E("typing-frozenset", FrozenSet[int], frozenset(), []),
    E("dict", dict[str, int], {"b": 2, "a": 1}, {"b": 2, "a": 1}),
    E(
        "dict-map16",
        dict[str, int],
        {str(i): i for i in range(20)},
        {str(i): i for i in range(20)},
    ),
    E("dict-empty", Dict[str, List[int]], {}, {}),
    E("dict-of-lists", Dict[str, List[int]], {"a": [1], "é": []}, {"a": [1], "é": []}),
    E("typing-dict", Dict[str, str], {"": "empty key"}, {"": "empty key"}),
    E(
        "mapping",
        Mapping[str, float],
        {"pi": 3.25},
        {"pi": 3.25},
        json=Wire({"pi": 3.25}, same_bytes=False),
    ),
    E(
        "dict-int-keys",
        dict[int, str],
        {1: "a", -5: "b"},
        {"1": "a", "-5": "b"},
        msgpack=Wire({1: "a", -5: "b"}),
        avro=AVRO_KEYS,
    ),
    E(
        "dict-uint64-keys",
        dict[int, int],
        {2**64 - 1: 1},
        {str(2**64 - 1): 1},
        msgpack=Wire({2**64 - 1: 1}),
        avro=AVRO_KEYS,
    ),
    E(
        "dict-big-int-keys",
        dict[int, int],
        {2**70: 1},
        {str(2**70): 1},
        msgpack=BIG_INT,
        avro=AVRO_KEYS,
    ),
    E("dict-enum-keys", dict[Color, int], {Color.GREEN: 2}, {"green": 2}, avro=AVRO_KEYS),
    E(
        "dict-int-enum-keys",
        dict[Level, str],
        {Level.HIGH: "h"},
        {"2": "h"},
        msgpack=Wire({2: "h"}),
        avro=AVRO_KEYS,
    ),
    E("dict-str-enum-keys", dict[Mode, int], {Mode.FAST: 0}, {"fast": 0}, avro=AVRO_KEYS),
    E(
        "dict-uuid-keys",
        dict[uuid.UUID, int],
        {uuid.UUID(int=255): 1},
        {"00000000-0000-0000-0000-0000000000ff": 1},
        avro=AVRO_KEYS,
    ),
    E("dict-literal-keys", dict[Literal["a", "b"], int], {"a": 1}, {"a": 1}, avro=AVRO_KEYS),
    E(
        "dict-literal-int-keys",
        dict[Literal[1, 2], int],
        {2: 1},
        {"2": 1},
        msgpack=Wire({2: 1}),
        avro=AVRO_KEYS,
    ),
    E("dict-nested", dict[str, dict[str, list[int]]], {"x": {"y": [1]}}, {"x": {"y": [1]}}),
    E(
        "dict-any-keys",
        dict[Any, Any],
        {1: "a", "b": 2, None: 3},
        {"1": "a", "b": 2, "null": 3},
        # JSON keys are strings; msgspec refuses a None key.
        json=Wire(
            {"1": "a", "b": 2, "null": 3}, decoded={"1": "a", "b": 2, "null": 3}, msgspec=False
        ),
        msgpack=Wire({1: "a", "b": 2, None: 3}),
        avro=AVRO_KEYS,
    ),
    E("dataclass", Point, Point(3, -4), {"x": 3, "y": -4}),
    E("namedtuple", Pair, Pair(1, "b"), [1, "b"]),
    E("typeddict", Movie, {"title": "Up", "year": 2009}, {"title": "Up", "year": 2009}),
    E("typeddict-film", Film, {"title": "x", "year": 1999}, {"title": "x", "year": 1999}),
    E("namedtuple-sides", Sides, Sides(1, "a"), [1, "a"]),
    E("newtype", UserId, UserId(9), 9),
    E("annotated", Annotated[int, polycodec.Meta(ge=0)], 4, 4),
    E("annotated-types", Annotated[str, annotated_types.MinLen(1)], "ok", "ok"),
    E("any-int", Any, 1, 1, avro=AVRO_ANY),
    E("any-big-uint", Any, 2**64 - 1, 2**64 - 1, avro=AVRO_ANY),
    E("any-float", Any, 2.5, 2.5, json=Wire(2.5, same_bytes=False), avro=AVRO_ANY),
    E("any-str", Any, "s", "s", avro=AVRO_ANY),
    E("any-none", Any, None, None, avro=AVRO_ANY),
    E("any-bool", Any, True, True, avro=AVRO_ANY),
    E(
        "any-bytes",
        Any,
        b"\x00b",
        "AGI=",
        # JSON has no bytes: Any reads the base64 text back as a str (as msgspec does).
        json=Wire("AGI=", decoded="AGI="),
        msgpack=Wire(b"\x00b"),
        avro=AVRO_ANY,
    ),
    E(
        "any-datetime",
        Any,
        datetime.datetime(2000, 1, 1, tzinfo=UTC),
        "2000-01-01T00:00:00Z",
        # JSON has no datetimes: Any reads the text back as a str (as msgspec does).
        json=Wire("2000-01-01T00:00:00Z", decoded="2000-01-01T00:00:00Z"),
        msgpack=Wire(datetime.datetime(2000, 1, 1, tzinfo=UTC)),
        avro=AVRO_ANY,
    ),
    E(
        "any-nested",
        Any,
        {"a": [1, {"b": None}], "c": "d"},
        {"a": [1, {"b": None}], "c": "d"},
        avro=AVRO_ANY,
    ),
    E("complex", complex, 1j, every=Refused("'complex'.*: unsupported type")),
    E("list-any", list[Any], [1, "a", [None]], [1, "a", [None]], avro=AVRO_ANY),
    E(
        "everything",
        Everything,
        EVERYTHING,
        EVERYTHING_JSON,
        msgpack=Unencodable("64 bits"),
        avro=AVRO_TIMEDELTA,
    ),
]
