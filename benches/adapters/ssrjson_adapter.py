"""ssrjson: a SIMD JSON library, on the untyped models only (it reads and writes plain values).

``ssrjson.dumps_to_bytes`` (bytes, as the other JSON rows give) and ``ssrjson.loads``. It has no
typed decoding, so the typed models are not offered to it. Its wheels are for x86-64 Linux (the
``bench`` extra installs it only there); elsewhere the row is listed as unavailable.
"""

from __future__ import annotations

import ssrjson

from ..models import ModelSpec
from .base import Adapter, Ops

_dumps = ssrjson.dumps_to_bytes
_loads = ssrjson.loads


def _build(fmt: str, model: ModelSpec) -> Ops:
    return Ops(_dumps, _loads, _dumps, _loads)


ADAPTERS = [
    Adapter(
        name="ssrjson",
        label="ssrjson",
        distribution="ssrjson",
        formats=("json",),
        build=_build,
        how={"json": "ssrjson.dumps_to_bytes / ssrjson.loads (untyped models only)"},
        kinds=("untyped",),
    )
]
