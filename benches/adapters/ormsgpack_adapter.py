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
    _, from_dict = converters("json", model.name)

    def encode(obj: Any) -> bytes:
        return _packb(obj, default=_default)

    def decode_one(buf: bytes) -> Any:
        return from_dict(_unpackb(buf))

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _unpackb(buf)]

    return Ops(encode, decode_one, encode, decode_many)


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
    )
]
