"""``encode_into`` against ``encode_one``, and against msgspec's ``Encoder.encode_into``.

``python -m benches.encode_into [--models M,...] [--rounds R] [--calls N] [--many K]``

For each model and for JSON and MessagePack it times, interleaved round after round in one
process: polycodec's ``encode_one`` (a new ``bytes`` per call) and ``encode_into`` (one
``bytearray`` reused from call to call, the low-latency producer's idiom), and msgspec's
``Encoder.encode`` and ``Encoder.encode_into`` on the same data as ``msgspec.Struct`` objects;
for the models with batches, the same for ``encode_many`` / ``encode_many_into`` of ``K``
objects (msgspec: ``encode`` / ``encode_into`` of the list). It prints, per cell, the minimum
and median time per call over the rounds, ``into ÷ one`` for each library (below 1.00 the
reused buffer is faster) and polycodec's ``encode_into`` time ÷ msgspec's (below 1.00
polycodec is faster).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from typing import Any, Callable

import msgspec

import polycodec

from .adapters.msgspec_structs import STRUCTS
from .idioms import converter
from .models import MODELS, TYPED_MODELS, generate

FORMATS = ("json", "msgpack")


def _cells(models: list[str], many: int) -> list[tuple[tuple[str, str, str], Callable[[], Any]]]:
    """((model and operation, format, library and idiom), one call) for every cell."""
    cells: list[tuple[tuple[str, str, str], Callable[[], Any]]] = []
    to_struct = converter(STRUCTS)
    for name in models:
        spec = MODELS[name]
        plain = generate(name, max(many, 1))
        structs = to_struct(plain)
        for fmt in FORMATS:
            codec = polycodec.Codec(spec.root, format=fmt)
            items = polycodec.Codec(spec.root, format=fmt)
            encoder: Any = msgspec.json.Encoder() if fmt == "json" else msgspec.msgpack.Encoder()
            ours, theirs = bytearray(), bytearray()
            one, struct = plain[0], structs[0]
            assert codec.encode_one(one) == encoder.encode(struct), (name, fmt)
            row = f"{name} one"
            cells += [
                ((row, fmt, "polycodec one"), lambda c=codec, v=one: c.encode_one(v)),
                ((row, fmt, "polycodec into"), lambda c=codec, v=one, b=ours: c.encode_into(v, b)),
                ((row, fmt, "msgspec one"), lambda e=encoder, v=struct: e.encode(v)),
                (
                    (row, fmt, "msgspec into"),
                    lambda e=encoder, v=struct, b=theirs: e.encode_into(v, b),
                ),
            ]
            if many and not spec.one_only:
                batch, struct_batch = plain[:many], structs[:many]
                row = f"{name} many"
                cells += [
                    ((row, fmt, "polycodec one"), lambda c=items, v=batch: c.encode_many(v)),
                    (
                        (row, fmt, "polycodec into"),
                        lambda c=items, v=batch, b=ours: c.encode_many_into(v, b),
                    ),
                    ((row, fmt, "msgspec one"), lambda e=encoder, v=struct_batch: e.encode(v)),
                    (
                        (row, fmt, "msgspec into"),
                        lambda e=encoder, v=struct_batch, b=theirs: e.encode_into(v, b),
                    ),
                ]
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default=",".join(TYPED_MODELS), help="comma-separated model names"
    )
    parser.add_argument("--rounds", type=int, default=40, help="timed rounds over all cells")
    parser.add_argument("--calls", type=int, default=200, help="calls per cell per round")
    parser.add_argument("--many", type=int, default=100, help="batch size (0: no batches)")
    args = parser.parse_args()
    cells = _cells(args.models.split(","), args.many)
    times: dict[tuple[str, str, str], list[float]] = {key: [] for key, _ in cells}
    gc.disable()
    for _, call in cells:  # warm-up: buffers and size hints settled
        call()
    for _ in range(args.rounds):
        for key, call in cells:
            start = time.perf_counter_ns()
            for _ in range(args.calls):
                call()
            times[key].append((time.perf_counter_ns() - start) / args.calls / 1000)
    gc.enable()
    best = {key: min(samples) for key, samples in times.items()}
    median = {key: statistics.median(samples) for key, samples in times.items()}
    print(
        f"{'cell':<16} {'format':<8} {'one us':>8} {'into us':>8} {'into/one':>9}"
        f" {'msgspec one':>12} {'msgspec into':>13} {'into/one':>9} {'ours/msgspec':>13}"
    )
    print("(minimum over the rounds; the median follows in brackets)")
    rows = dict.fromkeys((row, fmt) for (row, fmt, _) in times)
    for row, fmt in rows:
        ours_one, ours_into = best[(row, fmt, "polycodec one")], best[(row, fmt, "polycodec into")]
        theirs_one, theirs_into = best[(row, fmt, "msgspec one")], best[(row, fmt, "msgspec into")]
        print(
            f"{row:<16} {fmt:<8} {ours_one:>8.3f} {ours_into:>8.3f} {ours_into / ours_one:>9.2f}"
            f" {theirs_one:>12.3f} {theirs_into:>13.3f} {theirs_into / theirs_one:>9.2f}"
            f" {ours_into / theirs_into:>13.2f}"
        )
        print(
            f"{'':<16} {'':<8} [{median[(row, fmt, 'polycodec one')]:>6.3f}]"
            f" [{median[(row, fmt, 'polycodec into')]:>6.3f}] {'':>9}"
            f" [{median[(row, fmt, 'msgspec one')]:>10.3f}]"
            f" [{median[(row, fmt, 'msgspec into')]:>11.3f}]"
        )


if __name__ == "__main__":
    main()
