"""serpyco-rs: ``Serializer(T)`` built once per type.

Recent serpyco-rs binds a byte format to the serializer (``codec=serpyco_rs.JSON`` /
``serpyco_rs.MSGPACK``), so ``dump`` returns bytes and ``load`` takes bytes. Older releases only
produce/consume Python primitives; for those the adapter pairs ``dump``/``load`` with orjson /
ormsgpack, as serpyco-rs's own README showed.
"""

from __future__ import annotations

from typing import Any, Callable

import serpyco_rs

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported

_HAS_CODECS = hasattr(serpyco_rs, "JSON") and hasattr(serpyco_rs, "MSGPACK")


def _serializer(tp: Any, fmt: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    if _HAS_CODECS:
        codec = serpyco_rs.JSON if fmt == "json" else serpyco_rs.MSGPACK
        ser = serpyco_rs.Serializer(tp, codec=codec)
        return ser.dump, ser.load
    ser = serpyco_rs.Serializer(tp)
    dump, load = ser.dump, ser.load
    dumps: Callable[[Any], bytes]
    loads: Callable[[Any], Any]
    if fmt == "json":
        import orjson

        dumps, loads = orjson.dumps, orjson.loads
    else:
        import ormsgpack

        dumps, loads = ormsgpack.packb, ormsgpack.unpackb
    return (lambda obj: dumps(dump(obj))), (lambda buf: load(loads(buf)))


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        enc_one, dec_one = _serializer(model.root, fmt)
        enc_many, dec_many = _serializer(model.list_type, fmt)
    except Exception as exc:  # serpyco-rs raises its own schema errors
        raise Unsupported(f"serpyco_rs.Serializer failed: {type(exc).__name__}: {exc}")
    return Ops(enc_one, dec_one, enc_many, dec_many)


_MODE = "Serializer(T, codec=JSON|MSGPACK).dump/.load" if _HAS_CODECS else "Serializer(T)"

ADAPTERS = [
    Adapter(
        name="serpyco-rs",
        label="serpyco-rs",
        distribution="serpyco-rs",
        formats=("json", "msgpack"),
        build=_build,
        how={
            "json": f"{_MODE} with T and list[T]"
            + ("" if _HAS_CODECS else " + orjson.dumps/loads"),
            "msgpack": f"{_MODE} with T and list[T]"
            + ("" if _HAS_CODECS else " + ormsgpack.packb/unpackb"),
        },
    )
]
