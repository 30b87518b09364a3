"""Module-level entry points: one-off calls that share compiled codecs through a cache."""

from __future__ import annotations

import builtins
import itertools
from typing import (
    TYPE_CHECKING,
    Any,
    Iterable,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    overload,
)

from . import _cache
from ._custom_types import Extension
from ._polycodec import FORMATS

if TYPE_CHECKING:
    from ._polycodec import Format
else:
    #: The wire formats this build implements, from the extension's own list (``FORMATS``). The
    #: stub declares the same ``Literal`` for type checkers; tests/test_types_matrix.py checks
    #: that the two agree.
    Format = Literal[tuple(FORMATS)]

T = TypeVar("T")


def encode_one(obj: Any, format: Format = "json", type: Any = None, **options: Any) -> bytes:
    """Encodes one value; its type defaults to ``type(obj)``."""
    tp = obj.__class__ if type is None else type
    return _cache.codec_for(tp, format, options).encode_one(obj)


def _with_type(objs: Iterable[Any], type: Any, function: str) -> tuple[Iterable[Any], Any]:
    """``objs`` and the type to encode them as: ``type``, else the first value's type (the first
    value of an iterable that is no sequence is taken and put back in front)."""
    if type is not None:
        return objs, type
    if isinstance(objs, Sequence):
        head: Sequence[Any] = objs[:1]
    else:
        iterator = iter(objs)
        head = list(itertools.islice(iterator, 1))
        objs = itertools.chain(head, iterator)
    if len(head) == 0:
        raise TypeError(f"{function} needs type= to encode an empty sequence")
    return objs, head[0].__class__


def encode_many(
    objs: Iterable[Any], format: Format = "json", type: Any = None, **options: Any
) -> bytes:
    """Encodes a sequence or other iterable of values as one message: a JSON or MessagePack
    array, an Avro object container file, a pickled list.

    Without ``type``, the type of the first value is used, so ``type`` is needed for an empty
    sequence and for values of a union.
    """
    objs, type = _with_type(objs, type, "encode_many")
    return _cache.codec_for(type, format, options).encode_many(objs)


def encode_into(
    obj: Any,
    buffer: bytearray,
    offset: int = 0,
    format: Format = "json",
    type: Any = None,
    **options: Any,
) -> None:
    """Encodes one value into ``buffer`` from ``offset`` on (``-1``: its end), which then ends
    where the output ends; its type defaults to ``type(obj)``."""
    tp = obj.__class__ if type is None else type
    _cache.codec_for(tp, format, options).encode_into(obj, buffer, offset)


def encode_many_into(
    objs: Iterable[Any],
    buffer: bytearray,
    offset: int = 0,
    format: Format = "json",
    type: Any = None,
    **options: Any,
) -> None:
    """``encode_many`` into ``buffer`` from ``offset`` on, as ``encode_into``."""
    objs, type = _with_type(objs, type, "encode_many_into")
    _cache.codec_for(type, format, options).encode_many_into(objs, buffer, offset)


# The overloads let a type checker infer the result from a class (``decode_one(b, Event)`` is an
# ``Event``); a type that is no class (``list[int]``, a union, an alias) gives ``Any``, as
# mypy cannot yet spell "an instance of this type form".
@overload
def decode_one(
    buf: Any,
    type: builtins.type[T],
    format: Format = ...,
    *,
    writer_schema: Any = ...,
    **options: Any,
) -> T: ...
@overload
def decode_one(
    buf: Any, type: Any, format: Format = ..., *, writer_schema: Any = ..., **options: Any
) -> Any: ...
def decode_one(
    buf: Any, type: Any, format: Format = "json", *, writer_schema: Any = None, **options: Any
) -> Any:
    """Decodes one value of ``type`` (Avro: written with ``writer_schema``, if given)."""
    codec = _cache.codec_for(type, format, options)
    if writer_schema is None:
        return codec.decode_one(buf)
    return codec.decode_one(buf, writer_schema=writer_schema)


@overload
def decode_many(
    buf: Any, type: builtins.type[T], format: Format = ..., **options: Any
) -> list[T]: ...
@overload
def decode_many(buf: Any, type: Any, format: Format = ..., **options: Any) -> list[Any]: ...
def decode_many(buf: Any, type: Any, format: Format = "json", **options: Any) -> list[Any]:
    """Decodes a message written by ``encode_many`` into a list of ``type``."""
    return _cache.codec_for(type, format, options).decode_many(buf)


def to_builtins(
    obj: Any, type: Any = None, *, builtin_types: Optional[Iterable[Any]] = None, **options: Any
) -> Any:
    """The JSON form of ``obj`` as Python objects (dict, list, str, int, float, bool, None):
    ``json.loads(encode_one(obj, "json", ...))`` without the bytes. Values of the types in
    ``builtin_types`` (bytes, bytearray, datetime, date, time, timedelta, UUID, Decimal) are
    left as they are. ``options`` are the ``Codec`` options; the type defaults to ``type(obj)``.
    """
    tp = obj.__class__ if type is None else type
    return _cache.codec_for(tp, "json", options).to_builtins(obj, builtin_types=builtin_types)


@overload
def from_builtins(
    data: Any,
    type: builtins.type[T],
    *,
    builtin_types: Optional[Iterable[Any]] = ...,
    from_attributes: bool = ...,
    **options: Any,
) -> T: ...
@overload
def from_builtins(
    data: Any,
    type: Any,
    *,
    builtin_types: Optional[Iterable[Any]] = ...,
    from_attributes: bool = ...,
    **options: Any,
) -> Any: ...
def from_builtins(
    data: Any,
    type: Any,
    *,
    builtin_types: Optional[Iterable[Any]] = None,
    from_attributes: bool = False,
    **options: Any,
) -> Any:
    """A value of ``type`` from its JSON form given as Python objects (as ``json.loads``
    returns them), validated as ``decode_one`` validates JSON, with the same errors and paths.
    Values of the types in ``builtin_types`` are also accepted as themselves; with
    ``from_attributes``, a record as any object whose attributes hold its fields."""
    codec = _cache.codec_for(type, "json", options)
    if from_attributes:
        return codec.from_builtins(data, builtin_types=builtin_types, from_attributes=True)
    return codec.from_builtins(data, builtin_types=builtin_types)


def json_schema(
    type: Any,
    *,
    ref_template: Optional[str] = None,
    rename: Any = None,
    omit_defaults: bool = False,
    forbid_unknown_fields: bool = False,
    strict: bool = True,
    array_like: bool = False,
    extensions: Optional[Mapping[Any, Extension]] = None,
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``type``'s JSON form under the ``Codec`` options.

    ``ref_template`` (default ``"#/$defs/{name}"``) is how references to records and enums
    are written, e.g. ``"#/components/schemas/{name}"`` for OpenAPI. The derived schema is
    cached; every call returns a new copy, so the caller may change it.
    """
    defaults = (
        rename is None
        and omit_defaults is False
        and forbid_unknown_fields is False
        and strict is True
        and array_like is False
        and extensions is None
        and (ref_template is None or builtins.type(ref_template) is str)
    )
    options: dict[str, Any] = {
        "rename": rename,
        "omit_defaults": omit_defaults,
        "forbid_unknown_fields": forbid_unknown_fields,
        "strict": strict,
        "array_like": array_like,
        "extensions": extensions,
    }
    return _cache.json_schema(type, options, ref_template, defaults)
