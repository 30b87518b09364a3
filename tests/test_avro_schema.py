"""Avro schemas: derivation from classes, refusals at Codec() time, canonical form and
fingerprints (against the Avro project's vectors and fastavro), parsing, and `schema=` binding."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import io
import json
import re
import uuid
from decimal import Decimal
from typing import Annotated, Any, Dict, Generic, List, Literal, Optional, Tuple, TypedDict
from typing import TypeVar, Union

import fastavro
import pytest
from typing_extensions import NotRequired

import polycodec
from polycodec import Meta, _avro
from test_avro_support import CONFORMANCE, fastavro_read, fastavro_write

SCHEMA_TESTS = CONFORMANCE / "share" / "test" / "data" / "schema-tests.txt"


def _schema_cases() -> list[tuple[str, str, str, Optional[int]]]:
    text = SCHEMA_TESTS.read_text()
    cases = []
    parts = re.split(r"^// (\d+)\s*$", text, flags=re.M)
    for number, body in zip(parts[1::2], parts[2::2]):
        fields: dict[str, str] = {}
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            match = re.match(r"^<<(\w+)(?: (.*))?$", line)
            if match:
                key, rest = match.group(1), match.group(2)
                if rest is None:  # heredoc up to a line with the key's name
                    end = lines.index(key.upper(), i + 1)
                    fields[key] = "\n".join(lines[i + 1 : end])
                    i = end
                else:
                    fields[key] = rest
            i += 1
        fp = fields.get("fingerprint")
        cases.append((number, fields["INPUT"], fields["canonical"], int(fp) if fp else None))
    return cases


CASES = _schema_cases()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_canonical_form_and_fingerprint_vectors(case: tuple[str, str, str, Optional[int]]) -> None:
    _, source, canonical, fingerprint = case
    parsed = _avro.parse_schema(source)
    assert _avro.canonical_form(parsed) == canonical
    if fingerprint is not None:
        assert _avro.fingerprint(canonical.encode()) == fingerprint % 2**64


def _files(folder: str) -> list[Any]:
    path = CONFORMANCE / folder
    return sorted(p for p in path.iterdir() if p.is_file())


def test_suite_is_present() -> None:
    # The vendored folders are complete (tests/data/avro/SOURCE.md): a lost file is a failure.
    assert len(CASES) == 34 and sum(case[3] is not None for case in CASES) == 26
    assert len(_files("lang/c/tests/schema_tests/pass")) == 28
    assert len(_files("lang/c/tests/schema_tests/fail")) == 12
    assert len(_files("lang/c++/jsonschemas")) == 35


@pytest.mark.parametrize("path", _files("lang/c/tests/schema_tests/pass"), ids=lambda p: p.name)
def test_conformance_schemas_parse(path: Any) -> None:
    parsed = _avro.parse_schema(path.read_text())
    form = _avro.canonical_form(parsed)
    assert form == fastavro.schema.to_parsing_canonical_form(
        fastavro.parse_schema(json.loads(path.read_text()))
    )


@pytest.mark.parametrize("path", _files("lang/c/tests/schema_tests/fail"), ids=lambda p: p.name)
def test_conformance_bad_schemas_are_refused(path: Any) -> None:
    with pytest.raises(ValueError):
        _avro.parse_schema(path.read_text())


@pytest.mark.parametrize("path", _files("lang/c++/jsonschemas"), ids=lambda p: p.name)
def test_cpp_schemas(path: Any) -> None:
    if path.name == "nested.error":
        with pytest.raises(ValueError):
            _avro.parse_schema(path.read_text())
        return
    try:
        json.loads(path.read_text())
    except ValueError:
        pytest.skip("not JSON (the C++ parser's lenient extension)")
    parsed = _avro.parse_schema(path.read_text())
    expected = fastavro.schema.to_parsing_canonical_form(
        fastavro.parse_schema(json.loads(path.read_text()), _write_hint=False)
    )
    assert _avro.canonical_form(parsed) == expected


class Color(enum.Enum):
    RED = 1
    GREEN = 2


@dataclasses.dataclass
class Inner:
    x: int


@dataclasses.dataclass
class Node:
    value: int
    children: List["Node"] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Sample:
    name: str
    when: datetime.datetime
    day: datetime.date
    clock: datetime.time
    ident: uuid.UUID
    price: Annotated[Decimal, Meta(max_digits=9, decimal_places=2)]
    loose: Decimal
    color: Color
    inner: Inner
    tags: List[str]
    index: Dict[str, float]
    blob: bytes = b"\x00A"
    maybe: Optional[int] = None
    count: int = 3
    again: Color = Color.GREEN
    local: Annotated[datetime.datetime, Meta(tz=False)] = datetime.datetime(1970, 1, 1, 0, 0, 1)
    items: List[int] = dataclasses.field(default_factory=list)


def test_derived_schema_shape() -> None:
    schema = polycodec.Codec(Sample, "avro").schema
    assert schema["type"] == "record"
    assert schema["name"] == "Sample"
    assert schema["namespace"] == "test_avro_schema"
    types = {f["name"]: f["type"] for f in schema["fields"]}
    defaults = {f["name"]: f["default"] for f in schema["fields"] if "default" in f}
    assert types["name"] == "string"
    assert types["when"] == {"type": "long", "logicalType": "timestamp-micros"}
    assert types["local"] == {"type": "long", "logicalType": "local-timestamp-micros"}
    assert types["day"] == {"type": "int", "logicalType": "date"}
    assert types["clock"] == {"type": "long", "logicalType": "time-micros"}
    assert types["ident"] == {"type": "string", "logicalType": "uuid"}
    assert types["price"] == {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}
    assert types["loose"] == "string"
    assert types["color"] == {
        "type": "enum",
        "name": "Color",
        "namespace": "test_avro_schema",
        "symbols": ["RED", "GREEN"],
    }
    assert types["again"] == "test_avro_schema.Color"
    assert types["inner"]["name"] == "Inner"
    assert types["tags"] == {"type": "array", "items": "string"}
    assert types["index"] == {"type": "map", "values": "double"}
    assert types["maybe"] == ["null", "long"]
    assert defaults == {
        "blob": "\x00A",
        "maybe": None,
        "count": 3,
        "again": "GREEN",
        "local": 1_000_000,
        "items": [],
    }
    # fastavro accepts the schema, defaults included.
    fastavro.parse_schema(schema)


def test_recursive_class_refers_to_itself_by_name() -> None:
    schema = polycodec.Codec(Node, "avro").schema
    assert schema["fields"][1]["type"] == {"type": "array", "items": "test_avro_schema.Node"}
    value = Node(1, [Node(2), Node(3, [Node(4)])])
    codec = polycodec.Codec(Node, "avro")
    assert codec.decode_one(codec.encode_one(value)) == value


def test_local_classes_get_valid_names() -> None:
    @dataclasses.dataclass
    class Local:
        x: int

    schema = polycodec.Codec(Local, "avro").schema
    assert schema["name"] == "Local"
    assert schema["namespace"] == ("test_avro_schema.test_local_classes_get_valid_names._locals_")
    fastavro.parse_schema(schema)


T = TypeVar("T")


@dataclasses.dataclass
class Box(Generic[T]):
    item: T


@dataclasses.dataclass
class Both:
    a: Box[int]
    b: Box[str]


def test_same_names_in_different_generic_instances_are_made_unique() -> None:
    schema = polycodec.Codec(Both, "avro").schema
    names = [f["type"]["name"] for f in schema["fields"]]
    assert len(set(names)) == 2
    fastavro.parse_schema(schema)
    codec = polycodec.Codec(Both, "avro")
    value = Both(Box(1), Box("x"))
    assert codec.decode_one(codec.encode_one(value)) == value


def test_optional_with_non_null_default_puts_the_default_first() -> None:
    @dataclasses.dataclass
    class D:
        v: Optional[str] = "x"

    field = polycodec.Codec(D, "avro").schema["fields"][0]
    assert field["type"] == ["string", "null"] and field["default"] == "x"


@dataclasses.dataclass
class Cat:
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    good: bool = True
    kind: Literal["dog"] = "dog"


@dataclasses.dataclass
class Pet:
    pet: Optional[Union[Cat, Dog]] = None


def test_union_of_records_is_a_union_of_records() -> None:
    codec = polycodec.Codec(Pet, "avro")
    branches = codec.schema["fields"][0]["type"]
    assert branches[0] == "null"
    assert [b["name"] for b in branches[1:]] == ["Cat", "Dog"]
    for value in [Pet(), Pet(Cat()), Pet(Dog(False))]:
        data = codec.encode_one(value)
        assert codec.decode_one(data) == value
    assert fastavro_read(codec.schema, codec.encode_one(Pet(Dog(False)))) == {
        "pet": {"good": False, "kind": "dog"}
    }


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


@pytest.mark.parametrize(
    "tp, field, words",
    [
        (Any, "v", "Any has no Avro form"),
        (datetime.timedelta, "v", "timedelta has no faithful Avro form"),
        (Dict[int, str], "v", "str keys only"),
        (Tuple[int, str], "v", "fixed-length tuple"),
        (Annotated[datetime.time, Meta(tz=True)], "v", "aware datetime.time"),
        (Union[int, datetime.datetime], "v", "two alternatives of Avro type 'long'"),
        (Movie, "year", "may be absent"),
    ],
)
def test_types_without_an_avro_form_are_refused(tp: Any, field: str, words: str) -> None:
    box = dataclasses.make_dataclass("Box", [("v", tp)])
    with pytest.raises(TypeError) as info:
        polycodec.Codec(box, "avro")
    assert words in str(info.value)
    assert f"`{field}`" in str(info.value)


def test_unknown_and_bad_options() -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        polycodec.Codec(Inner, "avro", protocol=5)
    with pytest.raises(ValueError, match="framing"):
        polycodec.Codec(Inner, "avro", framing="xml")
    with pytest.raises(ValueError, match="schema_id"):
        polycodec.Codec(Inner, "avro", framing="confluent")
    with pytest.raises(ValueError, match="schema_id"):
        polycodec.Codec(Inner, "avro", schema_id=3)
    with pytest.raises(ValueError, match="compression"):
        polycodec.Codec(Inner, "avro", compression="lzma")


def test_schema_property_is_a_fresh_copy() -> None:
    codec = polycodec.Codec(Inner, "avro")
    schema = codec.schema
    schema["name"] = "Changed"
    assert codec.schema["name"] == "Inner"


# --- schema= binding --------------------------------------------------------------------------


@dataclasses.dataclass
class Person:
    name: str
    age: int
    email: Optional[str] = None


PERSON_AVSC = {
    "type": "record",
    "name": "com.example.Person",
    "fields": [
        {"name": "email", "type": ["string", "null"]},
        {"name": "age", "type": "int"},
        {"name": "name", "type": "string"},
    ],
}


def test_bound_schema_sets_field_order_and_types() -> None:
    codec = polycodec.Codec(Person, "avro", schema=PERSON_AVSC)
    assert codec.schema == PERSON_AVSC
    value = Person("Ann", 41, "a@x")
    data = codec.encode_one(value)
    assert data == fastavro_write(PERSON_AVSC, {"name": "Ann", "age": 41, "email": "a@x"})
    assert codec.decode_one(data) == value
    data = codec.encode_one(Person("Bo", 7))
    assert fastavro_read(PERSON_AVSC, data) == {"name": "Bo", "age": 7, "email": None}
    with pytest.raises(polycodec.EncodeError, match="32 bits"):
        codec.encode_one(Person("Big", 2**40))
    # The same schema as JSON text.
    assert polycodec.Codec(Person, "avro", schema=json.dumps(PERSON_AVSC)).encode_one(
        value
    ) == codec.encode_one(value)


def test_bound_schema_may_leave_out_fields_with_defaults() -> None:
    schema = {
        "type": "record",
        "name": "Person",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "long"}],
    }
    codec = polycodec.Codec(Person, "avro", schema=schema)
    assert codec.decode_one(codec.encode_one(Person("A", 1, "dropped"))) == Person("A", 1)


@pytest.mark.parametrize(
    "schema, words",
    [
        ({"type": "record", "name": "P", "fields": [{"name": "name", "type": "string"}]}, "age"),
        (
            {
                "type": "record",
                "name": "P",
                "fields": [
                    {"name": "name", "type": "string"},
                    {"name": "age", "type": "string"},
                ],
            },
            "int cannot be written as Avro string",
        ),
        (
            {
                "type": "record",
                "name": "P",
                "fields": [
                    {"name": "name", "type": "string"},
                    {"name": "age", "type": "long"},
                    {"name": "extra", "type": "long"},
                ],
            },
            "`extra`",
        ),
        ("long", "record cannot be written"),
    ],
)
def test_mismatched_schemas_fail_at_construction(schema: Any, words: str) -> None:
    with pytest.raises(TypeError) as info:
        polycodec.Codec(Person, "avro", schema=schema)
    assert words in str(info.value) or words.replace("record", "dataclass") in str(info.value)


def test_invalid_schemas_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="invalid Avro schema"):
        polycodec.Codec(Person, "avro", schema={"type": "record", "name": "1bad", "fields": []})
    with pytest.raises(ValueError, match="JSON"):
        polycodec.Codec(Person, "avro", schema="{not json")


def test_bound_schema_with_fixed_uuid_millis_and_enum_superset() -> None:
    @dataclasses.dataclass
    class Event:
        ident: uuid.UUID
        at: datetime.datetime
        clock: datetime.time
        color: Color
        digest: bytes
        price: Decimal

    schema = {
        "type": "record",
        "name": "Event",
        "fields": [
            {
                "name": "ident",
                "type": {"type": "fixed", "name": "U", "size": 16, "logicalType": "uuid"},
            },
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
            {
                "name": "color",
                "type": {"type": "enum", "name": "C", "symbols": ["BLUE", "GREEN", "RED"]},
            },
            {"name": "digest", "type": {"type": "fixed", "name": "D", "size": 4}},
            {
                "name": "price",
                "type": {
                    "type": "fixed",
                    "name": "P",
                    "size": 8,
                    "logicalType": "decimal",
                    "precision": 12,
                    "scale": 3,
                },
            },
        ],
    }
    codec = polycodec.Codec(Event, "avro", schema=schema)
    value = Event(
        uuid.UUID(int=7),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=datetime.timezone.utc),
        datetime.time(1, 2, 3, 4000),
        Color.RED,
        b"abcd",
        Decimal("-3.141"),
    )
    data = codec.encode_one(value)
    assert codec.decode_one(data) == value
    read = fastavro_read(schema, data)
    assert read["color"] == "RED" and read["digest"] == b"abcd"
    assert read["price"] == Decimal("-3.141")
    assert read["at"] == value.at and read["clock"] == value.clock
    # Sub-millisecond digits are truncated (see test_millis_truncate_like_fastavro).
    truncated = codec.encode_one(dataclasses.replace(value, clock=datetime.time(1, 2, 3, 4999)))
    assert truncated == data
    with pytest.raises(polycodec.EncodeError, match="exactly 4 bytes"):
        codec.encode_one(dataclasses.replace(value, digest=b"abc"))


@dataclasses.dataclass
class Stamped:
    at: datetime.datetime
    local: Annotated[datetime.datetime, Meta(tz=False)]
    clock: datetime.time


STAMPED_MILLIS = {
    "type": "record",
    "name": "Stamped",
    "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "clock", "type": {"type": "int", "logicalType": "time-millis"}},
    ],
}


def test_millis_truncate_like_fastavro() -> None:
    """Issue 14, case 13: sub-millisecond digits are dropped toward the past (floor), as
    fastavro writes them (and Java's Instant.toEpochMilli), instead of being refused."""
    codec = polycodec.Codec(Stamped, "avro", schema=STAMPED_MILLIS)
    utc = datetime.timezone.utc
    cases = [
        datetime.datetime(2024, 1, 2, 3, 4, 5, 6789, tzinfo=utc),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 999999, tzinfo=utc),
        datetime.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=utc),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=utc),
        datetime.datetime(1900, 6, 1, 12, 0, 0, 500, tzinfo=utc),
        datetime.datetime(
            2024, 1, 2, 3, 4, 5, 6789, tzinfo=datetime.timezone(-datetime.timedelta(hours=5))
        ),
    ]
    for at in cases:
        clock = datetime.time(at.hour, at.minute, at.second, at.microsecond)
        value = Stamped(at, at.astimezone(utc).replace(tzinfo=None), clock)
        data = codec.encode_one(value)
        # fastavro's writer for the same datum is the oracle (its local-timestamp writer
        # uses the machine's time zone for naive values, so give it the raw count).
        local_ms = (value.local - datetime.datetime(1970, 1, 1)) // datetime.timedelta(
            milliseconds=1
        )
        oracle = fastavro_write(STAMPED_MILLIS, {"at": at, "local": local_ms, "clock": clock})
        assert data == oracle, at
        decoded = codec.decode_one(data)
        millis = datetime.timedelta(milliseconds=1)
        assert decoded.at <= at < decoded.at + millis
        assert decoded.at.microsecond % 1000 == 0
        assert decoded.local == decoded.at.replace(tzinfo=None)
        assert decoded.clock == clock.replace(microsecond=clock.microsecond // 1000 * 1000)
    assert codec.decode_one(
        codec.encode_one(Stamped(cases[4], cases[4].replace(tzinfo=None), datetime.time()))
    ).at == datetime.datetime(1969, 12, 31, 23, 59, 59, tzinfo=utc)


# --- the schema layer on the apache-avro crate (issue 13) --------------------------------------


def _fastavro_canonical(schema: Any) -> str:
    return str(fastavro.schema.to_parsing_canonical_form(fastavro.parse_schema(schema)))


@pytest.mark.parametrize(
    "schema",
    [
        # apache-avro 0.22's own canonical form keeps these; the specification strips them.
        {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        {
            "type": "fixed",
            "name": "D",
            "size": 8,
            "logicalType": "decimal",
            "precision": 12,
            "scale": 3,
        },
        {"type": "long", "logicalType": "timestamp-millis"},
        {"type": "string", "logicalType": "uuid"},
        {
            "type": "record",
            "name": "R",
            "fields": [
                {"name": "a", "type": "int", "order": "descending"},
                {"name": "b", "type": {"type": "int", "logicalType": "date"}, "order": "ignore"},
                {"name": "c", "type": ["null", {"type": "long", "logicalType": "time-micros"}]},
                {"name": "d", "type": {"type": "array", "items": "string", "extra": 1}},
            ],
        },
    ],
)
def test_canonical_form_strips_what_the_crate_keeps(schema: Any) -> None:
    parsed = _avro.parse_schema(schema)
    assert _avro.canonical_form(parsed) == _fastavro_canonical(schema)
    assert parsed.fingerprint == _avro.fingerprint(_fastavro_canonical(schema).encode())


@pytest.mark.parametrize(
    "schema, words",
    [
        ({"type": "fixed", "name": "F", "size": 2**64}, "size"),
        ({"type": "fixed", "name": "F", "size": -1}, "size"),
        ({"type": "fixed", "name": "F", "size": "16"}, "size"),  # fastavro accepts a str
        ({"type": "record", "name": "R", "fields": [{"name": "a-b", "type": "int"}]}, "a-b"),
        ({"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}, "default"),
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": "int", "default": "x"}],
            },
            "default",
        ),
        # "error" is a protocol's type; the crate refuses it in a schema, fastavro reads a record.
        ({"type": "error", "name": "Oops", "fields": []}, "error"),
        # The crate accepts a name defined twice; polycodec refuses it, as the specification does.
        (
            {
                "type": "record",
                "name": "R",
                "fields": [{"name": "a", "type": {"type": "fixed", "name": "R", "size": 1}}],
            },
            "defined twice",
        ),
    ],
)
def test_invalid_schema_cases_name_the_reason(schema: Any, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        _avro.parse_schema(schema)
    with pytest.raises(ValueError, match="invalid Avro schema"):
        polycodec.Codec(Inner, "avro", schema=schema)
    codec = polycodec.Codec(Inner, "avro")
    with pytest.raises(polycodec.DecodeError, match="invalid Avro writer schema"):
        codec.decode_one(b"\x02", writer_schema=schema)


def test_decimal_with_scale_above_precision_is_read_as_its_underlying_type() -> None:
    """The specification asks for an invalid logical type to be ignored; the crate does so
    (fastavro refuses the schema)."""
    schema = {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}
    assert _avro.canonical_form(_avro.parse_schema(schema)) == '"bytes"'


def _nested_records(depth: int) -> str:
    text = '"long"'
    for level in reversed(range(depth)):
        text = f'{{"type":"record","name":"R{level}","fields":[{{"name":"f","type":{text}}}]}}'
    return text


def test_deep_nested_record_schemas_parse_on_a_small_stack_and_deeper_ones_are_refused() -> None:
    """Schema elements may nest 128 levels (127 records around a long): such a schema parses on
    a thread with a small stack, and a deeper one (2000 levels, far past what any recursion
    could survive) is refused with a ValueError, not a crash."""
    import threading

    from polycodec._polycodec import _avro_parse

    results: list[Any] = []

    @dataclasses.dataclass
    class R0:
        pass

    codec = polycodec.Codec(R0, "avro")
    skipped: list[Any] = []

    def work() -> None:
        # The writer's one field holds the 126 records below it: resolved, then skipped.
        skipped.append(
            codec.decode_one(b"\x02", writer_schema=_nested_records(_avro.MAX_DEPTH - 1))
        )
        for depth in (_avro.MAX_DEPTH - 1, _avro.MAX_DEPTH, 2000):
            try:
                results.append(_avro_parse(_nested_records(depth)))
            except ValueError as exc:
                results.append(exc)

    old = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old)
    assert skipped == [R0()]
    parsed = results[0]
    assert parsed.canonical.count('"type":"record"') == _avro.MAX_DEPTH - 1
    assert parsed.fingerprint == _avro.fingerprint(parsed.canonical.encode())
    for refused in results[1:]:
        assert isinstance(refused, ValueError)
        assert f"nests deeper than {_avro.MAX_DEPTH} levels" in str(refused)
    with pytest.raises(ValueError):
        _avro.parse_schema(_nested_records(2000))


def test_incompatible_writer_schema_names_the_place_and_the_reason() -> None:
    writer = {
        "type": "record",
        "name": "Person",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "string"}],
    }
    codec = polycodec.Codec(Person, "avro")
    with pytest.raises(polycodec.DecodeError) as info:
        codec.decode_one(b"\x02x", writer_schema=writer)
    assert str(info.value) == (
        "cannot read the writer schema: writer string cannot be read as long (at $.age)"
    )
    assert info.value.path == "$.age"


def test_resolver_reads_renamed_records_and_class_defaults() -> None:
    """polycodec reads some writer schemas the specification's rules refuse (as the
    apache-avro crate and fastavro do): a record named differently outside a union (matched by
    position), and a reader field whose default comes from the class (`email`), not from the
    schema given with `schema=`."""
    reader = {
        "type": "record",
        "name": "Person",
        "fields": [
            {"name": "name", "type": "string"},
            {"name": "age", "type": "long"},
            {"name": "email", "type": ["null", "string"]},
        ],
    }
    writer = {
        "type": "record",
        "name": "Legacy",
        "fields": [{"name": "name", "type": "string"}, {"name": "age", "type": "int"}],
    }
    codec = polycodec.Codec(Person, "avro", schema=reader)
    data = fastavro_write(writer, {"name": "Ann", "age": 41})
    assert codec.decode_one(data, writer_schema=writer) == Person("Ann", 41)
    with pytest.raises(Exception):
        fastavro.schemaless_reader(
            io.BytesIO(data),
            fastavro.parse_schema(writer),
            fastavro.parse_schema(reader),
        )
