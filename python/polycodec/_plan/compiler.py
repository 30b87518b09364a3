"""The compiler as one class (every part's methods) and the entry point, ``compile_spec``."""

from __future__ import annotations

import collections.abc
import enum
import typing
from typing import Any, List, Mapping, Optional, Tuple

from .._custom_types import Extension, check_extensions
from .._naming import Rename, renamer
from .._polycodec import Raw
from .._unset import UnsetType
from .aliases import AliasCompiler
from .containers import ContainerCompiler
from .formats import NO_RAW, keeps_raw, unions_need_tag
from .graph import compact
from .records import RecordCompiler
from .scalars import ScalarCompiler
from .spec import Node
from .typeinfo import as_alias, is_union, qualifiers, subst, _unsupported

_SEQUENCES = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_SETS = (set, collections.abc.Set, collections.abc.MutableSet)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


class _Compiler(AliasCompiler, RecordCompiler, ScalarCompiler, ContainerCompiler):
    """Every part of the compiler in one class, with the dispatch on what an annotation is."""

    def root(self, tp: Any) -> int:
        self._site = (None, tp)
        index = self.node(tp)
        self._finish_unions()
        for target, alias in self._recursive_aliases.items():
            self.nodes[target][1]["alias"] = alias
        self._check_set_items()
        return index

    def _variants(self, tp: Any) -> List[int]:
        """Compile ``tp`` into its union alternatives, so nested unions flatten naturally."""
        alias, alias_args = as_alias(tp)
        if alias is not None:
            return self._alias(tp, alias, alias_args)
        origin = typing.get_origin(tp)
        if is_union(tp):
            return [v for arg in typing.get_args(tp) for v in self._variants(arg)]
        if origin is typing.Literal:
            return self._literal(tp)
        if origin is typing.Annotated:
            return self._constrain(self._variants(tp.__origin__), tp)
        if origin is not None and origin in qualifiers() and typing.get_args(tp):
            return self._variants(typing.get_args(tp)[0])
        if isinstance(tp, typing.TypeVar):
            return self._variants(subst(tp, self._typevars))
        if callable(tp) and hasattr(tp, "__supertype__"):  # NewType
            return self._variants(tp.__supertype__)
        if tp is UnsetType:
            if not self._unset_allowed:
                raise self.fail(
                    tp,
                    "UnsetType may only be an alternative of a dataclass field's own annotation "
                    "(`x: int | UnsetType = UNSET`): UNSET stands for a field left out",
                )
            self._unset_seen = True
            return []
        # The types inside this one (items, values, fields) are no field's own alternatives.
        allowed, self._unset_allowed = self._unset_allowed, False
        try:
            return [self._single(tp)]
        finally:
            self._unset_allowed = allowed

    def _single(self, tp: Any) -> int:
        """Compile an annotation that is not a union, Literal, Annotated or alias."""
        if tp is Any or tp is object:
            return self.add("any", {})
        if tp is Raw:
            if not keeps_raw(self._format):
                reason = NO_RAW.get(self._format, "its values are not kept as bytes")
                raise self.fail(tp, f"format {self._format!r} has no Raw: {reason}")
            return self.add("raw", {"nullable": False})
        if tp is None:
            tp = type(None)
        if self._extensions and isinstance(tp, type):
            extension = self._extension_for(tp)
            if extension is not None:
                return self._extension(tp, extension)
        scalar = self._scalar(tp) if isinstance(tp, type) else None
        if scalar is not None:
            return scalar
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp)
        origin = typing.get_origin(tp) or tp
        args = typing.get_args(tp)
        if origin is tuple:
            return self._tuple(tp, args)
        if isinstance(origin, type):
            if origin in _SEQUENCES:
                return self._collection("list", args)
            if origin in _SETS:
                return self._collection("set", args)
            if origin is frozenset:
                return self._collection("frozenset", args)
            if origin in _MAPPINGS:
                return self._dict(tp, args)
            record_kind = self._record_kind(origin)
            if record_kind is not None:
                return self._record(origin, record_kind, args)
        if isinstance(tp, (str, typing.ForwardRef)):
            raise self.fail(tp, "unresolved forward reference")
        raise self.fail(tp, _unsupported(tp))


def compile_spec(
    tp: Any,
    *,
    format: str = "json",
    rename: Rename = None,
    omit_defaults: bool = False,
    forbid_unknown_fields: bool = False,
    array_like: bool = False,
    extensions: Optional[Mapping[type, Extension]] = None,
) -> Tuple[List[Node], int]:
    """Compile ``tp`` into ``(nodes, root_index)`` as described in ``docs/plan-spec.md``.

    ``format`` is the wire format the plan is for; it only changes which unions are accepted
    (see ``unions_need_tag``). The options apply to every record in the plan. Raises
    ``TypeError`` for any annotation that cannot be encoded and decoded faithfully, and
    ``ValueError``/``TypeError`` for a bad ``rename`` option. ``extensions`` maps classes to
    :class:`polycodec.Extension` (see ``_custom_types.py``).
    """
    renamer(rename)  # refused here even for a type without records
    compiler = _Compiler(
        rename,
        bool(omit_defaults),
        bool(forbid_unknown_fields),
        bool(array_like),
        branched=not unions_need_tag(format),
        extensions=check_extensions(extensions),
        format=format,
    )
    root = compiler.root(tp)
    return compact(compiler.nodes, root)
