"""Orchestration: build adapters, verify round trips, time every cell, collect results.

A *cell* is one (format, operation, batch size, model); its *candidates* are the adapters that
support that format and model and passed the round-trip check. Operations ending in ``_one`` run
at batch 1 (a single object); ``_many`` operations run at every batch size > 1 (one call on a list
of N objects).
"""

from __future__ import annotations

import gc
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .adapters import BASELINES, FORMATS, Adapter, Ops, Registry, Unsupported, is_subject
from .adapters.base import NO_CLASS_OPTIONS, OBJECT_FORMATS, version_is_prerelease
from .idioms import field_names
from .models import MODELS, generate
from .progress import ProgressBar
from .timing import Candidate, Stats, TimingConfig, measure_cell, peak_memory

OPS: tuple[str, ...] = ("encode_one", "decode_one", "encode_many", "decode_many")


def op_applies(op: str, batch: int, model: Optional[str] = None) -> bool:
    """``*_one`` ops are timed at batch 1 only; ``*_many`` ops at every batch > 1 (and never for
    a model that is one large document per object, ``ModelSpec.one_only``)."""
    if model is not None and MODELS[model].one_only and not op.endswith("_one"):
        return False
    return batch == 1 if op.endswith("_one") else batch > 1


@dataclass
class RunConfig:
    """Everything that selects and shapes a run (mirrors the CLI options)."""

    formats: list[str]
    ops: list[str]
    batches: list[int]
    models: list[str]
    adapters: Optional[list[str]]  # None: all
    timing: TimingConfig
    memory: bool = True
    plots: bool = True
    out: Path = Path("benches/results")
    quick: bool = False
    seed: int = 20240601
    progress: bool = True
    note: str = ""  # free text shown at the top of the report (``--note``)


@dataclass
class Skip:
    """An adapter that does not take part somewhere, and why (shown in the report)."""

    adapter: str
    format: str  # "*" for all formats
    model: str  # "*" for all models
    kind: str  # "unavailable" | "unsupported" | "round-trip failed" | "error"
    reason: str


@dataclass
class Row:
    """One candidate's result in one cell."""

    adapter: str
    label: str
    version: str
    prerelease: bool
    stats: Stats
    payload_bytes: int
    peak_memory_bytes: Optional[int] = None
    samples: list[float] = field(default_factory=list)  # raw per-call seconds, one per sample
    vs_baseline: Optional[float] = None  # baseline median / this median (higher is faster)
    vs_best_peer: Optional[float] = None  # fastest non-subject peer median / this median


@dataclass
class Cell:
    """One (format, op, batch, model) and its rows, fastest first."""

    format: str
    op: str
    batch: int
    model: str
    rows: list[Row] = field(default_factory=list)
    baseline: Optional[str] = None
    best_peer: Optional[str] = None  # fastest non-polycodec row, whatever its idiom
    best_subject: Optional[str] = None  # fastest polycodec row (plain or slots dataclasses)

    @property
    def key(self) -> str:
        return f"{self.format}/{self.op}/{self.batch}/{self.model}"

    def row(self, adapter: str) -> Optional[Row]:
        return next((r for r in self.rows if r.adapter == adapter), None)


@dataclass
class RunResult:
    """Everything the report and the JSON dump need."""

    config: RunConfig
    adapters: list[Adapter]
    cells: list[Cell]
    skips: list[Skip]
    payload_samples: dict[str, dict[str, str]]  # format/model -> adapter -> short payload preview
    wall_time_s: float = 0.0
    #: 1-minute load averages (os.getloadavg) at the start and the end, where available: on a
    #: shared machine they say how much other work competed with the run.
    load_average: tuple[Optional[float], Optional[float]] = (None, None)


def load_average() -> Optional[float]:
    """The 1-minute load average, or None where the OS does not report one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _payload_len(payload: Any) -> int:
    if isinstance(payload, (dict, list)):  # a builtins payload: the size of its JSON text
        return len(json.dumps(payload, default=str, separators=(",", ":")).encode("utf-8"))
    return len(payload.encode("utf-8")) if isinstance(payload, str) else len(payload)


def _describe_mismatch(expected: Any, got: Any, path: str = "") -> str:
    """Find the first differing path between two object graphs, for a useful failure reason."""
    if type(expected) is not type(got):
        return (
            f"{path or '<root>'}: expected {type(expected).__name__} {expected!r:.80}, "
            f"got {type(got).__name__} {got!r:.80}"
        )
    try:
        names = field_names(type(expected))  # dataclass, msgspec Struct or pydantic BaseModel
    except TypeError:
        names = ()
    for name in names:
        a, b = getattr(expected, name), getattr(got, name)
        if a != b:
            return _describe_mismatch(a, b, f"{path}.{name}")
    if isinstance(expected, list):
        if len(expected) != len(got):
            return f"{path or '<root>'}: expected {len(expected)} items, got {len(got)}"
        for i, (a, b) in enumerate(zip(expected, got)):
            if a != b:
                return _describe_mismatch(a, b, f"{path}[{i}]")
    return f"{path or '<root>'}: expected {expected!r:.80}, got {got!r:.80}"


class RoundTripError(Exception):
    """The adapter's decoded objects differ from the originals (message says where)."""


def idiom_objects(ops: Ops, originals: list[Any]) -> list[Any]:
    """The generated objects in the adapter's own classes (the originals when it has none).

    An adapter on its own classes (``ops.to_idiom``) must convert back to exactly the originals,
    so its rows time the same data as everyone else's.
    """
    if ops.to_idiom is None:
        return originals
    objs = [ops.to_idiom(o) for o in originals]
    assert ops.from_idiom is not None, "an idiom adapter needs from_idiom for the check"
    for i, (obj, orig) in enumerate(zip(objs, originals)):
        try:
            back = ops.from_idiom(obj)
        except Exception as exc:
            raise RoundTripError(
                f"its classes do not hold the generated data, object {i}: "
                f"converting back raised {type(exc).__name__}: {exc}"
            ) from exc
        if back != orig:
            raise RoundTripError(
                f"its classes do not hold the generated data, object {i}: "
                f"{_describe_mismatch(orig, back)}"
            )
    return objs


def check_round_trip(
    ops: Ops, objs: list[Any], batches: list[int], objects: bool = False
) -> dict[Any, Any]:
    """Encode/decode through all four ops and compare with the originals.

    ``objs`` are in the adapter's own classes (see :func:`idiom_objects`). Returns the payloads to
    reuse as decode inputs: ``{"one": payload, N: payload}``. Raises :class:`RoundTripError` (or
    whatever the library raised) when anything is off.
    """
    payloads: dict[Any, Any] = {}
    # ``objects``: a format whose payloads are the JSON form as Python objects.
    kinds = (dict, list) if objects else (bytes, bytearray, memoryview, str)
    for i, obj in enumerate(objs[: min(5, len(objs))]):
        encoded = ops.encode_one(obj)
        if not isinstance(encoded, kinds):
            raise RoundTripError(f"encode_one returned {type(encoded).__name__}, not bytes/str")
        decoded = ops.decode_one(encoded)
        if decoded != obj:
            raise RoundTripError(
                f"decode_one(encode_one(obj[{i}])): {_describe_mismatch(obj, decoded)}"
            )
        if i == 0:
            payloads["one"] = encoded
    for n in sorted(set(batches) | {min(3, len(objs))}):
        chunk = objs[:n]
        encoded = ops.encode_many(chunk)
        if not isinstance(encoded, kinds):
            raise RoundTripError(f"encode_many returned {type(encoded).__name__}, not bytes/str")
        decoded = ops.decode_many(encoded)
        if not isinstance(decoded, list):
            decoded = list(decoded)
        if decoded != chunk:
            raise RoundTripError(
                f"decode_many(encode_many(batch {n})): {_describe_mismatch(chunk, decoded)}"
            )
        payloads[n] = encoded
    if ops.extra_check is not None:
        ops.extra_check(objs[: min(10, len(objs))])
    return payloads


def _preview(payload: Any) -> str:
    if isinstance(payload, (dict, list)):
        payload = json.dumps(payload, default=str, separators=(",", ":"))
    if isinstance(payload, str):
        text = payload
    else:
        try:
            text = bytes(payload).decode("utf-8")
        except UnicodeDecodeError:
            text = bytes(payload)[:48].hex(" ")
    return text[:160] + ("..." if len(text) > 160 else "")


def run(cfg: RunConfig, registry: Registry) -> RunResult:
    """Run the whole benchmark described by ``cfg``."""
    t_start = time.perf_counter()
    load_start = load_average()
    skips: list[Skip] = []
    wanted = set(cfg.adapters) if cfg.adapters is not None else None

    for name, reason in registry.unavailable.items():
        if wanted is None or name in wanted:
            skips.append(Skip(name, "*", "*", "unavailable", reason))
    adapters = [a for a in registry.adapters if wanted is None or a.name in wanted]

    max_batch = max(cfg.batches)
    data = {
        m: generate(m, 5 if MODELS[m].one_only else max(max_batch, 5), seed=cfg.seed)
        for m in cfg.models
    }

    # ---- build + verify every (adapter, format, model) ---------------------------------------
    # (adapter, format, model) -> (ops, payloads by batch, the objects in the adapter's classes)
    prepared: dict[tuple[str, str, str], tuple[Ops, dict[Any, Any], list[Any]]] = {}
    converted: dict[tuple[str, str], list[Any]] = {}  # (adapter, model): idiom objects, reused
    previews: dict[str, dict[str, str]] = {}
    checks = [
        (a, fmt, m)
        for fmt in cfg.formats
        for m in cfg.models
        for a in adapters
        if a.takes(fmt, MODELS[m])
    ]
    bar = ProgressBar(len(checks) * 0.1 + _count_cells(cfg, adapters) or 1, enabled=cfg.progress)
    for i, (adapter, fmt, model) in enumerate(checks):
        bar.update(i * 0.1, f"checking {adapter.name} {fmt} {model}")
        if MODELS[model].class_options and not adapter.class_options:
            skips.append(Skip(adapter.name, fmt, model, "unsupported", NO_CLASS_OPTIONS))
            continue
        try:
            ops = adapter.build(fmt, MODELS[model])
        except Unsupported as exc:
            skips.append(Skip(adapter.name, fmt, model, "unsupported", str(exc)))
            continue
        except Exception as exc:
            skips.append(Skip(adapter.name, fmt, model, "error", f"{type(exc).__name__}: {exc}"))
            continue
        try:
            objs = converted.get((adapter.name, model))
            if objs is None:
                objs = converted[(adapter.name, model)] = idiom_objects(ops, data[model])
            many = [] if MODELS[model].one_only else [b for b in cfg.batches if b > 1]
            payloads = check_round_trip(ops, objs, many, fmt in OBJECT_FORMATS)
        except Exception as exc:
            skips.append(
                Skip(adapter.name, fmt, model, "round-trip failed", f"{type(exc).__name__}: {exc}")
            )
            continue
        prepared[(adapter.name, fmt, model)] = (ops, payloads, objs)
        previews.setdefault(f"{fmt}/{model}", {})[adapter.name] = _preview(payloads["one"])

    # ---- time every cell -------------------------------------------------------------------
    by_name = {a.name: a for a in adapters}
    cells: list[Cell] = []
    done = len(checks) * 0.1
    gc.collect()
    gc.freeze()  # setup objects become permanent: the per-sample gc.collect() stays cheap
    try:
        for fmt in cfg.formats:
            for model in cfg.models:
                for batch in cfg.batches:
                    for op in cfg.ops:
                        if not op_applies(op, batch, model):
                            continue
                        if MODELS[model].formats is not None and fmt not in MODELS[model].formats:
                            continue
                        cands: list[Candidate] = []
                        payload_sizes: dict[str, int] = {}
                        for adapter in adapters:
                            entry = prepared.get((adapter.name, fmt, model))
                            if entry is None:
                                continue
                            ops, payloads, objs = entry
                            fn = getattr(ops, op)
                            if op == "encode_one":
                                arg, payload = objs[0], payloads["one"]
                            elif op == "decode_one":
                                arg = payload = payloads["one"]
                            elif op == "encode_many":
                                arg, payload = objs[:batch], payloads[batch]
                            else:
                                arg = payload = payloads[batch]
                            cands.append(Candidate(adapter.name, fn, arg))
                            payload_sizes[adapter.name] = _payload_len(payload)
                        cell = Cell(fmt, op, batch, model)
                        cells.append(cell)
                        if not cands:
                            done += 1
                            continue
                        label = f"{FORMATS[fmt]} {op} b{batch} {model}"
                        base = done

                        def on_round(
                            r: int, total: int, base: float = base, label: str = label
                        ) -> None:
                            bar.update(base + r / total, label)

                        bar.update(base, label)
                        stats = measure_cell(cands, cfg.timing, on_round)
                        memory: dict[str, int] = {}
                        if cfg.memory:
                            for c in cands:
                                memory[c.name] = peak_memory(c.fn, c.arg)
                        for c in cands:
                            a = by_name[c.name]
                            cell.rows.append(
                                Row(
                                    adapter=a.name,
                                    label=a.label,
                                    version=a.version,
                                    prerelease=version_is_prerelease(a.version),
                                    stats=stats[c.name],
                                    payload_bytes=payload_sizes[c.name],
                                    peak_memory_bytes=memory.get(c.name),
                                    samples=c.samples,
                                )
                            )
                        _rank(cell)
                        done += 1
                        bar.update(done, label)
    finally:
        gc.unfreeze()
    bar.close()
    return RunResult(
        config=cfg,
        adapters=adapters,
        cells=cells,
        skips=skips,
        payload_samples=previews,
        wall_time_s=time.perf_counter() - t_start,
        load_average=(load_start, load_average()),
    )


def _count_cells(cfg: RunConfig, adapters: list[Adapter]) -> int:
    return sum(
        1
        for fmt in cfg.formats
        for m in cfg.models
        for b in cfg.batches
        for op in cfg.ops
        if op_applies(op, b, m) and (MODELS[m].formats is None or fmt in MODELS[m].formats)
    )


def _rank(cell: Cell) -> None:
    """Sort rows fastest first and fill the two relative-speed columns.

    The fastest peer is the fastest row of any library other than polycodec, in whichever idiom
    (msgspec Structs, pydantic BaseModels, plain dataclasses...) it was fastest.
    """
    cell.rows.sort(key=lambda r: r.stats.median)
    baseline = cell.row(BASELINES[cell.format])
    peers = [r for r in cell.rows if not is_subject(r.adapter)]
    subjects = [r for r in cell.rows if is_subject(r.adapter)]
    best = peers[0] if peers else None
    cell.baseline = baseline.adapter if baseline else None
    cell.best_peer = best.adapter if best else None
    cell.best_subject = subjects[0].adapter if subjects else None
    for r in cell.rows:
        if baseline is not None:
            r.vs_baseline = baseline.stats.median / r.stats.median
        if best is not None:
            r.vs_best_peer = best.stats.median / r.stats.median
