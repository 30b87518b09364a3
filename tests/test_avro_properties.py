"""Avro property tests: generated values round-trip, and fastavro reads what polycodec writes
and writes the same bytes.

POLYCODEC_HYPOTHESIS_EXAMPLES=5000 runs a deeper search than the default of 200."""

from __future__ import annotations

import dataclasses
import datetime
import uuid
from decimal import Decimal
from typing import Annotated, Dict, List, Optional, Union

from hypothesis import given
from hypothesis import strategies as st

import polycodec
from polycodec import Meta
from test_avro_support import fastavro_read, fastavro_write, normalise, plain
from test_properties import SETTINGS

UTC = datetime.timezone.utc
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
LONGS = st.integers(min_value=-(2**63), max_value=2**63 - 1)
Money = Annotated[Decimal, Meta(max_digits=18, decimal_places=4)]


@dataclasses.dataclass
class Sample:
    number: int
    ratio: float
    text: str
    blob: bytes
    price: Money
    loose: Decimal
    at: datetime.datetime
    day: datetime.date
    clock: datetime.time
    ident: uuid.UUID
    items: List[int]
    index: Dict[str, Optional[float]]
    either: Union[int, str, None]


SAMPLES = st.builds(
    Sample,
    number=LONGS,
    ratio=st.floats(allow_nan=False),
    text=TEXT,
    blob=st.binary(max_size=20),
    price=st.decimals(min_value=-(10**13), max_value=10**13, places=4, allow_nan=False),
    loose=st.decimals(allow_nan=False, allow_infinity=False),
    at=st.datetimes(timezones=st.just(UTC)),
    day=st.dates(),
    clock=st.times(),
    ident=st.uuids(),
    items=st.lists(LONGS, max_size=5),
    index=st.dictionaries(TEXT, st.none() | st.floats(allow_nan=False), max_size=4),
    either=st.none() | LONGS | TEXT,
)

CODEC = polycodec.Codec(Sample, "avro")


def _plain(value: Sample) -> dict[str, object]:
    out = plain(value)
    out["loose"] = str(value.loose)
    return out


@SETTINGS
@given(SAMPLES)
def test_round_trip_and_fastavro_agree(value: Sample) -> None:
    data = CODEC.encode_one(value)
    back = CODEC.decode_one(data)
    assert back == value
    assert str(back.loose) == str(value.loose)  # the exact digits, not just an equal value
    assert normalise(fastavro_read(CODEC.schema, data)) == normalise(_plain(value))
    assert fastavro_write(CODEC.schema, _plain(value)) == data


@SETTINGS
@given(st.lists(SAMPLES, max_size=5), st.sampled_from(["null", "deflate", "snappy", "zstandard"]))
def test_containers_round_trip(values: list[Sample], compression: str) -> None:
    codec = polycodec.Codec(Sample, "avro", compression=compression)
    assert codec.decode_many(codec.encode_many(values)) == values


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_decode_errors(data: bytes) -> None:
    for decode in (CODEC.decode_one, CODEC.decode_many):
        try:
            decode(data)
        except polycodec.DecodeError:
            pass
