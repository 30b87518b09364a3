"""Instruction counts of the per-feature cells under callgrind, repeatable on a loaded machine.

One cell, as ``benches/callgrind_cells.py`` does it::

    python -m benches.callgrind_features FEATURE CELL N [--lib LIB] [--no-gc]

runs cell ``CELL`` (``json-encode``, ``json-decode``, ``msgpack-encode``, ``msgpack-decode``,
``builtins-to``, ``builtins-from``, ``avro-encode``, ``avro-decode``, ``pickle-encode``,
``pickle-decode``) of feature ``FEATURE`` (``benches/features.py``; ``--list`` names them)
``N`` times on one batch of 50 values. ``--lib`` picks who runs it: ``slots`` (polycodec on the
``slots=True`` classes, the default), ``plain`` or ``polycodec`` (polycodec on the plain
dataclasses), ``msgspec`` (on the Struct twins), ``fastavro`` (with the conversion to the same
objects) or ``fastavro-dicts`` (on ready dicts), ``pickle`` or ``pickle-slots`` (the stdlib's, on
the plain or slots values). Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and
``N`` = 100 (``PYTHONHASHSEED=0``, ``--no-gc``, a release build, the interpreter's real path
rather than a pyenv shim): the difference of the two totals over 100 is the cell's instruction
count per call (one batch of 50).

A whole table at once::

    python -m benches.callgrind_features --table [--features a,b] [--cells c,d]
        [--libs slots,msgspec] [--count 20] [--json FILE]

starts one ``valgrind --tool=callgrind`` process (one per ``--per-process K`` features; it needs
valgrind, its ``callgrind.h`` header and a C compiler), which builds every cell, calls each once,
then counts ``--count`` calls with callgrind's client requests (``CALLGRIND_ZERO_STATS`` before,
``CALLGRIND_DUMP_STATS_AT`` after, through a ten-line C helper compiled on first use), so setup
and interpreter start-up are never in the count and one process serves every cell. It prints
instructions per call and polycodec ÷ msgspec (or ÷ fastavro, ÷ pickle) per cell.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from itertools import repeat
from pathlib import Path
from typing import Any, Optional

from .feature_cells import CELLS, GROUPS, LIBS, Unavailable, prepare
from .features import FEATURES

_HELPER_C = r"""
#include <valgrind/callgrind.h>
void cg_zero(void) { CALLGRIND_ZERO_STATS; }
void cg_dump(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
int cg_running(void) { return RUNNING_ON_VALGRIND; }
"""

#: The reference lib of each format: ratios in the table are polycodec's count over its count
#: (for the slots row of pickle, the stdlib's on the same slots values).
REFERENCE = {
    "json": "msgspec",
    "msgpack": "msgspec",
    "builtins": "msgspec",
    "avro": "fastavro",
    "pickle": "pickle",
}


def _helper() -> Any:
    """The client-request helper, compiled once per user into the temporary directory."""
    folder = Path(tempfile.gettempdir()) / f"polycodec-callgrind-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    lib = folder / "cgreq.so"
    if not lib.exists():
        src = folder / "cgreq.c"
        src.write_text(_HELPER_C)
        tmp = folder / f"cgreq.{os.getpid()}.so"
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(tmp), str(src)], check=True)
        tmp.replace(lib)
    helper = ctypes.CDLL(str(lib))
    helper.cg_dump.argtypes = [ctypes.c_char_p]
    return helper


def _inside(features: list[str], cells: list[str], libs: list[str], count: int) -> None:
    """Inside callgrind: count every requested cell of ``features``, one dump each."""
    helper = _helper()
    if not helper.cg_running():
        raise SystemExit("--inside runs under valgrind --tool=callgrind only")
    for feature in features:
        for cell in cells:
            for lib in libs:
                try:
                    p = prepare(feature, cell, lib)
                except Unavailable:
                    continue
                fn, arg = p.fn, p.arg
                fn(arg)
                gc.collect()
                gc.disable()
                helper.cg_zero()
                for _ in repeat(None, count):
                    fn(arg)
                helper.cg_dump(f"{feature} {cell} {lib} {count}".encode())
                gc.enable()
                del p, fn, arg


_DESC = re.compile(r"^desc: Trigger: Client Request: (\S+) (\S+) (\S+) (\d+)$", re.M)
_TOTAL = re.compile(r"^(?:summary|totals): (\d+)", re.M)


def _read_dumps(folder: Path) -> dict[tuple[str, str, str], float]:
    counts: dict[tuple[str, str, str], float] = {}
    for path in folder.iterdir():
        text = path.read_text(errors="replace")
        desc, total = _DESC.search(text), _TOTAL.search(text)
        if desc is None or total is None:
            continue
        feature, cell, lib, count = desc.groups()
        counts[(feature, cell, lib)] = int(total.group(1)) / int(count)
    return counts


def count_calls(helper: Any, run: Any, label: str, count: int) -> None:
    """Inside callgrind: ``run()`` once to warm up, then ``count`` calls counted alone (collector
    off) and dumped under ``label`` (``"subject cell lib count"``, as ``_read_dumps`` reads)."""
    run()
    gc.collect()
    gc.disable()
    helper.cg_zero()
    for _ in repeat(None, count):
        run()
    helper.cg_dump(label.encode())
    gc.enable()


def count_under_callgrind(module: str, args: list[str]) -> dict[tuple[str, str, str], float]:
    """Runs ``python -m module --inside ARGS`` under one callgrind process and reads back the
    instructions per call of every cell it dumped (what was dumped before a failure is kept)."""
    _helper()  # compiled before any process races for it
    env = dict(os.environ, PYTHONHASHSEED="0")
    with tempfile.TemporaryDirectory(prefix="cg-table-") as tmp:
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--quiet",
            f"--callgrind-out-file={tmp}/cg.%p",
            sys.executable,
            "-m",
            module,
            "--inside",
            *args,
        ]
        done = subprocess.run(cmd, env=env, cwd=Path(__file__).resolve().parent.parent)
        counts = _read_dumps(Path(tmp))
    if done.returncode:
        print(f"callgrind process exited with {done.returncode}", file=sys.stderr)
    return counts


def table(
    features: list[str], cells: list[str], libs: list[str], count: int, per_process: int = 7
) -> dict[tuple[str, str, str], float]:
    """Instructions per call of every (feature, cell, lib), ``per_process`` features per
    callgrind process (start-up under callgrind costs more than counting a feature's cells)."""
    counts: dict[tuple[str, str, str], float] = {}
    for start in range(0, len(features), per_process):
        group = features[start : start + per_process]
        got = count_under_callgrind(
            "benches.callgrind_features",
            ["--features", ",".join(group), "--cells", ",".join(cells)]
            + ["--libs", ",".join(libs), "--count", str(count)],
        )
        counts.update(got)
        print(f"counted {', '.join(group)}: {len(got)} cells", file=sys.stderr)
    return counts


def format_table(
    counts: dict[tuple[str, str, str], float], features: list[str], cells: list[str], lib: str
) -> str:
    """Markdown: ``lib``'s count ÷ the reference's per feature and cell (below 1.00: fewer)."""
    lines = [
        "| feature | " + " | ".join(cells) + " |",
        "|---|" + "--:|" * len(cells),
    ]
    for feature in features:
        row = []
        for cell in cells:
            fmt = cell.split("-")[0]
            ref = "pickle-slots" if fmt == "pickle" and lib == "slots" else REFERENCE[fmt]
            ours, theirs = counts.get((feature, cell, lib)), counts.get((feature, cell, ref))
            row.append("" if ours is None or theirs is None else f"{ours / theirs:.2f}")
        lines.append(f"| {feature} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def format_counts(
    counts: dict[tuple[str, str, str], float],
    features: list[str],
    cells: list[str],
    libs: list[str],
) -> str:
    """Markdown: instructions per call of every lib, one line per feature and cell."""
    lines = ["| feature | cell | " + " | ".join(libs) + " |", "|---|---|" + "--:|" * len(libs)]
    for feature in features:
        for cell in cells:
            row = [counts.get((feature, cell, lib)) for lib in libs]
            if any(n is not None for n in row):
                text = ["" if n is None else f"{n:,.0f}" for n in row]
                lines.append(f"| {feature} | {cell} | " + " | ".join(text) + " |")
    return "\n".join(lines)


def _csv(text: Optional[str], choices: list[str]) -> list[str]:
    if not text:
        return choices
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in choices]
    if bad:
        raise SystemExit(f"unknown: {', '.join(bad)} (choose from {', '.join(choices)})")
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("feature", nargs="?")
    parser.add_argument("cell", nargs="?", choices=CELLS)
    parser.add_argument("count", nargs="?", type=int)
    lib_names = sorted(LIBS) + ["polycodec"]
    parser.add_argument("--lib", default="slots", choices=lib_names)
    parser.add_argument("--no-gc", action="store_true", help="no garbage collector in the loop")
    parser.add_argument("--list", action="store_true", help="list the features and exit")
    parser.add_argument("--table", action="store_true", help="count a table under callgrind")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--features", help="comma-separated features (--table)")
    parser.add_argument("--cells", help="comma-separated cells (--table)")
    parser.add_argument("--libs", help="comma-separated libs (--table; default: all)")
    parser.add_argument(
        "--count", dest="calls", type=int, default=20, help="calls counted per cell (--table)"
    )
    parser.add_argument("--json", type=Path, help="also write the counts here (--table)")
    parser.add_argument(
        "--per-process", type=int, default=7, help="features per callgrind process (--table)"
    )
    args = parser.parse_args()
    if args.list:
        for name, feature in FEATURES.items():
            print(f"{name:24} {feature.title}")
        return
    if args.table or args.inside:
        features = _csv(args.features, list(FEATURES))
        cells = _csv(args.cells, list(CELLS))
        all_libs = list(dict.fromkeys(lib for group in GROUPS.values() for lib in group))
        libs = _csv(args.libs, all_libs)
        if args.inside:
            _inside(features, cells, libs, args.calls)
            return
        counts = table(features, cells, libs, args.calls, args.per_process)
        if args.json:
            args.json.write_text(
                json.dumps(
                    [
                        {"feature": f, "cell": c, "lib": lib, "instructions_per_call": n}
                        for (f, c, lib), n in sorted(counts.items())
                    ],
                    indent=1,
                )
            )
        print("\ninstructions per call (one batch of 50 values)\n")
        print(format_counts(counts, features, cells, libs))
        for lib in ("slots", "plain"):
            if lib in libs:
                print(f"\n{lib}: instructions per call ÷ the reference's (msgspec Struct,")
                print("fastavro with the conversion, stdlib pickle); below 1.00: fewer\n")
                print(format_table(counts, features, cells, lib))
        return
    if args.feature is None or args.cell is None or args.count is None:
        parser.error("FEATURE CELL N, or --table, or --list")
    lib = "plain" if args.lib == "polycodec" else args.lib
    try:
        p = prepare(args.feature, args.cell, lib)
    except Unavailable as exc:
        raise SystemExit(f"{args.feature} {args.cell} {lib}: {exc}")
    fn, arg = p.fn, p.arg
    if args.no_gc:
        gc.collect()
        gc.disable()
    fn(arg)
    for _ in repeat(None, args.count):
        fn(arg)


if __name__ == "__main__":
    main()
