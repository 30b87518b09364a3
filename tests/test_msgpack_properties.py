"""Property tests for MessagePack: generated instances round-trip, match msgspec's bytes, and
both msgspec and msgpack-python read them back; the Any path agrees with msgpack-python on
generated values. POLYCODEC_HYPOTHESIS_EXAMPLES raises the example count, as for JSON."""

from __future__ import annotations

import datetime
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional, Union

import msgpack
import msgspec
from hypothesis import given
from hypothesis import strategies as st

import polycodec
from json_models import Color, Level, Mode, Point
from test_properties import DECIMALS, FLOATS, INTS, OFFSETS, SETTINGS, TEXT

UTC = datetime.timezone.utc
FLOATS_ANY = st.floats(allow_nan=False)
# Aware datetimes whose UTC instant stays within Python's years (see the edge test below).
AWARE = st.datetimes(
    min_value=datetime.datetime(1, 1, 2),
    max_value=datetime.datetime(9999, 12, 30),
    timezones=OFFSETS,
)


@dataclass
class Scalars:
    flag: bool
    number: int
    real: float
    text: str
    blob: bytes
    money: Decimal
    ident: uuid.UUID
    color: Color
    level: Level
    mode: Mode
    maybe: Optional[str]
    either: Union[int, str, None]


@dataclass
class Temporal:
    naive: datetime.datetime
    aware: datetime.datetime
    day: datetime.date
    clock: datetime.time
    aware_clock: datetime.time
    span: datetime.timedelta


@dataclass
class Containers:
    numbers: list[int]
    reals: tuple[float, ...]
    pair: tuple[str, bool]
    unique: set[int]
    by_name: dict[str, Optional[float]]
    by_int: dict[int, list[str]]
    points: list[Point]
    nested: dict[str, dict[str, int]]


@dataclass
class Outer:
    scalars: Scalars
    temporal: Temporal
    containers: Containers
    children: list[Scalars]
    extra: Optional[Temporal] = None


SCALARS = st.builds(
    Scalars,
    flag=st.booleans(),
    number=INTS,
    real=FLOATS_ANY,
    text=TEXT,
    blob=st.binary(max_size=40),
    money=DECIMALS,
    ident=st.uuids(),
    color=st.sampled_from(Color),
    level=st.sampled_from(Level),
    mode=st.sampled_from(Mode),
    maybe=st.none() | TEXT,
    either=st.none() | INTS | TEXT,
)
TEMPORAL = st.builds(
    Temporal,
    naive=st.datetimes(),
    aware=AWARE,
    day=st.dates(),
    clock=st.times(),
    aware_clock=st.times(timezones=OFFSETS),
    span=st.timedeltas(),
)
CONTAINERS = st.builds(
    Containers,
    numbers=st.lists(INTS, max_size=20),
    reals=st.lists(FLOATS, max_size=5).map(tuple),
    pair=st.tuples(TEXT, st.booleans()),
    unique=st.sets(INTS, max_size=5),
    by_name=st.dictionaries(TEXT, st.none() | FLOATS, max_size=18),
    by_int=st.dictionaries(INTS, st.lists(TEXT, max_size=3), max_size=4),
    points=st.lists(st.builds(Point, x=INTS, y=INTS), max_size=3),
    nested=st.dictionaries(TEXT, st.dictionaries(TEXT, INTS, max_size=3), max_size=3),
)
OUTER = st.builds(
    Outer,
    scalars=SCALARS,
    temporal=TEMPORAL,
    containers=CONTAINERS,
    children=st.lists(SCALARS, max_size=3),
    extra=st.none() | TEMPORAL,
)


def _check(tp: Any, obj: Any) -> None:
    codec = polycodec.Codec(tp, format="msgpack")
    out = codec.encode_one(obj)
    assert out == msgspec.msgpack.encode(obj)
    # Aware datetimes come back in UTC: equal instants, so == holds.
    assert codec.decode_one(out) == obj
    assert msgspec.msgpack.decode(out, type=tp) == obj
    assert codec.decode_many(codec.encode_many([obj, obj])) == [obj, obj]
    msgpack.unpackb(out, timestamp=3, strict_map_key=False)


@SETTINGS
@given(SCALARS)
def test_scalars(obj: Scalars) -> None:
    _check(Scalars, obj)


@SETTINGS
@given(TEMPORAL)
def test_temporal(obj: Temporal) -> None:
    _check(Temporal, obj)


@SETTINGS
@given(CONTAINERS)
def test_containers(obj: Containers) -> None:
    _check(Containers, obj)


@SETTINGS
@given(OUTER)
def test_outer(obj: Outer) -> None:
    _check(Outer, obj)


ANY_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | INTS
    | FLOATS
    | TEXT
    | st.binary(max_size=10)
    | st.datetimes(timezones=st.just(UTC)),
    lambda children: st.lists(children, max_size=20)
    | st.dictionaries(TEXT | INTS, children, max_size=20),
    max_leaves=40,
)


@SETTINGS
@given(ANY_VALUES)
def test_any_matches_msgpack_python(value: Any) -> None:
    out = polycodec.encode_one(value, type=Any, format="msgpack")
    assert msgpack.unpackb(out, timestamp=3, strict_map_key=False) == value
    assert polycodec.decode_one(out, Any, format="msgpack") == value
    theirs = msgpack.packb(value, datetime=True)
    assert polycodec.decode_one(theirs, Any, format="msgpack") == value
    assert out == msgspec.msgpack.encode(value)


@SETTINGS
@given(st.binary(max_size=64))
def test_random_bytes_only_raise_decode_error(data: bytes) -> None:
    for tp in (Any, Outer):
        try:
            polycodec.decode_one(data, tp, format="msgpack")
        except polycodec.DecodeError as error:
            assert error.path.startswith("$")
