"""Describe the machine and software a run happened on (the report's Environment section).

Benchmark numbers are meaningless without this: users comparing their own run with a published
one need the interpreter, CPU, library versions and measurement policy side by side.
"""

from __future__ import annotations

import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import struct
import subprocess
import sys
import sysconfig
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import __version__

REPO_ROOT = Path(__file__).resolve().parent.parent


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    """The CPU model name (``/proc/cpuinfo`` on Linux, ``platform`` elsewhere)."""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    if sys.platform == "darwin":
        try:
            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=5,
            )
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_count() -> str:
    """Logical CPUs, and how many this process may use when that differs."""
    total = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = total
    return f"{total}" if usable == total else f"{total} ({usable} usable by this process)"


def git_revision() -> str:
    """``HEAD`` of the repo (read-only git calls), ``-dirty`` when tracked files changed."""

    def git(*args: str) -> str:
        out = subprocess.run(
            ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        )
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip())
        return out.stdout.strip()

    try:
        rev = git("rev-parse", "HEAD")
    except (OSError, subprocess.SubprocessError, RuntimeError):
        return "unknown (no git, or no commit yet)"
    try:
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError, RuntimeError):
        dirty = False
    return rev + ("-dirty" if dirty else "")


def _governor() -> str:
    gov = _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").strip()
    return gov or "n/a"


def _memory_total() -> str:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            kib = int(line.split()[1])
            return f"{kib / 1024 / 1024:.1f} GiB"
    return "n/a"


# The libraries whose installed size the report compares, by distribution name.
SIZED_DISTRIBUTIONS = [
    "polycodec",
    "msgspec",
    "orjson",
    "ormsgpack",
    "msgpack",
    "serpyco-rs",
    "pydantic",
    "mashumaro",
    "fastavro",
    "avro",
    # The builtins format's peers (the seed comparison of marshmallow, pydantic and serpy).
    "marshmallow",
    "marshmallow-recipe",
    "serpy",
]


def _marker_holds(marker: str) -> bool:
    """Whether a requirement's environment marker holds here (true when it cannot be read)."""
    try:
        from packaging.markers import Marker
    except ImportError:  # pragma: no cover - packaging comes with pip and pytest
        return True
    try:
        return bool(Marker(marker).evaluate())
    except Exception:  # an unknown marker variable: count the dependency
        return True


def _dependencies(dist: importlib.metadata.Distribution) -> list[str]:
    """The distributions ``dist`` needs here: its requirements without extras, markers met."""
    names = []
    for requirement in dist.requires or []:
        spec, _, marker = requirement.partition(";")
        if "extra" in marker or (marker.strip() and not _marker_holds(marker.strip())):
            continue
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec.strip())
        if match:
            names.append(match.group(0))
    return names


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _files_size(dist: importlib.metadata.Distribution) -> tuple[int, str]:
    """Bytes on disk of the files a distribution installed, and how they were counted.

    An editable install (``pip install -e``) lists only a ``.pth`` file, so its package folder
    is measured instead: that is what a development checkout has, built with whatever profile
    built it, not a released wheel.
    """
    files = [Path(str(dist.locate_file(f))) for f in dist.files or []]
    how = "installed files"
    direct_url = dist.read_text("direct_url.json")
    if direct_url and json.loads(direct_url).get("dir_info", {}).get("editable"):
        top = (dist.read_text("top_level.txt") or dist.metadata["Name"]).split()
        for name in top:
            spec = importlib.util.find_spec(name.replace("-", "_"))
            for folder in (spec.submodule_search_locations or []) if spec else []:
                files += [path for path in Path(folder).rglob("*") if path.is_file()]
        how = "editable install: package folder"
    total = 0
    for path in set(files):
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total, how


def installed_sizes() -> list[dict[str, Any]]:
    """For each library of ``SIZED_DISTRIBUTIONS`` that is installed: the size of its own files
    and with everything it needs installed (its dependencies, recursively, counted once)."""
    rows = []
    for name in SIZED_DISTRIBUTIONS:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        own, how = _files_size(dist)
        seen = {_canonical(name)}
        pending = _dependencies(dist)
        needed = []
        total = own
        while pending:
            dep_name = pending.pop()
            if _canonical(dep_name) in seen:
                continue
            seen.add(_canonical(dep_name))
            try:
                dep = importlib.metadata.distribution(dep_name)
            except importlib.metadata.PackageNotFoundError:
                continue
            needed.append(f"{dep.metadata['Name']} {dep.version}")
            total += _files_size(dep)[0]
            pending += _dependencies(dep)
        rows.append(
            {
                "distribution": dist.metadata["Name"],
                "version": dist.version,
                "own_bytes": own,
                "total_bytes": total,
                "dependencies": sorted(needed),
                "measured": how,
            }
        )
    return rows


def interpreter() -> str:
    """The interpreter as one line: implementation, version and build, e.g. ``CPython 3.14.10
    (main, Oct 26 2026 15:12:11, GCC 16.2.0)``, with ``free-threaded`` or ``debug`` when the build
    is one (timings from different builds of one version are not comparable)."""
    build_name, build_date = platform.python_build()
    # python_build() pads one-digit days ("May  9 2026").
    details = [build_name, " ".join(build_date.split()), platform.python_compiler()]
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        details.append("free-threaded")
    if hasattr(sys, "gettotalrefcount"):
        details.append("debug")
    return (
        f"{platform.python_implementation()} {platform.python_version()} "
        f"({', '.join(d for d in details if d)})"
    )


def collect(timing: Any, quick: bool) -> dict[str, Any]:
    """Everything the Environment section shows, as JSON-friendly strings."""
    clock = time.get_clock_info("perf_counter")
    return {
        "interpreter": interpreter(),
        "python": f"{platform.python_version()} ({struct.calcsize('P') * 8}-bit) "
        f"({platform.python_implementation().lower()})",
        "python_build": " ".join(sys.version.split()),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": cpu_count(),
        "cpu_governor": _governor(),
        "memory": _memory_total(),
        "git_revision": git_revision(),
        "benchmark_version": __version__,
        "gc_policy": (
            "enabled between samples; gc.collect() before and gc.disable() during every sample; "
            f"setup heap gc.freeze()-d; thresholds {gc.get_threshold()}"
        ),
        "run_utc": datetime.now(timezone.utc).isoformat(),
        "unit": "second (per call; tables scale to ns/µs/ms)",
        "timer": f"time.perf_counter (resolution {clock.resolution:g} s, {clock.implementation})",
        "mode": (
            "quick (CI smoke run: few short samples, numbers are indicative only)"
            if quick
            else "full"
        ),
        "timing": (
            f"target {timing.target_sample_s * 1e3:g} ms per sample, up to {timing.max_rounds} "
            f"interleaved rounds, at least {timing.min_samples} samples, budget "
            f"{timing.budget_s:g} s per candidate per cell"
        ),
        "command": " ".join(["python -m benches", *sys.argv[1:]]),
        "installed_sizes": installed_sizes(),
    }
