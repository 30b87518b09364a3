"""Tests of the plan spec produced by ``polycodec._plan.compile_spec`` (docs/plan-spec.md)."""

import collections
import collections.abc
import dataclasses
import datetime
import enum
import importlib
import pickle
import re
import sys
import types
import typing
import uuid
from decimal import Decimal
from pathlib import Path
from typing import (
    AbstractSet,
    Annotated,
    Any,
    Dict,
    FrozenSet,
    Generic,
    List,
    Literal,
    Mapping,
    MutableMapping,
    MutableSequence,
    MutableSet,
    NamedTuple,
    NewType,
    NotRequired,
    Optional,
    Required,
    Sequence,
    Set,
    Tuple,
    TypedDict,
    TypeVar,
    Union,
)

import annotated_types as at
import pytest


def _load() -> Tuple[types.ModuleType, types.ModuleType]:
    """Import the real package if it works; otherwise load the two pure-Python modules alone.

    The package ``__init__`` imports the compiled extension, which may not be built; the
    fallback mounts ``python/polycodec`` under a private package name so that ``polycodec``
    itself is never shadowed for other tests.
    """
    try:
        from polycodec import _meta, _plan

        return _plan, _meta
    except ImportError:
        name = "_polycodec_plan_under_test"
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(Path(__file__).resolve().parents[1] / "python" / "polycodec")]
            sys.modules[name] = package
        return importlib.import_module(f"{name}._plan"), importlib.import_module(f"{name}._meta")


_plan, _meta = _load()
compile_spec = _plan.compile_spec
NODEFAULT = _plan.NODEFAULT
Meta = _meta.Meta

T = TypeVar("T")
U = TypeVar("U")


def compile_root(tp: Any, **options: Any) -> Tuple[List[Tuple[str, dict]], Tuple[str, dict]]:
    nodes, root = compile_spec(tp, **options)
    return nodes, nodes[root]


def kind_of(tp: Any, **options: Any) -> str:
    return compile_root(tp, **options)[1][0]


def field_node(nodes: list, record: Tuple[str, dict], name: str) -> Tuple[str, dict]:
    (field,) = [f for f in record[1]["fields"] if f["name"] == name]
    return nodes[field["type"]]


def reachable(nodes: list, root: int) -> set:
    """Indices reachable from root, following every index-bearing key of the spec."""
    seen = set()
    todo = [root]
    while todo:
        index = todo.pop()
        if index in seen:
            continue
        seen.add(index)
        kind, data = nodes[index]
        if "item" in data:
            todo.append(data["item"])
        todo += data.get("items", []) + data.get("variants", [])
        if kind == "dict":
            todo += [data["key"], data["value"]]
        todo += [record for _, record in data.get("tags", [])]
        todo += [f["type"] for f in data.get("fields", [])]
    return seen


# --------------------------------------------------------------------------------------------
# Scalars


NUMBER_KEYS = {"ge", "gt", "le", "lt", "multiple_of"}


@pytest.mark.parametrize(
    "tp, kind, keys",
    [
        (None, "none", set()),
        (type(None), "none", set()),
        (bool, "bool", set()),
        (int, "int", NUMBER_KEYS),
        (float, "float", NUMBER_KEYS),
        (str, "str", {"min_length", "max_length", "pattern"}),
        (bytes, "bytes", {"cls", "min_length", "max_length"}),
        (bytearray, "bytes", {"cls", "min_length", "max_length"}),
        (Decimal, "decimal", {"max_digits", "decimal_places", "ge", "gt", "le", "lt"}),
        (datetime.datetime, "datetime", {"tz"}),
        (datetime.date, "date", set()),
        (datetime.time, "time", {"tz"}),
        (datetime.timedelta, "timedelta", set()),
        (uuid.UUID, "uuid", set()),
        (Any, "any", set()),
        (object, "any", set()),
    ],
)
def test_scalars(tp: Any, kind: str, keys: set) -> None:
    nodes, root = compile_spec(tp)
    assert root == 0 and len(nodes) == 1
    assert nodes[0][0] == kind
    assert set(nodes[0][1]) == keys
    if kind == "bytes":
        assert nodes[0][1]["cls"] is tp
    else:
        assert all(v is None for v in nodes[0][1].values())


def test_unsupported_top_level_type_names_it() -> None:
    with pytest.raises(TypeError, match=r"cannot handle the type 'complex': unsupported type"):
        compile_spec(complex)


def test_nested_top_level_error_names_both() -> None:
    with pytest.raises(TypeError, match=r"'complex' within the type 'list\[complex\]'"):
        compile_spec(list[complex])


@pytest.mark.parametrize("tp", [type, collections.OrderedDict, int | complex, "Foo"])
def test_other_unsupported(tp: Any) -> None:
    with pytest.raises(TypeError, match="polycodec cannot handle"):
        compile_spec(tp)


# --------------------------------------------------------------------------------------------
# Enums and literals


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"
    CRIMSON = "red"  # an alias: not a separate member


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    READ = "r"
    WRITE = "w"


class Mixed(enum.Enum):
    ONE = 1
    TWO = "two"


class Perm(enum.Flag):
    R = 1
    W = 2


class Empty(enum.Enum):
    pass


class FloatEnum(enum.Enum):
    HALF = 0.5


def test_enum_str() -> None:
    _, (kind, data) = compile_root(Colour)
    assert kind == "enum"
    assert data["cls"] is Colour
    assert data["members"] == [Colour.RED, Colour.GREEN]
    assert data["values"] == ["red", "green"]
    assert data["names"] == ["RED", "GREEN"]
    assert data["value_kind"] == "str"


@pytest.mark.parametrize("cls, value_kind", [(Level, "int"), (Mode, "str"), (Mixed, "mixed")])
def test_enum_value_kind(cls: type, value_kind: str) -> None:
    assert compile_root(cls)[1][1]["value_kind"] == value_kind


@pytest.mark.parametrize(
    "cls, message",
    [(Empty, "no members"), (FloatEnum, "str or int")],
)
def test_enum_rejected(cls: type, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        compile_spec(cls)


def test_flag_enum() -> None:
    _, (kind, data) = compile_root(Perm)
    assert kind == "enum"
    assert data["flag"] is True
    assert data["members"] == [Perm.R, Perm.W]
    assert data["value_kind"] == "int"
    assert compile_root(Colour)[1][1]["flag"] is False


def test_literal_values_flatten_and_dedupe() -> None:
    _, (kind, data) = compile_root(Literal["a", Literal[1, Literal[True]], "a"])
    assert kind == "literal"
    assert data == {"values": ["a", 1, True]}


def test_literal_none_alone_is_none() -> None:
    assert kind_of(Literal[None]) == "none"


def test_literal_with_none_is_union() -> None:
    nodes, (kind, data) = compile_root(Literal["x", None, "y"])
    assert kind == "union"
    assert [nodes[v] for v in data["variants"]] == [
        ("literal", {"values": ["x", "y"]}),
        ("none", {}),
    ]


@pytest.mark.parametrize("value", [Level.LOW, b"x", 1.5])
def test_literal_bad_values(value: Any) -> None:
    with pytest.raises(TypeError, match="Literal values must be str, int, bool or None"):
        compile_spec(Literal[value])


# --------------------------------------------------------------------------------------------
# Unions


def variant_kinds(tp: Any) -> List[str]:
    nodes, (kind, data) = compile_root(tp)
    assert kind == "union"
    return [nodes[v][0] for v in data["variants"]]


def test_optional() -> None:
    assert variant_kinds(Optional[int]) == ["int", "none"]
    assert variant_kinds(int | None) == ["int", "none"]
    assert variant_kinds(Union[None, str]) == ["none", "str"]


def test_union_flattens_through_aliases_and_dedupes_none() -> None:
    MaybeStr = NewType("MaybeStr", Optional[str])  # type: ignore[misc]
    assert variant_kinds(Union[MaybeStr, int, None, Literal[None]]) == ["str", "none", "int"]


def test_union_merges_literals() -> None:
    nodes, (_, data) = compile_root(Union[Literal["a"], int, Literal["b", "a"]])
    assert [nodes[v] for v in data["variants"]][0] == ("literal", {"values": ["a", "b"]})
    assert len(data["variants"]) == 2


def test_union_collapses_to_single() -> None:
    assert kind_of(Union[Literal["a"], Literal["b"]]) == "literal"


@pytest.mark.parametrize("tp", [Union[int, Any], Optional[Any], Union[str, object]])
def test_any_in_union_is_any(tp: Any) -> None:
    nodes, root = compile_spec(tp)
    assert nodes == [("any", {})] and root == 0


@pytest.mark.parametrize(
    "tp",
    [
        int | float,
        int | bool,
        str | int | float | bool | None,
        Level | Mode,
        list[int] | dict[str, int] | str,
        Literal["a", 1] | float,
        Colour | None,
    ],
)
def test_unambiguous_unions(tp: Any) -> None:
    assert kind_of(tp) == "union"


@pytest.mark.parametrize(
    "tp, category",
    [
        (int | Level, "integer"),
        (Literal[1] | int, "integer"),
        (str | datetime.datetime, "string"),
        (bytes | uuid.UUID, "string"),
        (Decimal | str, "string"),
        (Mode | Literal["x"], "string"),
        (Mixed | str, "string"),
        (Literal[True] | bool, "boolean"),
        (list[int] | tuple[int, str], "array"),
        (set[int] | frozenset[str], "array"),
        (dict[str, int] | Mapping[int, str], "object"),
    ],
)
def test_ambiguous_unions(tp: Any, category: str) -> None:
    with pytest.raises(TypeError, match=f"ambiguous union: .* both {category} values"):
        compile_spec(tp)


# --------------------------------------------------------------------------------------------
# Collections


@pytest.mark.parametrize(
    "tp, kind",
    [
        (list[int], "list"),
        (List[int], "list"),
        (Sequence[int], "list"),
        (MutableSequence[int], "list"),
        (collections.abc.Sequence[int], "list"),
        (set[int], "set"),
        (Set[int], "set"),
        (AbstractSet[int], "set"),
        (MutableSet[int], "set"),
        (collections.abc.Set[int], "set"),
        (frozenset[int], "frozenset"),
        (FrozenSet[int], "frozenset"),
        (tuple[int, ...], "var_tuple"),
        (Tuple[int, ...], "var_tuple"),
    ],
)
def test_item_collections(tp: Any, kind: str) -> None:
    nodes, (got, data) = compile_root(tp)
    assert got == kind
    assert data == {"item": data["item"], "min_length": None, "max_length": None}
    assert nodes[data["item"]][0] == "int"


@pytest.mark.parametrize(
    "tp, kind",
    [
        (list, "list"),
        (List, "list"),
        (collections.abc.Sequence, "list"),
        (set, "set"),
        (frozenset, "frozenset"),
        (tuple, "var_tuple"),
        (Tuple, "var_tuple"),
    ],
)
def test_bare_collections_hold_any(tp: Any, kind: str) -> None:
    nodes, (got, data) = compile_root(tp)
    assert got == kind and nodes[data["item"]] == ("any", {})


def test_fixed_tuple() -> None:
    nodes, (kind, data) = compile_root(tuple[int, str, None])
    assert kind == "tuple"
    assert [nodes[i][0] for i in data["items"]] == ["int", "str", "none"]
    assert compile_root(tuple[()])[1] == ("tuple", {"items": []})
    assert compile_root(Tuple[()])[1] == ("tuple", {"items": []})


def test_bad_ellipsis_tuple() -> None:
    with pytest.raises(TypeError, match="'...' is only allowed"):
        compile_spec(Tuple[int, str, ...])


@pytest.mark.parametrize("tp", [dict[str, int], Dict[str, int], Mapping[str, int]])
def test_dict(tp: Any) -> None:
    nodes, (kind, data) = compile_root(tp)
    assert kind == "dict"
    assert set(data) == {"key", "value", "min_length", "max_length"}
    assert nodes[data["key"]][0] == "str" and nodes[data["value"]][0] == "int"


@pytest.mark.parametrize("tp", [dict, Dict, MutableMapping, collections.abc.Mapping])
def test_bare_dict_holds_any(tp: Any) -> None:
    nodes, (kind, data) = compile_root(tp)
    assert kind == "dict"
    assert nodes[data["key"]] == ("any", {}) and nodes[data["value"]] == ("any", {})


UserId = NewType("UserId", str)


@pytest.mark.parametrize(
    "key, kind",
    [
        (str, "str"),
        (int, "int"),
        (Colour, "enum"),
        (Level, "enum"),
        (uuid.UUID, "uuid"),
        (Literal["a", "b"], "literal"),
        (UserId, "str"),
        (Annotated[str, Meta(max_length=3)], "str"),
    ],
)
def test_dict_key_kinds(key: Any, kind: str) -> None:
    nodes, (_, data) = compile_root(dict[key, int])
    assert nodes[data["key"]][0] == kind


@pytest.mark.parametrize(
    "key", [float, bytes, tuple[int, int], Optional[str], Literal[True], datetime.date]
)
def test_dict_bad_keys(key: Any) -> None:
    with pytest.raises(TypeError, match="dict keys must be str, int, Enum, UUID or Literal"):
        compile_spec(dict[key, int])


# --------------------------------------------------------------------------------------------
# Dataclasses


@dataclasses.dataclass
class Plain:
    a: int
    b: str = "x"
    c: List[int] = dataclasses.field(default_factory=list)
    d: typing.ClassVar[int] = 3


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FrozenSlots:
    a: int
    b: Optional[float] = None


@dataclasses.dataclass
class WithPostInit:
    a: int
    total: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.total = self.a * 2


@dataclasses.dataclass
class Child(Plain):
    e: bool = False


@dataclasses.dataclass
class HasInitVar:
    a: int
    scale: dataclasses.InitVar[int] = 1


def test_dataclass_record() -> None:
    nodes, root = compile_spec(Plain)
    kind, data = nodes[root]
    assert kind == "dataclass"
    assert data["cls"] is Plain and data["name"] == "Plain" and data["module"] == __name__
    assert data["post_init"] is False and data["frozen"] is False and data["slots"] is False
    assert data["forbid_unknown_fields"] is False and data["omit_defaults"] is False
    assert data["array_like"] is False and data["tag"] is None and data["class_tag"] is None
    a, b, c = data["fields"]
    assert a == {
        "name": "a",
        "wire_name": "a",
        "aliases": (),
        "doc": None,
        "type": a["type"],
        "default": NODEFAULT,
        "default_factory": None,
        "required": True,
        "wire": True,
        "unset": False,
    }
    assert nodes[a["type"]][0] == "int"
    assert (b["default"], b["default_factory"], b["required"]) == ("x", None, False)
    assert (c["default"], c["default_factory"], c["required"]) == (NODEFAULT, list, False)
    assert nodes[c["type"]][0] == "list"


def test_dataclass_frozen_slots_kw_only() -> None:
    _, (_, data) = compile_root(FrozenSlots)
    assert data["frozen"] is True and data["slots"] is True
    assert [f["name"] for f in data["fields"]] == ["a", "b"]
    assert [f["required"] for f in data["fields"]] == [True, False]


def test_dataclass_init_false_and_post_init() -> None:
    _, (_, data) = compile_root(WithPostInit)
    assert data["post_init"] is True
    total = data["fields"][1]
    assert total["name"] == "total" and total["wire"] is False and total["default"] == 0


def test_dataclass_inheritance() -> None:
    _, (_, data) = compile_root(Child)
    assert [f["name"] for f in data["fields"]] == ["a", "b", "c", "e"]
    assert data["name"] == "Child"


def test_initvar_rejected() -> None:
    with pytest.raises(TypeError, match=r"'InitVar\[int\]' of field 'HasInitVar.scale'"):
        compile_spec(HasInitVar)


@dataclasses.dataclass
class Point:
    x: complex


@dataclasses.dataclass
class Shape:
    points: List[Point]


@dataclasses.dataclass
class Deep:
    values: Dict[str, List[complex]]


def test_field_error_names_class_and_field() -> None:
    expected = (
        "polycodec cannot handle the annotation 'complex' of field 'Point.x': unsupported type"
    )
    with pytest.raises(TypeError, match=re.escape(expected)):
        compile_spec(Point)
    with pytest.raises(TypeError, match=re.escape(expected)):
        compile_spec(Shape)


def test_nested_field_error_names_enclosing_field() -> None:
    with pytest.raises(
        TypeError,
        match=r"'complex' \(within 'Dict\[str, List\[complex\]\]'\) of field 'Deep.values'",
    ):
        compile_spec(Deep)


@dataclasses.dataclass
class Unresolvable:
    x: "DoesNotExist"  # type: ignore[name-defined] # noqa: F821


def test_unresolvable_annotation() -> None:
    with pytest.raises(TypeError, match="cannot resolve the annotations of 'Unresolvable'"):
        compile_spec(Unresolvable)


def test_forward_ref_outside_a_class() -> None:
    with pytest.raises(TypeError, match="unresolved forward reference"):
        compile_spec(List["Plain"])


# --------------------------------------------------------------------------------------------
# TypedDict and NamedTuple


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


class Partial(TypedDict, total=False):
    title: Required[str]
    year: int


class MovieWithTags(Movie):
    tags: List[str]


def test_typeddict() -> None:
    nodes, (kind, data) = compile_root(Movie)
    assert kind == "typeddict"
    assert data["frozen"] is False and data["post_init"] is False and data["slots"] is False
    fields = {f["name"]: f for f in data["fields"]}
    assert fields["title"]["required"] is True and fields["year"]["required"] is False
    assert fields["year"]["default"] is NODEFAULT and fields["year"]["default_factory"] is None
    assert nodes[fields["year"]["type"]][0] == "int"


def test_typeddict_total_false_and_inheritance() -> None:
    _, (_, data) = compile_root(Partial)
    assert [(f["name"], f["required"]) for f in data["fields"]] == [
        ("title", True),
        ("year", False),
    ]
    _, (_, data) = compile_root(MovieWithTags)
    assert [(f["name"], f["required"]) for f in data["fields"]] == [
        ("title", True),
        ("year", False),
        ("tags", True),
    ]


class Pair(NamedTuple):
    left: int
    right: str = "r"


Legacy = collections.namedtuple("Legacy", ["a", "b"], defaults=[2])


def test_namedtuple() -> None:
    nodes, (kind, data) = compile_root(Pair)
    assert kind == "namedtuple"
    assert data["frozen"] is True
    left, right = data["fields"]
    assert (left["name"], left["required"], left["default"]) == ("left", True, NODEFAULT)
    assert (right["name"], right["required"], right["default"]) == ("right", False, "r")
    assert [nodes[f["type"]][0] for f in data["fields"]] == ["int", "str"]


def test_untyped_namedtuple_fields_are_any() -> None:
    nodes, (_, data) = compile_root(Legacy)
    assert [nodes[f["type"]][0] for f in data["fields"]] == ["any", "any"]
    assert [f["required"] for f in data["fields"]] == [True, False]


# --------------------------------------------------------------------------------------------
# NewType and Annotated constraints


def test_newtype_resolves_recursively() -> None:
    Inner = NewType("Inner", int)
    Outer = NewType("Outer", Inner)  # type: ignore[valid-newtype]
    assert kind_of(Outer) == "int"
    assert kind_of(List[Outer]) == "list"


def test_meta_constraints_merge() -> None:
    _, (kind, data) = compile_root(Annotated[str, Meta(min_length=1, max_length=5, pattern="^a")])
    assert kind == "str"
    assert data["min_length"] == 1 and data["max_length"] == 5
    assert isinstance(data["pattern"], re.Pattern) and data["pattern"].pattern == "^a"


@pytest.mark.parametrize(
    "marker, key, value",
    [
        (at.Ge(1), "ge", 1),
        (at.Gt(1), "gt", 1),
        (at.Le(1), "le", 1),
        (at.Lt(1), "lt", 1),
        (at.MultipleOf(3), "multiple_of", 3),
    ],
)
def test_annotated_types_numeric(marker: Any, key: str, value: Any) -> None:
    assert compile_root(Annotated[int, marker])[1][1][key] == value


def test_annotated_types_grouped_and_lengths() -> None:
    data = compile_root(Annotated[float, at.Interval(gt=0, le=1.5)])[1][1]
    assert (data["gt"], data["le"], data["ge"], data["lt"]) == (0, 1.5, None, None)
    data = compile_root(Annotated[List[int], at.Len(2, 4)])[1][1]
    assert (data["min_length"], data["max_length"]) == (2, 4)
    data = compile_root(Annotated[bytes, at.MinLen(1), at.MaxLen(9)])[1][1]
    assert (data["min_length"], data["max_length"]) == (1, 9)


def test_annotated_types_timezone() -> None:
    assert compile_root(Annotated[datetime.datetime, at.Timezone(...)])[1][1]["tz"] is True
    assert compile_root(Annotated[datetime.time, at.Timezone(None)])[1][1]["tz"] is False
    with pytest.raises(TypeError, match="specific zone"):
        compile_spec(Annotated[datetime.datetime, at.Timezone("UTC")])


def test_meta_tz_and_decimal() -> None:
    assert compile_root(Annotated[datetime.datetime, Meta(tz=False)])[1][1]["tz"] is False
    data = compile_root(Annotated[Decimal, Meta(max_digits=5, decimal_places=2, ge=0, lt=0.5)])[1][
        1
    ]
    assert data["max_digits"] == 5 and data["decimal_places"] == 2
    assert data["ge"] == Decimal(0) and type(data["ge"]) is Decimal
    assert data["lt"] == Decimal("0.5") and type(data["lt"]) is Decimal


def test_bound_conversions() -> None:
    assert compile_root(Annotated[int, Meta(ge=2.0)])[1][1]["ge"] == 2
    assert type(compile_root(Annotated[int, Meta(ge=2.0)])[1][1]["ge"]) is int
    assert compile_root(Annotated[float, Meta(le=Decimal("2.5"))])[1][1]["le"] == 2.5
    with pytest.raises(TypeError, match="must be an integer for an int"):
        compile_spec(Annotated[int, Meta(ge=0.5)])


def test_unknown_metadata_ignored() -> None:
    class FieldInfo:  # a stand-in for another library's marker (pydantic's Field, ...)
        pass

    markers = ("doc", object(), FieldInfo(), at.doc("text"), at.Unit("m"))
    nodes, (kind, data) = compile_root(Annotated[(int, *markers)])  # type: ignore[misc]
    assert kind == "int" and all(v is None for v in data.values()) and len(nodes) == 1


class _OtherLibrarysMarker(at.BaseMetadata):  # another library's constraint (pydantic's Strict)
    pass


@pytest.mark.parametrize(
    "hint, marker",
    [
        (Annotated[str, at.Predicate(str.isdigit)], "Predicate"),
        (at.LowerCase[str], "Predicate(str.islower)"),
        (at.UpperCase[str], "Predicate(str.isupper)"),
        (at.IsDigits[str], "Predicate(str.isdigit)"),
        (at.IsFinite[float], "Predicate(math.isfinite)"),
        (at.IsNan[float], "Predicate(math.isnan)"),
        (at.IsNotInfinite[float], "Predicate(Not"),
        (Optional[Annotated[int, at.Predicate(lambda v: v > 0)]], "Predicate"),
        (Annotated[int, at.Not(bool)], "Not("),
        (Annotated[int, _OtherLibrarysMarker()], "_OtherLibrarysMarker"),
    ],
)
def test_unenforced_annotated_types_refused(hint: Any, marker: str) -> None:
    """Issue 14, case 12: a validator polycodec does not run is refused at build time, with
    the marker and the field named, instead of being silently dropped."""

    @dataclasses.dataclass
    class Form:
        value: hint  # type: ignore[valid-type]

    for fmt in ("json", "msgpack", "avro", "pickle"):
        with pytest.raises(TypeError) as info:
            compile_spec(Form, format=fmt)
        message = str(info.value)
        assert "Form.value" in message and marker in message and "not enforced" in message


def test_later_bound_replaces_exclusive_partner() -> None:
    NonNegative = NewType("NonNegative", Annotated[int, at.Ge(0)])  # type: ignore[misc]
    data = compile_root(Annotated[NonNegative, at.Gt(5)])[1][1]
    assert (data["ge"], data["gt"]) == (None, 5)


def test_constraints_on_union_apply_to_fitting_variants() -> None:
    nodes, (kind, data) = compile_root(Annotated[Optional[int], Meta(ge=0)])
    assert kind == "union"
    assert [nodes[v] for v in data["variants"]][0][1]["ge"] == 0
    nodes, (_, data) = compile_root(Annotated[Union[str, List[int]], Meta(max_length=3)])
    assert all(nodes[v][1]["max_length"] == 3 for v in data["variants"])


@pytest.mark.parametrize(
    "tp, key",
    [
        (Annotated[str, Meta(ge=1)], "ge"),
        (Annotated[bool, at.Gt(0)], "gt"),
        (Annotated[int, Meta(min_length=1)], "min_length"),
        (Annotated[tuple[int, int], at.MaxLen(2)], "max_length"),
        (Annotated[bytes, Meta(pattern="x")], "pattern"),
        (Annotated[float, Meta(max_digits=3)], "max_digits"),
        (Annotated[int, Meta(decimal_places=3)], "decimal_places"),
        (Annotated[Decimal, Meta(multiple_of=2)], "multiple_of"),
        (Annotated[datetime.date, Meta(tz=True)], "tz"),
        (Annotated[Optional[int], Meta(pattern="x")], "pattern"),
        (Annotated[Plain, Meta(min_length=1)], "min_length"),
    ],
)
def test_misapplied_constraints(tp: Any, key: str) -> None:
    with pytest.raises(TypeError, match=f"the constraint '{key}' applies only to"):
        compile_spec(tp)


@pytest.mark.parametrize(
    "tp, message",
    [
        (Annotated[str, at.MinLen(5), at.MaxLen(2)], "exceeds max_length"),
        (Annotated[int, at.Ge(5), at.Le(2)], "exceeds the upper bound"),
        (Annotated[int, at.MultipleOf(0)], "must be finite and > 0"),
        (Annotated[str, at.MinLen(-1)], "non-negative int"),
        (Annotated[int, at.Ge("1")], "must be a number"),
        (Annotated[str, at.MaxLen(True)], "not a bool"),
    ],
)
def test_invalid_merged_constraints(tp: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        compile_spec(tp)


Short = Annotated[str, Meta(max_length=3)]


@dataclasses.dataclass
class SharesAlias:
    a: Short
    b: Annotated[Short, Meta(min_length=1)]
    c: str


def test_annotated_nodes_are_never_shared() -> None:
    nodes, root = compile_spec(SharesAlias)
    a, b, c = (nodes[f["type"]] for f in nodes[root][1]["fields"])
    assert (a[1]["min_length"], a[1]["max_length"]) == (None, 3)
    assert (b[1]["min_length"], b[1]["max_length"]) == (1, 3)
    assert (c[1]["min_length"], c[1]["max_length"]) == (None, None)
    assert len({f["type"] for f in nodes[root][1]["fields"]}) == 3


def test_no_orphan_nodes() -> None:
    for tp in (
        SharesAlias,
        Annotated[Optional[int], Meta(ge=0)],
        Union[Literal["a"], Literal["b"]],
    ):
        nodes, root = compile_spec(tp)
        assert reachable(nodes, root) == set(range(len(nodes)))


# --------------------------------------------------------------------------------------------
# Generics


@dataclasses.dataclass
class Box(Generic[T]):
    item: T
    items: List[T]


@dataclasses.dataclass
class IntBox(Box[int]):
    label: str = ""


@dataclasses.dataclass
class PairBox(Generic[T, U]):
    first: Box[T]
    second: Optional[U] = None


class GenericTD(TypedDict, Generic[T]):
    value: T


class GenericNT(NamedTuple, Generic[T]):
    value: T


def test_generic_dataclass_parametrised() -> None:
    nodes, (kind, data) = compile_root(Box[int])
    assert kind == "dataclass" and data["cls"] is Box
    item, items = data["fields"]
    assert nodes[item["type"]][0] == "int"
    assert nodes[nodes[items["type"]][1]["item"]][0] == "int"


def test_generic_dataclass_unbound_is_any() -> None:
    nodes, (_, data) = compile_root(Box)
    assert nodes[data["fields"][0]["type"]][0] == "any"


def test_generic_base_bound_by_subclass() -> None:
    nodes, (_, data) = compile_root(IntBox)
    assert [nodes[f["type"]][0] for f in data["fields"]] == ["int", "list", "str"]


def test_generic_nested_substitution_and_memo_by_args() -> None:
    nodes, (_, data) = compile_root(PairBox[str, float])
    box = nodes[data["fields"][0]["type"]]
    assert box[1]["cls"] is Box and nodes[box[1]["fields"][0]["type"]][0] == "str"
    second = nodes[data["fields"][1]["type"]]
    assert [nodes[v][0] for v in second[1]["variants"]] == ["float", "none"]
    nodes, root = compile_spec(Tuple[Box[int], Box[str], Box[int]])
    first, other, again = nodes[root][1]["items"]
    assert first == again and first != other


def test_generic_typeddict_and_namedtuple() -> None:
    nodes, (kind, data) = compile_root(GenericTD[int])
    assert kind == "typeddict" and nodes[data["fields"][0]["type"]][0] == "int"
    nodes, (kind, data) = compile_root(GenericNT[str])
    assert kind == "namedtuple" and nodes[data["fields"][0]["type"]][0] == "str"


def test_top_level_typevar_is_any() -> None:
    assert kind_of(T) == "any"


# --------------------------------------------------------------------------------------------
# Recursion


@dataclasses.dataclass
class Tree:
    value: int
    children: List["Tree"] = dataclasses.field(default_factory=list)
    parent: Optional["Tree"] = None


class LinkedTD(TypedDict):
    next: Optional["LinkedTD"]


class LinkedNT(NamedTuple):
    rest: Optional["LinkedNT"]


def test_self_reference_is_a_cycle() -> None:
    nodes, root = compile_spec(Tree)
    children = field_node(nodes, nodes[root], "children")
    assert children[1]["item"] == root
    parent = field_node(nodes, nodes[root], "parent")
    assert root in parent[1]["variants"]
    assert sum(1 for kind, _ in nodes if kind == "dataclass") == 1


@pytest.mark.parametrize("cls", [LinkedTD, LinkedNT])
def test_self_reference_other_records(cls: type) -> None:
    nodes, root = compile_spec(cls)
    (field,) = nodes[root][1]["fields"]
    assert root in nodes[field["type"]][1]["variants"]


FUTURE_SOURCE = """
from __future__ import annotations
import dataclasses
from typing import Literal, Optional, TypedDict, Required, NotRequired

@dataclasses.dataclass
class Parent:
    kind: Literal["parent"]
    children: list[Child | Parent]
    first: Optional[Child] = None

@dataclasses.dataclass
class Child:
    kind: Literal["child"]
    parent: Parent | None = None

class Loose(TypedDict, total=False):
    must: Required[int]
    may: str

class Strict(TypedDict):
    must: int
    may: NotRequired[str]
"""


@pytest.fixture(scope="module")
def future_module() -> types.ModuleType:
    """A module written with ``from __future__ import annotations`` (every annotation a str)."""
    module = types.ModuleType("plan_spec_future_module")
    sys.modules[module.__name__] = module
    exec(compile(FUTURE_SOURCE, "<future>", "exec"), module.__dict__)
    yield module
    del sys.modules[module.__name__]


def test_future_annotations_mutual_recursion(future_module: types.ModuleType) -> None:
    nodes, root = compile_spec(future_module.Parent)
    parent = nodes[root]
    children = field_node(nodes, parent, "children")
    tagged = nodes[children[1]["item"]]
    assert tagged[0] == "tagged_union"
    child_index = dict(tagged[1]["tags"])["child"]
    assert dict(tagged[1]["tags"])["parent"] == root
    first = field_node(nodes, parent, "first")
    assert child_index in first[1]["variants"]
    back = field_node(nodes, nodes[child_index], "parent")
    assert root in back[1]["variants"]
    assert nodes[root][1]["tag"] == (0, "parent") and nodes[child_index][1]["tag"] == (0, "child")


def test_future_annotations_typeddict_qualifiers(future_module: types.ModuleType) -> None:
    for cls in (future_module.Loose, future_module.Strict):
        _, (_, data) = compile_root(cls)
        assert [(f["name"], f["required"]) for f in data["fields"]] == [
            ("must", True),
            ("may", False),
        ]


# --------------------------------------------------------------------------------------------
# Renaming and options


@dataclasses.dataclass
class Names:
    user_id: int
    _private_value: int
    trailing_: int
    plain: int
    html_body_text: Dict[str, int] = dataclasses.field(default_factory=dict)


def wire_names(cls: Any, **options: Any) -> List[str]:
    return [f["wire_name"] for f in compile_root(cls, **options)[1][1]["fields"]]


@pytest.mark.parametrize(
    "rename, expected",
    [
        (None, ["user_id", "_private_value", "trailing_", "plain", "html_body_text"]),
        ("camel", ["userId", "_privateValue", "trailing", "plain", "htmlBodyText"]),
        ("pascal", ["UserId", "_PrivateValue", "Trailing", "Plain", "HtmlBodyText"]),
        ("kebab", ["user-id", "private-value", "trailing", "plain", "html-body-text"]),
        (
            "screaming_snake",
            ["USER_ID", "_PRIVATE_VALUE", "TRAILING_", "PLAIN", "HTML_BODY_TEXT"],
        ),
        (
            {"user_id": "id", "plain": "p"},
            ["id", "_private_value", "trailing_", "p", "html_body_text"],
        ),
        (
            lambda n: n.upper() if n.startswith("u") else None,
            ["USER_ID", "_private_value", "trailing_", "plain", "html_body_text"],
        ),
    ],
)
def test_rename(rename: Any, expected: List[str]) -> None:
    assert wire_names(Names, rename=rename) == expected


@dataclasses.dataclass
class WithMetaName:
    user_id: Annotated[int, Meta(name="ID")]
    other_value: Annotated[Optional[int], Meta(ge=0)] = None


def test_meta_name_overrides_rename() -> None:
    assert wire_names(WithMetaName, rename="camel") == ["ID", "otherValue"]


def test_rename_applies_to_nested_records_not_dict_keys() -> None:
    nodes, (_, data) = compile_root(Dict[str, Names], rename="camel")
    assert nodes[data["key"]][0] == "str"
    assert nodes[data["value"]][1]["fields"][0]["wire_name"] == "userId"


@dataclasses.dataclass
class Clash:
    a_b: int
    aB: int


@dataclasses.dataclass
class MetaClash:
    a: Annotated[int, Meta(name="b")]
    b: int


def test_duplicate_wire_names() -> None:
    with pytest.raises(TypeError, match="fields 'a_b' and 'aB' both use the wire name 'aB'"):
        compile_spec(Clash, rename="camel")
    with pytest.raises(TypeError, match="'MetaClash'"):
        compile_spec(MetaClash)
    compile_spec(Clash)  # no clash without renaming


def test_bad_rename_options() -> None:
    with pytest.raises(ValueError, match="unknown rename style 'snake'"):
        compile_spec(Names, rename="snake")
    with pytest.raises(TypeError, match="rename must be"):
        compile_spec(Names, rename=42)
    with pytest.raises(TypeError, match="wire names must be str"):
        compile_spec(Names, rename=lambda n: 5)
    with pytest.raises(TypeError, match="wire names must be str"):
        compile_spec(Names, rename={"plain": 1})


def test_options_stored_on_every_record() -> None:
    options = {"omit_defaults": True, "forbid_unknown_fields": True, "array_like": True}
    nodes, _ = compile_spec(Tuple[Plain, Movie, Pair], **options)
    records = [data for kind, data in nodes if kind in ("dataclass", "typeddict", "namedtuple")]
    assert len(records) == 3
    for data in records:
        assert all(data[key] is True for key in options)


# --------------------------------------------------------------------------------------------
# Tagged unions


@dataclasses.dataclass
class Cat:
    kind: Literal["cat"]
    lives: int = 9


@dataclasses.dataclass
class Dog:
    name: str
    kind: Literal["dog", "puppy"] = "dog"


@dataclasses.dataclass
class Bird:
    kind: Literal["bird"]


@dataclasses.dataclass
class Untagged:
    name: str


@dataclasses.dataclass
class AlsoCat:
    kind: Literal["cat"]


@dataclasses.dataclass
class Renamed:
    pet_kind: Literal["r"]


@dataclasses.dataclass
class OtherRenamed:
    pet_kind: Literal["o"]


def test_tagged_union() -> None:
    nodes, (kind, data) = compile_root(Union[Cat, Dog, Bird])
    assert kind == "tagged_union"
    assert data["tag_field"] == "kind"
    tags = data["tags"]
    assert [t for t, _ in tags] == ["cat", "dog", "puppy", "bird"]
    by_tag = {t: nodes[r][1]["cls"] for t, r in tags}
    assert by_tag == {"cat": Cat, "dog": Dog, "puppy": Dog, "bird": Bird}
    tag_of = {nodes[r][1]["cls"]: nodes[r][1]["tag"] for _, r in tags}
    assert tag_of == {Cat: (0, "cat"), Dog: (1, "dog"), Bird: (0, "bird")}


def test_tagged_union_inside_wider_union() -> None:
    nodes, (kind, data) = compile_root(Union[int, Cat, None, Dog])
    assert kind == "union"
    assert [nodes[v][0] for v in data["variants"]] == ["int", "tagged_union", "none"]


def test_tagged_union_uses_wire_names() -> None:
    _, (kind, data) = compile_root(Union[Renamed, OtherRenamed], rename="camel")
    assert kind == "tagged_union" and data["tag_field"] == "petKind"


def test_single_dataclass_in_union_is_not_tagged() -> None:
    nodes, (kind, data) = compile_root(Optional[Untagged])
    assert kind == "union" and nodes[data["variants"][0]][1]["tag"] is None


@pytest.mark.parametrize("tp", [Union[Cat, Untagged], Union[Cat, AlsoCat], Union[Renamed, Cat]])
def test_untaggable_dataclasses(tp: Any) -> None:
    with pytest.raises(
        TypeError, match=r"cannot be told apart: they need a shared field annotated"
    ):
        compile_spec(tp)


def test_tagged_union_conflicts_with_other_objects() -> None:
    with pytest.raises(TypeError, match="both object values"):
        compile_spec(Union[Cat, Dog, Dict[str, int]])
    with pytest.raises(TypeError, match="both object values"):
        compile_spec(Union[Cat, Movie])


def test_array_like_records_are_arrays_in_unions() -> None:
    assert kind_of(Union[Cat, Dict[str, int]], array_like=True) == "union"
    with pytest.raises(TypeError, match="both array values"):
        compile_spec(Union[Cat, List[int]], array_like=True)
    with pytest.raises(TypeError, match="both array values"):
        compile_spec(Union[Pair, List[int]])


# --------------------------------------------------------------------------------------------
# Meta and NODEFAULT


def test_meta_repr_eq_hash() -> None:
    meta = Meta(min_length=1, pattern="a+", tz=False)
    assert repr(meta) == "Meta(min_length=1, pattern='a+', tz=False)"
    assert repr(Meta()) == "Meta()"
    assert meta == Meta(tz=False, pattern="a+", min_length=1)
    assert hash(meta) == hash(Meta(tz=False, pattern="a+", min_length=1))
    assert meta != Meta(min_length=2) and meta != "x"
    assert pickle.loads(pickle.dumps(meta)) == meta


def test_meta_immutable() -> None:
    meta = Meta(ge=1)
    with pytest.raises(AttributeError):
        meta.ge = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del meta.ge
    with pytest.raises(TypeError):
        Meta(1)  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"min_length": -1}, ValueError, "min_length must be >= 0"),
        ({"max_length": 1.5}, TypeError, "max_length must be an int"),
        ({"min_length": True}, TypeError, "min_length must be an int"),
        ({"min_length": 3, "max_length": 2}, ValueError, "exceeds max_length"),
        ({"pattern": 5}, TypeError, "pattern must be a str"),
        ({"pattern": "("}, ValueError, "not a valid regex"),
        ({"ge": 1, "gt": 0}, ValueError, "ge and gt"),
        ({"le": 1, "lt": 0}, ValueError, "le and lt"),
        ({"ge": "1"}, TypeError, "ge must be an int, float or Decimal"),
        ({"lt": float("nan")}, ValueError, "NaN"),
        ({"ge": 5, "le": 1}, ValueError, "exceeds the upper bound"),
        ({"multiple_of": 0}, ValueError, "multiple_of must be > 0"),
        ({"max_digits": 0}, ValueError, "max_digits must be >= 1"),
        ({"decimal_places": -1}, ValueError, "decimal_places must be >= 0"),
        ({"tz": 1}, TypeError, "tz must be True, False or None"),
        ({"name": 3}, TypeError, "name must be a str"),
        ({"name": ""}, ValueError, "name must not be empty"),
    ],
)
def test_meta_validation(kwargs: Dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        Meta(**kwargs)


def test_nodefault_sentinel() -> None:
    assert repr(NODEFAULT) == "NODEFAULT"
    assert pickle.loads(pickle.dumps(NODEFAULT)) is NODEFAULT
