"""Avro with the general Codec options and the record kinds: rename, init=False, __post_init__,
frozen and slotted dataclasses, NamedTuple and TypedDict, constraints, module-level calls."""

from __future__ import annotations

import dataclasses
import threading
from typing import Annotated, List, NamedTuple, Optional, TypedDict

import pytest

import polycodec
from polycodec import Meta
from test_avro_support import fastavro_read, fastavro_write


@dataclasses.dataclass
class Account:
    user_name: str
    login_count: int = 0


def test_rename_sets_avro_field_names() -> None:
    codec = polycodec.Codec(Account, "avro", rename="camel")
    assert [f["name"] for f in codec.schema["fields"]] == ["userName", "loginCount"]
    data = codec.encode_one(Account("ann", 3))
    assert fastavro_read(codec.schema, data) == {"userName": "ann", "loginCount": 3}
    assert codec.decode_one(data) == Account("ann", 3)


def test_rename_to_invalid_avro_names_is_refused() -> None:
    with pytest.raises(TypeError, match="not a valid Avro field name"):
        polycodec.Codec(Account, "avro", rename="kebab")


def test_general_options_that_do_not_apply_are_accepted() -> None:
    for options in [{"omit_defaults": True}, {"array_like": True}, {"strict": False}]:
        codec = polycodec.Codec(Account, "avro", **options)  # type: ignore[arg-type]
        assert codec.decode_one(codec.encode_one(Account("a"))) == Account("a")
        assert codec.encode_one(Account("a")) == b"\x02a\x00"


@dataclasses.dataclass
class Derived:
    base: int
    doubled: int = dataclasses.field(init=False, default=0)
    seen: List[str] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.doubled = self.base * 2


def test_init_false_and_post_init() -> None:
    codec = polycodec.Codec(Derived, "avro")
    assert [f["name"] for f in codec.schema["fields"]] == ["base", "seen"]
    value = codec.decode_one(codec.encode_one(Derived(21)))
    assert value.doubled == 42 and value == Derived(21)


@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    x: float
    y: float
    label: Optional[str] = None


def test_frozen_slotted_dataclass() -> None:
    codec = polycodec.Codec(List[Point], "avro")
    value = [Point(1.0, 2.0), Point(-1.5, 0.0, "o")]
    assert codec.decode_one(codec.encode_one(value)) == value
    assert codec.decode_many(codec.encode_many([value, []])) == [value, []]


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Movie(TypedDict):
    title: str
    year: int


def test_namedtuple_and_typeddict_resolution() -> None:
    writer = {"type": "record", "name": "Pair", "fields": [{"name": "left", "type": "int"}]}
    codec = polycodec.Codec(Pair, "avro")
    assert codec.decode_one(fastavro_write(writer, {"left": 4}), writer_schema=writer) == Pair(4)
    movie = polycodec.Codec(Movie, "avro")
    data = movie.encode_one({"title": "x", "year": 1})
    assert movie.decode_one(data) == {"title": "x", "year": 1}
    with pytest.raises(polycodec.EncodeError, match="missing key `year`"):
        movie.encode_one({"title": "x"})  # type: ignore[typeddict-item]


@dataclasses.dataclass
class Limited:
    port: Annotated[int, Meta(ge=1, le=65535)]
    name: Annotated[str, Meta(max_length=3)]


def test_constraints_are_checked_when_decoding() -> None:
    codec = polycodec.Codec(Limited, "avro")
    assert codec.decode_one(codec.encode_one(Limited(80, "web"))) == Limited(80, "web")
    with pytest.raises(polycodec.ValidationError) as info:
        codec.decode_one(codec.encode_one(Limited(0, "web")))
    assert info.value.path == "$.port"
    with pytest.raises(polycodec.ValidationError, match="length"):
        codec.decode_one(codec.encode_one(Limited(1, "toolong")))


def test_module_level_functions_with_avro_options() -> None:
    writer = {
        "type": "record",
        "name": "Account",
        "fields": [{"name": "user_name", "type": "string"}],
    }
    data = fastavro_write(writer, {"user_name": "z"})
    assert polycodec.decode_one(data, Account, "avro", writer_schema=writer) == Account("z")
    framed = polycodec.encode_one(Account("q"), "avro", framing="confluent", schema_id=9)
    assert framed[:5] == b"\x00\x00\x00\x00\x09"
    assert polycodec.decode_one(framed, Account, "avro", framing="confluent", schema_id=9) == (
        Account("q")
    )
    blob = polycodec.encode_many([Account("a")], "avro", compression="deflate")
    assert polycodec.decode_many(blob, Account, "avro") == [Account("a")]


def test_writer_schema_for_other_formats_is_refused() -> None:
    with pytest.raises(TypeError, match="writer_schema"):
        polycodec.Codec(Account).decode_one(b"{}", writer_schema={"type": "long"})


def test_codec_is_shared_between_threads() -> None:
    codec = polycodec.Codec(Account, "avro")
    writer = {"type": "record", "name": "A", "fields": [{"name": "user_name", "type": "string"}]}
    data = fastavro_write(writer, {"user_name": "t"})
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in range(300):
                blob = codec.encode_many([Account(str(i), i)])
                assert codec.decode_many(blob) == [Account(str(i), i)]
                assert codec.decode_one(data, writer_schema=writer) == Account("t")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_root_union_schema_binding() -> None:
    codec = polycodec.Codec(Optional[int], "avro", schema='["null", "int"]')
    assert codec.encode_one(5) == b"\x02\x0a"
    assert codec.decode_one(b"\x00") is None
    assert codec.schema == ["null", "int"]
