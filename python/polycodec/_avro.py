"""Avro schemas for polycodec: derivation from a plan, parsing, canonical form, fingerprints,
binding a plan to a schema and schema resolution.

Everything here runs once per codec (or once per new writer schema), never per record. It hands
the Rust side two small *programs* made of tuples:

* write ops, one per plan node: how that node's values are written (wire type, the field order
  of records in schema order, the union branch of each variant, the symbol index of each enum
  member);
* read ops, a flat list of ops referring to each other by index, from resolving a writer schema
  against the codec's schema and plan (when both schemas are the codec's own, this is simply
  the codec's decoder).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import os
import re
import types
import typing
import uuid
from typing import Any, Dict, List, Optional, Tuple

from ._plan import NODEFAULT
from ._unset import UNSET
from ._polycodec import _avro_compatible, _avro_fingerprint, _avro_parse

__all__ = ["open_codec", "canonical_form", "fingerprint", "parse_schema"]

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
NAMED = ("record", "error", "enum", "fixed")
_RECORD_KINDS = ("dataclass", "typeddict", "namedtuple")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Op = Tuple[Any, ...]

# ---------------------------------------------------------------------------------------------
# Parsing, validation, the Parsing Canonical Form and CRC-64-AVRO ("Rabin") fingerprints: the
# apache-avro crate, in the extension module (src/codecs/avro/schema.rs)


def fingerprint(data: bytes) -> int:
    """The CRC-64-AVRO fingerprint of ``data`` (the canonical form's UTF-8), unsigned."""
    return _avro_fingerprint(bytes(data))


# ---------------------------------------------------------------------------------------------
# Parsed schemas: an arena of plain dicts, named types defined once and referred to by index


class SchemaError(ValueError):
    """An invalid Avro schema."""


class Schema:
    """A parsed schema: ``nodes`` (dicts with a ``type`` key), ``root``, and ``names``; ``text``
    (the JSON the crate validated), its ``canonical`` form and that form's ``fingerprint``."""

    def __init__(self) -> None:
        self.nodes: List[Dict[str, Any]] = []
        self.names: Dict[str, int] = {}
        self.root = -1
        self.depth = 0  # of the element being parsed
        self.text = ""
        self.canonical = ""
        self.fingerprint = 0

    def add(self, node: Dict[str, Any]) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1


def _fullname(name: str, namespace: Optional[str]) -> str:
    if "." in name:
        return name
    return f"{namespace}.{name}" if namespace else name


def parse_schema(source: Any) -> Schema:
    """Parses an Avro schema given as JSON text or as JSON-compatible Python data.

    The apache-avro crate parses and validates it and gives its canonical form and fingerprint
    (an invalid schema is a ``SchemaError`` with the crate's reason); the arena of nodes the
    Binding and Resolver work on is then read from the validated JSON.
    """
    if isinstance(source, (bytes, bytearray)):
        source = source.decode("utf-8")
    if isinstance(source, str) and source.strip() in PRIMITIVES:
        # A bare primitive name such as long, or null (which json.loads would read as None).
        data = source.strip()
        text = json.dumps(data)
    elif isinstance(source, str):
        text = source
        try:
            data = json.loads(text)
        except RecursionError:
            raise SchemaError("the Avro schema nests too deeply") from None
        except ValueError as exc:
            if text.strip() not in PRIMITIVES:
                raise SchemaError(f"Avro schema is not valid JSON: {exc}") from None
            data = text.strip()  # a bare primitive name such as long
            text = json.dumps(data)
    else:
        data = source
        try:
            text = json.dumps(data, separators=(",", ":"), allow_nan=False)
        except RecursionError:
            raise SchemaError("the Avro schema nests too deeply") from None
        except (TypeError, ValueError) as exc:
            raise SchemaError(f"Avro schema is not JSON-compatible data: {exc}") from None
    try:
        canonical, fp = _avro_parse(text)
    except ValueError as exc:
        raise SchemaError(str(exc)) from None
    schema = Schema()
    schema.text = text
    schema.canonical = canonical
    schema.fingerprint = fp
    try:
        schema.root = _parse(schema, data, None)
    except RecursionError:
        raise SchemaError("the Avro schema nests too deeply") from None
    return schema


# How deeply schema elements may nest (records in records, unions, arrays, maps): deeper
# schemas are refused as invalid, so that nothing that walks them runs out of stack.
MAX_SCHEMA_DEPTH = 128

# The largest Avro fixed size (a Java int, as the reference implementation reads it).
MAX_FIXED_SIZE = 2**31 - 1


def _parse(schema: Schema, obj: Any, namespace: Optional[str]) -> int:
    schema.depth += 1
    try:
        if schema.depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(f"the Avro schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        return _parse_element(schema, obj, namespace)
    finally:
        schema.depth -= 1


def _parse_element(schema: Schema, obj: Any, namespace: Optional[str]) -> int:
    """The arena node of ``obj``, a part of a schema the crate has validated."""
    if isinstance(obj, str):
        if obj in PRIMITIVES:
            return schema.add({"type": obj, "logical": None})
        full = _fullname(obj, namespace)
        if full in schema.names:
            return schema.names[full]
        return schema.names[obj]
    if isinstance(obj, list):
        branches = [_parse(schema, item, namespace) for item in obj]
        return schema.add({"type": "union", "branches": branches, "logical": None})
    kind = obj.get("type")
    logical = obj.get("logicalType")
    if not isinstance(logical, str):
        logical = None
    if kind in PRIMITIVES:
        node: Dict[str, Any] = {"type": kind, "logical": logical}
        if logical == "decimal":
            node["precision"] = obj.get("precision")
            node["scale"] = obj.get("scale", 0)
        return schema.add(node)
    if isinstance(kind, (dict, list)) or (
        isinstance(kind, str) and kind not in NAMED and kind not in ("array", "map")
    ):
        return _parse(schema, kind, namespace)
    if kind in NAMED:
        ns = obj.get("namespace", namespace)
        full = _fullname(obj["name"], ns or None)
        inner_ns = full.rpartition(".")[0] or None
        aliases = [_fullname(a, inner_ns) for a in obj.get("aliases") or [] if isinstance(a, str)]
        if full in schema.names:
            # apache-avro 0.22 accepts a name defined twice (and reads later uses as the first
            # definition); the specification, fastavro and apache avro (Python) refuse it.
            raise SchemaError(f"Avro name {full!r} is defined twice")
        node = {"type": "record" if kind == "error" else kind, "name": full, "aliases": aliases}
        node["logical"] = logical
        index = schema.add(node)
        schema.names[full] = index
        if kind == "enum":
            symbols = obj["symbols"]
            node["symbols"] = list(symbols)
            default = obj.get("default")
            node["default"] = default if default in symbols else None
        elif kind == "fixed":
            size = obj.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise SchemaError(f"Avro fixed {full!r} needs a size")
            if size > MAX_FIXED_SIZE:
                raise SchemaError(
                    f"Avro fixed {full!r} has size {size}, more than {MAX_FIXED_SIZE}"
                )
            node["size"] = size
            if logical == "decimal":
                node["precision"] = obj.get("precision")
                node["scale"] = obj.get("scale", 0)
        else:
            node["fields"] = [
                {
                    "name": field["name"],
                    "type": _parse(schema, field["type"], inner_ns),
                    "has_default": "default" in field,
                    "default": field.get("default"),
                    "aliases": [a for a in field.get("aliases") or [] if isinstance(a, str)],
                }
                for field in obj["fields"]
            ]
        return index
    if kind == "array":
        items = _parse(schema, obj["items"], namespace)
        return schema.add({"type": "array", "items": items, "logical": None})
    values = _parse(schema, obj["values"], namespace)
    return schema.add({"type": "map", "values": values, "logical": None})


def canonical_form(schema: Schema) -> str:
    """The Parsing Canonical Form of a parsed schema (the apache-avro crate's)."""
    return schema.canonical


# ---------------------------------------------------------------------------------------------
# Deriving a schema from a plan spec


_AVRO_KEYS = ("name", "namespace", "doc", "aliases")


def _clean(part: str) -> str:
    part = re.sub(r"[^A-Za-z0-9_]", "_", part)
    if not part or part[0].isdigit():
        part = "_" + part
    return part


def _declared(cls: Any) -> Dict[str, Any]:
    """The checked ``__avro__`` settings a class declares itself (not inherited: a subclass is
    another Avro type and needs its own name)."""
    label = getattr(cls, "__qualname__", repr(cls))
    try:
        raw = vars(cls).get("__avro__")
    except TypeError:
        raw = None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise TypeError(f"{label}.__avro__ must be a dict with keys {_AVRO_KEYS}, not {raw!r}")
    unknown = [key for key in raw if key not in _AVRO_KEYS]
    if unknown:
        raise TypeError(f"{label}.__avro__ has unknown keys {unknown}; expected {_AVRO_KEYS}")
    name = raw.get("name")
    if "name" in raw and not (isinstance(name, str) and _NAME_RE.match(name)):
        raise TypeError(
            f"{label}.__avro__: name {name!r} is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*)"
        )
    namespace = raw.get("namespace")
    if namespace is not None and not (
        isinstance(namespace, str)
        and (namespace == "" or all(_NAME_RE.match(p) for p in namespace.split(".")))
    ):
        raise TypeError(
            f"{label}.__avro__: namespace {namespace!r} is not a valid Avro namespace (names "
            "separated by dots, or '' / None for none)"
        )
    if "doc" in raw and not isinstance(raw["doc"], str):
        raise TypeError(f"{label}.__avro__: doc must be a str, not {raw['doc']!r}")
    aliases = raw.get("aliases", [])
    if not isinstance(aliases, (list, tuple)) or not all(
        isinstance(a, str) and a and all(_NAME_RE.match(p) for p in a.split(".")) for a in aliases
    ):
        raise TypeError(
            f"{label}.__avro__: aliases must be a list of valid Avro names, not {aliases!r}"
        )
    return dict(raw)


def _arg_label(tp: Any) -> str:
    """A name part for a type argument: ``int``, ``list_int``, ``str_or_null``."""
    if tp is None or tp is type(None):
        return "null"
    if tp is typing.Any:
        return "Any"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return _arg_label(args[0])
    if origin is typing.Literal:
        return "Literal_" + "_".join(str(v) for v in args)
    if origin is typing.Union or (
        origin is not None and origin is getattr(types, "UnionType", None)
    ):
        return "_or_".join(_arg_label(a) for a in args)
    if origin is not None:
        return "_".join([_arg_label(origin), *(_arg_label(a) for a in args)])
    if isinstance(tp, typing.TypeVar):
        return tp.__name__
    declared = _declared(tp) if isinstance(tp, type) else {}
    return str(declared.get("name") or getattr(tp, "__name__", None) or tp)


def _avro_name(
    cls: Any, module: str, qualname: str, args: Tuple[Any, ...] = ()
) -> Tuple[str, Optional[str], Dict[str, Any]]:
    """A valid Avro (name, namespace) for a class, and its declared ``__avro__`` settings.

    Unless ``__avro__`` says otherwise, the module is the namespace (none for ``__main__``, so a
    script's classes keep their names when moved into a module and read with short names), the
    class's ``__qualname__`` gives the name, and a generic class's type arguments are appended
    to it (``Box[int]`` is ``Box_int``)."""
    declared = _declared(cls)
    parts = [_clean(p) for p in qualname.split(".") if p]
    name = declared.get("name") or (parts[-1] if parts else "_")
    if args:
        name = _clean("_".join([name, *(_arg_label(a) for a in args)]))
    if "namespace" in declared:
        namespace = declared["namespace"] or None
    else:
        ns_parts = [] if module == "__main__" else [_clean(p) for p in module.split(".") if p]
        namespace = ".".join(ns_parts + parts[:-1]) or None
    return name, namespace, declared


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

    def name_for(
        self, cls: Any, module: str, qualname: str, args: Tuple[Any, ...], owner: Any
    ) -> Tuple[str, str, Dict[str, Any]]:
        """A unique fullname for a named type, its short name ("" when ``owner`` (an enum
        class, or a record's plan node) already has a definition to refer to), and the
        ``__avro__`` settings the class declares."""
        name, namespace, declared = _avro_name(cls, module, qualname, args)
        full = _fullname(name, namespace)
        base, n = name, 1
        while full in self.used and self.used[full] != owner:
            if "name" in declared or "namespace" in declared:
                raise TypeError(
                    f"{qualname}: its Avro name {full!r} (from __avro__) is already the name of "
                    "another type in this schema"
                )
            n += 1
            name = f"{base}_{n}"
            full = _fullname(name, namespace)
        if full in self.used:  # the same class again (an enum in two fields)
            return full, "", declared
        self.used[full] = owner
        return full, name, declared

    def schema(self, index: int, where: str, default: Any = NODEFAULT) -> Any:
        kind, data = self.nodes[index]
        if "alias" not in data and kind not in _RECORD_KINDS:
            return self._schema(index, where, default)
        # A recursive alias's node: a record on the way back to it names the recursion (its
        # second visit is a reference by name), anything else would repeat forever.
        if kind not in _RECORD_KINDS and index in self.path:
            since = self.path[self.path.index(index) + 1 :]
            if not any(self.nodes[i][0] in _RECORD_KINDS for i in since):
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
        if kind == "int":
            return "long"
        if kind == "float":
            return "double"
        if kind == "str":
            return "string"
        if kind == "bytes":
            return "bytes"
        if kind == "decimal":
            if data["max_digits"] is not None and data["decimal_places"] is not None:
                return {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": data["max_digits"],
                    "scale": data["decimal_places"],
                }
            return "string"
        if kind == "datetime":
            logical = "local-timestamp-micros" if data["tz"] is False else "timestamp-micros"
            return {"type": "long", "logicalType": logical}
        if kind == "date":
            return {"type": "int", "logicalType": "date"}
        if kind == "time":
            if data["tz"] is True:
                raise TypeError(
                    f"{where}: an aware datetime.time has no Avro form (time-micros has no "
                    "UTC offset); use a naive time"
                )
            return {"type": "long", "logicalType": "time-micros"}
        if kind == "uuid":
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
            if kinds == {str}:
                return "string"
            if kinds == {int}:
                return "long"
            if kinds == {bool}:
                return "boolean"
            raise TypeError(f"{where}: a Literal mixing str, int and bool values has no Avro form")
        if kind == "enum" and data["flag"]:
            # Any combination of a Flag's members is a value: no enum symbol could name it.
            return "long"
        if kind == "enum":
            if index in self.named:
                return self.named[index]
            cls = data["cls"]
            full, name, declared = self.name_for(cls, cls.__module__, cls.__qualname__, (), cls)
            self.named[index] = full
            if not name:
                return full
            for member_name in data["names"]:
                if not _NAME_RE.match(member_name):
                    raise TypeError(f"{where}: enum member name {member_name!r} is no Avro symbol")
            out: Dict[str, Any] = {"type": "enum", "name": name}
            _describe_named(out, full, declared)
            out["symbols"] = list(data["names"])
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
        out: Dict[str, Any] = {"type": "record", "name": name}
        _describe_named(out, full, declared)
        self.definitions[full] = out
        fields = []
        attrs: List[str] = []  # the attribute behind each schema field, for record defaults
        kind = self.nodes[index][0]
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
                if _constant_factory(factory):
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
            if not _NAME_RE.match(field["wire_name"]):
                raise TypeError(f"{fwhere}: {field['wire_name']!r} is not a valid Avro field name")
            ftype = self.schema(field["type"], fwhere, default)
            entry: Dict[str, Any] = {"name": field["wire_name"], "type": ftype}
            if field["aliases"]:
                for alias in field["aliases"]:
                    if not _NAME_RE.match(alias):
                        raise TypeError(f"{fwhere}: alias {alias!r} is not a valid Avro field name")
                # The names a reader's schema resolution also matches a writer's field by.
                entry["aliases"] = list(field["aliases"])
            if default is not NODEFAULT:
                first = ftype[0] if isinstance(ftype, list) else ftype
                try:
                    value = _default_json(self, first, default)
                    if isinstance(factory, type) and factory not in _CONSTANT_FACTORIES:
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
        out["fields"] = fields
        self.records[full] = (data["cls"] if kind != "typeddict" else dict, attrs)
        return out


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
        full = _fullname(schema["name"], schema.get("namespace"))
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


# Factories whose every call gives an equal (empty) value.
_CONSTANT_FACTORIES = (list, dict, set, tuple, frozenset)


def _constant_factory(factory: Any, seen: Tuple[Any, ...] = ()) -> bool:
    """Whether a ``default_factory`` gives the same value on every call: an empty collection's
    type, or a dataclass (or NamedTuple) class whose fields all have such defaults."""
    if any(factory is known for known in _CONSTANT_FACTORIES):
        return True
    if not isinstance(factory, type) or factory in seen:
        return False
    if dataclasses.is_dataclass(factory):
        for f in dataclasses.fields(factory):
            if f.default is not dataclasses.MISSING:
                continue
            if f.default_factory is dataclasses.MISSING:
                return False
            if not _constant_factory(f.default_factory, seen + (factory,)):
                return False
        return True
    if issubclass(factory, tuple) and hasattr(factory, "_fields"):  # NamedTuple
        return len(getattr(factory, "_field_defaults", {})) == len(getattr(factory, "_fields"))
    return False


def _primitive_default(kind: str, schema: Optional[Dict[str, Any]], value: Any) -> Any:
    logical = schema.get("logicalType") if schema else None
    if kind == "null" and (value is None or value is UNSET):
        return None
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "long" and logical is None and isinstance(value, enum.Flag):
        value = value.value  # a Flag field's default, written as its int
    if (
        kind == "long"
        and logical is None
        and isinstance(value, int)
        and not isinstance(value, bool)
    ):
        if -(2**63) <= value < 2**63:
            return int(value)
    if kind == "double" and isinstance(value, (int, float)) and not isinstance(value, bool):
        if value == value and abs(value) != float("inf"):
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
    if kind == "long" and logical in ("timestamp-micros", "local-timestamp-micros"):
        if isinstance(value, datetime.datetime):
            if value.tzinfo is None and logical == "local-timestamp-micros":
                return (value - _EPOCH_NAIVE) // datetime.timedelta(microseconds=1)
            if value.tzinfo is not None and logical == "timestamp-micros":
                return (value - _EPOCH) // datetime.timedelta(microseconds=1)
    if kind == "int" and logical == "date" and isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    if kind == "long" and logical == "time-micros" and isinstance(value, datetime.time):
        if value.tzinfo is None:
            return (
                (value.hour * 60 + value.minute) * 60 + value.second
            ) * 1_000_000 + value.microsecond
    raise _NoDefault


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


# ---------------------------------------------------------------------------------------------
# Binding a plan to a (parsed) schema: write ops, and which plan node each union branch reads


class Binding:
    def __init__(self, nodes: List[Tuple[str, Dict[str, Any]]], schema: Schema) -> None:
        self.nodes = nodes
        self.schema = schema
        self.write: List[Optional[Op]] = [None] * len(nodes)
        self.bound: Dict[int, int] = {}  # plan node -> schema node
        self.branch_plan: Dict[int, List[Optional[int]]] = {}  # union node -> plan per branch
        self.pairs: set[Tuple[int, int]] = set()  # (plan node, schema node) pairs bound
        # Write ops of a shared node met again inside itself, to compare once its own is known.
        self.again: Dict[int, List[Tuple[Op, str]]] = {}

    def fail(self, where: str, message: str) -> TypeError:
        return TypeError(f"the Avro schema does not match the type at {where}: {message}")

    def bind(self, pid: int, sid: int, where: str) -> None:
        if (pid, sid) in self.pairs:
            return
        self.pairs.add((pid, sid))
        if pid in self.bound:
            if self.bound[pid] != sid and not self._same(self.bound[pid], sid):
                raise self.fail(where, "one class is bound to two different schema types")
            if self.nodes[pid][0] in _RECORD_KINDS:
                return
            # A node a recursive alias shares, met again at a schema node written out anew
            # (unions and arrays have no names to refer to): the schema nodes inside this one
            # need their own binding too, and the node has one write op for both.
            op = self._op(pid, sid, where)
            if self.write[pid] is None:  # met inside itself: its own op is not known yet
                self.again.setdefault(pid, []).append((op, where))
            elif op != self.write[pid]:
                raise self.fail(where, "one type is written as two differently ordered unions")
            return
        self.bound[pid] = sid
        self.write[pid] = self._op(pid, sid, where)
        for op, at in self.again.pop(pid, []):
            if op != self.write[pid]:
                raise self.fail(at, "one type is written as two differently ordered unions")

    def _same(self, a: int, b: int) -> bool:
        na, nb = self.schema.nodes[a], self.schema.nodes[b]
        return na["type"] == nb["type"] and na.get("name") == nb.get("name")

    def _op(self, pid: int, sid: int, where: str) -> Op:
        kind, data = self.nodes[pid]
        node = self.schema.nodes[sid]
        st, logical = node["type"], node.get("logical")
        desc = st if not logical else f"{st} ({logical})"

        def wrong() -> TypeError:
            return self.fail(where, f"{kind} cannot be written as Avro {desc}")

        if kind == "extension":  # the encode function's result is written by the wire node
            self.bind(data["wire"], sid, where)
            return ("extension",)
        if kind in ("union", "tagged_union"):
            if st != "union":
                raise wrong()
            return self._union(pid, sid, where)
        if st == "union":
            raise self.fail(where, f"the schema has a union where the type has {kind}")
        if kind in ("none", "unset"):
            if st != "null":
                raise wrong()
            return ("null",)
        if kind == "bool":
            if st != "boolean":
                raise wrong()
            return ("boolean",)
        if kind == "int":
            if st in ("long", "int") and logical not in _INT_LOGICAL:
                return (st,)
            raise wrong()
        if kind == "float":
            if st in ("double", "float") and logical is None:
                return (st,)
            raise wrong()
        if kind == "str":
            if st == "string" and logical != "uuid":
                return ("string",)
            raise wrong()
        if kind == "bytes":
            if st == "bytes" and logical != "decimal":
                return ("bytes",)
            if st == "fixed" and logical not in ("decimal", "uuid", "duration"):
                return ("fixed", node["size"])
            raise wrong()
        if kind == "decimal":
            if logical == "decimal" and st in ("bytes", "fixed"):
                scale = node.get("scale") or 0
                precision = node.get("precision")
                if not isinstance(scale, int) or not isinstance(precision, int) or precision < 1:
                    raise self.fail(where, "the decimal logical type needs precision and scale")
                return ("decimal", scale, node["size"] if st == "fixed" else -1, precision)
            if st == "string" and logical is None:
                return ("decimal_string",)
            raise wrong()
        if kind == "datetime":
            units = {
                "timestamp-micros": (1, False),
                "timestamp-millis": (1000, False),
                "local-timestamp-micros": (1, True),
                "local-timestamp-millis": (1000, True),
            }
            if st == "long" and logical in units:
                unit, local = units[logical]
                if local and data["tz"] is not False:
                    raise self.fail(where, f"{logical} holds naive datetimes: use Meta(tz=False)")
                if not local and data["tz"] is False:
                    raise self.fail(where, f"{logical} holds UTC datetimes, the type is naive")
                return ("timestamp", unit, local)
            raise wrong()
        if kind == "date":
            if st == "int" and logical == "date":
                return ("date",)
            raise wrong()
        if kind == "time":
            if data["tz"] is True:
                raise self.fail(where, "an aware time has no Avro form")
            if st == "long" and logical == "time-micros":
                return ("time", 1)
            if st == "int" and logical == "time-millis":
                return ("time", 1000)
            raise wrong()
        if kind == "uuid":
            if st == "string" and logical == "uuid":
                return ("uuid_string",)
            if st == "fixed" and logical == "uuid" and node["size"] == 16:
                return ("uuid_fixed",)
            raise wrong()
        if kind == "literal":
            kinds = {type(v) for v in data["values"]}
            base = {
                frozenset([str]): "string",
                frozenset([int]): "long",
                frozenset([bool]): "boolean",
            }.get(frozenset(kinds))
            if base == "string" and st == "string" and logical is None:
                return ("string",)
            if base == "long" and st in ("long", "int") and logical is None:
                return (st,)
            if base == "boolean" and st == "boolean":
                return ("boolean",)
            raise wrong()
        if kind == "enum" and data["flag"]:
            if st in ("long", "int") and logical not in _INT_LOGICAL:
                return (st,)
            raise wrong()
        if kind == "enum":
            if st != "enum":
                raise wrong()
            symbols = node["symbols"]
            indices = []
            for name in data["names"]:
                if name not in symbols:
                    raise self.fail(where, f"enum member {name!r} is not a symbol of the schema")
                indices.append(symbols.index(name))
            return ("enum", indices)
        if kind in ("list", "set", "frozenset", "var_tuple"):
            if st != "array":
                raise wrong()
            self.bind(data["item"], node["items"], where + "[]")
            return ("array",)
        if kind == "dict":
            if st != "map" or self.nodes[data["key"]][0] != "str":
                raise wrong()
            self.bind(data["value"], node["values"], where + "[]")
            return ("map",)
        if kind in ("dataclass", "typeddict", "namedtuple"):
            if st != "record":
                raise wrong()
            by_wire = {f["wire_name"]: i for i, f in enumerate(data["fields"]) if f["wire"]}
            order = []
            for sfield in node["fields"]:
                index = by_wire.get(sfield["name"])
                if index is None:
                    for alias in sfield["aliases"]:
                        index = by_wire.get(alias)
                        if index is not None:
                            break
                if index is None:
                    raise self.fail(
                        where, f"schema field `{sfield['name']}` has no field in {data['name']}"
                    )
                field = data["fields"][index]
                self.bind(field["type"], sfield["type"], f"{where}.{field['wire_name']}")
                order.append(index)
            for name, index in by_wire.items():
                field = data["fields"][index]
                if index not in order and field["required"]:
                    raise self.fail(where, f"field `{name}` is not in the schema record")
                if (
                    index not in order
                    and field["default"] is NODEFAULT
                    and (field["default_factory"] is None)
                ):
                    raise self.fail(where, f"field `{name}` is not in the schema record")
            return ("record", order)
        raise wrong()

    def _union(self, pid: int, sid: int, where: str) -> Op:
        kind, data = self.nodes[pid]
        branches = self.schema.nodes[sid]["branches"]
        branch_plan: List[Optional[int]] = [None] * len(branches)
        self.branch_plan[sid] = branch_plan
        variants = [pid] if kind == "tagged_union" else data["variants"]
        members = [m for v in variants for m in self._members(v)]
        placed: Dict[int, int] = {}

        def take(member: int, i: int) -> None:
            branch_plan[i] = member
            placed[member] = i
            self.bind(member, branches[i], where)

        # Records go to the branch that names them: by full name (or alias) first, then by
        # short name, so that branches in any order, and several records, find their class.
        for strict in (True, False):
            for member in members:
                if member in placed or self.nodes[member][0] not in _RECORD_KINDS:
                    continue
                for i, branch in enumerate(branches):
                    if branch_plan[i] is None and self._names_record(member, branch, strict):
                        take(member, i)
                        break
        for member in members:
            if member in placed:
                continue
            for i, branch in enumerate(branches):
                if branch_plan[i] is None and self._fits(member, branch):
                    take(member, i)
                    break
        for member in members:
            if member in placed:
                continue
            mkind = self.nodes[member][0]
            # A record or enum whose name matches no branch: the union's only free branch of
            # that kind (class names rarely equal a foreign schema's names).
            wanted = "record" if mkind in _RECORD_KINDS else mkind
            free = [
                i
                for i, branch in enumerate(branches)
                if branch_plan[i] is None and self.schema.nodes[branch]["type"] == wanted
            ]
            if wanted in ("record", "enum") and len(free) == 1:
                take(member, free[0])
                continue
            raise self.fail(where, f"no branch of the schema union takes {mkind}")

        if kind == "tagged_union":
            return ("tagged", [placed[record] for _, record in data["tags"]])
        indices = []
        for variant in variants:
            if self.nodes[variant][0] == "tagged_union":
                self.write[variant] = (
                    "tagged",
                    [placed[r] for _, r in self.nodes[variant][1]["tags"]],
                )
                self.bound[variant] = sid
                indices.append(-1)
            else:
                indices.append(placed[variant])
        return ("union", indices)

    def _members(self, pid: int) -> List[int]:
        """The plan nodes that take a branch each: a tagged union's records, or the node."""
        kind, data = self.nodes[pid]
        if kind == "tagged_union":
            out: List[int] = []
            for _, record in data["tags"]:
                if record not in out:
                    out.append(record)
            return out
        return [pid]

    def _names_record(self, pid: int, sid: int, strict: bool) -> bool:
        """Whether schema node ``sid`` is a record named (or aliased) after plan record ``pid``:
        by full name when ``strict``, else by the last part of the name."""
        node = self.schema.nodes[sid]
        if node["type"] != "record":
            return False
        data = self.nodes[pid][1]
        name, namespace, declared = _avro_name(
            data["cls"], data["module"], data["name"], data.get("args", ())
        )
        names = [node["name"], *node["aliases"]]
        ours = [_fullname(name, namespace)]
        ours += [_fullname(a, namespace) for a in declared.get("aliases", ())]
        if strict:
            return any(n in names for n in ours)
        return any(n.rpartition(".")[2] in [m.rpartition(".")[2] for m in names] for n in ours)

    def _fits(self, pid: int, sid: int) -> bool:
        """A shallow check that plan node ``pid`` may take schema branch ``sid`` (records are
        placed by name, see ``_union``)."""
        kind, data = self.nodes[pid]
        node = self.schema.nodes[sid]
        st = node["type"]
        if kind in _RECORD_KINDS:
            return False
        if kind == "enum" and not data["flag"]:
            return st == "enum" and all(n in node["symbols"] for n in data["names"])
        saved = (dict(self.bound), list(self.write), dict(self.branch_plan), set(self.pairs))
        again = {shared: list(ops) for shared, ops in self.again.items()}
        try:
            self._op(pid, sid, "")
            return True
        except TypeError:
            return False
        finally:
            self.bound, self.write, self.branch_plan, self.pairs = saved
            self.again = again


_INT_LOGICAL = (
    "date",
    "time-millis",
    "time-micros",
    "timestamp-millis",
    "timestamp-micros",
    "local-timestamp-millis",
    "local-timestamp-micros",
)


# ---------------------------------------------------------------------------------------------
# Schema resolution: read ops for data written with `writer` into the plan bound to `reader`


class ResolutionError(TypeError):
    """The writer schema cannot be read as the reader's (by the Avro resolution rules).

    ``where`` is the place in the schemas (``$.readings[].temp``), ``reason`` what is wrong
    there: the codec raises a DecodeError with that path."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"cannot read the writer schema at {where}: {reason}")
        self.where = where
        self.reason = reason


_PROMOTIONS = {
    "int": ("int", "long", "float", "double"),
    "long": ("long", "float", "double"),
    "float": ("float", "double"),
    "double": ("double",),
    "string": ("string", "bytes"),
    "bytes": ("bytes", "string"),
}


class Resolver:
    def __init__(self, writer: Schema, binding: Binding) -> None:
        self.writer = writer
        self.binding = binding
        self.reader = binding.schema
        self.nodes = binding.nodes
        self.ops: List[Op] = []
        self.memo: Dict[Tuple[int, int, int], int] = {}
        self.skip_memo: Dict[int, int] = {}

    def emit(self, op: Op) -> int:
        self.ops.append(op)
        return len(self.ops) - 1

    def fail(self, where: str, message: str) -> ResolutionError:
        return ResolutionError(where, message)

    def resolve(self, wid: int, rid: int, pid: int, where: str) -> int:
        key = (wid, rid, pid)
        if key in self.memo:
            return self.memo[key]
        pkind, pdata = self.nodes[pid]
        if pkind == "extension":  # the wire value, then the extension's decode function
            index = self.emit(("extension", -1, pid))
            self.memo[key] = index
            inner = self.resolve(wid, rid, pdata["wire"], where)
            self.ops[index] = ("extension", inner, pid)
            return index
        w = self.writer.nodes[wid]
        r = self.reader.nodes[rid]
        if w["type"] == "union":
            index = self.emit(("union", []))
            self.memo[key] = index
            branches = []
            for branch in w["branches"]:
                try:
                    branches.append(self.resolve(branch, rid, pid, where))
                except ResolutionError as exc:
                    branches.append(self.emit(("error", str(exc))))
            self.ops[index] = ("union", branches)
            return index
        if r["type"] == "union":
            plan_per_branch = self.binding.branch_plan.get(rid, [])
            for i, branch in enumerate(r["branches"]):
                target = plan_per_branch[i] if i < len(plan_per_branch) else None
                if target is not None and self._matches(w, self.reader.nodes[branch]):
                    return self.resolve(wid, branch, target, where)
            for i, branch in enumerate(r["branches"]):
                target = plan_per_branch[i] if i < len(plan_per_branch) else None
                if target is not None and self._promotes(w, self.reader.nodes[branch]):
                    return self.resolve(wid, branch, target, where)
            if w["type"] in ("record", "enum", "fixed"):
                same_kind = [
                    i
                    for i, branch in enumerate(r["branches"])
                    if self.reader.nodes[branch]["type"] == w["type"]
                    and i < len(plan_per_branch)
                    and plan_per_branch[i] is not None
                ]
                if len(same_kind) == 1:
                    i = same_kind[0]
                    target = plan_per_branch[i]
                    assert target is not None
                    return self.resolve(wid, r["branches"][i], target, where)
            raise self.fail(where, f"writer {_describe(w)} matches no branch of the reader union")
        # Outside unions the position says which type is meant, so named types are not
        # required to have the same name (a class rarely carries a foreign schema's name);
        # names (and aliases) choose between the branches of a union.
        if w["type"] in ("record", "enum") and w["type"] != r["type"]:
            raise self.fail(where, f"writer {_describe(w)} cannot be read as {_describe(r)}")
        if w["type"] == "record":
            if r["type"] != "record":
                raise self.fail(where, f"writer {_describe(w)} cannot be read as {_describe(r)}")
            index = self.emit(("record", pid, []))
            self.memo[key] = index
            _, pdata = self.nodes[pid]
            write_op = self.binding.write[pid]
            order = write_op[1] if write_op else []
            reader_fields = {f["name"]: (i, f) for i, f in enumerate(r["fields"])}
            for i, f in enumerate(r["fields"]):
                for alias in f["aliases"]:
                    reader_fields.setdefault(alias, (i, f))
            used = set()
            fields = []
            for wf in w["fields"]:
                found = reader_fields.get(wf["name"])
                if found is None or found[0] in used:
                    fields.append((-1, self.skip(wf["type"])))
                    continue
                position, rf = found
                used.add(position)
                field_index = order[position]
                field = pdata["fields"][field_index]
                fields.append(
                    (
                        field_index,
                        self.resolve(
                            wf["type"], rf["type"], field["type"], f"{where}.{field['wire_name']}"
                        ),
                    )
                )
            for position, rf in enumerate(r["fields"]):
                if position in used:
                    continue
                field = pdata["fields"][order[position]]
                if field["default"] is NODEFAULT and field["default_factory"] is None:
                    raise self.fail(
                        where,
                        f"reader field `{rf['name']}` is missing from the writer schema and "
                        "has no default",
                    )
            self.ops[index] = ("record", pid, fields)
            return index
        if w["type"] == "enum":
            if r["type"] != "enum":
                raise self.fail(where, f"writer {_describe(w)} cannot be read as {_describe(r)}")
            names = self.nodes[pid][1]["names"]
            default = r.get("default")
            mapping = []
            for symbol in w["symbols"]:
                if symbol in names:
                    mapping.append(names.index(symbol))
                elif default is not None and default in names:
                    mapping.append(names.index(default))
                else:
                    mapping.append(-1)
            index = self.emit(("enum", pid, mapping, list(w["symbols"])))
            self.memo[key] = index
            return index
        if w["type"] == "array":
            if r["type"] != "array":
                raise self.fail(where, f"writer array cannot be read as {_describe(r)}")
            index = self.emit(("array", -1, pid))
            self.memo[key] = index
            item = self.resolve(w["items"], r["items"], self.nodes[pid][1]["item"], where + "[]")
            self.ops[index] = ("array", item, pid)
            return index
        if w["type"] == "map":
            if r["type"] != "map":
                raise self.fail(where, f"writer map cannot be read as {_describe(r)}")
            index = self.emit(("map", -1, pid))
            self.memo[key] = index
            value = self.resolve(
                w["values"], r["values"], self.nodes[pid][1]["value"], where + "[]"
            )
            self.ops[index] = ("map", value, pid)
            return index
        op = self.scalar(w, r, pid, where)
        index = self.emit(op)
        self.memo[key] = index
        return index

    def scalar(self, w: Dict[str, Any], r: Dict[str, Any], pid: int, where: str) -> Op:
        wt, rt = w["type"], r["type"]
        wl, rl = w.get("logical"), r.get("logical")
        write_op = self.binding.write[pid]
        assert write_op is not None
        wop = write_op[0]
        bad = self.fail(where, f"writer {_describe(w)} cannot be read as {_describe(r)}")
        if wt == "null":
            if rt != "null":
                raise bad
            # Null read as a field's UNSET alternative is UNSET.
            return ("unset" if self.binding.nodes[pid][0] == "unset" else "null", pid)
        if wt == "boolean":
            if rt != "boolean":
                raise bad
            return ("boolean", pid)
        if wop == "timestamp":
            units = {
                "timestamp-micros": (1, False),
                "timestamp-millis": (1000, False),
                "local-timestamp-micros": (1, True),
                "local-timestamp-millis": (1000, True),
            }
            if wt == "long" and wl in units and units[wl][1] == write_op[2]:
                return ("timestamp", units[wl][0], units[wl][1], pid)
            raise bad
        if wop == "date":
            if wt == "int" and wl == "date":
                return ("date", pid)
            raise bad
        if wop == "time":
            if wt == "long" and wl == "time-micros":
                return ("time", 1, pid)
            if wt == "int" and wl == "time-millis":
                return ("time", 1000, pid)
            raise bad
        if wop == "uuid_string" or wop == "uuid_fixed":
            if wt == "string" and wl == "uuid":
                return ("string", pid)
            if wt == "fixed" and wl == "uuid" and w["size"] == 16:
                return ("uuid_fixed", pid)
            raise bad
        if wop == "decimal" or wop == "decimal_string":
            if wl == "decimal" and wt in ("bytes", "fixed"):
                scale = w.get("scale") or 0
                if wop == "decimal" and (scale != write_op[1]):
                    raise self.fail(where, "decimal scales differ")
                return ("decimal", scale, w["size"] if wt == "fixed" else -1, pid)
            if wt == "string" and wop == "decimal_string" and wl is None:
                return ("string", pid)
            raise bad
        if wt in ("int", "long"):
            # A date or timestamp is not read into a plain int or float field.
            if rt in _PROMOTIONS[wt] and wl not in _INT_LOGICAL:
                return ("long", pid)
            raise bad
        if wt == "float":
            if rt in ("float", "double"):
                return ("float", pid)
            raise bad
        if wt == "double":
            if rt == "double":
                return ("double", pid)
            raise bad
        if wt in ("string", "bytes"):
            if wl == "decimal" or wl == "uuid":
                raise bad
            if rt in ("string", "bytes"):
                return (wt, pid)
            raise bad
        if wt == "fixed":
            if rt == "fixed" and w["size"] == r["size"]:
                return ("fixed", w["size"], pid)
            raise bad
        raise bad

    def skip(self, wid: int) -> int:
        if wid in self.skip_memo:
            return self.skip_memo[wid]
        w = self.writer.nodes[wid]
        t = w["type"]
        fixed = {"null": 0, "boolean": 1, "float": 4, "double": 8}
        if t in fixed:
            index = self.emit(("skip_fixed", fixed[t]))
        elif t in ("int", "long", "enum"):
            index = self.emit(("skip_varint",))
        elif t == "string":
            index = self.emit(("skip_string",))
        elif t == "bytes":
            index = self.emit(("skip_bytes",))
        elif t == "fixed":
            index = self.emit(("skip_fixed", w["size"]))
        else:
            index = self.emit(("skip_fixed", 0))
            self.skip_memo[wid] = index
            if t == "array":
                self.ops[index] = ("skip_array", self.skip(w["items"]))
            elif t == "map":
                self.ops[index] = ("skip_map", self.skip(w["values"]))
            elif t == "record":
                self.ops[index] = ("skip_record", [self.skip(f["type"]) for f in w["fields"]])
            else:
                self.ops[index] = ("skip_union", [self.skip(b) for b in w["branches"]])
        self.skip_memo[wid] = index
        return index

    def _names_match(self, w: Dict[str, Any], r: Dict[str, Any]) -> bool:
        if r["type"] not in ("record", "enum", "fixed") or r["type"] != w["type"]:
            return bool(r["type"] == "union")
        wn, rn = w["name"], r["name"]
        short = wn.rpartition(".")[2]
        return (
            wn == rn
            or short == rn.rpartition(".")[2]
            or wn in r["aliases"]
            or short in [a.rpartition(".")[2] for a in r["aliases"]]
        )

    def _matches(self, w: Dict[str, Any], r: Dict[str, Any]) -> bool:
        if w["type"] != r["type"]:
            return False
        if w["type"] in ("record", "enum", "fixed"):
            return self._names_match(w, r)
        return w.get("logical") == r.get("logical") or w["type"] in ("array", "map")

    def _promotes(self, w: Dict[str, Any], r: Dict[str, Any]) -> bool:
        return (
            r["type"] in _PROMOTIONS.get(w["type"], ())
            and w.get("logical") is None
            and (r.get("logical") is None)
        )


def _describe(node: Dict[str, Any]) -> str:
    if node["type"] in NAMED:
        return f"{node['type']} {node['name']}"
    if node.get("logical"):
        return f"{node['type']} ({node['logical']})"
    return str(node["type"])


# ---------------------------------------------------------------------------------------------
# The codec's state, built once


# The most one container block may decompress to, and all of a decode_many call's compressed
# blocks together (docs/avro.md, "Bad input").
DEFAULT_MAX_BLOCK_SIZE = 64 << 20
DEFAULT_MAX_DECOMPRESSED_SIZE = 128 << 20


def _byte_limit(options: Dict[str, Any], name: str, default: int) -> int:
    """A size option: a positive int of bytes, or None for the default."""
    value = options.pop(name, None)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int (bytes), got {type(value).__name__}")
    if not 1 <= value < 2**63:
        raise ValueError(f"{name} must be from 1 to 2**63-1 bytes, got {value}")
    return value


class AvroState:
    """What ``src/codecs/avro`` asks for when it opens a codec."""

    schema: Any
    schema_json: bytes
    canonical: bytes
    fingerprint: int
    write_ops: List[Optional[Op]]
    read_ops: List[Op]
    read_root: int
    framing: str
    schema_id: int
    compression: str
    max_block_size: int
    max_decompressed_size: int
    sync: bytes

    def __init__(self, spec: Any, target: Any, options: Dict[str, Any]) -> None:
        options = dict(options)
        given = options.pop("schema", None)
        framing = options.pop("framing", None) or "raw"
        schema_id = options.pop("schema_id", None)
        compression = options.pop("compression", None) or "null"
        max_block_size = _byte_limit(options, "max_block_size", DEFAULT_MAX_BLOCK_SIZE)
        max_decompressed_size = _byte_limit(
            options, "max_decompressed_size", DEFAULT_MAX_DECOMPRESSED_SIZE
        )
        if options:
            raise TypeError(
                'Codec() got unexpected keyword argument(s) for format "avro": '
                + ", ".join(sorted(options))
            )
        if framing not in ("raw", "single-object", "confluent"):
            raise ValueError(
                f"framing must be None, 'single-object' or 'confluent', got {framing!r}"
            )
        if framing == "confluent":
            if (
                not isinstance(schema_id, int)
                or isinstance(schema_id, bool)
                or not (0 <= schema_id < 2**32)
            ):
                raise ValueError("framing='confluent' needs schema_id=, an int in 0..2**32-1")
        elif schema_id is not None:
            raise ValueError("schema_id= applies to framing='confluent' only")
        if compression not in CODECS:
            raise ValueError(
                f"compression must be one of {', '.join(map(repr, CODECS))}, got {compression!r}"
            )
        nodes, root = spec
        if given is None:
            schema_data = derive_schema(spec, target)
        else:
            if isinstance(given, (str, bytes, bytearray)):
                text = given.decode() if isinstance(given, (bytes, bytearray)) else given
                try:
                    schema_data = json.loads(text)
                except RecursionError:
                    raise ValueError("schema= nests too deeply to be an Avro schema") from None
                except ValueError as exc:
                    if text.strip() not in PRIMITIVES:
                        raise ValueError(f"schema= is not valid JSON: {exc}") from None
                    schema_data = text.strip()  # a bare primitive name such as long
            else:
                schema_data = given
        parsed = parse_schema(schema_data)
        binding = Binding(nodes, parsed)
        binding.bind(root, parsed.root, "$")
        self.binding = binding
        self.root_pid = root
        self.schema = schema_data
        self.schema_json = json.dumps(schema_data, separators=(",", ":")).encode()
        self.canonical = parsed.canonical.encode()
        self.fingerprint = parsed.fingerprint
        self.write_ops = binding.write
        resolver = Resolver(parsed, binding)
        self.read_root = resolver.resolve(parsed.root, parsed.root, root, "$")
        self.read_ops = resolver.ops
        self.framing = framing
        self.schema_id = schema_id or 0
        self.compression = compression
        self.max_block_size = max_block_size
        self.max_decompressed_size = max_decompressed_size
        self.sync = os.urandom(16)

    def schema_copy(self) -> Any:
        """A fresh copy of the schema for ``Codec.schema`` (callers may change it freely)."""
        return json.loads(self.schema_json)

    def writer_key(self, writer_schema: Any) -> bytes:
        """The cache key of a writer schema: its JSON text."""
        if isinstance(writer_schema, str):
            return writer_schema.encode()
        if isinstance(writer_schema, (bytes, bytearray)):
            return bytes(writer_schema)
        try:
            return json.dumps(writer_schema, separators=(",", ":")).encode()
        except RecursionError:
            raise ValueError("writer_schema nests too deeply to be an Avro schema") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"writer_schema is not a JSON-compatible Avro schema: {exc}") from None

    def resolve(self, writer_schema: Any) -> Tuple[List[Op], int, int]:
        """Read ops for data written with ``writer_schema``, and its fingerprint."""
        if isinstance(writer_schema, (bytes, bytearray)):
            writer_schema = writer_schema.decode("utf-8")
        try:
            parsed = parse_schema(writer_schema)
        except SchemaError as exc:
            raise SchemaError(f"invalid Avro writer schema: {exc}") from None
        # The crate's compatibility check comes first; polycodec's resolver decides, since the
        # codec reads more than the reader schema says (class defaults for fields the schema
        # gives none, named types matched by position), and an incompatibility it finds carries
        # the crate's explanation too.
        verdict = _avro_compatible(self.binding.schema.text, parsed.text)
        resolver = Resolver(parsed, self.binding)
        try:
            root = resolver.resolve(parsed.root, self.binding.schema.root, self.root_pid, "$")
        except RecursionError:
            # Only when called with little stack left: the schema's depth is bounded.
            raise SchemaError("the writer schema nests too deeply") from None
        except ResolutionError as exc:
            if verdict is None:
                raise
            raise ResolutionError(exc.where, f"{exc.reason} (apache-avro: {verdict})") from None
        return resolver.ops, root, parsed.fingerprint


CODECS = ("null", "deflate", "snappy", "zstandard")


def open_codec(spec: Any, target: Any, options: Dict[str, Any]) -> AvroState:
    """Called by the Rust side when a codec with format="avro" is built."""
    try:
        return AvroState(spec, target, options)
    except SchemaError as exc:
        raise ValueError(f"invalid Avro schema: {exc}") from None
    except RecursionError:
        raise ValueError("invalid Avro schema: it nests too deeply") from None
