"""polycodec, the library under test: one ``polycodec.Codec(T, format=...)`` per format.

The same codec object serves single objects and batches (``encode_many``/``decode_many``). A format
polycodec does not implement yet makes ``Codec`` raise ValueError/TypeError/NotImplementedError,
which becomes a "skipped" note rather than an error.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Optional, cast

import polycodec

from ..models import ModelSpec
from .base import FORMATS, Adapter, Ops, Unsupported


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        # ``format`` is typed as the formats this build knows; asking for others is the point.
        codec: Any = polycodec.Codec(model.root, format=cast(Any, fmt))
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise Unsupported(f"polycodec.Codec(format={fmt!r}) raised {type(exc).__name__}: {exc}")

    def stdlib_pickle_compatible(objs: list[Any]) -> None:
        # polycodec's pickle output must be plain pickle that the stdlib can load.
        for obj in objs:
            if pickle.loads(codec.encode_one(obj)) != obj:
                raise AssertionError("pickle.loads(codec.encode_one(obj)) != obj")

    extra: Optional[Callable[[list[Any]], None]] = None
    if fmt == "pickle":
        extra = stdlib_pickle_compatible
    return Ops(codec.encode_one, codec.decode_one, codec.encode_many, codec.decode_many, extra)


ADAPTERS = [
    Adapter(
        name="polycodec",
        label="polycodec",
        distribution="polycodec",
        formats=tuple(FORMATS),
        build=_build,
        how={
            "json": "Codec(T, format='json'): encode_one/decode_one; encode_many/decode_many "
            "(one JSON array)",
            "msgpack": "Codec(T, format='msgpack'): one object / one MessagePack array",
            "avro": "Codec(T, format='avro'): schemaless datum for one; object container file "
            "for many",
            "pickle": "Codec(T, format='pickle'): stdlib-compatible pickle bytes",
        },
    )
]
