"""PNG bar charts of relative speed, one file per format (matplotlib with the Agg backend).

Charts show *ratios* (speed vs the format's baseline, log scale), not absolute times, because
ratios are what carries over between machines. One panel per model keeps each chart readable;
polycodec's bars are hatched and outlined. matplotlib is optional: without it the run still
succeeds and the report says the charts were skipped.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .adapters import BASELINES, FORMATS, is_subject
from .runner import RunResult


def _times(value: float, _pos: object) -> str:
    return f"{value:g}×"


def write_plots(res: RunResult, out: Path) -> tuple[list[str], str]:
    """Write ``speed_<format>.png`` files; returns (file names, note when skipped)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except Exception as exc:  # ImportError, or a broken backend
        return [], f"Charts skipped: matplotlib unavailable ({type(exc).__name__}: {exc})."

    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    labels = {a.name: a.label for a in res.adapters}
    for fmt in res.config.formats:
        cells = [c for c in res.cells if c.format == fmt and c.rows and c.baseline]
        if not cells:
            continue
        names = [a.name for a in res.adapters if any(c.row(a.name) for c in cells)]
        cmap = plt.get_cmap("tab10" if len(names) <= 10 else "tab20")
        colours = {n: cmap(i % cmap.N) for i, n in enumerate(names)}
        models = [m for m in res.config.models if any(c.model == m for c in cells)]
        fig, axes = plt.subplots(
            len(models), 1, figsize=(11, 3.2 * len(models) + 1.0), squeeze=False
        )
        width = 0.8 / max(len(names), 1)
        for ax, model in zip(axes[:, 0], models):
            group = [c for c in cells if c.model == model]
            for i, name in enumerate(names):
                xs, ys = [], []
                for j, c in enumerate(group):
                    r = c.row(name)
                    if r is not None and r.vs_baseline is not None:
                        xs.append(j - 0.4 + width * (i + 0.5))
                        ys.append(r.vs_baseline)
                subject = is_subject(name)
                bars = ax.bar(
                    xs,
                    ys,
                    width=width,
                    label=labels.get(name, name),
                    color=colours[name],
                    edgecolor="black" if subject else "none",
                    linewidth=1.2 if subject else 0,
                    hatch="//" if subject else None,
                )
                if subject:  # label polycodec's bars: that is what readers look for
                    for bar, y in zip(bars, ys):
                        ax.annotate(
                            f"{y:.2g}×",
                            (bar.get_x() + bar.get_width() / 2, y),
                            ha="center",
                            va="bottom",
                            fontsize=7,
                        )
            ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
            ax.set_yscale("log")
            # Labels at 1-2-5 steps: most panels span less than two decades.
            ax.yaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(_times))
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
            ax.set_xticks(range(len(group)))
            ax.set_xticklabels([f"{c.op} (batch {c.batch})" for c in group], fontsize=8)
            ax.set_title(f"{model}", fontsize=10, loc="left")
            ax.set_ylabel(f"× vs {BASELINES[fmt]}", fontsize=8)
            ax.grid(axis="y", which="both", alpha=0.3)
        handles, legend_labels = axes[0, 0].get_legend_handles_labels()
        fig_h = fig.get_figheight()
        fig.legend(
            handles,
            legend_labels,
            loc="upper center",
            ncol=min(len(names), 5),
            fontsize=8,
            title=f"{FORMATS[fmt]}: speed relative to {BASELINES[fmt]} "
            "(higher is faster, log scale)",
            title_fontsize=10,
        )
        fig.tight_layout(rect=(0, 0, 1, 1 - 0.65 / fig_h))
        file_name = f"speed_{fmt}.png"
        fig.savefig(out / file_name, dpi=100)
        plt.close(fig)
        written.append(file_name)
    return written, ""


#: The front page's chart, drawn from the committed results by ``python -m benches.summary
#: --write`` beside the tables it fills.
SUMMARY_CHART = "summary.png"

#: The per-feature cells whose fastest peer is msgspec on its Struct twins (Avro and pickle have
#: their own references, shown per format).
_FEATURE_FORMATS = ("json", "msgpack", "builtins")


def _geomean(values: list[float]) -> float:
    return math.exp(sum(map(math.log, values)) / len(values))


def _python(results: dict[str, Any]) -> str:
    return "CPython " + str(results.get("environment", {}).get("python", "?")).split()[0]


def _load(loads: Any) -> str:
    """The run's 1-minute load average at its start and end, as the chart shows it."""
    known = [f"{float(v):.1f}" for v in (loads or []) if v is not None]
    return f", load average {'-'.join(known)}" if known else ""


def _format_bars(results: dict[str, Any]) -> list[tuple[str, list[float]]]:
    """Per format: its label (with the fastest peer) and polycodec's time ÷ that peer's per
    cell, for the faster polycodec row of each cell."""
    out = []
    for fmt, name in FORMATS.items():
        ratios, peers = [], []
        for cell in results["cells"]:
            if cell["format"] != fmt or not cell.get("best_peer") or not cell.get("best_subject"):
                continue
            rows = {r["adapter"]: r for r in cell["rows"]}
            best = rows.get(cell["best_subject"])
            if best is None or not best.get("vs_best_peer"):
                continue
            ratios.append(1.0 / float(best["vs_best_peer"]))
            peer = rows[cell["best_peer"]]["label"]
            if peer not in peers:
                peers.append(peer)
        if ratios:
            out.append((f"{name} vs {', '.join(peers)}", ratios))
    return out


def _feature_bars(features: dict[str, Any]) -> list[tuple[str, list[float]]]:
    """Per feature: polycodec's time ÷ msgspec Struct's in its JSON, MessagePack and builtins
    cells (the faster of the slots and plain rows per cell)."""
    per_feature: dict[str, list[float]] = {}
    for cell in features["cells"]:
        if cell["cell"].split("-")[0] not in _FEATURE_FORMATS:
            continue
        ratios = [r for r in cell["ratios"].values() if r]
        if ratios:
            per_feature.setdefault(cell["feature"], []).append(min(ratios))
    # Fastest first: the slowest features, the ones to read about, at the bottom.
    return sorted(per_feature.items(), key=lambda bar: _geomean(bar[1]))


def _bar_panel(ax: Any, bars: list[tuple[str, list[float]]], title: str) -> None:
    """Horizontal bars of the geometric mean, top to bottom in ``bars``' order, a whisker from
    the best to the worst cell, and the values in a column of their own right of the plot, where
    they cannot run into a bar, a whisker or each other."""
    from matplotlib import ticker

    ys = range(len(bars))
    means = [_geomean(ratios) for _, ratios in bars]
    lows = [min(ratios) for _, ratios in bars]
    highs = [max(ratios) for _, ratios in bars]
    colours = ["#2b6cb0" if m < 0.995 else "#c53030" if m > 1.005 else "#718096" for m in means]
    ax.barh(ys, means, color=colours, height=0.62)
    ax.hlines(ys, lows, highs, color="black", linewidth=1.0)
    ax.plot(lows, ys, "|", color="black", markersize=6)
    ax.plot(highs, ys, "|", color="black", markersize=6)
    for y, mean, low, high in zip(ys, means, lows, highs):
        ax.annotate(
            f"{mean:.2f}  ({low:.2f}-{high:.2f})",
            (1.0, y),
            xycoords=("axes fraction", "data"),
            xytext=(8, 0),
            textcoords="offset points",
            va="center",
            fontsize=9.5,
        )
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks(list(ys), [label for label, _ in bars], fontsize=9.5)
    ax.set_xscale("log")
    ax.set_xlim(min(lows) / 1.3, max(max(highs), 1.0) * 1.3)
    ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.grid(axis="x", which="major", alpha=0.3)
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_ylim(len(bars) - 0.4, -0.6)  # the first bar on top


def summary_chart(folder: Path, out: Path) -> str:
    """Draw ``out`` (the front page's chart) from ``folder/results.json`` and, when present,
    ``folder/features.json``: polycodec's time ÷ the fastest peer's, per format and per
    feature, one direction (below 1 polycodec is faster). Returns a note, empty when drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as exc:  # ImportError, or a broken backend
        return f"Chart skipped: matplotlib unavailable ({type(exc).__name__}: {exc})."
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    panels = [
        (
            _format_bars(results),
            f"Per format ({_python(results)}{_load(results.get('load_average_start_end'))}): "
            "every cell of python -m benches,\n"
            "4 models, one object and batches of 100, polycodec's faster row per cell",
        )
    ]
    features_file = folder / "features.json"
    if features_file.exists():
        features = json.loads(features_file.read_text(encoding="utf-8"))
        quick = "\n(a --quick smoke run: indicative only)" if features.get("quick") else ""
        panels.append(
            (
                _feature_bars(features),
                f"Per feature ({_python(features)}{_load(features.get('load_average'))}), "
                "against msgspec Struct:\nthe JSON, MessagePack and builtins cells of "
                f"python -m benches --features, 50 values per call{quick}",
            )
        )
    heights = [len(bars) + 1.5 for bars, _ in panels]
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(8.0, 0.9 + 0.3 * sum(heights)),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for ax, (bars, title) in zip(axes[:, 0], panels):
        _bar_panel(ax, bars, title)
    axes[-1, 0].set_xlabel(
        "polycodec's time ÷ the fastest peer's, log scale: below 1 polycodec is faster\n"
        "bar and first number: geometric mean over the cells; whisker and brackets: best to "
        "worst cell",
        fontsize=9.5,
    )
    fig.tight_layout()
    # "tight" grows the canvas to every label, the value column right of the plots included.
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return ""
