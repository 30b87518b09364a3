"""mashumaro: its codec classes (``mashumaro.codecs``), generated once per type.

* ``mashumaro`` JSON: ``mashumaro.codecs.json.JSONEncoder/JSONDecoder`` (stdlib json underneath;
  ``encode`` returns str, timed as such);
* ``mashumaro`` MessagePack: ``mashumaro.codecs.msgpack.MessagePackEncoder/Decoder`` (msgpack
  underneath);
* ``mashumaro-orjson`` JSON: ``mashumaro.codecs.orjson.ORJSONEncoder/Decoder``, the variant
  performance-minded mashumaro users pick (only when orjson is installed).

The codecs need mashumaro >= 3.11; older releases only offer the mixin classes, which would need
the shared models to inherit from them, so they are reported as unavailable.
"""

from __future__ import annotations

from typing import Any

from mashumaro.codecs.json import JSONDecoder, JSONEncoder
from mashumaro.codecs.msgpack import MessagePackDecoder, MessagePackEncoder

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported

UNAVAILABLE: dict[str, str] = {}
try:
    from mashumaro.codecs.orjson import ORJSONDecoder, ORJSONEncoder
except ImportError as _exc:  # orjson missing
    ORJSONDecoder = ORJSONEncoder = None  # type: ignore[assignment,misc]
    UNAVAILABLE["mashumaro-orjson"] = f"not importable: {_exc}"


def _make(encoder_cls: Any, decoder_cls: Any, model: ModelSpec) -> Ops:
    try:
        enc_one = encoder_cls(model.root)
        dec_one = decoder_cls(model.root)
        enc_many = encoder_cls(model.list_type)
        dec_many = decoder_cls(model.list_type)
    except Exception as exc:  # mashumaro raises UnserializableField & co. at build time
        raise Unsupported(f"mashumaro codec generation failed: {type(exc).__name__}: {exc}")
    return Ops(enc_one.encode, dec_one.decode, enc_many.encode, dec_many.decode)


def _build(fmt: str, model: ModelSpec) -> Ops:
    if fmt == "json":
        return _make(JSONEncoder, JSONDecoder, model)
    return _make(MessagePackEncoder, MessagePackDecoder, model)


def _build_orjson(fmt: str, model: ModelSpec) -> Ops:
    return _make(ORJSONEncoder, ORJSONDecoder, model)


ADAPTERS = [
    Adapter(
        name="mashumaro",
        label="mashumaro",
        distribution="mashumaro",
        formats=("json", "msgpack"),
        build=_build,
        how={
            "json": "mashumaro.codecs.json.JSONEncoder/JSONDecoder(T / list[T]) (str output)",
            "msgpack": "mashumaro.codecs.msgpack.MessagePackEncoder/Decoder(T / list[T])",
        },
    )
]
if ORJSONEncoder is not None:
    ADAPTERS.append(
        Adapter(
            name="mashumaro-orjson",
            label="mashumaro (orjson)",
            distribution="mashumaro",
            formats=("json",),
            build=_build_orjson,
            how={"json": "mashumaro.codecs.orjson.ORJSONEncoder/ORJSONDecoder(T / list[T])"},
        )
    )
