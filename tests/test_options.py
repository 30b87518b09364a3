"""Codec options: rename, Meta(name=), omit_defaults, forbid_unknown_fields, strict and
array_like."""

import dataclasses
import datetime
import json
import keyword
import os
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Optional, Union

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec
from json_models import Point, Tree, assert_same, check_json


@dataclass
class Names:
    user_id: int
    first_name: str
    x: int
    _private_value: int
    http_url_2: str


NAMES = Names(1, "Ann", 2, 3, "u")


@pytest.mark.parametrize(
    "rename, wire",
    [
        (None, ["user_id", "first_name", "x", "_private_value", "http_url_2"]),
        ("camel", ["userId", "firstName", "x", "_privateValue", "httpUrl2"]),
        ("pascal", ["UserId", "FirstName", "X", "_PrivateValue", "HttpUrl2"]),
        ("kebab", ["user-id", "first-name", "x", "private-value", "http-url-2"]),
        ("screaming_snake", ["USER_ID", "FIRST_NAME", "X", "_PRIVATE_VALUE", "HTTP_URL_2"]),
        (
            {"user_id": "id", "x": "X coord"},
            ["id", "first_name", "X coord", "_private_value", "http_url_2"],
        ),
        (str.upper, ["USER_ID", "FIRST_NAME", "X", "_PRIVATE_VALUE", "HTTP_URL_2"]),
        (
            lambda name: None if name.startswith("_") else "f_" + name,
            ["f_user_id", "f_first_name", "f_x", "_private_value", "f_http_url_2"],
        ),
    ],
    ids=["none", "camel", "pascal", "kebab", "screaming", "dict", "callable", "callable-none"],
)
def test_rename(rename: Any, wire: list[str]) -> None:
    values = [1, "Ann", 2, 3, "u"]
    jsonable = dict(zip(wire, values))
    out = check_json(Names, NAMES, jsonable, msgspec_oracle=False, rename=rename)
    assert list(json.loads(out)) == wire
    assert_same(polycodec.decode_one(out, Names, rename=rename), NAMES)


# Identifiers as people write them: snake_case, camelCase, digits after underscores, runs of
# underscores, private and dunder edges, and letters whose title case is not one upper letter.
# (Python reads identifiers in NFKC form, so only names that form keeps can be attributes.)
IDENTIFIER_CHARS = st.sampled_from(list("abcxyzABCXYZ019_") + ["ß", "é", "İ", "ω"])
IDENTIFIERS = st.text(IDENTIFIER_CHARS, min_size=1, max_size=16).filter(
    lambda name: name.isidentifier()
    and not keyword.iskeyword(name)
    and unicodedata.normalize("NFKC", name) == name
)


def _msgspec_name(name: str, style: str) -> Optional[str]:
    """The wire name msgspec gives attribute ``name`` under ``rename=style``, or None where
    msgspec cannot have such a field (a Struct field ``__x`` is name-mangled)."""
    try:
        struct = msgspec.defstruct("Named", [(name, int)], rename=style)
    except (RuntimeError, TypeError, ValueError):
        return None
    (wire,) = struct.__struct_encode_fields__
    return str(wire)


@pytest.mark.parametrize("style", ["camel", "pascal", "kebab", "lower", "upper"])
@settings(
    max_examples=int(os.environ.get("POLYCODEC_HYPOTHESIS_EXAMPLES", "200")),
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
)
@given(name=IDENTIFIERS)
def test_issue26_14_rename_styles_write_msgspecs_names(style: str, name: str) -> None:
    """A port from msgspec keeps its wire format: each named style gives the name msgspec gives,
    checked on the encoded JSON of a dataclass with that one field."""
    expected = _msgspec_name(name, style)
    if expected is None:
        return
    record = dataclasses.make_dataclass("Named", [(name, int)])
    out = polycodec.encode_one(record(**{name: 7}), rename=style)
    assert json.loads(out) == {expected: 7}
    assert msgspec.json.encode(msgspec.defstruct("Named", [(name, int)], rename=style)(7)) == out


@pytest.mark.parametrize(
    "style, name, wire",
    [
        ("camel", "abc_", "abc"),
        ("camel", "a_1b", "a1B"),
        ("camel", "already_camelCase", "alreadyCamelcase"),
        ("camel", "__a__b__", "__aB"),
        ("pascal", "_private", "_Private"),
        ("kebab", "x__y", "x--y"),
        ("kebab", "_private", "private"),
        ("kebab", "Mixed_Case", "Mixed-Case"),
        ("screaming_snake", "x__y", "X__Y"),
    ],
)
def test_issue26_14_rename_examples(style: str, name: str, wire: str) -> None:
    """The cases the issue found, and ``screaming_snake`` as msgspec's ``upper``."""
    record = dataclasses.make_dataclass("Named", [(name, int)])
    assert json.loads(polycodec.encode_one(record(**{name: 1}), rename=style)) == {wire: 1}
    assert polycodec.decode_one(json.dumps({wire: 1}), record, rename=style) == record(1)


def test_rename_applies_to_nested_records_and_error_paths() -> None:
    @dataclass
    class Inner:
        some_value: int

    @dataclass
    class Outer:
        inner_items: list[Inner]

    codec: polycodec.Codec[Any] = polycodec.Codec(Outer, rename="camel")
    out = codec.encode_one(Outer([Inner(1)]))
    assert out == b'{"innerItems":[{"someValue":1}]}'
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"innerItems": [{"someValue": 1}, {"someValue": "x"}]}')
    assert info.value.path == "$.innerItems[1].someValue"
    assert info.value.path in str(info.value)
    with pytest.raises(polycodec.ValidationError):
        codec.decode_one(b'{"inner_items": []}')


def test_rename_does_not_touch_dict_keys_or_typeddict() -> None:
    @dataclass
    class WithDict:
        the_map: dict[str, int]

    out = polycodec.encode_one(WithDict({"a_b": 1}), rename="camel")
    assert out == b'{"theMap":{"a_b":1}}'


def test_unknown_rename_style() -> None:
    with pytest.raises(ValueError):
        polycodec.Codec(Names, rename="snake_case_please")  # type: ignore[arg-type]


@dataclass
class MetaNamed:
    normal_field: int
    odd: Annotated[int, polycodec.Meta(name="odd name")]
    renamed: Annotated[Optional[str], polycodec.Meta(name="@type")] = None


def test_meta_name() -> None:
    value = MetaNamed(1, 2, "t")
    jsonable = {"normal_field": 1, "odd name": 2, "@type": "t"}
    check_json(MetaNamed, value, jsonable, msgspec_oracle=False)


def test_meta_name_overrides_rename() -> None:
    value = MetaNamed(1, 2, "t")
    jsonable = {"normalField": 1, "odd name": 2, "@type": "t"}
    check_json(MetaNamed, value, jsonable, msgspec_oracle=False, rename="camel")


def test_meta_name_in_error_path_uses_brackets() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"normal_field": 1, "odd name": "2"}', MetaNamed)
    assert info.value.path == '$["odd name"]'
    assert info.value.path in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"normal_field": 1, "odd name": 2, "@type": 3}', MetaNamed)
    assert info.value.path == '$["@type"]'


@dataclass
class WithDefaults:
    required: int
    number: int = 0
    text: str = ""
    maybe: Optional[int] = None
    flag: bool = False
    tags: list[str] = field(default_factory=list)
    table: dict[str, int] = field(default_factory=dict)
    point: Point = field(default_factory=lambda: Point(0, 0))


@pytest.mark.parametrize(
    "value, jsonable",
    [
        (WithDefaults(1), {"required": 1}),
        (WithDefaults(0, number=5), {"required": 0, "number": 5}),
        (WithDefaults(1, maybe=0, flag=True), {"required": 1, "maybe": 0, "flag": True}),
        (WithDefaults(1, tags=["a"]), {"required": 1, "tags": ["a"]}),
        (WithDefaults(1, table={"k": 1}), {"required": 1, "table": {"k": 1}}),
        (WithDefaults(1, point=Point(0, 1)), {"required": 1, "point": {"x": 0, "y": 1}}),
        (WithDefaults(1, text="t", point=Point(0, 0)), {"required": 1, "text": "t"}),
    ],
)
def test_omit_defaults(value: WithDefaults, jsonable: dict[str, Any]) -> None:
    out = check_json(WithDefaults, value, jsonable, msgspec_oracle=False, omit_defaults=True)
    assert_same(msgspec.json.decode(out, type=WithDefaults), value)


def test_omit_defaults_off_writes_everything() -> None:
    out = polycodec.encode_one(WithDefaults(1))
    assert out == msgspec.json.encode(WithDefaults(1))
    assert len(json.loads(out)) == 8


def test_omit_defaults_applies_to_nested_records() -> None:
    @dataclass
    class Outer:
        inner: WithDefaults
        items: list[WithDefaults] = field(default_factory=list)

    value = Outer(WithDefaults(1), [WithDefaults(2, number=3)])
    out = polycodec.encode_one(value, omit_defaults=True)
    assert json.loads(out) == {"inner": {"required": 1}, "items": [{"required": 2, "number": 3}]}
    assert_same(polycodec.decode_one(out, Outer), value)


@dataclass
class Small:
    a: int
    b: Optional[Point] = None


def test_unknown_fields_are_ignored_by_default() -> None:
    payload = (
        b'{"a": 1, "extra": {"deep": [1, {"x": [null, true, 1.5e3, "s"]}]}, "b": null, "z": 1}'
    )
    assert_same(polycodec.decode_one(payload, Small), Small(1))


def test_forbid_unknown_fields() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Small, forbid_unknown_fields=True)
    assert_same(codec.decode_one(b'{"a": 1, "b": {"x": 1, "y": 2}}'), Small(1, Point(1, 2)))
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"a": 1, "extra": 2}')
    assert info.value.path == "$"
    assert "extra" in str(info.value)
    assert info.value.path in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"a": 1, "b": {"x": 1, "y": 2, "z": 3}}')
    assert info.value.path == "$.b"
    assert "z" in str(info.value)


def test_forbid_unknown_fields_with_rename_rejects_attribute_names() -> None:
    @dataclass
    class Renamed:
        some_field: int = 0

    codec: polycodec.Codec[Any] = polycodec.Codec(
        Renamed, rename="camel", forbid_unknown_fields=True
    )
    assert codec.decode_one(b'{"someField": 2}') == Renamed(2)
    with pytest.raises(polycodec.ValidationError):
        codec.decode_one(b'{"some_field": 2}')


@dataclass
class Lax:
    i: int
    f: float
    b: bool
    d: Decimal
    items: list[int]
    table: dict[str, float]


LAX_CASES: list[tuple[Any, bytes, Any]] = [
    (int, b'"12"', 12),
    (int, b'"-7"', -7),
    (int, b"3.0", 3),
    (int, b"-0.0", 0),
    (int, b'"123456789012345678901234567890"', 123456789012345678901234567890),
    (float, b'"1.5"', 1.5),
    (float, b'"-2e3"', -2000.0),
    (float, b'"7"', 7.0),
    (bool, b'"true"', True),
    (bool, b'"false"', False),
    (bool, b'"1"', True),
    (bool, b'"0"', False),
    (bool, b"1", True),
    (bool, b"0", False),
    (Decimal, b"1.25", Decimal("1.25")),
    (Decimal, b"10", Decimal("10")),
    (Optional[int], b'"5"', 5),
    (list[int], b'["1", 2, 3.0]', [1, 2, 3]),
    (dict[str, bool], b'{"a": "true", "b": 0}', {"a": True, "b": False}),
]


@pytest.mark.parametrize("tp, payload, expected", LAX_CASES)
def test_lax_coercions(tp: Any, payload: bytes, expected: Any) -> None:
    assert_same(polycodec.decode_one(payload, tp, strict=False), expected)
    assert_same(polycodec.Codec(tp, strict=False).decode_one(payload), expected)


@pytest.mark.parametrize("tp, payload, expected", LAX_CASES)
def test_strict_refuses_lax_coercions(tp: Any, payload: bytes, expected: Any) -> None:
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(payload, tp)
    with pytest.raises(polycodec.ValidationError):
        polycodec.Codec(tp, strict=True).decode_one(payload)


@pytest.mark.parametrize(
    "tp, payload",
    [
        (int, b'"abc"'),
        (int, b"1.5"),
        (int, b'"1.5"'),
        (int, b"true"),
        (int, b"null"),
        (float, b'"abc"'),
        (bool, b'"yes"'),
        (bool, b"2"),
        (bool, b"null"),
        (Decimal, b"true"),
        (str, b"1"),
        (list[int], b'"1"'),
    ],
)
def test_lax_still_rejects_nonsense(tp: Any, payload: bytes) -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, tp, strict=False)
    assert info.value.path == "$"


def test_lax_record_and_error_path() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Lax, strict=False)
    payload = (
        b'{"i": "1", "f": "2.5", "b": "false", "d": 3.5, "items": ["4"], "table": {"x": "1e2"}}'
    )
    assert_same(codec.decode_one(payload), Lax(1, 2.5, False, Decimal("3.5"), [4], {"x": 100.0}))
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(payload.replace(b'["4"]', b'["4", "four"]'))
    assert info.value.path == "$.items[1]"


def test_strict_does_not_change_encoding() -> None:
    value = Lax(1, 2.5, True, Decimal("1.5"), [1], {"a": 1.0})
    assert polycodec.encode_one(value, strict=False) == polycodec.encode_one(value)


@dataclass
class Row:
    id: int
    name: str
    point: Point
    note: Optional[str] = None


def test_array_like() -> None:
    value = [Row(1, "a", Point(2, 3)), Row(4, "b", Point(5, 6), "n")]
    codec: polycodec.Codec[Any] = polycodec.Codec(list[Row], array_like=True)
    out = codec.encode_one(value)
    assert out == b'[[1,"a",[2,3],null],[4,"b",[5,6],"n"]]'
    assert_same(codec.decode_one(out), value)
    assert_same(codec.decode_one(json.dumps(json.loads(out), indent=1)), value)


def test_array_like_recursive_and_tuple_like_records() -> None:
    tree = Tree(1, [Tree(2, [Tree(3)])])
    out = polycodec.encode_one(tree, array_like=True)
    assert json.loads(out) == [1, [[2, [[3, []]]]]]
    assert_same(polycodec.decode_one(out, Tree, array_like=True), tree)


def test_array_like_optional_trailing_defaults() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Row, array_like=True)
    assert_same(codec.decode_one(b'[1, "a", [2, 3]]'), Row(1, "a", Point(2, 3)))


def test_array_like_errors() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Row, array_like=True)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'[1, "a"]')
    assert info.value.path == "$"
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'{"id": 1, "name": "a", "point": [2, 3]}')
    assert info.value.path == "$"
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(b'[1, "a", [2, "3"]]')
    assert info.value.path == "$[2][1]"
    assert info.value.path in str(info.value)


def test_array_like_tagged_union() -> None:
    from json_models import Cat, Dog

    codec: polycodec.Codec[Any] = polycodec.Codec(list[Union[Cat, Dog]], array_like=True)
    value = [Cat("cat", 3), Dog("dog", True)]
    out = codec.encode_one(value)
    assert json.loads(out) == [["cat", 3], ["dog", True]]
    assert_same(codec.decode_one(out), value)


def test_options_combine() -> None:
    @dataclass
    class Event:
        event_name: str
        occurred_at: datetime.datetime
        retry_count: int = 0

    options: dict[str, Any] = {
        "rename": "camel",
        "omit_defaults": True,
        "forbid_unknown_fields": True,
    }
    value = Event("boot", datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc))
    out = polycodec.encode_one(value, **options)
    assert out == b'{"eventName":"boot","occurredAt":"2020-01-01T00:00:00Z"}'
    assert_same(polycodec.decode_one(out, Event, **options), value)
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(
            b'{"eventName": "x", "occurredAt": "2020-01-01T00:00:00Z", "x": 1}', Event, **options
        )


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        polycodec.Codec(Point, "json", None)  # type: ignore[misc]
