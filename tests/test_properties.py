"""Property tests: generated instances of fixed models round-trip and agree with msgspec both
ways; mutated and truncated payloads only ever raise DecodeError.

POLYCODEC_HYPOTHESIS_EXAMPLES=5000 runs a deeper search than the default of 200."""

import datetime
import json
import os
import random
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Optional, Union

import msgspec
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import polycodec
from json_models import (
    EVERYTHING,
    Archive,
    Chunk,
    Color,
    Everything,
    Level,
    Mode,
    Point,
    Tree,
    assert_same,
)

SETTINGS = settings(
    max_examples=int(os.environ.get("POLYCODEC_HYPOTHESIS_EXAMPLES", "200")),
    # CI explores the same examples every run, so a landing never hinges on a lucky draw;
    # local runs search afresh each time.
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
)

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
INTS = st.integers(min_value=-(2**63), max_value=2**64 - 1)
BIG_INTS = st.integers(min_value=-(2**200), max_value=2**200)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
OFFSETS = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda minutes: datetime.timezone(datetime.timedelta(minutes=minutes))
)
AWARE = st.datetimes(timezones=OFFSETS)
DECIMALS = st.decimals(allow_nan=False, allow_infinity=False)


@dataclass
class Scalars:
    flag: bool
    number: int
    big: int
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
    frozen: frozenset[str]
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
    big=BIG_INTS,
    real=FLOATS,
    text=TEXT,
    blob=st.binary(max_size=20),
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
POINTS = st.builds(Point, x=INTS, y=INTS)
CONTAINERS = st.builds(
    Containers,
    numbers=st.lists(INTS, max_size=5),
    reals=st.lists(FLOATS, max_size=5).map(tuple),
    pair=st.tuples(TEXT, st.booleans()),
    unique=st.sets(INTS, max_size=5),
    frozen=st.frozensets(TEXT, max_size=5),
    by_name=st.dictionaries(TEXT, st.none() | FLOATS, max_size=4),
    by_int=st.dictionaries(INTS, st.lists(TEXT, max_size=3), max_size=4),
    points=st.lists(POINTS, max_size=3),
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
    codec = polycodec.Codec(tp)
    out = codec.encode_one(obj)
    assert_same(codec.decode_one(out), obj)
    theirs = msgspec.json.encode(obj)
    assert json.loads(out) == json.loads(theirs)
    assert_same(msgspec.json.decode(out, type=tp), obj)
    assert_same(codec.decode_one(theirs), obj)
    assert_same(codec.decode_one(json.dumps(json.loads(out), indent=2, ensure_ascii=False)), obj)
    assert_same(codec.decode_many(codec.encode_many([obj, obj])), [obj, obj])


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


@SETTINGS
@given(TEXT)
def test_strings_are_written_like_msgspec(text: str) -> None:
    assert polycodec.encode_one(text, type=str) == msgspec.json.encode(text)


@SETTINGS
@given(FLOATS)
def test_floats_round_trip_exactly(value: float) -> None:
    out = polycodec.encode_one(value, type=float)
    assert_same(json.loads(out), value)
    assert_same(polycodec.decode_one(out, float), value)
    assert_same(polycodec.decode_one(msgspec.json.encode(value), float), value)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | BIG_INTS | FLOATS | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(JSON_VALUES)
def test_any_matches_json_module(value: Any) -> None:
    out = polycodec.encode_one(value, type=Any)
    assert json.loads(out) == value
    assert polycodec.decode_one(out, Any) == value
    assert polycodec.decode_one(json.dumps(value, indent=1), Any) == value


SEEDS: list[tuple[Any, Any]] = [
    (Everything, EVERYTHING),
    (Archive, Archive("a", [Chunk("c", 1), Chunk("é", 2)], {"k": Chunk("k", 3)}, Point(1, -2))),
    (Tree, Tree(1, [Tree(2, [Tree(3)]), Tree(4)])),
    (Any, {"a": [1, 2.5, "x\\n\u00e9", None, True, {"b": []}], "c": -1e-5}),
]


def _mutations(rng: random.Random) -> list[Callable[[bytes], bytes]]:
    specials = b'{}[]:,"\\ 0123456789.eE+-tfnul\x00\xff\xc3'

    def truncate(data: bytes) -> bytes:
        return data[: rng.randrange(len(data))]

    def flip(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]

    def insert(data: bytes) -> bytes:
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes([rng.choice(specials)]) + data[i:]

    def delete(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + data[i + 1 :]

    def duplicate(data: bytes) -> bytes:
        i, j = sorted(rng.randrange(len(data) + 1) for _ in range(2))
        return data[:j] + data[i:j] + data[j:]

    def replace(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]

    return [truncate, flip, insert, delete, duplicate, replace]


@pytest.mark.parametrize("tp, obj", SEEDS, ids=["everything", "archive", "tree", "any"])
def test_mutated_payloads_only_raise_decode_error(tp: Any, obj: Any) -> None:
    rng = random.Random(20240229)
    codec = polycodec.Codec(tp)
    lax = polycodec.Codec(tp, strict=False)
    original = codec.encode_one(obj)
    mutations = _mutations(rng)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(1500):
        data = original
        for _ in range(rng.randint(1, 3)):
            if data:
                data = rng.choice(mutations)(data)
        for decoder in (codec, lax):
            try:
                decoder.decode_one(data)
                outcomes["ok"] += 1
            except polycodec.DecodeError as error:
                assert isinstance(error.path, str) and error.path.startswith("$")
                outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["ok"] + outcomes["error"] == 3000


@pytest.mark.parametrize("tp, obj", SEEDS, ids=["everything", "archive", "tree", "any"])
def test_every_truncation_is_a_decode_error(tp: Any, obj: Any) -> None:
    codec = polycodec.Codec(tp)
    original = codec.encode_one(obj)
    for end in range(len(original)):
        with pytest.raises(polycodec.DecodeError):
            codec.decode_one(original[:end])
