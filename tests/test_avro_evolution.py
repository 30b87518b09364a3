"""Schema evolution: data written with an older or newer schema, resolved against the class's
schema by the Avro rules, with fastavro's resolving reader as the oracle."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import json
import uuid
from typing import Any, Dict, List, Optional, Union

import fastavro
import pytest

import polycodec
from test_avro_support import fastavro_container, fastavro_write


def oracle(data: bytes, writer: Any, reader: Any) -> Any:
    return fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )


class Color(enum.Enum):
    RED = 1
    GREEN = 2
    UNKNOWN = 3


@dataclasses.dataclass
class V2:
    name: str
    count: int
    ratio: float
    tags: List[str] = dataclasses.field(default_factory=list)
    note: Optional[str] = None
    color: Color = Color.UNKNOWN


V1_SCHEMA = {
    "type": "record",
    "name": "V2",
    "fields": [
        {"name": "legacy", "type": {"type": "map", "values": {"type": "array", "items": "int"}}},
        {"name": "count", "type": "int"},
        {"name": "name", "type": "string"},
        {"name": "ratio", "type": "float"},
        {
            "name": "old",
            "type": [
                "null",
                {
                    "type": "record",
                    "name": "Old",
                    "fields": [
                        {"name": "a", "type": "double"},
                        {"name": "b", "type": {"type": "fixed", "name": "F", "size": 3}},
                        {"name": "c", "type": {"type": "enum", "name": "E", "symbols": ["X"]}},
                        {"name": "d", "type": "boolean"},
                        {"name": "e", "type": "bytes"},
                    ],
                },
            ],
        },
    ],
}
V1_DATUM = {
    "legacy": {"a": [1, 2], "b": []},
    "count": 7,
    "name": "n",
    "ratio": 0.5,
    "old": {"a": 1.5, "b": b"abc", "c": "X", "d": True, "e": b"zz"},
}


def test_added_removed_and_promoted_fields() -> None:
    codec = polycodec.Codec(V2, "avro")
    data = fastavro_write(V1_SCHEMA, V1_DATUM)
    value = codec.decode_one(data, writer_schema=V1_SCHEMA)
    assert value == V2("n", 7, 0.5)
    expected = oracle(data, V1_SCHEMA, codec.schema)
    assert expected == {**dataclasses.asdict(value), "color": "UNKNOWN"}
    # The same with the writer schema as JSON text, and in a container file.
    assert codec.decode_one(data, writer_schema=json.dumps(V1_SCHEMA)) == value
    container = fastavro_container(V1_SCHEMA, [V1_DATUM, {**V1_DATUM, "old": None}])
    assert codec.decode_many(container) == [value, value]


@pytest.mark.parametrize(
    "writer, value, reader_type, expected",
    [
        ("int", 5, int, 5),
        ("int", -5, float, -5.0),
        ("long", 2**40, float, float(2**40)),
        ("float", 1.5, float, 1.5),
        ("string", "héllo", bytes, "héllo".encode()),
        ("bytes", b"abc", str, "abc"),
        ("int", 3, Optional[int], 3),
        (["null", "int"], None, Optional[int], None),
        (["string", "int"], 4, Union[int, str], 4),
        (["int", "string"], "x", Union[str, int], "x"),
        (["null", "long"], 9, int, 9),
        ({"type": "array", "items": "int"}, [1, 2], List[float], [1.0, 2.0]),
        ({"type": "map", "values": "int"}, {"a": 1}, Dict[str, int], {"a": 1}),
    ],
)
def test_scalar_resolution(writer: Any, value: Any, reader_type: Any, expected: Any) -> None:
    box = dataclasses.make_dataclass("Box", [("v", reader_type)])
    writer_schema = {"type": "record", "name": "Box", "fields": [{"name": "v", "type": writer}]}
    codec = polycodec.Codec(box, "avro")
    data = fastavro_write(writer_schema, {"v": value})
    got = codec.decode_one(data, writer_schema=writer_schema)
    assert got == box(expected)
    assert oracle(data, writer_schema, codec.schema) == {"v": expected}


def test_writer_union_branch_the_reader_lacks_fails_when_read() -> None:
    box = dataclasses.make_dataclass("Box", [("v", int)])
    writer = {"type": "record", "name": "Box", "fields": [{"name": "v", "type": ["null", "long"]}]}
    codec = polycodec.Codec(box, "avro")
    assert codec.decode_one(fastavro_write(writer, {"v": 1}), writer_schema=writer) == box(1)
    with pytest.raises(polycodec.ValidationError, match="null"):
        codec.decode_one(fastavro_write(writer, {"v": None}), writer_schema=writer)


class Small(enum.Enum):
    A = "a"
    B = "b"


@dataclasses.dataclass
class WithEnum:
    e: Small


def test_enum_symbols() -> None:
    codec = polycodec.Codec(WithEnum, "avro")
    writer = {
        "type": "record",
        "name": "W",
        "fields": [
            {"name": "e", "type": {"type": "enum", "name": "S", "symbols": ["C", "B", "A"]}}
        ],
    }
    assert codec.decode_one(fastavro_write(writer, {"e": "A"}), writer_schema=writer) == WithEnum(
        Small.A
    )
    with pytest.raises(polycodec.ValidationError, match='"C" is not a member'):
        codec.decode_one(fastavro_write(writer, {"e": "C"}), writer_schema=writer)
    # A reader enum default takes unknown symbols.
    reader = {
        "type": "record",
        "name": "W",
        "fields": [
            {
                "name": "e",
                "type": {"type": "enum", "name": "S", "symbols": ["A", "B"], "default": "B"},
            }
        ],
    }
    bound = polycodec.Codec(WithEnum, "avro", schema=reader)
    data = fastavro_write(writer, {"e": "C"})
    assert bound.decode_one(data, writer_schema=writer) == WithEnum(Small.B)
    assert oracle(data, writer, reader) == {"e": "B"}


@dataclasses.dataclass
class Renamed:
    full_name: str
    age: int = 0


def test_field_aliases() -> None:
    reader = {
        "type": "record",
        "name": "Renamed",
        "fields": [
            {"name": "full_name", "type": "string", "aliases": ["name"]},
            {"name": "age", "type": "long", "default": 0},
        ],
    }
    writer = {"type": "record", "name": "Renamed", "fields": [{"name": "name", "type": "string"}]}
    codec = polycodec.Codec(Renamed, "avro", schema=reader)
    data = fastavro_write(writer, {"name": "Ann"})
    assert codec.decode_one(data, writer_schema=writer) == Renamed("Ann")
    assert oracle(data, writer, reader) == {"full_name": "Ann", "age": 0}


@dataclasses.dataclass
class Cat:
    lives: int


@dataclasses.dataclass
class Holder:
    pet: Optional[Cat]


def test_record_aliases_choose_union_branches() -> None:
    reader = {
        "type": "record",
        "name": "Holder",
        "fields": [
            {
                "name": "pet",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "Cat",
                        "aliases": ["Feline"],
                        "fields": [{"name": "lives", "type": "int"}],
                    },
                ],
            }
        ],
    }
    writer = {
        "type": "record",
        "name": "Holder",
        "fields": [
            {
                "name": "pet",
                "type": [
                    {
                        "type": "record",
                        "name": "Feline",
                        "fields": [{"name": "lives", "type": "int"}],
                    },
                    "null",
                ],
            }
        ],
    }
    codec = polycodec.Codec(Holder, "avro", schema=reader)
    data = fastavro_write(writer, {"pet": {"lives": 9}})
    assert codec.decode_one(data, writer_schema=writer) == Holder(Cat(9))
    assert oracle(data, writer, reader) == {"pet": {"lives": 9}}
    data = fastavro_write(writer, {"pet": None})
    assert codec.decode_one(data, writer_schema=writer) == Holder(None)


@pytest.mark.parametrize(
    "writer_field, words",
    [
        ({"name": "v", "type": "string"}, "cannot be read as long"),
        ({"name": "other", "type": "long"}, "missing from the writer schema and has no default"),
        ({"name": "v", "type": "double"}, "cannot be read as long"),
        (
            {"name": "v", "type": {"type": "array", "items": "long"}},
            "cannot be read as long",
        ),
    ],
)
def test_incompatible_schemas_fail_at_resolution(writer_field: Any, words: str) -> None:
    box = dataclasses.make_dataclass("Box", [("v", int)])
    writer = {"type": "record", "name": "Box", "fields": [writer_field]}
    codec = polycodec.Codec(box, "avro")
    with pytest.raises(polycodec.DecodeError, match=words):
        codec.decode_one(b"\x02", writer_schema=writer)
    with pytest.raises(polycodec.DecodeError, match=words):
        codec.decode_many(fastavro_container(writer, []))


def test_invalid_writer_schema() -> None:
    codec = polycodec.Codec(Renamed, "avro")
    with pytest.raises(polycodec.DecodeError, match="invalid Avro writer schema: .*nope"):
        codec.decode_one(b"", writer_schema={"type": "nope"})


def test_writer_schema_with_single_object_framing() -> None:
    writer = {
        "type": "record",
        "name": "Renamed",
        "fields": [{"name": "full_name", "type": "string"}],
    }
    old = polycodec.Codec(Renamed, "avro", schema=writer, framing="single-object")
    new = polycodec.Codec(Renamed, "avro", framing="single-object")
    data = old.encode_one(Renamed("x", 5))
    assert new.decode_one(data, writer_schema=writer) == Renamed("x")
    with pytest.raises(polycodec.DecodeError, match="fingerprint"):
        new.decode_one(data)


def test_many_writer_schemas_are_cached_and_bounded() -> None:
    codec = polycodec.Codec(Renamed, "avro")
    for i in range(100):
        writer = {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "full_name", "type": "string"},
                {"name": f"extra{i}", "type": "long"},
            ],
        }
        data = fastavro_write(writer, {"full_name": "a", f"extra{i}": i})
        assert codec.decode_one(data, writer_schema=writer) == Renamed("a")


def test_writer_schema_is_the_codecs_own() -> None:
    codec = polycodec.Codec(V2, "avro")
    value = V2("a", 1, 2.0, ["t"], "n", Color.RED)
    data = codec.encode_one(value)
    assert codec.decode_one(data, writer_schema=codec.schema) == value
    assert codec.decode_one(data, writer_schema=json.dumps(codec.schema)) == value


def test_removed_recursive_field_is_skipped() -> None:
    node = {
        "type": "record",
        "name": "Node",
        "fields": [
            {"name": "value", "type": "long"},
            {"name": "next", "type": ["null", "Node"]},
        ],
    }
    writer = {
        "type": "record",
        "name": "Renamed",
        "fields": [
            {"name": "chain", "type": node},
            {"name": "full_name", "type": "string"},
        ],
    }
    datum = {"chain": {"value": 1, "next": {"value": 2, "next": None}}, "full_name": "r"}
    codec = polycodec.Codec(Renamed, "avro")
    data = fastavro_write(writer, datum)
    assert codec.decode_one(data, writer_schema=writer) == Renamed("r")
    assert oracle(data, writer, codec.schema) == {"full_name": "r", "age": 0}


@dataclasses.dataclass
class Chain:
    value: int
    next: Optional["Chain"] = None


def test_recursive_reader_and_writer() -> None:
    writer = {
        "type": "record",
        "name": "Chain",
        "fields": [
            {"name": "next", "type": ["null", "Chain"]},
            {"name": "value", "type": "int"},
            {"name": "extra", "type": "string"},
        ],
    }
    datum = {"next": {"next": None, "value": 2, "extra": "b"}, "value": 1, "extra": "a"}
    codec = polycodec.Codec(Chain, "avro")
    data = fastavro_write(writer, datum)
    assert codec.decode_one(data, writer_schema=writer) == Chain(1, Chain(2))


@dataclasses.dataclass
class Stamp:
    at: datetime.datetime
    clock: datetime.time
    ident: uuid.UUID


def test_logical_types_resolve_across_units() -> None:
    writer = {
        "type": "record",
        "name": "Stamp",
        "fields": [
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
            {
                "name": "ident",
                "type": {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            },
        ],
    }
    at = datetime.datetime(2024, 2, 29, 23, 59, 59, 999000, tzinfo=datetime.timezone.utc)
    value = Stamp(at, datetime.time(12, 30, 0, 5000), uuid.UUID(int=99))
    datum = {"at": at, "clock": value.clock, "ident": value.ident.bytes}
    data = fastavro_write(writer, datum)
    codec = polycodec.Codec(Stamp, "avro")
    assert codec.decode_one(data, writer_schema=writer) == value
    # A plain long is not a timestamp.
    plain_writer = {**writer, "fields": [{"name": "at", "type": "long"}] + writer["fields"][1:]}
    with pytest.raises(polycodec.DecodeError, match="cannot be read"):
        codec.decode_one(data, writer_schema=plain_writer)
