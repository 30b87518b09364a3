"""Small questions about Python types that the plan compiler asks (no node is made here)."""

from __future__ import annotations

import re
import sys
import types
import typing
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from .._meta import Avro, Meta
from .._msgpack_ext import Ext


def fmt(tp: Any) -> str:
    """Render an annotation the way the user wrote it (``list[int]``, ``Optional[str]``)."""
    if isinstance(tp, str):
        return tp
    if isinstance(tp, type) and not typing.get_args(tp):
        return tp.__qualname__
    return re.sub(r"\b(?:typing|typing_extensions|dataclasses)\.", "", repr(tp))


def is_union(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    return origin is Union or (origin is not None and origin is getattr(types, "UnionType", None))


def qualifiers() -> Tuple[Any, ...]:
    """Wrappers that qualify a field rather than change its type (Required, ReadOnly, Final)."""
    # typing_extensions is only consulted when the user already imported it.
    modules = [typing, sys.modules.get("typing_extensions")]
    names = ("Required", "NotRequired", "ReadOnly", "Final")
    found = {getattr(m, n, None) for m in modules for n in names} - {None}
    return tuple(found)


def peel_field(hint: Any) -> Tuple[Optional[str], Optional[bool], Tuple[str, ...]]:
    """Read what a field's own annotation says about the field itself.

    Returns the ``Meta(name=...)`` wire name (None if unset), whether ``Required`` (True) or
    ``NotRequired`` (False) wraps it, and the ``Meta(aliases=...)`` names. The qualifier is read
    from the resolved hint because ``__required_keys__`` ignores string annotations on Python
    3.11 (PEP 563 modules).
    """
    name: Optional[str] = None
    required: Optional[bool] = None
    aliases: Tuple[str, ...] = ()
    wrappers = qualifiers()
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            for item in hint.__metadata__:
                if isinstance(item, Meta) and item.name is not None:
                    name = item.name
                if isinstance(item, Meta) and item.aliases is not None:
                    aliases = item.aliases
            hint = hint.__origin__
        elif origin in wrappers and typing.get_args(hint):
            if getattr(origin, "_name", None) in ("Required", "NotRequired"):
                required = origin._name == "Required"
            hint = typing.get_args(hint)[0]
        else:
            return name, required, aliases


def field_doc(hint: Any) -> Optional[str]:
    """The ``Avro(doc=...)`` of a field's own annotation (the outermost, if several)."""
    wrappers = qualifiers()
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated:
            for item in hint.__metadata__:
                if isinstance(item, Avro) and item.doc is not None:
                    return item.doc
            hint = hint.__origin__
        elif origin in wrappers and typing.get_args(hint):
            hint = typing.get_args(hint)[0]
        else:
            return None


def unbound(param: Any, bindings: Mapping[Any, Any]) -> Any:
    """What a type parameter left unparametrised stands for: its PEP 696 default (which may
    mention earlier parameters, bound in ``bindings``), else its bound, else ``Any``.
    Constraints (``TypeVar("T", int, str)``) say only that it is one of them, so ``Any``."""
    has_default = getattr(param, "has_default", None)
    if callable(has_default) and has_default():
        return subst(param.__default__, bindings)
    bound = getattr(param, "__bound__", None)
    # A bound written as a string (TypeVar("T", bound="Model")) names something in the
    # TypeVar's own module that typing never resolves: the value stays unchecked, as before.
    if bound is None or has_forward_refs(bound):
        return Any
    return subst(bound, bindings)


def subst(tp: Any, bindings: Mapping[Any, Any]) -> Any:
    """Replace TypeVars in ``tp`` by their bindings; unbound ones by what ``unbound`` says."""
    if isinstance(tp, typing.TypeVar):
        return bindings[tp] if tp in bindings else unbound(tp, bindings)
    params = getattr(tp, "__parameters__", None)
    if params and typing.get_origin(tp) is not None:
        return tp[tuple(subst(p, bindings) for p in params)]
    return tp


def unbound_args(params: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The type arguments of a generic class or alias used without any."""
    bindings: Dict[Any, Any] = {}
    for param in params:
        bindings[param] = unbound(param, bindings)
    return tuple(bindings.values())


def _alias_types() -> Tuple[type, ...]:
    """The classes of ``type X = ...`` aliases: typing's (3.12+) and typing_extensions' (which
    on older versions is its own class; it is only consulted when the user imported it)."""
    modules = [typing, sys.modules.get("typing_extensions")]
    found = {getattr(m, "TypeAliasType", None) for m in modules}
    return tuple(kind for kind in found if isinstance(kind, type))


def as_alias(tp: Any) -> Tuple[Any, Tuple[Any, ...]]:
    """``(alias, type arguments)`` when ``tp`` is a type alias, bare or subscripted
    (``Pair[int]``); ``(None, ())`` otherwise."""
    kinds = _alias_types()
    if not kinds:
        return None, ()
    if isinstance(tp, kinds):
        return tp, ()
    origin = typing.get_origin(tp)
    if isinstance(origin, kinds):
        return origin, typing.get_args(tp)
    return None, ()


def has_forward_refs(tp: Any) -> bool:
    if isinstance(tp, (str, typing.ForwardRef)):
        return True
    if typing.get_origin(tp) is typing.Annotated:
        return has_forward_refs(tp.__origin__)
    return any(has_forward_refs(a) for a in typing.get_args(tp))


def typevar_maps(cls: type, args: Tuple[Any, ...]) -> Dict[type, Dict[Any, Any]]:
    """Bind the TypeVars of ``cls`` and of every generic base it parametrises.

    ``class IntBox(Box[int])`` declares fields in ``Box`` whose annotations mention Box's own
    TypeVar, so each class gets its own map, resolved through ``__orig_bases__``.
    """
    maps = {cls: dict(zip(getattr(cls, "__parameters__", ()), args))}
    todo = [cls]
    while todo:
        current = todo.pop()
        for base in vars(current).get("__orig_bases__", ()):
            origin = typing.get_origin(base)
            if not isinstance(origin, type) or origin in maps:
                continue
            if origin is typing.Generic or origin is typing.Protocol:
                continue
            params = getattr(origin, "__parameters__", ())
            if params:
                bound = [subst(a, maps[current]) for a in typing.get_args(base)]
                maps[origin] = dict(zip(params, bound))
                todo.append(origin)
    return maps


def own_annotations(cls: type) -> Mapping[str, Any]:
    own = vars(cls).get("__annotations__")
    if own is None and sys.version_info >= (3, 14):
        # PEP 649 classes keep their annotations behind a per-class descriptor instead.
        own = getattr(cls, "__annotations__", None)
    return own or {}


def has_slots(cls: type) -> bool:
    """True when some attribute lives in a slot, so it cannot be written via ``__dict__``."""
    return any(vars(c).get("__slots__") for c in cls.__mro__ if c is not object)


def dedupe_literals(values: List[Any]) -> List[Any]:
    """Keep first occurrences; compare by (type, value) since ``1 == True`` on the wire differ."""
    seen = set()
    out = []
    for value in values:
        key = (type(value), value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def literal_category(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "integer" if isinstance(value, int) else "string"


def is_attrs(cls: type) -> bool:
    """Whether ``cls`` is an attrs class (``attrs.define``, ``attr.s``). attrs is only looked at
    when it was imported, which it must have been to make one."""
    attr = sys.modules.get("attr")
    return attr is not None and isinstance(cls, type) and attr.has(cls)


def attrs_hooks(
    cls: type,
) -> Tuple[Optional[Callable[[Any], None]], Optional[Callable[[Any], None]]]:
    """What attrs' generated ``__init__`` runs besides storing the fields, as the decoders'
    ``before_fill`` and ``after_fill`` hooks (None where there is nothing to run): its
    ``__attrs_pre_init__`` first, and at the end the attribute validators (unless
    ``attrs.validators.set_disabled(True)`` turned them off, as ``attrs.validate`` checks) and
    ``__attrs_post_init__``. Converters are not run: a field decodes to its annotation."""
    attr = sys.modules["attr"]
    pre_init = getattr(cls, "__attrs_pre_init__", None)
    post_init = getattr(cls, "__attrs_post_init__", None)
    validated = any(a.validator is not None for a in attr.fields(cls))
    before = None
    if pre_init is not None:

        def before(instance: Any) -> None:
            instance.__attrs_pre_init__()

    after = None
    if validated or post_init is not None:

        def after(instance: Any) -> None:
            if validated:
                attr.validate(instance)
            if post_init is not None:
                instance.__attrs_post_init__()

    return before, after


def _unsupported(tp: Any) -> str:
    """Why ``tp`` is refused, naming what it is when it is a class of another library's kind
    (which would otherwise read as an unknown type), and what to write instead."""
    if tp is Ext:
        return (
            "polycodec.Ext is what a MessagePack extension value decodes to under typing.Any, "
            "not a field type: annotate the field Any"
        )
    if not isinstance(tp, type):
        return "unsupported type"
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(tp, pydantic.BaseModel):
        return (
            "it is a pydantic BaseModel, which polycodec does not encode: declare it as a "
            "dataclass (or an attrs class) with the same fields, or carry it with "
            "extensions={cls: Extension(dict[str, Any], encode=lambda m: "
            "m.model_dump(mode='json'), decode=cls.model_validate)}"
        )
    if is_pydantic_dataclass(tp):
        return (
            "it is a pydantic dataclass, whose validators polycodec would not run (it fills "
            "the fields without pydantic's __init__): declare it with dataclasses.dataclass "
            "and move the checks into __post_init__, or carry it with "
            "extensions={cls: Extension(dict[str, Any], encode=dataclasses.asdict, "
            "decode=lambda d: cls(**d))}"
        )
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and issubclass(tp, msgspec.Struct):
        return (
            "it is a msgspec Struct, which polycodec does not encode: declare it as a "
            "dataclass (or an attrs class) with the same fields; the Struct's options are "
            "polycodec.options(...) on the class (rename=, omit_defaults=, "
            "forbid_unknown_fields=, array_like=, tag=, tag_field=) or Codec options"
        )
    return "unsupported type"


def is_pydantic_dataclass(cls: type) -> bool:
    # Only when pydantic is already imported: a class cannot be one otherwise.
    module = sys.modules.get("pydantic.dataclasses")
    return module is not None and bool(module.is_pydantic_dataclass(cls))
