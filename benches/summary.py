"""The Benchmarks page's tables from committed results.

``python -m benches.summary [results dir]`` prints, as Markdown, the per-format summary and
per-cell tables (polycodec's best row and each polycodec row against the fastest peer in any
idiom, losses marked), and the scaling tables when ``scaling.json`` is there.
``python -m benches.summary --write docs/benchmarks.md [results dir]`` puts them into the page
instead, each between its pair of markers (``<!-- summary: headline -->`` ...
``<!-- /summary -->``; also ``cells`` and ``scaling``), leaving the prose around them alone.
Reads only the JSON files, so the page is refreshed from a committed run without re-running it.

``python -m benches.summary --per-version results-3.11.json results-3.14.json ...`` prints instead
one headline row per interpreter (``per_version_markdown``): the same runs on several CPythons,
side by side.
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


MARKER = re.compile(r"(<!-- summary: (\w+) -->\n).*?(<!-- /summary -->)", re.S)


def sections(folder: Path) -> dict[str, str]:
    """The generated parts of the Benchmarks page, by marker name."""
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    out = {"headline": headline_markdown(results), "cells": cell_tables_markdown(results)}
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
        runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[1:]]
        if not runs:
            print("usage: python -m benches.summary --per-version RESULTS.json...", file=sys.stderr)
            return 2
        print(per_version_markdown(runs))
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
