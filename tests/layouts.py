"""The CPython layouts this run reads directly (``_polycodec._layouts()``: each name maps to
``"in use"`` or why it is not), and a rerun of a test file with layouts turned off.

``POLYCODEC_PORTABLE`` is read once, when the extension module loads, so a test file of a fast
path runs its portable path in a new interpreter: :func:`rerun_portable` runs the whole file
again there with the layouts it names turned off, and fails with that run's output. Inside the
rerun (or a whole suite run with ``POLYCODEC_PORTABLE`` set) it is skipped.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from polycodec import _polycodec

#: Each layout's name and ``"in use"`` or the reason it is not.
LAYOUTS: dict[str, str] = _polycodec._layouts()

#: Whether this run turns layouts off (a rerun, or a suite run with ``POLYCODEC_PORTABLE``).
PORTABLE_RUN = bool(os.environ.get("POLYCODEC_PORTABLE"))


def in_use(name: str) -> bool:
    """Whether the layout ``name`` is read directly in this run."""
    return LAYOUTS[name] == "in use"


def rerun_portable(test_file: str, layouts: str) -> None:
    """Runs ``test_file`` in a new interpreter with ``POLYCODEC_PORTABLE=layouts``; fails with
    its output unless every test there passes (or is skipped)."""
    if PORTABLE_RUN:
        pytest.skip("this run already turns layouts off (POLYCODEC_PORTABLE)")
    env = {**os.environ, "POLYCODEC_PORTABLE": layouts}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
    assert done.returncode == 0 and " passed" in summary[0], (
        f"{os.path.basename(test_file)} with POLYCODEC_PORTABLE={layouts}:\n"
        + done.stdout[-6000:]
        + done.stderr[-2000:]
    )
