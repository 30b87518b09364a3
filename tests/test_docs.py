"""The documentation site (docs/, built by MkDocs from mkdocs.yml): every Python example in its
pages runs and prints what the page says it prints, as tests/test_readme.py checks for the
README; the site builds with ``mkdocs build --strict`` (no broken link or anchor, every page in
the navigation); and the README's links into docs/ lead somewhere."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
BLOCK = re.compile(r"```python\n(.*?)```(?:\n\nOutput:\n\n```text\n(.*?)```)?", re.S)
HEADING = re.compile(r"^(#{1,6}) (.*)$")


def _examples() -> list[tuple[str, str, str | None]]:
    """(page:index, code, output) for every python block of every page."""
    found = []
    for page in PAGES:
        for i, match in enumerate(BLOCK.finditer(page.read_text()), 1):
            found.append((f"{page.name}:{i}", match[1], match[2]))
    return found


EXAMPLES = _examples()


def _expected_from_comments(code: str) -> str | None:
    """Output written as `# ...` comment lines right after `print(...)` lines."""
    lines = code.splitlines()
    expected = [
        following.lstrip()[2:]
        for line, following in zip(lines, lines[1:])
        if line.lstrip().startswith("print(") and following.lstrip().startswith("# ")
    ]
    return "\n".join(expected) + "\n" if expected else None


@pytest.mark.parametrize("where, code, output", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_docs_example(
    where: str, code: str, output: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    expected = output if output is not None else _expected_from_comments(code)
    if "import ray" in code and sys.version_info >= (3, 15):
        pytest.skip("Ray publishes no wheel for CPython 3.15 yet")
    if SCRIPT_GUARD in code:
        printed = _run_as_script_file(code, tmp_path)
    else:
        # As in test_readme.py: a real module named __main__, so that annotations resolve and
        # what is printed (Avro names, pickle sizes) is what a reader running the example as a
        # script gets.
        module = types.ModuleType("__main__")
        monkeypatch.setitem(sys.modules, "__main__", module)
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            exec(compile(code, str(DOCS / where.split(":")[0]), "exec"), module.__dict__)
        printed = captured.getvalue()
    if expected is not None:
        assert printed == expected


SCRIPT_GUARD = 'if __name__ == "__main__":'


def _run_as_script_file(code: str, folder: Path) -> str:
    """What ``python example.py`` prints, in a fresh interpreter: the way a user runs a recipe
    that starts processes (dask's workers import the main script again, which only a file
    lets them do, and which only the ``__main__`` guard makes harmless)."""
    script = folder / "example.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


def test_issue26_8_recipes_that_start_processes_run_as_scripts() -> None:
    """The dask recipe is run as a script file (above), so it must be written as one."""
    recipes = [
        code for where, code, _ in EXAMPLES if "LocalCluster(" in code or "ray.init(" in code
    ]
    assert recipes and all(SCRIPT_GUARD in code for code in recipes)


def test_docs_have_examples() -> None:
    pages_with_examples = {where.split(":")[0] for where, _, _ in EXAMPLES}
    for page in ["index.md", "extensions.md", "msgpack.md", "avro.md", "pickle.md"]:
        assert page in pages_with_examples


def test_docs_outputs_match_a_script_run() -> None:
    """Each example with an Output block prints exactly that when run as a script, in a fresh
    interpreter with a real ``__main__``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    checked = 0
    for where, code, output in EXAMPLES:
        if output is None:
            continue
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert run.returncode == 0, f"{where}: {run.stderr}"
        assert run.stdout == output, where
        checked += 1
    assert checked >= 5


def _mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` as the test command runs it. Never with ``--quiet``: that
    drops MkDocs' warnings before ``--strict`` counts them, and the build then always passes."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:  # required, not skipped: the test command installs the "docs" extra
        pytest.fail("mkdocs is not installed: pip install -e '.[docs]'")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(root / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        cwd=root,
        timeout=300,
    )


def test_site_builds_strict(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, a missing anchor or a page left out of the
    navigation fails the build (mkdocs.yml turns those checks into warnings, strict into
    errors). The site goes to a temporary folder and is never committed."""
    run = _mkdocs_build(ROOT, tmp_path / "site")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    site = tmp_path / "site"
    for page in PAGES:
        built = site / "index.html" if page.stem == "index" else site / page.stem / "index.html"
        assert built.is_file(), page.name
    # The benchmark reports are served from benches/results/, where the harness writes them.
    assert (site / "benches" / "results" / "report" / "index.html").is_file()
    assert (site / "benches" / "results" / "builtins-1000" / "report" / "index.html").is_file()
    assert (site / "benches" / "results" / "speed_json.png").is_file()


def test_issue26_17_strict_site_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    """The check above can fail: the same build of a copy of the site with one broken link
    (the kind benchmarks.md once had) exits non-zero and names the link."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copytree(ROOT / "examples", copy / "examples")
    shutil.copytree(ROOT / "benches" / "results", copy / "benches" / "results")
    shutil.copy(ROOT / "benches" / "README.md", copy / "benches" / "README.md")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    assert _mkdocs_build(copy, tmp_path / "good").returncode == 0
    page = copy / "docs" / "limitations.md"
    # A link as the pages write them, relative to docs/ (so inside the copy), to a report the
    # site does not serve.
    gone = copy / "benches" / "results" / "gone.md"
    missing = Path(os.path.relpath(gone, page.parent)).as_posix()
    page.write_text(page.read_text() + f"\nSee [the old report]({missing}).\n")
    run = _mkdocs_build(copy, tmp_path / "bad")
    assert run.returncode != 0
    assert missing in run.stderr


def test_every_page_is_in_the_navigation() -> None:
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    assert {p.name for p in PAGES} <= nav


def _anchors(page: Path) -> set[str]:
    """The heading anchors GitHub gives a page (mkdocs.yml has MkDocs' toc make the same)."""
    anchors = set()
    fence = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        match = None if fence else HEADING.match(line)
        if match:
            text = re.sub(r"[`*]", "", match[2]).lower()
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def test_readme_links_into_docs_resolve() -> None:
    """The README's links are absolute, into the repository on the forge (PyPI shows the README
    as the package's description, where a relative link leads nowhere): each names a page of
    this checkout, and its anchor a heading there."""
    readme = (ROOT / "README.md").read_text()
    with open(ROOT / "pyproject.toml", "rb") as file:
        files = tomllib.load(file)["project"]["urls"]["Repository"] + "/blob/main/"
    links = re.findall(r"\]\(" + re.escape(files) + r"(docs/[^)#\s]+)(?:#([^)\s]+))?\)", readme)
    assert len({target for target, _ in links}) >= 10
    for target, anchor in links:
        page = ROOT / target
        assert page.is_file(), target
        if anchor:
            assert anchor in _anchors(page), f"{target}#{anchor}"


def test_readme_is_a_short_tour() -> None:
    """The reference lives in docs/; the README keeps what a newcomer needs."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for heading in ["## Set-up", "## Quick example", "## Benchmarks", "## Documentation"]:
        assert heading in readme


# The pages the site shows: docs/ and the benchmark pages docs/hooks.py mounts from benches/.
SITE_PAGES = [
    *PAGES,
    ROOT / "benches" / "README.md",
    *sorted((ROOT / "benches" / "results").glob("**/*.md")),
]
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.) ")


def test_issue26_16_every_list_follows_a_blank_line() -> None:
    """Python-Markdown (MkDocs) only starts a list after a blank line; without one the items
    render as one run-on paragraph (``... cell. - **JSON.** ...``), though GitHub shows a list."""
    for page in SITE_PAGES:
        lines = page.read_text().splitlines()
        fence = False
        for number, (before, line) in enumerate(zip(lines, lines[1:]), 2):
            if line.startswith("```"):
                fence = not fence
            # A fence's closing line ends a block as a blank line does.
            if fence or not LIST_ITEM.match(line) or not before.strip() or before == "```":
                continue
            # A list continues across items and their indented continuation lines.
            assert LIST_ITEM.match(before) or before.startswith("  "), f"{page.name}:{number}"


def test_issue26_16_benchmarks_page_shows_then_explains() -> None:
    """The page opens with the headline table and the chart, before any section; its tables are
    what ``python -m benches.summary --write`` makes from the committed results; and it speaks
    of the project, not of its issue tracker."""
    from benches import summary

    page = (DOCS / "benchmarks.md").read_text()
    first_section = page.index("\n## ")
    assert page.index("<!-- summary: headline -->\n\n| Format |") < first_section
    assert page.index("![JSON") < first_section
    generated = summary.sections(ROOT / "benches" / "results")
    assert set(generated) == {m[2] for m in summary.MARKER.finditer(page)}
    assert summary.fill(page, generated) == page, "run: python -m benches.summary --write ..."
    for page_path in (DOCS / "benchmarks.md", ROOT / "benches" / "README.md"):
        assert not re.search(r"(?i)\bissue \d|\bsession\b", page_path.read_text()), page_path
