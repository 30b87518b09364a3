"""The JSON constraint cases through MessagePack: each value passes at its bound and fails just
beyond it, with a ValidationError located at the constrained value. Values MessagePack cannot
carry (ints beyond 64 bits) are left out."""

from __future__ import annotations

from typing import Any

import pytest

import polycodec
from test_json_constraints import CASES, Case


def _representable(value: Any) -> bool:
    return not (isinstance(value, int) and not -(2**63) <= value < 2**64)


def _codec(tp: Any) -> polycodec.Codec[Any]:
    return polycodec.Codec(tp, format="msgpack")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_within_bounds_round_trip(case: Case) -> None:
    codec = _codec(case.tp)
    for value in filter(_representable, case.good):
        decoded = codec.decode_one(codec.encode_one(value))
        # Aware datetimes come back in UTC: the same instant.
        assert decoded == value and type(decoded) is type(value)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_beyond_bounds_fail_with_paths(case: Case) -> None:
    top = _codec(case.tp)
    plain = _codec(case.tp.__origin__)
    holder = _codec(list[case.tp])  # type: ignore[name-defined]
    good = [plain.encode_one(v) for v in filter(_representable, case.good)]
    for value in filter(_representable, case.bad):
        payload = plain.encode_one(value)
        with pytest.raises(polycodec.ValidationError) as info:
            top.decode_one(payload)
        assert info.value.path == "$"
        wrapped = bytes([0x90 | (len(good) + 1)]) + b"".join(good) + payload
        with pytest.raises(polycodec.ValidationError) as info:
            holder.decode_one(wrapped)
        assert info.value.path == f"$[{len(good)}]"
