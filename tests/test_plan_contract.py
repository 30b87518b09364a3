"""The plan spec's TypedDicts (``polycodec._plan.spec``) against the two sides of the contract.

Rust side: ``src/plan/build.rs`` is read as text. ``build_node`` matches the node kind; each
arm (and each helper it hands the node's ``data`` to, such as ``length_bounds(data)`` or
``build_record(kind, data)``) reads keys as string literals, ``get_bool(data, "nullable")``. The
keys found per kind must be exactly the keys the kind's ``<Kind>Read`` TypedDict declares, and
the field keys ``build_record`` reads from each field dict those of ``FieldRead``: a key added
to, renamed in or dropped from either side fails here.

Python side: plans compiled from a range of types hold, for every node, the keys its kind's
``<Kind>Spec`` declares (all required ones, no undeclared one)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import re
import uuid
from decimal import Decimal
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Dict,
    FrozenSet,
    List,
    Literal,
    NamedTuple,
    Optional,
    Set,
    Tuple,
    TypedDict,
    Union,
)

import pytest

from polycodec import Avro, Extension, Meta, Raw, UnsetType
from polycodec._plan import compile_spec
from polycodec._plan.spec import READ_BY_RUST, SPECS, FieldRead, FieldSpec, PythonMarks

BUILD_RS = Path(__file__).resolve().parent.parent / "src" / "plan" / "build.rs"

# A key read from a spec dict: the dict variable, then the key as a string literal.
_KEY = re.compile(r'\((data|spec), "([a-z_]+)"\)')
# A helper the node's data is handed to: ``tz_rule(data)``, ``build_record(RecordKind::X, data)``.
_HELPER = re.compile(r"\b([a-z_]+)\((?:[A-Za-z_:]+, )?data\)")
# An arm of build_node's match on the kind (rustfmt indents them by eight spaces).
_ARM = re.compile(r'^        ((?:"[a-z_]+"(?: \| )?)+) =>', re.MULTILINE)


def _functions(source: str) -> Dict[str, str]:
    """Each top-level ``fn``'s text, by name."""
    starts = [(m.group(1), m.start()) for m in re.finditer(r"^(?:pub )?fn (\w+)", source, re.M)]
    ends = [start for _, start in starts[1:]] + [len(source)]
    return {name: source[start:end] for (name, start), end in zip(starts, ends)}


def _keys(text: str, functions: Dict[str, str], variable: str, seen: Set[str]) -> Set[str]:
    """The keys ``text`` reads from ``variable``, following the helpers it hands ``data`` to."""
    found = {key for var, key in _KEY.findall(text) if var == variable}
    for helper in _HELPER.findall(text):
        if helper in functions and helper not in seen:
            seen.add(helper)
            found |= _keys(functions[helper], functions, variable, seen)
    return found


def rust_reads() -> Tuple[Dict[str, Set[str]], Set[str]]:
    """(kind -> the data keys build.rs reads for it, the keys it reads from a field dict)."""
    source = BUILD_RS.read_text(encoding="utf-8")
    functions = _functions(source)
    body = functions["build_node"]
    arms = list(_ARM.finditer(body))
    assert arms, "no match arm found in build_node"
    fallback = body.index("\n        other =>")
    per_kind: Dict[str, Set[str]] = {}
    for arm, following in zip(arms, arms[1:] + [None]):
        end = following.start() if following is not None else fallback
        keys = _keys(body[arm.end() : end], functions, "data", set())
        for kind in re.findall(r'"([a-z_]+)"', arm.group(1)):
            per_kind[kind] = keys
    field_keys = _keys(functions["build_record"], functions, "spec", set())
    return per_kind, field_keys


def _declared(typed_dict: Any) -> Set[str]:
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)


def test_the_parser_finds_what_build_rs_reads() -> None:
    """The reader itself: known reads of build.rs are found (through helpers, too)."""
    per_kind, field_keys = rust_reads()
    assert per_kind["any"] == set()
    assert per_kind["raw"] == {"nullable"}
    assert {"min_length", "max_length", "pattern"} == per_kind["str"]  # via length_bounds
    assert per_kind["datetime"] == {"tz"}  # via tz_rule
    assert {"cls", "members", "values", "names", "flag"} == per_kind["enum"]  # via build_enum
    assert per_kind["list"] == per_kind["var_tuple"]
    assert {"fields", "class_tag", "before_fill"} <= per_kind["dataclass"]
    assert {"wire_name", "default", "aliases"} <= field_keys


def test_every_kind_build_rs_reads_has_a_typed_dict() -> None:
    per_kind, _ = rust_reads()
    assert set(per_kind) == set(READ_BY_RUST)
    # ``alias`` is the one kind only Python makes: a placeholder dropped before Rust sees a plan.
    assert set(SPECS) == set(READ_BY_RUST) | {"alias"}


@pytest.mark.parametrize("kind", sorted(READ_BY_RUST))
def test_read_keys_are_exactly_what_build_rs_reads(kind: str) -> None:
    per_kind, _ = rust_reads()
    assert _declared(READ_BY_RUST[kind]) == per_kind[kind]


@pytest.mark.parametrize("kind", sorted(READ_BY_RUST))
def test_spec_extends_read_with_python_only_keys(kind: str) -> None:
    """``<Kind>Spec`` holds every key Rust reads (required) plus keys Rust never reads."""
    read, spec = READ_BY_RUST[kind], SPECS[kind]
    assert set(read.__required_keys__) <= set(spec.__required_keys__)
    python_only = _declared(spec) - _declared(read)
    per_kind, _ = rust_reads()
    assert not python_only & per_kind[kind]
    assert _declared(PythonMarks) <= set(spec.__optional_keys__)


def test_field_keys_are_exactly_what_build_rs_reads() -> None:
    _, field_keys = rust_reads()
    assert _declared(FieldRead) == field_keys
    assert _declared(FieldSpec) - _declared(FieldRead) == {"doc"}


# -- compiled plans hold the declared keys ---------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Movie(TypedDict):
    title: str
    year: int


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents


@dataclasses.dataclass
class Cat:
    kind: Literal["cat"]
    lives: Annotated[int, Meta(ge=0, le=9)]


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    name: Annotated[str, Meta(min_length=1, pattern="^[a-z]+$")]


@dataclasses.dataclass
class Zoo:
    animals: List[Union[Cat, Dog]]
    tags: Set[str]
    frozen_tags: FrozenSet[int]
    rest: Tuple[int, ...]
    pair: Pair
    movie: Movie
    point: Tuple[float, Decimal]
    by_id: Dict[uuid.UUID, Optional[datetime.datetime]]
    when: Tuple[datetime.date, datetime.time, datetime.timedelta]
    colour: Colour
    flag: bool
    blob: bytes
    anything: Any
    price: Money
    maybe_price: Optional[Money]
    either: Union[int, str, None]
    child: Optional["Zoo"] = None
    note: Union[str, UnsetType] = dataclasses.field(default_factory=str)


_EXTENSIONS = {Money: Extension(int, encode=lambda m: m.cents, decode=Money)}


def _check(nodes: List[Tuple[str, Dict[str, Any]]]) -> Set[str]:
    kinds = set()
    for kind, data in nodes:
        spec = SPECS[kind]
        assert set(spec.__required_keys__) <= set(data), (kind, data)
        assert set(data) <= _declared(spec), (kind, set(data) - _declared(spec))
        if kind in ("dataclass", "typeddict", "namedtuple"):
            for field in data["fields"]:
                assert set(field) == _declared(FieldSpec), field
        kinds.add(kind)
    return kinds


@pytest.mark.parametrize("format", ["json", "msgpack", "avro", "pickle"])
def test_compiled_nodes_hold_the_declared_keys(format: str) -> None:
    nodes, _ = compile_spec(Zoo, format=format, extensions=_EXTENSIONS)
    kinds = _check(nodes)
    expected = {"dataclass", "namedtuple", "typeddict", "enum", "literal", "union", "str", "int"}
    expected |= {"float", "decimal", "set", "frozenset", "var_tuple", "list", "tuple", "dict"}
    expected |= {"uuid", "datetime", "date", "time", "timedelta", "bool", "bytes", "any"}
    expected |= {"extension", "none"}
    assert expected <= kinds
    if format in ("avro", "pickle"):
        assert "unset" in kinds
    else:
        assert "tagged_union" in kinds


@dataclasses.dataclass
class Carrier:
    raw: Optional[Raw]
    stamp: Annotated[datetime.datetime, Avro("timestamp-micros")]


def test_raw_and_avro_marks_hold_the_declared_keys() -> None:
    nodes, _ = compile_spec(Carrier, format="json")
    assert "raw" in _check(nodes)
    assert any("avro" in data for _, data in nodes)
