"""The examples of docs/avro.md run and print what the page says they print (as the README's
examples are checked once the page is part of it)."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "avro.md"
BLOCK = re.compile(r"```python\n(.*?)```(?:\n\nOutput:\n\n```text\n(.*?)```)?", re.S)


def _examples() -> list[tuple[str, str | None]]:
    return [(m[1], m[2]) for m in BLOCK.finditer(PAGE.read_text())]


def _expected_from_comments(code: str) -> str | None:
    lines = code.splitlines()
    expected = [
        following[2:]
        for line, following in zip(lines, lines[1:])
        if line.lstrip().startswith("print(") and following.startswith("# ")
    ]
    return "\n".join(expected) + "\n" if expected else None


@pytest.mark.parametrize("code, output", _examples())
def test_avro_doc_example(code: str, output: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("readme_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        exec(compile(code, str(PAGE), "exec"), module.__dict__)
    expected = output if output is not None else _expected_from_comments(code)
    assert expected is not None
    assert captured.getvalue() == expected


def test_avro_doc_has_examples() -> None:
    assert len(_examples()) == 4
