"""A Kafka worker with polycodec: a producer and a consumer group sharing an Avro schema
through a schema registry.

    python examples/kafka_worker.py                       # self-contained demo (mock cluster)
    python examples/kafka_worker.py --bootstrap host:9092 --registry http://host:8081

Without --bootstrap, librdkafka's built-in mock cluster and the registry client's mock:// URL
stand in for the services. Run several copies with the same --group against a real cluster and
Kafka spreads the topic's partitions over them: that is how decoding scales past one machine.
"""

from __future__ import annotations

import argparse
import time
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from confluent_kafka import DeserializingConsumer, Producer, SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient

import polycodec
from polycodec.kafka import Deserializer, Serializer


@dataclass
class Reading:
    sensor: str
    value: float
    unit: Optional[str] = None


def run(bootstrap: str, registry: Any, topic: str, group: str, count: int) -> list[Reading]:
    """Produces `count` readings and consumes them with a consumer of group `group`."""
    codec = polycodec.Codec(Reading, "avro")
    producer = SerializingProducer(
        {"bootstrap.servers": bootstrap, "value.serializer": Serializer(codec, registry)}
    )
    for i in range(count):
        producer.produce(topic, value=Reading(f"s{i % 3}", i / 2, "C"))
    producer.flush(10)

    consumer = DeserializingConsumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "value.deserializer": Deserializer(codec, registry),
        }
    )
    consumer.subscribe([topic])
    received: list[Reading] = []
    deadline = time.monotonic() + 60
    try:
        while len(received) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None:
                continue
            if msg.error():
                raise RuntimeError(msg.error())
            received.append(msg.value())
    finally:
        consumer.close()
    return received


def main(argv: Optional[list[str]] = None) -> list[Reading]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", help="Kafka bootstrap servers (default: a mock cluster)")
    parser.add_argument("--registry", default="mock://demo", help="schema registry URL")
    parser.add_argument("--topic", default=f"readings-{uuid.uuid4().hex[:6]}")
    parser.add_argument("--group", default="polycodec-demo")
    parser.add_argument("--count", type=int, default=10)
    args = parser.parse_args(argv)
    holder = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        holder = Producer({"test.mock.num.brokers": 1, "log_level": 3})
        brokers = holder.list_topics(timeout=10).brokers.values()
        bootstrap = ",".join(f"{b.host}:{b.port}" for b in brokers)
    registry = SchemaRegistryClient.new_client({"url": args.registry})
    received = run(bootstrap, registry, args.topic, args.group, args.count)
    print(f"consumed {len(received)} readings, first {received[0] if received else None}")
    return received


if __name__ == "__main__":
    main()
