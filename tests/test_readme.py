"""The README's Python examples run, and print what the README says they print."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```(?:\n\nOutput:\n\n```text\n(.*?)```)?", re.S)


def _examples() -> list[tuple[str, str | None]]:
    return [(match[1], match[2]) for match in BLOCK.finditer(README.read_text())]


def _expected_from_comments(code: str) -> str | None:
    """Output written as `# ...` comment lines right after `print(...)` lines."""
    lines = code.splitlines()
    expected = [
        following[2:]
        for line, following in zip(lines, lines[1:])
        if line.lstrip().startswith("print(") and following.startswith("# ")
    ]
    return "\n".join(expected) + "\n" if expected else None


@pytest.mark.parametrize("code, output", _examples())
def test_readme_example(code: str, output: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real module, so dataclasses and typing can resolve the example's annotations; named
    # __main__ (standing in for the real one while it runs) so that what is printed (Avro
    # names, pickle sizes, which name the module) is what a reader running the example as a
    # script gets.
    module = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", module)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        exec(compile(code, str(README), "exec"), module.__dict__)
    expected = output if output is not None else _expected_from_comments(code)
    if expected is not None:
        assert captured.getvalue() == expected


def test_readme_has_examples() -> None:
    # The quick example; the format pages have an example each, and the reference's examples are
    # in docs/ (tests/test_docs.py runs them the same way).
    assert len(_examples()) >= 1


def test_readme_outputs_match_a_script_run() -> None:
    """Issue 14, case 14: each example with an Output block prints exactly that when a reader
    runs it as a script (a real ``__main__``, in a fresh interpreter: pickle sizes and Avro
    names depend on the module name)."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    checked = 0
    for code, output in _examples():
        if output is None:
            continue
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout == output
        checked += 1
    assert checked >= 1


def test_issue26_9_msgspec_reads_polycodecs_json_except_offsets_with_seconds() -> None:
    """The README's interop claim and its one exception, both as stated there: msgspec reads
    polycodec's datetimes and times, except those whose UTC offset has seconds (refused in
    JSON, and for a time in MessagePack)."""
    import datetime

    import msgspec

    import polycodec

    minutes = datetime.timezone(datetime.timedelta(hours=5, minutes=30))
    seconds = datetime.timezone(datetime.timedelta(hours=5, minutes=30, seconds=15))
    for tz in (minutes, seconds):
        values = [datetime.datetime(2024, 5, 1, 12, tzinfo=tz), datetime.time(12, tzinfo=tz)]
        for value in values:
            for fmt, module in (("json", msgspec.json), ("msgpack", msgspec.msgpack)):
                data = polycodec.encode_one(value, format=fmt)
                refused = tz is seconds and (fmt == "json" or isinstance(value, datetime.time))
                if refused:
                    with pytest.raises(msgspec.ValidationError, match="RFC3339"):
                        module.decode(data, type=type(value))
                else:
                    assert module.decode(data, type=type(value)) == value
    claim = " ".join(README.read_text().split())
    assert "msgspec, orjson and `json` read polycodec's JSON" in claim
    assert "a datetime or time whose UTC offset has seconds, such as `+05:30:15`" in claim


RAW = "https://raw.githubusercontent.com/polycodec/polycodec/main/"


def test_readme_chart_is_the_committed_one() -> None:
    """The front page's chart is an absolute address (PyPI shows the README) of a file in this
    checkout: the one ``python -m benches.summary --write`` draws from the results files."""
    from benches.plots import SUMMARY_CHART

    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README.read_text())
    assert images == [RAW + "benches/results/" + SUMMARY_CHART]
    assert (README.parent / images[0][len(RAW) :]).is_file()
