"""Constraints from ``polycodec.Meta`` and annotated-types markers: each passes at its bound and
fails just beyond it, with a ValidationError located at the constrained value."""

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any

import annotated_types as at
import msgspec
import pydantic
import pytest

import polycodec
from json_models import PLUS_0530, assert_same

Meta = polycodec.Meta


@dataclass
class Case:
    id: str
    tp: Any
    good: list[Any]
    bad: list[Any]


CASES = [
    Case("int-ge", Annotated[int, Meta(ge=0)], [0, 10**30], [-1, -(10**30)]),
    Case("int-gt", Annotated[int, Meta(gt=0)], [1], [0, -5]),
    Case("int-le", Annotated[int, Meta(le=10)], [10, -(10**30)], [11, 10**30]),
    Case("int-lt", Annotated[int, Meta(lt=10)], [9], [10]),
    Case("int-range", Annotated[int, Meta(ge=-2, le=2)], [-2, 0, 2], [-3, 3]),
    Case("int-multiple", Annotated[int, Meta(multiple_of=3)], [0, -3, 9, 3 * 10**30], [1, -4]),
    Case("int-big-bound", Annotated[int, Meta(ge=2**70)], [2**70, 2**80], [2**70 - 1, 0]),
    Case("float-ge", Annotated[float, Meta(ge=0.5)], [0.5, 1e300], [0.49999, -1.0]),
    Case("float-gt", Annotated[float, Meta(gt=0)], [5e-324], [0.0, -0.0]),
    Case("float-le", Annotated[float, Meta(le=1.5)], [1.5], [1.5000001]),
    Case("float-lt", Annotated[float, Meta(lt=1)], [0.999], [1.0]),
    Case("float-multiple", Annotated[float, Meta(multiple_of=0.5)], [1.5, -2.0], [1.25]),
    Case("str-min", Annotated[str, Meta(min_length=2)], ["ab", "日本"], ["a", ""]),
    Case("str-max", Annotated[str, Meta(max_length=2)], ["ab", "😀😀", ""], ["abc", "日本語"]),
    Case("str-pattern", Annotated[str, Meta(pattern="^[a-z]+$")], ["abc"], ["ABC", "", "ab1"]),
    Case("str-pattern-search", Annotated[str, Meta(pattern="[0-9]")], ["a1b"], ["abc"]),
    Case("bytes-min", Annotated[bytes, Meta(min_length=1)], [b"x"], [b""]),
    Case("bytes-max", Annotated[bytes, Meta(max_length=2)], [b"xy"], [b"xyz"]),
    Case("list-min", Annotated[list[int], Meta(min_length=1)], [[1]], [[]]),
    Case("list-max", Annotated[list[int], Meta(max_length=1)], [[1]], [[1, 2]]),
    Case("set-max", Annotated[set[int], Meta(max_length=1)], [{1}], [{1, 2}]),
    Case("tuple-max", Annotated[tuple[int, ...], Meta(max_length=1)], [(1,)], [(1, 2)]),
    Case("dict-min", Annotated[dict[str, int], Meta(min_length=1)], [{"a": 1}], [{}]),
    Case("dict-max", Annotated[dict[str, int], Meta(max_length=1)], [{"a": 1}], [{"a": 1, "b": 2}]),
    Case(
        "decimal-ge",
        Annotated[Decimal, Meta(ge=Decimal("0.5"))],
        [Decimal("0.5")],
        [Decimal("0.49")],
    ),
    Case("decimal-lt", Annotated[Decimal, Meta(lt=1)], [Decimal("0.999")], [Decimal("1.000")]),
    Case(
        "decimal-max-digits",
        Annotated[Decimal, Meta(max_digits=4)],
        [Decimal("12.34"), Decimal("-9999")],
        [Decimal("123.45"), Decimal("10000")],
    ),
    Case(
        "decimal-places",
        Annotated[Decimal, Meta(decimal_places=2)],
        [Decimal("1.25"), Decimal("100")],
        [Decimal("1.255")],
    ),
    Case(
        "datetime-aware",
        Annotated[datetime.datetime, Meta(tz=True)],
        [datetime.datetime(2020, 1, 1, tzinfo=PLUS_0530)],
        [datetime.datetime(2020, 1, 1)],
    ),
    Case(
        "datetime-naive",
        Annotated[datetime.datetime, Meta(tz=False)],
        [datetime.datetime(2020, 1, 1)],
        [datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)],
    ),
    Case(
        "time-aware",
        Annotated[datetime.time, Meta(tz=True)],
        [datetime.time(1, tzinfo=datetime.timezone.utc)],
        [datetime.time(1)],
    ),
    Case(
        "time-naive",
        Annotated[datetime.time, Meta(tz=False)],
        [datetime.time(1)],
        [datetime.time(1, tzinfo=datetime.timezone.utc)],
    ),
    Case("at-ge", Annotated[int, at.Ge(0)], [0], [-1]),
    Case("at-gt", Annotated[int, at.Gt(0)], [1], [0]),
    Case("at-le", Annotated[float, at.Le(2.5)], [2.5], [2.6]),
    Case("at-lt", Annotated[float, at.Lt(2.5)], [2.4], [2.5]),
    Case("at-interval", Annotated[int, at.Interval(ge=1, lt=3)], [1, 2], [0, 3]),
    Case("at-multiple", Annotated[int, at.MultipleOf(5)], [10], [11]),
    Case("at-minlen", Annotated[str, at.MinLen(1)], ["a"], [""]),
    Case("at-maxlen", Annotated[list[str], at.MaxLen(2)], [["a", "b"]], [["a", "b", "c"]]),
    Case("at-len", Annotated[str, at.Len(1, 2)], ["a", "ab"], ["", "abc"]),
    Case("at-stacked", Annotated[int, at.Ge(0), at.Le(5)], [0, 5], [-1, 6]),
    Case("meta-and-at", Annotated[str, Meta(pattern="^a"), at.MaxLen(3)], ["abc"], ["bc", "abcd"]),
]


def _holder(tp: Any) -> Any:
    @dataclass
    class Holder:
        items: list[tp]  # type: ignore[valid-type]

    return Holder


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_within_bounds_round_trip(case: Case) -> None:
    codec = polycodec.Codec(case.tp)
    for value in case.good:
        assert_same(codec.decode_one(codec.encode_one(value)), value)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_values_beyond_bounds_fail(case: Case) -> None:
    holder = _holder(case.tp)
    codec = polycodec.Codec(holder)
    top = polycodec.Codec(case.tp)
    plain = polycodec.Codec(case.tp.__origin__)
    for value in case.bad:
        payload = plain.encode_one(value)
        with pytest.raises(polycodec.ValidationError) as info:
            top.decode_one(payload)
        assert info.value.path == "$"
        assert "$" in str(info.value)
        good = [plain.encode_one(v) for v in case.good]
        wrapped = b'{"items":[' + b",".join([*good, payload]) + b"]}"
        with pytest.raises(polycodec.ValidationError) as info:
            codec.decode_one(wrapped)
        path = f"$.items[{len(good)}]"
        assert info.value.path == path
        assert path in str(info.value)


def test_constraint_messages_are_specific() -> None:
    cases: list[tuple[Any, bytes, str]] = [
        (Annotated[int, Meta(ge=5)], b"4", "5"),
        (Annotated[int, Meta(lt=5)], b"5", "5"),
        (Annotated[str, Meta(max_length=3)], b'"abcd"', "3"),
        (Annotated[str, Meta(pattern="^x+$")], b'"y"', "^x+$"),
        (Annotated[int, Meta(multiple_of=7)], b"8", "7"),
    ]
    for tp, payload, fragment in cases:
        with pytest.raises(polycodec.ValidationError) as info:
            polycodec.decode_one(payload, tp)
        assert fragment in str(info.value), str(info.value)


def test_constraints_on_field_inside_nested_dict() -> None:
    @dataclass
    class Limits:
        by_name: dict[str, Annotated[int, Meta(ge=0)]]

    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"by_name": {"ok": 1, "bad": -1}}', Limits)
    assert info.value.path == '$.by_name["bad"]'
    assert info.value.path in str(info.value)


def test_constraints_do_not_leak_to_other_uses_of_the_type() -> None:
    @dataclass
    class Two:
        limited: Annotated[int, Meta(le=1)]
        free: int

    assert polycodec.decode_one(b'{"limited": 1, "free": 100}', Two) == Two(1, 100)
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"limited": 2, "free": 100}', Two)
    assert info.value.path == "$.limited"


def test_pattern_uses_search_semantics_and_unicode() -> None:
    tp = Annotated[str, Meta(pattern=r"\d")]
    assert polycodec.decode_one('"٣"'.encode(), tp) == "٣"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_length": -1},
        {"min_length": 3, "max_length": 2},
        {"ge": 1, "gt": 0},
        {"ge": 2, "le": 1},
        {"multiple_of": 0},
        {"pattern": "("},
        {"ge": float("nan")},
        {"max_digits": 0},
    ],
)
def test_invalid_meta_is_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Meta(**kwargs)


# msgspec.Meta against msgspec itself: the same annotation accepts and refuses the same JSON.
MSGSPEC_CASES = [
    (Annotated[int, msgspec.Meta(ge=1)], ["1", "0", "-5", "7"]),
    (Annotated[int, msgspec.Meta(gt=0, lt=10, multiple_of=3)], ["0", "3", "9", "10", "4"]),
    (Annotated[float, msgspec.Meta(le=1.5)], ["1.5", "1.5000001", "-3"]),
    (Annotated[str, msgspec.Meta(pattern="^[a-z]+$")], ['"abc"', '"ABC"', '""']),
    (Annotated[str, msgspec.Meta(pattern="[0-9]", max_length=3)], ['"a1"', '"abc"', '"a123"']),
    (Annotated[list[int], msgspec.Meta(min_length=1, description="d")], ["[]", "[1]"]),
    (Annotated[datetime.datetime, msgspec.Meta(tz=True)], ['"2020-01-01T00:00:00"']),
    (Annotated[datetime.datetime, msgspec.Meta(tz=False)], ['"2020-01-01T00:00:00Z"']),
    (Annotated[int, msgspec.Meta(title="only a title")], ["-1", "5"]),
]


@pytest.mark.parametrize("tp, payloads", MSGSPEC_CASES, ids=lambda v: repr(v)[:40])
def test_issue26_13_msgspec_meta_is_honoured(tp: Any, payloads: list[str]) -> None:
    """A user moving from msgspec keeps every check ``msgspec.Meta`` made: polycodec accepts
    exactly the payloads msgspec accepts, with the same values."""
    codec = polycodec.Codec(tp)
    refused = 0
    for payload in payloads:
        try:
            expected = msgspec.json.decode(payload, type=tp)
        except msgspec.ValidationError:
            refused += 1
            with pytest.raises(polycodec.ValidationError):
                codec.decode_one(payload)
        else:
            assert_same(codec.decode_one(payload), expected)
    assert refused or tp.__metadata__[0].title


@pytest.mark.parametrize(
    "marker, named",
    [
        (pydantic.Field(gt=0), "Gt(gt=0)"),
        (pydantic.Field(pattern="^a"), "pattern='^a'"),
        (pydantic.Field(alias="Value"), "alias='Value'"),
        (pydantic.Strict(), "Strict"),
        (pydantic.StringConstraints(pattern="^a"), "pattern='^a'"),
        (pydantic.AfterValidator(str.strip), "AfterValidator"),
        (pydantic.BeforeValidator(str.strip), "BeforeValidator"),
    ],
    ids=lambda v: repr(v)[:30],
)
def test_issue26_13_foreign_constraints_are_refused(marker: Any, named: str) -> None:
    """A marker whose checks polycodec does not run is refused when the codec is built, in
    every format, naming the field and what it carries, instead of being dropped silently."""

    @dataclass
    class Form:
        value: Annotated[str, marker]

    for fmt in ("json", "msgpack", "avro", "pickle"):
        with pytest.raises(TypeError) as info:
            polycodec.Codec(Form, fmt)
        assert "Form.value" in str(info.value) and named in str(info.value)


def test_issue26_13_descriptive_pydantic_field_is_ignored() -> None:
    @dataclass
    class Form:
        value: Annotated[int, pydantic.Field(description="how many")]

    assert polycodec.Codec(Form).decode_one(b'{"value": -3}') == Form(-3)
