"""PNG bar charts of relative speed, one file per format (matplotlib with the Agg backend).

Charts show *ratios* (speed vs the format's baseline, log scale), not absolute times, because
ratios are what carries over between machines. One panel per model keeps each chart readable;
polycodec's bars are hatched and outlined. matplotlib is optional: without it the run still
succeeds and the report says the charts were skipped.
"""

from __future__ import annotations

from pathlib import Path

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
