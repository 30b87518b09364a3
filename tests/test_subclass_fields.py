"""Issue 38, item 2: an instance of a subclass where its base class is the declared type.

msgspec writes such an instance with the subclass's own fields (``{"x": {"a": 1, "b": 2}}``
for ``x: Base`` holding ``Sub(a=1, b=2)``); polycodec wrote the base class's fields and dropped
the rest without a word. Every format now writes the subclass's fields (JSON, MessagePack and
``to_builtins`` as msgspec does; pickle as ``pickle.dumps`` does, class included), or refuses
with an error naming the fields where the format cannot carry them (Avro, whose record has the
fields of its schema). Decoding reads the declared type, as msgspec does: the subclass's extra
fields are skipped, or refused under ``forbid_unknown_fields``.
"""

import dataclasses
import pickle
import threading
from typing import Any, Literal, Optional, Union

import msgspec
import pytest

import polycodec


@dataclasses.dataclass
class Base:
    a: int


@dataclasses.dataclass
class Sub(Base):
    b: int


@dataclasses.dataclass
class SubSub(Sub):
    c: str = "z"


@dataclasses.dataclass
class Holder:
    x: Base


@dataclasses.dataclass
class Many:
    items: list[Base]
    maybe: Optional[Base] = None
    table: dict[str, Base] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Methods(Base):
    """A subclass that adds no field."""

    def double(self) -> int:
        return self.a * 2


def test_issue38_item2_json_and_msgpack_write_the_subclass_fields_as_msgspec() -> None:
    # The issue's input: H(x=Sub(a=1, b=2)) with x: Base wrote {"x":{"a":1}}.
    holder = Holder(Sub(1, 2))
    assert polycodec.Codec(Holder).encode_one(holder) == b'{"x":{"a":1,"b":2}}'
    many = Many([Base(0), Sub(1, 2), SubSub(3, 4), Methods(5)], SubSub(6, 7, "q"), {"k": Sub(8, 9)})
    for value in [holder, many]:
        assert polycodec.Codec(type(value)).encode_one(value) == msgspec.json.encode(value)
        assert polycodec.Codec(type(value), "msgpack").encode_one(value) == (
            msgspec.msgpack.encode(value)
        )
        assert polycodec.to_builtins(value) == msgspec.to_builtins(value)
        assert polycodec.Codec(type(value)).to_builtins(value) == msgspec.to_builtins(value)
    # At the root too: a codec of the base class given a subclass instance.
    assert polycodec.Codec(Base).encode_one(SubSub(1, 2)) == msgspec.json.encode(SubSub(1, 2))
    assert polycodec.Codec(Base).encode_many([Sub(1, 2)]) == b'[{"a":1,"b":2}]'


def test_issue38_item2_decoding_reads_the_declared_type_as_msgspec() -> None:
    data = polycodec.Codec(Holder).encode_one(Holder(Sub(1, 2)))
    assert polycodec.Codec(Holder).decode_one(data) == msgspec.json.decode(data, type=Holder)
    assert polycodec.Codec(Holder).decode_one(data) == Holder(Base(1))
    with pytest.raises(polycodec.ValidationError, match="unknown field") as info:
        polycodec.Codec(Holder, forbid_unknown_fields=True).decode_one(data)
    assert info.value.path == "$.x"


def test_issue38_item2_the_subclass_plan_has_the_codec_and_class_options() -> None:
    @polycodec.options(rename="camel")
    @dataclasses.dataclass
    class Renamed(Base):
        extra_field: int = 0

    @dataclasses.dataclass
    class Box:
        inner: Base
        label_text: str = "t"

    # The codec's rename applies to the subclass's fields as to every record; the subclass's
    # own options win, as for a field declared with its type.
    codec = polycodec.Codec(Box, rename="upper")
    out = codec.encode_one(Box(Renamed(1, 2)))
    assert out == b'{"INNER":{"a":1,"extraField":2},"LABEL_TEXT":"t"}'
    assert polycodec.Codec(Box, rename="upper").encode_one(Box(Base(1))) == (
        b'{"INNER":{"A":1},"LABEL_TEXT":"t"}'
    )
    assert polycodec.Codec(Renamed, rename="upper").encode_one(Renamed(1, 2)) == (
        b'{"a":1,"extraField":2}'
    )
    # omit_defaults from the codec.
    assert polycodec.Codec(Holder, omit_defaults=True).encode_one(Holder(SubSub(1, 2))) == (
        b'{"x":{"a":1,"b":2}}'
    )


def test_issue38_item2_array_like_writes_the_subclass_array_and_reads_it_back() -> None:
    # msgspec writes an array_like Struct subclass with its own fields ([1, 2]); a reader of
    # the base class skips what it does not know (item 3).
    codec = polycodec.Codec(Holder, array_like=True)
    data = codec.encode_one(Holder(Sub(1, 2)))
    assert data == b"[[1,2]]"
    assert codec.decode_one(data) == Holder(Base(1))

    class SBase(msgspec.Struct, array_like=True):
        a: int

    class SSub(SBase):
        b: int

    class SHolder(msgspec.Struct, array_like=True):
        x: SBase

    assert msgspec.json.encode(SHolder(SSub(1, 2))) == data
    assert msgspec.json.decode(data, type=SHolder) == SHolder(SBase(1))


@dataclasses.dataclass
class Either:
    x: Union[Base, Sub]


def test_issue38_item2_pickle_writes_the_subclass_as_pickle_dumps() -> None:
    # pickle.dumps writes the instance's own class and every field; polycodec wrote Base's
    # class and fields, so pickle.loads gave back another object.
    holder = Holder(Sub(1, 2))
    data = polycodec.Codec(Holder, "pickle").encode_one(holder)
    loaded = pickle.loads(data)
    assert loaded == holder and type(loaded.x) is Sub
    # The safe decoder builds only what the type names: the subclass is named by the type
    # that reads it back, as any class in a pickle is.
    with pytest.raises(polycodec.DecodeError, match="Sub") as info:
        polycodec.Codec(Holder, "pickle").decode_one(data)
    assert info.value.path == "$.x"

    either = polycodec.Codec(Either, "pickle")
    assert either.decode_one(either.encode_one(Either(Sub(1, 2)))) == Either(Sub(1, 2))
    assert pickle.loads(either.encode_one(Either(SubSub(1, 2)))) == Either(SubSub(1, 2))


def test_issue38_item2_avro_refuses_fields_its_schema_has_no_room_for() -> None:
    codec = polycodec.Codec(Holder, "avro")
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(Holder(SubSub(1, 2)))
    assert str(info.value) == (
        "SubSub is a subclass of Base with fields the Avro schema's record has no room for "
        "(b, c): an Avro record has the fields of its schema; give the field the subclass's "
        "type to write them (at $.x)"
    )
    # A subclass that adds no field loses nothing: written as the schema's record.
    assert codec.encode_one(Holder(Methods(5))) == codec.encode_one(Holder(Base(5)))
    # Unions of records pick the nearest base class's branch, with the same check.
    union = polycodec.Codec(Optional[Base], "avro")
    with pytest.raises(polycodec.EncodeError, match=r"no room for \(b\)"):
        union.encode_one(Sub(1, 2))
    with pytest.raises(polycodec.EncodeError, match=r"no room for \(b\)"):
        codec.encode_many([Holder(Base(1)), Holder(Sub(1, 2))])


@dataclasses.dataclass
class Locked(Base):
    lock: Any = dataclasses.field(default_factory=threading.Lock)
    kind: complex = 1j


def test_issue38_item2_a_subclass_without_a_plan_is_an_encode_error() -> None:
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.Codec(Holder).encode_one(Holder(Locked(1)))
    message = str(info.value)
    assert message.startswith(
        "Locked is a subclass of Base, written with its own fields (as msgspec writes it), and "
        "it cannot be: "
    ), message
    assert "complex" in message and message.endswith("(at $.x)")


def test_issue38_item2_tagged_variants_keep_their_tag() -> None:
    @dataclasses.dataclass
    class Cat:
        kind: Literal["cat"] = "cat"
        lives: int = 9

    @dataclasses.dataclass
    class Lion(Cat):
        mane: bool = True

    @dataclasses.dataclass
    class Dog:
        kind: Literal["dog"] = "dog"

    @dataclasses.dataclass
    class Pen:
        pet: Union[Cat, Dog]

    codec = polycodec.Codec(Pen)
    data = codec.encode_one(Pen(Lion()))
    assert data == msgspec.json.encode(Pen(Lion()))
    assert codec.decode_one(data) == Pen(Cat())
    msgpack = polycodec.Codec(Pen, "msgpack")
    assert msgpack.decode_one(msgpack.encode_one(Pen(Lion()))) == Pen(Cat())


def test_issue38_item2_many_subclasses_are_each_written_by_their_own_plan() -> None:
    # More subclasses than a plan keeps plans of (64): each is compiled again when met again.
    classes = [
        dataclasses.make_dataclass(f"Dyn{i}", [(f"f{i}", int)], bases=(Base,)) for i in range(80)
    ]
    codec = polycodec.Codec(list[Base])
    values = [cls(1, 2) for cls in classes] * 2
    assert codec.encode_one(values) == msgspec.json.encode(values)
