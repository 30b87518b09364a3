"""The stdlib ``json`` module: the JSON baseline, dicts in and out.

Users convert dataclasses to dicts themselves (the shared hand-written converters) and call
``json.dumps``/``json.loads``. Compact separators are used so payload sizes compare with the other
libraries; ``dumps`` returns ``str`` and is timed as such (that is what its users get).
"""

from __future__ import annotations

import json
from typing import Any

from ..models import ModelSpec
from ._convert import converters
from .base import Adapter, Ops

_encoder = json.JSONEncoder(separators=(",", ":"))
_dumps = _encoder.encode
_loads = json.loads


def _build(fmt: str, model: ModelSpec) -> Ops:
    if model.kind == "untyped":
        return Ops(_dumps, _loads, _dumps, _loads)
    to_dict, from_dict = converters("json", model.name)

    def encode_one(obj: Any) -> str:
        return _dumps(to_dict(obj))

    def encode_many(objs: list[Any]) -> str:
        return _dumps([to_dict(o) for o in objs])

    def decode_one(buf: str) -> Any:
        return from_dict(_loads(buf))

    def decode_many(buf: str) -> list[Any]:
        return [from_dict(d) for d in _loads(buf)]

    return Ops(encode_one, decode_one, encode_many, decode_many)


ADAPTERS = [
    Adapter(
        name="json",
        label="stdlib json",
        distribution=None,
        formats=("json",),
        build=_build,
        how={
            "json": "hand-written dataclass->dict + json.dumps(separators=(',', ':')) (str); "
            "json.loads + hand-written dict->dataclass",
        },
        kinds=("typed", "untyped"),
        class_options=True,
    )
]
