"""JSON Schema (draft 2020-12) of a type's JSON form, derived from the same plan spec the codec
runs on (``docs/plan-spec.md``), so ``rename``, ``array_like``, ``forbid_unknown_fields`` and
``extensions`` shape the schema exactly as they shape the codec's output.

The schema describes what the JSON encoder writes and what the decoder accepts (with
``strict=False``, the lax input too): every encoded value of the type validates, and input the
decoder refuses fails validation wherever JSON Schema can say so. What it cannot say (see
docs/json-schema.md): bounds and digit limits of a ``Decimal`` string, bounds of an ``int`` dict
key or of a lax number written as text, ``1.0`` for an ``int`` (JSON Schema counts it as an
integer), a lax int's integral text with a non-zero fraction (``"1.5e1"``), and which of a lax
union's alternatives takes a text two of them match.

Records (dataclasses, TypedDicts, NamedTuples) and enums become ``$defs`` entries referred to
with ``$ref``, which is also how recursive types are written; so does a recursive ``type``
alias (the plan marks the node it stands for with its name), while any other alias is written
out where it is used.
"""

from __future__ import annotations

import inspect
import json
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ._defaults import NODEFAULT, constant_factory
from ._naming import arg_label
from ._plan import compile_spec
from ._polycodec import encode_json_spec

__all__ = ["DRAFT", "DEFAULT_REF_TEMPLATE", "codec_json_schema", "json_schema_and_spec"]

DRAFT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_REF_TEMPLATE = "#/$defs/{name}"

Node = Tuple[str, Dict[str, Any]]

# The options the schema follows (``strict`` widens what it accepts as the lax decoder does); a
# JSON codec has no format options.
_PLAN_OPTIONS = ("rename", "omit_defaults", "forbid_unknown_fields", "array_like", "extensions")
# ``errors`` says how a failed decode is reported: it changes nothing the schema says.
_KNOWN_OPTIONS = frozenset(_PLAN_OPTIONS + ("strict", "errors"))

# Date and time text the encoder writes that RFC 3339 (the "date-time" and "time" formats) has no
# form for: no UTC offset (naive values) or an offset with seconds (Python's isoformat form).
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_CLOCK = r"[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
_SECONDS_OFFSET = r"[+-][0-9]{2}:[0-9]{2}:[0-9]{2}"
_NAIVE_DATETIME = f"^{_DATE}T{_CLOCK}$"
_SECONDS_DATETIME = f"^{_DATE}T{_CLOCK}{_SECONDS_OFFSET}$"
_OTHER_DATETIME = f"^{_DATE}T{_CLOCK}(?:{_SECONDS_OFFSET})?$"
_NAIVE_TIME = f"^{_CLOCK}$"
_SECONDS_TIME = f"^{_CLOCK}{_SECONDS_OFFSET}$"
_OTHER_TIME = f"^{_CLOCK}(?:{_SECONDS_OFFSET})?$"
# The durations the decoder reads, in upper case: years, months, weeks and days, then H/M/S
# after T, each unit once and in that order (each may have a fraction), an optional sign (the
# encoder writes days and seconds only). The "duration" format is left out on purpose: RFC
# 3339's duration has no sign and no fraction of a second.
_FRACTION = r"[0-9]+(?:\.[0-9]+)?"
_CLOCK_PART = (
    f"T(?:{_FRACTION}H(?:{_FRACTION}M)?(?:{_FRACTION}S)?|{_FRACTION}M(?:{_FRACTION}S)?"
    f"|{_FRACTION}S)"
)
# At least one of Y, M, W and D, in that order.
_DATE_PART = (
    f"(?:{_FRACTION}Y(?:{_FRACTION}M)?(?:{_FRACTION}W)?(?:{_FRACTION}D)?"
    f"|{_FRACTION}M(?:{_FRACTION}W)?(?:{_FRACTION}D)?|{_FRACTION}W(?:{_FRACTION}D)?"
    f"|{_FRACTION}D)"
)
# No lookahead (RE2-based validators have none): at least one part, and T only before one.
_DURATION = f"^[+-]?P(?:{_DATE_PART}(?:{_CLOCK_PART})?|{_CLOCK_PART})$"
# Padded standard base64, as the decoder requires.
_BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
# Decimal text: what str(Decimal) writes (NaN and infinities too, unless digit limits refuse them).
_FINITE_DECIMAL = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_DECIMAL = rf"^(?:{_FINITE_DECIMAL}|[+-]?(?:Infinity|Inf|s?NaN[0-9]*))$"
_DECIMAL_FINITE_ONLY = rf"^{_FINITE_DECIMAL}$"
# An int dict key as the decoder reads it (JSON's integer grammar, so "01" is not "1").
_INT_KEY = r"^-?(?:0|[1-9][0-9]*)$"

# Lax mode (strict=False), as msgspec's: numbers read from text in JSON's grammar ("-" the only
# sign, no leading zero, digits both sides of a "."). An int's text is an integer, or an
# integral float written with a zero fraction or a non-negative exponent (the decoder also takes
# "0.5e1", and refuses integral floats beyond 2^53, which no pattern can say); a float's also
# "nan", "inf" and "infinity" in any case; a bool's "true" and "false" in any case, "1", "0" and
# "-0"; None's "null" in any case; a datetime's or timedelta's any number (seconds).
_JSON_NUMBER = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_LAX_INT = r"^-?(?:0|[1-9][0-9]*)(?:\.0+)?(?:[eE]\+?[0-9]+)?$"
_LAX_INT_EXACT = r"^-?(?:0|[1-9][0-9]*)$"
_LAX_FLOAT = rf"^(?:{_JSON_NUMBER}|-?(?:[Nn][Aa][Nn]|[Ii][Nn][Ff](?:[Ii][Nn][Ii][Tt][Yy])?))$"
_LAX_SECONDS = rf"^{_JSON_NUMBER}$"
_LAX_BOOL = r"^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|-?0)$"
_LAX_NULL = r"^[Nn][Uu][Ll][Ll]$"
# The Unix timestamps a datetime holds (years 1-9999), and the seconds a timedelta holds.
_TIMESTAMPS = {"minimum": -62135596800, "maximum": 253402300799}
_SECONDS = {"minimum": -86399999913600, "maximum": 86399999999999}


_BOUND_KEYWORDS = {
    "ge": "minimum",
    "gt": "exclusiveMinimum",
    "le": "maximum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
_SIMPLE_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def _number(value: Any) -> Any:
    """A bound as a JSON number (bool never reaches here: constraints refuse it)."""
    return value if isinstance(value, (int, float)) else float(value)


def _description(cls: Any) -> Optional[str]:
    """A class's own docstring, without the signature text dataclass and NamedTuple make up."""
    try:
        doc = vars(cls).get("__doc__")
    except TypeError:
        return None
    if not isinstance(doc, str) or not doc.strip():
        return None
    if doc.startswith(f"{cls.__name__}("):
        return None
    return inspect.cleandoc(doc)


def _clean_name(name: str) -> str:
    """Keep names usable as OpenAPI component names (``[A-Za-z0-9._-]``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _base_title(data: Dict[str, Any]) -> str:
    args = data.get("args") or ()
    if not args:
        return str(data["name"])
    return f"{data['name']}[{', '.join(arg_label(a) for a in args)}]"


def _is_alias(kind: str, data: Dict[str, Any]) -> bool:
    """Whether a node is what a recursive alias stands for (a record keeps its own name)."""
    return "alias" in data and kind not in ("dataclass", "typeddict", "namedtuple")


class _Deriver:
    def __init__(
        self,
        nodes: List[Node],
        ref_template: str,
        encode: Callable[[int, Any], Any],
        lax: bool = False,
    ) -> None:
        self.nodes = nodes
        self.lax = lax
        self.ref_template = ref_template
        self.encode = encode
        self.names = self._name_definitions()
        self.defs: Dict[str, Any] = {}

    # -- names -----------------------------------------------------------------------------

    def _owner(self, index: int) -> Any:
        """What one definition stands for: a record node (``Box[int]`` and ``Box[str]`` are
        two), an enum class or a recursive alias with its type arguments (their nodes are not
        shared, one per place they occur)."""
        kind, data = self.nodes[index]
        if kind == "enum":
            return ("enum", data["cls"])
        if _is_alias(kind, data):
            alias = data["alias"]
            return ("alias", id(alias["type"]), repr(alias["args"]))
        return ("record", index)

    def _name_definitions(self) -> Dict[Any, str]:
        """A unique ``$defs`` name for every record and enum, chosen in plan order.

        A name is the class's ``__qualname__`` (with the type arguments of a generic class:
        ``Box_int``). When two different definitions would share one, all of them take the
        module-qualified name instead, and any still equal get ``_2``, ``_3``, ... in plan
        order, so one class's name does not depend on which of the two came first."""
        owners: List[Tuple[Any, str, str]] = []  # (owner, short, qualified)
        seen = set()
        for index, (kind, data) in enumerate(self.nodes):
            if kind not in ("dataclass", "typeddict", "namedtuple", "enum") and "alias" not in data:
                continue
            owner = self._owner(index)
            if owner in seen:
                continue
            seen.add(owner)
            if owner[0] == "alias":
                alias = data["alias"]
                label = "_".join([alias["name"], *(arg_label(a) for a in alias["args"])])
                short = _clean_name(label)
                qualified = _clean_name(f"{alias['module']}.{label}")
            elif kind == "enum":
                cls = data["cls"]
                short = _clean_name(cls.__qualname__)
                qualified = _clean_name(f"{cls.__module__}.{cls.__qualname__}")
            else:
                args = data["args"]
                label = "_".join([data["name"], *(arg_label(a) for a in args)])
                short = _clean_name(label)
                qualified = _clean_name(f"{data['module']}.{label}")
            owners.append((owner, short, qualified))
        by_short: Dict[str, int] = {}
        for _, short, _ in owners:
            by_short[short] = by_short.get(short, 0) + 1
        names: Dict[Any, str] = {}
        used: Dict[str, int] = {}
        for owner, short, qualified in owners:
            name = short if by_short[short] == 1 else qualified
            count = used.get(name, 0) + 1
            used[name] = count
            names[owner] = name if count == 1 else f"{name}_{count}"
        return names

    def ref(self, index: int) -> Dict[str, Any]:
        name = self.names[self._owner(index)]
        if name not in self.defs:
            self.defs[name] = {}  # placeholder: a recursive reference finds it
            self.defs[name] = self._definition(index)
        return {"$ref": self.ref_template.format(name=name)}

    # -- definitions -----------------------------------------------------------------------

    def _definition(self, index: int) -> Dict[str, Any]:
        kind, data = self.nodes[index]
        if kind == "enum":
            return self._enum(data)
        if _is_alias(kind, data):
            alias = data["alias"]
            title = alias["name"]
            if alias["args"]:
                title += f"[{', '.join(arg_label(a) for a in alias['args'])}]"
            return {"title": title, **self._node_schema(index)}
        out: Dict[str, Any] = {"title": _base_title(data)}
        description = _description(data["cls"])
        if description is not None:
            out["description"] = description
        if kind == "namedtuple" or data["array_like"]:
            out.update(self._array_record(data, kind == "namedtuple"))
        else:
            out.update(self._object_record(data))
        return out

    def _enum(self, data: Dict[str, Any]) -> Dict[str, Any]:
        cls = data["cls"]
        out: Dict[str, Any] = {"title": cls.__qualname__}
        description = _description(cls)
        # Python 3.10 gives every enum without a docstring "An enumeration.".
        if description is not None and description != "An enumeration.":
            out["description"] = description
        kinds = {"str": "string", "int": "integer"}
        if data["value_kind"] in kinds:
            out["type"] = kinds[data["value_kind"]]
        if data["flag"]:
            # Any combination of the members (and what the class's boundary lets through), in
            # lax mode also as integer text.
            if self.lax:
                out["type"] = ["integer", "string"]
                out["pattern"] = _LAX_INT_EXACT
            return out
        texts = self._lax_texts(data["values"])
        if texts and "type" in out:
            out["type"] = [out["type"], "string"]
        out["enum"] = [*data["values"], *texts]
        return out

    def _field_schema(self, field: Dict[str, Any]) -> Dict[str, Any]:
        schema = dict(self.schema(field["type"]))
        default = self._default(field)
        if default is not NODEFAULT:
            schema["default"] = default
        return schema

    def _default(self, field: Dict[str, Any]) -> Any:
        """The field's default in its JSON form, written by the codec through the field's own
        node; NODEFAULT when it has none that is a constant (a factory other than an empty
        collection or a record of constant defaults is called anew for every value)."""
        if field["default"] is not NODEFAULT:
            value = field["default"]
        elif field["default_factory"] is not None and constant_factory(field["default_factory"]):
            value = field["default_factory"]()
        else:
            return NODEFAULT
        try:
            return self.encode(field["type"], value)
        except (TypeError, ValueError):
            # A default the codec cannot write (it does not fit the annotation): no "default".
            return NODEFAULT

    def _object_record(self, data: Dict[str, Any]) -> Dict[str, Any]:
        properties: Dict[str, Any] = {}
        required: List[str] = []
        # A required field read by one of several names (aliases) needs one of them.
        one_of_names: List[Dict[str, Any]] = []
        # A tag (a class's own, or a tag field) is required by the tagged union (which says so
        # itself), not by the record: where the same class appears on its own, the decoder
        # lets its tag default (a class tag is then checked when present, as msgspec does).
        if data["class_tag"] is not None:
            tag_field, _, tag_node = data["class_tag"]
            properties[tag_field] = self.schema(tag_node)
        for field in data["fields"]:
            if not field["wire"]:
                continue
            schema = self._field_schema(field)
            properties[field["wire_name"]] = schema
            # A field's former names: read too, never written.
            for alias in field["aliases"]:
                properties[alias] = {**schema, "deprecated": True}
            if field["required"] and field["aliases"]:
                names = [field["wire_name"], *field["aliases"]]
                one_of_names.append({"anyOf": [{"required": [name]} for name in names]})
            elif field["required"]:
                required.append(field["wire_name"])
        out: Dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        if one_of_names:
            out["allOf"] = one_of_names
        if data["forbid_unknown_fields"]:
            out["additionalProperties"] = False
        return out

    def _array_record(self, data: Dict[str, Any], fixed_length: bool) -> Dict[str, Any]:
        """A NamedTuple, or a record under ``array_like``: its fields by position (a tagged
        record's tag first); trailing fields with defaults may be left out."""
        fields = [f for f in data["fields"] if f["wire"]]
        tagged = data["tag"] is not None or data["class_tag"] is not None
        if data["tag"] is not None:
            tag_field = data["fields"][data["tag"][0]]
            fields = [tag_field] + [f for f in fields if f is not tag_field]
        items = [self._field_schema(f) for f in fields]
        if data["class_tag"] is not None:
            items.insert(0, self.schema(data["class_tag"][2]))
            fields.insert(0, {"required": True})
        needed = 0
        for position, field in enumerate(fields):
            if field["required"] or (position == 0 and tagged):
                needed = position + 1
        out: Dict[str, Any] = {"type": "array"}
        if items:
            out["prefixItems"] = items
        out["minItems"] = needed
        # Items past the fields are skipped by the decoder (a newer producer's fields, as
        # msgspec reads them), unless the record forbids unknown fields; a NamedTuple is a
        # tuple of its length.
        if fixed_length or data["forbid_unknown_fields"]:
            out["maxItems"] = len(items)
        return out

    # -- every node ------------------------------------------------------------------------

    def schema(self, index: int) -> Dict[str, Any]:
        """The schema of one node (with its lax-mode input too, where the ``strict`` option is
        off: ``self.lax``)."""
        kind, data = self.nodes[index]
        if _is_alias(kind, data):
            return self.ref(index)
        return self._node_schema(index)

    def _node_schema(self, index: int) -> Dict[str, Any]:
        kind, data = self.nodes[index]
        method = getattr(self, "_" + kind + "_node", None)
        if method is not None:
            result: Dict[str, Any] = method(data)
            return result
        if kind in ("dataclass", "typeddict", "namedtuple", "enum"):
            return self.ref(index)
        raise TypeError(f"polycodec cannot describe a {kind!r} plan node in JSON Schema")

    def _any_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return {}

    def _none_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        if self.lax:
            return {"anyOf": [{"type": "null"}, {"type": "string", "pattern": _LAX_NULL}]}
        return {"type": "null"}

    def _bool_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        if self.lax:
            return {
                "anyOf": [
                    {"type": "boolean"},
                    {"enum": [1, 0]},
                    {"type": "string", "pattern": _LAX_BOOL},
                ]
            }
        return {"type": "boolean"}

    def _bounded(self, json_type: str, data: Dict[str, Any], text: Optional[str]) -> Dict[str, Any]:
        # Lax mode: the number may also come as text. Bounds only apply to JSON numbers and
        # "pattern" only to strings, so both sit side by side (the text's bounds go unchecked).
        out: Dict[str, Any] = {"type": json_type if text is None else [json_type, "string"]}
        for key, keyword in _BOUND_KEYWORDS.items():
            if data.get(key) is not None:
                out[keyword] = _number(data[key])
        if text is not None:
            out["pattern"] = text
        return out

    def _int_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return self._bounded("integer", data, _LAX_INT if self.lax else None)

    def _float_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return self._bounded("number", data, _LAX_FLOAT if self.lax else None)

    def _str_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": "string"}
        if data["min_length"] is not None:
            out["minLength"] = data["min_length"]
        if data["max_length"] is not None:
            out["maxLength"] = data["max_length"]
        if data["pattern"] is not None:
            out["pattern"] = data["pattern"].pattern
        return out

    def _bytes_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": "string", "contentEncoding": "base64", "pattern": _BASE64}
        # n bytes are 4 * ceil(n / 3) characters of padded base64.
        if data["min_length"] is not None:
            out["minLength"] = 4 * -(-data["min_length"] // 3)
        if data["max_length"] is not None:
            out["maxLength"] = 4 * -(-data["max_length"] // 3)
        return out

    def _decimal_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        finite = data["max_digits"] is not None or data["decimal_places"] is not None
        pattern = _DECIMAL_FINITE_ONLY if finite else _DECIMAL
        # Lax mode also reads a JSON number (as its exact text).
        return {"type": ["string", "number"] if self.lax else "string", "pattern": pattern}

    def _seconds(self, schema: Dict[str, Any], bounds: Dict[str, int]) -> Dict[str, Any]:
        """Lax mode: a datetime's or timedelta's schema, or a number of seconds (a JSON number
        in the range, or one written as text)."""
        if not self.lax:
            return schema
        return {
            "anyOf": [
                schema,
                {"type": "number", **bounds},
                {"type": "string", "pattern": _LAX_SECONDS},
            ]
        }

    @staticmethod
    def _temporal(
        fmt: str, tz: Optional[bool], naive: str, seconds: str, other: str
    ) -> Dict[str, Any]:
        if tz is False:
            return {"type": "string", "pattern": naive}
        rest = seconds if tz else other
        return {"type": "string", "anyOf": [{"format": fmt}, {"pattern": rest}]}

    def _datetime_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        schema = self._temporal(
            "date-time", data["tz"], _NAIVE_DATETIME, _SECONDS_DATETIME, _OTHER_DATETIME
        )
        # A Unix timestamp is aware: a naive datetime takes none.
        return schema if data["tz"] is False else self._seconds(schema, _TIMESTAMPS)

    def _time_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return self._temporal("time", data["tz"], _NAIVE_TIME, _SECONDS_TIME, _OTHER_TIME)

    def _date_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return {"type": "string", "format": "date"}

    def _timedelta_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return self._seconds({"type": "string", "pattern": _DURATION}, _SECONDS)

    def _uuid_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        return {"type": "string", "format": "uuid"}

    def _literal_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        values = [*data["values"], *self._lax_texts(data["values"])]
        return {"const": values[0]} if len(values) == 1 else {"enum": values}

    def _lax_texts(self, values: List[Any]) -> List[str]:
        """Lax mode: the texts an int enum's or int literal's values are also read from (JSON
        integer text, so ``"-0"`` for 0 too); none in strict mode, for bools and for a text
        that is one of the values itself."""
        if not self.lax:
            return []
        texts = []
        for value in values:
            if isinstance(value, int) and not isinstance(value, bool):
                texts += [str(value)] + (["-0"] if value == 0 else [])
        return [text for text in texts if text not in values]

    def _sized(
        self, out: Dict[str, Any], data: Dict[str, Any], low: str, high: str
    ) -> Dict[str, Any]:
        if data["min_length"] is not None:
            out[low] = data["min_length"]
        if data["max_length"] is not None:
            out[high] = data["max_length"]
        return out

    def _list_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": "array", "items": self.schema(data["item"])}
        return self._sized(out, data, "minItems", "maxItems")

    # A set is an array without "uniqueItems": the decoder takes repeated items (the set keeps
    # one), and distinct Python items can have one JSON form (under Any, or an extension).
    _set_node = _frozenset_node = _var_tuple_node = _list_node

    def _tuple_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        items = [self.schema(i) for i in data["items"]]
        out: Dict[str, Any] = {"type": "array"}
        if items:
            out["prefixItems"] = items
        out["minItems"] = out["maxItems"] = len(items)
        return out

    def _dict_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        out: Dict[str, Any] = {"type": "object"}
        keys = self._key_schema(data["key"])
        if keys:
            out["propertyNames"] = keys
        out["additionalProperties"] = self.schema(data["value"])
        return self._sized(out, data, "minProperties", "maxProperties")

    def _key_schema(self, index: int) -> Dict[str, Any]:
        """A dict key is always a JSON string: an int key is its decimal text, an enum or
        literal key the text of its value."""
        kind, data = self.nodes[index]
        if kind == "int":
            return {"pattern": _INT_KEY}
        if kind in ("enum", "literal"):
            return {"enum": [str(v) for v in data["values"]]}
        if kind == "any":
            return {}
        schema = self.schema(index)
        schema.pop("type", None)
        return schema

    def _union_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        # In lax mode each variant takes its own text forms too; where two could take one
        # text, the decoder gives it to one (msgspec's order), which JSON Schema cannot say.
        variants = [self.schema(v) for v in data["variants"]]
        if all(list(v) == ["type"] and isinstance(v["type"], str) for v in variants):
            types = [v["type"] for v in variants]
            if "number" in types and "integer" in types:
                types.remove("integer")
            types.sort(key=_SIMPLE_TYPES.index)
            return {"type": types[0] if len(types) == 1 else types}
        return {"anyOf": variants}

    def _tagged_union_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        records: List[int] = []
        for _, record in data["tags"]:
            if record not in records:
                records.append(record)
        alternatives = [self.ref(r) for r in records]
        if self.nodes[records[0]][1]["array_like"]:
            return {"oneOf": alternatives}
        mapping = {str(tag): self.ref(record)["$ref"] for tag, record in data["tags"]}
        return {
            "type": "object",
            "required": [data["tag_field"]],
            "oneOf": alternatives,
            "discriminator": {"propertyName": data["tag_field"], "mapping": mapping},
        }

    def _raw_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        # Any JSON value, kept as its text (null too: an Optional[Raw] gives None for it).
        return {}

    def _extension_node(self, data: Dict[str, Any]) -> Dict[str, Any]:
        # The value travels as its wire type (nullable ones: the wire node is the union).
        return self.schema(data["wire"])


def derive(
    spec: Tuple[List[Node], int],
    ref_template: Optional[str] = None,
    encode: Optional[Callable[[Tuple[List[Node], int], Any], bytes]] = None,
    *,
    strict: bool = True,
) -> Dict[str, Any]:
    """The JSON Schema document for a plan spec ``(nodes, root)``."""
    template = DEFAULT_REF_TEMPLATE if ref_template is None else ref_template
    if not isinstance(template, str):
        raise TypeError(f"ref_template must be a str, not {type(template).__qualname__}")
    try:
        if template.format(name="X") == template.format(name="Y"):
            raise ValueError
    except (KeyError, IndexError, ValueError):
        raise ValueError(
            f"ref_template={template!r} must contain {{name}} (and no other {{...}} fields), "
            "e.g. '#/components/schemas/{name}'"
        ) from None
    nodes, root = spec
    writer = encode_json_spec if encode is None else encode

    def encode_default(index: int, value: Any) -> Any:
        return json.loads(writer((nodes, index), value))

    deriver = _Deriver(nodes, template, encode_default, lax=not strict)
    body = deriver.schema(root)
    document: Dict[str, Any] = {"$schema": DRAFT, **body}
    if deriver.defs:
        document["$defs"] = dict(sorted(deriver.defs.items()))
    return document


def json_schema_and_spec(
    tp: Any, options: Mapping[str, Any], ref_template: Optional[str] = None
) -> Tuple[Dict[str, Any], Tuple[List[Node], int]]:
    """The JSON Schema of ``tp``'s JSON form under the ``Codec`` options ``options``, and the
    plan spec it was derived from (whose classes a cache of the schema depends on)."""
    unknown = sorted(set(options) - _KNOWN_OPTIONS)
    if unknown:
        raise TypeError(
            f"json_schema() got unexpected options {unknown}; it takes "
            f"{', '.join(sorted(_KNOWN_OPTIONS))} and ref_template"
        )
    plan_options = {k: options[k] for k in _PLAN_OPTIONS if k in options}
    spec = compile_spec(tp, format="json", **plan_options)
    return derive(spec, ref_template, strict=bool(options.get("strict", True))), spec


def codec_json_schema(
    tp: Any, format: str, options: Dict[str, Any], ref_template: Optional[str]
) -> Dict[str, Any]:
    """``Codec.json_schema()``: only a JSON codec has a JSON form to describe."""
    if format != "json":
        raise TypeError(
            f"json_schema() describes the JSON form, and this codec's format is {format!r}; "
            "use Codec(type, 'json', ...) or polycodec.json_schema(type, ...) for the JSON "
            "Schema of the same type"
        )
    return json_schema_and_spec(tp, options, ref_template)[0]
