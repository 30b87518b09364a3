"""polycodec.kafka end to end with no external service: librdkafka's built-in mock cluster
(`test.mock.num.brokers`) and the schema registry client's `mock://` URL. A consumer group of
two consumers reads a topic that a producer upgrades to a new schema half way; every message is
read exactly once and decoded against the consumer's schema."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Iterator, Optional

import pytest
from confluent_kafka import DeserializingConsumer, Producer, SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext

import polycodec
from polycodec.kafka import Deserializer, Serializer
from queue_helpers import load_example

DEADLINE = 90.0


@dataclass
class OrderV1:
    """The first version of the record; both versions share the Avro name `shop.Order`."""

    __avro__: ClassVar[polycodec.AvroName] = {"name": "Order", "namespace": "shop"}
    id: int
    item: str


@dataclass
class Order:
    """OrderV1 with a field added (with a default): the producer's upgrade."""

    __avro__: ClassVar[polycodec.AvroName] = {"name": "Order", "namespace": "shop"}
    id: int
    item: str
    quantity: int = 1
    note: Optional[str] = None


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A mock Kafka cluster of one broker, alive while its creating client is; its address."""
    holder = Producer({"test.mock.num.brokers": 1})
    brokers = holder.list_topics(timeout=10).brokers
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in brokers.values())
    yield bootstrap
    holder.flush(5)


def new_topic(bootstrap: str) -> str:
    """A new topic: the mock cluster creates it, with 4 partitions, when metadata names it."""
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    client = Producer({"bootstrap.servers": bootstrap})
    partitions = client.list_topics(topic, timeout=10).topics[topic].partitions
    assert len(partitions) == 4
    return topic


def registry() -> Any:
    return SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})


def test_serializer_registers_once_and_frames() -> None:
    reg = registry()
    codec = polycodec.Codec(Order, "avro")
    ser = Serializer(codec, reg)
    ctx = SerializationContext("shop", MessageField.VALUE)
    first = ser(Order(1, "tea"), ctx)
    assert first is not None and first[0] == 0
    schema_id = int.from_bytes(first[1:5], "big")
    assert ser(Order(2, "milk"), ctx)[1:5] == first[1:5]  # type: ignore[index]
    assert reg.get_latest_version("shop-value").schema_id == schema_id
    assert first[5:] == codec.encode_one(Order(1, "tea"))
    key_ctx = SerializationContext("shop", MessageField.KEY)
    keyed = ser(Order(3, "jam"), key_ctx)
    assert keyed is not None
    assert reg.get_latest_version("shop-key").schema_id == int.from_bytes(keyed[1:5], "big")
    assert Deserializer(codec, reg)(first, ctx) == Order(1, "tea")
    assert ser(None, ctx) is None and Deserializer(codec, reg)(None, ctx) is None


def test_serializer_without_registry_passes_payloads_through() -> None:
    for fmt in ["json", "msgpack"]:
        codec = polycodec.Codec(Order, fmt)
        data = Serializer(codec)(Order(1, "tea"), None)
        assert data == codec.encode_one(Order(1, "tea"))
        assert Deserializer(codec)(data, None) == Order(1, "tea")
    with pytest.raises(ValueError, match="Avro or JSON codec"):
        Serializer(polycodec.Codec(Order, "msgpack"), registry())


def test_deserializer_refuses_unframed_data() -> None:
    with pytest.raises(polycodec.DecodeError, match="Confluent"):
        Deserializer(polycodec.Codec(Order, "avro"), registry())(b"\x01\x00", None)


def test_codec_with_its_own_framing_is_unframed_for_the_registry() -> None:
    codec = polycodec.Codec(Order, "avro", framing="confluent", schema_id=7)
    reg = registry()
    data = Serializer(codec, reg, subject="s")(Order(1, "tea"), None)
    assert data is not None and data[5:] == polycodec.Codec(Order, "avro").encode_one(
        Order(1, "tea")
    )
    assert Deserializer(codec, reg)(data, None) == Order(1, "tea")


def consume_all(consumers: list[Any], want: int) -> list[list[Any]]:
    got: list[list[Any]] = [[] for _ in consumers]
    deadline = time.monotonic() + DEADLINE
    while sum(map(len, got)) < want and time.monotonic() < deadline:
        for i, consumer in enumerate(consumers):
            msg = consumer.poll(0.05)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            got[i].append(msg.value())
    return got


def wait_for_assignment(consumers: list[Any]) -> None:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        for consumer in consumers:
            assert consumer.poll(0.05) is None
        if all(consumer.assignment() for consumer in consumers):
            return
    raise AssertionError("the consumer group never assigned partitions to both consumers")


def test_consumer_group_and_a_schema_upgrade_mid_topic(cluster: str) -> None:
    topic = new_topic(cluster)
    reg = registry()
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumers = [
        DeserializingConsumer(
            {
                "bootstrap.servers": cluster,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "value.deserializer": Deserializer(polycodec.Codec(Order, "avro"), reg),
            }
        )
        for _ in range(2)
    ]
    # A consumer still on the old schema, in a group of its own: it reads the new messages too.
    old_reader = DeserializingConsumer(
        {
            "bootstrap.servers": cluster,
            "group.id": group + "-old",
            "auto.offset.reset": "earliest",
            "value.deserializer": Deserializer(polycodec.Codec(OrderV1, "avro"), reg),
        }
    )
    try:
        for consumer in consumers + [old_reader]:
            consumer.subscribe([topic])
        wait_for_assignment(consumers)

        def producer(codec: polycodec.Codec[Any]) -> Any:
            return SerializingProducer(
                {"bootstrap.servers": cluster, "value.serializer": Serializer(codec, reg)}
            )

        v1 = producer(polycodec.Codec(OrderV1, "avro"))
        for i in range(40):
            v1.produce(topic, value=OrderV1(i, f"item{i}"), partition=i % 4)
        assert v1.flush(10) == 0
        v2 = producer(polycodec.Codec(Order, "avro"))
        for i in range(40, 80):
            v2.produce(topic, value=Order(i, f"item{i}", quantity=i, note="new"), partition=i % 4)
        assert v2.flush(10) == 0
        versions = reg.get_versions(f"{topic}-value")
        assert len(versions) == 2

        got = consume_all(consumers, 80)
        assert all(got), "both consumers of the group read messages"
        values = sorted((v for part in got for v in part), key=lambda o: o.id)
        assert values == [Order(i, f"item{i}") for i in range(40)] + [
            Order(i, f"item{i}", quantity=i, note="new") for i in range(40, 80)
        ]
        old = consume_all([old_reader], 80)[0]
        assert sorted(old, key=lambda o: o.id) == [OrderV1(i, f"item{i}") for i in range(80)]
    finally:
        for consumer in consumers + [old_reader]:
            consumer.close()


def test_example_worker_runs_on_a_mock_cluster() -> None:
    example = load_example("kafka_worker")
    received = example.main(["--count", "6"])
    assert sorted(r.value for r in received) == [i / 2 for i in range(6)]
