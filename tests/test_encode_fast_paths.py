"""Encoder fast paths against msgspec's bytes: exact naive, UTC and fixed-offset `timezone`
datetimes read straight from the object (every other datetime asks its zone), MessagePack field
names written from bytes made once per class, and plain dataclass fields read from inline
values checked again after Python code has run (and, in a rerun of this file with
``POLYCODEC_PORTABLE=inline_values``, from their ``__dict__``)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import pickle
import zoneinfo
from typing import Any, List, Literal, Optional, Union

import msgspec
import pytest

import polycodec
from layouts import rerun_portable

FORMATS = ["json", "msgpack"]
UTC = datetime.timezone.utc


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "inline_values")


def _msgspec_encode(fmt: str, value: Any) -> bytes:
    return (msgspec.json if fmt == "json" else msgspec.msgpack).encode(value)


class MyDateTime(datetime.datetime):
    pass


class MyUtc(datetime.tzinfo):
    def utcoffset(self, dt: Optional[datetime.datetime]) -> datetime.timedelta:
        return datetime.timedelta(0)

    def dst(self, dt: Optional[datetime.datetime]) -> datetime.timedelta:
        return datetime.timedelta(0)


@dataclasses.dataclass
class Stamped:
    when: datetime.datetime
    maybe: Optional[datetime.datetime] = None


DATETIMES = [
    datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
    datetime.datetime(2024, 5, 1, 12, 0, 7, 123456, tzinfo=UTC),
    datetime.datetime(1, 1, 1, tzinfo=UTC),
    datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime.datetime(2024, 5, 1, 12, 0, 7, 5),
    datetime.datetime(2024, 5, 1, 12, 0, 7, 5, fold=1, tzinfo=UTC),
    datetime.datetime(2024, 5, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
    datetime.datetime(2024, 5, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
    datetime.datetime(2024, 5, 1, 12, 0, tzinfo=MyUtc()),
    MyDateTime(2024, 5, 1, 12, 0, 1, 10, tzinfo=UTC),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("when", DATETIMES, ids=repr)
def test_datetime_fast_path_bytes_equal_msgspec(fmt: str, when: datetime.datetime) -> None:
    codec = polycodec.Codec(List[Stamped], format=fmt)
    value = [Stamped(when, when), Stamped(when)]
    # msgspec refuses datetime subclasses: its oracle gets the same value as a datetime.
    same = datetime.datetime.combine(when.date(), when.timetz())
    expected = _msgspec_encode(fmt, [{"when": same, "maybe": same}, {"when": same, "maybe": None}])
    assert codec.encode_one(value) == expected
    assert polycodec.Codec(datetime.datetime, format=fmt).encode_one(when) == _msgspec_encode(
        fmt, same
    )


class MyTime(datetime.time):
    pass


class MyDelta(datetime.timedelta):
    pass


@dataclasses.dataclass(slots=True)
class Clock:
    at: datetime.time
    took: datetime.timedelta
    maybe_at: Optional[datetime.time] = None
    maybe_took: Optional[datetime.timedelta] = None


TIMES = [
    datetime.time(0, 0),
    datetime.time(23, 59, 59, 999999),
    datetime.time(12, 30, 5, 7),
    datetime.time(12, 30, fold=1),
    datetime.time(12, 30, tzinfo=UTC),
    datetime.time(12, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=5, minutes=30))),
    MyTime(1, 2, 3, 4),
]
DELTAS = [
    datetime.timedelta(0),
    datetime.timedelta(days=-1, seconds=5),
    datetime.timedelta(days=999999999, seconds=86399, microseconds=999999),
    -datetime.timedelta(days=999999999),
    datetime.timedelta(microseconds=1),
    datetime.timedelta(seconds=1_000_000, microseconds=42),
    MyDelta(hours=3),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("at,took", list(zip(TIMES, DELTAS)), ids=repr)
def test_time_and_timedelta_fields_read_directly_bytes_equal_msgspec(
    fmt: str, at: datetime.time, took: datetime.timedelta
) -> None:
    # Exact naive times and exact timedeltas are read from the object itself; aware times and
    # subclasses take the general path: either way the bytes are msgspec's (which gets the
    # subclass values as their base class).
    codec = polycodec.Codec(List[Clock], format=fmt)
    value = [Clock(at, took, at, took), Clock(at, took)]
    same_at = datetime.time(at.hour, at.minute, at.second, at.microsecond, at.tzinfo, fold=at.fold)
    same_took = datetime.timedelta(took.days, took.seconds, took.microseconds)
    expected = _msgspec_encode(
        fmt,
        [
            {"at": same_at, "took": same_took, "maybe_at": same_at, "maybe_took": same_took},
            {"at": same_at, "took": same_took, "maybe_at": None, "maybe_took": None},
        ],
    )
    assert codec.encode_one(value) == expected


@dataclasses.dataclass
class Names:
    a: int
    long_field_name_of_more_than_thirty_one_bytes: str
    é: bool


@pytest.mark.parametrize("fmt", FORMATS)
def test_precomputed_field_names_bytes_equal_msgspec(fmt: str) -> None:
    codec = polycodec.Codec(Names, format=fmt)
    value = Names(1, "x", True)
    assert codec.encode_one(value) == _msgspec_encode(fmt, dataclasses.asdict(value))
    assert codec.decode_one(codec.encode_one(value)) == value


@dataclasses.dataclass
class Plain:
    a: int
    b: str = "default"
    c: Optional[List[int]] = None


def _plain_cases() -> List[Any]:
    fresh = Plain(1, "x", [1, 2])
    deleted = Plain(2, "y")
    del deleted.b  # the class attribute, the default, is read instead
    materialised = Plain(3, "z")
    materialised.__dict__["extra"] = 1  # a real __dict__ now holds the attributes
    materialised.a = 4
    reordered = Plain.__new__(Plain)
    reordered.c = None
    reordered.b = "q"
    reordered.a = 5
    return [fresh, deleted, materialised, reordered]


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_plain_dataclass_fields_read_from_inline_values(fmt: str) -> None:
    # On CPython 3.11 and 3.13+ a plain instance's fields are read from its inline values when it still
    # keeps them there, else from its __dict__ or getattr: every case gives what getattr gives.
    codec = polycodec.Codec(List[Plain], format=fmt)
    values = _plain_cases()
    expected = [Plain(1, "x", [1, 2]), Plain(2), Plain(4, "z"), Plain(5, "q")]
    data = codec.encode_one(values)
    if fmt in ("json", "msgpack"):
        assert data == _msgspec_encode(fmt, [dataclasses.asdict(v) for v in expected])
    elif fmt == "pickle":
        assert pickle.loads(data) == expected
    assert codec.decode_one(data) == expected
    assert "extra" in vars(values[2]) and vars(values[0]) == {"a": 1, "b": "x", "c": [1, 2]}


@pytest.mark.parametrize(
    "length", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 63, 64, 65, 200]
)
def test_json_short_str_scan_finds_every_escape(length: int) -> None:
    # Strs up to 64 bytes are scanned 8 bytes at a time for a byte JSON escapes, and copied
    # as they are when there is none: every escaped byte, at every position, must be found.
    codec = polycodec.Codec(List[str], format="json")
    texts = ["a" * length, "é" * (length // 2), "€" * (length // 3)]
    for at in range(length):
        for byte in [*range(0x20), ord('"'), ord("\\"), 0x7F, ord("/")]:
            text = "a" * at + chr(byte) + "a" * (length - at - 1)
            texts.append(text)
    assert codec.encode_one(texts) == msgspec.json.encode(texts)


class Fixed(datetime.tzinfo):
    """A tzinfo of its own with a fixed offset: always asked through its utcoffset()."""

    def __init__(self, offset: datetime.timedelta) -> None:
        self.offset = offset

    def utcoffset(self, dt: Optional[datetime.datetime]) -> datetime.timedelta:
        return self.offset

    def dst(self, dt: Optional[datetime.datetime]) -> datetime.timedelta:
        return datetime.timedelta(0)


OFFSETS = [
    datetime.timedelta(hours=5, minutes=30),
    -datetime.timedelta(hours=8),
    datetime.timedelta(hours=23, minutes=59),
    -datetime.timedelta(hours=23, minutes=59),
    datetime.timedelta(hours=1, seconds=7),
    -datetime.timedelta(seconds=1),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("offset", OFFSETS, ids=str)
def test_fixed_offset_timezone_read_directly_equals_utcoffset(
    fmt: str, offset: datetime.timedelta
) -> None:
    # A datetime.timezone's offset is read from the object; a tzinfo of another class is asked
    # through utcoffset(): both give the same bytes, and msgspec's for whole minutes.
    zones = [datetime.timezone(offset), datetime.timezone(offset, "named"), Fixed(offset)]
    codec = polycodec.Codec(List[Stamped], format=fmt)
    outputs = set()
    for zone in zones:
        when = datetime.datetime(2024, 5, 1, 12, 0, 7, 5, tzinfo=zone)
        outputs.add(codec.encode_one([Stamped(when, when), Stamped(when)]))
        outputs.add(polycodec.Codec(datetime.datetime, format=fmt).encode_one(when))
    assert len(outputs) == 2
    if offset.seconds % 60 == 0:
        when = datetime.datetime(2024, 5, 1, 12, 0, 7, 5, tzinfo=datetime.timezone(offset))
        assert polycodec.Codec(datetime.datetime, format=fmt).encode_one(when) == _msgspec_encode(
            fmt, when
        )


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixed_offset_timezone_named_zero_is_utc(fmt: str) -> None:
    zero = datetime.timezone(datetime.timedelta(0), "zero")
    assert zero is not UTC
    when = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=zero)
    codec = polycodec.Codec(Stamped, format=fmt)
    utc = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert codec.encode_one(Stamped(when, when)) == codec.encode_one(Stamped(utc, utc))


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixed_offset_timezone_with_microseconds_refused_as_before(fmt: str) -> None:
    offset = datetime.timedelta(minutes=1, microseconds=5)
    codec = polycodec.Codec(Stamped, format=fmt)
    for zone in [datetime.timezone(offset), Fixed(offset)]:
        when = datetime.datetime(2024, 5, 1, 12, 0, tzinfo=zone)
        with pytest.raises(polycodec.EncodeError, match="microseconds has no RFC 3339 form"):
            codec.encode_one(Stamped(when))


class Holder:
    value: Any = None


class MutatingDecimal(decimal.Decimal):
    """A Decimal whose text, asked for by the encoder, changes the instance being encoded."""

    def __str__(self) -> str:
        target = Holder.value
        for index in range(40):  # more attributes than the class's shared keys hold
            setattr(target, f"extra{index}", index)
        target.after = "changed"
        del target.gone
        return super().__str__()


@dataclasses.dataclass
class Mutated:
    before: str
    amount: decimal.Decimal
    after: str
    gone: str = "class default"
    count: int = 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_inline_values_read_again_after_python_code_changes_the_instance(fmt: str) -> None:
    # Plain values are read from the instance's inline values as checked once; a value the
    # general encoder takes may run Python code that moves the attributes to a dict (and
    # frees the values array), so the fields after it are read through the checks again.
    codec = polycodec.Codec(Mutated, format=fmt)
    value = Mutated("first", MutatingDecimal("1.5"), "second", "own")
    Holder.value = value
    expected = {
        "before": "first",
        "amount": "1.5",
        "after": "changed",
        "gone": "class default",
        "count": 3,
    }
    assert codec.encode_one(value) == _msgspec_encode(fmt, expected)


def _named_fields_class(slots: bool) -> Any:
    # Field names whose entries (`,"name":` in JSON, a str header and the name in MessagePack)
    # fall either side of the 32 bytes a padded name entry holds, leading and later in the map.
    names = ["n" * length for length in (1, 27, 28, 29, 30, 31, 32, 33, 60)]
    names.insert(0, "ü" * 15)
    fields = [(name, int) for name in names] + [("e" * 28, Optional[str])]
    return dataclasses.make_dataclass(f"Named{slots}", fields, slots=slots)


@pytest.mark.parametrize("slots", [False, True])
@pytest.mark.parametrize("fmt", FORMATS)
def test_padded_field_name_entries_bytes_equal_msgspec(fmt: str, slots: bool) -> None:
    cls = _named_fields_class(slots)
    codec = polycodec.Codec(List[cls], format=fmt)  # type: ignore[valid-type]
    count = len(dataclasses.fields(cls))
    values = [cls(*range(count - 1), "x"), cls(*range(5, count + 4), None)]
    data = codec.encode_one(values)
    assert data == _msgspec_encode(fmt, [dataclasses.asdict(v) for v in values])
    assert codec.decode_one(data) == values


class PlainChild(Plain):
    pass


class ListDict(dict):  # type: ignore[type-arg]
    pass


def _materialised_cases() -> List[Any]:
    # Instances whose __dict__ was materialised (CPython 3.11 then keeps their attributes in
    # a split dict over the class's shared keys, read by index) and every way it can differ.
    pickled = Plain(1, "x", [1, 2])
    vars(pickled)  # what pickle, copy and orjson do
    extra = Plain(2, "y")
    vars(extra)["extra"] = 1  # one more shared key
    deleted = Plain(3, "z")
    vars(deleted)
    del deleted.b  # an empty slot: the class attribute, the default, is read
    combined = Plain(4, "w")
    for index in range(40):  # more keys than a split dict shares: a combined dict
        setattr(combined, f"extra{index}", index)
    replaced = Plain(5, "v")
    replaced.__dict__ = {"c": [5], "a": 5, "b": "v"}  # a dict of its own, in another order
    subclassed = Plain(6, "u")
    subclassed.__dict__ = ListDict(a=6, b="u", c=None)
    child = PlainChild(7, "t", [7])
    vars(child)
    return [pickled, extra, deleted, combined, replaced, subclassed, child]


@pytest.mark.parametrize("fmt", FORMATS)
def test_materialised_dict_fields_read_by_shared_keys_index(fmt: str) -> None:
    codec = polycodec.Codec(List[Plain], format=fmt)
    values = _materialised_cases()
    expected = [
        Plain(1, "x", [1, 2]),
        Plain(2, "y"),
        Plain(3),
        Plain(4, "w"),
        Plain(5, "v", [5]),
        Plain(6, "u"),
        Plain(7, "t", [7]),
    ]
    data = codec.encode_one(values)
    assert data == _msgspec_encode(fmt, [dataclasses.asdict(v) for v in expected])
    assert codec.encode_one(pickle.loads(pickle.dumps(values))) == data
    assert codec.decode_one(data) == expected


@dataclasses.dataclass
class FileNode:
    name: str
    size: int
    kind: Literal["file"] = "file"


@dataclasses.dataclass
class DirNode:
    name: str
    children: List[Union[FileNode, DirNode]]
    kind: Literal["dir"] = "dir"


@pytest.mark.parametrize("fmt", FORMATS)
def test_materialised_dict_tagged_variant_tag_read_out_of_order(fmt: str) -> None:
    # A tagged variant leads with its tag, the field __init__ sets last: a dict walked in
    # order meets it out of order, and the fields after it must still read right.
    codec = polycodec.Codec(DirNode, format=fmt)

    def tree() -> DirNode:
        return DirNode("root", [FileNode("a", 1), DirNode("sub", [FileNode("b", 2)])])

    fresh = codec.encode_one(tree())
    materialised = tree()
    pickle.dumps(materialised)
    assert codec.encode_one(materialised) == fresh
    odd = tree()
    odd.children[0].__dict__ = {"kind": "file", "size": 1, "name": "a"}
    assert codec.encode_one(odd) == fresh
    wrong = tree()
    vars(wrong.children[0])["kind"] = "dir"
    with pytest.raises(polycodec.EncodeError):
        codec.encode_one(wrong)
    expected = {
        "kind": "dir",
        "name": "root",
        "children": [
            {"kind": "file", "name": "a", "size": 1},
            {"kind": "dir", "name": "sub", "children": [{"kind": "file", "name": "b", "size": 2}]},
        ],
    }
    assert fresh == _msgspec_encode(fmt, expected)


@dataclasses.dataclass(slots=True)
class Attributed:
    id: int
    attrs: dict[str, Any]


class TaggedDict(dict):  # type: ignore[type-arg]
    pass


def test_dict_of_any_values_writes_msgspecs_bytes() -> None:
    # A `dict[str, Any]` field is written by the untyped loop: the same bytes as msgspec's
    # (as its dict is, field by field), a dict subclass by the general path, a key that is not
    # a str refused as before.
    attrs = {"a": 1, "b": [1.5, None, {"c": True}], "d": {"e": "x" * 40}, "é": (1, "t")}
    value = Attributed(7, attrs)
    for fmt, module in (("json", msgspec.json), ("msgpack", msgspec.msgpack)):
        codec = polycodec.Codec(Attributed, fmt)
        assert codec.encode_one(value) == module.encode({"id": 7, "attrs": attrs})
        subclassed = Attributed(7, TaggedDict(attrs))
        assert codec.encode_one(subclassed) == module.encode({"id": 7, "attrs": attrs})
        with pytest.raises(polycodec.EncodeError, match="expected str") as error:
            codec.encode_one(Attributed(7, {"a": 1, 2: "b"}))  # type: ignore[dict-item]
        assert error.value.path == "$.attrs"
    built = polycodec.to_builtins(value)
    assert built == msgspec.json.decode(msgspec.json.encode(value))
    assert built["attrs"] is not attrs and built["attrs"]["b"][2] is not attrs["b"][2]


class MyList(list):  # type: ignore[type-arg]
    pass


@dataclasses.dataclass(slots=True)
class Listed:
    ids: List[int]
    names: Optional[List[str]]
    ratios: List[float]


@pytest.mark.parametrize("fmt", FORMATS)
def test_plain_list_fields_bytes_equal_msgspec(fmt: str) -> None:
    # An exact list of plain items is written from the field's entry without the node's
    # dispatch; a list subclass, None, and items that are not plain (an int subclass, a big
    # int, a non-ASCII str) take the general path: the bytes are msgspec's either way.
    class MyInt(int):
        pass

    codec = polycodec.Codec(List[Listed], format=fmt)
    rows = [
        ([1, -2, 3], ["a", "é"], [1.5, 2]),
        ([], None, []),
        (MyList([4, 5]), MyList(["x"]), MyList([0.25])),
        ([MyInt(7), 2**62, -(2**63)], ["日本", ""], [1e300, -0.0]),
    ]
    value = [Listed(*row) for row in rows]
    expected = _msgspec_encode(
        fmt,
        [
            {
                "ids": [int(i) for i in ids],
                "names": None if names is None else list(names),
                "ratios": list(ratios),
            }
            for ids, names, ratios in rows
        ],
    )
    assert codec.encode_one(value) == expected


@pytest.mark.parametrize("fmt", FORMATS)
def test_plain_list_fields_at_every_nesting_depth(fmt: str) -> None:
    # Every sixteenth level takes the general path (its stack check): a chain of records
    # holding lists is written the same at every depth.
    @dataclasses.dataclass
    class Link:
        ids: List[int]
        next: Optional[Link] = None

    chain = None
    for depth in range(40):
        chain = Link([depth, depth + 1], chain)
    expected_value: Any = None
    for depth in range(40):
        expected_value = {"ids": [depth, depth + 1], "next": expected_value}
    codec = polycodec.Codec(Link, format=fmt)
    assert codec.encode_one(chain) == _msgspec_encode(fmt, expected_value)
