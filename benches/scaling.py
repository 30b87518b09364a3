"""``python -m benches --scaling``: how throughput and memory change with objects per call.

serpy's published benchmarks plot objects per second against the number of objects serialised
per call; a library whose cost per object grows with the batch (quadratic buffers, GC pressure,
cache misses) shows a falling curve. This study runs ``encode_many`` and ``decode_many`` on
1, 10, 100, 1k, 10k and 100k objects of the small ``record`` model (``--models`` picks another),
for polycodec's rows and the fastest peers of each format (``--adapters`` overrides), and writes
``scaling.md``, ``scaling.json`` and ``scaling_<format>.png`` (``--no-plots`` skips the charts).

Timing uses the same interleaved, calibrated sampler as the cells (``timing.measure_cell``) with
a small budget so a full study stays within a few minutes; every adapter must first round-trip
the largest batch exactly.

Memory per object is measured two ways, once per (format, operation, size, adapter), after the
timing and in increasing size order:

* **Python heap (tracemalloc)**: the peak of allocations made through Python's allocators during
  one call, result included. It sees every Python object (the decoded objects, the output bytes)
  but not an extension's private allocator (polycodec's Rust side uses mimalloc).
* **RSS high-water** (Linux only): the rise of the process's peak resident set size during one
  call (``VmHWM`` after resetting it through ``/proc/self/clear_refs``). It sees every allocator,
  but only pages first touched during the call: memory an allocator reuses from earlier calls is
  not counted, so it is a lower bound, and it moves in 4 KiB pages (meaningless for small calls).
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from .adapters import FORMATS, Adapter, Registry, is_subject
from .models import MODELS, generate
from .runner import check_round_trip, idiom_objects, load_average
from .timing import Candidate, Stats, TimingConfig, measure_cell, peak_memory

SIZES: tuple[int, ...] = (1, 10, 100, 1_000, 10_000, 100_000)
QUICK_SIZES: tuple[int, ...] = (1, 10, 100, 1_000)
OPS: tuple[str, ...] = ("encode_many", "decode_many")
DEFAULT_FORMATS: tuple[str, ...] = ("json", "msgpack")
#: polycodec's rows and the peers that are fastest on the record model in the cells of each
#: format (orjson and ormsgpack, which decode through hand-written Python conversion, are
#: several times slower there and would double the study's run time).
DEFAULT_ADAPTERS: dict[str, tuple[str, ...]] = {
    "json": ("polycodec", "polycodec-slots", "msgspec-struct", "msgspec", "serpyco-rs"),
    "msgpack": ("polycodec", "polycodec-slots", "msgspec-struct", "msgspec", "serpyco-rs"),
    "avro": ("polycodec", "polycodec-slots", "fastavro"),
    "pickle": ("polycodec", "polycodec-slots", "pickle"),
}


def scaling_timing(quick: bool) -> TimingConfig:
    """Short budgets: 100k-object calls take a good fraction of a second each."""
    if quick:
        return TimingConfig(target_sample_s=0.002, max_rounds=3, min_samples=2, budget_s=0.0)
    return TimingConfig(target_sample_s=0.010, max_rounds=15, min_samples=4, budget_s=0.25)


# ---- RSS high-water ------------------------------------------------------------------------

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _status_kib(key: str) -> int:
    match = re.search(rf"^{key}:\s+(\d+) kB", _STATUS.read_text(), re.MULTILINE)
    if match is None:
        raise OSError(f"{key} not in {_STATUS}")
    return int(match.group(1))


def rss_supported() -> bool:
    """True where the peak RSS can be reset and read (Linux with /proc)."""
    try:
        _CLEAR_REFS.write_text("5")
        _status_kib("VmHWM")
        return True
    except OSError:
        return False


def rss_peak(fn: Callable[[Any], Any], arg: Any) -> int:
    """Bytes the peak resident set grew by during one ``fn(arg)`` call (result held)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        _CLEAR_REFS.write_text("5")  # VmHWM := current VmRSS
        before = _status_kib("VmRSS")
        result = fn(arg)
        peak = _status_kib("VmHWM")
        del result
    finally:
        if enabled:
            gc.enable()
    return max(0, peak - before) * 1024


# ---- the study -----------------------------------------------------------------------------


@dataclass
class Point:
    """One adapter at one size for one operation."""

    adapter: str
    label: str
    size: int
    stats: Stats
    tracemalloc_bytes: Optional[int] = None
    rss_bytes: Optional[int] = None

    @property
    def objects_per_s(self) -> float:
        return self.size / self.stats.median

    @property
    def ns_per_object(self) -> float:
        return self.stats.median / self.size * 1e9


@dataclass
class Series:
    """Every point of one (format, operation)."""

    format: str
    op: str
    points: list[Point] = field(default_factory=list)

    def adapters(self) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []
        for p in self.points:
            if (p.adapter, p.label) not in seen:
                seen.append((p.adapter, p.label))
        return seen

    def at(self, adapter: str, size: int) -> Optional[Point]:
        return next((p for p in self.points if p.adapter == adapter and p.size == size), None)


@dataclass
class Study:
    model: str
    sizes: tuple[int, ...]
    series: list[Series]
    skips: list[tuple[str, str, str]]  # adapter, format, reason
    memory: bool
    rss: bool
    quick: bool
    wall_time_s: float = 0.0
    load_average: tuple[Optional[float], Optional[float]] = (None, None)
    note: str = ""


def run_scaling(
    registry: Registry,
    formats: list[str],
    adapters: Optional[list[str]],
    model: str,
    sizes: tuple[int, ...],
    timing: TimingConfig,
    memory: bool,
    quick: bool,
    log: Callable[[str], None] = print,
) -> Study:
    t0 = time.perf_counter()
    load_start = load_average()
    by_name = {a.name: a for a in registry.adapters}
    originals = generate(model, max(sizes))
    rss = memory and rss_supported()
    study = Study(model, sizes, [], [], memory, rss, quick)
    converted: dict[str, list[Any]] = {}  # adapter -> the objects in its classes
    for fmt in formats:
        names = adapters if adapters is not None else list(DEFAULT_ADAPTERS[fmt])
        ready: list[tuple[Adapter, Any, list[Any], bytes]] = []
        for name in names:
            adapter = by_name.get(name)
            if adapter is None:
                reason = registry.unavailable.get(name, "not available")
                study.skips.append((name, fmt, reason))
                continue
            if fmt not in adapter.formats:
                continue
            try:
                ops = adapter.build(fmt, MODELS[model])
                objs = converted.get(name) or converted.setdefault(
                    name, idiom_objects(ops, originals)
                )
                payloads = check_round_trip(ops, objs, [max(sizes)])
            except Exception as exc:  # Unsupported, RoundTripError, a library error
                study.skips.append((name, fmt, f"{type(exc).__name__}: {exc}"))
                continue
            ready.append((adapter, ops, objs, payloads[max(sizes)]))
        # Setup objects (100k originals, their idiom copies, payloads) become permanent, so the
        # gc.collect() before every sample does not walk them each time (as in the runner).
        gc.collect()
        gc.freeze()
        try:
            _time_format(study, fmt, ready, sizes, timing, memory, rss, log)
        finally:
            gc.unfreeze()
    study.wall_time_s = time.perf_counter() - t0
    study.load_average = (load_start, load_average())
    return study


def _time_format(
    study: Study,
    fmt: str,
    ready: list[tuple[Adapter, Any, list[Any], bytes]],
    sizes: tuple[int, ...],
    timing: TimingConfig,
    memory: bool,
    rss: bool,
    log: Callable[[str], None],
) -> None:
    for op in OPS:
        series = Series(fmt, op)
        study.series.append(series)
        for size in sizes:
            log(f"scaling: {FORMATS[fmt]} {op} {size:,} objects")
            cands = []
            for adapter, ops, objs, _ in ready:
                arg = objs[:size] if op == "encode_many" else ops.encode_many(objs[:size])
                cands.append(Candidate(adapter.name, getattr(ops, op), arg))
            gc.collect()
            stats = measure_cell(cands, timing)
            for (adapter, _, _, _), cand in zip(ready, cands):
                point = Point(adapter.name, adapter.label, size, stats[cand.name])
                if memory:
                    point.tracemalloc_bytes = peak_memory(cand.fn, cand.arg)
                    if rss:
                        point.rss_bytes = rss_peak(cand.fn, cand.arg)
                series.points.append(point)
            del cands


# ---- output --------------------------------------------------------------------------------


def _fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}"


def _fmt_ns(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _fmt_b(x: Optional[float]) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 else str(n)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _best(series: Series, size: int, subject: bool) -> Optional[Point]:
    pts = [p for p in series.points if p.size == size and is_subject(p.adapter) == subject]
    return min(pts, key=lambda p: p.stats.median) if pts else None


def render(study: Study, env: dict[str, Any], plots: list[str], note: str) -> str:
    from .report import fmt_verdict

    lines = [
        "# polycodec scaling study",
        "",
        f"`encode_many` / `decode_many` on 1 to {study.sizes[-1]:,} `{study.model}` objects per"
        " call (one JSON array, one MessagePack array, one Avro container file or one pickled"
        " list). Hardware-specific: compare the shapes of the curves and the ratios, not the"
        " absolute numbers.",
        "",
        _env_line(env, study),
        "",
    ]
    for series in study.series:
        names = series.adapters()
        if not names:
            continue
        title = f"{FORMATS[series.format]} {series.op}"
        lines += [f"## {title}", "", "Objects per second (median):", ""]
        header = ["Objects per call", *[label for _, label in names], "Best polycodec vs peer"]
        rows = []
        for size in study.sizes:
            row = [f"{size:,}"]
            for name, _ in names:
                p = series.at(name, size)
                row.append(_fmt_rate(p.objects_per_s) if p else "—")
            subj, peer = _best(series, size, True), _best(series, size, False)
            ratio = peer.stats.median / subj.stats.median if subj and peer else None
            row.append(fmt_verdict(ratio) + (f" vs {peer.label}" if peer and subj else ""))
            rows.append(row)
        lines += _table(header, rows) + [""]
        lines += [
            "Nanoseconds per object, and the cost per object at the largest size relative to"
            " 100 objects, where the per-call overhead is already spread thin (above 1.00 the cost"
            " per object grows with the batch):",
            "",
        ]
        rows = []
        for size in study.sizes:
            row = [f"{size:,}"]
            for name, _ in names:
                p = series.at(name, size)
                row.append(_fmt_ns(p.ns_per_object) if p else "—")
            rows.append(row)
        growth = [f"{_size(study.sizes[-1])} ÷ 100"]
        for name, _ in names:
            big, ref = series.at(name, study.sizes[-1]), series.at(name, 100)
            growth.append(f"{big.ns_per_object / ref.ns_per_object:.2f}" if big and ref else "—")
        rows.append(growth)
        lines += _table(["Objects per call", *[label for _, label in names]], rows) + [""]
        if study.memory:
            lines += [
                "Peak memory per object, bytes: Python heap (tracemalloc) / RSS high-water"
                + ("" if study.rss else " (RSS not measured on this platform)")
                + ":",
                "",
            ]
            rows = []
            for size in study.sizes:
                row = [f"{size:,}"]
                for name, _ in names:
                    p = series.at(name, size)
                    if p is None:
                        row.append("—")
                        continue
                    tm = None if p.tracemalloc_bytes is None else p.tracemalloc_bytes / size
                    rs = None if p.rss_bytes is None else p.rss_bytes / size
                    row.append(f"{_fmt_b(tm)} / {_fmt_b(rs)}")
                rows.append(row)
            lines += _table(["Objects per call", *[label for _, label in names]], rows) + [""]
    if plots:
        lines += ["## Charts", ""] + [f"![{p}]({p})\n" for p in plots]
    elif note:
        lines += ["## Charts", "", f"_{note}_", ""]
    if study.skips:
        lines += ["## Skipped", ""]
        lines += _table(
            ["Adapter", "Format", "Reason"],
            [[a, FORMATS.get(f, f), r.replace("|", "\\|")[:300]] for a, f, r in study.skips],
        )
        lines += [""]
    lines += ["## Method", ""] + _method_lines()
    return "\n".join(lines).rstrip() + "\n"


def _env_line(env: dict[str, Any], study: Study) -> str:
    start, end = study.load_average
    load = (
        f" 1-minute load average at the start / end: {start:.1f} / {end:.1f}."
        if start is not None and end is not None
        else ""
    )
    note = f"\n\n> {study.note}" if study.note else ""
    return (
        f"Run {env.get('run_utc', '?')} at git {env.get('git_revision', '?')}; "
        f"{env.get('python', '?')} on {env.get('cpu_model', '?')} ({env.get('cpu_count', '?')}"
        f" CPUs); mode {'quick' if study.quick else 'full'}; wall time "
        f"{study.wall_time_s:.0f} s.{load}{note}"
    )


def _method_lines() -> list[str]:
    doc = __doc__ or ""
    body = doc.split("\n\n", 1)[1] if "\n\n" in doc else doc
    return body.strip().splitlines() + [""]


def to_json(study: Study, env: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "environment": env,
        "model": study.model,
        "sizes": list(study.sizes),
        "quick": study.quick,
        "wall_time_s": study.wall_time_s,
        "load_average_start_end": list(study.load_average),
        "note": study.note,
        "series": [
            {
                "format": s.format,
                "op": s.op,
                "points": [
                    {
                        "adapter": p.adapter,
                        "label": p.label,
                        "size": p.size,
                        "median_s": p.stats.median,
                        "mean_s": p.stats.mean,
                        "stdev_s": p.stats.stdev,
                        "samples": p.stats.samples,
                        "calls_per_sample": p.stats.calls_per_sample,
                        "objects_per_s": p.objects_per_s,
                        "tracemalloc_peak_bytes": p.tracemalloc_bytes,
                        "rss_peak_bytes": p.rss_bytes,
                    }
                    for p in s.points
                ],
            }
            for s in study.series
        ],
        "skips": [{"adapter": a, "format": f, "reason": r} for a, f, r in study.skips],
    }


def write_plots(study: Study, out: Path) -> tuple[list[str], str]:
    """One ``scaling_<format>.png`` per format: objects/s against objects per call, log-log."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:
        return [], f"Charts skipped: matplotlib unavailable ({type(exc).__name__}: {exc})."
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in dict.fromkeys(s.format for s in study.series):
        series = [s for s in study.series if s.format == fmt and s.points]
        if not series:
            continue
        fig, axes = plt.subplots(1, len(series), figsize=(6 * len(series), 4.5), squeeze=False)
        for ax, s in zip(axes[0], series):
            for i, (name, label) in enumerate(s.adapters()):
                pts = sorted((p for p in s.points if p.adapter == name), key=lambda p: p.size)
                subject = is_subject(name)
                ax.plot(
                    [p.size for p in pts],
                    [p.objects_per_s for p in pts],
                    marker="o",
                    linewidth=2.5 if subject else 1.2,
                    linestyle="-" if subject else "--",
                    color=plt.get_cmap("tab10")(i % 10),
                    label=label,
                )
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("objects per call")
            ax.set_ylabel("objects per second (higher is faster)")
            ax.set_title(f"{FORMATS[fmt]} {s.op} ({study.model})", fontsize=10)
            ax.grid(which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        name = f"scaling_{fmt}.png"
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        written.append(name)
    return written, ""


def main(
    args: argparse.Namespace, registry: Registry, adapters: Optional[list[str]], out: Path
) -> int:
    from . import environment

    formats = args.formats or list(DEFAULT_FORMATS)
    model = (args.models or ["record"])[0]
    sizes = QUICK_SIZES if args.quick else SIZES
    timing = scaling_timing(args.quick)
    log = (lambda _msg: None) if args.no_progress else (lambda msg: print(msg, flush=True))
    study = run_scaling(
        registry, formats, adapters, model, sizes, timing, not args.no_memory, args.quick, log
    )
    study.note = args.note
    env = environment.collect(timing, args.quick)
    plots: list[str] = []
    note = "Charts skipped (--no-plots)."
    if not args.no_plots:
        plots, note = write_plots(study, out)
    out.mkdir(parents=True, exist_ok=True)
    md, js = out / "scaling.md", out / "scaling.json"
    md.write_text(render(study, env, plots, note), encoding="utf-8")
    js.write_text(json.dumps(to_json(study, env), indent=1, default=str) + "\n", encoding="utf-8")
    print(f"scaling report:  {md}")
    print(f"scaling results: {js}")
    for p in plots:
        print(f"chart:           {out / p}")
    print(f"wall time: {study.wall_time_s:.1f} s")
    return 0
