"""Round trips of every supported type through JSON, checked against ``json`` and ``msgspec``.

Each case runs at the top level and as the field of a dataclass, so both the root and the
field code paths of the plan are exercised.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import uuid
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Annotated, Any, Dict, FrozenSet, List, Literal, NamedTuple, Optional, Set, Tuple
from typing import Union

import annotated_types
import msgspec
import pytest

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
    assert_same,
    check_json,
)


@dataclasses.dataclass
class Case:
    id: str
    tp: Any
    obj: Any
    jsonable: Any
    msgspec_oracle: bool = True
    same_bytes: bool = True


CASES = [
    Case("none", type(None), None, None),
    Case("none-literal", None, None, None),
    Case("true", bool, True, True),
    Case("false", bool, False, False),
    Case("int-zero", int, 0, 0),
    Case("int-negative", int, -12345, -12345),
    Case("int64-max", int, 2**63 - 1, 2**63 - 1),
    Case("int64-min", int, -(2**63), -(2**63)),
    Case("uint64-max", int, 2**64 - 1, 2**64 - 1),
    Case("int-beyond-64-bits", int, 2**64, 2**64),
    Case("int-huge-positive", int, 3**200, 3**200),
    Case("int-huge-negative", int, -(7**150), -(7**150)),
    Case("float", float, 1.5, 1.5, same_bytes=False),
    Case("float-negative-zero", float, -0.0, -0.0, same_bytes=False),
    Case("float-tiny", float, 5e-324, 5e-324, same_bytes=False),
    Case("float-big", float, 1.7976931348623157e308, 1.7976931348623157e308, same_bytes=False),
    Case("float-tenth", float, 0.1, 0.1, same_bytes=False),
    Case("float-integral", float, 3.0, 3.0, same_bytes=False),
    Case("str-empty", str, "", ""),
    Case("str-ascii", str, "hello", "hello"),
    Case("str-unicode", str, "héllo wörld ✓ 日本 😀", "héllo wörld ✓ 日本 😀"),
    Case("str-escapes", str, 'q"b\\s/\n\r\t\b\f', 'q"b\\s/\n\r\t\b\f'),
    Case("str-control", str, "\x00\x01\x1f\x7f", "\x00\x01\x1f\x7f"),
    Case("str-separators", str, "\u2028\u2029", "\u2028\u2029"),
    Case("bytes", bytes, b"\x00\x01\xfe\xff", "AAH+/w=="),
    Case("bytes-empty", bytes, b"", ""),
    Case("bytes-padding", bytes, b"ab", "YWI="),
    Case("bytearray", bytearray, bytearray(b"xyz"), "eHl6"),
    Case("decimal", Decimal, Decimal("3.14159"), "3.14159"),
    Case("decimal-negative", Decimal, Decimal("-0.001"), "-0.001"),
    Case("decimal-exponent", Decimal, Decimal("1E+30"), "1E+30"),
    Case("decimal-trailing-zeros", Decimal, Decimal("2.500"), "2.500"),
    Case(
        "decimal-big",
        Decimal,
        Decimal("123456789012345678901234567890.5"),
        "123456789012345678901234567890.5",
    ),
    Case(
        "datetime-naive",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5),
        "2020-01-02T03:04:05",
    ),
    Case(
        "datetime-micro",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6),
        "2020-01-02T03:04:05.000006",
    ),
    Case(
        "datetime-utc",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, tzinfo=UTC),
        "2020-01-02T00:00:00Z",
    ),
    Case(
        "datetime-offset",
        datetime.datetime,
        datetime.datetime(2020, 1, 2, 3, 4, 5, 120000, tzinfo=PLUS_0530),
        "2020-01-02T03:04:05.120000+05:30",
    ),
    Case(
        "datetime-negative-offset",
        datetime.datetime,
        datetime.datetime(1970, 1, 1, tzinfo=MINUS_0800),
        "1970-01-01T00:00:00-08:00",
    ),
    Case("datetime-min", datetime.datetime, datetime.datetime.min, "0001-01-01T00:00:00"),
    Case(
        "datetime-max",
        datetime.datetime,
        datetime.datetime.max,
        "9999-12-31T23:59:59.999999",
    ),
    Case("date", datetime.date, datetime.date(2024, 2, 29), "2024-02-29"),
    Case("date-min", datetime.date, datetime.date.min, "0001-01-01"),
    Case("time", datetime.time, datetime.time(23, 59, 59), "23:59:59"),
    Case("time-micro", datetime.time, datetime.time(0, 0, 0, 999999), "00:00:00.999999"),
    Case("time-utc", datetime.time, datetime.time(12, 30, tzinfo=UTC), "12:30:00Z"),
    Case("time-offset", datetime.time, datetime.time(12, 30, tzinfo=MINUS_0800), "12:30:00-08:00"),
    Case("timedelta-zero", datetime.timedelta, datetime.timedelta(0), "P0D"),
    Case("timedelta-days", datetime.timedelta, datetime.timedelta(days=2), "P2D"),
    Case("timedelta-seconds", datetime.timedelta, datetime.timedelta(seconds=90), "PT90S"),
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
    Case("uuid-nil", uuid.UUID, uuid.UUID(int=0), "00000000-0000-0000-0000-000000000000"),
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
    Case("union-int-float-float", Union[int, float], 1.0, 1.0, same_bytes=False),
    Case("union-list-dict", Union[list[int], dict[str, int]], {"a": 1}, {"a": 1}),
    Case("union-bool-int-str-none", Union[bool, int, str, None], False, False),
    Case("union-dataclass-str", Union[Point, str], Point(1, 2), {"x": 1, "y": 2}),
    Case("list", list[int], [1, 2, 3], [1, 2, 3]),
    Case("list-empty", list[str], [], []),
    Case("typing-list", List[str], ["a"], ["a"]),
    Case("sequence", Sequence[int], [1, 2], [1, 2]),
    Case("nested-list", list[list[Optional[int]]], [[1, None], [], [3]], [[1, None], [], [3]]),
    Case("tuple-fixed", tuple[int, str, bool], (1, "a", False), [1, "a", False]),
    Case("typing-tuple", Tuple[str], ("z",), ["z"]),
    Case("tuple-empty", Tuple[()], (), []),
    Case("tuple-variadic", tuple[int, ...], (1, 2, 3), [1, 2, 3]),
    Case("tuple-variadic-empty", Tuple[int, ...], (), []),
    Case("set", set[int], {1, 2, 3}, [1, 2, 3]),
    Case("typing-set", Set[str], {"only"}, ["only"]),
    Case("frozenset", frozenset[int], frozenset({7}), [7]),
    Case("typing-frozenset", FrozenSet[int], frozenset(), []),
    Case("dict", dict[str, int], {"b": 2, "a": 1}, {"b": 2, "a": 1}),
    Case("typing-dict", Dict[str, str], {"": "empty key"}, {"": "empty key"}),
    Case("mapping", Mapping[str, float], {"pi": 3.25}, {"pi": 3.25}, same_bytes=False),
    Case("dict-int-keys", dict[int, str], {1: "a", -5: "b"}, {"1": "a", "-5": "b"}),
    Case("dict-big-int-keys", dict[int, int], {2**70: 1}, {str(2**70): 1}),
    Case("dict-enum-keys", dict[Color, int], {Color.GREEN: 2}, {"green": 2}),
    Case("dict-int-enum-keys", dict[Level, str], {Level.HIGH: "h"}, {"2": "h"}),
    Case("dict-str-enum-keys", dict[Mode, int], {Mode.FAST: 0}, {"fast": 0}),
    Case(
        "dict-uuid-keys",
        dict[uuid.UUID, int],
        {uuid.UUID(int=255): 1},
        {"00000000-0000-0000-0000-0000000000ff": 1},
    ),
    Case("dict-literal-keys", dict[Literal["a", "b"], int], {"a": 1}, {"a": 1}),
    Case("dict-nested", dict[str, dict[str, list[int]]], {"x": {"y": [1]}}, {"x": {"y": [1]}}),
    Case("dataclass", Point, Point(3, -4), {"x": 3, "y": -4}),
    Case("namedtuple", Pair, Pair(1, "b"), [1, "b"]),
    Case("typeddict", Movie, {"title": "Up", "year": 2009}, {"title": "Up", "year": 2009}),
    Case("newtype", UserId, UserId(9), 9),
    Case("annotated", Annotated[int, polycodec.Meta(ge=0)], 4, 4),
    Case("annotated-types", Annotated[str, annotated_types.MinLen(1)], "ok", "ok"),
    Case("any-int", Any, 1, 1),
    Case("any-float", Any, 2.5, 2.5, same_bytes=False),
    Case("any-str", Any, "s", "s"),
    Case("any-none", Any, None, None),
    Case("any-bool", Any, True, True),
    Case("any-nested", Any, {"a": [1, {"b": None}], "c": "d"}, {"a": [1, {"b": None}], "c": "d"}),
    Case("list-any", list[Any], [1, "a", [None]], [1, "a", [None]]),
    Case("everything", Everything, EVERYTHING, EVERYTHING_JSON),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_top_level(case: Case) -> None:
    check_json(
        case.tp,
        case.obj,
        case.jsonable,
        msgspec_oracle=case.msgspec_oracle,
        same_bytes=case.same_bytes,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_as_field(case: Case) -> None:
    holder = dataclasses.make_dataclass("Holder", [("before", int), ("value", case.tp)])
    check_json(
        holder,
        holder(before=0, value=case.obj),
        {"before": 0, "value": case.jsonable},
        msgspec_oracle=case.msgspec_oracle,
        same_bytes=case.same_bytes,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_round_trip_in_list(case: Case) -> None:
    check_json(
        list[case.tp],  # type: ignore[name-defined]
        [case.obj, case.obj],
        [case.jsonable, case.jsonable],
        msgspec_oracle=case.msgspec_oracle,
        same_bytes=case.same_bytes,
    )


def test_non_ascii_is_written_raw() -> None:
    out = polycodec.encode_one("é日😀", type=str)
    assert out == '"é日😀"'.encode("utf-8")


def test_control_characters_are_escaped() -> None:
    out = polycodec.encode_one('a\x00\x1f\n"\\', type=str)
    assert b"\x00" not in out and b"\x1f" not in out and b"\n" not in out
    assert json.loads(out) == 'a\x00\x1f\n"\\'


def test_output_is_compact_and_in_declaration_order() -> None:
    assert polycodec.encode_one(Point(y=2, x=1)) == b'{"x":1,"y":2}'
    assert polycodec.encode_one({"z": [1, 2], "a": None}, type=dict[str, Any]) == (
        b'{"z":[1,2],"a":null}'
    )


def test_floats_match_json_loads() -> None:
    values = [0.1, 1 / 3, 1e-7, 1e22, 123456789.125, -2.5e-300, 2.0**53 + 2]
    out = polycodec.encode_one(values, type=list[float])
    assert_same(json.loads(out), values)
    assert_same(msgspec.json.decode(out, type=list[float]), values)


def test_float_accepts_json_integers() -> None:
    assert_same(polycodec.decode_one(b"3", float), 3.0)
    assert_same(polycodec.decode_one(b"[1, 2.5]", list[float]), [1.0, 2.5])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_floats_cannot_be_encoded(value: float) -> None:
    with pytest.raises(polycodec.EncodeError):
        polycodec.encode_one(value, type=float)
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.encode_one([1.0, value], type=list[float])
    assert info.value.path == "$[1]"
    with pytest.raises(polycodec.EncodeError):
        polycodec.encode_one({"x": value}, type=Any)


def test_big_int_in_any_and_dataclass() -> None:
    @dataclasses.dataclass
    class Big:
        value: int
        values: list[int]

    big = Big(-(2**200) + 1, [2**64, -(2**64) - 1, 10**40])
    out = polycodec.encode_one(big)
    assert json.loads(out) == {"value": -(2**200) + 1, "values": [2**64, -(2**64) - 1, 10**40]}
    assert_same(polycodec.decode_one(out, Big), big)
    assert_same(polycodec.decode_one(json.dumps([10**30, -(10**30)]), Any), [10**30, -(10**30)])


def test_decimal_is_decoded_exactly() -> None:
    text = "0.1000000000000000000000000000000000000001"
    assert_same(polycodec.decode_one(f'"{text}"', Decimal), Decimal(text))


def test_aware_datetimes_in_other_spellings() -> None:
    expected = datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
    for text in ["2020-01-02T03:04:05Z", "2020-01-02T03:04:05+00:00"]:
        assert_same(polycodec.decode_one(json.dumps(text), datetime.datetime), expected)


def test_literal_none_only() -> None:
    check_json(Optional[Literal["on"]], None, None)


def test_namedtuple_with_defaults() -> None:
    class Span(NamedTuple):
        start: int
        end: int = -1

    assert polycodec.decode_one(b"[1]", Span) == Span(1, -1)
    check_json(Span, Span(2, 3), [2, 3])


def test_bytes_rejects_invalid_base64() -> None:
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'"!!!"', bytes)
