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

#: A container's step shared by the errors inside it: ``(outer link or None, step)``.
_Link = Tuple[Optional["_Link"], LocItem]


class _Loc:
    """The ``loc`` of one error of an ``errors="all"`` report, kept until ``errors()`` makes
    its tuple: the link of the container steps it shares with the report's other errors
    (innermost first) and its own steps. Thousands of errors deep in a document then hold one
    copy of their common path, not one each."""

    __slots__ = ("outer", "own")

    def __init__(self, outer: Optional[_Link], own: Tuple[LocItem, ...]) -> None:
        self.outer = outer
        self.own = own

    def steps(self, made: Dict[int, Optional[Tuple[LocItem, ...]]]) -> Tuple[LocItem, ...]:
        """The tuple. ``made`` (for one call of ``errors()``, while the links live) records each
        link met by ``id``, and keeps the steps up to a link once a second error meets it: each
        shared link is walked once however many errors share it, and a link of one error alone
        keeps nothing."""
        pending: List[_Link] = []
        link = self.outer
        while link is not None and made.get(id(link)) is None:
            pending.append(link)
            link = link[0]
        # The loop stopped at the root or at a link whose steps are kept (never empty).
        shared = (made[id(link)] or ()) if link is not None else ()
        for link in reversed(pending):
            shared = shared + (link[1],)
            made[id(link)] = shared if id(link) in made else None
        return shared + self.own


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
            made: Dict[int, Optional[Tuple[LocItem, ...]]] = {}
            entries = [dict(entry) for entry in self._errors]
            for entry in entries:
                loc = entry.get("loc")
                if isinstance(loc, _Loc):
                    entry["loc"] = loc.steps(made)
            return entries
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
