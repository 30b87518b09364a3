"""msgpack (msgpack-python): the MessagePack baseline, dicts in and out.

msgpack knows nothing about dataclasses, enums, datetimes or Decimals, so users convert both ways
with their own code (the shared hand-written converters, JSON flavour: ISO strings, Decimal as
string, enum values).
"""

from __future__ import annotations

from typing import Any

import msgpack

from ..models import ModelSpec
from ._convert import converters
from .base import Adapter, Ops

_packb = msgpack.packb
_unpackb = msgpack.unpackb


def _build(fmt: str, model: ModelSpec) -> Ops:
    if model.kind == "untyped":
        return Ops(_packb, _unpackb, _packb, _unpackb)
    to_dict, from_dict = converters("json", model.name)

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
        name="msgpack",
        label="msgpack",
        distribution="msgpack",
        formats=("msgpack",),
        build=_build,
        how={
            "msgpack": "hand-written dataclass->dict + msgpack.packb; msgpack.unpackb + "
            "hand-written dict->dataclass",
        },
        kinds=("typed", "untyped"),
        class_options=True,
    )
]
