"""to_builtins / from_builtins: the JSON form as Python objects.

The oracle is the JSON path: ``to_builtins(x)`` must equal ``json.loads(encode_one(x))`` and
``from_builtins(json.loads(b))`` must give what ``decode_one(b)`` gives, or raise the same error
with the same path, for every supported type and option.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import enum
import gc
import json
import os
import pathlib
import random
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional, Union

import annotated_types
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polycodec
from json_models import (
    EVERYTHING,
    EVERYTHING_JSON,
    Archive,
    Box,
    Cat,
    Chunk,
    Color,
    Dog,
    Everything,
    Floats,
    Linked,
    Pet,
    Point,
    Tree,
    assert_same,
)
from test_properties import (
    CONTAINERS,
    JSON_VALUES,
    OUTER,
    SCALARS,
    SETTINGS,
    TEMPORAL,
    Containers,
    Outer,
    Scalars,
    Temporal,
)

KEPT = (bytes, bytearray, datetime.datetime, datetime.date, datetime.time, datetime.timedelta)
ALL_KEPT = KEPT + (uuid.UUID, Decimal)


def check(tp: Any, obj: Any, **options: Any) -> Any:
    """``obj`` through both paths: the builtins form is JSON's, and reads back as JSON does."""
    codec = polycodec.Codec(tp, "json", **options)
    out = codec.to_builtins(obj)
    expected = json.loads(codec.encode_one(obj))
    assert_same(out, expected)
    assert_same(codec.from_builtins(out), codec.decode_one(json.dumps(out)))
    return out


def same_failure(tp: Any, data: Any, **options: Any) -> polycodec.ValidationError:
    """``data`` fails from_builtins exactly as its JSON text fails decode_one."""
    codec = polycodec.Codec(tp, "json", **options)
    with pytest.raises(polycodec.DecodeError) as json_error:
        codec.decode_one(json.dumps(data))
    with pytest.raises(polycodec.DecodeError) as builtins_error:
        codec.from_builtins(data)
    assert type(builtins_error.value) is type(json_error.value)
    assert str(builtins_error.value) == str(json_error.value)
    assert builtins_error.value.path == json_error.value.path
    assert builtins_error.value.loc == json_error.value.loc
    return builtins_error.value


# Every supported type


def test_every_type_matches_the_json_form() -> None:
    codec = polycodec.Codec(Everything, "json")
    out = codec.to_builtins(EVERYTHING)
    assert_same(out, EVERYTHING_JSON)
    assert_same(out, json.loads(codec.encode_one(EVERYTHING)))
    assert_same(codec.from_builtins(EVERYTHING_JSON), EVERYTHING)


@pytest.mark.parametrize(
    "tp, obj",
    [
        (Archive, Archive("a", [Chunk("c", 3)], {"k": Chunk("d", 4)}, Point(1, 2))),
        (Pet, Pet("rex", Dog("dog", True))),
        (Pet, Pet("tom", Cat("cat", 9))),
        (Tree, Tree(1, [Tree(2), Tree(3, [Tree(4)])])),
        (Linked, Linked("a", Linked("b"))),
        (Box[int], Box(1, [2, 3])),
        (Floats, Floats(1.5, None, [0.1, -2e300, 5e-324], 3)),
        (Floats, Floats(-0.0, 1e16, [], 2.5)),
        (list[Point], [Point(1, 2), Point(3, 4)]),
        (dict[str, list[int]], {"a": [1], "b": []}),
        (Optional[int], None),
        (Union[int, str, None], "x"),
        (tuple[int, str, bool], (1, "a", False)),
        (Any, {"a": [1, 2.5, None, True, "s", {"b": {}}]}),
        (Any, Point(5, 6)),
        (Any, {1: "int key", 2.5: "float key", None: "none key", True: "bool key"}),
        (dict[int, str], {1: "a", -(2**80): "big"}),
        (int, 2**200),
        (str, 'héllo ✓ 𝄞\n"quoted"'),
        (Literal["a", 3, True], True),
    ],
)
def test_models_match_the_json_form(tp: Any, obj: Any) -> None:
    check(tp, obj)


def test_str_and_str_values_are_kept_as_the_objects_themselves() -> None:
    text = "a longer text, not interned " * 3
    out = polycodec.Codec(Pet, "json").to_builtins(Pet(text, Cat("cat", 1)))
    assert out["name"] is text


def test_subclass_values_become_their_json_types() -> None:
    class MyStr(str):
        pass

    class MyInt(int):
        pass

    out = check(tuple[str, int, dict[str, int]], (MyStr("a"), MyInt(3), {MyStr("k"): MyInt(2**70)}))
    assert_same(out, ["a", 3, {"k": 2**70}])


# Options


@dataclass
class Options:
    first_name: str
    tags: list[str] = field(default_factory=list)
    score: int = 0
    note: Optional[str] = None


def test_rename() -> None:
    out = check(Options, Options("ann", ["x"], 3), rename="camel")
    assert out == {"firstName": "ann", "tags": ["x"], "score": 3, "note": None}


def test_omit_defaults() -> None:
    out = check(Options, Options("ann"), omit_defaults=True)
    assert out == {"first_name": "ann"}


def test_array_like() -> None:
    out = check(Options, Options("ann", ["x"]), array_like=True)
    assert out == ["ann", ["x"], 0, None]
    assert polycodec.from_builtins(["bob"], Options, array_like=True) == Options("bob")


def test_array_like_tagged_union() -> None:
    out = check(Pet, Pet("rex", Dog("dog", False)), array_like=True)
    assert out == ["rex", ["dog", False]]


def test_forbid_unknown_fields() -> None:
    data = {"first_name": "ann", "extra": 1}
    assert polycodec.from_builtins(data, Options) == Options("ann")
    error = same_failure(Options, data, forbid_unknown_fields=True)
    assert "extra" in str(error)


def test_lax_mode_accepts_what_lax_json_accepts() -> None:
    @dataclass
    class Lax:
        number: int
        real: float
        flag: bool
        money: Decimal

    data = {"number": "5", "real": "2.5", "flag": "true", "money": 1.25}
    codec = polycodec.Codec(Lax, "json", strict=False)
    assert codec.from_builtins(data) == codec.decode_one(json.dumps(data))
    assert codec.from_builtins(data) == Lax(5, 2.5, True, Decimal("1.25"))
    same_failure(Lax, data)


def test_extensions() -> None:
    ext = {
        pathlib.PurePosixPath: polycodec.Extension(str, encode=str, decode=pathlib.PurePosixPath)
    }

    @dataclass
    class Files:
        paths: list[pathlib.PurePosixPath]

    value = Files([pathlib.PurePosixPath("/a/b"), pathlib.PurePosixPath("c")])
    out = check(Files, value, extensions=ext)
    assert out == {"paths": ["/a/b", "c"]}
    assert polycodec.from_builtins(out, Files, extensions=ext) == value


def test_constraints() -> None:
    @dataclass
    class Limited:
        name: Annotated[str, polycodec.Meta(min_length=2, pattern="^[a-z]+$")]
        count: Annotated[int, polycodec.Meta(ge=0, le=10)]
        items: Annotated[list[int], polycodec.Meta(max_length=2)]
        money: Annotated[Decimal, polycodec.Meta(max_digits=4, decimal_places=2)]

    ok = {"name": "ab", "count": 3, "items": [1], "money": "1.25"}
    assert polycodec.from_builtins(ok, Limited) == Limited("ab", 3, [1], Decimal("1.25"))
    for key, bad in [
        ("name", "a"),
        ("name", "AB"),
        ("count", 11),
        ("count", -1),
        ("items", [1, 2, 3]),
        ("money", "1.255"),
    ]:
        error = same_failure(Limited, {**ok, key: bad})
        assert error.path == f"$.{key}"


# builtin_types


def test_builtin_types_are_left_as_objects() -> None:
    codec = polycodec.Codec(Everything, "json")
    out = codec.to_builtins(EVERYTHING, builtin_types=ALL_KEPT)
    for name in ["blob", "buffer", "money", "naive", "aware", "day", "clock", "span", "ident"]:
        assert out[name] is getattr(EVERYTHING, name), name
    # Dict keys are always the JSON form's str keys.
    assert out["by_uuid"] == {"00000000-0000-0000-0000-000000000001": 5}
    assert_same(codec.from_builtins(out, builtin_types=ALL_KEPT), EVERYTHING)


@pytest.mark.parametrize("kept", ALL_KEPT)
def test_each_builtin_type_alone(kept: type) -> None:
    codec = polycodec.Codec(Everything, "json")
    out = codec.to_builtins(EVERYTHING, builtin_types=[kept])
    kept_fields = {name for name, value in out.items() if not isinstance(value, (str, int, float))}
    kept_fields -= {name for name, value in EVERYTHING_JSON.items() if value is None}
    for name in kept_fields:
        if isinstance(out[name], (dict, list)):
            continue
        assert type(out[name]) is kept, name
    assert_same(codec.from_builtins(out, builtin_types=[kept]), EVERYTHING)
    if kept_fields - {"anything"}:
        # Without builtin_types the objects are refused, with the field's path.
        with pytest.raises(polycodec.ValidationError) as error:
            codec.from_builtins(out)
        assert error.value.path.startswith("$.")


def test_builtin_types_accept_the_text_form_too() -> None:
    assert_same(
        polycodec.from_builtins(EVERYTHING_JSON, Everything, builtin_types=ALL_KEPT), EVERYTHING
    )


def test_kept_values_are_checked_against_the_field() -> None:
    @dataclass
    class When:
        at: Annotated[datetime.datetime, polycodec.Meta(tz=True)]
        day: datetime.date
        blob: Annotated[bytes, polycodec.Meta(max_length=2)]
        money: Annotated[Decimal, polycodec.Meta(le=5)]

    keep = {datetime.datetime, datetime.date, bytes, Decimal}
    aware = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
    ok = {"at": aware, "day": datetime.date(2020, 1, 2), "blob": b"ab", "money": Decimal(5)}
    value = polycodec.from_builtins(ok, When, builtin_types=keep)
    assert value == When(aware, datetime.date(2020, 1, 2), b"ab", Decimal(5))
    for key, bad, message in [
        ("at", datetime.datetime(2020, 1, 1), "timezone-aware"),
        ("day", aware, "expected date, got datetime"),
        ("blob", b"abc", "<= 2"),
        ("money", Decimal(6), "<= 5"),
        ("money", 5.0, "expected decimal, got float"),
    ]:
        with pytest.raises(polycodec.ValidationError, match=message) as error:
            polycodec.from_builtins({**ok, key: bad}, When, builtin_types=keep)
        assert error.value.path == f"$.{key}"


def test_bytes_field_gives_bytearray_from_kept_bytes() -> None:
    @dataclass
    class Buf:
        data: bytearray

    out = polycodec.from_builtins({"data": b"xy"}, Buf, builtin_types=[bytes])
    assert_same(out, Buf(bytearray(b"xy")))


def test_bad_builtin_types_raise_type_error() -> None:
    codec = polycodec.Codec(int, "json")
    with pytest.raises(TypeError, match="builtin_types may hold only"):
        codec.to_builtins(1, builtin_types=[int])
    with pytest.raises(TypeError, match="collection of types"):
        codec.from_builtins(1, builtin_types=5)


# Errors


def test_errors_match_json_decoding() -> None:
    good = json.loads(polycodec.encode_one(Archive("a", [Chunk("c", 3)], {"k": Chunk("d", 4)})))
    cases = [
        {**good, "contents": [{"name": "c"}]},
        {**good, "contents": [{"name": "c", "nbytes": "3"}]},
        {**good, "contents": [{"name": 3, "nbytes": 3}]},
        {**good, "index": {"k": {"name": "d", "nbytes": 1.5}}},
        {**good, "owner": {"x": 1, "y": None}},
        {**good, "owner": []},
        {"label": "a"},
        [],
        "text",
        None,
    ]
    for data in cases:
        same_failure(Archive, data)
    same_failure(Archive, {**good, "extra": 1}, forbid_unknown_fields=True)


def test_tagged_union_errors_match_json_decoding() -> None:
    same_failure(Pet, {"name": "x", "animal": {"kind": "bird"}})
    same_failure(Pet, {"name": "x", "animal": {"lives": 3}})
    same_failure(Pet, {"name": "x", "animal": {"kind": 1.5}})
    same_failure(Pet, {"name": "x", "animal": {"kind": "cat", "lives": "9"}})
    same_failure(Pet, {"name": "x", "animal": {"lives": "9", "kind": "cat"}})
    same_failure(Pet, {"name": "x", "animal": ["cat", 3]}, array_like=True)
    same_failure(Pet, {"name": "x", "animal": []}, array_like=True)


def test_tag_after_fields_is_read_in_one_pass() -> None:
    data = {"name": "x", "animal": {"lives": 9, "kind": "cat"}}
    assert polycodec.from_builtins(data, Pet) == Pet("x", Cat("cat", 9))


def test_types_json_cannot_give_are_refused_with_a_path() -> None:
    for bad, message in [
        ({"x": 1, "y": {1, 2}}, "expected int, got set"),
        ({"x": 1, "y": b"2"}, "expected int, got bytes"),
        ({"x": 1, "y": float("nan")}, "finite"),
        ({"x": 1, 2: 3}, "str object key"),
    ]:
        with pytest.raises(polycodec.ValidationError, match=message) as error:
            polycodec.from_builtins(bad, Point)
        assert error.value.path in ("$.y", "$")


def test_python_input_forms_json_has_not() -> None:
    # Tuples are arrays; dict keys may be given as the key type itself.
    assert polycodec.from_builtins((1, "a"), tuple[int, str]) == (1, "a")
    assert polycodec.from_builtins({1: "a", "2": "b"}, dict[int, str]) == {1: "a", 2: "b"}
    assert polycodec.from_builtins({"x": 1, "y": 2}, Point) == Point(1, 2)


def test_encode_errors_match_json_encoding() -> None:
    codec = polycodec.Codec(Archive, "json")
    bad = Archive("a", [Chunk("c", "3")])  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(bad)
    with pytest.raises(polycodec.EncodeError) as builtins_error:
        codec.to_builtins(bad)
    assert str(builtins_error.value) == str(json_error.value)
    assert builtins_error.value.path == "$.contents[0].nbytes"
    with pytest.raises(polycodec.EncodeError, match="no JSON representation"):
        polycodec.to_builtins(Floats(float("nan"), None, [], 1))


def test_input_is_never_mutated() -> None:
    data = json.loads(polycodec.encode_one(Archive("a", [Chunk("c", 3)], {"k": Chunk("d", 4)})))
    data["extra"] = [1, {"x": 2}]
    before = copy.deepcopy(data)
    out = polycodec.from_builtins(data, Archive)
    assert data == before
    # Under Any, a value already in its JSON form (exact dicts of str keys, lists, strs, ints,
    # finite floats, bools, None) is what reading it gives: it is returned as itself, as
    # msgspec.convert returns it. One that is not is read into new containers, the input kept.
    any_data = {"a": [1, {"b": 2}]}
    assert polycodec.from_builtins(any_data, Any) is any_data
    tupled = {"a": (1, {"b": 2})}
    decoded = polycodec.from_builtins(tupled, Any)
    assert decoded == {"a": [1, {"b": 2}]} and type(decoded["a"]) is list
    assert tupled == {"a": (1, {"b": 2})}
    assert out.contents[0] == Chunk("c", 3)


def test_to_builtins_under_any_makes_new_containers_as_msgspec_does() -> None:
    # The untyped walk copies a dict of str keys and replaces only its containers' values: the
    # result is a new dict (as msgspec.to_builtins makes), JSON's form in the input's key order
    # (json.loads of json.dumps is the oracle), the input kept, and tracked by the collector
    # once it holds a container, as a dict filled key by key is.
    inner = {"b": 2.5, "c": [1, "x", None]}
    data: dict[str, Any] = {"z": 1, "t": (1, {"k": True}), "inner": inner, "s": "text"}
    del data["z"]
    data["z"] = 3  # a table with a deleted entry: read key by key
    atomic = {"a": 1, "b": "x", "c": None, "d": 1.5}
    for value in (data, atomic, {"only": (1, 2)}, [data, (atomic,)]):
        before = copy.deepcopy(value)
        gc.collect()  # untracks what holds only atomic values (tuples, dicts on 3.11 and 3.13)
        out = polycodec.to_builtins(value, Any)
        expected = json.loads(json.dumps(value))
        assert_same(out, expected)
        assert json.dumps(out) == json.dumps(expected)  # the same key order
        assert out is not value and value == before
        for made in out.values() if isinstance(out, dict) else out:
            if isinstance(made, (dict, list)):
                assert gc.is_tracked(out)
                assert made is not inner
    with pytest.raises(polycodec.EncodeError, match="no JSON representation") as error:
        polycodec.to_builtins({"a": 1, "b": {"c": [1, float("nan")]}}, Any)
    assert error.value.path == '$["b"]["c"][1]'


def test_self_referencing_input_is_a_depth_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(polycodec.DecodeError, match="nested deeper"):
        polycodec.from_builtins(loop, Any)
    with pytest.raises(polycodec.EncodeError, match="deeper"):
        polycodec.to_builtins(loop, Any)


def test_non_json_codecs_refuse() -> None:
    for fmt in ("msgpack", "avro", "pickle"):
        codec = polycodec.Codec(Point, fmt)
        with pytest.raises(TypeError, match="JSON form"):
            codec.to_builtins(Point(1, 2))
        with pytest.raises(TypeError, match="JSON form"):
            codec.from_builtins({"x": 1, "y": 2})


def test_module_level_functions() -> None:
    assert polycodec.to_builtins(Point(1, 2)) == {"x": 1, "y": 2}
    assert polycodec.to_builtins(Options("a"), omit_defaults=True, rename="camel") == {
        "firstName": "a"
    }
    assert polycodec.from_builtins({"firstName": "a"}, Options, rename="camel") == Options("a")
    assert polycodec.to_builtins([1, 2], list[int]) == [1, 2]


def test_field_fast_path_and_general_path_agree() -> None:
    @dataclass(slots=True)
    class Slotted:
        a: int
        b: str
        c: Optional[float]

    @dataclass(frozen=True)
    class Frozen:
        a: int
        b: str
        c: Optional[float]

    for cls in (Slotted, Frozen):
        check(cls, cls(1, "x", None))
        check(cls, cls(-(2**70), "", 2.5))


# Properties: the JSON path is the oracle


@SETTINGS
@given(st.one_of(SCALARS, TEMPORAL, CONTAINERS))
def test_property_parts_match_json(obj: Any) -> None:
    check(type(obj), obj)


@SETTINGS
@given(OUTER)
def test_property_outer_matches_json(obj: Outer) -> None:
    out = check(Outer, obj)
    kept = polycodec.to_builtins(obj, builtin_types=ALL_KEPT)
    assert_same(polycodec.from_builtins(kept, Outer, builtin_types=ALL_KEPT), obj)
    assert_same(polycodec.from_builtins(out, Outer, builtin_types=ALL_KEPT), obj)


@SETTINGS
@given(JSON_VALUES)
def test_property_any_is_json_loads(value: Any) -> None:
    codec = polycodec.Codec(Any, "json")
    assert_same(codec.to_builtins(value), json.loads(json.dumps(value)))
    assert_same(codec.from_builtins(value), json.loads(json.dumps(value)))


def _leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(data, dict):
        for key, value in data.items():
            found += _leaves(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _leaves(value, path + (index,))
    return found


def _replace(data: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    data = copy.copy(data)
    data[path[0]] = _replace(data[path[0]], path[1:], new)
    return data


REPLACEMENTS = [None, True, 0, -1, 2**70, 1.5, "", "x", "2020-01-01", [], [1], {}, {"x": 1}]


@SETTINGS
@given(OUTER, st.randoms(use_true_random=False))
def test_property_mutated_input_fails_as_json_does(obj: Outer, rng: random.Random) -> None:
    codec = polycodec.Codec(Outer, "json")
    data = codec.to_builtins(obj)
    for _ in range(5):
        path = rng.choice(_leaves(data))
        mutated = _replace(data, path, rng.choice(REPLACEMENTS))
        try:
            expected = codec.decode_one(json.dumps(mutated))
        except polycodec.DecodeError:
            same_failure(Outer, mutated)
        else:
            assert_same(codec.from_builtins(mutated), expected)


def test_readme_style_example_round_trips() -> None:
    @dataclass
    class User:
        name: str
        joined: datetime.date
        tags: list[str] = dataclasses.field(default_factory=list)

    user = User("ann", datetime.date(2024, 5, 1), ["admin"])
    data = polycodec.to_builtins(user)
    assert data == {"name": "ann", "joined": "2024-05-01", "tags": ["admin"]}
    assert polycodec.from_builtins(data, User) == user
    kept = polycodec.to_builtins(user, builtin_types={datetime.date})
    assert kept["joined"] is user.joined


@dataclass
class Square:
    kind: Literal["square"]
    size: int
    label: str


@dataclass
class Named:
    kind: Literal["named"]
    size: str
    label: str


def test_tagged_union_members_before_the_tag_decode_as_the_variant_says() -> None:
    # `size` differs between the variants, so it is read again once the tag is known (the
    # decoder goes back to it); `label` is shared and read at once.
    tp = Union[Square, Named]
    for data in [
        {"size": 3, "label": "a", "kind": "square"},
        {"label": "b", "size": "big", "kind": "named"},
        {"size": "3", "kind": "square", "label": "c"},
        {"size": 3, "label": "d", "kind": "named"},
    ]:
        codec = polycodec.Codec(tp, "json")
        try:
            expected = codec.decode_one(json.dumps(data))
        except polycodec.DecodeError:
            same_failure(tp, data)
        else:
            assert_same(codec.from_builtins(data), expected)


def test_short_tuple_with_a_wrong_item_fails_at_the_item_as_json_does() -> None:
    # JSON reads items before it knows the length; from_builtins reports the same first error.
    codec = polycodec.Codec(tuple[str, int])
    with pytest.raises(polycodec.ValidationError) as from_json:
        codec.decode_one(b"[1]")
    with pytest.raises(polycodec.ValidationError) as from_objects:
        codec.from_builtins([1])
    assert str(from_objects.value) == str(from_json.value) == "expected str, got int (at $[0])"


# Objects passed through and reused (issue 12): the values are JSON's, only their identity differs


@dataclass
class Numbers:
    count: int
    ratio: float
    bounded: Annotated[int, annotated_types.Ge(0)]
    either: Optional[float] = None
    anything: Any = None


def test_exact_ints_and_floats_are_returned_as_the_objects_themselves() -> None:
    codec = polycodec.Codec(Numbers, "json")
    big, ratio = 10**15 + 7, 0.123456789
    data = {"count": big, "ratio": ratio, "bounded": big, "either": ratio, "anything": big}
    out = codec.from_builtins(data)
    assert out == codec.decode_one(json.dumps(data))
    assert out.count is big and out.ratio is ratio and out.bounded is big
    assert out.either is ratio and out.anything is big
    # Still checked, and still converted where JSON decoding converts.
    same_failure(Numbers, {**data, "bounded": -1})
    out = codec.from_builtins({**data, "ratio": 3, "either": 4})
    assert type(out.ratio) is float and type(out.either) is float and out.ratio == 3.0


def test_int_and_float_subclasses_become_exact_types_in_from_builtins() -> None:
    class MyInt(int):
        pass

    class MyFloat(float):
        pass

    out = polycodec.Codec(Numbers, "json").from_builtins(
        {"count": MyInt(3), "ratio": MyFloat(0.5), "bounded": MyInt(1), "anything": MyFloat(2.5)}
    )
    assert type(out.count) is int and type(out.ratio) is float and type(out.bounded) is int
    assert type(out.anything) is float and out.anything == 2.5


def test_dict_and_list_subclasses_and_floats_after_the_reordered_type_checks() -> None:
    # from_builtins tests dict and list before float: subclasses of each still read as JSON's
    # object, array and number, and a float where an object or list is expected fails as in JSON.
    class MyDict(dict):  # type: ignore[type-arg]
        pass

    class MyList(list):  # type: ignore[type-arg]
        pass

    class MyFloat(float):
        pass

    out = polycodec.Codec(dict[str, list[float]], "json").from_builtins(
        MyDict(a=MyList([MyFloat(1.5), 2.5]))
    )
    assert out == {"a": [1.5, 2.5]} and type(out) is dict and type(out["a"]) is list
    assert type(out["a"][0]) is float
    same_failure(dict[str, list[float]], {"a": 1.5})
    same_failure(dict[str, list[float]], 1.5)
    same_failure(Numbers, {"count": 1, "ratio": [1.0], "bounded": 1})


def test_keys_not_written_by_to_builtins_match_by_text() -> None:
    class MyStr(str):
        pass

    codec = polycodec.Codec(Options, "json")
    # Keys made at run time (not the plan's interned strs), a str subclass key, and a key with
    # the same text as the next field's but out of order.
    data = {"".join(["first", "_name"]): "ann", MyStr("tags"): ["x"], "note": "n", "score": 2}
    assert codec.from_builtins(data) == Options("ann", ["x"], 2, "n")
    assert codec.from_builtins(json.loads(json.dumps(data))) == Options("ann", ["x"], 2, "n")


def test_to_builtins_keys_and_enum_values_are_the_plans_strs() -> None:
    codec = polycodec.Codec(Options, "json", rename="camel")
    out = check(Options, Options("ann"), rename="camel")
    assert list(out) == ["firstName", "tags", "score", "note"]
    again = codec.to_builtins(Options("bob"))
    # The same key objects on every call (interned once per plan), so they hash once.
    assert all(a is b for a, b in zip(out, again))
    pets = polycodec.Codec(list[Pet], "json").to_builtins([Pet("a", Dog("dog", True))] * 2)
    assert pets[0]["animal"]["kind"] is pets[1]["animal"]["kind"]


class Shade(str, enum.Enum):
    DARK = "dark"


class Level(enum.IntEnum):
    LOW = 1


@dataclass
class Painted:
    shade: Shade
    level: Level
    tag: Literal["x", 5] = "x"


def test_enum_and_literal_values_match_json_and_are_exact_types() -> None:
    out = check(Painted, Painted(Shade.DARK, Level.LOW, 5))
    assert out == {"shade": "dark", "level": 1, "tag": 5}
    assert type(out["shade"]) is str and type(out["level"]) is int
    assert check(dict[Shade, Level], {Shade.DARK: Level.LOW}) == {"dark": 1}


@dataclass
class WideRecord:
    """More fields than an unsized dict holds, so to_builtins presizes it."""

    a: int
    b: float
    c: str
    d: bool
    e: Optional[int]
    f: list[int]
    g: dict[str, float]
    h: datetime.datetime
    i: datetime.date
    j: uuid.UUID
    k: Decimal
    m: Color


@dataclass
class Mixed:
    """Shapes the direct to_builtins walk hands over to the shared encoder."""

    pairs: tuple[int, str]
    numbered: dict[int, str]
    when: datetime.time
    span: datetime.timedelta
    blob: bytes
    anything: Any
    aware: datetime.datetime
    items: frozenset[int]


def test_to_builtins_direct_walk_matches_json_and_keeps_field_order() -> None:
    value = WideRecord(
        10**12,
        0.25,
        "x",
        True,
        None,
        [1, 2, 10**20],
        {"p": 1.5},
        datetime.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc),
        datetime.date(2024, 2, 3),
        uuid.UUID(int=7),
        Decimal("1.25"),
        list(Color)[0],
    )
    codec = polycodec.Codec(WideRecord, "json")
    out = codec.to_builtins(value)
    expected = json.loads(codec.encode_one(value))
    assert out == expected and list(out) == list(expected)
    assert out["a"] is value.a and out["b"] is value.b and out["c"] is value.c
    assert out["f"] is not value.f and out["g"] is not value.g
    assert codec.from_builtins(out) == value


def test_to_builtins_direct_walk_hands_other_shapes_to_the_encoder() -> None:
    tz = datetime.timezone(datetime.timedelta(hours=2))
    value = Mixed(
        (1, "a"),
        {3: "c"},
        datetime.time(1, 2, 3),
        datetime.timedelta(seconds=5),
        b"\x00\x01",
        {"k": [1, {"z": 2.5}], "t": (1, 2)},
        datetime.datetime(2024, 1, 2, 3, 4, tzinfo=tz),
        frozenset({4}),
    )
    codec = polycodec.Codec(Mixed, "json")
    assert codec.to_builtins(value) == json.loads(codec.encode_one(value))
    kept = codec.to_builtins(value, builtin_types=ALL_KEPT)
    assert kept["blob"] is value.blob and kept["aware"] is value.aware
    assert kept["when"] is value.when


@pytest.mark.parametrize(
    "bad, path",
    [
        (Tree(1, [Tree(2, [Tree(3, ["x"])])]), "$.children[0].children[0].children[0]"),  # type: ignore[list-item]
        (Tree(1, [Tree(2, [Tree("s", [])])]), "$.children[0].children[0].value"),  # type: ignore[arg-type]
    ],
)
def test_to_builtins_direct_walk_errors_have_the_json_path(bad: Any, path: str) -> None:
    codec = polycodec.Codec(Tree, "json")
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(bad)
    with pytest.raises(polycodec.EncodeError) as builtins_error:
        codec.to_builtins(bad)
    assert str(builtins_error.value) == str(json_error.value)
    assert builtins_error.value.path == json_error.value.path == path


def test_to_builtins_direct_walk_refuses_nan_deep_in_a_list() -> None:
    value, tp = {"a": [1.0, float("inf")]}, dict[str, list[float]]
    with pytest.raises(polycodec.EncodeError, match="no JSON representation") as json_error:
        polycodec.Codec(tp, "json").encode_one(value)
    with pytest.raises(polycodec.EncodeError, match="no JSON representation") as error:
        polycodec.to_builtins(value, tp)
    assert error.value.path == json_error.value.path == '$["a"][1]'


# from_builtins' direct walk (issue 12): the node and the object looked at together, and on any
# error the shared decoder reads the whole value again, so values and errors stay JSON's


def same_as_json(tp: Any, data: Any, **options: Any) -> None:
    """``data`` decodes from_builtins as its JSON text decodes, or fails the same way."""
    codec = polycodec.Codec(tp, "json", **options)
    try:
        expected = codec.decode_one(json.dumps(data))
    except polycodec.DecodeError:
        same_failure(tp, data, **options)
    else:
        assert_same(codec.from_builtins(data), expected)


class OddHash(str):
    """A str subclass a dict keeps apart from the str of the same text (JSON's duplicate key)."""

    def __hash__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return self is other


def test_direct_walk_duplicate_looking_keys_last_wins_as_in_json() -> None:
    for data in [
        {"first_name": "a", OddHash("first_name"): "b"},
        {OddHash("first_name"): "b", "first_name": "a", "score": 1},
        {"first_name": "a", OddHash("score"): 1, "score": "2"},
    ]:
        assert len(data) >= 2
        same_as_json(Options, data)


def test_direct_walk_duplicate_looking_keys_around_a_late_tag() -> None:
    # Keys before the tag are read in an order of the shared decoder's own: the direct walk
    # leaves such dicts to it.
    tp = Union[Square, Named]
    for data in [
        {"size": 3, OddHash("size"): "x", "kind": "square", "label": "a"},
        {OddHash("size"): "x", "size": 3, "kind": "square", "label": "a"},
        {"label": "a", "kind": "named", OddHash("size"): "x", "size": "y"},
        {"kind": "named", OddHash("kind"): "square", "size": "y", "label": "l"},
        # Read before the tag but stored after the entries that follow it: 3 wins, as in JSON.
        {OddHash("size"): 3, "kind": "square", "size": 4, "label": "a"},
        {OddHash("label"): "a", "kind": "square", "label": "b", "size": 1},
    ]:
        same_as_json(tp, data)
    out = polycodec.from_builtins(
        {OddHash("size"): 3, "kind": "square", "size": 4, "label": ""}, tp
    )
    assert out == Square("square", 3, "")


def test_direct_walk_tag_at_the_position_of_the_previous_dicts_tag() -> None:
    # The walk tries the entry where the previous dict had its tag first; the dicts after the
    # first below have their tag there too, with keys around it that JSON reads in its order.
    tp = list[Union[Square, Named]]
    lead = {"size": 3, "label": "a", "kind": "square"}
    for data in [
        {OddHash("size"): "x", "size": 3, "kind": "square", "label": "a"},
        {"size": 3, OddHash("kind"): "named", "kind": "square", "label": "a"},
        {"label": "a", OddHash("size"): 3, "kind": "square", "size": 4},
        {"label": "a", "size": 3, "kind": "square", OddHash("label"): "b"},
        {"label": "a", "size": "3", "kind": "named"},
        {"label": "a", "size": 3, "kind": "named"},
        {"label": "a", "size": 3, "kind": "circle"},
        {"label": "a", "size": 3, "kind": "square", "extra": 1},
        {"kind": "square", "size": 3, "label": "a"},
        {"size": 3, "label": "a"},
    ]:
        same_as_json(tp, [lead, lead, data, lead])
        same_as_json(tp, [lead, data], forbid_unknown_fields=True)
    out = polycodec.from_builtins([lead, {"label": "b", "size": "s", "kind": "named"}], tp)
    assert out == [Square("square", 3, "a"), Named("named", "s", "b")]
    with pytest.raises(polycodec.ValidationError, match=r"str object key.*\$\[1\]"):
        polycodec.from_builtins([lead, {"label": "a", "size": 3, "kind": "square", 5: "b"}], tp)


class Holder:
    """A plain class: its instances' __dict__ is a key-sharing (split) table on CPython 3.11."""

    def __init__(self, size: Any, label: Any, kind: Any) -> None:
        self.size = size
        self.label = label
        self.kind = kind


def test_direct_walk_reads_every_dict_table_layout() -> None:
    # Dicts with holes left by deleted keys, presized ones (to_builtins), key-by-key ones
    # (json.loads), split tables (an instance __dict__) and tables with non-str keys are all
    # read entry by entry in order, as PyDict_Next gives them.
    holed: dict[Any, Any] = {"gone": 1, "size": 3, "x": 0, "label": "a", "kind": "square"}
    del holed["gone"], holed["x"]
    holed_last: dict[Any, Any] = {"size": 3, "label": "a", "kind": "square", "gone": 1}
    del holed_last["gone"]
    emptied: dict[Any, Any] = {"gone": 1}
    del emptied["gone"]
    codec = polycodec.Codec(Union[Square, Named], "json")
    presized = codec.to_builtins(Square("square", 3, "a"))
    shared = Holder(3, "a", "square").__dict__
    for data in [holed, holed_last, presized, json.loads(json.dumps(presized)), shared]:
        assert codec.from_builtins(data) == Square("square", 3, "a")
        same_as_json(Union[Square, Named], data)
        same_as_json(list[Union[Square, Named]], [data, data])
    same_as_json(Union[Square, Named], emptied)
    same_as_json(Square, emptied)
    for bad in [Holder(3, 4, "square").__dict__, {**holed, 7: 1}, {**holed, "size": "3"}]:
        with pytest.raises(polycodec.ValidationError):
            codec.from_builtins(bad)


@dataclass
class OnlyA:
    kind: Literal["a"]
    x: int


@dataclass
class OnlyB:
    kind: Literal["b"]
    y: str


def test_direct_walk_key_of_another_variant_before_the_tag_is_read_as_json_reads_it() -> None:
    # JSON decoding reads `y` before it knows the variant, with the node of the only variant
    # that has it, and so refuses 5 even though the variant named does not have `y`.
    tp = Union[OnlyA, OnlyB]
    same_as_json(tp, {"y": 5, "kind": "a", "x": 1})
    same_as_json(tp, {"y": "s", "kind": "a", "x": 1})
    same_as_json(tp, {"kind": "a", "y": 5, "x": 1})
    same_as_json(tp, {"x": 1, "kind": "a"}, forbid_unknown_fields=True)
    same_as_json(tp, {"y": "s", "kind": "a", "x": 1}, forbid_unknown_fields=True)


def test_direct_walk_missing_extra_and_wrong_fields_fail_as_json() -> None:
    good = {"name": "x", "animal": {"kind": "cat", "lives": 9}}
    same_as_json(Pet, good)
    for data in [
        {"name": "x"},
        {"animal": {"kind": "cat", "lives": 9}},
        {**good, "animal": {"kind": "cat"}},
        {**good, "animal": {"kind": "cat", "lives": 9, "extra": [1]}},
        {**good, "animal": {"kind": "cat", "lives": True}},
        {**good, "animal": {"kind": "dog", "good": 1}},
        {**good, "name": None},
        {**good, "animal": {"kind": None, "lives": 1}},
        {**good, "animal": {"lives": 1}},
    ]:
        same_as_json(Pet, data)
        same_as_json(Pet, data, forbid_unknown_fields=True)
    # Keys JSON cannot give.
    for data, path in [
        ({**good, 1: 2}, "$"),
        ({**good, "animal": {"kind": "cat", 1: 2}}, "$.animal"),
        ({**good, "animal": {1: 2, "kind": "cat"}}, "$.animal"),
    ]:
        with pytest.raises(polycodec.ValidationError, match="str object key, got int") as error:
            polycodec.from_builtins(data, Pet)
        assert error.value.path == path
    deep = {"value": "a", "next": {"value": "b", "next": {"value": 3}}}
    assert same_failure(Linked, deep).path == "$.next.next.value"
    same_as_json(list[Chunk], [{"name": "a", "nbytes": 1}, {"name": "b", "nbytes": "2"}])


def test_direct_walk_reads_dict_and_list_subclasses_as_their_items() -> None:
    class Loud(dict):  # type: ignore[type-arg]
        def __getitem__(self, key: Any) -> Any:
            raise AssertionError("from_builtins reads entries, not items")

        def items(self) -> Any:
            raise AssertionError("from_builtins reads entries, not items")

    class Long(list):  # type: ignore[type-arg]
        def __iter__(self) -> Any:
            raise AssertionError("from_builtins reads items directly")

    data = Loud(name="x", animal=Loud(kind="dog", good=True))
    assert polycodec.from_builtins(data, Pet) == Pet("x", Dog("dog", True))
    chunks = Long([Loud(name="a", nbytes=1)])
    assert polycodec.from_builtins(chunks, list[Chunk]) == [Chunk("a", 1)]


def test_direct_walk_leaves_its_input_alone() -> None:
    data = {"name": "x", "animal": {"lives": 9, "kind": "cat"}, "extra": [{"a": 1}]}
    before = copy.deepcopy(data)
    keys = [id(key) for key in data]
    assert polycodec.from_builtins(data, Pet) == Pet("x", Cat("cat", 9))
    with pytest.raises(polycodec.ValidationError):
        polycodec.from_builtins({**data, "name": 1}, Pet)
    assert data == before and [id(key) for key in data] == keys


def test_direct_walk_nesting_limit_is_json_decodings() -> None:
    loop: dict[str, Any] = {"value": "a"}
    loop["next"] = loop
    with pytest.raises(polycodec.DecodeError, match="nested deeper"):
        polycodec.from_builtins(loop, Linked)
    chain: dict[str, Any] = {"value": "end"}
    for _ in range(300):
        chain = {"value": "v", "next": chain}
    out = polycodec.from_builtins(chain, Linked)
    assert polycodec.to_builtins(out) == polycodec.to_builtins(
        polycodec.decode_one(json.dumps(chain), Linked)
    )


calls: list[str] = []


@dataclass
class Counted:
    name: str
    size: int = 0

    def __post_init__(self) -> None:
        calls.append(self.name)


def _made() -> list[int]:
    calls.append("factory")
    return []


@dataclass
class Made:
    name: str
    items: list[int] = field(default_factory=_made)


class Fresh:
    def __new__(cls) -> Any:
        calls.append("new")
        return super().__new__(cls)


@dataclass
class NewCounted(Fresh):
    name: str
    size: int = 0


@pytest.mark.parametrize("tp", [Counted, Made, NewCounted])
def test_direct_walk_runs_user_code_as_often_as_json_decoding(tp: Any) -> None:
    # Decoding a failing list runs __post_init__, a default factory or __new__ for the items
    # before the bad one: once, not again for a second reading of the input.
    data = [{"name": "a"}, {"name": "b"}, {"name": 3}]
    codec = polycodec.Codec(list[tp], "json")
    calls.clear()
    with pytest.raises(polycodec.ValidationError):
        codec.decode_one(json.dumps(data))
    from_json = list(calls)
    calls.clear()
    same_failure(list[tp], data)
    calls.clear()
    with pytest.raises(polycodec.ValidationError):
        codec.from_builtins(data)
    assert calls == from_json and calls
    calls.clear()
    assert codec.from_builtins(data[:2]) == codec.decode_one(json.dumps(data[:2]))


@dataclass
class Stamped:
    shade: Shade
    level: Level
    when: datetime.datetime
    day: datetime.date
    aware: Annotated[datetime.datetime, polycodec.Meta(tz=True)]
    naive: Annotated[datetime.datetime, polycodec.Meta(tz=False)]


def test_direct_walk_enum_date_and_datetime_strs_read_as_json_reads_them() -> None:
    good = {
        "shade": "dark",
        "level": 1,
        "when": "2024-02-29T23:59:59.123456+05:30",
        "day": "2024-02-29",
        "aware": "2024-01-01T00:00:00Z",
        "naive": "2024-01-01T00:00:00",
    }
    same_as_json(Stamped, good)
    for key, bad in [
        ("shade", "purple"),
        ("shade", 1),
        ("level", "2"),
        ("when", "2023-02-29T00:00:00"),
        ("when", "yesterday"),
        ("day", "2024-02-30"),
        ("day", "2024-02-29T00:00:00"),
        ("aware", "2024-01-01T00:00:00"),
        ("naive", "2024-01-01T00:00:00Z"),
    ]:
        same_as_json(Stamped, {**good, key: bad})


@dataclass
class Bounded:
    name: Annotated[str, annotated_types.MinLen(2), annotated_types.MaxLen(4)]
    size: Annotated[int, annotated_types.Ge(0), annotated_types.Lt(100)]
    ident: uuid.UUID
    maybe: Optional[Annotated[str, annotated_types.MinLen(1)]] = None
    tags: list[Annotated[str, annotated_types.MaxLen(2)]] = field(default_factory=list)


def test_direct_walk_bounded_str_int_and_uuid_read_as_json_reads_them() -> None:
    good = {
        "name": "abc",
        "size": 5,
        "ident": "12345678-1234-5678-1234-567812345678",
        "maybe": "x",
        "tags": ["a", "bc"],
    }
    same_as_json(Bounded, good)
    out = polycodec.from_builtins(good, Bounded)
    # A str that passes its bounds is its own result, as an unconstrained one is.
    assert out.name is good["name"] and out.maybe is good["maybe"]
    assert out.tags[1] is good["tags"][1]
    assert type(out.ident) is uuid.UUID and out.ident == uuid.UUID(str(good["ident"]))
    for key, bad in [
        ("name", "a"),
        ("name", "abcde"),
        # Characters, not bytes or UTF-16 units, are counted.
        ("name", "\u00e9\u00e9"),
        ("name", "\U0001f600\U0001f600\U0001f600\U0001f600"),
        ("name", "\U0001f600\U0001f600\U0001f600\U0001f600\U0001f600"),
        ("name", 12),
        ("name", None),
        ("maybe", ""),
        ("maybe", None),
        ("tags", ["abc"]),
        ("tags", ["\u00e9\u00e9"]),
        ("size", -1),
        ("size", 100),
        ("size", 99),
        ("size", 2**70),
        ("size", True),
        ("size", 5.0),
        ("size", "5"),
        ("ident", "12345678-1234-5678-1234-56781234567"),
        ("ident", "12345678123456781234567812345678"),
        ("ident", "{12345678-1234-5678-1234-567812345678}"),
        ("ident", "1234567g-1234-5678-1234-567812345678"),
        ("ident", 5),
    ]:
        same_as_json(Bounded, {**good, key: bad})
        same_as_json(Bounded, {**good, key: bad}, strict=False)
    # A str subclass or a str with a lone surrogate is left to the shared decoder.
    same_as_json(Bounded, {**good, "name": Shade.DARK})
    with pytest.raises(polycodec.DecodeError):
        polycodec.from_builtins({**good, "name": "a\ud800"}, Bounded)


# Every value is walked once: user code run while reading a value (an extension's hook, a
# field read through a custom __getattribute__) runs once per value, on success and on failure,
# and failures raise what the JSON encoder raises, at the same path.


class HookCounted:
    """A value class written through an extension hook that counts its calls."""

    def __init__(self, n: int) -> None:
        self.n = n


@dataclass
class Ship:
    kind: Literal["ship"]
    cargo: HookCounted


@dataclass
class Hooked:
    first: HookCounted
    ratio: float
    many: list[HookCounted]
    named: dict[str, HookCounted]
    numbered: dict[Any, HookCounted]
    maybe: Optional[HookCounted]
    vessel: Union[Ship, Dog]
    pair: tuple[HookCounted, float]


def counting_codec(calls: list[int]) -> polycodec.Codec[Hooked]:
    def encode(value: HookCounted) -> int:
        calls.append(value.n)
        if value.n < 0:
            raise ValueError(f"negative {value.n}")
        return value.n

    hook = polycodec.Extension(int, encode=encode, decode=HookCounted)
    return polycodec.Codec(Hooked, "json", extensions={HookCounted: hook})


def hooked(**changes: Any) -> Hooked:
    value = Hooked(
        HookCounted(1),
        0.5,
        [HookCounted(2), HookCounted(3)],
        {"a": HookCounted(4)},
        {5: HookCounted(5), "s": HookCounted(6)},
        HookCounted(7),
        Ship("ship", HookCounted(8)),
        (HookCounted(9), 1.5),
    )
    return dataclasses.replace(value, **changes)


HOOKED_FAILURES = [
    pytest.param({"ratio": float("nan")}, id="nan-after-a-hooked-field"),
    pytest.param(
        {"many": [HookCounted(2), HookCounted(-3), HookCounted(4)]}, id="hook-fails-in-a-list"
    ),
    pytest.param({"many": [HookCounted(2), "x"]}, id="wrong-type-in-a-list"),
    pytest.param({"named": {"a": HookCounted(4), "b": HookCounted(-1)}}, id="hook-fails-in-a-dict"),
    pytest.param(
        {"numbered": {1: HookCounted(5), 2.5: HookCounted(-6)}}, id="hook-fails-after-an-int-key"
    ),
    pytest.param({"numbered": {"s": HookCounted(5), object(): HookCounted(6)}}, id="bad-key"),
    pytest.param({"maybe": HookCounted(-7)}, id="hook-fails-in-an-optional"),
    pytest.param({"vessel": Ship("boat", HookCounted(8))}, id="bad-tag-after-a-hooked-field"),  # type: ignore[arg-type]
    pytest.param({"vessel": Ship("ship", HookCounted(-8))}, id="hook-fails-in-a-variant"),
    pytest.param({"vessel": HookCounted(8)}, id="not-a-variant"),
    pytest.param({"pair": (HookCounted(9), float("inf"))}, id="inf-in-a-tuple-after-a-hook"),
    pytest.param({"pair": (HookCounted(9),)}, id="short-tuple"),
]


def test_to_builtins_runs_each_hook_once_on_success() -> None:
    calls: list[int] = []
    codec = counting_codec(calls)
    out = codec.to_builtins(hooked())
    assert sorted(calls) == list(range(1, 10))
    assert out == json.loads(codec.encode_one(hooked()))


@pytest.mark.parametrize("changes", HOOKED_FAILURES)
def test_to_builtins_runs_each_hook_once_on_failure_with_the_json_error(
    changes: dict[str, Any],
) -> None:
    json_calls: list[int] = []
    with pytest.raises(polycodec.EncodeError) as json_error:
        counting_codec(json_calls).encode_one(hooked(**changes))
    calls: list[int] = []
    with pytest.raises(polycodec.EncodeError) as error:
        counting_codec(calls).to_builtins(hooked(**changes))
    assert calls == json_calls
    assert len(calls) == len(set(calls))
    assert type(error.value) is type(json_error.value)
    assert str(error.value) == str(json_error.value)
    assert error.value.path == json_error.value.path
    cause, json_cause = error.value.__cause__, json_error.value.__cause__
    assert type(cause) is type(json_cause) and str(cause) == str(json_cause)


class Watched:
    """A dataclass whose field reads run user code (its own __getattribute__), counted."""

    reads: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("__"):
            Watched.reads.append(name)
        return object.__getattribute__(self, name)


@dataclass
class WatchedRecord(Watched):
    a: int
    b: float
    c: list[int]


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(WatchedRecord(1, 2.0, [3]), id="success"),
        pytest.param(WatchedRecord(1, float("nan"), [3]), id="nan"),
        pytest.param(WatchedRecord(1, 2.0, [3, "x"]), id="bad-item"),  # type: ignore[list-item]
    ],
)
def test_to_builtins_reads_each_field_once(value: WatchedRecord) -> None:
    codec = polycodec.Codec(list[WatchedRecord], "json")
    Watched.reads = []
    try:
        expected: Any = json.loads(codec.encode_one([value]))
    except polycodec.EncodeError as err:
        expected = err
    json_reads, Watched.reads = Watched.reads, []
    try:
        out: Any = codec.to_builtins([value])
    except polycodec.EncodeError as err:
        out = err
    assert Watched.reads == json_reads
    assert Watched.reads == ["a", "b", "c"][: len(Watched.reads)] and Watched.reads
    if isinstance(expected, Exception):
        assert type(out) is type(expected) and str(out) == str(expected)
        assert out.path == expected.path
    else:
        assert out == expected


class LeafColour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(slots=True)
class LeafLevel:
    when: datetime.datetime
    day: datetime.date
    colour: LeafColour
    amount: Decimal
    ident: uuid.UUID
    kind: Literal["a", "b"]
    child: Optional[LeafLevel] = None


def test_from_builtins_str_leaves_out_of_line_match_json() -> None:
    """The direct walk's out-of-line str conversions (datetime, date, enum, Decimal, UUID,
    Literal) at several nesting levels read as JSON does, and refuse what JSON refuses."""
    leaf = LeafLevel(
        datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
        datetime.date(2024, 5, 6),
        LeafColour.BLUE,
        Decimal("12.50"),
        uuid.UUID(int=7),
        "b",
    )
    deep = dataclasses.replace(leaf, child=dataclasses.replace(leaf, child=leaf))
    good = check(LeafLevel, deep)
    bad_values = [3, None, "nope", 1.5, [], {}]
    for key in ("when", "day", "colour", "amount", "ident", "kind"):
        for bad in bad_values:
            data = copy.deepcopy(good)
            data["child"]["child"][key] = bad
            same_failure(LeafLevel, data)


@dataclass
class TableChild:
    name: str


@dataclass
class TableA:
    n: int
    kind: Literal["a"] = "a"


@dataclass
class TableB:
    s: str
    kind: Literal["b"] = "b"


@dataclass
class TableKinds:
    s: str
    i: int
    f: float
    b: bool
    dt: datetime.datetime
    d: datetime.date
    e: LeafColour
    dec: Decimal
    u: uuid.UUID
    lit: Literal["x", "y"]
    rec: TableChild
    tagged: Union[TableA, TableB]
    items: list[TableChild]
    words: list[str]
    bounded: Annotated[int, annotated_types.Ge(0)]
    short: Annotated[str, annotated_types.MaxLen(3)]
    os: Optional[str]
    oi: Optional[int]
    of: Optional[float]
    ob: Optional[bool]
    odt: Optional[datetime.datetime]
    od: Optional[datetime.date]
    oe: Optional[LeafColour]
    odec: Optional[Decimal]
    ou: Optional[uuid.UUID]
    olit: Optional[Literal["x", "y"]]
    orec: Optional[TableChild]
    otagged: Optional[Union[TableA, TableB]]
    oitems: Optional[list[TableChild]]
    either: Union[int, str]


def _same_outcome(codec: polycodec.Codec, data: Any) -> None:
    """``data`` reads through from_builtins as its JSON text reads through decode_one: an equal
    value (each field of the same type) or the same error and path."""
    try:
        expected = codec.decode_one(json.dumps(data))
    except polycodec.DecodeError as err:
        with pytest.raises(polycodec.DecodeError) as got:
            codec.from_builtins(data)
        assert type(got.value) is type(err)
        assert str(got.value) == str(err)
        assert got.value.path == err.path
    else:
        got = codec.from_builtins(data)
        assert got == expected
        assert [type(getattr(got, f.name)) for f in dataclasses.fields(got)] == [
            type(getattr(expected, f.name)) for f in dataclasses.fields(expected)
        ]


def test_from_builtins_field_table_kinds_match_json() -> None:
    """The direct walk's per-record field table (a kind per field, `Optional` members
    included) reads every kind's values, and every value of another type, as JSON does, in
    strict and lax mode, with keys that are the plan's own str and with keys that are not."""
    child = {"name": "c"}
    good: dict[str, Any] = {
        "s": "text",
        "i": 5,
        "f": 1.5,
        "b": True,
        "dt": "2024-05-06T07:08:09Z",
        "d": "2024-05-06",
        "e": "red",
        "dec": "12.50",
        "u": str(uuid.UUID(int=7)),
        "lit": "y",
        "rec": child,
        "tagged": {"kind": "b", "s": "z"},
        "items": [child, child],
        "words": ["a", "b"],
        "bounded": 3,
        "short": "abc",
        "os": "o",
        "oi": 6,
        "of": 2.5,
        "ob": False,
        "odt": "2024-05-06T07:08:09",
        "od": "2024-05-07",
        "oe": "blue",
        "odec": "1.25",
        "ou": str(uuid.UUID(int=9)),
        "olit": "x",
        "orec": child,
        "otagged": {"n": 1, "kind": "a"},
        "oitems": [child],
        "either": "e",
    }
    odd_values: list[Any] = [
        None,
        True,
        0,
        -1,
        2**70,
        1.0,
        "5",
        "x",
        "red",
        "true",
        "2024-05-06",
        "2024-05-06T07:08:09Z",
        "abcd",
        [],
        ["a"],
        [child],
        {},
        child,
        {"kind": "a", "n": 2},
        {"kind": "c"},
    ]
    for strict in (True, False):
        codec = polycodec.Codec(TableKinds, "json", strict=strict)
        _same_outcome(codec, good)
        # Keys that are not the plan's own str objects (the text is compared instead).
        _same_outcome(codec, {"".join(key): value for key, value in good.items()})
        _same_outcome(codec, dict(reversed(list(good.items()))))
        for key in good:
            for odd in odd_values:
                _same_outcome(codec, {**good, key: odd})
            missing = dict(good)
            del missing[key]
            _same_outcome(codec, missing)


@pytest.mark.parametrize("number", [1.0, 1e20, 1e16, 9999999999999998.0, 0.00001, -0.0, 2.5e-7])
def test_from_builtins_lax_decimal_from_float_matches_json_decoding(number: float) -> None:
    @dataclass
    class Price:
        amount: Decimal

    codec = polycodec.Codec(Price, "json", strict=False)
    text = json.dumps({"amount": number}).encode()
    expected = codec.decode_one(text)
    ours = codec.from_builtins(json.loads(text))
    assert str(ours.amount) == str(expected.amount)
    assert ours == expected


@dataclass(slots=True)
class OutTableChild:
    label: str
    size: float


@dataclass
class OutTableRecord:
    when: Optional[datetime.date]
    amount: Optional[Decimal]
    child: Optional[OutTableChild]
    first_name: str
    flag: bool
    count: int
    stamp: Optional[datetime.datetime]


class OutTableChildSub(OutTableChild):
    pass


@dataclass
class OutTableVariant:
    value: int
    kind: Literal["v", "w"] = "v"


@dataclass
class OutTableOther:
    kind: Literal["o"] = "o"


TableUnion = Union[OutTableVariant, OutTableOther]


def test_to_builtins_field_table_kinds_match_json() -> None:
    codec = polycodec.Codec(OutTableRecord, "json", rename="camel")
    values = [
        OutTableRecord(
            datetime.date(2024, 5, 6),
            Decimal("-1.50"),
            OutTableChild("c", 2.5),
            "ann",
            True,
            7,
            datetime.datetime(2024, 1, 2, 3, 4, 5),
        ),
        OutTableRecord(None, None, None, "bob", False, -3, None),
        OutTableRecord(
            datetime.date(1, 1, 1), Decimal("1e30"), OutTableChildSub("s", 1), "c", True, 0, None
        ),
    ]
    for value in values:
        out = codec.to_builtins(value)
        assert_same(out, json.loads(codec.encode_one(value)))
    kept = codec.to_builtins(values[0], builtin_types=ALL_KEPT)
    assert kept["when"] is values[0].when and kept["amount"] is values[0].amount


@pytest.mark.parametrize(
    "bad",
    [
        OutTableRecord(datetime.datetime(2024, 1, 1), None, None, "a", True, 1, None),
        OutTableRecord(None, 1.5, None, "a", True, 1, None),  # type: ignore[arg-type]
        OutTableRecord(None, None, "x", "a", True, 1, None),  # type: ignore[arg-type]
        OutTableRecord(None, None, OutTableChild("c", float("nan")), "a", True, 1, None),
        OutTableRecord(None, None, None, 5, True, 1, None),  # type: ignore[arg-type]
        OutTableRecord(None, None, None, "a", 1, 1, None),  # type: ignore[arg-type]
        OutTableRecord(None, None, None, "a", True, 1, "noon"),  # type: ignore[arg-type]
    ],
)
def test_to_builtins_field_table_errors_match_json(bad: OutTableRecord) -> None:
    codec = polycodec.Codec(OutTableRecord, "json", rename="camel")
    try:
        expected = json.loads(codec.encode_one(bad))
    except polycodec.EncodeError as json_error:
        with pytest.raises(polycodec.EncodeError) as builtins_error:
            codec.to_builtins(bad)
        assert str(builtins_error.value) == str(json_error)
        assert builtins_error.value.path == json_error.path
    else:
        assert_same(codec.to_builtins(bad), expected)


def test_to_builtins_field_table_tags_match_json() -> None:
    codec = polycodec.Codec(list[TableUnion], "json")  # type: ignore[valid-type]
    good = [OutTableVariant(1), OutTableOther(), OutTableVariant(2, "w")]
    # A "w" tag is not the class's own: the variant goes to the shared encoder.
    assert_same(codec.to_builtins(good), json.loads(codec.encode_one(good)))
    bad = [OutTableVariant(1), OutTableVariant(2, "z")]  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(bad)
    with pytest.raises(polycodec.EncodeError) as builtins_error:
        codec.to_builtins(bad)
    assert str(builtins_error.value) == str(json_error.value)
    assert builtins_error.value.path == json_error.value.path


def test_to_builtins_field_table_fixed_tag_checked_as_json_checks_it() -> None:
    codec = polycodec.Codec(list[TableUnion], "json")  # type: ignore[valid-type]
    equal = OutTableOther("".join(["o"]))  # type: ignore[arg-type]
    assert_same(codec.to_builtins([equal]), json.loads(codec.encode_one([equal])))
    bad = [OutTableOther(), OutTableOther("p")]  # type: ignore[arg-type]
    with pytest.raises(polycodec.EncodeError) as json_error:
        codec.encode_one(bad)
    with pytest.raises(polycodec.EncodeError) as builtins_error:
        codec.to_builtins(bad)
    assert str(builtins_error.value) == str(json_error.value)
    assert builtins_error.value.path == json_error.value.path == "$[1].kind"


@dataclass
class Ident:
    ident: uuid.UUID


@pytest.mark.parametrize(
    "value",
    [0, 1, 2**30, 2**64 - 1, 2**64, 2**90 - 1, 2**90, 2**120, 2**127 + 12345, 2**128 - 1],
)
def test_uuid_ints_across_the_digit_boundaries(value: int) -> None:
    # A UUID's int is made digit by digit on CPython 3.11 from 2**64 on: it must be the
    # normalised int of that value (equal, same hash, same text, usable in arithmetic).
    text = str(uuid.UUID(int=value))
    for out in [
        polycodec.from_builtins({"ident": text}, Ident),
        polycodec.Codec(Ident, "json").decode_one(json.dumps({"ident": text})),
        polycodec.Codec(Ident, "msgpack").decode_one(
            polycodec.Codec(Ident, "msgpack").encode_one(Ident(uuid.UUID(int=value)))
        ),
    ]:
        got = out.ident
        assert type(got) is uuid.UUID and type(got.int) is int
        assert got.int == value and hash(got.int) == hash(value) and str(got.int) == str(value)
        assert got == uuid.UUID(text) and hash(got) == hash(uuid.UUID(text))
        assert got.int + 1 == value + 1 and got.int.bit_length() == value.bit_length()
        assert got.int >> 64 == value >> 64 and str(got) == text


def test_uuid_ints_on_the_portable_path_match_the_fast_path() -> None:
    # A wide int is made from its digits where the `wide_int` layout is in use;
    # POLYCODEC_PORTABLE=wide_int (read once, when the module loads) selects PyO3's conversion,
    # which interpreters without the layout use. Both must give the same ints, so each runs
    # here in a fresh interpreter.
    script = (
        "import json, uuid, polycodec\n"
        "from dataclasses import dataclass\n"
        "@dataclass\n"
        "class Ident:\n"
        "    ident: uuid.UUID\n"
        "out = []\n"
        "for value in [2**64 - 1, 2**64, 2**90, 2**127 + 12345, 2**128 - 1]:\n"
        "    text = str(uuid.UUID(int=value))\n"
        "    got = polycodec.from_builtins({'ident': text}, Ident).ident\n"
        "    again = polycodec.Codec(Ident, 'json').decode_one(json.dumps({'ident': text}))\n"
        "    assert got.int == value == again.ident.int and hash(got.int) == hash(value)\n"
        "    out.append(str(got.int))\n"
        "print(' '.join(out))\n"
    )
    expected = " ".join(str(v) for v in [2**64 - 1, 2**64, 2**90, 2**127 + 12345, 2**128 - 1])
    for portable in ["", "wide_int"]:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
            "POLYCODEC_PORTABLE": portable,
        }
        done = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == expected.split()


@dataclass(slots=True)
class DirectRow:
    name: str
    count: int = 0
    tags: list[str] = field(default_factory=list)
    note: Optional[str] = None


@dataclass
class DirectHolder:
    scores: dict[str, int]
    members: set[int]
    frozen: frozenset[str]
    items: tuple[int, ...]
    pair: tuple[str, float]
    at: datetime.time
    aware: datetime.time
    span: datetime.timedelta
    rows: list[DirectRow]
    bounded: Annotated[dict[str, int], annotated_types.MaxLen(2)] = field(default_factory=dict)


def test_containers_read_directly_match_the_json_path() -> None:
    """dict[str, V], sets, frozensets, tuples, times, timedeltas and array_like records, which
    from_builtins reads without the shared conversion, agree with decode_one of the JSON text,
    values and failures alike."""

    value = DirectHolder(
        {"a": 1, "b": -(2**70)},
        {3, 1, 2},
        frozenset({"x", "y"}),
        (4, 5, 6),
        ("p", 2.5),
        datetime.time(12, 30, 1, 250),
        datetime.time(8, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-3))),
        datetime.timedelta(days=-2, seconds=5, microseconds=7),
        [DirectRow("r"), DirectRow("s", 2, ["t"], "n")],
        {"k": 1},
    )
    out = check(DirectHolder, value)
    assert polycodec.from_builtins(out, DirectHolder) == value
    array_like = check(DirectHolder, value, array_like=True)
    # Trailing fields left out of an array_like record take their defaults.
    array_like[8] = [["r"], ["s", 2]]
    assert polycodec.from_builtins(array_like, DirectHolder, array_like=True).rows == [
        DirectRow("r"),
        DirectRow("s", 2),
    ]
    bad = [
        {"scores": {"a": "1"}},
        {"scores": {"a": 1, "b": None}},
        {"members": [1, "2"]},
        {"frozen": ["x", 3]},
        {"items": [1, 2.5]},
        {"pair": ["p"]},
        {"pair": ["p", 1.0, 2]},
        {"at": "25:00:00"},
        {"span": "P1X"},
        {"rows": [{"name": 1}]},
        {"bounded": {"a": 1, "b": 2, "c": 3}},
    ]
    for change in bad:
        same_failure(DirectHolder, {**out, **change})
    # Items past a record's fields are passed over, by both paths.
    longer = [*array_like[:8], [["r", 1, [], None, "extra"]], {}]
    codec = polycodec.Codec(DirectHolder, "json", array_like=True)
    assert codec.from_builtins(longer) == codec.decode_one(json.dumps(longer))
    for rows in ([[1]], [[]], [{"name": "r"}]):
        same_failure(DirectHolder, [*array_like[:8], rows, {}], array_like=True)
