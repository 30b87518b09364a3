"""Shared helpers for the Avro tests: the reference implementations (fastavro and apache avro)
driven with the schema polycodec derives, and plain-dict forms of dataclass values."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import json
import uuid
import warnings
from pathlib import Path
from typing import Any

import avro.datafile
import avro.io
import avro.schema
import fastavro

# Vendored in the repository (tests/data/avro/SOURCE.md says where it comes from).
CONFORMANCE = Path(__file__).resolve().parent / "data" / "avro"


def plain(value: Any, flavor: str = "fastavro") -> Any:
    """The dict form the reference libraries read and write for a polycodec value.

    Enums become their member name, sets and tuples lists, dataclasses dicts (fastavro: tagged
    with the record's name so a union picks the right branch). Apache avro has no uuid type
    (it uses str) and ignores local-timestamp-micros (a plain long of microseconds).
    """
    if isinstance(value, enum.Enum):
        return value.name
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {
            f.name: plain(getattr(value, f.name), flavor)
            for f in dataclasses.fields(value)
            if f.init
        }
        return out
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: plain(v, flavor) for k, v in zip(value._fields, value)}
    if isinstance(value, dict):
        return {k: plain(v, flavor) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, flavor) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    if flavor == "avro" and isinstance(value, uuid.UUID):
        return str(value)
    if flavor == "avro" and isinstance(value, datetime.datetime) and value.tzinfo is None:
        return (value - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
    return value


def normalise(value: Any) -> Any:
    """Reference-library output made comparable with :func:`plain` (UTC zones unified)."""
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc)
    return value


def fastavro_write(schema: Any, datum: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


def fastavro_read(schema: Any, data: bytes) -> Any:
    return fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(schema), None)


def fastavro_container(schema: Any, records: list[Any], codec: str = "null") -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec)
    return out.getvalue()


def fastavro_records(data: bytes) -> list[Any]:
    return list(fastavro.reader(io.BytesIO(data)))


def _avro_schema(schema: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return avro.schema.parse(json.dumps(schema))


def avro_write(schema: Any, datum: Any) -> bytes:
    out = io.BytesIO()
    avro.io.DatumWriter(_avro_schema(schema)).write(datum, avro.io.BinaryEncoder(out))
    return out.getvalue()


def avro_read(schema: Any, data: bytes) -> Any:
    parsed = _avro_schema(schema)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return avro.io.DatumReader(parsed).read(avro.io.BinaryDecoder(io.BytesIO(data)))


class _KeepOpen(io.BytesIO):
    def close(self) -> None:  # DataFileWriter closes its file; keep the bytes readable
        pass


def avro_container(schema: Any, records: list[Any], codec: str = "null") -> bytes:
    out = _KeepOpen()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        writer = avro.datafile.DataFileWriter(
            out, avro.io.DatumWriter(), _avro_schema(schema), codec=codec
        )
        for record in records:
            writer.append(record)
        writer.close()
    return out.getvalue()


def avro_records(data: bytes) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = avro.datafile.DataFileReader(io.BytesIO(data), avro.io.DatumReader())
        return list(reader)
