"""Every cache of the package and the keys they are found by (``src/python_api/codec.rs`` builds a codec's
compiled state through ``_build.compiled_state``, which looks here first):

* compiled plans (``lookup``, ``store``), so that a second ``Codec`` of the same type, format and
  options shares the first one's instead of compiling the type again;
* codecs of the module-level calls (``codec_for``: ``polycodec.encode_one(obj)`` and friends);
* JSON Schemas of ``polycodec.json_schema`` (``json_schema``).

Where a compiled plan lives decides what it keeps alive. For a class (a dataclass, TypedDict,
NamedTuple, enum, ...) the entries live in a dict stored on the class itself (the attribute
``__polycodec_compiled__``): the class and its plans then form one cycle the garbage collector
frees with the class, so the cache never keeps a class alive that nothing else uses. Any other
type (``list[Event]``, a union, a class whose attributes cannot be set) has its entries in one
module-level dict of at most ``_SHARED_LIMIT`` entries, emptied when full.

An entry is keyed by the type's identity (a class is never ``==`` to another) and by the options'
values, compared as ``_value_key`` does (``1``, ``1.0`` and ``True`` apart; callables and other
unhashable values by identity, kept alive with the entry). It goes stale when a class the plan
holds is redefined in its module (a reload, a notebook cell run again): the annotations of the
other classes then name the new class. So each entry remembers, for every class of its plan
that its module names, the module's namespace, the name and the class, and is dropped on lookup
once one of those names refers to something else.

A class's per-class options (``@polycodec.options``) are part of its plan, and so of the plan of
every type that holds the class. They are set when the class is defined, before any codec of it;
should they be set later, on a class some cached plan holds, every cache here is emptied, so
that the next codec compiles with the new options (codecs made before keep their own plans, as a
codec never changes). ``_options`` counts an *options generation* each time a class is given
options; every cache here compares it with the count it last checked (``_check_options``) and
only then asks ``_options`` which classes changed. A codec being built in another thread at that
moment may have read the old options: the builder reads the count before it compiles, and
``store`` keeps nothing compiled under an older count.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import threading
import typing
import weakref
from typing import TYPE_CHECKING, Any, Dict, Hashable, List, Mapping, Optional, Tuple

from . import _options
from ._custom_types import Extension
from ._jsonschema import json_schema_and_spec
from ._meta import Meta
from ._polycodec import Codec

if TYPE_CHECKING:
    from ._polycodec import Format

__all__ = ["codec_for", "json_schema", "lookup", "store"]

_ATTRIBUTE = "__polycodec_compiled__"
# Entries per class (one per format and set of options in use) and in the shared dict.
_PER_CLASS_LIMIT = 64
_SHARED_LIMIT = 256
# Codecs of the module-level calls, and JSON Schemas, kept at most (each dict emptied when full).
_CACHE_LIMIT = 1024

# (namespace, name, class) triples: the entry holds while each namespace maps name to class.
Checks = Tuple[Tuple[Any, str, Any], ...]

# One lock for every cache here.
_lock = threading.Lock()


# ---------------------------------------------------------------------------------------------
# Keys


def _value_key(value: Any, keep: List[Any]) -> Hashable:
    """A hashable stand-in for a value (an option, a Literal value, an ``Annotated`` marker)
    that tells apart what ``==`` does not: ``1``, ``1.0`` and ``True`` (the type goes into the
    key), and mappings regardless of their insertion order. Unhashable objects are keyed by
    identity; ``keep`` collects them so that their ids stay theirs while the key is cached."""
    if isinstance(value, Mapping):
        items = [(_value_key(k, keep), _value_key(v, keep)) for k, v in value.items()]
        return ("mapping", frozenset(items))
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return (type(value), tuple(_value_key(item, keep) for item in value))
    if isinstance(value, Meta):
        return (Meta, _value_key(value.settings(), keep))
    if isinstance(value, Extension):
        # Its own == compares the wire types with ==, which forgets union order.
        return (Extension, _type_key(value.wire, keep), value.encode, value.decode)
    if isinstance(value, type) or typing.get_origin(value) is not None:
        return _type_key(value, keep)
    if dataclasses.is_dataclass(value):
        fields = tuple(_value_key(getattr(value, f.name), keep) for f in dataclasses.fields(value))
        return (type(value), fields)
    try:
        hash(value)
    except TypeError:
        keep.append(value)
        return ("id", id(value))
    return (type(value), value)


def _type_key(tp: Any, keep: List[Any]) -> Hashable:
    """A cache key for a type that keeps what ``==`` on typing constructs forgets.

    ``Union[A, B] == Union[B, A]`` (so ``list[A | B]`` would reuse the codec of ``list[B | A]``,
    whose Avro branch order differs), and ``Literal[1] == Literal[True]`` inside some
    containers. The key walks the construct: origin and arguments in their order, Literal
    values with their types, ``Annotated`` metadata by value (or identity when unhashable)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        metadata = tuple(_value_key(item, keep) for item in tp.__metadata__)
        return ("annotated", _type_key(tp.__origin__, keep), metadata)
    if origin is typing.Literal:
        return ("literal", tuple((type(v), v) for v in typing.get_args(tp)))
    if origin is not None:
        args = tuple(
            (
                _type_key(arg, keep)
                if not isinstance(arg, list)
                else ("list", tuple(_type_key(a, keep) for a in arg))
            )
            for arg in typing.get_args(tp)
        )
        # Origins such as typing.Union and types.UnionType are hashable; keep what they are
        # (Optional[X] and X | None compile the same, so a distinct key only costs a compile).
        return ("generic", _type_key(origin, keep), args)
    try:
        hash(tp)
    except TypeError:
        keep.append(tp)
        return ("id", id(tp))
    return ("type", tp)


def _sorted_options_key(options: Dict[str, Any], keep: List[Any]) -> Hashable:
    return tuple((name, _value_key(value, keep)) for name, value in sorted(options.items()))


# ---------------------------------------------------------------------------------------------
# Options given to classes after their plans were cached

# The options generation every cache here was last checked against.
_checked_generation = 0
# Every class some stored plan or schema holds, so that giving one of them options later (or one
# of their bases) is noticed (see _check_options).
_planned: "weakref.WeakSet[type]" = weakref.WeakSet()


def _check_options() -> None:
    """Called when the options generation moved: if a class given options since the last check
    is held by a cached plan or schema (as itself or as a base class, whose options its
    subclasses inherit), every cache is emptied."""
    global _checked_generation
    with _lock:
        generation, given = _options.given_since(_checked_generation)
        _checked_generation = generation
        # By the MRO, not issubclass: a TypedDict refuses class checks.
        if not any(cls in planned.__mro__ for cls in given for planned in _planned):
            return
        _shared.clear()
        for holder in _planned:
            if _ATTRIBUTE in holder.__dict__:
                type.__delattr__(holder, _ATTRIBUTE)
        _planned.clear()
        _codecs.clear()
        _codecs_by_identity.clear()
        _schemas.clear()
        _schemas_by_identity.clear()


def _note_planned(spec: Any) -> None:
    """Remembers the classes of a plan spec whose result is cached (a compiled plan, a JSON
    Schema), for ``_check_options``. Called with the lock held."""
    for _, data in spec[0]:
        cls = data.get("cls") if isinstance(data, dict) else None
        if isinstance(cls, type):
            _planned.add(cls)


# ---------------------------------------------------------------------------------------------
# Compiled plans


class _Entry:
    __slots__ = ("compiled", "checks", "keep")

    def __init__(self, compiled: Any, checks: Checks, keep: List[Any]) -> None:
        self.compiled = compiled
        self.checks = checks
        # Objects the key names by id (unhashable option values), alive while the key is.
        self.keep = keep


class _Table(Dict[Hashable, _Entry]):
    """A class's own entries. It pickles as an empty table: cloudpickle (dask, ray) pickles a
    class defined in ``__main__`` by value, its attributes included, and a compiled plan is no
    value to send along (the receiving side compiles its own)."""

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_Table, ())


_shared: Dict[Hashable, _Entry] = {}


def _table(tp: Any, create: bool) -> Optional[Dict[Hashable, _Entry]]:
    """The class's own entries (made on first use when ``create``), or None for a type that is
    no class or whose attributes cannot be set."""
    if not isinstance(tp, type):
        return None
    table = tp.__dict__.get(_ATTRIBUTE)
    if isinstance(table, _Table):
        return table
    if not create:
        return None
    table = _Table()
    try:
        type.__setattr__(tp, _ATTRIBUTE, table)
    except (TypeError, AttributeError):
        return None  # a builtin or extension type, a metaclass that refuses attributes
    return table


# Option values keyed as themselves with their type: ``_value_key`` gives the same key for
# them, only slower (its checks for mappings, dataclasses, ... cost most of a lookup).
_PLAIN = frozenset({bool, int, float, str, type(None)})


def _plan_options_key(options: Dict[str, Any], keep: List[Any]) -> Hashable:
    values = tuple(options.values())
    kinds = tuple(map(type, values))
    if _PLAIN.issuperset(kinds):
        # The common case, by the names in the order given (the codec passes its own options
        # in one order; format options in another order only cost a second entry).
        return (tuple(options), values, kinds)
    return _sorted_options_key(options, keep)


def _key(tp: Any, format: str, options: Dict[str, Any], own: bool, keep: List[Any]) -> Hashable:
    options_key = _plan_options_key(options, keep)
    if own:
        return (format, options_key)
    return (_type_key(tp, keep), format, options_key)


def lookup(tp: Any, format: str, options: Dict[str, Any]) -> Any:
    """The compiled plan of an earlier codec of ``tp`` in ``format`` with ``options``, or None."""
    if _options.generation != _checked_generation:
        _check_options()
    table = _table(tp, create=False)
    own = table is not None
    if table is None:
        table = _shared
    keep: List[Any] = []
    try:
        key = _key(tp, format, options, own, keep)
        entry = table.get(key)
    except (TypeError, RecursionError):
        # A value whose __hash__ or __eq__ raises, or too deep to key (a schema= nested past
        # the recursion limit, which the compiler refuses): compile, do not cache.
        return None
    if entry is None:
        return None
    for namespace, name, cls in entry.checks:
        if namespace.get(name) is not cls:
            with _lock:
                table.pop(key, None)
            return None
    return entry.compiled


def _checks(spec: Any) -> Checks:
    """For each class in the plan spec that its module names at the top level: that name."""
    nodes, _ = spec
    found = []
    seen = set()
    for _, data in nodes:
        cls = data.get("cls") if isinstance(data, dict) else None
        if not isinstance(cls, type) or id(cls) in seen:
            continue
        seen.add(id(cls))
        module = sys.modules.get(getattr(cls, "__module__", "") or "")
        if module is None or module.__name__ == "builtins":
            continue
        namespace = vars(module)
        name = cls.__qualname__
        if namespace.get(name) is cls:
            found.append((namespace, name, cls))
    return tuple(found)


def store(
    tp: Any,
    format: str,
    options: Dict[str, Any],
    compiled: Any,
    spec: Any,
    compiled_under: Optional[int] = None,
) -> None:
    """Keeps ``compiled`` (the plan of ``spec``) for the next codec of the same key, unless a
    class was given options since ``compiled_under`` (the generation read before compiling)."""
    table = _table(tp, create=True)
    own = table is not None
    if table is None:
        table = _shared
    keep: List[Any] = []
    try:
        key = _key(tp, format, options, own, keep)
        hash(key)
    except (TypeError, RecursionError):
        return
    entry = _Entry(compiled, _checks(spec), keep)
    with _lock:
        _note_planned(spec)
        if compiled_under is not None and compiled_under != _options.generation:
            return  # compiled while some class was given options: maybe under the old ones
        if len(table) >= (_PER_CLASS_LIMIT if own else _SHARED_LIMIT):
            table.clear()
        table[key] = entry


# ---------------------------------------------------------------------------------------------
# Codecs of the module-level calls

# key -> (codec, the unhashable objects whose ids the key holds, kept alive with it)
_codecs: Dict[Hashable, Tuple[Codec[Any], List[Any]]] = {}
# The fast path for calls without options: (id of the type object, format) -> (the type object,
# kept alive so that its id stays its own, and its codec). Keyed by identity, never by ``==``:
# ``list[A | B] == list[B | A]`` (see ``_type_key``), but they are distinct objects. A type
# spelled anew at each call (``list[int]`` creates a new alias object) misses here and takes
# the structural key; a class, or an alias kept in a variable, is found without walking it.
_codecs_by_identity: Dict[Tuple[int, str], Tuple[Any, Codec[Any]]] = {}


def codec_for(tp: Any, format: Format, options: Dict[str, Any]) -> Codec[Any]:
    """The cached codec for (type, format, options), compiled on first use."""
    if _options.generation != _checked_generation:
        _check_options()
    if not options:
        known = _codecs_by_identity.get((id(tp), format))
        if known is not None and known[0] is tp:
            return known[1]
    # A codec built (or found) while some class is given options may hold the old ones: it is
    # used, not kept.
    generation = _options.generation
    keep: List[Any] = []
    key: Hashable = (_type_key(tp, keep), format, _sorted_options_key(options, keep))
    entry = _codecs.get(key)
    if entry is not None:
        codec = entry[0]
    else:
        codec = Codec(tp, format, **options)
    with _lock:
        if _options.generation != generation:
            return codec
        if entry is None:
            if len(_codecs) >= _CACHE_LIMIT:
                _codecs.clear()
            _codecs[key] = (codec, keep)
        if not options:
            if len(_codecs_by_identity) >= _CACHE_LIMIT:
                _codecs_by_identity.clear()
            _codecs_by_identity[(id(tp), format)] = (tp, codec)
    return codec


# ---------------------------------------------------------------------------------------------
# JSON Schemas of ``polycodec.json_schema``

_schemas: Dict[Hashable, Tuple[Dict[str, Any], List[Any]]] = {}
# As ``_codecs_by_identity``, for calls with the default options: (id of the type object,
# ref_template) -> (the type object, its schema).
_schemas_by_identity: Dict[Tuple[int, Optional[str]], Tuple[Any, Dict[str, Any]]] = {}


def json_schema(
    tp: Any, options: Dict[str, Any], ref_template: Optional[str], defaults: bool
) -> Dict[str, Any]:
    """A new copy of the JSON Schema of ``tp`` under ``options``, derived on first use;
    ``defaults``: the options are the defaults (then found by the type's identity first)."""
    if _options.generation != _checked_generation:
        _check_options()
    if defaults:
        known = _schemas_by_identity.get((id(tp), ref_template))
        if known is not None and known[0] is tp:
            return copy.deepcopy(known[1])
    keep: List[Any] = []
    key: Hashable = (_type_key(tp, keep), _sorted_options_key(options, keep), ref_template)
    generation = _options.generation  # as in codec_for
    entry = _schemas.get(key)
    if entry is None:
        schema, spec = json_schema_and_spec(tp, options, ref_template)
    else:
        schema, spec = entry[0], None
    with _lock:
        if spec is not None:
            _note_planned(spec)
        if _options.generation == generation:
            if entry is None:
                if len(_schemas) >= _CACHE_LIMIT:
                    _schemas.clear()
                _schemas[key] = (schema, keep)
            if defaults:
                if len(_schemas_by_identity) >= _CACHE_LIMIT:
                    _schemas_by_identity.clear()
                _schemas_by_identity[(id(tp), ref_template)] = (tp, schema)
    return copy.deepcopy(schema)
