"""Malformed pickles: truncation, bad opcodes, memo and stack errors, oversized lengths, deep
nesting, and a mutation fuzz loop. Each must raise DecodeError (or decode to a valid value),
never crash, hang or raise anything else."""

from __future__ import annotations

import dataclasses
import datetime
import io
import pickle
import random
import struct
import sys
import threading
import uuid
import zoneinfo
from decimal import Decimal
from typing import Any, Optional

import pytest

import polycodec
from json_models import EVERYTHING, Everything, Tree


@dataclasses.dataclass
class Sample:
    name: str
    values: list[int]
    when: datetime.datetime
    extra: Any
    child: Optional[Sample] = None


SAMPLE = Sample(
    "s",
    [1, 2, 300, 70000, -5, 2**70],
    datetime.datetime(2020, 5, 6, 7, 8, 9, 10, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
    {"k": [1.5, b"x", (1, 2), {3}, frozenset(), Decimal("1.1"), uuid.UUID(int=3)]},
    Sample("c", [], datetime.datetime(2000, 1, 1), None),
)


def codecs() -> list[polycodec.Codec[Any]]:
    return [
        polycodec.Codec(Sample, "pickle"),
        polycodec.Codec(Any, "pickle"),
        polycodec.Codec(Everything, "pickle"),
        polycodec.Codec(Tree, "pickle"),
    ]


def valid_pickles() -> list[bytes]:
    out = []
    for protocol in [2, 3, 4, 5]:
        out.append(pickle.dumps(SAMPLE, protocol))
        out.append(pickle.dumps(EVERYTHING, protocol))
        out.append(polycodec.Codec(Sample, "pickle", protocol=protocol).encode_one(SAMPLE))
        out.append(polycodec.Codec(Everything, "pickle", protocol=protocol).encode_one(EVERYTHING))
        out.append(pickle.dumps(Tree(1, [Tree(2, [Tree(3)])]), protocol))
    return out


def decode_or_decode_error(codec: polycodec.Codec[Any], data: bytes) -> None:
    try:
        codec.decode_one(data)
    except polycodec.DecodeError:
        pass


def test_every_truncation_is_a_decode_error() -> None:
    for data in valid_pickles():
        for codec in codecs():
            for end in range(len(data)):
                with pytest.raises(polycodec.DecodeError):
                    codec.decode_one(data[:end])


def test_trailing_data_is_refused() -> None:
    codec = polycodec.Codec(int, "pickle")
    with pytest.raises(polycodec.DecodeError, match="trailing data"):
        codec.decode_one(pickle.dumps(1) + b"\x00")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "truncated"),
        (b"\x80\x06N.", "protocol 6"),
        (b"\x80\x04\xff.", "unknown opcode"),
        (b"\x80\x04\x99.", "unknown opcode"),
        (b"\x80\x04h\x00.", "never stored"),
        (b"\x80\x04j\xff\xff\xff\xff.", "never stored"),
        (b"\x80\x04Nr\xff\xff\xff\x7f.", "memo index"),
        (b"\x80\x04Nq\x05h\x04.", "never stored"),
        (b"\x80\x04a.", "underflow"),
        (b"\x80\x04.", "STOP with an empty"),
        (b"\x80\x04NN.", "2 values"),
        (b"\x80\x04(N.", "unclosed MARK"),
        (b"\x80\x04e.", "MARK"),
        (b"\x80\x04(1.", "STOP with an empty"),
        (b"\x80\x04(\x85.", "underflow"),
        (b"\x80\x04\x86.", "underflow"),
        (b"\x80\x04R.", "underflow"),
        (b"\x80\x04Ns.", "underflow"),
        (b"\x80\x04}(Nu.", "odd number"),
        (b"\x80\x04NNa.", "not a list"),
        (b"\x80\x04NNNs.", "not a dict"),
        (b"\x80\x04N(N\x90.", "not a set"),
        (b"\x80\x04X\xff\xff\xff\xffabc.", "exceeds"),
        (b"\x80\x04\x8d" + struct.pack("<Q", 2**63) + b"abc.", "exceeds"),
        (b"\x80\x04\x8e" + struct.pack("<Q", 2**40) + b".", "exceeds"),
        (b"\x80\x05\x96" + struct.pack("<Q", 2**62) + b".", "exceeds"),
        (b"\x80\x04\x95" + struct.pack("<Q", 2**50) + b"N.", "exceeds"),
        (b"\x80\x04\x8b\xff\xff\xff\x7f\x00.", "exceeds"),
        (b"\x80\x04\x8b\xff\xff\xff\xff.", "negative"),
        (b"\x80\x04NN\x93.", "two str"),
        (b"\x80\x04cos\nsystem.", "truncated"),
        (b"\x80\x04S'abc'\n.", "Python 2"),
        (b"\x80\x04I1\n.", "text opcode"),
        (b"\x80\x04g0\n.", "text opcode"),
        (b"\x80\x04\x8c\x02\xff\xfe.", "UTF-8"),
    ],
)
def test_malformed_opcode_sequences(data: bytes, message: str) -> None:
    with pytest.raises(polycodec.DecodeError, match=message):
        polycodec.Codec(Any, "pickle").decode_one(data)


def nested_lists(depth: int) -> bytes:
    return b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b"."


def test_deep_nesting_is_a_decode_error() -> None:
    deep = nested_lists(200_000)
    for target in [Any, list[Any]]:
        with pytest.raises(polycodec.DecodeError, match="deeper than 1024"):
            polycodec.Codec(target, "pickle").decode_one(deep)
    assert polycodec.Codec(Any, "pickle").decode_one(nested_lists(500)) is not None


def test_deep_recursive_type_is_a_decode_error() -> None:
    value = Tree(0)
    for _ in range(2000):
        value = Tree(0, [value])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)
    try:
        # The pure-Python pickler (the C one is bounded by the C stack from 3.13 on, whatever
        # the recursion limit) writes the same opcodes.
        buffer = io.BytesIO()
        pickle._Pickler(buffer, 5).dump(value)
        data = buffer.getvalue()
    finally:
        sys.setrecursionlimit(limit)
    with pytest.raises(polycodec.DecodeError, match="deeper than 1024"):
        polycodec.Codec(Tree, "pickle").decode_one(data)


def test_deep_nesting_on_a_small_thread_stack() -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with pytest.raises(polycodec.DecodeError):
                polycodec.Codec(Any, "pickle").decode_one(nested_lists(5000))
            polycodec.Codec(Any, "pickle").decode_one(nested_lists(1000))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    previous = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert not errors, errors


def test_recursive_structure_is_a_decode_error() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(polycodec.DecodeError, match="recursive"):
        polycodec.Codec(Any, "pickle").decode_one(pickle.dumps(cyclic))


def test_shared_references_decode_once() -> None:
    # 2**40 paths through 40 levels of (x, x): converted once per shared value, not per path.
    parts = [b"\x80\x04N"]
    for index in range(40):
        parts.append(b"\x94h" + bytes([index]) + b"\x86")
    data = b"".join(parts) + b"."
    value = polycodec.Codec(Any, "pickle").decode_one(data)
    for _ in range(40):
        assert value[0] is value[1]
        value = value[0]


MUTATIONS = 4000


def mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.random()
        position = rng.randrange(len(buf) + 1)
        if choice < 0.4 and buf:
            buf[min(position, len(buf) - 1)] = rng.randrange(256)
        elif choice < 0.55:
            buf.insert(position, rng.randrange(256))
        elif choice < 0.7 and buf:
            del buf[min(position, len(buf) - 1)]
        elif choice < 0.8:
            start = rng.randrange(len(buf) + 1)
            chunk = buf[start : start + rng.randint(1, 16)]
            buf[position:position] = chunk
        elif choice < 0.9 and buf:
            buf[min(position, len(buf) - 1)] = rng.choice(b"()0.ahjqrsuebR\x81\x85\x86\x87\x94\x95")
        else:
            del buf[position:]
    return bytes(buf)


def test_mutation_fuzz() -> None:
    rng = random.Random(20261130)
    seeds = valid_pickles()
    targets = codecs()
    for _ in range(MUTATIONS):
        data = mutate(rng, rng.choice(seeds))
        for codec in targets:
            decode_or_decode_error(codec, data)


def shared_tuple_tower(levels: int, container: bytes) -> bytes:
    # t0 = (); t[i+1] = (t[i], t[i]) through the memo; then one set/dict holding the top.
    parts = [b"\x80\x04", container, b")\x940"]
    for index in range(levels):
        parts.append(b"h" + bytes([index]) + b"h" + bytes([index]) + b"\x86\x940")
    parts.append(b"h" + bytes([levels]))
    return b"".join(parts)


@pytest.mark.parametrize("target", [Any, set[Any], frozenset[Any], dict[Any, int]], ids=str)
def test_exponential_hashing_is_refused(target: Any) -> None:
    # Hashing the top tuple would visit 2**60 tuples: pickle.loads would never return.
    levels = 60
    if target == dict[Any, int]:
        data = shared_tuple_tower(levels, b"}") + b"K\x01s."
    elif target == frozenset[Any]:
        data = b"\x80\x04(" + shared_tuple_tower(levels, b"")[2:] + b"\x91."
    else:
        data = shared_tuple_tower(levels, b"\x8f(") + b"\x90."
    with pytest.raises(polycodec.DecodeError, match="exponential"):
        polycodec.Codec(target, "pickle").decode_one(data)
    # A shallow tower is fine.
    small = shared_tuple_tower(5, b"\x8f(") + b"\x90."
    assert len(polycodec.Codec(Any, "pickle").decode_one(small)) == 1


def test_lax_mode_reads_numeric_text() -> None:
    assert polycodec.Codec(int, "pickle", strict=False).decode_one(pickle.dumps("12")) == 12
    assert polycodec.Codec(float, "pickle", strict=False).decode_one(pickle.dumps("1.5")) == 1.5
    assert polycodec.Codec(int, "pickle", strict=False).decode_one(pickle.dumps(3.0)) == 3
    with pytest.raises(polycodec.ValidationError):
        polycodec.Codec(int, "pickle").decode_one(pickle.dumps("12"))


@dataclasses.dataclass
class Strict:
    a: int


def test_forbid_unknown_fields_applies_to_state() -> None:
    data = pickle.dumps(Strict(1))
    data = data.replace(b"\x8c\x01a", b"\x8c\x01b")
    assert polycodec.Codec(Strict, "pickle", forbid_unknown_fields=False).decode_one(
        pickle.dumps(Strict(1))
    ) == Strict(1)
    with pytest.raises(polycodec.ValidationError, match="unknown field `b`"):
        polycodec.Codec(Strict, "pickle", forbid_unknown_fields=True).decode_one(data)
    with pytest.raises(polycodec.ValidationError, match="missing required field `a`"):
        polycodec.Codec(Strict, "pickle").decode_one(data)
