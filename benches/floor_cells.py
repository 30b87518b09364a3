"""The decode floor in instructions: creating (and freeing) the 1,000 five-field records of
``benches/floor.py`` from ready field values, repeatable under callgrind on a loaded machine.

``python -m benches.floor_cells KIND N`` creates the records ``N`` times, with ``KIND``:

- ``plain``, ``slots``: ``_polycodec._floor_create`` on the plain or ``slots=True`` dataclass,
  which creates the instances exactly as polycodec's record builder does and nothing else;
- ``portable``: the plain dataclass with its fields stored through ``object.__setattr__``'s
  generic path instead of CPython's inline values (3.11 and 3.13+; ``portable=True``);
- ``struct``: ``msgspec.Struct`` instances made by ``itertools.starmap(Struct, rows)``, msgspec's
  own constructor called from C for each row (its argument handling included).

Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 20: the difference of the
two totals divided by 20,000 is the cost of one record, created and freed.
"""

from __future__ import annotations

import argparse
import itertools
from typing import Any, Callable

from polycodec import _polycodec

from .floor import NAMES, _rows
from .micro_slots import Plain, Slotted, Struct


def _run(kind: str) -> Callable[[], object]:
    rows = _rows()
    if kind == "struct":
        return lambda: list(itertools.starmap(Struct, rows))
    cls: Any = Slotted if kind == "slots" else Plain
    # The first instance is made by __init__ (see benches/floor.py: CPython 3.11 shares the
    # instance keys only once a fully initialised instance has filled them).
    assert cls(*rows[0]) == cls(*rows[0])
    portable = kind == "portable"
    return lambda: _polycodec._floor_create(cls, NAMES, rows, portable=portable)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["plain", "portable", "slots", "struct"])
    parser.add_argument("count", type=int)
    args = parser.parse_args()
    run = _run(args.kind)
    run()
    for _ in range(args.count):
        run()


if __name__ == "__main__":
    main()
