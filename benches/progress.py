"""A tiny terminal progress bar on stderr (no tqdm dependency).

On a terminal it redraws one line in place; when stderr is not a TTY (CI logs) it prints a plain
line at most every few seconds so logs stay short but show the run is alive.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


def _fmt_duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    m, s = divmod(seconds, 60)
    return f"{m}:{s:02d}"


class ProgressBar:
    """Progress over ``total`` units; fractional updates allowed within a unit."""

    def __init__(self, total: float, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = max(total, 1e-9)
        self.done = 0.0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()
        self._last_plain = 0.0
        self._label = ""

    def update(self, done: float, label: str | None = None) -> None:
        """Set absolute progress (``done`` of ``total``) and optionally the current label."""
        self.done = min(done, self.total)
        if label is not None:
            self._label = label
        self._draw()

    def _draw(self, final: bool = False) -> None:
        if not self.enabled:
            return
        frac = self.done / self.total
        elapsed = time.perf_counter() - self.start
        eta = elapsed * (1 - frac) / frac if frac > 0.02 else float("nan")
        eta_s = _fmt_duration(eta) if eta == eta else "?:??"
        stats = f"{frac * 100:5.1f}% {_fmt_duration(elapsed)}<{eta_s}"
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns
            bar_w = max(10, min(40, width - len(stats) - 30))
            filled = int(bar_w * frac)
            bar = "#" * filled + "-" * (bar_w - filled)
            line = f"[{bar}] {stats} {self._label}"
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
            if final:
                self.stream.write("\n")
            self.stream.flush()
        else:
            now = time.perf_counter()
            if final or now - self._last_plain >= 5.0:
                self._last_plain = now
                self.stream.write(f"[progress] {stats} {self._label}\n")
                self.stream.flush()

    def close(self) -> None:
        """Draw 100% and end the line."""
        self.done = self.total
        self._label = "done"
        self._draw(final=True)
