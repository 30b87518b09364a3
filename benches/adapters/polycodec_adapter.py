"""polycodec, the library under test: one ``polycodec.Codec(T, format=...)`` per format.

Two rows: ``polycodec`` on the shared plain dataclasses, and ``polycodec-slots`` on their
``@dataclass(slots=True)`` twins (``benches/idioms.py``), the dataclass idiom that performance-minded
users write. The report shows both, and polycodec's best of the two.

On the untyped models (plain JSON values) the ``polycodec`` row is ``Codec(Any)``, and a third
row, ``polycodec-containers``, types the containers: ``Codec(dict[str, Any])`` for one value,
``Codec(list[Any])`` for a batch (its ``encode_one`` / ``decode_one`` of the whole list).

The same codec object serves single objects and batches (``encode_many``/``decode_many``). A format
polycodec does not implement yet makes ``Codec`` raise ValueError/TypeError/NotImplementedError,
which becomes a "skipped" note rather than an error.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Optional, cast

import polycodec

from ..models import ModelSpec
from ..idioms import SLOTS
from .base import FORMATS, Adapter, Ops, Unsupported, on_idiom


def _build(fmt: str, model: ModelSpec) -> Ops:
    return _ops(fmt, Any if model.kind == "untyped" else model.root)


def _build_containers(fmt: str, model: ModelSpec) -> Ops:
    one: Any = polycodec.Codec(dict[str, Any], cast(Any, fmt))
    many: Any = polycodec.Codec(list[Any], cast(Any, fmt))
    return Ops(one.encode_one, one.decode_one, many.encode_one, many.decode_one)


def _build_slots(fmt: str, model: ModelSpec) -> Ops:
    return on_idiom(_ops(fmt, SLOTS[model.root]), SLOTS)


def _ops(fmt: str, root: Any) -> Ops:
    if fmt == "builtins":
        # The JSON form as Python objects: a JSON codec's to_builtins / from_builtins.
        one: Any = polycodec.Codec(root, "json")
        many: Any = polycodec.Codec(list[root], "json")  # type: ignore[valid-type]
        return Ops(one.to_builtins, one.from_builtins, many.to_builtins, many.from_builtins)
    try:
        # ``format`` is typed as the formats this build knows; asking for others is the point.
        codec: Any = polycodec.Codec(root, format=cast(Any, fmt))
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


_HOW = {
    "json": "Codec(T, format='json'): encode_one/decode_one; encode_many/decode_many "
    "(one JSON array)",
    "msgpack": "Codec(T, format='msgpack'): one object / one MessagePack array",
    "avro": "Codec(T, format='avro'): schemaless datum for one; object container file for many",
    "pickle": "Codec(T, format='pickle'): stdlib-compatible pickle bytes",
    "builtins": "Codec(T / list[T], 'json').to_builtins / .from_builtins",
}

ADAPTERS = [
    Adapter(
        name="polycodec",
        label="polycodec",
        distribution="polycodec",
        formats=tuple(FORMATS),
        build=_build,
        how={
            f: h + " on the plain dataclasses (Codec(Any) on the untyped models)"
            for f, h in _HOW.items()
        },
        kinds=("typed", "untyped"),
        class_options=True,
    ),
    Adapter(
        name="polycodec-slots",
        label="polycodec (slots)",
        distribution="polycodec",
        formats=tuple(FORMATS),
        build=_build_slots,
        how={f: h + " on @dataclass(slots=True) classes" for f, h in _HOW.items()},
        class_options=True,
    ),
    Adapter(
        name="polycodec-containers",
        label="polycodec (dict[str, Any] / list[Any])",
        distribution="polycodec",
        formats=("json", "msgpack"),
        build=_build_containers,
        how={
            f: f"Codec(dict[str, Any], {f!r}) for one value, Codec(list[Any], {f!r}) for a batch "
            "(encode_one / decode_one of the list); untyped models only"
            for f in ("json", "msgpack")
        },
        kinds=("untyped",),
    ),
]
