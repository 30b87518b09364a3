"""Tagged-union variants are written with the tag first, as msgspec writes its tagged Structs:
the same data gives the same JSON and MessagePack bytes. Decoders still take the tag anywhere."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Literal, Optional, Union

import msgspec
import pytest

import polycodec

FORMATS = ["json", "msgpack"]


@dataclasses.dataclass
class Cat:
    name: str
    lives: int = 9
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    name: str
    good: bool = True


@dataclasses.dataclass
class Bird:
    name: str
    kind: Literal["bird"]
    wings: Optional[List[float]] = None


class SCat(msgspec.Struct, tag_field="kind", tag="cat"):
    name: str
    lives: int = 9


class SDog(msgspec.Struct, tag_field="kind", tag="dog"):
    name: str
    good: bool = True


class SBird(msgspec.Struct, tag_field="kind", tag="bird"):
    name: str
    wings: Optional[List[float]] = None


Animal = Union[Cat, Dog, Bird]
SAnimal = Union[SCat, SDog, SBird]


def _animals() -> List[Any]:
    return [Cat("Tom"), Dog("dog", "Rex", False), Bird("Tweety", "bird", [1.5, 2.0]), Cat("Z", 1)]


def _structs() -> List[Any]:
    return [SCat("Tom"), SDog("Rex", False), SBird("Tweety", [1.5, 2.0]), SCat("Z", 1)]


def _msgspec_encode(fmt: str, value: Any) -> bytes:
    return msgspec.json.encode(value) if fmt == "json" else msgspec.msgpack.encode(value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_bytes_equal_msgspec_tagged_structs(fmt: str) -> None:
    # Tag declared last (Cat), first (Dog) and in the middle (Bird): always written first.
    data = polycodec.Codec(List[Animal], format=fmt).encode_one(_animals())
    assert data == _msgspec_encode(fmt, _structs())
    one = polycodec.Codec(Animal, format=fmt).encode_one(Bird("B", "bird"))
    assert one == _msgspec_encode(fmt, SBird("B"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_msgspec_decodes_polycodec_and_back(fmt: str) -> None:
    data = polycodec.Codec(List[Animal], format=fmt).encode_one(_animals())
    decoder: Any = (msgspec.json if fmt == "json" else msgspec.msgpack).Decoder(List[SAnimal])
    assert decoder.decode(data) == _structs()
    back = polycodec.Codec(List[Animal], format=fmt).decode_one(_msgspec_encode(fmt, _structs()))
    assert back == _animals()


@dataclasses.dataclass
class One:
    x: int
    tag: Literal[1] = 1


@dataclasses.dataclass
class Two:
    x: int
    tag: Literal[2] = 2


class SOne(msgspec.Struct, tag_field="tag", tag=1):
    x: int


class STwo(msgspec.Struct, tag_field="tag", tag=2):
    x: int


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_int_tags_equal_msgspec(fmt: str) -> None:
    codec = polycodec.Codec(List[Union[One, Two]], format=fmt)
    data = codec.encode_one([One(5), Two(-1)])
    assert data == _msgspec_encode(fmt, [SOne(5), STwo(-1)])
    assert codec.decode_one(data) == [One(5), Two(-1)]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "members",
    [
        [("kind", "cat"), ("name", "Tom"), ("lives", 3)],
        [("name", "Tom"), ("kind", "cat"), ("lives", 3)],
        [("name", "Tom"), ("lives", 3), ("kind", "cat")],
        [("lives", 3), ("kind", "cat"), ("name", "Tom")],
    ],
)
def test_tag_first_decoders_take_the_tag_anywhere(fmt: str, members: List[Any]) -> None:
    data = _msgspec_encode(fmt, dict(members))
    assert polycodec.Codec(Animal, format=fmt).decode_one(data) == Cat("Tom", 3)


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_unknown_and_missing_tag_errors(fmt: str) -> None:
    codec = polycodec.Codec(Animal, format=fmt)
    with pytest.raises(polycodec.ValidationError, match='invalid value "cow" for tag field `kind`'):
        codec.decode_one(_msgspec_encode(fmt, {"kind": "cow", "name": "x"}))
    with pytest.raises(polycodec.ValidationError, match="invalid value 3 for tag field `kind`"):
        codec.decode_one(_msgspec_encode(fmt, {"kind": 3, "name": "x"}))
    with pytest.raises(polycodec.ValidationError, match="missing required field `kind`"):
        codec.decode_one(_msgspec_encode(fmt, {"name": "x"}))


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_instance_with_a_wrong_tag_value_is_refused(fmt: str) -> None:
    cat = Cat("Tom")
    cat.kind = "dog"  # type: ignore[assignment]
    with pytest.raises(polycodec.EncodeError, match=r"\$\[0\]\.kind"):
        polycodec.Codec(List[Animal], format=fmt).encode_one([cat])


@dataclasses.dataclass
class Many:
    x: int
    kind: Literal["many", "several"] = "many"


@dataclasses.dataclass
class Single:
    x: int
    kind: Literal["single"] = "single"


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_multi_valued_tag_writes_the_instance_value(fmt: str) -> None:
    codec = polycodec.Codec(List[Union[Many, Single]], format=fmt)
    values = [Many(1, "several"), Many(2), Single(3)]
    data = codec.encode_one(values)
    expected = [
        {"kind": "several", "x": 1},
        {"kind": "many", "x": 2},
        {"kind": "single", "x": 3},
    ]
    assert data == _msgspec_encode(fmt, expected)
    assert codec.decode_one(data) == values
    bad = Many(4)
    bad.kind = "lots"  # type: ignore[assignment]
    with pytest.raises(polycodec.EncodeError, match=r"\$\[0\]\.kind"):
        codec.encode_one([bad])


@dataclasses.dataclass(slots=True)
class SlotCat:
    name: str
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass(slots=True)
class SlotDog:
    name: str
    kind: Literal["dog"] = "dog"


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_slots_and_omit_defaults(fmt: str) -> None:
    slotted = polycodec.Codec(List[Union[SlotCat, SlotDog]], format=fmt)
    data = slotted.encode_one([SlotCat("a"), SlotDog("b")])
    assert data == _msgspec_encode(
        fmt, [{"kind": "cat", "name": "a"}, {"kind": "dog", "name": "b"}]
    )
    omitting = polycodec.Codec(List[Animal], format=fmt, omit_defaults=True)
    data = omitting.encode_one([Cat("Tom"), Dog("dog", "Rex")])
    # The tag is never left out, even where it equals the field's default.
    assert data == _msgspec_encode(
        fmt, [{"kind": "cat", "name": "Tom"}, {"kind": "dog", "name": "Rex"}]
    )
    assert omitting.decode_one(data) == [Cat("Tom"), Dog("dog", "Rex")]


@dataclasses.dataclass
class Kitten(Cat):
    pass


@pytest.mark.parametrize("fmt", FORMATS)
def test_tag_first_subclass_instance_takes_its_base_variant(fmt: str) -> None:
    codec = polycodec.Codec(Animal, format=fmt)
    assert codec.encode_one(Kitten("k")) == _msgspec_encode(fmt, SCat("k"))


@dataclasses.dataclass(slots=True)
class Quoted:
    x: int
    kind: Literal['say "hi"\n'] = 'say "hi"\n'


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("cls", [Quoted, Cat])
def test_tag_first_precomputed_tag_entry_is_checked_against_the_instance(
    fmt: str, cls: Any
) -> None:
    # The tag entry is written from bytes made once per class (here one that needs escaping);
    # the instance's own tag field is still read and checked: an equal str that is another
    # object is accepted, another value is refused at its path.
    codec = polycodec.Codec(List[Union[cls, SlotDog]], format=fmt)
    tag = 'say "hi"\n' if cls is Quoted else "cat"
    value = cls(1) if cls is Quoted else cls("Tom")
    fields = {"x": 1} if cls is Quoted else {"name": "Tom", "lives": 9}
    expected = _msgspec_encode(fmt, [{"kind": tag, **fields}, {"kind": "dog", "name": "b"}])
    assert codec.encode_one([value, SlotDog("b")]) == expected
    value.kind = "".join(list(tag))
    assert value.kind is not tag
    assert codec.encode_one([value, SlotDog("b")]) == expected
    assert codec.decode_one(expected) == [cls(1) if cls is Quoted else cls("Tom"), SlotDog("b")]
    value.kind = "dog"
    with pytest.raises(polycodec.EncodeError, match=r"\$\[0\]\.kind"):
        codec.encode_one([value])
    del value.kind
    if cls is Quoted:  # an unset slot
        with pytest.raises(polycodec.EncodeError, match=r"kind"):
            codec.encode_one([value])
    else:  # the class attribute, the field's default, is read instead
        assert codec.encode_one([value, SlotDog("b")]) == expected
