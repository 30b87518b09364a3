"""The msgpack-test-suite vectors (kawanet/msgpack-test-suite) through the ``typing.Any`` path:
every listed encoding of a value decodes to it, and what polycodec writes for the value is one
of the listed encodings. See ``tests/data/msgpack-test-suite/SOURCE.md``."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import polycodec

SUITE = (
    Path(__file__).resolve().parent
    / "data"
    / "msgpack-test-suite"
    / "dist"
    / "msgpack-test-suite.json"
)

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def from_hex(text: str) -> bytes:
    return bytes.fromhex(text.replace("-", ""))


def expected_timestamp(seconds: int, nanoseconds: int) -> datetime.datetime | None:
    """The UTC datetime for a timestamp, nanoseconds rounded half up to microseconds; None when
    Python's datetime cannot hold it."""
    micro, rest = divmod(nanoseconds, 1000)
    if rest >= 500:
        micro += 1
    try:
        return EPOCH + datetime.timedelta(seconds=seconds, microseconds=micro)
    except OverflowError:
        return None


def load_cases() -> list[tuple[str, dict[str, Any]]]:
    suite = json.loads(SUITE.read_text())
    cases = []
    for name, entries in suite.items():
        for index, entry in enumerate(entries):
            cases.append((f"{name}[{index}]", entry))
    return cases


CASES = load_cases()


def expected_value(entry: dict[str, Any]) -> Any:
    if "nil" in entry:
        return None
    if "bool" in entry:
        return entry["bool"]
    if "binary" in entry:
        return from_hex(entry["binary"])
    if "bignum" in entry:
        return int(entry["bignum"])
    if "number" in entry:
        return entry["number"]
    if "string" in entry:
        return entry["string"]
    if "array" in entry:
        return entry["array"]
    if "map" in entry:
        return entry["map"]
    if "timestamp" in entry:
        return expected_timestamp(*entry["timestamp"])
    raise AssertionError(f"unexpected case {entry}")


def test_suite_is_complete() -> None:
    assert len(CASES) == 85
    assert sum(len(entry["msgpack"]) for _, entry in CASES) == 233


@pytest.mark.parametrize("name, entry", CASES, ids=[name for name, _ in CASES])
def test_every_encoding_decodes(name: str, entry: dict[str, Any]) -> None:
    codec = polycodec.Codec(Any, format="msgpack")
    for encoding in entry["msgpack"]:
        data = from_hex(encoding)
        if "ext" in entry:
            kind, payload = entry["ext"][0], from_hex(entry["ext"][1])
            decoded = codec.decode_one(data)
            assert decoded == polycodec.Ext(kind, payload), encoding
            theirs = msgspec.msgpack.decode(data)
            assert (decoded.code, decoded.data) == (theirs.code, theirs.data), encoding
            continue
        expected = expected_value(entry)
        if "timestamp" in entry and expected is None:
            with pytest.raises(polycodec.ValidationError, match="out of range"):
                codec.decode_one(data)
            with pytest.raises(msgspec.ValidationError):
                msgspec.msgpack.decode(data)
            continue
        decoded = codec.decode_one(data)
        assert decoded == expected, encoding
        # The same Python value as msgspec gives for the same bytes.
        assert decoded == msgspec.msgpack.decode(data), encoding
        assert type(decoded) is type(msgspec.msgpack.decode(data)), encoding


@pytest.mark.parametrize("name, entry", CASES, ids=[name for name, _ in CASES])
def test_encoding_is_one_of_the_listed(name: str, entry: dict[str, Any]) -> None:
    if "ext" in entry:
        value: Any = polycodec.Ext(entry["ext"][0], from_hex(entry["ext"][1]))
        listed = [from_hex(e) for e in entry["msgpack"]]
        assert polycodec.encode_one(value, type=Any, format="msgpack") == listed[0]
        return
    value = expected_value(entry)
    if "timestamp" in entry and (value is None or entry["timestamp"][1] % 1000):
        pytest.skip("datetime holds microseconds, so this timestamp cannot be written back")
    listed = [from_hex(e) for e in entry["msgpack"]]
    ours = polycodec.encode_one(value, type=Any, format="msgpack")
    assert ours in listed
    if isinstance(value, (bool, int, str, bytes, list, dict)) or value is None:
        # Integers, strs, bins and containers take the first (smallest) form, except that
        # 2**63 - 1, like every non-negative int, is written unsigned as msgpack-python does.
        if value != 2**63 - 1:
            assert ours == listed[0]
