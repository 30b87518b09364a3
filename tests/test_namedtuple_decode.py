"""Named tuples decoded from JSON, MessagePack and builtins. A class whose ``__new__`` is the one
``collections.namedtuple`` generates (``tuple.__new__(cls, fields)``) and that has no
``__init__`` of its own gets its instances from that call made in C; a subclass with its own
``__new__`` or ``__init__`` is called, so that code runs as it would. msgspec is the oracle for
the values and for which inputs fail."""

from __future__ import annotations

import collections
import json
from typing import Any, NamedTuple, Optional

import msgspec
import msgspec.msgpack
import pytest

import polycodec


class Point(NamedTuple):
    x: int
    y: int = 5
    label: Optional[str] = None


class Line(NamedTuple):
    start: Point
    end: Point


Pair = collections.namedtuple("Pair", "a b", defaults=[2])

CALLS: list[Any] = []


class Counted(Point):
    def __new__(cls, *args: Any) -> Counted:
        CALLS.append(("new", args))
        return super().__new__(cls, *args)


class Initialised(Point):
    def __init__(self, *args: Any) -> None:
        CALLS.append(("init", args))


CASES: list[tuple[Any, list[Any]]] = [
    (Point, [[1], [1, 2], [1, 2, "p"]]),
    (Line, [[[1, 2], [3]], [[0], [0, 0, None]]]),
    (Pair, [["x"], ["x", "y"]]),
    (list[Point], [[[1], [2, 3], [4, 5, "z"]]]),
]


@pytest.mark.parametrize(("cls", "inputs"), CASES)
def test_named_tuples_decode_as_msgspec_does(cls: Any, inputs: list[Any]) -> None:
    for value in inputs:
        text = json.dumps(value).encode()
        expected = msgspec.json.decode(text, type=cls)
        for decoded in (
            polycodec.decode_one(text, cls),
            polycodec.decode_one(msgspec.msgpack.encode(value), cls, "msgpack"),
            polycodec.from_builtins(value, cls),
        ):
            assert decoded == expected
            assert type(decoded) is type(expected)
            items = decoded if isinstance(decoded, list) else [decoded]
            for item in items:
                # A real instance of the class: its hash and fields are a tuple's.
                assert hash(item) == hash(tuple(item))
                assert item._fields == type(item)._fields


@pytest.mark.parametrize("value", [[], [1, 2, "p", "extra"], ["x"], [1, "y"]])
def test_named_tuples_refuse_what_msgspec_refuses(value: list[Any]) -> None:
    text = json.dumps(value).encode()
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(text, type=Point)
    with pytest.raises(polycodec.ValidationError) as error:
        polycodec.decode_one(text, Point)
    assert error.value.path.startswith("$")
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(msgspec.msgpack.encode(value), Point, "msgpack")


def test_a_subclass_with_its_own_new_or_init_is_called() -> None:
    CALLS.clear()
    counted = polycodec.decode_one(b"[1, 2]", Counted)
    initialised = polycodec.decode_one(b"[3]", Initialised)
    assert type(counted) is Counted and counted == (1, 2, None)
    assert type(initialised) is Initialised and initialised == (3, 5, None)
    assert CALLS == [("new", (1, 2, None)), ("init", (3, 5, None))]


def test_from_builtins_runs_a_subclass_new_once_per_value() -> None:
    CALLS.clear()
    out = polycodec.from_builtins([[1, 2], [3]], list[Counted])
    assert out == [(1, 2, None), (3, 5, None)]
    assert CALLS == [("new", (1, 2, None)), ("new", (3, 5, None))]


@pytest.mark.parametrize("value", [["x"], [1, 2, "p", "extra"], [], [1, 2, 3]])
def test_from_builtins_fails_as_json_decoding_does(value: list[Any]) -> None:
    with pytest.raises(polycodec.ValidationError) as json_error:
        polycodec.decode_one(json.dumps(value).encode(), Point)
    with pytest.raises(polycodec.ValidationError) as builtins_error:
        polycodec.from_builtins(value, Point)
    # The same message, but that builtins counts a list's items where JSON sees "more".
    assert str(builtins_error.value).split(", got")[0] == str(json_error.value).split(", got")[0]
    assert builtins_error.value.path == json_error.value.path
