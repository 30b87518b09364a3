"""Measurement primitives: interleaved, calibrated, GC-controlled timing and tracemalloc peaks.

Why it is done this way:

* **Interleaved rounds.** All candidates of one cell (same format, operation, batch and model) are
  sampled round by round in one process (A B C, B C A, C A B, ...), so slow drifts of the machine
  (frequency scaling, noisy neighbours, thermal state) hit every candidate alike instead of
  whichever happened to run last.
* **Calibrated calls per sample.** Each sample repeats the call ``n`` times, with ``n`` chosen so a
  sample lasts about ``target_sample_s`` (5-20 ms by default): long enough to swamp timer
  resolution and loop overhead, short enough to collect many samples.
* **GC control.** ``gc.collect()`` runs before every sample and the collector is disabled while a
  sample runs, so one candidate never pays for garbage made by another, and collection pauses do
  not land at random inside samples. (The runner also ``gc.freeze()``-s the setup heap so those
  collections are cheap.)
* **Robust statistics.** Every sample gives a per-call time; the report uses the median (robust to
  outliers) and shows mean, standard deviation, min and IQR so noise is visible.
* **Memory** is measured separately (tracemalloc slows code down a lot) as the traced peak of one
  call above the pre-call baseline, result included.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Callable, Optional

_clock = time.perf_counter


@dataclass(frozen=True)
class TimingConfig:
    """How hard to measure. ``quick()`` is for CI smoke runs, ``full()`` for real numbers."""

    target_sample_s: float
    max_rounds: int
    min_samples: int
    budget_s: float  # per candidate per cell, after which it stops once it has min_samples
    max_calls_per_sample: int = 1_000_000

    @classmethod
    def full(cls) -> "TimingConfig":
        return cls(target_sample_s=0.010, max_rounds=60, min_samples=10, budget_s=1.0)

    @classmethod
    def quick(cls) -> "TimingConfig":
        return cls(target_sample_s=0.002, max_rounds=5, min_samples=3, budget_s=0.03)


@dataclass
class Candidate:
    """One thing to time: ``fn(arg)`` under ``name``."""

    name: str
    fn: Callable[[Any], Any]
    arg: Any
    calls_per_sample: int = 1
    samples: list[float] = field(default_factory=list)  # seconds per call, one per sample
    spent_s: float = 0.0


@dataclass(frozen=True)
class Stats:
    """Summary of one candidate's per-call samples (seconds)."""

    median: float
    mean: float
    stdev: float
    minimum: float
    maximum: float
    q1: float
    q3: float
    samples: int
    calls_per_sample: int

    @property
    def ops_per_s(self) -> float:
        return 1.0 / self.median if self.median > 0 else math.inf

    @property
    def rel_stdev(self) -> float:
        return self.stdev / self.mean if self.mean > 0 else 0.0

    @classmethod
    def of(cls, samples: list[float], calls_per_sample: int) -> "Stats":
        if len(samples) >= 2:
            q = statistics.quantiles(samples, n=4, method="inclusive")
            q1, q3 = q[0], q[2]
            stdev = statistics.stdev(samples)
        else:
            q1 = q3 = samples[0]
            stdev = 0.0
        return cls(
            median=statistics.median(samples),
            mean=statistics.fmean(samples),
            stdev=stdev,
            minimum=min(samples),
            maximum=max(samples),
            q1=q1,
            q3=q3,
            samples=len(samples),
            calls_per_sample=calls_per_sample,
        )


def _run(fn: Callable[[Any], Any], arg: Any, n: int) -> float:
    """Time ``n`` calls of ``fn(arg)`` with the collector off; returns total seconds."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = _clock()
        for _ in repeat(None, n):
            fn(arg)
        return _clock() - t0
    finally:
        if enabled:
            gc.enable()


def calibrate(cand: Candidate, cfg: TimingConfig) -> None:
    """Pick ``calls_per_sample`` so one sample takes about ``cfg.target_sample_s``."""
    fn, arg = cand.fn, cand.arg
    n = 1
    elapsed = _run(fn, arg, n)  # also a warm-up call
    # Grow geometrically until a sample is long enough to extrapolate from reliably.
    while elapsed < cfg.target_sample_s / 5 and n < cfg.max_calls_per_sample:
        factor = 10 if elapsed < cfg.target_sample_s / 100 else 2
        n = min(n * factor, cfg.max_calls_per_sample)
        elapsed = _run(fn, arg, n)
    # A single stalled run (another process, a cold cache after gc.collect) would leave a fast
    # candidate with a handful of calls per sample, each dominated by that cold start: take the
    # best of three runs at the final size. A single call ten times longer than a sample is one
    # call per sample whatever happens, and is not worth two more calls.
    if not (n == 1 and elapsed >= 10 * cfg.target_sample_s):
        for _ in range(2):
            elapsed = min(elapsed, _run(fn, arg, n))
    per_call = elapsed / n
    cand.calls_per_sample = max(
        1, min(cfg.max_calls_per_sample, round(cfg.target_sample_s / per_call))
    )


def measure_cell(
    candidates: list[Candidate],
    cfg: TimingConfig,
    on_round: Optional[Callable[[int, int], None]] = None,
) -> dict[str, Stats]:
    """Calibrate every candidate, then sample them interleaved, round-robin with rotation.

    A candidate stops once it has ``min_samples`` and has used its time budget (so one very slow
    library cannot stretch a run to hours); the others keep going up to ``max_rounds``.
    """
    for cand in candidates:
        calibrate(cand, cfg)
    k = len(candidates)
    for rnd in range(cfg.max_rounds):
        active = [
            candidates[(rnd + i) % k] for i in range(k) if not _done(candidates[(rnd + i) % k], cfg)
        ]
        if not active:
            break
        for cand in active:
            elapsed = _run(cand.fn, cand.arg, cand.calls_per_sample)
            cand.samples.append(elapsed / cand.calls_per_sample)
            cand.spent_s += elapsed
        if on_round is not None:
            on_round(rnd + 1, cfg.max_rounds)
    return {c.name: Stats.of(c.samples, c.calls_per_sample) for c in candidates}


def _done(cand: Candidate, cfg: TimingConfig) -> bool:
    return len(cand.samples) >= cfg.min_samples and cand.spent_s >= cfg.budget_s


def peak_memory(fn: Callable[[Any], Any], arg: Any) -> int:
    """Peak bytes traced by tracemalloc during one ``fn(arg)`` call, above the pre-call level.

    Only allocations made through Python's allocators are visible: a Rust/C extension's private
    allocator (e.g. mimalloc, or malloc called directly) is not traced, but the Python objects it
    returns are. The result is held until after the reading, so its size is part of the peak.
    """
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = fn(arg)
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
        if enabled:
            gc.enable()
    return max(0, peak - base)
