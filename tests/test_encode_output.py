"""JSON and MessagePack `encode_many` hand their output to the `bytes` object a stretch at a time
(src/py/output.rs): large outputs, outputs that grow or shrink from one call to the next, array
headers rewritten after stretches were handed over, errors after stretches were handed over
(the unfinished object is freed, nothing leaks), against the json, msgspec and msgpack
oracles."""

from __future__ import annotations

import dataclasses
import decimal
import gc
import json
import sys
import tracemalloc
from typing import Any, Iterator, Optional

import msgpack
import msgspec
import pytest

import polycodec
from polycodec import Codec


@dataclasses.dataclass
class Item:
    id: int
    name: str
    tags: list[str]
    note: Optional[str] = None


FORMATS = ["json", "msgpack"]


def _oracle(fmt: str, values: Any) -> bytes:
    return msgspec.json.encode(values) if fmt == "json" else msgspec.msgpack.encode(values)


def _items(count: int, width: int = 40) -> list[Item]:
    return [
        Item(i, f"item-{i}-" + "x" * width, [f"t{i}", 'é"\\\n'], None if i % 3 else "n")
        for i in range(count)
    ]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("count", [0, 1, 10, 15, 16, 100, 1000, 5000, 70000])
def test_encode_output_many_matches_oracles_at_every_size(fmt: str, count: int) -> None:
    codec = Codec(Item, fmt)
    values = _items(count, width=4)
    data = codec.encode_many(values)
    assert data == _oracle(fmt, values)
    loaded = json.loads(data) if fmt == "json" else msgpack.unpackb(data)
    assert loaded == [dataclasses.asdict(v) for v in values]


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_growing_and_shrinking_between_calls(fmt: str) -> None:
    # The bytes object is first allocated at the previous output's size: a larger output
    # grows it, a smaller one is shrunk to its length.
    codec = Codec(Item, fmt)
    for count in [3, 4000, 10, 9000, 0, 2500, 2500, 50, 7000]:
        values = _items(count, width=count % 70)
        assert codec.encode_many(values) == _oracle(fmt, values), count


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_single_item_over_64k_between_calls(fmt: str) -> None:
    # An item larger than the buffer the thread keeps (64 KiB): the next call's buffer is sized
    # from the previous call's longest stretch. Items that grow, shrink, and sit among small ones
    # (so a stretch ends mid-list), with the same codec, give the oracle's bytes every time.
    codec = Codec(Item, fmt)
    for widths in [
        [100_000],
        [100_000],
        [3, 250_000, 7],
        [70_000, 70_000, 70_000],
        [5] * 50,
        [65_000, 1, 90_000] + [2] * 30,
        [300_000],
        [10],
    ]:
        values = [
            Item(i, "é" * (w // 2) if i % 2 else "x" * w, ["t"], None) for i, w in enumerate(widths)
        ]
        assert codec.encode_many(values) == _oracle(fmt, values), widths


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("count", [0, 3, 15, 16, 2000, 70000])
def test_encode_output_many_of_tuples_and_iterables(fmt: str, count: int) -> None:
    # An iterable has no length: MessagePack's array header, written for 0 items, is rewritten
    # for the count, in the buffer or in the stretches already handed over (and longer then).
    codec = Codec(Item, fmt)
    values = _items(count, width=4)
    expected = _oracle(fmt, values)

    def generate() -> Iterator[Item]:
        yield from values

    assert codec.encode_many(tuple(values)) == expected
    assert codec.encode_many(generate()) == expected
    assert codec.encode_many(iter(values)) == expected


class Growing(decimal.Decimal):
    """A Decimal whose text, asked for while its list is encoded, grows or shrinks that list."""

    target: list[Any] = []
    change = 0

    def __str__(self) -> str:
        if Growing.change > 0:
            Growing.target.extend(Priced(decimal.Decimal(1), "x") for _ in range(Growing.change))
        elif Growing.change < 0:
            del Growing.target[Growing.change :]
        Growing.change = 0
        return super().__str__()


@dataclasses.dataclass
class Priced:
    price: decimal.Decimal
    name: str


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("change", [5, 70000, -3])
def test_encode_output_many_list_resized_while_encoded(fmt: str, change: int) -> None:
    codec = Codec(Priced, fmt)
    values: list[Any] = [Priced(decimal.Decimal("1.5"), "a" * 50) for _ in range(3000)]
    values[2900] = Priced(Growing("2.5"), "g")
    Growing.target, Growing.change = values, change
    data = codec.encode_many(values)
    loaded = json.loads(data) if fmt == "json" else msgpack.unpackb(data)
    assert len(loaded) == len(values)
    assert loaded[2900] == {"price": "2.5", "name": "g"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_result_is_an_ordinary_bytes_object(fmt: str) -> None:
    codec = Codec(Item, fmt)
    data = codec.encode_many(_items(3000))
    assert type(data) is bytes
    # No reference is kept anywhere: as many as an ordinary bytes object held the same way has
    # (the name and getrefcount's argument; 3.14 passes a local to a call borrowed, one less).
    ordinary = bytes(bytearray(data))
    assert sys.getrefcount(data) == sys.getrefcount(ordinary)
    assert data == bytes(bytearray(data))
    assert hash(data) == hash(bytes(bytearray(data)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_error_after_stretches_keeps_path_and_message(fmt: str) -> None:
    codec = Codec(Item, fmt)
    values: list[Any] = _items(3000)
    values[2500] = Item(1, 2, [])  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError) as caught:
        codec.encode_many(values)
    assert str(caught.value) == "expected str, got int (at $[2500].name)"
    # The codec still works, and at the right size, after the failed call.
    good = _items(3000)
    assert codec.encode_many(good) == _oracle(fmt, good)


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_error_after_stretches_leaks_nothing(fmt: str) -> None:
    codec = Codec(Item, fmt)
    values: list[Any] = _items(3000)
    codec.encode_many(values)  # the size hint: the failing calls allocate the whole output
    values[-1] = Item(1, 2, [])  # type: ignore[arg-type]
    gc.collect()
    tracemalloc.start()
    try:
        for _ in range(3):  # warm-up: exception and traceback objects, caches
            with pytest.raises(polycodec.EncodeError):
                codec.encode_many(values)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            with pytest.raises(polycodec.EncodeError):
                codec.encode_many(values)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # Each unfinished output is about 300 KB: one kept per call would be 9 MB.
    assert after - before < 64 * 1024


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_output_many_success_leaks_nothing(fmt: str) -> None:
    codec = Codec(Item, fmt)
    values = _items(3000)
    tracemalloc.start()
    try:
        for _ in range(3):
            codec.encode_many(values)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            codec.encode_many(values)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024
