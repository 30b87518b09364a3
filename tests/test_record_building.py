"""How decoders build record instances, in every format that goes through the shared record
builder (JSON, MessagePack, pickle, ``from_builtins``): reference counts of the field values
(stored once, released with the instance or with a record that failed halfway), fields left
unset, classes whose ``__new__`` changes after the codec was built, and the key order of plain
instances.

On CPython 3.11 and 3.13+ a ``slots=True`` class whose body is exactly its field slots is allocated and
filled in one step (``create_slotted`` in ``src/py/cpython/objects.rs``); a class with any other word in its
body (a ``__weakref__`` slot, a base class's slot) takes the portable path of ``object.__new__``
and one store per slot. Both kinds are below, and every case runs with the fast paths this run
has (slot offsets, CPython's inline values on 3.11 and 3.13+) and again, in a rerun of this file
with ``POLYCODEC_PORTABLE=slot_offsets,slotted_creation,inline_values``, with the descriptor
path and the portable stores.
"""

from __future__ import annotations

import dataclasses
import enum
import gc
import pickle
import sys
import weakref
from typing import Any, Optional

import msgspec
import pytest

import polycodec
from layouts import rerun_portable

FORMATS = ["json", "msgpack", "pickle", "builtins"]


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


DEFAULT_NOTE = "a default note only this module uses"


@dataclasses.dataclass(slots=True)
class DenseSlots:
    colour: Colour
    count: int
    note: str = DEFAULT_NOTE


@dataclasses.dataclass(slots=True, weakref_slot=True)
class WeakSlots:
    colour: Colour
    count: int
    note: str = DEFAULT_NOTE


@dataclasses.dataclass
class PlainFields:
    colour: Colour
    count: int
    note: str = DEFAULT_NOTE


CLASSES = [DenseSlots, WeakSlots, PlainFields]


def test_the_portable_paths_pass_this_file() -> None:
    rerun_portable(__file__, "slot_offsets,slotted_creation,inline_values")


def _encode(fmt: str, value: Any) -> Any:
    """`value` (dicts and lists) in the format, written by an oracle where there is one."""
    if fmt == "json":
        return msgspec.json.encode(value)
    if fmt == "msgpack":
        return msgspec.msgpack.encode(value)
    return value


def _decoder(fmt: str, cls: Any) -> Any:
    """A function decoding the wire form (as dicts and lists) as `cls` in format `fmt`, with
    one codec (so that reference counts are not moved by codecs made meanwhile)."""
    if fmt == "builtins":
        return polycodec.Codec(cls, format="json").from_builtins
    codec = polycodec.Codec(cls, format=fmt)
    return lambda value: codec.decode_one(_encode(fmt, value))


def _decode(fmt: str, cls: Any, value: Any) -> Any:
    """Decodes `value` (the wire form as dicts and lists) as `cls` in format `fmt`."""
    return _decoder(fmt, cls)(value)


def _rows(count: int) -> list[dict[str, Any]]:
    return [{"colour": "blue", "count": index} for index in range(count)]


def _without_note(cls: Any, index: int) -> Any:
    """An instance whose pickle leaves `note` out, so the decoder stores the default."""
    value = cls.__new__(cls)
    value.colour = Colour.BLUE
    value.count = index
    return value


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_record_building_keeps_reference_counts(fmt: str, cls: Any) -> None:
    # Each instance holds one reference to its enum member and one to the default; both are
    # given back when the instances go.
    if fmt == "pickle":
        data: Any = pickle.dumps([_without_note(cls, index) for index in range(50)])
        codec: Any = polycodec.Codec(list[cls], format="pickle")
        decode: Any = lambda: codec.decode_one(data)  # noqa: E731
    else:
        rows = _rows(50)
        decode_rows = _decoder(fmt, list[cls])
        decode = lambda: decode_rows(rows)  # noqa: E731
    decode()
    gc.collect()
    before = (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE))
    decoded = decode()
    held = sys.getrefcount(Colour.BLUE)
    assert held == before[0] + 50
    assert decoded == [cls(Colour.BLUE, index) for index in range(50)]
    assert all(type(item) is cls and item.note is DEFAULT_NOTE for item in decoded)
    del decoded
    gc.collect()
    assert (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE)) == before


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_record_building_field_failing_mid_record_leaks_nothing(fmt: str, cls: Any) -> None:
    # The second record's `count` is refused after its `colour` was decoded: the error names
    # the field, and every reference taken for the failed record (and the first, complete one)
    # is given back.
    rows = [{"colour": "blue", "count": 1}, {"colour": "blue", "count": "two"}]
    decode = _decoder(fmt, list[cls])
    gc.collect()
    before = (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE))
    for _ in range(20):
        with pytest.raises(polycodec.ValidationError) as info:
            decode(rows)
        assert info.value.path == "$[1].count"
    del info
    gc.collect()
    assert (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE)) == before
    assert not [obj for obj in gc.get_objects() if type(obj) is cls]


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_record_building_missing_field_leaks_nothing(fmt: str, cls: Any) -> None:
    # Measured after a first round of failures, so one-time caches are filled.
    decode = _decoder(fmt, cls)
    counts = []
    for _ in range(2):
        for _ in range(20):
            with pytest.raises(polycodec.ValidationError) as info:
                decode({"colour": "blue"})
            assert str(info.value) == "object missing required field `count` (at $)"
        del info
        gc.collect()
        counts.append(sys.getrefcount(Colour.BLUE))
    assert counts[0] == counts[1]


@dataclasses.dataclass(slots=True)
class SlotsUnsetField:
    a: int
    later: int = dataclasses.field(init=False)


@dataclasses.dataclass
class PlainUnsetField:
    a: int
    later: int = dataclasses.field(init=False)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("cls", [SlotsUnsetField, PlainUnsetField], ids=lambda c: c.__name__)
def test_record_building_init_false_field_without_default_stays_unset(fmt: str, cls: Any) -> None:
    # As after `cls(a=1)`: the attribute does not exist until something sets it.
    decoded = _decode(fmt, cls, {"a": 1})
    made = cls(1)
    assert not hasattr(decoded, "later") and not hasattr(made, "later")
    if cls is PlainUnsetField:
        assert vars(decoded) == vars(made) == {"a": 1}
    decoded.later = 5
    assert decoded.later == 5


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("slots", [True, False], ids=["slots", "plain"])
def test_record_building_class_given_new_after_the_codec_uses_it(fmt: str, slots: bool) -> None:
    # The class is checked on every decode, not once when the codec is built.
    @dataclasses.dataclass(slots=slots)
    class LaterNew:
        a: int
        b: str

    codec: Any = polycodec.Codec(LaterNew, format="json" if fmt == "builtins" else fmt)
    wire = {"a": 1, "b": "x"}
    decode: Any = (
        (lambda: codec.from_builtins(wire))
        if fmt == "builtins"
        else (lambda: codec.decode_one(_encode(fmt, wire)))
    )
    first = decode()
    assert type(first) is LaterNew and (first.a, first.b) == (1, "x")
    made: list[Any] = []

    def counting_new(klass: type) -> Any:
        instance = object.__new__(klass)
        made.append(instance)
        return instance

    LaterNew.__new__ = counting_new  # type: ignore[method-assign, assignment]
    decoded = decode()
    assert len(made) == 1 and made[0] is decoded
    assert type(decoded) is LaterNew and (decoded.a, decoded.b) == (1, "x")


@dataclasses.dataclass
class Ordered:
    first: int
    second: str
    third: Optional[int] = None
    fourth: list[int] = dataclasses.field(default_factory=list)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
def test_record_building_plain_keys_in_field_order_whatever_the_wire_order(fmt: str) -> None:
    # Keys come in reverse order and one is left to its default: the instance's __dict__ is
    # in field order, as __init__ makes it, and behaves like one afterwards.
    wire = {"third": 3, "second": "two", "first": 1}
    decoded = _decode(fmt, Ordered, wire)
    expected = Ordered(1, "two", 3)
    assert list(vars(decoded).items()) == list(vars(expected).items())
    decoded.extra = True
    del decoded.second
    assert list(vars(decoded)) == ["first", "third", "fourth", "extra"]
    assert weakref.ref(decoded)() is decoded


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_record_building_duplicate_keys_release_the_earlier_value(fmt: str) -> None:
    rows = {"colour": "blue", "count": 1}
    data = _encode(fmt, rows)
    # The same key twice: the earlier value is dropped, the later one kept.
    if fmt == "json":
        data = b'{"colour":"blue","colour":"red","count":1}'
    else:
        data = b"\x83\xa6colour\xa4blue\xa6colour\xa3red\xa5count\x01"
    for cls in CLASSES:
        codec: Any = polycodec.Codec(cls, format=fmt)
        gc.collect()
        before = sys.getrefcount(Colour.BLUE), sys.getrefcount(Colour.RED)
        decoded = codec.decode_one(data)
        assert decoded == cls(Colour.RED, 1)
        del decoded
        gc.collect()
        assert (sys.getrefcount(Colour.BLUE), sys.getrefcount(Colour.RED)) == before


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_record_building_duplicate_key_does_not_count_as_a_missing_field(fmt: str) -> None:
    # The builder counts the fields set to skip the defaults when all arrived: a key given
    # twice is one field, so the field left out is still reported (as msgspec does).
    if fmt == "json":
        data = b'{"colour":"blue","colour":"red"}'
    else:
        data = b"\x82\xa6colour\xa4blue\xa6colour\xa3red"
    for cls in CLASSES:
        with pytest.raises(msgspec.ValidationError, match="missing required field `count`"):
            msgspec.convert({"colour": "red"}, msgspec.defstruct("S", ["colour", "count"]))
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.Codec(cls, format=fmt).decode_one(data)
        assert str(info.value) == "object missing required field `count` (at $)"


WIDE_FIELDS = [f"f{index}" for index in range(20)]


def _wide(slots: bool) -> Any:
    """A dataclass with more fields (20) than the record builder keeps inline (16); the last
    field has a default."""
    fields: list[Any] = [(name, Colour) for name in WIDE_FIELDS[:-1]]
    fields.append((WIDE_FIELDS[-1], str, dataclasses.field(default=DEFAULT_NOTE)))
    return dataclasses.make_dataclass("Wide", fields, slots=slots)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "builtins"])
@pytest.mark.parametrize("slots", [True, False], ids=["slots", "plain"])
def test_record_building_wide_record_keeps_reference_counts(fmt: str, slots: bool) -> None:
    # Complete records, records taking the default, and records failing at their 18th field
    # (after 17 values were decoded) all give back every reference they took.
    cls = _wide(slots)
    full = {name: "blue" for name in WIDE_FIELDS[:-1]}
    broken = dict(full, f17="green")
    decode = _decoder(fmt, list[cls])
    decode([full])
    gc.collect()
    before = (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE))
    decoded = decode([full, dict(full, f19="x")] * 5)
    assert decoded[0] == cls(*[Colour.BLUE] * 19)
    assert decoded[1] == cls(*[Colour.BLUE] * 19, "x")
    assert decoded[0].f19 is DEFAULT_NOTE
    del decoded
    for _ in range(10):
        with pytest.raises(polycodec.ValidationError) as info:
            decode([full, broken])
        assert info.value.path == "$[1].f17"
    del info
    gc.collect()
    assert (sys.getrefcount(Colour.BLUE), sys.getrefcount(DEFAULT_NOTE)) == before
    assert not [obj for obj in gc.get_objects() if type(obj) is cls]
