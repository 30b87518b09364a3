"""apache avro (the ``avro`` package): the Avro baseline.

Same hand-written schema and dict conversion as fastavro. One object: ``DatumWriter`` /
``DatumReader`` with ``BinaryEncoder``/``BinaryDecoder`` (raw datum); many objects:
``DataFileWriter`` / ``DataFileReader`` (object container file), as the project's getting-started
guide shows.
"""

from __future__ import annotations

import json
from io import BytesIO
from typing import Any

import avro.datafile
import avro.io
import avro.schema

from ..models import ModelSpec
from ._avro_schemas import SCHEMAS
from ._convert import converters
from .base import Adapter, Ops, Unsupported

_BinaryEncoder = avro.io.BinaryEncoder
_BinaryDecoder = avro.io.BinaryDecoder
_DataFileWriter = avro.datafile.DataFileWriter
_DataFileReader = avro.datafile.DataFileReader
_DatumWriter = avro.io.DatumWriter
_DatumReader = avro.io.DatumReader


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        schema = avro.schema.parse(json.dumps(SCHEMAS[model.name]))
        to_dict, from_dict = converters("avro", model.name)
    except KeyError:
        raise Unsupported(f"no hand-written Avro schema for model {model.name!r}")
    datum_writer = _DatumWriter(schema)
    datum_reader = _DatumReader(schema)

    def encode_one(obj: Any) -> bytes:
        bio = BytesIO()
        datum_writer.write(to_dict(obj), _BinaryEncoder(bio))
        return bio.getvalue()

    def decode_one(buf: bytes) -> Any:
        return from_dict(datum_reader.read(_BinaryDecoder(BytesIO(buf))))  # type: ignore[arg-type]

    def encode_many(objs: list[Any]) -> bytes:
        bio = BytesIO()
        writer = _DataFileWriter(bio, _DatumWriter(), schema)
        for obj in objs:
            writer.append(to_dict(obj))
        writer.flush()
        data = bio.getvalue()
        writer.close()  # also closes bio, hence getvalue() first
        return data

    def decode_many(buf: bytes) -> list[Any]:
        with _DataFileReader(BytesIO(buf), _DatumReader()) as reader:
            return [from_dict(d) for d in reader]  # type: ignore[arg-type]

    return Ops(encode_one, decode_one, encode_many, decode_many)


ADAPTERS = [
    Adapter(
        name="avro",
        label="apache avro",
        distribution="avro",
        formats=("avro",),
        build=_build,
        how={
            "avro": "hand-written schema + dict conversion; DatumWriter/DatumReader with "
            "BinaryEncoder/Decoder for one, DataFileWriter/DataFileReader for many",
        },
    )
]
