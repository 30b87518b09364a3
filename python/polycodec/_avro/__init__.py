"""Avro schemas for polycodec, by job: ``schema`` (parsing, in Rust: validation, canonical form,
fingerprints), ``names`` (what classes are called in a schema), ``derive`` (a schema from a
plan), ``bind`` (a plan bound to a schema: write ops) and ``options`` (a codec's options and
state). Schema resolution, the decoder program for data written with another schema, is Rust
(``src/codecs/avro/resolve.rs``).

Everything here runs once per codec, never per record.
"""

from .options import COMPRESSIONS, AvroState, avro_state
from .schema import (
    MAX_DEPTH,
    PRIMITIVES,
    Schema,
    SchemaError,
    canonical_form,
    fingerprint,
    parse_schema,
)

__all__ = [
    "AvroState",
    "COMPRESSIONS",
    "MAX_DEPTH",
    "PRIMITIVES",
    "Schema",
    "SchemaError",
    "canonical_form",
    "fingerprint",
    "avro_state",
    "parse_schema",
]
