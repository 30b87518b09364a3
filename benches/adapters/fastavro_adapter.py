"""fastavro: hand-written schema (``_avro_schemas``) + hand-written dict conversion.

* one object: ``schemaless_writer`` / ``schemaless_reader`` on a ``BytesIO`` (raw datum, no
  header; the reader needs the schema, as with polycodec's ``encode_one``);
* many objects: an object container file via ``fastavro.writer`` / ``fastavro.reader``.

The schema is parsed once (``parse_schema``), as fastavro's docs recommend, and the trees' union
members are written in fastavro's tuple notation, ``(record name, dict)``, so fastavro need not
guess the branch by validating each subtree against every branch.
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

import fastavro

from ..models import ModelSpec
from ._avro_schemas import SCHEMAS
from ._convert import converters
from .base import Adapter, Ops, Unsupported

_schemaless_writer = fastavro.schemaless_writer
_schemaless_reader = fastavro.schemaless_reader
_writer = fastavro.writer
_reader = fastavro.reader


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        schema = fastavro.parse_schema(SCHEMAS[model.name])
        to_dict, from_dict = converters("fastavro", model.name)
    except KeyError:
        raise Unsupported(f"no hand-written Avro schema for model {model.name!r}")

    def encode_one(obj: Any) -> bytes:
        bio = BytesIO()
        _schemaless_writer(bio, schema, to_dict(obj))
        return bio.getvalue()

    def decode_one(buf: bytes) -> Any:
        return from_dict(_schemaless_reader(BytesIO(buf), schema, None))  # type: ignore[arg-type]

    def encode_many(objs: list[Any]) -> bytes:
        bio = BytesIO()
        _writer(bio, schema, [to_dict(o) for o in objs])
        return bio.getvalue()

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _reader(BytesIO(buf))]  # type: ignore[arg-type]

    return Ops(encode_one, decode_one, encode_many, decode_many)


ADAPTERS = [
    Adapter(
        name="fastavro",
        label="fastavro",
        distribution="fastavro",
        formats=("avro",),
        build=_build,
        how={
            "avro": "hand-written schema + dict conversion ((name, dict) tuple notation for union "
            "members); schemaless_writer/reader for one, fastavro.writer/reader container file "
            "for many",
        },
    )
]
