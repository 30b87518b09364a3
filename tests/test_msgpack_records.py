"""Records, unions and options through MessagePack: dataclass flavours, TypedDict, NamedTuple,
generics, recursion, tagged unions (as maps and as arrays), rename, omit_defaults,
forbid_unknown_fields, strict/lax, array_like; and interop with msgspec and msgpack-python."""

from __future__ import annotations

import dataclasses
import json
import struct
from decimal import Decimal
from typing import Any, Literal, NamedTuple, Optional, Union

import msgpack
import msgspec
import pytest

import polycodec
from json_models import Archive, Box, Cat, Chunk, Dog, Linked, Pet, Point, Tree, assert_same
from test_json_records import (
    Bird,
    Blob,
    Defaults,
    Derived,
    Frozen,
    FrozenSlots,
    KwOnly,
    Mixed,
    Holder,
    Partial,
    Shape,
    SomeRequired,
    Slots,
    StrTree,
)
from test_options import LAX_CASES, NAMES, Names, Row, WithDefaults


def codec(tp: Any, **options: Any) -> polycodec.Codec[Any]:
    return polycodec.Codec(tp, format="msgpack", **options)


def unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, timestamp=3, strict_map_key=False)


def check(tp: Any, obj: Any, wire: Any, *, msgspec_oracle: bool = True, **options: Any) -> bytes:
    c = codec(tp, **options)
    out = c.encode_one(obj)
    assert unpack(out) == wire
    assert_same(c.decode_one(out), obj)
    assert_same(c.decode_one(msgpack.packb(wire)), obj)
    if msgspec_oracle:
        assert out == msgspec.msgpack.encode(obj)
        assert_same(msgspec.msgpack.decode(out, type=tp), obj)
    return out


@pytest.mark.parametrize(
    "obj, wire",
    [
        (FrozenSlots(1, "x"), {"a": 1, "b": "x"}),
        (Slots(1, [2]), {"a": 1, "b": [2]}),
        (Frozen(5), {"a": 5}),
        (KwOnly(a=1, b=3), {"a": 1, "b": 3}),
        (Mixed(1, b="s", c=2.5), {"a": 1, "b": "s", "c": 2.5}),
    ],
    ids=["frozen-slots", "slots", "frozen", "kw-only", "kw-only-marker"],
)
def test_dataclass_flavours(obj: object, wire: object) -> None:
    check(type(obj), obj, wire)


def test_defaults_fill_missing_fields() -> None:
    c = codec(Defaults)
    assert_same(c.decode_one(msgpack.packb({"required": 1})), Defaults(1))
    with pytest.raises(polycodec.ValidationError, match="missing required field `required`"):
        c.decode_one(msgpack.packb({"number": 1}))


def test_inherited_dataclass_and_archive() -> None:
    archive = Archive("a", [Chunk("c", 1)], {"k": Chunk("k", 2)}, Point(1, 2))
    check(
        Archive,
        archive,
        {
            "label": "a",
            "contents": [{"name": "c", "nbytes": 1}],
            "index": {"k": {"name": "k", "nbytes": 2}},
            "owner": {"x": 1, "y": 2},
        },
    )


def test_post_init_and_init_false_fields() -> None:
    c = codec(Derived)
    assert unpack(c.encode_one(Derived(3))) == {"value": 3}
    value = c.decode_one(msgpack.packb({"value": 1, "double": 100}))
    assert value.double == 2
    with pytest.raises(polycodec.ValidationError, match="low must not exceed high"):
        codec(Holder).decode_one(
            msgpack.packb({"items": [{"low": 1, "high": 2}, {"low": 3, "high": 1}]})
        )


def test_typeddict_optional_keys() -> None:
    check(Partial, {}, {})
    check(Partial, {"b": "x"}, {"b": "x"})
    check(SomeRequired, {"a": 1}, {"a": 1})
    check(SomeRequired, {"a": 1, "b": "y"}, {"a": 1, "b": "y"})
    with pytest.raises(polycodec.ValidationError, match="`a`") as info:
        codec(SomeRequired).decode_one(msgpack.packb({"b": "y"}))
    assert info.value.path == "$"


def test_generic_and_recursive_records() -> None:
    check(Box[int], Box(1, [2, 3]), {"item": 1, "items": [2, 3]})
    tree = Tree(1, [Tree(2, [Tree(3)]), Tree(4)])
    check(
        Tree,
        tree,
        {
            "value": 1,
            "children": [
                {"value": 2, "children": [{"value": 3, "children": []}]},
                {"value": 4, "children": []},
            ],
        },
    )
    linked = Linked("a", Linked("b"))
    check(Linked, linked, {"value": "a", "next": {"value": "b", "next": None}})
    st = StrTree("root", [StrTree("leaf", [])])
    out = codec(StrTree).encode_one(st)
    assert_same(codec(StrTree).decode_one(out), st)


def test_recursive_error_path() -> None:
    data = msgpack.packb({"value": 1, "children": [{"value": 2, "children": [{"value": "x"}]}]})
    with pytest.raises(polycodec.ValidationError) as info:
        codec(Tree).decode_one(data)
    assert info.value.path == "$.children[0].children[0].value"


def test_tagged_union_as_maps() -> None:
    tp = Union[Cat, Dog]
    c = codec(tp)
    assert unpack(c.encode_one(Cat("cat", 9))) == {"kind": "cat", "lives": 9}
    assert c.encode_one(Cat("cat", 9)) == msgspec.msgpack.encode(Cat("cat", 9))
    assert_same(c.decode_one(msgpack.packb({"good": False, "kind": "dog"})), Dog("dog", False))
    pet = Pet("rex", Dog("dog", True))
    out = codec(Pet).encode_one(pet)
    assert unpack(out) == {"name": "rex", "animal": {"kind": "dog", "good": True}}
    assert_same(codec(Pet).decode_one(out), pet)
    pets = [Cat("cat", 1), Dog("dog", False)]
    assert_same(c.decode_many(c.encode_many(pets)), pets)


@dataclasses.dataclass
class Left:
    kind: Literal["l"]
    value: int


@dataclasses.dataclass
class Right:
    kind: Literal["r"]
    value: str


def test_tagged_union_fields_before_the_tag_with_different_types() -> None:
    c = codec(Union[Left, Right])
    assert_same(c.decode_one(msgpack.packb({"value": "s", "kind": "r"})), Right("r", "s"))
    assert_same(c.decode_one(msgpack.packb({"value": 3, "kind": "l"})), Left("l", 3))
    with pytest.raises(polycodec.ValidationError) as info:
        c.decode_one(msgpack.packb({"value": 3, "kind": "r"}))
    assert info.value.path == "$.value"


def test_tagged_union_int_tags_and_several_tags_per_class() -> None:
    shapes = codec(list[Union[Shape, Blob]])
    value = [Shape(1, 3), Blob(2, 0.5)]
    out = shapes.encode_one(value)
    assert unpack(out) == [{"tag": 1, "sides": 3}, {"tag": 2, "size": 0.5}]
    assert_same(shapes.decode_one(out), value)
    birds = codec(Union[Cat, Bird])
    assert_same(birds.decode_one(msgpack.packb({"kind": "parrot"})), Bird("parrot"))


def str8(text: str) -> bytes:
    """A str in the str8 form, longer than the fixstr form a short str is normally written in."""
    data = text.encode()
    return bytes([0xD9, len(data)]) + data


def test_tag_entry_and_field_names_in_any_str_form() -> None:
    # The leading tag entry and the field names are matched whole against precomputed bytes;
    # the same entries in str8 form (or a tag value that is no variant's) take the general path
    # and decode, or fail, exactly as before.
    c = codec(Union[Cat, Dog])
    assert_same(c.decode_one(msgpack.packb({"kind": "cat", "lives": 9})), Cat("cat", 9))
    forms = [
        b"\x82\xa4kind\xa3cat\xa5lives\x09",
        b"\x82" + str8("kind") + b"\xa3cat\xa5lives\x09",
        b"\x82\xa4kind" + str8("cat") + b"\xa5lives\x09",
        b"\x82\xa4kind\xa3cat" + str8("lives") + b"\x09",
        b"\x82\xa5lives\x09\xa4kind\xa3cat",
    ]
    for wire in forms:
        assert_same(c.decode_one(wire), Cat("cat", 9))
    with pytest.raises(polycodec.ValidationError) as info:
        c.decode_one(b"\x82\xa4kind\xa3cow\xa5lives\x09")
    assert info.value.path == "$.kind"
    assert "cow" in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        c.decode_one(b"\x82\xa4kind\xa3dog\xa5lives\x09")
    assert "good" in str(info.value)
    # A map that ends after its first entry: the tag alone, or the tag key with no entries left.
    with pytest.raises(polycodec.ValidationError, match="field `lives`"):
        c.decode_one(b"\x81\xa4kind\xa3cat")
    # An empty map with the entry after it: the entry is not read as the map's; as one value
    # the bytes are malformed, which comes before the missing tag (issue 27 item 7).
    with pytest.raises(polycodec.DecodeError, match="trailing bytes after the value at byte 1"):
        c.decode_one(b"\x80\xa4kind\xa3cat")
    shapes = codec(Union[Shape, Blob])
    assert_same(
        shapes.decode_one(b"\x82\xa3tag\x02\xa4size\xcb" + struct.pack(">d", 0.5)), Blob(2, 0.5)
    )
    assert_same(shapes.decode_one(b"\x82\xa3tag\xd0\x01\xa5sides\x03"), Shape(1, 3))
    # A long field name (str8 on the wire) still matches in declaration order.
    long_name = "n" * 40
    Long = dataclasses.make_dataclass("Long", [(long_name, int), ("b", int)])
    wire = msgpack.packb({long_name: 1, "b": 2})
    assert_same(codec(Long).decode_one(wire), Long(1, 2))


def test_tagged_union_errors() -> None:
    c = codec(Pet)
    cases = [
        ({"name": "x", "animal": {"kind": "cow"}}, "$.animal.kind", "cow"),
        ({"name": "x", "animal": {"lives": 1}}, "$.animal", "kind"),
        ({"name": "x", "animal": {"kind": "cat", "lives": "many"}}, "$.animal.lives", "int"),
        ({"name": "x", "animal": []}, "$.animal", "expected"),
    ]
    for wire, path, text in cases:
        with pytest.raises(polycodec.ValidationError) as info:
            c.decode_one(msgpack.packb(wire))
        assert info.value.path == path
        assert text in str(info.value)


def test_array_like_records_and_tagged_unions() -> None:
    row = Row(1, "a", Point(2, 3))
    out = check(Row, row, [1, "a", [2, 3], None], msgspec_oracle=False, array_like=True)
    # msgspec writes array_like Structs the same way: positional, nested records too.
    RowStruct = msgspec.defstruct(
        "RowStruct",
        [
            ("id", int),
            ("name", str),
            ("point", msgspec.defstruct("P", [("x", int), ("y", int)], array_like=True)),
            ("note", Optional[str], None),
        ],
        array_like=True,
    )
    theirs = msgspec.msgpack.decode(out, type=RowStruct)
    assert (theirs.id, theirs.name, theirs.point.x, theirs.note) == (1, "a", 2, None)
    assert msgspec.msgpack.encode(theirs) == out
    assert_same(codec(Row, array_like=True).decode_one(msgpack.packb([1, "a", [2, 3]])), row)
    pets = codec(list[Union[Cat, Dog]], array_like=True)
    value = [Cat("cat", 1), Dog("dog", True)]
    out = pets.encode_one(value)
    assert unpack(out) == [["cat", 1], ["dog", True]]
    assert_same(pets.decode_one(out), value)
    # Items past the fields are skipped, as msgspec skips them (issue 38, item 3), unless
    # unknown fields are forbidden.
    assert_same(pets.decode_one(msgpack.packb([["cat", 1, 2]])), [Cat("cat", 1)])
    strict = codec(list[Union[Cat, Dog]], array_like=True, forbid_unknown_fields=True)
    with pytest.raises(polycodec.ValidationError, match="at most 2 items"):
        strict.decode_one(msgpack.packb([["cat", 1, 2]]))
    with pytest.raises(polycodec.ValidationError, match="tag"):
        pets.decode_one(msgpack.packb([[]]))


class Opt(NamedTuple):
    a: int
    b: str = "x"


def test_namedtuple_with_defaults_and_tuple_lengths() -> None:
    c = codec(Opt)
    assert c.decode_one(msgpack.packb([1])) == Opt(1)
    assert unpack(c.encode_one(Opt(1, "y"))) == [1, "y"]
    with pytest.raises(polycodec.ValidationError, match="length 2, got 3"):
        codec(tuple[int, int]).decode_one(msgpack.packb([1, 2, 3]))


@pytest.mark.parametrize(
    "rename", ["camel", "pascal", "kebab", "screaming_snake", {"x": "X coord"}, str.upper]
)
def test_rename_matches_the_json_wire_names(rename: Any) -> None:
    json_names = list(json.loads(polycodec.encode_one(NAMES, rename=rename)))
    ours = codec(Names, rename=rename)
    out = ours.encode_one(NAMES)
    assert list(unpack(out)) == json_names
    assert_same(ours.decode_one(out), NAMES)
    with pytest.raises(polycodec.ValidationError, match="unknown field `(user_id|x)`"):
        codec(Names, rename=rename, forbid_unknown_fields=True).decode_one(
            msgpack.packb(dataclasses.asdict(NAMES))
        )


@pytest.mark.parametrize(
    "value",
    [
        WithDefaults(1),
        WithDefaults(0, number=5),
        WithDefaults(1, maybe=0, flag=True),
        WithDefaults(1, tags=["a"]),
        WithDefaults(1, table={"k": 1}),
        WithDefaults(1, point=Point(0, 1)),
        WithDefaults(1, text="t", point=Point(0, 0)),
    ],
)
def test_omit_defaults(value: WithDefaults) -> None:
    c = codec(WithDefaults, omit_defaults=True)
    out = c.encode_one(value)
    assert unpack(out) == json.loads(polycodec.encode_one(value, omit_defaults=True))
    assert_same(c.decode_one(out), value)
    assert_same(msgspec.msgpack.decode(out, type=WithDefaults), value)


def test_omit_defaults_rewrites_a_map16_header() -> None:
    fields = [(f"f{i}", int, dataclasses.field(default=0)) for i in range(20)]
    Wide = dataclasses.make_dataclass("Wide", fields)
    c = codec(Wide, omit_defaults=True)
    out = c.encode_one(Wide(f3=1, f17=2))
    assert out[0] == 0x82
    assert unpack(out) == {"f3": 1, "f17": 2}
    assert_same(c.decode_one(out), Wide(f3=1, f17=2))
    full = codec(Wide).encode_one(Wide())
    assert full[:3] == b"\xde\x00\x14"
    assert full == msgspec.msgpack.encode(Wide())


def test_forbid_unknown_fields() -> None:
    data = msgpack.packb({"x": 1, "y": 2, "z": [1, {"deep": None}]})
    assert codec(Point).decode_one(data) == Point(1, 2)
    with pytest.raises(polycodec.ValidationError, match="unknown field `z`"):
        codec(Point, forbid_unknown_fields=True).decode_one(data)


def _to_msgpack(json_payload: bytes) -> bytes:
    return msgpack.packb(json.loads(json_payload))


@pytest.mark.parametrize("tp, payload, expected", LAX_CASES)
def test_lax_coercions_mirror_json(tp: Any, payload: bytes, expected: Any) -> None:
    data = _to_msgpack(payload)
    assert_same(polycodec.decode_one(data, tp, format="msgpack", strict=False), expected)
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(data, tp, format="msgpack")


@pytest.mark.parametrize(
    "tp, value",
    [(int, "abc"), (int, 1.5), (int, True), (float, "abc"), (bool, "yes"), (bool, 2), (str, 1)],
)
def test_lax_still_rejects_nonsense(tp: Any, value: Any) -> None:
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(msgpack.packb(value), tp, format="msgpack", strict=False)


def test_lax_accepts_float32_integers_for_int() -> None:
    data = b"\xca" + struct.pack(">f", 3.0)
    assert_same(polycodec.decode_one(data, int, format="msgpack", strict=False), 3)


@dataclasses.dataclass
class Sample:
    count: int
    ratio: float
    name: str
    data: bytes
    table: dict[str, int]


# Every encoding a peer may choose for Sample(count=5, ratio=0.5, name="n", data=b"d",
# table={"k": 1}): map16/map32 headers, str8/16/32 keys and values, bin16/32 or str for
# bytes, float32, and every int width.
PEER_ENCODINGS = [
    b"\x85\xa5count\x05\xa5ratio\xcb?\xe0\x00\x00\x00\x00\x00\x00\xa4name\xa1n\xa4data\xc4\x01d"
    b"\xa5table\x81\xa1k\x01",
    b"\xde\x00\x05\xd9\x05count\xcc\x05\xd9\x05ratio\xca?\x00\x00\x00\xda\x00\x04name\xda\x00\x01n"
    b"\xdb\x00\x00\x00\x04data\xc5\x00\x01d\xa5table\xde\x00\x01\xa1k\xcd\x00\x01",
    b"\xdf\x00\x00\x00\x05\xa5count\xd3\x00\x00\x00\x00\x00\x00\x00\x05\xa5ratio\xca?\x00\x00\x00"
    b"\xa4name\xdb\x00\x00\x00\x01n\xa4data\xc6\x00\x00\x00\x01d\xa5table\xdf\x00\x00\x00\x01"
    b"\xa1k\xcf\x00\x00\x00\x00\x00\x00\x00\x01",
    b"\x85\xa4data\xa1d\xa5table\x81\xa1k\xd0\x01\xa4name\xa1n\xa5ratio\xca?\x00\x00\x00"
    b"\xa5count\xd2\x00\x00\x00\x05",
]


@pytest.mark.parametrize("data", PEER_ENCODINGS)
def test_every_encoding_a_peer_may_choose(data: bytes) -> None:
    expected = Sample(5, 0.5, "n", b"d", {"k": 1})
    assert_same(codec(Sample).decode_one(data), expected)
    assert_same(
        msgspec.msgpack.decode(data.replace(b"\xa4data\xa1d", b"\xa4data\xc4\x01d"), type=Sample),
        expected,
    )


def test_interop_with_msgpack_library_both_ways() -> None:
    archive = Archive("a", [Chunk("é", 2**40)], {"k": Chunk("k", -3)}, None)
    ours = codec(Archive).encode_one(archive)
    theirs = msgpack.packb(dataclasses.asdict(archive))
    assert ours == theirs
    assert_same(codec(Archive).decode_one(theirs), archive)


def test_ormsgpack_decodes_our_output() -> None:
    ormsgpack = pytest.importorskip("ormsgpack")
    archive = Archive("a", [Chunk("x", 1)], {}, Point(1, 2))
    ours = codec(Archive).encode_one(archive)
    assert ormsgpack.unpackb(ours) == dataclasses.asdict(archive)
    assert ormsgpack.packb(archive) == ours


def test_decimal_from_numbers_only_in_lax_mode() -> None:
    data = msgpack.packb(1.25)
    assert polycodec.decode_one(data, Decimal, format="msgpack", strict=False) == Decimal("1.25")
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(data, Decimal, format="msgpack")


LAX_DECIMAL_FLOATS = [1.0, 1e20, 1e16, 9999999999999998.0, 0.0001, 0.00001, 1.5, -0.0, 123.0]


@pytest.mark.parametrize("number", LAX_DECIMAL_FLOATS)
def test_lax_decimal_from_float_keeps_the_float_repr_as_msgspec_does(number: float) -> None:
    data = msgpack.packb(number)
    expected = msgspec.msgpack.decode(data, type=Decimal, strict=False)
    ours = polycodec.decode_one(data, Decimal, format="msgpack", strict=False)
    assert (ours, str(ours)) == (expected, str(expected))


@dataclasses.dataclass
class Plain:
    text: str
    number: int
    real: float
    flag: bool
    maybe: Optional[str] = None


class MyStr(str):
    pass


class MyInt(int):
    pass


@pytest.mark.parametrize(
    "value",
    [
        Plain("ascii", 1, 1.5, True),
        Plain("héllo ✓", -(2**63), 2.0, False, "x"),
        Plain(MyStr("sub"), MyInt(7), 3, True, MyStr("é")),
        Plain("big", 2**64 - 1, float("inf"), False),
    ],
    ids=["plain", "non-ascii", "subclasses", "uint64"],
)
def test_plain_field_values_are_written_like_msgspec(value: Plain) -> None:
    out = codec(Plain).encode_one(value)
    assert out == msgpack.packb(dataclasses.asdict(value))
    if type(value.text) is str:
        assert out == msgspec.msgpack.encode(value)
    assert codec(Plain).decode_one(out) == value


def test_fields_set_out_of_order_or_shadowed_are_found() -> None:
    value = Plain("a", 1, 1.0, True)
    del value.__dict__["text"]
    value.text = "late"  # now last in the instance dict
    assert unpack(codec(Plain).encode_one(value))["text"] == "late"
    del value.__dict__["maybe"]  # falls back to the class attribute (the default)
    assert unpack(codec(Plain).encode_one(value)) == {
        "text": "late",
        "number": 1,
        "real": 1.0,
        "flag": True,
        "maybe": None,
    }


def test_wrong_plain_values_still_fail_with_paths() -> None:
    with pytest.raises(polycodec.EncodeError, match=r"expected int, got bool \(at \$\.number\)"):
        codec(Plain).encode_one(Plain("a", True, 1.0, True))
    with pytest.raises(polycodec.EncodeError, match=r"\$\.flag"):
        codec(Plain).encode_one(Plain("a", 1, 1.0, 1))  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError, match=r"64 bits.*\$\.number"):
        codec(Plain).encode_one(Plain("a", 2**64, 1.0, True))
