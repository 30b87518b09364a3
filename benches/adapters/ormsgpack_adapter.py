"""ormsgpack: orjson's MessagePack sibling; same usage pattern as the orjson adapter.

Native dataclass/enum/datetime/date encoding plus a ``default=`` hook for Decimal; decoding yields
dicts which are converted by the shared hand-written code.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import ormsgpack

from ..models import ModelSpec
from ._convert import converters
from .base import Adapter, Ops

_packb = ormsgpack.packb
_unpackb = ormsgpack.unpackb


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"Type is not msgpack serializable: {type(value).__name__}")


def _build(fmt: str, model: ModelSpec) -> Ops:
    if model.kind == "untyped":
        return Ops(_packb, _unpackb, _packb, _unpackb)
    to_dict, from_dict = converters("json", model.name)
    if model.class_options:
        # Its native dataclass encoding knows nothing of polycodec.options: the service's
        # wire form (tags, camel names, defaults left out) comes from the hand-written dicts.
        return _via_dicts(to_dict, from_dict)

    def encode(obj: Any) -> bytes:
        return _packb(obj, default=_default)

    def decode_one(buf: bytes) -> Any:
        return from_dict(_unpackb(buf))

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _unpackb(buf)]

    return Ops(encode, decode_one, encode, decode_many)


def _via_dicts(to_dict: Any, from_dict: Any) -> Ops:
    def encode_one(obj: Any) -> bytes:
        return _packb(to_dict(obj))

    def encode_many(objs: list[Any]) -> bytes:
        return _packb([to_dict(o) for o in objs])

    def decode_one(buf: bytes) -> Any:
        return from_dict(_unpackb(buf))

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _unpackb(buf)]

    return Ops(encode_one, decode_one, encode_many, decode_many)


ADAPTERS = [
    Adapter(
        name="ormsgpack",
        label="ormsgpack",
        distribution="ormsgpack",
        formats=("msgpack",),
        build=_build,
        how={
            "msgpack": "ormsgpack.packb(obj or list, default=Decimal->str) (native dataclasses); "
            "ormsgpack.unpackb + hand-written dict->dataclass conversion",
        },
        kinds=("typed", "untyped"),
        class_options=True,
    )
]
