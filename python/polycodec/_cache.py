"""The compiled plans of codecs, kept so that a second ``Codec`` of the same type, format and
options shares the first one's instead of compiling the type again (``src/api.rs`` calls
``lookup`` and ``store``).

Where an entry lives decides what it keeps alive. For a class (a dataclass, TypedDict,
NamedTuple, enum, ...) the entries live in a dict stored on the class itself (the attribute
``__polycodec_compiled__``): the class and its plans then form one cycle the garbage collector
frees with the class, so the cache never keeps a class alive that nothing else uses. Any other
type (``list[Event]``, a union, a class whose attributes cannot be set) has its entries in one
module-level dict of at most ``_SHARED_LIMIT`` entries, emptied when full.

An entry is keyed by the type's identity (a class is never ``==`` to another) and by the options'
values, compared as ``_api._value_key`` does (``1``, ``1.0`` and ``True`` apart; callables and
other unhashable values by identity, kept alive with the entry). It goes stale when a class the
plan holds is redefined in its module (a reload, a notebook cell run again): the annotations of
the other classes then name the new class. So each entry remembers, for every class of its plan
that its module names, the module's namespace, the name and the class, and is dropped on lookup
once one of those names refers to something else.

A class's per-class options (``@polycodec.options``) are part of its plan, and so of the plan of
every type that holds the class. They are set when the class is defined, before any codec of it;
should they be set later, on a class some plan already holds, ``forget_class`` drops every
compiled plan and cached codec, so that the next codec compiles with the new options (codecs
made before keep their own plans, as a codec never changes). A codec being built in another
thread at that moment may have read the old options: every call of ``forget_class`` counts one
*options generation* (``_polycodec._options_changed``), a codec reads the count before it
compiles, and ``store`` keeps nothing compiled under an older count.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Any, Dict, Hashable, List, Optional, Tuple

from ._api import _type_key, _value_key
from ._polycodec import _options_changed, _options_generation

__all__ = ["clear", "forget_class", "lookup", "note_planned", "store"]

_ATTRIBUTE = "__polycodec_compiled__"
# Entries per class (one per format and set of options in use) and in the shared dict.
_PER_CLASS_LIMIT = 64
_SHARED_LIMIT = 256

# (namespace, name, class) triples: the entry holds while each namespace maps name to class.
Checks = Tuple[Tuple[Any, str, Any], ...]


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
_lock = threading.Lock()
# Every class some stored plan holds, so that setting options on one of them later (or on one
# of their bases) is noticed (see forget_class).
_planned: "weakref.WeakSet[type]" = weakref.WeakSet()


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


def _options_key(options: dict[str, Any], keep: List[Any]) -> Hashable:
    values = tuple(options.values())
    kinds = tuple(map(type, values))
    if _PLAIN.issuperset(kinds):
        # The common case, by the names in the order given (the codec passes its own options
        # in one order; format options in another order only cost a second entry).
        return (tuple(options), values, kinds)
    return tuple((name, _value_key(value, keep)) for name, value in sorted(options.items()))


def _key(tp: Any, format: str, options: dict[str, Any], own: bool, keep: List[Any]) -> Hashable:
    options_key = _options_key(options, keep)
    if own:
        return (format, options_key)
    return (_type_key(tp, keep), format, options_key)


def lookup(tp: Any, format: str, options: dict[str, Any]) -> Any:
    """The compiled plan of an earlier codec of ``tp`` in ``format`` with ``options``, or None."""
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
    options: dict[str, Any],
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
    note_planned(spec)
    with _lock:
        if compiled_under is not None and compiled_under != _options_generation():
            return  # compiled while some class was given options: maybe under the old ones
        if len(table) >= (_PER_CLASS_LIMIT if own else _SHARED_LIMIT):
            table.clear()
        table[key] = entry


def clear() -> None:
    """Forgets the shared entries (a class's own entries go with the class)."""
    with _lock:
        _shared.clear()


def note_planned(spec: Any) -> None:
    """Remembers the classes of a plan spec whose result is cached (a compiled plan, a JSON
    Schema), for ``forget_class``."""
    classes = [data.get("cls") for _, data in spec[0] if isinstance(data, dict)]
    with _lock:
        for cls in classes:
            if isinstance(cls, type):
                _planned.add(cls)


def forget_class(cls: type) -> None:
    """Called when ``cls`` is given per-class options: if a stored plan holds it or one of its
    subclasses (which inherit its options), every compiled plan and cached codec is dropped."""
    from . import _api

    with _lock:
        # Counted whether or not a stored plan holds the class: one being compiled now may.
        _options_changed()
        # By the MRO, not issubclass: a TypedDict refuses class checks.
        if not any(cls in planned.__mro__ for planned in _planned):
            return
        _shared.clear()
        for holder in _planned:
            if _ATTRIBUTE in holder.__dict__:
                type.__delattr__(holder, _ATTRIBUTE)
        _planned.clear()
    _api.forget_codecs()
