"""``from_builtins`` under ``Any`` (and ``list[Any]``, ``dict[str, Any]``): a value already in its
JSON form is returned as itself; any other value is read into new containers, as decoding its
JSON text reads it, or refused with its path. ``msgspec.convert(x, Any)`` returns every value
as itself without looking at it: the tests show where polycodec differs, and why.

The walk that decides reads a dict of exact str keys from its table (the ``dict_entries``
layout, where it is in use); a rerun of this file with ``POLYCODEC_PORTABLE=dict_entries``
checks the same answers through ``PyDict_Next``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest

import polycodec
from layouts import rerun_portable


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "dict_entries")


class Text(str):
    pass


class Opaque:
    pass


def deleted_entry() -> dict[str, Any]:
    """A dict whose table holds a deleted entry (its value slot is empty)."""
    value: dict[str, Any] = {"gone": 1, "a": [1, 2.5, None], "b": {"c": True}}
    del value["gone"]
    return value


def once_int_keyed() -> dict[str, Any]:
    """Only str keys left in a table that once held an int key (a general table)."""
    value: dict[Any, Any] = {1: "x", "a": {"b": [1, "y"]}}
    del value[1]
    return value


JSON_FORMED = [
    {"a": [1, {"b": 2}], "c": "text", "d": None, "e": False, "f": 1.5, "g": 2**80},
    [1, "a", [2.5, [None, [True, {}]]], []],
    deleted_entry(),
    once_int_keyed(),
    "text",
    -7,
    0.0,
    None,
    {},
    [],
]


@pytest.mark.parametrize("value", JSON_FORMED)
def test_a_value_in_its_json_form_is_returned_as_itself(value: Any) -> None:
    # What decoding its JSON text gives is equal to it: reading it would make an equal copy.
    assert polycodec.decode_one(json.dumps(value).encode(), Any) == value
    assert polycodec.from_builtins(value, Any) is value
    # msgspec.convert returns it as itself too.
    assert msgspec.convert(value, Any) is value
    if isinstance(value, list):
        assert polycodec.from_builtins(value, list[Any]) is value
    if isinstance(value, dict):
        assert polycodec.from_builtins(value, dict[str, Any]) is value


# Values that are not in their JSON form but have one: read as decoding that JSON text reads
# it (json.loads of json.dumps is the oracle), into new containers, the input unchanged.
CONVERTED = [
    (1, (2, 3)),
    {"a": (1, {"b": (2,)})},
    {"a": Text("sub")},
    [Text("sub"), 1],
    OrderedDict(a=1, b=[2]),
    {"a": [1, OrderedDict(b=2)]},
]


@pytest.mark.parametrize("value", CONVERTED)
def test_a_value_with_another_json_form_is_read_into_new_containers(value: Any) -> None:
    expected = json.loads(json.dumps(value))
    before = json.dumps(value)
    out = polycodec.from_builtins(value, Any)
    assert out == expected
    assert json.dumps(out) == json.dumps(expected)
    assert type(out) is type(expected) and out is not value
    assert json.dumps(value) == before
    # msgspec.convert hands it back as it is, tuples and subclasses included.
    assert msgspec.convert(value, Any) is value


# Values with no JSON form: refused, with the path of the first one met, where msgspec.convert
# returns them unchecked (they fail only later, when encoded).
REFUSED = [
    ({1, 2}, "$", "set"),
    ({"a": [1, {2, 3}]}, '$["a"][1]', "set"),
    ({"a": {(1, 2): "x"}}, '$["a"]', ""),
    ([Opaque()], "$[0]", "Opaque"),
    ({"a": b"bytes"}, '$["a"]', "bytes"),
    ([1.0, float("nan")], "$[1]", ""),
    ({"a": float("inf")}, '$["a"]', ""),
]


@pytest.mark.parametrize(("value", "path", "named"), REFUSED)
def test_a_value_without_a_json_form_is_refused_with_its_path(
    value: Any, path: str, named: str
) -> None:
    with pytest.raises(polycodec.ValidationError) as error:
        polycodec.from_builtins(value, Any)
    assert error.value.path == path
    assert named in str(error.value)
    assert msgspec.convert(value, Any) is value
    with pytest.raises((TypeError, ValueError)):
        json.dumps(value, allow_nan=False)


def test_a_dict_with_a_key_other_than_a_str_is_read_into_a_new_dict() -> None:
    # Not its JSON form (whose keys are strs): read by the shared decoder's rules for keys under
    # Any, into a new dict, the input unchanged.
    value = {1: "x", "a": [1]}
    out = polycodec.from_builtins(value, Any)
    assert out == value and out is not value and out["a"] is not value["a"]
    assert msgspec.convert(value, Any) is value


def test_a_record_field_of_any_keeps_its_value_or_reads_it() -> None:
    @dataclass
    class Envelope:
        id: int
        payload: Any

    formed = {"k": [1, {"x": "y"}]}
    out = polycodec.from_builtins({"id": 1, "payload": formed}, Envelope)
    assert out == Envelope(1, formed) and out.payload is formed
    out = polycodec.from_builtins({"id": 1, "payload": (1, 2)}, Envelope)
    assert out.payload == [1, 2]
    with pytest.raises(polycodec.ValidationError) as error:
        polycodec.from_builtins({"id": 1, "payload": {"k": {1}}}, Envelope)
    assert error.value.path == '$.payload["k"]'


def test_nesting_past_the_limit_is_a_depth_error_not_a_crash() -> None:
    deep: Any = 1
    for _ in range(2000):
        deep = [deep]
    with pytest.raises(polycodec.DecodeError, match="nested deeper"):
        polycodec.from_builtins(deep, Any)
    deep = {}
    for _ in range(2000):
        deep = {"k": deep}
    with pytest.raises(polycodec.DecodeError, match="nested deeper"):
        polycodec.from_builtins(deep, Any)
