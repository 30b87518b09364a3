"""Leaf annotations: plain scalar classes, ``Literal``, ``Enum``, and extension classes."""

from __future__ import annotations

import datetime
import enum
import typing
import uuid
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple, Type

from .._custom_types import Extension
from .base import CompilerBase
from .constraints import _BOUNDS, _LENGTHS
from .typeinfo import _dedupe_literals

# Plain classes that map to one leaf node: class -> (kind, data keys, all None initially).
_SCALARS: Dict[Any, Tuple[str, Tuple[str, ...]]] = {
    type(None): ("none", ()),
    bool: ("bool", ()),
    int: ("int", _BOUNDS + ("multiple_of",)),
    float: ("float", _BOUNDS + ("multiple_of",)),
    str: ("str", _LENGTHS + ("pattern",)),
    bytes: ("bytes", ("cls",) + _LENGTHS),
    bytearray: ("bytes", ("cls",) + _LENGTHS),
    memoryview: ("bytes", ("cls",) + _LENGTHS),
    Decimal: ("decimal", ("max_digits", "decimal_places") + _BOUNDS),
    datetime.datetime: ("datetime", ("tz",)),
    datetime.date: ("date", ()),
    datetime.time: ("time", ("tz",)),
    datetime.timedelta: ("timedelta", ()),
    uuid.UUID: ("uuid", ()),
}


class ScalarCompiler(CompilerBase):
    def _extension_for(self, cls: type) -> Optional[Extension]:
        """The extension for ``cls``: its own entry, else the nearest base class's."""
        found = self._extensions.get(cls)
        if found is not None:
            return found
        for base in cls.__mro__[1:]:
            if base is not object and base in self._extensions:
                return self._extensions[base]
        return None

    def _extension(self, cls: type, extension: Extension) -> int:
        if cls in self._extensions_busy:
            raise self.fail(cls, "the wire type of its extension refers back to it")
        self._extensions_busy.append(cls)
        try:
            wire = self.node(extension.wire)
        finally:
            self._extensions_busy.pop()
        data = {
            "cls": cls,
            "name": cls.__qualname__,
            "wire": wire,
            "encode": extension.encode,
            "decode": extension.decode,
            "nullable": False,
        }
        return self.add("extension", data)

    def _literal(self, tp: Any) -> List[int]:
        values: List[Any] = []
        todo = list(typing.get_args(tp))
        while todo:
            value = todo.pop(0)
            if typing.get_origin(value) is typing.Literal:
                todo[:0] = typing.get_args(value)
            elif value is None or type(value) in (str, int, bool):
                values.append(value)
            else:
                raise self.fail(tp, f"Literal values must be str, int, bool or None, not {value!r}")
        out = []
        kept = [v for v in values if v is not None]
        if kept:
            out.append(self.add("literal", {"values": _dedupe_literals(kept)}))
        if len(kept) < len(values):
            out.append(self.add("none", {}))
        return out

    def _enum(self, cls: Type[enum.Enum]) -> int:
        # A Flag's canonical (one-bit) members; any int its class accepts (their combinations,
        # and what its boundary lets through) decodes as ``cls(value)``.
        flag = issubclass(cls, enum.Flag)
        members = list(cls)
        if not members:
            raise self.fail(cls, "the enum has no members")
        values = [m.value for m in members]
        if flag and any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise self.fail(cls, "Flag values must all be int")
        if any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in values):
            raise self.fail(cls, "enum values must all be str or int")
        if all(isinstance(v, str) for v in values):
            value_kind = "str"
        elif all(isinstance(v, int) for v in values):
            value_kind = "int"
        else:
            value_kind = "mixed"
        data = {
            "cls": cls,
            "members": members,
            "values": values,
            "names": [m.name for m in members],
            "value_kind": value_kind,
            "flag": flag,
        }
        return self.add("enum", data)
