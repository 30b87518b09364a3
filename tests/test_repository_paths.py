"""The test command reads nothing outside the repository: no test, benchmark or script names a
path that leaves the checkout (a sibling folder, an absolute path), and the conformance data the
tests read is vendored under ``tests/data/``, each suite with its licence and its source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SUITES = ["JSONTestSuite", "avro", "msgpack-test-suite", "pickle"]
# Data written for this project (no licence or source of its own to carry): the hand-written
# .avsc schemas tests/test_avro_representation.py derives back.
OWN_DATA = ["avsc"]


def _sources() -> list[Path]:
    files = [*ROOT.glob("tests/**/*.py"), *ROOT.glob("benches/**/*.py"), *ROOT.glob("benches/*.rs")]
    files += [ROOT / "scripts" / "test", ROOT / "scripts" / "dev-build", ROOT / ".ci" / "run"]
    # This file names such paths on purpose, to check the patterns.
    return sorted(p for p in files if DATA not in p.parents and p != Path(__file__).resolve())


# Patterns that reach outside the checkout: a parent folder by name, a sibling checkout's shared
# data, an absolute path into a home or work folder.
OUTSIDE = [
    re.compile(r"""["']\.\.["']"""),
    re.compile(r"os\.pardir"),
    re.compile(r"""shared/conformance|/\s*["']shared["']"""),
    re.compile(r"""["'](/work|/home|/root|/Users|/tmp)/"""),
]
# A relative path going up: Rust's `#[path]` is relative to the file, anything else to the
# working directory (the checkout's root when the test command runs).
UPWARD = re.compile(r"""["']((?:\./)*\.\./[^"']*)["']""")
PARENTS = re.compile(r"\.parents\[(\d+)\]")
PARENT_CHAIN = re.compile(r"(?:\.parent){2,}")


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_sources_name_no_path_outside_the_repository(path: Path) -> None:
    text = path.read_text()
    # `Path(__file__).parents[n]` leaves the checkout once n passes the file's depth in it.
    depth = len(path.relative_to(ROOT).parts) - 1
    problems = [m.group(0) for pattern in OUTSIDE for m in pattern.finditer(text)]
    base = path.parent if path.suffix == ".rs" else ROOT
    problems += [
        m.group(0)
        for m in UPWARD.finditer(text)
        if not (base / m.group(1)).resolve().is_relative_to(ROOT)
    ]
    problems += [m.group(0) for m in PARENTS.finditer(text) if int(m.group(1)) > depth]
    problems += [
        m.group(0) for m in PARENT_CHAIN.finditer(text) if m.group(0).count(".parent") > depth + 1
    ]
    assert problems == [], f"{path.relative_to(ROOT)} names paths outside the repository"


def test_the_path_check_sees_what_it_is_meant_to() -> None:
    bad = [
        'Path(__file__).resolve().parents[2] / "shared" / "conformance"',
        "open('../shared/x.json')",
        'Path("/work/shared/conformance")',
    ]
    for text in bad:
        assert any(p.search(text) for p in [*OUTSIDE, UPWARD, PARENTS]), text
    assert not any(p.search('Path(__file__).resolve().parent / "data"') for p in OUTSIDE)


@pytest.mark.parametrize("suite", SUITES)
def test_vendored_suites_carry_their_licence_and_source(suite: str) -> None:
    folder = DATA / suite
    assert (folder / "SOURCE.md").is_file()
    source = (folder / "SOURCE.md").read_text()
    assert re.search(r"Commit: `[0-9a-f]{40}`", source), "SOURCE.md names the upstream revision"
    assert "https://github.com/" in source
    assert list(folder.glob("LICENSE*")), "the suite's licence is beside it"


def test_tests_data_holds_only_the_vendored_suites() -> None:
    assert sorted(p.name for p in DATA.iterdir()) == sorted(SUITES + OWN_DATA)
