"""The single-pass fast path of the pickle decoder against the general two-step path.

``fast_path=False`` decodes with the general path only, ``fast_path="only"`` with the fast
path only (it raises DecodeError where the default would fall back). The oracle for values is
the original object (and ``pickle.dumps`` as the producer); the oracle for refusals is the
general path, which the fast path must never make more permissive.
"""

from __future__ import annotations

import dataclasses
import enum
import pickle
import sys
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, Optional, Union
from uuid import UUID

import pytest

import polycodec

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benches import models  # noqa: E402
from benches.idioms import SLOTS, converter  # noqa: E402

MODULE = __name__


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Inner:
    name: str
    color: Color
    level: Level


@dataclasses.dataclass
class Outer:
    when: datetime
    day: date
    amount: Decimal
    blob: bytes
    inner: Inner
    inners: list[Inner]
    names: list[str]
    maybe: Optional[Inner] = None
    ratio: float = 0.5
    flag: bool = False
    note: Optional[str] = None


@dataclasses.dataclass
class Cat:
    name: str
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    name: str
    kind: Literal["dog"] = "dog"


@dataclasses.dataclass
class Other:
    tags: set[str]
    extra: dict[str, int]
    at: Any


@dataclasses.dataclass
class Kennel:
    pets: list[Union[Cat, Dog]]


def sample_outer(i: int) -> Outer:
    shared = Inner("shared", Color.BLUE, Level.HIGH)
    return Outer(
        when=datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=-3))),
        day=date(2001, 2, 3),
        amount=Decimal("123.45"),
        blob=b"\x00\x01" * i,
        inner=Inner(f"in{i}", Color.RED, Level.LOW),
        inners=[shared, shared, Inner("x", Color.RED, Level.HIGH)],
        names=["a", "b", "a", f"n{i}"],
        maybe=Inner("m", Color.BLUE, Level.LOW) if i % 2 else None,
        ratio=i / 3,
        flag=bool(i % 2),
        note="é" * i,
    )


CASES: list[tuple[Any, Any]] = [
    (Outer, sample_outer(1)),
    (list[Outer], [sample_outer(i) for i in range(5)]),
    (Kennel, Kennel([Cat("tom"), Dog("rex"), Cat("felix")])),
    (list[int], [1, -1, 300, 70000, -(2**31)]),
    (Optional[datetime], datetime(2020, 1, 1)),
    (Optional[datetime], None),
    (list[str], []),
    # Ints past 32 bits (LONG1), dicts of typed values and untyped values of dicts and lists.
    (list[int], [2**31, -(2**31) - 1, 2**40, -(2**63), 2**63 - 1, 1_700_000_000_000]),
    (dict[str, int], {"a": 1, "b": 2**40, "c": -3}),
    (dict[str, int], {"only": 7}),
    (dict[str, int], {}),
    (dict[str, list[int]], {"x": [1, 2], "y": [], "z": [3]}),
    (list[dict[str, str]], [{"k": "v", "w": "x"}, {"k": "v2", "w": "x"}]),
    (dict[str, Any], {"n": None, "t": True, "i": 2**40, "f": 1.5, "s": "é", "l": [1, "a", None]}),
    (Any, {"user": {"id": 1, "roles": ["a", "b"]}, "items": [{"q": 1, "p": 2.5}, {"q": 2}]}),
    (list[Any], [[1, 2], {"a": [3, 4], "b": {"c": None, "d": False}}, "x", "x"]),
]
CASES += [
    (models.MODELS[name].list_type, models.generate(name, 20)) for name in models.TYPED_MODELS
]


def codecs(tp: Any, protocol: int = 5) -> tuple[Any, Any, Any]:
    return (
        polycodec.Codec(tp, "pickle", protocol=protocol),
        polycodec.Codec(tp, "pickle", protocol=protocol, fast_path="only"),
        polycodec.Codec(tp, "pickle", protocol=protocol, fast_path=False),
    )


@pytest.mark.parametrize("protocol", [3, 4, 5])
@pytest.mark.parametrize("tp,value", CASES)
def test_fast_and_general_paths_agree(tp: Any, value: Any, protocol: int) -> None:
    default, fast, general = codecs(tp, protocol)
    for payload in (default.encode_one(value), pickle.dumps(value, protocol=protocol)):
        from_fast = fast.decode_one(payload)
        assert from_fast == value
        assert general.decode_one(payload) == from_fast
        assert default.decode_one(payload) == from_fast


@pytest.mark.parametrize("protocol", [3, 4, 5])
def test_decode_many_takes_the_fast_path(protocol: int) -> None:
    values = [sample_outer(i) for i in range(4)]
    default, fast, general = codecs(Outer, protocol)
    for payload in (default.encode_many(values), pickle.dumps(values, protocol=protocol)):
        assert fast.decode_many(payload) == values
        assert general.decode_many(payload) == values


@dataclasses.dataclass(slots=True)
class Slotted:
    name: str
    when: datetime
    inner: Optional[Inner] = None
    kind: Literal["slotted"] = "slotted"


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("name", sorted(models.TYPED_MODELS))
def test_slots_records_take_the_fast_path(name: str, protocol: int) -> None:
    # A class with __slots__ and no __dict__ pickles its state as (None, {slot: value}), which
    # the fast path reads as it reads a plain dataclass's {field: value}.
    values = converter(SLOTS)(models.generate(name, 5))
    tp = list[SLOTS[models.MODELS[name].root]]  # type: ignore[misc]
    default, fast, general = codecs(tp, protocol)
    for payload in (default.encode_one(values), pickle.dumps(values, protocol=protocol)):
        assert fast.decode_one(payload) == values == general.decode_one(payload)
    one = Slotted("a", datetime(2020, 1, 1), Inner("i", Color.RED, Level.LOW))
    default, fast, general = codecs(list[Slotted], protocol)
    for payload in (default.encode_one([one, one]), pickle.dumps([one, one], protocol=protocol)):
        decoded = fast.decode_one(payload)
        assert decoded == [one, one] == general.decode_one(payload)
        assert decoded[0] is decoded[1]


def test_shared_objects_keep_their_identity_like_the_general_path() -> None:
    value = sample_outer(1)
    default, fast, general = codecs(Outer)
    for payload in (default.encode_one(value), pickle.dumps(value, protocol=5)):
        for codec in (fast, general):
            decoded = codec.decode_one(payload)
            assert decoded.inners[0] is decoded.inners[1]


def test_an_object_shared_across_plan_positions_falls_back() -> None:
    # The same Inner in a list and at an Optional position: two plan positions, for which the
    # general path builds two equal objects. The fast path leaves that to it.
    value = sample_outer(0)
    value.maybe = value.inners[0]
    default, fast, general = codecs(Outer)
    payload = pickle.dumps(value, protocol=5)
    with pytest.raises(polycodec.DecodeError, match="fast path"):
        fast.decode_one(payload)
    assert default.decode_one(payload) == value == general.decode_one(payload)


@pytest.mark.parametrize("tp,value", CASES)
def test_protocol_2_takes_the_fast_path(tp: Any, value: Any) -> None:
    # Protocol 2 pickles datetimes and dates as `_codecs.encode(text, "latin1")`.
    default, fast, general = codecs(tp, 2)
    for payload in (default.encode_one(value), pickle.dumps(value, protocol=2)):
        assert fast.decode_one(payload) == value == general.decode_one(payload)


def test_what_the_fast_path_does_not_read_falls_back() -> None:
    # A set, a dict and Any are left to the general path.
    value = Other({"a"}, {"b": 1}, 5)
    default, fast, general = codecs(Other)
    payload = pickle.dumps(value, protocol=5)
    with pytest.raises(polycodec.DecodeError, match="fast path"):
        fast.decode_one(payload)
    assert default.decode_one(payload) == value == general.decode_one(payload)


def errors_of(tp: Any, payload: bytes, **options: Any) -> tuple[str, str]:
    found = []
    for fast_path in (True, False):
        codec = polycodec.Codec(tp, "pickle", fast_path=fast_path, **options)
        with pytest.raises(polycodec.DecodeError) as info:
            codec.decode_one(payload)
        found.append((type(info.value).__name__, str(info.value)))
    assert found[0] == found[1]
    return found[0]


def short_str(text: str) -> bytes:
    data = text.encode()
    return b"\x8c" + bytes([len(data)]) + data


def inner_pickle(module: str, name: str, body: bytes = b"") -> bytes:
    state = b"}(" + short_str("name") + short_str("x") + body + b"ub"
    return b"\x80\x05" + short_str(module) + short_str(name) + b"\x93)\x81" + state + b"."


@pytest.mark.parametrize(
    "payload,message",
    [
        (inner_pickle("os", "system"), "os.system"),
        (inner_pickle("elsewhere", "Inner"), "elsewhere.Inner"),
        (inner_pickle(MODULE, "Inner") + b"N", "trailing"),
        (inner_pickle(MODULE, "Inner", short_str("color") + b"K\x01"), "color"),
        (inner_pickle(MODULE, "Inner", short_str("level") + short_str("low")), "level"),
    ],
)
def test_refusals_are_the_general_paths(payload: bytes, message: str) -> None:
    _, text = errors_of(Inner, payload)
    assert message in text


def test_unknown_fields_are_the_general_paths() -> None:
    payload = inner_pickle(MODULE, "Inner", short_str("extra") + b"K\x01")
    _, text = errors_of(Inner, payload, forbid_unknown_fields=True)
    assert "extra" in text


def test_a_cycle_through_the_memo_is_refused() -> None:
    # A list whose item is the list itself (memo 0 is the pending list).
    payload = b"\x80\x05]\x94h\x00a."
    kind, text = errors_of(list[list[Any]], payload)
    assert "recursive" in text


def test_fast_path_option_is_checked() -> None:
    with pytest.raises(ValueError, match="fast_path"):
        polycodec.Codec(Inner, "pickle", fast_path="sometimes")  # type: ignore[call-overload]


def outcome(codec: Any, payload: bytes) -> Any:
    try:
        return ("value", codec.decode_one(payload))
    except polycodec.DecodeError as exc:
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("tp,value", CASES)
def test_corrupted_pickles_get_the_general_paths_outcome(
    tp: Any, value: Any, protocol: int
) -> None:
    # Flipped, dropped and inserted bytes: whatever the fast path makes of the result, the
    # outcome (value, or error type and message) is the general path's.
    import random

    rng = random.Random(1234 + protocol)
    default, _, general = codecs(tp, protocol)
    originals = [default.encode_one(value), pickle.dumps(value, protocol=protocol)]
    for original in originals:
        for _ in range(150):
            data = bytearray(original)
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(data))
                action = rng.random()
                if action < 0.6:
                    data[at] = rng.randrange(256)
                elif action < 0.8:
                    del data[at]
                else:
                    data.insert(at, rng.randrange(256))
            payload = bytes(data)
            assert outcome(default, payload) == outcome(general, payload)


def test_a_truncated_frame_is_not_skipped() -> None:
    # FRAME needs 8 length bytes; a fast path that stepped past the opcode on failure would
    # have read this as an empty list.
    payload = b"\x80\x04]\x95."
    _, text = errors_of(list[str], payload)
    assert "truncated" in text


def edited(old: bytes, new: bytes, count: int = 1) -> bytes:
    payload: bytes = codecs(Outer)[0].encode_one(sample_outer(1))
    assert payload.count(old) >= count
    return payload.replace(old, new, count)


@pytest.mark.parametrize(
    "payload,message",
    [
        # Each standard class swapped for another global of the same module.
        (edited(b"\x8c\x07Decimal", b"\x8c\x07Context"), "decimal.Context"),
        (edited(b"\x8c\x04date\x93", b"\x8c\x04time\x93"), "datetime.time"),
        (edited(b"\x8c\x08datetime\x93", b"\x8c\x08datetime\x93", 1), ""),
        (edited(b"\x8c\x08timezone", b"\x8c\x08tzinfo\x00\x00"), "tzinfo"),
        (edited(b"\x8c\x05Color", b"\x8c\x05Level"), "expected"),
        (edited(b"\x8c\x05Outer", b"\x8c\x05Inner"), "Inner"),
        (edited(b"\x8c\x07decimal", b"\x8c\x07subproc"), "subproc.Decimal"),
        # The state of the root record (after its MEMOIZE) replaced by None.
        (edited(b")\x81\x94}(", b")\x81\x94N("), "malformed"),
        # An APPEND after the root record, with nothing to append to.
        (codecs(Inner)[0].encode_one(Inner("a", Color.RED, Level.LOW))[:-1] + b"a.", "underflow"),
    ],
)
def test_edited_pickles_are_refused_as_by_the_general_path(payload: bytes, message: str) -> None:
    tp = Inner if payload.endswith(b"a.") else Outer
    default, _, general = codecs(tp)
    if message == "":
        # A control: the unedited pickle decodes the same through both paths.
        assert default.decode_one(payload) == general.decode_one(payload)
        return
    _, text = errors_of(tp, payload)
    assert message in text


def test_a_record_that_contains_itself_is_refused() -> None:
    # SelfRef.child is the SelfRef being built: memo 1 is the pending instance.
    payload = (
        b"\x80\x05"
        + short_str(MODULE)
        + short_str("SelfRef")
        + b"\x93\x94)\x81\x94}("
        + short_str("child")
        + b"h\x01ub."
    )
    _, text = errors_of(SelfRef, payload)
    assert "recursive" in text


@dataclasses.dataclass
class SelfRef:
    child: Optional[SelfRef] = None


@dataclasses.dataclass
class _Owned:
    owner: UUID
    previous: Optional[UUID] = None


def test_uuids_take_the_fast_path_shared_or_not() -> None:
    # The gist's file system shares 30 creator UUIDs among 1,000 nodes: a UUID met again is a
    # memo get, at the same field or another UUID position (past Optional).
    shared = UUID(int=5)
    values = [
        _Owned(UUID(int=7), shared),
        _Owned(shared),
        _Owned(UUID(int=0)),
        _Owned(UUID(int=2**128 - 1), shared),
    ]
    only = polycodec.Codec(list[_Owned], "pickle", fast_path="only")
    for protocol in (2, 3, 4, 5):
        ours = polycodec.Codec(list[_Owned], "pickle", protocol=protocol).encode_one(values)
        for data in (ours, pickle.dumps(values, protocol=protocol)):
            decoded = only.decode_one(data)
            assert decoded == values
            assert decoded[0].previous is decoded[1].owner


# ---- issue 27, item 5: a user hook runs at most once per value, whatever fails ----

HOOK_CALLS: list[int] = []
NEST_CODEC: list[polycodec.Codec[Any]] = []
NEST_FAIL_AT = 16


@dataclasses.dataclass
class _Nest:
    """Its `__post_init__` decodes the next level from `payload`, and raises at the last."""

    level: int
    payload: bytes

    def __post_init__(self) -> None:
        if not NEST_CODEC:  # being built by the test, not decoded
            return
        HOOK_CALLS.append(self.level)
        if self.level == NEST_FAIL_AT:
            raise ValueError(f"level {self.level} refused")
        NEST_CODEC[0].decode_one(self.payload)


def _nest_pickle(depth: int) -> bytes:
    encoder = polycodec.Codec(_Nest, "pickle")
    payload = b""
    for level in range(depth, -1, -1):
        payload = encoder.encode_one(_Nest(level, payload))
    return payload


@pytest.mark.parametrize("fast_path", [True, "only", False])
def test_issue27_item5_post_init_that_decodes_runs_once_per_level(fast_path: Any) -> None:
    # Used to run 2**(D+2) - 2 times (262,142 at D = 16) on the default fast path: each level's
    # fast path gave up on the failure below it and the general path ran it all again.
    data = _nest_pickle(NEST_FAIL_AT)
    HOOK_CALLS.clear()
    NEST_CODEC[:] = [polycodec.Codec(_Nest, "pickle", fast_path=fast_path)]
    try:
        with pytest.raises(polycodec.ValidationError) as caught:
            NEST_CODEC[0].decode_one(data)
    finally:
        NEST_CODEC.clear()
    assert HOOK_CALLS == list(range(NEST_FAIL_AT + 1))
    innermost: BaseException = caught.value
    while innermost.__cause__ is not None:
        innermost = innermost.__cause__
    assert isinstance(innermost, ValueError) and str(innermost) == "level 16 refused"


@dataclasses.dataclass
class _Picky:
    name: str

    def __post_init__(self) -> None:
        HOOK_CALLS.append(len(HOOK_CALLS))
        if self.name == "bad":
            raise ValueError("bad name")
        if self.name == "key":
            raise KeyError("key name")


@dataclasses.dataclass
class _Holder:
    label: str
    items: list[_Picky]


def _holder_pickle(names: list[str], protocol: int) -> bytes:
    # Built with placeholder names of the same length, so no hook refuses while building.
    value = _Holder(
        "h", [_Picky(name.replace("bad", "bax").replace("key", "kex")) for name in names]
    )
    data = polycodec.Codec(_Holder, "pickle", protocol=protocol).encode_one(value)
    return data.replace(b"bax", b"bad").replace(b"kex", b"key")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_issue27_item5_fast_path_only_raises_what_the_general_path_raises(protocol: int) -> None:
    # With fast_path="only" a hook's ValueError came out as the fast path's DecodeError and its
    # KeyError was lost; now both come out as the general path raises them.
    only = polycodec.Codec(_Holder, "pickle", fast_path="only")
    general = polycodec.Codec(_Holder, "pickle", fast_path=False)
    bad = _holder_pickle(["ok", "fine", "bad"], protocol)
    errors = []
    for codec in (only, general):
        HOOK_CALLS.clear()
        with pytest.raises(polycodec.ValidationError) as caught:
            codec.decode_one(bad)
        assert len(HOOK_CALLS) == 3
        assert isinstance(caught.value.__cause__, ValueError)
        errors.append((str(caught.value), caught.value.path, caught.value.loc))
    assert errors[0] == errors[1]
    assert errors[0][1] == "$.items[2]"
    keyed = _holder_pickle(["key"], protocol)
    for codec in (only, general):
        HOOK_CALLS.clear()
        with pytest.raises(KeyError, match="key name"):
            codec.decode_one(keyed)
        assert len(HOOK_CALLS) == 1


def test_issue27_item5_hooks_run_once_when_the_fast_path_would_give_up() -> None:
    # An attribute the plan does not know makes the fast path give up after it built the items
    # before it; by default a plan with hooks is read by the general path alone, so each hook
    # runs once.
    items = [_Picky("a"), _Picky("b"), _Picky("c")]
    items[2].extra = 1  # type: ignore[attr-defined]
    data = pickle.dumps(_Holder("h", items), protocol=4)
    expected = _Holder("h", [_Picky("a"), _Picky("b"), _Picky("c")])
    for fast_path in (True, False):
        HOOK_CALLS.clear()
        decoded = polycodec.Codec(_Holder, "pickle", fast_path=fast_path).decode_one(data)
        assert len(HOOK_CALLS) == 3
        assert decoded == expected
    HOOK_CALLS.clear()
    with pytest.raises(polycodec.DecodeError, match="fast path does not recognise"):
        polycodec.Codec(_Holder, "pickle", fast_path="only").decode_one(data)
    assert len(HOOK_CALLS) == 2  # the items before the unknown attribute, once each
