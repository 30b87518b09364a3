"""Static typing of the public API (issue 28, item 11): mypy infers the decoded type from the
class passed to the module-level functions and to ``Codec``, and ``Any`` for type forms that are
no class. The oracle is mypy itself, run on a snippet against this checkout's package (its
``py.typed`` and stubs), reading the ``reveal_type`` notes it prints."""

from __future__ import annotations

import pathlib
import re
import textwrap

import pytest

mypy_api = pytest.importorskip("mypy.api")

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent / "python"

SNIPPET = """
import dataclasses
from typing import Optional
import polycodec

@dataclasses.dataclass
class Event:
    id: int

b = b"{}"
reveal_type(polycodec.decode_one(b, Event))
reveal_type(polycodec.decode_one(b, Event, "msgpack", strict=False))
reveal_type(polycodec.decode_many(b, Event, "avro"))
reveal_type(polycodec.from_builtins({"id": 1}, Event))
reveal_type(polycodec.from_builtins({"id": 1}, Event, builtin_types=[bytes]))
reveal_type(polycodec.Codec(Event, "json"))
reveal_type(polycodec.Codec(Event).decode_one(b))
reveal_type(polycodec.Codec(Event).decode_many(b))
reveal_type(polycodec.decode_one(b, Optional[Event]))
reveal_type(polycodec.decode_many(b, list[int]))
reveal_type(polycodec.from_builtins(1, int))
"""

EXPECTED = [
    "snippet.Event",
    "snippet.Event",
    "list[snippet.Event]",
    "snippet.Event",
    "snippet.Event",
    "polycodec._polycodec.Codec[snippet.Event]",
    "snippet.Event",
    "list[snippet.Event]",
    # A union is no class: the result is Any, which any use type-checks against.
    "Any",
    # A parameterised builtin is a class to mypy: list[int] passed as the type gives list[int].
    "list[list[int]]",
    "int",
]


def _run_mypy(tmp_path: pathlib.Path, source: str) -> tuple[str, int]:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(textwrap.dedent(source))
    stdout, stderr, status = mypy_api.run(
        [
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--python-version",
            "3.11",
            str(snippet),
        ]
    )
    assert not stderr, stderr
    return stdout, status


def test_mypy_infers_the_decoded_type(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYPYPATH", str(PACKAGE_ROOT))
    monkeypatch.chdir(tmp_path)
    stdout, _ = _run_mypy(tmp_path, SNIPPET)
    # mypy names builtins with or without their module depending on its version.
    revealed = [
        name.replace("builtins.", "") for name in re.findall(r'Revealed type is "([^"]+)"', stdout)
    ]
    assert revealed == EXPECTED, stdout
    # Nothing but the notes: the calls themselves type-check under --strict.
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert errors == [], stdout


def test_mypy_rejects_a_wrong_use_of_the_result(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inferred type is a real one, not ``Any`` spelled otherwise: using it wrongly fails."""
    monkeypatch.setenv("MYPYPATH", str(PACKAGE_ROOT))
    monkeypatch.chdir(tmp_path)
    source = """
    import dataclasses
    import polycodec

    @dataclasses.dataclass
    class Event:
        id: int

    name: str = polycodec.decode_one(b"{}", Event).id
    ids: list[str] = [e.id for e in polycodec.decode_many(b"[]", Event)]
    """
    stdout, status = _run_mypy(tmp_path, source)
    assert status == 1
    assert stdout.count("Incompatible types in assignment") == 1, stdout
    assert "List comprehension has incompatible type" in stdout, stdout


def test_mypy_checks_per_class_options_unset_and_raw(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``polycodec.options`` keeps the class's type and its keywords are typed (a misspelt
    rename style or a float tag is an error); ``T | UnsetType = UNSET`` and ``Raw`` fields
    type-check, and UNSET is no ``int``."""
    monkeypatch.setenv("MYPYPATH", str(PACKAGE_ROOT))
    monkeypatch.chdir(tmp_path)
    source = """
    import dataclasses
    import polycodec
    from polycodec import UNSET, Raw, UnsetType

    @polycodec.options(tag=True, rename="camel", omit_defaults=True)
    @dataclasses.dataclass
    class Event:
        id: int
        note: str | UnsetType = UNSET
        payload: Raw | None = None

    reveal_type(Event)
    reveal_type(polycodec.decode_one(b"{}", Event).note)
    polycodec.options(tag=str.lower, tag_field="kind", array_like=False)
    bad_style = polycodec.options(rename="camell")
    bad_tag = polycodec.options(tag=1.5)
    bad_default: int = UNSET
    """
    stdout, status = _run_mypy(tmp_path, source)
    assert status == 1
    # mypy names builtins with or without their module depending on its version.
    revealed = [
        name.replace("builtins.", "") for name in re.findall(r'Revealed type is "([^"]+)"', stdout)
    ]
    assert revealed == [
        "def (id: int, note: str | polycodec._unset.UnsetType =, "
        "payload: polycodec._polycodec.Raw | None =) -> snippet.Event",
        "str | polycodec._unset.UnsetType",
    ], stdout
    errors = [line for line in stdout.splitlines() if ": error:" in line]
    assert len(errors) == 3, stdout
    assert any('"rename"' in line for line in errors), stdout
    assert any('"tag"' in line for line in errors), stdout
    assert any("UnsetType" in line for line in errors), stdout
