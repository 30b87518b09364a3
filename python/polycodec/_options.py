"""Options a dataclass sets for itself: ``@polycodec.options(tag=True, rename="camel")``.

msgspec configures each ``Struct`` with class keywords (``class Cat(Struct, tag=True)``); a
dataclass has no such keywords of its own, so a decorator stands in for them. It stores an
:class:`Options` on the class (``__polycodec_options__``), which the plan compiler reads: each
option a class sets replaces the codec's option of that name for that class's own fields, and
the options it leaves unset (None) come from its base classes, then from the codec. A subclass
inherits its bases' options, as a Struct inherits its bases' configuration.

Options are normally set when the class is defined, before any codec of it. Set later, on a
class some compiled plan already holds, they make that plan stale. This module does not reach
into the caches for that: each time a class is given options it counts one more *options
generation* and notes the class (``given_since``); the caches (``_cache``) compare the count
with the one they were filled under and, when it moved, ask which classes were given options.
The extension keeps the same count for its own caches (``_polycodec._options_changed``).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, TypeVar, Union

from ._naming import renamer
from ._polycodec import _options_changed

__all__ = ["ATTRIBUTE", "Options", "Resolved", "given_since", "options", "resolve"]

ATTRIBUTE = "__polycodec_options__"

RenameOption = Union[
    None,
    Literal["camel", "pascal", "kebab", "lower", "upper", "screaming_snake"],
    Mapping[str, str],
    Callable[[str], Optional[str]],
]
TagOption = Union[None, bool, str, int, Callable[[str], Union[str, int]]]

_C = TypeVar("_C", bound=type)

# The tag field's name when a class is tagged without naming it (msgspec's default too).
DEFAULT_TAG_FIELD = "type"
_INT64 = (-(2**63), 2**63 - 1)
_NAMES = ("rename", "omit_defaults", "forbid_unknown_fields", "array_like", "tag", "tag_field")


def _check_flag(name: str, value: Optional[bool]) -> None:
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"polycodec.options: {name} must be True, False or None, not {value!r}")


def check_tag_value(value: Any, where: str) -> Union[str, int]:
    """A tag value as the wire carries it: a str, or an int that fits 64 bits (not a bool)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValueError(f"{where}: an int tag must fit in 64 bits, not {value!r}")
        return value
    raise TypeError(f"{where}: a tag must be a str or an int, not {value!r}")


class Options:
    """The options one class sets (see :func:`options`); None leaves an option to the class's
    bases and then to the codec. Immutable and hashable."""

    __slots__ = _NAMES

    rename: RenameOption
    omit_defaults: Optional[bool]
    forbid_unknown_fields: Optional[bool]
    array_like: Optional[bool]
    tag: TagOption
    tag_field: Optional[str]

    def __init__(
        self,
        *,
        rename: RenameOption = None,
        omit_defaults: Optional[bool] = None,
        forbid_unknown_fields: Optional[bool] = None,
        array_like: Optional[bool] = None,
        tag: TagOption = None,
        tag_field: Optional[str] = None,
    ) -> None:
        renamer(rename)  # the codec's own check of the option
        _check_flag("omit_defaults", omit_defaults)
        _check_flag("forbid_unknown_fields", forbid_unknown_fields)
        _check_flag("array_like", array_like)
        if tag is not None and not isinstance(tag, bool) and not callable(tag):
            check_tag_value(tag, "polycodec.options")
        if tag_field is not None:
            if not isinstance(tag_field, str):
                raise TypeError(f"polycodec.options: tag_field must be a str, not {tag_field!r}")
            if not tag_field:
                raise ValueError("polycodec.options: tag_field must not be empty")
        values = (rename, omit_defaults, forbid_unknown_fields, array_like, tag, tag_field)
        for name, value in zip(_NAMES, values):
            object.__setattr__(self, name, value)

    def given(self) -> Dict[str, Any]:
        """The options this object sets (not None), in signature order."""
        return {name: getattr(self, name) for name in _NAMES if getattr(self, name) is not None}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Options is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Options is immutable: cannot delete {name!r}")

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in self.given().items()) + ")"

    def _key(self) -> Tuple[Any, ...]:
        # Keyed by type as well as value: tag=1 and tag=True are different tags.
        return tuple((type(getattr(self, n)), getattr(self, n)) for n in _NAMES)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Options):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        try:
            return hash(self._key())
        except TypeError:  # a rename mapping: equal objects still set the same options
            return hash(tuple(self.given()))

    def __reduce__(self) -> Tuple[Callable[..., Options], Tuple[Any, ...]]:
        return (_rebuild, (self.given(),))


def _rebuild(given: Dict[str, Any]) -> Options:
    return Options(**given)


def options(
    *,
    rename: RenameOption = None,
    omit_defaults: Optional[bool] = None,
    forbid_unknown_fields: Optional[bool] = None,
    array_like: Optional[bool] = None,
    tag: TagOption = None,
    tag_field: Optional[str] = None,
) -> Callable[[_C], _C]:
    """A class decorator setting the codec options of one dataclass, as msgspec's ``Struct``
    class keywords do::

        @polycodec.options(tag=True, rename="camel")
        @dataclasses.dataclass
        class Cat:
            pet_name: str

    * ``rename``, ``omit_defaults``, ``forbid_unknown_fields``, ``array_like``: as the ``Codec``
      options of those names, for this class's fields only (nested classes follow their own
      options, or the codec's);
    * ``tag``: tag the class, so it can share a union with other tagged classes without a
      ``Literal`` field: ``True`` (its ``__qualname__``), a str or int (that value), a callable
      (given the ``__qualname__``, returning the value), ``False`` (not tagged, even if a base
      class is);
    * ``tag_field``: the wire name of the tag (``"type"`` by default); giving it tags the class.

    An option left None comes from the class's bases, then from the codec.
    """
    given = Options(
        rename=rename,
        omit_defaults=omit_defaults,
        forbid_unknown_fields=forbid_unknown_fields,
        array_like=array_like,
        tag=tag,
        tag_field=tag_field,
    )

    def decorate(cls: _C) -> _C:
        if not isinstance(cls, type):
            raise TypeError(f"polycodec.options decorates a class, not {cls!r}")
        type.__setattr__(cls, ATTRIBUTE, given)
        _count_change(cls)  # a plan compiled before now had other options
        return cls

    return decorate


#: How many times a class was given options; read by the caches before they compile and when
#: they look something up (see the module's docstring).
generation = 0
# The classes given options, in order: ``_changes[i]`` took the count from ``_changes_base + i``
# to one more. Entries every reader has seen are dropped (``given_since``).
_changes: List["weakref.ref[type]"] = []
_changes_base = 0
_changes_lock = threading.Lock()


def _count_change(cls: type) -> None:
    global generation
    with _changes_lock:
        _changes.append(weakref.ref(cls))
        _options_changed()
        generation += 1


def given_since(seen: int) -> Tuple[int, List[type]]:
    """The current generation and the classes (still alive) given options since generation
    ``seen``; the log before ``seen`` is forgotten (the one reader, ``_cache``, never asks for
    it again)."""
    global _changes_base
    with _changes_lock:
        start = max(seen - _changes_base, 0)
        classes = [cls for ref in _changes[start:] if (cls := ref()) is not None]
        del _changes[:start]
        _changes_base += start
        return generation, classes


class Resolved:
    """The options in force for one record class: its own, its bases', then the codec's."""

    __slots__ = ("rename", "omit_defaults", "forbid_unknown_fields", "array_like", "tag")

    def __init__(
        self,
        rename: RenameOption,
        omit_defaults: bool,
        forbid_unknown_fields: bool,
        array_like: bool,
        tag: Optional[Tuple[str, Union[str, int]]],
    ) -> None:
        self.rename = rename
        self.omit_defaults = omit_defaults
        self.forbid_unknown_fields = forbid_unknown_fields
        self.array_like = array_like
        # (tag field wire name, tag value), or None for an untagged class.
        self.tag = tag


def own_options(cls: type) -> Dict[str, Any]:
    """The options ``cls`` and its bases set, the class's own winning."""
    merged: Dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        found = vars(klass).get(ATTRIBUTE)
        if isinstance(found, Options):
            merged.update(found.given())
    return merged


def resolve(cls: type, codec: Mapping[str, Any]) -> Resolved:
    """The options in force for record class ``cls`` under the codec's ``codec`` options
    (``rename``, ``omit_defaults``, ``forbid_unknown_fields``, ``array_like``)."""
    own = own_options(cls)
    tag: Optional[Tuple[str, Union[str, int]]] = None
    tag_setting = own.get("tag")
    tag_field = own.get("tag_field")
    if tag_setting is not False and (tag_setting is not None or tag_field is not None):
        name = cls.__qualname__
        if tag_setting is None or tag_setting is True:
            value: Any = name
        elif callable(tag_setting):
            value = tag_setting(name)
        else:
            value = tag_setting
        tag = (
            tag_field if tag_field is not None else DEFAULT_TAG_FIELD,
            check_tag_value(value, f"the tag of {name!r}"),
        )
    return Resolved(
        own["rename"] if "rename" in own else codec["rename"],
        own.get("omit_defaults", codec["omit_defaults"]),
        own.get("forbid_unknown_fields", codec["forbid_unknown_fields"]),
        own.get("array_like", codec["array_like"]),
        tag,
    )
