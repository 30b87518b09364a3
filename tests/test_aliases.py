"""``Meta(aliases=...)``: other names a field is read by besides its wire name (the names it had
before a rename), in every format: the JSON, MessagePack and builtins decoders accept them, and
Avro writes them as the field's ``aliases``, so Avro schema resolution (polycodec's, and
fastavro's as the oracle) reads data written under an old name."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Annotated, Literal, Union

import avro.io
import avro.schema
import fastavro
import jsonschema
import msgspec
import pytest

import polycodec
from polycodec import Meta


@dataclasses.dataclass
class User:
    user_id: Annotated[int, Meta(aliases=("id", "uid"))]
    full_name: Annotated[str, Meta(name="fullName", aliases=("name",))] = ""


@dataclasses.dataclass
class Renamed:
    kind: Literal["r"] = "r"
    size: Annotated[int, Meta(aliases=("length",))] = 0


@dataclasses.dataclass
class Other:
    kind: Literal["o"] = "o"
    size: int = 0


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_read_by_any_of_its_names(fmt: str) -> None:
    peer = msgspec.json if fmt == "json" else msgspec.msgpack
    codec = polycodec.Codec(User, fmt)
    for data in (
        {"user_id": 1, "fullName": "Ann"},
        {"id": 1, "name": "Ann"},
        {"name": "Ann", "uid": 1},
    ):
        assert codec.decode_one(peer.encode(data)) == User(1, "Ann")
    # Written by the wire name only.
    assert peer.decode(codec.encode_one(User(1, "Ann"))) == {"user_id": 1, "fullName": "Ann"}
    # Two names of one field: the last one wins, as for a repeated key.
    assert codec.decode_one(peer.encode({"user_id": 1, "id": 2})) == User(2)
    with pytest.raises(polycodec.ValidationError, match="expected int, got str") as info:
        codec.decode_one(peer.encode({"uid": "x"}))
    assert info.value.path == "$.uid" and info.value.loc == ("uid",)


def test_forbid_unknown_fields_and_builtins() -> None:
    codec = polycodec.Codec(User, forbid_unknown_fields=True)
    assert codec.decode_one(b'{"id":1}') == User(1)
    with pytest.raises(polycodec.ValidationError, match="unknown field `ident`"):
        codec.decode_one(b'{"ident":1}')
    assert polycodec.from_builtins({"uid": 3, "name": "B"}, User) == User(3, "B")
    assert polycodec.to_builtins(User(3, "B")) == {"user_id": 3, "fullName": "B"}


def test_in_a_tagged_union_before_and_after_the_tag() -> None:
    codec = polycodec.Codec(Union[Renamed, Other])
    assert codec.decode_one(b'{"kind":"r","length":4}') == Renamed(size=4)
    # Before the tag: read once the tag names the class.
    assert codec.decode_one(b'{"length":4,"kind":"r"}') == Renamed(size=4)
    assert codec.decode_one(b'{"length":4,"kind":"o"}') == Other()
    assert polycodec.from_builtins({"length": 5, "kind": "r"}, Union[Renamed, Other]) == Renamed(
        size=5
    )


def test_refusals() -> None:
    @dataclasses.dataclass
    class Clash:
        a: Annotated[int, Meta(aliases=("b",))]
        b: int

    with pytest.raises(TypeError, match="fields 'a' and 'b' both use the wire name 'b'"):
        polycodec.Codec(Clash)
    with pytest.raises(TypeError, match="aliases must be a tuple or list of str"):
        Meta(aliases="old")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="an alias must not be empty"):
        Meta(aliases=("",))
    with pytest.raises(ValueError, match="aliases repeat a name"):
        Meta(aliases=("a", "a"))
    assert Meta(aliases=["a"]).aliases == ("a",)
    assert Meta(aliases=("a",)) == Meta(aliases=["a"]) and hash(Meta(aliases=("a",)))


# ---------------------------------------------------------------------------------------------
# Avro: the schema's field aliases, and schema resolution of data written under the old name


OLD_SCHEMA = {
    "type": "record",
    "name": "User",
    # The reader's (derived) namespace: apache avro matches records by full name.
    "namespace": __name__,
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
    ],
}


def _old_datum(value: dict[str, object]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(OLD_SCHEMA), value)
    return out.getvalue()


def test_avro_schema_has_the_aliases() -> None:
    schema = polycodec.Codec(User, "avro").schema
    assert schema["fields"] == [
        {"name": "user_id", "type": "long", "aliases": ["id", "uid"]},
        {"name": "fullName", "type": "string", "default": "", "aliases": ["name"]},
    ]


def test_avro_reads_data_written_under_the_old_names() -> None:
    codec = polycodec.Codec(User, "avro")
    datum = _old_datum({"id": 9, "name": "Old"})
    assert codec.decode_one(datum, writer_schema=OLD_SCHEMA) == User(9, "Old")
    # fastavro resolves the same way with the derived schema as the reader's.
    assert fastavro.schemaless_reader(
        io.BytesIO(datum), fastavro.parse_schema(OLD_SCHEMA), fastavro.parse_schema(codec.schema)
    ) == {"user_id": 9, "fullName": "Old"}
    # apache avro (1.12) accepts the schema with its aliases and reads what polycodec writes
    # with it; its Python resolver matches a writer's fields by name only, not by alias.
    current = avro.schema.parse(json.dumps(codec.schema))
    reader = avro.io.DatumReader(current, current)
    decoded = reader.read(avro.io.BinaryDecoder(io.BytesIO(codec.encode_one(User(4, "New")))))
    assert decoded == {"user_id": 4, "fullName": "New"}
    # And a container file written with the old schema.
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(OLD_SCHEMA), [{"id": 1, "name": "a"}])
    assert codec.decode_many(out.getvalue()) == [User(1, "a")]


def test_avro_alias_must_be_an_avro_name() -> None:
    @dataclasses.dataclass
    class Bad:
        a: Annotated[int, Meta(aliases=("not-a-name",))]

    with pytest.raises(TypeError, match="alias 'not-a-name' is not a valid Avro field name"):
        polycodec.Codec(Bad, "avro")
    assert polycodec.decode_one(b'{"not-a-name":1}', Bad) == Bad(1)


def test_pickle_keys_by_attribute() -> None:
    codec = polycodec.Codec(User, "pickle")
    assert codec.decode_one(codec.encode_one(User(1, "a"))) == User(1, "a")


def test_json_schema_lists_the_aliases() -> None:
    schema = polycodec.json_schema(User, forbid_unknown_fields=True)
    props = schema["$defs"]["User"]["properties"]
    assert props["id"] == {"type": "integer", "deprecated": True}
    assert props["name"] == {"type": "string", "default": "", "deprecated": True}
    jsonschema.validate({"uid": 1, "name": "x"}, schema)
    jsonschema.validate(json.loads(polycodec.encode_one(User(1, "x"))), schema)
