"""The short per-call entry of Codec.encode_one/encode_many/decode_one/decode_many (one
positional argument, exact bytes for decoding) agrees with the full path PyO3 provides for every
other call: same values, same errors, same signatures."""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
import sys
import threading
from typing import Optional

import msgspec
import pytest

import polycodec
from polycodec import Codec, Extension


@dataclasses.dataclass
class Point:
    x: int
    label: str


class Tagged:
    def __init__(self, inner: Point) -> None:
        self.inner = inner


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_entry_short_and_full_paths_agree(fmt: str) -> None:
    codec = Codec(Point, fmt)
    value = Point(3, "p")
    data = codec.encode_one(value)
    oracle = msgspec.json.encode(value) if fmt == "json" else msgspec.msgpack.encode(value)
    assert data == oracle
    assert codec.decode_one(data) == value
    assert codec.decode_one(bytearray(data)) == value  # full path
    assert codec.decode_one(memoryview(data)) == value  # full path

    class Sub(bytes):
        pass

    assert codec.decode_one(Sub(data)) == value  # a bytes subclass takes the full path
    many = codec.encode_many([value, value])
    assert codec.decode_many(many) == [value, value]
    assert codec.decode_many(bytearray(many)) == [value, value]
    assert Codec.decode_one(codec, data) == value


def test_entry_errors_are_unchanged() -> None:
    codec = Codec(Point)
    with pytest.raises(polycodec.ValidationError, match=r"\$\.x"):
        codec.decode_one(b'{"x":"1","label":"a"}')
    with pytest.raises(polycodec.EncodeError):
        codec.encode_one(5)
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        codec.decode_one()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 1 positional arguments but 2 were given"):
        codec.encode_one(Point(1, "a"), 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="writer_schema= applies to format"):
        codec.decode_one(b"{}", writer_schema={"type": "int"})
    with pytest.raises(TypeError, match="expected bytes"):
        codec.decode_many(5)
    with pytest.raises(TypeError, match="descriptor 'decode_one'"):
        Codec.decode_one(5, b"{}")  # type: ignore[arg-type]


def test_entry_signatures_and_docs_kept() -> None:
    for name in ("encode_one", "encode_many", "decode_one", "decode_many"):
        method = getattr(Codec, name)
        assert method.__doc__ and method.__text_signature__
        assert method.__name__ == name
    assert "writer_schema" in (Codec.decode_one.__text_signature__ or "")


def test_entry_nested_encode_keeps_its_own_output() -> None:
    inner_codec = Codec(Point)

    def to_wire(value: Tagged) -> str:
        # An encode inside an encode: the inner call must not disturb the outer output.
        return inner_codec.encode_one(value.inner).decode() * 40

    outer = Codec(
        list[Tagged],
        extensions={Tagged: Extension(str, encode=to_wire, decode=lambda s: s)},
    )
    values = [Tagged(Point(i, "q" * i)) for i in range(5)]
    got = json.loads(outer.encode_one(values))
    assert got == [
        json.dumps({"x": i, "label": "q" * i}, separators=(",", ":")) * 40 for i in range(5)
    ]


def test_entry_large_output_then_small() -> None:
    codec = Codec(list[str])
    big = ["x" * 1000] * 200
    assert json.loads(codec.encode_one(big)) == big
    assert codec.encode_one(["a"]) == b'["a"]'
    assert json.loads(codec.encode_one(big)) == big


# ---- the short path and PyO3's deferred-release pool (the cause of efc8cef's revert) ----
#
# The first version of the short entry ran outside PyO3's trampoline, so PyO3 took the thread
# for detached and queued every `Py` dropped during the call (the pickle encoder drops one per
# memoized object) in its global pool until the next call through a PyO3 wrapper: references
# piled up for as long as only short calls ran, and pickle encodes slowed down erratically.

FORMATS = ["json", "msgpack", "avro", "pickle"]


@dataclasses.dataclass
class Row:
    name: str
    size: int
    tags: list[str]
    note: Optional[str] = None


def _row(text: str) -> Row:
    return Row(text, 7, [text, "t"], note=text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_entry_short_calls_release_references_at_once(fmt: str) -> None:
    codec = Codec(Row, fmt)
    text = "".join(["ref", "erence"])  # a str of its own, met several times per value
    value = _row(text)
    values = [value, _row(text)]
    payload = codec.encode_one(value)
    many = codec.encode_many(values)
    before = sys.getrefcount(text)
    # Only short calls (one positional argument, exact bytes) between the two counts: nothing
    # may stay referenced once each call has returned.
    for _ in range(50):
        codec.encode_one(value)
        codec.encode_many(values)
        codec.decode_one(payload)
        codec.decode_many(many)
    assert sys.getrefcount(text) == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_entry_failed_short_calls_release_references_at_once(fmt: str) -> None:
    codec = Codec(Row, fmt)
    text = "".join(["fail", "ing"])
    bad = Row(text, "not an int", [text])  # type: ignore[arg-type]
    before = sys.getrefcount(text)
    for _ in range(20):
        with pytest.raises(polycodec.EncodeError):
            codec.encode_one(bad)
        with pytest.raises(polycodec.EncodeError):
            codec.encode_many([_row(text), bad])
    assert sys.getrefcount(text) == before


def _references(
    values: list[Row],
) -> tuple[dict[str, Codec], dict[str, bytes], dict[str, bytes]]:
    codecs = {fmt: Codec(Row, fmt) for fmt in FORMATS}
    one = {fmt: codec.encode_one(values[0]) for fmt, codec in codecs.items()}
    many = {fmt: codec.encode_many(values) for fmt, codec in codecs.items()}
    return codecs, one, many


def _many_matches(codec: Codec, fmt: str, values: list[Row], reference: bytes) -> bool:
    data = codec.encode_many(values)
    if fmt == "avro":  # an object container file: a random sync marker in every file
        return bool(codec.decode_many(data) == values and len(data) == len(reference))
    return data == reference


def test_entry_interleaved_encodes_give_the_reference_bytes() -> None:
    values = [_row(f"row{i}" * (i + 1)) for i in range(6)]
    codecs, one, many = _references(values)
    assert json.loads(one["json"]) == dataclasses.asdict(values[0])
    assert one["msgpack"] == msgspec.msgpack.encode(values[0])
    assert pickle.loads(one["pickle"]) == values[0]
    assert pickle.loads(many["pickle"]) == values
    big = [_row("x" * 5000) for _ in range(20)]  # output over the kept buffer size
    big_json = codecs["json"].encode_many(big)
    rng = random.Random(10)
    for _ in range(300):
        fmt = rng.choice(FORMATS)
        op = rng.randrange(3)
        if op == 0:
            assert codecs[fmt].encode_one(values[0]) == one[fmt]
        elif op == 1:
            assert _many_matches(codecs[fmt], fmt, values, many[fmt])
        else:
            assert codecs["json"].encode_many(big) == big_json


def test_entry_nested_pickle_and_json_encodes_from_user_code() -> None:
    inner_json = Codec(Point)
    inner_pickle = Codec(Point, "pickle")
    point = Point(4, "nested")
    json_ref = inner_json.encode_one(point)
    pickle_ref = inner_pickle.encode_one(point)

    def to_wire(value: Tagged) -> str:
        # Encodes inside an encode (of another format): each must get its own whole output.
        assert inner_pickle.encode_one(value.inner) == pickle_ref
        assert inner_json.encode_one(value.inner) == json_ref
        return inner_json.encode_one(value.inner).decode() * 30

    for fmt in ["json", "msgpack", "pickle"]:
        outer = Codec(
            list[Tagged],
            fmt,
            extensions={Tagged: Extension(str, encode=to_wire, decode=lambda s: s)},
        )
        data = outer.encode_one([Tagged(point)] * 3)
        assert outer.decode_one(data) == [json_ref.decode() * 30] * 3


def test_entry_threads_encode_interleaved() -> None:
    values = [_row(f"thread{i}") for i in range(4)]
    codecs, one, many = _references(values)
    failures: list[str] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            fmt = rng.choice(FORMATS)
            if rng.random() < 0.5:
                ok = codecs[fmt].encode_one(values[0]) == one[fmt]
            else:
                ok = _many_matches(codecs[fmt], fmt, values, many[fmt])
            if not ok:
                failures.append(fmt)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
