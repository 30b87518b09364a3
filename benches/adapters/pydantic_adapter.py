"""pydantic v2, JSON and builtins (pydantic has no MessagePack, Avro or pickle mode of its own).
Two rows:

* ``pydantic-model``: ``BaseModel`` classes (``pydantic_models.py``), what pydantic users write:
  ``Model.model_dump_json()`` / ``Model.model_validate_json()`` for one object, and a
  ``TypeAdapter(list[Model])`` for batches (a BaseModel has no batch method of its own). In the
  builtins format (the JSON form as Python objects), ``obj.model_dump(mode="json")`` /
  ``Model.model_validate(data)``, and ``dump_python(mode="json")`` / ``validate_python`` of the
  same ``TypeAdapter`` for batches.
* ``pydantic``: ``TypeAdapter(T)`` over the shared plain dataclasses (``dump_json`` /
  ``validate_json``), how pydantic users handle stdlib dataclasses without converting them.
"""

from __future__ import annotations

from typing import Any

import pydantic

from ..models import ModelSpec
from .base import Adapter, Ops, Unsupported, on_idiom
from .pydantic_models import MODELS


def _build(fmt: str, model: ModelSpec) -> Ops:
    try:
        one: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.root)
        many: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(model.list_type)
    except Exception as exc:  # PydanticSchemaGenerationError and friends
        raise Unsupported(f"pydantic.TypeAdapter failed: {type(exc).__name__}: {exc}")
    return Ops(one.dump_json, one.validate_json, many.dump_json, many.validate_json)


def _build_model(fmt: str, model: ModelSpec) -> Ops:
    cls: Any = MODELS[model.root]
    many: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(list[cls])  # type: ignore[valid-type]
    if fmt == "builtins":

        def dump_one(obj: Any) -> Any:
            return obj.model_dump(mode="json")

        def dump_many(objs: Any) -> Any:
            return many.dump_python(objs, mode="json")

        builtins_ops = Ops(dump_one, cls.model_validate, dump_many, many.validate_python)
        return on_idiom(builtins_ops, MODELS)
    # model_dump_json returns str (timed as such, like stdlib json's str).
    ops = Ops(cls.model_dump_json, cls.model_validate_json, many.dump_json, many.validate_json)
    return on_idiom(ops, MODELS)


ADAPTERS = [
    Adapter(
        name="pydantic-model",
        label="pydantic (BaseModel)",
        distribution="pydantic",
        formats=("json", "builtins"),
        build=_build_model,
        how={
            "json": "BaseModel classes (discriminated unions for the trees): "
            "Model.model_dump_json(obj) (str) / Model.model_validate_json; "
            "TypeAdapter(list[Model]).dump_json / .validate_json for batches",
            "builtins": "BaseModel classes (discriminated unions for the trees): "
            "obj.model_dump(mode='json') / Model.model_validate; "
            "TypeAdapter(list[Model]).dump_python(mode='json') / .validate_python for batches",
        },
    ),
    Adapter(
        name="pydantic",
        label="pydantic (dataclass)",
        distribution="pydantic",
        formats=("json",),
        build=_build,
        how={
            "json": "TypeAdapter(T / list[T]).dump_json / .validate_json on the plain dataclasses"
        },
    ),
]
