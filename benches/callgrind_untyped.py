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
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
from itertools import repeat
from typing import Any, Callable

import polycodec

from .models import MODELS, generate

ROOTS = ("any", "dict", "list", "field", "dict-field")


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


def main() -> None:
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


if __name__ == "__main__":
    main()
