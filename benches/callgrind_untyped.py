"""Instruction counts of untyped cells under callgrind: the seed payloads as plain JSON values.

``python -m benches.callgrind_untyped CELL N [--model M] [--root R] [--lib L] [--many K]``
runs cell ``CELL`` (``json-encode``, ``json-decode``, ``msgpack-encode``, ``msgpack-decode``,
``builtins-to``, ``builtins-from``) ``N`` times on the payload of model ``M`` (default
``hierarchy``): one generated object as the JSON value polycodec writes for it (dicts, lists,
str, int, float, bool, None), so every library works on the same value. ``--root`` is the
type the value is given as:

- ``any``: ``typing.Any`` (``Codec(Any)``; orjson, ormsgpack and msgspec's untyped calls);
- ``dict``: ``dict[str, Any]`` (orjson and ormsgpack are untyped: they run as for ``any``);
- ``list``: ``list[Any]``, a list of ``--many K`` payloads (default 10);
- ``field``: a record ``Envelope(id: int, payload: Any)``, a ``slots=True`` dataclass for
  polycodec and a ``msgspec.Struct`` for msgspec (no orjson or ormsgpack cell);
- ``dict-field``: the same with ``payload: dict[str, Any]``.

``--lib`` picks who runs it: ``polycodec``, ``orjson`` (JSON), ``ormsgpack`` (MessagePack) or
``msgspec`` (its ``Encoder`` / ``Decoder`` of the root type, ``to_builtins`` and ``convert``).
``builtins-from`` reads what the same library's ``to_builtins`` gave. ``--no-gc`` disables the
cyclic garbage collector around the calls, as the timing harness does while it samples.

Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 100 (``PYTHONHASHSEED``
fixed): the difference of the two totals, divided by 100, is the cell's instruction count per
call. ``--check`` instead checks that every library gives back the same value, and exits.

A whole table in one callgrind process (as ``benches/callgrind_features.py --table`` counts,
through its client-request helper: set-up and start-up never in the count)::

    python -m benches.callgrind_untyped --table [--models a,b] [--roots any,dict]
        [--cells c,d] [--libs polycodec,orjson] [--count 20]

prints instructions per call of every library and polycodec's count over each peer's.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
from itertools import repeat
from typing import Any, Callable, Optional

import polycodec

from .models import MODELS, generate

ROOTS = ("any", "dict", "list", "field", "dict-field")
CELLS = (
    "json-decode",
    "json-encode",
    "msgpack-decode",
    "msgpack-encode",
    "builtins-to",
    "builtins-from",
)
LIBS = ("polycodec", "orjson", "ormsgpack", "msgspec")


@dataclasses.dataclass(slots=True)
class Envelope:
    id: int
    payload: Any


@dataclasses.dataclass(slots=True)
class DictEnvelope:
    id: int
    payload: dict[str, Any]


def payloads(model: str, count: int) -> list[Any]:
    """``count`` objects of ``model`` as the plain JSON values polycodec writes for them."""
    return [json.loads(polycodec.encode_one(value)) for value in generate(model, count)]


def _value(root: str, model: str, many: int) -> tuple[Any, Any]:
    """The value of the cell and its type, as polycodec is given them."""
    if root == "list":
        return payloads(model, many or 10), list[Any]
    (payload,) = payloads(model, 1)
    if root == "any":
        return payload, Any
    if root == "dict":
        return payload, dict[str, Any]
    if root == "field":
        return Envelope(7, payload), Envelope
    return DictEnvelope(7, payload), DictEnvelope


def _msgspec_types() -> dict[type, Any]:
    import msgspec

    class StructEnvelope(msgspec.Struct):
        id: int
        payload: Any

    class StructDictEnvelope(msgspec.Struct):
        id: int
        payload: dict[str, Any]

    return {Envelope: StructEnvelope, DictEnvelope: StructDictEnvelope}


def _msgspec_run(fmt: str, op: str, root: Any, value: Any) -> Callable[[], Any]:
    import msgspec

    structs = _msgspec_types()
    if root in structs:
        root = structs[root]
        value = root(value.id, value.payload)
    if fmt == "builtins":
        data = msgspec.to_builtins(value)
        if op == "to":
            return lambda: msgspec.to_builtins(value)
        return lambda: msgspec.convert(data, root)
    mod: Any = msgspec.json if fmt == "json" else msgspec.msgpack
    encoder = mod.Encoder()
    decoder = mod.Decoder() if root is Any else mod.Decoder(root)
    payload = encoder.encode(value)
    return (lambda: encoder.encode(value)) if op == "encode" else lambda: decoder.decode(payload)


def _untyped_peer_run(lib: str, fmt: str, op: str, root: Any, value: Any) -> Callable[[], Any]:
    if root in (Envelope, DictEnvelope):
        raise SystemExit(f"{lib} has no record cell")
    if lib == "orjson" and fmt == "json":
        import orjson

        data = orjson.dumps(value)
        return (lambda: orjson.dumps(value)) if op == "encode" else lambda: orjson.loads(data)
    if lib == "ormsgpack" and fmt == "msgpack":
        import ormsgpack

        packed = ormsgpack.packb(value)
        if op == "encode":
            return lambda: ormsgpack.packb(value)
        return lambda: ormsgpack.unpackb(packed)
    raise SystemExit(f"{lib} has no {fmt} cell")


def _polycodec_run(fmt: str, op: str, root: Any, value: Any) -> Callable[[], Any]:
    if fmt == "builtins":
        codec = polycodec.Codec(root, format="json")
        data = codec.to_builtins(value)
        if op == "to":
            return lambda: codec.to_builtins(value)
        return lambda: codec.from_builtins(data)
    codec = polycodec.Codec(root, format=fmt)
    payload = codec.encode_one(value)
    if op == "encode":
        return lambda: codec.encode_one(value)
    return lambda: codec.decode_one(payload)


def run_for(lib: str, cell: str, root: Any, value: Any) -> Callable[[], Any]:
    fmt, op = cell.split("-")
    if lib == "polycodec":
        return _polycodec_run(fmt, op, root, value)
    if lib == "msgspec":
        return _msgspec_run(fmt, op, root, value)
    return _untyped_peer_run(lib, fmt, op, root, value)


def _check(model: str) -> None:
    """Every library's decode gives the payload back, and encodes agree on the bytes' value."""
    for root_name in ROOTS:
        value, root = _value(root_name, model, 0)
        for cell in ("json-decode", "msgpack-decode", "builtins-from"):
            for lib in ("polycodec", "orjson", "ormsgpack", "msgspec"):
                try:
                    decoded = run_for(lib, cell, root, value)()
                except SystemExit:
                    continue
                if root in (Envelope, DictEnvelope):
                    decoded = (decoded.id, decoded.payload)
                    expected: Any = (value.id, value.payload)
                else:
                    expected = value
                if decoded != expected:
                    raise SystemExit(f"{lib} {cell} {root_name}: a different value")
    print(f"{model}: every library decodes the same value")


def _inside(
    models: list[str], roots: list[str], cells: list[str], libs: list[str], count: int
) -> None:
    """Inside callgrind: count every cell a library has, one dump each."""
    from .callgrind_features import _helper, count_calls

    helper = _helper()
    if not helper.cg_running():
        raise SystemExit("--inside runs under valgrind --tool=callgrind only")
    for model in models:
        for root_name in roots:
            value, root = _value(root_name, model, 0)
            for cell in cells:
                for lib in libs:
                    try:
                        run = run_for(lib, cell, root, value)
                    except SystemExit:
                        continue
                    count_calls(helper, run, f"{model}/{root_name} {cell} {lib} {count}", count)
                    del run


def table(
    models: list[str], roots: list[str], cells: list[str], libs: list[str], count: int
) -> dict[tuple[str, str, str], float]:
    """Instructions per call of every (model/root, cell, lib), from one callgrind process."""
    from .callgrind_features import count_under_callgrind

    return count_under_callgrind(
        "benches.callgrind_untyped",
        ["--models", ",".join(models), "--roots", ",".join(roots)]
        + ["--cells", ",".join(cells), "--libs", ",".join(libs), "--count", str(count)],
    )


def format_counts(
    counts: dict[tuple[str, str, str], float], cells: list[str], libs: list[str]
) -> str:
    """Markdown: instructions per call of every library, and polycodec's over each peer's."""
    peers = [lib for lib in libs if lib != "polycodec"]
    head = "| payload | cell | " + " | ".join(libs) + " | " + " | ".join(f"÷ {p}" for p in peers)
    lines = [head + " |", "|---|---|" + "--:|" * (len(libs) + len(peers))]
    for subject in dict.fromkeys(key[0] for key in counts):
        for cell in cells:
            row: list[Optional[float]] = [counts.get((subject, cell, lib)) for lib in libs]
            if all(n is None for n in row):
                continue
            ours = counts.get((subject, cell, "polycodec"))
            text = ["" if n is None else f"{n:,.0f}" for n in row]
            for peer in peers:
                theirs = counts.get((subject, cell, peer))
                text.append("" if ours is None or theirs is None else f"{ours / theirs:.2f}")
            lines.append(f"| {subject} | {cell} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def main() -> None:
    if "--table" in sys.argv or "--inside" in sys.argv:
        table_main()
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cell")
    parser.add_argument("count", type=int)
    parser.add_argument("--model", default="hierarchy", choices=sorted(MODELS))
    parser.add_argument("--root", default="any", choices=ROOTS)
    parser.add_argument(
        "--lib", default="polycodec", choices=["polycodec", "orjson", "ormsgpack", "msgspec"]
    )
    parser.add_argument("--many", type=int, default=0, help="payloads in a --root list value")
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="disable the garbage collector around the calls, as the timing harness does",
    )
    parser.add_argument("--check", action="store_true", help="check the libraries agree")
    args = parser.parse_args()
    if args.check:
        _check(args.model)
        return
    value, root = _value(args.root, args.model, args.many)
    run = run_for(args.lib, args.cell, root, value)
    if args.no_gc:
        gc.collect()
        gc.disable()
    run()
    for _ in repeat(None, args.count):
        run()


def table_main() -> None:
    from .callgrind_features import _csv

    parser = argparse.ArgumentParser(description="untyped cells counted under callgrind")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--models", help="comma-separated models (default: the seed four)")
    parser.add_argument("--roots", help="comma-separated roots (default: any)")
    parser.add_argument("--cells", help="comma-separated cells (default: all)")
    parser.add_argument("--libs", help="comma-separated libraries (default: all)")
    parser.add_argument("--count", type=int, default=20, help="calls counted per cell")
    args = parser.parse_args()
    models = _csv(args.models or "record,hierarchy,tree,filesystem", sorted(MODELS))
    roots = _csv(args.roots or "any", list(ROOTS))
    cells, libs = _csv(args.cells, list(CELLS)), _csv(args.libs, list(LIBS))
    if args.inside:
        _inside(models, roots, cells, libs, args.count)
        return
    counts = table(models, roots, cells, libs, args.count)
    print("instructions per call; polycodec's count over each peer's (below 1.00: fewer)\n")
    print(format_counts(counts, cells, libs))


if __name__ == "__main__":
    main()
