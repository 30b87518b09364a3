"""Keep the per-feature benchmark (``benches/features.py`` and the cells that time it) honest.

Every feature's three class forms must hold the same data; every lib must round-trip every
feature in every format it claims, with polycodec's bytes equal to the peer's where the formats
define them (JSON and MessagePack against msgspec's Structs with the same options, Avro against
fastavro bound to the same schema, pickles each side reads); and the cells that are not run are
exactly the ones the report explains, so a new refusal cannot hide as a skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benches import callgrind_features  # noqa: E402
from benches.feature_cells import GROUPS, Unavailable, check, prepare  # noqa: E402
from benches.features import BATCH, FEATURES  # noqa: E402

#: Values per check: enough to meet every variant of a feature's generator, cheap to run.
N = 12

#: (feature, format, lib) cells that are not run, and a word of the reason each gives.
NOT_RUN: dict[tuple[str, str], str] = {
    ("any_payload", "avro"): "untyped",
    ("dict_any", "avro"): "untyped",
    ("datetimes", "avro"): "timedelta",
    ("decimal", "avro"): "decimal_meta",
    ("raw", "builtins"): "Raw",
    ("raw", "avro"): "Raw",
    ("raw", "pickle"): "Raw",
    ("sets_tuples", "avro"): "fixed-length tuple",
}
#: Features with one class form: their plain-form libs have no cells.
ONE_FORM = {"typeddict", "namedtuple"}
PLAIN_LIBS = {"plain", "pickle"}


def _cases() -> list[tuple[str, str, str]]:
    return [(f, fmt, lib) for f in FEATURES for fmt, libs in GROUPS.items() for lib in libs]


@pytest.mark.parametrize("name", list(FEATURES))
def test_forms_hold_the_same_values(name: str) -> None:
    feature = FEATURES[name]
    values = feature.values(N)
    assert len({repr(v) for v in values}) > 1, "the generator makes one value only"
    for form in feature.forms:
        if form == "plain":
            continue
        converted = feature.convert(values, form)
        assert converted != values or not feature.classes[form]
        assert feature.back(converted, form) == values


@pytest.mark.parametrize("name,fmt,lib", _cases())
def test_every_lib_round_trips_every_feature(name: str, fmt: str, lib: str) -> None:
    expected_skip = NOT_RUN.get((name, fmt))
    if name in ONE_FORM and lib in PLAIN_LIBS:
        expected_skip = "no plain form"
    if expected_skip is not None:
        with pytest.raises(Unavailable, match=expected_skip):
            check(name, fmt, lib, N)
        return
    check(name, fmt, lib, N)


def _as_lists(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", list(FEATURES))
@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
def test_polycodec_writes_msgspecs_bytes(name: str, fmt: str) -> None:
    if (name, fmt) in NOT_RUN:
        pytest.skip(NOT_RUN[(name, fmt)])
    cell = f"{fmt}-to" if fmt == "builtins" else f"{fmt}-encode"
    theirs = prepare(name, cell, "msgspec", N).payload
    for lib in ("slots", "plain"):
        if lib == "plain" and name in ONE_FORM:
            continue
        ours = prepare(name, cell, lib, N).payload
        if fmt == "builtins" and name == "sets_tuples":
            # msgspec.to_builtins keeps a tuple a tuple; polycodec gives JSON's list
            assert ours == _as_lists(theirs)
        else:
            assert ours == theirs, (name, fmt, lib)


def test_avro_decimal_uses_the_decimal_logical_type_on_both_sides() -> None:
    import fastavro

    enc = prepare("decimal_meta", "avro-encode", "slots", N)
    peer = prepare("decimal_meta", "avro-encode", "fastavro", N)
    assert enc.payload == peer.payload
    import polycodec

    schema = polycodec.Codec(list[FEATURES["decimal_meta"].roots["plain"]], "avro").schema
    field = schema["items"]["fields"][0]["type"]
    assert field == {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}
    back = fastavro.schemaless_reader(
        __import__("io").BytesIO(enc.payload), fastavro.parse_schema(schema), None
    )
    assert [d["price"] for d in back] == [v.price for v in enc.values]


def test_batches_are_fifty_values() -> None:
    p = prepare("scalars", "json-encode", "slots")
    assert len(p.values) == BATCH == 50
    assert len(json.loads(p.payload)) == 50


def test_callgrind_runner_runs_one_cell_per_lib() -> None:
    for lib, cell in [
        ("slots", "json-decode"),
        ("polycodec", "builtins-from"),
        ("msgspec", "msgpack-encode"),
        ("fastavro", "avro-decode"),
        ("pickle-slots", "pickle-decode"),
    ]:
        done = subprocess.run(
            [sys.executable, "-m", "benches.callgrind_features", "uuid", cell, "3", "--lib", lib],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
    refused = subprocess.run(
        [sys.executable, "-m", "benches.callgrind_features", "raw", "avro-encode", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "Raw" in refused.stderr


def test_callgrind_dumps_are_read_per_call(tmp_path: Path) -> None:
    (tmp_path / "cg.1").write_text(
        "version: 1\ncreator: callgrind\n"
        "desc: Trigger: Client Request: uuid json-encode slots 20\n"
        "events: Ir\nsummary: 1000000\ntotals: 1000000\n"
    )
    (tmp_path / "cg.2").write_text(
        "desc: Trigger: Client Request: uuid json-encode msgspec 20\nsummary: 800000\n"
    )
    (tmp_path / "cg.0").write_text("desc: Trigger: Program termination\nsummary: 99\n")
    counts = callgrind_features._read_dumps(tmp_path)
    assert counts == {
        ("uuid", "json-encode", "slots"): 50000.0,
        ("uuid", "json-encode", "msgspec"): 40000.0,
    }
    table = callgrind_features.format_table(counts, ["uuid"], ["json-encode"], "slots")
    assert table.splitlines()[-1] == "| uuid | 1.25 |"


def test_quick_features_run_writes_the_report(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benches",
            "--features",
            "scalars,decimal_meta,raw",
            "--quick",
            "--no-plots",
            "--no-progress",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "features.json").read_text())
    cells = {(c["feature"], c["cell"]): c for c in data["cells"]}
    assert set(cells["scalars", "json-encode"]["stats"]) == {"slots", "plain", "msgspec"}
    assert set(cells["decimal_meta", "avro-decode"]["stats"]) == {
        "slots",
        "plain",
        "fastavro",
        "fastavro-dicts",
    }
    assert ("raw", "avro-encode") not in cells
    assert {(s["feature"], s["format"]) for s in data["skipped"]} == {
        ("raw", "builtins"),
        ("raw", "avro"),
        ("raw", "pickle"),
    }
    md = (tmp_path / "features.md").read_text()
    assert "Quick run" in md and "| five scalars, no options |" in md
