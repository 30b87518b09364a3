"""Models and assertion helpers shared by the JSON test modules.

Declared with ``from __future__ import annotations`` on purpose: every annotation here is a string
that polycodec has to resolve, including the self-references of the recursive models.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Generic, Literal, NamedTuple, NewType, Optional, TypedDict, TypeVar, Union

import msgspec

import polycodec

T = TypeVar("T")

UTC = datetime.timezone.utc
PLUS_0530 = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
MINUS_0800 = datetime.timezone(datetime.timedelta(hours=-8))


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"
    SLOW = "slow"


UserId = NewType("UserId", int)


@dataclass
class Point:
    x: int
    y: int


class Pair(NamedTuple):
    left: int
    right: str


class Movie(TypedDict):
    title: str
    year: int


@dataclass
class Box(Generic[T]):
    item: T
    items: list[T]


@dataclass
class Tree:
    value: int
    children: list[Tree] = field(default_factory=list)


@dataclass
class Linked:
    value: str
    next: Optional[Linked] = None


@dataclass
class Cat:
    kind: Literal["cat"]
    lives: int


@dataclass
class Dog:
    kind: Literal["dog"]
    good: bool


@dataclass
class Pet:
    name: str
    animal: Union[Cat, Dog]


@dataclass
class Chunk:
    name: str
    nbytes: int


@dataclass
class Archive:
    label: str
    contents: list[Chunk]
    index: dict[str, Chunk] = field(default_factory=dict)
    owner: Optional[Point] = None


@dataclass
class Everything:
    """One field of every non-float scalar and container type (msgspec writes the same bytes)."""

    none: None
    flag: bool
    small: int
    huge: int
    text: str
    blob: bytes
    buffer: bytearray
    money: Decimal
    naive: datetime.datetime
    aware: datetime.datetime
    day: datetime.date
    clock: datetime.time
    span: datetime.timedelta
    ident: uuid.UUID
    color: Color
    level: Level
    mode: Mode
    choice: Literal["a", "b", 3]
    maybe: Optional[int]
    either: Union[int, str]
    items: list[int]
    pair: tuple[int, str]
    many: tuple[int, ...]
    unique: set[int]
    frozen: frozenset[str]
    by_name: dict[str, int]
    by_int: dict[int, str]
    by_enum: dict[Color, int]
    by_uuid: dict[uuid.UUID, int]
    point: Point
    named: Pair
    movie: Movie
    user: UserId
    anything: Any


EVERYTHING = Everything(
    none=None,
    flag=True,
    small=-7,
    huge=2**100,
    text="héllo ✓ 𝄞",
    blob=b"\x00\xffbinary",
    buffer=bytearray(b"buf"),
    money=Decimal("-12.340"),
    naive=datetime.datetime(2024, 2, 29, 23, 59, 58, 123456),
    aware=datetime.datetime(2001, 1, 2, 3, 4, 5, tzinfo=PLUS_0530),
    day=datetime.date(1999, 12, 31),
    clock=datetime.time(7, 8, 9, 1000),
    span=datetime.timedelta(days=3, seconds=4, microseconds=5),
    ident=uuid.UUID("12345678-1234-5678-1234-567812345678"),
    color=Color.GREEN,
    level=Level.HIGH,
    mode=Mode.SLOW,
    choice=3,
    maybe=None,
    either="x",
    items=[1, 2, 3],
    pair=(1, "one"),
    many=(4, 5),
    unique={1, 2},
    frozen=frozenset({"z"}),
    by_name={"a": 1, "b": 2},
    by_int={1: "one", -2: "minus two"},
    by_enum={Color.RED: 1},
    by_uuid={uuid.UUID(int=1): 5},
    point=Point(1, 2),
    named=Pair(3, "three"),
    movie={"title": "Alien", "year": 1979},
    user=UserId(42),
    anything={"k": [1, "two", None, True]},
)

EVERYTHING_JSON: dict[str, Any] = {
    "none": None,
    "flag": True,
    "small": -7,
    "huge": 2**100,
    "text": "héllo ✓ 𝄞",
    "blob": "AP9iaW5hcnk=",
    "buffer": "YnVm",
    "money": "-12.340",
    "naive": "2024-02-29T23:59:58.123456",
    "aware": "2001-01-02T03:04:05+05:30",
    "day": "1999-12-31",
    "clock": "07:08:09.001000",
    "span": "P3DT4.000005S",
    "ident": "12345678-1234-5678-1234-567812345678",
    "color": "green",
    "level": 2,
    "mode": "slow",
    "choice": 3,
    "maybe": None,
    "either": "x",
    "items": [1, 2, 3],
    "pair": [1, "one"],
    "many": [4, 5],
    "unique": [1, 2],
    "frozen": ["z"],
    "by_name": {"a": 1, "b": 2},
    "by_int": {"1": "one", "-2": "minus two"},
    "by_enum": {"red": 1},
    "by_uuid": {"00000000-0000-0000-0000-000000000001": 5},
    "point": {"x": 1, "y": 2},
    "named": [3, "three"],
    "movie": {"title": "Alien", "year": 1979},
    "user": 42,
    "anything": {"k": [1, "two", None, True]},
}


@dataclass
class Floats:
    value: float
    maybe: Optional[float]
    values: list[float]
    either: Union[int, float]


def assert_same(actual: Any, expected: Any) -> None:
    """Equality that also demands the same types all the way down (so 1 is not True or 1.0)
    and the same UTC offsets (aware datetimes compare equal across zones)."""
    assert type(actual) is type(expected), f"{actual!r} is a {type(actual)}, not {type(expected)}"
    assert actual == expected
    if dataclasses.is_dataclass(expected):
        for f in dataclasses.fields(expected):
            assert_same(getattr(actual, f.name), getattr(expected, f.name))
    elif isinstance(expected, (list, tuple)):
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for (ka, va), (ke, ve) in zip(actual.items(), expected.items()):
            assert_same(ka, ke)
            assert_same(va, ve)
    elif isinstance(expected, (set, frozenset)):
        assert {type(x) for x in actual} == {type(x) for x in expected}
    elif isinstance(expected, (datetime.datetime, datetime.time)):
        assert actual.utcoffset() == expected.utcoffset()


def check_json(
    tp: Any,
    obj: Any,
    jsonable: Any,
    *,
    msgspec_oracle: bool = True,
    same_bytes: bool = True,
    **options: Any,
) -> bytes:
    """Round trip ``obj`` as ``tp`` and check the output against the expected JSON form and the
    oracles: ``json`` both ways and, where it supports the type, ``msgspec`` both ways."""
    codec = polycodec.Codec(tp, format="json", **options)
    out = codec.encode_one(obj)
    assert isinstance(out, bytes)
    assert_same(json.loads(out), jsonable)
    assert_same(codec.decode_one(out), obj)
    assert_same(codec.decode_one(json.dumps(jsonable, indent=2)), obj)
    assert_same(codec.decode_one(json.dumps(jsonable, ensure_ascii=False).encode()), obj)
    if msgspec_oracle:
        assert_same(msgspec.json.decode(out, type=tp), obj)
        theirs = msgspec.json.encode(obj)
        assert_same(codec.decode_one(theirs), obj)
        if same_bytes:
            assert out == theirs
    return out
