"""Bad Avro input: truncated and corrupt datums and containers raise DecodeError (or
ValidationError for well-formed data of the wrong value), never crash, never over-allocate."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import os
import random
import uuid
from decimal import Decimal
from typing import Annotated, Dict, List, Optional, Union

import pytest

import polycodec
from polycodec import Meta


class Mood(enum.Enum):
    HAPPY = 1
    SAD = 2


@dataclasses.dataclass
class Leaf:
    n: int


@dataclasses.dataclass
class Tree:
    label: str
    children: List["Tree"]
    leaves: Dict[str, Leaf]
    mood: Mood
    data: bytes
    when: datetime.datetime
    day: datetime.date
    ident: uuid.UUID
    price: Annotated[Decimal, Meta(max_digits=10, decimal_places=2)]
    maybe: Optional[Union[int, str]] = None
    ratio: float = 0.0


UTC = datetime.timezone.utc
SAMPLE = Tree(
    "root",
    [
        Tree(
            "kid",
            [],
            {},
            Mood.SAD,
            b"",
            datetime.datetime(2000, 1, 1, tzinfo=UTC),
            datetime.date(2000, 1, 1),
            uuid.UUID(int=1),
            Decimal("0.01"),
        )
    ],
    {"a": Leaf(1), "b": Leaf(-300)},
    Mood.HAPPY,
    b"\x00\x01\x02",
    datetime.datetime(2024, 5, 1, 12, tzinfo=UTC),
    datetime.date(2024, 5, 1),
    uuid.UUID(int=2**100),
    Decimal("-12.34"),
    "text",
    1.5,
)

ERRORS = (polycodec.DecodeError,)  # ValidationError is a DecodeError


def header_end(data: bytes) -> int:
    """Where a container's header ends (after the sync marker) in polycodec's output."""
    start = data.index(b"avro.codec") + 10
    return start + 1 + data[start] // 2 + 1 + 16


@pytest.fixture(scope="module")
def codec() -> polycodec.Codec[Tree]:
    return polycodec.Codec(Tree, "avro")


def test_every_truncation_fails_cleanly(codec: polycodec.Codec[Tree]) -> None:
    data = codec.encode_one(SAMPLE)
    assert codec.decode_one(data) == SAMPLE
    for end in range(len(data)):
        with pytest.raises(ERRORS):
            codec.decode_one(data[:end])


def test_every_container_truncation_fails_cleanly(codec: polycodec.Codec[Tree]) -> None:
    data = codec.encode_many([SAMPLE, SAMPLE])
    end_of_header = header_end(data)
    for end in range(len(data)):
        if end == end_of_header:
            assert codec.decode_many(data[:end]) == []  # the header alone: no blocks
            continue
        with pytest.raises(ERRORS):
            codec.decode_many(data[:end])


@pytest.mark.parametrize(
    "tp, data, words",
    [
        (int, b"\xff" * 11, "varint longer than 64 bits"),
        (int, b"\x80", "ends inside a varint"),
        (str, b"\x01", "negative length"),
        (str, b"\x7e", "bytes needed"),
        (bytes, b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", "bytes needed"),
        (str, b"\x04\xff\xfe", "not valid UTF-8"),
        (bool, b"\x02", "boolean byte 2"),
        (Optional[int], b"\x04", "union branch 2 out of range"),
        (Optional[int], b"\x01", "union branch -1 out of range"),
        (Mood, b"\x08", "enum index 4 out of range"),
        (List[int], b"\xfe\xff\xff\xff\x0f", "exceeds what the remaining"),
        (List[None], b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f", "take no bytes"),
        (Dict[str, int], b"\xfe\xff\xff\xff\x0f", "exceeds"),
        (List[int], b"\x01\x00", "exceeds"),
        (datetime.date, b"\xfe\xff\xff\xff\x1f", "out of 32-bit range"),
        (datetime.date, b"\xfe\xff\xff\x7f", "out of the range"),
        (datetime.datetime, b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", "out of the range"),
        (float, b"\x00\x00", "8 bytes needed"),
    ],
)
def test_malformed_datums(tp: object, data: bytes, words: str) -> None:
    box = dataclasses.make_dataclass("Box", [("v", tp)])
    with pytest.raises(ERRORS, match=words):
        polycodec.Codec(box, "avro").decode_one(data)


def test_container_corruptions(codec: polycodec.Codec[Tree]) -> None:
    data = codec.encode_many([SAMPLE])
    with pytest.raises(polycodec.DecodeError, match="Obj"):
        codec.decode_many(b"Obj\x02" + data[4:])
    with pytest.raises(polycodec.DecodeError, match="sync marker"):
        codec.decode_many(data[:-1] + bytes([data[-1] ^ 0xFF]))
    # A header without avro.schema.
    with pytest.raises(polycodec.DecodeError, match="no avro.schema"):
        codec.decode_many(b"Obj\x01\x00" + bytes(16))
    with pytest.raises(polycodec.DecodeError, match="unsupported Avro codec"):
        codec.decode_many(data.replace(b"\x08null", b"\x08lzma"))
    with pytest.raises(polycodec.DecodeError, match="metadata entry count"):
        codec.decode_many(b"Obj\x01\xfe\xff\xff\xff\x0f")
    with pytest.raises(polycodec.DecodeError, match="invalid Avro writer schema: .*recorX"):
        codec.decode_many(data.replace(b'{"type":"record"', b'{"type":"recorX"'))


def test_block_count_beyond_the_block(codec: polycodec.Codec[Tree]) -> None:
    data = bytearray(codec.encode_many([SAMPLE]))
    end = header_end(bytes(data))
    assert data[end] == 2  # one record
    data[end] = 0x7E  # 63 records
    with pytest.raises(polycodec.DecodeError, match="exceeds"):
        codec.decode_many(bytes(data))


def test_deflate_bomb_is_bounded() -> None:
    import zlib

    box = dataclasses.make_dataclass("Box", [("v", bytes)])
    codec = polycodec.Codec(box, "avro", compression="deflate")
    data = codec.encode_many([box(b"x")])
    end = header_end(data)
    sync = data[end - 16 : end]
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = compressor.compress(b"\x00" * (130 << 20)) + compressor.flush()
    block = bytearray(b"\x02")
    n = len(bomb)
    size = bytearray()
    zz = n << 1
    while zz >= 0x80:
        size.append((zz & 0x7F) | 0x80)
        zz >>= 7
    size.append(zz)
    block += size + bomb + sync
    with pytest.raises(polycodec.DecodeError, match="inflate"):
        codec.decode_many(data[:end] + bytes(block))


def _single_block(codec: polycodec.Codec[object], value: object, block: bytes) -> bytes:
    """A one-block container from `codec` whose block data is replaced by `block`."""
    data = codec.encode_many([value])
    end = header_end(data)
    sync = data[end - 16 : end]
    size = bytearray()
    zz = len(block) << 1
    while zz >= 0x80:
        size.append((zz & 0x7F) | 0x80)
        zz >>= 7
    size.append(zz)
    return data[:end] + b"\x02" + bytes(size) + block + sync


def test_zstandard_window_declarations_are_bounded() -> None:
    box = dataclasses.make_dataclass("Box", [("v", bytes)])
    codec = polycodec.Codec(box, "avro", compression="zstandard")
    # A frame header declaring a 2 TiB window, and a single-segment frame claiming 4 GiB.
    for header in [b"\x28\xb5\x2f\xfd\x00\xf8", b"\x28\xb5\x2f\xfd\xa0\xff\xff\xff\xff"]:
        with pytest.raises(polycodec.DecodeError, match="window past the limit"):
            codec.decode_many(_single_block(codec, box(b"x"), header + b"\x00" * 8))


def test_snappy_corruptions() -> None:
    box = dataclasses.make_dataclass("Box", [("v", bytes)])
    codec = polycodec.Codec(box, "avro", compression="snappy")
    good = codec.encode_many([box(b"abc")])
    assert codec.decode_many(good) == [box(b"abc")]
    with pytest.raises(polycodec.DecodeError, match="CRC-32"):
        codec.decode_many(good[:-17] + bytes([good[-17] ^ 1]) + good[-16:])
    # A snappy header claiming 2 GiB of output from a few bytes.
    with pytest.raises(polycodec.DecodeError, match="limit"):
        codec.decode_many(_single_block(codec, box(b"x"), b"\x80\x80\x80\x80\x08" + b"\x00" * 8))


def test_deep_nesting_is_refused() -> None:
    # 2000 nested empty arrays of arrays: a recursive type whose every level takes 2 bytes.
    data = b"\x02" * 2000 + b"\x00" * 2000
    with pytest.raises(polycodec.DecodeError, match="nested deeper"):
        polycodec.Codec(Tree, "avro").decode_one(b"\x08root" + data)


def _mutations(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        pos = rng.randrange(len(out)) if out else 0
        if choice < 0.5 and out:
            out[pos] = rng.randrange(256)
        elif choice < 0.7 and out:
            del out[pos]
        elif choice < 0.85:
            out.insert(pos, rng.randrange(256))
        else:
            out[pos:pos] = os.urandom(rng.randint(1, 8))
    return bytes(out)


def test_mutation_fuzz_datums(codec: polycodec.Codec[Tree]) -> None:
    rng = random.Random(4)
    data = codec.encode_one(SAMPLE)
    for _ in range(3000):
        mutated = _mutations(data, rng)
        try:
            codec.decode_one(mutated)
        except polycodec.DecodeError:
            pass


@pytest.mark.parametrize("compression", ["null", "deflate", "snappy", "zstandard"])
def test_mutation_fuzz_containers(codec: polycodec.Codec[Tree], compression: str) -> None:
    rng = random.Random(5)
    writer = polycodec.Codec(Tree, "avro", compression=compression)
    data = writer.encode_many([SAMPLE, SAMPLE, SAMPLE])
    for _ in range(2000):
        mutated = _mutations(data, rng)
        try:
            writer.decode_many(mutated)
        except polycodec.DecodeError:
            pass


def _doubling_schema(levels: int, leaf_fields: List[Dict[str, object]]) -> Dict[str, object]:
    """Record L0 with two fields of type L1, L1 with two of L2, ...: each named type defined
    once (at its first use) and referred to by name at its second, so the schema grows
    linearly with `levels` while a datum holds 2**levels leaves."""
    schema: Dict[str, object] = {"type": "record", "name": f"L{levels}", "fields": leaf_fields}
    for level in range(levels - 1, -1, -1):
        schema = {
            "type": "record",
            "name": f"L{level}",
            "fields": [{"name": "a", "type": schema}, {"name": "b", "type": f"L{level + 1}"}],
        }
    return schema


def _doubling_classes(levels: int) -> type:
    leaf = dataclasses.make_dataclass("L_leaf", [])
    cls: type = leaf
    for level in range(levels - 1, -1, -1):
        cls = dataclasses.make_dataclass(f"L{level}", [("a", cls), ("b", cls)])
    return cls


def test_case5_named_types_reused_twice_per_level_resolve_and_decode_linearly() -> None:
    # Issue 14 case 5. At 60 levels an expanded program (or a walk of the 2**60 leaves) would
    # never finish: the programs share named types, the zero-size subtree is skipped in one
    # step, and reading it into objects is refused before anything is built.
    schema = _doubling_schema(60, [])
    empty = dataclasses.make_dataclass("Empty", [])
    codec = polycodec.Codec(empty, "avro")
    assert codec.decode_one(b"", writer_schema=schema) == empty()
    # The same writer schema from a container header, with a datum per block.
    header = polycodec.Codec(_doubling_classes(3), "avro").encode_many([])
    import json

    own = json.dumps(polycodec.Codec(_doubling_classes(3), "avro").schema, separators=(",", ":"))
    hostile = json.dumps(schema, separators=(",", ":"))
    container = header.replace(_avro_string(own.encode()), _avro_string(hostile.encode())) + _block(
        header, 3, b""
    )
    assert codec.decode_many(container) == [empty(), empty(), empty()]
    # Read into matching classes: 2**61 objects from no bytes are refused at once.
    deep = polycodec.Codec(_doubling_classes(60), "avro")
    with pytest.raises(polycodec.DecodeError, match="take no bytes"):
        deep.decode_one(b"", writer_schema=schema)
    # Small trees still decode: 2**10 leaves.
    small = polycodec.Codec(_doubling_classes(10), "avro")
    value = small.decode_one(b"", writer_schema=_doubling_schema(10, []))
    assert small.encode_one(value) == b""
    # Fixed-size leaves (one long each) are skipped by width, and read when kept.
    with_long = _doubling_schema(12, [{"name": "n", "type": "long"}])
    assert codec.decode_one(b"\x02" * 4096, writer_schema=with_long) == empty()
    with pytest.raises(polycodec.DecodeError):
        codec.decode_one(b"\x02" * 4095, writer_schema=with_long)


def _avro_long(value: int) -> bytes:
    zz = (value << 1) ^ (value >> 63)
    out = bytearray()
    while zz >= 0x80:
        out.append((zz & 0x7F) | 0x80)
        zz >>= 7
    out.append(zz)
    return bytes(out)


def _avro_string(data: bytes) -> bytes:
    return _avro_long(len(data)) + data


def _block(container: bytes, count: int, data: bytes) -> bytes:
    sync = container[-16:]
    return _avro_long(count) + _avro_long(len(data)) + data + sync


def test_case6_zero_byte_records_are_budgeted_per_call_not_per_block() -> None:
    # Issue 14 case 6: 20 blocks of 2**20 empty records each, a few hundred bytes in all.
    empty = dataclasses.make_dataclass("Empty", [])
    codec = polycodec.Codec(empty, "avro")
    header = codec.encode_many([])
    one_block = _block(header, 1 << 20, b"")
    with pytest.raises(polycodec.DecodeError, match="take no bytes"):
        codec.decode_many(header + one_block * 20)
    # Within the budget, empty records decode, across blocks too.
    assert len(codec.decode_many(header + _block(header, 1000, b"") * 3)) == 3000
    # Nulls inside lists count against the same per-call budget.
    nulls = dataclasses.make_dataclass("Nulls", [("v", List[None])])
    codec = polycodec.Codec(nulls, "avro")
    header = codec.encode_many([])
    datum = _avro_long(1 << 19) + b"\x00"
    with pytest.raises(polycodec.DecodeError, match="take no bytes"):
        codec.decode_many(header + _block(header, 3, datum * 3))
    assert len(codec.decode_many(header + _block(header, 1, datum))[0].v) == 1 << 19


_BOMB_UNDER_A_MEMORY_LIMIT = r"""
import dataclasses, resource, sys, polycodec
box = dataclasses.make_dataclass("Box", [("v", bytes)])
codec = polycodec.Codec(box, "avro", compression="deflate")
blob = open(sys.argv[1], "rb").read()
vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1]) * 1024
limit = vm + (int(sys.argv[2]) << 20)
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
try:
    codec.decode_many(blob)
    print("decoded")
except (polycodec.DecodeError, MemoryError) as exc:
    print(type(exc).__name__, len(str(exc)))
"""


@pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc (Linux)"
)
def test_case7_deflate_bomb_message_is_short_and_memory_errors_are_not_panics(
    tmp_path: "os.PathLike[str]",
) -> None:
    import subprocess
    import sys
    import zlib

    box = dataclasses.make_dataclass("Box", [("v", bytes)])
    codec = polycodec.Codec(box, "avro", compression="deflate")
    header = codec.encode_many([])
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(1 << 20)
    bomb = b"".join(compressor.compress(zeros) for _ in range(140)) + compressor.flush()
    blob = header + _block(header, 1, bomb)
    assert len(blob) < 200_000
    # The inflated bytes (128 MiB at the limit) are not in the message.
    with pytest.raises(polycodec.DecodeError, match="inflates to more than") as info:
        codec.decode_many(blob)
    assert len(str(info.value)) < 200
    # Under an address-space limit the buffer may fail to grow: a MemoryError, not a panic.
    path = os.path.join(str(tmp_path), "bomb.avro")
    with open(path, "wb") as f:
        f.write(blob)
    package = os.path.dirname(os.path.dirname(polycodec.__file__))
    env = dict(os.environ, PYTHONPATH=package)
    for extra_mib in [0, 32, 512]:
        run = subprocess.run(
            [sys.executable, "-c", _BOMB_UNDER_A_MEMORY_LIMIT, path, str(extra_mib)],
            capture_output=True,
            text=True,
            env=env,
        )
        assert run.returncode == 0, run.stderr[-2000:]
        outcome, length = run.stdout.split()
        assert outcome in ("DecodeError", "MemoryError") and int(length) < 200, run.stdout


# ---- issue 27, item 9 ----


def test_issue27_item9_truncated_deflate_stream_says_so() -> None:
    import zlib

    box = dataclasses.make_dataclass("Box", [("v", bytes)])
    codec = polycodec.Codec(box, "avro", compression="deflate")
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    plain = b"\x0cpayload"  # one record: bytes of length 6... then more than the stream holds
    packed = compressor.compress(plain * 50) + compressor.flush()
    for cut in (1, len(packed) // 2, len(packed) - 1):
        data = _single_block(codec, box(b"x"), packed[:cut])
        with pytest.raises(polycodec.DecodeError) as caught:
            codec.decode_many(data)
        message = str(caught.value)
        # Used to end in "does not inflate: Buf", miniz_oxide's error code.
        assert "Buf" not in message
        assert "does not inflate: the deflate stream is truncated" in message
    corrupt = _single_block(codec, box(b"x"), b"\xff" * 8)
    with pytest.raises(
        polycodec.DecodeError, match="does not inflate: the deflate data is corrupt"
    ):
        codec.decode_many(corrupt)


@dataclasses.dataclass
class _Tags:
    tags: List[str]
    scores: Dict[str, int]


@pytest.mark.parametrize("declared_delta", [-1, 1, 100])
def test_issue27_item9_array_and_map_block_sizes_must_match_their_items(
    declared_delta: int,
) -> None:
    import fastavro

    codec = polycodec.Codec(_Tags, "avro")
    items = _avro_string(b"ab") + _avro_string(b"c")
    entries = _avro_string(b"k") + _avro_long(7)
    good = (
        _avro_long(-2)
        + _avro_long(len(items))
        + items
        + b"\x00"
        + _avro_long(-1)
        + _avro_long(len(entries))
        + entries
        + b"\x00"
    )
    # The oracle reads the sized blocks as we do.
    schema = fastavro.parse_schema(codec.schema)
    import io

    assert fastavro.schemaless_reader(io.BytesIO(good), schema) == {
        "tags": ["ab", "c"],
        "scores": {"k": 7},
    }
    assert codec.decode_one(good) == _Tags(["ab", "c"], {"k": 7})
    bad_array = (
        _avro_long(-2)
        + _avro_long(len(items) + declared_delta)
        + items
        + b"\x00"
        + _avro_long(-1)
        + _avro_long(len(entries))
        + entries
        + b"\x00"
    )
    bad_map = (
        _avro_long(-2)
        + _avro_long(len(items))
        + items
        + b"\x00"
        + _avro_long(-1)
        + _avro_long(len(entries) + declared_delta)
        + entries
        + b"\x00"
    )
    # Used to be accepted: the declared size was read and ignored.
    for data, path in ((bad_array, "$.tags"), (bad_map, "$.scores")):
        with pytest.raises(polycodec.DecodeError, match="declares") as caught:
            codec.decode_one(data)
        assert caught.value.path == path
        assert not isinstance(caught.value, polycodec.ValidationError)
