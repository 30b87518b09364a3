"""Per-field settings and constraints, attached to a type with ``typing.Annotated``."""

from __future__ import annotations

import re
import sys
from decimal import Decimal
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypedDict, Union

__all__ = ["Avro", "AvroName", "Meta"]

Number = Union[int, float, Decimal]

_FIELDS: Tuple[str, ...] = (
    "name",
    "aliases",
    "min_length",
    "max_length",
    "ge",
    "gt",
    "le",
    "lt",
    "multiple_of",
    "pattern",
    "max_digits",
    "decimal_places",
    "tz",
)


class AvroName(TypedDict, total=False):
    """The Avro naming of a class, set as its ``__avro__`` class attribute (every key optional;
    the keys not given keep their derived value)::

        @dataclass
        class Chunk:
            __avro__: ClassVar[AvroName] = {"name": "Chunk", "namespace": "com.example"}

    * ``name``: the record or enum name, ``[A-Za-z_][A-Za-z0-9_]*`` (a generic class's type
      arguments are still appended: ``Box[int]`` is ``<name>_int``);
    * ``namespace``: dotted names, or ``""`` / ``None`` for none;
    * ``doc``: the schema's ``"doc"``;
    * ``aliases``: former names (short or full) a reader also accepts for this type;
    * ``default``: an enum's default symbol (a member name), which a reader takes for a symbol
      written by a newer writer that it does not know (enums only).
    """

    name: str
    namespace: Optional[str]
    doc: str
    aliases: List[str]
    default: str


# The Avro representations ``Avro(type)`` may choose, and the plan node kinds each applies to
# (a Flag enum and a Literal of ints are written as ints, so they may be "int" or "long").
AVRO_TYPES: Dict[str, Tuple[str, ...]] = {
    "int": ("int", "enum", "literal"),
    "long": ("int", "enum", "literal"),
    "float": ("float",),
    "double": ("float",),
    "timestamp-millis": ("datetime",),
    "timestamp-micros": ("datetime",),
    "local-timestamp-millis": ("datetime",),
    "local-timestamp-micros": ("datetime",),
    "time-millis": ("time",),
    "time-micros": ("time",),
    "bytes": ("decimal", "bytes"),
    "fixed": ("decimal", "uuid", "bytes"),
    "string": ("decimal", "uuid", "str"),
}

_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class Avro:
    """How a field's value is written in Avro, beside its Python type, in ``Annotated``::

        count: Annotated[int, Avro("int")]                 # a 32-bit Avro int, not a long
        at: Annotated[datetime, Avro("timestamp-millis")]
        price: Annotated[Decimal, Meta(max_digits=12, decimal_places=2),
                         Avro("fixed", size=6, name="Money")]
        note: Annotated[Optional[str], Avro(doc="Shown to the customer")]

    * ``type``: the Avro representation, one of those the value's type allows: ``"int"`` or
      ``"long"`` (int, a Flag enum, a Literal of ints); ``"float"`` or ``"double"`` (float);
      ``"timestamp-millis"``, ``"timestamp-micros"`` (aware datetime) and their ``local-``
      forms (naive, ``Meta(tz=False)``); ``"time-millis"``, ``"time-micros"`` (time);
      ``"bytes"``, ``"fixed"`` or ``"string"`` (Decimal, whose precision and scale come from
      ``Meta(max_digits=, decimal_places=)``); ``"string"`` or ``"fixed"`` (UUID, a 16-byte
      fixed); ``"fixed"`` (bytes of one length). A value that does not fit a narrower type (an
      int past 32 bits, a float past a 32-bit float's range) is an ``EncodeError``.
    * ``size``: a fixed's size in bytes (a UUID's is 16); ``name``: a fixed's name (a fixed is
      a named type: one name, one definition in the schema).
    * ``doc``: the record field's ``"doc"`` (read from the field's own annotation).

    Derived schemas follow it; a schema given with ``schema=`` must agree with it. Instances
    are immutable and hashable, as ``Meta``'s.
    """

    __slots__ = ("type", "size", "name", "doc")

    type: Optional[str]
    size: Optional[int]
    name: Optional[str]
    doc: Optional[str]

    def __init__(
        self,
        type: Optional[str] = None,
        *,
        size: Optional[int] = None,
        name: Optional[str] = None,
        doc: Optional[str] = None,
    ) -> None:
        if type is not None and type not in AVRO_TYPES:
            raise ValueError(
                f"Avro: type {type!r} is not one of {', '.join(map(repr, AVRO_TYPES))}"
            )
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size < 2**31:
                raise ValueError(f"Avro: size must be an int from 0 to 2**31-1, got {size!r}")
            if type != "fixed":
                raise ValueError("Avro: size applies to type='fixed' only")
        if name is not None:
            if not isinstance(name, str) or not _AVRO_NAME.match(name):
                raise ValueError(f"Avro: name {name!r} is not a valid Avro name")
            if type != "fixed":
                raise ValueError("Avro: name applies to type='fixed' only")
        elif type == "fixed":
            raise ValueError("Avro: type='fixed' needs name= (a fixed is a named type)")
        if doc is not None and not isinstance(doc, str):
            raise TypeError(f"Avro: doc must be a str, got {doc!r}")
        for slot, value in (("type", type), ("size", size), ("name", name), ("doc", doc)):
            object.__setattr__(self, slot, value)

    def representation(self) -> Optional[Dict[str, Any]]:
        """The representation it sets (``type``, ``size``, ``name``), or None for a doc only."""
        if self.type is None:
            return None
        return {"type": self.type, "size": self.size, "name": self.name}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Avro is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Avro is immutable: cannot delete {name!r}")

    def _key(self) -> Tuple[Any, ...]:
        return (self.type, self.size, self.name, self.doc)

    def __repr__(self) -> str:
        args = [repr(self.type)] if self.type is not None else []
        for key in ("size", "name", "doc"):
            value = getattr(self, key)
            if value is not None:
                args.append(f"{key}={value!r}")
        return f"Avro({', '.join(args)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Avro):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        return (_rebuild_avro, self._key())


def _rebuild_avro(type: Optional[str], size: Optional[int], name: Optional[str], doc: Any) -> Avro:
    """Unpickling helper: Avro is immutable, so rebuild it via __init__."""
    return Avro(type, size=size, name=name, doc=doc)


def _check_count(label: str, value: Optional[int], minimum: int) -> None:
    """Check an optional integer setting; a bool is refused since True as a length is a bug."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"Meta: {label} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"Meta: {label} must be >= {minimum}, got {value!r}")


def _check_number(label: str, value: Optional[Number]) -> None:
    """Check an optional numeric bound; NaN is refused since no value could ever satisfy it."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise TypeError(f"Meta: {label} must be an int, float or Decimal, got {value!r}")
    if value != value:  # NaN, float or Decimal
        raise ValueError(f"Meta: {label} must not be NaN")


def _check_aliases(aliases: Any) -> Tuple[str, ...]:
    """The ``aliases`` setting as a tuple of distinct, non-empty strs."""
    if isinstance(aliases, (str, bytes)) or not isinstance(aliases, (list, tuple)):
        raise TypeError(f"Meta: aliases must be a tuple or list of str, got {aliases!r}")
    for alias in aliases:
        if not isinstance(alias, str):
            raise TypeError(f"Meta: aliases must be strs, got {alias!r}")
        if not alias:
            raise ValueError("Meta: an alias must not be empty")
    if len(set(aliases)) != len(aliases):
        raise ValueError(f"Meta: aliases repeat a name: {list(aliases)!r}")
    return tuple(aliases)


def _rebuild(settings: Dict[str, Any]) -> Meta:
    """Unpickling helper: Meta is keyword-only and immutable, so rebuild it via __init__."""
    return Meta(**settings)


class Meta:
    """Settings and constraints for one annotated type, e.g. ``Annotated[str, Meta(max_length=8)]``.

    The plan compiler reads these once per type, so every argument is checked here, at the
    place the user wrote it, rather than surfacing later as a confusing compile or decode error.

    * ``name``: wire name of a record field (overrides the ``rename`` option); only read from
      the field's own annotation.
    * ``aliases``: other names the decoders accept for that field besides its wire name (the
      names it had before a rename), and the Avro field's ``aliases``; only read from the
      field's own annotation.
    * ``min_length`` / ``max_length``: bounds on the length of a str, bytes, collection or dict.
    * ``ge`` / ``gt`` / ``le`` / ``lt``: inclusive / exclusive bounds on an int, float or Decimal.
    * ``multiple_of``: an int or float must be a multiple of this (> 0).
    * ``pattern``: a str must match this regular expression (``re.search`` semantics).
    * ``max_digits`` / ``decimal_places``: limits on a Decimal.
    * ``tz``: for datetime and time, ``True`` requires an aware value, ``False`` a naive one.

    Instances are immutable and hashable, so they can live inside ``Annotated`` types, which
    ``typing`` caches and compares.
    """

    __slots__ = _FIELDS

    name: Optional[str]
    aliases: Optional[Tuple[str, ...]]
    min_length: Optional[int]
    max_length: Optional[int]
    ge: Optional[Number]
    gt: Optional[Number]
    le: Optional[Number]
    lt: Optional[Number]
    multiple_of: Optional[Number]
    pattern: Optional[str]
    max_digits: Optional[int]
    decimal_places: Optional[int]
    tz: Optional[bool]

    def __init__(
        self,
        *,
        name: Optional[str] = None,
        aliases: Optional[Sequence[str]] = None,
        min_length: Optional[int] = None,
        max_length: Optional[int] = None,
        ge: Optional[Number] = None,
        gt: Optional[Number] = None,
        le: Optional[Number] = None,
        lt: Optional[Number] = None,
        multiple_of: Optional[Number] = None,
        pattern: Optional[str] = None,
        max_digits: Optional[int] = None,
        decimal_places: Optional[int] = None,
        tz: Optional[bool] = None,
    ) -> None:
        if name is not None:
            if not isinstance(name, str):
                raise TypeError(f"Meta: name must be a str, got {name!r}")
            if not name:
                raise ValueError("Meta: name must not be empty")
        if aliases is not None:
            aliases = _check_aliases(aliases)
        _check_count("min_length", min_length, 0)
        _check_count("max_length", max_length, 0)
        if min_length is not None and max_length is not None and min_length > max_length:
            raise ValueError(f"Meta: min_length ({min_length}) exceeds max_length ({max_length})")
        for label, bound in (("ge", ge), ("gt", gt), ("le", le), ("lt", lt)):
            _check_number(label, bound)
        if ge is not None and gt is not None:
            raise ValueError("Meta: give at most one of ge and gt")
        if le is not None and lt is not None:
            raise ValueError("Meta: give at most one of le and lt")
        lower = ge if ge is not None else gt
        upper = le if le is not None else lt
        if lower is not None and upper is not None and lower > upper:
            raise ValueError(f"Meta: the lower bound {lower!r} exceeds the upper bound {upper!r}")
        _check_number("multiple_of", multiple_of)
        if multiple_of is not None and not multiple_of > 0:
            raise ValueError(f"Meta: multiple_of must be > 0, got {multiple_of!r}")
        if pattern is not None:
            if not isinstance(pattern, str):
                raise TypeError(f"Meta: pattern must be a str, got {pattern!r}")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"Meta: pattern {pattern!r} is not a valid regex: {exc}") from None
        _check_count("max_digits", max_digits, 1)
        _check_count("decimal_places", decimal_places, 0)
        if tz is not None and not isinstance(tz, bool):
            raise TypeError(f"Meta: tz must be True, False or None, got {tz!r}")

        values = (
            name,
            aliases,
            min_length,
            max_length,
            ge,
            gt,
            le,
            lt,
            multiple_of,
            pattern,
            max_digits,
            decimal_places,
            tz,
        )
        for field, value in zip(_FIELDS, values):
            object.__setattr__(self, field, value)

    def settings(self) -> Dict[str, Any]:
        """The arguments that were given (not None), in signature order."""
        return {f: getattr(self, f) for f in _FIELDS if getattr(self, f) is not None}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Meta is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Meta is immutable: cannot delete {name!r}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.settings().items())
        return f"Meta({args})"

    def _key(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Meta):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> Tuple[Callable[[Dict[str, Any]], Meta], Tuple[Dict[str, Any]]]:
        return (_rebuild, (self.settings(),))


# msgspec.Meta's constraint arguments, each meaning what the Meta argument of the same name means
# (msgspec's pattern is unanchored too); its other arguments (title, description, examples,
# extra_json_schema, extra) only describe.
_MSGSPEC_CONSTRAINTS: Tuple[str, ...] = tuple(
    f for f in _FIELDS if f not in ("name", "aliases", "max_digits", "decimal_places")
)


def foreign_constraints(item: Any) -> Optional[List[Tuple[str, Any]]]:
    """The constraints another library's ``Annotated`` marker carries, for a user moving from it.

    ``msgspec.Meta`` is read as the ``Meta`` with the same arguments. pydantic's ``Field`` with
    constraints, an alias or a validator, and pydantic's validator markers, hold checks polycodec
    does not run, so they raise ValueError rather than leave a codec that silently checks less.
    None for anything else (annotated-types markers are the plan compiler's own to read).
    Libraries are only looked at if already imported, as they must be for their markers to exist.
    """
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and isinstance(item, msgspec.Meta):
        given = {k: getattr(item, k) for k in _MSGSPEC_CONSTRAINTS}
        try:
            meta = Meta(**{k: v for k, v in given.items() if v is not None})
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{item!r}: {exc}") from None
        return list(meta.settings().items())
    fields = sys.modules.get("pydantic.fields")
    if fields is not None and isinstance(item, fields.FieldInfo):
        carried = [repr(m) for m in item.metadata]
        if item.alias is not None:
            carried.append(f"alias={item.alias!r}")
        if carried:
            raise ValueError(
                f"pydantic's Field carries {', '.join(carried)}, which polycodec does not apply; "
                "give constraints as polycodec.Meta(...) or annotated-types markers, and a wire "
                "name as Meta(name=...)"
            )
        return []
    if type(item).__module__ == "pydantic.functional_validators":
        raise ValueError(f"the pydantic validator {item!r} is not run by polycodec")
    return None
