"""Unions of untagged records: Avro (and pickle) tell the alternatives apart on the wire (a
branch index, a class name), so `File | Dir` needs no tag field there, while JSON and
MessagePack keep refusing it. fastavro and apache avro are the oracles for the Avro bytes,
`pickle` for the pickles."""

from __future__ import annotations

import dataclasses
import io
import pickle
from typing import Any, Dict, Generic, List, Literal, NamedTuple, Optional, TypedDict, TypeVar
from typing import Union

import fastavro
import pytest

import polycodec
from polycodec._plan import compile_spec
from test_avro_support import (
    avro_container,
    avro_read,
    avro_records,
    avro_write,
    fastavro_container,
    fastavro_read,
    fastavro_records,
    fastavro_write,
)

NS = __name__  # the Avro namespace of the classes below


@dataclasses.dataclass
class File:
    name: str
    size: int


@dataclasses.dataclass
class Dir:
    name: str
    children: List[Union[File, Dir]] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Link:
    target: str


@dataclasses.dataclass
class Entry:
    path: str
    node: Optional[Union[File, Dir]] = None


class Point(NamedTuple):
    x: int
    y: int


class Label(NamedTuple):
    text: str


class Meta(TypedDict):
    owner: str


class Other(TypedDict):
    group: str


T = TypeVar("T")


@dataclasses.dataclass
class Box(Generic[T]):
    value: T


TREE = Dir(
    "root",
    [File("a.txt", 10), Dir("sub", [File("b.bin", 2**40), Dir("empty")]), File("c", 0)],
)


def file_dict(value: File) -> Dict[str, Any]:
    return {"name": value.name, "size": value.size}


def tree_dict(value: Union[File, Dir], named: bool) -> Any:
    """The reference libraries' form of a File/Dir value; ``named``: fastavro's tuple notation
    ``(record name, dict)``, which chooses (when writing) and reports (when reading) the branch."""
    if isinstance(value, File):
        out: Dict[str, Any] = file_dict(value)
        name = f"{NS}.File"
    else:
        out = {"name": value.name, "children": [tree_dict(c, named) for c in value.children]}
        name = f"{NS}.Dir"
    return (name, out) if named else out


def fastavro_read_named(schema: Any, data: bytes) -> Any:
    parsed = fastavro.parse_schema(schema)
    return fastavro.schemaless_reader(io.BytesIO(data), parsed, None, return_record_name=True)


# ---------------------------------------------------------------------------------------------
# The plan


# The type as the interpreter shows it (3.14 shows Union[A, B] as A | B), without "typing.".
UNION_SHOWN = repr(Union[File, Link]).replace("typing.", "")
JSON_REFUSAL = (
    f"polycodec cannot handle the type '{UNION_SHOWN}': "
    "the dataclasses File, Link cannot be told apart: they need a shared field annotated with "
    "Literal[...] (same wire name in each class) with distinct values, e.g. "
    "kind: Literal['a'] = 'a', or tags of their own: @polycodec.options(tag=True)"
)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_json_and_msgpack_still_refuse_untagged_records(fmt: str) -> None:
    with pytest.raises(TypeError) as info:
        polycodec.Codec(Union[File, Link], fmt)
    assert str(info.value) == JSON_REFUSAL
    with pytest.raises(TypeError, match="the dataclasses File, Dir cannot be told apart"):
        polycodec.Codec(Dir, fmt)  # through the recursive field, too
    with pytest.raises(TypeError, match="both array values in JSON"):
        polycodec.Codec(Union[Point, Label], fmt)
    with pytest.raises(TypeError, match="both object values in JSON"):
        polycodec.Codec(Union[File, Meta], fmt)


def test_compile_spec_format_argument() -> None:
    with pytest.raises(TypeError) as info:
        compile_spec(Union[File, Link])  # format="json" is the default
    assert str(info.value) == JSON_REFUSAL
    for fmt in ("avro", "pickle"):
        nodes, root = compile_spec(Optional[Union[File, Dir]], format=fmt)
        kind, data = nodes[root]
        assert kind == "union"
        kinds = [nodes[v][0] for v in data["variants"]]
        assert kinds == ["dataclass", "dataclass", "none"]
        assert [nodes[v][1]["cls"] for v in data["variants"][:2]] == [File, Dir]
        assert all(nodes[v][1]["tag"] is None for v in data["variants"][:2])


@dataclasses.dataclass
class Cat:
    lives: int
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    good: bool
    kind: Literal["dog"] = "dog"


def test_tagged_dataclasses_stay_a_tagged_union_in_avro() -> None:
    nodes, root = compile_spec(Union[Cat, Dog], format="avro")
    assert nodes[root][0] == "tagged_union"
    # A class without the tag turns the union into plain records, where JSON refuses it.
    nodes, root = compile_spec(Union[Cat, Dog, File], format="avro")
    assert [nodes[v][0] for v in nodes[root][1]["variants"]] == ["dataclass"] * 3
    with pytest.raises(TypeError, match="cannot be told apart"):
        compile_spec(Union[Cat, Dog, File])
    codec = polycodec.Codec(List[Union[Cat, Dog, File]], "avro")
    values = [Cat(9), Dog(True), File("f", 1)]
    assert codec.decode_one(codec.encode_one(values)) == values


@dataclasses.dataclass
class Alpha:
    kind: Literal["a"]
    sort: Literal["x"]


@dataclasses.dataclass
class Beta:
    kind: Literal["b"]
    sort: Literal["y"]


@dataclasses.dataclass
class Gamma:
    sort: Literal["z"]


@dataclasses.dataclass
class TwoTags:
    first: Union[Alpha, Beta]
    second: Union[Alpha, Gamma]


def test_record_tagged_by_another_field_elsewhere() -> None:
    # JSON can only tag Alpha|Gamma by `sort`, but Alpha is already tagged by `kind`.
    with pytest.raises(TypeError, match="Alpha is already tagged by another field"):
        compile_spec(TwoTags)
    # Avro keeps the second union as plain records.
    nodes, root = compile_spec(TwoTags, format="avro")
    fields = nodes[root][1]["fields"]
    assert nodes[fields[0]["type"]][0] == "tagged_union"
    assert nodes[fields[1]["type"]][0] == "union"
    codec = polycodec.Codec(TwoTags, "avro")
    for value in [TwoTags(Alpha("a", "x"), Gamma("z")), TwoTags(Beta("b", "y"), Alpha("a", "x"))]:
        assert codec.decode_one(codec.encode_one(value)) == value


@pytest.mark.parametrize(
    "tp, words",
    [
        (Union[Meta, Other], "the TypedDicts Meta and Other both have plain dict values"),
        (Union[Box[int], Box[str]], "Box appears twice (with different type arguments)"),
        (Union[File, Dict[str, int]], "File and dict are both object values"),
        (Union[Meta, Dict[str, int]], "Meta and dict are both object values"),
        (Union[Point, List[int]], "Point and list are both array values"),
    ],
)
@pytest.mark.parametrize("fmt", ["avro", "pickle"])
def test_unions_a_branched_format_still_refuses(tp: Any, words: str, fmt: str) -> None:
    with pytest.raises(TypeError) as info:
        polycodec.Codec(tp, fmt)
    assert words in str(info.value)


# ---------------------------------------------------------------------------------------------
# Avro: schema, round trips, interop


def test_schema_is_a_union_of_records() -> None:
    codec = polycodec.Codec(Entry, "avro")
    path, node = codec.schema["fields"]
    assert path == {"name": "path", "type": "string"}
    assert node["default"] is None
    null, file, dir_ = node["type"]
    assert null == "null"
    assert file == {
        "type": "record",
        "name": "File",
        "namespace": NS,
        "fields": [{"name": "name", "type": "string"}, {"name": "size", "type": "long"}],
    }
    assert dir_["type"] == "record" and dir_["name"] == "Dir"
    # Dir's children refer back to both records by name.
    children = dir_["fields"][1]
    assert children["type"] == {"type": "array", "items": [f"{NS}.File", f"{NS}.Dir"]}
    assert children["default"] == []

    schema = polycodec.Codec(Union[File, Link, None], "avro").schema
    assert schema[0] == "null"
    assert [b["name"] for b in schema[1:]] == ["File", "Link"]


def test_recursive_tree_round_trip_and_interop() -> None:
    codec = polycodec.Codec(Dir, "avro")
    schema = codec.schema
    data = codec.encode_one(TREE)
    assert codec.decode_one(data) == TREE
    # fastavro reports the branch of every child, and writes the same bytes when told them.
    assert fastavro_read_named(schema, data) == tree_dict(TREE, named=True)[1]
    assert fastavro_write(schema, tree_dict(TREE, named=True)[1]) == data
    # apache avro picks a branch by the fields a dict has (File and Dir differ).
    assert avro_read(schema, data) == tree_dict(TREE, named=False)
    assert avro_write(schema, tree_dict(TREE, named=False)) == data
    assert codec.decode_one(avro_write(schema, tree_dict(TREE, named=False))) == TREE

    trees = [TREE, Dir("lone"), Dir("x", [Dir("y", [Dir("z", [File("deep", 1)])])])]
    container = codec.encode_many(trees)
    assert codec.decode_many(container) == trees
    assert fastavro_records(container) == [tree_dict(t, named=False) for t in trees]
    assert avro_records(container) == [tree_dict(t, named=False) for t in trees]
    named = [tree_dict(t, named=True)[1] for t in trees]
    assert codec.decode_many(fastavro_container(schema, named, "deflate")) == trees
    plain = [tree_dict(t, named=False) for t in trees]
    assert codec.decode_many(avro_container(schema, plain)) == trees


@pytest.mark.parametrize(
    "tp",
    [Optional[Union[File, Dir]], Union[File, Dir, None], Union[None, Dir, File], Union[File, Dir]],
)
def test_optional_and_bare_unions_at_the_root(tp: Any) -> None:
    codec = polycodec.Codec(tp, "avro")
    schema = codec.schema
    allows_none = type(None) in tp.__args__
    values: List[Any] = [File("f", 1), Dir("d", [File("g", 2)])]
    if allows_none:
        values.append(None)
        assert schema[0] == "null"
    # A record first defined inside another appears as its full name.
    names = [b["name"] if isinstance(b, dict) else b.rpartition(".")[2] for b in schema]
    for value in values:
        data = codec.encode_one(value)
        assert codec.decode_one(data) == value
        if value is None:
            assert data == bytes([2 * names.index("null")])
            assert fastavro_read(schema, data) is None
            continue
        # The branch index is the position of the value's record in the schema's union.
        assert data[0] == 2 * names.index(type(value).__name__)
        name, record = tree_dict(value, named=True)
        assert fastavro_read_named(schema, data) == (name, record)
        assert fastavro_write(schema, (name, record)) == data
        assert avro_read(schema, data) == tree_dict(value, named=False)
        assert avro_write(schema, tree_dict(value, named=False)) == data


def test_optional_union_field() -> None:
    codec = polycodec.Codec(List[Entry], "avro")
    values = [Entry("a"), Entry("b", File("b", 3)), Entry("c", TREE)]
    data = codec.encode_one(values)
    assert codec.decode_one(data) == values
    back = fastavro_read_named(codec.schema, data)
    assert [v["node"] for v in back] == [None, tree_dict(File("b", 3), True), tree_dict(TREE, True)]
    assert avro_read(codec.schema, data) == [
        {"path": e.path, "node": None if e.node is None else tree_dict(e.node, False)}
        for e in values
    ]


def test_records_of_every_kind_in_one_union() -> None:
    tp = List[Union[File, Link, Point, Label, Meta, None]]
    codec = polycodec.Codec(tp, "avro")
    branches = codec.schema["items"]
    assert [b if isinstance(b, str) else b["name"] for b in branches] == [
        "null",
        "File",
        "Link",
        "Point",
        "Label",
        "Meta",
    ]
    values = [File("f", 1), Link("t"), Point(1, 2), Label("l"), {"owner": "me"}, None]
    data = codec.encode_one(values)
    back = codec.decode_one(data)
    assert back == values and [type(v) for v in back] == [type(v) for v in values]
    named = [
        ("test_record_unions.File", {"name": "f", "size": 1}),
        ("test_record_unions.Link", {"target": "t"}),
        ("test_record_unions.Point", {"x": 1, "y": 2}),
        ("test_record_unions.Label", {"text": "l"}),
        ("test_record_unions.Meta", {"owner": "me"}),
        None,
    ]
    assert fastavro_read_named(codec.schema, data) == named
    assert fastavro_write(codec.schema, named) == data


@dataclasses.dataclass
class BigFile(File):
    compressed: bool = False


@dataclasses.dataclass
class Mount(Dir, File):
    pass


@dataclasses.dataclass
class SameFile(File):
    """A subclass that adds no field."""


def test_subclass_instances_take_their_nearest_base_class() -> None:
    codec = polycodec.Codec(List[Union[File, Dir]], "avro")
    # As a plain File field does, a subclass that adds no field is written with its base
    # class's fields; one that adds fields is refused rather than written without them
    # (issue 38, item 2).
    plain = polycodec.Codec(File, "avro")
    assert plain.decode_one(plain.encode_one(SameFile("b", 1))) == File("b", 1)
    assert codec.decode_one(codec.encode_one([SameFile("b", 1)])) == [File("b", 1)]
    with pytest.raises(polycodec.EncodeError, match=r"no room for \(compressed\)"):
        plain.encode_one(BigFile("b", 1, True))
    with pytest.raises(polycodec.EncodeError, match=r"no room for \(compressed\)"):
        codec.encode_one([BigFile("b", 1, True)])
    # A subclass that is an alternative itself takes its own branch, before its base class.
    for tp in (List[Union[File, BigFile]], List[Union[BigFile, File]]):
        codec = polycodec.Codec(tp, "avro")
        values = [File("a", 1), BigFile("b", 2, True)]
        back = codec.decode_one(codec.encode_one(values))
        assert back == values and [type(v) for v in back] == [File, BigFile]
        pickled = polycodec.Codec(tp, "pickle")
        assert pickled.decode_one(pickled.encode_one(values)) == values
    # Mount's MRO is Mount, Dir, File: Dir is nearer, whatever the union's order (and Dir's
    # record has no room for Mount's `size`).
    mount = Mount(name="m", size=5, children=[])
    for tp in (List[Union[File, Dir]], List[Union[Dir, File]]):
        codec = polycodec.Codec(tp, "avro")
        with pytest.raises(polycodec.EncodeError, match=r"subclass of Dir .* \(size\)"):
            codec.encode_one([mount])


def test_codec_pickles_and_module_level_calls() -> None:
    codec = pickle.loads(pickle.dumps(polycodec.Codec(Dir, "avro")))
    assert codec.decode_one(codec.encode_one(TREE)) == TREE
    data = polycodec.encode_one(File("f", 1), "avro", type=Union[File, Dir])
    assert data == b"\x00\x02f\x02"
    assert polycodec.decode_one(data, Union[File, Dir], "avro") == File("f", 1)
    with pytest.raises(TypeError, match="cannot be told apart"):
        polycodec.encode_one(File("f", 1), type=Union[File, Link])


def test_values_of_no_alternative_are_encode_errors() -> None:
    codec = polycodec.Codec(Dir, "avro")
    for bad in ["x", None, {"name": "a", "size": 1}, Link("t")]:
        with pytest.raises(polycodec.EncodeError) as info:
            codec.encode_one(Dir("root", [File("a", 1), bad]))
        assert info.value.path == "$.children[1]"


def test_bad_branch_index_is_a_decode_error() -> None:
    codec = polycodec.Codec(Union[File, Dir], "avro")
    with pytest.raises(polycodec.DecodeError, match="union"):
        codec.decode_one(b"\x04\x02a")  # branch 2 of 2


# ---------------------------------------------------------------------------------------------
# Avro: schema resolution and binding


def _record(name: str, fields: List[Any], **extra: Any) -> Dict[str, Any]:
    return {"type": "record", "name": name, "fields": fields, **extra}


FILE_FIELDS = [{"name": "name", "type": "string"}, {"name": "size", "type": "long"}]


def test_writer_schema_with_branches_in_another_order() -> None:
    codec = polycodec.Codec(Entry, "avro")
    reader = codec.schema
    dir_fields = [
        {"name": "name", "type": "string"},
        {
            "name": "children",
            "type": {"type": "array", "items": ["Dir", _record("File", FILE_FIELDS)]},
        },
    ]
    writer = _record(
        "Entry",
        [
            {"name": "path", "type": "string"},
            # File is defined inside Dir, and the branches come in another order.
            {"name": "node", "type": [_record("Dir", dir_fields), "File", "null"]},
        ],
        namespace=NS,
    )
    datum = {
        "path": "p",
        "node": (f"{NS}.Dir", {"name": "d", "children": [(f"{NS}.File", file_dict(File("f", 7)))]}),
    }
    data = fastavro_write(writer, datum)
    assert data != codec.encode_one(Entry("p", Dir("d", [File("f", 7)])))  # other indices
    expected = Entry("p", Dir("d", [File("f", 7)]))
    assert codec.decode_one(data, writer_schema=writer) == expected
    oracle = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )
    assert oracle == {"path": "p", "node": {"name": "d", "children": [file_dict(File("f", 7))]}}
    for node in [None, File("x", 1)]:
        datum = {"path": "q", "node": None if node is None else (f"{NS}.File", file_dict(node))}
        back = codec.decode_one(fastavro_write(writer, datum), writer_schema=writer)
        assert back == Entry("q", node)
    # A container written with that schema resolves the same way.
    blob = fastavro_container(
        writer, [{"path": "z", "node": (f"{NS}.File", file_dict(File("z", 2)))}]
    )
    assert codec.decode_many(blob) == [Entry("z", File("z", 2))]


def test_writer_records_matched_by_reader_aliases() -> None:
    reader = [
        "null",
        _record("com.example.Blob", FILE_FIELDS, aliases=["OldFile"]),
        _record("com.example.Link", [{"name": "target", "type": "string"}], aliases=["Ref"]),
    ]
    codec = polycodec.Codec(Union[File, Link, None], "avro", schema=reader)
    writer = [
        _record("legacy.Ref", [{"name": "target", "type": "string"}]),
        _record("legacy.OldFile", FILE_FIELDS),
        "null",
    ]
    data = fastavro_write(writer, ("legacy.OldFile", {"name": "n", "size": 5}))
    assert codec.decode_one(data, writer_schema=writer) == File("n", 5)
    data = fastavro_write(writer, ("legacy.Ref", {"target": "t"}))
    assert codec.decode_one(data, writer_schema=writer) == Link("t")


def test_writer_record_the_reader_union_lacks() -> None:
    codec = polycodec.Codec(Union[File, Dir], "avro")
    writer = [_record("Unknown", [{"name": "x", "type": "long"}]), _record("File", FILE_FIELDS)]
    ok = fastavro_write(writer, ("File", {"name": "f", "size": 1}))
    assert codec.decode_one(ok, writer_schema=writer) == File("f", 1)
    bad = fastavro_write(writer, ("Unknown", {"x": 1}))
    with pytest.raises(polycodec.DecodeError, match="matches no branch of the reader union"):
        codec.decode_one(bad, writer_schema=writer)


SMALL_FILE = _record("File", [{"name": "size", "type": "int"}, {"name": "name", "type": "string"}])


def test_bound_schema_with_branches_in_another_order() -> None:
    schema = _record(
        "Entry",
        [
            {"name": "path", "type": "string"},
            {
                "name": "node",
                "type": [
                    _record(
                        "Dir",
                        [
                            {"name": "name", "type": "string"},
                            {
                                "name": "children",
                                "type": {"type": "array", "items": [SMALL_FILE, "Dir"]},
                            },
                        ],
                    ),
                    "null",
                    "File",
                ],
            },
        ],
    )
    codec = polycodec.Codec(Entry, "avro", schema=schema)
    value = Entry("p", Dir("d", [File("f", 3), Dir("e")]))
    data = codec.encode_one(value)
    assert codec.decode_one(data) == value
    expected = {
        "path": "p",
        "node": (
            "Dir",
            {
                "name": "d",
                "children": [
                    ("File", {"size": 3, "name": "f"}),
                    ("Dir", {"name": "e", "children": []}),
                ],
            },
        ),
    }
    assert fastavro_read_named(schema, data) == expected
    assert fastavro_write(schema, expected) == data
    for node in [None, File("x", 1)]:
        assert codec.decode_one(codec.encode_one(Entry("q", node))) == Entry("q", node)
    assert codec.encode_one(Entry("q", None)) == b"\x02q\x02"


def test_bound_record_without_a_matching_name_takes_the_last_free_branch() -> None:
    # `Dir` is found by name first; `File` then takes the one record branch left, whatever the
    # order of the union's alternatives.
    schema = [
        _record("Blob", FILE_FIELDS),
        _record(
            "Dir",
            [
                {"name": "name", "type": "string"},
                {"name": "children", "type": {"type": "array", "items": ["Blob", "Dir"]}},
            ],
        ),
    ]
    codec = polycodec.Codec(Union[File, Dir], "avro", schema=schema)
    assert codec.encode_one(File("f", 1)) == b"\x00\x02f\x02"
    assert codec.decode_one(codec.encode_one(TREE)) == TREE
    with pytest.raises(TypeError, match="no branch of the schema union takes dataclass"):
        polycodec.Codec(Union[File, Link], "avro", schema=schema[:1] + [_record("X", [])])


# ---------------------------------------------------------------------------------------------
# Pickle: the decoder tells records apart by the pickled class name


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_round_trips_and_interop(protocol: int) -> None:
    codec = polycodec.Codec(Dir, "pickle", protocol=protocol)
    data = codec.encode_one(TREE)
    assert pickle.loads(data) == TREE
    assert codec.decode_one(data) == TREE
    assert codec.decode_one(pickle.dumps(TREE, protocol=protocol)) == TREE

    mixed = polycodec.Codec(
        List[Optional[Union[File, Link, Point, Label, Meta]]], "pickle", protocol=protocol
    )
    values = [File("f", 1), Link("t"), Point(1, 2), Label("l"), {"owner": "me"}, None]
    for data in (mixed.encode_one(values), pickle.dumps(values, protocol=protocol)):
        back = mixed.decode_one(data)
        assert back == values and [type(v) for v in back] == [type(v) for v in values]
    assert pickle.loads(mixed.encode_one(values)) == values


def test_pickle_refuses_a_class_outside_the_union() -> None:
    codec = polycodec.Codec(Union[File, Dir], "pickle")
    with pytest.raises(polycodec.DecodeError, match="Link"):
        codec.decode_one(pickle.dumps(Link("t")))
