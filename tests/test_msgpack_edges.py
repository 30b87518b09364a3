"""Malformed MessagePack: every defect is a DecodeError with a path, never a crash, a hang,
a read past the buffer or an allocation the input cannot justify. Mutated payloads are checked
against msgspec as an oracle."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import math
import random
import uuid
from typing import Any, Callable, Optional

import msgpack
import msgspec
import pytest

import polycodec
from json_models import EVERYTHING, Archive, Chunk, Everything, Point, Tree

UTC = datetime.timezone.utc


def decode(data: bytes, tp: Any = Any, **options: Any) -> Any:
    return polycodec.decode_one(data, tp, format="msgpack", **options)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "truncated"),
        (b"\xc1", "reserved byte 0xc1"),
        (b"\x01\x02", "trailing bytes"),
        (b"\xc0\xc0", "trailing bytes"),
        (b"\xd9", "truncated"),
        (b"\xd9\x05abc", "truncated"),
        (b"\xda\x00", "truncated"),
        (b"\xdb\xff\xff\xff\xffab", "truncated"),
        (b"\xc4\x03ab", "truncated"),
        (b"\xc6\xff\xff\xff\xff", "truncated"),
        (b"\xcd\x01", "truncated"),
        (b"\xcb\x00\x00", "truncated"),
        (b"\x92\x01", "container length exceeds"),
        (b"\x92\x01\xcd\x00", "truncated"),
        (b"\x81\xa1k", "truncated"),
        # Lengths the rest of the input cannot hold are refused before anything is allocated.
        (b"\xdd\xff\xff\xff\xff\x01", "container length exceeds"),
        (b"\xdf\x7f\xff\xff\xff\x01\x02", "container length exceeds"),
        (b"\xdc\x00\x03\x01\x02", "container length exceeds"),
        (b"\xc9\xff\xff\xff\xff\x01", "truncated"),
        (b"\xa2\xff\xfe", "not valid UTF-8"),
        (b"\xa1\x80", "not valid UTF-8"),
        (b"\xd6\xff\x00\x00", "truncated"),
        (b"\xd5\xff\x00\x00", "invalid timestamp"),
        (b"\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00", "invalid timestamp"),
    ],
)
def test_malformed_input_is_a_decode_error(data: bytes, message: str) -> None:
    with pytest.raises(polycodec.DecodeError, match=message) as info:
        decode(data)
    assert info.value.path.startswith("$")


@dataclasses.dataclass(slots=True)
class Typed:
    name: str
    maybe: Optional[str]
    at: datetime.datetime
    when: Optional[datetime.datetime]
    count: int
    ratio: float
    flag: bool


def test_plain_shortcuts_fail_as_the_general_path() -> None:
    # Scalars of plain nodes skip the general dispatch; a bad one there falls back to it, so
    # the error and its path are the general path's.
    stamp = b"\xd6\xff\x00\x00\x00\x01"
    good = {"name": "a", "maybe": None, "at": 0, "when": 0, "count": 1, "ratio": 0.5, "flag": True}

    def wire(**replace: bytes) -> bytes:
        out = bytearray([0x80 | len(good)])
        for key, value in good.items():
            out += msgpack.packb(key)
            out += replace.get(key, stamp if key in ("at", "when") else msgpack.packb(value))
        return bytes(out)

    value = polycodec.Codec(Typed, format="msgpack").decode_one(wire())
    utc = datetime.timezone.utc
    assert value == Typed(
        "a", None, datetime.datetime(1970, 1, 1, 0, 0, 1, tzinfo=utc), value.when, 1, 0.5, True
    )
    cases = [
        ({"name": b"\xa1\x80"}, "not valid UTF-8", "$.name"),
        ({"maybe": b"\xa2\xff\xfe"}, "not valid UTF-8", "$.maybe"),
        ({"at": b"\xd5\xff\x00\x00"}, "invalid timestamp", "$.at"),
        ({"when": b"\xd7\xff\xff\xff\xff\xff\x00\x00\x00\x00"}, "invalid timestamp", "$.when"),
        (
            {"when": b"\xc7\x0c\xff" + bytes(4) + (2**40).to_bytes(8, "big")},
            "out of range",
            "$.when",
        ),
        ({"count": b"\xa1x"}, "expected int", "$.count"),
        ({"flag": b"\xc0"}, "expected bool", "$.flag"),
        ({"ratio": b"\xc2"}, "expected float", "$.ratio"),
    ]
    codec = polycodec.Codec(Typed, format="msgpack")
    for replace, message, path in cases:
        with pytest.raises(polycodec.DecodeError, match=message) as info:
            codec.decode_one(wire(**replace))
        assert info.value.path == path


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(slots=True)
class Texts:
    color: Color
    day: datetime.date
    maybe_day: Optional[datetime.date]
    ident: uuid.UUID
    amount: decimal.Decimal


def test_text_shortcuts_fail_as_the_general_path() -> None:
    # Enums, dates, UUIDs and Decimals read out of strs skip the general dispatch; a bad one
    # falls back to it, so the error and its path are the general path's.
    good = {
        "color": "blue",
        "day": "2024-02-29",
        "maybe_day": None,
        "ident": "12345678-1234-5678-1234-567812345678",
        "amount": "12.50",
    }
    codec = polycodec.Codec(Texts, format="msgpack")
    value = codec.decode_one(msgpack.packb(good))
    assert value == Texts(
        Color.BLUE,
        datetime.date(2024, 2, 29),
        None,
        uuid.UUID(good["ident"]),
        decimal.Decimal("12.50"),
    )
    assert codec.decode_one(msgpack.packb({**good, "maybe_day": "2000-01-01"})).maybe_day == (
        datetime.date(2000, 1, 1)
    )
    cases: list[tuple[str, Any, str]] = [
        ("color", "green", "invalid enum value"),
        ("color", b"\xff", "expected"),
        ("day", "2023-02-29", "day"),
        ("maybe_day", "yesterday", "date"),
        ("ident", "not-a-uuid", "UUID"),
        ("amount", "twelve", "invalid decimal"),
        ("amount", "1\u00e9", "invalid decimal"),
    ]
    for key, bad, message in cases:
        with pytest.raises(polycodec.DecodeError, match=message) as info:
            codec.decode_one(msgpack.packb({**good, key: bad}))
        assert info.value.path == f"$.{key}"
    data = msgpack.packb(good).replace(b"\xa4blue", b"\xa4bl\xffe")
    with pytest.raises(polycodec.DecodeError, match="not valid UTF-8") as info:
        codec.decode_one(data)
    assert info.value.path == "$.color"


def test_malformed_input_inside_a_record_carries_the_path() -> None:
    data = msgpack.packb({"label": "x", "contents": [{"name": "a", "nbytes": 1}]})
    cut = data[:-1]
    with pytest.raises(polycodec.DecodeError, match=r"truncated.*\$\.contents\[0\]\.nbytes"):
        decode(cut, Archive)


def test_skipped_unknown_fields_are_checked_too() -> None:
    data = b"\x83\xa1x\x01\xa1y\x02\xa1z\x92\x01\xcd\x00"
    with pytest.raises(polycodec.DecodeError, match="truncated"):
        decode(data, Point)
    with pytest.raises(polycodec.DecodeError, match="reserved"):
        decode(b"\x83\xa1x\x01\xa1y\x02\xa1z\xc1", Point)


@pytest.mark.parametrize("depth, ok", [(1024, True), (1025, False)])
def test_nesting_limit(depth: int, ok: bool) -> None:
    data = b"\x91" * depth + b"\xc0"
    if ok:
        value = decode(data)
        for _ in range(depth):
            value = value[0]
        assert value is None
    else:
        with pytest.raises(polycodec.DecodeError, match="nested deeper"):
            decode(data)


def test_deep_unknown_fields_are_skipped_within_the_limit() -> None:
    deep = b"\x91" * 5000 + b"\xc0"
    with pytest.raises(polycodec.DecodeError, match="nesting deeper"):
        decode(b"\x83\xa1x\x01\xa1y\x02\xa1z" + deep, Point)
    assert decode(b"\x83\xa1x\x01\xa1y\x02\xa1z" + b"\x91" * 100 + b"\xc0", Point) == Point(1, 2)


def test_wrong_types_are_validation_errors_with_paths() -> None:
    data = msgpack.packb({"x": 1, "y": "two"})
    with pytest.raises(polycodec.ValidationError, match=r"expected int, got str \(at \$\.y\)"):
        decode(data, Point)
    with pytest.raises(polycodec.ValidationError, match="expected str, got bytes"):
        decode(msgpack.packb(b"x"), str)
    with pytest.raises(polycodec.ValidationError, match="expected int, got bytes"):
        decode(msgpack.packb(b"x"), int)
    with pytest.raises(polycodec.ValidationError, match=r"expected int \| float, got bytes"):
        decode(msgpack.packb(b"x"), int | float)
    with pytest.raises(polycodec.ValidationError, match="expected str, got bytes"):
        decode(msgpack.packb(b"x"), int | str | None)
    with pytest.raises(polycodec.ValidationError, match="expected date, got timestamp"):
        decode(
            msgpack.packb(datetime.datetime(2000, 1, 1, tzinfo=UTC), datetime=True), datetime.date
        )
    with pytest.raises(polycodec.ValidationError, match="expected str, got ext type 3"):
        decode(b"\xd4\x03\x00", str)
    with pytest.raises(polycodec.ValidationError, match="a str field name, got int"):
        decode(b"\x81\x01\x02", Point)
    with pytest.raises(polycodec.ValidationError, match="hashable dict key"):
        decode(b"\x81\x80\x01", Any)
    with pytest.raises(polycodec.ValidationError, match="hashable dict key"):
        decode(b"\x81\x91\x80\x01", Any)
    # An array of arrays is a tuple of tuples, as msgspec reads it.
    assert decode(b"\x81\x91\x90\x01", Any) == {((),): 1}


def test_decode_many_needs_an_array() -> None:
    codec = polycodec.Codec(Point, format="msgpack")
    with pytest.raises(polycodec.ValidationError, match="expected array of values"):
        codec.decode_many(b"\x80")
    with pytest.raises(polycodec.DecodeError, match="trailing"):
        codec.decode_many(b"\x90\x90")
    with pytest.raises(polycodec.ValidationError, match=r"\$\[1\]\.x"):
        codec.decode_many(msgpack.packb([{"x": 1, "y": 2}, {"x": "a", "y": 2}]))


def test_accepts_bytes_like_inputs_but_not_str() -> None:
    data = msgpack.packb([1, 2])
    assert decode(bytearray(data)) == [1, 2]
    assert decode(memoryview(data)) == [1, 2]
    with pytest.raises(TypeError):
        decode("\x92\x01\x02")  # type: ignore[arg-type]


def test_unknown_keyword_option_is_refused() -> None:
    with pytest.raises(TypeError, match="msgpack"):
        polycodec.Codec(int, format="msgpack", use_bin_type=False)


SHRINKING: list[Any] = []


@dataclasses.dataclass
class Sneaky:
    n: int

    def __getattr__(self, name: str) -> Any:
        # Reached when `n` is missing from the instance dict: user code that shrinks the list
        # being encoded.
        del SHRINKING[2:]
        return 5


def test_a_list_shrunk_while_encoding_gets_a_header_that_matches() -> None:
    first = Sneaky(0)
    del first.__dict__["n"]
    SHRINKING[:] = [first] + [Sneaky(i) for i in range(1, 20)]
    out = polycodec.encode_one(SHRINKING, type=list[Sneaky], format="msgpack")
    assert out[0] == 0x92
    assert msgpack.unpackb(out) == [{"n": 5}, {"n": 1}]


def test_encode_many_takes_iterables_without_a_length() -> None:
    codec = polycodec.Codec(int, format="msgpack")
    out = codec.encode_many(i for i in range(20))
    assert out == msgspec.msgpack.encode(list(range(20)))
    assert codec.encode_many(iter([])) == b"\x90"


def _mutations(rng: random.Random) -> list[Callable[[bytes], bytes]]:
    specials = bytes([0xC0, 0xC1, 0xC2, 0xC4, 0xCC, 0xD9, 0xDC, 0xDE, 0xDD, 0xDF, 0x9F, 0x8F, 0xFF])

    def truncate(data: bytes) -> bytes:
        return data[: rng.randrange(len(data))]

    def flip(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :]

    def insert(data: bytes) -> bytes:
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes([rng.choice(specials)]) + data[i:]

    def delete(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + data[i + 1 :]

    def duplicate(data: bytes) -> bytes:
        i, j = sorted(rng.randrange(len(data) + 1) for _ in range(2))
        return data[:j] + data[i:j] + data[j:]

    def replace(data: bytes) -> bytes:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]

    return [truncate, flip, insert, delete, duplicate, replace]


SEEDS: list[tuple[Any, Any]] = [
    (Everything, dataclasses.replace(EVERYTHING, huge=2**64 - 1)),
    (Archive, Archive("a", [Chunk("c", 1), Chunk("é", 2)], {"k": Chunk("k", 3)}, Point(1, -2))),
    (Tree, Tree(1, [Tree(2, [Tree(3)]), Tree(4)])),
    (
        Any,
        {
            "a": [1, 2.5, "x\u00e9", None, True, {"b": []}, b"\x00"],
            "c": -1e-5,
            "t": datetime.datetime(2020, 1, 1, 0, 0, 0, 5, tzinfo=UTC),
            7: [2**40, -(2**40), 200, -200],
        },
    ),
]


def _same(ours: Any, theirs: Any) -> bool:
    """Equality that takes NaN as equal to itself, and polycodec's Ext as msgspec's."""
    if isinstance(ours, polycodec.Ext) and isinstance(theirs, msgspec.msgpack.Ext):
        return (ours.code, ours.data) == (theirs.code, theirs.data)
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours == theirs or (math.isnan(ours) and math.isnan(theirs))
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return len(ours) == len(theirs) and all(_same(a, b) for a, b in zip(ours, theirs))
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return len(ours) == len(theirs) and all(
            k in theirs and _same(v, theirs[k]) for k, v in ours.items()
        )
    return type(ours) is type(theirs) and bool(ours == theirs)


@pytest.mark.parametrize("tp, obj", SEEDS, ids=["everything", "archive", "tree", "any"])
def test_mutated_payloads_only_raise_decode_error(tp: Any, obj: Any) -> None:
    rng = random.Random(20261130)
    codec = polycodec.Codec(tp, format="msgpack")
    lax = polycodec.Codec(tp, format="msgpack", strict=False)
    original = codec.encode_one(obj)
    mutations = _mutations(rng)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(2000):
        data = original
        for _ in range(rng.randint(1, 3)):
            if data:
                data = rng.choice(mutations)(data)
        for decoder in (codec, lax):
            try:
                decoder.decode_one(data)
                outcomes["ok"] += 1
            except polycodec.DecodeError as error:
                assert isinstance(error.path, str) and error.path.startswith("$")
                outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["ok"] + outcomes["error"] == 4000


def test_mutated_payloads_decode_like_msgspec_on_the_any_path() -> None:
    rng = random.Random(7)
    codec = polycodec.Codec(Any, format="msgpack")
    original = codec.encode_one(SEEDS[-1][1])
    mutations = _mutations(rng)
    agreed = 0
    for _ in range(3000):
        data = original
        for _ in range(rng.randint(1, 3)):
            if data:
                data = rng.choice(mutations)(data)
        try:
            theirs: Optional[Any] = msgspec.msgpack.decode(data)
            their_error = None
        except (msgspec.DecodeError, TypeError) as error:
            theirs, their_error = None, error
        try:
            ours = codec.decode_one(data)
        except polycodec.DecodeError:
            assert their_error is not None, data.hex()
            continue
        assert their_error is None, (data.hex(), their_error)
        assert _same(ours, theirs), data.hex()
        agreed += 1
    assert agreed > 100


@pytest.mark.parametrize("tp, obj", SEEDS, ids=["everything", "archive", "tree", "any"])
def test_every_truncation_is_a_decode_error(tp: Any, obj: Any) -> None:
    codec = polycodec.Codec(tp, format="msgpack")
    original = codec.encode_one(obj)
    for end in range(len(original)):
        with pytest.raises(polycodec.DecodeError):
            codec.decode_one(original[:end])


def test_codec_api_for_msgpack() -> None:
    import pickle

    codec = polycodec.Codec(Point, format="msgpack", array_like=True)
    assert codec.format == "msgpack"
    assert repr(codec) == "Codec(Point, format='msgpack', array_like=True)"
    clone = pickle.loads(pickle.dumps(codec))
    assert clone.format == "msgpack"
    assert clone.encode_one(Point(1, 2)) == codec.encode_one(Point(1, 2)) == b"\x92\x01\x02"
    assert polycodec.encode_many([Point(1, 2)], format="msgpack") == b"\x91\x82\xa1x\x01\xa1y\x02"
    assert polycodec.decode_many(b"\x91\x92\x01\x02", Point, format="msgpack", array_like=True) == [
        Point(1, 2)
    ]
