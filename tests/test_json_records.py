"""Records through JSON: dataclass flavours, TypedDict, NamedTuple, generics, recursion and
tagged unions."""

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, NotRequired, Optional, TypedDict, TypeVar, Union

import msgspec
import pytest

import polycodec
from json_models import Box, Cat, Dog, Linked, Pet, Point, Tree, assert_same, check_json

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FrozenSlots:
    a: int
    b: str = "b"


@dataclass(slots=True)
class Slots:
    a: int
    b: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Frozen:
    a: int


@dataclass(kw_only=True)
class KwOnly:
    a: int
    b: int = 2


@dataclass
class Mixed:
    a: int
    _: dataclasses.KW_ONLY
    b: str
    c: float = 0.5


@dataclass
class Defaults:
    required: int
    number: int = 7
    text: str = "t"
    none: Optional[int] = None
    tags: list[str] = field(default_factory=lambda: ["x"])
    point: Point = field(default_factory=lambda: Point(0, 0))


@dataclass
class Validated:
    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError("low must not exceed high")


@dataclass
class Derived:
    value: int
    double: int = field(init=False)

    def __post_init__(self) -> None:
        self.double = self.value * 2


@dataclass
class Holder:
    items: list[Validated]


class Partial(TypedDict, total=False):
    a: int
    b: str


class SomeRequired(TypedDict):
    a: int
    b: NotRequired[str]


@dataclass
class Pair(Generic[T]):
    first: T
    second: T


@dataclass
class StrTree:
    """Recursive through a string forward reference, without ``from __future__``."""

    name: str
    children: "list[StrTree]"
    parent: "Optional[StrTree]" = None


@dataclass
class Bird:
    kind: Literal["bird", "parrot"]
    wings: int = 2


@dataclass
class Shape:
    tag: Literal[1]
    sides: int


@dataclass
class Blob:
    tag: Literal[2]
    size: float


@pytest.mark.parametrize(
    "obj, jsonable",
    [
        (FrozenSlots(1, "x"), {"a": 1, "b": "x"}),
        (Slots(1, [2]), {"a": 1, "b": [2]}),
        (Frozen(5), {"a": 5}),
        (KwOnly(a=1, b=3), {"a": 1, "b": 3}),
        (Mixed(1, b="s", c=2.5), {"a": 1, "b": "s", "c": 2.5}),
    ],
    ids=["frozen-slots", "slots", "frozen", "kw-only", "kw-only-marker"],
)
def test_dataclass_flavours(obj: object, jsonable: object) -> None:
    check_json(type(obj), obj, jsonable, same_bytes=not isinstance(obj, Mixed))


def test_defaults_fill_missing_fields() -> None:
    value = polycodec.decode_one(b'{"required": 1}', Defaults)
    assert_same(value, Defaults(1))
    check_json(
        Defaults,
        Defaults(1),
        {
            "required": 1,
            "number": 7,
            "text": "t",
            "none": None,
            "tags": ["x"],
            "point": {"x": 0, "y": 0},
        },
    )


def test_default_factory_gives_fresh_values() -> None:
    first = polycodec.decode_one(b'{"required": 1}', Defaults)
    second = polycodec.decode_one(b'{"required": 1}', Defaults)
    assert first.tags == ["x"] and first.tags is not second.tags
    assert first.point is not second.point


def test_post_init_runs_on_decode() -> None:
    assert polycodec.decode_one(b'{"value": 4}', Derived).double == 8
    assert polycodec.encode_one(Derived(4)) == b'{"value":4}'
    assert polycodec.decode_one(b'{"low": 1, "high": 2}', Validated) == Validated(1, 2)


def test_post_init_exception_propagates() -> None:
    with pytest.raises((polycodec.ValidationError, ValueError)) as info:
        polycodec.decode_one(b'{"low": 3, "high": 2}', Validated)
    assert "low must not exceed high" in str(info.value)


def test_post_init_exception_inside_list() -> None:
    with pytest.raises((polycodec.ValidationError, ValueError)) as info:
        polycodec.decode_one(b'{"items": [{"low": 1, "high": 1}, {"low": 3, "high": 2}]}', Holder)
    assert "low must not exceed high" in str(info.value)
    if isinstance(info.value, polycodec.ValidationError):
        assert info.value.path == "$.items[1]"


def test_init_false_field_is_not_read_from_input() -> None:
    value = polycodec.decode_one(b'{"value": 1, "double": 100}', Derived)
    assert value.double == 2


def test_typeddict_optional_keys() -> None:
    check_json(Partial, {}, {})
    check_json(Partial, {"b": "x"}, {"b": "x"})
    check_json(SomeRequired, {"a": 1}, {"a": 1})
    check_json(SomeRequired, {"a": 1, "b": "y"}, {"a": 1, "b": "y"})
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"b": "y"}', SomeRequired)
    assert info.value.path == "$"
    assert "a" in str(info.value)


def test_generic_dataclasses() -> None:
    check_json(Pair[int], Pair(1, 2), {"first": 1, "second": 2})
    check_json(
        Pair[Point],
        Pair(Point(1, 2), Point(3, 4)),
        {"first": {"x": 1, "y": 2}, "second": {"x": 3, "y": 4}},
    )
    check_json(Box[str], Box("a", ["b"]), {"item": "a", "items": ["b"]})
    check_json(
        Box[Pair[int]], Box(Pair(1, 2), []), {"item": {"first": 1, "second": 2}, "items": []}
    )
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"first": 1, "second": "2"}', Pair[int])
    assert info.value.path == "$.second"


def test_unparametrised_generic_is_any() -> None:
    assert_same(polycodec.decode_one(b'{"first": 1, "second": "x"}', Pair), Pair(1, "x"))


def test_recursive_dataclasses() -> None:
    tree = Tree(1, [Tree(2), Tree(3, [Tree(4)])])
    jsonable = {
        "value": 1,
        "children": [
            {"value": 2, "children": []},
            {"value": 3, "children": [{"value": 4, "children": []}]},
        ],
    }
    check_json(Tree, tree, jsonable)
    linked = Linked("a", Linked("b", Linked("c")))
    check_json(
        Linked, linked, {"value": "a", "next": {"value": "b", "next": {"value": "c", "next": None}}}
    )
    check_json(
        StrTree,
        StrTree("root", [StrTree("leaf", [])]),
        {
            "name": "root",
            "children": [{"name": "leaf", "children": [], "parent": None}],
            "parent": None,
        },
    )


def test_recursive_error_path() -> None:
    payload = b'{"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]}'
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, Tree)
    assert info.value.path == "$.children[0].children[0].value"


def test_tagged_union() -> None:
    tp = Union[Cat, Dog]
    codec: polycodec.Codec[Any] = polycodec.Codec(tp)
    assert codec.encode_one(Cat("cat", 9)) == b'{"kind":"cat","lives":9}'
    assert_same(codec.decode_one(b'{"kind":"dog","good":true}'), Dog("dog", True))
    assert_same(codec.decode_one(b'{"good":false,"kind":"dog"}'), Dog("dog", False))
    pet = Pet("rex", Dog("dog", True))
    check_json(
        Pet, pet, {"name": "rex", "animal": {"kind": "dog", "good": True}}, msgspec_oracle=False
    )
    pets = [Cat("cat", 1), Dog("dog", False)]
    out = codec.encode_many(pets)
    assert json.loads(out) == [{"kind": "cat", "lives": 1}, {"kind": "dog", "good": False}]
    assert_same(codec.decode_many(out), pets)
    assert_same(polycodec.decode_many(out, tp), pets)


def test_tagged_union_with_several_tags_per_class_and_int_tags() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Union[Cat, Bird])
    assert_same(codec.decode_one(b'{"kind": "parrot"}'), Bird("parrot"))
    assert_same(codec.decode_one(b'{"kind": "bird", "wings": 1}'), Bird("bird", 1))
    shapes: polycodec.Codec[Any] = polycodec.Codec(list[Union[Shape, Blob]])
    value = [Shape(1, 3), Blob(2, 0.5)]
    out = shapes.encode_one(value)
    assert json.loads(out) == [{"tag": 1, "sides": 3}, {"tag": 2, "size": 0.5}]
    assert_same(shapes.decode_one(out), value)


def test_tagged_union_errors() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Pet)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"name": "x", "animal": {"kind": "cow"}}')
    assert info.value.path == "$.animal.kind"
    assert info.value.path in str(info.value)
    assert "cow" in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"name": "x", "animal": {"lives": 1}}')
    assert info.value.path == "$.animal"
    assert "kind" in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"name": "x", "animal": {"kind": "cat", "lives": "many"}}')
    assert info.value.path == "$.animal.lives"
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"name": "x", "animal": []}')
    assert info.value.path == "$.animal"


def test_wrong_tag_value_for_class_is_rejected_on_encode() -> None:
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.encode_one(Cat("dog", 1), type=Union[Cat, Dog])  # type: ignore[arg-type]
    assert info.value.path == "$.kind"


def test_msgspec_decodes_records_written_by_polycodec() -> None:
    value = [FrozenSlots(1), FrozenSlots(2, "z")]
    out = polycodec.encode_many(value)
    assert msgspec.json.decode(out, type=list[FrozenSlots]) == value


# --- issue 15: JSON keys precomputed by the JSON codec, not stored in the plan -----------------

EscapedKeys = TypedDict(
    "EscapedKeys", {'q"uote': int, "back\\slash": str, "new\nline": int, "é": int}
)


@dataclass
class Naïve:
    café: int
    ünïcode: str = "x"


def test_issue15_escaped_keys_round_trip() -> None:
    value: EscapedKeys = {'q"uote': 1, "back\\slash": "b", "new\nline": 3, "é": 4}
    out = polycodec.encode_one(value, type=EscapedKeys)
    assert out == json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    assert polycodec.decode_one(out, EscapedKeys) == value
    # Out of declaration order, the keys are searched by name.
    shuffled = json.dumps(dict(reversed(list(value.items()))))
    assert polycodec.decode_one(shuffled, EscapedKeys) == value
    assert polycodec.to_builtins(value, EscapedKeys) == value
    assert (
        polycodec.decode_one(
            polycodec.encode_one(value, "msgpack", EscapedKeys), EscapedKeys, "msgpack"
        )
        == value
    )


def test_issue15_record_under_any_writes_its_own_keys() -> None:
    # A dataclass met under Any is encoded with its own plan, which has no codec of its own:
    # its keys are escaped as they are written, the same bytes as through its own codec.
    inner = Naïve(1, 'a"b')
    out = polycodec.encode_one({"k": inner, "l": [inner]}, type=dict[str, Any])
    own = polycodec.encode_one(inner)
    assert out == b'{"k":' + own + b',"l":[' + own + b"]}"
    assert json.loads(own) == {"café": 1, "ünïcode": 'a"b'}
    codec = polycodec.Codec(dict[str, Any], omit_defaults=True)
    assert json.loads(codec.encode_one({"k": Naïve(2)})) == {"k": {"café": 2, "ünïcode": "x"}}


def test_issue15_tagged_union_keys_from_the_variant() -> None:
    codec = polycodec.Codec(list[Union[Cat, Dog]])
    pets = [Cat("cat", 9), Dog("dog", True)]
    out = codec.encode_one(pets)
    assert out == b'[{"kind":"cat","lives":9},{"kind":"dog","good":true}]'
    assert codec.decode_one(out) == pets
    # The tag after the other members, then the tag in the middle of a variant's members.
    assert codec.decode_one(b'[{"lives":9,"kind":"cat"},{"good":true,"kind":"dog"}]') == pets
    assert polycodec.decode_one(b'{"kind":"cat","lives":9}', Union[Cat, Dog]) == pets[0]
