"""Issue 26: values read or written wrongly without a word, and the sharp edges found with them.

Each test is named after the item it pins; msgspec (and the other reference libraries) are the
oracles where they define the answer.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
from decimal import Decimal
from typing import Any, Literal, NamedTuple, Optional, TypedDict, Union

import msgspec
import pytest
from typing_extensions import NotRequired

import polycodec

HUGE_DIGITS = "9" * 400


@dataclasses.dataclass
class Price:
    price: float


@dataclasses.dataclass(frozen=True)
class FrozenPrice:
    price: float


class PriceStruct(msgspec.Struct):
    price: float


# Item 1: a number too large for a double, read into a float.


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("text", [HUGE_DIGITS, "-" + HUGE_DIGITS, "1" + "0" * 309, "1e400"])
def test_huge_int_into_float_is_a_validation_error(text: str, strict: bool) -> None:
    payload = ('{"price": %s}' % text).encode()
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(payload, type=PriceStruct, strict=strict)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, Price, strict=strict)
    assert info.value.path == "$.price"
    assert "out of range for a float" in str(info.value)
    # The same number in a float collection, and an int alternative still takes it exactly.
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(("[%s]" % text).encode(), list[float])
    if "e" not in text:
        assert polycodec.decode_one(text.encode(), Union[int, float]) == int(text)


def test_huge_int_into_float_is_a_validation_error_from_builtins() -> None:
    for number in [10**400, -(10**400), 2**1024]:
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"price": number}, PriceStruct)
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.from_builtins({"price": number}, Price)
        assert info.value.path == "$.price"
    # The largest int that still rounds to a finite double is read as that double.
    largest = int(2**1024 - 2**970 - 1)
    assert polycodec.from_builtins({"price": largest}, Price).price == float(2**1024 - 2**971)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
@pytest.mark.parametrize("text", ["1e400", "-1e400", HUGE_DIGITS, "1" + "0" * 309])
def test_huge_int_into_float_is_a_validation_error_in_lax_strings(fmt: str, text: str) -> None:
    payload = polycodec.Codec(list[str], format=fmt).encode_one(["1.5", text])
    if fmt == "json":
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(payload, type=list[float], strict=False)
    if fmt == "msgpack":
        with pytest.raises(msgspec.ValidationError):
            msgspec.msgpack.decode(payload, type=list[float], strict=False)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.Codec(list[float], format=fmt, strict=False).decode_one(payload)
    assert info.value.path == "$[1]"
    assert "out of range for a float" in str(info.value)
    with pytest.raises(polycodec.ValidationError):
        polycodec.from_builtins({"price": text}, Price, strict=False)


@pytest.mark.parametrize("text", ["inf", "-inf", "Infinity", "INF", "nan"])
def test_huge_int_into_float_named_infinities_still_read_in_lax_strings(text: str) -> None:
    payload = ('{"price": "%s"}' % text).encode()
    expected = msgspec.json.decode(payload, type=PriceStruct, strict=False).price
    got = polycodec.decode_one(payload, Price, strict=False).price
    assert math.isnan(got) if math.isnan(expected) else got == expected


def test_huge_int_into_float_is_a_validation_error_in_pickle() -> None:
    # pickle holds ints of any size (LONG1); a float field refuses one that overflows.
    payload = pickle.dumps([1.5, 10**400], protocol=5)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, list[float], format="pickle")
    assert info.value.path == "$[1]"
    assert polycodec.decode_one(payload, list[Union[int, float]], format="pickle") == [
        1.5,
        10**400,
    ]


# Item 2: omit_defaults leaves out only what reads back as the default itself.

_LOOK_ALIKES = [
    # (annotation, default, value that only compares equal to the default)
    (Union[int, bool], 0, False),
    (Any, 0, False),
    (Any, 1, True),
    (Union[int, float], 1, 1.0),
    (float, 0.0, -0.0),
    (Decimal, Decimal("1"), Decimal("1.00")),
    (Decimal, Decimal("0"), Decimal("-0")),
    (tuple[Any, ...], (1, 2), (1, 2.0)),
    (list[Any], [0], [False]),
    (dict[str, Any], {"a": 1, "b": 2}, {"b": 2, "a": 1}),
    (frozenset[Any], frozenset({1}), frozenset({1.0})),
]


def _with_default(annotation: Any, default: Any) -> tuple[type, type]:
    if isinstance(default, (list, dict)):
        field: Any = dataclasses.field(default_factory=lambda: type(default)(default))
        struct_field: Any = msgspec.field(default_factory=lambda: type(default)(default))
    else:
        field = struct_field = default
    record = dataclasses.make_dataclass("Record", [("value", annotation, field)])
    struct = msgspec.defstruct("Record", [("value", annotation, struct_field)], omit_defaults=True)
    return record, struct


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("annotation, default, value", _LOOK_ALIKES)
def test_omit_defaults_writes_values_only_equal_to_the_default(
    fmt: str, annotation: Any, default: Any, value: Any
) -> None:
    record, struct = _with_default(annotation, default)
    codec = polycodec.Codec(record, format=fmt, omit_defaults=True)
    out = codec.encode_one(record(value))
    oracle = getattr(msgspec, fmt).encode(struct(value))
    assert out == oracle
    back = codec.decode_one(out).value
    assert type(back) is type(value) and repr(back) == repr(value)
    # The default itself (from a factory: a copy of it) is still left out.
    assert codec.decode_one(codec.encode_one(record())) == record()
    assert len(codec.encode_one(record())) < len(out)


@pytest.mark.parametrize(
    "annotation, default, copy",
    [
        (int, 1000, int("1000")),
        (str, "hello world!", " ".join(["hello", "world!"])),
        (float, 0.5, float("0.5")),
        (Decimal, Decimal("1.50"), Decimal("1.50")),
        (tuple[int, ...], (1, 2), tuple([1, 2])),
        (frozenset[str], frozenset({"a"}), frozenset(["a"])),
        (Optional[FrozenPrice], FrozenPrice(1.0), FrozenPrice(1.0)),
    ],
)
def test_omit_defaults_still_leaves_out_copies_of_the_default(
    annotation: Any, default: Any, copy: Any
) -> None:
    # msgspec leaves out only the default object itself; a copy of it reads back the same, so
    # polycodec leaves it out as well.
    record, _ = _with_default(annotation, default)
    for fmt in ["json", "msgpack"]:
        codec = polycodec.Codec(record, format=fmt, omit_defaults=True)
        assert codec.encode_one(record(copy)) == codec.encode_one(record())
        assert polycodec.to_builtins(record(copy), omit_defaults=True) == {}


def test_omit_defaults_writes_an_aware_datetime_in_another_zone() -> None:
    import datetime as dt

    utc = dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone.utc)
    paris = utc.astimezone(dt.timezone(dt.timedelta(hours=2)))
    assert paris == utc
    record, _ = _with_default(dt.datetime, utc)
    out = polycodec.encode_one(record(paris), omit_defaults=True)
    assert out == b'{"value":"2024-05-01T14:00:00+02:00"}'
    assert polycodec.to_builtins(record(paris), omit_defaults=True) == {
        "value": "2024-05-01T14:00:00+02:00"
    }
    assert polycodec.encode_one(record(utc.replace()), omit_defaults=True) == b"{}"


# Item 4: a failed finish() ends the stream in every format, and says so once.

_TRUNCATED = {
    "json": b'{"a": 1}\n[1, 2',
    "msgpack": b"\x81\xa1a\x01\x92\x01",
    "pickle": pickle.dumps({"a": 1}, protocol=5) + b"\x80\x04K",
    # A container file whose one block lacks its last byte.
    "avro": polycodec.Codec(dict[str, int], format="avro").encode_many([{"a": 1}])[:-1],
}


@pytest.mark.parametrize("fmt", sorted(_TRUNCATED))
def test_stream_decoder_stops_after_a_failed_finish(fmt: str) -> None:
    codec = polycodec.Codec(dict[str, int], format=fmt)
    decoder = codec.stream_decoder()
    completed = decoder.feed(_TRUNCATED[fmt])
    completed += decoder.feed(b"")
    assert completed == ([] if fmt == "avro" else [{"a": 1}])
    with pytest.raises(polycodec.DecodeError) as first:
        decoder.finish()
    assert first.value.index == 1 or fmt != "json"
    more = codec.encode_one({"b": 2}) + (b"\n" if fmt == "json" else b"")
    for call in [lambda: decoder.feed(more), decoder.finish, lambda: decoder.feed(b"")]:
        with pytest.raises(polycodec.DecodeError) as later:
            call()
        message = str(later.value)
        assert message.startswith("the stream cannot go on after: ")
        assert message.count("(at $") == 1, message
        assert str(first.value).removesuffix(" (at $)") in message


def test_stream_decoder_stops_after_a_failed_finish_of_a_wrong_shaped_last_line() -> None:
    # The last JSON line lacks its newline and is whole, but not an int: the input has ended, so
    # nothing fed afterwards is read.
    decoder = polycodec.Codec(int, format="json").stream_decoder()
    assert decoder.feed(b'1\n"two"') == [1]
    with pytest.raises(polycodec.ValidationError):
        decoder.finish()
    with pytest.raises(polycodec.DecodeError, match="cannot go on"):
        decoder.feed(b"3\n")


# Item 3: array_like TypedDicts with optional keys encode what they decode.


class AllOptional(TypedDict, total=False):
    x: int
    y: str


class MiddleOptional(TypedDict):
    a: int
    b: NotRequired[int]
    c: NotRequired[int]


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize(
    "tp, value, wire",
    [
        (AllOptional, {}, []),
        (AllOptional, {"x": 1}, [1]),
        (AllOptional, {"x": 1, "y": "s"}, [1, "s"]),
        (MiddleOptional, {"a": 1}, [1]),
        (MiddleOptional, {"a": 1, "b": 2}, [1, 2]),
        (MiddleOptional, {"a": 1, "b": 2, "c": 3}, [1, 2, 3]),
    ],
)
def test_array_like_typeddict_with_optional_keys_round_trips(
    fmt: str, tp: Any, value: Any, wire: list[Any]
) -> None:
    codec = polycodec.Codec(tp, format=fmt, array_like=True)
    out = codec.encode_one(value)
    assert out == getattr(msgspec, fmt).encode(wire)
    assert codec.decode_one(out) == value
    assert polycodec.to_builtins(value, type=tp, array_like=True) == wire
    assert polycodec.from_builtins(wire, tp, array_like=True) == value


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_array_like_typeddict_with_optional_keys_refuses_a_gap(fmt: str) -> None:
    for tp, value in [(AllOptional, {"y": "s"}), (MiddleOptional, {"a": 1, "c": 3})]:
        with pytest.raises(polycodec.EncodeError, match="is left out but .* after it is not"):
            polycodec.Codec(tp, format=fmt, array_like=True).encode_one(value)
    with pytest.raises(polycodec.EncodeError, match="missing required field `a`"):
        polycodec.Codec(MiddleOptional, format=fmt, array_like=True).encode_one({})


# Item 10: a tag that cannot match says what it was, in one wording.


@dataclasses.dataclass
class One:
    kind: Literal[1]


@dataclasses.dataclass
class Two:
    kind: Literal[2]


@pytest.mark.parametrize(
    "tag, found",
    [
        (
            10**24,
            "invalid value 1000000000000000000000000 for tag field `kind`: expected one of 1, 2",
        ),
        (
            2**64 - 1,
            "invalid value 18446744073709551615 for tag field `kind`: expected one of 1, 2",
        ),
        (3, "invalid value 3 for tag field `kind`: expected one of 1, 2"),
        (1.5, "expected a str or int tag, got float"),
        (True, "expected a str or int tag, got bool"),
        (None, "expected a str or int tag, got null"),
        ([1], "expected a str or int tag, got array"),
        ({"a": 1}, "expected a str or int tag, got object"),
    ],
)
def test_big_int_tag_is_reported_as_an_int_the_same_everywhere(tag: Any, found: str) -> None:
    tp = Union[One, Two]
    expected = found + " (at $.kind)"
    messages = set()
    for fmt in ["json", "msgpack"]:
        if fmt == "msgpack" and isinstance(tag, int) and tag >= 2**64:
            continue  # MessagePack ints end at 2**64 - 1
        payload = getattr(msgspec, fmt).encode({"kind": tag})
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.decode_one(payload, tp, format=fmt)
        messages.add(str(info.value))
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.from_builtins({"kind": tag}, tp)
    messages.add(str(info.value))
    # MessagePack calls a map a map and null nil.
    wording = {m.replace("got map", "got object").replace("got nil", "got null") for m in messages}
    assert wording == {expected}


# Item 11: a set whose items cannot be hashed is refused when the codec is built.


@dataclasses.dataclass
class Plain:
    x: int


@dataclasses.dataclass(frozen=True)
class FrozenWithList:
    x: list[int]


@dataclasses.dataclass(eq=False)
class IdentityHashed:
    x: list[int]


class PairWithList(NamedTuple):
    a: int
    b: list[int]


@pytest.mark.parametrize(
    "tp, found",
    [
        (set[Plain], "Plain (a dataclass with eq and without frozen or unsafe_hash)"),
        (set[list[int]], "list"),
        (frozenset[dict[str, int]], "dict"),
        (set[set[int]], "set"),
        (set[bytearray], "bytearray"),
        (set[FrozenWithList], "list"),
        (set[PairWithList], "list"),
        (set[tuple[int, list[int]]], "list"),
        (set[Union[int, list[int]]], "list"),
        (set[AllOptional], "AllOptional (a TypedDict: its values are dicts)"),
    ],
)
def test_set_of_unhashable_items_is_refused_at_codec(tp: Any, found: str) -> None:
    for fmt in ["json", "msgpack", "avro", "pickle"]:
        with pytest.raises(TypeError, match="set items must be hashable") as info:
            polycodec.Codec(tp, format=fmt)
        assert f"and {found} is not" in str(info.value)


@pytest.mark.parametrize(
    "tp, value",
    [
        (set[FrozenPrice], {FrozenPrice(1.0)}),
        (set[IdentityHashed], set()),
        (set[tuple[int, ...]], {(1, 2)}),
        (frozenset[frozenset[int]], frozenset({frozenset({1})})),
        (set[Any], {1, "a"}),
        (set[bytes], {b"a"}),
    ],
)
def test_set_of_unhashable_items_is_refused_at_codec_but_hashable_ones_work(
    tp: Any, value: Any
) -> None:
    codec = polycodec.Codec(tp)
    assert codec.decode_one(codec.encode_one(value)) == value


# Item 12: a MessagePack map key that is an array of arrays is a tuple of tuples.


@pytest.mark.parametrize(
    "key",
    [((33,),), (((33,),), 1), (), ((), ((),)), ("a", b"b", (1.5, None, True))],
)
def test_msgpack_array_of_arrays_key_is_read_as_nested_tuples(key: Any) -> None:
    payload = msgspec.msgpack.encode({key: {}})
    expected = msgspec.msgpack.decode(payload)
    assert polycodec.decode_one(payload, Any, format="msgpack") == expected == {key: {}}
    assert polycodec.decode_one(payload, dict[Any, Any], format="msgpack") == expected


@pytest.mark.parametrize("payload", [b"\x81\x91\x81\x01\x02\x80", b"\x81\x91\x91\x81\x01\x02\x80"])
def test_msgpack_array_of_arrays_key_holding_a_map_is_refused(payload: bytes) -> None:
    with pytest.raises(msgspec.DecodeError):
        msgspec.msgpack.decode(payload)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(payload, Any, format="msgpack")
    assert str(info.value) == "expected a hashable dict key, got an array holding a map (at $)"


# Item 15: the smaller ones.


def test_encode_many_of_a_generator_without_type() -> None:
    for fmt in ["json", "msgpack", "pickle", "avro"]:
        expected = polycodec.Codec(FrozenPrice, format=fmt).encode_many(
            [FrozenPrice(1.0), FrozenPrice(2.5)]
        )
        made = (FrozenPrice(p) for p in [1.0, 2.5])
        got = polycodec.encode_many(made, fmt)
        if fmt == "avro":  # every container file has its own sync marker
            assert polycodec.decode_many(got, FrozenPrice, "avro") == [
                FrozenPrice(1.0),
                FrozenPrice(2.5),
            ]
        else:
            assert got == expected
    assert polycodec.encode_many(iter([None, None])) == b"[null,null]"
    with pytest.raises(TypeError, match="needs type="):
        polycodec.encode_many(iter([]))


def test_write_file_to_a_text_mode_file_is_a_type_error(tmp_path: Any) -> None:
    codec = polycodec.Codec(int)
    with open(tmp_path / "out.jsonl", "w") as text_file:
        with pytest.raises(TypeError, match="binary mode") as info:
            codec.write_file(text_file, [1, 2])
        assert not isinstance(info.value, polycodec.EncodeError)
    assert (tmp_path / "out.jsonl").read_bytes() == b""
    with open(tmp_path / "out.jsonl", "wb") as binary_file:
        assert codec.write_file(binary_file, [1, 2]) == 2
    assert (tmp_path / "out.jsonl").read_bytes() == b"1\n2\n"


@pytest.mark.parametrize("key", ["01", "00", "-01", "+1", " 1", "1 "])
def test_dict_int_key_with_leading_zero_is_refused(key: str) -> None:
    payload = ('{"%s": 1, "1": 2}' % key).encode()
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(payload, type=dict[int, int])
    with pytest.raises(polycodec.ValidationError, match="expected an integer key"):
        polycodec.decode_one(payload, dict[int, int])
    # The same rule for a lax string read as an int.
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(('"%s"' % key).encode(), int, strict=False)


def test_dict_int_key_with_leading_zero_is_refused_but_zero_and_minus_zero_read() -> None:
    payload = b'{"0": 1, "-0": 2, "10": 3, "-7": 4}'
    expected = msgspec.json.decode(payload, type=dict[int, int])
    assert polycodec.decode_one(payload, dict[int, int]) == expected == {0: 2, 10: 3, -7: 4}


@dataclasses.dataclass
class Reading:
    temp: float


@dataclasses.dataclass
class Station:
    name: str
    readings: list[Reading]
    latest: Reading


@pytest.mark.parametrize(
    "writer_fields, path, loc",
    [
        (
            [
                {"name": "name", "type": "string"},
                {"name": "readings", "type": {"type": "array", "items": "Reading"}},
                {"name": "latest", "type": "string"},
            ],
            "$.latest",
            ("latest",),
        ),
        (
            [
                {"name": "name", "type": "string"},
                {
                    "name": "readings",
                    "type": {
                        "type": "array",
                        "items": {
                            "type": "record",
                            "name": "R",
                            "fields": [{"name": "temp", "type": "string"}],
                        },
                    },
                },
                {"name": "latest", "type": "R"},
            ],
            "$.readings[].temp",
            ("readings", "[]", "temp"),
        ),
    ],
)
def test_avro_writer_schema_error_path_is_where_it_is(
    writer_fields: list[Any], path: str, loc: tuple[Any, ...]
) -> None:
    reading = {"type": "record", "name": "Reading", "fields": [{"name": "temp", "type": "double"}]}
    fields = [{**f, "type": reading} if f["type"] == "Reading" else f for f in writer_fields]
    for f in fields:
        if isinstance(f["type"], dict) and f["type"].get("items") == "Reading":
            f["type"] = {"type": "array", "items": reading}
    writer = {"type": "record", "name": "Station", "fields": fields}
    codec = polycodec.Codec(Station, format="avro")
    with pytest.raises(polycodec.DecodeError) as info:
        codec.decode_one(b"\x02x\x00\x02y", writer_schema=writer)
    assert info.value.path == path
    assert info.value.loc == loc
    message = str(info.value)
    assert message.startswith("cannot read the writer schema: ")
    assert message.count(path) == 1 and message.endswith(f" (at {path})")
