"""A micro-benchmark for record field access: a 1000-item list of a small dataclass, encoded and
decoded as JSON and MessagePack by polycodec (plain dataclass and ``slots=True``) and by msgspec
(the same fields as a ``msgspec.Struct``), timed with ``timeit`` in one process, interleaved.

Run it with ``PYTHONPATH=python python -m benches.micro_slots`` (optionally ``--rounds N``).
It prints each case's best time per call and its ratio to msgspec's Struct. Times on a loaded
machine vary by several percent between runs; the ratios, taken within one run, vary less.
"""

from __future__ import annotations

import argparse
import dataclasses
import timeit
from typing import Any, Callable

import msgspec

import polycodec

COUNT = 1000


@dataclasses.dataclass
class Plain:
    id: int
    name: str
    score: float
    active: bool
    tags: list[str]


@dataclasses.dataclass(slots=True)
class Slotted:
    id: int
    name: str
    score: float
    active: bool
    tags: list[str]


class Struct(msgspec.Struct):
    id: int
    name: str
    score: float
    active: bool
    tags: list[str]


def _items(cls: Any) -> list[Any]:
    return [
        cls(id=i, name=f"item-{i}", score=i * 0.5, active=i % 2 == 0, tags=["a", "b"])
        for i in range(COUNT)
    ]


def _cases(fmt: str) -> dict[str, dict[str, Callable[[], object]]]:
    """For each operation, the callables to compare (their names are the implementations)."""
    cases: dict[str, dict[str, Callable[[], object]]] = {"encode": {}, "decode": {}}
    if fmt == "json":
        encoder: Any = msgspec.json.Encoder()
        decoder: Any = msgspec.json.Decoder(list[Struct])
    else:
        encoder = msgspec.msgpack.Encoder()
        decoder = msgspec.msgpack.Decoder(list[Struct])
    structs = _items(Struct)
    data = encoder.encode(structs)
    cases["encode"]["msgspec Struct"] = lambda: encoder.encode(structs)
    cases["decode"]["msgspec Struct"] = lambda: decoder.decode(data)
    for label, cls in (("polycodec slots", Slotted), ("polycodec dataclass", Plain)):
        codec: Any = polycodec.Codec(cls, format=fmt)
        values = _items(cls)
        assert codec.encode_many(values) == data, (fmt, label)
        assert codec.decode_many(data) == values, (fmt, label)
        cases["encode"][label] = lambda c=codec, v=values: c.encode_many(v)
        cases["decode"][label] = lambda c=codec: c.decode_many(data)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()
    for fmt in ("json", "msgpack"):
        for op, impls in _cases(fmt).items():
            best = {name: float("inf") for name in impls}
            for _ in range(args.rounds):
                for name, call in impls.items():
                    seconds = min(timeit.repeat(call, number=args.number, repeat=1))
                    best[name] = min(best[name], seconds / args.number)
            base = best["msgspec Struct"]
            for name, seconds in best.items():
                print(f"{fmt:8} {op:7} {name:20} {seconds * 1e6:8.1f} us  {seconds / base:5.2f}x")


if __name__ == "__main__":
    main()
