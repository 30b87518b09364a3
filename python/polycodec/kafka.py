"""Kafka serializers: polycodec codecs as confluent-kafka's ``SerializingProducer`` and
``DeserializingConsumer`` take them (the optional extra ``polycodec[kafka]``).

>>> producer = SerializingProducer({..., "value.serializer": Serializer(codec, registry)})
>>> consumer = DeserializingConsumer({..., "value.deserializer": Deserializer(codec, registry)})

With a schema registry client (confluent-kafka's ``SchemaRegistryClient``) and an Avro codec,
the serializer registers the codec's schema under the topic's subject (``<topic>-value`` or
``<topic>-key``, or ``subject=``) on first use, caches the id and writes the Confluent framing
(byte 0, the 4-byte big-endian schema id, the datum). The deserializer fetches each writer
schema it has not seen by id, caches it, and resolves it against the codec's schema, so
consumers read what producers with older or newer schemas wrote. Without a registry, payloads
are the codec's own ``encode_one`` bytes (JSON, MessagePack, pickle, or Avro with the framing
the codec was built with). ``None`` (a tombstone) passes through both ways.

Nothing here imports confluent-kafka: the registry is any object with ``register_schema`` and
``get_schema``, and the context any object with ``topic`` and ``field``.
"""

from __future__ import annotations

import importlib
import json
import threading
from typing import Any, Generic, Optional, TypeVar

from ._errors import DecodeError
from ._polycodec import Codec

T = TypeVar("T")

__all__ = ["Deserializer", "Serializer"]

_MAGIC = 0


def _raw_avro(codec: Codec[T]) -> Codec[T]:
    """The codec with the same options but no framing of its own (the registry path frames)."""
    rebuild, (tp, fmt, options) = codec.__reduce__()
    if options.get("framing") is None:
        return codec
    options = {k: v for k, v in options.items() if k not in ("framing", "schema_id")}
    raw: Codec[T] = rebuild(tp, fmt, options)
    return raw


def _check_registry(codec: Codec[Any], registry: Any) -> None:
    if registry is not None and codec.format != "avro":
        raise ValueError(
            f"a schema registry needs an Avro codec, not format {codec.format!r} "
            "(JSON and MessagePack payloads pass through without one)"
        )


def _field(ctx: Any) -> str:
    field = getattr(ctx, "field", None)
    # MessageField.KEY / VALUE are the strs "key" / "value".
    return "key" if str(field).lower().endswith("key") else "value"


class Serializer(Generic[T]):
    """``serializer(value, ctx) -> bytes``, for ``key.serializer`` or ``value.serializer``."""

    def __init__(
        self, codec: Codec[T], registry: Any = None, subject: Optional[str] = None
    ) -> None:
        _check_registry(codec, registry)
        self.codec = codec
        self.registry = registry
        self.subject = subject
        self._datum_codec = _raw_avro(codec) if registry is not None else codec
        self._ids: dict[str, int] = {}
        # (topic, field) -> the 5-byte Confluent header, so a message costs one lookup.
        self._headers: dict[tuple[Any, Any], bytes] = {}
        self._lock = threading.Lock()

    def subject_for(self, ctx: Any) -> str:
        """The subject the schema is registered under for this message's topic and field."""
        if self.subject is not None:
            return self.subject
        topic = getattr(ctx, "topic", None)
        if not topic:
            raise ValueError("Serializer needs subject= when the context names no topic")
        return f"{topic}-{_field(ctx)}"

    def schema_id(self, ctx: Any) -> int:
        """The registry id of the codec's schema under the context's subject (registered once)."""
        subject = self.subject_for(ctx)
        found = self._ids.get(subject)
        if found is not None:
            return found
        with self._lock:
            found = self._ids.get(subject)
            if found is None:
                schema_class = importlib.import_module("confluent_kafka.schema_registry").Schema
                schema = schema_class(json.dumps(self.codec.schema), "AVRO")
                found = int(self.registry.register_schema(subject, schema))
                self._ids[subject] = found
        return found

    def __call__(self, value: Optional[T], ctx: Any = None) -> Optional[bytes]:
        if value is None:
            return None
        if self.registry is None:
            return self.codec.encode_one(value)
        key = (getattr(ctx, "topic", None), getattr(ctx, "field", None))
        header = self._headers.get(key)
        if header is None:
            header = bytes([_MAGIC]) + self.schema_id(ctx).to_bytes(4, "big")
            self._headers[key] = header
        return header + self._datum_codec.encode_one(value)


class Deserializer(Generic[T]):
    """``deserializer(data, ctx) -> value``, for ``key.deserializer`` or ``value.deserializer``."""

    def __init__(self, codec: Codec[T], registry: Any = None) -> None:
        _check_registry(codec, registry)
        self.codec = codec
        self.registry = registry
        self._datum_codec = _raw_avro(codec) if registry is not None else codec
        # schema id -> the writer schema's JSON, or None when it is the codec's own schema.
        self._writers: dict[int, Optional[str]] = {}
        self._own = codec.schema if registry is not None else None
        self._lock = threading.Lock()

    def writer_schema(self, schema_id: int) -> Optional[str]:
        """The writer schema registered under ``schema_id`` (fetched once), or None when it is
        the codec's own schema."""
        if schema_id in self._writers:
            return self._writers[schema_id]
        with self._lock:
            if schema_id not in self._writers:
                text: str = self.registry.get_schema(schema_id).schema_str
                self._writers[schema_id] = None if json.loads(text) == self._own else text
        return self._writers[schema_id]

    def __call__(self, data: Optional[bytes], ctx: Any = None) -> Optional[T]:
        if data is None:
            return None
        if self.registry is None:
            return self.codec.decode_one(data)
        if len(data) < 5 or data[0] != _MAGIC:
            raise DecodeError(
                "not Confluent schema-registry framing (it must start with byte 0 and a "
                "4-byte schema id)"
            )
        writer = self.writer_schema(int.from_bytes(data[1:5], "big"))
        datum = data[5:]
        if writer is None:
            return self._datum_codec.decode_one(datum)
        return self._datum_codec.decode_one(datum, writer_schema=writer)
