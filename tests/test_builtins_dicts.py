"""to_builtins's record dicts, made by copying a per-record template (where the ``dict_template``
layout is in use: CPython 3.11, 3.13, 3.14, 3.15) or filled key by key (a rerun of this file with
``POLYCODEC_PORTABLE=dict_template``, and every other interpreter).

Both must give what ``json.loads(codec.encode_one(x))`` gives: the same keys in the same order,
the same values, ordinary dicts (independent of each other, resizable, tracked by the garbage
collector exactly when ``json.loads``'s are), with no reference left behind.
"""

from __future__ import annotations

import datetime
import enum
import gc
import json
import sys
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, Optional, Union

import pytest

import polycodec
from layouts import rerun_portable


class Mood(enum.Enum):
    GOOD = "good"
    BAD = "bad"


@dataclass
class Inner:
    label: str
    weight: float
    mood: Mood
    when: Optional[datetime.date] = None


@dataclass
class Outer:
    name: str
    count: int
    price: Decimal
    stamp: datetime.datetime
    inner: Inner
    inners: list[Inner]
    extra: dict[str, int]
    note: Optional[str] = None


@dataclass
class Leaf:
    name: str
    size: int
    kind: Literal["leaf"] = "leaf"


@dataclass
class Branch:
    name: str
    children: list[Union[Leaf, Branch]] = field(default_factory=list)
    kind: Literal["branch"] = "branch"


@dataclass(slots=True)
class Slotted:
    a: int
    b: str
    c: list[int]


@dataclass
class Empty:
    pass


STAMP = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)


def outer() -> Outer:
    inner = Inner("x", 1.5, Mood.GOOD, datetime.date(2024, 1, 2))
    return Outer(
        "o", 3, Decimal("1.50"), STAMP, inner, [inner, Inner("y", 2.0, Mood.BAD)], {"k": 1}
    )


def tree() -> Branch:
    return Branch("root", [Leaf("a", 1), Branch("sub", [Leaf("b", 2), Branch("empty")])])


CASES: list[tuple[Any, Any]] = [
    (Outer, outer()),
    (Branch, tree()),
    (Union[Leaf, Branch], tree()),
    (list[Union[Leaf, Branch]], [Leaf("z", 0), tree()]),
    (Slotted, Slotted(1, "s", [2, 3])),
    (Empty, Empty()),
    (list[Inner], [Inner(str(i), float(i), Mood.BAD) for i in range(20)]),
]


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "dict_template")


def walk_pairs(out: Any, expected: Any) -> list[tuple[Any, Any]]:
    """Every (ours, json.loads's) pair of containers, outermost first."""
    pairs = [(out, expected)]
    if isinstance(out, dict):
        for key in out:
            pairs += walk_pairs(out[key], expected[key])
    elif isinstance(out, list):
        for a, b in zip(out, expected):
            pairs += walk_pairs(a, b)
    return pairs


@pytest.mark.parametrize("tp, value", CASES)
def test_record_dicts_match_json_keys_order_and_gc_tracking(tp: Any, value: Any) -> None:
    codec = polycodec.Codec(tp, "json")
    out = codec.to_builtins(value)
    expected = json.loads(codec.encode_one(value))
    assert out == expected
    for ours, theirs in walk_pairs(out, expected):
        assert type(ours) is type(theirs)
        if isinstance(ours, dict):
            assert list(ours) == list(theirs)
            assert gc.is_tracked(ours) == gc.is_tracked(theirs)


def test_record_dicts_are_independent_ordinary_dicts() -> None:
    codec = polycodec.Codec(Outer, "json")
    value = outer()
    first = codec.to_builtins(value)
    second = codec.to_builtins(value)
    assert first is not second and first["inner"] is not second["inner"]
    first["name"] = "changed"
    del first["count"]
    for i in range(100):  # grows the table past its copied size
        first[f"new{i}"] = i
    first["inner"].clear()
    expected = json.loads(codec.encode_one(value))
    assert second == expected
    assert codec.to_builtins(value) == expected
    assert first["new99"] == 99 and "count" not in first and first["inner"] == {}


def test_record_dicts_take_and_release_references() -> None:
    codec = polycodec.Codec(Inner, "json")
    label = "".join(["lab", "el"])  # a str of its own, counted alone
    value = Inner(label, 2.5, Mood.GOOD)
    before = sys.getrefcount(label)
    outs = [codec.to_builtins(value) for _ in range(10)]
    assert sys.getrefcount(label) == before + 10
    assert all(out["label"] is label for out in outs)
    del outs
    assert sys.getrefcount(label) == before
    nones = sys.getrefcount(None)
    for _ in range(1000):
        codec.to_builtins(value)  # every copy starts with None values, each replaced
    assert abs(sys.getrefcount(None) - nones) < 100


def test_record_dict_failing_midway_raises_the_json_error_and_leaks_nothing() -> None:
    codec = polycodec.Codec(Outer, "json")
    bad = outer()
    bad.inners[1].weight = float("nan")
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(bad)
    label = bad.inners[0].label
    before = sys.getrefcount(label)
    for _ in range(5):
        with pytest.raises(polycodec.EncodeError) as error:
            codec.to_builtins(bad)
        assert str(error.value) == str(json_error.value)
        assert error.value.path == json_error.value.path == "$.inners[1].weight"
    del error
    assert sys.getrefcount(label) == before
    good = outer()
    assert codec.to_builtins(good) == json.loads(codec.encode_one(good))


class Swept:
    """A value written through an extension hook that runs the garbage collector."""

    def __init__(self, n: int) -> None:
        self.n = n


@dataclass
class SweptHolder:
    items: list[int]
    swept: Swept
    more: list[Inner]


def test_record_dicts_survive_a_collection_while_they_are_filled() -> None:
    def encode(value: Swept) -> int:
        gc.collect()
        return value.n

    ext = {Swept: polycodec.Extension(int, encode=encode, decode=Swept)}
    codec = polycodec.Codec(SweptHolder, "json", extensions=ext)
    value = SweptHolder([1, 2], Swept(3), [Inner("i", 1.0, Mood.BAD)])
    out = codec.to_builtins(value)
    gc.collect()
    assert out == json.loads(codec.encode_one(value))
    assert gc.is_tracked(out)
    assert list(out) == ["items", "swept", "more"]


class Shade(str, enum.Enum):
    DARK = "dark"
    LIGHT = "light"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Text(str):
    pass


class Number(int):
    pass


class Odd(enum.Enum):
    """Values that are not exact strs or ints (the general encoder writes them), and a mix."""

    WORD = Text("word")
    SEVEN = Number(7)
    PLAIN = "plain"


class Other(enum.Enum):
    GOOD = "good"


@dataclass
class Enums:
    mood: Mood
    shade: Shade
    level: Level
    odd: Odd
    maybe: Optional[Mood]
    many: list[Mood]


ENUM_CASES = [
    Enums(Mood.GOOD, Shade.DARK, Level.HIGH, Odd.WORD, None, [Mood.BAD]),
    Enums(Mood.BAD, Shade.LIGHT, Level.LOW, Odd.SEVEN, Mood.GOOD, []),
    Enums(Mood.BAD, Shade.LIGHT, Level.LOW, Odd.PLAIN, Mood.BAD, [Mood.GOOD, Mood.BAD]),
]


@pytest.mark.parametrize("value", ENUM_CASES)
def test_enum_fields_give_the_json_form_as_the_members_values(value: Enums) -> None:
    codec = polycodec.Codec(Enums, "json")
    out = codec.to_builtins(value)
    assert out == json.loads(codec.encode_one(value))
    assert out["mood"] is value.mood.value
    assert type(out["shade"]) is str and out["shade"] is value.shade.value
    assert type(out["level"]) is int and out["level"] == value.level.value
    assert type(out["odd"]) is type(json.loads(json.dumps(value.odd.value)))
    assert codec.from_builtins(out) == value


@pytest.mark.parametrize(
    "field, bad",
    [
        ("mood", Other.GOOD),
        ("mood", "good"),
        ("shade", "dark"),
        ("level", 1),
        ("odd", "word"),
        ("maybe", Shade.DARK),
    ],
)
def test_enum_fields_refuse_non_members_as_json_does(field: str, bad: Any) -> None:
    codec = polycodec.Codec(Enums, "json")
    value = Enums(Mood.GOOD, Shade.DARK, Level.HIGH, Odd.WORD, None, [])
    setattr(value, field, bad)
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(value)
    with pytest.raises(polycodec.EncodeError) as error:
        codec.to_builtins(value)
    assert str(error.value) == str(json_error.value)
    assert error.value.path == json_error.value.path == f"$.{field}"
