"""Per-class options (``@polycodec.options``): a dataclass's own rename, omit_defaults,
forbid_unknown_fields, array_like and tag/tag_field, with the codec's options as defaults, as
msgspec configures each Struct. msgspec is the oracle in both directions: the same classes as
Structs with the same class keywords give the same bytes, and each side reads the other's."""

from __future__ import annotations

import dataclasses
import io
import json
import pickle
from typing import Any, Literal, NamedTuple, Optional, Union

import fastavro
import jsonschema
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec

FORMATS = {"json": msgspec.json, "msgpack": msgspec.msgpack}


def _peer(fmt: str) -> Any:
    return FORMATS[fmt]


# ---------------------------------------------------------------------------------------------
# The classes and their msgspec twins (same class keywords)


@polycodec.options(tag=True)
@dataclasses.dataclass
class Circle:
    radius: float
    label: str = ""


@polycodec.options(tag="sq")
@dataclasses.dataclass
class Square:
    side: float


@polycodec.options(tag=3)
@dataclasses.dataclass
class Point3:
    x: int


class MCircle(msgspec.Struct, tag="Circle"):
    radius: float
    label: str = ""


class MSquare(msgspec.Struct, tag="sq"):
    side: float


@polycodec.options(rename="camel", omit_defaults=True, forbid_unknown_fields=True)
@dataclasses.dataclass
class Profile:
    user_name: str
    home_page: str = ""
    login_count: int = 0


class MProfile(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True):
    user_name: str
    home_page: str = ""
    login_count: int = 0


@polycodec.options(array_like=True)
@dataclasses.dataclass
class Pair:
    left: int
    right: int = 0


class MPair(msgspec.Struct, array_like=True):
    left: int
    right: int = 0


@dataclasses.dataclass
class Holder:
    """No options of its own: the codec's apply to it, its nested classes keep theirs."""

    owner_name: str
    profile: Profile
    pair: Pair


class MHolder(msgspec.Struct):
    owner_name: str
    profile: MProfile
    pair: MPair


@polycodec.options(tag=True, tag_field="kind", array_like=True)
@dataclasses.dataclass
class Add:
    left: int
    right: int


@polycodec.options(tag=True, tag_field="kind", array_like=True)
@dataclasses.dataclass
class Neg:
    value: int


class MAdd(msgspec.Struct, tag="Add", tag_field="kind", array_like=True):
    left: int
    right: int


class MNeg(msgspec.Struct, tag="Neg", tag_field="kind", array_like=True):
    value: int


def _both_ways(
    fmt: str, tp: Any, value: Any, peer_tp: Any, peer_value: Any, **options: Any
) -> bytes:
    """polycodec's bytes equal msgspec's, and each decodes the other's to the same values."""
    codec = polycodec.Codec(tp, fmt, **options)
    data = codec.encode_one(value)
    peer = _peer(fmt)
    assert data == peer.encode(peer_value)
    assert codec.decode_one(peer.encode(peer_value)) == value
    assert peer.decode(data, type=peer_tp) == peer_value
    return data


# ---------------------------------------------------------------------------------------------
# Class tags in tagged unions


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_class_tags_are_msgspec_tagged_structs(fmt: str) -> None:
    values = [Circle(1.5, "a"), Square(2.0), Circle(0.5)]
    peers = [MCircle(1.5, "a"), MSquare(2.0), MCircle(0.5)]
    data = _both_ways(
        fmt, list[Union[Circle, Square]], values, list[Union[MCircle, MSquare]], peers
    )
    if fmt == "json":
        assert json.loads(data)[0] == {"type": "Circle", "radius": 1.5, "label": "a"}
        assert json.loads(data)[1] == {"type": "sq", "side": 2.0}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_class_tag_on_its_own_is_written_and_optional_when_read(fmt: str) -> None:
    _both_ways(fmt, Circle, Circle(1.0), MCircle, MCircle(1.0))
    codec = polycodec.Codec(Circle, fmt)
    peer = _peer(fmt)
    # msgspec reads a tagged Struct without its tag, and checks the tag when it is there.
    assert codec.decode_one(peer.encode({"radius": 2.0})) == Circle(2.0)
    assert peer.decode(peer.encode({"radius": 2.0}), type=MCircle) == MCircle(2.0)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(peer.encode({"radius": 2.0, "type": "Square"}))
    assert info.value.path == "$.type"
    with pytest.raises(msgspec.ValidationError):
        peer.decode(peer.encode({"radius": 2.0, "type": "Square"}), type=MCircle)


def test_int_tag_and_tag_callable() -> None:
    @polycodec.options(tag=lambda name: name.lower(), tag_field="t")
    @dataclasses.dataclass
    class Lower:
        a: int

    @polycodec.options(tag=lambda name: name.lower(), tag_field="t")
    @dataclasses.dataclass
    class Other:
        b: int

    class MLower(msgspec.Struct, tag=str.lower, tag_field="t"):
        a: int

    class MOther(msgspec.Struct, tag=str.lower, tag_field="t"):
        b: int

    # msgspec's callable tag is given the class's __qualname__, as polycodec's is.
    MLower.__qualname__, MOther.__qualname__ = Lower.__qualname__, Other.__qualname__
    assert (
        polycodec.encode_one(Lower(1)) == b'{"t":"%s","a":1}' % Lower.__qualname__.lower().encode()
    )
    codec = polycodec.Codec(Union[Lower, Other])
    assert codec.decode_one(codec.encode_one(Other(2))) == Other(2)

    class M3(msgspec.Struct, tag=3):
        x: int

    for fmt in FORMATS:
        _both_ways(fmt, Point3, Point3(7), M3, M3(7))
    assert polycodec.encode_one(Point3(7)) == b'{"type":3,"x":7}'


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_array_like_tagged_union(fmt: str) -> None:
    values = [Add(1, 2), Neg(3)]
    data = _both_ways(
        fmt, list[Union[Add, Neg]], values, list[Union[MAdd, MNeg]], [MAdd(1, 2), MNeg(3)]
    )
    if fmt == "json":
        assert data == b'[["Add",1,2],["Neg",3]]'
    codec = polycodec.Codec(Add, fmt)
    peer = _peer(fmt)
    # On its own, an array_like tagged class still leads with its tag, which must be right.
    assert codec.decode_one(peer.encode(["Add", 4, 5])) == Add(4, 5)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(peer.encode(["Neg", 4, 5]))
    assert info.value.path == "$[0]"
    with pytest.raises(polycodec.ValidationError, match="tag as the array's first item"):
        codec.decode_one(peer.encode([]))
    # Items past the fields are skipped, as msgspec skips them (issue 38, item 3), unless
    # unknown fields are forbidden.
    assert codec.decode_one(peer.encode(["Add", 1, 2, 3])) == Add(1, 2)
    assert peer.decode(peer.encode(["Add", 1, 2, 3]), type=MAdd) == MAdd(1, 2)
    strict = polycodec.Codec(Add, fmt, forbid_unknown_fields=True)
    with pytest.raises(polycodec.ValidationError, match="at most 3 items"):
        strict.decode_one(peer.encode(["Add", 1, 2, 3]))


def test_class_tag_mixes_with_a_literal_tag_field() -> None:
    @polycodec.options(tag="c", tag_field="kind")
    @dataclasses.dataclass
    class Tagged:
        a: int

    @dataclasses.dataclass
    class Literal_:
        b: int
        kind: Literal["l"] = "l"

    codec = polycodec.Codec(list[Union[Tagged, Literal_]])
    data = codec.encode_one([Tagged(1), Literal_(2)])
    assert data == b'[{"kind":"c","a":1},{"kind":"l","b":2}]'
    assert codec.decode_one(data) == [Tagged(1), Literal_(2)]
    # The tag anywhere in the object.
    assert codec.decode_one(b'[{"a":1,"kind":"c"},{"b":2,"kind":"l"}]') == [Tagged(1), Literal_(2)]


def test_tag_not_first_and_unknown_tags() -> None:
    codec = polycodec.Codec(Union[Circle, Square])
    assert codec.decode_one(b'{"side":1.0,"type":"sq"}') == Square(1.0)
    with pytest.raises(polycodec.ValidationError, match='invalid value "tri" for tag field `type`'):
        codec.decode_one(b'{"type":"tri"}')
    with pytest.raises(polycodec.ValidationError, match="missing required field `type`"):
        codec.decode_one(b'{"side":1.0}')


def test_forbid_unknown_fields_accepts_the_tag() -> None:
    @polycodec.options(tag="Strict", forbid_unknown_fields=True)
    @dataclasses.dataclass
    class Strict:
        a: int

    codec = polycodec.Codec(Strict)
    assert codec.decode_one(b'{"type":"Strict","a":1}') == Strict(1)
    assert codec.decode_one(b'{"a":1,"type":"Strict"}') == Strict(1)
    with pytest.raises(polycodec.ValidationError, match="unknown field `b`"):
        codec.decode_one(b'{"a":1,"b":2}')
    assert polycodec.from_builtins({"type": "Strict", "a": 1}, Strict) == Strict(1)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.from_builtins({"type": "Other", "a": 1}, Strict)
    assert info.value.path == "$.type"


def test_inheritance_and_tag_false() -> None:
    @polycodec.options(tag=True, rename="camel")
    @dataclasses.dataclass
    class Base:
        some_value: int

    @dataclasses.dataclass
    class Child(Base):
        other_value: int = 0

    @polycodec.options(tag=False)
    @dataclasses.dataclass
    class Plain(Base):
        pass

    class MBase(msgspec.Struct, tag=True, rename="camel"):
        some_value: int

    class MChild(MBase):
        other_value: int = 0

    MBase.__qualname__, MChild.__qualname__ = Base.__qualname__, Child.__qualname__
    # tag=True tags each subclass with its own name; rename is inherited too.
    assert (
        polycodec.encode_one(Child(1, 2))
        == json.dumps(
            {"type": Child.__qualname__, "someValue": 1, "otherValue": 2}, separators=(",", ":")
        ).encode()
    )
    assert polycodec.encode_one(Plain(1)) == b'{"someValue":1}'
    codec = polycodec.Codec(Union[Base, Child])
    assert codec.decode_one(codec.encode_one(Child(1, 2))) == Child(1, 2)
    assert codec.decode_one(codec.encode_one(Base(1))) == Base(1)


# ---------------------------------------------------------------------------------------------
# rename, omit_defaults, forbid_unknown_fields, array_like per class


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_per_class_options_match_msgspec(fmt: str) -> None:
    value = Holder("ann", Profile("ann", login_count=3), Pair(1))
    peer = MHolder("ann", MProfile("ann", login_count=3), MPair(1))
    data = _both_ways(fmt, Holder, value, MHolder, peer)
    if fmt == "json":
        assert (
            data == b'{"owner_name":"ann","profile":{"userName":"ann","loginCount":3},"pair":[1,0]}'
        )
    codec = polycodec.Codec(Holder, fmt)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(
            _peer(fmt).encode(
                {"owner_name": "x", "profile": {"userName": "x", "extra": 1}, "pair": [1]}
            )
        )
    assert info.value.path == "$.profile"
    # An unknown key where the class does not forbid them is skipped.
    assert codec.decode_one(
        _peer(fmt).encode({"owner_name": "x", "zzz": 1, "profile": {"userName": "x"}, "pair": [1]})
    ) == Holder("x", Profile("x"), Pair(1))


def test_codec_options_are_the_defaults() -> None:
    value = Holder("ann", Profile("ann"), Pair(1, 2))
    # The codec's rename reaches Holder, which sets none; Profile keeps its own.
    assert polycodec.encode_one(value, rename="pascal") == (
        b'{"OwnerName":"ann","Profile":{"userName":"ann"},"Pair":[1,2]}'
    )
    # array_like for the codec: Holder is an array, Pair already is, Profile too (it sets no
    # array_like of its own).
    assert polycodec.encode_one(value, array_like=True) == b'["ann",["ann","",0],[1,2]]'
    codec = polycodec.Codec(Holder, forbid_unknown_fields=True)
    with pytest.raises(polycodec.ValidationError, match="unknown field `zzz`"):
        codec.decode_one(b'{"owner_name":"x","zzz":1,"profile":{"userName":"x"},"pair":[1]}')

    @polycodec.options(array_like=False, omit_defaults=False, rename={})
    @dataclasses.dataclass
    class Opposite:
        some_name: int = 0

    assert polycodec.encode_one(
        Opposite(), array_like=True, omit_defaults=True, rename="camel"
    ) == (b'{"some_name":0}')


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_to_builtins_and_from_builtins(fmt: str) -> None:
    values = [Circle(1.5, "a"), Square(2.0)]
    form = polycodec.to_builtins(values, list[Union[Circle, Square]])
    assert form == msgspec.to_builtins([MCircle(1.5, "a"), MSquare(2.0)])
    assert polycodec.from_builtins(form, list[Union[Circle, Square]]) == values
    holder = Holder("ann", Profile("ann"), Pair(1))
    assert polycodec.to_builtins(holder) == msgspec.to_builtins(
        MHolder("ann", MProfile("ann"), MPair(1))
    )
    assert polycodec.from_builtins(polycodec.to_builtins(holder), Holder) == holder
    assert polycodec.to_builtins([Add(1, 2)], list[Union[Add, Neg]]) == [["Add", 1, 2]]


# ---------------------------------------------------------------------------------------------
# Refusals


def test_refusals() -> None:
    with pytest.raises(TypeError, match="tag_field 'a' is also the wire name of field 'a'"):

        @polycodec.options(tag=True, tag_field="a")
        @dataclasses.dataclass
        class Clash:
            a: int

        polycodec.Codec(Clash)

    @polycodec.options(tag=True, tag_field="k1")
    @dataclasses.dataclass
    class K1:
        a: int

    @polycodec.options(tag=True, tag_field="k2")
    @dataclasses.dataclass
    class K2:
        b: int

    with pytest.raises(TypeError, match="tagged by different ones"):
        polycodec.Codec(Union[K1, K2])

    @polycodec.options(tag="same")
    @dataclasses.dataclass
    class Same1:
        a: int

    @polycodec.options(tag="same")
    @dataclasses.dataclass
    class Same2:
        b: int

    with pytest.raises(TypeError, match="have the same tag 'same'"):
        polycodec.Codec(Union[Same1, Same2])

    @dataclasses.dataclass
    class Untagged:
        c: int

    with pytest.raises(TypeError, match="Untagged has no tag"):
        polycodec.Codec(Union[Circle, Untagged])

    @polycodec.options(tag=True, array_like=True)
    @dataclasses.dataclass
    class Arr:
        a: int

    with pytest.raises(TypeError, match="must all be array_like or all not"):
        polycodec.Codec(Union[Circle, Arr])
    # A branched format writes no record as an array, so the shapes need not agree there.
    assert polycodec.Codec(Union[Circle, Arr], "pickle").decode_one(
        polycodec.Codec(Union[Circle, Arr], "pickle").encode_one(Arr(1))
    ) == Arr(1)

    from typing import TypedDict

    @polycodec.options(rename="camel")
    class Movie(TypedDict):
        movie_name: str

    with pytest.raises(TypeError, match="applies to dataclasses"):
        polycodec.Codec(Movie)
    with pytest.raises(ValueError, match="unknown rename style"):
        polycodec.options(rename="camell")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a tag must be a str or an int"):
        polycodec.options(tag=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fit in 64 bits"):
        polycodec.options(tag=2**64)
    with pytest.raises(TypeError, match="omit_defaults must be True, False or None"):
        polycodec.options(omit_defaults=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tag_field must not be empty"):
        polycodec.options(tag_field="")

    @polycodec.options(tag=lambda name: [name])  # type: ignore[arg-type,return-value]
    @dataclasses.dataclass
    class BadTag:
        a: int

    with pytest.raises(TypeError, match="its polycodec.options are invalid: .*a tag must be"):
        polycodec.Codec(BadTag)


def test_options_object() -> None:
    assert Circle.__polycodec_options__ == polycodec.Options(tag=True)  # type: ignore[attr-defined]
    assert repr(polycodec.Options(tag=1, tag_field="k")) == "Options(tag=1, tag_field='k')"
    assert polycodec.Options(tag=1) != polycodec.Options(tag=True)
    assert polycodec.Options(rename={"a": "b"}) == polycodec.Options(rename={"a": "b"})
    assert hash(polycodec.Options(rename={"a": "b"})) == hash(polycodec.Options(rename={"a": "b"}))
    assert pickle.loads(pickle.dumps(polycodec.Options(tag="x"))) == polycodec.Options(tag="x")
    with pytest.raises(AttributeError):
        polycodec.Options().tag = 1  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Avro and pickle: the branch says the class, so a class tag is not on the wire


def test_avro_and_pickle_leave_the_class_tag_off_the_wire() -> None:
    avro = polycodec.Codec(Union[Circle, Square], "avro")
    assert [branch["name"] for branch in avro.schema] == ["Circle", "Square"]
    assert all(field["name"] != "type" for branch in avro.schema for field in branch["fields"])
    data = avro.encode_many([Circle(1.0), Square(2.0)])
    assert avro.decode_many(data) == [Circle(1.0), Square(2.0)]
    assert list(fastavro.reader(io.BytesIO(data))) == [
        {"radius": 1.0, "label": ""},
        {"side": 2.0},
    ]
    codec = polycodec.Codec(list[Union[Circle, Square]], "pickle")
    data = codec.encode_one([Circle(1.0), Square(2.0)])
    assert pickle.loads(data) == [Circle(1.0), Square(2.0)]
    assert codec.decode_one(data) == [Circle(1.0), Square(2.0)]


# ---------------------------------------------------------------------------------------------
# JSON Schema


def test_json_schema_of_class_tags() -> None:
    schema = polycodec.json_schema(list[Union[Circle, Square]])
    union = schema["items"]
    assert union["discriminator"] == {
        "propertyName": "type",
        "mapping": {"Circle": "#/$defs/Circle", "sq": "#/$defs/Square"},
    }
    # The class tag is the record's first property, not required on its own.
    assert schema["$defs"]["Square"]["properties"] == {
        "type": {"const": "sq"},
        "side": {"type": "number"},
    }
    assert schema["$defs"]["Square"]["required"] == ["side"]
    data = json.loads(
        polycodec.encode_one([Circle(1.0), Square(2.0)], type=list[Union[Circle, Square]])
    )
    jsonschema.validate(data, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"type": "Circle", "side": 1.0}], schema)
    array = polycodec.json_schema(Add)
    jsonschema.validate(json.loads(polycodec.encode_one(Add(1, 2))), array)
    assert array["$defs"]["Add"]["minItems"] == 3


# ---------------------------------------------------------------------------------------------
# The codec cache: options set after a codec was built


@dataclasses.dataclass
class Late:
    """Given options only by the test below, after codecs of it were built."""

    some_field: int


@dataclasses.dataclass
class Outer:
    late: Late


def test_options_set_later_take_effect_in_new_codecs() -> None:
    first = polycodec.Codec(Outer)
    assert polycodec.encode_one(Outer(Late(1))) == b'{"late":{"some_field":1}}'
    assert polycodec.json_schema(Late)["$defs"]["Late"]["properties"] == {
        "some_field": {"type": "integer"}
    }
    polycodec.options(rename="camel")(Late)
    assert polycodec.Codec(Outer).encode_one(Outer(Late(1))) == b'{"late":{"someField":1}}'
    assert polycodec.encode_one(Outer(Late(1))) == b'{"late":{"someField":1}}'
    assert "someField" in polycodec.json_schema(Late)["$defs"]["Late"]["properties"]
    # A codec never changes once built.
    assert first.encode_one(Outer(Late(1))) == b'{"late":{"some_field":1}}'


# ---------------------------------------------------------------------------------------------
# Property: any mix of the tagged classes, written and read by either side


@st.composite
def shapes(draw: Any) -> tuple[list[Any], list[Any]]:
    items = draw(
        st.lists(
            st.one_of(
                st.tuples(
                    st.just("c"), st.floats(allow_nan=False, allow_infinity=False), st.text()
                ),
                st.tuples(
                    st.just("s"), st.floats(allow_nan=False, allow_infinity=False), st.none()
                ),
            ),
            max_size=6,
        )
    )
    ours: list[Any] = []
    theirs: list[Any] = []
    for kind, number, text in items:
        if kind == "c":
            ours.append(Circle(number, text))
            theirs.append(MCircle(number, text))
        else:
            ours.append(Square(number))
            theirs.append(MSquare(number))
    return ours, theirs


@settings(max_examples=200, deadline=None)
@given(shapes(), st.sampled_from(list(FORMATS)))
def test_property_tagged_values_match_msgspec(pair: tuple[list[Any], list[Any]], fmt: str) -> None:
    ours, theirs = pair
    _both_ways(fmt, list[Union[Circle, Square]], ours, list[Union[MCircle, MSquare]], theirs)


def test_optional_class_tagged_record() -> None:
    codec = polycodec.Codec(Optional[Circle])
    assert codec.encode_one(Circle(1.0)) == b'{"type":"Circle","radius":1.0,"label":""}'
    assert codec.decode_one(b'{"radius":1.0}') == Circle(1.0)
    assert codec.decode_one(b"null") is None


# -- issue 38, item 3: array_like records read items a newer producer appended -----------------


@polycodec.options(array_like=True)
@dataclasses.dataclass
class Coord:
    x: float
    y: float


@polycodec.options(array_like=True, forbid_unknown_fields=True)
@dataclasses.dataclass
class StrictCoord:
    x: float
    y: float


class PairTuple(NamedTuple):
    a: int
    b: int


class MCoord(msgspec.Struct, array_like=True):
    x: float
    y: float


class MStrictCoord(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    x: float
    y: float


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_issue38_item3_array_like_records_skip_extra_trailing_items(fmt: str) -> None:
    # `[1.0, 2.0, 3.0]` into a two-field record was `expected at most 2 items, got more` (JSON)
    # or `got 3` (MessagePack); msgspec skips items past the fields, so a consumer keeps
    # working when a newer producer appends one. Extras of any shape, nested deep, are skipped.
    peer = _peer(fmt)
    newer: list[Any] = [1.0, 2.0, 3.0, {"nested": [[{"k": None}] * 3] * 3}, "tail", [], {}]
    for extra in range(1, len(newer) - 1):
        data = peer.encode(newer[: 2 + extra])
        assert polycodec.decode_one(data, Coord, fmt) == Coord(1.0, 2.0)
        assert peer.decode(data, type=MCoord) == MCoord(1.0, 2.0)
        with pytest.raises(msgspec.ValidationError):
            peer.decode(data, type=MStrictCoord)
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.decode_one(data, StrictCoord, fmt)
        assert str(info.value).startswith("expected at most 2 items, got ")
        assert info.value.path == "$"
    # Inside a list, and after it: the reader stays in step.
    rows = peer.encode([[1.0, 2.0, 9], [3.0, 4.0], [5.0, 6.0, [7, [8]]]])
    assert polycodec.decode_one(rows, list[Coord], fmt) == [
        Coord(1.0, 2.0),
        Coord(3.0, 4.0),
        Coord(5.0, 6.0),
    ]
    # A malformed extra is still malformed; a NamedTuple is a tuple of its length, as in
    # msgspec.
    if fmt == "json":
        with pytest.raises(polycodec.DecodeError):
            polycodec.decode_one(b"[1.0, 2.0, [}]", Coord)
    with pytest.raises(polycodec.ValidationError, match="at most 2 items"):
        polycodec.decode_one(peer.encode([1, 2, 3]), PairTuple, fmt)
    with pytest.raises(msgspec.ValidationError):
        peer.decode(peer.encode([1, 2, 3]), type=PairTuple)
    assert polycodec.from_builtins([1.0, 2.0, object()], Coord) == Coord(1.0, 2.0)
