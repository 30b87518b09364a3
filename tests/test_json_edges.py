"""Edge cases decided on purpose: user exceptions, numbers out of range, lossless offsets,
runtime-typed dict keys, and float text identical to msgspec's."""

from __future__ import annotations

import dataclasses
import enum
import json
import uuid
from datetime import datetime, time, timedelta, timezone
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec


@dataclasses.dataclass
class Positive:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must not be negative")


@dataclasses.dataclass
class Holder:
    items: list[Positive]


class Refused(Exception):
    """An exception that is not about the value's shape."""


@dataclasses.dataclass
class Picky:
    n: int

    def __post_init__(self) -> None:
        raise Refused("no")


def test_post_init_value_error_becomes_validation_error_at_the_root() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"n": -1}', Positive)
    assert info.value.path == "$"
    assert "n must not be negative" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)


def test_post_init_value_error_nested_has_its_path() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"items": [{"n": 1}, {"n": -1}]}', Holder)
    assert info.value.path == "$.items[1]"
    assert isinstance(info.value.__cause__, ValueError)


def test_other_user_exceptions_pass_through_unchanged() -> None:
    with pytest.raises(Refused):
        polycodec.decode_one(b'{"n": 1}', Picky)


@pytest.mark.parametrize("literal", [b"1e400", b"-1e400", b"[1e999]"])
def test_float_literal_beyond_range_is_refused(literal: bytes) -> None:
    tp: Any = list[float] if literal.startswith(b"[") else float
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(literal, tp)
    with pytest.raises(polycodec.ValidationError, match="out of range"):
        polycodec.decode_one(literal, Any)


def test_lax_numbers_in_strings_must_not_be_padded() -> None:
    assert polycodec.decode_one(b'"12"', int, strict=False) == 12
    for payload in (b'" 12"', b'"12 "', b'" 1.5 "'):
        with pytest.raises(polycodec.ValidationError):
            polycodec.decode_one(payload, float if b"." in payload else int, strict=False)
        with pytest.raises(msgspec.ValidationError):
            msgspec.json.decode(payload, type=float if b"." in payload else int, strict=False)


@pytest.mark.parametrize(
    "offset, suffix",
    [
        (timedelta(hours=5, minutes=30, seconds=15), "+05:30:15"),
        (timedelta(seconds=-1), "-00:00:01"),
        (timedelta(hours=-8), "-08:00"),
    ],
)
def test_utc_offsets_keep_their_seconds(offset: timedelta, suffix: str) -> None:
    zone = timezone(offset)
    moment = datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=zone)
    encoded = polycodec.encode_one(moment)
    assert encoded == f'"2024-01-02T03:04:05.000006{suffix}"'.encode()
    decoded = polycodec.decode_one(encoded, datetime)
    assert decoded == moment and decoded.utcoffset() == offset
    assert datetime.fromisoformat(json.loads(encoded)) == moment
    clock = time(3, 4, 5, tzinfo=zone)
    assert polycodec.decode_one(polycodec.encode_one(clock), time).utcoffset() == offset


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1


def test_any_dict_keys_of_other_types_are_written_as_strings() -> None:
    key = uuid.UUID(int=7)
    value = {Color.RED: 1, Level.LOW: 2, key: 3, 1.5: 4, "plain": 6}
    encoded = polycodec.encode_one(value, type=dict[Any, int])
    assert json.loads(encoded) == {"red": 1, "1": 2, str(key): 3, "1.5": 4, "plain": 6}
    # The stdlib's spelling of a bool key.
    assert (
        polycodec.encode_one({True: 0}, type=dict[Any, int])
        == json.dumps({True: 0}, separators=(",", ":")).encode()
    )


@settings(max_examples=400, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_text_is_byte_identical_to_msgspec(value: float) -> None:
    encoded = polycodec.encode_one(value)
    assert encoded == msgspec.json.encode(value)
    assert polycodec.decode_one(encoded, float) == value


@pytest.mark.parametrize("enabled", [True, False])
def test_decoding_leaves_the_garbage_collector_as_it_found_it(enabled: bool) -> None:
    import gc

    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        polycodec.decode_one(b'{"items": [{"n": 1}]}', Holder)
        assert gc.isenabled() is enabled
        with pytest.raises(polycodec.ValidationError):
            polycodec.decode_one(b'{"items": [{"n": -1}]}', Holder)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


@dataclasses.dataclass
class Chain:
    child: Chain | None = None


def test_deepest_allowed_nesting_fits_a_small_thread_stack() -> None:
    """1024 levels need more than a 256 KiB stack; the codec continues on the heap instead of
    overflowing (a crash here takes the whole interpreter down)."""
    import threading

    outcome: list[object] = []

    def work() -> None:
        nested = b"[" * 1024 + b"]" * 1024
        assert polycodec.decode_one(nested, Any) is not None
        chain = b'{"child":' * 1023 + b"null" + b"}" * 1023
        decoded = polycodec.decode_one(chain, Chain)
        value: list[Any] = []
        for _ in range(1023):
            value = [value]
        assert polycodec.encode_one(value, type=Any) == nested
        assert polycodec.encode_one(decoded) == chain
        outcome.append("done")

    previous = threading.stack_size(256 * 1024)
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(previous)
    assert outcome == ["done"]


def test_a_class_holding_its_own_codec_can_be_collected() -> None:
    import gc
    import weakref

    @dataclasses.dataclass
    class Local:
        n: int = 0

    Local.codec = polycodec.Codec(Local)  # type: ignore[attr-defined]
    assert Local.codec.decode_one(b'{"n": 1}') == Local(1)  # type: ignore[attr-defined]
    alive = weakref.ref(Local)
    del Local
    gc.collect()
    assert alive() is None


def test_enum_and_tag_errors_list_the_accepted_values() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'"green"', Color)
    assert 'expected one of "red", "blue"' in str(info.value)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b"7", Level)
    assert "expected one of 1" in str(info.value)


def test_codec_repr_shows_type_format_and_non_default_options() -> None:
    assert repr(polycodec.Codec(Positive)) == "Codec(Positive, format='json')"
    codec = polycodec.Codec(Positive, rename="camel", strict=False)
    assert repr(codec) == "Codec(Positive, format='json', rename='camel', strict=False)"


@dataclasses.dataclass
class Counted:
    n: int


@pytest.fixture
def int_digit_limit() -> Any:
    """CPython's int-to-text digit limit, restored after the test (it is process-wide)."""
    import sys

    before = sys.get_int_max_str_digits()
    yield sys
    sys.set_int_max_str_digits(before)


def test_issue26_6_ints_up_to_the_digit_limit_are_exact(int_digit_limit: Any) -> None:
    """docs/json.md: an int is read and written exactly up to ``sys.get_int_max_str_digits()``
    digits, refused beyond it in every direction, and the limit is read at each call."""
    int_digit_limit.set_int_max_str_digits(4300)
    longest = int("7" * 4300)
    payload = b'{"n": %d}' % longest
    assert polycodec.decode_one(payload, Counted) == Counted(longest)
    assert (
        polycodec.encode_one(Counted(longest))
        == json.dumps({"n": longest}).replace(" ", "").encode()
    )
    too_long = b'{"n": ' + b"7" * 4301 + b"}"
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(too_long, Counted)
    assert info.value.path == "$.n" and "Exceeds the limit (4300 digits)" in str(info.value)
    with pytest.raises(polycodec.ValidationError, match="4300 digits"):
        polycodec.decode_one(b'{"' + b"7" * 4301 + b'": 1}', dict[int, int])
    with pytest.raises(polycodec.ValidationError, match="4300 digits"):
        polycodec.decode_one(b'"' + b"7" * 4301 + b'"', int, strict=False)
    with pytest.raises(polycodec.ValidationError, match="4300 digits"):
        polycodec.from_builtins({"n": 10**4300}, Counted)
    with pytest.raises(polycodec.EncodeError) as encode_info:
        polycodec.encode_one(Counted(10**4300))
    assert encode_info.value.path == "$.n"
    # Pickle writes ints in binary: no limit there.
    pickled = polycodec.encode_one(Counted(10**4300), format="pickle")
    assert polycodec.decode_one(pickled, Counted, format="pickle") == Counted(10**4300)
    # Raised, the limit lets the same input through; 0 lifts it.
    int_digit_limit.set_int_max_str_digits(4301)
    assert polycodec.decode_one(too_long, Counted) == Counted(int("7" * 4301))
    int_digit_limit.set_int_max_str_digits(0)
    huge = 10**20000
    assert polycodec.decode_one(polycodec.encode_one(Counted(huge)), Counted) == Counted(huge)


def test_issue26_6_a_huge_number_is_refused_with_a_short_message() -> None:
    """A megabyte of digits is refused (the digits are counted, not converted) and the message
    stays short."""
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b"[" + b"1" * 1_000_000 + b"]", list[int])
    assert info.value.path == "$[0]" and len(str(info.value)) < 300
