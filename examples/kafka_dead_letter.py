"""A Kafka consumer with a dead-letter topic: a message that cannot be decoded (bytes without
the Confluent framing, an unknown schema id, a corrupt datum) is produced to ``<topic>.dead``
with headers saying why, where it came from and which schema id it named, and the consumer
goes on.

    python examples/kafka_dead_letter.py       # self-contained demo (mock cluster, mock:// registry)
"""

from __future__ import annotations

import argparse
import time
import uuid
from dataclasses import dataclass
from typing import Any, Optional

from confluent_kafka import Consumer, Producer, SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient

import polycodec
from polycodec.kafka import Deserializer, KafkaDecodeError, Serializer


@dataclass
class Reading:
    sensor: str
    value: float


def dead_letter(producer: Producer, topic: str, msg: Any, err: KafkaDecodeError) -> dict[str, Any]:
    """Routes `msg` to the dead-letter topic with the error's facts as headers."""
    info = {
        "kind": err.kind,
        "topic": err.topic,
        "partition": err.partition,
        "offset": err.offset,
        "schema_id": err.schema_id,
        "error": str(err),
    }
    headers = [(f"dlq.{k}", str(v).encode()) for k, v in info.items() if v is not None]
    producer.produce(f"{topic}.dead", value=msg.value(), key=msg.key(), headers=headers)
    return info


def run(
    bootstrap: str, registry: Any, topic: str, count: int
) -> tuple[list[Reading], list[dict[str, Any]]]:
    codec = polycodec.Codec(Reading, "avro")
    producer = SerializingProducer(
        {"bootstrap.servers": bootstrap, "value.serializer": Serializer(codec, registry)}
    )
    for i in range(count):
        producer.produce(topic, value=Reading(f"s{i}", float(i)), partition=0)
    # Two producers share no queue: the good messages are flushed first so the partition's
    # order (and each bad message's offset) does not depend on which one the broker hears first.
    producer.flush(10)
    raw = Producer({"bootstrap.servers": bootstrap})
    raw.produce(topic, value=b"not framed", partition=0)
    raw.produce(topic, value=b"\x00" + (4242).to_bytes(4, "big") + b"\x02", partition=0)
    raw.produce(topic, value=b"\x00\x00\x00\x00\x01\x09", partition=0)  # id 1, bad string length
    raw.flush(10)

    deserialize = Deserializer(codec, registry)
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    good: list[Reading] = []
    dead: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    try:
        while len(good) + len(dead) < count + 3 and time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None or msg.error():
                continue
            try:
                value = deserialize.message(msg)
            except KafkaDecodeError as err:
                dead.append(dead_letter(raw, topic, msg, err))
                continue
            if value is not None:
                good.append(value)
    finally:
        consumer.close()
    raw.flush(10)
    return good, dead


def main(argv: Optional[list[str]] = None) -> tuple[list[Reading], list[dict[str, Any]]]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=5)
    args = parser.parse_args(argv)
    holder = Producer({"test.mock.num.brokers": 1, "log_level": 3})
    bootstrap = ",".join(
        f"{b.host}:{b.port}" for b in holder.list_topics(timeout=10).brokers.values()
    )
    registry = SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})
    good, dead = run(bootstrap, registry, f"readings-{uuid.uuid4().hex[:6]}", args.count)
    print(f"decoded {len(good)}, dead-lettered {len(dead)}: {[d['kind'] for d in dead]}")
    return good, dead


if __name__ == "__main__":
    main()
