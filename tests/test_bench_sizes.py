"""The benchmark report's installed-size table: sizes come from the installed distributions'
own file lists, dependencies are followed and counted once."""

from __future__ import annotations

import csv
import importlib.metadata
import io
from pathlib import Path

import pytest

from benches import environment, report


def _record_bytes(name: str) -> int:
    """The size of a distribution's files, read straight from its RECORD (the oracle)."""
    dist = importlib.metadata.distribution(name)
    text = dist.read_text("RECORD") or ""
    total = 0
    for row in csv.reader(io.StringIO(text)):
        path = Path(str(dist.locate_file(row[0])))
        if path.is_file():
            total += path.stat().st_size
    return total


def test_sizes_are_the_installed_files() -> None:
    rows = {row["distribution"].lower(): row for row in environment.installed_sizes()}
    assert rows, "at least one of the compared libraries is installed (msgspec is a test extra)"
    for name, row in rows.items():
        assert row["total_bytes"] >= row["own_bytes"] > 0
        if row["measured"] == "installed files":
            assert row["own_bytes"] == _record_bytes(name)


def test_dependencies_are_followed_and_counted_once() -> None:
    rows = {row["distribution"].lower(): row for row in environment.installed_sizes()}
    if "pydantic" in rows:
        row = rows["pydantic"]
        assert any(
            dep.lower().startswith(("pydantic_core", "pydantic-core"))
            for dep in row["dependencies"]
        )
        deps = [dep.rsplit(" ", 1)[0] for dep in row["dependencies"]]
        assert len(deps) == len(set(deps))
        assert row["total_bytes"] == row["own_bytes"] + sum(_record_bytes(dep) for dep in deps)
    if "msgspec" in rows:
        assert rows["msgspec"]["dependencies"] == []


def test_report_shows_the_table() -> None:
    env = {
        "installed_sizes": [
            {
                "distribution": "polycodec",
                "version": "0.1.0",
                "own_bytes": 1_960_000,
                "total_bytes": 1_960_000,
                "dependencies": [],
                "measured": "installed files",
            }
        ]
    }
    lines = report._installed_sizes(env)
    assert lines[0] == "### Installed size"
    assert "| polycodec 0.1.0 | 1.96 MB | 1.96 MB | — | installed files |" in lines
    assert report._installed_sizes({}) == []


def test_wheel_leaves_out_the_sbom() -> None:
    """maturin 1.12.1+ writes a CycloneDX SBOM into every wheel's dist-info unless told not to:
    115 KB of the installed package (docs/benchmarks.md, "Installed size")."""
    tomllib = pytest.importorskip("tomllib")
    root = Path(__file__).resolve().parent.parent
    config = tomllib.loads((root / "pyproject.toml").read_text())
    assert config["tool"]["maturin"]["sbom"]["rust"] is False
    release = tomllib.loads((root / "Cargo.toml").read_text())["profile"]["release"]
    # Stripped symbols and unwinding (the schema layer runs under catch_unwind) are both kept.
    assert release["strip"] is True
    assert release["panic"] == "unwind"
