"""Adapter registry: one module per library, imported lazily and defensively.

A library that is not installed (or fails to import) must never break a run: its module is
recorded as unavailable with the import error as the reason, and the report lists it under
"Skipped". The order here is the order of rows in the report tables.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from .base import BASELINES, FORMATS, SUBJECT, Adapter, Ops, Unsupported, is_subject

__all__ = [
    "Adapter",
    "Ops",
    "Unsupported",
    "FORMATS",
    "BASELINES",
    "SUBJECT",
    "is_subject",
    "MODULES",
    "MODULE_ADAPTERS",
    "ADAPTER_FORMATS",
    "Registry",
    "load_registry",
]

#: Adapter modules (inside this package), in report order.
MODULES: tuple[str, ...] = (
    "polycodec_adapter",
    "msgspec_adapter",
    "orjson_adapter",
    "ormsgpack_adapter",
    "msgpack_adapter",
    "serpyco_rs_adapter",
    "pydantic_adapter",
    "mashumaro_adapter",
    "fastavro_adapter",
    "avro_adapter",
    "json_adapter",
    "pickle_adapter",
    "builtins_adapters",
    "ssrjson_adapter",
)

#: Adapter names each module provides (so an unavailable module still has named rows).
MODULE_ADAPTERS: dict[str, tuple[str, ...]] = {
    "polycodec_adapter": ("polycodec", "polycodec-slots", "polycodec-containers"),
    "msgspec_adapter": ("msgspec-struct", "msgspec"),
    "orjson_adapter": ("orjson",),
    "ormsgpack_adapter": ("ormsgpack",),
    "msgpack_adapter": ("msgpack",),
    "serpyco_rs_adapter": ("serpyco-rs",),
    "pydantic_adapter": ("pydantic-model", "pydantic"),
    "mashumaro_adapter": ("mashumaro", "mashumaro-orjson"),
    "fastavro_adapter": ("fastavro",),
    "avro_adapter": ("avro",),
    "json_adapter": ("json",),
    "pickle_adapter": ("pickle",),
    "builtins_adapters": (
        "hand-written",
        "msgspec",
        "pydantic",
        "mashumaro",
        "marshmallow",
        "marshmallow-recipe",
        "marshmallow-recipe-nuked",
        "serpy",
    ),
    "ssrjson_adapter": ("ssrjson",),
}

#: Formats of every known adapter, also for those whose module could not be imported (so the
#: report can say "unavailable" in the right tables).
ADAPTER_FORMATS: dict[str, tuple[str, ...]] = {
    "polycodec": tuple(FORMATS),
    "polycodec-slots": tuple(FORMATS),
    "polycodec-containers": ("json", "msgpack"),
    "msgspec-struct": ("json", "msgpack", "builtins"),
    "msgspec": ("json", "msgpack", "builtins"),
    "orjson": ("json",),
    "ormsgpack": ("msgpack",),
    "msgpack": ("msgpack",),
    "serpyco-rs": ("json", "msgpack"),
    "pydantic-model": ("json", "builtins"),
    "pydantic": ("json", "builtins"),
    "mashumaro": ("json", "msgpack", "builtins"),
    "mashumaro-orjson": ("json",),
    "fastavro": ("avro",),
    "avro": ("avro",),
    "json": ("json",),
    "pickle": ("pickle",),
    "hand-written": ("builtins",),
    "marshmallow": ("builtins",),
    "marshmallow-recipe": ("builtins",),
    "marshmallow-recipe-nuked": ("builtins",),
    "serpy": ("builtins",),
    "ssrjson": ("json",),
}


@dataclass
class Registry:
    """The adapters that imported, and a reason for each that did not."""

    adapters: list[Adapter]
    unavailable: dict[str, str]

    def names(self) -> list[str]:
        return [a.name for a in self.adapters]


def load_registry() -> Registry:
    """Import every adapter module, collecting import failures instead of raising."""
    adapters: list[Adapter] = []
    unavailable: dict[str, str] = {}
    for module in MODULES:
        try:
            mod = importlib.import_module(f"{__name__}.{module}")
        except Exception as exc:  # ImportError, or a broken install raising anything else
            reason = f"not importable: {type(exc).__name__}: {exc}"
            for name in MODULE_ADAPTERS[module]:
                unavailable[name] = reason
            continue
        adapters.extend(mod.ADAPTERS)
        for name, reason in getattr(mod, "UNAVAILABLE", {}).items():
            unavailable[name] = reason
    return Registry(_merge_same_names(adapters), unavailable)


def _merge_same_names(adapters: list[Adapter]) -> list[Adapter]:
    """One adapter per library name: a module that adds formats for a library another module
    already provides (``builtins_adapters`` adds the builtins format for msgspec, pydantic...)
    is merged into that library's row, the later module's build taking its own formats."""
    merged: dict[str, Adapter] = {}
    for adapter in adapters:
        first = merged.get(adapter.name)
        if first is None:
            merged[adapter.name] = adapter
            continue
        builds = {fmt: first.build for fmt in first.formats}
        builds.update({fmt: adapter.build for fmt in adapter.formats})
        merged[adapter.name] = Adapter(
            name=first.name,
            label=first.label,
            distribution=first.distribution,
            formats=tuple(dict.fromkeys(first.formats + adapter.formats)),
            build=lambda fmt, model, builds=builds: builds[fmt](fmt, model),
            how={**first.how, **adapter.how},
            kinds=tuple(dict.fromkeys(first.kinds + adapter.kinds)),
            class_options=first.class_options and adapter.class_options,
        )
    return list(merged.values())
