"""Writing under a schema with more fields than the class (issue 39 item 2): each field the
class lacks is written with the schema's default, as confluent's and fastavro's writers fill
it, through `schema=`, container files and the Kafka serializer's `use_latest_version` and
`use_schema_id`; a schema field the class lacks without a default stays a clear error.
fastavro and apache avro are the oracles: they write the same bytes for the class's fields
alone, and read the defaults back."""

from __future__ import annotations

import dataclasses
import io
import json
import uuid
from typing import Any, Optional

import fastavro
import pytest

import polycodec
from test_avro_support import avro_read, avro_records, fastavro_read, fastavro_write


@dataclasses.dataclass
class Person:
    name: str
    age: int


def _schema(extra: list[dict[str, Any]]) -> dict[str, Any]:
    """Person's schema, an extra field between and after its two."""
    return {
        "type": "record",
        "name": "Person",
        "namespace": "people",
        "fields": [{"name": "name", "type": "string"}, extra[0], {"name": "age", "type": "long"}]
        + extra[1:],
    }


# Extra fields whose defaults fastavro's writer fills in too (it cannot write a bytes or fixed
# field's default, which the schema gives as text: those are checked by reading below).
FILLED = [
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "count", "type": "int", "default": -7},
    {"name": "big", "type": "long", "default": 2**40},
    {"name": "tags", "type": {"type": "array", "items": "string"}, "default": ["a", "b"]},
    {"name": "none", "type": {"type": "array", "items": "long"}, "default": []},
    {"name": "index", "type": {"type": "map", "values": "long"}, "default": {"x": 1, "y": -2}},
    {
        "name": "color",
        "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]},
        "default": "GREEN",
    },
    {
        "name": "home",
        "type": {
            "type": "record",
            "name": "Address",
            "fields": [
                {"name": "street", "type": "string"},
                {"name": "number", "type": "int", "default": 1},
            ],
        },
        "default": {"street": "Main"},
    },
    {"name": "label", "type": ["string", "null"], "default": "hi"},
    {"name": "ratio", "type": "double", "default": 1.5},
    {"name": "small", "type": "float", "default": 2.25},
    {"name": "flag", "type": "boolean", "default": True},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}, "default": 5},
]

TEXT_DEFAULTS = [
    {"name": "raw", "type": "bytes", "default": "\u00ff\u0000A"},
    {"name": "mac", "type": {"type": "fixed", "name": "Mac", "size": 2}, "default": "\u0001\u00fe"},
    {
        "name": "price",
        "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
        "default": "\u0004\u00d2",  # 1234 unscaled: 12.34
    },
]


@pytest.mark.parametrize("extra", FILLED, ids=[f["name"] for f in FILLED])
def test_each_default_is_written_as_fastavro_writes_it(extra: dict[str, Any]) -> None:
    schema = _schema([extra])
    codec = polycodec.Codec(Person, "avro", schema=schema)
    value = Person("Ann", 41)
    data = codec.encode_one(value)
    assert data == fastavro_write(schema, {"name": "Ann", "age": 41})
    assert codec.decode_one(data) == value


def test_all_defaults_at_once_read_back_by_fastavro_and_apache_avro() -> None:
    schema = _schema(FILLED + TEXT_DEFAULTS)
    codec = polycodec.Codec(Person, "avro", schema=schema)
    data = codec.encode_one(Person("Bo", 7))
    read = fastavro_read(schema, data)
    assert read["name"] == "Bo" and read["age"] == 7
    assert read["raw"] == b"\xff\x00A" and read["mac"] == b"\x01\xfe"
    assert str(read["price"]) == "12.34"
    assert read["home"] == {"street": "Main", "number": 1}
    assert read["tags"] == ["a", "b"] and read["index"] == {"x": 1, "y": -2}
    assert read["color"] == "GREEN" and read["label"] == "hi" and read["note"] is None
    apache = avro_read(schema, data)
    assert apache["raw"] == b"\xff\x00A" and apache["home"]["number"] == 1
    assert apache["count"] == -7 and apache["big"] == 2**40
    assert codec.decode_one(data) == Person("Bo", 7)


def test_container_files_and_streams_write_the_defaults() -> None:
    schema = _schema(FILLED[:3])
    codec = polycodec.Codec(Person, "avro", schema=schema)
    values = [Person("a", 1), Person("b", 2)]
    for blob in (codec.encode_many(values), codec.encode_stream(values)):
        records = list(fastavro.reader(io.BytesIO(blob)))
        assert [(r["name"], r["note"], r["count"], r["big"]) for r in records] == [
            ("a", None, -7, 2**40),
            ("b", None, -7, 2**40),
        ]
        assert [r["count"] for r in avro_records(blob)] == [-7, -7]
        assert codec.decode_many(blob) == values


def test_a_schema_field_the_class_lacks_without_a_default_stays_an_error() -> None:
    schema = _schema([{"name": "region", "type": "string"}])
    with pytest.raises(TypeError) as info:
        polycodec.Codec(Person, "avro", schema=schema)
    assert str(info.value) == (
        "the Avro schema does not match the type at $: schema field `region` has no field in "
        "Person and no default to write"
    )


@dataclasses.dataclass
class Inner:
    x: int


@dataclasses.dataclass
class Outer:
    inner: Inner
    items: list[Inner]


def test_nested_records_write_their_own_missing_defaults() -> None:
    inner = {
        "type": "record",
        "name": "Inner",
        "fields": [
            {"name": "x", "type": "long"},
            {"name": "y", "type": ["null", "long"], "default": None},
        ],
    }
    schema = {
        "type": "record",
        "name": "Outer",
        "fields": [
            {"name": "inner", "type": inner},
            {"name": "items", "type": {"type": "array", "items": "Inner"}},
            {"name": "id", "type": "string", "default": "none"},
        ],
    }
    codec = polycodec.Codec(Outer, "avro", schema=schema)
    value = Outer(Inner(1), [Inner(2), Inner(3)])
    data = codec.encode_one(value)
    expected = {"inner": {"x": 1}, "items": [{"x": 2}, {"x": 3}]}
    assert data == fastavro_write(schema, expected)
    assert codec.decode_one(data) == value


# -- Kafka: a producer whose class lags the registry's latest version ------------------------


def _registry() -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


@dataclasses.dataclass
class Order:
    __avro__ = {"name": "Order", "namespace": "shop"}
    id: int
    item: str


ORDER_V2 = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "item", "type": "string"},
        {"name": "channel", "type": "string", "default": "web"},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def _ctx() -> Any:
    from confluent_kafka.serialization import MessageField, SerializationContext

    return SerializationContext("shop", MessageField.VALUE)


def _confluent(reg: Any, conf: dict[str, Any]) -> Any:
    from confluent_kafka.schema_registry.avro import AvroSerializer

    return AvroSerializer(
        reg, json.dumps(ORDER_V2), lambda o, c: {"id": o.id, "item": o.item}, conf
    )


def test_kafka_use_latest_version_writes_the_newer_schemas_defaults() -> None:
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry.avro import AvroDeserializer

    from polycodec.kafka import Serializer

    reg = _registry()
    old = polycodec.Codec(Order, "avro")
    reg.register_schema("shop-value", Schema(json.dumps(old.schema), "AVRO"))
    reg.register_schema("shop-value", Schema(json.dumps(ORDER_V2), "AVRO"))
    ours = Serializer(old, reg, auto_register=False, use_latest_version=True)
    theirs = _confluent(reg, {"auto.register.schemas": False, "use.latest.version": True})
    value = Order(5, "tea")
    message = ours(value, _ctx())
    assert message == theirs(value, _ctx())
    assert message is not None and message[1:5] == (2).to_bytes(4, "big")
    assert AvroDeserializer(reg)(message, _ctx()) == {
        "id": 5,
        "item": "tea",
        "channel": "web",
        "note": None,
    }


def test_kafka_use_schema_id_writes_that_schemas_defaults() -> None:
    from confluent_kafka.schema_registry import Schema

    from polycodec.kafka import Deserializer, RegistrySchemaError, Serializer

    reg = _registry()
    schema_id = reg.register_schema("shop-value", Schema(json.dumps(ORDER_V2), "AVRO"))
    codec = polycodec.Codec(Order, "avro")
    ours = Serializer(codec, reg, use_schema_id=schema_id)
    theirs = _confluent(reg, {"use.schema.id": schema_id})
    value = Order(6, "jam")
    assert ours(value, _ctx()) == theirs(value, _ctx())
    # The consumer with the old class reads it (the extra fields are skipped).
    assert Deserializer(codec, reg)(ours(value, _ctx()), _ctx()) == value
    # A newer schema with a field the class lacks and no default is still refused, clearly.
    strict = dict(ORDER_V2, fields=ORDER_V2["fields"] + [{"name": "region", "type": "string"}])
    strict_id = reg.register_schema("other-value", Schema(json.dumps(strict), "AVRO"))
    with pytest.raises(RegistrySchemaError, match="`region` has no field in Order and no default"):
        Serializer(codec, reg, use_schema_id=strict_id)(value, _ctx())


def test_optional_class_fields_and_schema_defaults_mix() -> None:
    @dataclasses.dataclass
    class Partial:
        id: int
        note: Optional[str] = None

    schema = {
        "type": "record",
        "name": "Partial",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "extra", "type": "long", "default": 3},
            {"name": "note", "type": ["null", "string"], "default": None},
        ],
    }
    codec = polycodec.Codec(Partial, "avro", schema=schema)
    for value in (Partial(1), Partial(2, "x")):
        data = codec.encode_one(value)
        expected = {"id": value.id, "note": value.note}
        assert data == fastavro_write(schema, expected)
        assert codec.decode_one(data) == value
