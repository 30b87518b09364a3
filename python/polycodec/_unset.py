"""``UNSET``: the value of a dataclass field that was not given, as opposed to one given as None.

A field annotated ``T | UnsetType`` with the default ``UNSET`` is left out when its value is
``UNSET`` and decodes to ``UNSET`` when the input leaves it out: the PATCH-request idiom, as
msgspec's ``UNSET`` does.
"""

from __future__ import annotations

from typing import Any, final

__all__ = ["UNSET", "UnsetType"]


@final
class UnsetType:
    """The type of :data:`UNSET`; its one instance is the only value it has."""

    __slots__ = ()

    def __new__(cls) -> UnsetType:
        return UNSET

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        # Pickled by reference, as ``polycodec.UNSET``: unpickling gives the one instance back.
        return "UNSET"

    def __copy__(self) -> UnsetType:
        return self

    def __deepcopy__(self, memo: Any) -> UnsetType:
        return self


# The public name pickles refer to (``__reduce__`` names the global in the class's module).
UnsetType.__module__ = "polycodec"
UNSET: UnsetType = object.__new__(UnsetType)
"""A field value meaning "not given": left out when encoding, the default when decoding."""
