"""orjson: native dataclass encoding; decoding needs hand-written dict -> dataclass conversion.

orjson serialises dataclasses, enums, datetimes and dates natively but not Decimal, so users pass
a ``default=`` hook for it. It only ever decodes to dicts, so users convert with their own code
(``_convert.py``: shared with the other dict-only libraries, written once).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson

from ..models import ModelSpec
from ._convert import converters
from .base import Adapter, Ops

_dumps = orjson.dumps
_loads = orjson.loads


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _build(fmt: str, model: ModelSpec) -> Ops:
    if model.kind == "untyped":
        return Ops(_dumps, _loads, _dumps, _loads)
    to_dict, from_dict = converters("json", model.name)
    if model.class_options:
        # Its native dataclass encoding knows nothing of polycodec.options: the service's
        # wire form (tags, camel names, defaults left out) comes from the hand-written dicts.
        return _via_dicts(to_dict, from_dict)

    def encode(obj: Any) -> bytes:
        return _dumps(obj, default=_default)

    def decode_one(buf: bytes) -> Any:
        return from_dict(_loads(buf))

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _loads(buf)]

    return Ops(encode, decode_one, encode, decode_many)


def _via_dicts(to_dict: Any, from_dict: Any) -> Ops:
    def encode_one(obj: Any) -> bytes:
        return _dumps(to_dict(obj))

    def encode_many(objs: list[Any]) -> bytes:
        return _dumps([to_dict(o) for o in objs])

    def decode_one(buf: bytes) -> Any:
        return from_dict(_loads(buf))

    def decode_many(buf: bytes) -> list[Any]:
        return [from_dict(d) for d in _loads(buf)]

    return Ops(encode_one, decode_one, encode_many, decode_many)


ADAPTERS = [
    Adapter(
        name="orjson",
        label="orjson",
        distribution="orjson",
        formats=("json",),
        build=_build,
        how={
            "json": "orjson.dumps(obj or list, default=Decimal->str) (native dataclasses); "
            "orjson.loads + hand-written dict->dataclass conversion",
        },
        kinds=("typed", "untyped"),
        class_options=True,
    )
]
