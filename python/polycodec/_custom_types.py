"""Extension types: classes polycodec does not know, carried as a value of a type it does.

``Codec(T, fmt, extensions={Path: Extension(str, encode=str, decode=Path)})`` writes every
``Path`` in ``T`` as the ``str`` that ``encode`` returns, in every format, and turns the decoded
``str`` back into a ``Path`` with ``decode``. The wire type is any annotation polycodec
compiles (``str``, ``int``, ``list[float]``, a dataclass, ``Any``); Avro needs a concrete one
for its schema, the other formats accept ``Any`` (the default).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional

__all__ = ["Extension", "check_extensions"]


class Extension:
    """How values of one class travel: as a value of ``wire`` (an annotation), made by
    ``encode(value)`` when encoding and turned back by ``decode(wire_value)`` when decoding.

    ``encode`` plays the part of msgspec's ``enc_hook`` and ``decode`` that of its ``dec_hook``
    (without the type argument: each class has its own ``Extension``). A ``TypeError`` or
    ``ValueError`` they raise becomes an ``EncodeError`` / ``ValidationError`` with the path.
    Instances are immutable and hashable, so codecs built with them are cached by the
    module-level functions.
    """

    __slots__ = ("wire", "encode", "decode")

    wire: Any
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]

    def __init__(
        self,
        wire: Any = Any,
        *,
        encode: Callable[[Any], Any],
        decode: Callable[[Any], Any],
    ) -> None:
        if not callable(encode):
            raise TypeError(f"Extension encode= must be callable, got {encode!r}")
        if not callable(decode):
            raise TypeError(f"Extension decode= must be callable, got {decode!r}")
        object.__setattr__(self, "wire", wire)
        object.__setattr__(self, "encode", encode)
        object.__setattr__(self, "decode", decode)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Extension is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Extension is immutable: cannot delete {name!r}")

    def _key(self) -> tuple[Any, Any, Any]:
        return (self.wire, self.encode, self.decode)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Extension):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        wire = getattr(self.wire, "__qualname__", None) or repr(self.wire)
        return f"Extension({wire}, encode={self.encode!r}, decode={self.decode!r})"

    def __reduce__(self) -> Any:
        return (_rebuild, (self.wire, self.encode, self.decode))


def _rebuild(wire: Any, encode: Callable[[Any], Any], decode: Callable[[Any], Any]) -> Extension:
    return Extension(wire, encode=encode, decode=decode)


def check_extensions(extensions: Optional[Mapping[Any, Any]]) -> Dict[type, Extension]:
    """The ``extensions`` option as a dict, checked: classes to ``Extension`` instances."""
    if extensions is None:
        return {}
    if not isinstance(extensions, Mapping):
        raise TypeError(
            "extensions must be a mapping {class: polycodec.Extension(...)}, "
            f"got {type(extensions).__qualname__}"
        )
    out: Dict[type, Extension] = {}
    for cls, extension in extensions.items():
        if not isinstance(cls, type):
            raise TypeError(f"extensions keys must be classes, got {cls!r}")
        if not isinstance(extension, Extension):
            raise TypeError(
                f"extensions[{cls.__qualname__}] must be a polycodec.Extension, got {extension!r}"
            )
        out[cls] = extension
    return out
