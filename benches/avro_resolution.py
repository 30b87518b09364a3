"""Resolving large and deep Avro writer schemas: polycodec against fastavro, time and memory.

A container file of one record is written (by fastavro) under each writer schema below, and
read back in a fresh process per measurement: the reader parses the header's schema and reads
the record. What is measured is that one call, in the process that makes it:

* CPU time (``time.process_time``; this machine is shared, so wall time is not comparable
  between runs, and the CPU time of the best of ``--repeat`` processes is reported);
* the peak resident memory it adds: the process's resident high-water mark (``VmHWM``, reset
  just before the call by writing 5 to ``/proc/self/clear_refs``) minus its resident size
  before the call, the file already read into memory and both libraries imported.

The readers:

* polycodec: ``Codec(First, "avro").decode_many(data)``, ``First`` a dataclass of the first
  record's fields: the writer schema is parsed and resolved against the codec's, every branch
  and field, then the record is read into a ``First``;
* fastavro, in its fastest idiom: ``list(fastavro.reader(BytesIO(data)))``, which parses the
  writer schema and reads the record as a dict (no reader schema, no resolution);
* fastavro with ``reader_schema=`` the first record's schema (resolution, as polycodec does:
  fastavro resolves lazily, only the branch it reads).

The writer schemas (``--only NAME`` picks some):

* ``union-N``: a union of N records, record i with a long and a nullable field of each of
  records 0..i-1 (issue 39's schema at N=400: 4.3 MB of JSON, 80,000 fields);
* ``chain-127``: 127 records nested inline, each the only field of the one around it (the
  deepest schema polycodec accepts: 128 levels with the long inside);
* ``refchain-3000``: a union of 3,000 records, each with a field of the previous one by name;
* ``wide-20000``: one record of 20,000 fields of mixed types.

Run from the repository root, with a release build of the extension::

    scripts/dev-build release && PYTHONPATH=python python -m benches.avro_resolution \\
        --out benches/results/avro-resolution.md
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple

Schema = Any


def union_schema(n: int) -> Tuple[Schema, Dict[str, Any]]:
    records = []
    for i in range(n):
        fields: List[Dict[str, Any]] = [{"name": "id", "type": "long"}]
        for j in range(i):
            fields.append({"name": f"r{j}", "type": ["null", f"R{j}"], "default": None})
        records.append({"type": "record", "name": f"R{i}", "fields": fields})
    return records, {"id": 1}


def chain_schema(depth: int) -> Tuple[Schema, Dict[str, Any]]:
    schema: Schema = "long"
    datum: Any = 7
    for level in reversed(range(depth)):
        schema = {"type": "record", "name": f"C{level}", "fields": [{"name": "f", "type": schema}]}
        datum = {"f": datum}
    return schema, datum


def refchain_schema(n: int) -> Tuple[Schema, Dict[str, Any]]:
    records: List[Schema] = [
        {"type": "record", "name": "R0", "fields": [{"name": "id", "type": "long"}]}
    ]
    for i in range(1, n):
        records.append(
            {
                "type": "record",
                "name": f"R{i}",
                "fields": [
                    {"name": "id", "type": "long"},
                    {"name": "prev", "type": ["null", f"R{i - 1}"], "default": None},
                ],
            }
        )
    return records, {"id": 1}


def wide_schema(n: int) -> Tuple[Schema, Dict[str, Any]]:
    kinds: List[Tuple[Any, Any]] = [
        ("long", 1),
        ("string", "x"),
        (["null", "double"], None),
        ({"type": "array", "items": "int"}, []),
        ({"type": "map", "values": "string"}, {}),
    ]
    fields = []
    datum: Dict[str, Any] = {}
    for i in range(n):
        kind, value = kinds[i % len(kinds)]
        fields.append({"name": f"f{i}", "type": kind})
        datum[f"f{i}"] = value
    return {"type": "record", "name": "Wide", "fields": fields}, datum


# Each case: the schema builder and its size; a warm run first reads a file of a tenth the size.
CASES: Dict[str, Tuple[Callable[[int], Tuple[Schema, Dict[str, Any]]], int]] = {
    "union-100": (union_schema, 100),
    "union-200": (union_schema, 200),
    "union-400": (union_schema, 400),
    "chain-127": (chain_schema, 127),
    "refchain-3000": (refchain_schema, 3000),
    "wide-20000": (wide_schema, 20000),
}


def first_record(schema: Schema) -> Schema:
    return schema[0] if isinstance(schema, list) else schema


# -- one measurement, in a process of its own ----------------------------------------------


def _python_type(schema: Schema, classes: Dict[str, type]) -> Any:
    """The annotation polycodec's reader uses for a field of ``schema``."""
    from typing import Dict as D, List as L, Optional

    if isinstance(schema, list):
        inner = [s for s in schema if s != "null"]
        return Optional[_python_type(inner[0], classes)]
    if isinstance(schema, str):
        simple = {"long": int, "int": int, "string": str, "double": float, "boolean": bool}
        return simple.get(schema) or classes[schema]
    if schema["type"] == "array":
        return L[_python_type(schema["items"], classes)]  # type: ignore[misc]
    if schema["type"] == "map":
        return D[str, _python_type(schema["values"], classes)]  # type: ignore[misc]
    return _dataclass(schema, classes)


def _dataclass(schema: Schema, classes: Dict[str, type]) -> type:
    name = schema["name"]
    fields = []
    placeholder = dataclasses.make_dataclass(name, [])
    classes[name] = placeholder
    for field in schema["fields"]:
        tp = _python_type(field["type"], classes)
        fields.append((field["name"], tp))
    cls = dataclasses.make_dataclass(name, fields)
    cls.__module__ = __name__
    classes[name] = cls
    globals()[name] = cls
    return cls


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def measure(library: str, path: str, warm_up: Optional[str]) -> Dict[str, float]:
    """Reads the file at ``path`` with ``library``: CPU seconds and added peak memory. The
    reader's schema (the first record's) is in ``path + ".first"``, so that setting up costs
    less memory than the call measured. With ``warm_up``, that file (a smaller schema of the
    same kind) is read first, by a reader of its own, so that the allocators have the pages a
    process that has read Avro before has."""
    import gc
    import time

    import fastavro

    import polycodec

    def reader(file: str) -> Tuple[Callable[[], Any], Any]:
        with open(file, "rb") as fp:
            data = fp.read()
        with open(file + ".first") as fp:
            first = json.load(fp)
        if library == "polycodec":
            codec = polycodec.Codec(_dataclass(first, {}), "avro")
            return (lambda: codec.decode_many(data)), codec
        if library == "fastavro":
            return (lambda: list(fastavro.reader(io.BytesIO(data)))), None
        schema = fastavro.parse_schema(first)
        return (lambda: list(fastavro.reader(io.BytesIO(data), reader_schema=schema))), schema

    if warm_up is not None:
        warm, _ = reader(warm_up)
        warm()
        del warm
    call, _keep = reader(path)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fp:
        fp.write("5")  # the high-water mark starts again from the resident size now
    before = _status_kib("VmRSS")
    start = time.process_time()
    wall = time.perf_counter()
    records = call()
    seconds = time.process_time() - start
    wall = time.perf_counter() - wall
    after = _status_kib("VmHWM")
    assert len(records) == 1
    return {"cpu": seconds, "wall": wall, "peak_mib": (after - before) / 1024}


# -- the run --------------------------------------------------------------------------------

LIBRARIES = ("polycodec", "fastavro", "fastavro-resolving")


def _run_one(library: str, path: str, warm_up: Optional[str]) -> Dict[str, float]:
    extra = ["--warm-up", warm_up] if warm_up else []
    out = subprocess.run(
        [sys.executable, "-m", "benches.avro_resolution", "--measure", library, path, *extra],
        check=True,
        capture_output=True,
        text=True,
        env=dict(os.environ),
    ).stdout
    result: Dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def run(names: List[str], repeat: int) -> Dict[str, Dict[str, Any]]:
    import fastavro

    def write(folder: str, name: str, schema: Schema, datum: Any) -> str:
        path = os.path.join(folder, f"{name}.avro")
        with open(path, "wb") as fp:
            fastavro.writer(fp, fastavro.parse_schema(schema), [datum])
        with open(path + ".first", "w") as fp:
            json.dump(first_record(schema), fp)
        return path

    results: Dict[str, Dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            build, size = CASES[name]
            schema, datum = build(size)
            path = write(folder, name, schema, datum)
            small = write(folder, f"{name}-warm", *build(max(size // 10, 2)))
            row: Dict[str, Any] = {"schema_bytes": len(json.dumps(schema, separators=(",", ":")))}
            for library in LIBRARIES:
                for state, warm_up in (("cold", None), ("warm", small)):
                    runs = [_run_one(library, path, warm_up) for _ in range(repeat)]
                    row[f"{library} {state}"] = {
                        "cpu": min(r["cpu"] for r in runs),
                        "peak_mib": min(r["peak_mib"] for r in runs),
                    }
                    print(name, library, state, row[f"{library} {state}"], file=sys.stderr)
            results[name] = row
    return results


def report(results: Dict[str, Dict[str, Any]], repeat: int) -> str:
    import fastavro

    import polycodec

    lines = [
        "# Avro schema resolution: polycodec and fastavro",
        "",
        f"CPython {platform.python_version()} ({platform.python_implementation()}), "
        f"polycodec {polycodec.__version__}, fastavro {fastavro.__version__}, "
        f"load average {os.getloadavg()[0]:.1f}, best of {repeat} fresh processes per cell.",
        "Command: `PYTHONPATH=python python -m benches.avro_resolution --out "
        "benches/results/avro-resolution.md` (release build). See the module's docstring for "
        "what each reader does.",
        "",
        "Reading one record from a container file whose header holds the writer schema: the "
        "CPU time of that call and the peak resident memory it adds. *Cold*: the first Avro "
        "read of the process; *warm*: after one read of a file of the same kind a tenth the "
        "size, so that the allocators already hold pages (polycodec's Rust allocator, "
        "mimalloc, takes its first pages on the first large schema: 6-12 MiB that any later "
        "schema reuses). The ratios are fastavro's (its fastest idiom, no reader schema) over "
        "polycodec's: above 1, polycodec is faster or smaller.",
    ]
    for state in ("cold", "warm"):
        lines += [
            "",
            f"**{state.capitalize()}**",
            "",
            "| writer schema | JSON | polycodec | fastavro | fastavro, resolving | time ratio "
            "| polycodec memory | fastavro memory | fastavro, resolving | memory ratio |",
            "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
        ]
        for name, row in results.items():
            poly = row[f"polycodec {state}"]
            fast = row[f"fastavro {state}"]
            resolving = row[f"fastavro-resolving {state}"]
            lines.append(
                f"| {name} | {row['schema_bytes'] / 1e6:.2f} MB | {poly['cpu'] * 1000:.1f} ms | "
                f"{fast['cpu'] * 1000:.1f} ms | {resolving['cpu'] * 1000:.1f} ms | "
                f"{fast['cpu'] / max(poly['cpu'], 1e-4):.1f}x | {poly['peak_mib']:.1f} MiB | "
                f"{fast['peak_mib']:.1f} MiB | {resolving['peak_mib']:.1f} MiB | "
                f"{fast['peak_mib'] / max(poly['peak_mib'], 0.1):.1f}x |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", help="write the Markdown report here")
    parser.add_argument("--measure", nargs=2, metavar=("LIBRARY", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(*args.measure, args.warm_up)))
        return
    names = args.only or list(CASES)
    results = run(names, args.repeat)
    text = report(results, args.repeat)
    print(text)
    if args.out:
        with open(args.out, "w") as fp:
            fp.write(text)
        with open(os.path.splitext(args.out)[0] + ".json", "w") as fp:
            json.dump(results, fp, indent=1)


if __name__ == "__main__":
    main()
