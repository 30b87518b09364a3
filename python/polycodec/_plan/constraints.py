"""The constraints ``Annotated`` metadata puts on a node (``Meta``, annotated-types, ``Avro``):
read, converted to what the node kind stores, and checked for consistency."""

from __future__ import annotations

import math
import re
import sys
from decimal import Decimal
from typing import Any, Dict, FrozenSet, List, Tuple

from .._meta import Avro, Meta, foreign_constraints

_LENGTHS = ("min_length", "max_length")

_LENGTH_KINDS = frozenset({"str", "bytes", "list", "set", "frozenset", "var_tuple", "dict"})
_BOUND_KINDS = frozenset({"int", "float", "decimal"})
# Constraint key -> (node kinds it may be applied to, how to say that in an error).
APPLIES_TO: Dict[str, Tuple[FrozenSet[str], str]] = {
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
EXCLUSIVE = {"ge": "gt", "gt": "ge", "le": "lt", "lt": "le"}


def constraints_of(metadata: Tuple[Any, ...]) -> List[Tuple[str, Any]]:
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
            found += constraints_of(tuple(item))
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


def convert(kind: str, key: str, value: Any) -> Any:
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


def check_ranges(data: Dict[str, Any]) -> None:
    """Refuse merged constraints that no value could satisfy."""
    lo, hi = data.get("min_length"), data.get("max_length")
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"min_length={lo} exceeds max_length={hi}")
    lower = data.get("ge") if data.get("ge") is not None else data.get("gt")
    upper = data.get("le") if data.get("le") is not None else data.get("lt")
    if lower is not None and upper is not None and lower > upper:
        raise ValueError(f"the lower bound {lower!r} exceeds the upper bound {upper!r}")
