"""``python -m benches``: the one-command benchmark.

Examples::

    python -m benches                       # everything, full measurement (a few minutes)
    python -m benches --quick               # CI smoke run, under a minute (into a temp dir)
    python -m benches --scaling             # objects/s for 1 ... 100k objects per call
    python -m benches --formats json --models record,tree --batch 1 --batch 1000
    python -m benches --adapters polycodec,msgspec,orjson --no-memory --no-plots
    python -m benches --list                # which adapters are available, and what they do
    python -m benches --queues [--quick]    # streams and queues (Kafka mock cluster, Redis)
    python -m benches --features [--quick]  # one small model per feature (features.md)
    python -m benches --features uuid,raw --formats json,avro
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Callable, Optional, Sequence

from .adapters import FORMATS, Registry, load_registry
from .models import MODELS
from .runner import OPS, RunConfig, op_applies, run
from .timing import TimingConfig


def _csv(choices: Sequence[str], what: str) -> Callable[[str], list[str]]:
    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in choices]
        if bad:
            raise argparse.ArgumentTypeError(
                f"unknown {what}: {', '.join(bad)} (choose from {', '.join(choices)})"
            )
        return items

    return parse


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benches",
        description="Benchmark polycodec against its peers on JSON, MessagePack, Avro and pickle.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="*_one operations run at batch 1, *_many operations at every batch size > 1.",
    )
    p.add_argument("--quick", action="store_true", help="short smoke run (< 1 minute), for CI")
    p.add_argument(
        "--batch",
        type=_positive_int,
        action="append",
        metavar="N",
        help="batch size; repeatable (default: 1 and 100)",
    )
    p.add_argument("--formats", type=_csv(list(FORMATS), "format"), help="comma-separated formats")
    p.add_argument("--ops", type=_csv(OPS, "operation"), help="comma-separated operations")
    p.add_argument("--models", type=_csv(list(MODELS), "model"), help="comma-separated models")
    p.add_argument("--adapters", help="comma-separated adapter names (see --list)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default: benches/results for a full run; a new temporary "
        "directory for --quick, so a smoke run never overwrites the committed results)",
    )
    p.add_argument(
        "--scaling",
        action="store_true",
        help="instead of the cells: objects/s and memory per object for 1, 10, 100, 1k, 10k and "
        "100k objects per call (scaling.md, scaling.json, scaling_<format>.png)",
    )
    p.add_argument("--no-plots", action="store_true", help="do not draw PNG charts")
    p.add_argument("--no-memory", action="store_true", help="do not measure peak memory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--seed", type=int, default=20240601, help="data generator seed")
    p.add_argument("--rounds", type=_positive_int, help="override: max interleaved rounds per cell")
    p.add_argument("--target-ms", type=float, help="override: target duration of one sample (ms)")
    p.add_argument("--budget", type=float, help="override: seconds per candidate per cell")
    p.add_argument("--note", default="", help="free text shown at the top of the report")
    p.add_argument("--list", action="store_true", help="list adapters and exit")
    p.add_argument(
        "--queues",
        action="store_true",
        help="streams and queues instead: stream decoding MB/s, Kafka and Redis messages/s",
    )
    p.add_argument(
        "--features",
        nargs="?",
        const="all",
        metavar="A,B",
        help="instead: the per-feature benchmark (features.md, features.json, features.png), "
        "on every feature of benches/features.py or the comma-separated ones given; "
        "--formats selects the formats (json, msgpack, builtins, avro, pickle)",
    )
    return p


def _features(args: argparse.Namespace) -> int:
    from . import environment
    from .feature_bench import run as run_features
    from .feature_bench import timing_config, write
    from .feature_cells import CELLS
    from .features import FEATURES

    names = list(FEATURES)
    if args.features != "all":
        names = [n.strip() for n in args.features.split(",") if n.strip()]
        bad = [n for n in names if n not in FEATURES]
        if bad:
            print(
                f"unknown feature(s): {', '.join(bad)}; known: {', '.join(FEATURES)}",
                file=sys.stderr,
            )
            return 2
    cells = [c for c in CELLS if args.formats is None or c.split("-")[0] in args.formats]
    timing = timing_config(args.quick)
    result = run_features(names, cells, timing, args.quick, progress=not args.no_progress)
    env = environment.collect(timing, args.quick)
    out = _out_dir(args.out, args.quick)
    for path in write(result, env, out, plots=not args.no_plots):
        print(f"wrote:   {path}")
    failed = [k for k, why in result.skips.items() if why.startswith("check failed")]
    for feature, fmt, lib in failed:
        print(
            f"CHECK FAILED: {feature} {fmt} {lib}: {result.skips[(feature, fmt, lib)]}",
            file=sys.stderr,
        )
    print(f"wall time: {result.wall_time_s:.1f} s")
    return 1 if failed else 0


def _list(registry: Registry) -> int:
    for a in registry.adapters:
        print(f"{a.name:18} {a.version:12} {', '.join(a.formats)}")
        for fmt in a.formats:
            print(f"{'':18}   {fmt}: {a.how.get(fmt, '')}")
    for name, reason in registry.unavailable.items():
        print(f"{name:18} UNAVAILABLE  {reason}")
    return 0


RESULTS = Path(__file__).resolve().parent / "results"


def _out_dir(out: Optional[Path], quick: bool) -> Path:
    """Where to write. Only a full run writes the committed ``benches/results/`` by default."""
    if out is not None:
        return out
    if quick:
        return Path(tempfile.mkdtemp(prefix="polycodec-bench-quick-"))
    return RESULTS


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.queues:
        from . import queues

        return queues.main(args.quick, args.out)
    if args.features:
        return _features(args)
    registry = load_registry()
    if args.list:
        return _list(registry)

    known = registry.names() + list(registry.unavailable)
    adapters: Optional[list[str]] = None
    if args.adapters:
        adapters = [a.strip() for a in args.adapters.split(",") if a.strip()]
        bad = [a for a in adapters if a not in known]
        if bad:
            print(
                f"unknown adapter(s): {', '.join(bad)}; known: {', '.join(known)}", file=sys.stderr
            )
            return 2

    timing = TimingConfig.quick() if args.quick else TimingConfig.full()
    overrides = {}
    if args.rounds:
        overrides["max_rounds"] = args.rounds
        overrides["min_samples"] = min(timing.min_samples, args.rounds)
    if args.target_ms:
        overrides["target_sample_s"] = args.target_ms / 1e3
    if args.budget is not None:
        overrides["budget_s"] = args.budget
    if overrides:
        timing = TimingConfig(**{**vars(timing), **overrides})

    if args.scaling:
        from .scaling import main as scaling_main

        return scaling_main(args, registry, adapters, _out_dir(args.out, args.quick))

    batches = sorted(set(args.batch or [1, 100]))
    ops = args.ops or list(OPS)
    if not any(op_applies(op, b) for op in ops for b in batches):
        print(
            "nothing to run: *_one ops need --batch 1, *_many ops need a batch > 1",
            file=sys.stderr,
        )
        return 2

    out = _out_dir(args.out, args.quick)
    cfg = RunConfig(
        formats=args.formats or list(FORMATS),
        ops=ops,
        batches=batches,
        models=args.models or list(MODELS),
        adapters=adapters,
        timing=timing,
        memory=not args.no_memory,
        plots=not args.no_plots,
        out=out,
        quick=args.quick,
        seed=args.seed,
        progress=not args.no_progress,
        note=args.note,
    )

    from . import environment, report

    result = run(cfg, registry)
    env = environment.collect(timing, args.quick)
    plots: list[str] = []
    note = "Charts skipped (--no-plots)." if args.no_plots else ""
    if cfg.plots:
        from .plots import write_plots

        plots, note = write_plots(result, out)
    md, js = report.write(result, env, out, plots, note)

    # A short terminal summary: where the files are and how polycodec fared.
    print(f"report:  {md}")
    print(f"results: {js}")
    for p in plots:
        print(f"chart:   {out / p}")
    if note:
        print(note)
    skipped_kinds: dict[str, int] = {}
    for s in result.skips:
        skipped_kinds[s.kind] = skipped_kinds.get(s.kind, 0) + 1
    if skipped_kinds:
        print(
            "skipped: " + ", ".join(f"{n} {k}" for k, n in skipped_kinds.items()) + " (see report)"
        )
    print(f"wall time: {result.wall_time_s:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
