"""What is MessagePack's own about the types: ints beyond 64 bits, NaN, timestamps (their
rounding, range and the string form also read), float32, bin and non-string map keys.

The round trips of every type against ``msgpack`` and ``msgspec.msgpack`` (the wire form, both
ways and byte for byte; at the top level, as a field and in lists) are in the shared matrix:
tests/catalogue.py and tests/test_types_matrix.py.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Annotated, Any

import msgpack
import msgspec
import pytest

import polycodec
from json_models import EVERYTHING, MINUS_0800, PLUS_0530, UTC, Everything, assert_same


def test_everything_record_matches_msgspec_except_the_huge_int() -> None:
    everything = dataclasses.replace(EVERYTHING, huge=2**64 - 1)
    codec = polycodec.Codec(Everything, format="msgpack")
    out = codec.encode_one(everything)
    assert out == msgspec.msgpack.encode(everything)
    expected = dataclasses.replace(everything, aware=everything.aware.astimezone(UTC))
    assert_same(codec.decode_one(out), expected)
    assert_same(msgspec.msgpack.decode(out, type=Everything), expected)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 3**200])
def test_ints_beyond_64_bits_cannot_be_encoded(value: int) -> None:
    with pytest.raises(polycodec.EncodeError, match="64 bits"):
        polycodec.encode_one(value, format="msgpack")
    with pytest.raises(polycodec.EncodeError, match=r"64 bits.*\$\.huge"):
        polycodec.encode_one(dataclasses.replace(EVERYTHING, huge=value), format="msgpack")


def test_nan_round_trips() -> None:
    out = polycodec.encode_one(float("nan"), format="msgpack")
    assert out == msgspec.msgpack.encode(float("nan"))
    decoded = polycodec.decode_one(out, float, format="msgpack")
    assert decoded != decoded


def test_memoryview_encodes_as_bin() -> None:
    out = polycodec.encode_one(memoryview(b"abc"), type=bytes, format="msgpack")
    assert out == b"\xc4\x03abc"


@pytest.mark.parametrize(
    "nanoseconds, microsecond",
    [(0, 0), (499, 0), (500, 1), (1500, 2), (2500, 3), (999_999_499, 999_999)],
)
def test_timestamp_nanoseconds_round_like_msgspec(nanoseconds: int, microsecond: int) -> None:
    data = b"\xd7\xff" + ((nanoseconds << 34) | 100).to_bytes(8, "big")
    ours = polycodec.decode_one(data, datetime.datetime, format="msgpack")
    assert ours == msgspec.msgpack.decode(data, type=datetime.datetime)
    assert ours == datetime.datetime(1970, 1, 1, 0, 1, 40, microsecond, tzinfo=UTC)


def test_timestamp_rounding_carries_into_the_next_second() -> None:
    data = b"\xd7\xff" + ((999_999_500 << 34) | 100).to_bytes(8, "big")
    ours = polycodec.decode_one(data, datetime.datetime, format="msgpack")
    assert (
        ours == msgspec.msgpack.decode(data) == datetime.datetime(1970, 1, 1, 0, 1, 41, tzinfo=UTC)
    )


def test_datetime_accepts_the_string_form_too() -> None:
    codec = polycodec.Codec(datetime.datetime, format="msgpack")
    aware = datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=PLUS_0530)
    assert_same(codec.decode_one(msgpack.packb("2001-02-03T04:05:06+05:30")), aware)
    text = msgspec.msgpack.encode("2001-02-03T04:05:06Z")
    assert_same(codec.decode_one(text), datetime.datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC))


def test_tz_constraints_apply_to_timestamps() -> None:
    naive_only = Annotated[datetime.datetime, polycodec.Meta(tz=False)]
    stamp = msgpack.packb(datetime.datetime(2000, 1, 1, tzinfo=UTC), datetime=True)
    with pytest.raises(polycodec.ValidationError, match="naive"):
        polycodec.decode_one(stamp, naive_only, format="msgpack")
    aware_only = Annotated[datetime.datetime, polycodec.Meta(tz=True)]
    assert polycodec.decode_one(stamp, aware_only, format="msgpack").tzinfo is not None


def test_timestamps_outside_python_years_are_refused() -> None:
    too_late = b"\xc7\x0c\xff" + (0).to_bytes(4, "big") + (2**40).to_bytes(8, "big")
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(too_late, datetime.datetime, format="msgpack")
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(too_late, Any, format="msgpack")


def test_bytes_also_decode_from_str() -> None:
    assert polycodec.decode_one(b"\xa3abc", bytes, format="msgpack") == b"abc"


def test_any_dict_with_array_key_decodes_to_tuple_key() -> None:
    data = bytes.fromhex("81920102a178")
    assert polycodec.decode_one(data, Any, format="msgpack") == msgspec.msgpack.decode(data)
    assert polycodec.decode_one(data, Any, format="msgpack") == {(1, 2): "x"}


def test_float32_is_accepted_for_float() -> None:
    data = msgpack.packb(1.5, use_single_float=True)
    assert data[0] == 0xCA
    assert_same(polycodec.decode_one(data, float, format="msgpack"), 1.5)
    assert_same(polycodec.decode_one(data, Any, format="msgpack"), 1.5)


@pytest.mark.parametrize(
    "value",
    [
        datetime.datetime(1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(minutes=1))),
        datetime.datetime(9999, 12, 31, 23, 59, tzinfo=MINUS_0800),
    ],
)
def test_aware_datetimes_whose_utc_instant_leaves_python_years_are_refused(
    value: datetime.datetime,
) -> None:
    # msgspec raises OverflowError here; polycodec refuses with a path instead of writing a
    # timestamp that no one could decode into a datetime.
    with pytest.raises(polycodec.EncodeError, match="outside years 1-9999"):
        polycodec.encode_one(value, format="msgpack")
