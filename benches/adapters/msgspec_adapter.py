"""msgspec: typed ``Encoder()`` / ``Decoder(T)`` objects, built once, for JSON and MessagePack.

This is msgspec's documented fast path. Batches decode with ``Decoder(list[T])`` and encode the
list with the same encoder. msgspec refuses unions of several dataclasses (its tagged unions need
``msgspec.Struct`` with ``tag=``), so the tree model is reported as unsupported for it.
"""

from __future__ import annotations

import msgspec

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported

_MODULES = {"json": msgspec.json, "msgpack": msgspec.msgpack}


def _build(fmt: str, model: ModelSpec) -> Ops:
    mod = _MODULES[fmt]
    encoder = mod.Encoder()
    try:
        one = mod.Decoder(model.root)
        many = mod.Decoder(model.list_type)
    except TypeError as exc:
        raise Unsupported(f"msgspec cannot decode this model into dataclasses: {exc}")
    return Ops(encoder.encode, one.decode, encoder.encode, many.decode)


ADAPTERS = [
    Adapter(
        name="msgspec",
        label="msgspec",
        distribution="msgspec",
        formats=("json", "msgpack"),
        build=_build,
        how={
            "json": "msgspec.json.Encoder().encode; msgspec.json.Decoder(T / list[T]).decode",
            "msgpack": "msgspec.msgpack.Encoder().encode; "
            "msgspec.msgpack.Decoder(T / list[T]).decode",
        },
    )
]
