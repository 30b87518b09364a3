"""The modules of ``python/polycodec`` import each other without a circle (issue 42, item 1).

Every ``import`` statement of every module is read with ``ast``, those at module level and
those inside functions alike (an import moved into a function to dodge a circle is still a
circle), and the graph of imports within the package must have no cycle."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import Dict, List, Optional, Set

import pytest

PACKAGE = "polycodec"
ROOT = Path(__file__).resolve().parent.parent / "python" / PACKAGE


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> Dict[str, Path]:
    return {_module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def _is_package(name: str, modules: Dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(
    importer: str, modules: Dict[str, Path], level: int, module: Optional[str]
) -> Optional[str]:
    """The absolute name an import's ``from`` part names (``..x`` from ``polycodec.a.b``)."""
    if level == 0:
        return module
    base = importer.split(".")
    if not _is_package(importer, modules):
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _targets(importer: str, name: str, modules: Dict[str, Path]) -> Set[str]:
    """The package's modules that importing ``name`` from ``importer`` runs: the module and
    the packages above it that are not already above ``importer`` (those run first). The root
    package is the entry point, never a target: ``from . import _x`` imports the submodule."""
    found: Set[str] = set()
    parts = name.split(".")
    above_importer = {".".join(importer.split(".")[:i]) for i in range(1, importer.count(".") + 2)}
    for i in range(2, len(parts) + 1):
        candidate = ".".join(parts[:i])
        if candidate in modules and candidate not in above_importer:
            found.add(candidate)
    return found


def import_graph(root: Path = ROOT) -> Dict[str, Set[str]]:
    """Module name -> the package's modules it imports, anywhere in its body."""
    modules = _modules(root)
    graph: Dict[str, Set[str]] = {name: set() for name in modules}
    for importer, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names: List[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(importer, modules, node.level, node.module)
                if base is None:
                    continue
                names = [base] + [f"{base}.{alias.name}" for alias in node.names]
            for name in names:
                if name == PACKAGE or name.startswith(PACKAGE + "."):
                    graph[importer] |= _targets(importer, name, modules)
        graph[importer].discard(importer)
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of ``graph`` as the list of its modules (first repeated last), or None."""
    done: Set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: List[str] = [start]
        on_path = {start}
        stack = [iter(sorted(graph[start]))]
        while stack:
            following = next(stack[-1], None)
            if following is None:
                stack.pop()
                done.add(path[-1])
                on_path.discard(path.pop())
            elif following in on_path:
                return path[path.index(following) :] + [following]
            elif following not in done:
                path.append(following)
                on_path.add(following)
                stack.append(iter(sorted(graph[following])))
    return None


def test_package_imports_have_no_cycle() -> None:
    graph = import_graph()
    assert "polycodec._api" in graph and graph["polycodec._api"], "the graph was not read"
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def _write(root: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / PACKAGE


def test_a_circle_through_a_function_level_import_is_found(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "__init__.py": "from ._a import f\n",
            "_a.py": "from ._b import g\n\ndef f():\n    return g()\n",
            "_b.py": "def g():\n    from . import _a\n    return _a\n",
        },
    )
    assert find_cycle(import_graph(package)) == ["polycodec._a", "polycodec._b", "polycodec._a"]


def test_sibling_imports_inside_a_package_are_no_circle(tmp_path: Path) -> None:
    """A package's ``__init__`` importing its submodules, which import each other and the
    package's ancestors' siblings, runs each module once: no circle."""
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "_leaf.py": "X = 1\n",
            "_sub/__init__.py": "from .one import A\n",
            "_sub/one.py": "from .two import B\nfrom .._leaf import X\nA = B + X\n",
            "_sub/two.py": "import polycodec._leaf\nB = 2\n",
        },
    )
    graph = import_graph(package)
    assert graph["polycodec._sub.one"] == {"polycodec._sub.two", "polycodec._leaf"}
    assert graph["polycodec._sub.two"] == {"polycodec._leaf"}
    assert find_cycle(graph) is None


@pytest.mark.parametrize("spelling", ["from .._sub import one", "import polycodec._sub.one"])
def test_an_import_of_a_submodule_also_runs_its_package(tmp_path: Path, spelling: str) -> None:
    package = _write(
        tmp_path,
        {
            "__init__.py": "",
            "_sub/__init__.py": "from .. import _user\n",
            "_sub/one.py": "",
            "_user/__init__.py": f"{spelling}\n",
        },
    )
    graph = import_graph(package)
    assert graph["polycodec._user"] == {"polycodec._sub", "polycodec._sub.one"}
    assert find_cycle(graph) == ["polycodec._sub", "polycodec._user", "polycodec._sub"]


def test_pickles_naming_the_renamed_modules_still_load() -> None:
    """``_ext`` became ``_msgpack_ext`` and ``_extension`` became ``_custom_types`` (issue 42):
    a pickle made before names the old module, and still loads."""
    import polycodec

    values = [polycodec.Ext(5, b"a"), polycodec.Extension(str, encode=str, decode=str)]
    for value, old in zip(values, ["_ext", "_extension"]):
        new = type(value).__module__.encode()
        made_before = pickle.dumps(value, protocol=0).replace(new, b"polycodec." + old.encode())
        assert b"polycodec." + old.encode() + b"\n" in made_before
        assert pickle.loads(made_before) == value
