"""Lax mode (`strict=False`) as wide as msgspec's, no wider: for every type (single types and
unions of them) and input the property tests draw (numbers, texts of numbers in and out of
JSON's grammar, `null` / `true` / `false` in any case, datetime and duration texts, Unix
timestamps), polycodec accepts exactly what msgspec accepts, refuses what it refuses, and gives
an equal value, in JSON, MessagePack and `from_builtins` (msgspec's `convert`). Inputs on which
the two already differ in strict mode are left out: those differences are not lax mode's."""

from __future__ import annotations

import datetime
import decimal
import enum
import itertools
import json
import math
import re
import uuid
from typing import Annotated, Any, Literal, Optional, Union

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polycodec


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Colour(enum.Enum):
    RED = "red"
    NUMBER = "2"


class Perm(enum.Flag):
    R = 1
    W = 2


SINGLES: list[Any] = [
    type(None),
    bool,
    int,
    float,
    decimal.Decimal,
    datetime.datetime,
    datetime.timedelta,
    datetime.date,
    uuid.UUID,
    Level,
    Colour,
    Perm,
    str,
    bytes,
    Literal[1, 2],
    Literal["a", "2"],
]
NUMERIC = [bool, int, float, decimal.Decimal, datetime.datetime, datetime.timedelta, Level]


def _types() -> list[Any]:
    found = list(SINGLES)
    found += [Union[a, b] for a, b in itertools.combinations(SINGLES, 2)]
    found += [Union[a, b, None] for a, b in itertools.combinations(NUMERIC, 2)]
    usable = []
    for tp in found:
        try:
            msgspec.json.Decoder(tp)
            polycodec.Codec(tp)
        except TypeError:
            continue
        usable.append(tp)
    return usable


TYPES = _types()

WORDS = st.sampled_from(["null", "true", "false", "nan", "inf", "infinity"]).flatmap(
    lambda word: st.lists(st.booleans(), min_size=len(word), max_size=len(word)).map(
        lambda upper: "".join(c.upper() if u else c for c, u in zip(word, upper))
    )
)
NUMBER_TEXTS = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e12, 1e12).map(lambda f: f"{f:.6f}"),
    st.sampled_from(
        ["-0", "00", "01", "+1", "1.", ".5", "1e3", "1E+2", "1.5e1", "1e-1", "1e400", "-0.0"]
    ),
    st.sampled_from(["-", "+"]).flatmap(lambda sign: WORDS.map(lambda w: sign + w)),
)
TEXTS = st.one_of(
    WORDS,
    NUMBER_TEXTS,
    st.sampled_from(
        [
            "",
            "x",
            "red",
            "2",
            "a",
            "YQ==",
            "2024-05-01T12:00:00Z",
            "2024-05-01",
            "P1DT2.5S",
            "00000000-0000-0000-0000-000000000001",
            "1_0",
            " 1",
        ]
    ),
    st.text(max_size=4),
)
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**65),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-7e10, 3e11),
    TEXTS,
)


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours == theirs or (math.isnan(ours) and math.isnan(theirs))
    if isinstance(ours, decimal.Decimal) and isinstance(theirs, decimal.Decimal):
        return ours == theirs or (ours.is_nan() and theirs.is_nan())
    if isinstance(ours, memoryview) or isinstance(theirs, memoryview):
        return bytes(ours) == bytes(theirs)
    return type(ours) is type(theirs) and bool(ours == theirs)


def _outcome(decode: Any, errors: tuple[type, ...]) -> tuple[str, Any]:
    try:
        return ("ok", decode())
    except errors:
        return ("refused", None)


def _check(fmt: str, tp: Any, value: Any) -> None:
    """Strict mode first: where polycodec and msgspec already differ, lax mode is not asked."""
    if fmt == "json":
        data = json.dumps(value).encode()
        theirs = [lambda s: msgspec.json.decode(data, type=tp, strict=s)]
        ours = [lambda s: polycodec.decode_one(data, tp, strict=s)]
    elif fmt == "msgpack":
        if isinstance(value, int) and not -(2**63) <= value < 2**64:
            return
        data = msgspec.msgpack.encode(value)
        theirs = [lambda s: msgspec.msgpack.decode(data, type=tp, strict=s)]
        ours = [lambda s: polycodec.decode_one(data, tp, "msgpack", strict=s)]
    else:
        theirs = [lambda s: msgspec.convert(value, tp, strict=s)]
        ours = [lambda s: polycodec.from_builtins(value, tp, strict=s)]
    msgspec_errors = (msgspec.ValidationError, msgspec.DecodeError)
    for strict in (True, False):
        their = _outcome(lambda: theirs[0](strict), msgspec_errors)
        our = _outcome(lambda: ours[0](strict), (polycodec.DecodeError,))
        agree = their[0] == our[0] and (their[0] == "refused" or _same(our[1], their[1]))
        if strict and not agree:
            return
        assert agree, (fmt, tp, value, strict, our, their)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("tp", TYPES, ids=repr)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=JSON_VALUES)
def test_lax_accepts_and_refuses_what_msgspec_does(fmt: str, tp: Any, value: Any) -> None:
    _check(fmt, tp, value)


TIMESTAMPS = st.one_of(
    st.floats(-62135596800.0, 253402300799.0),
    st.floats(-100, 100),
    st.floats(-1e-5, 1e-5),
    st.integers(-62135596801, 253402300800),
    st.floats(allow_nan=False),
)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("tp", [datetime.datetime, datetime.timedelta], ids=repr)
@settings(max_examples=400, deadline=None)
@given(value=TIMESTAMPS, as_text=st.booleans())
def test_timestamps_and_seconds_round_as_msgspec_rounds(
    fmt: str, tp: Any, value: Any, as_text: bool
) -> None:
    _check(fmt, tp, repr(value) if as_text else value)


def test_lax_examples() -> None:
    utc = datetime.timezone.utc
    cases = [
        (b'"1.0"', int, 1),
        (b'"1e3"', int, 1000),
        (b"9007199254740992.0", int, 9007199254740992),
        (b'"TRUE"', bool, True),
        (b'"-0"', bool, False),
        (b'"NuLl"', type(None), None),
        (b'"-Infinity"', float, -math.inf),
        (b"1.5", datetime.datetime, datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, utc)),
        (b'"-1"', datetime.datetime, datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=utc)),
        (b'"1.5"', datetime.timedelta, datetime.timedelta(seconds=1.5)),
        (b'"2"', Level, Level.HIGH),
        (b'"3"', Perm, Perm.R | Perm.W),
        (b'"1"', Literal[1, 2], 1),
        (b'"NULL"', Optional[int], None),
        (
            b'"1.5"',
            Union[int, datetime.datetime],
            datetime.datetime(1970, 1, 1, 0, 0, 1, 500000, utc),
        ),
        (b"1", Union[bool, decimal.Decimal], decimal.Decimal(1)),
        (b'"null"', Optional[str], "null"),
        (b'{"1.0": 1}', dict[int, int], {1: 1}),
    ]
    for data, tp, expected in cases:
        assert polycodec.decode_one(data, tp, strict=False) == expected, (data, tp)
        assert msgspec.json.decode(data, type=tp, strict=False) == expected, (data, tp)


def test_lax_refusals_and_their_messages() -> None:
    cases = [
        (b"1e16", int, "expected int, got float"),
        (b'"1.5"', int, 'expected int, got str "1.5"'),
        (b'"+1"', int, 'expected int, got str "+1"'),
        (b'"1."', float, 'expected float, got str "1."'),
        (b'"2e308"', float, "number 2e308 is out of range for a float"),
        (b'"yes"', bool, 'expected bool, got str "yes"'),
        (b"2", bool, "expected bool, got int"),
        (b"1e20", datetime.datetime, "timestamp 1e20 is out of range for a datetime"),
        (b'"nan"', datetime.datetime, "expected a finite Unix timestamp, got nan"),
        (b"1e17", datetime.timedelta, "1e17 seconds is out of range for a timedelta"),
        (b'"1.0"', Level, 'expected enum value, got str "1.0"'),
        (b'"1.5"', Union[Colour, int], "expected enum value | int, got str"),
    ]
    for data, tp, message in cases:
        with pytest.raises(polycodec.ValidationError, match=re.escape(message)):
            polycodec.decode_one(data, tp, strict=False)
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(data, type=tp, strict=False)
    with pytest.raises(polycodec.ValidationError, match="got a Unix timestamp"):
        polycodec.decode_one(
            b"0", Annotated[datetime.datetime, polycodec.Meta(tz=False)], strict=False
        )
