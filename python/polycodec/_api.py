"""Module-level entry points: one-off calls that share compiled codecs through a cache."""

from __future__ import annotations

import builtins
import copy
import dataclasses
import itertools
import threading
import typing
from typing import (
    TYPE_CHECKING,
    Any,
    Hashable,
    Iterable,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypeVar,
    overload,
)

from ._extension import Extension
from ._jsonschema import json_schema as _derive_json_schema
from ._meta import Meta
from ._polycodec import FORMATS, Codec, _options_generation

if TYPE_CHECKING:
    from ._polycodec import Format
else:
    #: The wire formats this build implements, from the extension's own list (``FORMATS``). The
    #: stub declares the same ``Literal`` for type checkers; tests/test_types_matrix.py checks
    #: that the two agree.
    Format = Literal[tuple(FORMATS)]

T = TypeVar("T")

_CACHE_LIMIT = 1024
# key -> (codec, the unhashable objects whose ids the key holds, kept alive with it)
_cache: dict[Hashable, tuple[Codec[Any], list[Any]]] = {}
_cache_lock = threading.Lock()
# The fast path for calls without options: (id of the type object, format) -> (the type object,
# kept alive so that its id stays its own, and its codec). Keyed by identity, never by ``==``:
# ``list[A | B] == list[B | A]`` (see ``_type_key``), but they are distinct objects. A type
# spelled anew at each call (``list[int]`` creates a new alias object) misses here and takes
# the structural key; a class, or an alias kept in a variable, is found without walking it.
_by_identity: dict[tuple[int, str], tuple[Any, Codec[Any]]] = {}


def _value_key(value: Any, keep: list[Any]) -> Hashable:
    """A hashable stand-in for a value (an option, a Literal value, an ``Annotated`` marker)
    that tells apart what ``==`` does not: ``1``, ``1.0`` and ``True`` (the type goes into the
    key), and mappings regardless of their insertion order. Unhashable objects are keyed by
    identity; ``keep`` collects them so that their ids stay theirs while the key is cached."""
    if isinstance(value, Mapping):
        items = [(_value_key(k, keep), _value_key(v, keep)) for k, v in value.items()]
        return ("mapping", frozenset(items))
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return (type(value), tuple(_value_key(item, keep) for item in value))
    if isinstance(value, Meta):
        return (Meta, _value_key(value.settings(), keep))
    if isinstance(value, Extension):
        # Its own == compares the wire types with ==, which forgets union order.
        return (Extension, _type_key(value.wire, keep), value.encode, value.decode)
    if isinstance(value, type) or typing.get_origin(value) is not None:
        return _type_key(value, keep)
    if dataclasses.is_dataclass(value):
        fields = tuple(_value_key(getattr(value, f.name), keep) for f in dataclasses.fields(value))
        return (type(value), fields)
    try:
        hash(value)
    except TypeError:
        keep.append(value)
        return ("id", id(value))
    return (type(value), value)


def _type_key(tp: Any, keep: list[Any]) -> Hashable:
    """A cache key for a type that keeps what ``==`` on typing constructs forgets.

    ``Union[A, B] == Union[B, A]`` (so ``list[A | B]`` would reuse the codec of ``list[B | A]``,
    whose Avro branch order differs), and ``Literal[1] == Literal[True]`` inside some
    containers. The key walks the construct: origin and arguments in their order, Literal
    values with their types, ``Annotated`` metadata by value (or identity when unhashable)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        metadata = tuple(_value_key(item, keep) for item in tp.__metadata__)
        return ("annotated", _type_key(tp.__origin__, keep), metadata)
    if origin is typing.Literal:
        return ("literal", tuple((type(v), v) for v in typing.get_args(tp)))
    if origin is not None:
        args = tuple(
            (
                _type_key(arg, keep)
                if not isinstance(arg, list)
                else ("list", tuple(_type_key(a, keep) for a in arg))
            )
            for arg in typing.get_args(tp)
        )
        # Origins such as typing.Union and types.UnionType are hashable; keep what they are
        # (Optional[X] and X | None compile the same, so a distinct key only costs a compile).
        return ("generic", _type_key(origin, keep), args)
    try:
        hash(tp)
    except TypeError:
        keep.append(tp)
        return ("id", id(tp))
    return ("type", tp)


def _options_key(options: dict[str, Any], keep: list[Any]) -> Hashable:
    return tuple((name, _value_key(value, keep)) for name, value in sorted(options.items()))


def codec_for(tp: Any, format: Format, options: dict[str, Any]) -> Codec[Any]:
    """The cached codec for (type, format, options), compiled on first use."""
    if not options:
        known = _by_identity.get((id(tp), format))
        if known is not None and known[0] is tp:
            return known[1]
    # A codec built (or found) while some class is given options may hold the old ones: it is
    # used, not kept (see ``_cache.forget_class``, which then empties these caches).
    generation = _options_generation()
    keep: list[Any] = []
    key: Hashable = (_type_key(tp, keep), format, _options_key(options, keep))
    entry = _cache.get(key)
    if entry is not None:
        codec = entry[0]
    else:
        codec = Codec(tp, format, **options)
    with _cache_lock:
        if _options_generation() != generation:
            return codec
        if entry is None:
            if len(_cache) >= _CACHE_LIMIT:
                _cache.clear()
            _cache[key] = (codec, keep)
        if not options:
            if len(_by_identity) >= _CACHE_LIMIT:
                _by_identity.clear()
            _by_identity[(id(tp), format)] = (tp, codec)
    return codec


def forget_codecs() -> None:
    """Drops every cached codec and JSON Schema (a class's options changed, see
    ``_cache.forget_class``)."""
    with _cache_lock:
        _cache.clear()
        _by_identity.clear()
        _schema_cache.clear()
        _schema_by_identity.clear()


def encode_one(obj: Any, format: Format = "json", type: Any = None, **options: Any) -> bytes:
    """Encodes one value; its type defaults to ``type(obj)``."""
    tp = obj.__class__ if type is None else type
    return codec_for(tp, format, options).encode_one(obj)


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
    return codec_for(type, format, options).encode_many(objs)


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
    codec_for(tp, format, options).encode_into(obj, buffer, offset)


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
    codec_for(type, format, options).encode_many_into(objs, buffer, offset)


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
    codec = codec_for(type, format, options)
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
    return codec_for(type, format, options).decode_many(buf)


def to_builtins(
    obj: Any, type: Any = None, *, builtin_types: Optional[Iterable[Any]] = None, **options: Any
) -> Any:
    """The JSON form of ``obj`` as Python objects (dict, list, str, int, float, bool, None):
    ``json.loads(encode_one(obj, "json", ...))`` without the bytes. Values of the types in
    ``builtin_types`` (bytes, bytearray, datetime, date, time, timedelta, UUID, Decimal) are
    left as they are. ``options`` are the ``Codec`` options; the type defaults to ``type(obj)``.
    """
    tp = obj.__class__ if type is None else type
    return codec_for(tp, "json", options).to_builtins(obj, builtin_types=builtin_types)


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
    codec = codec_for(type, "json", options)
    if from_attributes:
        return codec.from_builtins(data, builtin_types=builtin_types, from_attributes=True)
    return codec.from_builtins(data, builtin_types=builtin_types)


_schema_cache: dict[Hashable, tuple[dict[str, Any], list[Any]]] = {}
# As ``_by_identity``, for calls with the default options: (id of the type object,
# ref_template) -> (the type object, its schema).
_schema_by_identity: dict[tuple[int, Optional[str]], tuple[Any, dict[str, Any]]] = {}


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
    if defaults:
        known = _schema_by_identity.get((id(type), ref_template))
        if known is not None and known[0] is type:
            return copy.deepcopy(known[1])
    options: dict[str, Any] = {
        "rename": rename,
        "omit_defaults": omit_defaults,
        "forbid_unknown_fields": forbid_unknown_fields,
        "strict": strict,
        "array_like": array_like,
        "extensions": extensions,
    }
    keep: list[Any] = []
    key: Hashable = (_type_key(type, keep), _options_key(options, keep), ref_template)
    generation = _options_generation()  # as in codec_for
    entry = _schema_cache.get(key)
    schema = _derive_json_schema(type, options, ref_template) if entry is None else entry[0]
    with _cache_lock:
        if _options_generation() == generation:
            if entry is None:
                if len(_schema_cache) >= _CACHE_LIMIT:
                    _schema_cache.clear()
                _schema_cache[key] = (schema, keep)
            if defaults:
                if len(_schema_by_identity) >= _CACHE_LIMIT:
                    _schema_by_identity.clear()
                _schema_by_identity[(id(type), ref_template)] = (type, schema)
    return copy.deepcopy(schema)
