"""``python -m benches --features``: the per-feature benchmark (issue 37).

For every feature of ``benches/features.py`` and every cell of ``benches/feature_cells.py``, the
libs of that cell's format are checked (the values come back equal; Avro writes fastavro's bytes
with the same schema; the stdlib reads polycodec's pickle and polycodec the stdlib's), then timed
interleaved in one process (``timing.measure_cell``) on one batch of 50 values per call. The
report (``features.md``, ``features.json``, ``features.png``) shows polycodec's time ÷ the
reference's per cell: msgspec on its Struct twins for JSON, MessagePack and builtins, fastavro
for Avro, the stdlib's pickle for pickle. Below 1.00 polycodec is faster; a cell over its target
is marked ✗ and counted, so losses show as losses.
"""

from __future__ import annotations

import gc
import importlib.metadata
import json
import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .feature_cells import CELLS, GROUPS, Unavailable, check, prepare
from .features import BATCH, FEATURES
from .progress import ProgressBar
from .runner import load_average
from .timing import Candidate, Stats, TimingConfig, measure_cell

__all__ = ["TARGETS", "FeatureRun", "run", "write", "timing_config"]

#: The reference each format's ratios are taken against, per polycodec row.
REFERENCE: dict[str, dict[str, str]] = {
    "json": {"slots": "msgspec", "plain": "msgspec"},
    "msgpack": {"slots": "msgspec", "plain": "msgspec"},
    "builtins": {"slots": "msgspec", "plain": "msgspec"},
    "avro": {"slots": "fastavro", "plain": "fastavro"},
    "pickle": {"slots": "pickle-slots", "plain": "pickle"},
}

#: Issue 37's targets, polycodec's time ÷ the reference's: (row, format, direction) -> at most.
TARGETS: dict[tuple[str, str, str], float] = {
    **{("slots", f, d): 1.00 for f in ("json", "msgpack", "builtins") for d in ("enc", "dec")},
    **{("plain", f, "enc"): 1.00 for f in ("json", "msgpack", "builtins")},
    **{("plain", f, "dec"): 1.15 for f in ("json", "msgpack", "builtins")},
    **{(row, "avro", d): 0.10 for row in ("slots", "plain") for d in ("enc", "dec")},
    **{(row, "pickle", d): 0.50 for row in ("slots", "plain") for d in ("enc", "dec")},
}

LIB_LABELS = {
    "slots": "polycodec (slots)",
    "plain": "polycodec (plain)",
    "msgspec": "msgspec (Struct)",
    "fastavro": "fastavro (+ conversion)",
    "fastavro-dicts": "fastavro (dicts only)",
    "pickle": "pickle (plain)",
    "pickle-slots": "pickle (slots)",
}

CELL_LABELS = {
    "json-encode": "JSON enc",
    "json-decode": "JSON dec",
    "msgpack-encode": "MsgPack enc",
    "msgpack-decode": "MsgPack dec",
    "builtins-to": "to_builtins",
    "builtins-from": "from_builtins",
    "avro-encode": "Avro enc",
    "avro-decode": "Avro dec",
    "pickle-encode": "pickle enc",
    "pickle-decode": "pickle dec",
}


def timing_config(quick: bool) -> TimingConfig:
    """Full: 5 ms samples, at least 15 per lib and cell. Quick: a smoke run of a few seconds."""
    if quick:
        return TimingConfig(target_sample_s=0.001, max_rounds=2, min_samples=2, budget_s=0.0)
    return TimingConfig(target_sample_s=0.005, max_rounds=40, min_samples=15, budget_s=0.3)


def _direction(cell: str) -> str:
    return "enc" if cell.endswith(("encode", "-to")) else "dec"


@dataclass
class CellResult:
    feature: str
    cell: str
    stats: dict[str, Stats]
    payload_bytes: dict[str, int]

    def ratio(self, row: str) -> Optional[float]:
        """``row``'s median ÷ its reference's, or None when either is missing."""
        fmt = self.cell.split("-")[0]
        ref = REFERENCE[fmt][row]
        if row not in self.stats or ref not in self.stats:
            return None
        return self.stats[row].median / self.stats[ref].median


@dataclass
class FeatureRun:
    features: list[str]
    cells: list[str]
    timing: TimingConfig
    quick: bool
    results: list[CellResult] = field(default_factory=list)
    #: (feature, format, lib) -> why it has no cells there
    skips: dict[tuple[str, str, str], str] = field(default_factory=dict)
    wall_time_s: float = 0.0
    load_average: tuple[Optional[float], Optional[float]] = (None, None)

    def result(self, feature: str, cell: str) -> Optional[CellResult]:
        return next(
            (r for r in self.results if r.feature == feature and r.cell == cell),
            None,
        )


def _payload_len(payload: Any) -> int:
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return len(payload)
    return len(json.dumps(payload, default=str, separators=(",", ":")).encode())


def run(
    features: list[str], cells: list[str], timing: TimingConfig, quick: bool, progress: bool = True
) -> FeatureRun:
    """Check, then time, every cell of ``features``; one cell's libs interleaved."""
    start = time.perf_counter()
    out = FeatureRun(features, cells, timing, quick, load_average=(load_average(), None))
    formats = list(dict.fromkeys(c.split("-")[0] for c in cells))
    ok: set[tuple[str, str, str]] = set()
    bar = ProgressBar(len(features) * (len(formats) + len(cells)), enabled=progress)
    step = 0
    for feature in features:
        for fmt in formats:
            bar.update(step, f"checking {feature} {fmt}")
            step += 1
            for lib in GROUPS[fmt]:
                try:
                    check(feature, fmt, lib)
                except Unavailable as exc:
                    out.skips[(feature, fmt, lib)] = str(exc)
                except Exception as exc:  # a failed check: reported, never timed
                    out.skips[(feature, fmt, lib)] = f"check failed: {type(exc).__name__}: {exc}"
                else:
                    ok.add((feature, fmt, lib))
    gc.collect()
    gc.freeze()
    try:
        for feature in features:
            for cell in cells:
                fmt = cell.split("-")[0]
                bar.update(step, f"{feature} {cell}")
                step += 1
                cands: list[Candidate] = []
                sizes: dict[str, int] = {}
                for lib in GROUPS[fmt]:
                    if (feature, fmt, lib) not in ok:
                        continue
                    p = prepare(feature, cell, lib)
                    cands.append(Candidate(lib, p.fn, p.arg))
                    sizes[lib] = _payload_len(p.payload)
                if not cands:
                    continue
                stats = measure_cell(cands, timing)
                out.results.append(CellResult(feature, cell, stats, sizes))
    finally:
        gc.unfreeze()
        bar.close()
    out.wall_time_s = time.perf_counter() - start
    out.load_average = (out.load_average[0], load_average())
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def _fmt_ratio(r: Optional[float], target: Optional[float]) -> str:
    if r is None:
        return "–"
    text = f"{r:.2f}"
    if target is not None and r > target:
        return f"**{text}** ✗"
    return text


def _fmt_time(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def _geomean(values: list[float]) -> Optional[float]:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _ratio_table(res: FeatureRun, row: str, cells: list[str]) -> tuple[list[str], int, int]:
    """A feature × cell table of ``row``'s ratios; returns the lines, misses and cells."""
    cells = [c for c in cells if c in res.cells]
    lines = [
        "| feature | " + " | ".join(CELL_LABELS[c] for c in cells) + " |",
        "|---|" + "--:|" * len(cells),
    ]
    misses = total = 0
    for feature in res.features:
        row_cells = []
        for cell in cells:
            fmt = cell.split("-")[0]
            r = res.result(feature, cell)
            ratio = r.ratio(row) if r else None
            target = TARGETS.get((row, fmt, _direction(cell)))
            if ratio is not None:
                total += 1
                misses += target is not None and ratio > target
            row_cells.append(_fmt_ratio(ratio, target))
        lines.append(f"| {FEATURES[feature].title} | " + " | ".join(row_cells) + " |")
    columns = []
    for cell in cells:
        ratios = [
            x
            for f in res.features
            if (r := res.result(f, cell)) is not None and (x := r.ratio(row)) is not None
        ]
        gm = _geomean(ratios)
        columns.append("–" if gm is None else f"{gm:.2f}")
    lines.append("| *geometric mean* | " + " | ".join(columns) + " |")
    return lines, misses, total


def _fastavro_dicts_table(res: FeatureRun) -> list[str]:
    cells = [c for c in ("avro-encode", "avro-decode") if c in res.cells]
    lines = [
        "| feature | " + " | ".join(f"{CELL_LABELS[c]} slots" for c in cells) + " |",
        "|---|" + "--:|" * len(cells),
    ]
    for feature in res.features:
        vals = []
        for cell in cells:
            r = res.result(feature, cell)
            if r is None or "slots" not in r.stats or "fastavro-dicts" not in r.stats:
                vals.append("–")
            else:
                vals.append(f"{r.stats['slots'].median / r.stats['fastavro-dicts'].median:.2f}")
        if any(v != "–" for v in vals):
            lines.append(f"| {FEATURES[feature].title} | " + " | ".join(vals) + " |")
    return lines


def _times_table(res: FeatureRun) -> list[str]:
    libs = list(dict.fromkeys(lib for g in GROUPS.values() for lib in g))
    lines = [
        "| feature | cell | " + " | ".join(LIB_LABELS[lib] for lib in libs) + " | bytes |",
        "|---|---|" + "--:|" * (len(libs) + 1),
    ]
    for r in res.results:
        vals = [
            (
                f"{_fmt_time(r.stats[lib].median)} ±{r.stats[lib].rel_stdev * 100:.0f}%"
                if lib in r.stats
                else ""
            )
            for lib in libs
        ]
        size = max(r.payload_bytes.values()) if r.payload_bytes else 0
        lines.append(
            f"| {r.feature} | {CELL_LABELS[r.cell]} | " + " | ".join(vals) + f" | {size:,} |"
        )
    return lines


def _versions() -> list[str]:
    rows = []
    for dist in ("polycodec", "msgspec", "fastavro", "attrs"):
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            version = "not installed"
        rows.append(f"{dist} {version}")
    rows.append(f"pickle (CPython {platform.python_version()})")
    return rows


def render(res: FeatureRun, env: dict[str, Any], chart: Optional[str], chart_note: str) -> str:
    load = ", ".join("n/a" if x is None else f"{x:.2f}" for x in res.load_average)
    out = [
        "# polycodec per feature",
        "",
        f"{env['interpreter']}; {env['platform']}; {env['cpu_model']} ({env['cpu_count']} CPUs);"
        f" git {env['git_revision']}; {env['run_utc']}.",
        "",
        f"- Command: `{env['command']}` ({env['mode']}); wall time {res.wall_time_s:.0f} s; "
        f"1-minute load average at start and end: {load}.",
        f"- Timing: {env['timing']}; {env['gc_policy']}.",
        f"- Versions: {', '.join(_versions())}.",
        f"- Every cell encodes or decodes one batch of {BATCH} values per call, its libs timed "
        "interleaved in this one process (`benches/timing.py`). Ratios are polycodec's median "
        "time ÷ the reference's: below 1.00 polycodec is faster. A cell over issue 37's target "
        "is **bold** and marked ✗.",
        "- Models and what each lib runs: `benches/features.py`, `benches/feature_cells.py`; "
        "instruction counts of any cell: `python -m benches.callgrind_features`.",
        "",
    ]
    if res.quick:
        out += ["**Quick run: a smoke test, its numbers mean nothing.**", ""]
    if chart:
        out += [f"![polycodec ÷ msgspec per feature and cell]({chart})", ""]
    elif chart_note:
        out += [chart_note, ""]
    jmb = [c for c in CELLS if c.split("-")[0] in ("json", "msgpack", "builtins")]
    summary: list[str] = []
    sections: list[str] = []
    for row, title, target_text in (
        ("slots", "`slots=True` dataclasses ÷ msgspec Structs", "target: at most 1.00"),
        (
            "plain",
            "plain dataclasses ÷ msgspec Structs",
            "targets: encode at most 1.00, decode at most 1.15",
        ),
    ):
        lines, misses, total = _ratio_table(res, row, jmb)
        summary.append(f"- {title}: **{misses} of {total}** cells miss the target ({target_text}).")
        sections += [f"## {title}", "", f"JSON, MessagePack and builtins; {target_text}.", ""]
        sections += lines + [""]
    avro_lines: list[str] = []
    for row in ("slots", "plain"):
        lines, misses, total = _ratio_table(res, row, ["avro-encode", "avro-decode"])
        if total:
            summary.append(
                f"- Avro, {row} ÷ fastavro with the conversion: **{misses} of {total}** cells "
                "miss the target (at most 0.10)."
            )
            avro_lines += [f"### {row}", ""] + lines + [""]
    if avro_lines:
        sections += [
            "## Avro ÷ fastavro, same schema",
            "",
            "polycodec's `Codec(list[T], 'avro')` against fastavro's `schemaless_writer` / "
            "`schemaless_reader` with the schema polycodec derives (`parse_schema`d once); both "
            "write the same bytes (checked before timing). fastavro's time includes the "
            "conversion between the objects and its dicts (a converter compiled once per type), "
            "as the main benchmark's fastavro rows do; target: at most 0.10.",
            "",
        ]
        sections += avro_lines
        sections += [
            "### slots ÷ fastavro on ready dicts (its conversion left out)",
            "",
            *_fastavro_dicts_table(res),
            "",
        ]
    pickle_lines: list[str] = []
    for row in ("slots", "plain"):
        lines, misses, total = _ratio_table(res, row, ["pickle-encode", "pickle-decode"])
        if total:
            summary.append(
                f"- pickle, {row} ÷ the stdlib's on the same values: **{misses} of {total}** "
                "cells miss the target (at most 0.50)."
            )
            pickle_lines += [f"### {row}", ""] + lines + [""]
    if pickle_lines:
        sections += [
            "## pickle ÷ the stdlib's",
            "",
            "`Codec(T, 'pickle').encode_many` / `decode_many` against `pickle.dumps(values, "
            "protocol=5)` / `pickle.loads` on the same values (each reads the other's pickle, "
            "checked before timing); target: at most 0.50.",
            "",
        ]
        sections += pickle_lines
    out += ["## Summary", ""] + summary + [""] + sections
    out += ["## Median time per call (one batch)", ""] + _times_table(res) + [""]
    out += ["## Features", "", "| feature | model | notes |", "|---|---|---|"]
    for name in res.features:
        f = FEATURES[name]
        out.append(f"| {f.title} | `{name}` | {f.note} |")
    out += ["", "## Cells not run", ""]
    if res.skips:
        out += ["| feature | format | lib | why |", "|---|---|---|---|"]
        for (feature, fmt, lib), why in sorted(res.skips.items()):
            out.append(f"| {feature} | {fmt} | {LIB_LABELS[lib]} | {why} |")
    else:
        out.append("None.")
    out.append("")
    return "\n".join(out)


def to_json(res: FeatureRun, env: dict[str, Any]) -> dict[str, Any]:
    return {
        "environment": {k: v for k, v in env.items() if k != "installed_sizes"},
        "batch": BATCH,
        "quick": res.quick,
        "wall_time_s": res.wall_time_s,
        "load_average": list(res.load_average),
        "targets": [
            {"row": row, "format": fmt, "direction": d, "at_most": t}
            for (row, fmt, d), t in TARGETS.items()
        ],
        "cells": [
            {
                "feature": r.feature,
                "cell": r.cell,
                "ratios": {row: r.ratio(row) for row in ("slots", "plain")},
                "payload_bytes": r.payload_bytes,
                "stats": {
                    lib: {
                        "median": s.median,
                        "mean": s.mean,
                        "stdev": s.stdev,
                        "min": s.minimum,
                        "q1": s.q1,
                        "q3": s.q3,
                        "samples": s.samples,
                        "calls_per_sample": s.calls_per_sample,
                    }
                    for lib, s in r.stats.items()
                },
            }
            for r in res.results
        ],
        "skipped": [
            {"feature": f, "format": fmt, "lib": lib, "reason": why}
            for (f, fmt, lib), why in sorted(res.skips.items())
        ],
    }


def chart(res: FeatureRun, path: Path) -> str:
    """A heatmap of polycodec ÷ msgspec (slots and plain rows) per feature and cell: one ratio
    direction (time ÷ time), 1.00 white, wins blue, losses red; returns a note, empty when
    drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import TwoSlopeNorm
    except ImportError as exc:
        return f"Chart skipped: matplotlib is not installed ({exc})."
    cells = [c for c in CELLS if c.split("-")[0] in ("json", "msgpack", "builtins")]
    cells = [c for c in cells if c in res.cells]
    if not cells:
        return "Chart skipped: no JSON, MessagePack or builtins cells in this run."
    features = res.features
    fig, axes = plt.subplots(
        1, 2, figsize=(2 * (1.2 + 0.9 * len(cells)), 1.2 + 0.32 * len(features)), sharey=True
    )
    norm = TwoSlopeNorm(vmin=0.25, vcenter=1.0, vmax=4.0)
    for ax, row in zip(axes, ("slots", "plain")):
        grid = []
        for feature in features:
            line = []
            for cell in cells:
                r = res.result(feature, cell)
                x = r.ratio(row) if r else None
                line.append(math.nan if x is None else min(max(x, 0.25), 4.0))
            grid.append(line)
        ax.imshow(grid, cmap="RdBu_r", norm=norm, aspect="auto")
        for i, feature in enumerate(features):
            for j, cell in enumerate(cells):
                r = res.result(feature, cell)
                x = r.ratio(row) if r else None
                if x is not None:
                    target = TARGETS.get((row, cell.split("-")[0], _direction(cell)))
                    miss = target is not None and x > target
                    dark = abs(math.log(max(x, 1e-9))) > math.log(2.2)
                    ax.text(
                        j,
                        i,
                        f"{x:.2f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        fontweight="bold" if miss else "normal",
                        color="white" if dark else "black",
                    )
        ax.set_xticks(range(len(cells)), [CELL_LABELS[c] for c in cells], rotation=40, ha="right")
        ax.set_yticks(range(len(features)), features, fontsize=8)
        ax.set_title(f"polycodec ({row}) time ÷ msgspec Struct time\n(below 1: faster; bold: miss)")
    fig.suptitle(env_line(res), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return ""


def env_line(res: FeatureRun) -> str:
    mode = "quick smoke run, numbers mean nothing" if res.quick else "full run"
    return f"CPython {platform.python_version()}, batch of {BATCH} values per call, {mode}"


def write(res: FeatureRun, env: dict[str, Any], out: Path, plots: bool) -> list[Path]:
    """``features.md``, ``features.json`` and (``plots``) ``features.png`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    png = out / "features.png"
    note = "Chart skipped (--no-plots)."
    name: Optional[str] = None
    if plots:
        note = chart(res, png)
        if not note:
            name = png.name
            written.append(png)
    md = out / "features.md"
    md.write_text(render(res, env, name, note))
    js = out / "features.json"
    js.write_text(json.dumps(to_json(res, env), indent=1) + "\n")
    return [md, js] + written
