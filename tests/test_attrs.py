"""attrs classes as records (`attrs.define`, `attrs.frozen`, `attr.s` with `attr.ib` or
annotations): fields, defaults and `Factory` defaults, `slots=True` and dict classes, frozen
classes, `kw_only`, generics, validators, `__attrs_pre_init__` / `__attrs_post_init__`, in
every format, with msgspec (which supports attrs) as the oracle for JSON and MessagePack bytes,
decoded values and refusals, the stdlib for pickle and fastavro for Avro."""

from __future__ import annotations

import io
import json
import pickle
from typing import Any, Generic, Literal, Optional, TypeVar, Union

import attr
import attrs
import fastavro
import msgpack
import msgspec
import pytest

import polycodec
from polycodec import Codec

T = TypeVar("T")


@attrs.define
class Point:
    x: int
    y: int = 0


@attrs.define(slots=False)
class Loose:
    name: str
    tags: list[str] = attrs.Factory(list)


@attrs.frozen
class Frozen:
    point: Point
    label: Optional[str] = None


@attr.s(auto_attribs=True)
class Classic:
    a: int
    b: str = "b"


@attr.s
class Untyped:
    a = attr.ib(type=int)
    b = attr.ib(default=1.5, type=float)


@attrs.define(kw_only=True)
class KeywordOnly:
    first: int
    second: str = "s"


@attrs.define
class Box(Generic[T]):
    item: T
    items: list[T] = attrs.Factory(list)


@attrs.define
class Checked:
    size: int = attrs.field(validator=attrs.validators.ge(0))
    kind: str = attrs.field(default="a", validator=attrs.validators.in_(["a", "b"]))


CLASSES = [
    (Point, Point(1, 2)),
    (Loose, Loose("n", ["t"])),
    (Frozen, Frozen(Point(3), "l")),
    (Classic, Classic(1)),
    (Untyped, Untyped(2, 2.5)),
    (KeywordOnly, KeywordOnly(first=1)),
    (Box[int], Box(1, [2, 3])),
    (list[Point], [Point(1), Point(2, 3)]),
    (Checked, Checked(3, "b")),
]
IDS = [
    "define",
    "dict-class",
    "frozen",
    "attr.s",
    "attr.ib",
    "kw_only",
    "generic",
    "list",
    "validators",
]


def _msgspec(fmt: str) -> tuple[Any, Any]:
    if fmt == "json":
        return msgspec.json.encode, msgspec.json.decode
    return msgspec.msgpack.encode, msgspec.msgpack.decode


def _loads(fmt: str, data: bytes) -> Any:
    return json.loads(data) if fmt == "json" else msgpack.unpackb(data)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("tp, value", CLASSES, ids=IDS)
def test_values_as_msgspec_both_ways(fmt: str, tp: Any, value: Any) -> None:
    encode, decode = _msgspec(fmt)
    codec = Codec(tp, fmt)
    data, theirs = codec.encode_one(value), encode(value)
    # The same members; msgspec writes a slotted class's fields in alphabetical order,
    # polycodec in declaration order (attrs.asdict's), so only the order may differ.
    assert _loads(fmt, data) == _loads(fmt, theirs)
    assert codec.decode_one(theirs) == value == decode(data, type=tp)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_bytes_as_msgspec_where_the_orders_agree(fmt: str) -> None:
    encode, _ = _msgspec(fmt)
    for value in [Point(1, 2), Loose("n", ["t"]), Classic(1), Untyped(2, 2.5), Box(1, [2])]:
        assert polycodec.encode_one(value, fmt) == encode(value)


@pytest.mark.parametrize("tp, value", CLASSES, ids=IDS)
def test_every_format_round_trips(format: str, tp: Any, value: Any) -> None:
    codec = Codec(tp, format)
    assert codec.decode_one(codec.encode_one(value)) == value


def test_defaults_and_factories_fill_what_the_input_leaves_out() -> None:
    for fmt in ["json", "msgpack"]:
        encode, decode = _msgspec(fmt)
        data = encode({"name": "n"})
        ours = polycodec.decode_one(data, Loose, fmt)
        assert ours == Loose("n") == decode(data, type=Loose)
        other = polycodec.decode_one(data, Loose, fmt)
        assert other.tags is not ours.tags, "a Factory makes a new value each time"
    with pytest.raises(polycodec.ValidationError, match="missing required field `x`"):
        polycodec.decode_one(b"{}", Point)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b"{}", type=Point)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize(
    "data",
    [
        {"size": -1},
        {"size": 1, "kind": "c"},
        {"size": 0, "kind": "b"},
        {"size": "1"},
    ],
)
def test_validators_run_and_refuse_what_msgspec_refuses(fmt: str, data: dict[str, Any]) -> None:
    encode, decode = _msgspec(fmt)
    payload = encode([data])
    try:
        theirs = decode(payload, type=list[Checked])
    except msgspec.ValidationError as their_error:
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.decode_one(payload, list[Checked], fmt)
        if isinstance(info.value.__cause__, (TypeError, ValueError)):
            # A validator's error: attrs' own message, at the record (msgspec reports it
            # there too), with attrs' exception as the cause.
            message = str(their_error).split(" - at ")[0]
            assert str(info.value) == f"{message} (at $[0])"
        return
    assert polycodec.decode_one(payload, list[Checked], fmt) == theirs


def test_validators_can_be_turned_off_as_attrs_allows() -> None:
    attrs.validators.set_disabled(True)
    try:
        value = polycodec.decode_one(b'{"size": -5}', Checked)
    finally:
        attrs.validators.set_disabled(False)
    assert (value.size, value.kind) == (-5, "a")
    with pytest.raises(polycodec.ValidationError, match="'size' must be >= 0: -5"):
        polycodec.decode_one(b'{"size": -5}', Checked)


calls: list[str] = []


@attrs.define
class Hooked:
    value: int
    doubled: int = attrs.field(init=False, default=0)

    def __attrs_pre_init__(self) -> None:
        calls.append(f"pre:{hasattr(self, 'value')}")

    def __attrs_post_init__(self) -> None:
        calls.append(f"post:{self.value}")
        self.doubled = self.value * 2


def test_pre_and_post_init_run_as_attrs_init_runs_them(format: str) -> None:
    codec = Codec(Hooked, format)
    data = codec.encode_one(Hooked(4))
    calls.clear()
    value = codec.decode_one(data)
    # pre-init before the fields are set, post-init after, once each.
    assert calls == ["pre:False", "post:4"]
    assert value.doubled == 8
    calls.clear()
    msgspec_value = msgspec.json.decode(b'{"value": 4}', type=Hooked)
    assert calls == ["pre:False", "post:4"] and msgspec_value == value


def test_init_false_and_private_attributes_follow_the_dataclass_rules() -> None:
    @attrs.define
    class Account:
        _secret: str
        cached: int = attrs.field(init=False, default=7)

    codec = Codec(Account)
    value = Account("s")
    # The attribute name is the wire name; an init=False attribute is not on the wire and
    # gets its default (msgspec writes `cached` and leaves `_secret` out for attrs classes).
    assert codec.encode_one(value) == b'{"_secret":"s"}'
    assert codec.decode_one(b'{"_secret": "t", "cached": 1}') == Account("t")
    assert Codec(Account, rename="camel").encode_one(value) == b'{"_secret":"s"}'


def test_frozen_and_slotted_instances_are_filled_past_their_setattr() -> None:
    value = polycodec.decode_one(b'{"point": {"x": 1}, "label": "a"}', Frozen)
    assert value == Frozen(Point(1), "a")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        value.label = "b"  # type: ignore[misc]
    assert not hasattr(Point(1), "__dict__")
    assert Codec(Point)._field_access()["Point"] in ("slot offsets", "slot descriptors")
    assert Codec(Loose)._field_access()["Loose"] in ("dict", "inline values")


def test_pickles_are_the_stdlibs_both_ways() -> None:
    for tp, value in CLASSES:
        codec = Codec(tp, "pickle")
        assert pickle.loads(codec.encode_one(value)) == value
        for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
            assert codec.decode_one(pickle.dumps(value, protocol)) == value


def test_avro_schema_and_fastavro() -> None:
    codec = Codec(Frozen, "avro")
    point, label = codec.schema["fields"]
    assert (point["name"], point["type"]["name"]) == ("point", "Point")
    assert point["type"]["fields"] == [
        {"name": "x", "type": "long"},
        {"name": "y", "type": "long", "default": 0},
    ]
    assert label == {"name": "label", "type": ["null", "string"], "default": None}
    values = [Frozen(Point(1, 2), None), Frozen(Point(3), "x")]
    records = list(fastavro.reader(io.BytesIO(codec.encode_many(values))))
    assert records == [attrs.asdict(v) for v in values]


def test_builtins_as_msgspec() -> None:
    for tp, value in CLASSES:
        assert polycodec.to_builtins(value, tp) == msgspec.to_builtins(value)
        assert polycodec.from_builtins(msgspec.to_builtins(value), tp) == value


@attrs.define
class Cat:
    name: str
    kind: Literal["cat"] = "cat"


@attrs.define
class Dog:
    name: str
    kind: Literal["dog"] = "dog"


def test_tagged_unions_of_attrs_classes() -> None:
    codec = Codec(list[Union[Cat, Dog]])
    data = codec.encode_one([Cat("c"), Dog("d")])
    assert data == b'[{"kind":"cat","name":"c"},{"kind":"dog","name":"d"}]'
    assert codec.decode_one(data) == [Cat("c"), Dog("d")]


def test_refused_forms() -> None:
    @attrs.define
    class SelfFactory:
        a: int
        b: int = attrs.field(default=attrs.Factory(lambda self: self.a, takes_self=True))

    with pytest.raises(TypeError, match="takes_self=True is not supported"):
        Codec(SelfFactory)

    @attrs.define
    class Unhashable:
        a: int

    with pytest.raises(TypeError, match=r"Unhashable \(an attrs class with eq and without frozen"):
        Codec(set[Unhashable])
    # A frozen one hashes its fields: a Point (unhashable) among them is refused, a str is not.
    with pytest.raises(TypeError, match="Point"):
        Codec(frozenset[Frozen])

    @attrs.frozen
    class Hashable:
        name: str

    assert Codec(frozenset[Hashable]).decode_one(b'[{"name": "a"}]') == {Hashable("a")}
