"""The Benchmarks page's tables from committed results.

``python -m benches.summary [results dir]`` prints, as Markdown, the per-format summary and
per-cell tables (polycodec's best row and each polycodec row against the fastest peer in any
idiom, losses marked), and the scaling tables when ``scaling.json`` is there.
``python -m benches.summary --write docs/benchmarks.md README.md [results dir]`` puts them into
the pages instead, each between its pair of markers (``<!-- summary: headline -->`` ...
``<!-- /summary -->``; also ``rows``, ``cells`` and ``scaling``, and ``versions`` and
``version_cells`` when runs on other interpreters are in the folder's
``per-version/<version>/results.json``), leaving the prose around them alone, and redraws the
front page's chart (``summary.png`` in the results folder, ``plots.summary_chart``) from
``results.json`` and ``features.json``. Every ratio is polycodec's time ÷ the peer's (below 1.00
polycodec is faster). Reads only the JSON files, so the pages are refreshed from a committed
run without re-running it.

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
from .report import LOSS, WIN, fmt_time


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


def fmt_time_ratio(ratio: Optional[float]) -> str:
    """polycodec's time ÷ a peer's, the one direction the Benchmarks page uses: ``**0.85**``
    when polycodec is faster, ``1.05 ✗`` when it is slower, plain within the tie band."""
    if ratio is None:
        return "—"
    speedup = 1.0 / ratio
    if speedup >= WIN:
        return f"**{ratio:.2f}**"
    if speedup < LOSS:
        return f"{ratio:.2f} ✗"
    return f"{ratio:.2f}"


def _time_ratios(cells: list[Any], subject: Optional[str] = None) -> list[float]:
    """polycodec's time ÷ the fastest peer's per cell, for ``subject`` (a polycodec row), or
    for each cell's faster polycodec row when None."""
    out = []
    for c in cells:
        row = _row(c, subject if subject is not None else c.get("best_subject"))
        if row is not None and row.get("vs_best_peer"):
            out.append(1.0 / float(row["vs_best_peer"]))
    return out


def _tally_times(ratios: list[float]) -> str:
    """Won / lost / cells from time ratios (the same tie band as the report's speedups)."""
    return _tally([1.0 / r for r in ratios])


def _peer_labels(cells: list[Any]) -> str:
    labels: list[str] = []
    for c in cells:
        label = _row(c, c["best_peer"])["label"]
        if label not in labels:
            labels.append(label)
    return ", ".join(labels)


def cells_markdown(results: dict[str, Any]) -> str:
    """Summary table plus one table per format."""
    return headline_markdown(results) + "\n" + cell_tables_markdown(results)


def _feature_ratios(features: dict[str, Any], fmt: str) -> list[tuple[float, float]]:
    """Per-feature cells of ``fmt`` (``--features``): the ``slots=True`` row's time ÷ the
    reference's (msgspec Struct, fastavro, stdlib pickle) and that cell's target."""
    targets = {
        (t["format"], t["direction"]): float(t["at_most"])
        for t in features.get("targets", [])
        if t["row"] == "slots"
    }
    out = []
    for cell in features["cells"]:
        cell_fmt, op = str(cell["cell"]).split("-")
        ratio = cell.get("ratios", {}).get("slots")
        if cell_fmt != fmt or ratio is None:
            continue
        direction = "enc" if op in ("encode", "to") else "dec"
        out.append((float(ratio), targets.get((fmt, direction), 1.0)))
    return out


def headline_markdown(results: dict[str, Any], features: Optional[dict[str, Any]] = None) -> str:
    """One row per format: polycodec's faster row (plain or slots dataclasses, per cell) against
    the fastest peer, as time ÷ time: the geometric mean, the best and worst cell, and the cells
    won / lost (the README shows this table too). With the per-feature run's results
    (``features.json``), two more columns: the geometric mean of its ``slots=True`` cells against
    the same reference, and how many of them meet their target."""
    cells, _ = _cells_and_subjects(results)
    head = "| Format | Fastest peer | polycodec ÷ peer | Best-worst cell | Won / lost / cells |"
    align = "|---|---|--:|--:|--:|"
    if features is not None:
        head += " Per feature ÷ peer | At target / cells |"
        align += "--:|--:|"
    out = [head, align]
    for fmt in FORMATS:
        fc = [c for c in cells if c["format"] == fmt]
        ratios = _time_ratios(fc)
        if not ratios:
            continue
        row = (
            f"| {FORMATS[fmt]} | {_peer_labels(fc)} | {fmt_time_ratio(_geomean(ratios))} | "
            f"{min(ratios):.2f}-{max(ratios):.2f} | {_tally_times(ratios)} |"
        )
        if features is not None:
            per_feature = _feature_ratios(features, fmt)
            met = sum(not misses(r, t) for r, t in per_feature)
            mean = _geomean([r for r, _ in per_feature])
            row += (
                f" {fmt_time_ratio(mean)} | {met} / {len(per_feature)} |"
                if per_feature
                else " — | — |"
            )
        out.append(row)
    env = results.get("environment", {})
    mode = str(env.get("mode", "full"))
    out += [
        "",
        f"{_short_interpreter(results)}, `{env.get('command', 'python -m benches')}` "
        f"({'a smoke run: indicative only' if mode.startswith('quick') else mode + ' run'}).",
    ]
    if features is not None:
        n_features = len({c["feature"] for c in features["cells"]})
        smoke = "; a smoke run: indicative only" if features.get("quick") else ""
        out[-1] += (
            f" Per feature: {_short_interpreter(features)}, `python -m benches --features` "
            f"({n_features} small models, `slots=True` against msgspec Structs, fastavro and the "
            f"stdlib's pickle; targets at most 1.00, 0.10 and 0.50{smoke})."
        )
    return "\n".join(out) + "\n"


def rows_markdown(results: dict[str, Any]) -> str:
    """Per format, each polycodec row (plain, slots) on its own against the fastest peer."""
    cells, subjects = _cells_and_subjects(results)
    header, align = "| Format |", "|---|"
    for _, label in subjects:
        header += f" {label} ÷ peer | Won / lost |"
        align += "--:|--:|"
    out = [header, align]
    for fmt in FORMATS:
        fc = [c for c in cells if c["format"] == fmt]
        if not fc:
            continue
        line = f"| {FORMATS[fmt]} |"
        for name, _ in subjects:
            ratios = _time_ratios(fc, name)
            tally = _tally_times(ratios).rsplit(" / ", 1)[0] if ratios else "—"
            line += f" {fmt_time_ratio(_geomean(ratios))} | {tally} |"
        out.append(line)
    return "\n".join(out) + "\n"


def cell_tables_markdown(results: dict[str, Any]) -> str:
    """One table per format: every cell's fastest peer (in the heading when it is the same peer
    in every cell, so that the table keeps to a page's width), its time, and each polycodec
    row's time ÷ the peer's."""
    cells, subjects = _cells_and_subjects(results)
    out: list[str] = []
    for fmt in FORMATS:
        fc = [c for c in cells if c["format"] == fmt]
        if not fc:
            continue
        one_peer = len({c["best_peer"] for c in fc}) == 1
        against = f", against {_peer_labels(fc)}" if one_peer else ""
        out += ["", f"**{FORMATS[fmt]}**{against}:", ""]
        header = "| Operation | Model |" + ("" if one_peer else " Fastest peer |")
        header += " Peer's time |"
        align = "|---|---|" + ("" if one_peer else "---|") + "--:|"
        for _, label in subjects:
            header += f" {label} ÷ peer |"
            align += "--:|"
        out += [header, align]
        for c in fc:
            peer = _row(c, c["best_peer"])
            line = f"| {_operation(c['op'], c['batch'])} | {c['model']} |"
            line += "" if one_peer else f" {peer['label']} |"
            line += f" {fmt_time(peer['median_s'])} |"
            for name, _ in subjects:
                line += f" {fmt_time_ratio((_time_ratios([c], name) or [None])[0])} |"
            out.append(line)
    return "\n".join(out).lstrip("\n") + "\n"


def _row(cell: dict[str, Any], adapter: Optional[str]) -> Any:
    return next((r for r in cell["rows"] if r["adapter"] == adapter), None)


def scaling_markdown(scaling: dict[str, Any]) -> str:
    """Objects per second (millions) per size, one table per format and operation; at most
    four sizes (every other one and the largest), so that a table fits a page's width
    (``scaling.md`` has them all)."""
    out: list[str] = []
    sizes = scaling["sizes"]
    if len(sizes) > 4:
        sizes = sizes[::2] + ([] if sizes[-1] in sizes[::2] else [sizes[-1]])
    for s in scaling["series"]:
        labels: list[str] = []
        for p in s["points"]:
            if p["label"] not in labels:
                labels.append(p["label"])
        if not labels:
            continue
        out += [
            "",
            f"**{FORMATS[s['format']]} {s['op']}**, million objects per second by objects "
            f"per call (`{scaling['model']}` model; Growth: cost per object at "
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


def _short_interpreter(results: dict[str, Any]) -> str:
    """``CPython 3.14.10``: the build details are in the runs table."""
    return f"CPython {str(results.get('environment', {}).get('python', '?')).split()[0]}"


def _version_key(results: dict[str, Any]) -> tuple[int, ...]:
    version = str(results.get("environment", {}).get("python", "")).split(" ", 1)[0]
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def per_version_markdown(runs: list[dict[str, Any]]) -> str:
    """One row per run (interpreter), one column per format: the geometric mean of polycodec's
    best row's time ÷ the fastest peer's (any idiom), with won / lost / cells; then the peers
    that were not installed there, which changes what "fastest peer" means on that row."""
    runs = sorted(runs, key=_version_key)
    formats = [f for f in FORMATS if any(c["format"] == f for r in runs for c in r["cells"])]
    out = [
        "| Interpreter | " + " | ".join(FORMATS[f] for f in formats) + " |",
        "|---|" + "--:|" * len(formats),
    ]
    unavailable_by_run: list[str] = []
    for run in runs:
        line = f"| {_short_interpreter(run)} |"
        for fmt in formats:
            ratios = _time_ratios(
                [
                    c
                    for c in run["cells"]
                    if c["format"] == fmt
                    and c["rows"]
                    and c.get("best_peer")
                    and c.get("best_subject")
                ]
            )
            line += (
                f" {fmt_time_ratio(_geomean(ratios))} ({_tally_times(ratios)}) |"
                if ratios
                else " — |"
            )
        unavailable = sorted(
            {s["adapter"] for s in run.get("skips", []) if s["kind"] == "unavailable"}
        )
        if unavailable:
            unavailable_by_run.append(f"{_short_interpreter(run)}: {', '.join(unavailable)}")
        out.append(line)
    out += [
        "",
        "Peers not installed (so not in the running for fastest peer): "
        + ("; ".join(unavailable_by_run) or "none")
        + ".",
        "Each cell: the geometric mean of polycodec's time (its faster row, plain or slots "
        "dataclasses) ÷ the fastest peer's in any idiom, measured in the same run on that "
        "interpreter, below 1.00 polycodec is faster; then won / lost / cells.",
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


def _in_direction(key: tuple[Any, ...], fmt: str, direction: str, row: str) -> bool:
    return bool(key[0] == fmt and key[1].startswith(direction) and key[4] == row)


def targets_headline_markdown(runs: list[dict[str, Any]]) -> str:
    """One row per format, direction (encode: ``encode_one`` and ``encode_many``; decode
    likewise) and polycodec row, with its target; one column per interpreter: the worst ratio to
    the reference over the cells (operations, models and batch sizes) and how many cells miss
    the target. Few columns, so that the table fits a page's width."""
    runs = sorted(runs, key=_version_key)
    keys, per_run = _target_ratios(runs)
    labels = [_version_label(r) for r in runs]
    out = [
        "| Cells (target) | " + " | ".join(labels) + " |",
        "|---|" + "--:|" * len(runs),
    ]
    groups: list[tuple[str, str, str]] = []
    for fmt, op, _, _ in keys:
        for _, row in TARGET_ROWS + UNTYPED_ROWS:
            if (fmt, op.split("_")[0], row) not in groups:
                groups.append((fmt, op.split("_")[0], row))
    groups.sort(key=lambda g: (list(FORMATS).index(g[0]), g[1] != "encode", g[2]))
    references: list[str] = []
    for fmt, direction, row in groups:
        if not any(_in_direction(k, fmt, direction, row) for r in per_run for k in r):
            continue
        target = target_for(fmt, direction, row)
        reference = f"{FORMATS[fmt]}: {_reference_label(fmt, row)}"
        if reference not in references:
            references.append(reference)
        line = f"| {FORMATS[fmt]} {direction}, {row} (≤{target:.2f}) |"
        for ratios in per_run:
            got = [v for k, v in ratios.items() if _in_direction(k, fmt, direction, row)]
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
        f"at least one cell. References: {'; '.join(references)}.",
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


def _operation(op: str, batch: int) -> str:
    return op if op.endswith("_one") else f"{op} ({batch})"


def targets_markdown(runs: list[dict[str, Any]]) -> str:
    """Every cell against its target, one table per format and polycodec row (operation, model,
    then one column per interpreter: few enough to fit a page's width)."""
    runs = sorted(runs, key=_version_key)
    keys, per_run = _target_ratios(runs)
    labels = [_version_label(r) for r in runs]
    out: list[str] = []
    missed: list[str] = []
    for fmt in FORMATS:
        for _, row in TARGET_ROWS + UNTYPED_ROWS:
            rows = [k for k in keys if k[0] == fmt and any(k + (row,) in r for r in per_run)]
            if not rows:
                continue
            encode, decode = target_for(fmt, "encode", row), target_for(fmt, "decode", row)
            targets = (
                f"at most {encode:.2f}"
                if encode == decode
                else f"encode at most {encode:.2f}, decode at most {decode:.2f}"
            )
            out += [
                "",
                f"**{FORMATS[fmt]}, {row}** (÷ {_reference_label(fmt, row)}; target: {targets}):",
                "",
                "| Operation | Model | " + " | ".join(labels) + " |",
                "|---|---|" + "--:|" * len(runs),
            ]
            for key in rows:
                _, op, batch, model = key
                target = target_for(fmt, op, row)
                line = f"| {_operation(op, batch)} | {model} |"
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
    return "\n".join(out).lstrip("\n") + "\n"


def _revision(env: dict[str, Any]) -> str:
    revision = str(env.get("git_revision", "unknown"))
    return "not recorded (no git)" if revision.startswith("unknown") else revision[:12]


def runs_markdown(runs: list[dict[str, Any]]) -> str:
    """Which run each interpreter's column comes from: build, mode, revision, load."""
    runs = sorted(runs, key=_version_key)
    out = [
        "| Interpreter | Mode | Git revision | Load average (start / end) | Wall time |",
        "|---|---|---|--:|--:|",
    ]
    for run in runs:
        env = run.get("environment", {})
        load = run.get("load_average_start_end") or []
        load_s = " / ".join(f"{v:.1f}" for v in load) if load else "—"
        out.append(
            f"| {_interpreter(run)} | {env.get('mode', '?')} | "
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
    features_file = folder / "features.json"
    features = (
        json.loads(features_file.read_text(encoding="utf-8")) if features_file.exists() else None
    )
    out = {
        "headline": headline_markdown(results, features),
        "rows": rows_markdown(results),
        "cells": cell_tables_markdown(results),
    }
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
    pages: list[Path] = []
    if argv[:1] == ["--write"]:
        argv = argv[1:]
        while argv and argv[0].endswith(".md"):
            pages.append(Path(argv.pop(0)))
        if not pages:
            print(
                "usage: python -m benches.summary [--write PAGE.md...] [results dir]",
                file=sys.stderr,
            )
            return 2
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent / "results"
    generated = sections(folder)
    if not pages:
        print("\n".join(text for text in generated.values()))
        return 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        # A page shows the sections it has markers for (the README only the headline); the
        # Benchmarks page must have them all.
        missing = set(generated) - set(m[2] for m in MARKER.finditer(text))
        if missing and page.name == "benchmarks.md":
            print(f"{page}: no markers for {', '.join(sorted(missing))}", file=sys.stderr)
            return 1
        page.write_text(fill(text, generated), encoding="utf-8")
        print(f"wrote: {page}")
    from .plots import SUMMARY_CHART, summary_chart

    note = summary_chart(folder, folder / SUMMARY_CHART)
    print(note or f"wrote: {folder / SUMMARY_CHART}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
