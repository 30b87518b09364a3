"""The JSON and MessagePack record walk reads each record's fields from a compact per-codec table
(`FieldEntry` in src/codecs/encoder.rs) that holds a field's name entry itself when it is at
most 24 bytes (JSON `,"name":`, MessagePack's fixstr) and falls back to the full name table for
longer ones. Output around that limit, escaped names, the first field (whose JSON entry loses
its comma), tagged variants, slots classes and errors must match the msgspec/json/msgpack
oracles exactly."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
from typing import Any, Literal, Optional, Union

import msgpack
import msgspec
import pytest

import polycodec
from polycodec import Codec

FORMATS = ["json", "msgpack"]

# Wire names from 1 to 40 bytes, across the 24-byte limit of an entry in both formats (JSON
# adds 4 bytes, MessagePack 1), some with characters JSON escapes or writes as several bytes.
NAMES = [
    "a",
    "x" * 19,
    "x" * 20,
    "y" * 21,
    "z" * 22,
    "w" * 23,
    "v" * 24,
    "u" * 40,
    'q"uo\\te',
    "é" * 10,
    "\n\t" * 6,
    "ü" * 11,
]


@dataclasses.dataclass
class Wide:
    f0: int
    f1: str
    f2: Optional[float]
    f3: bool
    f4: list[int]
    f5: Optional[str]
    f6: int
    f7: str
    f8: float
    f9: bool
    f10: Optional[int]
    f11: str


@dataclasses.dataclass(slots=True)
class WideSlots:
    f0: int
    f1: str
    f2: Optional[float]
    f3: bool
    f4: list[int]
    f5: Optional[str]
    f6: int
    f7: str
    f8: float
    f9: bool
    f10: Optional[int]
    f11: str


def _wide(cls: Any) -> Any:
    return cls(1, "one", None, True, [1, 2], "five", -6, 'sev"en', 8.5, False, None, "é")


def _expected(fmt: str, value: Any, rename: dict[str, str]) -> bytes:
    data = {rename.get(f.name, f.name): getattr(value, f.name) for f in dataclasses.fields(value)}
    if fmt == "json":
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return bytes(msgpack.packb(data))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("cls", [Wide, WideSlots])
@pytest.mark.parametrize("shift", range(len(NAMES)))
def test_encode_entries_names_around_the_inline_limit(fmt: str, cls: Any, shift: int) -> None:
    # Every name takes every position once, the first (no comma in JSON) among them.
    rename = {f"f{i}": NAMES[(i + shift) % len(NAMES)] for i in range(len(NAMES))}
    codec = Codec(cls, fmt, rename=rename)
    value = _wide(cls)
    assert codec.encode_one(value) == _expected(fmt, value, rename)
    many = codec.encode_many([value, value])
    if fmt == "json":
        assert json.loads(many) == [json.loads(_expected(fmt, value, rename))] * 2
    else:
        assert msgpack.unpackb(many) == [msgpack.unpackb(_expected(fmt, value, rename))] * 2
    assert codec.decode_one(codec.encode_one(value)) == value


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_entries_error_path_names_the_field(fmt: str) -> None:
    rename = {"f7": "p" * 30, "f1": "short"}
    codec = Codec(Wide, fmt, rename=rename)
    value = _wide(Wide)
    value.f7 = 7  # not a str
    with pytest.raises(Exception) as info:
        codec.encode_one(value)
    assert "$." + "p" * 30 in str(info.value)
    value = _wide(Wide)
    value.f1 = b"x"
    with pytest.raises(Exception) as info:
        codec.encode_one(value)
    assert "$.short" in str(info.value)


class LongCat(msgspec.Struct, tag_field="kind_of_the_animal_here", tag="cat"):
    a_rather_long_name_for_lives: int
    n: str


class LongDog(msgspec.Struct, tag_field="kind_of_the_animal_here", tag="dog"):
    barks_loudly_every_morning_yes: bool


@dataclasses.dataclass
class Cat:
    a_rather_long_name_for_lives: int
    n: str
    kind_of_the_animal_here: Literal["cat"] = "cat"


@dataclasses.dataclass(slots=True)
class Dog:
    barks_loudly_every_morning_yes: bool
    kind_of_the_animal_here: Literal["dog"] = "dog"


@pytest.mark.parametrize("fmt", FORMATS)
def test_encode_entries_tagged_variants_with_long_names(fmt: str) -> None:
    codec = Codec(list[Union[Cat, Dog]], fmt)
    values = [Cat(9, "tom"), Dog(True), Cat(-1, "é")]
    structs = [LongCat(9, "tom"), LongDog(True), LongCat(-1, "é")]
    oracle = msgspec.json.encode(structs) if fmt == "json" else msgspec.msgpack.encode(structs)
    assert codec.encode_one(values) == oracle
    assert Codec(Union[Cat, Dog], fmt).encode_many(values) == oracle


class Color(enum.Enum):
    RED = "red"
    LONG = "a value well over twenty-four bytes long"
    QUOTE = 'q"é'


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2**40


class OtherColor(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Kinds:
    color: Color
    level: Level
    day: datetime.date
    price: decimal.Decimal
    maybe_color: Optional[Color]
    maybe_day: Optional[datetime.date]
    maybe_price: Optional[decimal.Decimal]


class MyDate(datetime.date):
    pass


class MyDecimal(decimal.Decimal):
    pass


KINDS_VALUES = [
    Kinds(
        Color.RED,
        Level.LOW,
        datetime.date(2024, 2, 29),
        decimal.Decimal("1.50"),
        None,
        None,
        None,
    ),
    Kinds(
        Color.LONG,
        Level.HIGH,
        MyDate(1, 1, 1),
        MyDecimal("-0"),
        Color.QUOTE,
        datetime.date(9999, 12, 31),
        decimal.Decimal("1E+3"),
    ),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("value", KINDS_VALUES)
def test_encode_entries_enum_date_decimal_fields_match_msgspec(fmt: str, value: Kinds) -> None:
    codec = Codec(Kinds, fmt)
    # msgspec refuses subclasses of date and Decimal: its oracle gets exact ones.
    exact = dataclasses.replace(
        value,
        day=datetime.date.fromordinal(value.day.toordinal()),
        price=decimal.Decimal(str(value.price)),
    )
    oracle = msgspec.json.encode(exact) if fmt == "json" else msgspec.msgpack.encode(exact)
    assert codec.encode_one(value) == oracle
    many = b"[" + oracle + b"," + oracle + b"]" if fmt == "json" else b"\x92" + oracle * 2
    assert codec.encode_many([value, value]) == many


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    ("field", "bad", "message"),
    [
        ("color", OtherColor.RED, "$.color"),
        ("color", "red", "$.color"),
        ("level", 1, "$.level"),
        ("day", datetime.datetime(2024, 1, 1), "$.day"),
        ("price", 1.5, "$.price"),
        ("maybe_color", OtherColor.RED, "$.maybe_color"),
        ("maybe_day", "2024-01-01", "$.maybe_day"),
        ("maybe_price", 3, "$.maybe_price"),
        ("day", None, "$.day"),
    ],
)
def test_encode_entries_enum_date_decimal_errors_name_the_field(
    fmt: str, field: str, bad: Any, message: str
) -> None:
    value = dataclasses.replace(KINDS_VALUES[0])
    setattr(value, field, bad)
    with pytest.raises(polycodec.EncodeError) as info:
        Codec(Kinds, fmt).encode_one(value)
    assert message in str(info.value)
