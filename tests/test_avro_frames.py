"""Framed Avro messages written under another schema (issue 14, case 10): Confluent framing with
``writer_schema=``, and ``avro_frame_info`` / ``avro_fingerprint`` to find the writer schema."""

from __future__ import annotations

import dataclasses
import struct

import fastavro
import pytest

import polycodec
from test_avro_support import fastavro_write


@dataclasses.dataclass
class Reading:
    station: str
    temp: float
    unit: str = "C"


OLD_SCHEMA = {
    "type": "record",
    "name": "Reading",
    "fields": [
        {"name": "station", "type": "string"},
        {"name": "temp", "type": "int"},
        {"name": "raw", "type": "bytes"},
    ],
}
OLD_DATUM = {"station": "x", "temp": 21, "raw": b"\x01"}


def _fastavro_fingerprint(schema: object) -> int:
    canonical = fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(schema))
    return int.from_bytes(
        bytes.fromhex(fastavro.schema.fingerprint(canonical, "CRC-64-AVRO")), "little"
    )


def test_kafka_confluent_framing_with_writer_schema() -> None:
    codec = polycodec.Codec(Reading, "avro", framing="confluent", schema_id=7)
    # A message written by another producer under registry id 3 with the old schema.
    message = b"\x00" + struct.pack(">I", 3) + fastavro_write(OLD_SCHEMA, OLD_DATUM)
    assert codec.decode_one(message, writer_schema=OLD_SCHEMA) == Reading("x", 21.0)
    # Module-level too.
    assert polycodec.decode_one(
        message, Reading, "avro", framing="confluent", schema_id=7, writer_schema=OLD_SCHEMA
    ) == Reading("x", 21.0)
    # Without the writer schema the id is still checked against the codec's.
    with pytest.raises(polycodec.DecodeError, match="schema id 3 does not match the codec's 7"):
        codec.decode_one(message)
    # The codec's own messages read with its own schema given as the writer schema.
    own = codec.encode_one(Reading("y", 1.5))
    assert codec.decode_one(own, writer_schema=codec.schema) == Reading("y", 1.5)


def test_kafka_confluent_framing_with_writer_schema_checks_the_frame() -> None:
    codec = polycodec.Codec(Reading, "avro", framing="confluent", schema_id=7)
    datum = fastavro_write(OLD_SCHEMA, OLD_DATUM)
    with pytest.raises(polycodec.DecodeError, match="byte 0"):
        codec.decode_one(b"\x01\x00\x00\x00\x03" + datum, writer_schema=OLD_SCHEMA)
    with pytest.raises(polycodec.DecodeError, match="byte 0"):
        codec.decode_one(b"\x00\x00\x03", writer_schema=OLD_SCHEMA)
    with pytest.raises(polycodec.DecodeError, match="left after the datum"):
        codec.decode_one(b"\x00\x00\x00\x00\x03" + datum + b"\x00", writer_schema=OLD_SCHEMA)


def test_single_object_with_writer_schema_still_checks_its_fingerprint() -> None:
    codec = polycodec.Codec(Reading, "avro", framing="single-object")
    fingerprint = _fastavro_fingerprint(OLD_SCHEMA)
    message = b"\xc3\x01" + struct.pack("<Q", fingerprint) + fastavro_write(OLD_SCHEMA, OLD_DATUM)
    assert codec.decode_one(message, writer_schema=OLD_SCHEMA) == Reading("x", 21.0)
    wrong = message[:2] + struct.pack("<Q", fingerprint ^ 1) + message[10:]
    with pytest.raises(polycodec.DecodeError, match="fingerprint"):
        codec.decode_one(wrong, writer_schema=OLD_SCHEMA)


def test_avro_frame_info_confluent() -> None:
    message = b"\x00" + struct.pack(">I", 0xDEADBEEF) + fastavro_write(OLD_SCHEMA, OLD_DATUM)
    info = polycodec.avro_frame_info(message)
    assert info == ("confluent", 0xDEADBEEF)
    assert info.framing == "confluent" and info.id == 0xDEADBEEF
    assert polycodec.avro_frame_info(bytearray(message)) == info
    assert polycodec.avro_frame_info(memoryview(message)) == info
    # A view of wider items is read by its bytes.
    wide = memoryview(bytearray(b"\x00\x00\x00\x01\x02\x00\x00\x00")).cast("I")
    assert polycodec.avro_frame_info(wide) == ("confluent", 258)
    # A frame with an empty datum (a record without fields) is still well-formed.
    assert polycodec.avro_frame_info(b"\x00\x00\x00\x00\x05") == ("confluent", 5)
    encoded = polycodec.Codec(Reading, "avro", framing="confluent", schema_id=42).encode_one(
        Reading("a", 1.0)
    )
    assert polycodec.avro_frame_info(encoded) == ("confluent", 42)


def test_avro_frame_info_single_object() -> None:
    fingerprint = _fastavro_fingerprint(OLD_SCHEMA)
    message = b"\xc3\x01" + struct.pack("<Q", fingerprint) + fastavro_write(OLD_SCHEMA, OLD_DATUM)
    assert polycodec.avro_frame_info(message) == ("single-object", fingerprint)
    assert polycodec.avro_fingerprint(OLD_SCHEMA) == fingerprint
    codec = polycodec.Codec(Reading, "avro", framing="single-object")
    encoded = codec.encode_one(Reading("a", 1.0))
    assert polycodec.avro_frame_info(encoded) == (
        "single-object",
        _fastavro_fingerprint(codec.schema),
    )
    assert polycodec.avro_fingerprint(codec.schema) == _fastavro_fingerprint(codec.schema)
    import json

    assert polycodec.avro_fingerprint(json.dumps(OLD_SCHEMA)) == fingerprint


def test_avro_frame_info_lookup_by_fingerprint() -> None:
    """The pattern the README shows: find the writer schema by the frame's fingerprint."""
    schemas = {polycodec.avro_fingerprint(s): s for s in [OLD_SCHEMA]}
    codec = polycodec.Codec(Reading, "avro", framing="single-object")
    message = (
        b"\xc3\x01"
        + struct.pack("<Q", _fastavro_fingerprint(OLD_SCHEMA))
        + fastavro_write(OLD_SCHEMA, OLD_DATUM)
    )
    framing, fingerprint = polycodec.avro_frame_info(message)
    assert framing == "single-object"
    assert codec.decode_one(message, writer_schema=schemas[fingerprint]) == Reading("x", 21.0)


@pytest.mark.parametrize(
    "buf, match",
    [
        (b"", "got nothing"),
        (b"\x01\x02", "got 01 02"),
        (b"{}", "not a framed Avro message"),
        (b"\xc3", "not a framed"),
        (b"\xc3\x01\x00\x00", "8-byte fingerprint, got 2 bytes"),
        (b"\x00\x00\x01", "4-byte schema id, got 2 bytes"),
    ],
)
def test_avro_frame_info_bad_frames(buf: bytes, match: str) -> None:
    with pytest.raises(polycodec.DecodeError, match=match):
        polycodec.avro_frame_info(buf)


def test_avro_frame_info_refuses_other_types() -> None:
    with pytest.raises(TypeError, match="got str"):
        polycodec.avro_frame_info("\x00\x00\x00\x00\x01")  # type: ignore[arg-type]
