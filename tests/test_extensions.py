"""Custom types through every format (issue 14, case 15): ``extensions={cls: Extension(wire,
encode=, decode=)}`` with ``pathlib.Path``, ``ipaddress.IPv4Address`` and a user value class,
alone and inside lists, dicts and ``Optional``; errors from the hooks; the Avro schema; the
safe pickle reader; the module-level cache. Oracles: json, msgspec's enc_hook/dec_hook,
msgpack, fastavro, pickle."""

from __future__ import annotations

import dataclasses
import io
import ipaddress
import json
import pickle
from pathlib import Path, PosixPath, PurePosixPath
from typing import Any, Dict, List, Optional, Union

import fastavro
import msgpack
import msgspec
import pytest

import polycodec
from polycodec import Extension
from polycodec import _cache

FORMATS = ["json", "msgpack", "avro", "pickle"]


class Money:
    """A user value class: an amount in cents and a currency, written as "12.34 EUR"."""

    __slots__ = ("cents", "currency")

    def __init__(self, cents: int, currency: str) -> None:
        self.cents = cents
        self.currency = currency

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and (self.cents, self.currency) == (
            other.cents,
            other.currency,
        )

    def __repr__(self) -> str:
        return f"Money({self.cents}, {self.currency!r})"

    def to_text(self) -> str:
        return f"{self.cents // 100}.{self.cents % 100:02d} {self.currency}"

    @classmethod
    def parse(cls, text: str) -> "Money":
        amount, currency = text.split(" ")
        whole, cents = amount.split(".")
        if len(currency) != 3:
            raise ValueError(f"bad currency {currency!r}")
        return cls(int(whole) * 100 + int(cents), currency)


EXTENSIONS = {
    Path: Extension(str, encode=str, decode=Path),
    ipaddress.IPv4Address: Extension(int, encode=int, decode=ipaddress.IPv4Address),
    Money: Extension(str, encode=lambda money: money.to_text(), decode=Money.parse),
}


@dataclasses.dataclass
class Host:
    name: str
    address: ipaddress.IPv4Address
    root: Path
    mounts: List[Path]
    aliases: Dict[str, ipaddress.IPv4Address]
    price: Optional[Money] = None
    backup: Optional[Path] = None


HOST = Host(
    "db1",
    ipaddress.IPv4Address("10.0.0.7"),
    Path("/srv/db"),
    [Path("/mnt/a"), Path("/mnt/b c")],
    {"lan": ipaddress.IPv4Address("192.168.1.2")},
    Money(1234, "EUR"),
    None,
)

HOST_WIRE = {
    "name": "db1",
    "address": int(ipaddress.IPv4Address("10.0.0.7")),
    "root": "/srv/db",
    "mounts": ["/mnt/a", "/mnt/b c"],
    "aliases": {"lan": int(ipaddress.IPv4Address("192.168.1.2"))},
    "price": "12.34 EUR",
    "backup": None,
}


def _codec(tp: Any, fmt: str, **options: Any) -> polycodec.Codec[Any]:
    return polycodec.Codec(tp, fmt, extensions=EXTENSIONS, **options)


@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_types_round_trip_in_every_format(fmt: str) -> None:
    codec = _codec(Host, fmt)
    assert codec.decode_one(codec.encode_one(HOST)) == HOST
    other = dataclasses.replace(HOST, mounts=[], aliases={}, price=None, backup=Path("/b"))
    assert codec.decode_one(codec.encode_one(other)) == other
    assert codec.decode_many(codec.encode_many([HOST, other])) == [HOST, other]
    decoded = codec.decode_one(codec.encode_one(HOST))
    assert type(decoded.root) is type(Path("/"))
    assert type(decoded.address) is ipaddress.IPv4Address
    assert type(decoded.price) is Money


@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_types_at_the_root_and_in_containers(fmt: str) -> None:
    cases: List[Any] = [
        (Path, Path("/etc/hosts")),
        (List[ipaddress.IPv4Address], [ipaddress.IPv4Address("1.2.3.4")]),
        (Dict[str, Money], {"a": Money(5, "USD"), "b": Money(100, "JPY")}),
        (List[Optional[Path]], [Path("x"), None]),
        (Optional[Money], None),
        (Optional[Money], Money(1, "CHF")),
    ]
    for tp, value in cases:
        codec = _codec(tp, fmt)
        assert codec.decode_one(codec.encode_one(value)) == value


def test_custom_types_json_matches_json_and_msgspec_hooks() -> None:
    data = _codec(Host, "json").encode_one(HOST)
    assert json.loads(data) == HOST_WIRE

    def enc_hook(obj: Any) -> Any:
        if isinstance(obj, Path):
            return str(obj)
        if isinstance(obj, ipaddress.IPv4Address):
            return int(obj)
        if isinstance(obj, Money):
            return obj.to_text()
        raise NotImplementedError

    def dec_hook(tp: Any, obj: Any) -> Any:
        if tp is Path:
            return Path(obj)
        if tp is ipaddress.IPv4Address:
            return ipaddress.IPv4Address(obj)
        if tp is Money:
            return Money.parse(obj)
        raise NotImplementedError

    assert data == msgspec.json.encode(HOST, enc_hook=enc_hook)
    assert msgspec.json.decode(data, type=Host, dec_hook=dec_hook) == HOST
    assert _codec(Host, "json").decode_one(msgspec.json.encode(HOST, enc_hook=enc_hook)) == HOST


def test_custom_types_msgpack_matches_msgpack() -> None:
    data = _codec(Host, "msgpack").encode_one(HOST)
    assert msgpack.unpackb(data) == HOST_WIRE
    assert _codec(Host, "msgpack").decode_one(msgpack.packb(HOST_WIRE)) == HOST


def test_custom_types_avro_schema_shows_the_wire_type() -> None:
    codec = _codec(Host, "avro")
    fields = {f["name"]: f for f in codec.schema["fields"]}
    assert fields["address"]["type"] == "long"
    assert fields["root"]["type"] == "string"
    assert fields["mounts"]["type"] == {"type": "array", "items": "string"}
    assert fields["aliases"]["type"] == {"type": "map", "values": "long"}
    assert fields["price"]["type"] == ["null", "string"]
    assert fields["price"]["default"] is None
    assert fields["backup"]["type"] == ["null", "string"]
    # fastavro reads and writes the same bytes from the wire-form dict.
    data = codec.encode_one(HOST)
    parsed = fastavro.parse_schema(codec.schema)
    assert fastavro.schemaless_reader(io.BytesIO(data), parsed, None) == HOST_WIRE
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, HOST_WIRE)
    assert out.getvalue() == data
    container = codec.encode_many([HOST])
    assert list(fastavro.reader(io.BytesIO(container))) == [HOST_WIRE]


def test_custom_types_avro_default_is_the_encoded_default() -> None:
    @dataclasses.dataclass
    class Config:
        home: Path = Path("/var/data/x")
        gateway: ipaddress.IPv4Address = ipaddress.IPv4Address("10.0.0.1")

    codec = _codec(Config, "avro")
    fields = {f["name"]: f for f in codec.schema["fields"]}
    assert fields["home"] == {"name": "home", "type": "string", "default": "/var/data/x"}
    assert fields["gateway"]["default"] == int(ipaddress.IPv4Address("10.0.0.1"))
    # A writer that lacked the fields: the reader gets the class defaults.
    old = {"type": "record", "name": "Config", "fields": []}
    assert codec.decode_one(b"", writer_schema=old) == Config()


def test_custom_types_avro_schema_binding_and_evolution() -> None:
    @dataclasses.dataclass
    class Entry:
        path: Path
        size: int

    schema = {
        "type": "record",
        "name": "com.example.Entry",
        "fields": [{"name": "size", "type": "int"}, {"name": "path", "type": "string"}],
    }
    bound = _codec(Entry, "avro", schema=schema)
    data = bound.encode_one(Entry(Path("/a"), 3))
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), {"size": 3, "path": "/a"})
    assert data == out.getvalue()
    assert bound.decode_one(data) == Entry(Path("/a"), 3)
    # Read with the derived schema from data written with the foreign one (int -> long).
    derived = _codec(Entry, "avro")
    assert derived.decode_one(data, writer_schema=schema) == Entry(Path("/a"), 3)
    # A schema type the wire type cannot take is refused when the codec is built.
    wrong = {"type": "record", "name": "Entry", "fields": [{"name": "path", "type": "long"}]}
    with pytest.raises(TypeError, match="str cannot be written as Avro long"):
        _codec(Entry, "avro", schema=wrong)


def test_custom_types_avro_needs_a_concrete_wire_type() -> None:
    loose = {Path: Extension(encode=str, decode=Path)}  # wire type Any
    with pytest.raises(TypeError, match="Any has no Avro form"):
        polycodec.Codec(Path, "avro", extensions=loose)
    # The other formats take Any as the wire type.
    for fmt in ["json", "msgpack", "pickle"]:
        codec = polycodec.Codec(List[Path], fmt, extensions=loose)
        assert codec.decode_one(codec.encode_one([Path("a")])) == [Path("a")]


def test_custom_types_pickle_travel_as_their_wire_form() -> None:
    codec = _codec(Host, "pickle")
    data = codec.encode_one(HOST)
    # No class of an extension is named in the pickle: the safe reader imports nothing.
    assert b"pathlib" not in data and b"ipaddress" not in data and b"Money" not in data
    loaded = pickle.loads(data)
    assert isinstance(loaded, Host)
    assert dataclasses.asdict(loaded) == HOST_WIRE
    # Both readers (single-pass and general) decode it to the same values.
    for fast_path in (True, False):
        reader = _codec(Host, "pickle", fast_path=fast_path)
        assert reader.decode_one(data) == HOST
    # The single-pass reader takes extension values itself (it does not read dicts at all).
    values = [Money(5, "EUR"), None, Money(7, "USD")]
    only = _codec(List[Optional[Money]], "pickle", fast_path="only")
    assert only.decode_one(only.encode_one(values)) == values
    mixed = (ipaddress.IPv4Address("1.1.1.1"), Path("/a"))
    only_tuple = _codec(List[ipaddress.IPv4Address], "pickle", fast_path="only")
    assert only_tuple.decode_one(only_tuple.encode_one([mixed[0]])) == [mixed[0]]
    # A stdlib pickle of the real objects names pathlib: the position does not allow it.
    with pytest.raises(polycodec.DecodeError, match="pathlib"):
        _codec(Path, "pickle").decode_one(pickle.dumps(Path("/x")))


@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_types_errors_from_decode_hook(fmt: str) -> None:
    codec = _codec(Host, fmt)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(_raw(fmt, {**HOST_WIRE, "price": "1.00 EU"}))
    assert info.value.loc == ("price",)
    assert info.value.path == "$.price"
    assert "bad currency 'EU'" in str(info.value)
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(_raw(fmt, {**HOST_WIRE, "aliases": {"wan": -1}}))
    assert info.value.loc == ("aliases", "wan")
    assert isinstance(info.value.__cause__, ipaddress.AddressValueError)
    if fmt != "avro":  # Avro data has no types of its own to mismatch
        with pytest.raises(polycodec.ValidationError) as info:
            codec.decode_one(_raw(fmt, {**HOST_WIRE, "mounts": ["/a", 5]}))
        assert info.value.loc == ("mounts", 1)
        assert "expected str, got int" in str(info.value)


def _raw(fmt: str, wire: Dict[str, Any]) -> bytes:
    """Host's bytes with wire values the hooks (or the wire types) refuse, from the oracles."""
    if fmt == "json":
        return json.dumps(wire).encode()
    if fmt == "msgpack":
        return bytes(msgpack.packb(wire))
    if fmt == "avro":
        return _fastavro_datum(_codec(Host, "avro").schema, wire)
    return pickle.dumps(Host(**wire))


def _fastavro_datum(schema: Any, datum: Any) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(schema), datum)
    return out.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
def test_custom_types_errors_when_encoding(fmt: str) -> None:
    codec = _codec(Host, fmt)
    # A value of the wrong class.
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(dataclasses.replace(HOST, mounts=[Path("a"), "b"]))
    assert info.value.loc == ("mounts", 1)
    assert "expected Path, got str" in str(info.value)
    # The hook raises.
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_one(dataclasses.replace(HOST, price=_BrokenMoney(1, "EUR")))
    assert info.value.loc == ("price",)
    assert isinstance(info.value.__cause__, ValueError)
    # The hook returns something the wire type refuses.
    odd = polycodec.Codec(
        List[Path], fmt, extensions={Path: Extension(str, encode=lambda p: 7, decode=Path)}
    )
    with pytest.raises(polycodec.EncodeError, match=r"expected str, got int \(at \$\[0\]\)"):
        odd.encode_one([Path("a")])


class _BrokenMoney(Money):
    __slots__ = ()

    def to_text(self) -> str:
        raise ValueError("cannot format")


def test_custom_types_other_exceptions_pass_through() -> None:
    class Boom(Exception):
        pass

    def explode(value: Any) -> Any:
        raise Boom("no")

    codec = polycodec.Codec(
        List[Path], extensions={Path: Extension(str, encode=explode, decode=explode)}
    )
    with pytest.raises(Boom):
        codec.encode_one([Path("a")])
    with pytest.raises(Boom):
        codec.decode_one(b'["a"]')


def test_custom_types_subclasses_and_bases() -> None:
    # A value of a subclass is encoded; an annotation of a subclass finds its base's entry.
    codec = _codec(PosixPath, "json")
    assert codec.encode_one(PosixPath("/a")) == b'"/a"'
    assert codec.decode_one(b'"/a"') == Path("/a")  # decode decides the class it returns
    assert _codec(Path, "json").encode_one(PosixPath("/b")) == b'"/b"'
    with pytest.raises(polycodec.EncodeError, match="expected Path, got PurePosixPath"):
        _codec(Path, "json").encode_one(PurePosixPath("/b"))


def test_custom_types_refused_where_they_cannot_work() -> None:
    with pytest.raises(TypeError, match="only be combined with None"):
        _codec(Union[Path, int, None], "json")
    with pytest.raises(TypeError, match="dict keys"):
        _codec(Dict[Path, int], "json")
    cyclic = {Money: Extension(Money, encode=lambda m: m, decode=lambda m: m)}
    with pytest.raises(TypeError, match="refers back to it"):
        polycodec.Codec(Money, extensions=cyclic)
    with pytest.raises(TypeError, match="unsupported type"):
        polycodec.Codec(Path)  # without an extension, as before
    with pytest.raises(TypeError, match="mapping"):
        polycodec.Codec(Path, extensions=[Extension(str, encode=str, decode=Path)])
    with pytest.raises(TypeError, match="keys must be classes"):
        polycodec.Codec(Path, extensions={"Path": Extension(str, encode=str, decode=Path)})
    with pytest.raises(TypeError, match="must be a polycodec.Extension"):
        polycodec.Codec(Path, extensions={Path: (str, str, Path)})
    with pytest.raises(TypeError, match="callable"):
        Extension(str, encode="str", decode=Path)  # type: ignore[arg-type]


def test_custom_types_extension_value_is_immutable_and_hashable() -> None:
    a = Extension(str, encode=str, decode=Path)
    assert a == Extension(str, encode=str, decode=Path)
    assert hash(a) == hash(Extension(str, encode=str, decode=Path))
    assert a != Extension(str, encode=repr, decode=Path)
    with pytest.raises(AttributeError):
        a.wire = int  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(a)) == a
    assert "Extension(str" in repr(a)


def test_custom_types_module_level_cache() -> None:
    polycodec.encode_one(HOST, extensions=EXTENSIONS)
    size = len(_cache._codecs)
    first = _cache.codec_for(Host, "json", {"extensions": EXTENSIONS})
    again = _cache.codec_for(Host, "json", {"extensions": dict(reversed(EXTENSIONS.items()))})
    assert len(_cache._codecs) == size
    assert first is again
    assert polycodec.decode_one(b'"/x"', Path, extensions=EXTENSIONS) == Path("/x")
    assert polycodec.encode_many([Path("/x")], extensions=EXTENSIONS) == b'["/x"]'


def test_custom_types_codec_repr_and_pickle() -> None:
    codec = polycodec.Codec(Path, "msgpack", extensions={Path: EXTENSIONS[Path]})
    assert "extensions=" in repr(codec)
    assert "extensions" not in repr(polycodec.Codec(int))
    copy = pickle.loads(pickle.dumps(codec))
    assert copy.decode_one(copy.encode_one(Path("/p"))) == Path("/p")


# --- the plan spec (docs/plan-spec.md) ---------------------------------------------------------


def test_custom_types_plan_spec_extension_node() -> None:
    from polycodec._plan import compile_spec

    nodes, root = compile_spec(Path, extensions=EXTENSIONS)
    kind, data = nodes[root]
    assert kind == "extension"
    assert set(data) == {"cls", "name", "wire", "encode", "decode", "nullable"}
    assert data["cls"] is Path and data["name"] == "Path" and data["nullable"] is False
    assert data["encode"] is str and data["decode"] is Path
    assert nodes[data["wire"]][0] == "str"
    assert len(nodes) == 2

    # Optional[cls]: one nullable extension node over Optional[wire], never a union variant.
    nodes, root = compile_spec(Optional[Path], extensions=EXTENSIONS)
    kind, data = nodes[root]
    assert kind == "extension" and data["nullable"] is True
    wire_kind, wire_data = nodes[data["wire"]]
    assert wire_kind == "union"
    assert sorted(nodes[v][0] for v in wire_data["variants"]) == ["none", "str"]
    assert len(nodes) == 4  # unreachable copies are compacted away

    # A wire type that is itself Optional: the None alternatives merge.
    maybe = {Path: Extension(Optional[str], encode=str, decode=Path)}
    nodes, root = compile_spec(Optional[Path], extensions=maybe)
    wire_kind, wire_data = nodes[nodes[root][1]["wire"]]
    assert sorted(nodes[v][0] for v in wire_data["variants"]) == ["none", "str"]

    # The wire type may be any compiled type, a dataclass included.
    @dataclasses.dataclass
    class Parts:
        drive: str
        parts: List[str]

    as_record = {
        Path: Extension(
            Parts, encode=lambda p: Parts(p.drive, list(p.parts)), decode=lambda r: Path(*r.parts)
        )
    }
    nodes, root = compile_spec(List[Path], extensions=as_record)
    item = nodes[nodes[root][1]["item"]]
    assert item[0] == "extension" and nodes[item[1]["wire"]][0] == "dataclass"
    for fmt in FORMATS:
        codec = polycodec.Codec(List[Path], fmt, extensions=as_record)
        value = [Path("/a/b"), Path("c")]
        assert codec.decode_one(codec.encode_one(value)) == value
    assert polycodec.Codec(Path, extensions=as_record).encode_one(Path("/a")) == (
        b'{"drive":"","parts":["/","a"]}'
    )


def test_custom_types_can_replace_a_builtin_form() -> None:
    import datetime

    epoch = {
        datetime.datetime: Extension(
            float,
            encode=lambda d: d.timestamp(),
            decode=lambda t: datetime.datetime.fromtimestamp(t, datetime.timezone.utc),
        )
    }
    moment = datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
    for fmt in FORMATS:
        codec = polycodec.Codec(datetime.datetime, fmt, extensions=epoch)
        assert codec.decode_one(codec.encode_one(moment)) == moment
    assert polycodec.Codec(datetime.datetime, extensions=epoch).encode_one(moment) == (
        b"1714566600.0"
    )
    assert polycodec.Codec(datetime.datetime, "avro", extensions=epoch).schema == "double"
