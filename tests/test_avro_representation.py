"""Per-field Avro representations set on the annotation (issue 39 item 1): `Avro("int")`,
`Avro("float")`, the millisecond and local timestamps, `time-millis`, decimals as bytes, fixed
or string, UUIDs as a 16-byte fixed, bytes as a fixed, field docs and enum defaults.

Each is checked against fastavro and apache avro both ways (they read what polycodec writes,
polycodec reads what they write, byte for byte the same), a value that does not fit the
narrower type is an EncodeError at its path, and three hand-written `.avsc` schemas
(tests/data/avsc/) are derived back exactly from classes written to match them."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import io
import json
import uuid
from pathlib import Path
from typing import Annotated, Any, ClassVar, Dict, List, Literal, Optional

import fastavro
import pytest

import polycodec
from polycodec import Avro, AvroName, Meta
from test_avro_support import avro_read, avro_write, fastavro_read, fastavro_write

AVSC = Path(__file__).resolve().parent / "data" / "avsc"
UTC = datetime.timezone.utc


def _avsc(name: str) -> Any:
    return json.loads((AVSC / name).read_text())


# -- payments: decimals as a named fixed, used twice; an enum default; docs --------------------


class Currency(enum.Enum):
    __avro__: ClassVar[AvroName] = {"namespace": "com.acme.payments", "default": "OTHER"}
    EUR = "eur"
    USD = "usd"
    GBP = "gbp"
    OTHER = "other"


Money = Annotated[
    decimal.Decimal, Meta(max_digits=18, decimal_places=2), Avro("fixed", size=8, name="Money")
]


@dataclasses.dataclass
class Payment:
    __avro__: ClassVar[AvroName] = {
        "namespace": "com.acme.payments",
        "doc": "A card payment as the payments service emits it.",
    }
    payment_id: uuid.UUID
    merchant_id: Annotated[int, Avro("int", doc="The merchant's account number.")]
    amount: Money
    currency: Currency
    fee: Money
    created_at: Annotated[
        datetime.datetime, Avro("timestamp-millis", doc="When the card was charged, in UTC.")
    ]
    settled_on: Optional[datetime.date] = None
    risk_score: Annotated[float, Avro("float")] = 0.0
    attempts: Annotated[int, Avro("int")] = 1
    note: Annotated[Optional[str], Avro(doc="Free text from the merchant.")] = None
    labels: Dict[str, str] = dataclasses.field(default_factory=dict)


# -- page views: a UUID as a 16-byte fixed, local timestamps, a nested record with a doc -------


@dataclasses.dataclass
class Device:
    __avro__: ClassVar[AvroName] = {
        "namespace": "com.acme.web",
        "doc": "What the page was viewed on.",
    }
    os: str
    version: Optional[str] = None
    screen_width: Annotated[int, Avro("int")] = 0


SessionId = Annotated[uuid.UUID, Avro("fixed", name="SessionId")]


@dataclasses.dataclass
class PageView:
    __avro__: ClassVar[AvroName] = {"namespace": "com.acme.web"}
    user_id: int
    session: SessionId
    url: str
    duration_ms: Annotated[int, Avro("int")]
    scroll_depth: Annotated[float, Avro("float")]
    viewed_at: datetime.datetime
    local_time: Annotated[datetime.datetime, Meta(tz=False), Avro("local-timestamp-millis")]
    device: Device
    referrer: Optional[str] = None
    tags: List[str] = dataclasses.field(default_factory=list)
    previous: Optional[SessionId] = None


# -- telemetry: 32-bit floats, time-millis, a Flag as an int, bytes as a fixed -----------------


class Alert(enum.Enum):
    __avro__: ClassVar[AvroName] = {
        "namespace": "io.sensors",
        "doc": "Conditions the sensor reports.",
        "default": "UNKNOWN",
    }
    LOW_BATTERY = 1
    OVERHEAT = 2
    TAMPER = 3
    UNKNOWN = 0


class SensorFlag(enum.IntFlag):
    CALIBRATED = 1
    HEATED = 2


@dataclasses.dataclass
class GeoPoint:
    __avro__: ClassVar[AvroName] = {"namespace": "io.sensors"}
    lat: float
    lon: float


@dataclasses.dataclass
class Reading:
    __avro__: ClassVar[AvroName] = {
        "namespace": "io.sensors",
        "doc": "One sample of a field sensor.",
    }
    sensor: str
    value: float
    temperature: Annotated[float, Avro("float", doc="Degrees Celsius, 32-bit.")]
    sampled_at: Annotated[datetime.time, Avro("time-millis")]
    day: datetime.date
    battery: Annotated[int, Avro("int")]
    firmware: Annotated[bytes, Avro("fixed", size=4, name="FirmwareHash")]
    precision: Annotated[decimal.Decimal, Meta(max_digits=6, decimal_places=3)]
    flags: Annotated[SensorFlag, Avro("int")] = SensorFlag(0)
    location: Optional[GeoPoint] = None
    alerts: List[Alert] = dataclasses.field(default_factory=list)


# Field order in the class differs from the file where defaults must come last in a dataclass;
# the schema's order is the file's, so each class is bound in declaration order and compared
# field by field in the file's order.
SCHEMAS = [
    ("payment.avsc", Payment),
    ("pageview.avsc", PageView),
    ("telemetry.avsc", Reading),
]


def _reorder(schema: Dict[str, Any], like: Dict[str, Any]) -> Dict[str, Any]:
    """``schema`` with its record fields in the order of ``like``'s (the file's)."""
    order = [f["name"] for f in like["fields"]]
    fields = sorted(schema["fields"], key=lambda f: order.index(f["name"]))
    return dict(schema, fields=fields)


@pytest.mark.parametrize("file, cls", SCHEMAS, ids=[s[0] for s in SCHEMAS])
def test_hand_written_schemas_are_derived_back_exactly(file: str, cls: type) -> None:
    written = _avsc(file)
    derived = polycodec.Codec(cls, "avro").schema
    assert _reorder(derived, written) == written
    # The file's own field order binds too, and writes what fastavro writes for it.
    assert polycodec.Codec(cls, "avro", schema=written).schema == written


PAYMENT = Payment(
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    2**31 - 1,
    decimal.Decimal("1234567890123456.78"),
    Currency.GBP,
    decimal.Decimal("-0.05"),
    datetime.datetime(2024, 3, 1, 12, 30, 15, 123000, tzinfo=UTC),
    datetime.date(2024, 3, 4),
    0.5,
    3,
    "ok",
    {"channel": "pos"},
)
PAGEVIEW = PageView(
    -(2**60),
    uuid.UUID(int=2**128 - 1),
    "https://example.com/a",
    -(2**31),
    0.75,
    datetime.datetime(2024, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
    datetime.datetime(2024, 1, 1, 1, 2, 3, 4000),
    Device("linux", "6.1", 1920),
    "https://example.com/",
    ["a", "b"],
    uuid.UUID(int=7),
)
READING = Reading(
    "s-1",
    1e300,
    -40.5,
    datetime.time(23, 59, 59, 999000),
    datetime.date(1969, 12, 31),
    87,
    b"\x00\xff\x10\x01",
    decimal.Decimal("-999.999"),
    SensorFlag.CALIBRATED | SensorFlag.HEATED,
    GeoPoint(51.5, -0.12),
    [Alert.OVERHEAT, Alert.UNKNOWN],
)


def _fastavro_form(schema: Any, value: Any) -> Any:
    """What fastavro's writer takes for ``value``: dicts, enum names, fixed UUIDs as bytes."""
    out = {}
    for field in schema["fields"]:
        item = getattr(value, field["name"])
        out[field["name"]] = _fastavro_item(item)
    return out


def _fastavro_item(item: Any) -> Any:
    if isinstance(item, enum.Flag):
        return int(item)
    if isinstance(item, enum.Enum):
        return item.name
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return {f.name: _fastavro_item(getattr(item, f.name)) for f in dataclasses.fields(item)}
    if isinstance(item, list):
        return [_fastavro_item(i) for i in item]
    return item


@pytest.mark.parametrize(
    "file, value",
    [("payment.avsc", PAYMENT), ("pageview.avsc", PAGEVIEW), ("telemetry.avsc", READING)],
    ids=["payment", "pageview", "telemetry"],
)
def test_values_written_and_read_as_fastavro_does(file: str, value: Any) -> None:
    schema = _avsc(file)
    # Bound to the file, whose field order the dataclass cannot always follow (defaults last).
    codec = polycodec.Codec(type(value), "avro", schema=schema)
    data = codec.encode_one(value)
    assert codec.decode_one(data) == value
    read = fastavro_read(schema, data)
    for field in schema["fields"]:
        expected = _fastavro_item(getattr(value, field["name"]))
        found = read[field["name"]]
        if isinstance(expected, uuid.UUID) and isinstance(found, bytes):
            found = uuid.UUID(bytes=found)  # fastavro reads a uuid fixed as its bytes
        if isinstance(expected, dict) and isinstance(found, dict):
            found = {
                k: (uuid.UUID(bytes=v) if isinstance(v, bytes) else v) for k, v in found.items()
            }
        if field["name"] == "local_time":
            expected = value.local_time  # fastavro gives a naive datetime for local millis
        assert found == expected, field["name"]
    # fastavro's writer, given the same values (a uuid fixed as its 16 bytes), writes the
    # same bytes, which polycodec reads.
    form = _fastavro_form(schema, value)
    for name, item in list(form.items()):
        if isinstance(item, uuid.UUID) and _is_fixed(schema, name):
            form[name] = item.bytes
    if file == "pageview.avsc":
        form["local_time"] = (
            value.local_time - datetime.datetime(1970, 1, 1)
        ) // datetime.timedelta(
            milliseconds=1
        )  # fastavro would shift a naive datetime by the machine's time zone
    theirs = fastavro_write(schema, form)
    assert theirs == data
    assert codec.decode_one(theirs) == value


def _is_fixed(schema: Any, name: str) -> bool:
    field = next(f for f in schema["fields"] if f["name"] == name)
    kind = field["type"]
    branches = kind if isinstance(kind, list) else [kind]
    return any(
        (isinstance(b, dict) and b.get("type") == "fixed") or b == "com.acme.web.SessionId"
        for b in branches
    )


def test_apache_avro_reads_and_writes_the_payment() -> None:
    schema = _avsc("payment.avsc")
    codec = polycodec.Codec(Payment, "avro")
    data = codec.encode_one(PAYMENT)
    read = avro_read(schema, data)
    assert read["amount"] == PAYMENT.amount and read["fee"] == PAYMENT.fee
    assert read["merchant_id"] == 2**31 - 1 and read["currency"] == "GBP"
    assert read["created_at"] == PAYMENT.created_at
    assert abs(read["risk_score"] - 0.5) < 1e-9
    datum = dict(read)
    assert codec.decode_one(avro_write(schema, datum)) == PAYMENT


def test_apache_avro_reads_and_writes_the_reading() -> None:
    schema = _avsc("telemetry.avsc")
    codec = polycodec.Codec(Reading, "avro", schema=schema)
    data = codec.encode_one(READING)
    read = avro_read(schema, data)
    assert read["firmware"] == READING.firmware and read["flags"] == 3
    assert read["sampled_at"] == READING.sampled_at and read["battery"] == 87
    assert read["alerts"] == ["OVERHEAT", "UNKNOWN"]
    assert codec.decode_one(avro_write(schema, read)) == READING


def test_an_unknown_symbol_reads_as_the_enum_default() -> None:
    """The reason an enum needs a default: a newer writer's symbol this reader lacks."""
    writer = dict(_avsc("telemetry.avsc"))
    newer = {
        "type": "enum",
        "name": "Alert",
        "namespace": "io.sensors",
        "symbols": ["LOW_BATTERY", "OVERHEAT", "TAMPER", "UNKNOWN", "FLOOD"],
    }
    writer["fields"] = [
        dict(f, type={"type": "array", "items": newer}) if f["name"] == "alerts" else f
        for f in writer["fields"]
    ]
    form = _fastavro_form(_avsc("telemetry.avsc"), READING)
    form["alerts"] = ["FLOOD", "TAMPER"]
    data = fastavro_write(writer, form)
    codec = polycodec.Codec(Reading, "avro", schema=_avsc("telemetry.avsc"))
    read = codec.decode_one(data, writer_schema=writer)
    assert read.alerts == [Alert.UNKNOWN, Alert.TAMPER]
    # fastavro, reading with the derived schema, agrees.
    their = fastavro.schemaless_reader(
        io.BytesIO(data), fastavro.parse_schema(writer), fastavro.parse_schema(codec.schema)
    )
    assert their["alerts"] == ["UNKNOWN", "TAMPER"]


# -- each representation alone, and the narrowing checks -------------------------------------


@dataclasses.dataclass
class Narrow:
    count: Annotated[int, Avro("int")]
    ratio: Annotated[float, Avro("float")]
    flags: Annotated[SensorFlag, Avro("int")]
    level: Annotated[Literal[1, 2, 3], Avro("int")]
    at: Annotated[datetime.datetime, Avro("timestamp-millis")]
    clock: Annotated[datetime.time, Avro("time-millis")]
    price: Annotated[
        decimal.Decimal, Meta(max_digits=5, decimal_places=2), Avro("fixed", name="Price")
    ]
    label: Annotated[decimal.Decimal, Meta(max_digits=5, decimal_places=2), Avro("string")]
    code: Annotated[bytes, Avro("fixed", size=2, name="Code")]
    ident: Annotated[uuid.UUID, Avro("fixed", name="Ident")]


NARROW = Narrow(
    -(2**31),
    3.5,
    SensorFlag.HEATED,
    2,
    datetime.datetime(2000, 1, 1, tzinfo=UTC),
    datetime.time(1, 2, 3),
    decimal.Decimal("-123.45"),
    decimal.Decimal("1.50"),
    b"ab",
    uuid.UUID(int=5),
)


def test_each_representation_derives_its_schema() -> None:
    fields = {f["name"]: f["type"] for f in polycodec.Codec(Narrow, "avro").schema["fields"]}
    assert fields == {
        "count": "int",
        "ratio": "float",
        "flags": "int",
        "level": "int",
        "at": {"type": "long", "logicalType": "timestamp-millis"},
        "clock": {"type": "int", "logicalType": "time-millis"},
        # The fewest bytes that hold 5 digits.
        "price": {
            "type": "fixed",
            "name": "Price",
            "size": 3,
            "logicalType": "decimal",
            "precision": 5,
            "scale": 2,
        },
        "label": "string",
        "code": {"type": "fixed", "name": "Code", "size": 2},
        "ident": {"type": "fixed", "name": "Ident", "size": 16, "logicalType": "uuid"},
    }


def test_each_representation_both_ways_with_fastavro_and_apache_avro() -> None:
    codec = polycodec.Codec(Narrow, "avro")
    schema = codec.schema
    data = codec.encode_one(NARROW)
    assert codec.decode_one(data) == NARROW
    form = {
        "count": NARROW.count,
        "ratio": NARROW.ratio,
        "flags": int(NARROW.flags),
        "level": NARROW.level,
        "at": NARROW.at,
        "clock": NARROW.clock,
        "price": NARROW.price,
        "label": str(NARROW.label),
        "code": NARROW.code,
        "ident": NARROW.ident.bytes,
    }
    assert fastavro_write(schema, form) == data
    read = fastavro_read(schema, data)
    assert read == dict(form, ident=NARROW.ident.bytes)
    apache = avro_read(schema, data)
    assert apache["price"] == NARROW.price and apache["count"] == NARROW.count
    apache_form = dict(form, at=NARROW.at)
    assert avro_write(schema, apache_form) == data


@pytest.mark.parametrize(
    "change, path, words",
    [
        ({"count": 2**31}, "$.count", "out of range for an Avro int (32 bits)"),
        ({"count": -(2**31) - 1}, "$.count", "out of range for an Avro int (32 bits)"),
        ({"ratio": 1e39}, "$.ratio", "out of range for an Avro float (32 bits)"),
        ({"ratio": -1e-50}, "$.ratio", "out of range for an Avro float (32 bits)"),
        ({"flags": SensorFlag(2**31)}, "$.flags", "out of range for an Avro int (32 bits)"),
        ({"price": decimal.Decimal("1234.5")}, "$.price", "digits"),
        ({"price": decimal.Decimal("1.234")}, "$.price", "decimal places"),
        ({"code": b"abc"}, "$.code", "exactly 2 bytes"),
    ],
)
def test_a_value_that_does_not_fit_the_narrower_type_is_refused(
    change: Dict[str, Any], path: str, words: str
) -> None:
    codec = polycodec.Codec(Narrow, "avro")
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(dataclasses.replace(NARROW, **change))
    assert info.value.path == path
    assert words in str(info.value)


def test_floats_in_range_nan_and_infinities_are_written() -> None:
    codec = polycodec.Codec(Narrow, "avro")
    for ratio in (3.4028234663852886e38, -1.401298464324817e-45, 0.0, -0.0):
        value = dataclasses.replace(NARROW, ratio=ratio)
        assert codec.decode_one(codec.encode_one(value)).ratio == ratio
    for ratio in (float("inf"), float("-inf")):
        assert (
            codec.decode_one(codec.encode_one(dataclasses.replace(NARROW, ratio=ratio))).ratio
            == ratio
        )
    nan = codec.decode_one(codec.encode_one(dataclasses.replace(NARROW, ratio=float("nan"))))
    assert nan.ratio != nan.ratio


def test_the_annotation_must_agree_with_a_schema_given() -> None:
    @dataclasses.dataclass
    class Counter:
        n: Annotated[int, Avro("int")]

    with pytest.raises(TypeError, match=r"annotated Avro\('int'\), the schema has long"):
        polycodec.Codec(
            Counter,
            "avro",
            schema={"type": "record", "name": "C", "fields": [{"name": "n", "type": "long"}]},
        )
    bound = polycodec.Codec(
        Counter,
        "avro",
        schema={"type": "record", "name": "C", "fields": [{"name": "n", "type": "int"}]},
    )
    assert bound.encode_one(Counter(5)) == b"\x0a"


@pytest.mark.parametrize(
    "annotation, words",
    [
        (Annotated[str, Avro("int")], "applies only to"),
        (Annotated[datetime.datetime, Avro("local-timestamp-millis")], "Meta(tz=False)"),
        (
            Annotated[datetime.datetime, Meta(tz=False), Avro("timestamp-millis")],
            "the type is naive",
        ),
        (Annotated[decimal.Decimal, Avro("bytes")], "Meta(max_digits"),
        (Annotated[bytes, Avro("fixed", name="B")], "needs size="),
        (
            Annotated[
                decimal.Decimal,
                Meta(max_digits=10, decimal_places=2),
                Avro("fixed", size=2, name="D"),
            ],
            "holds at most 4 digits",
        ),
        (Annotated[Currency, Avro("int")], "enum.Flag only"),
        (Annotated[Literal["a"], Avro("int")], "Literal of ints only"),
    ],
)
def test_representations_a_type_cannot_take_are_refused(annotation: Any, words: str) -> None:
    box = dataclasses.make_dataclass("Box", [("v", annotation)])
    with pytest.raises(TypeError) as info:
        polycodec.Codec(box, "avro")
    assert words in str(info.value)


def test_two_fixed_types_of_one_name_are_refused() -> None:
    @dataclasses.dataclass
    class Clash:
        a: Annotated[bytes, Avro("fixed", size=2, name="Same")]
        b: Annotated[bytes, Avro("fixed", size=3, name="Same")]

    with pytest.raises(TypeError, match="already the name of another type"):
        polycodec.Codec(Clash, "avro")


def test_the_marker_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="not one of"):
        Avro("int32")
    with pytest.raises(ValueError, match="needs name="):
        Avro("fixed", size=4)
    with pytest.raises(ValueError, match="size applies to type='fixed' only"):
        Avro("bytes", size=4)
    with pytest.raises(ValueError, match="not a valid Avro name"):
        Avro("fixed", size=4, name="1x")
    with pytest.raises(TypeError, match="doc must be a str"):
        Avro(doc=3)  # type: ignore[arg-type]
    marker = Avro("fixed", size=4, name="x.Y", doc="d")
    assert marker == Avro("fixed", size=4, name="x.Y", doc="d") and hash(marker)
    assert repr(marker) == "Avro('fixed', size=4, name='x.Y', doc='d')"
    import pickle

    assert pickle.loads(pickle.dumps(marker)) == marker
    with pytest.raises(AttributeError):
        marker.type = "int"  # type: ignore[misc]


def test_other_formats_ignore_the_representation() -> None:
    value = NARROW
    for fmt in ("json", "msgpack", "pickle"):
        codec = polycodec.Codec(Narrow, fmt)
        assert codec.decode_one(codec.encode_one(value)) == value


class Bad(enum.Enum):
    __avro__ = {"default": "NOPE"}
    A = 1


@dataclasses.dataclass
class Holder:
    bad: Bad


def test_enum_default_must_be_a_member_name() -> None:
    with pytest.raises(TypeError, match="enum default 'NOPE'"):
        polycodec.Codec(Holder, "avro")


LOCAL = datetime.datetime(2024, 2, 29, 23, 59, 58, 123456)
AWARE = datetime.datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
EPOCH_MICROS = (LOCAL - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1)
CLOCK = datetime.time(23, 59, 58, 123456)
CLOCK_MICROS = ((23 * 60 + 59) * 60 + 58) * 1_000_000 + 123456
Price = Annotated[decimal.Decimal, Meta(max_digits=9, decimal_places=3)]


@pytest.mark.parametrize(
    "annotation, avro_type, value, their_form",
    [
        (Annotated[int, Avro("long")], "long", 2**40, 2**40),
        (Annotated[float, Avro("double")], "double", 1e300, 1e300),
        (
            Annotated[datetime.datetime, Avro("timestamp-micros")],
            {"type": "long", "logicalType": "timestamp-micros"},
            AWARE,
            AWARE,
        ),
        (
            Annotated[datetime.datetime, Meta(tz=False), Avro("local-timestamp-micros")],
            {"type": "long", "logicalType": "local-timestamp-micros"},
            LOCAL,
            # As a number: fastavro would shift a naive datetime by the machine's time zone.
            EPOCH_MICROS,
        ),
        (
            Annotated[datetime.time, Avro("time-micros")],
            {"type": "long", "logicalType": "time-micros"},
            CLOCK,
            CLOCK,
        ),
        (
            Annotated[decimal.Decimal, Meta(max_digits=9, decimal_places=3), Avro("bytes")],
            {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 3},
            decimal.Decimal("-123456.789"),
            decimal.Decimal("-123456.789"),
        ),
        (
            Annotated[uuid.UUID, Avro("string")],
            {"type": "string", "logicalType": "uuid"},
            uuid.UUID(int=2**128 - 3),
            str(uuid.UUID(int=2**128 - 3)),  # apache avro writes a uuid from its text
        ),
    ],
    ids=["long", "double", "ts-micros", "local-ts-micros", "time-micros", "dec-bytes", "uuid-str"],
)
def test_the_wider_forms_chosen_explicitly_match_fastavro_and_apache_avro(
    annotation: Any, avro_type: Any, value: Any, their_form: Any
) -> None:
    One = dataclasses.make_dataclass("One", [("x", annotation)])
    codec = polycodec.Codec(One, "avro")
    schema = codec.schema
    assert schema["fields"] == [{"name": "x", "type": avro_type}]
    data = codec.encode_one(One(value))
    assert codec.decode_one(data) == One(value)
    assert fastavro_write(schema, {"x": their_form}) == data
    read = fastavro_read(schema, data)["x"]
    if isinstance(read, datetime.datetime) and read.tzinfo is None:
        assert read == LOCAL
    else:
        assert read in (value, str(value))
    assert codec.decode_one(avro_write(schema, {"x": their_form})) == One(value)
    assert avro_read(schema, data)["x"] in (value, str(value), their_form)
