"""``polycodec.UNSET``: a dataclass field typed ``T | UnsetType`` whose value is UNSET is left out
when encoding and decodes to UNSET when absent (the PATCH-request idiom). msgspec's ``UNSET`` is
the oracle for JSON, MessagePack and the builtins form (the same dataclasses with msgspec's
UNSET give the same bytes and read back alike); Avro writes UNSET as null, pickle by reference."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import pickle
from typing import Annotated, Any, Optional, TypedDict, Union

import fastavro
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec
from polycodec import UNSET, Meta, UnsetType


@dataclasses.dataclass
class Patch:
    id: int
    name: Union[str, UnsetType] = UNSET
    note: Optional[str] | UnsetType = UNSET
    tags: list[str] | UnsetType = UNSET


@dataclasses.dataclass
class MPatch:
    id: int
    name: Union[str, msgspec.UnsetType] = msgspec.UNSET
    note: Optional[str] | msgspec.UnsetType = msgspec.UNSET
    tags: list[str] | msgspec.UnsetType = msgspec.UNSET


@dataclasses.dataclass(slots=True, frozen=True)
class SlotPatch:
    id: int
    count: int | UnsetType = UNSET


PEERS = {"json": msgspec.json, "msgpack": msgspec.msgpack}


def _peer_value(value: Patch) -> MPatch:
    return MPatch(
        **{
            f.name: msgspec.UNSET if getattr(value, f.name) is UNSET else getattr(value, f.name)
            for f in dataclasses.fields(Patch)
        }
    )


patches = st.builds(
    Patch,
    id=st.integers(-(2**63), 2**63 - 1),
    name=st.one_of(st.just(UNSET), st.text()),
    note=st.one_of(st.just(UNSET), st.none(), st.text()),
    tags=st.one_of(st.just(UNSET), st.lists(st.text(), max_size=3)),
)


@settings(max_examples=300, deadline=None)
@given(patches, st.sampled_from(list(PEERS)))
def test_byte_equal_and_round_trip_equal_to_msgspec(value: Patch, fmt: str) -> None:
    codec = polycodec.Codec(Patch, fmt)
    peer = PEERS[fmt]
    data = codec.encode_one(value)
    assert data == peer.encode(_peer_value(value))
    assert codec.decode_one(data) == value
    # What msgspec writes, polycodec reads back with UNSET where msgspec left a field out.
    assert codec.decode_one(peer.encode(_peer_value(value))) == value
    assert peer.decode(data, type=MPatch) == _peer_value(value)


def test_left_out_and_read_back_as_the_one_unset() -> None:
    codec = polycodec.Codec(Patch)
    assert codec.encode_one(Patch(1)) == b'{"id":1}'
    assert codec.encode_one(Patch(1, note=None)) == b'{"id":1,"note":null}'
    decoded = codec.decode_one(b'{"id":1,"note":null}')
    assert decoded.name is UNSET and decoded.tags is UNSET and decoded.note is None
    # Not a value on the wire: null is None, and a field that is not Optional refuses it.
    with pytest.raises(polycodec.ValidationError, match="expected str, got null") as info:
        codec.decode_one(b'{"id":1,"name":null}')
    assert info.value.path == "$.name"
    slots = polycodec.Codec(SlotPatch, "msgpack")
    assert slots.decode_one(slots.encode_one(SlotPatch(1))) == SlotPatch(1)
    assert slots.decode_one(slots.encode_one(SlotPatch(1, 5))) == SlotPatch(1, 5)


def test_builtins_form_is_msgspecs() -> None:
    value = Patch(1, tags=["a"])
    assert (
        polycodec.to_builtins(value)
        == msgspec.to_builtins(_peer_value(value))
        == {
            "id": 1,
            "tags": ["a"],
        }
    )
    assert polycodec.from_builtins({"id": 1, "tags": ["a"]}, Patch) == value


def test_with_omit_defaults_and_constraints() -> None:
    @dataclasses.dataclass
    class Bounded:
        size: Annotated[int, Meta(ge=0)] | UnsetType = UNSET
        label: str = "x"

    codec = polycodec.Codec(Bounded, omit_defaults=True)
    assert codec.encode_one(Bounded()) == b"{}"
    assert codec.encode_one(Bounded(3)) == b'{"size":3}'
    with pytest.raises(polycodec.ValidationError, match="expected int >= 0, got -1"):
        codec.decode_one(b'{"size":-1}')


def test_array_like_cannot_leave_a_field_out() -> None:
    codec = polycodec.Codec(Patch, array_like=True)
    assert codec.encode_one(Patch(1, "a", None, [])) == b'[1,"a",null,[]]'
    with pytest.raises(polycodec.EncodeError, match="field `name` is UNSET") as info:
        codec.encode_one(Patch(1))
    assert info.value.path == "$[1]"
    # msgspec refuses it too.
    with pytest.raises(TypeError):
        msgspec.json.encode(
            msgspec.defstruct("P", [("a", int | msgspec.UnsetType)], array_like=True)(msgspec.UNSET)
        )
    # Left out of the array, a trailing field decodes to its default (UNSET).
    assert codec.decode_one(b"[1]") == Patch(1)


def test_refused_where_it_means_nothing() -> None:
    with pytest.raises(
        TypeError, match="UnsetType may only be an alternative of a dataclass field"
    ):
        polycodec.Codec(list[Union[int, UnsetType]])

    @dataclasses.dataclass
    class Nested:
        items: list[int | UnsetType]

    with pytest.raises(
        TypeError,
        match="annotation 'UnsetType' .* of field 'test_refused_where_it_means_nothing.<locals>.Nested.items'",
    ):
        polycodec.Codec(Nested)

    class Movie(TypedDict):
        title: str | UnsetType

    with pytest.raises(TypeError, match="UnsetType may only be an alternative of a dataclass"):
        polycodec.Codec(Movie)

    @dataclasses.dataclass
    class Only:
        value: UnsetType = UNSET

    with pytest.raises(TypeError, match="a field needs a type besides UnsetType"):
        polycodec.Codec(Only)


def test_unset_in_a_field_that_does_not_allow_it() -> None:
    @dataclasses.dataclass
    class Plain:
        value: int = 0

    with pytest.raises(polycodec.EncodeError, match="expected int, got UnsetType") as info:
        polycodec.encode_one(Plain(UNSET))  # type: ignore[arg-type]
    assert info.value.path == "$.value"


def test_the_object() -> None:
    assert repr(UNSET) == "UNSET" and not UNSET
    assert UnsetType() is UNSET
    assert copy.copy(UNSET) is UNSET and copy.deepcopy(UNSET) is UNSET
    assert pickle.loads(pickle.dumps(UNSET)) is UNSET
    assert b"polycodec" in pickle.dumps(UNSET) and b"UNSET" in pickle.dumps(UNSET)


def test_json_schema() -> None:
    schema = polycodec.json_schema(Patch)["$defs"]["Patch"]
    assert schema["required"] == ["id"]
    assert schema["properties"]["name"] == {"type": "string"}
    assert schema["properties"]["note"] == {"type": ["null", "string"]}


# ---------------------------------------------------------------------------------------------
# Avro: UNSET is null, so a reader's default (null) for a field old data lacks is UNSET too


@dataclasses.dataclass
class AvroPatch:
    id: int
    name: str | UnsetType = UNSET
    count: UnsetType | int = UNSET


def test_avro_writes_unset_as_null() -> None:
    codec = polycodec.Codec(AvroPatch, "avro")
    assert codec.schema["fields"][1:] == [
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "count", "type": ["null", "long"], "default": None},
    ]
    values = [AvroPatch(1), AvroPatch(2, "b", 3)]
    data = codec.encode_many(values)
    assert codec.decode_many(data) == values
    assert codec.decode_one(codec.encode_one(AvroPatch(1))).name is UNSET
    assert list(fastavro.reader(io.BytesIO(data))) == [
        {"id": 1, "name": None, "count": None},
        {"id": 2, "name": "b", "count": 3},
    ]
    # fastavro's null is read as UNSET.
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(codec.schema), [{"id": 5, "name": None, "count": 9}])
    assert codec.decode_many(out.getvalue()) == [AvroPatch(5, UNSET, 9)]


def test_avro_reads_old_data_without_the_field_as_unset() -> None:
    old = {"type": "record", "name": "AvroPatch", "fields": [{"name": "id", "type": "long"}]}
    datum = io.BytesIO()
    fastavro.schemaless_writer(datum, fastavro.parse_schema(old), {"id": 7})
    codec = polycodec.Codec(AvroPatch, "avro")
    assert codec.decode_one(datum.getvalue(), writer_schema=old) == AvroPatch(7)


def test_avro_refuses_none_and_unset_together() -> None:
    with pytest.raises(TypeError, match="may be None and UNSET has no Avro form"):
        polycodec.Codec(Patch, "avro")


# ---------------------------------------------------------------------------------------------
# Pickle: the attribute value, pickled by reference as pickle.dumps does


def test_pickle_keeps_the_attribute() -> None:
    codec = polycodec.Codec(Patch, "pickle")
    value = Patch(1, note=None)
    data = codec.encode_one(value)
    loaded = pickle.loads(data)
    assert loaded == value and loaded.name is UNSET
    assert codec.decode_one(data) == value
    assert codec.decode_one(pickle.dumps(value)) == value
    assert codec.decode_one(pickle.dumps(value, protocol=2)) == value
    slots = polycodec.Codec(SlotPatch, "pickle")
    assert slots.decode_one(pickle.dumps(SlotPatch(3))) == SlotPatch(3)
    assert pickle.loads(slots.encode_one(SlotPatch(3))) == SlotPatch(3)


def test_pickle_refuses_another_global_there() -> None:
    codec = polycodec.Codec(Patch, "pickle")
    forged = pickle.dumps(Patch(1)).replace(b"UNSET", b"Codec")
    with pytest.raises(polycodec.DecodeError, match="expected str | UNSET, got a bare global"):
        codec.decode_one(forged)


def test_json_output_is_valid_json() -> None:
    assert json.loads(polycodec.encode_one(Patch(1, tags=[]))) == {"id": 1, "tags": []}


def test_unset_values_in_every_format(format: str) -> None:
    value: Any = AvroPatch(3, "x")
    codec = polycodec.Codec(AvroPatch, format)
    assert codec.decode_one(codec.encode_one(value)) == value
    assert codec.decode_one(codec.encode_one(AvroPatch(4))).count is UNSET
