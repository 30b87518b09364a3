"""Leaf annotations: plain scalar classes, ``Literal``, ``Enum``, and extension classes."""

from __future__ import annotations

import datetime
import enum
import typing
import uuid
from decimal import Decimal
from typing import Any, Dict, List, Literal, Optional, Type

from .._custom_types import Extension
from .base import CompilerBase
from .spec import DecimalSpec, EnumSpec, ExtensionSpec
from .typeinfo import dedupe_literals

# Plain classes that map to one leaf node of the kind named.
_ScalarKind = Literal[
    "none",
    "bool",
    "int",
    "float",
    "str",
    "bytes",
    "decimal",
    "datetime",
    "date",
    "time",
    "timedelta",
    "uuid",
]
_SCALARS: Dict[type, _ScalarKind] = {
    type(None): "none",
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    bytes: "bytes",
    bytearray: "bytes",
    memoryview: "bytes",
    Decimal: "decimal",
    datetime.datetime: "datetime",
    datetime.date: "date",
    datetime.time: "time",
    datetime.timedelta: "timedelta",
    uuid.UUID: "uuid",
}


class ScalarCompiler(CompilerBase):
    def _scalar(self, cls: type) -> Optional[int]:
        """The leaf node of a plain scalar class (its constraints all None), or None for any
        other class."""
        kind = _SCALARS.get(cls)
        if kind == "int":
            return self.add(
                "int", {"ge": None, "gt": None, "le": None, "lt": None, "multiple_of": None}
            )
        if kind == "float":
            return self.add(
                "float", {"ge": None, "gt": None, "le": None, "lt": None, "multiple_of": None}
            )
        if kind == "str":
            return self.add("str", {"min_length": None, "max_length": None, "pattern": None})
        if kind == "bytes":
            return self.add("bytes", {"cls": cls, "min_length": None, "max_length": None})
        if kind == "decimal":
            decimal: DecimalSpec = {
                "max_digits": None,
                "decimal_places": None,
                "ge": None,
                "gt": None,
                "le": None,
                "lt": None,
            }
            return self.add("decimal", decimal)
        if kind == "datetime" or kind == "time":
            return self.add(kind, {"tz": None})
        if kind is None:
            return None
        return self.add(kind, {})

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
        data: ExtensionSpec = {
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
            out.append(self.add("literal", {"values": dedupe_literals(kept)}))
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
        data: EnumSpec = {
            "cls": cls,
            "members": members,
            "values": values,
            "names": [m.name for m in members],
            "value_kind": value_kind,
            "flag": flag,
        }
        return self.add("enum", data)
