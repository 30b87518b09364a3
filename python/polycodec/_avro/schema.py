"""Avro schemas as the rest of the package sees them: parsed once, in Rust, by the byte layer
(``formats/avro/schema.rs``: one pass over the JSON text, validation, the Parsing Canonical
Form and the CRC-64-AVRO fingerprint), and kept there as an arena of nodes. The binding of a
plan to the codec's own schema reads those nodes as dicts (``Schema.nodes``); writer schemas
are resolved against it in Rust and never come back to Python."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

from .._polycodec import ParsedSchema, _avro_fingerprint, _avro_parse

__all__ = [
    "MAX_DEPTH",
    "NAMED",
    "PRIMITIVES",
    "Schema",
    "SchemaError",
    "parse_schema",
    "schema_text",
]

# How deeply schema elements may nest (``MAX_DEPTH`` of formats/avro/schema.rs, which refuses
# deeper schemas).
MAX_DEPTH = 128

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED = ("record", "error", "enum", "fixed")


class SchemaError(ValueError):
    """An invalid Avro schema."""


def fingerprint(data: bytes) -> int:
    """The CRC-64-AVRO fingerprint of ``data`` (the canonical form's UTF-8), unsigned."""
    return _avro_fingerprint(bytes(data))


class Schema:
    """A parsed schema: ``parsed`` (the Rust arena), ``text`` (the JSON it was parsed from),
    its ``canonical`` form and that form's ``fingerprint``; ``nodes`` and ``root`` give the
    arena as dicts (with a ``type`` key), read once when first asked for."""

    def __init__(self, parsed: ParsedSchema, text: str) -> None:
        self.parsed = parsed
        self.text = text
        self.canonical: str = parsed.canonical
        self.fingerprint: int = parsed.fingerprint
        self.root: int = parsed.root
        self._nodes: Optional[List[Dict[str, Any]]] = None

    @property
    def nodes(self) -> List[Dict[str, Any]]:
        if self._nodes is None:
            self._nodes = self.parsed.nodes()
        return self._nodes


def schema_text(source: Any) -> str:
    """The JSON text of a schema given as text (str or bytes) or as JSON-compatible data."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        try:
            return bytes(source).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SchemaError(f"the Avro schema is not UTF-8: {exc}") from None
    if isinstance(source, str):
        return source
    try:
        return json.dumps(source, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        raise SchemaError("the Avro schema nests too deeply") from None
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"Avro schema is not JSON-compatible data: {exc}") from None


def parse_schema(source: Any) -> Schema:
    """Parses an Avro schema given as JSON text or as JSON-compatible Python data; an invalid
    schema is a ``SchemaError`` with the reason."""
    text = schema_text(source)
    try:
        parsed = _avro_parse(text)
    except ValueError as exc:
        raise SchemaError(str(exc)) from None
    return Schema(parsed, text)


def canonical_form(schema: Schema) -> str:
    """The Parsing Canonical Form of a parsed schema."""
    return schema.canonical
