"""The short per-call entry of Codec.encode_one/encode_many/decode_one/decode_many (one
positional argument, exact bytes for decoding) agrees with the full path PyO3 provides for every
other call: same values, same errors, same signatures."""

from __future__ import annotations

import dataclasses
import json

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
