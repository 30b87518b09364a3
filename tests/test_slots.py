"""Slotted dataclasses in every format: fields read and stored at the slots' offsets (where the
``slot_offsets`` layout is in use), and in a rerun of this file with
``POLYCODEC_PORTABLE=slot_offsets,slotted_creation`` through the member descriptors; both paths
run every case. The oracles are msgspec (JSON, MessagePack), fastavro (Avro) and the
stdlib ``pickle``. Also: which field access each kind of class gets, and the classes that must
not take the slot path (a property over a slot, a class with its own ``__getattribute__``).
"""

from __future__ import annotations

import dataclasses
import gc
import io
import pickle
import sys
import weakref
from typing import Any, Optional

import fastavro
import msgspec
import pytest

import polycodec
from layouts import in_use, rerun_portable

FORMATS = ["json", "msgpack", "avro", "pickle"]


@dataclasses.dataclass(slots=True)
class Base:
    id: int
    name: str


@dataclasses.dataclass(slots=True)
class Child(Base):
    score: float
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenPoint:
    x: int
    label: Optional[str] = None


@dataclasses.dataclass(slots=True)
class Doubled:
    a: int
    total: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.total = self.a * 2


@dataclasses.dataclass(slots=True, weakref_slot=True)
class Referable:
    a: int


class Cached:
    """A plain base class with a slot of its own that is no dataclass field."""

    __slots__ = ("_cache",)


@dataclasses.dataclass(slots=True)
class WithExtraSlot(Cached):
    a: int
    b: str = "b"


@dataclasses.dataclass(slots=True)
class Nested:
    child: Child
    points: list[FrozenPoint]
    maybe: Optional[Base] = None


DEFAULT_TEXT = "a default text no other test uses"


@dataclasses.dataclass(slots=True)
class WithDefault:
    a: int
    text: str = DEFAULT_TEXT


CASES: list[tuple[type, Any]] = [
    (Base, Base(1, "one")),
    (Child, Child(2, "two", 2.5, ["x", "y"])),
    (Child, Child(3, "three", 0.0)),
    (FrozenPoint, FrozenPoint(4, "four")),
    (FrozenPoint, FrozenPoint(5)),
    (Doubled, Doubled(21)),
    (Referable, Referable(6)),
    (WithExtraSlot, WithExtraSlot(7, "seven")),
    (
        Nested,
        Nested(Child(8, "eight", 8.5, ["z"]), [FrozenPoint(1), FrozenPoint(2, "p")], Base(9, "n")),
    ),
    (WithDefault, WithDefault(10)),
]
IDS = [f"{cls.__name__}-{index}" for index, (cls, _) in enumerate(CASES)]


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "slot_offsets,slotted_creation")


def _access() -> str:
    return "slot offsets" if in_use("slot_offsets") else "slot descriptors"


def _check_wire(fmt: str, codec: Any, value: Any, data: bytes) -> None:
    """What the format's oracle says about `data`, polycodec's encoding of `value`."""
    if fmt == "json":
        assert data == msgspec.json.encode(_wire_dict(value))
        assert codec.decode_one(msgspec.json.encode(value)) == value
    elif fmt == "msgpack":
        assert data == msgspec.msgpack.encode(_wire_dict(value))
        assert codec.decode_one(msgspec.msgpack.encode(value)) == value
    elif fmt == "avro":
        schema = fastavro.parse_schema(codec.schema)
        read = fastavro.schemaless_reader(io.BytesIO(data), schema, None)
        assert read == _wire_dict(value)
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, _wire_dict(value))
        assert codec.decode_one(out.getvalue()) == value
    else:
        assert pickle.loads(data) == value
        assert codec.decode_one(pickle.dumps(value)) == value


def _wire_dict(value: Any) -> Any:
    """`value` with its records as dicts of the fields that are on the wire (`init=False` fields
    are not)."""
    if dataclasses.is_dataclass(value):
        return {
            f.name: _wire_dict(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
    if isinstance(value, list):
        return [_wire_dict(item) for item in value]
    return value


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("cls", "value"), CASES, ids=IDS)
def test_slots_round_trip_against_the_oracles(fmt: str, cls: type, value: Any) -> None:
    codec: Any = polycodec.Codec(cls, format=fmt)
    assert codec._field_access()[cls.__qualname__] == _access()
    data = codec.encode_one(value)
    decoded = codec.decode_one(data)
    assert decoded == value and type(decoded) is cls
    _check_wire(fmt, codec, value, data)
    many = codec.decode_many(codec.encode_many([value, value]))
    assert many == [value, value]


@pytest.mark.parametrize("fmt", FORMATS)
def test_slots_post_init_runs_on_decode(fmt: str) -> None:
    codec: Any = polycodec.Codec(Doubled, format=fmt)
    decoded = codec.decode_one(codec.encode_one(Doubled(5)))
    assert decoded.total == 10


@pytest.mark.parametrize("fmt", FORMATS)
def test_slots_weakref_slot_works_on_decoded_instances(fmt: str) -> None:
    codec: Any = polycodec.Codec(Referable, format=fmt)
    decoded = codec.decode_one(codec.encode_one(Referable(3)))
    reference = weakref.ref(decoded)
    assert reference() is decoded


@pytest.mark.parametrize("fmt", FORMATS)
def test_slots_extra_slot_stays_unset(fmt: str) -> None:
    codec: Any = polycodec.Codec(WithExtraSlot, format=fmt)
    decoded = codec.decode_one(codec.encode_one(WithExtraSlot(1)))
    assert decoded == WithExtraSlot(1, "b")
    assert not hasattr(decoded, "_cache")
    decoded._cache = "kept"
    assert decoded._cache == "kept"


@pytest.mark.parametrize("fmt", FORMATS)
def test_slots_frozen_stays_frozen_after_decode(fmt: str) -> None:
    codec: Any = polycodec.Codec(FrozenPoint, format=fmt)
    decoded = codec.decode_one(codec.encode_one(FrozenPoint(1, "a")))
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.x = 2  # type: ignore[misc]


def _without_text() -> WithDefault:
    value = WithDefault.__new__(WithDefault)
    value.a = 1
    return value


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_slots_default_values_keep_their_reference_counts(fmt: str) -> None:
    # Input without the field: the decoder stores the default into each instance's slot, one
    # reference per instance, all given back when the instances go.
    codec: Any = polycodec.Codec(WithDefault, format=fmt)
    data = {
        "json": b"[" + b",".join([b'{"a":1}'] * 50) + b"]",
        "msgpack": msgspec.msgpack.encode([{"a": 1}] * 50),
        "pickle": pickle.dumps([_without_text() for _ in range(50)]),
    }[fmt]
    gc.collect()
    before = sys.getrefcount(DEFAULT_TEXT)
    decoded = codec.decode_many(data)
    assert all(item.text is DEFAULT_TEXT for item in decoded)
    del decoded
    gc.collect()
    assert sys.getrefcount(DEFAULT_TEXT) == before


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_slots_duplicate_key_last_wins(fmt: str) -> None:
    codec: Any = polycodec.Codec(Base, format=fmt)
    if fmt == "json":
        data = b'{"id":1,"name":"first","id":2,"name":"second"}'
    else:
        data = b"\x84\xa2id\x01\xa4name\xa5first\xa2id\x02\xa4name\xa6second"
    assert codec.decode_one(data) == Base(2, "second")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("options", [{}, {"omit_defaults": True}, {"array_like": True}])
def test_slots_unset_slot_on_encode(fmt: str, options: dict[str, Any]) -> None:
    if fmt in ("avro", "pickle") and options:
        pytest.skip("JSON and MessagePack options")
    unset = Base.__new__(Base)
    unset.id = 1
    codec: Any = polycodec.Codec(list[Base], format=fmt, **options)
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one([Base(0, "zero"), unset])
    # The interpreter's own words for the unset slot (3.13 started naming the module).
    with pytest.raises(AttributeError) as reading:
        unset.name
    assert str(reading.value) in str(info.value)
    assert isinstance(info.value.__cause__, AttributeError)
    expected_path = {"json": "$[1]", "msgpack": "$[1]", "avro": "$[1].name", "pickle": "$[1]"}
    assert info.value.path == expected_path[fmt]


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_slots_subclass_instance_reads_through_its_property(fmt: str) -> None:
    # A subclass may put a property over a slot of its base; its instances are read with
    # getattr, so the property decides.
    class Shouting(Base):
        @property  # type: ignore[misc]
        def name(self) -> str:
            return "LOUD"

    codec: Any = polycodec.Codec(Base, format=fmt)
    value = Shouting.__new__(Shouting)
    value.id = 1
    data = codec.encode_one(value)
    assert codec.decode_one(data) == Base(1, "LOUD")


@dataclasses.dataclass
class PlainRecord:
    a: int
    b: str


@dataclasses.dataclass(slots=True)
class CustomGetattribute:
    a: int

    def __getattribute__(self, name: str) -> Any:
        if name == "a":
            return 42
        return object.__getattribute__(self, name)


@dataclasses.dataclass
class WithProperty:
    a: int
    b: int


WithProperty.b = property(lambda self: self.a * 10)  # type: ignore[assignment]


@pytest.mark.parametrize("fmt", FORMATS)
def test_field_access_is_chosen_per_class(fmt: str) -> None:
    # A plain dataclass: its __dict__, filled through CPython's inline values where the build
    # knows them (tests/test_inline_values.py runs both paths).
    inline = in_use("inline_values")
    assert polycodec.Codec(PlainRecord, format=fmt)._field_access() == {
        "PlainRecord": "inline values" if inline else "dict"
    }
    assert polycodec.Codec(CustomGetattribute, format=fmt)._field_access() == {
        "CustomGetattribute": "getattr"
    }
    if fmt != "avro":
        assert polycodec.Codec(WithProperty, format=fmt)._field_access() == {
            "WithProperty": "getattr"
        }


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_custom_getattribute_and_property_are_read_through_getattr(fmt: str) -> None:
    custom: Any = polycodec.Codec(CustomGetattribute, format=fmt)
    assert custom.decode_one(custom.encode_one(CustomGetattribute(1))).a == 42
    with_property: Any = polycodec.Codec(WithProperty, format=fmt)
    value = WithProperty.__new__(WithProperty)
    value.a = 2
    assert with_property.encode_one(value) == (
        b'{"a":2,"b":20}' if fmt == "json" else msgspec.msgpack.encode({"a": 2, "b": 20})
    )
