"""Container files in every codec, both ways with fastavro and apache avro.

The codec libraries the peers need (cramjam or python-snappy for snappy, backports.zstd or
zstandard for zstandard) are in the test extras; without them a peer's codec is skipped, and
the file says which one is missing.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import io
import json
import uuid
from typing import Annotated, Optional

import pytest

import polycodec

fastavro = pytest.importorskip("fastavro")
avro_datafile = pytest.importorskip("avro.datafile")
avro_io = pytest.importorskip("avro.io")
avro_schema = pytest.importorskip("avro.schema")

CODECS = ["null", "deflate", "snappy", "zstandard"]


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


@dataclasses.dataclass
class Reading:
    sensor: str
    value: float
    count: int
    level: Level
    at: datetime.datetime
    ident: uuid.UUID
    price: Annotated[decimal.Decimal, polycodec.Meta(max_digits=9, decimal_places=2)]
    tags: list[str]
    note: Optional[str] = None


def _readings(n: int) -> list[Reading]:
    start = datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)
    return [
        Reading(
            sensor=f"s{i % 7}",
            value=i / 8,
            count=i * 1000,
            level=Level.HIGH if i % 3 else Level.LOW,
            at=start + datetime.timedelta(seconds=i),
            ident=uuid.UUID(int=i),
            # At the schema's scale: apache avro's Python writer does not rescale a Decimal (it
            # writes Decimal("0.5") at scale 2 as 0.05), so other exponents would test its bug.
            price=(decimal.Decimal(i) / 4).quantize(decimal.Decimal("0.01")),
            tags=["a"] * (i % 4),
            note=None if i % 2 else f"n{i}",
        )
        for i in range(3000)  # several 64 KiB blocks
    ]


def _as_peer_dict(reading: Reading, uuid_as_str: bool = False) -> dict[str, object]:
    """What a peer's user hands over; apache avro takes a uuid as its text."""
    record = dataclasses.asdict(reading)
    record["level"] = reading.level.name
    if uuid_as_str:
        record["ident"] = str(reading.ident)
    return record


def _from_peer_dict(record: dict[str, object]) -> Reading:
    fields = dict(record)
    fields["level"] = Level[str(fields["level"])]
    if isinstance(fields["ident"], str):  # apache avro reads a uuid as its text
        fields["ident"] = uuid.UUID(fields["ident"])
    at = fields["at"]
    assert isinstance(at, datetime.datetime)
    fields["at"] = at.astimezone(datetime.timezone.utc)
    return Reading(**fields)  # type: ignore[arg-type]


def _skip_unless_peer_has(codec: str, error: Exception) -> None:
    text = str(error).lower()
    if codec in ("snappy", "zstandard") and ("install" in text or "unsupported" in text):
        pytest.skip(f"the peer lacks its {codec} library: {error}")
    raise error


@pytest.mark.parametrize("codec", CODECS)
def test_fastavro_reads_what_polycodec_writes(codec: str) -> None:
    readings = _readings(3000)
    data = polycodec.Codec(Reading, "avro", compression=codec).encode_many(readings)
    try:
        reader = fastavro.reader(io.BytesIO(data))
        assert reader.codec == codec
        got = [_from_peer_dict(record) for record in reader]
    except ValueError as error:
        _skip_unless_peer_has(codec, error)
    assert got == readings


@pytest.mark.parametrize("codec", CODECS)
def test_polycodec_reads_what_fastavro_writes(codec: str) -> None:
    readings = _readings(3000)
    schema = polycodec.Codec(Reading, "avro").schema
    out = io.BytesIO()
    try:
        fastavro.writer(out, schema, [_as_peer_dict(r) for r in readings], codec=codec)
    except ValueError as error:
        _skip_unless_peer_has(codec, error)
    assert polycodec.Codec(Reading, "avro").decode_many(out.getvalue()) == readings


@pytest.mark.parametrize("codec", CODECS)
def test_apache_avro_reads_what_polycodec_writes(codec: str) -> None:
    readings = _readings(3000)
    data = polycodec.Codec(Reading, "avro", compression=codec).encode_many(readings)
    try:
        reader = avro_datafile.DataFileReader(io.BytesIO(data), avro_io.DatumReader())
        got = [_from_peer_dict(record) for record in reader]
    except Exception as error:  # apache avro raises its own UnsupportedCodec
        _skip_unless_peer_has(codec, error)
    assert got == readings


@pytest.mark.parametrize("codec", CODECS)
def test_polycodec_reads_what_apache_avro_writes(codec: str) -> None:
    readings = _readings(3000)
    codec_ = polycodec.Codec(Reading, "avro")
    out = io.BytesIO()
    try:
        writer = avro_datafile.DataFileWriter(
            out, avro_io.DatumWriter(), avro_schema.parse(json.dumps(codec_.schema)), codec=codec
        )
    except Exception as error:
        _skip_unless_peer_has(codec, error)
    for reading in readings:
        writer.append(_as_peer_dict(reading, uuid_as_str=True))
    writer.flush()
    assert codec_.decode_many(out.getvalue()) == readings
