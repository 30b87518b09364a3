"""The JSON decoder's fast paths (issue 10) give what the general paths give: whole tag entries,
keys matched with their comma, short numbers, canonical UTC datetimes read in place, and the
(node, first byte) dispatch. Each case is checked against an oracle (json, msgspec) or against
the same input written with whitespace, which only the general paths read."""

from __future__ import annotations

import dataclasses
import enum
import json
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Annotated, Literal, Optional, Union

import msgspec
import pytest

import polycodec


@dataclasses.dataclass
class Leaf:
    size: int
    kind: Literal["leaf"] = "leaf"


@dataclasses.dataclass
class Branch:
    name: str
    children: list[Union[Leaf, Branch]]
    kind: Literal["branch"] = "branch"


TREE = polycodec.Codec(Union[Leaf, Branch], format="json")


def test_tag_entry_with_whitespace_decodes_as_without() -> None:
    tight = b'{"kind":"branch","name":"r","children":[{"kind":"leaf","size":1}]}'
    loose = b'{ "kind" : "branch" , "name":"r","children":[ {"kind": "leaf","size":1}]}'
    expected = Branch(name="r", children=[Leaf(size=1)])
    assert TREE.decode_one(tight) == expected
    assert TREE.decode_one(loose) == expected


def test_tag_not_first_still_picks_the_variant() -> None:
    assert TREE.decode_one(b'{"size":3,"kind":"leaf"}') == Leaf(size=3)


def test_tag_entry_prefix_of_another_value_is_not_taken() -> None:
    # `"leaf"` is the whole entry: a longer tag that starts with it is an invalid tag.
    with pytest.raises(polycodec.ValidationError, match=r'invalid value "leafy".*\$\.kind'):
        TREE.decode_one(b'{"kind":"leafy","size":3}')


def test_unknown_tag_error_is_unchanged() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        TREE.decode_one(b'{"kind":"twig","size":3}')
    assert str(info.value) == (
        'invalid value "twig" for tag field `kind`: expected one of "leaf", "branch" (at $.kind)'
    )


@dataclasses.dataclass
class IntTagged:
    value: int
    kind: Literal[1] = 1


@dataclasses.dataclass
class IntTaggedOther:
    value: int
    kind: Literal[12] = 12


def test_int_tags_are_not_matched_as_prefixes() -> None:
    codec = polycodec.Codec(Union[IntTagged, IntTaggedOther], format="json")
    assert codec.decode_one(b'{"kind":12,"value":5}') == IntTaggedOther(value=5)
    assert codec.decode_one(b'{"kind":1,"value":5}') == IntTagged(value=5)


@dataclasses.dataclass
class Point:
    x: int
    y: float
    label: str
    seen: Optional[datetime]
    flag: bool


POINT = polycodec.Codec(Point, format="json")


@pytest.mark.parametrize(
    "payload",
    [
        b'{"x":1,"y":2.5,"label":"a","seen":null,"flag":true}',
        b'{"x":1, "y":2.5,\n"label":"a",\t"seen":null ,"flag":true}',
        b' { "x" :1,"y" : 2.5,"label":"a","seen":null,"flag":true } ',
        b'{"flag":true,"seen":null,"label":"a","y":2.5,"x":1}',
    ],
)
def test_keys_with_whitespace_or_out_of_order_decode_alike(payload: bytes) -> None:
    assert POINT.decode_one(payload) == Point(x=1, y=2.5, label="a", seen=None, flag=True)


def test_key_missing_its_comma_is_still_a_syntax_error() -> None:
    with pytest.raises(polycodec.DecodeError, match="expected ',' or '}'"):
        POINT.decode_one(b'{"x":1 "y":2.5,"label":"a","seen":null,"flag":true}')


NUMBER_LITERALS = [
    "0",
    "-0",
    "7",
    "-7",
    "123456789012345678",
    "-123456789012345678",
    "999999999999999999",
    "1234567890123456789",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "0.5",
    "-0.5",
    "0.1",
    "5.482",
    "456.976",
    "12345678.123456789",
    "1234567890.12345678",
    "9007199254740993.0",
    "0.0000000000000000000001",
    "0.00000000000000000000001",
    "1.7976931348623157",
    "3.141592653589793238",
    "1e5",
    "1.5E-3",
    "-2.5e+10",
]


@pytest.mark.parametrize("literal", NUMBER_LITERALS)
def test_number_literals_match_the_json_module(literal: str) -> None:
    expected = json.loads(literal)
    got = polycodec.Codec(Union[int, float], format="json").decode_one(literal.encode())
    assert type(got) is type(expected) and got == expected
    if isinstance(expected, float):
        assert polycodec.Codec(float, format="json").decode_one(literal.encode()) == expected
    else:
        assert polycodec.Codec(int, format="json").decode_one(literal.encode()) == expected
        assert polycodec.Codec(float, format="json").decode_one(literal.encode()) == float(expected)


@pytest.mark.parametrize(
    "literal, message",
    [
        ("01", "leading zeros are not allowed"),
        ("-x", "expected digit after '-'"),
        ("1.x", "expected digit after decimal point"),
        ("1.", "unexpected end of input"),
        ("1.e5", "expected digit after decimal point"),
        ("-01.5", "leading zeros are not allowed"),
        ("1ex", "expected digit in exponent"),
    ],
)
def test_malformed_number_errors_are_unchanged(literal: str, message: str) -> None:
    for node in (int, float):
        with pytest.raises(polycodec.DecodeError, match=message):
            polycodec.Codec(node, format="json").decode_one(literal.encode())


@dataclasses.dataclass
class Measured:
    count: int
    weight: float


@pytest.mark.parametrize("literal", [x for x in NUMBER_LITERALS if "e" not in x.lower()])
def test_peeked_numbers_after_whitespace_match_the_json_module(literal: str) -> None:
    # int and float fields read their number right after the peeked first byte; whitespace
    # before it (skipped by the peek) must not change what is read.
    expected = json.loads(literal)
    if not isinstance(expected, int):
        return
    payload = f'{{ "count" :\t {literal} ,\n "weight" :  {literal} }}'.encode()
    got = polycodec.Codec(Measured, format="json").decode_one(payload)
    assert got == Measured(expected, float(expected))
    assert type(got.count) is int and type(got.weight) is float


def test_peeked_number_errors_after_whitespace_are_unchanged() -> None:
    codec = polycodec.Codec(Measured, format="json")
    with pytest.raises(polycodec.DecodeError, match="leading zeros are not allowed"):
        codec.decode_one(b'{"count":  01, "weight": 1.5}')
    with pytest.raises(polycodec.DecodeError, match="expected digit after decimal point"):
        codec.decode_one(b'{"count": 1, "weight":  1.x}')


@dataclasses.dataclass
class Stamped:
    at: datetime
    note: str


STAMPED = polycodec.Codec(Stamped, format="json")
STAMPED_MSGSPEC = msgspec.json.Decoder(Stamped)


@pytest.mark.parametrize(
    "text",
    [
        "2021-09-29T20:34:46.167281Z",
        "2021-09-29T20:34:46Z",
        "2021-09-29T20:34:46.167281+00:00",
        "2021-09-29T20:34:46.1672819Z",
        "2024-02-29T00:00:00Z",
        "2021-09-29T20:34:46.16728Z",
        "2021-09-29 20:34:46Z",
    ],
)
def test_datetimes_match_msgspec(text: str) -> None:
    payload = json.dumps({"at": text, "note": "n"}).encode()
    assert STAMPED.decode_one(payload) == STAMPED_MSGSPEC.decode(payload)


def test_canonical_length_string_with_a_quote_after_is_not_read_in_place() -> None:
    # A short string whose closing quote is followed by text with a quote just where a
    # canonical datetime would end: the in-place match must refuse it (and the short text is
    # then an invalid datetime, as before).
    payload = b'{"at":"2021-09-29","note":"abcdefg"}'
    assert payload[6 + 28 : 6 + 29] == b'"'
    with pytest.raises(polycodec.ValidationError, match=r"\$\.at"):
        STAMPED.decode_one(payload)


@pytest.mark.parametrize(
    "text",
    ["2021-02-29T00:00:00Z", "2021-09-29T24:00:00.000000Z", "2021-13-01T00:00:00Z"],
)
def test_invalid_canonical_shaped_datetimes_are_refused_as_before(text: str) -> None:
    payload = json.dumps({"at": text, "note": "n"}).encode()
    with pytest.raises(polycodec.ValidationError, match=r"\$\.at"):
        STAMPED.decode_one(payload)
    with pytest.raises(msgspec.ValidationError):
        STAMPED_MSGSPEC.decode(payload)


def test_datetime_in_place_keeps_utc() -> None:
    value = STAMPED.decode_one(b'{"at":"2021-09-29T20:34:46.167281Z","note":"n"}')
    assert value.at == datetime(2021, 9, 29, 20, 34, 46, 167281, tzinfo=timezone.utc)
    assert value.at.tzinfo is timezone.utc


@dataclasses.dataclass
class Choices:
    maybe: Optional[int]
    either: Union[str, list[int], None]


def test_union_variants_and_errors_are_unchanged() -> None:
    codec = polycodec.Codec(Choices, format="json")
    assert codec.decode_one(b'{"maybe":null,"either":"s"}') == Choices(None, "s")
    assert codec.decode_one(b'{"maybe":3,"either":[1,2]}') == Choices(3, [1, 2])
    assert codec.decode_one(b'{"maybe":3,"either":null}') == Choices(3, None)
    with pytest.raises(polycodec.ValidationError, match=r"got str \(at \$\.maybe\)"):
        codec.decode_one(b'{"maybe":"3","either":null}')
    with pytest.raises(polycodec.ValidationError, match=r"got object \(at \$\.either\)"):
        codec.decode_one(b'{"maybe":3,"either":{}}')
    with pytest.raises(polycodec.DecodeError, match="expected 'null'"):
        codec.decode_one(b'{"maybe":nul,"either":null}')


# The (node, first byte) dispatch reads numbers for int and float nodes through one reader and
# strs for every str-like node through one reader; bounds checks are skipped inline only when a
# node has no bounds. Each case below is checked against msgspec, or against the error the
# general path words.


@dataclasses.dataclass
class Numbers:
    count: int
    ratio: float
    bounded: Annotated[int, polycodec.Meta(ge=0, le=10)]
    positive: Annotated[float, polycodec.Meta(gt=0)]


class NumbersStruct(msgspec.Struct):
    count: int
    ratio: float
    bounded: Annotated[int, msgspec.Meta(ge=0, le=10)]
    positive: Annotated[float, msgspec.Meta(gt=0)]


@pytest.mark.parametrize(
    "payload",
    [
        b'{"count":1,"ratio":2,"bounded":10,"positive":3}',
        b'{"count":-7,"ratio":-2.5e3,"bounded":0,"positive":0.5}',
        b'{"count":123456789012345678901234567890,"ratio":1,"bounded":5,"positive":1e-300}',
    ],
)
def test_int_and_float_nodes_read_numbers_as_msgspec(payload: bytes) -> None:
    got = polycodec.Codec(Numbers, format="json").decode_one(payload)
    expected = msgspec.json.decode(payload, type=NumbersStruct)
    assert dataclasses.astuple(got) == tuple(msgspec.structs.astuple(expected))
    assert type(got.ratio) is float and type(got.count) is int


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        (b'{"count":1.5,"ratio":2,"bounded":1,"positive":1}', r"\$\.count"),
        (b'{"count":1,"ratio":1e400,"bounded":1,"positive":1}', r"\$\.ratio"),
        (b'{"count":1,"ratio":2,"bounded":11,"positive":1}', r"\$\.bounded"),
        (b'{"count":1,"ratio":2,"bounded":-1,"positive":1}', r"\$\.bounded"),
        (b'{"count":1,"ratio":2,"bounded":1,"positive":0}', r"\$\.positive"),
        (b'{"count":1,"ratio":2,"bounded":1,"positive":-3.5}', r"\$\.positive"),
    ],
)
def test_number_node_errors_name_the_field_as_msgspec_refuses(payload: bytes, where: str) -> None:
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(payload, type=NumbersStruct)
    with pytest.raises(polycodec.ValidationError, match=where):
        polycodec.Codec(Numbers, format="json").decode_one(payload)


def test_lax_union_without_a_str_variant_reads_a_str_as_msgspec() -> None:
    codec = polycodec.Codec(Optional[int], format="json", strict=False)
    expected = msgspec.json.decode(b'"3"', type=Optional[int], strict=False)
    assert codec.decode_one(b'"3"') == expected
    assert polycodec.Codec(int, format="json", strict=False).decode_one(b'"-4"') == -4
    with pytest.raises(
        polycodec.ValidationError, match=r"^expected int \| null, got str \(at \$\)$"
    ):
        polycodec.Codec(Optional[int], format="json").decode_one(b'"3"')


def test_str_like_nodes_read_strs_as_msgspec() -> None:
    short = Annotated[str, polycodec.Meta(max_length=2)]
    assert polycodec.Codec(list[str], format="json").decode_one(b'["a","\\u00e9",""]') == [
        "a",
        "\u00e9",
        "",
    ]
    assert polycodec.Codec(Literal["x", "y"], format="json").decode_one(b'"y"') == "y"
    assert polycodec.Codec(short, format="json").decode_one(b'"ab"') == "ab"
    with pytest.raises(polycodec.ValidationError, match="length <= 2"):
        polycodec.Codec(short, format="json").decode_one(b'"abc"')
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'"abc"', type=Annotated[str, msgspec.Meta(max_length=2)])


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Shortcuts:
    """One field of each kind the per-node shortcut table (`Plain`) reads without the node."""

    name: str
    count: int
    ratio: float
    flag: bool
    price: Decimal
    day: date
    color: Color
    note: Optional[str]
    inner: Optional[Leaf]
    items: list[int]
    maybe_items: Optional[list[int]]


class ShortcutsStruct(msgspec.Struct):
    name: str
    count: int
    ratio: float
    flag: bool
    price: Decimal
    day: date
    color: Color
    note: Optional[str]
    inner: Optional[dict[str, object]]
    items: list[int]
    maybe_items: Optional[list[int]]


SHORTCUTS = polycodec.Codec(Shortcuts, format="json")
GOOD = (
    b'{"name":"a","count":-3,"ratio":2,"flag":false,"price":"1.50","day":"2024-02-29",'
    b'"color":"green","note":null,"inner":{"size":4,"kind":"leaf"},"items":[1,2],'
    b'"maybe_items":null}'
)


def test_shortcut_table_kinds_decode_as_msgspec() -> None:
    got = SHORTCUTS.decode_one(GOOD)
    expected = msgspec.json.decode(GOOD, type=ShortcutsStruct)
    assert got == Shortcuts(
        name=expected.name,
        count=expected.count,
        ratio=expected.ratio,
        flag=expected.flag,
        price=expected.price,
        day=expected.day,
        color=expected.color,
        note=expected.note,
        inner=Leaf(size=4),
        items=expected.items,
        maybe_items=expected.maybe_items,
    )
    assert type(got.ratio) is float and got.price == Decimal("1.50")
    many = polycodec.Codec(Shortcuts, format="json").decode_many(b"[" + GOOD + b"," + GOOD + b"]")
    assert many == [got, got]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("color", '"blue"', r'invalid enum value "blue" for Color.*\(at \$\.color\)'),
        ("color", "3", r"\$\.color"),
        ("flag", '"x"', r"\$\.flag"),
        ("price", '"abc"', r'invalid decimal "abc" \(at \$\.price\)'),
        ("day", '"2024-02-30"', r"\$\.day"),
        ("inner", "[1]", r"\$\.inner"),
        ("inner", '"x"', r"\$\.inner"),
        ("maybe_items", "{}", r"\$\.maybe_items"),
        ("count", "1.5", r"\$\.count"),
        ("ratio", "1e999", r"out of range for a float \(at \$\.ratio\)"),
        ("name", "1", r"\$\.name"),
    ],
)
def test_shortcut_table_errors_name_the_field(field: str, value: str, message: str) -> None:
    payload = json.loads(GOOD)
    raw = GOOD.decode().replace(
        f'"{field}":{json.dumps(payload[field], separators=(",", ":"))}', f'"{field}":{value}'
    )
    assert raw != GOOD.decode()
    with pytest.raises(polycodec.ValidationError, match=message):
        SHORTCUTS.decode_one(raw.encode())


def test_shortcut_table_errors_match_the_general_path() -> None:
    # The same bad values written with whitespace after each colon reach the fields through
    # the key scanner; the messages must not depend on which path read them.
    for field, value in [
        ("color", '"blue"'),
        ("price", '"abc"'),
        ("inner", "[1]"),
        ("count", "1.5"),
    ]:
        payload = json.loads(GOOD)
        tight = GOOD.decode().replace(
            f'"{field}":{json.dumps(payload[field], separators=(",", ":"))}', f'"{field}":{value}'
        )
        loose = tight.replace('":', '": ')
        errors = []
        for text in (tight, loose):
            with pytest.raises(polycodec.ValidationError) as info:
                SHORTCUTS.decode_one(text.encode())
            errors.append(str(info.value))
        assert errors[0] == errors[1]
