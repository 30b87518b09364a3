"""What is pickle's own about the types, with the stdlib ``pickle`` as the oracle: every kind of
record class (frozen, slotted, inherited, nested), time zones and fold, memoization, protocols,
unions dispatched by class, and what ``pickle.dumps`` writes for values of ``Any``.

In every check and protocol 2-5: ``pickle.loads`` reads what polycodec writes (and gets an equal
object of the same types), polycodec's output is never larger than ``pickle.dumps`` of the same
object, and polycodec reads back both its own output and what ``pickle.dumps`` wrote. The round
trips of every type of the shared catalogue are in tests/test_types_matrix.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import pickle
import pickletools
import uuid
import zoneinfo
from decimal import Decimal
from typing import Any, Literal, NamedTuple, Optional, TypedDict, Union

import pytest

import polycodec
from json_models import (
    Archive,
    Box,
    Chunk,
    Color,
    Linked,
    Pet,
    Cat,
    Dog,
    Point,
    Tree,
    assert_same,
)

PROTOCOLS = [2, 3, 4, 5]


def check_pickle(tp: Any, obj: Any, protocol: int = 5, **options: Any) -> bytes:
    """Checks ``obj`` as ``tp`` both ways against the stdlib; returns polycodec's pickle."""
    codec = polycodec.Codec(tp, "pickle", protocol=protocol, **options)
    out = codec.encode_one(obj)
    assert isinstance(out, bytes)
    assert_same(pickle.loads(out), obj)
    theirs = pickle.dumps(obj, protocol=protocol)
    assert len(out) <= len(theirs), (len(out), len(theirs))
    assert_same(codec.decode_one(out), obj)
    assert_same(codec.decode_one(theirs), obj)
    return out


def check_many(tp: Any, objs: list[Any], protocol: int = 5) -> None:
    codec = polycodec.Codec(tp, "pickle", protocol=protocol)
    out = codec.encode_many(objs)
    assert_same(pickle.loads(out), objs)
    theirs = pickle.dumps(objs, protocol=protocol)
    assert len(out) <= len(theirs), (len(out), len(theirs))
    assert_same(codec.decode_many(out), objs)
    assert_same(codec.decode_many(theirs), objs)


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    x: int
    y: str


@dataclasses.dataclass(slots=True)
class SlotPoint:
    x: int
    y: Optional[str] = None


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenSlotPoint:
    x: int
    tags: tuple[str, ...] = ()


@dataclasses.dataclass
class Base:
    a: int


@dataclasses.dataclass
class Derived(Base):
    b: str = "b"


@dataclasses.dataclass
class WithInit:
    a: int
    doubled: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.doubled = self.a * 2


@dataclasses.dataclass
class Empty:
    pass


class Shade(enum.Enum):
    DARK = 1
    LIGHT = "light"


class Row(NamedTuple):
    id: int
    label: str = "none"


class Partial(TypedDict, total=False):
    name: str
    count: int


@dataclasses.dataclass
class Records:
    frozen: FrozenPoint
    slots: SlotPoint
    frozen_slots: FrozenSlotPoint
    derived: Derived
    init: WithInit
    empty: Empty
    shade: Shade
    row: Row
    partial: Partial
    any_value: Any
    tree: Tree
    linked: Linked
    pets: list[Pet]
    box: Box[int]
    archive: Archive


RECORDS = Records(
    frozen=FrozenPoint(1, "one"),
    slots=SlotPoint(2),
    frozen_slots=FrozenSlotPoint(3, ("a", "b")),
    derived=Derived(4),
    init=WithInit(5),
    empty=Empty(),
    shade=Shade.LIGHT,
    row=Row(6),
    partial={"count": 7},
    any_value={"nested": [1, (2, 3), {4, 5}, frozenset({6}), b"x", None, 1.5, 2**80]},
    tree=Tree(1, [Tree(2), Tree(3, [Tree(4)])]),
    linked=Linked("a", Linked("b", Linked("c"))),
    pets=[Pet("tom", Cat("cat", 9)), Pet("rex", Dog("dog", True))],
    box=Box(1, [2, 3]),
    archive=Archive("x", [Chunk("c", 1)], {"k": Chunk("d", 2)}, Point(1, 2)),
)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_records_of_all_kinds(protocol: int) -> None:
    check_pickle(Records, RECORDS, protocol)
    check_many(Records, [RECORDS, RECORDS], protocol)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "tp, obj",
    [
        (FrozenPoint, FrozenPoint(1, "x")),
        (SlotPoint, SlotPoint(1, "y")),
        (FrozenSlotPoint, FrozenSlotPoint(1, ("t",))),
        (Derived, Derived(1, "z")),
        (WithInit, WithInit(3)),
        (Empty, Empty()),
        (Shade, Shade.DARK),
        (Row, Row(1, "x")),
        (Partial, {"name": "n"}),
        (Tree, Tree(1, [Tree(2)])),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, type) else v.__name__,
)
def test_each_record_kind_at_the_top(tp: Any, obj: Any, protocol: int) -> None:
    check_pickle(tp, obj, protocol)


def test_frozen_slots_state_is_the_dataclasses_list() -> None:
    # dataclasses gives frozen slotted classes a __setstate__ that takes a list of field values;
    # the state written must be that list (what pickle.dumps writes on every CPython >= 3.10).
    out = polycodec.Codec(FrozenSlotPoint, "pickle").encode_one(FrozenSlotPoint(1))
    ops = [op.name for op, _, _ in pickletools.genops(out)]
    assert "EMPTY_LIST" in ops and ops[-2:] == ["BUILD", "STOP"]


ZONES = [
    datetime.timezone.utc,
    datetime.timezone(datetime.timedelta(hours=2), "CEST"),
    datetime.timezone(datetime.timedelta(hours=-3, minutes=-30)),
    datetime.timezone(datetime.timedelta(seconds=61)),
    zoneinfo.ZoneInfo("Europe/Paris"),
    zoneinfo.ZoneInfo("America/New_York"),
]


@dataclasses.dataclass
class Stamped:
    at: datetime.datetime
    clock: datetime.time
    when: Optional[datetime.datetime] = None


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("zone", ZONES, ids=str)
def test_timezones(zone: Any, protocol: int) -> None:
    value = Stamped(
        datetime.datetime(2021, 3, 4, 5, 6, 7, 8, tzinfo=zone),
        datetime.time(1, 2, 3, tzinfo=zone),
        datetime.datetime(1999, 1, 1, tzinfo=zone),
    )
    out = check_pickle(Stamped, value, protocol)
    loaded = pickle.loads(out)
    assert loaded.at.tzinfo == zone
    assert loaded.at.tzname() == value.at.tzname()
    assert polycodec.Codec(Stamped, "pickle").decode_one(out).at.tzname() == value.at.tzname()


@pytest.mark.parametrize("protocol", [4, 5])
def test_fold_is_kept_from_protocol_4(protocol: int) -> None:
    # A canonical zone name: Debian's tzdata moved links such as US/Eastern to tzdata-legacy.
    value = datetime.datetime(
        2021, 11, 7, 1, 30, fold=1, tzinfo=zoneinfo.ZoneInfo("America/New_York")
    )
    out = check_pickle(datetime.datetime, value, protocol)
    assert pickle.loads(out).fold == 1
    assert polycodec.Codec(datetime.datetime, "pickle").decode_one(out).fold == 1
    t = datetime.time(1, 30, fold=1)
    assert polycodec.Codec(datetime.time, "pickle").decode_one(pickle.dumps(t, protocol)).fold == 1


def test_benchmark_models() -> None:
    from benches.models import MODELS, generate

    for spec in MODELS.values():
        objs = generate(spec.name, 20)
        for protocol in PROTOCOLS:
            for obj in objs[:3]:
                check_pickle(spec.root, obj, protocol)
            check_many(spec.root, objs, protocol)


def test_shared_objects_stay_small() -> None:
    # The same objects met again are memo references, as in pickle.dumps.
    shared_list = [1, 2, 3]
    text = "a fairly long string that is shared" * 3
    value = {"a": shared_list, "b": shared_list, "c": [text, text, text]}
    check_pickle(dict[str, list[Any]], value)
    check_pickle(list[str], [text] * 50)
    check_many(Point, [Point(1, 2)] * 10)
    blob = bytearray(b"shared bytes " * 4)
    moment = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    for protocol in PROTOCOLS:
        check_pickle(list[Any], [blob, blob, moment, moment, Decimal("1.5")] * 2, protocol)
        check_pickle(list[bytearray], [blob, blob], protocol)


def test_enum_members_and_classes_are_memoized() -> None:
    objs = [Color.RED, Color.GREEN, Color.RED, Color.RED]
    check_many(Color, objs)
    rows = [Point(i, i) for i in range(300)]
    for protocol in PROTOCOLS:
        check_many(Point, rows, protocol)


def test_protocol_option() -> None:
    for protocol in PROTOCOLS:
        out = polycodec.Codec(int, "pickle", protocol=protocol).encode_one(1)
        assert out[:2] == bytes([0x80, protocol])
    assert polycodec.Codec(int, "pickle").encode_one(1)[:2] == b"\x80\x05"
    assert polycodec.Codec(int, "pickle", protocol=None).encode_one(1)[:2] == b"\x80\x05"
    with pytest.raises(ValueError, match="from 2 to 5"):
        polycodec.Codec(int, "pickle", protocol=1)
    with pytest.raises(ValueError, match="from 2 to 5"):
        polycodec.Codec(int, "pickle", protocol=6)
    with pytest.raises(TypeError, match="int"):
        polycodec.Codec(int, "pickle", protocol="5")
    with pytest.raises(TypeError, match="unexpected keyword"):
        polycodec.Codec(int, "pickle", compression=True)


def test_module_level_functions() -> None:
    out = polycodec.encode_one(Point(1, 2), format="pickle")
    assert pickle.loads(out) == Point(1, 2)
    assert polycodec.decode_one(out, Point, format="pickle") == Point(1, 2)
    many = polycodec.encode_many([Point(1, 2)], format="pickle", protocol=3)
    assert polycodec.decode_many(many, Point, format="pickle") == [Point(1, 2)]


def test_decode_accepts_buffers() -> None:
    codec = polycodec.Codec(Point, "pickle")
    out = codec.encode_one(Point(3, 4))
    assert codec.decode_one(bytearray(out)) == Point(3, 4)
    assert codec.decode_one(memoryview(out)) == Point(3, 4)


def test_post_init_runs_and_init_false_state_is_read() -> None:
    codec = polycodec.Codec(WithInit, "pickle")
    value = WithInit(4)
    assert codec.decode_one(pickle.dumps(value)) == value


def test_validation_errors_have_paths() -> None:
    codec = polycodec.Codec(Archive, "pickle")
    bad = pickle.dumps(Archive("x", [Chunk("a", "many")]))  # type: ignore[arg-type]
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(bad)
    assert info.value.path == "$.contents[0].nbytes"
    with pytest.raises(polycodec.ValidationError, match="expected int"):
        polycodec.Codec(int, "pickle").decode_one(pickle.dumps("1"))
    with pytest.raises(polycodec.ValidationError):
        polycodec.Codec(Color, "pickle").decode_one(pickle.dumps("red"))


def test_encode_errors() -> None:
    codec = polycodec.Codec(Point, "pickle")
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(Point(1, "2"))  # type: ignore[arg-type]
    assert info.value.path == "$.y"
    with pytest.raises(polycodec.EncodeError):
        codec.encode_one(Chunk("a", 1))


def test_union_dispatch_by_type() -> None:
    tp = Union[int, float, str, None, Point, list[int]]
    for value in [1, 1.5, "s", None, Point(1, 2), [1]]:
        check_pickle(tp, value)
    for value in [1, b"b", None]:
        check_pickle(Union[bytes, int, None], value)
    for value in [1, datetime.date(2020, 1, 1)]:
        check_pickle(Union[datetime.date, int], value)
    assert_same(polycodec.Codec(Union[float, str], "pickle").decode_one(pickle.dumps(3)), 3.0)


def test_lone_surrogates_are_written_like_pickle() -> None:
    check_pickle(str, "a\udc80b")


def test_literal_and_literal_mix() -> None:
    check_pickle(Literal["a", 1, True], True)
    check_pickle(Literal["a", 1, True], "a")


def test_any_decodes_stdlib_values() -> None:
    value = [
        datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
        datetime.date(2020, 1, 2),
        datetime.time(3, 4),
        datetime.timedelta(5),
        Decimal("1.5"),
        uuid.UUID(int=7),
        {1, 2},
        frozenset(),
        bytearray(b"ba"),
    ]
    for protocol in PROTOCOLS:
        assert_same(polycodec.Codec(Any, "pickle").decode_one(pickle.dumps(value, protocol)), value)
        assert_same(
            pickle.loads(polycodec.Codec(Any, "pickle", protocol=protocol).encode_one(value)),
            value,
        )


class Outer:
    @dataclasses.dataclass
    class Inner:
        x: int

    class Tone(enum.Enum):
        LOW = "low"
        HIGH = "high"

    class Spot(NamedTuple):
        a: int


@dataclasses.dataclass
class HoldsNested:
    inner: Outer.Inner
    tone: Outer.Tone
    spot: Outer.Spot


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_nested_classes(protocol: int) -> None:
    # Protocols 2 and 3 name a nested class as getattr(Outer, "Inner").
    value = HoldsNested(Outer.Inner(1), Outer.Tone.HIGH, Outer.Spot(2))
    check_pickle(HoldsNested, value, protocol)
    check_many(HoldsNested, [value, value], protocol)
    check_pickle(Outer.Inner, Outer.Inner(3), protocol)


def test_enum_member_by_name() -> None:
    # getattr(Color, "RED"), the form some enums pickle as; the name is looked up among the
    # members, never with getattr.
    data = (
        b"\x80\x04\x8c\x08builtins\x8c\x07getattr\x93\x8c\x0bjson_models\x8c\x05Color\x93"
        b"\x8c\x03RED\x86R."
    )
    assert pickle.loads(data) is Color.RED
    assert polycodec.Codec(Color, "pickle").decode_one(data) is Color.RED
    with pytest.raises(polycodec.ValidationError):
        polycodec.Codec(Color, "pickle").decode_one(data.replace(b"\x03RED", b"\x03__c"))
