"""The plan spec's contract with Rust (docs/plan-spec.md): the node kinds and what each kind's
data holds, typed so that mypy checks every node the compiler makes.

Each kind has two TypedDicts: ``<Kind>Read`` holds the keys ``src/plan/build.rs`` reads (the
contract; ``tests/test_plan_contract.py`` checks them against that file), and ``<Kind>Spec``
adds the keys only Python reads (the Avro deriver, JSON Schema, union checks), plus the marks
any node may carry (``avro``, ``alias``). ``READ_BY_RUST`` and ``SPECS`` map each kind to them.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Callable, Dict, List, Literal, Optional, Tuple, Type, TypedDict

Node = Tuple[str, Dict[str, Any]]

RECORD_KINDS = frozenset({"dataclass", "typeddict", "namedtuple"})

RecordKind = Literal["dataclass", "typeddict", "namedtuple"]
SequenceKind = Literal["list", "set", "frozenset", "var_tuple"]
# Kinds whose data has no key of its own.
BareKind = Literal["any", "none", "unset", "bool", "date", "timedelta", "uuid"]


class AliasMark(TypedDict):
    """What a recursive type alias's node says of the alias (JSON Schema's ``$defs`` entry,
    Avro's refusal of a recursion through no record)."""

    type: Any
    name: str
    module: Optional[str]
    args: Tuple[Any, ...]


class PythonMarks(TypedDict, total=False):
    """Keys any node may carry that only Python reads."""

    # The representation an ``Avro(type)`` marker asks for: ``type``, ``size``, ``name``.
    avro: Dict[str, Any]
    # Set on the node a recursive type alias stands for (not on records).
    alias: AliasMark


# -- keys src/plan/build.rs reads ------------------------------------------------------------


class BareRead(TypedDict):
    """``any``, ``none``, ``unset``, ``bool``, ``date``, ``timedelta``, ``uuid``."""


class RawRead(TypedDict):
    nullable: bool


class IntRead(TypedDict):
    ge: Optional[int]
    gt: Optional[int]
    le: Optional[int]
    lt: Optional[int]
    multiple_of: Optional[int]


class FloatRead(TypedDict):
    ge: Optional[float]
    gt: Optional[float]
    le: Optional[float]
    lt: Optional[float]
    multiple_of: Optional[float]


class StrRead(TypedDict):
    min_length: Optional[int]
    max_length: Optional[int]
    pattern: Optional[re.Pattern[str]]


class BytesRead(TypedDict):
    cls: type
    min_length: Optional[int]
    max_length: Optional[int]


class DecimalRead(TypedDict):
    max_digits: Optional[int]
    decimal_places: Optional[int]
    ge: Optional[Decimal]
    gt: Optional[Decimal]
    le: Optional[Decimal]
    lt: Optional[Decimal]


class TzRead(TypedDict):
    """``datetime`` and ``time``: None (either), True (aware required), False (naive)."""

    tz: Optional[bool]


class EnumRead(TypedDict):
    cls: type
    members: List[Any]
    values: List[Any]
    names: List[str]
    flag: bool


class LiteralRead(TypedDict):
    values: List[Any]


class UnionRead(TypedDict):
    variants: List[int]


class TaggedUnionRead(TypedDict):
    tag_field: str
    tags: List[Tuple[Any, int]]


class SequenceRead(TypedDict):
    """``list``, ``set``, ``frozenset``, ``var_tuple``."""

    item: int
    min_length: Optional[int]
    max_length: Optional[int]


class TupleRead(TypedDict):
    items: List[int]


class DictRead(TypedDict):
    key: int
    value: int
    min_length: Optional[int]
    max_length: Optional[int]


class ExtensionRead(TypedDict):
    cls: type
    name: str
    wire: int
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    nullable: bool


class FieldRead(TypedDict):
    """One field of a record's ``fields``."""

    name: str
    wire_name: str
    aliases: Tuple[str, ...]
    type: int
    default: Any  # a value, or polycodec._defaults.NODEFAULT
    default_factory: Optional[Callable[[], Any]]
    required: bool
    wire: bool
    unset: bool


class RecordRead(TypedDict):
    """``dataclass``, ``typeddict``, ``namedtuple``."""

    cls: type
    name: str
    module: str
    fields: List[FieldSpec]
    post_init: bool
    before_fill: Optional[Callable[[Any], None]]
    after_fill: Optional[Callable[[Any], None]]
    frozen: bool
    slots: bool
    forbid_unknown_fields: bool
    omit_defaults: bool
    array_like: bool
    tag: Optional[Tuple[int, Any]]
    class_tag: Optional[Tuple[str, Any, int]]


# -- the whole data of each kind: the keys Rust reads and those only Python reads -------------


class BareSpec(BareRead, PythonMarks):
    pass


class RawSpec(RawRead, PythonMarks):
    pass


class IntSpec(IntRead, PythonMarks):
    pass


class FloatSpec(FloatRead, PythonMarks):
    pass


class StrSpec(StrRead, PythonMarks):
    pass


class BytesSpec(BytesRead, PythonMarks):
    pass


class DecimalSpec(DecimalRead, PythonMarks):
    pass


class TzSpec(TzRead, PythonMarks):
    pass


class EnumSpec(EnumRead, PythonMarks):
    # For union checks: "str", "int" or "mixed".
    value_kind: str


class LiteralSpec(LiteralRead, PythonMarks):
    pass


class UnionSpec(UnionRead, PythonMarks):
    pass


class TaggedUnionSpec(TaggedUnionRead, PythonMarks):
    pass


class SequenceSpec(SequenceRead, PythonMarks):
    pass


class TupleSpec(TupleRead, PythonMarks):
    pass


class DictSpec(DictRead, PythonMarks):
    pass


class ExtensionSpec(ExtensionRead, PythonMarks):
    pass


class FieldSpec(FieldRead):
    # ``Avro(doc=)`` of the field's own annotation, the Avro field's "doc".
    doc: Optional[str]


class RecordSpec(RecordRead, PythonMarks):
    # The type arguments a generic class was given, TypeVars substituted (() when none were):
    # Avro and JSON Schema name a generic record after them (Box[int] is Box_int).
    args: Tuple[Any, ...]


class AliasPlaceholderSpec(TypedDict):
    """``alias``: the node a reference back to a type alias gets while the alias's value is
    compiled; every reference is redirected and the node dropped before the plan is returned,
    so Rust never sees this kind."""


_BARE = ("any", "none", "unset", "bool", "date", "timedelta", "uuid")
_SEQUENCES = ("list", "set", "frozenset", "var_tuple")

# Kind -> the TypedDict of the keys src/plan/build.rs reads for it.
READ_BY_RUST: Dict[str, Type[Any]] = {
    **dict.fromkeys(_BARE, BareRead),
    "raw": RawRead,
    "int": IntRead,
    "float": FloatRead,
    "str": StrRead,
    "bytes": BytesRead,
    "decimal": DecimalRead,
    "datetime": TzRead,
    "time": TzRead,
    "enum": EnumRead,
    "literal": LiteralRead,
    "union": UnionRead,
    "tagged_union": TaggedUnionRead,
    **dict.fromkeys(_SEQUENCES, SequenceRead),
    "tuple": TupleRead,
    "dict": DictRead,
    "extension": ExtensionRead,
    **dict.fromkeys(sorted(RECORD_KINDS), RecordRead),
}

# Kind -> the TypedDict of all its data (what a compiled plan's node of that kind holds).
SPECS: Dict[str, Type[Any]] = {
    **dict.fromkeys(_BARE, BareSpec),
    "raw": RawSpec,
    "int": IntSpec,
    "float": FloatSpec,
    "str": StrSpec,
    "bytes": BytesSpec,
    "decimal": DecimalSpec,
    "datetime": TzSpec,
    "time": TzSpec,
    "enum": EnumSpec,
    "literal": LiteralSpec,
    "union": UnionSpec,
    "tagged_union": TaggedUnionSpec,
    **dict.fromkeys(_SEQUENCES, SequenceSpec),
    "tuple": TupleSpec,
    "dict": DictSpec,
    "extension": ExtensionSpec,
    **dict.fromkeys(sorted(RECORD_KINDS), RecordSpec),
    "alias": AliasPlaceholderSpec,
}
