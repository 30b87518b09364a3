"""The exceptions polycodec raises. Each carries ``path``: where in the value the problem is."""

from __future__ import annotations


class DecodeError(ValueError):
    """The input is not valid for the format (malformed bytes, truncation, nesting too deep).

    ``path`` locates the value being decoded when the problem was found, e.g.
    ``$.contents[3].nbytes``; it also appears at the end of the message.
    """

    path: str

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path


class ValidationError(DecodeError):
    """The input is well-formed but does not fit the type: wrong type, failed constraint,
    missing required field, unknown field (with ``forbid_unknown_fields``), unknown tag."""


class EncodeError(TypeError):
    """A value does not match the type it is being encoded as."""

    path: str

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.path = path
