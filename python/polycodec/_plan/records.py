"""Records: dataclasses (attrs classes among them), TypedDicts and NamedTuples, their options
and their fields."""

from __future__ import annotations

import dataclasses
import sys
import typing
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Tuple

from .._defaults import NODEFAULT
from .._naming import renamer
from .._options import own_options, resolve
from .base import NESTING_LIMIT, CompilerBase
from .spec import FieldSpec, RecordKind, RecordSpec
from .typeinfo import (
    attrs_hooks,
    field_doc,
    has_slots,
    is_attrs,
    is_pydantic_dataclass,
    own_annotations,
    peel_field,
    subst,
    typevar_maps,
    unbound_args,
)


@dataclasses.dataclass
class _Field:
    """A record field before its type is compiled."""

    name: str
    hint: Any
    default: Any
    default_factory: Optional[Callable[[], Any]]
    required: bool
    wire: bool


class RecordCompiler(CompilerBase):
    # -- records -------------------------------------------------------------------------------

    @staticmethod
    def _record_kind(cls: type) -> Optional[RecordKind]:
        # An attrs class is a record created and filled as a dataclass is (see attrs_hooks).
        if is_pydantic_dataclass(cls):
            return None
        if dataclasses.is_dataclass(cls) or is_attrs(cls):
            return "dataclass"
        if issubclass(cls, dict) and hasattr(cls, "__required_keys__"):
            return "typeddict"
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return "namedtuple"
        return None

    def _record(self, cls: type, kind: RecordKind, args: Tuple[Any, ...]) -> int:
        params = tuple(getattr(cls, "__parameters__", ()))
        given = bool(args)
        if args:
            args = tuple(subst(a, self._typevars) for a in args)
        else:
            args = unbound_args(params)
        key = (cls, args)
        for known, index in self._records:
            if known == key:
                return index
        if self._records_busy.count(cls) >= NESTING_LIMIT:
            raise self.fail(
                cls,
                f"the generic class is nested in itself more than {NESTING_LIMIT} times, with "
                "other type arguments each time, so its plan would never end",
            )
        options = self._record_options(cls, kind)
        data: RecordSpec = {
            "cls": cls,
            "name": cls.__qualname__,
            "module": cls.__module__,
            # The type arguments a generic class was given (after TypeVar substitution), () when
            # none were: Avro names a generic record after them (Box[int] is Box_int).
            "args": args if given else (),
            "fields": [],
            "post_init": kind == "dataclass" and hasattr(cls, "__post_init__"),
            "before_fill": None,
            "after_fill": None,
            "frozen": self._frozen(cls, kind),
            "slots": kind == "dataclass" and has_slots(cls),
            "forbid_unknown_fields": bool(options["forbid_unknown_fields"]),
            "omit_defaults": bool(options["omit_defaults"]),
            "array_like": bool(options["array_like"]),
            "tag": None,
            # (wire name, value, its Literal node) of the class's own tag.
            "class_tag": None,
        }
        if is_attrs(cls):
            data["before_fill"], data["after_fill"] = attrs_hooks(cls)
            data["post_init"] = data["after_fill"] is not None
        # Register before walking the fields so a reference back to this class finds it.
        index = self.add(kind, data)
        self._records.append((key, index))
        maps = typevar_maps(cls, args)
        saved = (self._site, self._typevars)
        self._records_busy.append(cls)
        rename = renamer(options["rename"])
        try:
            fields: List[FieldSpec] = []
            for spec in self._field_specs(cls, kind):
                label = f"field '{cls.__qualname__}.{spec.name}'"
                self._site = (label, spec.hint)
                self._typevars = self._bindings_for(cls, kind, spec.name, maps)
                fields.append(self._field(spec, label, rename, kind))
        finally:
            self._site, self._typevars = saved
            self._records_busy.pop()
        self._check_wire_names(cls, fields, options["tag"])
        data["fields"] = fields
        if options["tag"] is not None:
            tag_field, tag = options["tag"]
            data["class_tag"] = (tag_field, tag, self.add("literal", {"values": [tag]}))
        return index

    def _record_options(self, cls: type, kind: str) -> Dict[str, Any]:
        """The options of record class ``cls``: a dataclass's own (``polycodec.options``, its
        bases'), else the codec's; ``tag`` is the class tag ``(wire name, value)`` or None."""
        if kind != "dataclass":
            if own_options(cls):
                raise self.fail(
                    cls,
                    "polycodec.options applies to dataclasses; a TypedDict or NamedTuple follows "
                    "the codec's options",
                )
            return {**self._options, "tag": None}
        try:
            resolved = resolve(cls, self._options)
        except (TypeError, ValueError) as exc:
            raise self.fail(cls, f"its polycodec.options are invalid: {exc}") from None
        return {
            "rename": resolved.rename,
            "forbid_unknown_fields": resolved.forbid_unknown_fields,
            "omit_defaults": resolved.omit_defaults,
            "array_like": resolved.array_like,
            "tag": resolved.tag,
        }

    @staticmethod
    def _frozen(cls: type, kind: str) -> bool:
        if is_attrs(cls):
            frozen_setattr = getattr(sys.modules["attr"]._make, "_frozen_setattrs", None)
            return frozen_setattr is not None and cls.__setattr__ is frozen_setattr
        if kind == "dataclass":
            return bool(getattr(getattr(cls, "__dataclass_params__", None), "frozen", False))
        return kind == "namedtuple"

    @staticmethod
    def _bindings_for(
        cls: type, kind: str, name: str, maps: Dict[type, Dict[Any, Any]]
    ) -> Mapping[Any, Any]:
        """TypeVar bindings for the class that declared field ``name``."""
        if len(maps) == 1:
            return maps[cls]
        if kind == "dataclass":
            for c in cls.__mro__:
                if name in own_annotations(c):
                    return maps.get(c, {})
            return {}
        # TypedDict merges inherited annotations into each class, so owners are unknown;
        # bindings closer to ``cls`` win.
        merged: Dict[Any, Any] = {}
        for bindings in reversed(list(maps.values())):
            merged.update(bindings)
        return merged

    def _field(
        self, spec: _Field, label: str, rename: Callable[[str], str], kind: str
    ) -> FieldSpec:
        meta_name, _, aliases = peel_field(spec.hint)
        wire_name = meta_name if meta_name is not None else rename(spec.name)
        if not isinstance(wire_name, str):
            raise TypeError(f"rename produced {wire_name!r} for {label}; wire names must be str")
        node, unset = self._field_type(spec.hint, kind)
        return {
            "name": spec.name,
            "wire_name": wire_name,
            "aliases": aliases,
            "doc": field_doc(spec.hint),
            "type": node,
            "default": spec.default,
            "default_factory": spec.default_factory,
            "required": spec.required,
            "wire": spec.wire,
            "unset": unset,
        }

    def _field_type(self, hint: Any, kind: str) -> Tuple[int, bool]:
        """A field's node, and whether ``UnsetType`` is one of its alternatives. A format that
        needs no tag keeps it as an ``unset`` node (its wire says UNSET: Avro's branch, the
        pickle's global); the others leave it out, since they write nothing for UNSET."""
        saved = (self._unset_allowed, self._unset_seen)
        self._unset_allowed, self._unset_seen = kind == "dataclass", False
        try:
            variants = self._variants(hint)
            unset = self._unset_seen
        finally:
            self._unset_allowed, self._unset_seen = saved
        if not variants:
            if unset:
                raise self.fail(hint, "a field needs a type besides UnsetType")
            # Only reachable through an alias of UnsetType: compiled as any other empty union.
            raise self.fail(hint, "the annotation has no type")
        if unset and self._branched:
            variants.append(self.add("unset", {}))
        node = variants[0] if len(variants) == 1 else self._union(variants, hint)
        return node, unset

    def _hints(self, cls: type) -> Dict[str, Any]:
        # A PEP 695 class's type parameters live in a scope of their own, which string
        # annotations (``from __future__ import annotations``) cannot see before 3.13.
        local = {p.__name__: p for p in getattr(cls, "__type_params__", ())}
        local[cls.__name__] = cls
        try:
            return typing.get_type_hints(cls, localns=local, include_extras=True)
        except Exception as exc:  # NameError, SyntaxError, TypeError from bad annotations
            raise TypeError(
                f"polycodec cannot resolve the annotations of {cls.__qualname__!r}: {exc} "
                "(referenced types must be importable from the class's module)"
            ) from exc

    def _field_specs(self, cls: type, kind: str) -> List[_Field]:
        hints = self._hints(cls)
        if is_attrs(cls):
            return self._attrs_fields(cls, hints)
        if kind == "dataclass":
            return self._dataclass_fields(cls, hints)
        if kind == "typeddict":
            required_keys: FrozenSet[str] = getattr(cls, "__required_keys__", frozenset())
            specs = []
            for name, hint in hints.items():
                _, qualifier, _ = peel_field(hint)
                required = name in required_keys if qualifier is None else qualifier
                specs.append(_Field(name, hint, NODEFAULT, None, required, True))
            return specs
        defaults: Dict[str, Any] = getattr(cls, "_field_defaults", {})
        return [
            _Field(n, hints.get(n, Any), defaults.get(n, NODEFAULT), None, n not in defaults, True)
            for n in getattr(cls, "_fields")
        ]

    def _dataclass_fields(self, cls: type, hints: Dict[str, Any]) -> List[_Field]:
        declared = getattr(cls, "__dataclass_fields__")
        for name in declared:
            hint = hints.get(name)
            if isinstance(hint, dataclasses.InitVar) or hint is dataclasses.InitVar:
                self._site = (f"field '{cls.__qualname__}.{name}'", hint)
                raise self.fail(
                    hint, "InitVar fields cannot be decoded (they are not stored on the instance)"
                )
        specs = []
        for f in dataclasses.fields(cls):
            default = NODEFAULT if f.default is dataclasses.MISSING else f.default
            factory = None if f.default_factory is dataclasses.MISSING else f.default_factory
            required = default is NODEFAULT and factory is None
            specs.append(_Field(f.name, hints.get(f.name, Any), default, factory, required, f.init))
        return specs

    def _attrs_fields(self, cls: type, hints: Dict[str, Any]) -> List[_Field]:
        """An attrs class's attributes as fields: named by attribute (``_x``, not its ``__init__``
        alias ``x``), typed by annotation (or ``attr.ib(type=...)``, else ``Any``), with their
        defaults and ``Factory`` defaults; ``init=False`` ones are not on the wire."""
        attr = sys.modules["attr"]
        specs = []
        for attribute in attr.fields(cls):
            hint = hints.get(attribute.name, attribute.type)
            hint = Any if hint is None else hint
            default: Any = attribute.default
            factory: Optional[Callable[[], Any]] = None
            if isinstance(default, attr.Factory):
                if default.takes_self:
                    self._site = (f"field '{cls.__qualname__}.{attribute.name}'", hint)
                    raise self.fail(
                        hint,
                        "a default Factory with takes_self=True is not supported (the value "
                        "it makes depends on an instance that decoding has not made yet)",
                    )
                default, factory = NODEFAULT, default.factory
            elif default is attr.NOTHING:
                default = NODEFAULT
            required = default is NODEFAULT and factory is None
            specs.append(_Field(attribute.name, hint, default, factory, required, attribute.init))
        return specs

    @staticmethod
    def _check_wire_names(
        cls: type, fields: List[FieldSpec], class_tag: Optional[Tuple[str, Any]]
    ) -> None:
        """No two fields (their wire names, their aliases) and the class's tag share a name."""
        seen: Dict[str, str] = {}
        for field in fields:
            if not field["wire"]:
                continue
            for name in (field["wire_name"], *field["aliases"]):
                other = seen.setdefault(name, field["name"])
                if other != field["name"]:
                    raise TypeError(
                        f"polycodec cannot handle the class {cls.__qualname__!r}: fields {other!r} "
                        f"and {field['name']!r} both use the wire name {name!r}"
                    )
        if class_tag is not None and class_tag[0] in seen:
            raise TypeError(
                f"polycodec cannot handle the class {cls.__qualname__!r}: its tag_field "
                f"{class_tag[0]!r} is also the wire name of field {seen[class_tag[0]]!r}"
            )


# ---------------------------------------------------------------------------------------------
# Compaction
