"""The encoders' record walks decided when the plan is built, against msgspec's bytes and the
JSON form: maps whose fields may be left out (``omit_defaults``, UNSET, a TypedDict's absent
keys), records written as arrays (``array_like``, NamedTuples), class tags, and the typed lists
and str-keyed dicts whose plain items are written straight from the container. Each runs on
``slots=True`` and plain dataclasses, and again (a rerun of this file) with the layouts that
read fields directly turned off."""

import dataclasses
import enum
import json
import math
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple, TypedDict, Union

import msgspec
import pytest

import polycodec
from layouts import rerun_portable
from polycodec import UNSET, UnsetType

FORMATS = ["json", "msgpack"]
SLOTS = [False, True]


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "inline_values,slot_offsets,dict_entries")


def _encode(fmt: str, value: Any) -> bytes:
    return (msgspec.json if fmt == "json" else msgspec.msgpack).encode(value)


def _check(cls: Any, value: Any, expected: Any, fmt: str) -> None:
    """`value` encodes to msgspec's bytes of `expected`, and its builtins form is its JSON."""
    codec = polycodec.Codec(cls, format=fmt)
    assert codec.encode_one(value) == _encode(fmt, expected)
    assert codec.encode_many([value, value]) == _encode(fmt, [expected, expected])
    if fmt == "json":
        as_json = json.loads(codec.encode_one(value))
        assert codec.to_builtins(value) == as_json
        assert polycodec.Codec(List[cls]).to_builtins([value]) == [as_json]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def _omitting(slots: bool) -> Any:
    @polycodec.options(omit_defaults=True)
    @dataclasses.dataclass(slots=slots)
    class Omitting:
        a: Any = 0
        b: Any = 0.0
        c: Any = False
        d: Any = ""
        e: Any = None
        f: Any = "text"
        g: Any = 1000
        h: Any = -0.0
        color: Color = Color.RED
        level: Level = Level.LOW
        items: List[int] = dataclasses.field(default_factory=list)
        table: Dict[str, int] = dataclasses.field(default_factory=dict)
        empty: Tuple[int, ...] = ()

    return Omitting


# Each value with, per field, whether it is the default: the same exact type and the same value
# (floats by their bits), whatever object it is.
SAME = [
    ("a", int("0"), True),
    ("a", False, False),
    ("a", 0.0, False),
    ("a", 1, False),
    ("b", float("0.0"), True),
    ("b", 0, False),
    ("b", -0.0, False),
    ("b", False, False),
    ("c", False, True),
    ("c", 0, False),
    ("c", True, False),
    ("d", "".join([]), True),
    ("d", "x", False),
    ("d", b"", False),
    ("e", None, True),
    ("e", 0, False),
    ("f", "".join(["te", "xt"]), True),
    ("f", "texts"[:4] + "!", False),
    ("g", int("1000"), True),
    ("g", 1000.0, False),
    ("g", 2**40, False),
    ("h", -0.0, True),
    ("h", 0.0, False),
    ("color", Color.RED, True),
    ("color", Color.BLUE, False),
    ("level", Level.LOW, True),
    ("level", Level.HIGH, False),
    ("items", [], True),
    ("items", [0], False),
    ("table", {}, True),
    ("table", {"k": 0}, False),
    ("empty", (), True),
    ("empty", (1,), False),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
@pytest.mark.parametrize("name, item, is_default", SAME, ids=repr)
def test_omit_defaults_leaves_out_only_equal_values_of_the_same_type(
    fmt: str, slots: bool, name: str, item: Any, is_default: bool
) -> None:
    cls = _omitting(slots)
    value = cls(**{name: item})
    expected: Dict[str, Any] = {}
    if not is_default:
        expected[name] = list(item) if isinstance(item, tuple) else item
        if isinstance(item, enum.Enum):
            expected[name] = item.value
    if fmt == "json" and isinstance(item, bytes):
        pytest.skip("bytes under Any are not JSON")
    _check(cls, value, expected, fmt)


@pytest.mark.parametrize("slots", SLOTS)
def test_a_nan_default_leaves_out_the_same_nan(slots: bool) -> None:
    @polycodec.options(omit_defaults=True)
    @dataclasses.dataclass(slots=slots)
    class Reading:
        value: float = math.nan
        other: float = 1.5

    codec = polycodec.Codec(Reading, format="msgpack")
    assert codec.encode_one(Reading()) == msgspec.msgpack.encode({})
    assert codec.encode_one(Reading(float("nan"))) == msgspec.msgpack.encode({})
    assert codec.encode_one(Reading(1.0)) == msgspec.msgpack.encode({"value": 1.0})
    # Another NaN (its sign bit set) is another value.
    negative = -math.nan
    assert math.copysign(1.0, negative) < 0
    assert codec.encode_one(Reading(negative)) == msgspec.msgpack.encode({"value": negative})


class MyList(list):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_a_default_container_changed_after_construction_is_written(fmt: str, slots: bool) -> None:
    @polycodec.options(omit_defaults=True)
    @dataclasses.dataclass(slots=slots)
    class Basket:
        items: List[int] = dataclasses.field(default_factory=list)
        names: Dict[str, int] = dataclasses.field(default_factory=dict)

    basket = Basket()
    _check(Basket, basket, {}, fmt)
    basket.items.append(3)
    basket.names["n"] = 1
    _check(Basket, basket, {"items": [3], "names": {"n": 1}}, fmt)
    basket.items.clear()
    _check(Basket, basket, {"names": {"n": 1}}, fmt)
    # An empty list of a subclass is not the factory's empty list.
    _check(Basket, Basket(MyList()), {"items": []}, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_a_shared_mutable_default_object_is_left_out_as_itself(fmt: str, slots: bool) -> None:
    shared = Color.BLUE

    @polycodec.options(omit_defaults=True)
    @dataclasses.dataclass(slots=slots)
    class Holder:
        mark: Any = dataclasses.field(default_factory=lambda: shared)
        n: int = 0

    _check(Holder, Holder(), {}, fmt)
    _check(Holder, Holder(Color.RED, 2), {"mark": "red", "n": 2}, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_omit_defaults_with_a_tag_and_renamed_fields(fmt: str, slots: bool) -> None:
    @polycodec.options(omit_defaults=True, tag="Created", rename="camel")
    @dataclasses.dataclass(slots=slots)
    class Created:
        order_id: int
        note: Optional[str] = None
        retry_count: int = 0

    @polycodec.options(omit_defaults=True, tag="Cancelled", rename="camel")
    @dataclasses.dataclass(slots=slots)
    class Cancelled:
        order_id: int
        reason: str = ""

    Event = Union[Created, Cancelled]
    events = [Created(1), Created(2, "rush", 3), Cancelled(4), Cancelled(5, "late")]
    expected = [
        {"type": "Created", "orderId": 1},
        {"type": "Created", "orderId": 2, "note": "rush", "retryCount": 3},
        {"type": "Cancelled", "orderId": 4},
        {"type": "Cancelled", "orderId": 5, "reason": "late"},
    ]
    _check(List[Event], events, expected, fmt)


def _patch(slots: bool) -> Any:
    @dataclasses.dataclass(slots=slots)
    class Patch:
        id: int
        name: Union[str, UnsetType] = UNSET
        count: Union[int, UnsetType] = UNSET
        tags: Union[List[str], UnsetType] = UNSET

    return Patch


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_unset_fields_are_left_out(fmt: str, slots: bool) -> None:
    cls = _patch(slots)
    _check(cls, cls(1), {"id": 1}, fmt)
    _check(cls, cls(1, count=2), {"id": 1, "count": 2}, fmt)
    _check(cls, cls(1, "n", 2, ["t"]), {"id": 1, "name": "n", "count": 2, "tags": ["t"]}, fmt)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_unset_in_an_array_like_record_is_refused_as_before(fmt: str, slots: bool) -> None:
    @polycodec.options(array_like=True)
    @dataclasses.dataclass(slots=slots)
    class Row:
        id: int
        name: Union[str, UnsetType] = UNSET

    codec = polycodec.Codec(Row, format=fmt)
    assert codec.encode_one(Row(1, "a")) == _encode(fmt, [1, "a"])
    message = "field `name` is UNSET, which an array_like record cannot leave out"
    with pytest.raises(polycodec.EncodeError, match=message) as caught:
        codec.encode_one(Row(1))
    assert caught.value.path == "$[1]"
    with pytest.raises(polycodec.EncodeError, match=message):
        polycodec.Codec(Row).to_builtins(Row(1))
    with pytest.raises(polycodec.EncodeError, match=message) as caught:
        polycodec.Codec(List[Row], format=fmt).encode_one([Row(1, "a"), Row(2)])
    assert caught.value.path == "$[1][1]"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("slots", SLOTS)
def test_array_like_records_and_tags(fmt: str, slots: bool) -> None:
    @polycodec.options(array_like=True, tag="Point")
    @dataclasses.dataclass(slots=slots)
    class Point:
        x: float
        y: float
        label: str = ""

    @polycodec.options(array_like=True)
    @dataclasses.dataclass(slots=slots)
    class Line:
        start: Point
        end: Optional[Point]
        weight: int

    value = Line(Point(1.0, 2, "a"), None, 3)
    expected = [["Point", 1.0, 2, "a"], None, 3]
    _check(Line, value, expected, fmt)
    _check(
        Line,
        Line(Point(0.5, 1.5), Point(2.5, 3.5), -1),
        [
            ["Point", 0.5, 1.5, ""],
            ["Point", 2.5, 3.5, ""],
            -1,
        ],
        fmt,
    )
    with pytest.raises(polycodec.EncodeError, match="expected int, got str") as caught:
        polycodec.Codec(Line, format=fmt).encode_one(Line(Point(1.0, 2.0), None, "3"))  # type: ignore[arg-type]
    assert caught.value.path == "$[2]"


class Pair(NamedTuple):
    left: int
    right: str
    extra: float = 0.5


class Movie(TypedDict, total=False):
    title: str
    year: int


class Required(TypedDict):
    title: str
    year: int


@pytest.mark.parametrize("fmt", FORMATS)
def test_named_tuples_and_typed_dicts(fmt: str) -> None:
    _check(Pair, Pair(1, "a"), [1, "a", 0.5], fmt)
    _check(
        List[Pair],
        [Pair(1, "a", 2.0), Pair(-(2**40), "é")],
        [[1, "a", 2.0], [-(2**40), "é", 0.5]],
        fmt,
    )
    _check(Movie, Movie(title="x"), {"title": "x"}, fmt)
    _check(Movie, Movie(year=1999, title="y"), {"title": "y", "year": 1999}, fmt)
    _check(Movie, Movie(), {}, fmt)
    with pytest.raises(polycodec.EncodeError, match="missing required field `year`"):
        polycodec.Codec(Required, format=fmt).encode_one({"title": "x"})
    with pytest.raises(polycodec.EncodeError, match="missing required field `year`"):
        polycodec.Codec(Required).to_builtins({"title": "x"})
    with pytest.raises(polycodec.EncodeError, match="expected int, got str") as caught:
        polycodec.Codec(Movie, format=fmt).encode_one({"year": "1999"})
    assert caught.value.path == "$.year"


class MyInt(int):
    pass


class MyStr(str):
    pass


@dataclasses.dataclass
class Lists:
    ints: List[int]
    strs: List[str]
    floats: List[float]
    flags: List[bool]
    maybe: List[Optional[int]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_typed_lists_write_items_of_any_int_or_str(fmt: str) -> None:
    value = Lists(
        [1, MyInt(7), -(2**63), 2**63 - 1, 0],
        ["a", MyStr("b"), "é", 'q"\\\n', ""],
        [1.5, 2, -0.0],
        [True, False],
        [None, 1, MyInt(2)],
    )
    expected = {
        "ints": [1, 7, -(2**63), 2**63 - 1, 0],
        "strs": ["a", "b", "é", 'q"\\\n', ""],
        "floats": [1.5, 2, -0.0],
        "flags": [True, False],
        "maybe": [None, 1, 2],
    }
    _check(Lists, value, expected, fmt)
    built = polycodec.Codec(Lists).to_builtins(value)
    assert type(built["ints"][1]) is int and type(built["strs"][1]) is str


@pytest.mark.parametrize("fmt", FORMATS)
def test_typed_lists_refuse_what_they_refused(fmt: str) -> None:
    codec = polycodec.Codec(List[int], format=fmt)
    with pytest.raises(polycodec.EncodeError, match="expected int, got bool") as caught:
        codec.encode_one([1, True])
    assert caught.value.path == "$[1]"
    with pytest.raises(polycodec.EncodeError, match="expected int, got str"):
        codec.encode_one([1, "2"])
    with pytest.raises(polycodec.EncodeError, match="expected str, got int") as caught:
        polycodec.Codec(List[str], format=fmt).encode_one(["a", "b", 3])
    assert caught.value.path == "$[2]"
    big = 2**64
    if fmt == "json":
        assert codec.encode_one([big, 1]) == b"[%d,1]" % big
    else:
        with pytest.raises(polycodec.EncodeError, match="int out of range"):
            codec.encode_one([big])
        assert codec.encode_one([2**64 - 1]) == msgspec.msgpack.encode([2**64 - 1])


@pytest.mark.parametrize("fmt", FORMATS)
def test_str_keyed_dicts(fmt: str) -> None:
    value = {"a": 1, MyStr("b"): MyInt(2), "é": -3, 'k"\\': 2**62, "": 0}
    expected = {"a": 1, "b": 2, "é": -3, 'k"\\': 2**62, "": 0}
    _check(Dict[str, int], value, expected, fmt)
    _check(
        Dict[str, Optional[float]],
        {"x": None, "y": 1.5, "z": 2},
        {"x": None, "y": 1.5, "z": 2},
        fmt,
    )
    _check(Dict[str, List[int]], {"x": [1, 2], "y": []}, {"x": [1, 2], "y": []}, fmt)
    codec = polycodec.Codec(Dict[str, int], format=fmt)
    with pytest.raises(polycodec.EncodeError, match="expected int, got str") as caught:
        codec.encode_one({"a": 1, "b": "2"})
    assert caught.value.path == '$["b"]'
    with pytest.raises(polycodec.EncodeError, match="expected str, got int"):
        codec.encode_one({1: 1})
    if fmt == "json":
        with pytest.raises(polycodec.EncodeError, match="no JSON representation"):
            polycodec.Codec(Dict[str, float]).encode_one({"a": math.inf})


@pytest.mark.parametrize("fmt", FORMATS)
def test_str_keyed_dicts_of_str_and_float_lists_each_kind_of_item(fmt: str) -> None:
    # Each common value rule has a loop of its own: str values (exact ASCII, a subclass,
    # non-ASCII, escapes) and float lists (floats, ints, a float subclass) against msgspec.
    value = {"a": "x", "b": MyStr("y"), "c": "é", "d": 'q"\\\n', "e": ""}
    _check(Dict[str, str], value, {k: str(v) for k, v in value.items()}, fmt)
    with pytest.raises(polycodec.EncodeError, match="expected str, got int") as caught:
        polycodec.Codec(Dict[str, str], format=fmt).encode_one({"a": "x", "b": 1})
    assert caught.value.path == '$["b"]'

    class MyFloat(float):
        pass

    floats = [1.5, 2, MyFloat(0.25), -0.0, 2**63 - 1]
    _check(List[float], floats, [1.5, 2, 0.25, -0.0, 2**63 - 1], fmt)
    codec = polycodec.Codec(List[float], format=fmt)
    with pytest.raises(polycodec.EncodeError, match="expected float, got str") as caught:
        codec.encode_one([1.0, "2"])
    assert caught.value.path == "$[1]"
    if fmt == "json":
        with pytest.raises(polycodec.EncodeError, match="no JSON representation"):
            codec.encode_one([1.0, math.nan])
    else:
        assert codec.encode_one([math.inf]) == msgspec.msgpack.encode([math.inf])


@dataclasses.dataclass
class Collections:
    tags: Set[str]
    frozen: FrozenSet[int]
    pair: Tuple[int, str]
    numbers: Tuple[int, ...]
    points: List[Tuple[float, float]]


@pytest.mark.parametrize("fmt", FORMATS)
def test_sets_and_tuples(fmt: str) -> None:
    value = Collections({"a", "b"}, frozenset({3, 1}), (1, "p"), (1, 2, 3), [(0.5, 1.5)])
    expected = {
        "tags": list(value.tags),
        "frozen": list(value.frozen),
        "pair": [1, "p"],
        "numbers": [1, 2, 3],
        "points": [[0.5, 1.5]],
    }
    _check(Collections, value, expected, fmt)
    _check(
        Collections,
        Collections(set(), frozenset(), (0, ""), (), []),
        {
            "tags": [],
            "frozen": [],
            "pair": [0, ""],
            "numbers": [],
            "points": [],
        },
        fmt,
    )
    # A list stands for a tuple, as the shared encoder takes it.
    listed = Collections({"a"}, frozenset(), [2, "q"], [4], [[1.0, 2.0]])  # type: ignore[arg-type]
    _check(
        Collections,
        listed,
        {
            "tags": ["a"],
            "frozen": [],
            "pair": [2, "q"],
            "numbers": [4],
            "points": [[1.0, 2.0]],
        },
        fmt,
    )


def test_builtins_tuples_refuse_what_they_refused() -> None:
    codec = polycodec.Codec(Collections)
    wrong = Collections({"a"}, frozenset(), (1, "p", 3), (), [])  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError, match="expected a tuple of length 2, got length 3"):
        codec.to_builtins(wrong)
    with pytest.raises(polycodec.EncodeError, match="expected str, got int") as caught:
        codec.to_builtins(Collections({"a"}, frozenset(), (1, 2), (), []))  # type: ignore[arg-type]
    assert caught.value.path == "$.pair[1]"
    with pytest.raises(polycodec.EncodeError, match="expected str, got int") as caught:
        codec.to_builtins(Collections({"a", 5}, frozenset(), (1, "x"), (), []))  # type: ignore[arg-type]
    assert caught.value.path.startswith("$.tags[")


@dataclasses.dataclass
class PlainItems:
    numbers: Tuple[int, ...]
    floats: Tuple[float, ...]
    tags: Set[str]
    ids: FrozenSet[int]


@pytest.mark.parametrize("fmt", FORMATS)
def test_tuples_and_sets_leave_other_items_to_the_general_path(fmt: str) -> None:
    # Items a tuple's or set's plain path does not write itself (subclasses, ints past 64
    # bits, non-ASCII strs) are written as a list's are.
    value = PlainItems(
        (1, MyInt(7), 2**63 - 1), (1.5, 2, MyInt(3)), {"é", MyStr("b")}, frozenset({-(2**63), 4})
    )
    expected = {
        "numbers": [1, 7, 2**63 - 1],
        "floats": [1.5, 2, 3],
        "tags": [str(tag) for tag in value.tags],
        "ids": list(value.ids),
    }
    _check(PlainItems, value, expected, fmt)
    codec = polycodec.Codec(PlainItems, format=fmt)
    with pytest.raises(polycodec.EncodeError, match="expected int, got str") as caught:
        codec.encode_one(PlainItems((1, "x"), (), set(), frozenset()))  # type: ignore[arg-type]
    assert caught.value.path == "$.numbers[1]"
    if fmt == "json":
        with pytest.raises(polycodec.EncodeError, match="no JSON representation"):
            codec.encode_one(PlainItems((), (1.0, math.nan), set(), frozenset()))


@pytest.mark.parametrize("fmt", FORMATS)
def test_typed_dict_keys_out_of_step_are_looked_up(fmt: str) -> None:
    # The reader takes the dict's next entry when its key is the field's name; an unknown key
    # between fields, a key that is an equal but distinct str, and keys out of order are found
    # by lookup.
    year = "".join(["ye", "ar"])
    for value in (
        {"title": "x", "extra": 1, "year": 2},
        {year: 2, "title": "x"},
        {"title": "x", year: 2},
    ):
        _check(Required, value, {"title": "x", "year": 2}, fmt)
