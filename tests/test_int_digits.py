"""Ints read from their digits (the ``int_digits`` layout, src/py/cpython/ints.rs) against the
stdlib's ``json`` and ``msgpack`` as oracles, at every digit boundary and both signs, through
every encoder path that reads an int: record fields (``slots=True`` and plain), ``list[int]``,
``dict[str, int]``, ``Any``, a float field given an int, ``omit_defaults``' comparison with an
int default, and ``to_builtins``; then again in a rerun of this file with the layout off
(``POLYCODEC_PORTABLE=int_digits``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Optional

import msgpack
import pytest

import polycodec
from layouts import rerun_portable

#: Each side of the one- and two-digit boundaries (30-bit digits), 64 bits, and beyond.
EDGES = [
    0,
    1,
    5,
    255,
    2**30 - 1,
    2**30,
    2**30 + 1,
    2**31,
    2**32 + 7,
    2**59 + 3,
    2**60 - 1,
    2**60,
    2**60 + 1,
    2**62,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    10**30,
]
INTS = EDGES + [-n for n in EDGES] + [-(2**63), -(2**63) - 1]
#: The same values as ints made by arithmetic (not the literals' objects).
MADE = [(n * 7 + 3 - 3) // 7 for n in INTS]

MSGPACK_MIN, MSGPACK_MAX = -(2**63), 2**64 - 1


def test_the_portable_path_passes_this_file() -> None:
    rerun_portable(__file__, "int_digits")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _fits_msgpack(number: int) -> bool:
    return MSGPACK_MIN <= number <= MSGPACK_MAX


@dataclasses.dataclass(slots=True)
class Slotted:
    number: int
    ratio: float
    maybe: Optional[int] = None


@dataclasses.dataclass
class Plain:
    number: int
    ratio: float
    maybe: Optional[int] = None


class Counted(int):
    pass


@pytest.mark.parametrize("number", INTS + MADE)
@pytest.mark.parametrize("cls", [Slotted, Plain])
def test_int_fields_bytes_equal_json_and_msgpack(cls: type, number: int) -> None:
    value = cls(number, number, number)
    expected = {"number": number, "ratio": number, "maybe": number}
    assert polycodec.Codec(cls).encode_one(value) == _json(expected)
    assert polycodec.Codec(cls).to_builtins(value) == expected
    packer = polycodec.Codec(cls, format="msgpack")
    if _fits_msgpack(number):
        assert packer.encode_one(value) == msgpack.packb(expected)
    else:
        with pytest.raises(polycodec.EncodeError, match=r"must fit in 64 bits.*\$\.number"):
            packer.encode_one(value)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_int_lists_dicts_and_any_bytes_equal_the_oracles(fmt: str) -> None:
    numbers = [n for n in INTS + MADE if fmt == "json" or _fits_msgpack(n)]
    keyed = {f"k{index}": n for index, n in enumerate(numbers)}
    oracle = _json if fmt == "json" else msgpack.packb
    assert polycodec.Codec(list[int], format=fmt).encode_one(numbers) == oracle(numbers)
    assert polycodec.Codec(list[float], format=fmt).encode_one(numbers) == oracle(numbers)
    assert polycodec.Codec(dict[str, int], format=fmt).encode_one(keyed) == oracle(keyed)
    assert polycodec.Codec(Any, format=fmt).encode_one([numbers, keyed]) == oracle([numbers, keyed])


@pytest.mark.parametrize("number", [2**64, -(2**63) - 1, 10**30, -(10**30)])
def test_ints_beyond_64_bits_are_refused_by_msgpack_with_the_path(number: int) -> None:
    codec = polycodec.Codec(list[int], format="msgpack")
    with pytest.raises(polycodec.EncodeError, match=r"must fit in 64 bits.*\$\[1\]"):
        codec.encode_one([1, number])


def test_int_subclass_and_bool_as_before() -> None:
    # A subclass is written as its int value (through the general path); a bool is no int.
    values = [Counted(n) for n in INTS]
    assert polycodec.Codec(list[int]).encode_one(values) == _json(INTS)
    assert polycodec.Codec(Slotted).encode_one(Slotted(Counted(2**62), 1.5)) == _json(
        {"number": 2**62, "ratio": 1.5, "maybe": None}
    )
    fitting = [Counted(n) for n in INTS if _fits_msgpack(n)]
    assert polycodec.Codec(list[int], format="msgpack").encode_one(fitting) == msgpack.packb(
        [int(n) for n in fitting]
    )
    for fmt in ["json", "msgpack"]:
        with pytest.raises(polycodec.EncodeError, match=r"expected int, got bool \(at \$\[1\]\)"):
            polycodec.Codec(list[int], format=fmt).encode_one([1, True])
    assert polycodec.Codec(list[bool]).encode_one([True, False]) == b"[true,false]"


@dataclasses.dataclass(slots=True)
class Retries:
    name: str
    retries: int = 3
    big: int = 2**62
    negative: int = -(2**31)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize(
    "number", [3, 2**62, -(2**31), 0, 4, 2**62 + 1, -(2**31) - 1, 2**30, 2**64, -(2**63)]
)
def test_omit_defaults_compares_ints_by_value(fmt: str, number: int) -> None:
    made = (number * 5) // 5  # another object than the default's
    value = Retries("x", made, made, made)
    expected: dict[str, Any] = {"name": "x"}
    for name, default in [("retries", 3), ("big", 2**62), ("negative", -(2**31))]:
        if number != default:
            expected[name] = number
    codec = polycodec.Codec(Retries, format=fmt, omit_defaults=True)
    if fmt == "msgpack" and not _fits_msgpack(number):
        with pytest.raises(polycodec.EncodeError, match="must fit in 64 bits"):
            codec.encode_one(value)
        return
    assert codec.encode_one(value) == (_json if fmt == "json" else msgpack.packb)(expected)
