"""Instruction counts of polycodec cells under callgrind, repeatable on a loaded machine.

``python -m benches.callgrind_cells CELL N`` runs cell ``CELL`` (``json-encode``, ``json-decode``,
``msgpack-encode``, ``msgpack-decode``, ``builtins-to``, ``builtins-from``) ``N`` times on one
instance of a benchmark model. Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and
``N`` = 100: the difference of the two totals, divided by 100, is the cell's instruction count
per call. ``builtins-from`` reads what the same library's ``to_builtins`` gave, as the benchmark
does (each library decodes its own output).

Options:

* ``--model NAME``: the model (``record``, ``hierarchy``, ``tree``, ``filesystem``; default
  ``hierarchy``).
* ``--lib polycodec|polycodec-slots|msgspec``: whose call is counted (default ``polycodec``, on
  the plain dataclasses). ``polycodec-slots`` runs the same codec calls on the
  ``@dataclass(slots=True)`` twins; ``msgspec`` runs msgspec's counterpart of the cell on the
  ``msgspec.Struct`` classes of the benchmark (``msgspec.json``/``msgspec.msgpack`` encoders and
  decoders, ``msgspec.to_builtins`` / ``msgspec.convert``), for an instruction-level comparison.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from .models import MODELS, generate


def _polycodec(fmt: str, op: str, root: type, value: Any) -> Callable[[], Any]:
    import polycodec

    codec = polycodec.Codec(root, format="msgpack" if fmt == "msgpack" else "json")
    payload = codec.encode_one(value)
    if fmt == "builtins":
        # The benchmark's input: what the same library's to_builtins gave.
        data = codec.to_builtins(value)
        return (
            (lambda: codec.to_builtins(value)) if op == "to" else lambda: codec.from_builtins(data)
        )
    return (
        (lambda: codec.encode_one(value)) if op == "encode" else lambda: codec.decode_one(payload)
    )


def _msgspec(fmt: str, op: str, root: type, value: Any) -> Callable[[], Any]:
    import msgspec

    if fmt == "builtins":
        data = msgspec.to_builtins(value)
        if op == "to":
            return lambda: msgspec.to_builtins(value)
        return lambda: msgspec.convert(data, root)
    mod = msgspec.msgpack if fmt == "msgpack" else msgspec.json
    encoder, decoder = mod.Encoder(), mod.Decoder(root)
    payload = encoder.encode(value)
    return (lambda: encoder.encode(value)) if op == "encode" else lambda: decoder.decode(payload)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benches.callgrind_cells")
    parser.add_argument("cell")
    parser.add_argument("count", type=int)
    parser.add_argument("--model", default="hierarchy", choices=sorted(MODELS))
    parser.add_argument(
        "--lib", default="polycodec", choices=("polycodec", "polycodec-slots", "msgspec")
    )
    args = parser.parse_args()
    model = MODELS[args.model]
    value = generate(args.model, 1)[0]
    fmt, op = args.cell.split("-")
    if args.lib == "msgspec":
        from .adapters.msgspec_structs import STRUCTS
        from .idioms import converter

        run = _msgspec(fmt, op, STRUCTS[model.root], converter(STRUCTS)(value))
    elif args.lib == "polycodec-slots":
        from .idioms import SLOTS, converter

        run = _polycodec(fmt, op, SLOTS[model.root], converter(SLOTS)(value))
    else:
        run = _polycodec(fmt, op, model.root, value)
    run()
    for _ in range(args.count):
        run()


if __name__ == "__main__":
    main()
