"""Python types built from an Avro schema, for reading and writing data without a user class
(the ``python -m polycodec`` command line), and the Avro JSON encoding of their values.

``Codec(Any, "avro")`` is refused: the decoder is compiled from a type. So a schema is turned
into one: records become dataclasses, enums ``enum.Enum`` classes, logical types the Python
types that polycodec binds to them, and the codec is bound to the schema itself with
``schema=``, so that what is read and written is exactly that schema.

Named types are referred to by string annotations resolved in a module made for the schema,
which is how a recursive record (a linked list, a tree) refers back to itself.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import itertools
import keyword
import math
import sys
import types
import typing
import uuid
from typing import Annotated, Any, Callable, Dict, List, Optional, Tuple

from .._meta import Meta

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_NAIVE_EPOCH = datetime.datetime(1970, 1, 1)
_DAY_ZERO = datetime.date(1970, 1, 1)
_MODULES = itertools.count()
_KINDS = frozenset(
    ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
    + ["record", "error", "enum", "fixed", "array", "map"]
)

# logical type -> (the underlying types it applies to, the unit of one integer step)
_TIMES: Dict[str, Tuple[Tuple[str, ...], datetime.timedelta]] = {
    "timestamp-millis": (("long",), datetime.timedelta(milliseconds=1)),
    "timestamp-micros": (("long",), datetime.timedelta(microseconds=1)),
    "local-timestamp-millis": (("long",), datetime.timedelta(milliseconds=1)),
    "local-timestamp-micros": (("long",), datetime.timedelta(microseconds=1)),
    "time-millis": (("int",), datetime.timedelta(milliseconds=1)),
    "time-micros": (("long",), datetime.timedelta(microseconds=1)),
}


class SchemaValueError(ValueError):
    """A value that does not fit the schema, with the path to it (``$.items[2].name``)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{message} (at {path})")
        self.path = path


def _logical(schema: Dict[str, Any]) -> Optional[str]:
    """The schema's logical type when polycodec reads it as one, else None (an unknown or
    invalid logical type is read as its underlying type, as the specification says)."""
    logical = schema.get("logicalType")
    base = schema["type"]
    if logical in _TIMES:
        return logical if base in _TIMES[logical][0] else None
    if logical == "date":
        return logical if base == "int" else None
    if logical == "uuid":
        return (
            logical if base == "string" or (base == "fixed" and schema.get("size") == 16) else None
        )
    if logical == "decimal" and base in ("bytes", "fixed"):
        precision, scale = schema.get("precision"), schema.get("scale", 0)
        if not isinstance(precision, int) or not isinstance(scale, int):
            return None
        if precision <= 0 or not 0 <= scale <= precision:
            return None
        if base == "fixed" and precision > math.floor(math.log10(2) * (8 * schema["size"] - 1)):
            return None
        return "decimal"
    return None


def _full_name(schema: Dict[str, Any], namespace: Optional[str]) -> Tuple[str, Optional[str]]:
    name: str = schema["name"]
    if "." in name:
        return name, name.rpartition(".")[0]
    space = schema.get("namespace", namespace) or None
    return (f"{space}.{name}" if space else name), space


@dataclasses.dataclass
class _Record:
    cls: type
    fields: List[Tuple[str, str, Any]]  # (Avro name, attribute name, field schema)


class SchemaTypes:
    """The Python type of a parsed Avro schema (JSON data, as ``json.loads`` gives it), with
    ``to_json`` / ``from_json`` between its values and the Avro JSON encoding."""

    def __init__(self, schema: Any) -> None:
        self.module = types.ModuleType(f"polycodec._avro.schema_types_{next(_MODULES)}")
        sys.modules[self.module.__name__] = self.module
        self.named: Dict[str, Any] = {}  # full name -> its schema, with "_full" and "_ref" set
        self.records: Dict[str, _Record] = {}
        self.schema = self._resolve_names(schema, None)
        # The root may hold string references (a union of records): resolved as polycodec
        # resolves a field's annotation.
        holder = types.SimpleNamespace(__annotations__={"root": self._type(self.schema)})
        self.type: Any = typing.get_type_hints(
            holder, globalns=vars(self.module), include_extras=True
        )["root"]

    # -- building the types -------------------------------------------------------------------

    def _resolve_names(self, schema: Any, namespace: Optional[str]) -> Any:
        """A copy of the schema in which each named type knows its full name and each reference
        to one is replaced by the definition (shared, so recursion stays a cycle)."""
        if isinstance(schema, str):
            if schema in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
                return {"type": schema}
            full = schema if "." in schema or not namespace else f"{namespace}.{schema}"
            found = self.named.get(full) or self.named.get(schema)
            if found is None:  # parse_schema checked the schema, so this is a bug
                raise ValueError(f"unknown type name {schema!r}")
            return found
        if isinstance(schema, list):
            return {
                "type": "union",
                "branches": [self._resolve_names(s, namespace) for s in schema],
            }
        kind = schema["type"]
        if isinstance(kind, (list, dict)) or kind not in _KINDS:  # {"type": "Name"} too
            return self._resolve_names(kind, namespace)
        if kind in ("record", "error", "enum", "fixed"):
            full, space = _full_name(schema, namespace)
            node = dict(schema, _full=full, _ref=f"T{len(self.named)}")
            self.named[full] = node
            if kind in ("record", "error"):
                node["fields"] = [
                    dict(f, type=self._resolve_names(f["type"], space)) for f in schema["fields"]
                ]
            return node
        if kind == "array":
            return dict(schema, items=self._resolve_names(schema["items"], namespace))
        if kind == "map":
            return dict(schema, values=self._resolve_names(schema["values"], namespace))
        return dict(schema)

    def _type(self, schema: Dict[str, Any]) -> Any:
        kind = schema["type"]
        logical = _logical(schema) if kind != "union" else None
        if logical is not None:
            return _LOGICAL_TYPES[logical](schema)
        if kind == "union":
            branches = tuple(self._type(b) for b in schema["branches"])
            seen: Dict[Any, str] = {}
            for branch, hint in zip(schema["branches"], branches):
                kept = self._value_type(hint)
                if kept in seen:  # a value would not say which branch it was read from
                    raise TypeError(
                        f"the union branches {seen[kept]} and {_branch_name(branch)} are both "
                        f"read as {getattr(kept, '__name__', kept)}, which cannot say which "
                        "branch a value came from"
                    )
                seen[kept] = _branch_name(branch)
            return typing.Union[branches] if len(branches) > 1 else branches[0]
        if kind == "array":
            return typing.List[self._type(schema["items"])]  # type: ignore[misc]
        if kind == "map":
            return typing.Dict[str, self._type(schema["values"])]  # type: ignore[misc]
        if kind in ("record", "error", "enum"):
            if not hasattr(self.module, schema["_ref"]):
                setattr(self.module, schema["_ref"], None)  # being built: refer by name
                setattr(self.module, schema["_ref"], self._named_class(schema))
            return schema["_ref"]
        return _PRIMITIVE_TYPES[kind]

    def _named_class(self, schema: Dict[str, Any]) -> type:
        full: str = schema["_full"]
        short = full.rpartition(".")[2]
        cls: Any
        if schema["type"] == "enum":
            make_enum: Any = enum.Enum  # the functional API, which mypy wants a literal name for
            try:
                cls = make_enum(short, [(s, s) for s in schema["symbols"]])
            except ValueError as err:  # _sunder_ and __dunder symbols: Enum keeps those names
                raise TypeError(f"the enum {full} has a symbol Python enums refuse: {err}")
        else:
            taken = {f["name"] for f in schema["fields"]}
            spec: List[Any] = []
            fields: List[Tuple[str, str, Any]] = []
            for index, field in enumerate(schema["fields"]):
                name: str = field["name"]
                attr = name
                if keyword.iskeyword(name) or name.startswith("__"):
                    attr = f"field_{index}"
                    while attr in taken:
                        attr += "_"
                    taken.add(attr)
                hint = self._type(field["type"])
                if attr != name:
                    hint = Annotated[hint, Meta(name=name)]
                spec.append((attr, hint))
                fields.append((name, attr, field["type"]))
            cls = dataclasses.make_dataclass(short, spec)
            self.records[full] = _Record(cls, fields)
        cls.__module__ = self.module.__name__
        setattr(cls, "__avro__", {"name": short, "namespace": full.rpartition(".")[0] or None})
        return typing.cast(type, cls)

    def resolve(self, hint: Any) -> Any:
        """A named type's class from the string that refers to it."""
        return getattr(self.module, hint) if isinstance(hint, str) else hint

    # -- values to and from the Avro JSON encoding ---------------------------------------------

    def to_json(self, value: Any) -> Any:
        """The value as the Avro JSON encoding gives it: bytes and fixed as strings of code
        points 0-255, a union's non-null value as ``{"branch": value}``, logical types as their
        underlying type."""
        return self._to_json(self.schema, value)

    def _to_json(self, schema: Dict[str, Any], value: Any) -> Any:
        kind = schema["type"]
        if kind == "union":
            if value is None:
                return None
            branch = self._branch_of(schema, value)
            return {_branch_name(branch): self._to_json(branch, value)}
        logical = _logical(schema)
        if logical is not None:
            value = _TO_UNDERLYING[logical](schema, value)
            return value.decode("latin-1") if isinstance(value, bytes) else value
        if kind in ("bytes", "fixed"):
            return bytes(value).decode("latin-1")
        if kind == "enum":
            return value.name
        if kind == "array":
            return [self._to_json(schema["items"], v) for v in value]
        if kind == "map":
            return {k: self._to_json(schema["values"], v) for k, v in value.items()}
        if kind in ("record", "error"):
            record = self.records[schema["_full"]]
            return {name: self._to_json(s, getattr(value, attr)) for name, attr, s in record.fields}
        return value

    def _value_type(self, hint: Any) -> Any:
        """The class of the values the decoder gives for a branch's type hint."""
        if isinstance(hint, str):  # a named type, being built: its reference is its identity
            return hint
        origin = typing.get_origin(hint)
        if origin is Annotated:
            return typing.get_args(hint)[0]
        return hint if origin is None else origin

    def _branch_of(self, schema: Dict[str, Any], value: Any) -> Dict[str, Any]:
        table: Optional[Dict[Any, Dict[str, Any]]] = schema.get("_by_class")
        if table is None:  # made at the union's first value: its classes all exist by then
            table = {
                self.resolve(self._value_type(self._type(branch))): branch
                for branch in schema["branches"]
            }
            schema["_by_class"] = table
        branch = table.get(type(value))
        if branch is None:  # the decoder gave a value of no branch's class: a bug
            raise TypeError(f"no branch of {schema['branches']} holds {type(value).__name__}")
        return branch

    def from_json(self, data: Any) -> Any:
        """The value of the Avro JSON encoding ``data`` (as ``json.loads`` gives it);
        ``SchemaValueError`` with the path when it does not fit the schema."""
        return self._from_json(self.schema, data, "$")

    def _from_json(self, schema: Dict[str, Any], data: Any, path: str) -> Any:
        kind = schema["type"]
        if kind == "union":
            return self._union_from_json(schema, data, path)
        logical = _logical(schema)
        if logical is not None:
            raw = self._from_json(dict(schema, logicalType=None), data, path)
            try:
                return _FROM_UNDERLYING[logical](schema, raw)
            except (ValueError, OverflowError, ArithmeticError) as err:
                raise SchemaValueError(path, f"{raw!r} is not a valid {logical}: {err}") from None
        if kind == "null":
            if data is not None:
                raise SchemaValueError(path, f"expected null, got {_describe(data)}")
            return None
        if kind == "boolean":
            if not isinstance(data, bool):
                raise SchemaValueError(path, f"expected a boolean, got {_describe(data)}")
            return data
        if kind in ("int", "long"):
            if not isinstance(data, int) or isinstance(data, bool):
                raise SchemaValueError(path, f"expected an integer ({kind}), got {_describe(data)}")
            return data
        if kind in ("float", "double"):
            if not isinstance(data, (int, float)) or isinstance(data, bool):
                raise SchemaValueError(path, f"expected a number ({kind}), got {_describe(data)}")
            return float(data)
        if kind == "string":
            if not isinstance(data, str):
                raise SchemaValueError(path, f"expected a string, got {_describe(data)}")
            return data
        if kind in ("bytes", "fixed"):
            if not isinstance(data, str):
                raise SchemaValueError(path, f"expected a string of bytes, got {_describe(data)}")
            try:
                raw = data.encode("latin-1")
            except UnicodeEncodeError:
                raise SchemaValueError(path, "bytes are written as code points 0-255") from None
            if kind == "fixed" and len(raw) != schema["size"]:
                raise SchemaValueError(path, f"expected {schema['size']} bytes, got {len(raw)}")
            return raw
        if kind == "enum":
            if not isinstance(data, str) or data not in schema["symbols"]:
                raise SchemaValueError(path, f"expected one of {schema['symbols']}, got {data!r}")
            return self.resolve(self._type(schema))[data]
        if kind == "array":
            if not isinstance(data, list):
                raise SchemaValueError(path, f"expected an array, got {_describe(data)}")
            items = schema["items"]
            return [self._from_json(items, v, f"{path}[{i}]") for i, v in enumerate(data)]
        if kind == "map":
            if not isinstance(data, dict):
                raise SchemaValueError(path, f"expected an object (map), got {_describe(data)}")
            inner = schema["values"]
            return {k: self._from_json(inner, v, f"{path}.{k}") for k, v in data.items()}
        # a record
        if not isinstance(data, dict):
            raise SchemaValueError(
                path, f"expected an object ({schema['_full']}), got {_describe(data)}"
            )
        record = self.records[schema["_full"]]
        known = {name for name, _, _ in record.fields}
        for key in data:
            if key not in known:
                raise SchemaValueError(f"{path}.{key}", f"{schema['_full']} has no field {key!r}")
        values: Dict[str, Any] = {}
        for name, attr, field_schema in record.fields:
            if name not in data:
                raise SchemaValueError(f"{path}.{name}", "missing field")
            values[attr] = self._from_json(field_schema, data[name], f"{path}.{name}")
        return record.cls(**values)

    def _union_from_json(self, schema: Dict[str, Any], data: Any, path: str) -> Any:
        branches: List[Dict[str, Any]] = schema["branches"]
        if data is None:
            if any(b["type"] == "null" for b in branches):
                return None
            raise SchemaValueError(path, "null is not a branch of the union")
        if not isinstance(data, dict) or len(data) != 1:
            names = [_branch_name(b) for b in branches if b["type"] != "null"]
            raise SchemaValueError(path, f"expected null or an object with one key of {names}")
        ((key, inner),) = data.items()
        for branch in branches:
            if key == _branch_name(branch) or (
                branch["type"] in ("record", "error", "enum", "fixed")
                and key == branch["_full"].rpartition(".")[2]
            ):
                return self._from_json(branch, inner, f"{path}.{key}")
        names = [_branch_name(b) for b in branches if b["type"] != "null"]
        raise SchemaValueError(path, f"{key!r} is not a branch of the union {names}")

    # -- values to and from plain Python values ----------------------------------------------

    def to_python(self, value: Any) -> Any:
        """The value as plain Python values: a record as a dict keyed by its Avro field names,
        an enum as its symbol, a union's value as itself; bytes, datetimes, dates, times,
        decimals and UUIDs as themselves."""
        return self._to_python(self.schema, value)

    def _to_python(self, schema: Dict[str, Any], value: Any) -> Any:
        kind = schema["type"]
        if kind == "union":
            return None if value is None else self._to_python(self._branch_of(schema, value), value)
        if _logical(schema) is not None:
            return value
        if kind in ("bytes", "fixed"):
            return bytes(value)
        if kind == "enum":
            return value.name
        if kind == "array":
            return [self._to_python(schema["items"], v) for v in value]
        if kind == "map":
            return {k: self._to_python(schema["values"], v) for k, v in value.items()}
        if kind in ("record", "error"):
            record = self.records[schema["_full"]]
            return {n: self._to_python(s, getattr(value, a)) for n, a, s in record.fields}
        return value

    def from_python(self, data: Any) -> Any:
        """The value of plain Python values (as ``to_python`` gives them, or as MessagePack and
        pickle readers give them): a union's value is taken by the first branch, in the
        schema's order, that accepts it; a logical type takes its Python type or its
        underlying type's value. ``SchemaValueError`` with the path when nothing fits."""
        return self._from_python(self.schema, data, "$")

    def _from_python(self, schema: Dict[str, Any], data: Any, path: str) -> Any:
        kind = schema["type"]
        if kind == "union":
            for branch in schema["branches"]:
                try:
                    return self._from_python(branch, data, path)
                except SchemaValueError:
                    continue
            names = [_branch_name(b) for b in schema["branches"]]
            raise SchemaValueError(path, f"no branch of the union {names} takes {_describe(data)}")
        logical = _logical(schema)
        if logical is not None:
            if isinstance(data, _NATURAL_TYPES[logical]) and not (
                logical == "date" and isinstance(data, datetime.datetime)
            ):
                return data
            if logical == "uuid" and isinstance(data, str):
                try:
                    return uuid.UUID(data)
                except ValueError:
                    raise SchemaValueError(path, f"{data!r} is not a valid uuid") from None
            return self._from_json(schema, data, path)  # the underlying type's value
        if kind in ("bytes", "fixed"):
            if not isinstance(data, (bytes, bytearray)):
                raise SchemaValueError(path, f"expected bytes, got {_describe(data)}")
            if kind == "fixed" and len(data) != schema["size"]:
                raise SchemaValueError(path, f"expected {schema['size']} bytes, got {len(data)}")
            return bytes(data)
        if kind == "array":
            if not isinstance(data, (list, tuple)):
                raise SchemaValueError(path, f"expected an array, got {_describe(data)}")
            items = schema["items"]
            return [self._from_python(items, v, f"{path}[{i}]") for i, v in enumerate(data)]
        if kind == "map":
            if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
                raise SchemaValueError(path, f"expected a dict of str keys, got {_describe(data)}")
            inner = schema["values"]
            return {k: self._from_python(inner, v, f"{path}.{k}") for k, v in data.items()}
        if kind in ("record", "error"):
            if not isinstance(data, dict):
                raise SchemaValueError(
                    path, f"expected a dict ({schema['_full']}), got {_describe(data)}"
                )
            record = self.records[schema["_full"]]
            known = {name for name, _, _ in record.fields}
            for key in data:
                if key not in known:
                    raise SchemaValueError(
                        f"{path}.{key}", f"{schema['_full']} has no field {key!r}"
                    )
            values: Dict[str, Any] = {}
            for name, attr, field_schema in record.fields:
                if name not in data:
                    raise SchemaValueError(f"{path}.{name}", "missing field")
                values[attr] = self._from_python(field_schema, data[name], f"{path}.{name}")
            return record.cls(**values)
        return self._from_json(schema, data, path)  # null, boolean, numbers, string, enum


def _describe(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 40 else text[:37] + "..."


def _branch_name(schema: Dict[str, Any]) -> str:
    if schema["type"] in ("record", "error", "enum", "fixed"):
        return typing.cast(str, schema["_full"])
    return typing.cast(str, schema["type"])


def _decimal_type(schema: Dict[str, Any]) -> Any:
    return Annotated[
        decimal.Decimal, Meta(max_digits=schema["precision"], decimal_places=schema.get("scale", 0))
    ]


_PRIMITIVE_TYPES: Dict[str, Any] = {
    "null": type(None),
    "boolean": bool,
    "int": int,
    "long": int,
    "float": float,
    "double": float,
    "bytes": bytes,
    "fixed": bytes,
    "string": str,
}

_LOGICAL_TYPES: Dict[str, Callable[[Dict[str, Any]], Any]] = {
    "timestamp-millis": lambda s: datetime.datetime,
    "timestamp-micros": lambda s: datetime.datetime,
    "local-timestamp-millis": lambda s: Annotated[datetime.datetime, Meta(tz=False)],
    "local-timestamp-micros": lambda s: Annotated[datetime.datetime, Meta(tz=False)],
    "time-millis": lambda s: datetime.time,
    "time-micros": lambda s: datetime.time,
    "date": lambda s: datetime.date,
    "uuid": lambda s: uuid.UUID,
    "decimal": _decimal_type,
}


def _steps(schema: Dict[str, Any], span: datetime.timedelta) -> int:
    return span // _TIMES[schema["logicalType"]][1]


def _unscaled(schema: Dict[str, Any], value: decimal.Decimal) -> bytes:
    number = int(value.scaleb(schema.get("scale", 0)))
    if schema["type"] == "fixed":
        size: int = schema["size"]
    else:
        size = (number + (number < 0)).bit_length() // 8 + 1
    return number.to_bytes(size, "big", signed=True)


# logical type -> the Python values that are already of it
_NATURAL_TYPES: Dict[str, Any] = {
    "timestamp-millis": datetime.datetime,
    "timestamp-micros": datetime.datetime,
    "local-timestamp-millis": datetime.datetime,
    "local-timestamp-micros": datetime.datetime,
    "time-millis": datetime.time,
    "time-micros": datetime.time,
    "date": datetime.date,
    "uuid": uuid.UUID,
    "decimal": decimal.Decimal,
}

_TO_UNDERLYING: Dict[str, Callable[[Dict[str, Any], Any], Any]] = {
    "timestamp-millis": lambda s, v: _steps(s, v - _EPOCH),
    "timestamp-micros": lambda s, v: _steps(s, v - _EPOCH),
    "local-timestamp-millis": lambda s, v: _steps(s, v - _NAIVE_EPOCH),
    "local-timestamp-micros": lambda s, v: _steps(s, v - _NAIVE_EPOCH),
    "time-millis": lambda s, v: _steps(
        s, datetime.datetime.combine(_NAIVE_EPOCH, v) - _NAIVE_EPOCH
    ),
    "time-micros": lambda s, v: _steps(
        s, datetime.datetime.combine(_NAIVE_EPOCH, v) - _NAIVE_EPOCH
    ),
    "date": lambda s, v: (v - _DAY_ZERO).days,
    "uuid": lambda s, v: str(v) if s["type"] == "string" else v.bytes,
    "decimal": _unscaled,
}


def _time_of_day(schema: Dict[str, Any], steps: int) -> datetime.time:
    span = steps * _TIMES[schema["logicalType"]][1]
    if not datetime.timedelta(0) <= span < datetime.timedelta(days=1):
        raise ValueError("outside one day")
    return (_NAIVE_EPOCH + span).time()


_FROM_UNDERLYING: Dict[str, Callable[[Dict[str, Any], Any], Any]] = {
    "timestamp-millis": lambda s, v: _EPOCH + v * _TIMES[s["logicalType"]][1],
    "timestamp-micros": lambda s, v: _EPOCH + v * _TIMES[s["logicalType"]][1],
    "local-timestamp-millis": lambda s, v: _NAIVE_EPOCH + v * _TIMES[s["logicalType"]][1],
    "local-timestamp-micros": lambda s, v: _NAIVE_EPOCH + v * _TIMES[s["logicalType"]][1],
    "time-millis": _time_of_day,
    "time-micros": _time_of_day,
    "date": lambda s, v: _DAY_ZERO + datetime.timedelta(days=v),
    "uuid": lambda s, v: uuid.UUID(v) if s["type"] == "string" else uuid.UUID(bytes=v),
    "decimal": lambda s, v: decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(
        -s.get("scale", 0)
    ),
}

__all__ = ["SchemaTypes", "SchemaValueError"]
