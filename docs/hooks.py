"""MkDocs hooks (mkdocs.yml names this file): the benchmark report, the scaling report and the
harness notes live in benches/, beside the code that writes them, and the example workers in
examples/, not in docs/. The pages link
them as they sit in the repository (``../benches/results/report.md`` from ``docs/``), which is
right when the Markdown is read in a checkout. MkDocs only knows files under ``docs/``, so these
hooks add those files (and the charts they show) to the site under ``benches/`` and point the
pages' links there. A link to any other file outside ``docs/`` stays broken, and
``mkdocs build --strict`` fails on it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

# Repository-relative globs of the files served from outside docs/.
MOUNTED = [
    "benches/README.md",
    "benches/results/report.md",
    "benches/results/*/report.md",
    "benches/results/scaling.md",
    "benches/results/queues.md",
    "benches/results/features.md",
    "benches/results/per-version/*/features.md",
    "benches/results/per-version/*/features.png",
    "benches/results/avro-resolution.md",
    "benches/results/integrations.md",
    "benches/results/*.png",
    "examples/*.py",
]
LINK = re.compile(r"\]\(((?:\.\./)+)([^)#\s]+)")
TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def _root(config: Any) -> Path:
    return Path(config.config_file_path).resolve().parent


def on_files(files: Files, config: Any) -> Files:
    root = _root(config)
    for pattern in MOUNTED:
        paths = sorted(root.glob(pattern))
        if not paths:
            raise FileNotFoundError(f"docs/hooks.py: nothing matches {pattern}")
        for path in paths:
            rel = path.relative_to(root).as_posix()
            files.append(File.generated(config, rel, abs_src_path=str(path)))
    return files


def _table_pipes(markdown: str) -> str:
    """GitHub needs a pipe in a table cell's code escaped (`A \\| B`) and shows it without the
    backslash; Python-Markdown already keeps pipes inside code spans in their cell, and would
    show the backslash. So drop it there."""

    def row(match: re.Match[str]) -> str:
        return CODE_SPAN.sub(lambda code: code[0].replace("\\|", "|"), match[0])

    return TABLE_ROW.sub(row, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    markdown = _table_pipes(markdown)
    # Only pages of docs/ link out this way; the mounted pages link among themselves.
    if page.file.generated_by:
        return markdown
    page_dir = posixpath.dirname(page.file.src_uri)

    def relink(match: re.Match[str]) -> str:
        # The target as a path from the repository root (docs/ is one level down).
        target = posixpath.normpath(posixpath.join("docs", page_dir, match[1], match[2]))
        if target.startswith("..") or files.get_file_from_path(target) is None:
            return match[0]
        return "](" + posixpath.relpath(target, page_dir or ".")

    return LINK.sub(relink, markdown)
