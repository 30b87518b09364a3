"""Avro object container files from the Avro project's test data, and the single-object and
Confluent framings of single datums."""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import struct
import zlib
from typing import List, Optional, Union

import fastavro
import pytest

import polycodec
from polycodec import _avro
from test_avro_support import CONFORMANCE, avro_records, fastavro_records, fastavro_write

DATA = CONFORMANCE / "share" / "test" / "data"


@dataclasses.dataclass
class Weather:
    station: str
    time: int
    temp: int


@dataclasses.dataclass
class Person:
    ID: int
    First: str
    Last: str
    Phone: str
    Age: int


class Gender(enum.Enum):
    FEMALE = "f"
    MALE = "m"


@dataclasses.dataclass
class Address:
    zipcode: int


@dataclasses.dataclass
class JsPerson:
    name: str
    gender: Gender
    address: Address
    age: Optional[int] = None


@dataclasses.dataclass
class Inner:
    d1: Union[str, int, bool, None]


@dataclasses.dataclass
class UnionFields:
    data1: Union[str, int]
    data2: Optional[Inner]


@dataclasses.dataclass
class Simple:
    text: str


@dataclasses.dataclass
class PrimitiveTypes:
    booleanField: bool
    intField: int
    longField: int
    floatField: float
    doubleField: float
    bytesField: bytes
    stringField: str


@dataclasses.dataclass
class Add:
    arg1: int
    arg2: int


def _weather_expected() -> list[Weather]:
    lines = (DATA / "weather.json").read_text().splitlines()
    return [Weather(**json.loads(line)) for line in lines if line.strip()]


@pytest.mark.parametrize(
    "name", ["weather.avro", "weather-deflate.avro", "weather-snappy.avro", "weather-zstd.avro"]
)
def test_weather_files(name: str) -> None:
    codec = polycodec.Codec(Weather, "avro")
    assert codec.decode_many((DATA / name).read_bytes()) == _weather_expected()


def test_sorted_weather_file() -> None:
    records = polycodec.Codec(Weather, "avro").decode_many(
        (DATA / "weather-sorted.avro").read_bytes()
    )
    assert sorted(records, key=lambda w: w.time) == records
    assert sorted(records, key=lambda w: w.time) == sorted(
        _weather_expected(), key=lambda w: w.time
    )


def test_sync_marker_inside_the_metadata() -> None:
    data = (DATA / "syncInMeta.avro").read_bytes()
    records = polycodec.Codec(Person, "avro").decode_many(data)
    assert len(records) == 6001
    expected = avro_records(data)
    assert [dataclasses.asdict(r) for r in records] == expected


def test_legacy_avro12_file_is_refused() -> None:
    with pytest.raises(polycodec.DecodeError, match="Obj"):
        polycodec.Codec(Weather, "avro").decode_many((DATA / "test.avro12").read_bytes())


def test_schema_folder_files() -> None:
    simple = polycodec.Codec(Simple, "avro").decode_many(
        (DATA / "schemas" / "simple" / "data.avro").read_bytes()
    )
    assert simple == [Simple("hello"), Simple("bonjour"), Simple("guten tag")]
    data = (DATA / "schemas" / "withUnion" / "data.avro").read_bytes()
    records = polycodec.Codec(UnionFields, "avro").decode_many(data)
    assert [dataclasses.asdict(r) for r in records] == fastavro_records(data)
    # Read with the schema of the folder bound as the codec's own.
    schema = json.loads((DATA / "schemas" / "withUnion" / "schema.json").read_text())
    bound = polycodec.Codec(UnionFields, "avro", schema=schema)
    assert bound.decode_many(data) == records
    assert fastavro_records(bound.encode_many(records)) == fastavro_records(data)


C_TESTS = CONFORMANCE / "lang" / "c" / "tests"


def test_c_regression_files() -> None:
    codec = polycodec.Codec(Optional[int], "avro")
    assert codec.decode_many((C_TESTS / "avro-1237-good.avro").read_bytes()) == [None, 100]
    assert codec.decode_many((C_TESTS / "avro-1238-good.avro").read_bytes()) == [None, 100]
    with pytest.raises(polycodec.DecodeError, match="union branch"):
        codec.decode_many((C_TESTS / "avro-1237-bad-union-discriminant.avro").read_bytes())
    with pytest.raises(polycodec.DecodeError):
        codec.decode_many((C_TESTS / "avro-1238-truncated.avro").read_bytes())
    primitives = polycodec.Codec(PrimitiveTypes, "avro")
    with_codec = (C_TESTS / "avro-1279-codec.avro").read_bytes()
    without = (C_TESTS / "avro-1279-no-codec.avro").read_bytes()
    records = primitives.decode_many(with_codec)
    assert records == primitives.decode_many(without)
    assert [dataclasses.asdict(r) for r in records] == fastavro_records(with_codec)


JS = CONFORMANCE / "lang" / "js" / "test" / "dat"


def test_js_person_files() -> None:
    codec = polycodec.Codec(JsPerson, "avro")
    records = codec.decode_many((JS / "person-10.avro").read_bytes())
    assert len(records) == 10
    expected = fastavro_records((JS / "person-10.avro").read_bytes())
    assert [
        {
            "name": r.name,
            "age": r.age,
            "gender": r.gender.name,
            "address": {"zipcode": r.address.zipcode},
        }
        for r in records
    ] == expected
    # One stray byte after the last block: strict readers report an incomplete block.
    with pytest.raises(polycodec.DecodeError):
        codec.decode_many((JS / "person-10.no-codec.avro").read_bytes())
    with pytest.raises(polycodec.DecodeError, match="not an Avro object container"):
        codec.decode_many((JS / "person-10.avro.raw").read_bytes())


def test_rpc_files() -> None:
    rpc = CONFORMANCE / "share" / "test" / "interop" / "rpc" / "add" / "onePlusOne"
    assert polycodec.Codec(Add, "avro").decode_many((rpc / "request.avro").read_bytes()) == [
        Add(1, 1)
    ]
    assert polycodec.Codec(int, "avro").decode_many((rpc / "response.avro").read_bytes()) == [2]


def test_container_header_and_sync_markers() -> None:
    codec = polycodec.Codec(Weather, "avro", compression="deflate")
    data = codec.encode_many([Weather("a", 1, 2)] * 3)
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.codec == "deflate"
    assert reader.writer_schema["name"] == "test_avro_container.Weather"
    assert data.startswith(b"Obj\x01")
    # Every block ends with the header's sync marker.
    assert data.endswith(data[data.index(b"\x00", data.index(b"deflate")) + 1 :][:16])


# --- framings ---------------------------------------------------------------------------------


def _fingerprint(schema: object) -> int:
    canonical = fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(schema))
    # fastavro shows the fingerprint's 8 little-endian bytes in hex.
    return int.from_bytes(
        bytes.fromhex(fastavro.schema.fingerprint(canonical, "CRC-64-AVRO")), "little"
    )


def test_single_object_framing() -> None:
    codec = polycodec.Codec(Weather, "avro", framing="single-object")
    raw = polycodec.Codec(Weather, "avro")
    value = Weather("x", 5, -3)
    data = codec.encode_one(value)
    fingerprint = _fingerprint(codec.schema)
    assert data == b"\xc3\x01" + struct.pack("<Q", fingerprint) + raw.encode_one(value)
    assert codec.decode_one(data) == value
    with pytest.raises(polycodec.DecodeError, match="C3 01"):
        codec.decode_one(b"\xc3\x02" + data[2:])
    with pytest.raises(polycodec.DecodeError, match="fingerprint"):
        codec.decode_one(data[:2] + bytes([data[2] ^ 1]) + data[3:])
    with pytest.raises(polycodec.DecodeError):
        codec.decode_one(data[:5])


@dataclasses.dataclass
class Message:
    id: int
    name: str
    tags: List[str]


def test_single_object_conformance_message() -> None:
    folder = DATA / "messageV1"
    schema = json.loads((folder / "test_schema.avsc").read_text())
    data = (folder / "test_message.bin").read_bytes()
    expected = Message(42, "Bill", ["dog_lover", "cat_hater"])
    bound = polycodec.Codec(Message, "avro", schema=schema, framing="single-object")
    assert bound.decode_one(data) == expected
    assert bound.encode_one(expected) == data
    # A codec with its own (derived) schema reads it by naming the writer schema.
    derived = polycodec.Codec(Message, "avro", framing="single-object")
    assert derived.decode_one(data, writer_schema=schema) == expected
    with pytest.raises(polycodec.DecodeError, match="fingerprint"):
        derived.decode_one(data)


def test_confluent_framing() -> None:
    codec = polycodec.Codec(Weather, "avro", framing="confluent", schema_id=258)
    raw = polycodec.Codec(Weather, "avro")
    value = Weather("x", 5, -3)
    data = codec.encode_one(value)
    assert data == b"\x00\x00\x00\x01\x02" + raw.encode_one(value)
    assert codec.decode_one(data) == value
    with pytest.raises(polycodec.DecodeError, match="schema id 259"):
        codec.decode_one(b"\x00\x00\x00\x01\x03" + data[5:])
    with pytest.raises(polycodec.DecodeError, match="byte 0"):
        codec.decode_one(b"\x01" + data[1:])
    with pytest.raises(polycodec.DecodeError):
        codec.decode_one(data[:3])
    # The datum after the header is what fastavro writes.
    assert data[5:] == fastavro_write(codec.schema, dataclasses.asdict(value))


def test_raw_datum_trailing_bytes_are_refused() -> None:
    codec = polycodec.Codec(Weather, "avro")
    data = codec.encode_one(Weather("x", 1, 2))
    with pytest.raises(polycodec.DecodeError, match="left after the datum"):
        codec.decode_one(data + b"\x00")


def test_fingerprint_matches_fastavro() -> None:
    codec = polycodec.Codec(UnionFields, "avro")
    parsed = _avro.parse_schema(codec.schema)
    form = _avro.canonical_form(parsed)
    assert form == fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(codec.schema))
    assert _avro.fingerprint(form.encode()) == _fingerprint(codec.schema)


def _only_block(data: bytes) -> bytes:
    """The data of the single block of a container polycodec wrote (count, size, data, sync)."""
    start = data.index(b"avro.codec") + 10
    header_end = start + 1 + data[start] // 2 + 1 + 16
    reader = io.BytesIO(data[header_end:])

    def varint() -> int:
        shift = result = 0
        while True:
            byte = reader.read(1)[0]
            result |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return (result >> 1) ^ -(result & 1)

    varint()
    size = varint()
    block = reader.read(size)
    assert reader.read(16) == data[header_end - 16 : header_end]
    assert reader.read() == b""
    return block


@pytest.mark.parametrize("compression", ["snappy", "zstandard"])
def test_snappy_and_zstandard_blocks(compression: str) -> None:
    records = _weather_expected()
    codec = polycodec.Codec(Weather, "avro", compression=compression)
    data = codec.encode_many(records * 20)
    assert codec.decode_many(data) == records * 20
    assert polycodec.Codec(Weather, "avro").decode_many(data) == records * 20
    plain = _only_block(polycodec.Codec(Weather, "avro").encode_many(records * 20))
    block = _only_block(data)
    if compression == "snappy":
        # Avro's snappy blocks end with the big-endian CRC-32 of the uncompressed data.
        assert block[-4:] == zlib.crc32(plain).to_bytes(4, "big")
    else:
        assert block[:4] == b"\x28\xb5\x2f\xfd"  # a Zstandard frame
        zstandard = pytest.importorskip("zstandard")
        # The frame does not declare its content size (optional in the format), so read it as a
        # stream, as Avro's Java and Python readers do.
        assert zstandard.ZstdDecompressor().decompressobj().decompress(block) == plain


def test_every_container_file_gets_its_own_sync_marker() -> None:
    codec = polycodec.Codec(Weather, "avro")
    markers = set()
    for _ in range(5):
        data = codec.encode_many([Weather("a", 1, 2)])
        start = data.index(b"avro.codec") + 10
        header_end = start + 1 + data[start] // 2 + 1 + 16
        assert data[header_end - 16 : header_end] == data[-16:]
        markers.add(data[-16:])
    assert len(markers) == 5
