"""The per-feature cells: who runs what on which form of a feature's values.

Shared by the timed benchmark (``feature_bench.py``) and the callgrind runner
(``callgrind_features.py``), so both time exactly the same calls. A *cell* is a format and a
direction (:data:`CELLS`); a *lib* is who runs it (:data:`LIBS`):

* ``slots`` / ``plain``: polycodec on the feature's ``slots=True`` / plain classes: one codec
  per feature and format, built once; a batch is ``encode_many`` / ``decode_many`` (JSON and
  MessagePack: one array), ``Codec(list[T], "json").to_builtins`` / ``.from_builtins``,
  ``Codec(list[T], "avro").encode_one`` / ``.decode_one`` (one Avro array datum) and
  ``Codec(T, "pickle").encode_many`` / ``.decode_many`` (a pickled list);
* ``msgspec``: msgspec's typed ``Encoder()`` / ``Decoder(list[T])``, ``to_builtins`` and
  ``convert`` on the feature's Struct classes;
* ``fastavro``: ``fastavro.schemaless_writer`` / ``schemaless_reader`` with the schema polycodec
  derives for the plain classes (``parse_schema``d once), and the conversion between the objects
  and the dicts fastavro takes and gives (what its users write to get the same objects); it is
  a generic converter compiled once per type from the class and the schema;
  ``fastavro-dicts`` is fastavro alone on ready dicts (the conversion left out);
* ``pickle`` / ``pickle-slots``: the stdlib's ``pickle.dumps(values, protocol=5)`` and
  ``pickle.loads`` on the plain / slots values.

Every Avro cell writes the same bytes on both sides (checked by :func:`check`).
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
import types
import typing
from dataclasses import dataclass
from decimal import Decimal
from io import BytesIO
from typing import Any, Callable, Optional

import polycodec

from .features import BATCH, FEATURES, Feature, Form

__all__ = ["CELLS", "GROUPS", "LIBS", "Prepared", "Unavailable", "check", "prepare"]

#: Every cell, as ``format-direction``, in report order.
CELLS: tuple[str, ...] = (
    "json-encode",
    "json-decode",
    "msgpack-encode",
    "msgpack-decode",
    "builtins-to",
    "builtins-from",
    "avro-encode",
    "avro-decode",
    "pickle-encode",
    "pickle-decode",
)

#: Who runs each format's cells, polycodec's rows first; the last is the reference (the peer
#: the ratio is taken against) where a format has one.
GROUPS: dict[str, tuple[str, ...]] = {
    "json": ("slots", "plain", "msgspec"),
    "msgpack": ("slots", "plain", "msgspec"),
    "builtins": ("slots", "plain", "msgspec"),
    "avro": ("slots", "plain", "fastavro-dicts", "fastavro"),
    "pickle": ("slots", "pickle-slots", "plain", "pickle"),
}

#: Every lib, and the form of the feature's values it runs on.
LIBS: dict[str, Form] = {
    "slots": "slots",
    "plain": "plain",
    "msgspec": "struct",
    "fastavro": "plain",
    "fastavro-dicts": "plain",
    "pickle": "plain",
    "pickle-slots": "slots",
}


#: A conversion between values and fastavro's data; None where the value is already both.
Conv = Optional[Callable[[Any], Any]]


class Unavailable(Exception):
    """This lib has no such cell for this feature; ``str(exc)`` says why (shown in reports)."""


@dataclass
class Prepared:
    """One timed call, ``fn(arg)``, and what it works on."""

    fn: Callable[[Any], Any]
    arg: Any
    #: The encoded payload (what decode reads, what encode writes), for sizes and checks.
    payload: Any
    #: The values in the lib's form (what encode reads, what decode must give back).
    values: list[Any]


def _form(feature: Feature, lib: str) -> Form:
    """The form ``lib`` runs on: fastavro takes the only form of a one-form feature."""
    form = LIBS[lib]
    if lib.startswith("fastavro") and form not in feature.roots:
        return "slots"
    return form


def _root(feature: Feature, lib: str) -> Any:
    form = _form(feature, lib)
    if form not in feature.roots:
        raise Unavailable(f"{feature.name} has no {form} form")
    return feature.roots[form]


def values_for(feature: Feature, lib: str, fmt: str, n: int = BATCH) -> list[Any]:
    """The feature's ``n`` values in the form ``lib`` runs on, for format ``fmt``."""
    form = _form(feature, lib)
    values = feature.values(n, fmt=fmt)
    return values if form == "plain" else feature.convert(values, form)


def prepare(name: str, cell: str, lib: str, n: int = BATCH) -> Prepared:
    """The call that ``lib`` times for ``cell`` of feature ``name`` (``Unavailable`` if none)."""
    feature = FEATURES[name]
    fmt, direction = cell.split("-")
    if lib not in GROUPS[fmt]:
        raise Unavailable(f"{lib} has no {fmt} cells")
    if fmt in feature.skip:
        raise Unavailable(feature.skip[fmt])
    root = _root(feature, lib)
    values = values_for(feature, lib, fmt, n)
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]
    if lib in ("slots", "plain"):
        encode, decode = _polycodec(fmt, root)
    elif lib == "msgspec":
        encode, decode = _msgspec(fmt, root)
    elif lib.startswith("pickle"):
        encode, decode = _pickle_dumps, pickle.loads
    else:
        encode, decode, to_wire = _fastavro(root, convert=lib == "fastavro")
        if to_wire is not None:  # fastavro-dicts: it encodes ready dicts
            values = to_wire(values)
    payload = encode(values)
    if direction in ("encode", "to"):
        return Prepared(encode, values, payload, values)
    return Prepared(decode, payload, payload, values)


def _pickle_dumps(values: Any) -> bytes:
    return pickle.dumps(values, protocol=5)


def _polycodec(fmt: str, root: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    try:
        if fmt == "builtins":
            many: Any = polycodec.Codec(list[root], "json")  # type: ignore[valid-type]
            return many.to_builtins, many.from_builtins
        if fmt == "avro":
            array: Any = polycodec.Codec(list[root], "avro")  # type: ignore[valid-type]
            return array.encode_one, array.decode_one
        codec: Any = polycodec.Codec(root, typing.cast(Any, fmt))
    except TypeError as exc:
        raise Unavailable(f"polycodec refuses it: {exc}") from exc
    return codec.encode_many, codec.decode_many


def _msgspec(fmt: str, root: Any) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    import msgspec

    items = list[root]  # type: ignore[valid-type]
    if fmt == "builtins":
        return msgspec.to_builtins, lambda data: msgspec.convert(data, items)
    mod: Any = msgspec.json if fmt == "json" else msgspec.msgpack
    return mod.Encoder().encode, mod.Decoder(items).decode


# --------------------------------------------------------------------------------------------
# fastavro, bound to the schema polycodec derives
# --------------------------------------------------------------------------------------------


def _fastavro(
    root: Any, convert: bool
) -> tuple[Callable[[Any], bytes], Callable[[bytes], Any], Conv]:
    """fastavro's encode and decode of a batch, and (``convert`` False: they take and give
    fastavro's dicts) the conversion of the values into those dicts."""
    import fastavro

    try:
        schema = polycodec.Codec(list[root], "avro").schema  # type: ignore[valid-type]
    except TypeError as exc:
        raise Unavailable(f"polycodec refuses it: {exc}") from exc
    to_wire, from_wire = _avro_converters(list[root], schema, {})  # type: ignore[valid-type]
    parsed = fastavro.parse_schema(schema)
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader
    # Unions of records come back as (name, record) tuples, so the reader need not guess.
    names = _has_record_union(schema)

    def write_dicts(dicts: Any) -> bytes:
        out = BytesIO()
        writer(out, parsed, dicts)
        return out.getvalue()

    def read_dicts(buf: bytes) -> Any:
        return reader(BytesIO(buf), parsed, None, return_record_name=names)

    if not convert:
        return write_dicts, read_dicts, to_wire

    def encode(values: Any) -> bytes:
        return write_dicts(to_wire(values) if to_wire is not None else values)

    def decode(buf: bytes) -> Any:
        dicts = read_dicts(buf)
        return from_wire(dicts) if from_wire is not None else dicts

    return encode, decode, None


def _has_record_union(schema: Any) -> bool:
    if isinstance(schema, list):
        return sum(isinstance(b, dict) and b.get("type") == "record" for b in schema) > 1 or any(
            _has_record_union(b) for b in schema
        )
    if isinstance(schema, dict):
        return any(_has_record_union(v) for v in schema.values() if isinstance(v, (dict, list)))
    return False


def _strip(t: Any) -> tuple[Any, tuple[Any, ...]]:
    """The type under ``Annotated`` and ``NewType``, and the Annotated metadata."""
    meta: tuple[Any, ...] = ()
    while True:
        if typing.get_origin(t) is typing.Annotated:
            meta += t.__metadata__
            t = t.__origin__
        elif hasattr(t, "__supertype__"):
            t = t.__supertype__
        else:
            return t, meta


def _avro_converters(t: Any, schema: Any, named: dict[str, Any]) -> tuple[Conv, Conv]:
    """``(to_wire, from_wire)`` between values of type ``t`` and fastavro's data for
    ``schema``: records as dicts keyed by the schema's field names, enums as symbols, unions of
    records in fastavro's ``(name, record)`` tuple notation, sets and tuples as lists."""
    if isinstance(schema, str) and schema in named:
        schema = named[schema]
    if isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
        return _avro_converters(t, schema["type"], named)
    if isinstance(schema, dict) and schema.get("type") in ("record", "enum", "fixed"):
        name = schema["name"]
        full = f"{schema['namespace']}.{name}" if schema.get("namespace") else name
        named[full] = named[name] = schema
    t, _ = _strip(t)
    origin = typing.get_origin(t)
    if origin in (typing.Union, types.UnionType):
        return _union(t, schema, named)
    if origin in (list, set, frozenset, tuple):
        item_t = typing.get_args(t)[0]
        to_item, from_item = _avro_converters(item_t, schema["items"], named)
        back = origin
        if to_item is None and origin is list:
            to: Conv = None
        elif to_item is None:
            to = list
        else:
            to = lambda v: [to_item(x) for x in v]  # noqa: E731
        if from_item is None:
            frm: Conv = None if origin is list else back
        else:
            frm = lambda v: back(from_item(x) for x in v)  # noqa: E731
            if origin is list:
                frm = lambda v: [from_item(x) for x in v]  # noqa: E731
        return to, frm
    if origin is dict:
        to_v, from_v = _avro_converters(typing.get_args(t)[1], schema["values"], named)
        return (
            None if to_v is None else lambda v: {k: to_v(x) for k, x in v.items()},
            None if from_v is None else lambda v: {k: from_v(x) for k, x in v.items()},
        )
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return (lambda v: v.name), (lambda v, cls=t: cls[v])
    if t is Decimal and schema == "string":
        return str, Decimal
    if isinstance(t, type) and isinstance(schema, dict) and schema.get("type") == "record":
        return _record(t, schema, named)
    return None, None


def _union(t: Any, schema: Any, named: dict[str, Any]) -> tuple[Conv, Conv]:
    args = typing.get_args(t)
    null = type(None) in args
    unset = polycodec.UnsetType in args
    rest = [a for a in args if a is not type(None) and a is not polycodec.UnsetType]
    branches = [b for b in schema if b != "null"]
    missing = polycodec.UNSET if unset else None
    if len(rest) == 1:
        to_in, from_in = _avro_converters(rest[0], branches[0], named)
        if not unset and to_in is None and from_in is None:
            return None, None

        def to(v: Any) -> Any:
            if v is None or v is polycodec.UNSET:
                return None
            return v if to_in is None else to_in(v)

        def frm(v: Any) -> Any:
            if v is None:
                return missing
            return v if from_in is None else from_in(v)

        return to, frm
    # A union of records: fastavro's (name, record) tuple notation both ways.
    by_class: dict[type, tuple[str, Conv]] = {}
    by_name: dict[str, tuple[type, Conv]] = {}
    for cls in rest:
        branch = next(b for b in branches if isinstance(b, dict) and b.get("name") == cls.__name__)
        full = f"{branch['namespace']}.{branch['name']}"
        to_b, from_b = _avro_converters(cls, branch, named)
        by_class[cls] = (full, to_b)
        by_name[full] = (cls, from_b)

    def to_union(v: Any) -> Any:
        if v is None:
            return None
        full, conv = by_class[type(v)]
        return (full, conv(v) if conv else v)

    def from_union(v: Any) -> Any:
        if v is None:
            return None
        cls, conv = by_name[v[0]]
        return conv(v[1]) if conv else v[1]

    del null
    return to_union, from_union


def _fields(cls: type) -> list[str]:
    if dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls) if f.init]
    import attrs

    if attrs.has(cls):
        return [a.name for a in attrs.fields(cls) if a.init]
    if issubclass(cls, tuple):
        return list(cls._fields)  # type: ignore[attr-defined]
    return list(typing.get_type_hints(cls))  # a TypedDict


def _record(cls: type, schema: dict[str, Any], named: dict[str, Any]) -> tuple[Conv, Conv]:
    hints = typing.get_type_hints(cls, include_extras=True)
    names = _fields(cls)
    wires = [f["name"] for f in schema["fields"]]
    assert len(names) == len(wires), (cls, names, wires)
    convs = [_avro_converters(hints[n], f["type"], named) for n, f in zip(names, schema["fields"])]
    plan = [(n, w, to, frm) for n, w, (to, frm) in zip(names, wires, convs)]
    is_dict = issubclass(cls, dict)
    is_tuple = issubclass(cls, tuple)

    if is_dict:

        def to(v: Any) -> Any:
            return {w: (v[n] if c is None else c(v[n])) for n, w, c, _ in plan}

    else:

        def to(v: Any) -> Any:
            return {w: (getattr(v, n) if c is None else c(getattr(v, n))) for n, w, c, _ in plan}

    if is_tuple:

        def frm(d: Any) -> Any:
            return cls(*[d[w] if c is None else c(d[w]) for _, w, _, c in plan])

    else:

        def frm(d: Any) -> Any:
            return cls(**{n: (d[w] if c is None else c(d[w])) for n, w, _, c in plan})

    return to, frm


# --------------------------------------------------------------------------------------------
# The checks every timed cell passes first
# --------------------------------------------------------------------------------------------


def check(name: str, fmt: str, lib: str, n: int = BATCH) -> Prepared:
    """Run ``lib``'s encode and decode of ``fmt`` on feature ``name``'s values and check them:
    the values come back equal, and the bytes are the reference's where they must be (Avro:
    fastavro's, bound to the same schema; pickle: the stdlib reads polycodec's pickle and
    polycodec the stdlib's). Returns the encode cell's :class:`Prepared`."""
    direction = ("to", "from") if fmt == "builtins" else ("encode", "decode")
    enc = prepare(name, f"{fmt}-{direction[0]}", lib, n)
    dec = prepare(name, f"{fmt}-{direction[1]}", lib, n)
    got = dec.fn(dec.arg)
    if lib == "fastavro-dicts":
        # Its values are fastavro's dicts: it must write the bytes fastavro with the
        # conversion writes (and polycodec, checked there), and read back as many records.
        peer = prepare(name, "avro-encode", "fastavro", n)
        if peer.payload != enc.payload or len(got) != len(enc.values):
            raise AssertionError(f"{name}: fastavro on ready dicts wrote other bytes")
        return enc
    expected = enc.values
    if got != expected:
        raise AssertionError(f"{name} {fmt} {lib}: decoded values differ from the originals")
    if fmt == "avro" and lib in ("slots", "plain"):
        peer = prepare(name, "avro-encode", "fastavro", n)
        if peer.payload != enc.payload:
            raise AssertionError(f"{name}: polycodec ({lib}) and fastavro wrote other Avro bytes")
    if fmt == "pickle" and lib in ("slots", "plain"):
        if pickle.loads(enc.payload) != expected:
            raise AssertionError(f"{name}: pickle.loads differs on polycodec's pickle ({lib})")
        if dec.fn(pickle.dumps(expected, protocol=5)) != expected:
            raise AssertionError(f"{name}: polycodec ({lib}) misreads the stdlib's pickle")
    return enc
