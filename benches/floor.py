"""The decode floor: what creating the decoded instances costs on its own, beside full decodes.

Run it with ``PYTHONPATH=python python -m benches.floor`` (``--rounds N``, ``--number N``,
``--section floor|shared``). Everything is timed with ``timeit`` in one process, interleaved
round by round, and each case reports its best time per call.

Section ``floor``: 1,000 instances of a small five-field record (int, str, float, bool,
list[str]) as a plain dataclass, a ``slots=True`` dataclass and a ``msgspec.Struct``:

- ``floor rust``: ``_polycodec._floor_create``, a diagnostic that creates the instances from
  ready field values exactly as polycodec's decoders do (the class's field access,
  ``tp_new`` without ``__init__``, one store per field, the collector paused) and nothing else;
- ``floor python``: the cheapest Python idiom, ``object.__new__(cls)`` and a
  ``__dict__.update`` (plain) or ``cls(*row)`` (slots, Struct);
- ``portable``: the plain dataclass's floor with its fields stored through
  ``object.__setattr__``'s generic path rather than written into CPython's inline values (3.11
  and 3.13+; ``_floor_create(..., portable=True)``). Its decodes are the ``dataclass`` rows of a
  run with ``POLYCODEC_PORTABLE=inline_values`` (read once, when the module loads);
- ``msgspec.convert``: msgspec building the Structs from dicts of ready values;
- ``decode <format>``: polycodec's (and for JSON/MessagePack msgspec's) full decode of the
  same 1,000 records, which also parses the input and creates the strs, floats and lists.

Ratios are to the msgspec Struct decode of the same format (``x msgspec``) and to the Rust floor
of the same class (``x floor``).

Section ``shared``: the other decoders on the benchmark models: polycodec's pickle decode beside
``pickle.loads`` of the same bytes, and its Avro decode beside fastavro with the hand-written
dict conversion the benchmark's fastavro adapter uses (a batch of 100 objects per model; one
~1,000-node object for ``filesystem``, Avro only).
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import timeit
from typing import Any, Callable

import msgspec

import polycodec
from polycodec import _polycodec

from .adapters.fastavro_adapter import ADAPTERS as FASTAVRO

# The same 1,000 five-field records in the same three classes as the slots micro-benchmark.
from .micro_slots import COUNT, Plain, Slotted, Struct
from .models import MODELS, generate

NAMES = [f.name for f in dataclasses.fields(Plain)]

#: The label of each class's cases; ``portable`` is the plain dataclass's floor again, with its
#: fields stored the portable way instead of written into CPython's inline values (3.11 and
#: 3.13+).
CLASSES: tuple[tuple[str, type, bool], ...] = (
    ("dataclass", Plain, False),
    ("portable", Plain, True),
    ("slots", Slotted, False),
)


def _floor(cls: type, rows: list[tuple[Any, ...]], portable: bool) -> object:
    return _polycodec._floor_create(cls, NAMES, rows, portable=portable)


def _rows() -> list[tuple[Any, ...]]:
    return [(i, f"item-{i}", i * 0.5, i % 2 == 0, ["a", "b"]) for i in range(COUNT)]


def _floor_cases() -> dict[str, Callable[[], object]]:
    rows = _rows()
    dicts = [dict(zip(NAMES, row)) for row in rows]
    new = object.__new__
    cases: dict[str, Callable[[], object]] = {}
    # The first instance must be made by __init__: CPython 3.11 shares an instance-attribute key
    # among a class's instances only while the shared keys have room, and every instance made
    # before the keys are filled shrinks that room. Instances made by object.__new__ and given
    # a __dict__ first would leave no room, and every later instance would get a real dict.
    assert Plain(*rows[0]) == Plain(*rows[0])

    def python_plain() -> list[Plain]:
        out = []
        for d in dicts:
            instance = new(Plain)
            instance.__dict__.update(d)
            out.append(instance)
        return out

    assert python_plain() == [Plain(*row) for row in rows]
    for label, cls, portable in CLASSES:
        made = _floor(cls, rows, portable)
        assert made == [cls(*row) for row in rows], label
        cases[f"{label:9} floor rust"] = lambda c=cls, p=portable: _floor(c, rows, p)
    cases["dataclass floor python"] = python_plain
    cases["slots     floor python"] = lambda: [Slotted(*row) for row in rows]
    cases["Struct    floor python"] = lambda: [Struct(*row) for row in rows]
    cases["Struct    msgspec.convert"] = lambda: msgspec.convert(dicts, list[Struct])
    for fmt in ("json", "msgpack", "pickle", "avro"):
        if fmt in ("json", "msgpack"):
            module: Any = getattr(msgspec, fmt)
            decoder = module.Decoder(list[Struct])
            data = module.Encoder().encode([Struct(*row) for row in rows])
            assert decoder.decode(data) == [Struct(*row) for row in rows]
            cases[f"Struct    decode {fmt}"] = lambda d=decoder, b=data: d.decode(b)
        for label, cls, portable in CLASSES:
            if portable:
                # The switch is read once per process: see the module's doc.
                continue
            codec: Any = polycodec.Codec(cls, format=fmt)
            payload = codec.encode_many([cls(*row) for row in rows])
            assert codec.decode_many(payload) == [cls(*row) for row in rows]
            cases[f"{label:9} decode {fmt}"] = lambda c=codec, b=payload: c.decode_many(b)
    return cases


def _shared_cases() -> dict[str, Callable[[], object]]:
    cases: dict[str, Callable[[], object]] = {}
    for name in ("record", "hierarchy", "tree"):
        model = MODELS[name]
        objs = generate(name, 100)
        codec: Any = polycodec.Codec(model.list_type, format="pickle")
        payload = codec.encode_one(objs)
        assert codec.decode_one(payload) == objs and pickle.loads(payload) == objs
        cases[f"{name:9} pickle polycodec"] = lambda c=codec, b=payload: c.decode_one(b)
        cases[f"{name:9} pickle pickle.loads"] = lambda b=payload: pickle.loads(b)
        avro: Any = polycodec.Codec(model.root, format="avro")
        container = avro.encode_many(objs)
        assert avro.decode_many(container) == objs
        ops = FASTAVRO[0].build("avro", model)
        fast_payload = ops.encode_many(objs)
        assert ops.decode_many(fast_payload) == objs
        cases[f"{name:9} avro polycodec"] = lambda c=avro, b=container: c.decode_many(b)
        cases[f"{name:9} avro fastavro"] = lambda o=ops, b=fast_payload: o.decode_many(b)
    # The file system model is one ~1,000-node object per call (its *_one operations only).
    model = MODELS["filesystem"]
    (tree,) = generate("filesystem", 1)
    avro = polycodec.Codec(model.root, format="avro")
    ops = FASTAVRO[0].build("avro", model)
    datum, fast_datum = avro.encode_one(tree), ops.encode_one(tree)
    assert avro.decode_one(datum) == tree and ops.decode_one(fast_datum) == tree
    cases["filesystem avro polycodec"] = lambda: avro.decode_one(datum)
    cases["filesystem avro fastavro"] = lambda: ops.decode_one(fast_datum)
    return cases


def _best(cases: dict[str, Callable[[], object]], rounds: int, number: int) -> dict[str, float]:
    best = {name: float("inf") for name in cases}
    for _ in range(rounds):
        for name, call in cases.items():
            seconds = timeit.timeit(call, number=number)
            best[name] = min(best[name], seconds / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--section", choices=("floor", "shared", "all"), default="all")
    args = parser.parse_args()
    if args.section in ("floor", "all"):
        best = _best(_floor_cases(), args.rounds, args.number)
        print(f"floor: {COUNT} five-field records, best time per call")
        for name, seconds in best.items():
            kind, _, rest = name.partition(" ")
            extra = ""
            fmt = rest.split()[-1]
            struct = best.get(f"Struct    decode {fmt}")
            if "decode" in rest and struct and kind != "Struct":
                extra += f"  {seconds / struct:5.2f}x msgspec"
            floor = best.get(f"{kind:9} floor rust")
            if floor and "floor rust" not in name:
                extra += f"  {seconds / floor:5.2f}x floor"
            print(f"  {name:28} {seconds * 1e6:8.1f} us{extra}")
    if args.section in ("shared", "all"):
        best = _best(_shared_cases(), args.rounds, max(1, args.number // 5))
        print("shared: 100 objects per model (filesystem: one), best time per call")
        for name, seconds in best.items():
            model, fmt, impl = name.split()
            if impl == "polycodec":
                base_name = "pickle.loads" if fmt == "pickle" else "fastavro"
                base = best[f"{model:9} {fmt} {base_name}"]
                ratio = f"  {seconds / base:5.2f}x {base_name}"
            else:
                ratio = ""
            print(f"  {name:31} {seconds * 1e6:9.1f} us{ratio}")


if __name__ == "__main__":
    main()
