"""Keep the benchmark harness (``benches/``) from rotting.

For every adapter that is installed, every format it claims and every model: build it and check a
full round trip (one object at a time and as a batch) on a small batch, exactly as the harness does
before timing. Libraries that are not installed are skipped, and so is polycodec while it is not
importable or does not implement a format yet. Peers may only be "unsupported" where the report
says so on purpose (``EXPECTED_UNSUPPORTED``), so a harness bug cannot hide as a skip.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benches.adapters import MODULE_ADAPTERS, SUBJECT, Unsupported, load_registry  # noqa: E402
from benches.adapters.base import FORMATS, OBJECT_FORMATS  # noqa: E402
from benches.models import MODELS, generate  # noqa: E402
from benches.runner import check_round_trip  # noqa: E402

#: (adapter, model) pairs a peer legitimately cannot do the way its users would.
EXPECTED_UNSUPPORTED = {
    ("msgspec", "tree"),  # msgspec: no unions of several dataclasses (needs Struct tag=)
    # marshmallow-recipe: enums must subclass str or int, no Literal fields
    ("marshmallow-recipe", "record"),
    ("marshmallow-recipe", "hierarchy"),
    ("marshmallow-recipe", "tree"),
}

REGISTRY = load_registry()
ALL_NAMES = [n for names in MODULE_ADAPTERS.values() for n in names]
BATCH = 7


def _cases() -> list[tuple[str, str, str]]:
    by_name = {a.name: a for a in REGISTRY.adapters}
    cases = []
    for name in ALL_NAMES:
        formats = by_name[name].formats if name in by_name else tuple(FORMATS)
        for fmt in formats:
            for model in MODELS:
                cases.append((name, fmt, model))
    return cases


@pytest.mark.parametrize(("name", "fmt", "model"), _cases(), ids=["-".join(c) for c in _cases()])
def test_round_trip(name: str, fmt: str, model: str) -> None:
    if name in REGISTRY.unavailable:
        pytest.skip(f"{name}: {REGISTRY.unavailable[name]}")
    adapter = next(a for a in REGISTRY.adapters if a.name == name)
    try:
        ops = adapter.build(fmt, MODELS[model])
    except Unsupported as exc:
        if name == SUBJECT or (name, model) in EXPECTED_UNSUPPORTED:
            pytest.skip(str(exc))
        raise
    assert (name, model) not in EXPECTED_UNSUPPORTED, "now supported: update EXPECTED_UNSUPPORTED"
    objs = generate(model, BATCH)
    payloads = check_round_trip(ops, objs, [BATCH], fmt in OBJECT_FORMATS)
    assert payloads["one"] and payloads[BATCH]


def test_generator_is_deterministic() -> None:
    for model in MODELS:
        assert generate(model, 3, seed=1) == generate(model, 3, seed=1)
        assert generate(model, 3, seed=1) != generate(model, 3, seed=2)
        assert generate(model, 5)[:2] == generate(model, 2)


def test_avro_libraries_interoperate() -> None:
    """The two Avro adapters share schemas, so each must read the other's container files."""
    names = {a.name for a in REGISTRY.adapters}
    if not {"fastavro", "avro"} <= names:
        pytest.skip("fastavro and avro are both needed")
    by_name = {a.name: a for a in REGISTRY.adapters}
    for model, spec in MODELS.items():
        objs = generate(model, 3)
        fast = by_name["fastavro"].build("avro", spec)
        apache = by_name["avro"].build("avro", spec)
        assert apache.decode_many(fast.encode_many(objs)) == objs
        assert fast.decode_many(apache.encode_many(objs)) == objs
        assert fast.decode_one(apache.encode_one(objs[0])) == objs[0]


def test_polycodec_avro_schema_matches_peers() -> None:
    """polycodec's schemaless Avro datum must be readable by fastavro with ``codec.schema``."""
    if SUBJECT in REGISTRY.unavailable:
        pytest.skip(REGISTRY.unavailable[SUBJECT])
    fastavro = pytest.importorskip("fastavro")
    import polycodec

    for model, spec in MODELS.items():
        try:
            codec = polycodec.Codec(spec.root, format="avro")
        except (ValueError, TypeError, NotImplementedError) as exc:
            pytest.skip(f"polycodec avro: {exc}")
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
    assert "### JSON / encode_one / batch 1 / record" in report
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    cells = {(c["format"], c["op"], c["batch"]) for c in results["cells"]}
    assert ("json", "decode_many", 3) in cells and ("pickle", "encode_one", 1) in cells
    assert all(r["median_s"] > 0 for c in results["cells"] for r in c["rows"])
