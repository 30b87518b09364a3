"""``python -m benches.summary --per-version``: one headline row per interpreter, built from the
results files of runs on several CPythons (issue 24), next to the single-run tables."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benches.summary import (  # noqa: E402
    main,
    per_version_markdown,
    targets_headline_markdown,
    targets_markdown,
)


def _cell(fmt: str, op: str, ratio: float) -> dict[str, Any]:
    """A cell where polycodec's best row is ``ratio`` times as fast as the fastest peer."""
    return {
        "format": fmt,
        "op": op,
        "batch": 1,
        "model": "record",
        "best_peer": "msgspec-struct",
        "best_subject": "polycodec",
        "rows": [
            {"adapter": "polycodec", "label": "polycodec", "vs_best_peer": ratio},
            {"adapter": "msgspec-struct", "label": "msgspec (Struct)", "vs_best_peer": 1.0},
        ],
    }


def _run(python: str, cells: list[dict[str, Any]], **env: str) -> dict[str, Any]:
    environment = {
        "python": f"{python} (64-bit) (cpython)",
        "interpreter": f"CPython {python} (main, Oct 26 2026 15:12:11, GCC 16.2.0)",
        "mode": "full",
        "git_revision": "1c4ebac0000000",
    }
    environment.update(env)
    return {"environment": environment, "cells": cells, "skips": []}


def _rows(markdown: str) -> list[list[str]]:
    lines = [line for line in markdown.splitlines() if line.startswith("| ")]
    return [[part.strip() for part in line.strip("|").split("|")] for line in lines]


def test_per_version_rows_are_sorted_by_version_with_geometric_means() -> None:
    newer = _run("3.14.10", [_cell("json", "encode_one", 2.0), _cell("json", "decode_one", 0.5)])
    older = _run("3.11.7", [_cell("json", "encode_one", 1.5), _cell("pickle", "encode_one", 4.0)])
    older["skips"] = [
        {"adapter": "marshmallow-recipe-nuked", "kind": "unavailable"},
        {"adapter": "serpy", "kind": "unsupported"},
    ]
    markdown = per_version_markdown([newer, older])
    header, first, second = _rows(markdown)
    assert header == ["Interpreter", "JSON", "pickle"]
    # Below the table, not a column of its own (the table keeps to a page's width).
    assert "Peers not installed (so not in the running for fastest peer): CPython 3.11.7: " in (
        markdown
    )
    # The version alone: the build is in the runs table.
    assert first[0] == "CPython 3.11.7"
    # polycodec's time ÷ the peer's: 1.5 times as fast is 0.67 of the time, bold as a win.
    assert first[1:] == ["**0.67** (1 / 0 / 1)", "**0.25** (1 / 0 / 1)"]
    assert "CPython 3.11.7: marshmallow-recipe-nuked." in markdown
    # One win and one loss of the same size: a geometric mean of exactly 1.
    assert second[1:] == ["1.00 (1 / 1 / 2)", "—"]


def test_per_version_says_when_runs_are_not_alike() -> None:
    full = _run("3.13.18", [_cell("json", "encode_one", 1.2)])
    quick = _run("3.15.2", [_cell("json", "encode_one", 1.1)], mode="quick (CI smoke run)")
    later = _run("3.14.10", [_cell("json", "encode_one", 1.1)], git_revision="ded575ce1bcb77")
    unknown = _run("3.14.10", [_cell("json", "encode_one", 1.1)], git_revision="unknown (no git)")
    assert "indicative only" in per_version_markdown([full, quick])
    assert "different git revisions (1c4ebac00000, ded575ce1bcb)" in per_version_markdown(
        [full, later]
    )
    assert "do not record their git revision" in per_version_markdown([full, unknown])
    alike = per_version_markdown([full, full])
    assert "indicative" not in alike and "revision" not in alike


def test_per_version_reads_results_written_before_the_interpreter_line() -> None:
    old = _run("3.11.7", [_cell("msgpack", "encode_one", 1.3)])
    del old["environment"]["interpreter"]
    (row,) = _rows(per_version_markdown([old]))[1:]
    assert row[0] == "CPython 3.11.7"


def test_per_version_cli_reads_the_results_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """From a real (tiny) run of the harness on this interpreter, through the CLI flag."""
    from benches.__main__ import main as bench_main

    rc = bench_main(
        [
            "--formats", "json",
            "--models", "record",
            "--batch", "1",
            "--ops", "encode_one",
            "--adapters", "json,polycodec",
            "--rounds", "2", "--target-ms", "0.2", "--budget", "0",
            "--no-plots", "--no-progress", "--no-memory",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert rc == 0
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    if not any(c.get("best_subject") for c in results["cells"]):
        pytest.skip("polycodec not importable")
    assert main(["--per-version", str(tmp_path / "results.json")]) == 0
    first_table = capsys.readouterr().out.split("\n\n", 1)[0]
    (row,) = _rows(first_table)[1:]
    assert results["environment"]["interpreter"].startswith(row[0] + " ")
    assert row[0].startswith(f"CPython {sys.version_info.major}.{sys.version_info.minor}.")
    assert re.fullmatch(r"(\*\*)?\d+\.\d\d(\*\*)?( ✗)? \(\d / \d / 1\)", row[1])
    assert main(["--per-version"]) == 2


def _timed(fmt: str, op: str, model: str, reference: str, **times: float) -> dict[str, Any]:
    """A cell with median times: the reference's 1.0 s, polycodec's rows as given."""
    rows = [{"adapter": reference, "label": reference, "median_s": 1.0, "vs_best_peer": 1.0}]
    for adapter, t in times.items():
        name = adapter.replace("_", "-")
        rows.append({"adapter": name, "label": name, "median_s": t, "vs_best_peer": 1.0 / t})
    return {
        "format": fmt,
        "op": op,
        "batch": 1 if op.endswith("_one") else 100,
        "model": model,
        "best_peer": reference,
        "best_subject": "polycodec",
        "rows": rows,
    }


def test_targets_mark_every_miss_per_version_and_row() -> None:
    """Each cell against the issue's targets: slots <= 1.00x msgspec Struct, plain encode
    <= 1.00x, plain decode <= 1.30x; Avro <= 0.10x fastavro; pickle <= 0.50x stdlib pickle."""
    old = _run(
        "3.11.7",
        [
            _timed("json", "decode_one", "record", "msgspec-struct", polycodec=1.29,
                   polycodec_slots=0.99),
            _timed("avro", "decode_one", "record", "fastavro", polycodec=0.09),
        ],
    )  # fmt: skip
    new = _run(
        "3.14.10",
        [
            _timed("json", "decode_one", "record", "msgspec-struct", polycodec=1.40,
                   polycodec_slots=1.02),
            _timed("json", "encode_one", "record", "msgspec-struct", polycodec=1.004),
            _timed("avro", "decode_one", "record", "fastavro", polycodec=0.13),
            _timed("pickle", "decode_one", "record", "pickle", polycodec=0.70),
        ],
    )  # fmt: skip
    # One table per format and row: (operation, model) -> the runs' entries, oldest first.
    tables = {}
    for block in ("\n" + targets_markdown([new, old])).split("\n**")[1:]:
        title = block.split("**", 1)[0]
        tables[title] = {tuple(r[:2]): r[2:] for r in _rows(block)[1:]}
    assert "(÷ msgspec Struct; target: encode at most 1.00, decode at most 1.30):" in (
        targets_markdown([new, old])
    )
    assert tables["JSON, plain"][("decode_one", "record")] == ["1.29", "1.40 ✗"]
    assert tables["JSON, slots"][("decode_one", "record")] == ["0.99", "1.02 ✗"]
    # 1.004 shows as 1.00, which meets 1.00; a run without the cell shows a dash.
    assert tables["JSON, plain"][("encode_one", "record")] == ["—", "1.00"]
    assert tables["Avro, plain"][("decode_one", "record")] == ["0.09", "0.13 ✗"]
    assert tables["pickle, plain"][("decode_one", "record")] == ["—", "0.70 ✗"]
    assert list(tables["JSON, plain"]) == [("encode_one", "record"), ("decode_one", "record")]
    head = {r[0]: r[1:] for r in _rows(targets_headline_markdown([new, old]))[1:]}
    assert head["JSON decode, plain (≤1.30)"] == ["1.29 (0/1)", "1.40 ✗ (1/1)"]
    assert head["JSON encode, plain (≤1.00)"] == ["—", "1.00 (0/1)"]
    assert head["Avro decode, plain (≤0.10)"] == ["0.09 (0/1)", "0.13 ✗ (1/1)"]
    assert list(head)[:2] == ["JSON encode, plain (≤1.00)", "JSON decode, plain (≤1.30)"]


def test_sections_add_the_per_version_tables_from_the_folder(tmp_path: Path) -> None:
    """``--write`` fills the ``versions`` markers from ``per-version/*/results.json``."""
    from benches.summary import sections

    cell = _timed("json", "decode_one", "record", "msgspec-struct", polycodec=1.5)
    (tmp_path / "results.json").write_text(json.dumps(_run("3.14.10", [cell])), encoding="utf-8")
    assert "versions" not in sections(tmp_path)
    (tmp_path / "per-version" / "3.11").mkdir(parents=True)
    old = _run("3.11.7", [_timed("json", "decode_one", "record", "msgspec-struct", polycodec=1.1)])
    (tmp_path / "per-version" / "3.11" / "results.json").write_text(
        json.dumps(old), encoding="utf-8"
    )
    got = sections(tmp_path)
    assert "| JSON decode, plain (≤1.30) | 1.10 (0/1) | 1.50 ✗ (1/1) |" in got["versions"]
    assert "| decode_one | record | 1.10 | 1.50 ✗ |" in got["version_cells"]


def test_headline_and_cells_are_polycodecs_time_over_the_peers() -> None:
    """The Benchmarks page and the README use one direction: polycodec's time ÷ the fastest
    peer's, bold below 1.00 (faster), ✗ above it, within the tie band plain; the headline is
    one row per format with the peer, geometric mean, best-worst cell and won / lost / cells."""
    from benches.summary import cell_tables_markdown, headline_markdown, rows_markdown

    cells = [
        _timed("json", "encode_one", "record", "msgspec-struct", polycodec=0.8, polycodec_slots=0.5),
        _timed("json", "decode_one", "record", "msgspec-struct", polycodec=1.25, polycodec_slots=2.0),
        _timed("json", "decode_many", "record", "msgspec-struct", polycodec=1.003),
    ]  # fmt: skip
    results = _run("3.14.10", cells)
    header, row = _rows(headline_markdown(results))
    assert header[2] == "polycodec ÷ peer"
    # Each cell's best_subject row (here the plain one): 0.8, 1.25 and 1.003 (a tie).
    assert row == ["JSON", "msgspec-struct", "1.00", "0.80-1.25", "1 / 1 / 3"]
    tables = cell_tables_markdown(results)
    # One fastest peer in every cell: named once, above the table, not in a column.
    assert tables.startswith("**JSON**, against msgspec-struct:")
    by_op = {r[0]: r for r in _rows(tables)[1:]}
    assert by_op["encode_one"][3:] == ["**0.80**", "**0.50**"]
    assert by_op["decode_one"][3:] == ["1.25 ✗", "2.00 ✗"]
    assert by_op["decode_many (100)"][3:] == ["1.00", "—"]
    (plain_and_slots,) = _rows(rows_markdown(results))[1:]
    assert plain_and_slots == ["JSON", "1.00", "1 / 1", "1.00", "1 / 1"]


def test_headline_adds_the_per_feature_run_against_each_target() -> None:
    """With ``features.json`` beside ``results.json``, the headline (the README's table) also
    gives each format's per-feature result: the geometric mean of the ``slots=True`` cells and
    how many meet their target (two decimals, as shown: 1.004 meets 1.00, 0.11 misses 0.10)."""
    from benches.summary import headline_markdown

    results = _run("3.14.10", [_cell("json", "encode_one", 2.0), _cell("avro", "encode_one", 20.0)])
    targets = [
        {"row": "slots", "format": "json", "direction": "enc", "at_most": 1.0},
        {"row": "slots", "format": "json", "direction": "dec", "at_most": 1.0},
        {"row": "slots", "format": "avro", "direction": "dec", "at_most": 0.1},
        {"row": "plain", "format": "json", "direction": "dec", "at_most": 1.15},
    ]
    features = {
        "environment": results["environment"],
        "quick": False,
        "targets": targets,
        "cells": [
            {"feature": "uuid", "cell": "json-encode", "ratios": {"slots": 1.004, "plain": 3.0}},
            {"feature": "uuid", "cell": "json-decode", "ratios": {"slots": 1.1, "plain": 1.1}},
            {"feature": "bytes", "cell": "json-decode", "ratios": {"slots": 0.8}},
            {"feature": "bytes", "cell": "avro-decode", "ratios": {"slots": 0.11}},
            {"feature": "raw", "cell": "avro-decode", "ratios": {"plain": 0.01}},
        ],
    }
    header, json_row, avro_row = _rows(headline_markdown(results, features))
    assert header[-2:] == ["Per feature ÷ peer", "At target / cells"]
    # 1.004 (meets, as shown) and 0.8 meet 1.00, 1.1 misses; the geometric mean is 0.96.
    assert json_row[-2:] == ["**0.96**", "2 / 3"]
    # Faster than fastavro (bold) yet over its target: the last column says so.
    assert avro_row[-2:] == ["**0.11**", "0 / 1"]
    assert "`python -m benches --features` (3 small models" in headline_markdown(results, features)
    # Without a per-feature run, the table keeps its five columns.
    assert len(_rows(headline_markdown(results))[0]) == 5
