"""The exceptions polycodec raises. Each carries ``path``: where in the value the problem is,
as text, and ``loc``: the same steps as a tuple."""

from __future__ import annotations

from typing import Tuple, Union

#: One step of ``loc``: a record field's wire name or a dict key (``str``), or a position (``int``).
LocItem = Union[str, int]


class DecodeError(ValueError):
    """The input is not valid for the format (malformed bytes, truncation, nesting too deep).

    ``path`` locates the value being decoded when the problem was found, e.g.
    ``$.contents[3].nbytes``; it also appears at the end of the message. ``loc`` holds the same
    steps as a tuple, ``("contents", 3, "nbytes")`` (``()`` for the root): field wire names and
    dict keys as ``str``, positions as ``int``.
    """

    path: str
    loc: Tuple[LocItem, ...]

    def __init__(self, message: str, path: str = "$", loc: Tuple[LocItem, ...] = ()) -> None:
        super().__init__(message)
        self.path = path
        self.loc = tuple(loc)


class ValidationError(DecodeError):
    """The input is well-formed but does not fit the type: wrong type, failed constraint,
    missing required field, unknown field (with ``forbid_unknown_fields``), unknown tag."""


class EncodeError(TypeError):
    """A value does not match the type it is being encoded as. ``path`` and ``loc`` locate it
    as for :class:`DecodeError`."""

    path: str
    loc: Tuple[LocItem, ...]

    def __init__(self, message: str, path: str = "$", loc: Tuple[LocItem, ...] = ()) -> None:
        super().__init__(message)
        self.path = path
        self.loc = tuple(loc)
