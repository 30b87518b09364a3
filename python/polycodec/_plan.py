"""Compile a Python type into the flat *plan spec* the Rust extension builds its IR from.

The contract (node kinds, data keys, union rules) is ``docs/plan-spec.md``. Everything here runs
once per type, so it favours clear errors over speed: every annotation polycodec cannot encode
*and* decode faithfully is refused with a ``TypeError`` naming the field it sits in.

Only record nodes (dataclass, TypedDict, NamedTuple) are memoised; every other node is created
fresh for each place it occurs, so constraints can be merged into a copy without affecting any
other use of the same type. (A recursive ``type`` alias is the one exception: the references back
to it inside its own value share its node, as references back to a class share the record's.) Nodes orphaned by such copies (or by union normalisation) are
dropped by a final compaction pass, so the returned list holds exactly the reachable nodes.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import math
import re
import sys
import types
import typing
import uuid
from decimal import Decimal
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Mapping,
    Optional,
    Set,
    Tuple,
    Type,
    Union,
)

from ._defaults import NODEFAULT
from ._msgpack_ext import Ext
from ._custom_types import Extension, check_extensions
from ._meta import AVRO_TYPES, Avro, Meta, foreign_constraints
from ._naming import Rename, renamer
from ._options import own_options, resolve
from ._polycodec import FORMATS, Raw
from ._unset import UnsetType

__all__ = ["NODEFAULT", "compile_spec"]

Node = Tuple[str, Dict[str, Any]]
# Where an annotation sits: a label such as "field 'Point.x'" (None at the top level) plus the
# whole annotation of that field or top-level type, so nested errors can show both.
Site = Tuple[Optional[str], Any]


_BOUNDS = ("ge", "gt", "le", "lt")
_LENGTHS = ("min_length", "max_length")

# Plain classes that map to one leaf node: class -> (kind, data keys, all None initially).
_SCALARS: Dict[Any, Tuple[str, Tuple[str, ...]]] = {
    type(None): ("none", ()),
    bool: ("bool", ()),
    int: ("int", _BOUNDS + ("multiple_of",)),
    float: ("float", _BOUNDS + ("multiple_of",)),
    str: ("str", _LENGTHS + ("pattern",)),
    bytes: ("bytes", ("cls",) + _LENGTHS),
    bytearray: ("bytes", ("cls",) + _LENGTHS),
    memoryview: ("bytes", ("cls",) + _LENGTHS),
    Decimal: ("decimal", ("max_digits", "decimal_places") + _BOUNDS),
    datetime.datetime: ("datetime", ("tz",)),
    datetime.date: ("date", ()),
    datetime.time: ("time", ("tz",)),
    datetime.timedelta: ("timedelta", ()),
    uuid.UUID: ("uuid", ()),
}

_SEQUENCES = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_SETS = (set, collections.abc.Set, collections.abc.MutableSet)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)

_RECORD_KINDS = frozenset({"dataclass", "typeddict", "namedtuple"})
# Alternatives that may share a union category in a branched format (see _unions_need_tag).
_BRANCH_KINDS = _RECORD_KINDS | {"tagged_union"}
_DICT_KEY_KINDS = frozenset({"str", "int", "enum", "uuid", "literal", "any"})

_LENGTH_KINDS = frozenset({"str", "bytes", "list", "set", "frozenset", "var_tuple", "dict"})
_BOUND_KINDS = frozenset({"int", "float", "decimal"})
# Constraint key -> (node kinds it may be applied to, how to say that in an error).
_APPLIES_TO: Dict[str, Tuple[FrozenSet[str], str]] = {
    "min_length": (_LENGTH_KINDS, "str, bytes, list, set, frozenset, tuple[T, ...] or dict"),
    "max_length": (_LENGTH_KINDS, "str, bytes, list, set, frozenset, tuple[T, ...] or dict"),
    "ge": (_BOUND_KINDS, "int, float or Decimal"),
    "gt": (_BOUND_KINDS, "int, float or Decimal"),
    "le": (_BOUND_KINDS, "int, float or Decimal"),
    "lt": (_BOUND_KINDS, "int, float or Decimal"),
    "multiple_of": (frozenset({"int", "float"}), "int or float"),
    "pattern": (frozenset({"str"}), "str"),
    "max_digits": (frozenset({"decimal"}), "Decimal"),
    "decimal_places": (frozenset({"decimal"}), "Decimal"),
    "tz": (frozenset({"datetime", "time"}), "datetime or time"),
}
# A later lower (upper) bound replaces an earlier one of the other flavour, so an outer
# Annotated can tighten or loosen a bound inherited from an inner one.
_EXCLUSIVE = {"ge": "gt", "gt": "ge", "le": "lt", "lt": "le"}

# JSON token category of each node kind, for union validation (kinds needing data are below).
_CATEGORY = {
    "none": "null",
    "bool": "boolean",
    "int": "integer",
    "float": "float",
    **dict.fromkeys(
        ("str", "bytes", "datetime", "date", "time", "timedelta", "uuid", "decimal"), "string"
    ),
    **dict.fromkeys(("list", "set", "frozenset", "var_tuple", "tuple", "namedtuple"), "array"),
    "dict": "object",
    # No JSON token: UNSET is never on the wire (a branched format's own branch says it).
    "unset": "unset",
}


# Why a format whose entry in ``_polycodec.FORMATS`` has ``keeps_raw`` false cannot keep a value
# as its encoded bytes.
_NO_RAW = {
    "avro": "an Avro value carries neither its type nor its length, so its bytes cannot be told "
    "apart from the ones around it without its schema",
    "pickle": "a pickle's values share its memo and stack, so one value's opcodes cannot be cut "
    "out of one pickle and written into another",
}


def _keeps_raw(format: str) -> bool:
    """Whether ``format`` can keep a value as its encoded bytes (``polycodec.Raw``), as the
    format itself says (``_polycodec.FORMATS``)."""
    capabilities = FORMATS.get(format)
    return capabilities is None or bool(capabilities["keeps_raw"])


def _unions_need_tag(format: str) -> bool:
    """Whether records sharing a union need a tag field in ``format``, as the format itself says
    (``_polycodec.FORMATS``). A *branched* format (Avro's branch index, pickle's class reference)
    says on the wire which alternative follows, so several records may share a union untagged:
    the decoder reads the branch, and the encoder picks it by the value's class. An unknown name
    needs tags (the codec refuses the name itself once the plan is compiled)."""
    capabilities = FORMATS.get(format)
    return capabilities is None or bool(capabilities["unions_need_tag"])


# ---------------------------------------------------------------------------------------------
# Small helpers about types


def _fmt(tp: Any) -> str:
    """Render an annotation the way the user wrote it (``list[int]``, ``Optional[str]``)."""
    if isinstance(tp, str):
        return tp
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__qualname__
    return re.sub(r"\b(?:typing|typing_extensions|dataclasses)\.", "", repr(tp))


def _is_union(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    return origin is Union or (origin is not None and origin is getattr(types, "UnionType", None))


def _qualifiers() -> Tuple[Any, ...]:
    """Wrappers that qualify a field rather than change its type (Required, ReadOnly, Final)."""
    # typing_extensions is only consulted when the user already imported it.
    modules = [typing, sys.modules.get("typing_extensions")]
    names = ("Required", "NotRequired", "ReadOnly", "Final")
    found = {getattr(m, n, None) for m in modules for n in names} - {None}
    return tuple(found)


def _peel_field(hint: Any) -> Tuple[Optional[str], Optional[bool], Tuple[str, ...]]:
    """Read what a field's own annotation says about the field itself.

    Returns the ``Meta(name=...)`` wire name (None if unset), whether ``Required`` (True) or
    ``NotRequired`` (False) wraps it, and the ``Meta(aliases=...)`` names. The qualifier is read
    from the resolved hint because ``__required_keys__`` ignores string annotations on Python
    3.11 (PEP 563 modules).
    """
    name: Optional[str] = None
    required: Optional[bool] = None
    aliases: Tuple[str, ...] = ()
    qualifiers = _qualifiers()
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            for item in hint.__metadata__:
                if isinstance(item, Meta) and item.name is not None:
                    name = item.name
                if isinstance(item, Meta) and item.aliases is not None:
                    aliases = item.aliases
            hint = hint.__origin__
        elif origin in qualifiers and typing.get_args(hint):
            if getattr(origin, "_name", None) in ("Required", "NotRequired"):
                required = origin._name == "Required"
            hint = typing.get_args(hint)[0]
        else:
            return name, required, aliases


def _field_doc(hint: Any) -> Optional[str]:
    """The ``Avro(doc=...)`` of a field's own annotation (the outermost, if several)."""
    qualifiers = _qualifiers()
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            for item in hint.__metadata__:
                if isinstance(item, Avro) and item.doc is not None:
                    return item.doc
            hint = hint.__origin__
        elif origin in qualifiers and typing.get_args(hint):
            hint = typing.get_args(hint)[0]
        else:
            return None


def _unbound(param: Any, bindings: Mapping[Any, Any]) -> Any:
    """What a type parameter left unparametrised stands for: its PEP 696 default (which may
    mention earlier parameters, bound in ``bindings``), else its bound, else ``Any``.
    Constraints (``TypeVar("T", int, str)``) say only that it is one of them, so ``Any``."""
    has_default = getattr(param, "has_default", None)
    if callable(has_default) and has_default():
        return _subst(param.__default__, bindings)
    bound = getattr(param, "__bound__", None)
    # A bound written as a string (TypeVar("T", bound="Model")) names something in the
    # TypeVar's own module that typing never resolves: the value stays unchecked, as before.
    if bound is None or _has_forward_refs(bound):
        return Any
    return _subst(bound, bindings)


def _subst(tp: Any, bindings: Mapping[Any, Any]) -> Any:
    """Replace TypeVars in ``tp`` by their bindings; unbound ones by what ``_unbound`` says."""
    if isinstance(tp, typing.TypeVar):
        return bindings[tp] if tp in bindings else _unbound(tp, bindings)
    params = getattr(tp, "__parameters__", None)
    if params and typing.get_origin(tp) is not None:
        return tp[tuple(_subst(p, bindings) for p in params)]
    return tp


def _unbound_args(params: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The type arguments of a generic class or alias used without any."""
    bindings: Dict[Any, Any] = {}
    for param in params:
        bindings[param] = _unbound(param, bindings)
    return tuple(bindings.values())


def _alias_types() -> Tuple[type, ...]:
    """The classes of ``type X = ...`` aliases: typing's (3.12+) and typing_extensions' (which
    on older versions is its own class; it is only consulted when the user imported it)."""
    modules = [typing, sys.modules.get("typing_extensions")]
    found = {getattr(m, "TypeAliasType", None) for m in modules}
    return tuple(kind for kind in found if isinstance(kind, type))


def _as_alias(tp: Any) -> Tuple[Any, Tuple[Any, ...]]:
    """``(alias, type arguments)`` when ``tp`` is a type alias, bare or subscripted
    (``Pair[int]``); ``(None, ())`` otherwise."""
    kinds = _alias_types()
    if not kinds:
        return None, ()
    if isinstance(tp, kinds):
        return tp, ()
    origin = typing.get_origin(tp)
    if isinstance(origin, kinds):
        return origin, typing.get_args(tp)
    return None, ()


def _has_forward_refs(tp: Any) -> bool:
    if isinstance(tp, (str, typing.ForwardRef)):
        return True
    if typing.get_origin(tp) is typing.Annotated:
        return _has_forward_refs(tp.__origin__)
    return any(_has_forward_refs(a) for a in typing.get_args(tp))


def _typevar_maps(cls: type, args: Tuple[Any, ...]) -> Dict[type, Dict[Any, Any]]:
    """Bind the TypeVars of ``cls`` and of every generic base it parametrises.

    ``class IntBox(Box[int])`` declares fields in ``Box`` whose annotations mention Box's own
    TypeVar, so each class gets its own map, resolved through ``__orig_bases__``.
    """
    maps = {cls: dict(zip(getattr(cls, "__parameters__", ()), args))}
    todo = [cls]
    while todo:
        current = todo.pop()
        for base in vars(current).get("__orig_bases__", ()):
            origin = typing.get_origin(base)
            if not isinstance(origin, type) or origin in maps:
                continue
            if origin is typing.Generic or origin is typing.Protocol:
                continue
            params = getattr(origin, "__parameters__", ())
            if params:
                bound = [_subst(a, maps[current]) for a in typing.get_args(base)]
                maps[origin] = dict(zip(params, bound))
                todo.append(origin)
    return maps


def _own_annotations(cls: type) -> Mapping[str, Any]:
    own = vars(cls).get("__annotations__")
    if own is None and sys.version_info >= (3, 14):
        # PEP 649 classes keep their annotations behind a per-class descriptor instead.
        own = getattr(cls, "__annotations__", None)
    return own or {}


def _has_slots(cls: type) -> bool:
    """True when some attribute lives in a slot, so it cannot be written via ``__dict__``."""
    return any(vars(c).get("__slots__") for c in cls.__mro__ if c is not object)


def _dedupe_literals(values: List[Any]) -> List[Any]:
    """Keep first occurrences; compare by (type, value) since ``1 == True`` on the wire differ."""
    seen = set()
    out = []
    for value in values:
        key = (type(value), value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _literal_category(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "integer" if isinstance(value, int) else "string"


def _is_attrs(cls: type) -> bool:
    """Whether ``cls`` is an attrs class (``attrs.define``, ``attr.s``). attrs is only looked at
    when it was imported, which it must have been to make one."""
    attr = sys.modules.get("attr")
    return attr is not None and isinstance(cls, type) and attr.has(cls)


def _attrs_hooks(
    cls: type,
) -> Tuple[Optional[Callable[[Any], None]], Optional[Callable[[Any], None]]]:
    """What attrs' generated ``__init__`` runs besides storing the fields, as the decoders'
    ``before_fill`` and ``after_fill`` hooks (None where there is nothing to run): its
    ``__attrs_pre_init__`` first, and at the end the attribute validators (unless
    ``attrs.validators.set_disabled(True)`` turned them off, as ``attrs.validate`` checks) and
    ``__attrs_post_init__``. Converters are not run: a field decodes to its annotation."""
    attr = sys.modules["attr"]
    pre_init = getattr(cls, "__attrs_pre_init__", None)
    post_init = getattr(cls, "__attrs_post_init__", None)
    validated = any(a.validator is not None for a in attr.fields(cls))
    before = None
    if pre_init is not None:

        def before(instance: Any) -> None:
            instance.__attrs_pre_init__()

    after = None
    if validated or post_init is not None:

        def after(instance: Any) -> None:
            if validated:
                attr.validate(instance)
            if post_init is not None:
                instance.__attrs_post_init__()

    return before, after


def _unsupported(tp: Any) -> str:
    """Why ``tp`` is refused, naming what it is when it is a class of another library's kind
    (which would otherwise read as an unknown type), and what to write instead."""
    if tp is Ext:
        return (
            "polycodec.Ext is what a MessagePack extension value decodes to under typing.Any, "
            "not a field type: annotate the field Any"
        )
    if not isinstance(tp, type):
        return "unsupported type"
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(tp, pydantic.BaseModel):
        return (
            "it is a pydantic BaseModel, which polycodec does not encode: declare it as a "
            "dataclass (or an attrs class) with the same fields, or carry it with "
            "extensions={cls: Extension(dict[str, Any], encode=lambda m: "
            "m.model_dump(mode='json'), decode=cls.model_validate)}"
        )
    if _is_pydantic_dataclass(tp):
        return (
            "it is a pydantic dataclass, whose validators polycodec would not run (it fills "
            "the fields without pydantic's __init__): declare it with dataclasses.dataclass "
            "and move the checks into __post_init__, or carry it with "
            "extensions={cls: Extension(dict[str, Any], encode=dataclasses.asdict, "
            "decode=lambda d: cls(**d))}"
        )
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and issubclass(tp, msgspec.Struct):
        return (
            "it is a msgspec Struct, which polycodec does not encode: declare it as a "
            "dataclass (or an attrs class) with the same fields; the Struct's options are "
            "polycodec.options(...) on the class (rename=, omit_defaults=, "
            "forbid_unknown_fields=, array_like=, tag=, tag_field=) or Codec options"
        )
    return "unsupported type"


def _is_pydantic_dataclass(cls: type) -> bool:
    # Only when pydantic is already imported: a class cannot be one otherwise.
    module = sys.modules.get("pydantic.dataclasses")
    return module is not None and bool(module.is_pydantic_dataclass(cls))


# ---------------------------------------------------------------------------------------------
# Constraints


def _constraints_of(metadata: Tuple[Any, ...]) -> List[Tuple[str, Any]]:
    """Collect (key, value) constraints from ``Annotated`` metadata, in order.

    ``Meta`` objects, ``msgspec.Meta`` and the annotated-types constraint markers are
    understood; other markers that would validate (annotated-types' ``Predicate`` and ``Not``,
    any other ``BaseMetadata``, pydantic's constrained ``Field`` and validators) raise
    ValueError; anything else is left for other libraries and ignored. annotated-types is only
    looked at if it was already imported, which it must have been for one of its markers to
    appear here.
    """
    found: List[Tuple[str, Any]] = []
    at = sys.modules.get("annotated_types")
    for item in metadata:
        if isinstance(item, Meta):
            found += [(k, v) for k, v in item.settings().items() if k not in ("name", "aliases")]
        elif isinstance(item, Avro):
            representation = item.representation()
            if representation is not None:
                found.append(("avro", representation))
        elif (foreign := foreign_constraints(item)) is not None:
            found += foreign
        elif at is None:
            continue
        elif isinstance(item, at.GroupedMetadata):
            found += _constraints_of(tuple(item))
        elif isinstance(item, (at.Gt, at.Ge, at.Lt, at.Le)):
            key = type(item).__name__.lower()
            found.append((key, getattr(item, key)))
        elif isinstance(item, at.MultipleOf):
            found.append(("multiple_of", item.multiple_of))
        elif isinstance(item, at.MinLen):
            found.append(("min_length", item.min_length))
        elif isinstance(item, at.MaxLen):
            found.append(("max_length", item.max_length))
        elif isinstance(item, at.Timezone):
            if item.tz is None or item.tz is Ellipsis:
                found.append(("tz", item.tz is Ellipsis))
            else:
                raise ValueError("Timezone() with a specific zone is not supported")
        elif (
            type(item).__module__ == "annotated_types" or isinstance(item, at.BaseMetadata)
        ) and not isinstance(item, _at_inert(at)):
            # A marker users would expect to be checked (Predicate, Not, another library's
            # BaseMetadata such as pydantic's Strict or a StringConstraints pattern): refusing
            # it is better than letting them believe a validator runs.
            raise ValueError(
                f"the annotated-types marker {item!r} is not enforced by polycodec (it checks "
                "Gt, Ge, Lt, Le, Interval, MultipleOf, MinLen, MaxLen, Len and Timezone only)"
            )
    return found


def _at_inert(at: Any) -> Tuple[type, ...]:
    """annotated-types markers that only describe (documentation, a unit), never constrain."""
    return tuple(getattr(at, name) for name in ("DocInfo", "Unit") if hasattr(at, name))


def _convert(kind: str, key: str, value: Any) -> Any:
    """Convert a constraint value to what the node kind stores, or raise ValueError."""
    if isinstance(value, bool) and key != "tz":
        raise ValueError(f"{key}={value!r} must be a number, not a bool")
    if key in _LENGTHS:
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{key}={value!r} must be a non-negative int")
        return value
    if key == "pattern":
        if not isinstance(value, str):
            raise ValueError(f"pattern={value!r} must be a str")
        try:
            return re.compile(value)
        except re.error as exc:
            raise ValueError(f"pattern={value!r} is not a valid regex: {exc}") from None
    if key == "tz":
        if not isinstance(value, bool):
            raise ValueError(f"tz={value!r} must be True or False")
        return value
    if key in ("max_digits", "decimal_places"):
        least = 1 if key == "max_digits" else 0
        if not isinstance(value, int) or value < least:
            raise ValueError(f"{key}={value!r} must be an int >= {least}")
        return value
    # Numeric bounds and multiple_of.
    if not isinstance(value, (int, float, Decimal)):
        raise ValueError(f"{key}={value!r} must be a number")
    if value != value:
        raise ValueError(f"{key}={value!r} must not be NaN")
    if key == "multiple_of" and not (value > 0 and math.isfinite(value)):
        raise ValueError(f"multiple_of={value!r} must be finite and > 0")
    if kind == "int":
        if isinstance(value, int):
            return value
        if math.isfinite(value) and value == int(value):
            return int(value)
        raise ValueError(f"{key}={value!r} must be an integer for an int")
    if kind == "float":
        return float(value) if isinstance(value, Decimal) else value
    return value if isinstance(value, Decimal) else Decimal(repr(value))


def _check_ranges(data: Dict[str, Any]) -> None:
    """Refuse merged constraints that no value could satisfy."""
    lo, hi = data.get("min_length"), data.get("max_length")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min_length={lo} exceeds max_length={hi}")
    lower = data.get("ge") if data.get("ge") is not None else data.get("gt")
    upper = data.get("le") if data.get("le") is not None else data.get("lt")
    if lower is not None and upper is not None and lower > upper:
        raise ValueError(f"the lower bound {lower!r} exceeds the upper bound {upper!r}")


# ---------------------------------------------------------------------------------------------
# The compiler


# A generic alias or class nested in itself deeper than this, with other type arguments each
# time (``type Nest[T] = list[Nest[list[T]]]``), would expand forever: it is refused.
_NESTING_LIMIT = 32


def _alias_definition(alias: Any) -> str:
    """``Ids = list[int]``, for error messages (the value only when it can be evaluated)."""
    try:
        return f"{_fmt(alias)} = {_fmt(alias.__value__)}"
    except Exception:  # a value that does not evaluate is reported by the caller
        return _fmt(alias)


@dataclasses.dataclass
class _BusyAlias:
    """A type alias whose value is being compiled."""

    alias: Any  # the alias as written (``Tree``, ``Pair[int]``), for messages
    key: Tuple[Any, Tuple[Any, ...]]  # the alias object and its type arguments
    placeholder: int  # the node a reference back to it gets until its value is compiled
    used: bool = False  # whether such a reference was made (the alias is recursive)


@dataclasses.dataclass
class _Field:
    """A record field before its type is compiled."""

    name: str
    hint: Any
    default: Any
    default_factory: Optional[Callable[[], Any]]
    required: bool
    wire: bool


class _Compiler:
    """Walks one root type; holds the node list, the record memo and the error site."""

    def __init__(
        self,
        rename: Rename,
        omit_defaults: bool,
        forbid_unknown_fields: bool,
        array_like: bool,
        branched: bool = False,
        extensions: Optional[Dict[type, Extension]] = None,
        format: str = "json",
    ) -> None:
        self.nodes: List[Node] = []
        # The wire format, for the refusal of a type it cannot carry (Raw).
        self._format = format
        # Classes carried as another type's value (the ``extensions`` option).
        self._extensions: Dict[type, Extension] = extensions or {}
        # Extension classes whose wire type is being compiled (to refuse a cycle).
        self._extensions_busy: List[type] = []
        # True for formats whose unions need no tag: untagged records may share a union.
        self._branched = branched
        # The codec's options: every record's, except where a dataclass sets its own
        # (``polycodec.options``).
        self._options: Dict[str, Any] = {
            "rename": rename,
            "forbid_unknown_fields": forbid_unknown_fields,
            "omit_defaults": omit_defaults,
            "array_like": array_like,
        }
        # While a record field's own annotation is compiled: whether ``UnsetType`` may be one of
        # its alternatives (not inside a container), and whether it was.
        self._unset_allowed = False
        self._unset_seen = False
        # (class, type args) keys can hold unhashable Annotated metadata, so a list, not a dict.
        self._records: List[Tuple[Tuple[type, Tuple[Any, ...]], int]] = []
        # Classes whose fields are being compiled, innermost last.
        self._records_busy: List[type] = []
        # (union node, its annotation, its site, the aliases it sits in) to check at the end.
        self._pending_unions: List[Tuple[int, Any, Site, List[Any]]] = []
        # Each set or frozenset node, with its item annotation and where it was met.
        self._sets: List[Tuple[int, Any, Site]] = []
        self._site: Site = (None, None)
        self._typevars: Mapping[Any, Any] = {}
        # Type aliases whose value is being compiled, innermost last (recursion finds its own).
        self._aliases_busy: List[_BusyAlias] = []
        # Node a recursive alias stands for -> its name, marked on the node once compiled.
        self._recursive_aliases: Dict[int, Dict[str, Any]] = {}
        # While unions are checked at the end: the aliases the one being checked sat in.
        self._union_aliases: Optional[List[Any]] = None

    # -- errors --------------------------------------------------------------------------------

    def fail(self, tp: Any, reason: str) -> TypeError:
        label, outer = self._site
        what = _fmt(tp)
        nested = outer is not None and _fmt(outer) != what
        if label is None:
            if nested:
                where = f"the annotation {what!r} within the type {_fmt(outer)!r}"
            else:
                where = f"the type {what!r}"
        elif nested:
            where = f"the annotation {what!r} (within {_fmt(outer)!r}) of {label}"
        else:
            where = f"the annotation {what!r} of {label}"
        trail = self._union_aliases
        if trail is None:
            trail = [busy.alias for busy in self._aliases_busy]
        if trail and _fmt(trail[-1]) != what:
            where += f", in the type alias {_alias_definition(trail[-1])!r}"
        return TypeError(f"polycodec cannot handle {where}: {reason}")

    # -- node construction ---------------------------------------------------------------------

    def add(self, kind: str, data: Dict[str, Any]) -> int:
        self.nodes.append((kind, data))
        return len(self.nodes) - 1

    def node(self, tp: Any) -> int:
        """Compile ``tp`` into one node (a union node if it has several alternatives)."""
        variants = self._variants(tp)
        return variants[0] if len(variants) == 1 else self._union(variants, tp)

    def root(self, tp: Any) -> int:
        self._site = (None, tp)
        index = self.node(tp)
        self._finish_unions()
        for target, alias in self._recursive_aliases.items():
            self.nodes[target][1]["alias"] = alias
        self._check_set_items()
        return index

    def _variants(self, tp: Any) -> List[int]:
        """Compile ``tp`` into its union alternatives, so nested unions flatten naturally."""
        alias, alias_args = _as_alias(tp)
        if alias is not None:
            return self._alias(tp, alias, alias_args)
        origin = typing.get_origin(tp)
        if _is_union(tp):
            return [v for arg in typing.get_args(tp) for v in self._variants(arg)]
        if origin is typing.Literal:
            return self._literal(tp)
        if origin is typing.Annotated:
            return self._constrain(self._variants(tp.__origin__), tp)
        if origin is not None and origin in _qualifiers() and typing.get_args(tp):
            return self._variants(typing.get_args(tp)[0])
        if isinstance(tp, typing.TypeVar):
            return self._variants(_subst(tp, self._typevars))
        if callable(tp) and hasattr(tp, "__supertype__"):  # NewType
            return self._variants(tp.__supertype__)
        if tp is UnsetType:
            if not self._unset_allowed:
                raise self.fail(
                    tp,
                    "UnsetType may only be an alternative of a dataclass field's own annotation "
                    "(`x: int | UnsetType = UNSET`): UNSET stands for a field left out",
                )
            self._unset_seen = True
            return []
        # The types inside this one (items, values, fields) are no field's own alternatives.
        allowed, self._unset_allowed = self._unset_allowed, False
        try:
            return [self._single(tp)]
        finally:
            self._unset_allowed = allowed

    def _alias(self, tp: Any, alias: Any, args: Tuple[Any, ...]) -> List[int]:
        """Compile a ``type`` alias: transparent (its value's nodes, fresh for each place it is
        used) unless its value refers back to it, when the value's node is shared by every
        reference back, as a record's is (and marked with the alias's name)."""
        params = tuple(getattr(alias, "__type_params__", None) or ())
        if any(not isinstance(p, typing.TypeVar) for p in params):
            raise self.fail(tp, "type aliases with a TypeVarTuple or ParamSpec are not supported")
        if len(args) > len(params):
            raise self.fail(tp, f"the type alias takes {len(params)} type arguments")
        bindings: Dict[Any, Any] = {}
        for position, param in enumerate(params):
            if position < len(args):
                bindings[param] = _subst(args[position], self._typevars)
            else:
                bindings[param] = _unbound(param, bindings)
        key = (alias, tuple(bindings.values()))
        for busy in self._aliases_busy:
            if busy.key == key:
                busy.used = True
                return [busy.placeholder]
        if sum(busy.key[0] is alias for busy in self._aliases_busy) >= _NESTING_LIMIT:
            raise self.fail(
                tp,
                f"the type alias is nested in itself more than {_NESTING_LIMIT} times, "
                "with other type arguments each time, so its plan would never end",
            )
        value = self._alias_value(tp, alias)
        placeholder = self.add("alias", {})
        busy = _BusyAlias(tp, key, placeholder)
        saved = self._typevars
        self._aliases_busy.append(busy)
        self._typevars = bindings
        try:
            variants = self._variants(value)
        finally:
            self._aliases_busy.pop()
            self._typevars = saved
        if not busy.used:
            return variants
        if placeholder in variants:
            self._aliases_busy.append(busy)
            error = self.fail(
                tp,
                "the type alias is one of its own alternatives; a recursive alias must refer "
                "to itself inside a container (list, dict, tuple, ...) or a class",
            )
            self._aliases_busy.pop()
            raise error
        target = variants[0] if len(variants) == 1 else self._union(variants, value)
        self._redirect(placeholder, target)
        if self.nodes[target][0] not in _RECORD_KINDS:
            name = getattr(alias, "__name__", _fmt(alias))
            module = getattr(alias, "__module__", None)
            self._recursive_aliases[target] = {
                "type": alias,
                "name": name,
                "module": module,
                "args": tuple(bindings.values()) if args else (),
            }
        return [target]

    def _alias_value(self, tp: Any, alias: Any) -> Any:
        """The alias's value, with the forward references in it (strings, as a
        ``typing_extensions.TypeAliasType`` before 3.12 needs) resolved in its module."""
        try:
            value = alias.__value__
            if not _has_forward_refs(value):
                return value
            module = sys.modules.get(getattr(alias, "__module__", None) or "")
            holder = types.SimpleNamespace(__annotations__={"value": value})
            hints = typing.get_type_hints(
                holder,
                globalns=vars(module) if module is not None else {},
                localns={getattr(alias, "__name__", ""): alias},
                include_extras=True,
            )
            return hints["value"]
        except Exception as exc:  # NameError, SyntaxError, TypeError from a bad value
            raise self.fail(
                tp,
                f"the value of the type alias cannot be evaluated: {exc} (the names it uses "
                "must be importable from the alias's module)",
            ) from exc

    def _redirect(self, placeholder: int, target: int) -> None:
        """Point every reference to ``placeholder`` at ``target``: only nodes made after the
        placeholder (while its alias's value was compiled) can hold one. A union holding it
        takes ``target``'s alternatives in its place, so unions stay flat."""
        for index in range(placeholder + 1, len(self.nodes)):
            kind, data = self.nodes[index]
            if placeholder not in _children(kind, data):
                continue
            if kind == "union":
                variants: List[int] = []
                for v in data["variants"]:
                    variants += self._alternatives(target) if v == placeholder else [v]
                kept = self._normalise(variants)
                if len(kept) == 1:
                    self.nodes[index] = (self.nodes[kept[0]][0], dict(self.nodes[kept[0]][1]))
                else:
                    self.nodes[index] = ("union", {**data, "variants": kept})
            else:
                self.nodes[index] = (kind, _renumber(kind, data, _Swap(placeholder, target)))

    def _alternatives(self, index: int) -> List[int]:
        """A node as union alternatives: a union's own (a recursive alias's value), or itself."""
        kind, data = self.nodes[index]
        return list(data["variants"]) if kind == "union" else [index]

    def _single(self, tp: Any) -> int:
        """Compile an annotation that is not a union, Literal, Annotated or alias."""
        if tp is Any or tp is object:
            return self.add("any", {})
        if tp is Raw:
            if not _keeps_raw(self._format):
                reason = _NO_RAW.get(self._format, "its values are not kept as bytes")
                raise self.fail(tp, f"format {self._format!r} has no Raw: {reason}")
            return self.add("raw", {"nullable": False})
        if tp is None:
            tp = type(None)
        if self._extensions and isinstance(tp, type):
            extension = self._extension_for(tp)
            if extension is not None:
                return self._extension(tp, extension)
        scalar = _SCALARS.get(tp) if isinstance(tp, type) else None
        if scalar is not None:
            kind, keys = scalar
            data: Dict[str, Any] = dict.fromkeys(keys)
            if kind == "bytes":
                data["cls"] = tp
            return self.add(kind, data)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp)
        origin = typing.get_origin(tp) or tp
        args = typing.get_args(tp)
        if origin is tuple:
            return self._tuple(tp, args)
        if isinstance(origin, type):
            if origin in _SEQUENCES:
                return self._collection("list", args)
            if origin in _SETS:
                return self._collection("set", args)
            if origin is frozenset:
                return self._collection("frozenset", args)
            if origin in _MAPPINGS:
                return self._dict(tp, args)
            record_kind = self._record_kind(origin)
            if record_kind is not None:
                return self._record(origin, record_kind, args)
        if isinstance(tp, (str, typing.ForwardRef)):
            raise self.fail(tp, "unresolved forward reference")
        raise self.fail(tp, _unsupported(tp))

    def _extension_for(self, cls: type) -> Optional[Extension]:
        """The extension for ``cls``: its own entry, else the nearest base class's."""
        found = self._extensions.get(cls)
        if found is not None:
            return found
        for base in cls.__mro__[1:]:
            if base is not object and base in self._extensions:
                return self._extensions[base]
        return None

    def _extension(self, cls: type, extension: Extension) -> int:
        if cls in self._extensions_busy:
            raise self.fail(cls, "the wire type of its extension refers back to it")
        self._extensions_busy.append(cls)
        try:
            wire = self.node(extension.wire)
        finally:
            self._extensions_busy.pop()
        data = {
            "cls": cls,
            "name": cls.__qualname__,
            "wire": wire,
            "encode": extension.encode,
            "decode": extension.decode,
            "nullable": False,
        }
        return self.add("extension", data)

    def _nullable_extension(self, variants: List[int], tp: Any) -> int:
        """``Optional[cls]`` of an extension class: one extension node whose wire type is
        ``Optional[wire]`` and that lets None through, so unions never hold extensions."""
        extensions = [v for v in variants if self.nodes[v][0] == "extension"]
        others = [v for v in variants if v not in extensions]
        if len(extensions) != 1 or not others or any(self.nodes[v][0] != "none" for v in others):
            raise self.fail(
                tp,
                "an extension type can only be combined with None in a union (Optional[...]); "
                "its wire form could not be told apart from the other alternatives",
            )
        data = dict(self.nodes[extensions[0]][1])
        wire = data["wire"]
        wire_kind, wire_data = self.nodes[wire]
        if wire_kind != "any":
            alternatives = wire_data["variants"] if wire_kind == "union" else [wire]
            wire = self._union([others[0], *alternatives], tp)
        data["wire"] = wire
        data["nullable"] = True
        return self.add("extension", data)

    def _nullable_raw(self, variants: List[int], tp: Any) -> int:
        """``Optional[Raw]``: one Raw node that lets null and None through. A Raw takes any
        value, so no other type can share a union with it."""
        kinds = {self.nodes[v][0] for v in variants}
        if kinds != {"raw", "none"}:
            raise self.fail(
                tp,
                "Raw takes any value, so a union can hold it only with None (Optional[Raw])",
            )
        return self.add("raw", {"nullable": True})

    def _literal(self, tp: Any) -> List[int]:
        values: List[Any] = []
        todo = list(typing.get_args(tp))
        while todo:
            value = todo.pop(0)
            if typing.get_origin(value) is typing.Literal:
                todo[:0] = typing.get_args(value)
            elif value is None or type(value) in (str, int, bool):
                values.append(value)
            else:
                raise self.fail(tp, f"Literal values must be str, int, bool or None, not {value!r}")
        out = []
        kept = [v for v in values if v is not None]
        if kept:
            out.append(self.add("literal", {"values": _dedupe_literals(kept)}))
        if len(kept) < len(values):
            out.append(self.add("none", {}))
        return out

    def _enum(self, cls: Type[enum.Enum]) -> int:
        # A Flag's canonical (one-bit) members; any int its class accepts (their combinations,
        # and what its boundary lets through) decodes as ``cls(value)``.
        flag = issubclass(cls, enum.Flag)
        members = list(cls)
        if not members:
            raise self.fail(cls, "the enum has no members")
        values = [m.value for m in members]
        if flag and any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise self.fail(cls, "Flag values must all be int")
        if any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in values):
            raise self.fail(cls, "enum values must all be str or int")
        if all(isinstance(v, str) for v in values):
            value_kind = "str"
        elif all(isinstance(v, int) for v in values):
            value_kind = "int"
        else:
            value_kind = "mixed"
        data = {
            "cls": cls,
            "members": members,
            "values": values,
            "names": [m.name for m in members],
            "value_kind": value_kind,
            "flag": flag,
        }
        return self.add("enum", data)

    def _tuple(self, tp: Any, args: Tuple[Any, ...]) -> int:
        if tp is tuple or tp is typing.Tuple:
            return self._collection("var_tuple", ())
        if len(args) == 2 and args[1] is Ellipsis:
            return self._collection("var_tuple", args[:1])
        if any(a is Ellipsis for a in args):
            raise self.fail(tp, "'...' is only allowed as the second of two tuple arguments")
        return self.add("tuple", {"items": [self.node(a) for a in args]})

    def _collection(self, kind: str, args: Tuple[Any, ...]) -> int:
        item_tp = args[0] if args else Any
        item = self.node(item_tp)
        index = self.add(kind, {"item": item, "min_length": None, "max_length": None})
        if kind in ("set", "frozenset"):
            self._sets.append((index, item_tp, self._site))
        return index

    def _check_set_items(self) -> None:
        """Refuse a set whose items would decode to unhashable values: every decode of a
        non-empty one would fail (once the records are complete, so after every field)."""
        for index, item_tp, site in self._sets:
            found = _unhashable(self.nodes, self.nodes[index][1]["item"], set())
            if found is not None:
                self._site = site
                raise self.fail(
                    item_tp,
                    f"set items must be hashable, and {found} is not (no item would decode)",
                )

    def _dict(self, tp: Any, args: Tuple[Any, ...]) -> int:
        key_tp, value_tp = args if len(args) == 2 else (Any, Any)
        key = self.node(key_tp)
        kind, data = self.nodes[key]
        if kind not in _DICT_KEY_KINDS or (
            kind == "literal" and any(isinstance(v, bool) for v in data["values"])
        ):
            what = "a reference back to the recursive type alias" if kind == "alias" else kind
            raise self.fail(tp, f"dict keys must be str, int, Enum, UUID or Literal, not {what}")
        value = self.node(value_tp)
        return self.add(
            "dict", {"key": key, "value": value, "min_length": None, "max_length": None}
        )

    def _constrain(self, variants: List[int], tp: Any) -> List[int]:
        """Merge the constraints of ``Annotated`` ``tp`` into copies of the variants they fit.

        A constraint on a union applies to every alternative that accepts it (so
        ``Annotated[Optional[int], Meta(ge=0)]`` bounds the int) and must fit at least one.
        """
        try:
            constraints = _constraints_of(tp.__metadata__)
        except ValueError as exc:
            raise self.fail(tp, str(exc)) from None
        if constraints and any(self.nodes[v][0] == "alias" for v in variants):
            raise self.fail(
                tp,
                "constraints cannot be put on a reference back to a recursive type alias inside "
                "its own value (put them on the alias's value instead)",
            )
        if constraints:
            # A recursive alias is one shared node: constraints go on copies of its alternatives.
            variants = [a for v in variants for a in self._alternatives(v)]
        copies: Dict[int, Dict[str, Any]] = {}
        for key, value in constraints:
            if key == "avro":
                # An Avro representation: kept on the node for the Avro schema's deriver.
                kinds = frozenset(AVRO_TYPES[value["type"]])
                hits = [i for i, v in enumerate(variants) if self.nodes[v][0] in kinds]
                if not hits:
                    raise self.fail(
                        tp,
                        f"Avro({value['type']!r}) applies only to "
                        + ", ".join(sorted(kinds)).replace("literal", "Literal of ints"),
                    )
                for i in hits:
                    copies.setdefault(i, dict(self.nodes[variants[i]][1]))["avro"] = value
                continue
            kinds, allowed = _APPLIES_TO[key]
            hits = [i for i, v in enumerate(variants) if self.nodes[v][0] in kinds]
            if not hits:
                raise self.fail(tp, f"the constraint {key!r} applies only to {allowed}")
            for i in hits:
                kind, data = self.nodes[variants[i]]
                copy = copies.setdefault(i, dict(data))
                if key in _EXCLUSIVE:
                    copy[_EXCLUSIVE[key]] = None
                try:
                    copy[key] = _convert(kind, key, value)
                except ValueError as exc:
                    raise self.fail(tp, str(exc)) from None
        result = list(variants)
        for i, data in copies.items():
            try:
                _check_ranges(data)
            except ValueError as exc:
                raise self.fail(tp, str(exc)) from None
            result[i] = self.add(self.nodes[variants[i]][0], data)
        return result

    # -- unions --------------------------------------------------------------------------------

    def _union(self, variants: List[int], tp: Any) -> int:
        """Normalise alternatives now; validation waits until every record is complete."""
        variants = [a for v in variants for a in self._alternatives(v)]
        if any(self.nodes[v][0] == "extension" for v in variants):
            if any(self.nodes[v][0] == "any" for v in variants):
                return self.add("any", {})
            return self._nullable_extension(variants, tp)
        if any(self.nodes[v][0] == "raw" for v in variants):
            return self._nullable_raw(variants, tp)
        kept = self._normalise(variants)
        if len(kept) == 1:
            return kept[0]
        index = self.add("union", {"variants": kept})
        aliases = [busy.alias for busy in self._aliases_busy]
        self._pending_unions.append((index, tp, self._site, aliases))
        return index

    def _normalise(self, variants: List[int]) -> List[int]:
        """A union's alternatives with one ``none`` at most and one merged ``literal``;
        ``Any`` among them makes the whole union ``any``."""
        if any(self.nodes[v][0] == "any" for v in variants):
            return [self.add("any", {})]
        kept: List[int] = []
        literals: List[int] = []
        for v in variants:
            kind = self.nodes[v][0]
            if kind == "literal":
                if not literals:
                    kept.append(v)
                literals.append(v)
            elif kind == "none" and any(self.nodes[k][0] == "none" for k in kept):
                continue
            elif v not in kept:
                kept.append(v)
        if len(literals) > 1:
            values = [x for v in literals for x in self.nodes[v][1]["values"]]
            merged = self.add("literal", {"values": _dedupe_literals(values)})
            kept[kept.index(literals[0])] = merged
        return kept

    def _finish_unions(self) -> None:
        """Tag dataclass alternatives and check that every union can be decoded unambiguously."""
        for index, tp, site, aliases in self._pending_unions:
            if self.nodes[index][0] != "union":  # one that a recursive alias's Any absorbed
                continue
            self._site = site
            self._union_aliases = aliases
            variants: List[int] = self.nodes[index][1]["variants"]
            records = [v for v in variants if self.nodes[v][0] == "dataclass"]
            if len(records) > 1:
                tagged = self._tagged_union(records, tp)
                if tagged is None:  # a branched format: the records stay separate alternatives
                    self._check_categories(variants, tp)
                    continue
                if len(records) == len(variants):
                    self.nodes[index] = tagged
                    continue
                first = variants.index(records[0])
                variants = [v for v in variants if v not in records]
                variants.insert(first, self.add(*tagged))
                self.nodes[index] = ("union", {"variants": variants})
            self._check_categories(variants, tp)
        self._union_aliases = None

    def _tagged_union(self, records: List[int], tp: Any) -> Optional[Node]:
        """The union's tag: the classes' own tags (``polycodec.options(tag=...)``), or a field
        with the same wire name in every class, a Literal with disjoint values.

        Without one, a branched format keeps the records apart by the union's branch index
        (None is returned); any other format refuses the union.
        """
        if any(self.nodes[r][1]["class_tag"] is not None for r in records):
            tagged = self._class_tagged_union(records, tp)
            self._check_array_like(records, tp)
            return tagged
        for candidate in self.nodes[records[0]][1]["fields"]:
            wire_name = candidate["wire_name"]
            tags: List[Tuple[Any, int]] = []
            positions: List[int] = []
            for record in records:
                position = self._tag_position(record, wire_name)
                if position is None:
                    break
                positions.append(position)
                field_type = self.nodes[record][1]["fields"][position]["type"]
                tags += [(value, record) for value in self.nodes[field_type][1]["values"]]
            else:
                if len({(type(t), t) for t, _ in tags}) != len(tags):
                    continue
                clash = self._tag_clash(records, positions)
                if clash is None:
                    self._set_tags(records, positions)
                    self._check_array_like(records, tp)
                    return ("tagged_union", {"tag_field": wire_name, "tags": tags})
                if not self._branched:
                    raise self.fail(
                        tp, f"{clash} is already tagged by another field in a different union"
                    )
        if self._branched:
            return None
        names = ", ".join(self.nodes[r][1]["name"] for r in records)
        raise self.fail(
            tp,
            f"the dataclasses {names} cannot be told apart: they need a shared field annotated "
            "with Literal[...] (same wire name in each class) with distinct values, e.g. "
            "kind: Literal['a'] = 'a', or tags of their own: @polycodec.options(tag=True)",
        )

    def _class_tagged_union(self, records: List[int], tp: Any) -> Node:
        """A union of classes tagged by ``polycodec.options``: each class's tag names it; a
        class without one may take part through a ``Literal`` field of the tag's wire name."""
        tag_fields: Dict[str, str] = {}
        for record in records:
            class_tag = self.nodes[record][1]["class_tag"]
            if class_tag is not None:
                tag_fields.setdefault(class_tag[0], self._describe(record))
        if len(tag_fields) > 1:
            shown = ", ".join(f"{name} by {field!r}" for field, name in tag_fields.items())
            raise self.fail(
                tp,
                f"the classes of a tagged union share one tag field, and these are tagged by "
                f"different ones ({shown}); give them the same tag_field",
            )
        (wire_name,) = tag_fields
        tags: List[Tuple[Any, int]] = []
        literal_records: List[int] = []
        positions: List[int] = []
        for record in records:
            data = self.nodes[record][1]
            if data["class_tag"] is not None:
                tags.append((data["class_tag"][1], record))
                continue
            position = self._tag_position(record, wire_name)
            if position is None:
                raise self.fail(
                    tp,
                    f"{data['name']} has no tag, and the other classes of the union are tagged "
                    f"by {wire_name!r}: tag it with @polycodec.options(tag=...) too, or give it "
                    f"a field {wire_name!r} annotated Literal[...]",
                )
            literal_records.append(record)
            positions.append(position)
            field_type = data["fields"][position]["type"]
            tags += [(value, record) for value in self.nodes[field_type][1]["values"]]
        owners: Dict[Tuple[type, Any], int] = {}
        for value, record in tags:
            other = owners.setdefault((type(value), value), record)
            if other != record:
                raise self.fail(
                    tp,
                    f"{self._describe(other)} and {self._describe(record)} have the same tag "
                    f"{value!r}, so a decoder could not tell them apart",
                )
        clash = self._tag_clash(literal_records, positions)
        if clash is not None:
            raise self.fail(tp, f"{clash} is already tagged by another field in a different union")
        self._set_tags(literal_records, positions)
        return ("tagged_union", {"tag_field": wire_name, "tags": tags})

    def _check_array_like(self, records: List[int], tp: Any) -> None:
        """A tagged union is read as one shape: its classes are all array_like, or none is (a
        branched format writes no record as an array)."""
        if self._branched:
            return
        shapes = {bool(self.nodes[r][1]["array_like"]) for r in records}
        if len(shapes) > 1:
            names = ", ".join(
                f"{self._describe(r)} ({'array_like' if self.nodes[r][1]['array_like'] else 'object'})"
                for r in records
            )
            raise self.fail(
                tp,
                f"the classes of a tagged union must all be array_like or all not: {names}",
            )

    def _tag_position(self, record: int, wire_name: str) -> Optional[int]:
        for position, field in enumerate(self.nodes[record][1]["fields"]):
            if field["wire"] and field["wire_name"] == wire_name:
                return position if self.nodes[field["type"]][0] == "literal" else None
        return None

    def _tag_clash(self, records: List[int], positions: List[int]) -> Optional[str]:
        """The name of a record already tagged by another field (in another union), if any."""
        for record, position in zip(records, positions):
            data = self.nodes[record][1]
            if data["tag"] is not None and data["tag"][0] != position:
                return str(data["name"])
        return None

    def _set_tags(self, records: List[int], positions: List[int]) -> None:
        for record, position in zip(records, positions):
            data = self.nodes[record][1]
            tag_type = data["fields"][position]["type"]
            data["tag"] = (position, self.nodes[tag_type][1]["values"][0])

    def _categories(self, index: int) -> List[str]:
        kind, data = self.nodes[index]
        if kind in ("dataclass", "typeddict"):
            return ["array" if data["array_like"] else "object"]
        if kind == "tagged_union":
            return self._categories(data["tags"][0][1])
        if kind == "enum":
            return {"str": ["string"], "int": ["integer"]}.get(
                data["value_kind"], ["string", "integer"]
            )
        if kind == "literal":
            return sorted({_literal_category(v) for v in data["values"]})
        return [_CATEGORY[kind]]

    def _describe(self, index: int) -> str:
        kind, data = self.nodes[index]
        if kind in _RECORD_KINDS:
            return str(data["name"])
        if kind == "enum":
            return str(data["cls"].__qualname__)
        if kind == "literal":
            return f"Literal[{', '.join(repr(v) for v in data['values'])}]"
        if kind == "tagged_union":
            return " | ".join(self._describe(r) for _, r in data["tags"])
        return kind

    def _check_categories(self, variants: List[int], tp: Any) -> None:
        owner: Dict[str, int] = {}
        shared: Dict[str, List[int]] = {}  # records that share a category (branched formats)
        for v in variants:
            for category in self._categories(v):
                first = owner.setdefault(category, v)
                if first == v:
                    continue
                if self._branched and {self.nodes[first][0], self.nodes[v][0]} <= _BRANCH_KINDS:
                    shared.setdefault(category, [first]).append(v)
                    continue
                raise self.fail(
                    tp,
                    f"ambiguous union: {self._describe(first)} and {self._describe(v)} are both "
                    f"{category} values in JSON, so a decoder could not tell them apart",
                )
        for records in shared.values():
            self._check_branches(records, tp)

    def _check_branches(self, found: List[int], tp: Any) -> None:
        """Records sharing a union of a branched format: the encoder picks the branch by the
        value's class, so no two may be values of the same class."""
        classes: Dict[Any, int] = {}
        for v in found:
            kind, data = self.nodes[v]
            if kind == "tagged_union":
                members = [r for _, r in data["tags"]]
                keys = [self.nodes[r][1]["cls"] for r in members]
            else:
                members = [v]
                keys = [dict if kind == "typeddict" else data["cls"]]
            for key, member in zip(keys, members):
                other = classes.setdefault(key, member)
                if other == member:
                    continue
                if key is dict:
                    first, second = self._describe(other), self._describe(member)
                    clash = f"the TypedDicts {first} and {second} both have plain dict values"
                else:
                    clash = f"{key.__qualname__} appears twice (with different type arguments)"
                raise self.fail(
                    tp,
                    f"ambiguous union: {clash}, so an encoder could not tell which branch a "
                    "value takes",
                )

    # -- records -------------------------------------------------------------------------------

    @staticmethod
    def _record_kind(cls: type) -> Optional[str]:
        # An attrs class is a record created and filled as a dataclass is (see _attrs_hooks).
        if _is_pydantic_dataclass(cls):
            return None
        if dataclasses.is_dataclass(cls) or _is_attrs(cls):
            return "dataclass"
        if issubclass(cls, dict) and hasattr(cls, "__required_keys__"):
            return "typeddict"
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return "namedtuple"
        return None

    def _record(self, cls: type, kind: str, args: Tuple[Any, ...]) -> int:
        params = tuple(getattr(cls, "__parameters__", ()))
        given = bool(args)
        if args:
            args = tuple(_subst(a, self._typevars) for a in args)
        else:
            args = _unbound_args(params)
        key = (cls, args)
        for known, index in self._records:
            if known == key:
                return index
        if self._records_busy.count(cls) >= _NESTING_LIMIT:
            raise self.fail(
                cls,
                f"the generic class is nested in itself more than {_NESTING_LIMIT} times, with "
                "other type arguments each time, so its plan would never end",
            )
        options = self._record_options(cls, kind)
        data: Dict[str, Any] = {
            "cls": cls,
            "name": cls.__qualname__,
            "module": cls.__module__,
            # The type arguments a generic class was given (after TypeVar substitution), () when
            # none were: Avro names a generic record after them (Box[int] is Box_int).
            "args": args if given else (),
            "fields": [],
            "post_init": kind == "dataclass" and hasattr(cls, "__post_init__"),
            "before_fill": None,
            "after_fill": None,
            "frozen": self._frozen(cls, kind),
            "slots": kind == "dataclass" and _has_slots(cls),
            "forbid_unknown_fields": bool(options["forbid_unknown_fields"]),
            "omit_defaults": bool(options["omit_defaults"]),
            "array_like": bool(options["array_like"]),
            "tag": None,
            # (wire name, value, its Literal node) of the class's own tag.
            "class_tag": None,
        }
        if _is_attrs(cls):
            data["before_fill"], data["after_fill"] = _attrs_hooks(cls)
            data["post_init"] = data["after_fill"] is not None
        # Register before walking the fields so a reference back to this class finds it.
        index = self.add(kind, data)
        self._records.append((key, index))
        maps = _typevar_maps(cls, args)
        saved = (self._site, self._typevars)
        self._records_busy.append(cls)
        rename = renamer(options["rename"])
        try:
            fields = []
            for spec in self._field_specs(cls, kind):
                label = f"field '{cls.__qualname__}.{spec.name}'"
                self._site = (label, spec.hint)
                self._typevars = self._bindings_for(cls, kind, spec.name, maps)
                fields.append(self._field(spec, label, rename, kind))
        finally:
            self._site, self._typevars = saved
            self._records_busy.pop()
        self._check_wire_names(cls, fields, options["tag"])
        data["fields"] = fields
        if options["tag"] is not None:
            tag_field, tag = options["tag"]
            data["class_tag"] = (tag_field, tag, self.add("literal", {"values": [tag]}))
        return index

    def _record_options(self, cls: type, kind: str) -> Dict[str, Any]:
        """The options of record class ``cls``: a dataclass's own (``polycodec.options``, its
        bases'), else the codec's; ``tag`` is the class tag ``(wire name, value)`` or None."""
        if kind != "dataclass":
            if own_options(cls):
                raise self.fail(
                    cls,
                    "polycodec.options applies to dataclasses; a TypedDict or NamedTuple follows "
                    "the codec's options",
                )
            return {**self._options, "tag": None}
        try:
            resolved = resolve(cls, self._options)
        except (TypeError, ValueError) as exc:
            raise self.fail(cls, f"its polycodec.options are invalid: {exc}") from None
        return {
            "rename": resolved.rename,
            "forbid_unknown_fields": resolved.forbid_unknown_fields,
            "omit_defaults": resolved.omit_defaults,
            "array_like": resolved.array_like,
            "tag": resolved.tag,
        }

    @staticmethod
    def _frozen(cls: type, kind: str) -> bool:
        if _is_attrs(cls):
            frozen_setattr = getattr(sys.modules["attr"]._make, "_frozen_setattrs", None)
            return frozen_setattr is not None and cls.__setattr__ is frozen_setattr
        if kind == "dataclass":
            return bool(getattr(getattr(cls, "__dataclass_params__", None), "frozen", False))
        return kind == "namedtuple"

    @staticmethod
    def _bindings_for(
        cls: type, kind: str, name: str, maps: Dict[type, Dict[Any, Any]]
    ) -> Mapping[Any, Any]:
        """TypeVar bindings for the class that declared field ``name``."""
        if len(maps) == 1:
            return maps[cls]
        if kind == "dataclass":
            for c in cls.__mro__:
                if name in _own_annotations(c):
                    return maps.get(c, {})
            return {}
        # TypedDict merges inherited annotations into each class, so owners are unknown;
        # bindings closer to ``cls`` win.
        merged: Dict[Any, Any] = {}
        for bindings in reversed(list(maps.values())):
            merged.update(bindings)
        return merged

    def _field(
        self, spec: _Field, label: str, rename: Callable[[str], str], kind: str
    ) -> Dict[str, Any]:
        meta_name, _, aliases = _peel_field(spec.hint)
        wire_name = meta_name if meta_name is not None else rename(spec.name)
        if not isinstance(wire_name, str):
            raise TypeError(f"rename produced {wire_name!r} for {label}; wire names must be str")
        node, unset = self._field_type(spec.hint, kind)
        return {
            "name": spec.name,
            "wire_name": wire_name,
            "aliases": aliases,
            "doc": _field_doc(spec.hint),
            "type": node,
            "default": spec.default,
            "default_factory": spec.default_factory,
            "required": spec.required,
            "wire": spec.wire,
            "unset": unset,
        }

    def _field_type(self, hint: Any, kind: str) -> Tuple[int, bool]:
        """A field's node, and whether ``UnsetType`` is one of its alternatives. A format that
        needs no tag keeps it as an ``unset`` node (its wire says UNSET: Avro's branch, the
        pickle's global); the others leave it out, since they write nothing for UNSET."""
        saved = (self._unset_allowed, self._unset_seen)
        self._unset_allowed, self._unset_seen = kind == "dataclass", False
        try:
            variants = self._variants(hint)
            unset = self._unset_seen
        finally:
            self._unset_allowed, self._unset_seen = saved
        if not variants:
            if unset:
                raise self.fail(hint, "a field needs a type besides UnsetType")
            # Only reachable through an alias of UnsetType: compiled as any other empty union.
            raise self.fail(hint, "the annotation has no type")
        if unset and self._branched:
            variants.append(self.add("unset", {}))
        node = variants[0] if len(variants) == 1 else self._union(variants, hint)
        return node, unset

    def _hints(self, cls: type) -> Dict[str, Any]:
        # A PEP 695 class's type parameters live in a scope of their own, which string
        # annotations (``from __future__ import annotations``) cannot see before 3.13.
        local = {p.__name__: p for p in getattr(cls, "__type_params__", ())}
        local[cls.__name__] = cls
        try:
            return typing.get_type_hints(cls, localns=local, include_extras=True)
        except Exception as exc:  # NameError, SyntaxError, TypeError from bad annotations
            raise TypeError(
                f"polycodec cannot resolve the annotations of {cls.__qualname__!r}: {exc} "
                "(referenced types must be importable from the class's module)"
            ) from exc

    def _field_specs(self, cls: type, kind: str) -> List[_Field]:
        hints = self._hints(cls)
        if _is_attrs(cls):
            return self._attrs_fields(cls, hints)
        if kind == "dataclass":
            return self._dataclass_fields(cls, hints)
        if kind == "typeddict":
            required_keys: FrozenSet[str] = getattr(cls, "__required_keys__", frozenset())
            specs = []
            for name, hint in hints.items():
                _, qualifier, _ = _peel_field(hint)
                required = name in required_keys if qualifier is None else qualifier
                specs.append(_Field(name, hint, NODEFAULT, None, required, True))
            return specs
        defaults: Dict[str, Any] = getattr(cls, "_field_defaults", {})
        return [
            _Field(n, hints.get(n, Any), defaults.get(n, NODEFAULT), None, n not in defaults, True)
            for n in getattr(cls, "_fields")
        ]

    def _dataclass_fields(self, cls: type, hints: Dict[str, Any]) -> List[_Field]:
        declared = getattr(cls, "__dataclass_fields__")
        for name in declared:
            hint = hints.get(name)
            if isinstance(hint, dataclasses.InitVar) or hint is dataclasses.InitVar:
                self._site = (f"field '{cls.__qualname__}.{name}'", hint)
                raise self.fail(
                    hint, "InitVar fields cannot be decoded (they are not stored on the instance)"
                )
        specs = []
        for f in dataclasses.fields(cls):
            default = NODEFAULT if f.default is dataclasses.MISSING else f.default
            factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
            required = default is NODEFAULT and factory is None
            specs.append(_Field(f.name, hints.get(f.name, Any), default, factory, required, f.init))
        return specs

    def _attrs_fields(self, cls: type, hints: Dict[str, Any]) -> List[_Field]:
        """An attrs class's attributes as fields: named by attribute (``_x``, not its ``__init__``
        alias ``x``), typed by annotation (or ``attr.ib(type=...)``, else ``Any``), with their
        defaults and ``Factory`` defaults; ``init=False`` ones are not on the wire."""
        attr = sys.modules["attr"]
        specs = []
        for attribute in attr.fields(cls):
            hint = hints.get(attribute.name, attribute.type)
            hint = Any if hint is None else hint
            default: Any = attribute.default
            factory: Optional[Callable[[], Any]] = None
            if isinstance(default, attr.Factory):
                if default.takes_self:
                    self._site = (f"field '{cls.__qualname__}.{attribute.name}'", hint)
                    raise self.fail(
                        hint,
                        "a default Factory with takes_self=True is not supported (the value "
                        "it makes depends on an instance that decoding has not made yet)",
                    )
                default, factory = NODEFAULT, default.factory
            elif default is attr.NOTHING:
                default = NODEFAULT
            required = default is NODEFAULT and factory is None
            specs.append(_Field(attribute.name, hint, default, factory, required, attribute.init))
        return specs

    @staticmethod
    def _check_wire_names(
        cls: type, fields: List[Dict[str, Any]], class_tag: Optional[Tuple[str, Any]]
    ) -> None:
        """No two fields (their wire names, their aliases) and the class's tag share a name."""
        seen: Dict[str, str] = {}
        for field in fields:
            if not field["wire"]:
                continue
            for name in (field["wire_name"], *field["aliases"]):
                other = seen.setdefault(name, field["name"])
                if other != field["name"]:
                    raise TypeError(
                        f"polycodec cannot handle the class {cls.__qualname__!r}: fields {other!r} "
                        f"and {field['name']!r} both use the wire name {name!r}"
                    )
        if class_tag is not None and class_tag[0] in seen:
            raise TypeError(
                f"polycodec cannot handle the class {cls.__qualname__!r}: its tag_field "
                f"{class_tag[0]!r} is also the wire name of field {seen[class_tag[0]]!r}"
            )


# ---------------------------------------------------------------------------------------------
# Compaction


def _unhashable(nodes: List[Node], index: int, seen: Set[int]) -> Optional[str]:
    """What in node ``index`` decodes to an unhashable value (None when every value it can
    decode to is hashable; ``Any`` and extensions are given the benefit of the doubt)."""
    if index in seen:
        return None
    seen.add(index)
    kind, data = nodes[index]
    if kind in ("list", "set", "dict"):
        return kind
    if kind == "typeddict":
        return f"{data['name']} (a TypedDict: its values are dicts)"
    if kind == "bytes" and data["cls"] is bytearray:
        return "bytearray"
    if kind == "raw":
        return "Raw"
    if kind == "extension" or (kind == "dataclass" and data["cls"].__hash__ is object.__hash__):
        return None
    if kind == "dataclass":
        cls = data["cls"]
        if cls.__hash__ is None:
            what = "an attrs class" if _is_attrs(cls) else "a dataclass"
            return f"{cls.__qualname__} ({what} with eq and without frozen or unsafe_hash)"
        # A generated __hash__ hashes the fields that take part in it.
        if _is_attrs(cls):
            attributes = sys.modules["attr"].fields(cls)
            hashed = {a.name for a in attributes if (a.eq if a.hash is None else a.hash)}
        else:
            fields = dataclasses.fields(cls)
            hashed = {f.name for f in fields if (f.compare if f.hash is None else f.hash)}
        children = [f["type"] for f in data["fields"] if f["name"] in hashed]
    else:
        children = _children(kind, data)
    for child in children:
        found = _unhashable(nodes, child, seen)
        if found is not None:
            return found
    return None


def _children(kind: str, data: Dict[str, Any]) -> List[int]:
    if kind in ("list", "set", "frozenset", "var_tuple"):
        return [data["item"]]
    if kind == "tuple":
        return list(data["items"])
    if kind == "dict":
        return [data["key"], data["value"]]
    if kind == "union":
        return list(data["variants"])
    if kind == "tagged_union":
        return [record for _, record in data["tags"]]
    if kind in _RECORD_KINDS:
        tag = [data["class_tag"][2]] if data["class_tag"] is not None else []
        return [field["type"] for field in data["fields"]] + tag
    if kind == "extension":
        return [data["wire"]]
    return []


class _Swap(Dict[int, int]):
    """A node renumbering that moves one index and keeps every other."""

    def __init__(self, old: int, new: int) -> None:
        super().__init__({old: new})

    def __missing__(self, index: int) -> int:
        return index


def _renumber(kind: str, data: Dict[str, Any], new: Dict[int, int]) -> Dict[str, Any]:
    out = dict(data)
    if kind in ("list", "set", "frozenset", "var_tuple"):
        out["item"] = new[data["item"]]
    elif kind == "tuple":
        out["items"] = [new[i] for i in data["items"]]
    elif kind == "dict":
        out["key"], out["value"] = new[data["key"]], new[data["value"]]
    elif kind == "union":
        out["variants"] = [new[i] for i in data["variants"]]
    elif kind == "tagged_union":
        out["tags"] = [(tag, new[record]) for tag, record in data["tags"]]
    elif kind in _RECORD_KINDS:
        out["fields"] = [{**field, "type": new[field["type"]]} for field in data["fields"]]
        if data["class_tag"] is not None:
            tag_field, tag, node = data["class_tag"]
            out["class_tag"] = (tag_field, tag, new[node])
    elif kind == "extension":
        out["wire"] = new[data["wire"]]
    return out


def _compact(nodes: List[Node], root: int) -> Tuple[List[Node], int]:
    """Drop unreachable nodes, keeping the relative order (and so readable indices)."""
    reachable = set()
    todo = [root]
    while todo:
        index = todo.pop()
        if index not in reachable:
            reachable.add(index)
            todo += _children(*nodes[index])
    keep = sorted(reachable)
    new = {old: position for position, old in enumerate(keep)}
    return [(nodes[i][0], _renumber(*nodes[i], new)) for i in keep], new[root]


# ---------------------------------------------------------------------------------------------
# Entry point


def compile_spec(
    tp: Any,
    *,
    format: str = "json",
    rename: Rename = None,
    omit_defaults: bool = False,
    forbid_unknown_fields: bool = False,
    array_like: bool = False,
    extensions: Optional[Mapping[type, Extension]] = None,
) -> Tuple[List[Node], int]:
    """Compile ``tp`` into ``(nodes, root_index)`` as described in ``docs/plan-spec.md``.

    ``format`` is the wire format the plan is for; it only changes which unions are accepted
    (see ``_unions_need_tag``). The options apply to every record in the plan. Raises
    ``TypeError`` for any annotation that cannot be encoded and decoded faithfully, and
    ``ValueError``/``TypeError`` for a bad ``rename`` option. ``extensions`` maps classes to
    :class:`polycodec.Extension` (see ``_custom_types.py``).
    """
    renamer(rename)  # refused here even for a type without records
    compiler = _Compiler(
        rename,
        bool(omit_defaults),
        bool(forbid_unknown_fields),
        bool(array_like),
        branched=not _unions_need_tag(format),
        extensions=check_extensions(extensions),
        format=format,
    )
    root = compiler.root(tp)
    return _compact(compiler.nodes, root)
