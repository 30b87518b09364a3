"""The Python examples in docs/msgpack.md (the README's MessagePack section) run and print what
the page says they print."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "msgpack.md"
BLOCK = re.compile(r"```python\n(.*?)```(?:\n\nOutput:\n\n```text\n(.*?)```)?", re.S)


def _examples() -> list[tuple[str, str | None]]:
    return [(match[1], match[2]) for match in BLOCK.finditer(PAGE.read_text())]


@pytest.mark.parametrize("code, output", _examples())
def test_page_example(code: str, output: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("msgpack_doc_example")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        exec(compile(code, str(PAGE), "exec"), module.__dict__)
    if output is not None:
        assert captured.getvalue() == output


def test_page_has_an_example() -> None:
    assert len(_examples()) >= 1
