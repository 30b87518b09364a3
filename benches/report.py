"""Write the results: ``report.md`` (for people) and ``results.json`` (for tools).

The Markdown report carries the same information as the usual multi-format snapshot tables
(adapter, version, mean, std dev, operations/s, samples, prerelease, payload, speed vs baseline)
and adds what the comparison actually needs: the median, the speed relative to the fastest peer
(so "polycodec vs best peer" is one column), a headline table, peak memory, every skipped
adapter with its reason, and how each library was used.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Optional

from .adapters import ADAPTER_FORMATS, BASELINES, FORMATS, SUBJECT, is_subject
from .adapters.base import version_is_prerelease
from .models import MODELS
from .runner import Cell, RunResult, Skip

OP_TITLES = {
    "encode_one": "encode_one",
    "decode_one": "decode_one",
    "encode_many": "encode_many",
    "decode_many": "decode_many",
}


# ---- number formatting ---------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """3 significant digits in the most readable unit (ns, µs, ms, s)."""
    if seconds is None or math.isnan(seconds):
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{_sig(seconds / scale)} {unit}"
    return f"{_sig(seconds / 1e-9)} ns"


def _sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:.{decimals}f}"


def fmt_rate(ops: float) -> str:
    """Operations per second, with thousands separators."""
    if ops >= 100:
        return f"{ops:,.0f}"
    return _sig(ops)


def fmt_bytes(n: Optional[int]) -> str:
    """Bytes, as B up to 10 KiB and KiB/MiB above (exact B stays in the JSON)."""
    if n is None:
        return "—"
    if n < 10 * 1024:
        return f"{n:,} B"
    if n < 10 * 1024 * 1024:
        return f"{n / 1024:,.1f} KiB"
    return f"{n / 1024 / 1024:,.1f} MiB"


def fmt_ratio(r: Optional[float], bold_if_win: bool = False) -> str:
    """``1.85×``; bold when it is a win (> 1) and asked to."""
    if r is None:
        return "—"
    text = f"{r:.2f}×"
    return f"**{text}**" if bold_if_win and r >= 1.005 else text


#: A ratio at or above WIN is a win for polycodec, below LOSS a loss; in between, a tie.
WIN = 1.005
LOSS = 0.995


def fmt_verdict(r: Optional[float]) -> str:
    """polycodec's ratio vs a peer: ``**1.22×**`` for a win, ``0.87× ✗ loss`` for a loss."""
    if r is None:
        return "—"
    if r >= WIN:
        return f"**{r:.2f}×**"
    if r < LOSS:
        return f"{r:.2f}× ✗ loss"
    return f"{r:.2f}×"


def _geomean(values: list[float]) -> Optional[float]:
    vals = [v for v in values if v and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---- report sections -----------------------------------------------------------------------


def _table(
    header: list[str], rows: list[list[str]], align: Optional[list[str]] = None
) -> list[str]:
    align = align or ["---"] * len(header)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _cell_title(c: Cell) -> str:
    return f"{FORMATS[c.format]} / {OP_TITLES[c.op]} / batch {c.batch} / {c.model}"


def _anchor(c: Cell) -> str:
    return f"cell-{c.format}-{c.op}-{c.batch}-{c.model}"


def _skip_reason(res: RunResult, adapter: str, fmt: str, model: str) -> Optional[Skip]:
    for s in res.skips:
        if s.adapter == adapter and s.format in (fmt, "*") and s.model in (model, "*"):
            return s
    return None


def _subject_missing_reason(res: RunResult, c: Cell) -> str:
    s = _skip_reason(res, SUBJECT, c.format, c.model)
    if s is not None:
        return s.kind
    return "not selected" if not any(is_subject(a.name) for a in res.adapters) else "—"


def _environment(res: RunResult, env: dict[str, Any]) -> list[str]:
    labels = [
        ("Interpreter", "interpreter"),
        ("Python", "python"),
        ("Python build", "python_build"),
        ("Platform", "platform"),
        ("CPU model", "cpu_model"),
        ("CPU count", "cpu_count"),
        ("CPU frequency governor", "cpu_governor"),
        ("Memory", "memory"),
        ("Git revision", "git_revision"),
        ("Benchmark version", "benchmark_version"),
        ("GC policy", "gc_policy"),
        ("Run UTC", "run_utc"),
        ("Unit", "unit"),
        ("Timer", "timer"),
        ("Mode", "mode"),
        ("Timing", "timing"),
        ("Command", "command"),
    ]
    out = ["## Environment", ""]
    rows = [[name, _md_escape(str(env.get(key, "n/a")))] for name, key in labels]
    rows.append(["Wall time", f"{res.wall_time_s:.1f} s"])
    out += _table(["Item", "Value"], rows)
    out += ["", "### Library versions", ""]
    vrows = []
    seen = set()
    for a in res.adapters:
        if a.name in seen:
            continue
        seen.add(a.name)
        v = a.version
        vrows.append(
            [
                a.label,
                a.distribution or "(stdlib)",
                v,
                "yes" if version_is_prerelease(v) else "",
                ", ".join(FORMATS[f] for f in a.formats),
            ]
        )
    out += _table(["Adapter", "Distribution", "Version", "Prerelease", "Formats"], vrows)
    return out


def _installed_sizes(env: dict[str, Any]) -> list[str]:
    """What each library costs on disk once installed (``environment.installed_sizes``)."""
    rows = env.get("installed_sizes") or []
    if not rows:
        return []
    out = [
        "### Installed size",
        "",
        "Bytes on disk of the files each distribution installed (its `RECORD`, compiled `.pyc`"
        " included), alone and with the distributions it requires here (counted once each)."
        " MB = 10⁶ bytes.",
        "",
    ]
    table = [
        [
            f"{row['distribution']} {row['version']}",
            f"{row['own_bytes'] / 1e6:.2f} MB",
            f"{row['total_bytes'] / 1e6:.2f} MB",
            _md_escape(", ".join(row["dependencies"]) or "—"),
            _md_escape(row["measured"]),
        ]
        for row in rows
    ]
    out += _table(
        ["Library", "Own files", "With dependencies", "Dependencies", "Measured"],
        table,
        ["---", "--:", "--:", "---", "---"],
    )
    return out + [""]


def _subjects(res: RunResult) -> list[tuple[str, str]]:
    """polycodec's rows that ran, as (name, label), in adapter order."""
    ran = {r.adapter for c in res.cells for r in c.rows}
    return [(a.name, a.label) for a in res.adapters if is_subject(a.name) and a.name in ran]


def _pivot(res: RunResult) -> list[str]:
    """polycodec's best row vs the fastest peer (any idiom) as a matrix: one row per
    format/op/batch, one column per model."""
    models = [m for m in res.config.models if any(c.model == m for c in res.cells)]
    keys: list[tuple[str, str, int]] = []
    for c in res.cells:
        if (c.format, c.op, c.batch) not in keys:
            keys.append((c.format, c.op, c.batch))
    index = {(c.format, c.op, c.batch, c.model): c for c in res.cells}
    several = len(_subjects(res)) > 1
    rows = []
    for fmt, op, batch in keys:
        row = [FORMATS[fmt], op, str(batch)]
        for m in models:
            cell = index.get((fmt, op, batch, m))
            if cell is None:
                row.append("")
                continue
            subj = cell.row(cell.best_subject) if cell.best_subject else None
            peer = cell.row(cell.best_peer) if cell.best_peer else None
            link = f"(#{_anchor(cell)})"
            if subj is not None and peer is not None:
                which = f" ({subj.label})" if several else ""
                row.append(f"[{fmt_verdict(subj.vs_best_peer)}]{link} vs {peer.label}{which}")
            elif subj is not None:
                row.append(f"[no peer]{link}")
            else:
                row.append(f"[— ({_subject_missing_reason(res, cell)})]{link}")
        rows.append(row)
    return _table(
        ["Format", "Operation", "Batch", *models],
        rows,
        ["---", "---", "--:", *["---"] * len(models)],
    )


def _tally(ratios: list[float]) -> str:
    """``wins / losses / cells`` for a list of ratios."""
    wins = sum(1 for r in ratios if r >= WIN)
    losses = sum(1 for r in ratios if r < LOSS)
    return f"{wins} won, {losses} lost, of {len(ratios)}"


def _headline(res: RunResult) -> list[str]:
    subjects = _subjects(res)
    out = [
        "## Headline: polycodec vs the fastest peer in any idiom",
        "",
        "Ratio = fastest peer's median time / polycodec's median time: **above 1.00× polycodec is"
        " faster** (bold), below 1.00× it is slower, marked *✗ loss*. The fastest peer is the"
        " fastest row of any other library in whichever idiom it was fastest (msgspec on"
        " `msgspec.Struct` classes or on dataclasses, pydantic on `BaseModel` classes or on"
        " dataclasses, ...). polycodec has one row per idiom"
        + (" (" + ", ".join(label for _, label in subjects) + ")" if subjects else "")
        + "; the matrix shows its best row, the tables below every row. Each entry links to its"
        " full table.",
        "",
    ]
    out += _pivot(res) + [""]
    best_ratios: dict[str, list[float]] = {}
    per_subject: dict[tuple[str, str], list[float]] = {}
    rows = []
    for c in res.cells:
        peer = c.row(c.best_peer) if c.best_peer else None
        best = c.row(c.best_subject) if c.best_subject else None
        if peer is None or best is None or best.vs_best_peer is None:
            continue
        best_ratios.setdefault(c.format, []).append(best.vs_best_peer)
        row = [
            f"[{FORMATS[c.format]}](#{_anchor(c)})",
            c.op,
            str(c.batch),
            c.model,
            peer.label,
            fmt_time(peer.stats.median),
        ]
        for name, _ in subjects:
            r = c.row(name)
            if r is None or r.vs_best_peer is None:
                row += ["—", "—"]
                continue
            per_subject.setdefault((c.format, name), []).append(r.vs_best_peer)
            row += [fmt_time(r.stats.median), fmt_verdict(r.vs_best_peer)]
        row.append(fmt_verdict(best.vs_best_peer))
        row.append(fmt_ratio(best.vs_baseline) if best.vs_baseline else "—")
        rows.append(row)
    if not best_ratios:
        out += [
            "> polycodec did not run against any peer (see *Skipped*); the tables below still"
            " rank the peers.",
        ]
        return out
    srows = []
    for fmt, ratios in best_ratios.items():
        srow = [FORMATS[fmt], _tally(ratios), fmt_verdict(_geomean(ratios))]
        srow.append(f"{min(ratios):.2f}-{max(ratios):.2f}×")
        for name, _ in subjects:
            sub = per_subject.get((fmt, name), [])
            srow += [_tally(sub), fmt_verdict(_geomean(sub))] if sub else ["—", "—"]
        srows.append(srow)
    header = ["Format", "Best polycodec row", "Geometric mean", "Range"]
    align = ["---", "--:", "--:", "--:"]
    for _, label in subjects:
        header += [label, "Geometric mean"]
        align += ["--:", "--:"]
    out += [
        "Per format (cells where polycodec and at least one peer ran; a win is ≥ 1.005×, a loss"
        " < 0.995×):",
        "",
    ]
    out += _table(header, srows, align)
    out += ["", "### Headline details", ""]
    header = ["Format", "Operation", "Batch", "Model", "Fastest peer", "Peer time"]
    align = ["---", "---", "--:", "---", "---", "--:"]
    for _, label in subjects:
        header += [label, "vs peer"]
        align += ["--:", "--:"]
    header += ["Best polycodec vs peer", "Best polycodec vs baseline"]
    align += ["--:", "--:"]
    out += _table(header, rows, align)
    return out


def _cell_section(res: RunResult, c: Cell) -> list[str]:
    out = [f'<a id="{_anchor(c)}"></a>', "", f"### {_cell_title(c)}", ""]
    if not c.rows:
        out += ["_No adapter ran in this cell._", ""]
        return out
    many = c.batch > 1
    header = ["Adapter", "Version", "Median", "Mean", "Std dev", "Min", "Ops/s"]
    align = ["---", "---", "--:", "--:", "--:", "--:", "--:"]
    if many:
        header += ["Per object", "Objects/s"]
        align += ["--:", "--:"]
    header += ["Samples", "Payload", "vs baseline", "vs best peer"]
    align += ["--:", "--:", "--:", "--:"]
    rows = []
    for i, r in enumerate(c.rows):
        s = r.stats
        subject = is_subject(r.adapter)
        name = f"**{r.label}**" if subject else r.label
        if i == 0:
            name += " 🥇"
        row = [
            name,
            r.version + (" (prerelease)" if r.prerelease else ""),
            fmt_time(s.median),
            fmt_time(s.mean),
            f"{fmt_time(s.stdev)} ({s.rel_stdev * 100:.1f}%)",
            fmt_time(s.minimum),
            fmt_rate(s.ops_per_s),
        ]
        if many:
            row += [fmt_time(s.median / c.batch), fmt_rate(c.batch / s.median)]
        row += [
            f"{s.samples}×{s.calls_per_sample}",
            fmt_bytes(r.payload_bytes),
            fmt_ratio(r.vs_baseline),
            fmt_verdict(r.vs_best_peer) if subject else fmt_ratio(r.vs_best_peer),
        ]
        rows.append(row)
    out += _table(header, rows, align)
    missing = []
    present = {r.adapter for r in c.rows}
    for a in res.adapters:
        if c.format in a.formats and a.name not in present:
            skip = _skip_reason(res, a.name, c.format, c.model)
            missing.append(f"{a.label} ({skip.kind})" if skip else a.label)
    loaded = {a.name for a in res.adapters}
    for skip in res.skips:
        if skip.kind == "unavailable" and skip.adapter not in loaded:
            if c.format in ADAPTER_FORMATS.get(skip.adapter, ()):
                missing.append(f"{skip.adapter} (unavailable)")
    if missing:
        out += ["", "Not in this table (see *Skipped*): " + ", ".join(sorted(set(missing)))]
    base = BASELINES[c.format]
    out += [
        "",
        f"Baseline: {base}{'' if c.baseline else ' (did not run in this cell)'}; "
        f"fastest peer (any idiom): {c.best_peer or '—'}; "
        f"fastest polycodec row: {c.best_subject or '—'}.",
        "",
    ]
    return out


def _memory(res: RunResult) -> list[str]:
    out = [
        "## Peak memory per operation (tracemalloc)",
        "",
        "Peak bytes allocated through Python's allocators during one call, above the level before"
        " the call, including the returned object. Allocations made by an extension's private"
        " allocator (e.g. Rust's or C's own malloc/mimalloc) are invisible to tracemalloc, so this"
        " understates native libraries' scratch memory; it is exact for pure-Python work.",
        "",
    ]
    any_mem = False
    for fmt in res.config.formats:
        cells = [c for c in res.cells if c.format == fmt and c.rows]
        names: list[str] = []
        for c in cells:
            for r in c.rows:
                if r.peak_memory_bytes is not None and r.adapter not in names:
                    names.append(r.adapter)
        if not names:
            continue
        any_mem = True
        order = [a.name for a in res.adapters if a.name in names]
        labels = {a.name: a.label for a in res.adapters}
        rows = []
        for c in cells:
            row = [c.op, str(c.batch), c.model]
            for n in order:
                found = c.row(n)
                row.append(fmt_bytes(found.peak_memory_bytes) if found else "—")
            rows.append(row)
        out += [f"### {FORMATS[fmt]}", ""]
        out += _table(
            ["Operation", "Batch", "Model", *[labels[n] for n in order]],
            rows,
            ["---", "--:", "---", *["--:"] * len(order)],
        )
        out += [""]
    if not any_mem:
        out += ["_Memory was not measured (`--no-memory`)._", ""]
    return out


def _skipped(res: RunResult) -> list[str]:
    out = ["## Skipped and excluded", ""]
    if not res.skips:
        return out + ["Nothing was skipped.", ""]
    out += [
        "*unavailable*: not installed / not importable. *unsupported*: the library cannot handle"
        " that format or model as its users would use it. *round-trip failed*: decoded objects"
        " differed from the originals (or an exception was raised), so it was not timed.",
        "",
    ]
    rows = [
        [
            s.adapter,
            FORMATS.get(s.format, "all"),
            s.model if s.model != "*" else "all",
            s.kind,
            _md_escape(_short(s.reason, 300)),
        ]
        for s in res.skips
    ]
    out += _table(["Adapter", "Format", "Model", "Kind", "Reason"], rows)
    return out + [""]


def _usage(res: RunResult) -> list[str]:
    out = [
        "## How each library is used",
        "",
        "Each adapter prepares its encoders/decoders/schemas once (outside the timed calls), the"
        " way its documentation recommends. Libraries that only produce or consume dicts use one"
        " shared, hand-written, per-model conversion (`benches/adapters/_convert.py`); the Avro"
        " libraries share one hand-written schema per model (`benches/adapters/_avro_schemas.py`)."
        " Every adapter decodes its own output.",
        "",
    ]
    rows = []
    for a in res.adapters:
        for f in a.formats:
            if f in res.config.formats:
                rows.append([a.label, FORMATS[f], _md_escape(a.how.get(f, ""))])
    return out + _table(["Adapter", "Format", "How"], rows) + [""]


def _models(res: RunResult) -> list[str]:
    out = ["## Models", ""]
    rows = []
    for m in res.config.models:
        spec = MODELS[m]
        rows.append([m, f"`{spec.root.__name__}`", spec.description])
    out += _table(["Model", "Root type", "Shape"], rows)
    out += [
        "",
        "All models are plain `@dataclass`es defined once in `benches/models.py`; data comes from a"
        f" seeded generator (seed {res.config.seed}), so every run times the same objects."
        " Batch N is the first N generated objects.",
        "",
    ]
    return out


_METHOD = """\
## Method

- **Correctness first.** Before timing, every adapter round-trips the first objects one by one
  and every batch through `encode_many`/`decode_many`; anything that does not decode to objects
  equal to the originals is excluded (see *Skipped*). Every adapter decodes its own output.
- **Cells.** A cell is one format × operation × batch × model. `*_one` operations time one object
  at batch 1; `*_many` operations time one call on a list of N objects (one JSON/MessagePack
  array, an Avro object container file, a pickled list).
- **Interleaving.** All candidates of a cell are sampled round by round in one process, rotating
  the order every round, so machine drift affects them alike.
- **Samples.** Each sample repeats the call a calibrated number of times (so that it lasts about
  the target sample time), with `gc.collect()` before it and the GC disabled during it. The
  per-call time of every sample is kept (raw values in `results.json`). The timed loop is
  `for _ in repeat(None, n): fn(arg)`; its few ns per call are not subtracted.
- **Statistics.** The median is used for Ops/s and all ratios; mean, standard deviation (also as
  % of the mean) and minimum show the noise. *Samples* is `samples × calls per sample`.
- **Ratios.** *vs baseline* = baseline median / this median (baselines: stdlib json, msgpack,
  apache avro, stdlib pickle); *vs best peer* = fastest non-polycodec median / this median,
  whatever idiom that peer's row uses (msgspec Structs, pydantic BaseModels, dataclasses).
  Above 1.00× means faster; a polycodec row below 0.995× is marked *✗ loss*.
- **Idioms.** Each library also runs on the classes its own users write: msgspec on
  `msgspec.Struct` classes (tagged Structs for the trees, as in the msgspec-vs-pydantic gist),
  pydantic on `BaseModel` classes, polycodec on `@dataclass(slots=True)` classes too. Those rows
  hold the same generated data, converted field by field before timing, and must convert back to
  exactly the generated objects as part of the round-trip check.
- **Payload** is the size of this adapter's own encoding (str outputs counted as UTF-8 bytes).
"""


def _run_conditions(res: RunResult) -> list[str]:
    """The ``--note`` text and the machine's load during the run, as a quote under the title."""
    out = []
    if res.config.note:
        out += [f"> {_md_escape(res.config.note)}", ">"]
    start, end = res.load_average
    if start is not None and end is not None:
        cpus = os.cpu_count() or 0
        out += [
            f"> 1-minute load average at the start / end of the run: {start:.1f} / {end:.1f}"
            f" on {cpus} logical CPUs (above {cpus} other processes were competing for the CPU).",
        ]
    return out + [""] if out else []


def _method() -> list[str]:
    return _METHOD.splitlines() + [""]


def render_markdown(res: RunResult, env: dict[str, Any], plots: list[str], plot_note: str) -> str:
    """The whole report as Markdown."""
    lines = [
        "# polycodec benchmark report",
        "",
        f"Interpreter: {env.get('interpreter', env.get('python_build', 'unknown'))}.",
        "Hardware- and interpreter-specific snapshot: compare ratios, not absolute times, across "
        "machines and Python versions.",
        "",
    ]
    lines += _run_conditions(res)
    lines += _environment(res, env) + [""]
    lines += _installed_sizes(env)
    lines += _headline(res) + [""]
    if plots:
        lines += ["## Charts", ""]
        for p in plots:
            lines += [f"![{p}]({p})", ""]
    elif plot_note:
        lines += ["## Charts", "", f"_{plot_note}_", ""]
    lines += ["## Results per cell", ""]
    for fmt in res.config.formats:
        cells = [c for c in res.cells if c.format == fmt]
        if not cells:
            continue
        lines += [f"## {FORMATS[fmt]}", ""]
        for c in cells:
            lines += _cell_section(res, c)
    lines += _memory(res)
    lines += _skipped(res)
    lines += _usage(res)
    lines += _models(res)
    lines += _method()
    if res.payload_samples:
        lines += ["## Payload samples (first object, first 160 characters)", ""]
        for key, per in res.payload_samples.items():
            lines += [f"<details><summary>{key}</summary>", "", "```"]
            for name, text in per.items():
                lines += [f"{name}: {text}"]
            lines += ["```", "", "</details>", ""]
    return "\n".join(lines).rstrip() + "\n"


def to_json(res: RunResult, env: dict[str, Any]) -> dict[str, Any]:
    """The raw results (including every per-call sample) as a JSON-compatible dict."""
    cfg = res.config
    return {
        "schema_version": 1,
        "environment": env,
        "config": {
            "formats": cfg.formats,
            "ops": cfg.ops,
            "batches": cfg.batches,
            "models": cfg.models,
            "adapters": cfg.adapters,
            "quick": cfg.quick,
            "memory": cfg.memory,
            "seed": cfg.seed,
            "note": cfg.note,
            "timing": vars(cfg.timing),
        },
        "wall_time_s": res.wall_time_s,
        "load_average_start_end": list(res.load_average),
        "adapters": [
            {
                "name": a.name,
                "label": a.label,
                "distribution": a.distribution,
                "version": a.version,
                "formats": list(a.formats),
                "how": a.how,
            }
            for a in res.adapters
        ],
        "cells": [
            {
                "format": c.format,
                "op": c.op,
                "batch": c.batch,
                "model": c.model,
                "baseline": c.baseline,
                "best_peer": c.best_peer,
                "best_subject": c.best_subject,
                "rows": [
                    {
                        "adapter": r.adapter,
                        "label": r.label,
                        "version": r.version,
                        "prerelease": r.prerelease,
                        "median_s": r.stats.median,
                        "mean_s": r.stats.mean,
                        "stdev_s": r.stats.stdev,
                        "min_s": r.stats.minimum,
                        "max_s": r.stats.maximum,
                        "q1_s": r.stats.q1,
                        "q3_s": r.stats.q3,
                        "ops_per_s": r.stats.ops_per_s,
                        "samples": r.stats.samples,
                        "calls_per_sample": r.stats.calls_per_sample,
                        "payload_bytes": r.payload_bytes,
                        "peak_memory_bytes": r.peak_memory_bytes,
                        "vs_baseline": r.vs_baseline,
                        "vs_best_peer": r.vs_best_peer,
                        "raw_samples_s": r.samples,
                    }
                    for r in c.rows
                ],
            }
            for c in res.cells
        ],
        "skips": [vars(s) for s in res.skips],
    }


def write(
    res: RunResult, env: dict[str, Any], out: Path, plots: list[str], plot_note: str
) -> tuple[Path, Path]:
    """Write ``report.md`` and ``results.json`` into ``out``; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    md = out / "report.md"
    js = out / "results.json"
    md.write_text(render_markdown(res, env, plots, plot_note), encoding="utf-8")
    js.write_text(json.dumps(to_json(res, env), indent=1, default=str) + "\n", encoding="utf-8")
    return md, js
