"""Instruction counts of polycodec cells under callgrind, repeatable on a loaded machine.

``python -m benches.callgrind_cells CELL N`` runs cell ``CELL`` (``json-encode``, ``json-decode``,
``msgpack-encode``, ``msgpack-decode``, ``pickle-encode``, ``pickle-decode``, ``builtins-to``,
``builtins-from``) ``N`` times on one ``hierarchy`` instance. Run it under
``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 100: the difference of the two totals,
divided by 100, is the cell's instruction count per call.

Options: ``--model`` (``record``, ``hierarchy``, ``tree``, ``filesystem``), ``--batch N``
(``encode_many``/``decode_many`` of N objects instead of one), and ``--idiom``: ``plain``
(the shared dataclasses), ``slots`` (their ``slots=True`` twins, ``benches/idioms.py``) or
``struct``, msgspec on its own Struct classes (``adapters/msgspec_structs.py``, JSON and
MessagePack only), the counterpart the benchmark compares with.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Callable

import polycodec

from .idioms import SLOTS, converter
from .models import MODELS, generate


def _struct_run(fmt: str, op: str, root: type, value: Any) -> Callable[[], Any]:
    import msgspec

    from .adapters.msgspec_structs import STRUCTS

    mod: Any = msgspec.msgpack if fmt == "msgpack" else msgspec.json
    struct_value = converter(STRUCTS)(value)
    encoder = mod.Encoder()
    payload = encoder.encode(struct_value)
    target = STRUCTS[root]
    decoder = mod.Decoder(list[target] if isinstance(value, list) else target)
    if op == "encode":
        return lambda: encoder.encode(struct_value)
    return lambda: decoder.decode(payload)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cell")
    parser.add_argument("count", type=int)
    parser.add_argument("--model", default="hierarchy", choices=sorted(MODELS))
    parser.add_argument("--idiom", default="plain", choices=["plain", "slots", "struct"])
    parser.add_argument("--batch", type=int, default=0)
    args = parser.parse_args()
    model = MODELS[args.model]
    values = generate(args.model, max(args.batch, 1))
    value: Any = values if args.batch else values[0]
    fmt, op = args.cell.split("-")
    if args.idiom == "struct":
        run = _struct_run(fmt, op, model.root, value)
    else:
        root = SLOTS[model.root] if args.idiom == "slots" else model.root
        if args.idiom == "slots":
            value = converter(SLOTS)(value)
        codec = polycodec.Codec(root, format=fmt if fmt != "builtins" else "json")
        many = bool(args.batch)
        encode = codec.encode_many if many else codec.encode_one
        decode = codec.decode_many if many else codec.decode_one
        payload = encode(value)
        if fmt == "builtins":
            data = json.loads(payload)
            run = (
                (lambda: codec.to_builtins(value))
                if op == "to"
                else lambda: codec.from_builtins(data)
            )
        else:
            run = (lambda: encode(value)) if op == "encode" else lambda: decode(payload)
    run()
    for _ in range(args.count):
        run()


if __name__ == "__main__":
    main()
