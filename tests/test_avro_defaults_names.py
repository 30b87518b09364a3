"""Avro schema derivation, issue 14: field defaults that must (or must not) go into the schema
(cases 2 and 3), and the names of records and enums (case 11)."""

import dataclasses
import datetime
import decimal
import enum
import io
import json
import uuid
import warnings
from typing import (
    Annotated,
    Any,
    ClassVar,
    Generic,
    NamedTuple,
    Optional,
    TypedDict,
    TypeVar,
)

import avro.io
import fastavro
import pytest

import polycodec
from polycodec import _avro
from test_avro_support import _avro_schema, fastavro_write

# --- case 2: default_factory results frozen into Avro schemas ---------------------------------


@dataclasses.dataclass
class Plain:
    street: str = ""
    zip: Optional[str] = None
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class WithRandom:
    label: str = "x"
    ident: uuid.UUID = dataclasses.field(default_factory=uuid.uuid4)


@dataclasses.dataclass
class Restless:
    n: int = 0

    def __post_init__(self) -> None:
        self.n = uuid.uuid4().int % 1000 + 1


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


@dataclasses.dataclass
class Factories:
    name: str
    ident: uuid.UUID = dataclasses.field(default_factory=uuid.uuid4)
    at: datetime.datetime = dataclasses.field(default_factory=_now)
    made: list[int] = dataclasses.field(default_factory=lambda: [1, 2])
    items: list[int] = dataclasses.field(default_factory=list)
    table: dict[str, int] = dataclasses.field(default_factory=dict)
    members: set[str] = dataclasses.field(default_factory=set)
    frozen: frozenset[str] = dataclasses.field(default_factory=frozenset)
    row: tuple[int, ...] = dataclasses.field(default_factory=tuple)
    plain: Plain = dataclasses.field(default_factory=Plain)
    random: WithRandom = dataclasses.field(default_factory=WithRandom)
    restless: Restless = dataclasses.field(default_factory=Restless)


def _defaults(schema: Any) -> dict[str, Any]:
    return {f["name"]: f["default"] for f in schema["fields"] if "default" in f}


def _fingerprint(schema: Any) -> int:
    return _avro.fingerprint(_avro.canonical_form(_avro.parse_schema(schema)).encode())


def test_default_factory_not_frozen_into_schema() -> None:
    first = polycodec.Codec(Factories, "avro").schema
    second = polycodec.Codec(Factories, "avro").schema
    assert json.dumps(first) == json.dumps(second)
    assert _fingerprint(first) == _fingerprint(second)
    assert _defaults(first) == {
        "items": [],
        "table": {},
        "members": [],
        "frozen": [],
        "row": [],
        "plain": {"street": "", "zip": None, "tags": []},
    }
    fastavro.parse_schema(first)
    _avro_schema(first)
    # Fields without a schema default still get their factory's value when polycodec reads a
    # writer that lacks them.
    old = {"type": "record", "name": "Factories", "fields": [{"name": "name", "type": "string"}]}
    codec = polycodec.Codec(Factories, "avro")
    value = codec.decode_one(fastavro_write(old, {"name": "n"}), writer_schema=old)
    assert value.name == "n" and isinstance(value.ident, uuid.UUID) and value.made == [1, 2]
    # A peer that has only the schema cannot fill them: fastavro refuses, as it should.
    with pytest.raises(fastavro.read.SchemaResolutionError):
        fastavro.schemaless_reader(
            io.BytesIO(fastavro_write(old, {"name": "n"})),
            fastavro.parse_schema(old),
            fastavro.parse_schema(first),
        )


def test_default_factory_module_level_schema_is_stable() -> None:
    texts = {
        json.dumps(polycodec.Codec(Factories, "avro").schema),
        json.dumps(polycodec.Codec(Optional[Factories], "avro").schema[1]),
    }
    assert len(texts) == 1


# --- case 3: record-valued defaults ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Address:
    street: str = "main"
    number: int = 1
    note: Optional[str] = None


@dataclasses.dataclass
class PersonV1:
    name: str


@dataclasses.dataclass
class PersonV2:
    name: str
    addr: Address = dataclasses.field(default_factory=Address)
    home: Address = Address("home", 2)


@dataclasses.dataclass
class OddPerson:
    # No record default can say "x" here: Address.note's union has "null" first.
    odd: Address = Address("odd", 3, "x")


@dataclasses.dataclass
class Nest:
    addr: Address = dataclasses.field(default_factory=Address)
    plain: Plain = dataclasses.field(default_factory=Plain)


@dataclasses.dataclass
class Outer:
    nest: Nest = dataclasses.field(default_factory=Nest)
    later: PersonV2 = dataclasses.field(default_factory=lambda: PersonV2("x"))


class Point(NamedTuple):
    x: int = 0
    y: int = 0


@dataclasses.dataclass
class WithTuple:
    point: Point = dataclasses.field(default_factory=Point)


def _rename(schema: dict[str, Any], name: str) -> dict[str, Any]:
    return {**schema, "name": name}


def test_record_default_written() -> None:
    reader = polycodec.Codec(PersonV2, "avro").schema
    fields = {f["name"]: f for f in reader["fields"]}
    assert fields["addr"]["default"] == {"street": "main", "number": 1, "note": None}
    assert fields["home"]["default"] == {"street": "home", "number": 2, "note": None}
    assert "default" not in polycodec.Codec(OddPerson, "avro").schema["fields"][0]
    # Old data, written without the field, read with polycodec's reader schema.
    writer = _rename(polycodec.Codec(PersonV1, "avro").schema, "PersonV2")
    data = polycodec.Codec(PersonV1, "avro").encode_one(PersonV1("ann"))
    read = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )
    assert read == {
        "name": "ann",
        "addr": {"street": "main", "number": 1, "note": None},
        "home": {"street": "home", "number": 2, "note": None},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        apache = avro.io.DatumReader(_avro_schema(writer), _avro_schema(reader)).read(
            avro.io.BinaryDecoder(io.BytesIO(data))
        )
    assert apache == read
    # A container file of old records, read with the new reader schema.
    blob = fastavro_container_of(writer, [{"name": "a"}, {"name": "b"}])
    rows = list(fastavro.reader(io.BytesIO(blob), reader_schema=fastavro.parse_schema(reader)))
    assert [r["addr"] for r in rows] == [{"street": "main", "number": 1, "note": None}] * 2
    # polycodec's own resolution fills the field from the dataclass default.
    codec = polycodec.Codec(PersonV2, "avro")
    assert codec.decode_one(data, writer_schema=writer) == PersonV2("ann")
    assert codec.decode_many(blob) == [PersonV2("a"), PersonV2("b")]


def fastavro_container_of(schema: Any, records: list[Any]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records)
    return out.getvalue()


def test_record_default_nested_and_namedtuple() -> None:
    schema = polycodec.Codec(Outer, "avro").schema
    assert schema["fields"][0]["default"] == {
        "addr": {"street": "main", "number": 1, "note": None},
        "plain": {"street": "", "zip": None, "tags": []},
    }
    # A lambda is no constant factory (it could return anything), so no default.
    assert "default" not in schema["fields"][1]
    fastavro.parse_schema(schema)
    empty = {"type": "record", "name": "Outer", "fields": []}
    read = fastavro.schemaless_reader(
        io.BytesIO(b"\x02x"),
        fastavro.parse_schema({**empty, "fields": [{"name": "y", "type": "string"}]}),
        fastavro.parse_schema({**schema, "fields": schema["fields"][:1]}),
    )
    assert read["nest"]["addr"]["street"] == "main"
    point = polycodec.Codec(WithTuple, "avro").schema["fields"][0]
    assert point["default"] == {"x": 0, "y": 0}
    empty = {"type": "record", "name": "WithTuple", "fields": []}
    codec = polycodec.Codec(WithTuple, "avro")
    assert codec.decode_one(b"", writer_schema=empty) == WithTuple()
    read = fastavro.schemaless_reader(
        io.BytesIO(b""), fastavro.parse_schema(empty), fastavro.parse_schema(codec.schema)
    )
    assert read == {"point": {"x": 0, "y": 0}}


# --- case 11: Avro names ------------------------------------------------------------------------

T = TypeVar("T")


@dataclasses.dataclass
class Box(Generic[T]):
    item: T


@dataclasses.dataclass
class IntFirst:
    a: Box[int]
    b: Box[str]


@dataclasses.dataclass
class StrFirst:
    b: Box[str]
    a: Box[int]
    c: Box[list[Optional[int]]]
    d: Box[Box[int]]


def test_avro_generic_names_from_arguments() -> None:
    one = polycodec.Codec(IntFirst, "avro").schema
    two = polycodec.Codec(StrFirst, "avro").schema
    names = lambda schema: {f["name"]: f["type"]["name"] for f in schema["fields"]}  # noqa: E731
    assert names(one) == {"a": "Box_int", "b": "Box_str"}
    assert names(two) == {
        "a": "Box_int",
        "b": "Box_str",
        "c": "Box_list_int_or_null",
        "d": "Box_Box_int",
    }
    assert all(f["type"].get("namespace") == __name__ for f in two["fields"])
    fastavro.parse_schema(two)
    # A Box[int] read back through a schema naming it Box_int in either order.
    codec = polycodec.Codec(StrFirst, "avro")
    value = StrFirst(Box("x"), Box(1), Box([1, None]), Box(Box(2)))
    assert codec.decode_one(codec.encode_one(value)) == value


class Color(enum.Enum):
    __avro__ = {"name": "Colour", "namespace": "com.example.kinds", "doc": "a colour"}
    RED = "r"
    BLUE = "b"


@dataclasses.dataclass
class Piece:
    __avro__: ClassVar[polycodec.AvroName] = {
        "name": "Piece",
        "namespace": "com.example",
        "doc": "A piece of a file.",
        "aliases": ["Chunk", "com.old.Part"],
    }
    name: str
    color: Color = Color.RED


@dataclasses.dataclass
class SubPiece(Piece):
    extra: int = 0


def test_avro_names_declared() -> None:
    schema = polycodec.Codec(Piece, "avro").schema
    assert (schema["name"], schema["namespace"], schema["doc"]) == (
        "Piece",
        "com.example",
        "A piece of a file.",
    )
    assert schema["aliases"] == ["Chunk", "com.old.Part"]
    color = schema["fields"][1]["type"]
    assert (color["name"], color["namespace"], color["doc"]) == (
        "Colour",
        "com.example.kinds",
        "a colour",
    )
    assert list(Color) == [Color.RED, Color.BLUE]  # __avro__ is no enum member
    fastavro.parse_schema(schema)
    _avro_schema(schema)
    # Not inherited: a subclass is another type with its module-derived name.
    sub = polycodec.Codec(SubPiece, "avro").schema
    assert (sub["name"], sub["namespace"]) == ("SubPiece", __name__)
    # Data written under an old name resolves through the aliases, in fastavro and polycodec.
    old = {
        "type": "record",
        "name": "Part",
        "namespace": "com.old",
        "fields": [{"name": "name", "type": "string"}],
    }
    data = fastavro_write(old, {"name": "p"})
    read = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(old), fastavro.parse_schema(schema)
    )
    assert read == {"name": "p", "color": "RED"}
    codec = polycodec.Codec(Piece, "avro")
    assert codec.decode_one(data, writer_schema=old) == Piece("p")


def test_avro_names_bind_user_schema_by_declared_name() -> None:
    @dataclasses.dataclass
    class Cat:
        __avro__ = {"name": "Feline", "namespace": "zoo"}
        name: str

    @dataclasses.dataclass
    class Dog:
        __avro__ = {"name": "Canine", "namespace": "zoo"}
        name: str

    record = lambda name: {  # noqa: E731
        "type": "record",
        "name": name,
        "namespace": "zoo",
        "fields": [{"name": "name", "type": "string"}],
    }
    schema = [record("Canine"), record("Feline")]
    codec = polycodec.Codec(Cat | Dog, "avro", schema=schema)
    assert codec.encode_one(Dog("d"))[:1] == b"\x00"
    assert codec.encode_one(Cat("c"))[:1] == b"\x02"
    assert fastavro.schemaless_reader(
        io.BytesIO(codec.encode_one(Cat("c"))),
        fastavro.parse_schema(schema),
        None,
        return_record_name=True,
    ) == ("zoo.Feline", {"name": "c"})


def test_avro_names_main_module_has_no_namespace() -> None:
    @dataclasses.dataclass
    class Script:
        x: int

    @dataclasses.dataclass
    class Holder:
        script: Script

    Script.__module__ = "__main__"
    Script.__qualname__ = "Script"
    Holder.__module__ = "__main__"
    Holder.__qualname__ = "Holder"
    schema = polycodec.Codec(Holder, "avro").schema
    assert "namespace" not in schema and "namespace" not in schema["fields"][0]["type"]
    assert schema["name"] == "Holder" and schema["fields"][0]["type"]["name"] == "Script"


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"name": "a-b"}, "not a valid Avro name"),
        ({"name": "1x"}, "not a valid Avro name"),
        ({"name": ""}, "not a valid Avro name"),
        ({"name": "a.b"}, "not a valid Avro name"),
        ({"namespace": "a..b"}, "not a valid Avro namespace"),
        ({"namespace": "a.b-c"}, "not a valid Avro namespace"),
        ({"namespace": 3}, "not a valid Avro namespace"),
        ({"aliases": ["x y"]}, "aliases"),
        ({"aliases": "Old"}, "aliases"),
        ({"doc": 1}, "doc must be a str"),
        ({"nam": "X"}, "unknown keys"),
        ("Name", "must be a dict"),
    ],
)
def test_avro_names_invalid_refused(settings: Any, message: str) -> None:
    @dataclasses.dataclass
    class Bad:
        x: int

    Bad.__avro__ = settings  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match=message):
        polycodec.Codec(Bad, "avro")
    with pytest.raises(TypeError, match=message):
        polycodec.Codec(Optional[list[Bad]], "avro")


def test_avro_names_declared_twice_refused() -> None:
    @dataclasses.dataclass
    class A:
        __avro__ = {"name": "Same", "namespace": "n"}
        x: int

    @dataclasses.dataclass
    class B:
        __avro__ = {"name": "Same", "namespace": "n"}
        y: str

    @dataclasses.dataclass
    class Both:
        a: A
        b: B

    with pytest.raises(TypeError, match="'n.Same'.*already the name of another type"):
        polycodec.Codec(Both, "avro")


def test_avro_names_typeddict_declared() -> None:
    class Row(TypedDict):
        x: int

    Row.__avro__ = {"name": "Row", "namespace": ""}  # type: ignore[attr-defined]
    schema = polycodec.Codec(Row, "avro").schema
    assert schema == {"type": "record", "name": "Row", "fields": [{"name": "x", "type": "long"}]}


def test_avro_names_namedtuple_declared() -> None:
    class Pair(NamedTuple):
        a: int
        b: int

    setattr(Pair, "__avro__", {"name": "Couple", "namespace": "com.example", "aliases": ["P"]})
    codec = polycodec.Codec(Pair, "avro")
    assert codec.schema["name"] == "Couple" and codec.schema["aliases"] == ["P"]
    assert codec.decode_one(codec.encode_one(Pair(1, 2))) == Pair(1, 2)


def test_avro_names_aliases_match_union_branches() -> None:
    @dataclasses.dataclass
    class Cat:
        __avro__: ClassVar[polycodec.AvroName] = {"name": "Cat", "aliases": ["OldCat"]}
        name: str

    @dataclasses.dataclass
    class Dog:
        name: str

    record = lambda name: {  # noqa: E731
        "type": "record",
        "name": name,
        "fields": [{"name": "name", "type": "string"}],
    }
    writer = [record("Dog"), record("OldCat")]
    data = fastavro_write(writer, ("OldCat", {"name": "c"}))
    codec = polycodec.Codec(Dog | Cat, "avro")
    assert codec.decode_one(data, writer_schema=writer) == Cat("c")
    read = fastavro.schemaless_reader(
        io.BytesIO(data),
        fastavro.parse_schema(writer),
        fastavro.parse_schema(codec.schema),
        return_record_name=True,
    )
    assert read[0].endswith(".Cat") and read[1] == {"name": "c"}


# --- issue 38, item 1: a Decimal field's default reaches the derived schema -------------------

Money = Annotated[decimal.Decimal, polycodec.Meta(max_digits=6, decimal_places=2)]


@dataclasses.dataclass
class InvoiceV1:
    id: int


@dataclasses.dataclass
class InvoiceV2:
    id: int
    fee: Money = decimal.Decimal("0.50")
    rebate: Optional[Money] = decimal.Decimal("1.00")
    credit: Money = decimal.Decimal("-1.28")  # two bytes, ff 80, as the encoder writes it
    whole: Money = decimal.Decimal("3")  # fewer places than the scale: 300 unscaled
    exact: Money = decimal.Decimal("9999.990")  # a trailing zero past the scale is no place


@dataclasses.dataclass
class InvoiceOdd:
    """Defaults a decimal(6, 2) cannot hold have no schema default (the field stays required
    in the schema, as any default the schema cannot carry)."""

    places: Money = decimal.Decimal("0.125")
    digits: Money = decimal.Decimal("12345.6")
    nan: Money = decimal.Decimal("NaN")


def _unscaled(default: Any) -> int:
    """A bytes default as the spec reads it (one byte per code point), as the unscaled int."""
    raw = default.encode("latin-1") if isinstance(default, str) else default
    return int.from_bytes(raw, "big", signed=True)


def test_issue38_item1_decimal_defaults_reach_the_derived_schema() -> None:
    # `fee: Annotated[Decimal, Meta(max_digits=6, decimal_places=2)] = Decimal("0.50")` derived
    # a field without "default": fastavro could not read data written before the field
    # existed ("No default value for field fee"), and a registry's backward check refused the
    # schema. The default is now the unscaled value's bytes, the form the Avro spec gives a
    # bytes default, equal to what the encoder writes for the same value.
    codec = polycodec.Codec(InvoiceV2, "avro")
    reader = codec.schema
    defaults = {f["name"]: f.get("default") for f in reader["fields"]}
    assert defaults == {
        "id": None,
        "fee": "2",
        "rebate": "d",
        "credit": "\xff\x80",
        "whole": "\x01,",
        "exact": "\x0f\x42\x3f",
    }
    assert reader["fields"][2]["type"][0]["logicalType"] == "decimal"  # the default's branch
    for name, value in [("fee", "0.50"), ("credit", "-1.28"), ("whole", "3"), ("exact", "9999.99")]:
        # The bytes the encoder writes for the value: a long length, then the default's bytes.
        alone = polycodec.Codec(Money, "avro").encode_one(decimal.Decimal(value))
        assert alone[1:] == defaults[name].encode("latin-1"), name
    # Data written before the fields existed, read with the derived schema as the reader's.
    writer = _rename(polycodec.Codec(InvoiceV1, "avro").schema, "InvoiceV2")
    data = polycodec.Codec(InvoiceV1, "avro").encode_one(InvoiceV1(7))
    read = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(reader)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        apache = avro.io.DatumReader(_avro_schema(writer), _avro_schema(reader)).read(
            avro.io.BinaryDecoder(io.BytesIO(data))
        )
    expected = {"fee": 50, "rebate": 100, "credit": -128, "whole": 300, "exact": 999999}
    # fastavro hands the default over as the schema's text, apache avro as bytes: the same
    # unscaled values either way (apache avro's Python reader encodes the text as UTF-8, not
    # one byte per code point as the spec says, so 0xff arrives as c3 bf: undone here).
    assert {k: _unscaled(v) for k, v in read.items() if k != "id"} == expected
    apache_text = {k: v.decode("utf-8") for k, v in apache.items() if k != "id"}
    assert {k: _unscaled(v) for k, v in apache_text.items()} == expected
    # The schema layer checks every default against its field's type (as a registry does).
    polycodec._avro.parse_schema(reader)
    assert codec.decode_one(data, writer_schema=writer) == InvoiceV2(7)
    # Defaults the field cannot carry stay out, as any default the schema cannot hold.
    odd = polycodec.Codec(InvoiceOdd, "avro").schema
    assert [("default" in f) for f in odd["fields"]] == [False, False, False]
