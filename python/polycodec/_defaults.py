"""What the plan spec says about defaults, shared by its readers (the plan compiler writes it,
the Avro deriver and binding and the JSON Schema generator read it): the marker of a field
without a default, and which ``default_factory`` gives the same value on every call (such a
default can be written into a schema)."""

from __future__ import annotations

import dataclasses
from typing import Any, Tuple

__all__ = ["CONSTANT_FACTORIES", "NODEFAULT", "constant_factory"]


class _NoDefaultType:
    """Type of :data:`NODEFAULT`; a single instance that survives pickling and copying."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NODEFAULT"

    def __reduce__(self) -> str:
        return "NODEFAULT"


NODEFAULT = _NoDefaultType()
"""Field default meaning "no default" (``None`` is a legitimate default, so it cannot be used)."""


# Factories whose every call gives an equal (empty) value.
CONSTANT_FACTORIES = (list, dict, set, tuple, frozenset)


def constant_factory(factory: Any, seen: Tuple[Any, ...] = ()) -> bool:
    """Whether a ``default_factory`` gives the same value on every call: an empty collection's
    type, or a dataclass (or NamedTuple) class whose fields all have such defaults."""
    if any(factory is known for known in CONSTANT_FACTORIES):
        return True
    if not isinstance(factory, type) or factory in seen:
        return False
    if dataclasses.is_dataclass(factory):
        for f in dataclasses.fields(factory):
            if f.default is not dataclasses.MISSING:
                continue
            if f.default_factory is dataclasses.MISSING:
                return False
            if not constant_factory(f.default_factory, seen + (factory,)):
                return False
        return True
    if issubclass(factory, tuple) and hasattr(factory, "_fields"):  # NamedTuple
        return len(getattr(factory, "_field_defaults", {})) == len(getattr(factory, "_fields"))
    return False
