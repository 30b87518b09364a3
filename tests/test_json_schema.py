"""JSON Schema of the JSON form: checked with the ``jsonschema`` library (draft 2020-12, format
checking on) as the oracle. Everything the encoder writes validates (the test models and
hypothesis-generated values), and input the decoder refuses fails validation where JSON Schema
can express the rule."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import ipaddress
import json
import sys
import types
import typing
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, TypedDict, Union

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polycodec
from json_models import (
    EVERYTHING,
    Archive,
    Box,
    Cat,
    Chunk,
    Color,
    Dog,
    Everything,
    Level,
    Linked,
    Movie,
    Pair,
    Pet,
    Point,
    Tree,
)
from polycodec import Extension, Meta
from test_properties import AWARE, OUTER, SETTINGS, Outer

Validator = jsonschema.Draft202012Validator


def validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    Validator.check_schema(schema)
    return Validator(schema, format_checker=Validator.FORMAT_CHECKER)


def assert_valid(tp: Any, value: Any, **options: Any) -> dict[str, Any]:
    """Encode ``value`` and check that the encoded JSON validates against the type's schema."""
    schema = polycodec.json_schema(tp, **options)
    data = json.loads(polycodec.Codec(tp, "json", **options).encode_one(value))
    errors = [e.message for e in validator(schema).iter_errors(data)]
    assert errors == [], (data, errors)
    return schema


def assert_refused(tp: Any, text: str, **options: Any) -> None:
    """Input the decoder refuses also fails validation."""
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(text, tp, **options)
    schema = polycodec.json_schema(tp, **options)
    assert not validator(schema).is_valid(json.loads(text)), text


def test_format_checkers_are_active() -> None:
    # Without rfc3339-validator the date-time and time formats would silently pass everything.
    checker = Validator.FORMAT_CHECKER
    for name in ("date-time", "time", "date", "uuid"):
        assert name in checker.checkers
    assert not validator({"format": "date-time"}).is_valid("2024-01-01T00:00:00")
    assert not validator({"format": "time"}).is_valid("12:00:00")


# -- the test models ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tp, value",
    [
        (Everything, EVERYTHING),
        (Point, Point(1, 2)),
        (Pair, Pair(1, "a")),
        (Movie, {"title": "Alien", "year": 1979}),
        (Box[int], Box(1, [2, 3])),
        (Tree, Tree(1, [Tree(2, [Tree(3)])])),
        (Linked, Linked("a", Linked("b"))),
        (Pet, Pet("Tom", Cat("cat", 9))),
        (Pet, Pet("Rex", Dog("dog", True))),
        (Archive, Archive("a", [Chunk("c", 1)], {"k": Chunk("d", 2)}, Point(0, 0))),
        (list[Union[Cat, Dog]], [Cat("cat", 1), Dog("dog", False)]),
        (Optional[Point], None),
        (dict[Color, Level], {Color.RED: Level.LOW}),
    ],
    ids=lambda p: getattr(p, "__qualname__", None) or type(p).__name__,
)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"rename": "camel"},
        {"omit_defaults": True},
        {"forbid_unknown_fields": True},
        {"array_like": True},
        {"array_like": True, "omit_defaults": True, "rename": "kebab"},
    ],
    ids=["default", "camel", "omit_defaults", "forbid", "array_like", "array_like_omit"],
)
def test_models_validate(tp: Any, value: Any, options: dict[str, Any]) -> None:
    assert_valid(tp, value, **options)


def test_everything_schema_shape() -> None:
    schema = polycodec.json_schema(Everything)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$ref"] == "#/$defs/Everything"
    record = schema["$defs"]["Everything"]
    assert record["title"] == "Everything"
    assert record["description"].startswith("One field of every")
    props = record["properties"]
    assert props["none"] == {"type": "null"}
    assert props["flag"] == {"type": "boolean"}
    assert props["small"] == {"type": "integer"}
    assert props["blob"]["contentEncoding"] == "base64"
    assert props["money"]["type"] == "string"
    assert props["day"] == {"type": "string", "format": "date"}
    assert props["ident"] == {"type": "string", "format": "uuid"}
    assert props["color"] == {"$ref": "#/$defs/Color"}
    assert schema["$defs"]["Color"] == {
        "title": "Color",
        "type": "string",
        "enum": ["red", "green"],
    }
    assert schema["$defs"]["Level"] == {"title": "Level", "type": "integer", "enum": [1, 2]}
    assert props["choice"] == {"enum": ["a", "b", 3]}
    assert props["maybe"] == {"type": ["null", "integer"]}
    assert props["either"] == {"type": ["integer", "string"]}
    assert props["pair"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert props["by_int"]["propertyNames"] == {"pattern": "^-?(?:0|[1-9][0-9]*)$"}
    assert props["by_enum"]["propertyNames"] == {"enum": ["red", "green"]}
    assert props["by_uuid"]["propertyNames"] == {"format": "uuid"}
    assert props["named"] == {"$ref": "#/$defs/Pair"}
    assert props["movie"] == {"$ref": "#/$defs/Movie"}
    assert props["anything"] == {}
    assert record["required"] == list(props)  # no field has a default
    assert "additionalProperties" not in record


def test_recursive_types_refer_to_their_definition() -> None:
    schema = polycodec.json_schema(Tree)
    tree = schema["$defs"]["Tree"]
    assert tree["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
        "default": [],
    }
    assert tree["required"] == ["value"]
    linked = polycodec.json_schema(Linked)["$defs"]["Linked"]
    assert linked["properties"]["next"] == {
        "anyOf": [{"$ref": "#/$defs/Linked"}, {"type": "null"}],
        "default": None,
    }
    assert_refused(Tree, '{"value": 1, "children": [{"value": "x"}]}')


def test_tagged_union_is_one_of_with_discriminator() -> None:
    schema = polycodec.json_schema(Union[Cat, Dog])
    assert schema["oneOf"] == [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    assert schema["required"] == ["kind"]
    assert schema["discriminator"] == {
        "propertyName": "kind",
        "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"},
    }
    assert schema["$defs"]["Cat"]["properties"]["kind"] == {"const": "cat"}
    assert_refused(Union[Cat, Dog], '{"kind": "bird", "lives": 1}')
    assert_refused(Union[Cat, Dog], '{"lives": 1}')
    assert_refused(Union[Cat, Dog], '{"kind": "cat", "lives": "nine"}')


@dataclasses.dataclass
class Fox:
    name: str
    kind: Literal["fox", "vixen"] = "fox"


@dataclasses.dataclass
class Owl:
    name: str
    wise: bool = True
    kind: Literal["owl"] = "owl"


def test_tagged_union_with_defaulted_tags_and_array_like() -> None:
    tp = Union[Fox, Owl, None]
    schema = assert_valid(tp, Owl("o"))
    tagged = schema["anyOf"][0]
    assert tagged["discriminator"]["mapping"] == {
        "fox": "#/$defs/Fox",
        "vixen": "#/$defs/Fox",
        "owl": "#/$defs/Owl",
    }
    # The tag must be present although it has a default.
    assert_refused(tp, '{"name": "o"}')
    schema = assert_valid(tp, Fox("f", "vixen"), array_like=True)
    fox = schema["$defs"]["Fox"]
    assert fox["prefixItems"][0] == {"enum": ["fox", "vixen"], "default": "fox"}
    # Items past the fields are a newer producer's (issue 38, item 3): read and skipped.
    assert fox["minItems"] == 2 and "maxItems" not in fox
    assert_valid(tp, Owl("o", True), array_like=True)
    assert polycodec.decode_one('["owl", "o", true, 1]', tp, array_like=True) == Owl("o", True)
    assert validator(polycodec.json_schema(tp, array_like=True)).is_valid(["owl", "o", True, 1])
    assert_refused(tp, '["owl", "o", true, 1]', array_like=True, forbid_unknown_fields=True)
    assert_refused(tp, '["owl"]', array_like=True)
    assert_refused(tp, '["cat", "o"]', array_like=True)


# -- hypothesis ----------------------------------------------------------------------------------

OUTER_OPTIONS = [
    {},
    {"array_like": True, "rename": "camel"},
    {"omit_defaults": True, "forbid_unknown_fields": True, "rename": "kebab"},
    {"strict": False},
]
OUTER_CHECKS = [
    (polycodec.Codec(Outer, **options), validator(polycodec.json_schema(Outer, **options)))
    for options in OUTER_OPTIONS
]


@SETTINGS
@given(OUTER)
def test_generated_values_validate(obj: Outer) -> None:
    for codec, check in OUTER_CHECKS:
        data = json.loads(codec.encode_one(obj))
        assert [e.message for e in check.iter_errors(data)] == []


Small = Annotated[int, Meta(ge=-5, lt=10, multiple_of=5)]
Ratio = Annotated[float, Meta(gt=0, le=1.5)]
Name = Annotated[str, Meta(min_length=2, max_length=5, pattern="^[a-z]+$")]
Blob = Annotated[bytes, Meta(min_length=1, max_length=4)]
Money = Annotated[Decimal, Meta(max_digits=5, decimal_places=2)]


@dataclasses.dataclass
class Constrained:
    small: Small
    ratio: Ratio
    name: Name
    blob: Blob
    money: Money
    names: Annotated[list[Name], Meta(min_length=1, max_length=3)]
    table: Annotated[dict[Name, Small], Meta(max_length=2)]
    when: Annotated[datetime.datetime, Meta(tz=True)]
    naive: Annotated[datetime.datetime, Meta(tz=False)]
    clock: Annotated[datetime.time, Meta(tz=True)]
    span: datetime.timedelta
    amount: Union[int, float]
    maybe_small: Annotated[Optional[int], Meta(ge=0)] = None


NAMES = st.from_regex("^[a-z]{2,5}$", fullmatch=True)
SMALLS = st.sampled_from([-5, 0, 5])
# Any UTC offset Python allows, seconds included (RFC 3339 has no form for those).
ODD_OFFSETS = st.timedeltas(
    min_value=datetime.timedelta(hours=-23, minutes=-59), max_value=datetime.timedelta(hours=23)
).map(lambda d: datetime.timezone(datetime.timedelta(seconds=d // datetime.timedelta(seconds=1))))

CONSTRAINED = st.builds(
    Constrained,
    small=SMALLS,
    ratio=st.floats(min_value=0, max_value=1.5, exclude_min=True),
    name=NAMES,
    blob=st.binary(min_size=1, max_size=4),
    money=st.decimals(places=2, min_value=-999, max_value=999),
    names=st.lists(NAMES, min_size=1, max_size=3),
    table=st.dictionaries(NAMES, SMALLS, max_size=2),
    when=AWARE | st.datetimes(timezones=ODD_OFFSETS),
    naive=st.datetimes(),
    clock=st.times(timezones=ODD_OFFSETS),
    span=st.timedeltas(),
    amount=st.integers() | st.floats(allow_nan=False, allow_infinity=False),
    maybe_small=st.none() | st.integers(min_value=0),
)
CONSTRAINED_VALIDATOR = validator(polycodec.json_schema(Constrained))
CONSTRAINED_CODEC = polycodec.Codec(Constrained)


@SETTINGS
@given(CONSTRAINED)
def test_generated_constrained_values_validate(obj: Constrained) -> None:
    out = CONSTRAINED_CODEC.encode_one(obj)
    assert CONSTRAINED_CODEC.decode_one(out) == obj  # a valid value, as the decoder says
    errors = [e.message for e in CONSTRAINED_VALIDATOR.iter_errors(json.loads(out))]
    assert errors == []


def test_constraints_become_keywords() -> None:
    props = polycodec.json_schema(Constrained)["$defs"]["Constrained"]["properties"]
    assert props["small"] == {
        "type": "integer",
        "minimum": -5,
        "exclusiveMaximum": 10,
        "multipleOf": 5,
    }
    assert props["ratio"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5}
    assert props["name"] == {
        "type": "string",
        "minLength": 2,
        "maxLength": 5,
        "pattern": "^[a-z]+$",
    }
    assert props["blob"]["minLength"] == 4 and props["blob"]["maxLength"] == 8
    assert props["names"]["minItems"] == 1 and props["names"]["maxItems"] == 3
    assert props["table"]["maxProperties"] == 2
    assert props["table"]["propertyNames"] == {
        "minLength": 2,
        "maxLength": 5,
        "pattern": "^[a-z]+$",
    }
    assert props["amount"] == {"type": "number"}
    assert props["maybe_small"] == {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
        "default": None,
    }
    assert props["when"]["anyOf"][0] == {"format": "date-time"}


GOOD = {
    "small": 5,
    "ratio": 1.0,
    "name": "ab",
    "blob": "YQ==",
    "money": "1.25",
    "names": ["ab"],
    "table": {},
    "when": "2024-01-01T00:00:00Z",
    "naive": "2024-01-01T00:00:00",
    "clock": "12:00:00+01:00",
    "span": "P1D",
    "amount": 1,
}


@pytest.mark.parametrize(
    "change",
    [
        {"small": 3},  # multipleOf
        {"small": 10},  # exclusiveMaximum
        {"small": -10},  # minimum
        {"small": "5"},  # a string for an int (strict)
        {"ratio": 0},  # exclusiveMinimum
        {"ratio": 2.0},
        {"name": "a"},
        {"name": "abcdef"},
        {"name": "AB"},
        {"blob": ""},
        {"blob": "YWJjZGVmZ2hpag=="},  # 10 bytes
        {"blob": "YQ"},  # unpadded base64
        {"blob": "Y$=="},
        {"money": "abc"},
        {"money": 1.25},
        {"names": []},
        {"names": ["ab", "cd", "ef", "gh"]},
        {"table": {"A": 5}},
        {"table": {"ab": 5, "cd": 5, "ef": 5}},
        {"table": {"ab": 3}},
        {"when": "2024-01-01T00:00:00"},  # naive where aware is required
        {"when": "2024-13-01T00:00:00Z"},
        {"when": "yesterday"},
        {"naive": "2024-01-01T00:00:00Z"},
        {"clock": "12:00:00"},
        {"clock": "25:00:00Z"},
        {"span": "PT1Y"},
        {"span": "P1D1W"},
        {"span": "1 day"},
        {"span": "P"},
        {"amount": "1"},
        {"maybe_small": -1},
    ],
    ids=lambda c: "-".join(f"{k}={v!r}" for k, v in c.items()),
)
def test_refused_values_fail_validation(change: dict[str, Any]) -> None:
    text = json.dumps({**GOOD, **change})
    with pytest.raises(polycodec.ValidationError):
        CONSTRAINED_CODEC.decode_one(text)
    assert not CONSTRAINED_VALIDATOR.is_valid(json.loads(text))


def test_good_constrained_value_passes_both() -> None:
    CONSTRAINED_CODEC.decode_one(json.dumps(GOOD))
    assert CONSTRAINED_VALIDATOR.is_valid(GOOD)


@pytest.mark.parametrize(
    "value",
    [
        datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(seconds=1172))),
        datetime.datetime(2024, 1, 1, 12, 30, 1, 5),
        datetime.datetime(1, 1, 1, tzinfo=datetime.timezone.utc),
    ],
)
def test_datetimes_outside_rfc3339_still_validate(value: datetime.datetime) -> None:
    # Naive values and offsets with seconds have no RFC 3339 form: a pattern covers them.
    assert_valid(datetime.datetime, value)
    assert_valid(Optional[datetime.datetime], value)


@pytest.mark.parametrize(
    "tp, text",
    [
        (int, '"1"'),
        (int, "true"),
        (bool, "1"),
        (str, "1"),
        (float, '"1.5"'),
        (None, "0"),
        (Point, '{"x": 1}'),
        (Point, "[1, 2]"),
        (Pair, "[1]"),
        (Pair, '[1, "a", 2]'),
        (Movie, '{"title": "x"}'),
        (Color, '"blue"'),
        (Level, "3"),
        (Literal["a", 1], '"b"'),
        (Literal["a", 1], "true"),
        (tuple[int, str], "[1]"),
        (tuple[()], "[1]"),
        (dict[int, int], '{"x": 1}'),
        (dict[uuid.UUID, int], '{"x": 1}'),
        (dict[Color, int], '{"blue": 1}'),
        (list[int], "[1, null]"),
        (Optional[int], '"x"'),
        (uuid.UUID, '"not-a-uuid"'),
        (datetime.date, '"2024-02-30"'),
        (Decimal, '"1.2.3"'),
        (bytes, '"abc"'),
        (datetime.timedelta, '"PT1W"'),
        (datetime.timedelta, '"PT"'),
    ],
    ids=repr,
)
def test_decoder_refusals_fail_validation(tp: Any, text: str) -> None:
    assert_refused(tp, text)


@pytest.mark.parametrize(
    "text",
    ["P1D", "PT1S", "P1DT2.5S", "-PT1S", "+P1D", "PT1H30M", "PT1.5H", "P1.5D", "PT1M2S", "P0D"]
    + ["P1DT", "PT", "P", "P1W", "P1Y", "P1M", "PT-1S", "PT1S1H", "1D", "P1D ", ""]
    + ["P1Y35D", "P1Y2M3W4DT1H", "P1M1Y", "P1D1W", "PT1Y", "PT1W", "P1.5Y", "-P1Y34DT23H59M59.9S"],
)
def test_duration_pattern_agrees_with_the_decoder(text: str) -> None:
    try:
        polycodec.decode_one(json.dumps(text), datetime.timedelta)
        decoded = True
    except polycodec.ValidationError:
        decoded = False
    assert validator(polycodec.json_schema(datetime.timedelta)).is_valid(text) == decoded


def test_known_gaps_json_schema_cannot_express() -> None:
    # JSON Schema counts 1.0 as an integer; the strict decoder refuses it for int.
    assert validator(polycodec.json_schema(int)).is_valid(1.0)
    # Bounds on a Decimal string are not expressible.
    schema = polycodec.json_schema(Annotated[Decimal, Meta(ge=0)])
    assert validator(schema).is_valid("-1")
    # Nor are bounds on int dict keys.
    assert validator(polycodec.json_schema(dict[Annotated[int, Meta(ge=0)], int])).is_valid(
        {"-1": 1}
    )


def test_set_allows_repeated_items_as_the_decoder_does() -> None:
    schema = polycodec.json_schema(set[int])
    assert "uniqueItems" not in schema
    assert polycodec.decode_one("[1, 1]", set[int]) == {1}
    assert validator(schema).is_valid([1, 1])


# -- options -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Account:
    user_name: str
    home_point: Point
    is_admin: bool = False
    tags: list[str] = dataclasses.field(default_factory=list)
    nick: Annotated[str, Meta(name="@nick")] = ""


def test_rename_applies_as_in_the_codec() -> None:
    schema = assert_valid(Account, Account("x", Point(1, 2)), rename="camel")
    record = schema["$defs"]["Account"]
    assert list(record["properties"]) == ["userName", "homePoint", "isAdmin", "tags", "@nick"]
    assert record["required"] == ["userName", "homePoint"]
    assert_refused(Account, '{"user_name": "x", "home_point": {"x": 1, "y": 2}}', rename="camel")


def test_forbid_unknown_fields_is_additional_properties_false() -> None:
    schema = polycodec.json_schema(Account, forbid_unknown_fields=True)
    assert schema["$defs"]["Account"]["additionalProperties"] is False
    assert schema["$defs"]["Point"]["additionalProperties"] is False
    text = '{"user_name": "x", "home_point": {"x": 1, "y": 2}, "other": 1}'
    assert_refused(Account, text, forbid_unknown_fields=True)
    # Without the option unknown keys are skipped, and the schema allows them.
    polycodec.decode_one(text, Account)
    assert validator(polycodec.json_schema(Account)).is_valid(json.loads(text))


def test_array_like_records_are_prefix_items() -> None:
    schema = assert_valid(Account, Account("x", Point(1, 2), tags=["a"]), array_like=True)
    record = schema["$defs"]["Account"]
    assert record["type"] == "array"
    assert record["minItems"] == 2 and "maxItems" not in record
    assert record["prefixItems"][1] == {"$ref": "#/$defs/Point"}
    assert record["prefixItems"][3] == {"type": "array", "items": {"type": "string"}, "default": []}
    assert_refused(Account, '["x"]', array_like=True)
    # Extra items are skipped unless unknown fields are forbidden (issue 38, item 3).
    forbid = {"array_like": True, "forbid_unknown_fields": True}
    assert polycodec.json_schema(Account, **forbid)["$defs"]["Account"]["maxItems"] == 5
    assert_refused(Account, '["x", [1, 2], false, [], "", 1]', **forbid)


class Span(enum.Enum):
    SHORT = "s"


@dataclasses.dataclass
class Defaults:
    when: datetime.datetime = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    blob: bytes = b"ab"
    span: Span = Span.SHORT
    money: Decimal = Decimal("1.50")
    point: Point = dataclasses.field(default_factory=lambda: Point(1, 2))
    pair: tuple[int, int] = (1, 2)
    inner: Optional[Account] = None
    frozen: frozenset[int] = frozenset()
    wrong: int = "not an int"  # type: ignore[assignment]


def test_defaults_are_written_by_the_codec() -> None:
    schema = assert_valid(Defaults, Defaults(wrong=0), rename="pascal")
    props = schema["$defs"]["Defaults"]["properties"]
    assert props["When"]["default"] == "2024-01-01T00:00:00Z"
    assert props["Blob"]["default"] == "YWI="
    assert props["Span"] == {"$ref": "#/$defs/Span", "default": "s"}
    assert props["Money"]["default"] == "1.50"
    assert "default" not in props["Point"]  # a factory that is not a constant
    assert props["Pair"]["default"] == [1, 2]
    assert props["Frozen"]["default"] == []
    assert "default" not in props["Wrong"]  # the codec cannot write it
    assert "required" not in schema["$defs"]["Defaults"]


@dataclasses.dataclass
class Host:
    root: Path
    addresses: list[ipaddress.IPv4Address]
    backup: Optional[Path] = None


def test_extensions_use_their_wire_type() -> None:
    extensions = {
        Path: Extension(str, encode=str, decode=Path),
        ipaddress.IPv4Address: Extension(int, encode=int, decode=ipaddress.IPv4Address),
    }
    value = Host(Path("/srv"), [ipaddress.IPv4Address("10.0.0.1")], Path("/b"))
    schema = assert_valid(Host, value, extensions=extensions)
    props = schema["$defs"]["Host"]["properties"]
    assert props["root"] == {"type": "string"}
    assert props["addresses"] == {"type": "array", "items": {"type": "integer"}}
    assert props["backup"] == {"type": ["null", "string"], "default": None}


def test_ref_template_for_openapi() -> None:
    schema = polycodec.json_schema(Pet, ref_template="#/components/schemas/{name}")
    assert schema["$ref"] == "#/components/schemas/Pet"
    animal = schema["$defs"]["Pet"]["properties"]["animal"]
    assert animal["discriminator"]["mapping"]["cat"] == "#/components/schemas/Cat"
    codec_schema = polycodec.Codec(Pet).json_schema(ref_template="#/components/schemas/{name}")
    assert codec_schema == schema
    with pytest.raises(ValueError, match="must contain"):
        polycodec.json_schema(Pet, ref_template="#/components/schemas/")
    with pytest.raises(ValueError, match="must contain"):
        polycodec.json_schema(Pet, ref_template="#/{other}/{name}")


# -- names ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Both:
    a: Box[int]
    b: Box[str]


def test_generic_instances_get_distinct_names() -> None:
    schema = assert_valid(Both, Both(Box(1, [2]), Box("x", ["y"])))
    assert set(schema["$defs"]) == {"Both", "Box_int", "Box_str"}
    assert schema["$defs"]["Box_int"]["title"] == "Box[int]"
    assert schema["$defs"]["Box_str"]["properties"]["item"] == {"type": "string"}


def _module_with_point(name: str) -> Any:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(
        "import dataclasses\n@dataclasses.dataclass\nclass Point:\n    z: str\n",
        module.__dict__,
    )
    return module.Point


OtherPoint = _module_with_point("geo_for_tests.shapes")


@dataclasses.dataclass
class TwoPoints:
    mine: Point
    theirs: OtherPoint  # type: ignore[valid-type]


def test_same_named_classes_from_two_modules_get_qualified_names() -> None:
    schema = polycodec.json_schema(TwoPoints)
    assert set(schema["$defs"]) == {"TwoPoints", "json_models.Point", "geo_for_tests.shapes.Point"}
    props = schema["$defs"]["TwoPoints"]["properties"]
    assert props["mine"] == {"$ref": "#/$defs/json_models.Point"}
    assert props["theirs"] == {"$ref": "#/$defs/geo_for_tests.shapes.Point"}
    assert_valid(TwoPoints, TwoPoints(Point(1, 2), OtherPoint("z")))


# -- API -----------------------------------------------------------------------------------------


def test_codec_method_matches_module_function() -> None:
    codec = polycodec.Codec(Archive, rename="camel", forbid_unknown_fields=True, strict=False)
    assert codec.json_schema() == polycodec.json_schema(
        Archive, rename="camel", forbid_unknown_fields=True, strict=False
    )


def test_every_call_returns_a_fresh_dict() -> None:
    first = polycodec.json_schema(Archive)
    first["$defs"]["Chunk"]["properties"].clear()
    assert polycodec.json_schema(Archive)["$defs"]["Chunk"]["properties"] != {}
    codec = polycodec.Codec(Archive)
    one = codec.json_schema()
    one["$defs"].clear()
    assert codec.json_schema()["$defs"] != {}


@pytest.mark.parametrize("fmt", ["msgpack", "avro", "pickle"])
def test_other_formats_refuse(fmt: str) -> None:
    with pytest.raises(TypeError, match="describes the JSON form"):
        polycodec.Codec(Point, fmt).json_schema()  # type: ignore[arg-type]


def test_unknown_option_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        polycodec.json_schema(Point, schema={})  # type: ignore[call-arg]


def test_unsupported_types_raise_like_the_codec() -> None:
    with pytest.raises(TypeError, match="ambiguous union"):
        polycodec.json_schema(Union[str, datetime.date])


class Scores(TypedDict, total=False):
    best: int
    names: list[str]


def test_typeddict_required_keys() -> None:
    schema = assert_valid(Scores, {"best": 1})
    assert "required" not in schema["$defs"]["Scores"]
    schema = assert_valid(Movie, {"title": "x", "year": 1})
    assert schema["$defs"]["Movie"]["required"] == ["title", "year"]


# -- lax mode --------------------------------------------------------------------------------------

LAX_INPUTS = [
    '"12"',
    '"-7"',
    '"+7"',
    '"007"',
    '" 1"',
    '"1.0"',
    '"1.5"',
    '"-2e3"',
    '".5"',
    '"5."',
    '"+1"',
    '"nan"',
    '"NaN"',
    '"-inf"',
    '"Infinity"',
    '"infinity"',
    '"1_0"',
    '"0x10"',
    '""',
    '"true"',
    '"True"',
    '"TRUE"',
    '"1"',
    '"0"',
    '"false"',
    '"yes"',
    "1",
    "0",
    "2",
    "3.5",
    "1.25",
    "true",
    "null",
    '"x"',
    '"2024-01-01"',
    '"null"',
    '"NULL"',
    '"tRuE"',
    '"-0"',
    '"00"',
    '"1e3"',
    '"1E+2"',
    '"1.5e1"',
    '"1e-1"',
    '"-0.0"',
    '"-nan"',
    '"INF"',
    '"+inf"',
    "1.0",
    "-0",
    "1e3",
    "86400",
    "-62135596800",
    "253402300799",
    "253402300800",
    "1e20",
]


@pytest.mark.parametrize(
    "tp",
    [
        int,
        float,
        bool,
        Decimal,
        Optional[int],
        Optional[float],
        Union[int, bool],
        Union[float, bool, None],
        Optional[bool],
        Union[bool, list[int]],
        list[bool],
        Optional[Decimal],
        Union[int, datetime.date],
        Union[bool, str],
        Union[int, float],
        Literal[1, 2],
        Level,
        type(None),
        datetime.datetime,
        Optional[datetime.datetime],
        Annotated[datetime.datetime, Meta(tz=False)],
        datetime.timedelta,
        Union[int, datetime.datetime],
        Union[bool, datetime.timedelta],
        Optional[Level],
    ],
    ids=repr,
)
def test_lax_schema_accepts_what_the_lax_decoder_accepts(tp: Any) -> None:
    # For every input, the schema and the lax decoder agree, except where JSON Schema cannot
    # say what the decoder does (the module's docstring lists these): Decimal only one way
    # (its pattern is the canonical text, and Python's Decimal also reads spaces, "_" and
    # "nan"); a JSON float with an integral value (JSON Schema counts it as an integer, an int
    # enum, literal or bool does not); and a lax int's text with an integral value that no
    # pattern tells from a fractional one ("1.5e1").
    lax = validator(polycodec.json_schema(tp, strict=False))
    for text in LAX_INPUTS:
        try:
            polycodec.decode_one(text, tp, strict=False)
            decoded = True
        except polycodec.ValidationError:
            decoded = False
        if decoded and Decimal in (tp, *typing.get_args(tp)):
            continue
        value = json.loads(text)
        if isinstance(value, float) and value.is_integer():
            continue
        if text == '"1.5e1"':
            continue
        assert lax.is_valid(value) == decoded, text


def test_lax_schema_shapes() -> None:
    assert polycodec.json_schema(Annotated[int, Meta(ge=0)], strict=False) == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": ["integer", "string"],
        "minimum": 0,
        "pattern": r"^-?(?:0|[1-9][0-9]*)(?:\.0+)?(?:[eE]\+?[0-9]+)?$",
    }
    # Every alternative takes its own text forms: "null", "true" in any case, numbers.
    schema = polycodec.json_schema(Union[int, bool, None], strict=False)
    assert schema["anyOf"][1]["anyOf"][2] == {
        "type": "string",
        "pattern": "^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|-?0)$",
    }
    assert schema["anyOf"][2] == {
        "anyOf": [{"type": "null"}, {"type": "string", "pattern": "^[Nn][Uu][Ll][Ll]$"}]
    }
    # A datetime also takes a Unix timestamp, as a number or as text.
    schema = polycodec.json_schema(datetime.datetime, strict=False)
    assert schema["anyOf"][1:] == [
        {"type": "number", "minimum": -62135596800, "maximum": 253402300799},
        {"type": "string", "pattern": r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$"},
    ]
    assert polycodec.json_schema(Literal[0, 1], strict=False)["enum"] == [0, 1, "0", "-0", "1"]
    codec = polycodec.Codec(Everything, strict=False)
    assert codec.json_schema() == polycodec.json_schema(Everything, strict=False)
    assert_valid(Everything, EVERYTHING, strict=False)


# -- mutated values: valid for the schema only if the decoder takes them -----------------------

TRICKY_STRINGS = st.sampled_from(
    [
        "2024-01-01",
        "2024-02-30",
        "2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00",
        "2024-01-01T23:59:60Z",
        "2024-01-01T00:00:00+05:30:15",
        "2024-01-01t00:00:00z",
        "2024-01-01 00:00:00Z",
        "12:00:00",
        "12:00:00Z",
        "24:00:00Z",
        "P1D",
        "PT0.5S",
        "-P1D",
        "YQ==",
        "YQ",
        "1.5",
        "NaN",
        "-0",
        "1E+3",
        "12345678-1234-5678-1234-567812345678",
        "12345678123456781234567812345678",
        "red",
        "fast",
        "",
        "12",
        "-3",
        "nan",
        "inf",
        "true",
        "False",
        "0",
    ]
)
JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    # Integral floats are left out: JSON Schema calls 1.0 an integer, the decoder does not.
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(max_size=8)
    | TRICKY_STRINGS
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, prefix + (index,))
    return found


def _mutate(value: Any, path: tuple[Any, ...], new: Any, drop: bool) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(value))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if drop:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copy


MUTATED = [
    (polycodec.Codec(Outer), validator(polycodec.json_schema(Outer))),
    (
        polycodec.Codec(Outer, array_like=True, forbid_unknown_fields=True),
        validator(polycodec.json_schema(Outer, array_like=True, forbid_unknown_fields=True)),
    ),
    (
        polycodec.Codec(Outer, forbid_unknown_fields=True, rename="camel"),
        validator(polycodec.json_schema(Outer, forbid_unknown_fields=True, rename="camel")),
    ),
    (polycodec.Codec(Outer, strict=False), validator(polycodec.json_schema(Outer, strict=False))),
]


@SETTINGS
@given(OUTER, st.data())
def test_mutated_values_are_valid_only_if_they_decode(obj: Outer, data: st.DataObject) -> None:
    for codec, check in MUTATED:
        encoded = json.loads(codec.encode_one(obj))
        path = data.draw(st.sampled_from(_paths(encoded)))
        drop = bool(path) and data.draw(st.booleans())
        mutated = _mutate(encoded, path, data.draw(JSON_VALUES), drop)
        if check.is_valid(mutated):
            codec.decode_one(json.dumps(mutated))  # must not raise


def test_codec_json_schema_is_cached_and_each_call_may_be_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import polycodec._jsonschema as jsonschema_module

    calls: list[Any] = []
    derive = jsonschema_module.codec_json_schema

    def counting(*args: Any) -> Any:
        calls.append(args)
        return derive(*args)

    monkeypatch.setattr(jsonschema_module, "codec_json_schema", counting)

    @dataclasses.dataclass
    class Item:
        name: str
        tags: list[str] = dataclasses.field(default_factory=list)

    codec = polycodec.Codec(Item)
    first = codec.json_schema()
    expected = polycodec.json_schema(Item)
    assert first == expected
    (record,) = first["$defs"].values()
    record["properties"]["name"]["type"] = "changed"
    record["required"].append("tags")
    record["properties"]["tags"]["default"].append("x")
    del first["$schema"]
    second = codec.json_schema()
    assert second == expected and second is not first
    assert [defn["required"] for defn in second["$defs"].values()] == [["name"]]
    assert len(calls) == 1
    # Each ref_template is derived once, and kept apart from the others.
    openapi = codec.json_schema(ref_template="#/components/schemas/{name}")
    assert codec.json_schema(ref_template="#/components/schemas/{name}") == openapi
    assert codec.json_schema() == expected
    assert len(calls) == 2


def test_module_json_schema_result_may_be_changed() -> None:
    @dataclasses.dataclass
    class Entry:
        key: str

    first = polycodec.json_schema(Entry)
    (record,) = first["$defs"].values()
    record["properties"]["key"]["type"] = "changed"
    (again,) = polycodec.json_schema(Entry)["$defs"].values()
    assert again["properties"]["key"] == {"type": "string"}
