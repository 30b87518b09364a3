"""The same models in other class idioms, and the field-by-field conversion between idioms.

Each library is benchmarked on the classes its own users write: msgspec users write
``msgspec.Struct`` classes (``adapters/msgspec_structs.py``), pydantic users ``BaseModel``
classes (``adapters/pydantic_models.py``), and performance-minded dataclass users
``@dataclass(slots=True)`` (this module, :data:`SLOTS`). All of them hold the *same* data: the
harness generates plain dataclass objects (``models.py``) and converts them, outside the timed
calls, with :func:`converter`; the round-trip check converts the decoded objects back and
compares them with the originals, so an idiom cannot drop or change data unseen.

The slots classes are built from the plain dataclasses' own annotations (strings, because
``models.py`` uses ``from __future__ import annotations``) in this module's namespace, which is
exactly what writing each class again under ``@dataclass(slots=True)`` would give; they live
here under the same names, so pickle finds them as ``benches.idioms.<Name>``.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime  # noqa: F401  (names used by the model annotations)
from decimal import Decimal  # noqa: F401
from typing import Annotated, Any, Callable, Literal, Optional, Union  # noqa: F401
from uuid import UUID  # noqa: F401

from annotated_types import Ge, MinLen  # noqa: F401

from polycodec._options import ATTRIBUTE as _OPTIONS

from . import models
from .models import Currency, Priority, Status  # noqa: F401

__all__ = ["SLOTS", "converter", "field_names", "slots_class"]


def _slots_copy(cls: type) -> type:
    """``@dataclass(slots=True)`` version of the plain dataclass ``cls``, defined here."""
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": cls.__name__,
        "__doc__": cls.__doc__,
        "__annotations__": dict(cls.__annotations__),
    }
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            namespace[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f.name] = dataclasses.field(default_factory=f.default_factory)
    if _OPTIONS in vars(cls):  # the class's own polycodec.options, as written above it
        namespace[_OPTIONS] = vars(cls)[_OPTIONS]
    new = dataclasses.dataclass(slots=True)(type(cls.__name__, (), namespace))
    globals()[cls.__name__] = new
    return new


#: plain dataclass -> its ``slots=True`` twin (the annotations resolve against this module).
SLOTS: dict[type, type] = {cls: _slots_copy(cls) for cls in models.CLASSES + models.SERVICE_CLASSES}
#: The service model's union, of the slots twins.
Event = Union[OrderPlaced, OrderShipped, OrderCancelled]  # type: ignore[name-defined]  # noqa: F821


def slots_class(cls: type) -> type:
    """The ``slots=True`` twin of a model class."""
    return SLOTS[cls]


def field_names(cls: type) -> tuple[str, ...]:
    """The data fields of a dataclass, msgspec Struct or pydantic BaseModel class."""
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls) if f.init)
    struct_fields = getattr(cls, "__struct_fields__", None)
    if struct_fields is not None:
        return tuple(struct_fields)
    model_fields = getattr(cls, "model_fields", None)
    if model_fields is not None:
        return tuple(model_fields)
    raise TypeError(f"not a model class: {cls!r}")


def converter(mapping: dict[type, type]) -> Callable[[Any], Any]:
    """A function rebuilding an object graph with ``mapping[type(obj)]`` for every model object.

    Fields are matched by name; a field the target class does not have (a msgspec Struct carries
    its tag on the class, not as a field) is dropped, and one the source lacks takes the target's
    default. Lists are rebuilt, everything else (str, datetime, UUID, enum...) is shared.
    """
    names = {src: (dst, field_names(dst)) for src, dst in mapping.items()}

    def convert(value: Any) -> Any:
        entry = names.get(type(value))
        if entry is not None:
            dst, fields = entry
            return dst(**{n: convert(getattr(value, n)) for n in fields if hasattr(value, n)})
        if type(value) is list:
            return [convert(v) for v in value]
        return value

    return convert
