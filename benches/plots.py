"""PNG bar charts of relative speed, one per format (matplotlib with the Agg backend).

Charts show *ratios* (speed vs the format's baseline, log scale), not absolute times, because
ratios are what carries over between machines. matplotlib is optional: without it the run still
succeeds and the report says the charts were skipped.
"""

from __future__ import annotations

from pathlib import Path

from .adapters import BASELINES, FORMATS, SUBJECT
from .runner import RunResult


def write_plots(res: RunResult, out: Path) -> tuple[list[str], str]:
    """Write ``speed_<format>.png`` files; returns (relative paths, note if skipped)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
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
        groups = [f"{c.op}\nb{c.batch} {c.model}" for c in cells]
        n = len(names)
        width = 0.8 / max(n, 1)
        fig_w = max(8.0, 0.9 * len(cells) * max(1, n) * 0.35 + 2)
        fig, ax = plt.subplots(figsize=(min(fig_w, 30.0), 5.5))
        cmap = plt.get_cmap("tab10" if n <= 10 else "tab20")
        for i, name in enumerate(names):
            xs, ys = [], []
            for j, c in enumerate(cells):
                r = c.row(name)
                if r is not None and r.vs_baseline is not None:
                    xs.append(j - 0.4 + width * (i + 0.5))
                    ys.append(r.vs_baseline)
            bars = ax.bar(
                xs,
                ys,
                width=width,
                label=labels.get(name, name),
                color=cmap(i % cmap.N),
                edgecolor="black" if name == SUBJECT else None,
                linewidth=1.5 if name == SUBJECT else 0,
            )
            if name == SUBJECT:
                for b in bars:
                    b.set_hatch("//")
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yscale("log")
        ax.set_xticks(range(len(cells)))
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_ylabel(f"speed vs {BASELINES[fmt]} (×, higher is faster, log scale)")
        ax.set_title(f"{FORMATS[fmt]}: speed relative to {BASELINES[fmt]}")
        ax.legend(fontsize=8, ncol=min(n, 5), loc="upper left", bbox_to_anchor=(0, -0.18))
        ax.grid(axis="y", which="both", alpha=0.3)
        fig.tight_layout()
        name = f"speed_{fmt}.png"
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(name)
    return written, ""
