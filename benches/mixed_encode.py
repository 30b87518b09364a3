"""Per-codec encode times with many codec objects of every format interleaved in one process.

``python -m benches.mixed_encode [--models M,...] [--rounds R] [--calls N] [--many K]``
builds, as the full benchmark does, one polycodec ``Codec`` per (model, format, idiom): the four
formats (JSON, MessagePack, Avro, pickle) on the plain dataclasses and on their ``slots=True``
twins (``idioms.py``), for each model (default: all four). It then runs ``R`` rounds; each round
times ``N`` back-to-back ``encode_one`` calls of every codec in turn (and ``encode_many`` on a
list of ``K`` instances, for the models that have batches), so every codec runs between the
others' calls, in one process, as in the benchmark. It prints, per codec and operation, the
median and the minimum over the rounds of the time per call, the minor page faults
(``ru_minflt``) per call, and the share of rounds in which the process was preempted
(``ru_nivcsw``): on a shared machine a preempted round is slow for reasons outside the codec,
so compare minima, or medians of rounds without preemption.

Written for issue 10's call entry: a codec whose per-call time swings with what ran before it
in the same process (a shared per-thread buffer or table, deferred reference drops piling up
between calls) shows as a median well above its minimum, or as one codec of a format much
slower than its twin. Compare two builds by running this script on each, alternately.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import time
from typing import Any, Callable

import polycodec

from .idioms import SLOTS, converter
from .models import MODELS, TYPED_MODELS, generate

FORMATS = ("json", "msgpack", "avro", "pickle")


def _usage() -> tuple[int, int]:
    """Minor page faults and involuntary context switches of the process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_minflt, usage.ru_nivcsw


def _cells(models: list[str], many: int) -> list[tuple[str, Callable[[], Any]]]:
    """(label, one call) for every codec and operation, the codecs all built up front."""
    cells: list[tuple[str, Callable[[], Any]]] = []
    for name in models:
        spec = MODELS[name]
        plain = generate(name, max(many, 1))
        for idiom in ("plain", "slots"):
            values = plain if idiom == "plain" else converter(SLOTS)(plain)
            root: Any = spec.root if idiom == "plain" else SLOTS[spec.root]
            for fmt in FORMATS:
                codec = polycodec.Codec(root, format=fmt)
                one = values[0]
                label = f"{name:<10} {idiom:<5} {fmt:<7}"
                cells.append((f"{label} encode_one", lambda c=codec, v=one: c.encode_one(v)))
                if many and not spec.one_only:
                    batch = values[:many]
                    cells.append(
                        (f"{label} encode_many", lambda c=codec, v=batch: c.encode_many(v))
                    )
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default=",".join(TYPED_MODELS), help="comma-separated model names"
    )
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds over all codecs")
    parser.add_argument("--calls", type=int, default=200, help="calls per codec per round")
    parser.add_argument("--many", type=int, default=10, help="batch size for encode_many (0: no)")
    args = parser.parse_args()
    cells = _cells(args.models.split(","), args.many)
    times: dict[str, list[float]] = {label: [] for label, _ in cells}
    faults: dict[str, int] = {label: 0 for label, _ in cells}
    preempted: dict[str, int] = {label: 0 for label, _ in cells}
    gc.disable()
    for label, call in cells:  # warm-up: every codec once, sizes and tables settled
        call()
    for _ in range(args.rounds):
        for label, call in cells:
            before_faults, before_switches = _usage()
            start = time.perf_counter_ns()
            for _ in range(args.calls):
                call()
            elapsed = time.perf_counter_ns() - start
            after_faults, after_switches = _usage()
            faults[label] += after_faults - before_faults
            preempted[label] += after_switches > before_switches
            times[label].append(elapsed / args.calls / 1000)
    gc.enable()
    total = args.rounds * args.calls
    print(
        f"{'codec':<42} {'median us':>10} {'min us':>9} {'max us':>9} {'minflt/call':>12}"
        f" {'preempted':>10}"
    )
    for label, _ in cells:
        samples = times[label]
        print(
            f"{label:<42} {statistics.median(samples):>10.3f} {min(samples):>9.3f}"
            f" {max(samples):>9.3f} {faults[label] / total:>12.4f}"
            f" {preempted[label] / args.rounds:>10.0%}"
        )


if __name__ == "__main__":
    main()
