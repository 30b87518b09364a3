"""README tables from committed results: ``python -m benches.summary [results dir]``.

Prints, as Markdown, the per-format summary and per-cell tables that the README's Benchmarks
section quotes (polycodec's best row and each polycodec row against the fastest peer in any idiom,
losses marked), and the scaling table when ``scaling.json`` is there. Reads only the JSON files,
so the README can be refreshed from a committed run without re-running it.
"""

from __future__ import annotations

import json
import math
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


def cells_markdown(results: dict[str, Any]) -> str:
    """Summary table plus one table per format."""
    cells = [c for c in results["cells"] if c["rows"] and c.get("best_peer")]
    subjects: list[tuple[str, str]] = []
    for c in cells:
        for r in c["rows"]:
            if is_subject(r["adapter"]) and (r["adapter"], r["label"]) not in subjects:
                subjects.append((r["adapter"], r["label"]))
    subjects.sort(key=lambda s: s[0] != "polycodec")
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
    return "\n".join(out) + "\n"


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


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parent / "results"
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    print(cells_markdown(results))
    scaling = folder / "scaling.json"
    if scaling.exists():
        print(scaling_markdown(json.loads(scaling.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
