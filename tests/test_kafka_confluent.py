"""polycodec.kafka against confluent-kafka's own serializers as the oracle, both ways, on the
`mock://` registry (and the mock cluster for headers): registration policy, subject name
strategies, schema ids in headers, JSON Schema subjects, errors a consumer can act on, and
confluent's dotted configuration keys."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Optional, Union

import pytest
from confluent_kafka import Consumer, Producer, SerializingProducer
from confluent_kafka.schema_registry import (
    Schema,
    SchemaRegistryClient,
    header_schema_id_serializer,
    record_subject_name_strategy,
    topic_record_subject_name_strategy,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError

import polycodec
from polycodec.kafka import Deserializer, KafkaDecodeError, RegistrySchemaError, Serializer
from queue_helpers import load_example


@dataclass
class Order:
    __avro__: ClassVar[polycodec.AvroName] = {"name": "Order", "namespace": "shop"}
    id: int
    item: str
    note: Optional[str] = None


@dataclass
class OrderV0:
    __avro__: ClassVar[polycodec.AvroName] = {"name": "Order", "namespace": "shop"}
    id: int
    item: str


def registry() -> Any:
    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


def ctx(topic: str = "shop", headers: Any = None, field: str = MessageField.VALUE) -> Any:
    return SerializationContext(topic, field, headers)


def mock_cluster() -> tuple[Any, str]:
    """A mock cluster of one broker, alive while the returned client is; its address."""
    holder = Producer({"test.mock.num.brokers": 1, "log_level": 3})
    bootstrap = ",".join(
        f"{b.host}:{b.port}" for b in holder.list_topics(timeout=10).brokers.values()
    )
    return holder, bootstrap


def to_dict(obj: Any, _: Any) -> dict[str, Any]:
    return {k: v for k, v in asdict(obj).items()}


def from_dict(data: dict[str, Any], _: Any) -> Order:
    return Order(**data)


AVRO = polycodec.Codec(Order, "avro")
OrderV0_SCHEMA = polycodec.Codec(OrderV0, "avro").schema
JSON = polycodec.Codec(Order, "json")
VALUES = [Order(1, "tea"), Order(2, "jam", "x" * 40), Order(-(2**40), "")]


def theirs_avro(reg: Any, conf: Optional[dict[str, Any]] = None) -> AvroSerializer:
    return AvroSerializer(reg, json.dumps(AVRO.schema), to_dict, conf)


# -- 1. registration policy ---------------------------------------------------------------


def test_auto_register_bytes_equal_confluents_both_ways() -> None:
    reg = registry()
    ours, theirs = Serializer(AVRO, reg), theirs_avro(reg)
    back = AvroDeserializer(reg, json.dumps(AVRO.schema), from_dict)
    for value in VALUES:
        assert ours(value, ctx()) == theirs(value, ctx())
        assert back(ours(value, ctx()), ctx()) == value
        assert Deserializer(AVRO, reg)(theirs(value, ctx()), ctx()) == value
    assert reg.get_versions("shop-value") == [1]


def test_auto_register_off_looks_up_and_says_what_is_missing() -> None:
    reg = registry()
    ours = Serializer(AVRO, reg, auto_register=False)
    with pytest.raises(RegistrySchemaError, match="'shop-value' is not in the registry"):
        ours(VALUES[0], ctx())
    assert reg.get_subjects() == []
    # Another schema under the subject: still absent, and the message says so.
    reg.register_schema(
        "shop-value", Schema(json.dumps(polycodec.Codec(OrderV0, "avro").schema), "AVRO")
    )
    with pytest.raises(RegistrySchemaError, match=r"version\(s\) \[1\], none of them"):
        Serializer(AVRO, reg, auto_register=False)(VALUES[0], ctx())
    # Registered by confluent's serializer: looked up, same bytes as confluent's lookup.
    theirs_avro(reg)(VALUES[0], ctx())
    ours = Serializer(AVRO, reg, auto_register=False)
    looked_up = theirs_avro(reg, {"auto.register.schemas": False})
    assert ours(VALUES[1], ctx()) == looked_up(VALUES[1], ctx())
    assert sorted(reg.get_versions("shop-value")) == [1, 2]


def test_use_latest_version_is_checked_against_the_codec() -> None:
    reg = registry()
    old = polycodec.Codec(OrderV0, "avro")
    AvroSerializer(reg, json.dumps(old.schema), to_dict)(OrderV0(1, "a"), ctx())
    # The latest version lacks `note`, which has a default: the codec binds to it.
    ours = Serializer(AVRO, reg, auto_register=False, use_latest_version=True)
    theirs = AvroSerializer(
        reg,
        json.dumps(AVRO.schema),
        lambda o, c: {"id": o.id, "item": o.item},
        {"auto.register.schemas": False, "use.latest.version": True},
    )
    value = Order(5, "tea")
    assert ours(value, ctx()) == theirs(value, ctx())
    assert Deserializer(old, reg)(ours(value, ctx()), ctx()) == OrderV0(5, "tea")
    # A latest version the type does not fit is refused, saying which version.
    reg.register_schema(
        "other-value",
        Schema(
            json.dumps({"type": "record", "name": "X", "fields": [{"name": "z", "type": "int"}]}),
            "AVRO",
        ),
    )
    with pytest.raises(RegistrySchemaError, match="version 1 of subject 'other-value'"):
        ours(value, ctx("other"))
    with pytest.raises(ValueError, match="cannot enable both"):
        Serializer(AVRO, reg, use_latest_version=True)


def test_use_schema_id_writes_what_confluents_writes() -> None:
    reg = registry()
    # confluent's serializer looks the id up under the subject, so it is registered there.
    reg.register_schema("shop-value", Schema(json.dumps(OrderV0_SCHEMA), "AVRO"))
    schema_id = reg.register_schema("shop-value", Schema(json.dumps(AVRO.schema), "AVRO"))
    assert schema_id == 2
    ours = Serializer(AVRO, reg, use_schema_id=schema_id)
    theirs = theirs_avro(reg, {"use.schema.id": schema_id})
    assert ours(VALUES[0], ctx()) == theirs(VALUES[0], ctx())
    assert ours(VALUES[0], ctx())[1:5] == schema_id.to_bytes(4, "big")  # type: ignore[index]
    with pytest.raises(RegistrySchemaError, match="no schema with that id"):
        Serializer(AVRO, reg, use_schema_id=999)(VALUES[0], ctx())


class Recording:
    """A registry client that records the register and lookup calls made through it, with
    their normalize flag, and passes every call on to `reg`."""

    def __init__(self, reg: Any) -> None:
        self.reg = reg
        self.calls: list[tuple[str, str, bool]] = []

    def register_schema_full_response(
        self, subject: str, schema: Any, normalize_schemas: bool = False
    ) -> Any:
        self.calls.append(("register", subject, normalize_schemas))
        return self.reg.register_schema_full_response(
            subject, schema, normalize_schemas=normalize_schemas
        )

    def lookup_schema(
        self, subject: str, schema: Any, normalize_schemas: bool = False, deleted: bool = False
    ) -> Any:
        self.calls.append(("lookup", subject, normalize_schemas))
        return self.reg.lookup_schema(
            subject, schema, normalize_schemas=normalize_schemas, deleted=deleted
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reg, name)


@pytest.mark.parametrize("fmt", ["avro", "json"])
@pytest.mark.parametrize("auto_register", [True, False])
@pytest.mark.parametrize("normalize", [True, False])
def test_normalize_schemas_reaches_the_registry_as_confluents_does(
    fmt: str, auto_register: bool, normalize: bool
) -> None:
    # The registry is asked what confluent's serializer asks it, with the same normalize flag,
    # registering or looking up; the bytes are the same.
    reg = registry()
    codec = AVRO if fmt == "avro" else JSON
    schema_str = Serializer(codec, reg).schema_str
    schema_type = "AVRO" if fmt == "avro" else "JSON"
    if not auto_register:
        reg.register_schema("shop-value", Schema(schema_str, schema_type))
    conf = {"auto.register.schemas": auto_register, "normalize.schemas": normalize}
    ours_reg, theirs_reg = Recording(reg), Recording(reg)
    if fmt == "avro":
        theirs = AvroSerializer(theirs_reg, schema_str, to_dict, conf)
    else:
        theirs = JSONSerializer(schema_str, theirs_reg, to_dict, conf)
    assert Serializer(codec, ours_reg, conf=conf)(VALUES[1], ctx()) == theirs(VALUES[1], ctx())
    expected = [("register" if auto_register else "lookup", "shop-value", normalize)]
    assert ours_reg.calls == theirs_reg.calls == expected


# -- 2. subject name strategies -------------------------------------------------------------


@pytest.mark.parametrize(
    "ours, theirs, subject",
    [
        ("topic", None, "shop-value"),
        ("record", record_subject_name_strategy, "shop.Order"),
        ("topic_record", topic_record_subject_name_strategy, "shop-shop.Order"),
        (
            lambda c, name: f"custom-{c.topic}-{name}",
            lambda c, name: f"custom-{c.topic}-{name}",
            "custom-shop-shop.Order",
        ),
    ],
)
def test_subject_name_strategies_match_confluents(ours: Any, theirs: Any, subject: str) -> None:
    reg_a, reg_b = registry(), registry()
    conf = {} if theirs is None else {"subject.name.strategy": theirs}
    Serializer(AVRO, reg_a, subject_name_strategy=ours)(VALUES[0], ctx())
    theirs_avro(reg_b, conf)(VALUES[0], ctx())
    assert reg_a.get_subjects() == reg_b.get_subjects() == [subject]
    # confluent's strategy functions and type names are taken as they are.
    reg_c = registry()
    conf_c = {"subject.name.strategy.type": "RECORD"} if ours == "record" else conf
    Serializer(AVRO, reg_c, conf=conf_c)(VALUES[0], ctx())
    if ours in ("record", "topic") or theirs is not None:
        assert reg_c.get_subjects() == [subject]


@pytest.mark.parametrize(
    "ours, theirs, subject",
    [
        ("record", record_subject_name_strategy, "Order"),
        ("topic_record", topic_record_subject_name_strategy, "shop-Order"),
    ],
)
def test_json_record_strategies_name_the_title_as_confluents(
    ours: str, theirs: Any, subject: str
) -> None:
    reg_a, reg_b = registry(), registry()
    Serializer(JSON, reg_a, subject_name_strategy=ours)(VALUES[0], ctx())
    schema_str = Serializer(JSON, registry()).schema_str
    JSONSerializer(schema_str, reg_b, to_dict, {"subject.name.strategy": theirs})(VALUES[0], ctx())
    assert reg_a.get_subjects() == reg_b.get_subjects() == [subject]


# -- 3. schema ids in headers ---------------------------------------------------------------


def test_header_ids_byte_equal_and_read_both_ways() -> None:
    reg = registry()
    ours = Serializer(AVRO, reg, schema_id_location="header")
    theirs = theirs_avro(reg, {"schema.id.serializer": header_schema_id_serializer})
    ours_h: list[Any] = []
    theirs_h: list[Any] = []
    a = ours(VALUES[1], ctx(headers=ours_h))
    b = theirs(VALUES[1], ctx(headers=theirs_h))
    assert a == b == AVRO.encode_one(VALUES[1])
    assert ours_h == theirs_h and ours_h[0][0] == "__value_schema_id"
    assert len(ours_h[0][1]) == 17 and ours_h[0][1][0] == 1
    key_h: dict[str, bytes] = {}
    via_conf = Serializer(AVRO, reg, conf={"schema.id.serializer": header_schema_id_serializer})
    via_conf(VALUES[1], ctx(headers=key_h, field=MessageField.KEY))
    assert list(key_h) == ["__key_schema_id"]
    back = AvroDeserializer(reg, json.dumps(AVRO.schema), from_dict)
    assert back(a, ctx(headers=ours_h)) == VALUES[1]
    assert Deserializer(AVRO, reg)(b, ctx(headers=theirs_h)) == VALUES[1]
    # The header comes first, as confluent's deserializer reads it; the prefix still works.
    assert (
        Deserializer(AVRO, reg)(theirs_avro(reg)(VALUES[0], ctx()), ctx(headers=[("x", b"")]))
        == VALUES[0]
    )
    with pytest.raises(ValueError, match="headers as a list or dict"):
        ours(VALUES[0], ctx(headers=None))


def test_header_ids_through_the_mock_cluster() -> None:
    holder, bootstrap = mock_cluster()
    topic = f"h-{uuid.uuid4().hex[:8]}"
    reg = registry()
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "value.serializer": Serializer(AVRO, reg, schema_id_location="header"),
        }
    )
    for value in VALUES:
        producer.produce(topic, value=value, headers=[])
    assert producer.flush(10) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": topic,
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
    )
    consumer.subscribe([topic])
    back = AvroDeserializer(reg, json.dumps(AVRO.schema), from_dict)
    ours = Deserializer(AVRO, reg)
    got = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < len(VALUES) and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            headers = msg.headers()
            assert headers and headers[0][0] == "__value_schema_id"
            theirs = back(msg.value(), ctx(topic, headers))
            assert ours.message(msg) == theirs
            got.append(theirs)
    finally:
        consumer.close()
    assert sorted(got, key=lambda o: o.id) == sorted(VALUES, key=lambda o: o.id)


# -- 4. JSON Schema subjects ----------------------------------------------------------------


def test_json_schema_subjects_interoperate_with_confluents() -> None:
    reg = registry()
    ours = Serializer(JSON, reg)
    data = ours(VALUES[1], ctx())
    assert data is not None and data[0] == 0
    registered = reg.get_latest_version("shop-value")
    assert registered.schema.schema_type == "JSON"
    assert json.loads(registered.schema.schema_str)["title"] == "Order"
    back = JSONDeserializer(ours.schema_str, from_dict, reg)
    for value in VALUES:
        assert back(ours(value, ctx()), ctx()) == value
    theirs = JSONSerializer(ours.schema_str, reg, to_dict)
    for value in VALUES:
        out = theirs(value, ctx())
        assert out[:5] == data[:5]  # the same subject version
        assert Deserializer(JSON, reg)(out, ctx()) == value
    # MessagePack still passes through without a registry.
    mp = polycodec.Codec(Order, "msgpack")
    assert Deserializer(mp)(Serializer(mp)(VALUES[0], None), None) == VALUES[0]


def test_json_deserializer_checks_what_the_codec_checks() -> None:
    reg = registry()
    theirs = JSONSerializer(Serializer(JSON, reg).schema_str, reg, to_dict, {"validate": False})
    bad = theirs(Order("nope", "tea"), ctx())  # type: ignore[arg-type]
    with pytest.raises(KafkaDecodeError, match=r"expected int") as info:
        Deserializer(JSON, reg, conf={"validate": True})(bad, ctx())
    assert info.value.kind == "corrupt" and info.value.path == "$.id"


# -- 5. errors a consumer can act on ---------------------------------------------------------


def test_errors_carry_topic_schema_id_and_kind() -> None:
    reg = registry()
    de = Deserializer(AVRO, reg)
    with pytest.raises(KafkaDecodeError) as info:
        de(b"\x00\x00\x00\x03\xe7\x02", ctx())
    err = info.value
    assert (err.kind, err.topic, err.schema_id, err.field) == (
        "unknown-schema",
        "shop",
        999,
        "value",
    )
    assert isinstance(err, polycodec.DecodeError) and isinstance(err, SerializationError)
    assert "schema id 999" in str(err)
    other = reg.register_schema(
        "x",
        Schema(
            json.dumps(
                {
                    "type": "record",
                    "name": "shop.Order",
                    "fields": [{"name": "id", "type": "string"}],
                }
            ),
            "AVRO",
        ),
    )
    with pytest.raises(KafkaDecodeError, match="cannot read the writer schema") as info:
        de(b"\x00" + other.to_bytes(4, "big") + b"\x02a", ctx())
    assert info.value.kind == "unresolvable-schema" and info.value.schema_id == other
    good = Serializer(AVRO, reg)(VALUES[0], ctx())
    assert good is not None
    with pytest.raises(KafkaDecodeError) as info:
        de(good[:5] + b"\x02\x09", ctx())
    assert info.value.kind == "corrupt" and info.value.path == "$.item"
    with pytest.raises(KafkaDecodeError) as info:
        de(b"\x07abc", ctx())
    assert info.value.kind == "framing"
    json_id = reg.register_schema("j", Schema(Serializer(JSON, reg).schema_str, "JSON"))
    with pytest.raises(KafkaDecodeError, match="JSON schema") as info:
        de(b"\x00" + json_id.to_bytes(4, "big") + b"{}", ctx())
    assert info.value.kind == "unresolvable-schema"


def test_dead_letter_example_routes_bad_messages() -> None:
    example = load_example("kafka_dead_letter")
    good, dead = example.main(["--count", "6"])
    assert sorted(r.value for r in good) == [float(i) for i in range(6)]
    kinds = sorted(d["kind"] for d in dead)
    assert kinds == ["corrupt", "framing", "unknown-schema"]
    assert all(d["partition"] is not None and d["offset"] is not None for d in dead)
    assert {d["schema_id"] for d in dead if d["kind"] == "unknown-schema"} == {4242}


def test_dead_letter_example_writes_the_dead_letter_topic() -> None:
    # What lands on `<topic>.dead`: each bad message's own bytes, with headers saying why and
    # where it came from.
    example = load_example("kafka_dead_letter")
    holder, bootstrap = mock_cluster()
    topic = f"dl-{uuid.uuid4().hex[:8]}"
    good, dead = example.run(bootstrap, registry(), topic, 2)
    assert len(good) == 2 and len(dead) == 3
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": topic + ".dead",
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
    )
    consumer.subscribe([topic + ".dead"])
    routed = []
    deadline = time.monotonic() + 60
    try:
        while len(routed) < 3 and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and not msg.error():
                routed.append((msg.value(), dict(msg.headers() or [])))
    finally:
        consumer.close()
    by_kind = {headers["dlq.kind"].decode(): (value, headers) for value, headers in routed}
    assert sorted(by_kind) == ["corrupt", "framing", "unknown-schema"]
    assert by_kind["framing"][0] == b"not framed"
    assert by_kind["unknown-schema"][1]["dlq.schema_id"] == b"4242"
    assert by_kind["corrupt"][0] == b"\x00\x00\x00\x00\x01\x09"
    for value, headers in routed:
        assert headers["dlq.topic"] == topic.encode() and headers["dlq.partition"] == b"0"
        assert int(headers["dlq.offset"]) >= 2 and headers["dlq.error"]


# -- 6. confluent's dotted keys ---------------------------------------------------------------


def test_conf_keys_as_confluents() -> None:
    reg = registry()
    with pytest.raises(ValueError, match="Unrecognized properties: bogus.key"):
        Serializer(AVRO, reg, conf={"bogus.key": 1})
    with pytest.raises(ValueError, match="Unrecognized properties"):
        AvroSerializer(reg, json.dumps(AVRO.schema), to_dict, {"bogus.key": 1})
    with pytest.raises(ValueError, match="Unrecognized properties: bogus"):
        Deserializer(AVRO, reg, conf={"bogus": 1})
    with pytest.raises(ValueError, match="auto.register.schemas must be a boolean"):
        Serializer(AVRO, reg, conf={"auto.register.schemas": "yes"})
    with pytest.raises(ValueError, match="use.latest.with.metadata is not supported"):
        Serializer(AVRO, reg, conf={"use.latest.with.metadata": {}})
    conf = {"auto.register.schemas": False, "use.latest.version": True, "normalize.schemas": False}
    theirs_avro(reg)(VALUES[0], ctx())
    ser = Serializer(AVRO, reg, conf=conf)
    assert ser.auto_register is False and ser.use_latest_version is True
    assert ser(VALUES[0], ctx()) == theirs_avro(reg, conf)(VALUES[0], ctx())


def test_from_consume_error_unwraps_a_deserializing_consumers_error() -> None:
    from confluent_kafka.error import ValueDeserializationError

    class Msg:
        def topic(self) -> str:
            return "shop"

        def partition(self) -> int:
            return 3

        def offset(self) -> int:
            return 41

        def value(self) -> bytes:
            return b"\x07"

    try:
        Deserializer(AVRO, registry())(b"\x07", ctx())
    except KafkaDecodeError as inner:
        wrapped = ValueDeserializationError(exception=inner, kafka_message=Msg())
    found = KafkaDecodeError.from_consume_error(wrapped)
    assert (found.kind, found.topic, found.partition, found.offset) == ("framing", "shop", 3, 41)
    assert "partition 3, offset 41" in str(found)
    other = KafkaDecodeError.from_consume_error(
        ValueDeserializationError(exception=KeyError("k"), kafka_message=Msg())
    )
    assert other.kind == "corrupt" and other.data == b"\x07" and other.offset == 41


def test_custom_schema_id_callables_are_called_as_confluent_calls_them() -> None:
    from confluent_kafka.schema_registry import (
        prefix_schema_id_deserializer,
        prefix_schema_id_serializer,
    )

    reg = registry()
    seen: list[Any] = []

    def write(payload: bytes, c: Any, sid: Any) -> bytes:
        seen.append((sid.id, sid.guid is not None))
        return prefix_schema_id_serializer(payload, c, sid)

    def read(data: bytes, c: Any, sid: Any) -> Any:
        return prefix_schema_id_deserializer(data, c, sid)

    ours = Serializer(AVRO, reg, conf={"schema.id.serializer": write})
    data = ours(VALUES[1], ctx())
    assert data == theirs_avro(reg)(VALUES[1], ctx())
    assert seen == [(1, True)]
    assert Deserializer(AVRO, reg, conf={"schema.id.deserializer": read})(data, ctx()) == VALUES[1]
    with pytest.raises(KafkaDecodeError) as info:
        Deserializer(AVRO, reg, conf={"schema.id.deserializer": read})(b"\x05xxxxxx", ctx())
    assert info.value.kind == "framing"


# -- issue 38, item 11: hostile writer schemas in the registry --------------------------------


class CountingRegistry:
    """confluent's mock registry, counting the schemas fetched by id (each fetch is one
    resolution of a writer schema by the deserializer)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.fetched = 0

    def get_schema(self, schema_id: int, *args: Any, **kwargs: Any) -> Any:
        self.fetched += 1
        return self.inner.get_schema(schema_id, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _nested_arrays(depth: int) -> str:
    return '{"type":"array","items":' * depth + '"long"' + "}" * depth


@pytest.mark.parametrize(
    "schema_text, reason",
    [
        # 125 KB nesting 5,000 arrays: json.loads raised RecursionError out of the deserializer
        # (on 3.11; 3.14's json.loads reads it, and the schema parser refuses it).
        (
            _nested_arrays(5000),
            (
                "invalid writer schema: it nests too deeply to be an Avro schema",
                "invalid Avro writer schema: the Avro schema nests deeper than 128 levels",
            ),
        ),
        # 129 levels: a valid JSON text, refused by the schema parser; it was reported as a
        # corrupt datum.
        (_nested_arrays(129), "invalid Avro writer schema: the Avro schema nests deeper than 128"),
        # Not JSON at all.
        ('{"type": "record", "name": ', "invalid writer schema: it is not JSON"),
        # 1 MB of fields, one of which the codec cannot read: resolved again for every message
        # naming it (0.04-0.5 s each).
        (
            json.dumps(
                {
                    "type": "record",
                    "name": "shop.Order",
                    "fields": [{"name": "id", "type": "string"}]
                    + [{"name": f"f{i}", "type": "long", "default": 0} for i in range(30_000)],
                }
            ),
            "cannot read the writer schema",
        ),
    ],
    ids=["5000-arrays", "129-arrays", "not-json", "1MB-record"],
)
def test_issue38_item11_hostile_writer_schemas_are_unresolvable_once(
    schema_text: str, reason: Union[str, tuple[str, ...]]
) -> None:
    import time

    inner = registry()
    schema_id = inner.register_schema("hostile", Schema(schema_text, "AVRO"))
    counting = CountingRegistry(inner)
    de = Deserializer(AVRO, counting)
    message = b"\x00" + schema_id.to_bytes(4, "big") + b"\x02\x00"
    started = time.perf_counter()
    for offset in range(200):
        with pytest.raises(KafkaDecodeError) as info:
            de(message, ctx())
        err = info.value
        assert err.kind == "unresolvable-schema", err
        assert err.reason.startswith(reason), err.reason
        assert (err.schema_id, err.topic, err.data) == (schema_id, "shop", message)
    # One resolution for the schema id, whatever the number of messages naming it.
    assert counting.fetched == 1
    assert time.perf_counter() - started < 10
    # A schema the codec reads is still read, and a good id after a bad one too.
    good = Serializer(AVRO, inner)(VALUES[0], ctx())
    assert de(good, ctx()) == VALUES[0]
    assert de.writer_schema(schema_id) == schema_text
