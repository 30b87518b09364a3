"""Typing of current Python (issue 24, item 3): ``type`` aliases (plain, nested, generic,
recursive), PEP 695 generic classes, PEP 696 type parameter defaults, ``ReadOnly`` TypedDict keys
and 3.14's deferred annotations, in every format, ``json_schema()`` and the Avro schema.

The ``typing_extensions`` forms run on every version. Models in syntax that older versions
cannot parse live in their own modules, imported only where the syntax exists
(``models_pep695.py`` 3.12+, ``models_pep696.py`` 3.13+, ``models_pep649.py`` 3.14+); their
tests skip with the reason elsewhere. Oracles: json, msgpack, pickle and msgspec for the bytes
(msgspec decodes ``TypeAliasType`` on 3.12+, though not recursive ones nor typing_extensions'
class on 3.11), fastavro for Avro, jsonschema for the schemas.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import pickle
import re
import sys
import types
from typing import Annotated, Any, Dict, Generic, List, Literal, Optional, TypedDict

import fastavro
import jsonschema
import msgpack
import msgspec
import pytest
import typing_extensions as te

import polycodec
from polycodec import Meta
from polycodec._plan import compile_spec

# ---------------------------------------------------------------------------------------------
# Helpers


def _models(name: str, version: tuple[int, int], what: str) -> types.ModuleType:
    if sys.version_info < version:
        pytest.skip(f"{what} needs Python {version[0]}.{version[1]}+")
    return importlib.import_module(name)


@pytest.fixture
def pep695() -> types.ModuleType:
    return _models("models_pep695", (3, 12), "PEP 695 syntax (type X = ..., class Box[T]:)")


@pytest.fixture
def pep696() -> types.ModuleType:
    return _models("models_pep696", (3, 13), "PEP 696 syntax (class Box[T = int]:)")


@pytest.fixture
def pep649() -> types.ModuleType:
    return _models("models_pep649", (3, 14), "a deferred annotation (PEP 649)")


def _json_form(value: Any) -> Any:
    """What the JSON encoder writes for a value made of dataclasses, NamedTuples and builtins."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json_form(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _json_form(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_form(v) for v in value]
    return value


def _every_format(tp: Any, value: Any, tagged: bool = False) -> Dict[str, bytes]:
    """Round-trip ``value`` through JSON, MessagePack and pickle and the builtins form, checked
    against json, msgpack and pickle themselves; returns the encoded bytes by format. With
    ``tagged``, records are compared as parsed maps (a tag field is written first)."""
    out = {}
    for fmt in ("json", "msgpack", "pickle"):
        codec = polycodec.Codec(tp, fmt)
        data = codec.encode_one(value)
        assert codec.decode_one(data) == value, fmt
        out[fmt] = data
    if tagged:
        assert json.loads(out["json"]) == _json_form(value)
        assert msgpack.unpackb(out["msgpack"]) == _json_form(value)
    else:
        assert out["json"] == json.dumps(_json_form(value), separators=(",", ":")).encode()
        assert out["msgpack"] == msgpack.packb(_json_form(value))
    assert pickle.loads(out["pickle"]) == value
    builtins = polycodec.to_builtins(value, tp)
    assert builtins == json.loads(out["json"])
    assert polycodec.from_builtins(builtins, tp) == value
    return out


def _avro_round_trip(tp: Any, value: Any) -> Any:
    """Encode ``value`` as Avro, read it back with polycodec and with fastavro; the schema."""
    codec = polycodec.Codec(tp, "avro")
    data = codec.encode_one(value)
    assert codec.decode_one(data) == value
    parsed = fastavro.parse_schema(codec.schema)
    assert fastavro.schemaless_reader(io.BytesIO(data), parsed, None) == _json_form(value)
    return codec.schema


def _validates(schema: Dict[str, Any], instance: Any) -> bool:
    try:
        jsonschema.validate(instance, schema, cls=jsonschema.Draft202012Validator)
    except jsonschema.ValidationError:
        return False
    return True


def _refuses(tp: Any, *fragments: str, format: str = "json") -> str:
    with pytest.raises(TypeError) as info:
        polycodec.Codec(tp, format)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# ---------------------------------------------------------------------------------------------
# typing_extensions forms: every version

T = te.TypeVar("T")
N = te.TypeVar("N", bound=int)
D = te.TypeVar("D", default=int)
DK = te.TypeVar("DK", default=str)
DV = te.TypeVar("DV", default=List[DK])  # type: ignore[valid-type]

XIds = te.TypeAliasType("XIds", List[int])
XPair = te.TypeAliasType("XPair", tuple[T, T], type_params=(T,))
XTree = te.TypeAliasType("XTree", "dict[str, XTree] | int")
XGenericTree = te.TypeAliasType("XGenericTree", "dict[str, XGenericTree[T]] | T", type_params=(T,))
XDefaulted = te.TypeAliasType("XDefaulted", List[D], type_params=(D,))
XExpr = te.TypeAliasType("XExpr", "XAdd | XNum")
XComplex = te.TypeAliasType("XComplex", Dict[str, complex])
XUndefined = te.TypeAliasType("XUndefined", "list[NoSuchName]")


@dataclasses.dataclass
class XAdd:
    left: XExpr
    right: Optional[XExpr] = None
    kind: Literal["add"] = "add"


@dataclasses.dataclass
class XNum:
    value: int
    kind: Literal["num"] = "num"


@dataclasses.dataclass
class XRecord:
    ids: XIds
    many: List[XIds]
    maybe: Optional[XIds]
    scores: Dict[str, XIds]
    pair: XPair[int]
    pairs: List[XPair[str]]
    tree: XTree
    trees: Dict[str, Optional[XTree]]
    counts: XGenericTree[int]
    defaulted: XDefaulted


X_RECORD = XRecord(
    ids=[1, 2],
    many=[[3], []],
    maybe=None,
    scores={"a": [4]},
    pair=(5, 6),
    pairs=[("x", "y")],
    tree={"a": {"b": 7, "c": {}}},
    trees={"n": None, "t": 8, "d": {"e": 9}},
    counts={"x": {"y": 10}},
    defaulted=[11],
)


def test_type_alias_typing_extensions_in_every_format() -> None:
    _every_format(XRecord, X_RECORD)
    for bad in (b'{"ids": ["1"]}', b'{"ids": [1], "many": [[1.5]]}'):
        with pytest.raises(polycodec.ValidationError):
            polycodec.Codec(XRecord, "json").decode_one(bad)


def test_type_alias_typing_extensions_at_the_top_level() -> None:
    assert polycodec.decode_one(b"[1,2]", XIds) == [1, 2]
    assert polycodec.decode_one(b"[1,2]", XPair[int]) == (1, 2)
    assert polycodec.decode_one(b'{"a":{"b":1}}', XTree) == {"a": {"b": 1}}
    assert polycodec.encode_one({"a": {"b": 1}}, "msgpack", XTree) == msgpack.packb({"a": {"b": 1}})
    with pytest.raises(polycodec.ValidationError, match=re.escape('$["a"]["b"]')):
        polycodec.decode_one(b'{"a":{"b":"x"}}', XTree)


def test_type_alias_recursive_shares_one_node() -> None:
    nodes, root = compile_spec(XTree)
    kind, data = nodes[root]
    assert kind == "union"
    assert data["alias"]["name"] == "XTree"
    (mapping,) = [v for v in data["variants"] if nodes[v][0] == "dict"]
    assert nodes[mapping][1]["value"] == root


def test_type_alias_recursive_json_schema_uses_defs() -> None:
    schema = polycodec.json_schema(XRecord)
    defs = schema["$defs"]
    assert defs["XTree"] == {
        "title": "XTree",
        "anyOf": [
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/XTree"}},
            {"type": "integer"},
        ],
    }
    assert defs["XGenericTree_int"]["title"] == "XGenericTree[int]"
    properties = defs["XRecord"]["properties"]
    assert properties["tree"] == {"$ref": "#/$defs/XTree"}
    assert properties["counts"] == {"$ref": "#/$defs/XGenericTree_int"}
    # A plain alias is written out where it is used.
    assert properties["ids"] == {"type": "array", "items": {"type": "integer"}}
    assert _validates(schema, polycodec.to_builtins(X_RECORD))
    bad = polycodec.to_builtins(X_RECORD)
    bad["tree"] = {"a": {"b": "not an int"}}
    assert not _validates(schema, bad)


@dataclasses.dataclass
class XTreeField:
    tree: XTree


def test_type_alias_recursive_without_a_record_has_no_avro_form() -> None:
    _refuses(XTree, "recursive type alias XTree has no Avro form", format="avro")
    _refuses(XTreeField, "field `tree` of XTreeField", "XTree has no Avro form", format="avro")


def test_type_alias_recursive_through_dataclasses() -> None:
    value = XAdd(XNum(1), XAdd(XNum(2)))
    _every_format(XAdd, value, tagged=True)
    assert polycodec.encode_one(value).startswith(b'{"kind":"add","left":{"kind":"num",')
    schema = polycodec.json_schema(XExpr)
    assert schema["$ref"] == "#/$defs/XExpr"
    assert schema["$defs"]["XExpr"]["discriminator"]["propertyName"] == "kind"
    assert _validates(schema, polycodec.to_builtins(value, XExpr))
    assert not _validates(schema, {"kind": "add", "left": {"kind": "num", "value": "1"}})


XShort = te.TypeAliasType("XShort", Annotated[str, Meta(max_length=3)])
XMutualA = te.TypeAliasType("XMutualA", "list[XMutualB] | None")
XMutualB = te.TypeAliasType("XMutualB", "dict[str, XMutualA]")


@dataclasses.dataclass
class XConstrained:
    short: XShort
    small: Annotated[XTree, Meta(max_length=1)]
    a: XMutualA
    b: XMutualB


def test_type_alias_constrained_and_mutually_recursive() -> None:
    value = XConstrained("abc", {"x": {"y": 1, "z": 2}}, [{"k": None}, {"k": [{}]}], {"q": None})
    _every_format(XConstrained, value)
    codec = polycodec.Codec(XConstrained)
    for bad, where in (
        (b'{"short":"abcd","small":1,"a":null,"b":{}}', "$.short"),
        # The bound is on the field's own dict, not on the trees inside it.
        (b'{"short":"a","small":{"x":1,"y":2},"a":null,"b":{}}', "$.small"),
        (b'{"short":"a","small":1,"a":[{"k":1}],"b":{}}', '$.a[0]["k"]'),
    ):
        with pytest.raises(polycodec.ValidationError, match=re.escape(f"(at {where})")):
            codec.decode_one(bad)
    defs = polycodec.json_schema(XConstrained)["$defs"]
    assert defs["XMutualA"]["anyOf"][0]["items"] == {
        "type": "object",
        "additionalProperties": {"$ref": "#/$defs/XMutualA"},
    }
    assert defs["XConstrained"]["properties"]["b"] == {"$ref": "#/$defs/XMutualB"}
    assert defs["XConstrained"]["properties"]["small"]["anyOf"][0]["maxProperties"] == 1


@dataclasses.dataclass
class XExprs:
    first: XExpr
    rest: List[XExpr]


def test_type_alias_recursive_through_dataclasses_avro_against_fastavro() -> None:
    value = XExprs(XAdd(XNum(1), XAdd(XNum(2), XNum(3))), [XNum(4), XAdd(XNum(5))])
    schema = _avro_round_trip(XExprs, value)
    # The union is written out once, and by name wherever the recursion comes back.
    names = ["test_typing_current.XAdd", "test_typing_current.XNum"]
    assert schema["fields"][1]["type"] == {"type": "array", "items": names}


def test_type_alias_errors_name_the_alias_and_the_type() -> None:
    @dataclasses.dataclass
    class HasComplex:
        values: XComplex

    _refuses(HasComplex, "'complex'", "type alias 'XComplex = Dict[str, complex]'", "unsupported")
    _refuses(XUndefined, "XUndefined", "cannot be evaluated", "NoSuchName")


def test_type_alias_generic_takes_no_extra_arguments() -> None:
    _refuses(XPair[int, str], "takes 1 type arguments")  # type: ignore[misc]


def test_type_alias_defaults_and_unparametrised() -> None:
    assert polycodec.decode_one(b"[1]", XDefaulted) == [1]
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'["x"]', XDefaulted)
    # Unparametrised, a parameter without a default or bound is Any.
    assert polycodec.decode_one(b'["x",2]', XPair) == ("x", 2)


@dataclasses.dataclass
class Bounded(Generic[N]):
    item: N


@dataclasses.dataclass
class Defaulted(Generic[D]):
    item: D


@dataclasses.dataclass
class TwoDefaults(Generic[DK, DV]):
    key: DK
    value: DV


def test_unparametrised_generic_takes_the_bound_as_msgspec_does() -> None:
    for data in (b'{"item": 1}', b'{"item": "1"}', b'{"item": [1]}'):
        try:
            expected: Any = msgspec.json.decode(data, type=Bounded)
        except msgspec.ValidationError:
            expected = polycodec.ValidationError
        if expected is polycodec.ValidationError:
            with pytest.raises(polycodec.ValidationError, match=r"\$\.item"):
                polycodec.decode_one(data, Bounded)
        else:
            assert polycodec.decode_one(data, Bounded) == expected


def test_pep696_typevar_default_typing_extensions() -> None:
    assert polycodec.decode_one(b'{"item": 1}', Defaulted) == Defaulted(1)
    with pytest.raises(polycodec.ValidationError, match=r"\$\.item"):
        polycodec.decode_one(b'{"item": "1"}', Defaulted)
    # A default refers to an earlier parameter: value is list[key's type].
    assert polycodec.decode_one(b'{"key": "k", "value": ["v"]}', TwoDefaults) == TwoDefaults(
        "k", ["v"]
    )
    with pytest.raises(polycodec.ValidationError, match=r"\$\.value\[0\]"):
        polycodec.decode_one(b'{"key": "k", "value": [1]}', TwoDefaults)
    # Parametrised, the arguments win.
    assert polycodec.decode_one(b'{"item": "1"}', Defaulted[str]) == Defaulted("1")
    # The unparametrised class and the one given its defaults compile the same.
    assert polycodec.json_schema(Defaulted)["$defs"]["Defaulted"]["properties"] == (
        polycodec.json_schema(Defaulted[int])["$defs"]["Defaulted_int"]["properties"]
    )


class ReadOnlyMovie(te.TypedDict):
    title: te.ReadOnly[str]
    year: te.ReadOnly[te.NotRequired[int]]
    tags: te.NotRequired[te.ReadOnly[List[str]]]


class PlainMovie(te.TypedDict):
    title: str
    year: te.NotRequired[int]
    tags: te.NotRequired[List[str]]


def test_readonly_typeddict_keys_typing_extensions() -> None:
    movie: Any = {"title": "Alien", "year": 1979, "tags": ["space"]}
    _every_format(ReadOnlyMovie, movie)
    _every_format(ReadOnlyMovie, {"title": "Alien"})
    assert polycodec.encode_one(movie, "json", ReadOnlyMovie) == msgspec.json.encode(movie)
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'{"year": 1979}', ReadOnlyMovie)
    schema = polycodec.json_schema(ReadOnlyMovie)["$defs"]["ReadOnlyMovie"]
    plain = polycodec.json_schema(PlainMovie)["$defs"]["PlainMovie"]
    assert {k: v for k, v in schema.items() if k != "title"} == {
        k: v for k, v in plain.items() if k != "title"
    }


@pytest.mark.skipif(sys.version_info < (3, 13), reason="typing.ReadOnly is new in Python 3.13")
def test_readonly_typeddict_keys_typing() -> None:
    import typing

    movie_type: Any = TypedDict(
        "TypingReadOnlyMovie",
        {"title": typing.ReadOnly[str], "year": typing.ReadOnly[typing.NotRequired[int]]},
    )
    _every_format(movie_type, {"title": "Alien", "year": 1979})
    _every_format(movie_type, {"title": "Alien"})
    _refuses(movie_type, "field `year`", "may be absent", format="avro")


# ---------------------------------------------------------------------------------------------
# PEP 695 syntax: 3.12+


def _record(m: types.ModuleType) -> Any:
    return m.Record(
        ids=[1],
        many=[[2, 3], []],
        maybe=None,
        optional=[4],
        scores={"a": [5]},
        pair=(1, 2),
        pairs=[("a", "b")],
        named={"x": 1.5},
        tree={"a": {"b": 3, "c": {}}},
        trees={"x": None, "y": 4, "z": {"w": 5}},
        json={"a": [1, 2.5, None, True, "s", {"b": []}]},
        counts={"n": {"m": 1}},
    )


def test_pep695_type_alias_in_every_format(pep695: types.ModuleType) -> None:
    value = _record(pep695)
    data = _every_format(pep695.Record, value)
    assert data["json"] == msgspec.json.encode(value)
    assert data["msgpack"] == msgspec.msgpack.encode(value)


def test_pep695_type_alias_decodes_as_msgspec(pep695: types.ModuleType) -> None:
    value = pep695.Flat(
        ids=[1], many=[[2]], maybe=[3], scores={"s": []}, pair=(4, 5), pairs=[], named={"f": 6.0}
    )
    data = _every_format(pep695.Flat, value)
    assert msgspec.json.decode(data["json"], type=pep695.Flat) == value
    assert msgspec.msgpack.decode(data["msgpack"], type=pep695.Flat) == value
    for bad in (b'{"ids": [1.5]}', b'{"pair": [1, 2, 3]}', b'{"named": {"f": "x"}}'):
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(bad, type=pep695.Flat)
        with pytest.raises(polycodec.ValidationError):
            polycodec.decode_one(bad, pep695.Flat)


def test_pep695_type_alias_at_the_top_level(pep695: types.ModuleType) -> None:
    for tp, data in (
        (pep695.Ids, b"[1,2]"),
        (pep695.Pair[int], b"[1,2]"),
        (pep695.Named[list[int]], b'{"a":[1]}'),
        (pep695.Limited[int], b"[3]"),
        (pep695.Forest, b'[{"name":"a","children":[{"name":"b","children":[]}]}]'),
    ):
        value = polycodec.decode_one(data, tp)
        assert value == msgspec.json.decode(data, type=tp)
        assert polycodec.encode_one(value, "json", tp) == data
    assert polycodec.decode_one(b'{"a":{"b":1}}', pep695.Tree) == {"a": {"b": 1}}


def test_pep695_recursive_type_alias_json_schema(pep695: types.ModuleType) -> None:
    schema = polycodec.json_schema(pep695.Record)
    defs = schema["$defs"]
    assert sorted(defs) == ["GenericTree_int", "Json", "Record", "Tree"]
    assert defs["Json"]["anyOf"][-2:] == [
        {"type": "array", "items": {"$ref": "#/$defs/Json"}},
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/Json"}},
    ]
    assert defs["Record"]["properties"]["tree"] == {"$ref": "#/$defs/Tree"}
    instance = polycodec.to_builtins(_record(pep695))
    assert _validates(schema, instance)
    instance["json"] = {"a": [{"b": "text"}, 1.5, None]}
    assert _validates(schema, instance)
    instance["counts"] = {"n": {"m": "one"}}
    assert not _validates(schema, instance)


def test_pep695_recursive_type_alias_through_dataclasses(pep695: types.ModuleType) -> None:
    m = pep695
    value = m.WithExpr(m.Add(m.Num(1), m.Add(m.Num(2), m.Num(3))), [m.Num(4)])
    _every_format(m.WithExpr, value, tagged=True)
    _avro_round_trip(m.WithExpr, value)
    forest = [m.Node("a", [m.Node("b")])]
    assert polycodec.decode_one(
        polycodec.encode_one(forest, "avro", m.Forest), m.Forest, "avro"
    ) == (forest)
    schema = polycodec.json_schema(m.WithExpr)
    assert schema["$defs"]["Expr"]["oneOf"] == [{"$ref": "#/$defs/Add"}, {"$ref": "#/$defs/Num"}]
    assert _validates(schema, polycodec.to_builtins(value))


def test_pep695_recursive_type_alias_without_a_record_has_no_avro_form(
    pep695: types.ModuleType,
) -> None:
    _refuses(pep695.Tree, "recursive type alias Tree has no Avro form", format="avro")
    _refuses(pep695.Json, "recursive type alias Json has no Avro form", format="avro")


def test_pep695_type_alias_errors(pep695: types.ModuleType) -> None:
    m = pep695
    _refuses(m.HasComplex, "'complex'", "type alias 'Complex = list[complex]'", "unsupported")
    _refuses(m.Itself, "'Itself'", "one of its own alternatives")
    _refuses(m.KeyLoop, "dict keys", "type alias 'KeyLoop = dict[", "recursive type alias")
    _refuses(m.Growing[int], "nested in itself more than 32 times")
    _refuses(m.Undefined, "'Undefined'", "NoSuchName")


def test_pep695_generic_classes(pep695: types.ModuleType) -> None:
    m = pep695
    value = m.Generics(
        box=m.Box(1),
        boxes=m.Holder([m.Box("a")], ("b", "c"), m.Box("d")),
        row={"value": True, "values": [False]},
        point=m.Point(1.0, 2.5),
        limits=m.Limits(3),
    )
    data = _every_format(m.Generics, value)
    assert data["json"] == msgspec.json.encode(value)
    assert msgspec.json.decode(data["json"], type=m.Generics) == value
    with pytest.raises(polycodec.ValidationError, match=r"\$\.boxes\.boxes\[0\]\.item"):
        polycodec.decode_one(data["json"].replace(b'"a"', b"1"), m.Generics)
    schema = polycodec.json_schema(m.Generics)
    assert {"Box_int", "Box_str", "Holder_str", "Row_bool", "Point_float"} <= set(schema["$defs"])
    assert _validates(schema, polycodec.to_builtins(value))
    avro = _avro_round_trip(m.Box[m.Row[int]], m.Box({"value": 1, "values": [2]}))
    assert avro["name"] == "Box_Row_int"


def test_pep695_unparametrised_generic_takes_the_bound(pep695: types.ModuleType) -> None:
    for data in (b'{"item": 1}', b'{"item": "1"}'):
        try:
            expected: Any = msgspec.json.decode(data, type=pep695.Limits)
        except msgspec.ValidationError:
            with pytest.raises(polycodec.ValidationError, match=r"\$\.item"):
                polycodec.decode_one(data, pep695.Limits)
        else:
            assert polycodec.decode_one(data, pep695.Limits) == expected


# ---------------------------------------------------------------------------------------------
# PEP 696 syntax: 3.13+


def test_pep696_type_parameter_defaults(pep696: types.ModuleType) -> None:
    m = pep696
    value = m.UsesDefaults(m.Box(1), ("a", "b"), m.Labelled("k", ["v"]), m.Box("s"))
    data = _every_format(m.UsesDefaults, value)
    assert data["json"] == msgspec.json.encode(value)
    for field, bad in (
        ("box", b'{"item": "1"}'),
        ("pair", b"[1, 2]"),
        ("labelled", b'{"key": "k", "value": [1]}'),
    ):
        broken = json.loads(data["json"])
        broken[field] = json.loads(bad)
        with pytest.raises(polycodec.ValidationError, match=rf"\$\.{field}"):
            polycodec.decode_one(json.dumps(broken), m.UsesDefaults)
    assert polycodec.decode_one(b'{"item": 2}', m.Box) == m.Box(2)
    assert polycodec.decode_one(b'["x","y"]', m.Pair) == ("x", "y")


# ---------------------------------------------------------------------------------------------
# PEP 649/749 deferred annotations: 3.14+


def test_pep649_forward_reference_to_a_later_class(pep649: types.ModuleType) -> None:
    m = pep649
    order = m.Order(m.Customer("Ada"), [m.Line("x", 2)], m.Order(m.Customer("Bob"), []))
    _every_format(m.Order, order)
    _avro_round_trip(m.Order, order)
    shipment = {"order": order, "address": m.Address("Paris")}
    for fmt in ("json", "msgpack", "pickle"):
        codec = polycodec.Codec(m.Shipment, fmt)
        assert codec.decode_one(codec.encode_one(shipment)) == shipment
    span = m.Span(m.Line("a", 1), m.Line("b", 2))
    _every_format(m.Span, span)
    assert msgspec.json.decode(polycodec.encode_one(order), type=m.Order) == order


def test_pep649_local_class_defined_later(pep649: types.ModuleType) -> None:
    outer = pep649.local_models()
    value = polycodec.decode_one(b'{"inner": {"value": 1}}', outer)
    assert type(value) is outer and value.inner.value == 1


def test_pep649_undefined_name_is_a_clear_error(pep649: types.ModuleType) -> None:
    _refuses(pep649.Dangling, "cannot resolve the annotations of 'Dangling'", "NeverDefined")


EARLY = "@dataclass\nclass Early:\n    later: Later\n"
LATER = "@dataclass\nclass Later:\n    n: int\n"


def test_pep649_annotationlib_forward_refs_until_defined(
    pep649: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    import annotationlib

    module = types.ModuleType("pep649_scratch")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = vars(module)
    namespace["dataclass"] = dataclasses.dataclass
    # Compiled without this module's ``from __future__ import annotations``, which exec()
    # would otherwise pass on (and so make every annotation a string).
    exec(compile(EARLY, "<pep649>", "exec", dont_inherit=True), namespace)
    early = namespace["Early"]
    # Not evaluated when the class was made: asking for the values now fails, and the
    # forward-reference format hands back the name still to be resolved.
    with pytest.raises(NameError):
        annotationlib.get_annotations(early)
    pending = annotationlib.get_annotations(early, format=annotationlib.Format.FORWARDREF)
    assert isinstance(pending["later"], annotationlib.ForwardRef)
    assert pending["later"].__forward_arg__ == "Later"
    _refuses(early, "cannot resolve the annotations of 'Early'", "Later")
    exec(compile(LATER, "<pep649>", "exec", dont_inherit=True), namespace)
    assert annotationlib.get_annotations(early)["later"] is namespace["Later"]
    value = polycodec.decode_one(b'{"later": {"n": 1}}', early)
    assert value == early(namespace["Later"](1))


@dataclasses.dataclass
class Nest(Generic[T]):
    item: T
    inner: Optional[Nest[List[T]]] = None


def test_generic_class_nested_in_itself_forever_is_refused() -> None:
    _refuses(Nest[int], "'Nest'", "nested in itself more than 32 times")
