"""Describe the machine and software a run happened on (the report's Environment section).

Benchmark numbers are meaningless without this: users comparing their own run with a published
one need the interpreter, CPU, library versions and measurement policy side by side.
"""

from __future__ import annotations

import gc
import os
import platform
import struct
import subprocess
import sys
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


def collect(timing: Any, quick: bool) -> dict[str, Any]:
    """Everything the Environment section shows, as JSON-friendly strings."""
    clock = time.get_clock_info("perf_counter")
    return {
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
    }
