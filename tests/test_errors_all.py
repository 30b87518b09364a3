"""`errors="all"`: every validation error of a value, each with its `loc`, message, stable code
and input, in pydantic's `errors()` shape, with pydantic as the oracle for which places of an
input are wrong; the same list from JSON, MessagePack and `from_builtins`; the code of every
kind of error the decoders raise (the table of the Errors page); and what still ends a decode
at once (malformed input, other exceptions)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import pickle
import uuid
from typing import Annotated, Any, Literal, Optional, Union

import pydantic
import pytest

import polycodec
from polycodec import Codec, Meta


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Line:
    sku: Annotated[str, Meta(min_length=2)]
    quantity: Annotated[int, Meta(ge=1)]
    price: decimal.Decimal


@dataclasses.dataclass
class Order:
    id: uuid.UUID
    placed: datetime.datetime
    lines: list[Line]
    colour: Colour = Colour.RED
    note: Optional[str] = None
    tags: dict[str, int] = dataclasses.field(default_factory=dict)


class LineModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)
    sku: Annotated[str, pydantic.Field(min_length=2)]
    quantity: Annotated[int, pydantic.Field(ge=1)]
    price: decimal.Decimal


class OrderModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", strict=True)
    id: uuid.UUID
    placed: datetime.datetime
    lines: list[LineModel]
    colour: Colour = Colour.RED
    note: Optional[str] = None
    tags: dict[str, int] = {}


GOOD = {
    "id": "c4524ac0-e81e-4aa8-a595-0aec605a659a",
    "placed": "2024-05-01T12:00:00Z",
    "lines": [{"sku": "ab", "quantity": 1, "price": "1.50"}],
}
BAD = [
    {**GOOD, "id": "not-a-uuid", "placed": 7},
    {**GOOD, "lines": [{"sku": "a", "quantity": 0, "price": "1"}, {"quantity": "2"}]},
    {**GOOD, "colour": "green", "tags": {"a": "x", "b": 2, "c": None}},
    {**GOOD, "lines": "none", "note": 5, "unknown": 1},
    {"lines": [{}, {"sku": 1, "quantity": 1.5, "price": "1", "extra": True}]},
]


def _codec(fmt: str) -> Codec[Order]:
    return Codec(Order, fmt, errors="all", forbid_unknown_fields=True)


def _ours(fmt: str, data: dict[str, Any]) -> list[dict[str, Any]]:
    with pytest.raises(polycodec.ValidationError) as info:
        if fmt == "builtins":
            _codec("json").from_builtins(data)
        else:
            _codec(fmt).decode_one(polycodec.encode_one(data, fmt, type=dict))
    return info.value.errors()


def _theirs(data: dict[str, Any]) -> list[dict[str, Any]]:
    with pytest.raises(pydantic.ValidationError) as info:
        OrderModel.model_validate_json(json.dumps(data))
    return info.value.errors()


@pytest.mark.parametrize("data", BAD)
def test_every_error_at_the_places_pydantic_finds(data: dict[str, Any]) -> None:
    ours = _ours("json", data)
    theirs = _theirs(data)
    assert sorted(map(repr, (e["loc"] for e in ours))) == sorted(
        map(repr, (e["loc"] for e in theirs))
    )
    assert [set(e) for e in ours] == [
        {"type", "loc", "msg", "input"} if e["type"] != "missing" else {"type", "loc", "msg"}
        for e in ours
    ]
    # The same errors, in the same order, from every reader of the same data.
    assert _ours("msgpack", data) == ours
    assert _ours("builtins", data) == ours


def test_the_report() -> None:
    data = BAD[1]
    with pytest.raises(polycodec.ValidationError) as info:
        _codec("json").decode_one(json.dumps(data))
    error = info.value
    assert str(error) == (
        "5 validation errors: expected length >= 2 characters, got 1 (at $.lines[0].sku); "
        "expected int >= 1, got 0 (at $.lines[0].quantity); expected int, got str "
        "(at $.lines[1].quantity); object missing required field `sku` (at $.lines[1]); "
        "object missing required field `price` (at $.lines[1])"
    )
    assert (error.path, error.loc, error.code) == (
        "$.lines[0].sku",
        ("lines", 0, "sku"),
        "string_too_short",
    )
    assert error.errors() == [
        {
            "type": "string_too_short",
            "loc": ("lines", 0, "sku"),
            "msg": "expected length >= 2 characters, got 1",
            "input": "a",
        },
        {
            "type": "greater_than_equal",
            "loc": ("lines", 0, "quantity"),
            "msg": "expected int >= 1, got 0",
            "input": 0,
        },
        {
            "type": "int_type",
            "loc": ("lines", 1, "quantity"),
            "msg": "expected int, got str",
            "input": "2",
        },
        {
            "type": "missing",
            "loc": ("lines", 1, "sku"),
            "msg": "object missing required field `sku`",
        },
        {
            "type": "missing",
            "loc": ("lines", 1, "price"),
            "msg": "object missing required field `price`",
        },
    ]
    # A new list every time, which the caller may change.
    error.errors().clear()
    assert len(error.errors()) == 5


def test_fail_fast_is_the_default_and_gives_one_entry() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        Codec(Order).decode_one(json.dumps(BAD[1]))
    assert str(info.value) == "expected length >= 2 characters, got 1 (at $.lines[0].sku)"
    assert info.value.errors() == [
        {
            "type": "string_too_short",
            "loc": ("lines", 0, "sku"),
            "msg": "expected length >= 2 characters, got 1",
        }
    ]
    # One error with errors="all" is the same exception as without.
    with pytest.raises(polycodec.ValidationError) as single:
        _codec("json").decode_one(json.dumps({**GOOD, "note": 1}))
    assert str(single.value) == "expected str | null, got int (at $.note)"
    assert single.value.errors()[0]["input"] == 1


def test_decode_many_reports_every_item() -> None:
    codec = Codec(Line, errors="all")
    data = b'[{"sku":"ab","quantity":1,"price":"1"},{"sku":"a","quantity":1,"price":"x"},7]'
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_many(data)
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        ((1, "sku"), "string_too_short"),
        ((1, "price"), "decimal_parsing"),
        ((2,), "dict_type"),
    ]
    assert info.value.errors()[2]["input"] == 7
    with pytest.raises(polycodec.ValidationError) as packed:
        Codec(Line, "msgpack", errors="all").decode_many(
            polycodec.encode_one(json.loads(data), "msgpack", type=list)
        )
    assert packed.value.errors() == info.value.errors()


def test_unions_tuples_dicts_and_lengths() -> None:
    @dataclasses.dataclass
    class Cat:
        name: str
        kind: Literal["cat"] = "cat"

    @dataclasses.dataclass
    class Dog:
        name: str
        kind: Literal["dog"] = "dog"

    tp = tuple[
        list[Union[Cat, Dog]],
        Annotated[list[int], Meta(max_length=2)],
        dict[int, bool],
        tuple[int, str],
    ]
    data = (
        b'[[{"kind":"cat","name":1},{"name":"x","kind":"dog"},{"kind":"bird"}],'
        b'[1,"2",3],{"1":true,"x":false,"2":3},[1,2]]'
    )
    with pytest.raises(polycodec.ValidationError) as info:
        Codec(tp, errors="all").decode_one(data)
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [
        ((0, 0, "name"), "string_type"),
        ((0, 2, "kind"), "union_tag_invalid"),
        ((1, 1), "int_type"),
        ((2, "x"), "int_parsing"),
        ((2, "2"), "bool_type"),
        ((3, 1), "string_type"),
    ]


def test_user_code_errors_are_collected_with_their_cause() -> None:
    @dataclasses.dataclass
    class Checked:
        value: int

        def __post_init__(self) -> None:
            if self.value < 0:
                raise ValueError("value must not be negative")

    with pytest.raises(polycodec.ValidationError) as info:
        Codec(list[Checked], errors="all").decode_one(b'[{"value":-1},{"value":"x"},{"value":-2}]')
    assert [(e["loc"], e["type"], e["msg"]) for e in info.value.errors()] == [
        ((0,), "value_error", "value must not be negative"),
        ((1, "value"), "int_type", "expected int, got str"),
        ((2,), "value_error", "value must not be negative"),
    ]
    assert isinstance(info.value.__cause__, ValueError)


def test_what_still_ends_a_decode_at_once() -> None:
    codec = Codec(list[Line], errors="all")
    # Malformed input is a DecodeError, even after validation errors.
    with pytest.raises(polycodec.DecodeError) as info:
        codec.decode_one(b'[{"sku": 1}, {"sku": ]')
    assert not isinstance(info.value, polycodec.ValidationError)
    assert info.value.code == "json_invalid"

    class Stop(Exception):
        pass

    def factory() -> int:
        raise Stop()

    @dataclasses.dataclass
    class Fails:
        a: int
        b: int = dataclasses.field(default_factory=factory)

    with pytest.raises(Stop):
        Codec(list[Fails], errors="all").decode_one(b'[{"a": "x"}, {"a": 1}]')


def test_formats_that_report_the_first_error() -> None:
    # Avro and pickle values are typed by their schema or their objects: their decoders
    # report the first error, in errors() as its only entry, with errors="all" too.
    for fmt in ["avro", "pickle"]:
        codec = Codec(list[Line], fmt, errors="all")
        good = Codec(list[Line], fmt).encode_one([Line("ab", 1, decimal.Decimal(1))] * 2)
        bad = Codec(list[Line], fmt).encode_one(
            [Line("a", 0, decimal.Decimal(1)), Line("b", 0, decimal.Decimal(1))]
        )
        assert codec.decode_one(good)[0].sku == "ab"
        with pytest.raises(polycodec.ValidationError) as info:
            codec.decode_one(bad)
        assert len(info.value.errors()) == 1


def test_option_checks_and_round_trips() -> None:
    with pytest.raises(ValueError, match='errors must be "first" or "all"'):
        Codec(int, errors="some")  # type: ignore[arg-type]
    codec = Codec(Order, errors="all")
    assert "errors='all'" in repr(codec)
    again = pickle.loads(pickle.dumps(codec))
    with pytest.raises(polycodec.ValidationError) as info:
        again.decode_one(json.dumps(BAD[0]))
    assert len(info.value.errors()) == 2
    with pytest.raises(polycodec.ValidationError) as module:
        polycodec.decode_one(json.dumps(BAD[0]), Order, errors="all")
    assert module.value.errors() == info.value.errors()
    assert polycodec.json_schema(Order) == Codec(Order, errors="all").json_schema()


CODES: list[tuple[Any, Any, str]] = [
    (int, "1", "int_type"),
    (float, "x", "float_type"),
    (str, 1, "string_type"),
    (bool, 1, "bool_type"),
    (type(None), 1, "none_required"),
    (bytes, 1, "bytes_type"),
    (bytes, "***", "bytes_invalid_encoding"),
    (decimal.Decimal, 1, "decimal_type"),
    (decimal.Decimal, "x", "decimal_parsing"),
    (datetime.datetime, 1, "datetime_type"),
    (datetime.datetime, "2024-13-01T00:00:00", "datetime_parsing"),
    (datetime.date, "x", "date_parsing"),
    (datetime.time, "x", "time_parsing"),
    (datetime.timedelta, "x", "time_delta_parsing"),
    (uuid.UUID, "x", "uuid_parsing"),
    (Colour, "green", "enum"),
    (Literal["a"], "b", "literal_error"),
    (list[int], 1, "list_type"),
    (dict[str, int], 1, "dict_type"),
    (Line, [], "dict_type"),
    (Union[int, str], None, "union_type"),
    (Annotated[int, Meta(ge=1)], 0, "greater_than_equal"),
    (Annotated[int, Meta(gt=1)], 1, "greater_than"),
    (Annotated[float, Meta(le=1)], 2.0, "less_than_equal"),
    (Annotated[float, Meta(lt=1)], 1.0, "less_than"),
    (Annotated[int, Meta(multiple_of=2)], 3, "multiple_of"),
    (Annotated[str, Meta(min_length=2)], "a", "string_too_short"),
    (Annotated[str, Meta(max_length=1)], "ab", "string_too_long"),
    (Annotated[bytes, Meta(min_length=2)], "YQ==", "bytes_too_short"),
    (Annotated[bytes, Meta(max_length=0)], "YQ==", "bytes_too_long"),
    (Annotated[list[int], Meta(min_length=1)], [], "too_short"),
    (Annotated[list[int], Meta(max_length=0)], [1], "too_long"),
    (tuple[int, int], [1], "too_short"),
    (tuple[int], [1, 2], "too_long"),
    (Annotated[str, Meta(pattern="^a")], "b", "string_pattern_mismatch"),
    (Annotated[decimal.Decimal, Meta(max_digits=1)], "12", "decimal_max_digits"),
    (Annotated[decimal.Decimal, Meta(decimal_places=1)], "1.25", "decimal_max_places"),
    (Annotated[datetime.datetime, Meta(tz=True)], "2024-01-01T00:00:00", "timezone_aware"),
    (Annotated[datetime.datetime, Meta(tz=False)], "2024-01-01T00:00:00Z", "timezone_naive"),
    (float, 1e400, "finite_number"),
    (Line, {"sku": "ab"}, "missing"),
    (dict[int, int], {"x": 1}, "int_parsing"),
    (int, 10**5000, "int_parsing_size"),
]


@pytest.mark.parametrize("tp, value, code", CODES, ids=[c for _, _, c in CODES])
def test_every_code(tp: Any, value: Any, code: str) -> None:
    if isinstance(value, float) and value > 1e308:
        data = b"1e400"
    elif isinstance(value, int) and value > 10**4000:
        data = b"1" * 5000
    else:
        data = json.dumps(value).encode()
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(data, tp)
    assert info.value.code == code
    assert info.value.errors()[0]["type"] == code


def test_more_codes() -> None:
    def code_of(call: Any) -> str:
        with pytest.raises(polycodec.DecodeError) as info:
            call()
        return info.value.code

    forbid = Codec(Line, forbid_unknown_fields=True)
    assert code_of(lambda: forbid.decode_one(b'{"x": 1}')) == "extra_forbidden"

    @dataclasses.dataclass
    class Cat:
        kind: Literal["cat"] = "cat"

    @dataclasses.dataclass
    class Dog:
        kind: Literal["dog"] = "dog"

    pets = Codec(Union[Cat, Dog])
    assert code_of(lambda: pets.decode_one(b'{"kind": "x"}')) == "union_tag_invalid"
    assert code_of(lambda: pets.decode_one(b'{"kind": 1.5}')) == "union_tag_invalid"
    assert code_of(lambda: pets.decode_one(b'{"x": 1}')) == "missing"
    positional = Codec(Union[Cat, Dog], array_like=True)
    assert code_of(lambda: positional.decode_one(b"[]")) == "union_tag_not_found"
    assert code_of(lambda: Codec(list[int]).decode_one(b"[")) == "json_invalid"
    assert code_of(lambda: Codec(int, "msgpack").decode_one(b"\xc1")) == "msgpack_invalid"
    assert code_of(lambda: Codec(list[Any]).decode_one(b"[" * 2000)) == "recursion_loop"
    assert code_of(lambda: polycodec.from_builtins({1: 2}, Line)) == "dict_key_type"
    lax = Codec(datetime.datetime, strict=False)
    assert code_of(lambda: lax.decode_one(b"1e20")) == "datetime_range"
    assert code_of(lambda: lax.decode_one(b'"nan"')) == "finite_number"
    span = Codec(datetime.timedelta, strict=False)
    assert code_of(lambda: span.decode_one(b"1e17")) == "time_delta_range"
    assert code_of(lambda: polycodec.decode_many(b"{}", int)) == "list_type"
