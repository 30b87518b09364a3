"""pydantic v2: ``TypeAdapter(T)`` over the plain dataclasses, ``dump_json`` / ``validate_json``.

This is how pydantic v2 users handle stdlib dataclasses without converting them to BaseModel; the
validated result is an instance of the original dataclass. pydantic has no MessagePack, Avro or
pickle mode of its own, so it only takes part in JSON.
"""

from __future__ import annotations

from typing import Any

import pydantic

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        one: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.root)
        many: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.list_type)
    except Exception as exc:  # PydanticSchemaGenerationError and friends
        raise Unsupported(f"pydantic.TypeAdapter failed: {type(exc).__name__}: {exc}")
    return Ops(one.dump_json, one.validate_json, many.dump_json, many.validate_json)


ADAPTERS = [
    Adapter(
        name="pydantic",
        label="pydantic v2",
        distribution="pydantic",
        formats=("json",),
        build=_build,
        how={"json": "TypeAdapter(T / list[T]).dump_json / .validate_json"},
    )
]
