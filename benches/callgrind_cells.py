"""Instruction counts of polycodec cells under callgrind, repeatable on a loaded machine.

``python -m benches.callgrind_cells CELL N`` runs cell ``CELL`` (``json-encode``, ``json-decode``,
``msgpack-encode``, ``msgpack-decode``, ``builtins-to``, ``builtins-from``) ``N`` times on one
``hierarchy`` instance. Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 100:
the difference of the two totals, divided by 100, is the cell's instruction count per call.
"""

from __future__ import annotations

import json
import sys

import polycodec

from .models import MODELS, generate


def main() -> None:
    cell, count = sys.argv[1], int(sys.argv[2])
    model = MODELS["hierarchy"]
    value = generate("hierarchy", 1)[0]
    fmt, op = cell.split("-")
    codec = polycodec.Codec(model.root, format="msgpack" if fmt == "msgpack" else "json")
    payload = codec.encode_one(value)
    if fmt == "builtins":
        data = json.loads(payload)
        run = (
            (lambda: codec.to_builtins(value)) if op == "to" else lambda: codec.from_builtins(data)
        )
    else:
        run = (
            (lambda: codec.encode_one(value))
            if op == "encode"
            else lambda: codec.decode_one(payload)
        )
    run()
    for _ in range(count):
        run()


if __name__ == "__main__":
    main()
