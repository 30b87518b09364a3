"""No import circle among the extension's Rust modules (src/).

Granularity: sibling modules at every level. Each reference a module file makes to another
module (``use crate::...``, ``use super::...``, and ``crate::a::b`` paths in code) counts as an
edge between the two siblings that contain the two modules under their deepest common parent:
``crate::codecs::json::decode`` using ``crate::py::temporal`` is an edge ``codecs -> py`` at the
crate's top level, ``crate::py::fields`` using ``crate::py::cpython::objects`` an edge
``fields -> cpython`` under ``py``. A module and its own descendants are not siblings (a parent
declaring its children and children using their parent's items is Rust's ordinary shape), test
modules (``#[cfg(test)] mod ...``, ``src/oracles.rs``) are left out, and every sibling graph
must have no cycle.

The layers this leaves, lowest first: ``depth`` and ``py`` (the CPython layer, which names
nothing above it: the crate's errors take its ``Fault`` in, ``codecs`` implements its output
sinks' trait, the API's ``Codec`` its ``ShortCalls``), ``errors``, ``plan``, ``raw``,
``values``, ``shape``, ``codecs``, ``python_api``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

USE = re.compile(r"\buse\s+([^;]+);", re.S)
PATH = re.compile(r"\b(?:crate|super|self)(?:::\w+)+")
TESTS = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def _module_path(file: Path, root: Path) -> tuple[str, ...]:
    parts = list(file.relative_to(root).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "{") - (char == "}")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current] if current else parts


def _expand(tree: str) -> list[str]:
    """The paths of one `use` tree: `a::{b, c::{d}}` is `a::b` and `a::c::d`."""
    tree = re.sub(r"\s+", "", tree)
    group = re.match(r"^(.*?)::\{(.*)\}$", tree)
    if not group:
        return [tree]
    return [f"{group[1]}::{path}" for part in _split_top(group[2]) for path in _expand(part)]


def _references(file: Path, root: Path) -> set[tuple[str, ...]]:
    """The module paths (with item names still on the end) a module file refers to."""
    text = TESTS.split(file.read_text())[0]
    text = "\n".join(line.split("//")[0] for line in text.splitlines())
    me = _module_path(file, root)
    paths = [path for tree in USE.findall(text) for path in _expand(tree)]
    paths += PATH.findall(text)
    found = set()
    for path in paths:
        segments = path.split(" as ")[0].split("::")
        if segments[0] == "crate":
            target = segments[1:]
        elif segments[0] in ("super", "self"):
            base = list(me)
            while segments and segments[0] in ("super", "self"):
                if segments[0] == "super":
                    base.pop()
                segments = segments[1:]
            target = base + segments
        else:
            continue
        found.add(tuple(part for part in target if part and part not in ("*", "self")))
    return found


def sibling_edges(root: Path) -> dict[tuple[str, ...], dict[str, set[str]]]:
    """Per parent module, the edges among its children."""
    files = [file for file in root.rglob("*.rs") if file.name != "oracles.rs"]
    modules = {_module_path(file, root) for file in files}
    graphs: dict[tuple[str, ...], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for file in files:
        me = _module_path(file, root)
        for target in _references(file, root):
            while target and target not in modules:
                target = target[:-1]
            common = 0
            while common < min(len(me), len(target)) and me[common] == target[common]:
                common += 1
            if common < len(me) and common < len(target):
                graphs[me[:common]][me[common]].add(target[common])
    return graphs


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def circles(root: Path) -> list[str]:
    """Every circle among sibling modules, described."""
    found = []
    for parent, graph in sibling_edges(root).items():
        name = "::".join(parent)
        found += [f"under {name or 'crate'}: {' <-> '.join(c)}" for c in cycles(graph)]
    return found


def test_no_circle_among_rust_modules() -> None:
    assert circles(SRC) == []


def test_the_check_sees_a_circle(tmp_path: Path) -> None:
    """Two sibling modules that use each other, and a grouped `use` through `super`."""
    (tmp_path / "a").mkdir()
    (tmp_path / "lib.rs").write_text("mod a;\nmod b;\n")
    (tmp_path / "a" / "mod.rs").write_text("pub mod inner;\n")
    (tmp_path / "a" / "inner.rs").write_text("use crate::{b::Thing, a};\n")
    (tmp_path / "b.rs").write_text("pub struct Thing;\nfn f() { super::a::inner::g(); }\n")
    assert circles(tmp_path) == ["under crate: a <-> b"]
    (tmp_path / "b.rs").write_text("pub struct Thing;\n#[cfg(test)]\nmod t { use crate::a; }\n")
    assert circles(tmp_path) == []


def test_the_check_sees_a_circle_inside_a_module(tmp_path: Path) -> None:
    """Three siblings under one parent in a circle (a grouped `use` through `super`, `crate::`
    paths in code), beside an edge from the parent's child to the parent's sibling, which
    closes no circle; breaking one edge of the three breaks it."""
    (tmp_path / "outer").mkdir()
    (tmp_path / "lib.rs").write_text("mod outer;\nmod leaf;\n")
    (tmp_path / "leaf.rs").write_text("pub fn f() {}\n")
    (tmp_path / "outer" / "mod.rs").write_text("mod a;\nmod b;\nmod c;\n")
    (tmp_path / "outer" / "a.rs").write_text("use super::{b::Thing, c};\nuse crate::leaf;\n")
    (tmp_path / "outer" / "b.rs").write_text(
        "pub struct Thing;\nfn g() { crate::outer::c::h(); }\n"
    )
    (tmp_path / "outer" / "c.rs").write_text("pub fn h() { crate::outer::a::i(); }\n")
    assert circles(tmp_path) == ["under outer: a <-> b <-> c"]
    (tmp_path / "outer" / "c.rs").write_text("pub fn h() { crate::leaf::f(); }\n")
    assert circles(tmp_path) == []
