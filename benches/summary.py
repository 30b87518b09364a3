"""The Benchmarks page's tables from committed results.

``python -m benches.summary [results dir]`` prints, as Markdown, the per-format summary and
per-cell tables (polycodec's best row and each polycodec row against the fastest peer in any
idiom, losses marked), and the scaling tables when ``scaling.json`` is there.
``python -m benches.summary --write docs/benchmarks.md [results dir]`` puts them into the page
instead, each between its pair of markers (``<!-- summary: headline -->`` ...
``<!-- /summary -->``; also ``cells`` and ``scaling``, and ``versions`` and
``version_cells`` when runs on other interpreters are in the folder's
``per-version/<version>/results.json``), leaving the prose around them alone.
Reads only the JSON files, so the page is refreshed from a committed run without re-running it.

``python -m benches.summary --per-version results-3.11.json results-3.14.json ...`` prints instead
one headline row per interpreter (``per_version_markdown``): the same runs on several CPythons,
side by side, and then each JSON, MessagePack, builtins, Avro and pickle cell against the
reference the project's targets name (``targets_markdown``: polycodec's time over msgspec
Struct's, fastavro's or stdlib pickle's, per polycodec row, every miss marked). ``--per-version
--targets-only`` prints the per-cell targets table alone; ``--per-version --headline-only``
the condensed one (worst ratio and misses per format, direction and row) alone.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Optional

from .adapters.base import FORMATS, is_subject
from .report import LOSS, WIN, fmt_time, fmt_verdict


def _geomean(values: list[float]) -> Optional[float]:
    vals = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def _tally(ratios: list[float]) -> str:
    won = sum(r >= WIN for r in ratios)
    lost = sum(r < LOSS for r in ratios)
    return f"{won} / {lost} / {len(ratios)}"


def _cells_and_subjects(results: dict[str, Any]) -> tuple[list[Any], list[tuple[str, str]]]:
    cells = [c for c in results["cells"] if c["rows"] and c.get("best_peer")]
    subjects: list[tuple[str, str]] = []
    for c in cells:
        for r in c["rows"]:
            if is_subject(r["adapter"]) and (r["adapter"], r["label"]) not in subjects:
                subjects.append((r["adapter"], r["label"]))
    subjects.sort(key=lambda s: s[0] != "polycodec")
    return cells, subjects


def cells_markdown(results: dict[str, Any]) -> str:
    """Summary table plus one table per format."""
    return headline_markdown(results) + "\n" + cell_tables_markdown(results)


def headline_markdown(results: dict[str, Any]) -> str:
    """Won / lost cells and the geometric mean of the ratios, per format and polycodec row."""
    cells, subjects = _cells_and_subjects(results)
    out: list[str] = []
    header = "| Format | Best polycodec row: won / lost / cells | Geometric mean | Range |"
    align = "|---|--:|--:|--:|"
    for _, label in subjects:
        header += f" {label}: won / lost | Geometric mean |"
        align += "--:|--:|"
    out += [header, align]
    for fmt in FORMATS:
        fc = [c for c in cells if c["format"] == fmt]
        best = [_row(c, c["best_subject"])["vs_best_peer"] for c in fc if c.get("best_subject")]
        if not best:
            continue
        line = f"| {FORMATS[fmt]} | {_tally(best)} | {fmt_verdict(_geomean(best))} |"
        line += f" {min(best):.2f}-{max(best):.2f}× |"
        for name, _ in subjects:
            rs = [_row(c, name)["vs_best_peer"] for c in fc if _row(c, name)]
            tally = _tally(rs).rsplit(" / ", 1)[0] if rs else "—"
            line += f" {tally} | {fmt_verdict(_geomean(rs))} |"
        out.append(line)
    return "\n".join(out) + "\n"


def cell_tables_markdown(results: dict[str, Any]) -> str:
    """One table per format: every cell's fastest peer and each polycodec row against it."""
    cells, subjects = _cells_and_subjects(results)
    out: list[str] = []
    for fmt in FORMATS:
        fc = [c for c in cells if c["format"] == fmt]
        if not fc:
            continue
        out += ["", f"**{FORMATS[fmt]}**:", ""]
        header = "| Operation | Batch | Model | Fastest peer (any idiom) | Peer |"
        align = "|---|--:|---|---|--:|"
        for _, label in subjects:
            header += f" {label} | vs peer |"
            align += "--:|--:|"
        out += [header, align]
        for c in fc:
            peer = _row(c, c["best_peer"])
            line = (
                f"| {c['op']} | {c['batch']} | {c['model']} | {peer['label']} | "
                f"{fmt_time(peer['median_s'])} |"
            )
            for name, _ in subjects:
                r = _row(c, name)
                line += (
                    f" {fmt_time(r['median_s'])} | {fmt_verdict(r['vs_best_peer'])} |"
                    if r
                    else " — | — |"
                )
            out.append(line)
    return "\n".join(out).lstrip("\n") + "\n"


def _row(cell: dict[str, Any], adapter: Optional[str]) -> Any:
    return next((r for r in cell["rows"] if r["adapter"] == adapter), None)


def scaling_markdown(scaling: dict[str, Any]) -> str:
    """Objects per second (millions) per size, one table per format and operation."""
    out: list[str] = []
    sizes = scaling["sizes"]
    for s in scaling["series"]:
        labels: list[str] = []
        for p in s["points"]:
            if p["label"] not in labels:
                labels.append(p["label"])
        if not labels:
            continue
        out += [
            "",
            f"**{FORMATS[s['format']]} {s['op']}**, million objects per second "
            f"(`{scaling['model']}` model; last column: cost per object at "
            f"{sizes[-1]:,} ÷ at 100):",
            "",
        ]
        out.append("| Adapter | " + " | ".join(f"{n:,}" for n in sizes) + " | Growth |")
        out.append("|---|" + "--:|" * (len(sizes) + 1))
        for label in labels:
            pts = {p["size"]: p for p in s["points"] if p["label"] == label}
            cells = [f"{pts[n]['objects_per_s'] / 1e6:.2f}" if n in pts else "—" for n in sizes]
            big, ref = pts.get(sizes[-1]), pts.get(100)
            growth = f"{ref['objects_per_s'] / big['objects_per_s']:.2f}" if big and ref else "—"
            name = f"**{label}**" if label.startswith("polycodec") else label
            out.append(f"| {name} | " + " | ".join(cells) + f" | {growth} |")
    return "\n".join(out).lstrip("\n") + "\n"


def _interpreter(results: dict[str, Any]) -> str:
    env = results.get("environment", {})
    # Runs from before the report named its interpreter carry only "3.11.7 (64-bit) (cpython)".
    return str(env.get("interpreter") or f"CPython {str(env.get('python', '?')).split()[0]}")


def _version_key(results: dict[str, Any]) -> tuple[int, ...]:
    version = str(results.get("environment", {}).get("python", "")).split(" ", 1)[0]
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def per_version_markdown(runs: list[dict[str, Any]]) -> str:
    """One row per run (interpreter), one column per format: the geometric mean of polycodec's
    best row against the fastest peer in any idiom, with won / lost / cells; then the peers that
    were not installed there, which changes what "fastest peer" means on that row."""
    runs = sorted(runs, key=_version_key)
    formats = [f for f in FORMATS if any(c["format"] == f for r in runs for c in r["cells"])]
    out = [
        "| Interpreter | " + " | ".join(FORMATS[f] for f in formats) + " | Peers unavailable |",
        "|---|" + "--:|" * len(formats) + "---|",
    ]
    for run in runs:
        line = f"| {_interpreter(run)} |"
        for fmt in formats:
            ratios = [
                _row(c, c["best_subject"])["vs_best_peer"]
                for c in run["cells"]
                if c["format"] == fmt and c["rows"] and c.get("best_peer") and c.get("best_subject")
            ]
            line += f" {fmt_verdict(_geomean(ratios))} ({_tally(ratios)}) |" if ratios else " — |"
        unavailable = sorted(
            {s["adapter"] for s in run.get("skips", []) if s["kind"] == "unavailable"}
        )
        line += f" {', '.join(unavailable) or 'none'} |"
        out.append(line)
    out += [
        "",
        "Each cell: geometric mean of polycodec's best row (plain or slots dataclasses) over the "
        "fastest peer in any idiom, measured in the same run on that interpreter (won / lost / "
        "cells; a loss is below 1.00×).",
    ]
    envs = [r.get("environment", {}) for r in runs]
    if any(str(e.get("mode", "")).startswith("quick") for e in envs):
        out.append("Runs made with `--quick` are smoke runs: their numbers are indicative only.")
    revisions = {str(e.get("git_revision", "unknown")) for e in envs}
    known = sorted(r[:12] for r in revisions if not r.startswith("unknown"))
    if len(known) > 1:
        out.append(f"The runs are of different git revisions ({', '.join(known)}).")
    if len(known) < len(revisions):
        out.append("Some runs do not record their git revision (git was not available there).")
    return "\n".join(out) + "\n"


#: The reference each format's target is measured against (``polycodec time ÷ reference time``):
#: msgspec on its own ``Struct`` classes for JSON, MessagePack and builtins, fastavro for Avro,
#: the standard library's ``pickle.dumps``/``pickle.loads`` for pickle.
TARGET_REFERENCE = {
    "json": "msgspec-struct",
    "msgpack": "msgspec-struct",
    "builtins": "msgspec-struct",
    "avro": "fastavro",
    "pickle": "pickle",
}

#: polycodec's rows, in the order the targets' tables show them.
TARGET_ROWS = (("polycodec", "plain"), ("polycodec-slots", "slots"))

#: On the untyped models (plain JSON values, ``untyped_*``) polycodec's rows are ``Codec(Any)``
#: and the typed containers, each against the faster of the format's two untyped peers (issue
#: 37: at most 1.00x orjson and msgspec, ormsgpack and msgspec).
UNTYPED_ROWS = (("polycodec", "Any"), ("polycodec-containers", "containers"))
UNTYPED_REFERENCES = {"json": ("orjson", "msgspec"), "msgpack": ("ormsgpack", "msgspec")}


def _untyped(cell: dict[str, Any]) -> bool:
    return str(cell["model"]).startswith("untyped_")


def target_for(fmt: str, op: str, row: str) -> float:
    """The most polycodec's time may be, as a multiple of the reference's, in one cell: slots
    no slower than msgspec Structs, plain encode no slower, plain decode within 1.3x (JSON,
    MessagePack and builtins); Avro at most 0.1x fastavro; pickle at most 0.5x stdlib pickle."""
    if fmt == "avro":
        return 0.10
    if fmt == "pickle":
        return 0.50
    if row in ("slots", "Any", "containers") or op.startswith("encode"):
        return 1.00
    return 1.30


def misses(ratio: float, target: float) -> bool:
    """A miss is a ratio above the target as shown (two decimals): 1.004 meets 1.00, 1.006 not."""
    return round(ratio, 2) > target + 1e-9


def _version_label(results: dict[str, Any]) -> str:
    version = str(results.get("environment", {}).get("python", "?")).split(" ", 1)[0]
    return ".".join(version.split(".")[:2])


def _time_ratio(cell: dict[str, Any], subject: str) -> Optional[float]:
    row = _row(cell, subject)
    if _untyped(cell):
        refs = [_row(cell, name) for name in UNTYPED_REFERENCES.get(cell["format"], ())]
        times = [float(r["median_s"]) for r in refs if r and r["median_s"]]
        if not row or not times:
            return None
        return float(row["median_s"]) / min(times)
    ref = _row(cell, TARGET_REFERENCE.get(cell["format"]))
    if not ref or not row or not ref["median_s"]:
        return None
    return float(row["median_s"]) / float(ref["median_s"])


def _fmt_target_ratio(ratio: Optional[float], target: float) -> str:
    if ratio is None:
        return "—"
    return f"{ratio:.2f} ✗" if misses(ratio, target) else f"{ratio:.2f}"


def _cell_key(cell: dict[str, Any]) -> tuple[str, str, int, str]:
    return (cell["format"], cell["op"], int(cell["batch"]), cell["model"])


def _target_ratios(
    runs: list[dict[str, Any]],
) -> tuple[list[tuple[str, str, int, str]], list[dict[tuple[Any, ...], float]]]:
    """Every cell key that any run has (in the runs' order), and per run
    ``{(format, op, batch, model, row): polycodec time ÷ reference time}``."""
    keys: list[tuple[str, str, int, str]] = []
    per_run: list[dict[tuple[Any, ...], float]] = []
    for run in runs:
        ratios: dict[tuple[Any, ...], float] = {}
        for cell in run["cells"]:
            key = _cell_key(cell)
            if cell["format"] not in TARGET_REFERENCE:
                continue
            if key not in keys:
                keys.append(key)
            for subject, row in UNTYPED_ROWS if _untyped(cell) else TARGET_ROWS:
                ratio = _time_ratio(cell, subject)
                if ratio is not None:
                    ratios[key + (row,)] = ratio
        per_run.append(ratios)
    order = {f: i for i, f in enumerate(FORMATS)}
    ops = {op: i for i, op in enumerate(("encode_one", "decode_one", "encode_many", "decode_many"))}
    keys.sort(key=lambda k: (order.get(k[0], 99), ops.get(k[1], 9), k[3]))
    return keys, per_run


def targets_headline_markdown(runs: list[dict[str, Any]]) -> str:
    """One row per format, direction (encode: ``encode_one`` and ``encode_many``; decode
    likewise) and polycodec row; one column per interpreter: the worst ratio to the reference
    over the cells (operations, models and batch sizes) and how many cells miss the target."""
    runs = sorted(runs, key=_version_key)
    keys, per_run = _target_ratios(runs)
    labels = [_version_label(r) for r in runs]
    out = [
        "| Format | Direction | Row | Reference | Target | " + " | ".join(labels) + " |",
        "|---|---|---|---|--:|" + "--:|" * len(runs),
    ]
    groups: list[tuple[str, str, str]] = []
    for fmt, op, _, _ in keys:
        for _, row in TARGET_ROWS + UNTYPED_ROWS:
            if (fmt, op.split("_")[0], row) not in groups:
                groups.append((fmt, op.split("_")[0], row))
    groups.sort(key=lambda g: (list(FORMATS).index(g[0]), g[1] != "encode", g[2]))
    for fmt, direction, row in groups:
        if not any(
            k[0] == fmt and k[1].startswith(direction) and k[4] == row for r in per_run for k in r
        ):
            continue
        target = target_for(fmt, direction, row)
        line = (
            f"| {FORMATS[fmt]} | {direction} | {row} | {_reference_label(fmt, row)} "
            f"| ≤{target:.2f} |"
        )
        for ratios in per_run:
            got = [
                v
                for k, v in ratios.items()
                if k[0] == fmt and k[1].startswith(direction) and k[4] == row
            ]
            if not got:
                line += " — |"
                continue
            lost = sum(misses(v, target) for v in got)
            mark = " ✗" if lost else ""
            line += f" {max(got):.2f}{mark} ({lost}/{len(got)}) |"
        out.append(line)
    out += [
        "",
        "Each entry: the worst (highest) ratio of polycodec's median time to the reference's "
        "over the format's `*_one` and `*_many` cells of that direction (every model, batches "
        "of 1 and 100), measured interleaved in one run on that interpreter, then (cells that "
        "miss the target / cells). Below 1.00 polycodec is faster; ✗ marks a target missed in "
        "at least one cell.",
    ]
    return "\n".join(out) + "\n"


_REFERENCE_LABEL = {
    "json": "msgspec Struct",
    "msgpack": "msgspec Struct",
    "builtins": "msgspec Struct",
    "avro": "fastavro",
    "pickle": "stdlib pickle",
}


def _reference_label(fmt: str, row: str) -> str:
    if row in ("Any", "containers"):
        return "faster of " + ", ".join(UNTYPED_REFERENCES[fmt]) + " (untyped)"
    return _REFERENCE_LABEL[fmt]


def targets_markdown(runs: list[dict[str, Any]]) -> str:
    """Every cell and polycodec row against its target, one column per interpreter."""
    runs = sorted(runs, key=_version_key)
    keys, per_run = _target_ratios(runs)
    labels = [_version_label(r) for r in runs]
    out = [
        "| Format | Operation | Batch | Model | Row | Target | " + " | ".join(labels) + " |",
        "|---|---|--:|---|---|--:|" + "--:|" * len(runs),
    ]
    missed: list[str] = []
    for key in keys:
        fmt, op, batch, model = key
        for _, row in TARGET_ROWS + UNTYPED_ROWS:
            if not any(key + (row,) in ratios for ratios in per_run):
                continue
            target = target_for(fmt, op, row)
            line = f"| {FORMATS[fmt]} | {op} | {batch} | {model} | {row} | ≤{target:.2f} |"
            for label, ratios in zip(labels, per_run):
                ratio = ratios.get(key + (row,))
                line += f" {_fmt_target_ratio(ratio, target)} |"
                if ratio is not None and misses(ratio, target):
                    missed.append(f"{label} {FORMATS[fmt]} {op} {model} {row} {ratio:.2f}")
            out.append(line)
    out += [
        "",
        "Each entry: polycodec's median time ÷ the reference's (msgspec Struct for JSON, "
        "MessagePack and builtins; fastavro for Avro; stdlib pickle for pickle; on the untyped "
        "models, rows Any and containers, the faster of orjson and msgspec for JSON and of "
        "ormsgpack and msgspec for MessagePack), both measured "
        "interleaved in the same run; ✗ marks a missed target "
        f"({len(missed)} of {sum(len(r) for r in per_run)} entries).",
    ]
    return "\n".join(out) + "\n"


def _revision(env: dict[str, Any]) -> str:
    revision = str(env.get("git_revision", "unknown"))
    return "not recorded (no git)" if revision.startswith("unknown") else revision[:12]


def runs_markdown(runs: list[dict[str, Any]]) -> str:
    """Which run each interpreter's column comes from: build, mode, revision, load."""
    runs = sorted(runs, key=_version_key)
    out = [
        "| Interpreter | Build | Mode | Git revision | Load average (start / end) | Wall time |",
        "|---|---|---|---|--:|--:|",
    ]
    for run in runs:
        env = run.get("environment", {})
        load = run.get("load_average_start_end") or []
        load_s = " / ".join(f"{v:.1f}" for v in load) if load else "—"
        out.append(
            f"| {_interpreter(run)} | {env.get('python_build', '?')} | {env.get('mode', '?')} | "
            f"{_revision(env)} | {load_s} | "
            f"{float(run.get('wall_time_s') or 0):.0f} s |"
        )
    cpus = {str(r.get("environment", {}).get("cpu_count", "?")) for r in runs}
    out += ["", f"Logical CPUs: {', '.join(sorted(cpus))}."]
    return "\n".join(out) + "\n"


MARKER = re.compile(r"(<!-- summary: (\w+) -->\n).*?(<!-- /summary -->)", re.S)


def sections(folder: Path) -> dict[str, str]:
    """The generated parts of the Benchmarks page, by marker name."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    out = {"headline": headline_markdown(results), "cells": cell_tables_markdown(results)}
    # Runs of the same benchmark on the other interpreters (``per-version/<version>/``), beside
    # this folder's own run: the per-version tables.
    others = sorted((folder / "per-version").glob("*/results.json"))
    if others:
        runs = [results] + [json.loads(p.read_text(encoding="utf-8")) for p in others]
        out["versions"] = "\n".join(
            [per_version_markdown(runs), runs_markdown(runs), targets_headline_markdown(runs)]
        )
        out["version_cells"] = targets_markdown(runs)
    scaling = folder / "scaling.json"
    if scaling.exists():
        out["scaling"] = scaling_markdown(json.loads(scaling.read_text(encoding="utf-8")))
    return out


def fill(page: str, generated: dict[str, str]) -> str:
    """``page`` with each marked section replaced by its generated text (blank lines around it,
    as Markdown needs around a table)."""

    def section(match: re.Match[str]) -> str:
        name = match[2]
        if name not in generated:
            raise KeyError(f"no generated section {name!r} for the marker {match[1].strip()}")
        return f"{match[1]}\n{generated[name].strip()}\n\n{match[3]}"

    return MARKER.sub(section, page)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--per-version"]:
        argv = argv[1:]
        only = argv.pop(0) if argv[:1] in (["--targets-only"], ["--headline-only"]) else ""
        runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in argv]
        if not runs:
            print("usage: python -m benches.summary --per-version RESULTS.json...", file=sys.stderr)
            return 2
        if only == "--headline-only":
            print(targets_headline_markdown(runs))
        elif only == "--targets-only":
            print(targets_markdown(runs))
        else:
            print(per_version_markdown(runs))
            print(runs_markdown(runs))
            print(targets_headline_markdown(runs))
            print(targets_markdown(runs))
        return 0
    page: Optional[Path] = None
    if argv[:1] == ["--write"]:
        if len(argv) < 2:
            print("usage: python -m benches.summary [--write PAGE] [results dir]", file=sys.stderr)
            return 2
        page, argv = Path(argv[1]), argv[2:]
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent / "results"
    generated = sections(folder)
    if page is None:
        print("\n".join(text for text in generated.values()))
        return 0
    text = page.read_text(encoding="utf-8")
    filled = fill(text, generated)
    missing = set(generated) - set(m[2] for m in MARKER.finditer(text))
    if missing:
        print(f"{page}: no markers for {', '.join(sorted(missing))}", file=sys.stderr)
        return 1
    page.write_text(filled, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
