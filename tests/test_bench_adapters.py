"""Keep the benchmark harness (``benches/``) from rotting.

For every adapter, every format it claims and every model: build it and check a full round trip
(one object at a time and as a batch) on a small batch, exactly as the harness does before timing.
The test command installs every peer (the "bench" extra), so an adapter that does not load fails
here; the harness itself lists such a library as missing instead. Peers may only be
"unsupported" where the report says so on purpose (``UNSUPPORTED_BEFORE``, read against the
installed version), and polycodec never, so a harness bug cannot hide as a skip.
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import platform
import sys
from pathlib import Path
from typing import Optional

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benches.adapters import (  # noqa: E402
    ADAPTER_FORMATS,
    MODULE_ADAPTERS,
    SUBJECT,
    Unsupported,
    load_registry,
)
from benches.adapters.base import OBJECT_FORMATS  # noqa: E402
from benches.models import MODELS, generate  # noqa: E402
from benches.runner import check_round_trip, idiom_objects  # noqa: E402

#: (adapter, model) pairs a peer legitimately cannot do the way its users would, each with the
#: first release of the peer's distribution that can (None: none so far). What is expected is read
#: against the version installed, so one table holds on every interpreter: pip resolves
#: marshmallow-recipe 0.0.64 on CPython 3.11 (its later releases require Python 3.12) and 0.0.103
#: on 3.13+. The marshmallow-recipe releases were found by running the models on each of them.
UNSUPPORTED_BEFORE: dict[tuple[str, str], Optional[str]] = {
    # msgspec: no unions of several dataclasses (needs Struct tag=; the msgspec-struct row has it)
    ("msgspec", "tree"): None,
    ("msgspec", "filesystem"): None,
    # marshmallow-recipe: enums that do not subclass str or int from 0.0.73, Literal from 0.0.82
    ("marshmallow-recipe", "record"): "0.0.73",
    ("marshmallow-recipe", "hierarchy"): "0.0.73",
    ("marshmallow-recipe", "tree"): "0.0.82",
    ("marshmallow-recipe", "filesystem"): "0.0.82",
    # its nuked backend: still no plain Enum in 0.0.103; Literal from 0.0.82, recursive
    # dataclasses from 0.0.84
    ("marshmallow-recipe-nuked", "record"): None,
    ("marshmallow-recipe-nuked", "hierarchy"): None,
    ("marshmallow-recipe-nuked", "tree"): "0.0.84",
    ("marshmallow-recipe-nuked", "filesystem"): "0.0.84",
    # the file-system model has no hand-written marshmallow schema or serpy serializer yet
    ("marshmallow", "filesystem"): None,
    ("serpy", "filesystem"): None,
}


def expected_unsupported(name: str, model: str, version: str) -> bool:
    """Whether ``name`` at the installed ``version`` is expected to refuse ``model``."""
    if (name, model) not in UNSUPPORTED_BEFORE:
        return False
    first = UNSUPPORTED_BEFORE[(name, model)]
    return first is None or Version(version) < Version(first)


REGISTRY = load_registry()
TYPED = {name: spec for name, spec in MODELS.items() if spec.kind == "typed"}
#: The typed models with Avro cells (the service model has none: Avro has no untyped trace).
AVRO = {n: s for n, s in TYPED.items() if s.formats is None or "avro" in s.formats}
ALL_NAMES = [n for names in MODULE_ADAPTERS.values() for n in names]
BATCH = 7


#: Rows that exist only from a release of their distribution on: (distribution, first release).
#: marshmallow-recipe's nuked backend is in 0.0.75 and later, which need Python 3.12 or newer.
AVAILABLE_FROM: dict[str, tuple[str, str]] = {
    "marshmallow-recipe-nuked": ("marshmallow-recipe", "0.0.75"),
}


def _require(name: str) -> None:
    """The test command installs every peer (the "bench" extra) and builds polycodec, so an
    adapter that does not load is broken, and a skip would hide exactly that; except a row whose
    library is installed at a release older than the one that brought it."""
    if name not in REGISTRY.unavailable:
        return
    if name in AVAILABLE_FROM:
        distribution, first = AVAILABLE_FROM[name]
        installed = importlib.metadata.version(distribution)
        if Version(installed) < Version(first):
            pytest.skip(f"{name}: {distribution} {installed} predates it ({first})")
    pytest.fail(f"{name}: {REGISTRY.unavailable[name]}")


def _cases() -> list[tuple[str, str, str]]:
    by_name = {a.name: a for a in REGISTRY.adapters}
    cases = []
    for name in ALL_NAMES:
        formats = by_name[name].formats if name in by_name else ADAPTER_FORMATS[name]
        for fmt in formats:
            for model, spec in MODELS.items():
                # The harness offers an adapter only the kinds of model it declares (an
                # unimportable one: the typed models, which fail in _require anyway).
                if name in by_name and not by_name[name].takes(fmt, spec):
                    continue
                if name not in by_name and spec.kind != "typed":
                    continue
                # The runner skips a row that cannot carry per-class options (tested below).
                if spec.class_options and not (name in by_name and by_name[name].class_options):
                    continue
                cases.append((name, fmt, model))
    return cases


@pytest.mark.parametrize(("name", "fmt", "model"), _cases(), ids=["-".join(c) for c in _cases()])
def test_round_trip(name: str, fmt: str, model: str) -> None:
    _require(name)
    adapter = next(a for a in REGISTRY.adapters if a.name == name)
    try:
        ops = adapter.build(fmt, MODELS[model])
    except Unsupported as exc:
        if expected_unsupported(name, model, adapter.version):
            pytest.skip(str(exc))
        raise
    assert not expected_unsupported(
        name, model, adapter.version
    ), f"{name} {adapter.version} now supports {model}: update UNSUPPORTED_BEFORE"
    objs = idiom_objects(ops, generate(model, BATCH))
    payloads = check_round_trip(ops, objs, [BATCH], fmt in OBJECT_FORMATS)
    assert payloads["one"] and payloads[BATCH]


def test_expected_unsupported_follows_the_installed_version() -> None:
    """The expectations move with the peer's release, not with the interpreter."""
    assert expected_unsupported("marshmallow-recipe", "record", "0.0.64")
    assert not expected_unsupported("marshmallow-recipe", "record", "0.0.103")
    assert expected_unsupported("marshmallow-recipe", "tree", "0.0.81")
    assert not expected_unsupported("marshmallow-recipe", "tree", "0.0.82")
    assert expected_unsupported("marshmallow-recipe-nuked", "filesystem", "0.0.83")
    assert not expected_unsupported("marshmallow-recipe-nuked", "filesystem", "0.0.103")
    assert expected_unsupported("marshmallow-recipe-nuked", "record", "0.0.103")
    assert not expected_unsupported("marshmallow-recipe", "record", "1.0")
    assert not expected_unsupported("msgspec", "record", "0.1")


def test_marshmallow_recipe_nuked_row_follows_the_installed_release() -> None:
    """marshmallow-recipe's Rust backend gets its own row wherever the installed release has it,
    and is listed as unavailable, naming that release, where it has not."""
    mr = pytest.importorskip("marshmallow_recipe")
    from importlib.metadata import version

    installed = version("marshmallow-recipe")
    if hasattr(mr, "nuked"):
        assert "marshmallow-recipe-nuked" in REGISTRY.names()
        ops = _built("marshmallow-recipe-nuked", "builtins", "tree")
        objs = generate("tree", 3)
        assert ops.encode_many(objs) == [mr.nuked.dump(MODELS["tree"].root, o) for o in objs]
    else:
        reason = REGISTRY.unavailable["marshmallow-recipe-nuked"]
        assert f"marshmallow-recipe {installed} has no nuked backend" in reason


def test_generator_is_deterministic() -> None:
    for model in MODELS:
        assert generate(model, 3, seed=1) == generate(model, 3, seed=1)
        assert generate(model, 3, seed=1) != generate(model, 3, seed=2)
        assert generate(model, 5)[:2] == generate(model, 2)


def test_avro_libraries_interoperate() -> None:
    """The two Avro adapters share schemas, so each must read the other's container files."""
    _require("fastavro")
    _require("avro")
    by_name = {a.name: a for a in REGISTRY.adapters}
    for model, spec in AVRO.items():
        objs = generate(model, 3)
        fast = by_name["fastavro"].build("avro", spec)
        apache = by_name["avro"].build("avro", spec)
        assert apache.decode_many(fast.encode_many(objs)) == objs
        assert fast.decode_many(apache.encode_many(objs)) == objs
        assert fast.decode_one(apache.encode_one(objs[0])) == objs[0]


def test_polycodec_avro_schema_matches_peers() -> None:
    """polycodec's schemaless Avro datum must be readable by fastavro with ``codec.schema``."""
    _require(SUBJECT)
    import fastavro

    import polycodec

    for model, spec in AVRO.items():
        codec = polycodec.Codec(spec.root, format="avro")
        obj = generate(model, 1)[0]
        datum = fastavro.schemaless_reader(
            io.BytesIO(codec.encode_one(obj)), fastavro.parse_schema(codec.schema), None
        )
        assert isinstance(datum, dict)


def test_cli_end_to_end(tmp_path: Path) -> None:
    """A tiny run through the real CLI writes a report and parseable JSON results."""
    from benches.__main__ import main

    rc = main(
        [
            "--formats", "json,pickle",
            "--models", "record",
            "--batch", "1", "--batch", "3",
            "--adapters", "json,pickle,polycodec",
            "--rounds", "2", "--target-ms", "0.2", "--budget", "0",
            "--no-plots", "--no-progress",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert rc == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Environment" in report and "## Headline" in report
    # The header names the interpreter the numbers belong to, version and build (issue 24).
    version = f"{platform.python_implementation()} {platform.python_version()}"
    assert report.splitlines()[2].startswith(
        f"Interpreter: {version} ({platform.python_build()[0]}, "
    )
    assert "### JSON / encode_one / batch 1 / record" in report
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    cells = {(c["format"], c["op"], c["batch"]) for c in results["cells"]}
    assert ("json", "decode_many", 3) in cells and ("pickle", "encode_one", 1) in cells
    assert all(r["median_s"] > 0 for c in results["cells"] for r in c["rows"])


# ---- idioms: peers on their own classes, polycodec on slots dataclasses ---------------------


def _built(name: str, fmt: str, model: str):  # type: ignore[no-untyped-def]
    _require(name)
    adapter = next(a for a in REGISTRY.adapters if a.name == name)
    return adapter.build(fmt, MODELS[model])


@pytest.mark.parametrize("model", ["tree", "filesystem"])
def test_msgspec_struct_row_takes_the_tagged_trees(model: str) -> None:
    """msgspec on dataclasses cannot do the tagged trees; on tagged Structs (its idiom) it must."""
    ops = _built("msgspec-struct", "json", model)
    objs = idiom_objects(ops, generate(model, 3))
    import msgspec

    assert all(isinstance(o, msgspec.Struct) for o in objs)
    check_round_trip(ops, objs, [3])
    # The tag goes on the wire under the same key as the dataclasses' tag field.
    tag = "kind" if model == "tree" else "type"
    assert json.loads(ops.encode_one(objs[0]))[tag] in ("branch", "directory")


def test_idiom_rows_put_the_same_data_on_the_wire() -> None:
    """msgspec Structs, pydantic BaseModels and slots dataclasses write what polycodec on the
    plain dataclasses reads back as the generated objects: every row times the same data."""
    _require(SUBJECT)
    import polycodec

    for model in ("record", "hierarchy", "tree", "filesystem"):
        originals = generate(model, 2)
        codec = polycodec.Codec(MODELS[model].root)
        for name in ("msgspec-struct", "pydantic-model", "polycodec-slots"):
            ops = _built(name, "json", model)
            objs = idiom_objects(ops, originals)
            assert type(objs[0]) is not type(originals[0])
            assert codec.decode_one(ops.encode_one(objs[0])) == originals[0], (name, model)


def test_slots_idiom_classes_have_slots() -> None:
    from benches.idioms import SLOTS
    from benches.models import CLASSES

    for cls in CLASSES:
        twin = SLOTS[cls]
        assert twin.__name__ == cls.__name__ and twin.__module__ == "benches.idioms"
        assert "__slots__" in vars(twin) and not hasattr(twin(*_dummy_args(cls)), "__dict__")


def _dummy_args(cls: type) -> list[object]:
    import dataclasses

    return [None for f in dataclasses.fields(cls) if f.default is dataclasses.MISSING and
            f.default_factory is dataclasses.MISSING]  # fmt: skip


def test_idiom_objects_refuses_a_lossy_conversion() -> None:
    """An idiom whose classes lose a field fails the check instead of timing less work."""
    import dataclasses

    from benches.adapters.base import Ops, on_idiom
    from benches.models import Tag
    from benches.runner import RoundTripError

    @dataclasses.dataclass
    class LossyTag:
        name: str
        pinned: bool  # no weight

    ops = on_idiom(Ops(repr, repr, repr, repr), {Tag: LossyTag})
    with pytest.raises(RoundTripError, match="weight"):
        idiom_objects(ops, [Tag("a", 1.5, True)])


def test_filesystem_model_mirrors_the_gist() -> None:
    from uuid import UUID

    from benches.models import Directory, File

    root = generate("filesystem", 1)[0]

    def walk(node: Directory) -> list[object]:
        out: list[object] = [node]
        for child in node.contents:
            out += walk(child) if isinstance(child, Directory) else [child]
        return out

    nodes = walk(root)
    assert len(nodes) == 1000
    assert {type(n) for n in nodes} == {File, Directory}
    for n in nodes:
        assert isinstance(n.created_by, UUID) and n.name
        assert n.created_at.tzinfo is not None and n.updated_at >= n.created_at
        assert not isinstance(n, File) or 0 <= n.nbytes <= 1_000_000


def test_filesystem_runs_one_object_operations_only() -> None:
    from benches.runner import op_applies

    assert op_applies("encode_one", 1, "filesystem")
    assert not op_applies("decode_many", 100, "filesystem")
    assert op_applies("decode_many", 100, "tree")


def test_fmt_verdict_marks_losses() -> None:
    from benches.report import fmt_verdict

    assert fmt_verdict(1.5) == "**1.50×**"
    assert fmt_verdict(0.8) == "0.80× ✗ loss"
    assert fmt_verdict(1.0) == "1.00×"


# ---- CLI options -----------------------------------------------------------------------------


def test_quick_run_writes_to_a_temporary_directory_by_default() -> None:
    """Issue 14: ``--quick`` must not overwrite the committed full-run results."""
    from benches.__main__ import RESULTS, _out_dir

    assert _out_dir(None, quick=False) == RESULTS
    quick = _out_dir(None, quick=True)
    assert quick != RESULTS and quick.is_dir() and not any(quick.iterdir())
    assert RESULTS not in quick.parents
    quick.rmdir()
    assert _out_dir(Path("x"), quick=True) == Path("x")


def test_cli_headline_shows_every_polycodec_row_and_losses(tmp_path: Path) -> None:
    from benches.__main__ import main

    rc = main(
        [
            "--formats", "json",
            "--models", "record",
            "--batch", "1",
            "--ops", "encode_one",
            "--adapters", "json,polycodec,polycodec-slots,msgspec-struct",
            "--rounds", "2", "--target-ms", "0.2", "--budget", "0",
            "--no-plots", "--no-progress", "--no-memory",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert rc == 0
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    (cell,) = results["cells"]
    ran = {r["adapter"] for r in cell["rows"]}
    assert {"polycodec", "polycodec-slots"} <= ran, REGISTRY.unavailable
    assert cell["best_subject"] in ("polycodec", "polycodec-slots")
    assert cell["best_peer"] in ran - {"polycodec", "polycodec-slots"}
    assert "| polycodec | vs peer | polycodec (slots) | vs peer |" in report
    assert "msgspec-struct" in ran
    assert "fastest peer in any idiom" in report


def test_cli_scaling(tmp_path: Path) -> None:
    """``--scaling`` (quick sizes) writes its report, results and honours the adapter list."""
    from benches.__main__ import main

    rc = main(
        [
            "--scaling", "--quick",
            "--formats", "pickle",
            "--adapters", "pickle,polycodec",
            "--no-plots", "--no-progress",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert rc == 0
    results = json.loads((tmp_path / "scaling.json").read_text(encoding="utf-8"))
    assert results["sizes"] == [1, 10, 100, 1000]
    enc, dec = results["series"]
    assert (enc["op"], dec["op"]) == ("encode_many", "decode_many")
    sizes = {(p["adapter"], p["size"]) for p in enc["points"]}
    assert ("pickle", 1000) in sizes
    assert all(p["objects_per_s"] > 0 and p["tracemalloc_peak_bytes"] for p in enc["points"])
    report = (tmp_path / "scaling.md").read_text(encoding="utf-8")
    assert "## pickle encode_many" in report and "Objects per second" in report


@pytest.mark.parametrize("model", [m for m, spec in MODELS.items() if spec.kind == "untyped"])
@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_untyped_rows_write_the_same_bytes(model: str, fmt: str) -> None:
    """On the untyped models every row (polycodec's Codec(Any) and typed containers, the peers'
    untyped calls) writes the same bytes for one value and for a batch, and reads them back."""
    _require(SUBJECT)
    values = generate(model, 4)
    rows = [
        a
        for a in REGISTRY.adapters
        if a.takes(fmt, MODELS[model]) and not (fmt == "json" and a.name == "json")
    ]
    names = {a.name for a in rows}
    expected = {"polycodec", "polycodec-containers", "msgspec"}
    expected |= {"orjson"} if fmt == "json" else {"ormsgpack", "msgpack"}
    assert expected <= names
    # Compared by ==, not in a set: ssrjson 0.0.24's bytes carry a wrong cached hash.
    first = rows[0].build(fmt, MODELS[model])
    one, many = first.encode_one(values[0]), first.encode_many(values)
    for adapter in rows:
        ops = adapter.build(fmt, MODELS[model])
        assert ops.encode_one(values[0]) == one, (adapter.name, model, fmt)
        assert ops.encode_many(values) == many, (adapter.name, model, fmt)
        assert ops.decode_one(one) == values[0]
        assert ops.decode_many(many) == values


def test_service_model_rows_write_the_ported_services_bytes() -> None:
    """The service model: polycodec on the plain and slots classes with polycodec.options writes
    exactly what msgspec writes on the service's Structs (JSON, MessagePack, builtins), the
    dict-based rows write what reads back the same, and the rows that cannot carry per-class
    options are skipped with the reason, not timed on another wire form."""
    _require(SUBJECT)
    import polycodec

    from benches.adapters.base import NO_CLASS_OPTIONS
    from benches.runner import RunConfig, run
    from benches.timing import TimingConfig

    values = generate("service", 30)
    assert {type(v.event).__name__ for v in values} == {
        "OrderPlaced",
        "OrderShipped",
        "OrderCancelled",
    }
    for fmt in ("json", "msgpack", "builtins"):
        struct = _built("msgspec-struct", fmt, "service")
        slots = _built("polycodec-slots", fmt, "service")
        plain = _built("polycodec", fmt, "service")
        theirs = struct.encode_many(idiom_objects(struct, values))
        assert slots.encode_many(idiom_objects(slots, values)) == theirs, fmt
        assert plain.encode_many(values) == theirs, fmt
    codec = polycodec.Codec(MODELS["service"].root)
    for name, fmt in [("orjson", "json"), ("json", "json"), ("ormsgpack", "msgpack")]:
        ops = _built(name, fmt, "service")
        assert ops.decode_many(ops.encode_many(values)) == values
        if fmt == "json":
            assert codec.decode_many(ops.encode_many(values)) == values
    cfg = RunConfig(
        formats=["json"],
        ops=["encode_one"],
        batches=[1],
        models=["service"],
        adapters=["polycodec", "pydantic"],
        timing=TimingConfig(target_sample_s=0.0005, max_rounds=1, min_samples=1, budget_s=0),
        memory=False,
        plots=False,
        progress=False,
    )
    result = run(cfg, REGISTRY)
    assert [r.adapter for r in result.cells[0].rows] == ["polycodec"]
    assert [(s.adapter, s.reason) for s in result.skips] == [("pydantic", NO_CLASS_OPTIONS)]
