"""Module-level entry points: one-off calls that share compiled codecs through a cache."""

from __future__ import annotations

import threading
from typing import Any, Hashable, Literal, Mapping, Sequence, cast

from ._polycodec import Codec

#: The wire formats this build implements (the stub of the extension lists the same).
Format = Literal["json", "msgpack", "avro", "pickle"]

_CACHE_LIMIT = 1024
_cache: dict[Hashable, Codec[Any]] = {}
_cache_lock = threading.Lock()


def _frozen(value: Any) -> Hashable:
    """A hashable stand-in for an option value: mappings and lists (a ``rename`` table, an
    Avro ``schema`` dict) become nested tuples; anything else is used as it is."""
    if isinstance(value, Mapping):
        # Sorted by the keys' repr: class keys (the ``extensions`` option) do not order.
        items = sorted(((key, _frozen(item)) for key, item in value.items()), key=_repr_of_key)
        return ("mapping", tuple(items))
    if isinstance(value, list):
        return ("list", tuple(_frozen(item) for item in value))
    return cast(Hashable, value)


def _repr_of_key(item: tuple[Any, Any]) -> str:
    return repr(item[0])


def _options_key(options: dict[str, Any]) -> Hashable:
    return tuple((name, _frozen(value)) for name, value in sorted(options.items()))


def codec_for(tp: Any, format: Format, options: dict[str, Any]) -> Codec[Any]:
    """The cached codec for (type, format, options), compiled on first use."""
    try:
        key: Hashable = (tp, format, _options_key(options))
        hash(key)
    except TypeError:
        return Codec(tp, format, **options)
    codec = _cache.get(key)
    if codec is None:
        codec = Codec(tp, format, **options)
        with _cache_lock:
            if len(_cache) >= _CACHE_LIMIT:
                _cache.clear()
            _cache[key] = codec
    return codec


def encode_one(obj: Any, format: Format = "json", type: Any = None, **options: Any) -> bytes:
    """Encodes one value; its type defaults to ``type(obj)``."""
    tp = obj.__class__ if type is None else type
    return codec_for(tp, format, options).encode_one(obj)


def encode_many(
    objs: Sequence[Any], format: Format = "json", type: Any = None, **options: Any
) -> bytes:
    """Encodes a sequence of values as one message: a JSON or MessagePack array, an Avro object
    container file, a pickled list.

    Without ``type``, the type of the first value is used, so ``type`` is needed for an empty
    sequence and for values of a union.
    """
    if type is None:
        if len(objs) == 0:
            raise TypeError("encode_many needs type= to encode an empty sequence")
        type = objs[0].__class__
    return codec_for(type, format, options).encode_many(objs)


def decode_one(
    buf: Any, type: Any, format: Format = "json", *, writer_schema: Any = None, **options: Any
) -> Any:
    """Decodes one value of ``type`` (Avro: written with ``writer_schema``, if given)."""
    codec = codec_for(type, format, options)
    if writer_schema is None:
        return codec.decode_one(buf)
    return codec.decode_one(buf, writer_schema=writer_schema)


def decode_many(buf: Any, type: Any, format: Format = "json", **options: Any) -> list[Any]:
    """Decodes a message written by ``encode_many`` into a list of ``type``."""
    return codec_for(type, format, options).decode_many(buf)
