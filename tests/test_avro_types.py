"""What is Avro's own about the types: a record of every Avro type and a recursive union against
fastavro and apache avro, container files (codecs, blocks, empty), decimals at a scale, the
values Avro cannot write, and aware datetimes read back in UTC.

The round trip of every type with both-way interop against fastavro and apache avro (raw datums
and container files) is in the shared matrix: tests/catalogue.py and tests/test_types_matrix.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from decimal import Decimal
from typing import Annotated, Any, Dict, FrozenSet, List, Literal, Optional, Set, Tuple, Union

import pytest

import polycodec
from polycodec import Meta
from test_avro_support import (
    avro_read,
    avro_records,
    avro_write,
    fastavro_container,
    fastavro_read,
    fastavro_records,
    fastavro_write,
    normalise,
    plain,
)

UTC = datetime.timezone.utc
PLUS_0530 = datetime.timezone(datetime.timedelta(hours=5, minutes=30))


class Color(enum.Enum):
    RED = "r"
    GREEN = "g"
    BLUE = "b"


Money = Annotated[Decimal, Meta(max_digits=12, decimal_places=2)]
Naive = Annotated[datetime.datetime, Meta(tz=False)]


def _box(tp: Any) -> Any:
    return dataclasses.make_dataclass("Box", [("v", tp)])


def _plain(obj: Any, flavor: str = "fastavro") -> Any:
    """plain(), with Decimals that have no precision/scale as their str (the string fallback)."""
    out = plain(obj, flavor)
    for field in dataclasses.fields(obj):
        if field.type in (Decimal, "Decimal"):
            out[field.name] = str(getattr(obj, field.name))
    return out


def test_aware_datetimes_decode_as_utc() -> None:
    box = _box(datetime.datetime)
    codec = polycodec.Codec(box, "avro")
    value = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=PLUS_0530)
    back = codec.decode_one(codec.encode_one(box(value)))
    assert back.v == value and back.v.tzinfo == UTC
    assert back.v.hour == 6 and back.v.minute == 30


@dataclasses.dataclass
class Leaf:
    value: int
    kind: Literal["leaf"] = "leaf"


@dataclasses.dataclass
class Branch:
    children: List[Union["Branch", Leaf]]
    label: Optional[str] = None
    kind: Literal["branch"] = "branch"


@dataclasses.dataclass
class Everything:
    flag: bool
    count: int
    ratio: float
    name: str
    blob: bytes
    buffer: bytearray
    price: Money
    loose: Decimal
    at: datetime.datetime
    local: Naive
    day: datetime.date
    clock: datetime.time
    ident: uuid.UUID
    color: Color
    choice: Literal["x", "y"]
    numbers: List[int]
    tags: Set[str]
    frozen: FrozenSet[int]
    floats: Tuple[float, ...]
    index: Dict[str, List[int]]
    tree: Union[Branch, Leaf]
    note: Optional[str] = None
    fallback: Optional[int] = 5
    empty: None = None


EVERYTHING = Everything(
    True,
    -5,
    1.5,
    "héllo",
    b"\x00\xff",
    bytearray(b"ab"),
    Decimal("-12.34"),
    Decimal("1E+30"),
    datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC),
    datetime.datetime(1900, 1, 1, 0, 0, 1),
    datetime.date(1, 1, 1),
    datetime.time(23, 59, 59, 999999),
    uuid.UUID(int=12345),
    Color.GREEN,
    "y",
    [1, 2, 3],
    {"x"},
    frozenset({1}),
    (1.0, 2.5),
    {"k": [1], "é": []},
    Branch([Leaf(1), Branch([], "inner")]),
    "x",
    None,
)


def _tagged_plain(value: Any) -> Any:
    """fastavro picks a union's record branch from a (name, dict) pair."""
    if isinstance(value, (Leaf, Branch)):
        name = "test_avro_types." + type(value).__name__
        fields = {f.name: _tagged_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return (name, fields)
    if isinstance(value, list):
        return [_tagged_plain(v) for v in value]
    return plain(value)


def test_everything_record_interop() -> None:
    codec = polycodec.Codec(Everything, "avro")
    schema = codec.schema
    data = codec.encode_one(EVERYTHING)
    assert codec.decode_one(data) == EVERYTHING
    assert normalise(fastavro_read(schema, data)) == normalise(_plain(EVERYTHING))
    datum = _plain(EVERYTHING)
    datum["tree"] = _tagged_plain(EVERYTHING.tree)
    assert fastavro_write(schema, datum) == data
    container = fastavro_container(schema, [datum, datum], codec="deflate")
    assert codec.decode_many(container) == [EVERYTHING, EVERYTHING]
    assert normalise(avro_read(schema, data)) == normalise(_plain(EVERYTHING, "avro"))
    assert avro_write(schema, _plain(EVERYTHING, "avro")) == data


def test_recursive_union_round_trip() -> None:
    codec = polycodec.Codec(Union[Branch, Leaf], "avro")
    value = Branch([Leaf(1), Branch([Leaf(2)], "b")], "a")
    assert codec.decode_one(codec.encode_one(value)) == value
    schema = codec.schema
    assert isinstance(schema, list) and len(schema) == 2
    assert normalise(fastavro_read(schema, codec.encode_one(value))) == plain(value)


@pytest.mark.parametrize("compression", ["null", "deflate", "snappy", "zstandard"])
def test_containers_with_codecs(compression: str) -> None:
    codec = polycodec.Codec(Everything, "avro", compression=compression)
    objs = [EVERYTHING] * 50
    data = codec.encode_many(objs)
    assert codec.decode_many(data) == objs
    if compression in ("snappy", "zstandard"):
        return  # the reference libraries need python-snappy / zstandard, not installed here
    assert len(fastavro_records(data)) == 50
    assert len(avro_records(data)) == 50
    assert fastavro_records(data)[0]["count"] == -5


def test_large_container_has_several_blocks() -> None:
    box = _box(str)
    codec = polycodec.Codec(box, "avro")
    objs = [box("x" * 1000 + str(i)) for i in range(300)]
    data = codec.encode_many(objs)
    assert codec.decode_many(data) == objs
    assert [r["v"] for r in fastavro_records(data)] == [o.v for o in objs]


def test_empty_container() -> None:
    codec = polycodec.Codec(_box(int), "avro")
    data = codec.encode_many([])
    assert codec.decode_many(data) == []
    assert fastavro_records(data) == []


def test_encode_errors() -> None:
    box = _box(int)
    codec = polycodec.Codec(box, "avro")
    with pytest.raises(polycodec.EncodeError, match="out of range for an Avro long"):
        codec.encode_one(box(2**64))
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(box("x"))
    assert info.value.path == "$.v"
    naive_box = _box(datetime.datetime)
    with pytest.raises(polycodec.EncodeError, match="naive datetime"):
        polycodec.Codec(naive_box, "avro").encode_one(naive_box(datetime.datetime(2024, 1, 1)))
    money = _box(Money)
    with pytest.raises(polycodec.EncodeError, match="decimal places"):
        polycodec.Codec(money, "avro").encode_one(money(Decimal("1.234")))
    with pytest.raises(polycodec.EncodeError, match="digits"):
        polycodec.Codec(money, "avro").encode_one(money(Decimal("1E+20")))
    with pytest.raises(polycodec.EncodeError, match="not finite"):
        polycodec.Codec(money, "avro").encode_one(money(Decimal("NaN")))
    clock = _box(datetime.time)
    with pytest.raises(polycodec.EncodeError, match="aware time"):
        polycodec.Codec(clock, "avro").encode_one(clock(datetime.time(1, tzinfo=UTC)))


def test_decimal_with_fewer_places_than_the_scale() -> None:
    # 1.5 at scale 2 is the unscaled 150, as fastavro writes it. (Apache avro 1.12 writes 15,
    # using the value's own exponent, so it is not the oracle here.)
    money = _box(Money)
    codec = polycodec.Codec(money, "avro")
    data = codec.encode_one(money(Decimal("1.5")))
    assert data == fastavro_write(codec.schema, {"v": Decimal("1.5")})
    assert codec.decode_one(data) == money(Decimal("1.50"))


def test_big_decimal_precision() -> None:
    big = _box(Annotated[Decimal, Meta(max_digits=60, decimal_places=10)])
    codec = polycodec.Codec(big, "avro")
    for text in ["-" + "9" * 50 + ".0123456789", "1" * 45, "-1E-10"]:
        obj = big(Decimal(text))
        data = codec.encode_one(obj)
        assert codec.decode_one(data) == obj
        assert fastavro_read(codec.schema, data)["v"] == Decimal(text)
        assert fastavro_write(codec.schema, {"v": Decimal(text)}) == data


def test_module_level_functions() -> None:
    data = polycodec.encode_one(EVERYTHING, format="avro")
    assert polycodec.decode_one(data, Everything, format="avro") == EVERYTHING
    many = polycodec.encode_many([EVERYTHING], format="avro")
    assert polycodec.decode_many(many, Everything, format="avro") == [EVERYTHING]


def test_codec_pickles_with_avro_options() -> None:
    import pickle

    codec = polycodec.Codec(Everything, "avro", compression="deflate")
    clone = pickle.loads(pickle.dumps(codec))
    assert clone.decode_many(codec.encode_many([EVERYTHING])) == [EVERYTHING]
    assert clone.schema == codec.schema
