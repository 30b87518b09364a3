"""Round trips of every supported type through MessagePack, checked against the ``msgpack``
library (the wire form) and ``msgspec.msgpack`` (both ways, and byte for byte).

Each case runs at the top level, as the field of a dataclass and inside a list, so the root,
field and item code paths of the plan are all exercised.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Dict, FrozenSet, List, Literal, Optional, Set, Tuple, Union

import annotated_types
import msgpack
import msgspec
import pytest

import polycodec
from json_models import (
    EVERYTHING,
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
    assert_same,
)


@dataclasses.dataclass
class Case:
    id: str
    tp: Any
    obj: Any
    #: What ``msgpack.unpackb(out, timestamp=3, strict_map_key=False)`` returns for the output.
    wire: Any
    #: What decoding gives back, when it is not ``obj`` itself (aware datetimes come back in UTC).
    decoded: Any = dataclasses.field(default=None)
    msgspec_oracle: bool = True

    @property
    def expected(self) -> Any:
        return self.obj if self.decoded is None else self.decoded


def utc(value: datetime.datetime) -> datetime.datetime:
    return value.astimezone(UTC)


CASES = [
    Case("none", type(None), None, None),
    Case("none-literal", None, None, None),
    Case("true", bool, True, True),
    Case("false", bool, False, False),
    Case("int-zero", int, 0, 0),
    Case("int-fixint-max", int, 127, 127),
    Case("int-uint8", int, 200, 200),
    Case("int-uint16", int, 60000, 60000),
    Case("int-uint32", int, 2**32 - 1, 2**32 - 1),
    Case("int-negative-fixint", int, -32, -32),
    Case("int-int8", int, -100, -100),
    Case("int-int16", int, -30000, -30000),
    Case("int-int32", int, -(2**31), -(2**31)),
    Case("int-negative", int, -12345, -12345),
    Case("int64-max", int, 2**63 - 1, 2**63 - 1),
    Case("int64-min", int, -(2**63), -(2**63)),
    Case("uint64-max", int, 2**64 - 1, 2**64 - 1),
    Case("float", float, 1.5, 1.5),
    Case("float-negative-zero", float, -0.0, -0.0),
    Case("float-tiny", float, 5e-324, 5e-324),
    Case("float-big", float, 1.7976931348623157e308, 1.7976931348623157e308),
    Case("float-tenth", float, 0.1, 0.1),
    Case("float-integral", float, 3.0, 3.0),
    Case("float-inf", float, float("inf"), float("inf")),
    Case("str-empty", str, "", ""),
    Case("str-ascii", str, "hello", "hello"),
    Case("str-31", str, "x" * 31, "x" * 31),
    Case("str-str8", str, "y" * 32, "y" * 32),
    Case("str-str16", str, "z" * 300, "z" * 300),
    Case("str-str32", str, "w" * 70000, "w" * 70000),
    Case("str-unicode", str, "héllo wörld ✓ 日本 😀", "héllo wörld ✓ 日本 😀"),
    Case("str-control", str, "\x00\x01\x1f\x7f", "\x00\x01\x1f\x7f"),
    Case("bytes", bytes, b"\x00\x01\xfe\xff", b"\x00\x01\xfe\xff"),
    Case("bytes-empty", bytes, b"", b""),
    Case("bytes-bin16", bytes, b"\x07" * 300, b"\x07" * 300),
    Case("bytes-bin32", bytes, b"\x08" * 70000, b"\x08" * 70000),
    Case("bytearray", bytearray, bytearray(b"xyz"), b"xyz"),
    Case("decimal", Decimal, Decimal("3.14159"), "3.14159"),
    Case("decimal-exponent", Decimal, Decimal("1E+30"), "1E+30"),
    Case("decimal-trailing-zeros", Decimal, Decimal("2.500"), "2.500"),
    Case(
        "datetime-naive",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5),
        "2020-01-02T03:04:05",
    ),
    Case(
        "datetime-naive-micro",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
        "2020-01-02T03:04:05.000006",
    ),
    Case(
        "datetime-utc-ts32",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, tzinfo=UTC),
        datetime.datetime(2020, 1, 2, tzinfo=UTC),
    ),
    Case(
        "datetime-utc-ts64",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 0, 0, 0, 5, tzinfo=UTC),
        datetime.datetime(2020, 1, 2, 0, 0, 0, 5, tzinfo=UTC),
    ),
    Case(
        "datetime-ts64-beyond-2106",
        datetime.datetime,
        datetime.datetime(2200, 1, 1, tzinfo=UTC),
        datetime.datetime(2200, 1, 1, tzinfo=UTC),
    ),
    Case(
        "datetime-ts96-before-1970",
        datetime.datetime,
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ),
    Case(
        "datetime-ts96-min",
        datetime.datetime,
        datetime.datetime.min.replace(tzinfo=UTC),
        datetime.datetime.min.replace(tzinfo=UTC),
    ),
    Case(
        "datetime-ts96-max",
        datetime.datetime,
        datetime.datetime.max.replace(tzinfo=UTC),
        datetime.datetime.max.replace(tzinfo=UTC),
    ),
    Case(
        "datetime-offset",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530),
        utc(datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530)),
        decoded=utc(datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530)),
    ),
    Case(
        "datetime-negative-offset",
        datetime.datetime,
        datetime.datetime(1970, 1, 1, tzinfo=MINUS_0800),
        datetime.datetime(1970, 1, 1, 8, tzinfo=UTC),
        decoded=datetime.datetime(1970, 1, 1, 8, tzinfo=UTC),
    ),
    Case("datetime-min", datetime.datetime, datetime.datetime.min, "0001-01-01T00:00:00"),
    Case("date", datetime.date, datetime.date(2024, 2, 29), "2024-02-29"),
    Case("time", datetime.time, datetime.time(23, 59, 59), "23:59:59"),
    Case("time-micro", datetime.time, datetime.time(0, 0, 0, 999999), "00:00:00.999999"),
    Case("time-utc", datetime.time, datetime.time(12, 30, tzinfo=UTC), "12:30:00Z"),
    Case("time-offset", datetime.time, datetime.time(12, 30, tzinfo=MINUS_0800), "12:30:00-08:00"),
    Case("timedelta-zero", datetime.timedelta, datetime.timedelta(0), "P0D"),
    Case(
        "timedelta-mixed",
        datetime.timedelta,
        datetime.timedelta(days=1, seconds=2, microseconds=3),
        "P1DT2.000003S",
    ),
    Case(
        "timedelta-negative",
        datetime.timedelta,
        datetime.timedelta(days=-1, seconds=5),
        "-PT86395S",
    ),
    Case(
        "uuid",
        uuid.UUID,
        uuid.UUID("c0a80101-aaaa-4bbb-8ccc-0123456789ab"),
        "c0a80101-aaaa-4bbb-8ccc-0123456789ab",
    ),
    Case("enum", Color, Color.RED, "red"),
    Case("int-enum", Level, Level.LOW, 1),
    Case("str-enum", Mode, Mode.FAST, "fast"),
    Case("literal-str", Literal["a", "b"], "b", "b"),
    Case("literal-int", Literal[1, 2, 3], 2, 2),
    Case("literal-bool", Literal[True], True, True, msgspec_oracle=False),
    Case("literal-none", Literal["x", None], None, None),
    Case("literal-mixed", Literal["x", 7], 7, 7),
    Case("optional-some", Optional[int], 5, 5),
    Case("optional-none", Optional[int], None, None),
    Case("optional-pep604", int | None, 5, 5),
    Case("union-int", Union[int, str], 1, 1),
    Case("union-str", Union[int, str], "1", "1"),
    Case("union-int-float-int", Union[int, float], 1, 1),
    Case("union-int-float-float", Union[int, float], 1.0, 1.0),
    Case("union-bytes-int", Union[bytes, int], b"\x01", b"\x01"),
    Case(
        "union-datetime-none",
        Optional[datetime.datetime],
        datetime.datetime(2021, 5, 6, tzinfo=UTC),
        datetime.datetime(2021, 5, 6, tzinfo=UTC),
    ),
    Case("union-list-dict", Union[list[int], dict[str, int]], {"a": 1}, {"a": 1}),
    Case("union-bool-int-str-none", Union[bool, int, str, None], False, False),
    Case("union-dataclass-str", Union[Point, str], Point(1, 2), {"x": 1, "y": 2}),
    Case("list", list[int], [1, 2, 3], [1, 2, 3]),
    Case("list-empty", list[str], [], []),
    Case("list-array16", list[int], list(range(20)), list(range(20))),
    Case("typing-list", List[str], ["a"], ["a"]),
    Case("sequence", Sequence[int], [1, 2], [1, 2]),
    Case("nested-list", list[list[Optional[int]]], [[1, None], [], [3]], [[1, None], [], [3]]),
    Case("tuple-fixed", tuple[int, str, bool], (1, "a", False), [1, "a", False]),
    Case("typing-tuple", Tuple[str], ("z",), ["z"]),
    Case("tuple-empty", Tuple[()], (), []),
    Case("tuple-variadic", tuple[int, ...], (1, 2, 3), [1, 2, 3]),
    Case("set", set[int], {1, 2, 3}, [1, 2, 3]),
    Case("typing-set", Set[str], {"only"}, ["only"]),
    Case("frozenset", frozenset[int], frozenset({7}), [7]),
    Case("typing-frozenset", FrozenSet[int], frozenset(), []),
    Case("dict", dict[str, int], {"b": 2, "a": 1}, {"b": 2, "a": 1}),
    Case(
        "dict-map16", dict[str, int], {str(i): i for i in range(20)}, {str(i): i for i in range(20)}
    ),
    Case("typing-dict", Dict[str, str], {"": "empty key"}, {"": "empty key"}),
    Case("mapping", Mapping[str, float], {"pi": 3.25}, {"pi": 3.25}),
    Case("dict-int-keys", dict[int, str], {1: "a", -5: "b"}, {1: "a", -5: "b"}),
    Case("dict-uint64-keys", dict[int, int], {2**64 - 1: 1}, {2**64 - 1: 1}),
    Case("dict-enum-keys", dict[Color, int], {Color.GREEN: 2}, {"green": 2}),
    Case("dict-int-enum-keys", dict[Level, str], {Level.HIGH: "h"}, {2: "h"}),
    Case("dict-str-enum-keys", dict[Mode, int], {Mode.FAST: 0}, {"fast": 0}),
    Case(
        "dict-uuid-keys",
        dict[uuid.UUID, int],
        {uuid.UUID(int=255): 1},
        {"00000000-0000-0000-0000-0000000000ff": 1},
    ),
    Case("dict-literal-keys", dict[Literal["a", "b"], int], {"a": 1}, {"a": 1}),
    Case("dict-literal-int-keys", dict[Literal[1, 2], int], {2: 1}, {2: 1}),
    Case("dict-nested", dict[str, dict[str, list[int]]], {"x": {"y": [1]}}, {"x": {"y": [1]}}),
    Case("dict-any-keys", dict[Any, Any], {1: "a", "b": 2, None: 3}, {1: "a", "b": 2, None: 3}),
    Case("dataclass", Point, Point(3, -4), {"x": 3, "y": -4}),
    Case("namedtuple", Pair, Pair(1, "b"), [1, "b"]),
    Case("typeddict", Movie, {"title": "Up", "year": 2009}, {"title": "Up", "year": 2009}),
    Case("newtype", UserId, UserId(9), 9),
    Case("annotated", Annotated[int, polycodec.Meta(ge=0)], 4, 4),
    Case("annotated-types", Annotated[str, annotated_types.MinLen(1)], "ok", "ok"),
    Case("any-int", Any, 1, 1),
    Case("any-big-uint", Any, 2**64 - 1, 2**64 - 1),
    Case("any-float", Any, 2.5, 2.5),
    Case("any-str", Any, "s", "s"),
    Case("any-none", Any, None, None),
    Case("any-bool", Any, True, True),
    Case("any-bytes", Any, b"\x00b", b"\x00b"),
    Case(
        "any-datetime",
        Any,
        datetime.datetime(2000, 1, 1, tzinfo=UTC),
        datetime.datetime(2000, 1, 1, tzinfo=UTC),
    ),
    Case("any-nested", Any, {"a": [1, {"b": None}], "c": "d"}, {"a": [1, {"b": None}], "c": "d"}),
    Case("list-any", list[Any], [1, "a", [None]], [1, "a", [None]]),
]

IDS = [c.id for c in CASES]


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, timestamp=3, strict_map_key=False)


def check(tp: Any, obj: Any, wire: Any, expected: Any, msgspec_oracle: bool) -> bytes:
    codec = polycodec.Codec(tp, format="msgpack")
    out = codec.encode_one(obj)
    assert isinstance(out, bytes)
    assert_same(unpack(out), wire)
    assert_same(codec.decode_one(out), expected)
    # The msgpack library's own encoding of the wire form decodes to the same value.
    peer = msgpack.packb(wire, datetime=True)
    assert_same(codec.decode_one(peer), expected)
    if msgspec_oracle:
        assert_same(msgspec.msgpack.decode(out, type=tp), expected)
        theirs = msgspec.msgpack.encode(obj)
        assert_same(codec.decode_one(theirs), expected)
        assert out == theirs
    return out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_round_trip_top_level(case: Case) -> None:
    check(case.tp, case.obj, case.wire, case.expected, case.msgspec_oracle)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_round_trip_as_field(case: Case) -> None:
    holder = dataclasses.make_dataclass("Holder", [("value", case.tp)])
    check(
        holder,
        holder(case.obj),
        {"value": case.wire},
        holder(case.expected),
        case.msgspec_oracle,
    )


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_round_trip_in_list(case: Case) -> None:
    codec = polycodec.Codec(case.tp, format="msgpack")
    out = codec.encode_many([case.obj, case.obj])
    assert_same(unpack(out), [case.wire, case.wire])
    assert_same(codec.decode_many(out), [case.expected, case.expected])
    if case.msgspec_oracle:
        assert out == msgspec.msgpack.encode([case.obj, case.obj])


def test_everything_record_matches_msgspec_except_the_huge_int() -> None:
    everything = dataclasses.replace(EVERYTHING, huge=2**64 - 1)
    codec = polycodec.Codec(Everything, format="msgpack")
    out = codec.encode_one(everything)
    assert out == msgspec.msgpack.encode(everything)
    expected = dataclasses.replace(everything, aware=everything.aware.astimezone(UTC))
    assert_same(codec.decode_one(out), expected)
    assert_same(msgspec.msgpack.decode(out, type=Everything), expected)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 3**200])
def test_ints_beyond_64_bits_cannot_be_encoded(value: int) -> None:
    with pytest.raises(polycodec.EncodeError, match="64 bits"):
        polycodec.encode_one(value, format="msgpack")
    with pytest.raises(polycodec.EncodeError, match=r"64 bits.*\$\.huge"):
        polycodec.encode_one(dataclasses.replace(EVERYTHING, huge=value), format="msgpack")


def test_nan_round_trips() -> None:
    out = polycodec.encode_one(float("nan"), format="msgpack")
    assert out == msgspec.msgpack.encode(float("nan"))
    decoded = polycodec.decode_one(out, float, format="msgpack")
    assert decoded != decoded


def test_memoryview_encodes_as_bin() -> None:
    out = polycodec.encode_one(memoryview(b"abc"), type=bytes, format="msgpack")
    assert out == b"\xc4\x03abc"


@pytest.mark.parametrize(
    "nanoseconds, microsecond",
    [(0, 0), (499, 0), (500, 1), (1500, 2), (2500, 3), (999_999_499, 999_999)],
)
def test_timestamp_nanoseconds_round_like_msgspec(nanoseconds: int, microsecond: int) -> None:
    data = b"\xd7\xff" + ((nanoseconds << 34) | 100).to_bytes(8, "big")
    ours = polycodec.decode_one(data, datetime.datetime, format="msgpack")
    assert ours == msgspec.msgpack.decode(data, type=datetime.datetime)
    assert ours == datetime.datetime(1970, 1, 1, 0, 1, 40, microsecond, tzinfo=UTC)


def test_timestamp_rounding_carries_into_the_next_second() -> None:
    data = b"\xd7\xff" + ((999_999_500 << 34) | 100).to_bytes(8, "big")
    ours = polycodec.decode_one(data, datetime.datetime, format="msgpack")
    assert (
        ours == msgspec.msgpack.decode(data) == datetime.datetime(1970, 1, 1, 0, 1, 41, tzinfo=UTC)
    )


def test_datetime_accepts_the_string_form_too() -> None:
    codec = polycodec.Codec(datetime.datetime, format="msgpack")
    aware = datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=PLUS_0530)
    assert_same(codec.decode_one(msgpack.packb("2001-02-03T04:05:06+05:30")), aware)
    text = msgspec.msgpack.encode("2001-02-03T04:05:06Z")
    assert_same(codec.decode_one(text), datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC))


def test_tz_constraints_apply_to_timestamps() -> None:
    naive_only = Annotated[datetime.datetime, polycodec.Meta(tz=False)]
    stamp = msgpack.packb(datetime.datetime(2000, 1, 1, tzinfo=UTC), datetime=True)
    with pytest.raises(polycodec.ValidationError, match="naive"):
        polycodec.decode_one(stamp, naive_only, format="msgpack")
    aware_only = Annotated[datetime.datetime, polycodec.Meta(tz=True)]
    assert polycodec.decode_one(stamp, aware_only, format="msgpack").tzinfo is not None


def test_timestamps_outside_python_years_are_refused() -> None:
    too_late = b"\xc7\x0c\xff" + (0).to_bytes(4, "big") + (2**40).to_bytes(8, "big")
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(too_late, datetime.datetime, format="msgpack")
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(too_late, Any, format="msgpack")


def test_bytes_also_decode_from_str() -> None:
    assert polycodec.decode_one(b"\xa3abc", bytes, format="msgpack") == b"abc"


def test_any_dict_with_array_key_decodes_to_tuple_key() -> None:
    data = bytes.fromhex("81920102a178")
    assert polycodec.decode_one(data, Any, format="msgpack") == msgspec.msgpack.decode(data)
    assert polycodec.decode_one(data, Any, format="msgpack") == {(1, 2): "x"}


def test_float32_is_accepted_for_float() -> None:
    data = msgpack.packb(1.5, use_single_float=True)
    assert data[0] == 0xCA
    assert_same(polycodec.decode_one(data, float, format="msgpack"), 1.5)
    assert_same(polycodec.decode_one(data, Any, format="msgpack"), 1.5)


@pytest.mark.parametrize(
    "value",
    [
        datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(minutes=1))),
        datetime.datetime(9999, 12, 31, 23, 59, tzinfo=MINUS_0800),
    ],
)
def test_aware_datetimes_whose_utc_instant_leaves_python_years_are_refused(
    value: datetime.datetime,
) -> None:
    # msgspec raises OverflowError here; polycodec refuses with a path instead of writing a
    # timestamp that no one could decode into a datetime.
    with pytest.raises(polycodec.EncodeError, match="outside years 1-9999"):
        polycodec.encode_one(value, format="msgpack")
