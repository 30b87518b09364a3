"""Errors: the exception classes, their ``.path`` (which must also be in the message), decode
errors for malformed input, validation errors at every level, encode errors and the TypeError
raised when a type cannot be compiled."""

import datetime
import enum
import json
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Tuple, TypedDict, Union

import pytest

import polycodec
from json_models import (
    EVERYTHING_JSON,
    Archive,
    Chunk,
    Color,
    Everything,
    Level,
    Movie,
    Pair,
    Point,
)


def test_exception_hierarchy() -> None:
    assert issubclass(polycodec.DecodeError, ValueError)
    assert issubclass(polycodec.ValidationError, polycodec.DecodeError)
    assert issubclass(polycodec.EncodeError, TypeError)


def _validation_error(tp: Any, payload: bytes | str, **options: Any) -> polycodec.ValidationError:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, tp, **options)
    error = info.value
    assert error.path in str(error)
    return error


ARCHIVE = (
    b'{"label": "a", "contents": [{"name": "c0", "nbytes": 1}, {"name": "c1", "nbytes": 2},'
    b' {"name": "c2", "nbytes": 3}, {"name": "c3", "nbytes": "4"}]}'
)


@pytest.mark.parametrize(
    "payload, path",
    [
        (ARCHIVE, "$.contents[3].nbytes"),
        (b'{"label": 1, "contents": []}', "$.label"),
        (b'{"label": "a", "contents": {}}', "$.contents"),
        (b'{"label": "a", "contents": [1]}', "$.contents[0]"),
        (b'{"label": "a", "contents": [], "index": []}', "$.index"),
        (
            b'{"label": "a", "contents": [], "index": {"k": {"name": "n", "nbytes": 1.5}}}',
            '$.index["k"].nbytes',
        ),
        (
            b'{"label": "a", "contents": [], "index": {"odd key": {"name": 5}}}',
            '$.index["odd key"].name',
        ),
        (
            b'{"label": "a", "contents": [], "index": {"q\\"k": {"name": 5}}}',
            '$.index["q\\"k"].name',
        ),
        (b'{"label": "a", "contents": [], "owner": {"x": 1, "y": null}}', "$.owner.y"),
        (b'{"label": "a", "contents": [], "owner": []}', "$.owner"),
        (b"[]", "$"),
        (b"null", "$"),
    ],
)
def test_validation_error_paths(payload: bytes, path: str) -> None:
    error = _validation_error(Archive, payload)
    assert error.path == path


@pytest.mark.parametrize(
    "payload, path, field",
    [
        (b'{"contents": []}', "$", "label"),
        (b'{"label": "a"}', "$", "contents"),
        (b'{"label": "a", "contents": [{"name": "c"}]}', "$.contents[0]", "nbytes"),
        (b'{"label": "a", "contents": [], "index": {"k": {"nbytes": 1}}}', '$.index["k"]', "name"),
        (b'{"label": "a", "contents": [], "owner": {}}', "$.owner", "x"),
    ],
)
def test_missing_required_field(payload: bytes, path: str, field: str) -> None:
    error = _validation_error(Archive, payload)
    assert error.path == path
    assert field in str(error)


@pytest.mark.parametrize(
    "tp, payload",
    [
        (int, b'"1"'),
        (int, b"1.0"),
        (int, b"true"),
        (int, b"null"),
        (float, b'"1.5"'),
        (float, b"false"),
        (bool, b"1"),
        (bool, b'"true"'),
        (str, b"1"),
        (str, b"null"),
        (type(None), b"0"),
        (bytes, b"[1, 2]"),
        (bytes, b'"not base64!"'),
        (Decimal, b'"one"'),
        (Decimal, b"1.5"),
        (datetime.datetime, b'"2020-13-01T00:00:00"'),
        (datetime.datetime, b'"2020-02-30T00:00:00"'),
        (datetime.datetime, b'"2020-01-01T25:00:00"'),
        (datetime.datetime, b'"yesterday"'),
        (datetime.datetime, b"1577836800"),
        (datetime.date, b'"2021-02-29"'),
        (datetime.date, b'"2021-1-1"'),
        (datetime.time, b'"24:00:01"'),
        (datetime.timedelta, b'"1 day"'),
        (datetime.timedelta, b"3600"),
        (uuid.UUID, b'"not-a-uuid"'),
        (uuid.UUID, b'"12345678-1234-5678-1234-56781234567"'),
        (Color, b'"blue"'),
        (Color, b'"RED"'),
        (Level, b"3"),
        (Level, b'"1"'),
        (Literal["a", "b"], b'"c"'),
        (Literal[1, 2], b"3"),
        (Literal[1, 2], b'"1"'),
        (Optional[int], b'"x"'),
        (Union[int, str], b"1.5"),
        (Union[int, str], b"null"),
        (list[int], b"{}"),
        (list[int], b'"[1]"'),
        (tuple[int, int], b"[1]"),
        (tuple[int, int], b"[1, 2, 3]"),
        (tuple[()], b"[1]"),
        (set[int], b"{}"),
        (dict[str, int], b"[]"),
        (Point, b"[1, 2]"),
        (Pair, b'{"left": 1, "right": "a"}'),
        (Pair, b"[1]"),
        (Pair, b'[1, "a", 2]'),
        (Movie, b'{"title": "x"}'),
    ],
)
def test_wrong_types_at_the_top_level(tp: Any, payload: bytes) -> None:
    assert _validation_error(tp, payload).path == "$"


@pytest.mark.parametrize(
    "tp, payload, path",
    [
        (list[list[int]], b"[[1], [2, 3, null]]", "$[1][2]"),
        (dict[int, str], b'{"x": "a"}', '$["x"]'),
        (dict[int, str], b'{"1.5": "a"}', '$["1.5"]'),
        (dict[Color, int], b'{"blue": 1}', '$["blue"]'),
        (dict[uuid.UUID, int], b'{"nope": 1}', '$["nope"]'),
        (Movie, b'{"title": "x", "year": "y"}', "$.year"),
        (dict[str, list[int]], b'{"a": [1], "b": [2, "x"]}', '$["b"][1]'),
        (dict[int, list[int]], b'{"7": [1, "x"]}', '$["7"][1]'),
        (tuple[int, str, bool], b'[1, "a", "b"]', "$[2]"),
        (tuple[int, ...], b"[1, 2, 3.5]", "$[2]"),
        (set[int], b"[1, false]", "$[1]"),
        (frozenset[str], b'["a", 1]', "$[1]"),
        (list[Point], b'[{"x": 1, "y": 2}, {"x": 1, "y": "2"}]', "$[1].y"),
        (list[Pair], b'[[1, "a"], [2, 3]]', "$[1][1]"),
        (dict[str, Movie], b'{"m": {"title": "t", "year": 1.5}}', '$["m"].year'),
        (list[Optional[Point]], b"[null, {}]", "$[1]"),
        (dict[str, dict[str, dict[str, int]]], b'{"a": {"b": {"c": "d"}}}', '$["a"]["b"]["c"]'),
    ],
)
def test_wrong_types_deep_down(tp: Any, payload: bytes, path: str) -> None:
    assert _validation_error(tp, payload).path == path


def test_everything_field_errors_carry_the_field_path() -> None:
    for name, value in EVERYTHING_JSON.items():
        if name in ("anything", "none"):
            continue
        broken = dict(EVERYTHING_JSON)
        broken[name] = {"not": "valid"} if not isinstance(value, dict) else [1]
        error = _validation_error(Everything, json.dumps(broken))
        assert error.path == f"$.{name}", name


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b" ",
        b"{",
        b'{"label": "a", "contents": [',
        b'{"label": "a" "contents": []}',
        b'{"label": "a", "contents": [],}',
        b"{'label': 'a'}",
        b'{"label": "a", "contents": []} x',
        b'{"label": "a", "contents": []}{}',
        b'{"label": "\xff", "contents": []}',
        b'{"label": "a\x01", "contents": []}',
        b'{"label": "a", "contents": [01]}',
        b'{"label": "a", "contents": [NaN]}',
        b'{"label": "a", "contents": [1e]}',
    ],
)
def test_malformed_input_is_a_decode_error(payload: bytes) -> None:
    with pytest.raises(polycodec.DecodeError) as info:
        polycodec.decode_one(payload, Archive)
    assert info.value.path in str(info.value)


def test_malformed_input_is_not_a_validation_error() -> None:
    with pytest.raises(polycodec.DecodeError) as info:
        polycodec.decode_one(b'{"label": "a", "contents": [{"name": "c", "nbytes": 1},,]}', Archive)
    assert not isinstance(info.value, polycodec.ValidationError)


def test_decode_error_path_locates_the_problem() -> None:
    with pytest.raises(polycodec.DecodeError) as info:
        polycodec.decode_one(b'{"label": "a", "contents": [{"name": "c", "nbytes": 1x}]}', Archive)
    assert info.value.path.startswith("$.contents[0]")


def test_decode_many_errors_index_the_array() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_many(b'[{"x": 1, "y": 2}, {"x": 1}]', Point)
    assert info.value.path == "$[1]"
    assert "y" in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_many(b'{"x": 1, "y": 2}', Point)
    assert info.value.path == "$"


@pytest.mark.parametrize(
    "tp, value, path",
    [
        (int, "1", "$"),
        (int, 1.0, "$"),
        (str, b"x", "$"),
        (bool, 1, "$"),
        (float, "1.0", "$"),
        (bytes, "x", "$"),
        (list[int], [1, 2, "3"], "$[2]"),
        (dict[str, int], {"a": 1, "b": None}, '$["b"]'),
        (tuple[int, str], (1, 2), "$[1]"),
        (tuple[int, str], (1,), "$"),
        (Point, Point(1, "2"), "$.y"),  # type: ignore[arg-type]
        (list[Point], [Point(1, 2), Point(None, 2)], "$[1].x"),  # type: ignore[arg-type]
        (Archive, Archive("a", [Chunk("c", 1), Chunk("d", "2")]), "$.contents[1].nbytes"),  # type: ignore[arg-type]
        (Archive, Archive("a", [], {"k": Chunk(3, 1)}), '$.index["k"].name'),  # type: ignore[arg-type]
        (Color, "red", "$"),
        (Level, 1, "$"),
        (Literal["a"], "b", "$"),
        (datetime.datetime, datetime.date(2020, 1, 1), "$"),
        (datetime.date, "2020-01-01", "$"),
        (uuid.UUID, "12345678-1234-5678-1234-567812345678", "$"),
        (Decimal, 1.5, "$"),
        (Optional[int], "x", "$"),
        (Point, {"x": 1, "y": 2}, "$"),
        (Movie, {"title": "t", "year": "y"}, "$.year"),
    ],
)
def test_encode_errors(tp: Any, value: Any, path: str) -> None:
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.encode_one(value, type=tp)
    assert info.value.path == path
    assert path in str(info.value)


def test_encode_many_error_path_indexes_the_sequence() -> None:
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.encode_many([Point(1, 2), Point(3, "4")], type=Point)  # type: ignore[arg-type]
    assert info.value.path == "$[1].y"


class Plain:
    def __init__(self, value: int) -> None:
        self.value = value


class Flags(enum.IntEnum):
    A = 1


@dataclass
class WithComplex:
    ok: int
    bad: complex


@dataclass
class WithPlain:
    inner: list[Plain]


@dataclass
class WithFloatKeys:
    table: dict[float, int]


@dataclass
class WithAmbiguous:
    either: Union[list[int], tuple[int, ...]]


@dataclass
class WithStrOrDatetime:
    when: Union[str, datetime.datetime]


class TD(TypedDict):
    nested: dict[bytes, int]


@pytest.mark.parametrize(
    "tp, fragments",
    [
        (WithComplex, ["bad", "complex"]),
        (WithPlain, ["inner", "Plain"]),
        (WithFloatKeys, ["table", "float"]),
        (WithAmbiguous, ["either"]),
        (WithStrOrDatetime, ["when"]),
        (TD, ["nested", "bytes"]),
        (complex, ["complex"]),
        (Plain, ["Plain"]),
        (dict[float, int], ["float"]),
        (Union[list[int], tuple[int, ...]], ["list"]),
        (Union[str, datetime.datetime], ["datetime"]),
        (Union[int, Flags], ["Flags"]),
        (Union[Point, dict[str, int]], ["Point"]),
        (Union[Point, Chunk], ["Point"]),
        (Tuple[int, Plain], ["Plain"]),
    ],
)
def test_unsupported_annotations_raise_type_error(tp: Any, fragments: list[str]) -> None:
    with pytest.raises(TypeError) as info:
        polycodec.Codec(tp)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_unknown_format() -> None:
    with pytest.raises(ValueError):
        polycodec.Codec(Point, format="yaml")  # type: ignore[arg-type]


def test_error_on_one_call_does_not_poison_the_codec() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Archive)
    with pytest.raises(polycodec.ValidationError):
        codec.decode_one(ARCHIVE)
    with pytest.raises(polycodec.DecodeError):
        codec.decode_one(b"{")
    assert codec.decode_one(b'{"label": "x", "contents": []}') == Archive("x", [])


# --- structured locations (issue 14, case 16) -------------------------------------------------


@dataclass
class _Item:
    the_name: str
    count: Annotated[int, polycodec.Meta(ge=0)]


@dataclass
class _Form:
    items: list[_Item]
    index: dict[str, _Item]
    by_number: dict[int, _Item]
    pair: Tuple[int, int] = (0, 0)


def _form_error(payload: bytes, **options: Any) -> polycodec.ValidationError:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, _Form, **options)
    return info.value


@dataclass
class _Order:
    line_items: list[_Item]
    by_sku: dict[str, _Item]


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_structured_error_locations_in_every_format(fmt: str) -> None:
    codec = polycodec.Codec(_Order, fmt, rename="camel")
    good = _Order([_Item("a", 1)], {"k": _Item("b", 2)})
    assert codec.decode_one(codec.encode_one(good)) == good
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(_Order([_Item("a", 1), _Item("b", "2")], {}))  # type: ignore[arg-type]
    # Wire names (after rename), as in the path; positions as ints.
    assert info.value.loc == ("lineItems", 1, "count")
    assert info.value.path == "$.lineItems[1].count"
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(_Order([], {"k": _Item(3, 1)}))  # type: ignore[arg-type]
    assert info.value.loc == ("bySku", "k", "theName")
    # Decoding: a failed constraint inside the same structure (encoders do not check them).
    with pytest.raises(polycodec.ValidationError) as dinfo:
        codec.decode_one(codec.encode_one(_Order([_Item("a", 1)], {"k": _Item("b", -2)})))
    assert dinfo.value.loc == ("bySku", "k", "count")
    assert dinfo.value.path == "$.bySku.k.count" or dinfo.value.path == '$.bySku["k"].count'


def test_structured_error_locations_decode() -> None:
    error = _form_error(
        b'{"items": [{"theName": "a", "count": "1"}], "index": {}, "byNumber": {}}', rename="camel"
    )
    assert error.loc == ("items", 0, "count")
    assert error.path == "$.items[0].count"
    error = _form_error(
        b'{"items": [], "index": {"k k": {"the_name": 1, "count": 1}}, "by_number": {}}'
    )
    assert error.loc == ("index", "k k", "the_name")
    assert error.path == '$.index["k k"].the_name'
    # Dict keys appear as the path shows them (their str), whatever the key type.
    error = _form_error(b'{"items": [], "index": {}, "by_number": {"3": {"the_name": "a"}}}')
    assert error.loc == ("by_number", "3")
    error = _form_error(b'{"items": [], "index": {}, "by_number": {}, "pair": [1, "2"]}')
    assert error.loc == ("pair", 1)
    # The root is the empty tuple.
    error = _form_error(b"[]")
    assert error.loc == ()
    assert error.path == "$"


def test_structured_error_locations_decode_error_and_many() -> None:
    with pytest.raises(polycodec.DecodeError) as info:
        polycodec.decode_one(b'{"items": [{"the_name": "a", "count": 1}, ', _Form)
    assert isinstance(info.value.loc, tuple)
    assert info.value.loc == ("items", 1)
    with pytest.raises(polycodec.ValidationError) as vinfo:
        polycodec.decode_many(b'[{"x": 1, "y": 2}, {"x": 1, "y": "2"}]', Point)
    assert vinfo.value.loc == (1, "y")
    with pytest.raises(polycodec.EncodeError) as einfo:
        polycodec.encode_many([Point(1, 2), Point(1, "2")], type=Point)  # type: ignore[arg-type]
    assert einfo.value.loc == (1, "y")


def test_structured_error_locations_user_exception() -> None:
    @dataclass
    class Checked:
        n: int

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")

    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'[{"n": 1}, {"n": -1}]', list[Checked])
    assert info.value.loc == (1,)
    assert isinstance(info.value.__cause__, ValueError)


def test_structured_error_locations_constructed_by_hand() -> None:
    error = polycodec.ValidationError("bad", "$.a[0]", ("a", 0))
    assert error.loc == ("a", 0) and error.path == "$.a[0]"
    assert polycodec.DecodeError("bad").loc == ()
    assert polycodec.EncodeError("bad", "$.x", ["x"]).loc == ("x",)


def test_structured_error_locations_survive_pickling() -> None:
    import pickle

    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"x": 1, "y": "2"}', Point)
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is polycodec.ValidationError
    assert copy.loc == ("y",) and copy.path == "$.y" and str(copy) == str(info.value)


# --- Issue 14: hostile input ----------------------------------------------------------------

FORMATS = ["json", "msgpack", "avro", "pickle"]


@dataclass
class BoundedPrice:
    v: Annotated[Decimal, polycodec.Meta(ge=0)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_case8_bounded_decimal_nan_is_a_validation_error(fmt: str) -> None:
    codec = polycodec.Codec(BoundedPrice, format=fmt)
    for text in ["NaN", "sNaN", "-NaN"]:
        # The encoders do not check constraints, so each format's own bytes carry the NaN.
        data = codec.encode_one(BoundedPrice(Decimal(text)))
        with pytest.raises(polycodec.ValidationError, match="expected decimal >= 0") as info:
            codec.decode_one(data)
        assert info.value.path == "$.v"
    assert codec.decode_one(codec.encode_one(BoundedPrice(Decimal("Infinity")))).v == Decimal(
        "Infinity"
    )


def _nested_record_text(levels: int) -> str:
    """The JSON text of `_nested_record_schema(levels)`, built without recursion."""
    head = "".join(
        f'{{"type":"record","name":"R{level}","fields":[{{"name":"f","type":'
        for level in range(levels)
    )
    return head + f'{{"type":"record","name":"R{levels}","fields":[]}}' + "}]}" * levels


def _nested_record_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "record", "name": f"R{levels}", "fields": []}
    for level in range(levels - 1, -1, -1):
        schema = {"type": "record", "name": f"R{level}", "fields": [{"name": "f", "type": schema}]}
    return schema


@dataclass
class Nothing:
    pass


def test_case8_deep_avro_schemas_are_refused_cleanly() -> None:
    codec = polycodec.Codec(Nothing, format="avro")
    for levels in [200, 500, 5000]:
        schema = _nested_record_schema(levels)
        # With the data: a DecodeError (a writer schema is input).
        with pytest.raises(polycodec.DecodeError, match="nests"):
            codec.decode_one(b"", writer_schema=schema)
        with pytest.raises(polycodec.DecodeError, match="nests"):
            codec.decode_one(b"", writer_schema=_nested_record_text(levels))
        # At construction: a ValueError, as for any invalid schema=.
        with pytest.raises(ValueError, match="invalid Avro schema: .*nests"):
            polycodec.Codec(Nothing, format="avro", schema=schema)
    # A container whose header carries the deep schema.
    header = codec.encode_many([])
    own = json.dumps(codec.schema, separators=(",", ":")).encode()
    deep = _nested_record_text(5000).encode()

    def avro_string(data: bytes) -> bytes:
        zz, out = len(data) << 1, bytearray()
        while zz >= 0x80:
            out.append((zz & 0x7F) | 0x80)
            zz >>= 7
        out.append(zz)
        return bytes(out) + data

    with pytest.raises(polycodec.DecodeError, match="nests"):
        codec.decode_many(header.replace(avro_string(own), avro_string(deep)))
    assert json.loads(_nested_record_text(3)) == _nested_record_schema(3)
    # 100 levels are fine.
    assert codec.decode_one(b"", writer_schema=_nested_record_schema(100)) == Nothing()


def test_case8_huge_avro_fixed_sizes_are_refused_cleanly() -> None:
    codec = polycodec.Codec(Nothing, format="avro")
    for size in [2**64, 2**63, 2**31]:
        schema = {
            "type": "record",
            "name": "R",
            "fields": [{"name": "f", "type": {"type": "fixed", "name": "F", "size": size}}],
        }
        # The schema layer (the apache-avro crate, or polycodec's own size limit) refuses it.
        with pytest.raises(polycodec.DecodeError, match="invalid Avro writer schema: .*size"):
            codec.decode_one(b"", writer_schema=schema)
        with pytest.raises(ValueError, match="invalid Avro schema: .*size"):
            polycodec.Codec(Nothing, format="avro", schema=schema)


def test_case8_lone_surrogate_in_str_input_is_a_decode_error() -> None:
    with pytest.raises(polycodec.DecodeError, match="lone surrogate at index 1") as info:
        polycodec.decode_one('"\ud800"', str)
    assert not isinstance(info.value, polycodec.ValidationError)
    assert info.value.path == "$"
    with pytest.raises(polycodec.DecodeError, match="lone surrogate at index 8"):
        polycodec.decode_many('["ab", "\udfff"]', str)
    # Escaped surrogates in the JSON text are JSON's own business (and pairs are fine).
    assert polycodec.decode_one('"\\ud83d\\ude00"', str) == "\U0001f600"


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


@dataclass
class CatTag:
    kind: Literal["cat"]
    name: str


@dataclass
class DogTag:
    kind: Literal["dog"]
    name: str


@dataclass(frozen=True)
class Strict:
    x: int


HUGE = "Q" * 10_000_000
MESSAGE_LIMIT = 1200  # the message cap (1000 characters) plus the path


def _short_error(exc: BaseException) -> str:
    message = str(exc)
    assert len(message) < MESSAGE_LIMIT, message[:300]
    return message


def test_case7_error_messages_quote_a_bounded_prefix_of_the_input() -> None:
    blob = json.dumps(HUGE)
    cases: list[tuple[Any, str, dict[str, Any]]] = [
        (Shade, blob, {}),
        (Literal["a", "b"], blob, {}),
        (Union[CatTag, DogTag], '{"kind": %s, "name": "x"}' % blob, {}),
        (Annotated[str, polycodec.Meta(pattern="^a")], blob, {}),
        (int, blob, {"strict": False}),
        (float, blob, {"strict": False}),
        (bool, blob, {"strict": False}),
        (Decimal, blob, {}),
        (dict[int, int], "{%s: 1}" % blob, {}),
        (dict[str, int], '{%s: "x"}' % blob, {}),
        (Annotated[int, polycodec.Meta(le=5)], "9" * 1_000_000, {}),
        (Annotated[Decimal, polycodec.Meta(max_digits=3)], '"%s"' % ("9" * 1_000_000), {}),
    ]
    for tp, payload, options in cases:
        with pytest.raises(polycodec.DecodeError) as info:
            polycodec.decode_one(payload, tp, **options)
        message = _short_error(info.value)
        assert "characters)" in message or "...])" in message, message
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.Codec(Strict, forbid_unknown_fields=True).decode_one('{%s: 1, "x": 1}' % blob)
    assert "characters)" in _short_error(info.value)
    # The same in the other formats' decoders.
    msgpack_codec = polycodec.Codec(Shade, format="msgpack")
    import msgpack

    with pytest.raises(polycodec.ValidationError) as info:
        msgpack_codec.decode_one(msgpack.packb(HUGE))
    _short_error(info.value)
    avro_codec = polycodec.Codec(Literal["a", "b"], format="avro")
    with pytest.raises(polycodec.ValidationError) as info:
        avro_codec.decode_one(polycodec.Codec(str, format="avro").encode_one(HUGE))
    _short_error(info.value)
    import pickle

    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(pickle.dumps(HUGE), Shade, format="pickle")
    _short_error(info.value)
    # Encode errors show a bounded repr of the value.
    with pytest.raises(polycodec.EncodeError) as encode_info:
        polycodec.Codec(Shade).encode_one(HUGE)
    _short_error(encode_info.value)
    with pytest.raises(polycodec.EncodeError) as encode_info:
        polycodec.Codec(Literal["a"]).encode_one(HUGE)
    _short_error(encode_info.value)


class _OffsetZone(datetime.tzinfo):
    """A custom tzinfo whose utcoffset() returns whatever it is given (Python's own
    datetime.utcoffset() refuses offsets of 24 hours or more; this method is not checked)."""

    def __init__(self, offset: datetime.timedelta) -> None:
        self.offset = offset

    def utcoffset(self, dt: Optional[datetime.datetime]) -> datetime.timedelta:
        return self.offset

    def dst(self, dt: Optional[datetime.datetime]) -> None:
        return None

    def tzname(self, dt: Optional[datetime.datetime]) -> str:
        return "custom"


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro"])
def test_case9_offsets_of_24_hours_or_more_are_refused_at_encode(fmt: str) -> None:
    for hours in [30, 24, -24, -30]:
        zone = _OffsetZone(datetime.timedelta(hours=hours))
        for tp, value in [
            (datetime.datetime, datetime.datetime(2020, 1, 1, tzinfo=zone)),
            (datetime.time, datetime.time(12, tzinfo=zone)),
        ]:
            with pytest.raises(polycodec.EncodeError, match="strictly between -24 and 24"):
                polycodec.Codec(tp, format=fmt).encode_one(value)
    # Just inside the range: written, and read back as the same instant.
    zone = _OffsetZone(datetime.timedelta(hours=23, minutes=59))
    value = datetime.datetime(2020, 1, 1, tzinfo=zone)
    codec = polycodec.Codec(datetime.datetime, format=fmt)
    assert codec.decode_one(codec.encode_one(value)) == value


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_case9_aware_datetimes_at_the_ends_of_the_range_round_trip_or_are_refused(
    fmt: str,
) -> None:
    east = datetime.timezone(datetime.timedelta(hours=5))
    west = datetime.timezone(datetime.timedelta(hours=-5))
    codec = polycodec.Codec(datetime.datetime, format=fmt)
    for value in [
        datetime.datetime(1, 1, 1, 5, tzinfo=east),  # exactly the first UTC instant
        datetime.datetime(9999, 12, 31, 18, 59, tzinfo=west),  # 23:59Z on the last day
    ]:
        assert codec.decode_one(codec.encode_one(value)) == value
    for value in [
        datetime.datetime(1, 1, 1, tzinfo=east),  # 0000-12-31T19:00Z in UTC
        datetime.datetime(9999, 12, 31, 23, tzinfo=west),  # 10000-01-01T04:00Z in UTC
    ]:
        try:
            data = codec.encode_one(value)
        except polycodec.EncodeError as exc:
            # MessagePack and Avro write the UTC instant, which datetime cannot hold.
            assert fmt in ("msgpack", "avro") and "outside years 1-9999 in UTC" in str(exc)
            assert exc.path == "$"
            continue
        assert codec.decode_one(data) == value


_DECODE_UNDER_A_MEMORY_LIMIT = r"""
import json, resource, sys
from typing import Any, List
import msgpack, polycodec
fmt, extra = sys.argv[1], int(sys.argv[2])
n = 1_000_000
if fmt == "msgpack":
    data, tp = msgpack.packb([1.5] * n), List[float]
elif fmt == "pickle":
    import pickle

    data, tp = pickle.dumps([float(i) for i in range(n)]), List[float]
else:
    data, tp = json.dumps([{"a": 1.5, "b": [1, 2]}] * n).encode(), List[Any]
codec = polycodec.Codec(tp, format=fmt)
vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize")][0].split()[1]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + (extra << 20),) * 2)
try:
    codec.decode_one(data)
    print("decoded")
except MemoryError:
    print("MemoryError")
"""


@pytest.mark.skipif(
    not __import__("os").path.exists("/proc/self/status"), reason="reads VmSize from /proc"
)
@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_case7_failed_allocations_are_memory_errors_not_panics(fmt: str) -> None:
    import os
    import subprocess
    import sys

    package = os.path.dirname(os.path.dirname(polycodec.__file__))
    for extra_mib in [0, 16]:
        run = subprocess.run(
            [sys.executable, "-c", _DECODE_UNDER_A_MEMORY_LIMIT, fmt, str(extra_mib)],
            capture_output=True,
            text=True,
            # mimalloc otherwise reserves its arena before the limit is set, and Rust-side
            # allocations inside it would never meet the limit.
            env=dict(os.environ, PYTHONPATH=package, MIMALLOC_ARENA_RESERVE="0"),
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip() in ("MemoryError", "decoded")
        assert "Panic" not in run.stderr


@dataclass
class Chain:
    value: int
    next: Optional["Chain"] = None


# A message's text is cut at 1,000 characters and the path it quotes at 180 plus a short note:
# docs/errors.md's bound.
MESSAGE_BOUND = 1300


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_issue26_7_deep_error_messages_are_bounded(fmt: str) -> None:
    """An error 600 records deep: the message quotes the path's start and end only, while
    ``.path`` and ``.loc`` keep all of it."""
    depth = 600
    codec = polycodec.Codec(Chain, fmt)
    leaf = Chain(0)
    for _ in range(depth):
        leaf = Chain(1, leaf)
    tail: Any = leaf
    while tail.next is not None:
        tail = tail.next
    tail.value = "bad"
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(leaf)
    full = "$" + ".next" * depth + ".value"
    assert info.value.path == full and info.value.loc == ("next",) * depth + ("value",)
    message = str(info.value)
    assert len(message) < MESSAGE_BOUND, len(message)
    assert message.endswith(".next.next.value)") and "(at $.next.next" in message
    assert f"{len(full)} characters, {depth + 1} steps" in message


def test_issue26_7_deep_decode_errors_and_cycles_are_bounded() -> None:
    deep = b"[" * 1025 + b"]" * 1025
    with pytest.raises(polycodec.DecodeError) as info:
        polycodec.decode_one(deep, Any)
    assert len(str(info.value)) < MESSAGE_BOUND and len(info.value.loc) >= 1024
    assert info.value.path == "$" + "[0]" * len(info.value.loc)
    cycle: list[Any] = []
    cycle.append(cycle)
    for fmt in ("json", "msgpack", "pickle"):
        with pytest.raises(polycodec.EncodeError) as encode_info:
            polycodec.encode_one(cycle, type=Any, format=fmt)
        assert len(str(encode_info.value)) < MESSAGE_BOUND, fmt
        assert len(encode_info.value.path) > 3000
    # A short path is quoted whole.
    with pytest.raises(polycodec.ValidationError) as short:
        polycodec.decode_one(b'{"value": 1, "next": {"value": "x"}}', Chain)
    assert str(short.value).endswith("(at $.next.value)")
