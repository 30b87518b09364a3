"""An Avro codec's options and state: what ``src/codecs/avro`` asks for when it opens a codec
(the schema, parsed; the write ops; the framing, compression and limits)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from .bind import Binding, Op
from .derive import derive_schema
from .schema import PRIMITIVES, SchemaError, parse_schema, schema_text

__all__ = ["AvroState", "COMPRESSIONS", "avro_state"]


# The most one container block may decompress to, and all of a decode_many call's compressed
# blocks together (docs/avro.md, "Bad input").
DEFAULT_MAX_BLOCK_SIZE = 64 << 20
DEFAULT_MAX_DECOMPRESSED_SIZE = 128 << 20


def _byte_limit(options: Dict[str, Any], name: str, default: int) -> int:
    """A size option: a positive int of bytes, or None for the default."""
    value = options.pop(name, None)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int (bytes), got {type(value).__name__}")
    if not 1 <= value < 2**63:
        raise ValueError(f"{name} must be from 1 to 2**63-1 bytes, got {value}")
    return value


class AvroState:
    """What ``src/codecs/avro`` asks for when it opens a codec."""

    schema_json: bytes
    parsed: Any
    write_ops: List[Optional[Op]]
    branch_plan: Dict[int, List[Optional[int]]]
    framing: str
    schema_id: int
    compression: str
    max_block_size: int
    max_decompressed_size: int
    sync: bytes

    def __init__(self, spec: Any, target: Any, options: Dict[str, Any]) -> None:
        options = dict(options)
        given = options.pop("schema", None)
        framing = options.pop("framing", None) or "raw"
        schema_id = options.pop("schema_id", None)
        compression = options.pop("compression", None) or "null"
        max_block_size = _byte_limit(options, "max_block_size", DEFAULT_MAX_BLOCK_SIZE)
        max_decompressed_size = _byte_limit(
            options, "max_decompressed_size", DEFAULT_MAX_DECOMPRESSED_SIZE
        )
        if options:
            raise TypeError(
                'Codec() got unexpected keyword argument(s) for format "avro": '
                + ", ".join(sorted(options))
            )
        if framing not in ("raw", "single-object", "confluent"):
            raise ValueError(
                f"framing must be None, 'single-object' or 'confluent', got {framing!r}"
            )
        if framing == "confluent":
            if (
                not isinstance(schema_id, int)
                or isinstance(schema_id, bool)
                or not (0 <= schema_id < 2**32)
            ):
                raise ValueError("framing='confluent' needs schema_id=, an int in 0..2**32-1")
        elif schema_id is not None:
            raise ValueError("schema_id= applies to framing='confluent' only")
        if compression not in COMPRESSIONS:
            raise ValueError(
                f"compression must be one of {', '.join(map(repr, COMPRESSIONS))}, got {compression!r}"
            )
        nodes, root = spec
        if given is None:
            schema_data = derive_schema(spec, target)
        else:
            text = schema_text(given)
            if text.strip() in PRIMITIVES:
                schema_data = text.strip()  # a bare primitive name such as long
            else:
                try:
                    schema_data = json.loads(text)
                except RecursionError:
                    raise ValueError("schema= nests too deeply to be an Avro schema") from None
                except ValueError as exc:
                    raise ValueError(f"schema= is not valid JSON: {exc}") from None
        self.schema_json = json.dumps(schema_data, separators=(",", ":")).encode()
        schema = parse_schema(self.schema_json)
        binding = Binding(nodes, schema)
        binding.bind(root, schema.root, "$")
        self.parsed = schema.parsed
        self.write_ops = binding.write
        self.branch_plan = binding.branch_plan
        self.framing = framing
        self.schema_id = schema_id or 0
        self.compression = compression
        self.max_block_size = max_block_size
        self.max_decompressed_size = max_decompressed_size
        self.sync = os.urandom(16)

    def schema_copy(self) -> Any:
        """A fresh copy of the schema for ``Codec.schema`` (callers may change it freely)."""
        return json.loads(self.schema_json)

    def writer_key(self, writer_schema: Any) -> bytes:
        """The cache key of a writer schema given as data: its JSON text."""
        try:
            return schema_text(writer_schema).encode()
        except SchemaError as exc:
            raise ValueError(f"writer_schema is not a JSON-compatible Avro schema: {exc}") from None


COMPRESSIONS = ("null", "deflate", "snappy", "zstandard")


def avro_state(spec: Any, target: Any, options: Dict[str, Any]) -> AvroState:
    """The state of a new Avro codec (``_build.compiled_state`` asks for it): its schema
    bound to the plan, and its options."""
    try:
        return AvroState(spec, target, options)
    except SchemaError as exc:
        raise ValueError(f"invalid Avro schema: {exc}") from None
    except RecursionError:
        raise ValueError("invalid Avro schema: it nests too deeply") from None
