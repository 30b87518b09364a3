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
