"""Instruction counts of codec cells under callgrind, repeatable on a loaded machine.

``python -m benches.callgrind_cells CELL N [--model M] [--lib L] [--many K]`` runs cell ``CELL``
(``json-encode``, ``json-decode``, ``msgpack-encode``, ``msgpack-decode``, ``pickle-encode``,
``pickle-decode``, ``builtins-to``, ``builtins-from``) ``N`` times on one instance of model ``M``
(default ``hierarchy``), or on a list of ``K`` instances with ``--many K`` (``encode_many`` /
``decode_many``). ``--lib`` picks who runs it: ``polycodec`` on the plain dataclasses (the
default), ``slots`` (polycodec on the ``slots=True`` twins of ``benches/idioms.py``) or
``msgspec`` (msgspec's typed ``Encoder`` / ``Decoder``, ``to_builtins`` and ``convert`` on the
``Struct`` classes of ``adapters/msgspec_structs.py``, its users' idiom; JSON, MessagePack and
builtins only) or ``pickle`` (the stdlib's ``pickle.dumps(value, protocol=5)`` and
``pickle.loads`` on the plain dataclasses, the pickle cells' reference; pickle only), so one
cell can be compared instruction for instruction. ``--dicts`` first pickles
the value, which materialises every plain instance's ``__dict__`` (CPython 3.11 then keeps the
attributes in that dict instead of the instance's inline values), as happens to the full
benchmark's shared objects when the pickle and orjson adapters check them before timing. ``builtins-from`` reads
what the same library's ``to_builtins`` gave, as the benchmark does. ``--no-gc`` disables the
cyclic garbage collector around the calls, as the timing harness does while it samples: without
it, a library whose decoders allocate tracked objects (msgspec's Structs) pays for collections
the benchmark never sees. ``--bound`` (``encode`` and ``decode`` cells of JSON and MessagePack)
calls the bound method on its argument in the loop ``benches/timing.py`` samples with
(``for _ in repeat(None, n): fn(arg)``) instead of through a lambda: instruction counts barely
move, but instruction-cache misses per call (``--cache-sim=yes``) depend on which CPython code
runs around the call, and the lambda's extra frame changes a small record's by tens per call.

Run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 100: the difference of the
two totals, divided by 100, is the cell's instruction count per call.

Every model, cell and lib at once, in one callgrind process (client requests around the counted
calls, as ``benches.callgrind_features --table`` does, so start-up and setup are never counted)::

    python -m benches.callgrind_cells --table [--models record,record*100] [--cells c,d]
        [--libs polycodec,slots] [--count 20] [--json FILE]

``record*100`` is a list of 100 records through ``encode_many`` / ``decode_many``. With
``PYTHONPATH`` at another checkout's ``python/`` folder, the same cells count that build of
polycodec: how a change is checked for cells that got slower.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
from itertools import repeat
from pathlib import Path
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
        data = msgspec.to_builtins(value)
        if op == "to":
            return lambda: msgspec.to_builtins(value)
        return lambda: msgspec.convert(data, root)
    if fmt not in ("json", "msgpack"):
        raise SystemExit(f"msgspec has no {fmt} cell")
    mod: Any = msgspec.json if fmt == "json" else msgspec.msgpack
    encoder, decoder = mod.Encoder(), mod.Decoder(root)
    payload = encoder.encode(value)
    return (lambda: encoder.encode(value)) if op == "encode" else lambda: decoder.decode(payload)


def _pickle_run(fmt: str, op: str, value: Any) -> Callable[[], Any]:
    if fmt != "pickle":
        raise SystemExit(f"the stdlib pickle has no {fmt} cell")
    payload = pickle.dumps(value, protocol=5)
    if op == "encode":
        return lambda: pickle.dumps(value, protocol=5)
    return lambda: pickle.loads(payload)


def _polycodec_run(fmt: str, op: str, root: Any, value: Any) -> Callable[[], Any]:
    many = isinstance(value, list)
    if fmt == "builtins":
        codec = polycodec.Codec(list[root] if many else root, format="json")
        data = codec.to_builtins(value)
        if op == "to":
            return lambda: codec.to_builtins(value)
        return lambda: codec.from_builtins(data)
    codec = polycodec.Codec(root, format=fmt)
    encode = codec.encode_many if many else codec.encode_one
    decode = codec.decode_many if many else codec.decode_one
    payload = encode(value)
    return (lambda: encode(value)) if op == "encode" else lambda: decode(payload)


def _bound(lib: str, fmt: str, op: str, root: Any, value: Any) -> tuple[Callable[[Any], Any], Any]:
    """The bound method and argument a JSON or MessagePack cell times (``--bound``)."""
    if lib == "msgspec":
        import msgspec

        from .adapters.msgspec_structs import STRUCTS

        value = converter(STRUCTS)(value)
        root = STRUCTS.get(root, root)
        if isinstance(value, list):
            root = list[root]  # type: ignore[valid-type]
        mod: Any = msgspec.json if fmt == "json" else msgspec.msgpack
        encoder, decoder = mod.Encoder(), mod.Decoder(root)
        if op == "encode":
            return encoder.encode, value
        return decoder.decode, encoder.encode(value)
    codec = polycodec.Codec(root, format=fmt)
    many = isinstance(value, list)
    encode = codec.encode_many if many else codec.encode_one
    if op == "encode":
        return encode, value
    return (codec.decode_many if many else codec.decode_one), encode(value)


CELLS = [f"{fmt}-{op}" for fmt in ("json", "msgpack", "pickle") for op in ("encode", "decode")] + [
    "builtins-to",
    "builtins-from",
]
TABLE_MODELS = ["record", "hierarchy", "tree", "filesystem", "record*100"]


def _run(cell: str, lib: str, model_name: str, many: int) -> Callable[[], Any]:
    model = MODELS[model_name]
    values = generate(model_name, max(many, 1))
    value: Any = values if many else values[0]
    root: Any = model.root
    fmt, op = cell.split("-")
    if lib == "msgspec":
        return _msgspec_run(fmt, op, root, value)
    if lib == "pickle":
        return _pickle_run(fmt, op, value)
    if lib == "slots":
        value = converter(SLOTS)(value)
        root = SLOTS.get(root, root)
    return _polycodec_run(fmt, op, root, value)


def _split_model(name: str) -> tuple[str, int]:
    model, _, many = name.partition("*")
    return model, int(many or 0)


def _inside(models: list[str], cells: list[str], libs: list[str], count: int) -> None:
    """Inside callgrind: count every requested cell, one dump each."""
    from .callgrind_features import _helper, count_calls

    helper = _helper()
    if not helper.cg_running():
        raise SystemExit("--inside runs under valgrind --tool=callgrind only")
    for name in models:
        for cell in cells:
            for lib in libs:
                try:
                    run = _run(cell, lib, *_split_model(name))
                except SystemExit:
                    continue  # this lib has no such cell (msgspec pickle, stdlib JSON)
                count_calls(helper, run, f"{name} {cell} {lib} {count}", count)
                del run


def _table(models: list[str], cells: list[str], libs: list[str], count: int) -> dict[Any, float]:
    from .callgrind_features import count_under_callgrind

    return count_under_callgrind(
        "benches.callgrind_cells",
        ["--models", ",".join(models), "--cells", ",".join(cells)]
        + ["--libs", ",".join(libs), "--count", str(count)],
    )


def _table_main(args: argparse.Namespace) -> None:
    from .callgrind_features import _csv, format_counts

    models = _csv(args.models, TABLE_MODELS)
    cells = _csv(args.cells, CELLS)
    libs = _csv(args.libs, ["polycodec", "slots", "msgspec", "pickle"])
    if args.inside:
        _inside(models, cells, libs, args.calls)
        return
    counts = _table(models, cells, libs, args.calls)
    if args.json:
        rows = [
            {"model": m, "cell": c, "lib": lib, "instructions_per_call": n}
            for (m, c, lib), n in sorted(counts.items())
        ]
        args.json.write_text(json.dumps(rows, indent=1))
    print("\ninstructions per call\n")
    print(format_counts(counts, models, cells, libs).replace("| feature |", "| model |", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cell", nargs="?", choices=CELLS)
    parser.add_argument("count", nargs="?", type=int)
    parser.add_argument("--table", action="store_true", help="count a table under callgrind")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--models", help="comma-separated models, NAME*K for a list (--table)")
    parser.add_argument("--cells", help="comma-separated cells (--table)")
    parser.add_argument("--libs", help="comma-separated libs (--table)")
    parser.add_argument(
        "--count", dest="calls", type=int, default=20, help="calls counted per cell (--table)"
    )
    parser.add_argument("--json", type=Path, help="also write the counts here (--table)")
    parser.add_argument("--model", default="hierarchy", choices=sorted(MODELS))
    parser.add_argument(
        "--lib", default="polycodec", choices=["polycodec", "slots", "msgspec", "pickle"]
    )
    parser.add_argument("--many", type=int, default=0, help="a list of this many instances")
    parser.add_argument(
        "--dicts",
        action="store_true",
        help="materialise each plain instance's __dict__ first (as pickle and orjson do to the "
        "benchmark's shared objects before the timed runs)",
    )
    parser.add_argument(
        "--bound",
        action="store_true",
        help="call the bound method on its argument in timing.py's loop, not through a lambda",
    )
    parser.add_argument(
        "--no-gc",
        action="store_true",
        help="disable the garbage collector around the calls, as the timing harness does",
    )
    args = parser.parse_args()
    if args.table or args.inside:
        _table_main(args)
        return
    if args.cell is None or args.count is None:
        parser.error("CELL and N are needed (or --table)")
    model = MODELS[args.model]
    values = generate(args.model, max(args.many, 1))
    value: Any = values if args.many else values[0]
    root: Any = model.root
    if args.dicts:
        pickle.dumps(value)
    fmt, op = args.cell.split("-")
    if args.bound:
        if fmt not in ("json", "msgpack") or op not in ("encode", "decode"):
            raise SystemExit("--bound applies to the JSON and MessagePack cells")
        if args.lib == "slots":
            value = converter(SLOTS)(value)
            root = SLOTS.get(root, root)
        fn, arg = _bound(args.lib, fmt, op, root, value)
        if args.no_gc:
            gc.collect()
            gc.disable()
        fn(arg)
        for _ in repeat(None, args.count):
            fn(arg)
        return
    if args.lib == "msgspec":
        run = _msgspec_run(fmt, op, root, value)
    elif args.lib == "pickle":
        run = _pickle_run(fmt, op, value)
    else:
        if args.lib == "slots":
            value = converter(SLOTS)(value)
            root = SLOTS.get(root, root)
        run = _polycodec_run(fmt, op, root, value)
    if args.no_gc:
        gc.collect()
        gc.disable()
    run()
    for _ in range(args.count):
        run()


if __name__ == "__main__":
    main()
