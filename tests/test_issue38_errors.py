"""Issue 38 items 6, 7, 8 and 12: the ``errors="all"`` collecting decoder under memory pressure
(item 6), its memory as errors nest (item 7), its ``loc`` (item 8), and lax ``from_builtins``
with NaN and the infinities and the smaller points of item 12. Each test holds the input the
issue gives and the limit it now meets.

Memory is measured in a subprocess: its peak resident memory (``VmHWM``) before and after the
call, or an address-space limit (``RLIMIT_AS``) a given amount above what it holds, with
``MIMALLOC_ARENA_RESERVE=0`` so that the extension's own buffers are mapped as they grow (see
test_memory_limits.py). Pydantic is the oracle for where errors are, msgspec for what lax mode
accepts.
"""

from __future__ import annotations

import dataclasses
import decimal
import json
import math
import os
import pickle
import subprocess
import sys
import textwrap
from typing import Annotated, Any, Literal, Optional, Union

import msgpack
import msgspec
import pydantic
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import polycodec
from polycodec import UNSET, Codec, Meta, UnsetType

from json_models import Archive, Linked, Pet, Tree  # isort: skip
from test_lax_msgspec import TYPES, _same  # isort: skip

needs_proc = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="reads VmSize and VmHWM from /proc (Linux)"
)
not_under_asan = pytest.mark.skipif(
    os.environ.get("POLYCODEC_ASAN") == "1",
    reason="ASan's allocator and quarantine change what a memory limit or peak measures",
)

#: The most errors one errors="all" decode collects (docs/errors.md).
CAP = 10_000
CAP_NOTE = f'{CAP} validation errors (errors="all" stops at {CAP}; the input may have more): '

_PRELUDE = r"""
import dataclasses, enum, json, resource, sys, time, typing
from typing import Any, Dict, List, Literal, Optional, Union
import polycodec

def status(key):
    line = [l for l in open("/proc/self/status") if l.startswith(key)][0]
    return int(line.split()[1]) * 1024

def limit_address_space(headroom_kib):
    limit = status("VmSize") + (headroom_kib << 10)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

def outcome(call):
    # What the call raised (or "ok"), the peak resident memory it added and its time.
    before, start = status("VmHWM"), time.perf_counter()
    result = {"outcome": "ok"}
    try:
        call()
    except polycodec.ValidationError as exc:
        result = {"outcome": "ValidationError", "message": str(exc)[:300]}
        try:
            result["errors"] = len(exc.errors())
        except MemoryError:
            result["errors"] = None
    except MemoryError as exc:
        result = {"outcome": "MemoryError", "message": str(exc)[:300]}
    result["grew"] = status("VmHWM") - before
    result["seconds"] = time.perf_counter() - start
    return result
"""


def run_isolated(body: str, *args: str, timeout: float = 240) -> Any:
    """Runs `body` after the prelude in a fresh interpreter, with `args` as sys.argv[1:];
    returns what it prints last, as JSON. A signal (an abort is -6), a panic or a hang fails."""
    package = os.path.dirname(os.path.dirname(polycodec.__file__))
    run = subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(body), *args],
        capture_output=True,
        text=True,
        # A panic's backtrace could itself fail to allocate and hang holding the GIL: with it
        # on, such a panic would show as a timeout here.
        env=dict(os.environ, PYTHONPATH=package, MIMALLOC_ARENA_RESERVE="0", RUST_BACKTRACE="1"),
        timeout=timeout,
    )
    assert run.returncode == 0, (run.returncode, run.stderr[-3000:])
    assert "Panic" not in run.stderr and "panicked" not in run.stderr, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


# Item 6: errors="all" when memory runs out.

_COLLECTING = r"""
case, headroom_kib = sys.argv[1], int(sys.argv[2])
Rec = dataclasses.make_dataclass("Rec", [(f"f{i}", int) for i in range(50)])
Leaf = dataclasses.make_dataclass("Leaf", [("v", int)])

class Colour(enum.Enum):
    RED = "red"

call = None
if case == "missing":
    # The issue's: 100,000 {} (300 KB), 5M missing-field errors.
    codec = polycodec.Codec(List[Rec], errors="all")
    data = b"[" + b",".join([b"{}"] * 100_000) + b"]"
elif case.startswith("nils"):
    count = int(case[len("nils"):])
    codec = polycodec.Codec(List[int], "msgpack", errors="all")
    data = b"\xdd" + count.to_bytes(4, "big") + b"\xc0" * count
elif case == "enum":
    codec = polycodec.Codec(List[Colour], errors="all")
    data = b"[" + b",".join([b'"green"'] * 30_000) + b"]"
elif case == "dict_keys":
    codec = polycodec.Codec(Dict[int, int], errors="all")
    data = ("{" + ",".join(f'"k{i}":1' for i in range(30_000)) + "}").encode()
elif case == "deep":
    doc = {"leaves": [{"v": "x"}] * 5_000}
    for _ in range(499):
        doc = {"next": doc}
    Level = dataclasses.make_dataclass(
        "Level", [("next", "Optional[Level]", None), ("leaves", List[Leaf], None)]
    )
    Level.__module__ = "__main__"
    globals()["Level"] = Level
    codec = polycodec.Codec(Level, errors="all")
    data = polycodec.encode_one(doc, type=Any)
elif case == "builtins":
    codec = polycodec.Codec(List[Rec], errors="all")
    items = [{"f0": "x"}] * 20_000
    call = lambda: codec.from_builtins(items)
else:
    raise SystemExit("unknown case " + case)
if call is None:
    call = lambda: codec.decode_one(data)
if headroom_kib:
    limit_address_space(headroom_kib)
print(json.dumps(outcome(call)))
"""


@needs_proc
@not_under_asan
@pytest.mark.parametrize("case", ["missing", "nils500000", "nils1500000"])
def test_issue38_item6_the_issue_inputs_end_at_the_cap_under_600_mib(case: str) -> None:
    # Before: SIGABRT (`memory allocation of 104 bytes failed`) or `PanicException: PyObject
    # pointer is null`. Now the walk stops at the cap, well inside 600 MiB.
    result = run_isolated(_COLLECTING, case, str(600 << 10))
    assert result["outcome"] == "ValidationError", result
    assert result["errors"] == CAP and result["message"].startswith(CAP_NOTE), result
    assert result["grew"] < 100 << 20, result


@needs_proc
@not_under_asan
@pytest.mark.parametrize("headroom_kib", [3 << 10, 5 << 10, 8 << 10, 12 << 10, 16 << 10])
@pytest.mark.parametrize(
    "case", ["missing", "nils1000000", "enum", "dict_keys", "deep", "builtins"]
)
def test_issue38_item6_memory_running_out_while_collecting_is_a_memory_error(
    case: str, headroom_kib: int
) -> None:
    # With a few MiB left, memory runs out at some allocation of the collection (an error's
    # message, its box, the report's lists, a Python object of the exception): a MemoryError
    # wherever it is, or the whole report where it fits; never an abort, a panic or a hang.
    # (5 MiB for "missing" aborted in an error message's `format!` before messages were
    # written fallibly.)
    result = run_isolated(_COLLECTING, case, str(headroom_kib))
    assert result["outcome"] in ("ValidationError", "MemoryError"), result
    if result["outcome"] == "ValidationError":
        assert result["errors"] in (None, CAP, 5_000), result


def test_issue38_item6_the_cap_is_documented_and_said() -> None:
    codec = Codec(list[int], errors="all")
    for count, listed in [(CAP - 1, CAP - 1), (CAP + 1, CAP), (3 * CAP, CAP)]:
        with pytest.raises(polycodec.ValidationError) as info:
            codec.decode_one(json.dumps(["x"] * count))
        errors = info.value.errors()
        assert len(errors) == listed
        assert [e["loc"] for e in errors[:2]] == [(0,), (1,)] and errors[-1]["loc"] == (listed - 1,)
        assert str(info.value).startswith(CAP_NOTE) == (count > CAP - 1)
        assert info.value.loc == (0,) and info.value.code == "int_type"
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "errors.md")) as page:
        assert "10,000" in page.read()


# Item 7: memory as errors nest.

_NESTED = r"""
case, fmt = sys.argv[1], sys.argv[2]
Leaf = dataclasses.make_dataclass("Leaf", [("v", int)])
Level = dataclasses.make_dataclass(
    "Level", [("next", "Optional[Level]", None), ("leaves", List[Leaf], None)]
)
Box = dataclasses.make_dataclass("Box", [("inner", "Union[Box, str]")])
for cls in (Level, Box):
    cls.__module__ = "__main__"
    globals()[cls.__name__] = cls
if case == "deep":
    # 5,000 errors 500 records deep: 54 KB of JSON.
    doc = {"leaves": [{"v": "x"}] * 5_000}
    for _ in range(499):
        doc = {"next": doc}
    tp, options = Level, {}
else:
    # 400 nested array_like records, each with an item too many (refused with
    # forbid_unknown_fields; skipped without it since item 3), around a 1 MB string.
    doc = "x" * (1 << 20)
    for _ in range(400):
        doc = [doc, 0]
    tp, options = Box, {"array_like": True, "forbid_unknown_fields": True}
data = polycodec.encode_one(doc, fmt, type=Any)
first = polycodec.Codec(tp, fmt, **options)
codec = polycodec.Codec(tp, fmt, errors="all", **options)
try:
    first.decode_one(data)
except polycodec.ValidationError as exc:
    fail_fast = [list(exc.loc), exc.path, str(exc)]
kept = {}
def collect():
    try:
        codec.decode_one(data)
    except polycodec.ValidationError as exc:
        kept["exc"], kept["errors"] = exc, exc.errors()
result = outcome(collect)
exc, errors = kept["exc"], kept["errors"]
result.update(
    input_bytes=len(data),
    count=len(errors),
    first=[list(exc.loc), exc.path, errors[0]["msg"]],
    fail_fast=fail_fast,
    locs=[list(error["loc"]) for error in errors[:2] + errors[-1:]],
)
if case == "strings" and fmt == "json":
    # Each failing record's input holds the input of the one inside it, not a copy.
    inputs = [error["input"] for error in errors]
    result["shared"] = all(outer[0] is inner for inner, outer in zip(inputs, inputs[1:]))
print(json.dumps(result))
"""


@needs_proc
@not_under_asan
@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_issue38_item7_5000_errors_500_records_deep_stay_under_100_mib(fmt: str) -> None:
    # Before: 195-242 MiB (each error kept its own path of 502 steps); now the containers'
    # steps are shared and the locs made when errors() asks.
    result = run_isolated(_NESTED, "deep", fmt)
    assert result["input_bytes"] < (55 << 10), result
    assert result["count"] == 5_000
    assert result["grew"] < 100 << 20, result
    # A bound far above what it takes, against a quadratic walk (before: 5-7 s for 20,000).
    assert result["seconds"] < 30, result
    path = ["next"] * 499 + ["leaves"]
    assert result["locs"] == [path + [0, "v"], path + [1, "v"], path + [4_999, "v"]]
    loc, path_text, msg = result["first"]
    assert [loc, path_text] == result["fail_fast"][:2]
    assert result["fail_fast"][2].startswith(msg + " (at $.next.next.")


@needs_proc
@not_under_asan
@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_issue38_item7_400_failing_records_around_1_mb_stay_under_150_mib(fmt: str) -> None:
    # Before: 410 MiB, each failing container keeping its whole subtree as its input. JSON
    # finds each record's extra item after reading the record inside it, so all 400 fail, each
    # input holding the one inside it; MessagePack's counts refuse the outermost at once.
    result = run_isolated(_NESTED, "strings", fmt)
    assert result["grew"] < 150 << 20, result
    assert result["seconds"] < 30, result
    if fmt == "json":
        assert result["count"] == 400 and result["shared"], result
        assert result["locs"] == [[0] * 399, [0] * 398, []]
    else:
        assert result["count"] == 1 and result["locs"] == [[], []], result
    assert result["first"][:2] == result["fail_fast"][:2]


def test_issue38_item7_locs_are_made_when_asked_and_the_report_pickles() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        Codec(dict[str, list[list[int]]], errors="all").decode_one(
            b'{"k": [["a", 1], [2, "b"]], "j": [["c"]]}'
        )
    exc = info.value
    locs = [("k", 0, 0), ("k", 1, 1), ("j", 0, 0)]
    assert exc.loc == locs[0] and [e["loc"] for e in exc.errors()] == locs
    # A new list of new dicts each time, which the caller may change.
    exc.errors()[0]["loc"] = ()
    assert [e["loc"] for e in exc.errors()] == locs
    again = pickle.loads(pickle.dumps(exc))
    assert again.errors() == exc.errors() and str(again) == str(exc)


# Item 8: the first error is the fail-fast error, with its loc.


@dataclasses.dataclass
class Cat:
    kind: Literal["cat"]
    lives: int


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    lives: int


@dataclasses.dataclass
class Home:
    pet: Union[Cat, Dog]


@dataclasses.dataclass
class Pair:
    pair: tuple[int, int]


@dataclasses.dataclass
class Inner:
    value: int


@dataclasses.dataclass
class Outer:
    next: Inner


@dataclasses.dataclass
class Chunk:
    name: str
    nbytes: float


@dataclasses.dataclass
class Contents:
    contents: list[Chunk]


def _both(tp: Any, fmt: str, data: bytes) -> tuple[Any, Any]:
    with pytest.raises(polycodec.ValidationError) as first:
        Codec(tp, fmt).decode_one(data)
    with pytest.raises(polycodec.ValidationError) as every:
        Codec(tp, fmt, errors="all").decode_one(data)
    return first.value, every.value


def _same_first(first: Any, every: Any) -> None:
    entry = every.errors()[0]
    assert (every.loc, every.path, every.code) == (first.loc, first.path, first.code)
    assert (entry["loc"], entry["msg"], entry["type"]) == (
        first.errors()[0]["loc"],
        first.errors()[0]["msg"],
        first.code,
    )
    assert str(first) == f"{entry['msg']} (at {first.path})"


def _pydantic_locs(model: Any, doc: Any) -> list[tuple[Any, ...]]:
    with pytest.raises(pydantic.ValidationError) as info:
        model.model_validate_json(json.dumps(doc))
    return [tuple(error["loc"]) for error in info.value.errors()]


STRICT = pydantic.ConfigDict(strict=True)


class CatModel(pydantic.BaseModel):
    model_config = STRICT
    kind: Literal["cat"]
    lives: int


class DogModel(pydantic.BaseModel):
    model_config = STRICT
    kind: Literal["dog"]
    lives: int


class HomeModel(pydantic.BaseModel):
    model_config = STRICT
    pet: Annotated[Union[CatModel, DogModel], pydantic.Field(discriminator="kind")]


class PairModel(pydantic.BaseModel):
    model_config = STRICT
    pair: tuple[int, int]


ITEM8 = [
    # (type, pydantic model, document, format, the locs errors() lists)
    (Home, HomeModel, {"pet": {"lives": "x"}}, "json", [("pet", "lives"), ("pet", "kind")]),
    (Home, HomeModel, {"pet": {"lives": "x"}}, "msgpack", [("pet", "lives"), ("pet", "kind")]),
    (Pair, PairModel, {"pair": ["x", 1, 2]}, "json", [("pair", 0), ("pair",)]),
    # MessagePack counts the items first, as pydantic reports it.
    (Pair, PairModel, {"pair": ["x", 1, 2]}, "msgpack", [("pair",)]),
]


@pytest.mark.parametrize("tp, model, doc, fmt, locs", ITEM8)
def test_issue38_item8_a_container_that_fails_after_errors_inside_keeps_its_step(
    tp: Any, model: Any, doc: Any, fmt: str, locs: list[tuple[Any, ...]]
) -> None:
    # Before: ('lives',) for ('pet', 'lives') and (0,) for ('pair', 0): the container's step
    # was added only when it had no error of its own.
    first, every = _both(tp, fmt, polycodec.encode_one(doc, fmt, type=dict))
    _same_first(first, every)
    assert [error["loc"] for error in every.errors()] == locs
    # Every place pydantic finds an error at holds one of ours, or is on the way to one.
    ours = [error["loc"] for error in every.errors()]
    for place in _pydantic_locs(model, doc):
        assert any(loc[: len(place)] == place for loc in ours), (place, ours)


def test_issue38_item8_msgpack_an_int_key_after_a_bad_value() -> None:
    # {"next": {"value": "x", 1: 2}}: a record's key that is no str, after a bad value.
    data = msgpack.packb({"next": {"value": "x", 1: 2}})
    first, every = _both(Outer, "msgpack", data)
    _same_first(first, every)
    assert [(e["loc"], e["type"]) for e in every.errors()] == [
        (("next", "value"), "int_type"),
        (("next",), "dict_key_type"),
    ]


def test_issue38_item8_a_float_out_of_range_has_the_same_path_in_both_modes() -> None:
    # Before, errors="all": $["contents"][0]["nbytes"], the error of reading the value again
    # as Any for its input (whose steps are dict keys), where fail-fast says
    # $.contents[0].nbytes. (A MessagePack float is never out of range.)
    data = b'{"contents": [{"name": "a", "nbytes": 1e400}, {"name": 1, "nbytes": 2}]}'
    first, every = _both(Contents, "json", data)
    _same_first(first, every)
    assert every.path == "$.contents[0].nbytes" and every.code == "finite_number"
    # No input (Any cannot read it either); the walk reads on past it.
    assert "input" not in every.errors()[0]
    assert [e["loc"] for e in every.errors()] == [
        ("contents", 0, "nbytes"),
        ("contents", 1, "name"),
    ]


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "cat", "dog", "a.bin"]),
)
KEYS = st.sampled_from(
    ["name", "animal", "kind", "lives", "good", "label", "contents", "nbytes", "index"]
    + ["owner", "x", "y", "value", "children", "next", "pair", "pet", "zz"]
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=15,
)


@dataclasses.dataclass
class Bounded:
    pair: tuple[int, str]
    xs: Annotated[list[int], Meta(max_length=2)] = dataclasses.field(default_factory=list)
    index: Annotated[dict[str, int], Meta(max_length=1)] = dataclasses.field(default_factory=dict)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@example(doc={"pet": {"lives": "x"}}, model=Home)
@example(doc={"pair": [None, None, None]}, model=Pair)
@example(doc={"name": None, "animal": None, "pair": ["x", "y", 3]}, model=Bounded)
@given(
    doc=DOCUMENTS,
    model=st.sampled_from([Archive, Pet, Tree, Linked, Home, Pair, Bounded, list[Pet]]),
)
def test_issue38_item8_the_first_collected_error_is_the_fail_fast_error(
    fmt: str, doc: Any, model: Any
) -> None:
    def report(errors: Literal["first", "all"]) -> Any:
        codec = Codec(model, "json" if fmt == "builtins" else fmt, errors=errors)
        try:
            if fmt == "builtins":
                codec.from_builtins(doc)
            else:
                codec.decode_one(polycodec.encode_one(doc, fmt, type=Any))
        except polycodec.ValidationError as exc:
            return (exc.loc, exc.path, exc.code, exc.errors()[0]["msg"])
        return None

    assert report("all") == report("first")


# Item 12: lax from_builtins with NaN and the infinities, and the smaller points.

D = decimal.Decimal
NON_FINITE = [
    (math.nan, None),
    (math.inf, None),
    (-math.inf, None),
    (D("NaN"), [D]),
    (D("Infinity"), [D]),
    (D("-Infinity"), [D]),
    (D("1.5"), [D]),
]


def _outcome(call: Any, errors: tuple[type, ...]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except errors:
        return ("refused", None)


@pytest.mark.parametrize("value, keep", NON_FINITE, ids=repr)
def test_issue38_item12_lax_from_builtins_takes_nan_and_infinities_as_msgspec_convert(
    value: Any, keep: Any
) -> None:
    # Before: `expected a finite number, got NaN (JSON numbers are finite)` for float('nan')
    # given for a float, a Decimal, an Optional[float], Any...; `expected float, got Decimal`
    # for Decimal('NaN'). Every single type and union the lax property tests draw.
    bounded = [
        (Annotated[float, Meta(**bound)], Annotated[float, msgspec.Meta(**bound)])
        for bound in [{"ge": 0}, {"lt": 0}, {"le": 1e300}]
    ]
    for tp, their_tp in [(tp, tp) for tp in TYPES] + bounded:
        theirs = _outcome(
            lambda: msgspec.convert(value, their_tp, strict=False), (msgspec.ValidationError,)
        )
        ours = _outcome(
            lambda: polycodec.from_builtins(value, tp, strict=False, builtin_types=keep),
            (polycodec.DecodeError,),
        )
        assert ours[0] == theirs[0], (tp, value, ours, theirs)
        assert ours[0] == "refused" or _same(ours[1], theirs[1]), (tp, value, ours, theirs)


def test_issue38_item12_nan_is_what_messagepack_makes_of_it_and_strict_mode_refuses_it() -> None:
    # Lax from_builtins reads a float object as MessagePack reads a float: the same value or
    # the same error, bounds included (a NaN fails any bound, as it does in MessagePack).
    for tp in [float, Annotated[float, Meta(ge=0)], Annotated[float, Meta(lt=0)], int]:
        for value in [math.nan, math.inf, -math.inf]:
            packed = _outcome(
                lambda: polycodec.decode_one(msgpack.packb(value), tp, "msgpack", strict=False),
                (polycodec.DecodeError,),
            )
            ours = _outcome(
                lambda: polycodec.from_builtins(value, tp, strict=False),
                (polycodec.DecodeError,),
            )
            assert ours[0] == packed[0] and (ours[0] == "refused" or _same(ours[1], packed[1]))
    # Strict mode reads what JSON holds, which has no NaN: unchanged.
    with pytest.raises(polycodec.ValidationError, match="expected a finite number, got NaN"):
        polycodec.from_builtins(math.nan, float)
    with pytest.raises(polycodec.ValidationError, match="expected float, got Decimal"):
        polycodec.from_builtins(D("NaN"), float, builtin_types=[D])
    # A signalling NaN has no float: a ValidationError carrying Decimal's ValueError.
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.from_builtins(D("sNaN"), float, strict=False, builtin_types=[D])
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("kind", [set, frozenset])
def test_issue38_item12_a_signalling_nan_in_a_set_fails_at_its_item(kind: Any) -> None:
    # Before: `Cannot hash a signaling NaN value (at $)`: the set was built in one call.
    tp = kind[D]
    calls = [
        lambda codec: codec.from_builtins([D("1"), D("sNaN")], builtin_types=[D]),
        lambda codec: codec.decode_one(b'["1", "sNaN"]'),
    ]
    for errors in ["first", "all"]:
        for call in calls:
            with pytest.raises(polycodec.ValidationError) as info:
                call(Codec(tp, errors=errors))
            assert (info.value.loc, info.value.path) == ((1,), "$[1]")
            assert "signaling NaN" in str(info.value)
        packed = Codec(tp, "msgpack", errors=errors)
        with pytest.raises(polycodec.ValidationError) as info:
            packed.decode_one(msgpack.packb(["1", "sNaN"]))
        assert info.value.loc == (1,)


@dataclasses.dataclass
class Limited:
    xs: Annotated[list[int], Meta(max_length=2)]
    tags: Annotated[dict[str, int], Meta(max_length=1)] = dataclasses.field(default_factory=dict)


class LimitedModel(pydantic.BaseModel):
    model_config = STRICT
    xs: Annotated[list[int], pydantic.Field(max_length=2)]
    tags: Annotated[dict[str, int], pydantic.Field(max_length=1)] = {}


@pytest.mark.parametrize(
    "doc, field",
    [
        ({"xs": ["a", "b", "c"]}, "xs"),
        ({"xs": [1, "b", 3]}, "xs"),
        ({"xs": [], "tags": {"a": "x", "b": "y"}}, "tags"),
    ],
    ids=["list", "list-one-bad", "dict"],
)
def test_issue38_item12_msgpack_max_length_reports_too_long_with_errors_all(
    doc: Any, field: str
) -> None:
    # Before: errors="all" read the items first and reported their errors only, where
    # fail-fast (MessagePack counts the items up front) reports `too_long`, as pydantic does.
    first, every = _both(Limited, "msgpack", msgpack.packb(doc))
    _same_first(first, every)
    assert [(e["loc"], e["type"]) for e in every.errors()] == [((field,), "too_long")]
    if field == "xs":
        # Pydantic reports a list that is too long alone too (a dict's bad values it reports
        # instead of its length, where MessagePack's fail-fast has counted the entries first).
        assert [e["loc"] for e in every.errors()] == _pydantic_locs(LimitedModel, doc)


@dataclasses.dataclass
class Patch:
    x: int
    y: Union[int, UnsetType] = UNSET
    note: Union[Optional[str], UnsetType] = UNSET


def test_issue38_item12_from_attributes_leaves_an_unset_field_unset() -> None:
    # Before: `expected int, got UnsetType (at $.y)`: the attribute's UNSET was read as a value.
    patch = polycodec.from_builtins(Patch(1), Patch, from_attributes=True)
    assert patch == Patch(1) and patch.y is UNSET and patch.note is UNSET
    assert polycodec.from_builtins(Patch(1, 2, None), Patch, from_attributes=True) == Patch(
        1, 2, None
    )
    # As to_builtins leaves it out, and from_builtins reads that back.
    assert polycodec.to_builtins(Patch(1)) == {"x": 1}
    assert polycodec.from_builtins({"x": 1}, Patch) == Patch(1)
    nested = polycodec.from_builtins([Patch(3)], list[Patch], from_attributes=True)
    assert nested == [Patch(3)] and nested[0].y is UNSET
