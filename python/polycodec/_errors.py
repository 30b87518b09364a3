"""The exceptions polycodec raises. Each carries ``path``: where in the value the problem is,
as text, and ``loc``: the same steps as a tuple. ``DecodeError.errors()`` (and so
``ValidationError.errors()``) lists them in pydantic's shape: ``{"type", "loc", "msg"}``, with
``"input"`` where the decoder has the value that failed."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

#: One step of ``loc``: a record field's wire name or a dict key (``str``), or a position (``int``).
LocItem = Union[str, int]

#: One entry of ``errors()``: ``type`` (a stable code, see the Errors page of the docs),
#: ``loc``, ``msg`` and, where known, ``input``.
ErrorDetails = Dict[str, Any]


class DecodeError(ValueError):
    """The input is not valid for the format (malformed bytes, truncation, nesting too deep).

    ``path`` locates the value being decoded when the problem was found, e.g.
    ``$.contents[3].nbytes``; it also appears at the end of the message. ``loc`` holds the same
    steps as a tuple, ``("contents", 3, "nbytes")`` (``()`` for the root): field wire names and
    dict keys as ``str``, positions as ``int``. ``code`` is the error's stable code.
    """

    path: str
    loc: Tuple[LocItem, ...]
    code: str

    def __init__(
        self,
        message: str,
        path: str = "$",
        loc: Tuple[LocItem, ...] = (),
        *,
        code: str = "value_error",
        errors: Optional[List[ErrorDetails]] = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.loc = tuple(loc)
        self.code = code
        self._errors = errors

    def errors(self) -> List[ErrorDetails]:
        """Every error this exception reports, as pydantic's ``ValidationError.errors()`` gives
        them: one dict per error with ``type`` (its code), ``loc`` (a tuple; a missing or
        unknown field's ends with the field's name, as pydantic's does), ``msg`` (the message
        without its path) and, where the decoder has the value that failed, ``input``. A codec
        built with ``errors="all"`` reports every validation error of the value; otherwise the
        one error is the list's only entry."""
        if self._errors is not None:
            return [dict(entry) for entry in self._errors]
        return [{"type": self.code, "loc": self.loc, "msg": str(self)}]


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
