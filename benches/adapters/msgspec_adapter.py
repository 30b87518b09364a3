"""msgspec: typed ``Encoder()`` / ``Decoder(T)`` objects, built once, for JSON and MessagePack.

This is msgspec's documented fast path. Batches decode with ``Decoder(list[T])`` and encode the
list with the same encoder. Two rows:

* ``msgspec`` on the shared plain dataclasses. msgspec refuses unions of several dataclasses (its
  tagged unions need ``msgspec.Struct`` with ``tag=``), so the tree models are unsupported there.
* ``msgspec-struct`` on ``msgspec.Struct`` classes (``msgspec_structs.py``), the classes msgspec
  users actually write, with tagged Structs (``tag_field=``) for the trees, as in the
  msgspec-vs-pydantic gist. Structs are msgspec's fastest idiom.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported, on_idiom
from .msgspec_structs import STRUCTS

_MODULES = {"json": msgspec.json, "msgpack": msgspec.msgpack}


def _ops(fmt: str, root: Any) -> Ops:
    if fmt == "builtins":
        return _builtins_ops(root)
    mod = _MODULES[fmt]
    encoder = mod.Encoder()
    try:
        one = mod.Decoder(root)
        many = mod.Decoder(list[root])  # type: ignore[valid-type]
    except TypeError as exc:
        raise Unsupported(f"msgspec cannot decode this model into dataclasses: {exc}")
    return Ops(encoder.encode, one.decode, encoder.encode, many.decode)


def _builtins_ops(root: Any) -> Ops:
    """``msgspec.to_builtins`` / ``msgspec.convert``: the dict world, on Structs."""
    items = list[root]  # type: ignore[valid-type]

    def decode_one(data: Any) -> Any:
        return msgspec.convert(data, root)

    def decode_many(data: Any) -> Any:
        return msgspec.convert(data, items)

    return Ops(msgspec.to_builtins, decode_one, msgspec.to_builtins, decode_many)


def _build(fmt: str, model: ModelSpec) -> Ops:
    if model.kind == "untyped":
        # Untyped: msgspec's Encoder() and an untyped Decoder(), one value or a list alike.
        mod = _MODULES[fmt]
        encoder, decoder = mod.Encoder(), mod.Decoder()
        return Ops(encoder.encode, decoder.decode, encoder.encode, decoder.decode)
    return _ops(fmt, model.root)


def _build_struct(fmt: str, model: ModelSpec) -> Ops:
    return on_idiom(_ops(fmt, STRUCTS[model.root]), STRUCTS)


_HOW = {
    "json": "msgspec.json.Encoder().encode; msgspec.json.Decoder(T / list[T]).decode",
    "msgpack": "msgspec.msgpack.Encoder().encode; msgspec.msgpack.Decoder(T / list[T]).decode",
    "builtins": "msgspec.to_builtins / msgspec.convert(data, T / list[T])",
}

ADAPTERS = [
    Adapter(
        name="msgspec-struct",
        label="msgspec (Struct)",
        distribution="msgspec",
        formats=("json", "msgpack", "builtins"),
        build=_build_struct,
        how={
            f: h.replace("(T", "(Struct T") + " on msgspec.Struct classes (tagged Structs, "
            "tag_field=, for the trees)"
            for f, h in _HOW.items()
        },
        class_options=True,
    ),
    Adapter(
        name="msgspec",
        label="msgspec (dataclass)",
        distribution="msgspec",
        formats=("json", "msgpack"),
        build=_build,
        how={
            f: h + " on the plain dataclasses (an untyped Decoder() on the untyped models)"
            for f, h in _HOW.items()
        },
        kinds=("typed", "untyped"),
    ),
]
