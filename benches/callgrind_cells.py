"""Instruction counts of codec cells under callgrind, repeatable on a loaded machine.

``python -m benches.callgrind_cells CELL N [--model M] [--lib L] [--many K]`` runs cell ``CELL``
(``json-encode``, ``json-decode``, ``msgpack-encode``, ``msgpack-decode``, ``builtins-to``,
``builtins-from``) ``N`` times on one instance of model ``M`` (default ``hierarchy``), or on a
list of ``K`` instances with ``--many K`` (``encode_many`` / ``decode_many``). ``--lib`` picks
who runs it: ``polycodec`` on the plain dataclasses (the default), ``slots`` (polycodec on the
``slots=True`` twins of ``benches/idioms.py``) or ``msgspec`` (msgspec's typed ``Encoder`` /
``Decoder`` on the ``Struct`` classes of ``adapters/msgspec_structs.py``, its users' idiom), so
one cell can be compared instruction for instruction. Run it under ``valgrind --tool=callgrind``
with ``N`` = 0 and ``N`` = 100: the difference of the two totals, divided by 100, is the cell's
instruction count per call.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable

import polycodec

from .idioms import SLOTS, converter
from .models import MODELS, generate


def _msgspec_run(fmt: str, op: str, root: Any, value: Any) -> Callable[[], Any]:
    import msgspec

    from .adapters.msgspec_structs import STRUCTS

    value = converter(STRUCTS)(value)
    root = STRUCTS.get(root, root)
    if isinstance(value, list):
        root = list[root]  # type: ignore[valid-type]
    if fmt == "builtins":
        data = json.loads(msgspec.json.encode(value))
        if op == "to":
            return lambda: msgspec.to_builtins(value)
        return lambda: msgspec.convert(data, root)
    mod = msgspec.json if fmt == "json" else msgspec.msgpack
    encoder, decoder = mod.Encoder(), mod.Decoder(root)
    payload = encoder.encode(value)
    return (lambda: encoder.encode(value)) if op == "encode" else lambda: decoder.decode(payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cell")
    parser.add_argument("count", type=int)
    parser.add_argument("--model", default="hierarchy", choices=sorted(MODELS))
    parser.add_argument("--lib", default="polycodec", choices=["polycodec", "slots", "msgspec"])
    parser.add_argument("--many", type=int, default=0, help="a list of this many instances")
    args = parser.parse_args()
    model = MODELS[args.model]
    values = generate(args.model, max(args.many, 1))
    value: Any = values if args.many else values[0]
    root: Any = model.root
    fmt, op = args.cell.split("-")
    if args.lib == "msgspec":
        run = _msgspec_run(fmt, op, root, value)
    else:
        if args.lib == "slots":
            value = converter(SLOTS)(value)
            root = SLOTS.get(root, root)
        codec = polycodec.Codec(root, format="msgpack" if fmt == "msgpack" else "json")
        many = bool(args.many)
        payload = codec.encode_many(value) if many else codec.encode_one(value)
        if fmt == "builtins":
            builtins_codec = polycodec.Codec(list[root] if many else root, "json")
            data = json.loads(payload)
            run = (
                (lambda: builtins_codec.to_builtins(value))
                if op == "to"
                else lambda: builtins_codec.from_builtins(data)
            )
        elif op == "encode":
            run = (lambda: codec.encode_many(value)) if many else lambda: codec.encode_one(value)
        else:
            run = (
                (lambda: codec.decode_many(payload)) if many else lambda: codec.decode_one(payload)
            )
    run()
    for _ in range(args.count):
        run()


if __name__ == "__main__":
    main()
