"""`enum.Flag` / `enum.IntFlag`, `memoryview` annotations and MessagePack extension values
under `Any` (`polycodec.Ext`), with msgspec (and msgpack-python for extension bytes) as the
oracle in JSON and MessagePack, fastavro for Avro and the stdlib for pickle; and the errors
that name a pydantic `BaseModel` or a msgspec `Struct` given as a type."""

from __future__ import annotations

import dataclasses
import enum
import io
import pickle
from typing import Any, Optional, Union

import fastavro
import msgpack
import msgspec
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec
from polycodec import Codec


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


class Bits(enum.IntFlag):
    LOW = 1
    HIGH = 2


class Kept(enum.Flag, boundary=enum.KEEP):
    A = 1
    B = 2


class Ejected(enum.Flag, boundary=enum.EJECT):
    A = 1
    B = 2


class Conformed(enum.Flag, boundary=enum.CONFORM):
    A = 1
    B = 2


class Named(enum.Flag):
    A = 1
    B = 2
    BOTH = 3


FLAGS = [Perm, Bits, Kept, Ejected, Conformed, Named]


@dataclasses.dataclass
class Access:
    perm: Perm
    bits: Bits = Bits.LOW
    extra: Optional[Perm] = None


def _msgspec_decode(fmt: str, data: bytes, tp: Any) -> Any:
    if fmt == "json":
        return msgspec.json.decode(data, type=tp)
    return msgspec.msgpack.decode(data, type=tp)


def _msgspec_encode(fmt: str, value: Any) -> bytes:
    return msgspec.json.encode(value) if fmt == "json" else msgspec.msgpack.encode(value)


# ---- Flag ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("cls", FLAGS)
def test_flag_values_encode_as_msgspec_encodes_them(fmt: str, cls: Any) -> None:
    values = [cls(0), *cls, cls(3)]
    for value in values:
        assert polycodec.encode_one(value, fmt) == _msgspec_encode(fmt, value)
    assert polycodec.encode_one(values, fmt, type=list[cls]) == _msgspec_encode(fmt, values)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("cls", FLAGS)
@settings(max_examples=60, deadline=None)
@given(number=st.one_of(st.integers(-20, 20), st.integers(-(2**63), 2**64 - 1)))
def test_flag_decoding_accepts_and_refuses_what_msgspec_does(
    fmt: str, cls: Any, number: int
) -> None:
    data = _msgspec_encode(fmt, number)
    try:
        theirs = _msgspec_decode(fmt, data, cls)
    except msgspec.ValidationError:
        with pytest.raises(polycodec.ValidationError, match="invalid enum value"):
            polycodec.decode_one(data, cls, fmt)
        return
    ours = polycodec.decode_one(data, cls, fmt)
    assert ours == theirs and type(ours) is type(theirs)


def test_flag_errors_name_the_class_and_the_members() -> None:
    with pytest.raises(polycodec.ValidationError) as info:
        polycodec.decode_one(b'{"perm": 8}', Access)
    assert str(info.value) == (
        "invalid enum value 8 for Perm: expected one of 4, 2, 1, or a combination of them "
        "(at $.perm)"
    )
    with pytest.raises(polycodec.ValidationError, match='invalid enum value "4" for Perm'):
        polycodec.decode_one(b'{"perm": "4"}', Access)
    with pytest.raises(
        polycodec.EncodeError, match=r"expected a member of Perm, got 5 \(at \$.perm"
    ):
        polycodec.encode_one(Access(5), type=Access)  # type: ignore[arg-type]


def test_flag_as_dict_key_and_in_unions_as_msgspec() -> None:
    data = {Perm.R | Perm.W: 1, Perm.X: 2}
    for fmt in ["json", "msgpack"]:
        encoded = polycodec.encode_one(data, fmt, type=dict[Perm, int])
        assert encoded == _msgspec_encode(fmt, data)
        assert polycodec.decode_one(encoded, dict[Perm, int], fmt) == data
    tp = Union[Perm, str, None]
    assert polycodec.decode_one(b"6", tp) == msgspec.json.decode(b"6", type=tp)
    with pytest.raises(TypeError, match="ambiguous union"):
        Codec(Union[Perm, int])


def test_flag_fields_in_every_format(format: str) -> None:
    codec = Codec(Access, format)
    value = Access(Perm.R | Perm.X, Bits(8), Perm(0))
    assert codec.decode_one(codec.encode_one(value)) == value
    assert codec.decode_many(codec.encode_many([value, Access(Perm.W)])) == [
        value,
        Access(Perm.W),
    ]


def test_flag_in_avro_is_a_long() -> None:
    codec = Codec(Access, "avro")
    assert codec.schema["fields"] == [
        {"name": "perm", "type": "long"},
        {"name": "bits", "type": "long", "default": 1},
        {"name": "extra", "type": ["null", "long"], "default": None},
    ]
    value = Access(Perm.R | Perm.W, Bits.HIGH | Bits.LOW, Perm.X)
    container = codec.encode_many([value])
    assert list(fastavro.reader(io.BytesIO(container))) == [{"perm": 6, "bits": 3, "extra": 1}]
    out = io.BytesIO()
    fastavro.writer(out, codec.schema, [{"perm": 5, "bits": 8}])
    assert codec.decode_many(out.getvalue()) == [Access(Perm.R | Perm.X, Bits(8))]


def test_flag_pickles_are_the_stdlibs() -> None:
    codec = Codec(Access, "pickle")
    value = Access(Perm.R | Perm.W, Bits(8), Perm.X)
    assert pickle.loads(codec.encode_one(value)) == value
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert codec.decode_one(pickle.dumps(value, protocol)) == value
    # Perm.R's value 4 (BININT1) made 8, which no combination of Perm's members is.
    data = pickle.dumps(Access(Perm.R), 2).replace(b"K\x04", b"K\x08", 1)
    with pytest.raises(polycodec.ValidationError, match=r"invalid enum value for Perm.*\$.perm"):
        codec.decode_one(data)


def test_flag_builtins_and_json_schema_as_msgspec() -> None:
    value = Access(Perm.R | Perm.W, Bits(8), None)
    assert polycodec.to_builtins(value) == msgspec.to_builtins(value)
    data = {"perm": 3, "bits": 8}
    assert polycodec.from_builtins(data, Access) == msgspec.convert(data, Access)
    schema = polycodec.json_schema(Access)
    assert schema["$defs"]["Perm"] == {"title": "Perm", "type": "integer"}


# ---- memoryview ------------------------------------------------------------------------------


@dataclasses.dataclass
class Blob:
    view: memoryview
    maybe: Optional[memoryview] = None


def test_memoryview_fields_in_every_format(format: str) -> None:
    codec = Codec(Blob, format)
    value = Blob(memoryview(b"abc"), memoryview(bytearray(b"\x00\xff")))
    back = codec.decode_one(codec.encode_one(value))
    assert isinstance(back.view, memoryview) and isinstance(back.maybe, memoryview)
    assert back.view.readonly
    assert (back.view.tobytes(), back.maybe.tobytes()) == (b"abc", b"\x00\xff")


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_memoryview_bytes_and_values_as_msgspec(fmt: str) -> None:
    value = Blob(memoryview(b"payload"), None)
    data = polycodec.encode_one(value, fmt)
    assert data == _msgspec_encode(fmt, value)
    ours, theirs = polycodec.decode_one(data, Blob, fmt), _msgspec_decode(fmt, data, Blob)
    assert type(ours.view) is type(theirs.view) is memoryview
    assert ours.view.tobytes() == theirs.view.tobytes()


def test_memoryview_constraints_and_builtins() -> None:
    from typing import Annotated

    short = Annotated[memoryview, polycodec.Meta(max_length=2)]
    with pytest.raises(polycodec.ValidationError, match="expected length <= 2 bytes, got 3"):
        polycodec.decode_one(b'"YWJj"', short)
    value = polycodec.from_builtins("YWI=", memoryview)
    assert isinstance(value, memoryview) and value.tobytes() == b"ab"
    assert polycodec.to_builtins(memoryview(b"ab"), memoryview) == "YWI="
    assert polycodec.json_schema(memoryview) == polycodec.json_schema(bytes)


# ---- Ext -------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(code=st.integers(-128, 127), data=st.binary(max_size=300))
def test_ext_bytes_and_values_as_msgspec(code: int, data: bytes) -> None:
    ours = polycodec.encode_one([polycodec.Ext(code, data)], "msgpack", type=list[Any])
    assert ours == msgspec.msgpack.encode([msgspec.msgpack.Ext(code, data)])
    if code >= 0:
        assert ours == msgpack.packb([msgpack.ExtType(code, data)])
    if code == -1:
        return  # the timestamp extension: a datetime, or a malformed timestamp
    (value,) = polycodec.decode_one(ours, list[Any], "msgpack")
    assert value == polycodec.Ext(code, data) and type(value.data) is bytes
    (theirs,) = msgspec.msgpack.decode(ours)
    assert (value.code, value.data) == (theirs.code, theirs.data)


def test_ext_of_large_payloads_and_inside_containers() -> None:
    for size in [0, 1, 2, 4, 8, 16, 17, 255, 256, 65535, 65536, 70000]:
        value = {"x": [polycodec.Ext(9, b"z" * size)], "t": 1}
        data = polycodec.encode_one(value, "msgpack", type=dict)
        assert data == msgpack.packb({"x": [msgpack.ExtType(9, b"z" * size)], "t": 1})
        assert polycodec.decode_one(data, dict, "msgpack") == value
    for data in [bytearray(b"ab"), memoryview(b"ab")]:
        assert polycodec.encode_one(polycodec.Ext(1, data), "msgpack", type=Any) == b"\xd5\x01ab"


def test_ext_where_it_has_no_form() -> None:
    ext = polycodec.Ext(3, b"x")
    with pytest.raises(polycodec.EncodeError, match="Ext values are not supported"):
        polycodec.encode_one(ext, type=Any)
    with pytest.raises(polycodec.EncodeError, match="Ext values are not supported"):
        polycodec.to_builtins([ext], list[Any])
    with pytest.raises(TypeError, match="annotate the field Any"):
        Codec(Optional[polycodec.Ext], "msgpack")
    with pytest.raises(polycodec.ValidationError, match=r"expected int, got ext type 3 \(at \$\)"):
        polycodec.decode_one(b"\xd4\x03x", int, "msgpack")
    # An extension as a map key: an Ext has no hash, as msgspec's has none.
    with pytest.raises(polycodec.ValidationError, match="unhashable"):
        polycodec.decode_one(b"\x81\xd4\x03x\x01", Any, "msgpack")
    with pytest.raises(msgspec.DecodeError):
        msgspec.msgpack.decode(b"\x81\xd4\x03x\x01")


def test_ext_objects() -> None:
    ext = polycodec.Ext(-5, b"ab")
    assert (ext.code, ext.data) == (-5, b"ab")
    assert ext == polycodec.Ext(-5, bytearray(b"ab")) and ext != polycodec.Ext(5, b"ab")
    assert ext != (-5, b"ab")
    assert repr(ext) == "Ext(-5, b'ab')"
    assert pickle.loads(pickle.dumps(ext)) == ext
    assert pickle.loads(pickle.dumps(polycodec.Ext(1, memoryview(b"m")))) == polycodec.Ext(1, b"m")
    with pytest.raises(TypeError, match="unhashable"):
        hash(ext)
    for code, data, error in [
        (128, b"", ValueError),
        (-129, b"", ValueError),
        (True, b"", TypeError),
        ("1", b"", TypeError),
        (1, "text", TypeError),
    ]:
        with pytest.raises(error):
            polycodec.Ext(code, data)  # type: ignore[arg-type]


# ---- other libraries' classes ----------------------------------------------------------------


class Model(pydantic.BaseModel):
    name: str
    size: int


class Struct(msgspec.Struct):
    name: str


def test_a_pydantic_model_is_named_and_the_way_out_works() -> None:
    with pytest.raises(TypeError, match="'Model' within .*: it is a pydantic BaseModel") as info:
        Codec(list[Model])
    assert "declare it as a dataclass (or an attrs class)" in str(info.value)
    # The extension the message suggests.
    extensions = {
        Model: polycodec.Extension(
            dict[str, Any], encode=lambda m: m.model_dump(mode="json"), decode=Model.model_validate
        )
    }
    codec = Codec(list[Model], extensions=extensions)
    data = codec.encode_one([Model(name="a", size=1)])
    assert data == b'[{"name":"a","size":1}]'
    assert codec.decode_one(data) == [Model(name="a", size=1)]


def test_a_msgspec_struct_is_named() -> None:
    with pytest.raises(TypeError, match="'Struct': it is a msgspec Struct") as info:
        Codec(Struct, "msgpack")
    assert "polycodec.options(...) on the class (rename=, omit_defaults=" in str(info.value)
    assert "tag=, tag_field=" in str(info.value)


@pydantic.dataclasses.dataclass
class Checked:
    size: int

    @pydantic.field_validator("size")
    @classmethod
    def non_negative(cls, size: int) -> int:
        if size < 0:
            raise ValueError("size must be >= 0")
        return size


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_a_pydantic_dataclass_is_refused_rather_than_its_validators_skipped(fmt: str) -> None:
    # Read as a plain dataclass, `Checked(size=-1)` would decode without its validator running.
    with pytest.raises(TypeError, match="'Checked'.*: it is a pydantic dataclass") as info:
        Codec(dict[str, Checked], fmt)
    assert "move the checks into __post_init__" in str(info.value)
    # The extension the message suggests runs pydantic's validation on decode (Avro needs a
    # schema for every value, so there the dict's values are declared).
    form: Any = dict[str, int] if fmt == "avro" else dict[str, Any]
    extensions = {
        Checked: polycodec.Extension(form, encode=dataclasses.asdict, decode=lambda d: Checked(**d))
    }
    codec = Codec(Checked, fmt, extensions=extensions)
    assert codec.decode_one(codec.encode_one(Checked(size=3))) == Checked(size=3)
    bad = Codec(form, fmt).encode_one({"size": -1})
    with pytest.raises(polycodec.ValidationError, match="size must be >= 0"):
        codec.decode_one(bad)
