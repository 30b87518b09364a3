"""What is JSON's own about the types: the text written (compact, raw UTF-8, escapes, floats),
what JSON reads besides polycodec's own output, and the values JSON cannot hold.

The round trips of every type against ``json`` and ``msgspec`` (at the top level, as a field and
in lists) are in the shared matrix: tests/catalogue.py and tests/test_types_matrix.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from decimal import Decimal
from typing import Any, NamedTuple

import msgspec
import pytest

import polycodec
from json_models import UTC, Point, assert_same, check_json


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


# The UTC shapes polycodec and msgspec write (`...SSZ`, `...SS.ffffffZ`) are read by a fixed
# template first; everything it refuses goes to the general parser, which words the error.
CANONICAL_UTC_EDGES = [
    "2024-02-29T23:59:59.999999Z",
    "2023-02-29T00:00:00Z",
    "2100-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59.999999Z",
    "0000-01-01T00:00:00Z",
    "2020-00-10T00:00:00Z",
    "2020-13-10T00:00:00Z",
    "2020-04-31T00:00:00Z",
    "2020-04-00T00:00:00Z",
    "2020-01-01T24:00:00Z",
    "2020-01-01T23:60:00Z",
    "2020-01-01T23:59:60Z",
    "2020-01-01t01:02:03Z",
    "2020-01-01 01:02:03Z",
    "2020-01-01T01:02:03z",
    "2020-01-01T01:02:03.123456z",
    "2020-01-01T01:02:03,123456Z",
    "2020-01-01T01:02:03.12345aZ",
    "2020-01-01T01:02:0:Z",
    "2020-01-01T01:02/03Z",
    "2020-1a-01T01:02:03Z",
    "2020-01-01T01:02:03.1234567",
    "2020-01-01T01:02:03+00:00",
    "2020-01-01T01:02:03.000001Z",
    "2020-01-01T01:02:03.1234Z",
]


@pytest.mark.parametrize("text", CANONICAL_UTC_EDGES)
def test_canonical_utc_datetime_template_reads_as_msgspec(text: str) -> None:
    data = json.dumps(text).encode()
    try:
        expected = msgspec.json.decode(data, type=datetime.datetime)
    except msgspec.ValidationError:
        with pytest.raises(polycodec.ValidationError) as caught:
            polycodec.decode_one(data, datetime.datetime)
        # The general parser's words, as for the same value spelled with a "+00:00" offset.
        general = text[:-1] + "+00:00" if text.endswith("Z") else text
        with pytest.raises(polycodec.ValidationError) as spelled:
            polycodec.decode_one(json.dumps(general).encode(), datetime.datetime)
        if text.endswith("Z"):
            assert str(caught.value) == str(spelled.value)
        return
    assert_same(polycodec.decode_one(data, datetime.datetime), expected)


@pytest.mark.parametrize(
    "text",
    [
        "2024-02-29",
        "2023-02-29",
        "0000-01-01",
        "2020-13-01",
        "2020-04-31",
        "2020-1-01",
        "2020-01-0a",
    ],
)
def test_date_template_reads_as_msgspec(text: str) -> None:
    data = json.dumps(text).encode()
    try:
        expected = msgspec.json.decode(data, type=datetime.date)
    except msgspec.ValidationError:
        with pytest.raises(polycodec.ValidationError):
            polycodec.decode_one(data, datetime.date)
        return
    assert_same(polycodec.decode_one(data, datetime.date), expected)


def test_namedtuple_with_defaults() -> None:
    class Span(NamedTuple):
        start: int
        end: int = -1

    assert polycodec.decode_one(b"[1]", Span) == Span(1, -1)
    check_json(Span, Span(2, 3), [2, 3])


def test_bytes_rejects_invalid_base64() -> None:
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'"!!!"', bytes)


# -- issue 38, item 4: the durations pydantic writes ------------------------------------------


def _pydantic_timedeltas() -> list[datetime.timedelta]:
    """A range of timedeltas: every unit boundary pydantic's writer crosses (a year of 365
    days, hours, minutes, a fraction), both signs, the extremes, and a seeded spread."""
    import random

    chooser = random.Random(38)
    day = datetime.timedelta(days=1)
    values = [
        datetime.timedelta(0),
        datetime.timedelta(microseconds=1),
        datetime.timedelta(seconds=59, microseconds=999_999),
        datetime.timedelta(minutes=1),
        datetime.timedelta(hours=1, minutes=30),
        day - datetime.timedelta(microseconds=1),
        364 * day,
        365 * day,
        400 * day,
        366 * day + datetime.timedelta(seconds=3.5),
        730 * day,
        datetime.timedelta.max,
        datetime.timedelta.min,
        datetime.timedelta.min + datetime.timedelta(microseconds=1),
    ]
    extremes = (datetime.timedelta.max, datetime.timedelta.min)
    values += [-v for v in values if v not in extremes]
    for _ in range(300):
        values.append(
            datetime.timedelta(
                days=chooser.randint(-999_999_999, 999_999_998),
                microseconds=chooser.randrange(86_400_000_000),
            )
        )
        values.append(datetime.timedelta(microseconds=chooser.randint(-(10**14), 10**14)))
    return values


def test_issue38_item4_every_duration_pydantic_writes_reads_back() -> None:
    # pydantic writes 400 days as "P1Y35D"; polycodec refused the year ("only units D, H, M and
    # S"). It now reads a year as the 365 days pydantic means by it, so every timedelta
    # pydantic writes decodes to the value it wrote, and pydantic reads polycodec's forms.
    pydantic = pytest.importorskip("pydantic")
    adapter = pydantic.TypeAdapter(datetime.timedelta)
    values = _pydantic_timedeltas()
    written = [adapter.dump_json(value) for value in values]
    assert b'"P1Y35D"' in written and b'"-P1Y35D"' in written
    for value, text in zip(values, written):
        assert polycodec.decode_one(text, datetime.timedelta) == value, text
        ours = polycodec.encode_one(value)
        assert adapter.validate_json(ours) == value, ours
    msgpack = polycodec.Codec(datetime.timedelta, "msgpack")
    assert msgpack.decode_one(msgspec.msgpack.encode("P1Y35D")) == datetime.timedelta(days=400)
    assert polycodec.from_builtins("P1Y35D", datetime.timedelta) == datetime.timedelta(days=400)


@pytest.mark.parametrize(
    "text",
    # Years, months and weeks in ISO order, each with pydantic's length (365, 30, 7 days),
    # fractions on the last component, signs, and the range's edges.
    [
        "P1Y",
        "P1M",
        "P12M",
        "P1W",
        "P1.5W",
        "P0.5M",
        "P0.5Y",
        "P0.0000001Y",
        "P1Y2M3W4D",
        "P1Y2M3W4DT5H6M7.5S",
        "P1M1W",
        "P1YT1S",
        "+P1Y",
        "-P1Y",
        "-P2739726Y9D",
        "P2739726Y9DT23H59M59.999999S",
    ],
)
def test_issue38_item4_years_months_and_weeks_mean_what_pydantic_means(text: str) -> None:
    pydantic = pytest.importorskip("pydantic")
    expected = pydantic.TypeAdapter(datetime.timedelta).validate_json(json.dumps(text))
    assert polycodec.decode_one(json.dumps(text), datetime.timedelta) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        # pydantic accepts these (out of ISO order, a unit twice); polycodec keeps ISO 8601's
        # order, each unit at most once.
        ("P1M1Y", "expected ISO 8601 [-]P[nY][nM][nW][nD][T[nH][nM][nS]]"),
        ("P1D1W", "expected ISO 8601"),
        ("P1Y1Y", "expected ISO 8601"),
        ("P1,5Y", "expected ISO 8601"),
        # A year or week after T is neither's, and past 999999999 days is out of range.
        ("PT1Y", "only units Y, M, W and D before T and H, M and S after it are supported"),
        ("PT1W", "only units Y, M, W and D before T"),
        ("P2739726Y10D", "out of range"),
        ("-P2739727Y", "out of range"),
    ],
)
def test_issue38_item4_what_is_refused(text: str, message: str) -> None:
    with pytest.raises(polycodec.ValidationError, match=message.replace("[", r"\[")):
        polycodec.decode_one(json.dumps(text), datetime.timedelta)
