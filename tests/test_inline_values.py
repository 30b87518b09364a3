"""Plain dataclasses decoded in every format, with their fields written straight into CPython's
inline instance values (3.11's values array, 3.13+'s values inside the object: field access
``"inline values"``, where the ``inline_values`` layout passed its check at module load) and,
in a rerun of this file with ``POLYCODEC_PORTABLE=inline_values``, on the portable path (access
``"dict"``: every field stored the way ``object.__setattr__`` stores it). Other interpreters
always take the portable path. The oracles are msgspec (JSON, MessagePack), fastavro (Avro) and the stdlib ``pickle``;
the instances must be indistinguishable from ones made by ``__init__``: same ``__dict__``, same
key order, same behaviour when attributes are added or removed afterwards.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import io
import pickle
import sys
import weakref
from typing import Any, Optional

import fastavro
import msgspec
import pytest

import polycodec
from layouts import in_use, rerun_portable
from polycodec import _polycodec

FORMATS = ["json", "msgpack", "avro", "pickle"]

#: Whether this run writes inline values (CPython 3.11 and 3.13+, when the layout passed its
#: check at module load and was not turned off: tests/test_cpython_layouts.py checks that it
#: passed).
INLINE = in_use("inline_values")


@dataclasses.dataclass
class Point:
    x: int
    y: int
    label: Optional[str] = None


@dataclasses.dataclass
class Holder:
    name: str
    points: list[Point]
    tags: list[str] = dataclasses.field(default_factory=list)
    parent: Optional[Holder] = None


@dataclasses.dataclass(frozen=True)
class FrozenPair:
    a: int
    b: str


@dataclasses.dataclass
class Doubled:
    a: int
    total: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.total = self.a * 2


@dataclasses.dataclass
class Sub(Point):
    z: float = 0.5


CASES: list[tuple[type, Any]] = [
    (Point, Point(1, 2)),
    (Point, Point(3, 4, "p")),
    (Holder, Holder("h", [Point(1, 2), Point(5, 6, "q")], ["t"], Holder("parent", []))),
    (FrozenPair, FrozenPair(1, "one")),
    (Doubled, Doubled(21)),
    (Sub, Sub(1, 2, "s", 2.5)),
]
IDS = [f"{cls.__name__}-{index}" for index, (cls, _) in enumerate(CASES)]


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "inline_values")


def _access() -> str:
    return "inline values" if INLINE else "dict"


def _wire(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _wire(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, list):
        return [_wire(item) for item in value]
    return value


def _same_instance(decoded: Any, expected: Any) -> None:
    """`decoded` is what __init__ makes: same type, same __dict__ in the same key order."""
    assert type(decoded) is type(expected)
    assert list(vars(decoded).items()) == list(vars(expected).items())
    for f in dataclasses.fields(expected):
        inner = getattr(expected, f.name)
        if dataclasses.is_dataclass(inner):
            _same_instance(getattr(decoded, f.name), inner)
        elif isinstance(inner, list):
            for got, want in zip(getattr(decoded, f.name), inner):
                if dataclasses.is_dataclass(want):
                    _same_instance(got, want)


def _oracle_bytes(fmt: str, codec: Any, value: Any) -> bytes:
    """`value` encoded by the format's oracle."""
    if fmt == "json":
        return msgspec.json.encode(_wire(value))
    if fmt == "msgpack":
        return msgspec.msgpack.encode(_wire(value))
    if fmt == "avro":
        out = io.BytesIO()
        fastavro.schemaless_writer(out, fastavro.parse_schema(codec.schema), _wire(value))
        return out.getvalue()
    return pickle.dumps(value)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("cls", "value"), CASES, ids=IDS)
def test_inline_values_round_trip_against_the_oracles(fmt: str, cls: type, value: Any) -> None:
    codec: Any = polycodec.Codec(cls, format=fmt)
    assert codec._field_access()[cls.__qualname__] == _access()
    decoded = codec.decode_one(_oracle_bytes(fmt, codec, value))
    assert decoded == value
    _same_instance(decoded, value)
    many = codec.decode_many(codec.encode_many([value, value]))
    assert many == [value, value]
    _same_instance(many[1], value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_inline_values_instances_behave_like_init_made_ones(fmt: str) -> None:
    codec: Any = polycodec.Codec(Point, format=fmt)
    decoded = codec.decode_one(codec.encode_one(Point(1, 2, "a")))
    decoded.extra = "added"
    assert vars(decoded) == {"x": 1, "y": 2, "label": "a", "extra": "added"}
    del decoded.y
    assert not hasattr(decoded, "y")
    assert list(vars(decoded)) == ["x", "label", "extra"]
    decoded.y = 7
    assert list(vars(decoded)) == ["x", "label", "extra", "y"]
    assert weakref.ref(decoded)() is decoded
    assert pickle.loads(pickle.dumps(decoded)).__dict__ == decoded.__dict__
    copy = codec.decode_one(codec.encode_one(Point(1, 2)))
    copy.__dict__["x"] = 10
    assert copy.x == 10


@pytest.mark.parametrize("fmt", FORMATS)
def test_inline_values_frozen_stays_frozen_and_post_init_runs(fmt: str) -> None:
    frozen: Any = polycodec.Codec(FrozenPair, format=fmt)
    decoded = frozen.decode_one(frozen.encode_one(FrozenPair(1, "x")))
    with pytest.raises(dataclasses.FrozenInstanceError):
        decoded.a = 2  # type: ignore[misc]
    doubled: Any = polycodec.Codec(Doubled, format=fmt)
    assert doubled.decode_one(doubled.encode_one(Doubled(4))).total == 8


def _unlabelled() -> Labelled:
    value = Labelled.__new__(Labelled)
    value.x = 1
    return value


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_inline_values_keep_reference_counts(fmt: str) -> None:
    # Defaults stored into each instance take one reference each, given back with the
    # instances; decoded values are owned by their instance alone.
    text = LABEL
    codec: Any = polycodec.Codec(list[Labelled], format=fmt)
    data = {
        "json": b"[" + b",".join([b'{"x":1}'] * 50) + b"]",
        "msgpack": msgspec.msgpack.encode([{"x": 1}] * 50),
        "pickle": pickle.dumps([_unlabelled() for _ in range(50)]),
    }[fmt]
    gc.collect()
    before = sys.getrefcount(text)
    decoded = codec.decode_one(data)
    assert all(item.label is text for item in decoded)
    del decoded
    gc.collect()
    assert sys.getrefcount(text) == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_inline_values_exhausted_shared_keys_fall_back_to_dict(fmt: str) -> None:
    # CPython 3.11 shrinks the room in a class's shared keys with every instance made before
    # the attributes are in them; instances given a __dict__ first leave no room, so the field
    # names never become shared keys. The probe then finds no inline slots and the class is
    # filled the portable way. From 3.13 on a materialised __dict__ shares the instance's inline
    # values and adds its keys to the class's shared keys, so the probe finds them there.
    for index in range(40):
        early = object.__new__(Late)
        early.__dict__.update({"a": index, "b": str(index)})
    codec: Any = polycodec.Codec(Late, format=fmt)
    shared = INLINE and sys.version_info >= (3, 13)
    assert codec._field_access() == {"Late": "inline values" if shared else "dict"}
    decoded = codec.decode_many(codec.encode_many([Late(1, "x"), Late(2, "y")]))
    assert decoded == [Late(1, "x"), Late(2, "y")]
    assert list(vars(decoded[0])) == ["a", "b"]


LABEL = "a default label no other test uses"


@dataclasses.dataclass
class Labelled:
    x: int
    label: str = LABEL


@dataclasses.dataclass
class Late:
    """Made only by the test that exhausts its shared keys."""

    a: int
    b: str


class CountingNew:
    made = 0

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        CountingNew.made += 1
        return super().__new__(cls)


@dataclasses.dataclass
class WithNew(CountingNew):
    a: int


@dataclasses.dataclass
class WithDel:
    a: int
    deleted = 0

    def __del__(self) -> None:
        WithDel.deleted += 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_inline_values_probe_runs_no_user_code(fmt: str) -> None:
    # A class with its own __new__ or a finalizer is not probed (the probe makes and drops an
    # instance), so building the codec calls neither; decoding still does, as before.
    made, deleted = CountingNew.made, WithDel.deleted
    with_new: Any = polycodec.Codec(WithNew, format=fmt)
    with_del: Any = polycodec.Codec(WithDel, format=fmt)
    assert (CountingNew.made, WithDel.deleted) == (made, deleted)
    assert with_new._field_access() == {"WithNew": "dict"}
    assert with_del._field_access() == {"WithDel": "dict"}
    assert with_new.decode_one(with_new.encode_one(WithNew(1))) == WithNew(1)
    value = with_del.decode_one(with_del.encode_one(WithDel(1)))
    assert value == WithDel(1)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_inline_values_subclass_instances_take_the_portable_path(fmt: str) -> None:
    # A plan for Point decoding into a subclass never happens, but a store into an instance of
    # another class must not use Point's indices: the field access checks the exact type.
    codec: Any = polycodec.Codec(list[Point], format=fmt)
    sub: Any = polycodec.Codec(list[Sub], format=fmt)
    values = [Point(1, 2), Point(3, 4, "x")]
    subs = [Sub(1, 2, None, 1.5)]
    assert codec.decode_one(codec.encode_one(values)) == values
    assert sub.decode_one(sub.encode_one(subs)) == subs


@pytest.mark.parametrize("portable", [False, True])
def test_floor_create_makes_what_init_makes(portable: bool) -> None:
    # The decode-floor diagnostic creates instances from ready values the way decoders do
    # (with `portable`, the way they do without inline values).
    rows = [(1, 2, "a"), (3, 4, None)]
    made = _polycodec._floor_create(Point, ["x", "y", "label"], rows, portable=portable)
    assert made == [Point(*row) for row in rows]
    _same_instance(made[0], Point(1, 2, "a"))
    with pytest.raises(ValueError, match="one value per field"):
        _polycodec._floor_create(Point, ["x", "y", "label"], [(1, 2)])


# Instances created in one step (CPython 3.11: the values array written with the fields and
# attached to a fresh instance, `InlineValues::create`) against ones made by `__init__`, and
# the same checks on the portable path.


@dataclasses.dataclass
class Made:
    a: int
    b: str
    c: list[int]


@dataclasses.dataclass
class Unset:
    a: int
    later: int = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        if self.a > 0:
            self.later = self.a


@pytest.mark.parametrize("fmt", FORMATS)
def test_created_instances_behave_like_init_made_ones(fmt: str) -> None:
    codec: Any = polycodec.Codec(Made, format=fmt)
    assert codec._field_access() == {"Made": _access()}
    expected = Made(1, "x", [1, 2])
    decoded = codec.decode_one(_oracle_bytes(fmt, codec, expected))
    _same_instance(decoded, expected)
    assert decoded == expected and repr(decoded) == repr(expected)
    assert decoded.a == 1 and decoded.b == "x" and decoded.c == [1, 2]
    assert sys.getsizeof(decoded) == sys.getsizeof(expected)
    assert sys.getsizeof(vars(decoded)) == sys.getsizeof(vars(expected))
    assert gc.is_tracked(decoded)
    assert pickle.loads(pickle.dumps(decoded)) == expected
    assert copy.copy(decoded) == expected and copy.deepcopy(decoded) == expected
    # Attributes added later go where they go on an __init__-made instance.
    expected.added = "later"  # type: ignore[attr-defined]
    decoded.added = "later"
    assert list(vars(decoded).items()) == list(vars(expected).items())
    decoded.a = 5
    del decoded.b
    assert list(vars(decoded).items()) == [("a", 5), ("c", [1, 2]), ("added", "later")]
    vars(decoded)["b"] = "back"
    assert decoded.b == "back"


@pytest.mark.parametrize("fmt", FORMATS)
def test_created_instances_after_the_class_gained_a_shared_key(fmt: str) -> None:
    # An attribute set on one instance becomes one of the class's shared keys; instances
    # decoded afterwards have room for it in their values array, as __init__-made ones do.
    codec: Any = polycodec.Codec(list[Made], format=fmt)
    first = Made(0, "first", [])
    first.grown = 1  # type: ignore[attr-defined]
    values = [Made(index, str(index), [index]) for index in range(60)]
    decoded = codec.decode_one(codec.encode_one(values))
    assert decoded == values
    for index, item in enumerate(decoded):
        item.grown = index
        values[index].grown = index  # type: ignore[attr-defined]
        assert list(vars(item).items()) == list(vars(values[index]).items())
        assert sys.getsizeof(item) == sys.getsizeof(values[index])


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_created_instances_with_a_field_left_unset(fmt: str) -> None:
    # `init=False` without a default, set by __post_init__ only sometimes: the instance is
    # created without it, exactly as __init__ leaves it.
    codec: Any = polycodec.Codec(list[Unset], format=fmt)
    values = [Unset(0), Unset(3)]
    decoded = codec.decode_one(codec.encode_one(values))
    assert not hasattr(decoded[0], "later") and decoded[1].later == 3
    assert list(vars(decoded[0])) == ["a"] and list(vars(decoded[1])) == ["a", "later"]
    decoded[0].later = 9
    assert list(vars(decoded[0]).items()) == [("a", 0), ("later", 9)]


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_created_instances_are_collected_in_cycles(fmt: str) -> None:
    codec: Any = polycodec.Codec(Made, format=fmt)
    decoded = codec.decode_one(codec.encode_one(Made(1, "x", [])))
    decoded.c.append(decoded)  # type: ignore[arg-type]
    decoded.me = decoded
    ref = weakref.ref(decoded)
    del decoded
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_created_instances_with_collections_during_decoding(fmt: str) -> None:
    # A collection may start whenever a new instance is allocated (its values already
    # decoded, not yet reachable from the instance): nothing is lost or freed early.
    codec: Any = polycodec.Codec(list[Made], format=fmt)
    values = [Made(index, str(index), [index, index]) for index in range(300)]
    data = codec.encode_one(values)
    small = codec.encode_one(values[:3])
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    try:
        for _ in range(3):
            assert codec.decode_one(data) == values
            assert codec.decode_one(small) == values[:3]
    finally:
        gc.set_threshold(*thresholds)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_created_instances_of_a_class_that_gains_a_new_after_the_codec(fmt: str) -> None:
    # The one-step creation checks the class on every call: a __new__ given to the class
    # after the codec was built is called for every instance decoded afterwards.
    @dataclasses.dataclass
    class LaterNew:
        a: int

    codec: Any = polycodec.Codec(list[LaterNew], format=fmt)
    expected = [LaterNew(1), LaterNew(2)]
    data = codec.encode_one(expected)
    assert codec.decode_one(data) == expected
    calls: list[type] = []

    def counting_new(cls: type, *args: Any, **kwargs: Any) -> Any:
        calls.append(cls)
        return object.__new__(cls)

    LaterNew.__new__ = counting_new  # type: ignore[method-assign,assignment]
    decoded = codec.decode_one(data)
    assert decoded == expected and calls == [LaterNew, LaterNew]
    _same_instance(decoded[1], expected[1])


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_created_instances_release_their_values(fmt: str) -> None:
    # Each decoded value is owned by its instance alone and given back when it goes.
    codec: Any = polycodec.Codec(list[Made], format=fmt)
    values = [Made(index, "text", [index]) for index in range(100)]
    data = codec.encode_one(values)
    decoded = codec.decode_one(data)
    refs = [weakref.ref(item) for item in decoded]
    inner = [item.c for item in decoded]
    # What one instance and the list `inner` hold, as for an __init__-made instance.
    made = Made(0, "text", [0])
    held = [made.c]
    counts = [sys.getrefcount(c) for c in held]
    assert [sys.getrefcount(c) for c in inner] == counts * len(inner)
    del decoded, made
    assert all(ref() is None for ref in refs)
    counts = [sys.getrefcount(c) for c in held]
    assert [sys.getrefcount(c) for c in inner] == counts * len(inner)


@dataclasses.dataclass
class Five:
    """Five fields: a values array of 6 slots would be a 56-byte block, in pymalloc's 64-byte
    size class with dicts and lists; one-step creation makes it a slot longer (72 bytes)."""

    a: int
    b: str
    c: Optional[float]
    d: list[int]
    e: str = "e"


def _fives(count: int) -> list[Five]:
    return [Five(k, str(k), k / 2 if k % 3 else None, [k, k + 1], f"e{k}") for k in range(count)]


@pytest.mark.parametrize("fmt", [*FORMATS, "builtins"])
def test_inline_values_five_field_class_padded_out_of_the_dict_size_class(fmt: str) -> None:
    # Enough instances that the class's shared keys have one spare key left (every instance
    # made takes one while more than one is left), as in a long-running program: the values
    # arrays are then 6 slots in CPython and 7 here. The instances must still behave exactly
    # like __init__-made ones, through every CPython path that reads or copies the array.
    values = _fives(40)
    codec: Any = polycodec.Codec(list[Five], format="json" if fmt == "builtins" else fmt)
    assert codec._field_access()["Five"] == _access()
    if fmt == "builtins":
        decoded = codec.from_builtins(codec.to_builtins(values))
    else:
        decoded = codec.decode_one(codec.encode_one(values))
    assert decoded == values
    for got, want in zip(decoded, values):
        _same_instance(got, want)
    first, second, third, fourth = decoded[:4]
    # The class's last spare shared key goes to a new attribute, in the array's sixth slot.
    first.extra = "x"
    assert list(vars(first).items()) == [*vars(values[0]).items(), ("extra", "x")]
    second.extra = "y"
    assert second.extra == "y"
    # No key left: the next new attribute materialises a __dict__ from the array.
    third.more = 1
    assert list(vars(third)) == ["a", "b", "c", "d", "e", "more"]
    assert vars(fourth).copy() == vars(values[3])
    assert list(vars(fourth).copy()) == ["a", "b", "c", "d", "e"]
    assert copy.copy(decoded[4]) == values[4]
    assert copy.deepcopy(decoded[5]) == values[5]
    assert pickle.loads(pickle.dumps(decoded[6])) == values[6]
    del decoded[7].b
    decoded[7].b = "again"
    assert list(vars(decoded[7])) == ["a", "c", "d", "e", "b"]
    assert weakref.ref(decoded[8])() is decoded[8]
    del decoded, first, second, third, fourth
    gc.collect()


@pytest.mark.skipif(
    not INLINE or sys.version_info >= (3, 13),
    reason="a separate values array is made on CPython 3.11 only (3.13+ keeps it in the object)",
)
def test_inline_values_five_field_arrays_are_72_byte_blocks() -> None:
    import tracemalloc

    _fives(40)  # the class's shared keys down to their last spare key
    codec: Any = polycodec.Codec(list[Five], format="json")
    data = codec.to_builtins(_fives(100))
    tracemalloc.start()
    try:
        decoded = codec.from_builtins(data)
        sizes = [trace.size for trace in tracemalloc.take_snapshot().traces]
    finally:
        tracemalloc.stop()
    assert decoded == _fives(100)
    # One 72-byte values array per instance (CPython's own would be 56 bytes, as the
    # instances themselves are).
    assert sizes.count(72) >= 100
