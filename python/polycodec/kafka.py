"""Kafka serializers: polycodec codecs as confluent-kafka's ``SerializingProducer`` and
``DeserializingConsumer`` take them (the optional extra ``polycodec[kafka]``).

>>> producer = SerializingProducer({..., "value.serializer": Serializer(codec, registry)})
>>> consumer = DeserializingConsumer({..., "value.deserializer": Deserializer(codec, registry)})

With a schema registry client (confluent-kafka's ``SchemaRegistryClient``) and an Avro or JSON
codec, the serializer finds the schema id for the message's subject once (registering the
codec's schema, looking it up, taking the subject's latest version or a fixed id, as
configured), caches it and writes it in the Confluent framing (byte 0, the 4-byte big-endian
schema id, the datum) or in a ``__value_schema_id`` / ``__key_schema_id`` header (byte 1, the
schema's 16-byte GUID), as confluent-kafka's serializers do. The deserializer reads the id from
the header first, then from the payload, fetches each writer schema it has not seen, caches it,
and (Avro) resolves it against the codec's schema, so consumers read what producers with older
or newer schemas wrote. Without a registry, payloads are the codec's own ``encode_one`` bytes
(JSON, MessagePack, pickle, or Avro with the framing the codec was built with). ``None`` (a
tombstone) passes through both ways.

Only confluent-kafka's ``SerializationError`` is imported (when installed, as the base of
``KafkaDecodeError``): the registry is any object with the
``SchemaRegistryClient`` methods used, and the context any object with ``topic``, ``field``
and (for header ids) ``headers``.
"""

from __future__ import annotations

import importlib
import json
import threading
import uuid
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Generic,
    List,
    Optional,
    Tuple,
    TypeVar,
    Union,
)

from ._avro import PRIMITIVES
from ._errors import DecodeError
from ._polycodec import Codec

T = TypeVar("T")

__all__ = [
    "Deserializer",
    "KafkaDecodeError",
    "RegistrySchemaError",
    "Serializer",
    "SubjectNameStrategy",
]

#: ``(ctx, record_name) -> subject``: confluent-kafka's ``subject.name.strategy`` signature.
SubjectNameStrategy = Callable[[Any, Optional[str]], Optional[str]]

_MAGIC = 0
_MAGIC_GUID = 1
_KEY_HEADER = "__key_schema_id"
_VALUE_HEADER = "__value_schema_id"
_REGISTRY_FORMATS = {"avro": "AVRO", "json": "JSON"}


if TYPE_CHECKING:
    _SerializationBase = Exception
else:
    try:
        # So that code catching confluent-kafka's SerializationError catches ours too.
        from confluent_kafka.serialization import SerializationError as _SerializationBase
    except ImportError:  # pragma: no cover - confluent-kafka is what this module serves
        _SerializationBase = Exception


class RegistrySchemaError(ValueError):
    """The serializer cannot get a schema id it may write: the subject or the codec's schema is
    not in the registry (with ``auto_register`` off), or the subject's latest version (or the
    schema of ``use_schema_id``) does not fit the codec."""


class KafkaDecodeError(DecodeError, _SerializationBase):
    """A message that cannot be decoded, with where it came from: ``topic``, ``partition``,
    ``offset``, ``field`` (``"key"`` or ``"value"``), ``schema_id`` (or ``guid`` when the id came
    as a header), ``kind`` and the raw ``data``.

    ``kind`` is ``"framing"`` (no Confluent framing and no schema id header), ``"unknown-schema"``
    (the registry has no schema with that id), ``"unresolvable-schema"`` (the writer schema is
    not of the codec's type, is no valid Avro schema, or cannot be resolved against the codec's
    schema; kept per schema id, so it is reached once) or ``"corrupt"``
    (the datum does not decode; ``path``/``loc`` say where, ``__cause__`` is the codec's error).
    ``partition`` and ``offset`` are None when the deserializer was called with a context that
    has none (confluent-kafka's ``SerializationContext`` has none): ``Deserializer.message(msg)``
    and ``KafkaDecodeError.from_consume_error(err)`` fill them in from the Kafka message.
    """

    topic: Optional[str]
    partition: Optional[int]
    offset: Optional[int]
    field: str
    schema_id: Optional[int]
    guid: Optional[str]
    kind: str
    data: Optional[bytes]

    def __init__(
        self,
        reason: str,
        *,
        kind: str,
        topic: Optional[str] = None,
        partition: Optional[int] = None,
        offset: Optional[int] = None,
        field: str = "value",
        schema_id: Optional[int] = None,
        guid: Optional[str] = None,
        data: Optional[bytes] = None,
        path: str = "$",
        loc: Tuple[Union[str, int], ...] = (),
    ) -> None:
        self.reason = reason
        self.kind = kind
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.field = field
        self.schema_id = schema_id
        self.guid = guid
        self.data = data
        super().__init__(self._render(), path, loc)

    def _render(self) -> str:
        where = [f"topic {self.topic!r}" if self.topic is not None else "no topic"]
        if self.partition is not None:
            where.append(f"partition {self.partition}")
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.schema_id is not None:
            where.append(f"schema id {self.schema_id}")
        if self.guid is not None:
            where.append(f"schema guid {self.guid}")
        return f"cannot decode the {self.field} of the message at {', '.join(where)}: {self.reason}"

    def __str__(self) -> str:
        return self._render()

    def locate(self, message: Any) -> "KafkaDecodeError":
        """Fills ``topic``, ``partition`` and ``offset`` from a confluent-kafka ``Message``."""
        for name in ("topic", "partition", "offset"):
            method = getattr(message, name, None)
            if callable(method):
                found = method()
                if found is not None:
                    setattr(self, name, found)
        self.args = (self._render(),)
        return self

    @classmethod
    def from_consume_error(cls, err: BaseException) -> "KafkaDecodeError":
        """The ``KafkaDecodeError`` a ``DeserializingConsumer``'s ``KeyDeserializationError`` or
        ``ValueDeserializationError`` wraps (``err.exception``), located at ``err.kafka_message``.
        An error from another deserializer becomes a ``KafkaDecodeError`` of kind ``"corrupt"``."""
        inner = getattr(err, "exception", None)
        message = getattr(err, "kafka_message", None)
        if isinstance(inner, KafkaDecodeError):
            found = inner
        else:
            cause = inner if isinstance(inner, BaseException) else err
            found = cls(f"{type(cause).__name__}: {cause}", kind="corrupt")
            found.__cause__ = cause
        if message is not None:
            found.locate(message)
            value = getattr(message, "value", None)
            if found.data is None and callable(value):
                raw = value()
                found.data = raw if isinstance(raw, bytes) else None
        return found


# How a codec's DecodeError begins when the writer schema itself is at fault: it cannot be
# resolved against the codec's schema, or it is no valid Avro schema (one nested past 128
# levels among them); any other DecodeError is about the datum.
_SCHEMA_FAULTS = ("cannot read the writer schema", "invalid Avro writer schema")


def _schema_refused(message: str) -> bool:
    return message.startswith(_SCHEMA_FAULTS)


def _raise_decode(reason: str, **info: Any) -> Any:
    raise KafkaDecodeError(reason, **info)


def _rebuild(codec: Codec[T], **changes: Any) -> Codec[T]:
    """The codec with the same options, changed as given (a value of None removes an option)."""
    rebuild, (tp, fmt, options) = codec.__reduce__()
    options = dict(options)
    for name, value in changes.items():
        if value is None:
            options.pop(name, None)
        else:
            options[name] = value
    built: Codec[T] = rebuild(tp, fmt, options)
    return built


def _raw_avro(codec: Codec[T]) -> Codec[T]:
    """The codec with the same options but no framing of its own (the registry path frames)."""
    _, (_, _, options) = codec.__reduce__()
    if options.get("framing") is None:
        return codec
    return _rebuild(codec, framing=None, schema_id=None)


def _registry_type(codec: Codec[Any], registry: Any) -> Optional[str]:
    if registry is None:
        return None
    found = _REGISTRY_FORMATS.get(codec.format)
    if found is None:
        raise ValueError(
            f"a schema registry needs an Avro or JSON codec, not format {codec.format!r} "
            "(MessagePack and pickle payloads pass through without one)"
        )
    return found


def _registry_schema(codec: Codec[Any]) -> Any:
    """The schema document the codec registers: its Avro schema, or its JSON Schema with a
    top-level ``title`` (the root record's), which the record strategies name it by."""
    if codec.format == "avro":
        return codec.schema
    schema = dict(codec.json_schema())
    if "title" not in schema:
        ref = schema.get("$ref")
        defs = schema.get("$defs") or {}
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            title = (defs.get(ref[len("#/$defs/") :]) or {}).get("title")
            if isinstance(title, str):
                schema = {"title": title, **schema}
    return schema


def _record_name(schema_type: str, schema: Any) -> Optional[str]:
    """The record name the record strategies use, as confluent-kafka's serializers take it:
    an Avro schema's full name, a JSON Schema's top-level ``title``."""
    if not isinstance(schema, dict):
        return None
    if schema_type == "JSON":
        title = schema.get("title")
        return title if isinstance(title, str) else None
    name = schema.get("name")
    if not isinstance(name, str):
        return None
    namespace = schema.get("namespace")
    return f"{namespace}.{name}" if namespace and "." not in name else name


def _field(ctx: Any) -> str:
    field = getattr(ctx, "field", None)
    # MessageField.KEY / VALUE are the strs "key" / "value".
    return "key" if str(field).lower().endswith("key") else "value"


def _topic_strategy(ctx: Any, record_name: Optional[str]) -> Optional[str]:
    topic = getattr(ctx, "topic", None)
    if not topic:
        raise ValueError("the topic subject name strategy needs a context that names a topic")
    return f"{topic}-{_field(ctx)}"


def _record_strategy(ctx: Any, record_name: Optional[str]) -> Optional[str]:
    return record_name


def _topic_record_strategy(ctx: Any, record_name: Optional[str]) -> Optional[str]:
    topic = getattr(ctx, "topic", None)
    if not topic:
        raise ValueError(
            "the topic_record subject name strategy needs a context that names a topic"
        )
    return None if record_name is None else f"{topic}-{record_name}"


_STRATEGIES: Dict[str, SubjectNameStrategy] = {
    "topic": _topic_strategy,
    "record": _record_strategy,
    "topic_record": _topic_record_strategy,
}


def _strategy(value: Any) -> Tuple[SubjectNameStrategy, bool]:
    """(the strategy, whether its subject depends on the topic and field alone)."""
    if callable(value):
        module = importlib.import_module("confluent_kafka.schema_registry") if _has_ck() else None
        for name, ours in [
            ("topic_subject_name_strategy", "topic"),
            ("record_subject_name_strategy", "record"),
            ("topic_record_subject_name_strategy", "topic_record"),
        ]:
            if module is not None and value is getattr(module, name, None):
                return _STRATEGIES[ours], True
        if type(value).__name__ == "AssociatedNameStrategy":
            raise ValueError(_ASSOCIATED)
        return value, False
    if isinstance(value, str):
        key = value.lower().replace("-", "_")
        if key in _STRATEGIES:
            return _STRATEGIES[key], True
        if key == "associated":
            raise ValueError(_ASSOCIATED)
    raise ValueError(
        f"subject name strategy must be 'topic', 'record', 'topic_record' or a callable "
        f"(ctx, record_name) -> subject, not {value!r}"
    )


_ASSOCIATED = (
    "the ASSOCIATED subject name strategy (subject associations looked up in the registry) is "
    "not supported by polycodec; use 'topic' (what it falls back to when a topic has no "
    "association), 'record', 'topic_record' or a callable"
)


def _has_ck() -> bool:
    try:
        importlib.import_module("confluent_kafka.schema_registry")
    except ImportError:
        return False
    return True


def _schema_class() -> Any:
    return importlib.import_module("confluent_kafka.schema_registry").Schema


def _not_found(err: BaseException) -> bool:
    return getattr(err, "http_status_code", None) == 404


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a boolean value, not {value!r}")
    return value


# confluent-kafka's dotted keys -> our keyword arguments.
_SERIALIZER_KEYS = {
    "auto.register.schemas": "auto_register",
    "use.latest.version": "use_latest_version",
    "use.schema.id": "use_schema_id",
    "normalize.schemas": "normalize_schemas",
    "subject.name.strategy": "subject_name_strategy",
    "subject.name.strategy.type": "subject_name_strategy",
    "schema.id.serializer": "schema_id_location",
}
_DESERIALIZER_KEYS = {
    "subject.name.strategy": "subject_name_strategy",
    "subject.name.strategy.type": "subject_name_strategy",
    "schema.id.deserializer": "schema_id_location",
}
# Keys confluent-kafka's serializers know whose feature polycodec does not have: a ValueError
# that says so, rather than "unrecognized".
_UNSUPPORTED = {
    "use.latest.with.metadata": "metadata-selected versions are not supported",
    "subject.name.strategy.conf": "it configures the ASSOCIATED strategy, which is not supported",
    "validation.rules.execution": "data-contract rules are not supported",
    "validation.rules.fail.fast": "data-contract rules are not supported",
    "validation.rules.executor": "data-contract rules are not supported",
    "validate.strict": "the codec always writes exactly its type's fields",
    "validate.strict.allow.default": "the codec always writes exactly its type's fields",
}


def _read_conf(conf: Optional[Dict[str, Any]], keys: Dict[str, str], side: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if conf is None:
        return out
    if not isinstance(conf, dict):
        raise TypeError(f"conf must be a dict of confluent-kafka's keys, not {type(conf).__name__}")
    unknown = []
    for key, value in conf.items():
        if key in keys:
            out[keys[key]] = value
        elif key == "validate":
            # JSONSerializer/JSONDeserializer's JSON Schema check: the codec checks every
            # value against its type (and constraints) both ways, so it is kept as documented.
            _check_bool("validate", value)
        elif key == "use.latest.version" and side == "deserializer":
            if _check_bool(key, value):
                raise ValueError(
                    "use.latest.version on a deserializer reads with the subject's latest "
                    "schema; polycodec reads with the codec's schema (its type), resolving "
                    "each writer schema against it, so it is not supported"
                )
        elif key in _UNSUPPORTED:
            raise ValueError(f"{key} is not supported by polycodec's {side}: {_UNSUPPORTED[key]}")
        else:
            unknown.append(key)
    if unknown:
        raise ValueError(f"Unrecognized properties: {', '.join(unknown)}")
    return out


def _location(value: Any, side: str) -> Tuple[str, Optional[Callable[..., Any]]]:
    """('payload' | 'header' | 'dual' | 'custom', confluent-kafka's callable for 'custom')."""
    if isinstance(value, str):
        allowed = ("payload", "header") if side == "serializer" else ("dual", "payload")
        if value in allowed:
            return value, None
        raise ValueError(f"schema_id_location must be one of {allowed}, not {value!r}")
    if callable(value):
        module = importlib.import_module("confluent_kafka.schema_registry") if _has_ck() else None
        known = {
            "prefix_schema_id_serializer": "payload",
            "header_schema_id_serializer": "header",
            "dual_schema_id_deserializer": "dual",
            "prefix_schema_id_deserializer": "payload",
        }
        for name, location in known.items():
            if module is not None and value is getattr(module, name, None):
                return location, None
        return "custom", value
    raise ValueError(f"schema.id.{side} must be callable or a location name, not {value!r}")


class _Target:
    """What one subject writes: the schema id (and GUID), the header or prefix, the encoder."""

    __slots__ = ("schema_id", "guid", "prefix", "header", "encode")

    def __init__(self, schema_id: int, guid: Optional[str], encode: Callable[[Any], bytes]) -> None:
        self.schema_id = schema_id
        self.guid = guid
        self.prefix = bytes([_MAGIC]) + schema_id.to_bytes(4, "big")
        self.header = None if guid is None else bytes([_MAGIC_GUID]) + uuid.UUID(guid).bytes
        self.encode = encode


class Serializer(Generic[T]):
    """``serializer(value, ctx) -> bytes``, for ``key.serializer`` or ``value.serializer``.

    With a registry (Avro or JSON codec): ``auto_register`` registers the codec's schema under
    the subject (off: looks it up, a ``RegistrySchemaError`` when absent); ``use_latest_version``
    (with ``auto_register=False``) writes under the subject's latest version, after checking
    the codec fits it; ``use_schema_id`` writes under that id, likewise checked;
    ``normalize_schemas`` asks the registry to normalize what is registered or looked up.
    ``subject_name_strategy``: ``"topic"`` (``<topic>-value``/``-key``), ``"record"`` (the
    record's full name), ``"topic_record"`` or a callable ``(ctx, record_name) -> subject``;
    ``subject=`` fixes the subject. ``schema_id_location``: ``"payload"`` (the Confluent prefix)
    or ``"header"`` (``__value_schema_id``/``__key_schema_id``; the context's ``headers`` must
    be a list or dict). ``conf`` takes confluent-kafka's dotted keys (``auto.register.schemas``,
    ``use.latest.version``, ``use.schema.id``, ``normalize.schemas``, ``subject.name.strategy``,
    ``subject.name.strategy.type``, ``schema.id.serializer``); they win over the keywords, and
    an unknown key is a ``ValueError``.
    """

    def __init__(
        self,
        codec: Codec[T],
        registry: Any = None,
        subject: Optional[str] = None,
        *,
        auto_register: bool = True,
        use_latest_version: bool = False,
        use_schema_id: Optional[int] = None,
        normalize_schemas: bool = False,
        subject_name_strategy: Union[str, SubjectNameStrategy] = "topic",
        schema_id_location: str = "payload",
        conf: Optional[Dict[str, Any]] = None,
    ) -> None:
        settings: Dict[str, Any] = {
            "auto_register": auto_register,
            "use_latest_version": use_latest_version,
            "use_schema_id": use_schema_id,
            "normalize_schemas": normalize_schemas,
            "subject_name_strategy": subject_name_strategy,
            "schema_id_location": schema_id_location,
        }
        settings.update(_read_conf(conf, _SERIALIZER_KEYS, "serializer"))
        self.codec = codec
        self.registry = registry
        self.subject = subject
        self.schema_type = _registry_type(codec, registry)
        self.auto_register = _check_bool("auto.register.schemas", settings["auto_register"])
        self.use_latest_version = _check_bool("use.latest.version", settings["use_latest_version"])
        self.normalize_schemas = _check_bool("normalize.schemas", settings["normalize_schemas"])
        schema_id = settings["use_schema_id"]
        if schema_id is not None and (type(schema_id) is not int or schema_id < 0):
            raise ValueError(f"use.schema.id must be a non-negative int, not {schema_id!r}")
        self.use_schema_id: Optional[int] = schema_id
        if self.use_latest_version and self.auto_register:
            raise ValueError(
                "cannot enable both use.latest.version and auto.register.schemas "
                "(pass auto_register=False to write under the subject's latest version)"
            )
        self._strategy, self._by_topic = _strategy(settings["subject_name_strategy"])
        self.schema_id_location, self._custom_id = _location(
            settings["schema_id_location"], "serializer"
        )
        self._encode = codec.encode_one
        if registry is None:
            self._datum_codec = codec
            self.schema_str: Optional[str] = None
            self.record_name: Optional[str] = None
        else:
            self._datum_codec = _raw_avro(codec) if codec.format == "avro" else codec
            document = _registry_schema(codec)
            self.schema_str = json.dumps(document)
            self.record_name = _record_name(str(self.schema_type), document)
        self._by_subject: Dict[str, _Target] = {}
        # (topic, field) -> target, so that a message costs one lookup.
        self._by_ctx: Dict[Tuple[Any, Any], _Target] = {}
        self._lock = threading.Lock()

    # -- subjects and ids -----------------------------------------------------------------

    def subject_for(self, ctx: Any) -> str:
        """The subject the schema is registered under for this message's topic and field."""
        if self.subject is not None:
            return self.subject
        if ctx is None and self._strategy in (_topic_strategy, _topic_record_strategy):
            raise ValueError("Serializer needs subject= when the context names no topic")
        found = self._strategy(ctx, self.record_name)
        if not isinstance(found, str) or not found:
            raise ValueError(
                f"the subject name strategy gave {found!r} for record name "
                f"{self.record_name!r}: it must give a subject name"
            )
        return found

    def schema_id(self, ctx: Any) -> int:
        """The registry id written for this context's subject (found once, then cached)."""
        return self._target(self.subject_for(ctx)).schema_id

    def _target(self, subject: str) -> _Target:
        found = self._by_subject.get(subject)
        if found is not None:
            return found
        with self._lock:
            found = self._by_subject.get(subject)
            if found is None:
                found = self._resolve(subject)
                self._by_subject[subject] = found
        return found

    def _schema(self) -> Any:
        return _schema_class()(self.schema_str, self.schema_type)

    def _resolve(self, subject: str) -> _Target:
        reg = self.registry
        if self.use_schema_id is not None:
            try:
                schema = reg.get_schema(self.use_schema_id)
            except Exception as err:
                if _not_found(err):
                    raise RegistrySchemaError(
                        f"use.schema.id {self.use_schema_id}: the registry has no schema with "
                        "that id"
                    ) from err
                raise
            guid = None
            if self.schema_id_location != "payload":
                guid = reg.lookup_schema(subject, schema, normalize_schemas=False).guid
            encode = self._fitted(schema, f"the schema of use.schema.id {self.use_schema_id}")
            return _Target(self.use_schema_id, guid, encode)
        if self.use_latest_version:
            try:
                latest = reg.get_latest_version(subject)
            except Exception as err:
                if _not_found(err):
                    raise RegistrySchemaError(
                        f"use.latest.version: subject {subject!r} is not in the registry"
                    ) from err
                raise
            encode = self._fitted(
                latest.schema, f"version {latest.version} of subject {subject!r} (the latest)"
            )
            return _Target(int(latest.schema_id), getattr(latest, "guid", None), encode)
        schema = self._schema()
        if self.auto_register:
            full = getattr(reg, "register_schema_full_response", None)
            if full is not None:
                registered = full(subject, schema, normalize_schemas=self.normalize_schemas)
                return _Target(
                    int(registered.schema_id), getattr(registered, "guid", None), self._encode_raw
                )
            found = reg.register_schema(subject, schema, normalize_schemas=self.normalize_schemas)
            return _Target(int(found), None, self._encode_raw)
        try:
            registered = reg.lookup_schema(
                subject, schema, normalize_schemas=self.normalize_schemas
            )
        except Exception as err:
            if not _not_found(err):
                raise
            registered = self._scan(subject)
            if registered is None:
                raise self._absent(subject) from err
        return _Target(
            int(registered.schema_id), getattr(registered, "guid", None), self._encode_raw
        )

    def _encode_raw(self, value: Any) -> bytes:
        return self._datum_codec.encode_one(value)

    def _scan(self, subject: str) -> Any:
        """A version of the subject whose schema is the codec's, compared as parsed JSON (a
        registry's lookup compares its own canonical form; a mock compares the text)."""
        try:
            versions = self.registry.get_versions(subject)
        except Exception as err:
            if _not_found(err):
                return None
            raise
        own = json.loads(str(self.schema_str))
        for version in versions:
            registered = self.registry.get_version(subject, version)
            text = registered.schema.schema_str
            if (
                registered.schema.schema_type in (self.schema_type, None)
                and json.loads(text) == own
            ):
                return registered
        return None

    def _absent(self, subject: str) -> RegistrySchemaError:
        try:
            versions = list(self.registry.get_versions(subject))
        except Exception:
            versions = []
        if not versions:
            where = f"subject {subject!r} is not in the registry"
        else:
            where = (
                f"subject {subject!r} has version(s) {sorted(versions)}, none of them the "
                "codec's schema"
            )
        return RegistrySchemaError(
            f"auto.register.schemas is off and {where}: register the codec's schema "
            "(Serializer.schema_str) under it, or let the serializer register it"
        )

    def _fitted(self, schema: Any, what: str) -> Callable[[Any], bytes]:
        """The encoder writing values as ``schema`` (a registry ``Schema``) says, after checking
        that the codec's type fits it."""
        kind = getattr(schema, "schema_type", None) or "AVRO"
        if kind != self.schema_type:
            raise RegistrySchemaError(
                f"{what} is a {kind} schema; the codec writes {self.schema_type}"
            )
        text = schema.schema_str
        if self.schema_type == "JSON":
            if json.loads(text) != json.loads(str(self.schema_str)):
                raise RegistrySchemaError(
                    f"{what} is not the codec's JSON Schema (Serializer.schema_str); JSON "
                    "Schema compatibility is not decided, so only the same schema is accepted"
                )
            return self._encode_raw
        if json.loads(text) == self.codec.schema:
            return self._encode_raw
        try:
            bound = _rebuild(self.codec, framing=None, schema_id=None, schema=text)
        except (TypeError, ValueError) as err:
            raise RegistrySchemaError(f"the codec's type does not fit {what}: {err}") from err
        encode: Callable[[Any], bytes] = bound.encode_one
        return encode

    # -- the call -------------------------------------------------------------------------

    def __call__(self, value: Optional[T], ctx: Any = None) -> Optional[bytes]:
        if value is None:
            return None
        if self.registry is None:
            return self._encode(value)
        if self._by_topic and self.subject is None:
            key = (getattr(ctx, "topic", None), getattr(ctx, "field", None))
            target = self._by_ctx.get(key)
            if target is None:
                target = self._target(self.subject_for(ctx))
                self._by_ctx[key] = target
        else:
            target = self._target(self.subject_for(ctx))
        location = self.schema_id_location
        if location == "payload":
            return target.prefix + target.encode(value)
        datum = target.encode(value)
        if location == "header":
            self._put_header(ctx, target)
            return datum
        return self._custom(datum, ctx, target)

    def _put_header(self, ctx: Any, target: _Target) -> None:
        if target.header is None:
            raise ValueError(
                "a schema id header needs the schema's GUID, which this registry client does "
                "not give (confluent-kafka 2.11 or later does)"
            )
        headers = getattr(ctx, "headers", None)
        name = _KEY_HEADER if _field(ctx) == "key" else _VALUE_HEADER
        if isinstance(headers, list):
            headers.append((name, target.header))
        elif isinstance(headers, dict):
            headers[name] = target.header
        else:
            raise ValueError(
                "a schema id header needs the message's headers as a list or dict (produce(..., "
                f"headers=[])), not {type(headers).__name__}"
            )

    def _custom(self, datum: bytes, ctx: Any, target: _Target) -> bytes:
        schema_id_class = importlib.import_module("confluent_kafka.schema_registry.serde").SchemaId
        sid = schema_id_class(self.schema_type, target.schema_id, target.guid)
        assert self._custom_id is not None
        out: bytes = self._custom_id(datum, ctx, sid)
        return out


class Deserializer(Generic[T]):
    """``deserializer(data, ctx) -> value``, for ``key.deserializer`` or ``value.deserializer``.

    With a registry, the schema id is read from the ``__value_schema_id`` / ``__key_schema_id``
    header first, then from the Confluent prefix (``schema_id_location="payload"``: the prefix
    only). A message that cannot be decoded raises ``KafkaDecodeError`` (with its topic, schema
    id and kind). ``conf`` takes confluent-kafka's dotted keys (``subject.name.strategy``,
    ``subject.name.strategy.type``, ``schema.id.deserializer``, ``validate``); an unknown key is
    a ``ValueError``.
    """

    def __init__(
        self,
        codec: Codec[T],
        registry: Any = None,
        *,
        subject_name_strategy: Union[str, SubjectNameStrategy] = "topic",
        schema_id_location: str = "dual",
        conf: Optional[Dict[str, Any]] = None,
    ) -> None:
        settings: Dict[str, Any] = {
            "subject_name_strategy": subject_name_strategy,
            "schema_id_location": schema_id_location,
        }
        settings.update(_read_conf(conf, _DESERIALIZER_KEYS, "deserializer"))
        # Checked, as confluent-kafka does; the codec's schema is the reader, so no subject is
        # needed to read.
        _strategy(settings["subject_name_strategy"])
        self.schema_id_location, self._custom_id = _location(
            settings["schema_id_location"], "deserializer"
        )
        self.codec = codec
        self.registry = registry
        self.schema_type = _registry_type(codec, registry)
        self._datum_codec = _raw_avro(codec) if codec.format == "avro" else codec
        self._decode = codec.decode_one
        # schema id (int) or GUID (str) -> the datum decoder for that writer schema.
        self._readers: Dict[Union[int, str], Callable[[bytes], Any]] = {}
        # schema id or GUID -> why its writer schema cannot be read (an "unresolvable-schema"
        # verdict, reached once: a registered schema never changes).
        self._refused: Dict[Union[int, str], Tuple[str, BaseException]] = {}
        self._own = codec.schema if codec.format == "avro" else None
        self._lock = threading.Lock()

    def writer_schema(self, schema_id: Union[int, str]) -> Optional[str]:
        """The writer schema registered under ``schema_id`` (an id, or a GUID as text), or
        None when it is the codec's own schema."""
        schema = self._fetch(schema_id)
        text: str = schema.schema_str
        if self._own is None:
            return text
        try:
            own = json.loads(text) == self._own
        except (RecursionError, ValueError):  # no JSON the codec could have written
            own = False
        return None if own else text

    def _fetch(self, schema_id: Union[int, str]) -> Any:
        if isinstance(schema_id, str):
            return self.registry.get_schema_by_guid(schema_id)
        return self.registry.get_schema(schema_id)

    def _reader(self, schema_id: Union[int, str], info: Dict[str, Any]) -> Callable[[bytes], Any]:
        found = self._readers.get(schema_id)
        if found is not None:
            return found
        with self._lock:
            found = self._readers.get(schema_id)
            if found is None:
                refused = self._refused.get(schema_id)
                if refused is not None:
                    reason, cause = refused
                    raise KafkaDecodeError(reason, kind="unresolvable-schema", **info) from cause
                try:
                    found = self._build_reader(schema_id, info)
                except KafkaDecodeError as err:
                    if err.kind == "unresolvable-schema":
                        self._refused[schema_id] = (err.reason, err.__cause__ or err)
                    raise
                self._readers[schema_id] = found
        return found

    def _build_reader(
        self, schema_id: Union[int, str], info: Dict[str, Any]
    ) -> Callable[[bytes], Any]:
        try:
            schema = self._fetch(schema_id)
        except Exception as err:
            if _not_found(err):
                raise KafkaDecodeError(
                    "the registry has no schema with this id", kind="unknown-schema", **info
                ) from err
            raise
        kind = getattr(schema, "schema_type", None) or "AVRO"
        if kind != self.schema_type:
            raise KafkaDecodeError(
                f"the writer schema is a {kind} schema; the codec reads {self.schema_type}",
                kind="unresolvable-schema",
                **info,
            )
        if self.schema_type == "JSON":
            return self._datum_codec.decode_one
        text = schema.schema_str
        try:
            parsed = json.loads(text)
        except RecursionError as err:  # a registry's schema nested thousands deep
            raise KafkaDecodeError(
                "invalid writer schema: it nests too deeply to be an Avro schema",
                kind="unresolvable-schema",
                **info,
            ) from err
        except ValueError as err:
            if text.strip() not in PRIMITIVES:
                raise KafkaDecodeError(
                    f"invalid writer schema: it is not JSON: {err}",
                    kind="unresolvable-schema",
                    **info,
                ) from err
            parsed = text.strip()  # a bare primitive name such as long
        if parsed == self._own:
            return self._datum_codec.decode_one
        codec = self._datum_codec
        try:
            # Resolves the writer schema against the codec's now, so that a schema that cannot
            # be read is told apart from a datum that cannot: resolving happens before the
            # datum's first byte is read, so any other DecodeError is the empty datum's.
            codec.decode_one(b"", writer_schema=text)
        except DecodeError as err:
            if _schema_refused(str(err)):
                raise KafkaDecodeError(str(err), kind="unresolvable-schema", **info) from err
        except (TypeError, ValueError, RecursionError) as err:
            raise KafkaDecodeError(
                f"invalid writer schema: {err}", kind="unresolvable-schema", **info
            ) from err

        def decode(datum: bytes) -> Any:
            return codec.decode_one(datum, writer_schema=text)

        return decode

    def __call__(self, data: Optional[bytes], ctx: Any = None) -> Optional[T]:
        if data is None:
            return None
        if self.registry is None:
            return self._decode(data)
        schema_id: Union[int, str, None] = None
        datum: Any = None
        location = self.schema_id_location
        if location == "dual":
            headers = getattr(ctx, "headers", None)
            if headers:
                header = self._header(headers, ctx)
                if header is not None:
                    schema_id = self._header_id(header, data, ctx)
                    datum = data
        elif location == "custom":
            schema_id, datum = self._custom(data, ctx)
        if schema_id is None:
            if len(data) < 5 or data[0] != _MAGIC:
                return _raise_decode(  # type: ignore[no-any-return]
                    "not Confluent schema-registry framing (it must start with byte 0 and a "
                    f"4-byte schema id, and no {self._header_name(ctx)} header names the id)",
                    kind="framing",
                    **self._info(ctx, data, None),
                )
            schema_id = int.from_bytes(data[1:5], "big")
            datum = data[5:]
        reader = self._readers.get(schema_id)
        if reader is None:
            reader = self._reader(schema_id, self._info(ctx, data, schema_id))
        try:
            value: T = reader(datum)
        except DecodeError as err:
            raise KafkaDecodeError(
                str(err),
                kind="corrupt",
                path=err.path,
                loc=err.loc,
                **self._info(ctx, data, schema_id),
            ) from err
        return value

    @staticmethod
    def _header_name(ctx: Any) -> str:
        return _KEY_HEADER if _field(ctx) == "key" else _VALUE_HEADER

    def _header(self, headers: Any, ctx: Any) -> Optional[bytes]:
        name = self._header_name(ctx)
        if isinstance(headers, dict):
            found = headers.get(name)
            return None if found is None else bytes(found)
        for item in headers:
            if item[0] == name:
                return None if item[1] is None else bytes(item[1])
        return None

    def _header_id(self, header: bytes, data: bytes, ctx: Any) -> Union[int, str]:
        if len(header) == 17 and header[0] == _MAGIC_GUID:
            return str(uuid.UUID(bytes=header[1:17]))
        if len(header) == 5 and header[0] == _MAGIC:
            return int.from_bytes(header[1:5], "big")
        return _raise_decode(  # type: ignore[no-any-return]
            f"the {self._header_name(ctx)} header is {header!r}: it must be byte 1 and a "
            "16-byte GUID (or byte 0 and a 4-byte id)",
            kind="framing",
            **self._info(ctx, data, None),
        )

    def _custom(self, data: bytes, ctx: Any) -> Tuple[Union[int, str], bytes]:
        schema_id_class = importlib.import_module("confluent_kafka.schema_registry.serde").SchemaId
        sid = schema_id_class(self.schema_type)
        assert self._custom_id is not None
        try:
            rest = self._custom_id(data, ctx, sid)
        except Exception as err:
            raise KafkaDecodeError(
                f"schema.id.deserializer failed: {err}",
                kind="framing",
                **self._info(ctx, data, None),
            ) from err
        datum = rest.read() if hasattr(rest, "read") else bytes(rest)
        if sid.id is not None:
            return int(sid.id), datum
        if sid.guid is not None:
            return str(sid.guid), datum
        return _raise_decode(  # type: ignore[no-any-return]
            "schema.id.deserializer set neither an id nor a GUID",
            kind="framing",
            **self._info(ctx, data, None),
        )

    @staticmethod
    def _info(ctx: Any, data: bytes, schema_id: Union[int, str, None]) -> Dict[str, Any]:
        return {
            "topic": getattr(ctx, "topic", None),
            "partition": getattr(ctx, "partition", None),
            "offset": getattr(ctx, "offset", None),
            "field": _field(ctx) if ctx is not None else "value",
            "schema_id": schema_id if isinstance(schema_id, int) else None,
            "guid": schema_id if isinstance(schema_id, str) else None,
            "data": bytes(data),
        }

    def message(self, msg: Any, field: str = "value") -> Optional[T]:
        """Decodes the value (or ``field="key"``) of a confluent-kafka ``Message`` from a plain
        ``Consumer``; a ``KafkaDecodeError`` then carries the message's partition and offset."""
        if field not in ("key", "value"):
            raise ValueError(f"field must be 'key' or 'value', not {field!r}")
        ctx = _MessageContext(msg.topic(), field, msg.headers())
        try:
            return self(msg.key() if field == "key" else msg.value(), ctx)
        except KafkaDecodeError as err:
            raise err.locate(msg)


class _MessageContext:
    __slots__ = ("topic", "field", "headers")

    def __init__(self, topic: Optional[str], field: str, headers: Optional[List[Any]]) -> None:
        self.topic = topic
        self.field = field
        self.headers = headers
