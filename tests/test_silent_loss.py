"""Issue 26: values read or written wrongly without a word, and the sharp edges found with them.

Each test is named after the item it pins; msgspec (and the other reference libraries) are the
oracles where they define the answer.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
from decimal import Decimal
from typing import Any, Optional, Union

import msgspec
import pytest

import polycodec

HUGE_DIGITS = "9" * 400


@dataclasses.dataclass
class Price:
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
