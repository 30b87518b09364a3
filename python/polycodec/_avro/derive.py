"""Deriving an Avro schema (JSON-compatible data) from a plan spec: records from dataclasses,
NamedTuples and TypedDicts, enums from Enum classes, defaults in the JSON form the
specification gives them."""

from __future__ import annotations

import datetime
import decimal
import enum
import struct
import uuid
from typing import Any, Dict, List, Optional, Tuple

from .._defaults import CONSTANT_FACTORIES, NODEFAULT, constant_factory
from .._naming import NAME_RE, avro_name, fullname
from .._unset import UNSET
from .schema import NAMED, PRIMITIVES

__all__ = ["derive_schema", "RECORD_KINDS"]

RECORD_KINDS = ("dataclass", "typeddict", "namedtuple")


class _Deriver:
    def __init__(self, nodes: List[Tuple[str, Dict[str, Any]]]) -> None:
        self.nodes = nodes
        self.named: Dict[int, str] = {}  # plan node -> fullname already defined
        self.used: Dict[str, Any] = {}  # fullname -> the class (or enum) it names
        self.definitions: Dict[str, Any] = {}  # fullname -> its schema (for field defaults)
        # fullname of a complete record -> (class of its values, attribute of each field)
        self.records: Dict[str, Tuple[type, List[str]]] = {}
        # The records and recursive aliases' nodes being written out, outermost first.
        self.path: List[int] = []
        # The namespace of each record being written out (a fixed named inside takes it).
        self.namespaces: List[str] = []

    def name_for(
        self, cls: Any, module: str, qualname: str, args: Tuple[Any, ...], owner: Any
    ) -> Tuple[str, str, Dict[str, Any]]:
        """A unique fullname for a named type, its short name ("" when ``owner`` (an enum
        class, or a record's plan node) already has a definition to refer to), and the
        ``__avro__`` settings the class declares."""
        name, namespace, declared = avro_name(cls, module, qualname, args)
        full = fullname(name, namespace)
        base, n = name, 1
        while full in self.used and self.used[full] != owner:
            if "name" in declared or "namespace" in declared:
                raise TypeError(
                    f"{qualname}: its Avro name {full!r} (from __avro__) is already the name of "
                    "another type in this schema"
                )
            n += 1
            name = f"{base}_{n}"
            full = fullname(name, namespace)
        if full in self.used:  # the same class again (an enum in two fields)
            return full, "", declared
        self.used[full] = owner
        return full, name, declared

    def schema(self, index: int, where: str, default: Any = NODEFAULT) -> Any:
        kind, data = self.nodes[index]
        if "alias" not in data and kind not in RECORD_KINDS:
            return self._schema(index, where, default)
        # A recursive alias's node: a record on the way back to it names the recursion (its
        # second visit is a reference by name), anything else would repeat forever.
        if kind not in RECORD_KINDS and index in self.path:
            since = self.path[self.path.index(index) + 1 :]
            if not any(self.nodes[i][0] in RECORD_KINDS for i in since):
                raise TypeError(
                    f"{where}: the recursive type alias {data['alias']['name']} has no Avro "
                    "form: Avro names only records, enums and fixed types, so a recursion must "
                    "pass through a dataclass, TypedDict or NamedTuple"
                )
        self.path.append(index)
        try:
            return self._schema(index, where, default)
        finally:
            self.path.pop()

    def _schema(self, index: int, where: str, default: Any) -> Any:
        kind, data = self.nodes[index]
        if kind == "extension":  # written as its wire type (the default is already in it)
            return self.schema(data["wire"], where, default)
        if kind in ("none", "unset"):  # UNSET is null in Avro (see ``union``)
            return "null"
        if kind == "bool":
            return "boolean"
        chosen = data.get("avro") or {}
        avro_type = chosen.get("type")
        if kind == "int":
            return "int" if avro_type == "int" else "long"
        if kind == "float":
            return "float" if avro_type == "float" else "double"
        if kind == "str":
            return "string"
        if kind == "bytes":
            if avro_type == "fixed":
                if chosen["size"] is None:
                    raise TypeError(f"{where}: Avro('fixed') on bytes needs size=")
                return self.fixed(chosen, {}, where)
            return "bytes"
        if kind == "decimal":
            precision, scale = data["max_digits"], data["decimal_places"]
            if avro_type == "string" or (avro_type is None and None in (precision, scale)):
                return "string"
            if precision is None or scale is None:
                raise TypeError(
                    f"{where}: Avro({avro_type!r}) writes a decimal of fixed precision and "
                    "scale: annotate Meta(max_digits=..., decimal_places=...)"
                )
            decimal_type = {"logicalType": "decimal", "precision": precision, "scale": scale}
            if avro_type == "fixed":
                return self.fixed(chosen, decimal_type, where)
            return {"type": "bytes", **decimal_type}
        if kind == "datetime":
            logical = "local-timestamp-micros" if data["tz"] is False else "timestamp-micros"
            if avro_type is not None:
                if avro_type.startswith("local-") and data["tz"] is not False:
                    raise TypeError(
                        f"{where}: Avro({avro_type!r}) holds naive datetimes: annotate "
                        "Meta(tz=False)"
                    )
                if not avro_type.startswith("local-") and data["tz"] is False:
                    raise TypeError(
                        f"{where}: Avro({avro_type!r}) holds UTC instants, and the type is naive "
                        "(Meta(tz=False)): use the local- form"
                    )
                logical = avro_type
            return {"type": "long", "logicalType": logical}
        if kind == "date":
            return {"type": "int", "logicalType": "date"}
        if kind == "time":
            if data["tz"] is True:
                raise TypeError(
                    f"{where}: an aware datetime.time has no Avro form (time-micros has no "
                    "UTC offset); use a naive time"
                )
            if avro_type == "time-millis":
                return {"type": "int", "logicalType": "time-millis"}
            return {"type": "long", "logicalType": "time-micros"}
        if kind == "uuid":
            if avro_type == "fixed":
                if chosen["size"] not in (None, 16):
                    raise TypeError(
                        f"{where}: a UUID is a 16-byte Avro fixed, not {chosen['size']}"
                    )
                return self.fixed(dict(chosen, size=16), {"logicalType": "uuid"}, where)
            return {"type": "string", "logicalType": "uuid"}
        if kind == "timedelta":
            raise TypeError(
                f"{where}: datetime.timedelta has no faithful Avro form (the Avro duration type "
                "counts months, days and milliseconds, so microseconds would be lost)"
            )
        if kind == "any":
            raise TypeError(f"{where}: Any has no Avro form (Avro needs a schema for every value)")
        if kind == "literal":
            kinds = {type(v) for v in data["values"]}
            if avro_type is not None and kinds != {int}:
                raise TypeError(f"{where}: Avro({avro_type!r}) applies to a Literal of ints only")
            if kinds == {str}:
                return "string"
            if kinds == {int}:
                return "int" if avro_type == "int" else "long"
            if kinds == {bool}:
                return "boolean"
            raise TypeError(f"{where}: a Literal mixing str, int and bool values has no Avro form")
        if kind == "enum" and data["flag"]:
            # Any combination of a Flag's members is a value: no enum symbol could name it.
            return "int" if avro_type == "int" else "long"
        if kind == "enum" and avro_type is not None:
            raise TypeError(
                f"{where}: Avro({avro_type!r}) applies to an enum.Flag only (an Enum is an Avro "
                "enum)"
            )
        if kind == "enum":
            if index in self.named:
                return self.named[index]
            cls = data["cls"]
            full, name, declared = self.name_for(cls, cls.__module__, cls.__qualname__, (), cls)
            self.named[index] = full
            if not name:
                return full
            for member_name in data["names"]:
                if not NAME_RE.match(member_name):
                    raise TypeError(f"{where}: enum member name {member_name!r} is no Avro symbol")
            out: Dict[str, Any] = {"type": "enum", "name": name}
            _describe_named(out, full, declared)
            out["symbols"] = list(data["names"])
            if "default" in declared:
                if declared["default"] not in data["names"]:
                    raise TypeError(
                        f"{where}: the enum default {declared['default']!r} (from __avro__) is "
                        f"not a member name of {cls.__qualname__}"
                    )
                out["default"] = declared["default"]
            self.definitions[full] = out
            return out
        if kind in ("list", "set", "frozenset", "var_tuple"):
            return {"type": "array", "items": self.schema(data["item"], where + "[]")}
        if kind == "tuple":
            raise TypeError(
                f"{where}: a fixed-length tuple has no faithful Avro form; use tuple[T, ...] "
                "or a dataclass"
            )
        if kind == "dict":
            key_kind = self.nodes[data["key"]][0]
            if key_kind != "str":
                raise TypeError(f"{where}: Avro maps have str keys only, got {key_kind} keys")
            return {"type": "map", "values": self.schema(data["value"], where + "[]")}
        if kind in ("union", "tagged_union"):
            return self.union(index, where, default)
        if kind in ("dataclass", "typeddict", "namedtuple"):
            return self.record(index, data, where)
        raise TypeError(f"{where}: {kind} has no Avro form")

    def union_members(self, index: int) -> List[int]:
        kind, data = self.nodes[index]
        if kind == "tagged_union":
            seen: List[int] = []
            for _, record in data["tags"]:
                if record not in seen:
                    seen.append(record)
            return seen
        out: List[int] = []
        for variant in data["variants"]:
            out.extend(
                self.union_members(variant)
                if self.nodes[variant][0] in ("union", "tagged_union")
                else [variant]
            )
        return out

    def union(self, index: int, where: str, default: Any) -> List[Any]:
        members = self.union_members(index)
        kinds = {self.nodes[m][0] for m in members}
        if {"none", "unset"} <= kinds:
            raise TypeError(
                f"{where}: a field that may be None and UNSET has no Avro form: Avro's null "
                "would stand for both (UNSET is written as null)"
            )
        order = sorted(members, key=lambda m: 0 if self.nodes[m][0] in ("none", "unset") else 1)
        if default is not NODEFAULT and default is not None:
            first = [m for m in order if _default_fits(self.nodes, m, default)]
            if first:
                order.remove(first[0])
                order.insert(0, first[0])
        branches = [self.schema(m, where) for m in order]
        keys = []
        for branch in branches:
            key = _branch_key(branch)
            if key in keys:
                raise TypeError(
                    f"{where}: this union has two alternatives of Avro type {key!r}, which an "
                    "Avro union cannot tell apart"
                )
            keys.append(key)
        return branches

    def record(self, index: int, data: Dict[str, Any], where: str) -> Any:
        if index in self.named:
            return self.named[index]
        full, name, declared = self.name_for(
            data["cls"], data["module"], data["name"], data.get("args", ()), ("record", index)
        )
        self.named[index] = full
        if "default" in declared:
            raise TypeError(f"{where}: __avro__'s default applies to enums, not to records")
        out: Dict[str, Any] = {"type": "record", "name": name}
        _describe_named(out, full, declared)
        self.definitions[full] = out
        self.namespaces.append(full.rpartition(".")[0])
        try:
            out["fields"], attrs = self.fields(data, where)
        finally:
            self.namespaces.pop()
        kind = self.nodes[index][0]
        self.records[full] = (data["cls"] if kind != "typeddict" else dict, attrs)
        return out

    def fields(self, data: Dict[str, Any], where: str) -> Tuple[List[Any], List[str]]:
        """A record's schema fields, and the attribute behind each (for record defaults)."""
        fields = []
        attrs: List[str] = []
        for field in data["fields"]:
            if not field["wire"]:
                continue
            fwhere = f"field `{field['name']}` of {data['name']}"
            default = field["default"]
            factory = field["default_factory"]
            if factory is not None:
                # Only a factory that gives the same value on every call may become the
                # schema's default: uuid4 or now() would make every build's schema differ,
                # and a peer filling old records would give them all one value.
                default = NODEFAULT
                if constant_factory(factory):
                    try:
                        default = factory()
                    except Exception:  # a factory that cannot run now: no Avro default
                        default = NODEFAULT
            default = _wire_default(self.nodes, field["type"], default)
            if (
                field["required"] is False
                and default is NODEFAULT
                and (field["default_factory"] is None)
            ):
                raise TypeError(
                    f"{fwhere}: a key that may be absent has no Avro form (Avro records "
                    "always have every field); make it Optional with a default"
                )
            if not NAME_RE.match(field["wire_name"]):
                raise TypeError(f"{fwhere}: {field['wire_name']!r} is not a valid Avro field name")
            ftype = self.schema(field["type"], fwhere, default)
            entry: Dict[str, Any] = {"name": field["wire_name"], "type": ftype}
            if field.get("doc") is not None:
                entry["doc"] = field["doc"]
            if field["aliases"]:
                for alias in field["aliases"]:
                    if not NAME_RE.match(alias):
                        raise TypeError(f"{fwhere}: alias {alias!r} is not a valid Avro field name")
                # The names a reader's schema resolution also matches a writer's field by.
                entry["aliases"] = list(field["aliases"])
            if default is not NODEFAULT:
                first = ftype[0] if isinstance(ftype, list) else ftype
                try:
                    value = _default_json(self, first, default)
                    if isinstance(factory, type) and factory not in CONSTANT_FACTORIES:
                        # A class's __post_init__ could still make each instance differ.
                        try:
                            again = factory()
                        except Exception:
                            raise _NoDefault from None
                        if _default_json(self, first, again) != value:
                            raise _NoDefault
                    entry["default"] = value
                except _NoDefault:
                    pass
            fields.append(entry)
            attrs.append(field["name"])
        return fields, attrs

    def fixed(self, chosen: Dict[str, Any], logical: Dict[str, Any], where: str) -> Any:
        """A fixed type of ``Avro("fixed", name=..., size=...)``: defined where it is first used
        (its name in the namespace of the record around it), referred to by full name after;
        one name with two different definitions is an error."""
        name = chosen["name"]
        size = chosen["size"]
        if size is None:  # a decimal's: the fewest bytes that hold its precision
            size = 1
            while _max_decimal_digits(size) < logical["precision"]:
                size += 1
        if "precision" in logical and _max_decimal_digits(size) < logical["precision"]:
            raise TypeError(
                f"{where}: an Avro fixed of {size} bytes holds at most "
                f"{_max_decimal_digits(size)} digits, not the {logical['precision']} of "
                "Meta(max_digits=)"
            )
        definition: Dict[str, Any] = {"type": "fixed", "name": name, "size": size, **logical}
        full = fullname(name, self.namespaces[-1] if self.namespaces else None)
        owner = ("fixed", full, size, tuple(sorted(logical.items())))
        if full in self.used:
            if self.used[full] != owner:
                raise TypeError(
                    f"{where}: the Avro name {full!r} of Avro('fixed', name={name!r}) is already "
                    "the name of another type in this schema"
                )
            return full
        self.used[full] = owner
        self.definitions[full] = definition
        return definition


def _max_decimal_digits(size: int) -> int:
    """The most decimal digits a two's-complement number of ``size`` bytes holds in full."""
    return len(str(2 ** (8 * size - 1) - 1)) - 1 if size else 0


def _describe_named(out: Dict[str, Any], full: str, declared: Dict[str, Any]) -> None:
    """Add the namespace, doc and aliases of a named type's definition."""
    ns = full.rpartition(".")[0]
    if ns:
        out["namespace"] = ns
    if "doc" in declared:
        out["doc"] = declared["doc"]
    if declared.get("aliases"):
        out["aliases"] = list(declared["aliases"])


class _NoDefault(Exception):
    pass


def _wire_default(nodes: List[Tuple[str, Dict[str, Any]]], index: int, value: Any) -> Any:
    """A field default in the form its schema holds: an extension type's default is what its
    ``encode`` makes of it (no Avro default when that fails)."""
    kind, data = nodes[index]
    if kind != "extension" or value is NODEFAULT or (value is None and data["nullable"]):
        return value
    try:
        return data["encode"](value)
    except Exception:
        return NODEFAULT


def _branch_key(branch: Any) -> str:
    if isinstance(branch, str):
        return branch
    if branch["type"] in NAMED:
        return str(branch["name"])
    return str(branch["type"])


def _default_fits(nodes: List[Tuple[str, Dict[str, Any]]], index: int, value: Any) -> bool:
    kind, data = nodes[index]
    checks = {
        "bool": lambda v: isinstance(v, bool),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "str": lambda v: isinstance(v, str),
        "bytes": lambda v: isinstance(v, (bytes, bytearray)),
        "decimal": lambda v: isinstance(v, decimal.Decimal),
        "datetime": lambda v: isinstance(v, datetime.datetime),
        "date": lambda v: isinstance(v, datetime.date) and not isinstance(v, datetime.datetime),
        "time": lambda v: isinstance(v, datetime.time),
        "uuid": lambda v: isinstance(v, uuid.UUID),
        "enum": lambda v: isinstance(v, data.get("cls", ())),
        "literal": lambda v: v in data.get("values", ()),
        "list": lambda v: isinstance(v, (list, tuple)),
        "set": lambda v: isinstance(v, (set, frozenset)),
        "frozenset": lambda v: isinstance(v, (set, frozenset)),
        "var_tuple": lambda v: isinstance(v, tuple),
        "dict": lambda v: isinstance(v, dict),
        "dataclass": lambda v: isinstance(v, data.get("cls", ())),
        "namedtuple": lambda v: isinstance(v, data.get("cls", ())),
        "typeddict": lambda v: isinstance(v, dict),
        "unset": lambda v: v is UNSET,
    }
    check = checks.get(kind)
    return bool(check and check(value))


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH_NAIVE = datetime.datetime(1970, 1, 1)


def _default_json(deriver: _Deriver, schema: Any, value: Any) -> Any:
    """The JSON form of a field default in an Avro schema (as the spec encodes defaults)."""
    if isinstance(schema, str):
        full = schema
        if full in PRIMITIVES:
            return _primitive_default(full, None, value)
        if full not in deriver.definitions:
            raise _NoDefault
        schema = deriver.definitions[full]
    kind = schema["type"]
    if kind in PRIMITIVES:
        return _primitive_default(kind, schema, value)
    if kind == "fixed":
        return _fixed_default(schema, value)
    if kind == "enum":
        if isinstance(value, enum.Enum) and value.name in schema["symbols"]:
            return value.name
        raise _NoDefault
    if kind == "array":
        if not isinstance(value, (list, tuple, set, frozenset)):
            raise _NoDefault
        return [_default_json(deriver, schema["items"], v) for v in value]
    if kind == "map":
        if not isinstance(value, dict):
            raise _NoDefault
        return {k: _default_json(deriver, schema["values"], v) for k, v in value.items()}
    if kind == "record":
        # A record default is a JSON object with a default for each of its fields.
        full = fullname(schema["name"], schema.get("namespace"))
        if full not in deriver.records:  # still being derived (a recursive reference)
            raise _NoDefault
        cls, attrs = deriver.records[full]
        if not isinstance(value, cls):
            raise _NoDefault
        out = {}
        for attr, entry in zip(attrs, schema["fields"]):
            if isinstance(value, dict):
                if attr not in value:
                    raise _NoDefault
                item = value[attr]
            else:
                item = getattr(value, attr)
            ftype = entry["type"]
            out[entry["name"]] = _default_json(
                deriver, ftype[0] if isinstance(ftype, list) else ftype, item
            )
        return out
    raise _NoDefault


def _primitive_default(kind: str, schema: Optional[Dict[str, Any]], value: Any) -> Any:
    logical = schema.get("logicalType") if schema else None
    if kind == "null" and (value is None or value is UNSET):
        return None
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind in ("int", "long") and logical is None and isinstance(value, enum.Flag):
        value = value.value  # a Flag field's default, written as its int
    if (
        kind in ("int", "long")
        and logical is None
        and isinstance(value, int)
        and not isinstance(value, bool)
    ):
        bits = 31 if kind == "int" else 63
        if -(2**bits) <= value < 2**bits:
            return int(value)
    if kind in ("double", "float") and isinstance(value, (int, float)):
        if not isinstance(value, bool) and value == value and abs(value) != float("inf"):
            if kind == "double" or _fits_float32(float(value)):
                return float(value)
    if kind == "string" and logical is None and isinstance(value, str):
        return value
    if kind == "string" and logical is None and isinstance(value, decimal.Decimal):
        return str(value)
    if kind == "string" and logical == "uuid" and isinstance(value, uuid.UUID):
        return str(value)
    if kind == "bytes" and logical is None and isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    if kind == "bytes" and logical == "decimal" and isinstance(value, decimal.Decimal):
        assert schema is not None
        return _decimal_default(value, schema["scale"], schema["precision"])
    if kind == "long" and isinstance(value, datetime.datetime) and logical in _TIMESTAMP_UNITS:
        unit = datetime.timedelta(microseconds=_TIMESTAMP_UNITS[logical])
        # Sub-unit digits dropped toward the past, as the encoder writes them.
        if value.tzinfo is None and logical.startswith("local-"):
            return (value - _EPOCH_NAIVE) // unit
        if value.tzinfo is not None and not logical.startswith("local-"):
            return (value - _EPOCH) // unit
    if kind == "int" and logical == "date" and isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    if isinstance(value, datetime.time) and value.tzinfo is None:
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
        micros += value.microsecond
        if kind == "long" and logical == "time-micros":
            return micros
        if kind == "int" and logical == "time-millis":
            return micros // 1000
    raise _NoDefault


_TIMESTAMP_UNITS = {
    "timestamp-micros": 1,
    "timestamp-millis": 1000,
    "local-timestamp-micros": 1,
    "local-timestamp-millis": 1000,
}


def _fits_float32(value: float) -> bool:
    """Whether a finite float is within a 32-bit float's range (what the encoder checks)."""
    try:
        packed = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return False
    return packed != 0.0 or value == 0.0


def _fixed_default(schema: Dict[str, Any], value: Any) -> str:
    """A fixed field's default: its bytes, one code point per byte (a decimal's sign-extended
    to the size, a UUID's 16 big-endian bytes)."""
    size = schema["size"]
    logical = schema.get("logicalType")
    if logical == "decimal" and isinstance(value, decimal.Decimal):
        raw = _decimal_default(value, schema["scale"], schema["precision"]).encode("latin-1")
        if len(raw) > size:
            raise _NoDefault
        fill = b"\xff" if raw and raw[0] & 0x80 else b"\x00"
        raw = fill * (size - len(raw)) + raw
    elif logical == "uuid" and isinstance(value, uuid.UUID):
        raw = value.bytes
    elif logical is None and isinstance(value, (bytes, bytearray)) and len(value) == size:
        raw = bytes(value)
    else:
        raise _NoDefault
    return raw.decode("latin-1")


def _decimal_default(value: decimal.Decimal, scale: int, precision: int) -> str:
    """A decimal field's default as the schema holds a ``bytes`` default: the unscaled value's
    two's-complement big-endian bytes (the length the encoder writes), one code point per byte.
    A value the field could not carry (not finite, more places or digits) has no default."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise _NoDefault
    shift = exponent + scale
    if shift < 0:
        if any(digits[len(digits) + shift :]):
            raise _NoDefault
        digits = digits[: len(digits) + shift]
        shift = 0
    unscaled = int("".join(map(str, digits)) or "0") * 10**shift
    if len(str(unscaled)) > precision and unscaled != 0:
        raise _NoDefault
    if sign:
        unscaled = -unscaled
    length = abs(unscaled).bit_length() // 8 + 1
    text: str = unscaled.to_bytes(length, "big", signed=True).decode("latin-1")
    return text


def derive_schema(spec: Tuple[List[Tuple[str, Dict[str, Any]]], int], target: Any) -> Any:
    """The Avro schema (JSON-compatible data) for a plan spec; TypeError when it has none."""
    nodes, root = spec
    where = f"{getattr(target, '__qualname__', repr(target))}"
    return _Deriver(nodes).schema(root, where)
