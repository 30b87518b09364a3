"""Every type of the catalogue (tests/catalogue.py) through every format, against its oracles.

Each (entry, format) runs in five shapes: the value at the top level, as a field of a dataclass
(after another field), inside a ``list[T]``, as a sequence through ``encode_many``, and as the
field of each record through ``encode_many`` (an Avro container of records). A supported
value round-trips and its oracle reads polycodec's bytes and writes bytes polycodec reads; a
refused type is refused when the codec compiles, with the entry's message; an unencodable value
raises ``EncodeError`` with the entry's message.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import pickle
import sys
import typing
from pathlib import Path
from typing import Any, Callable

import msgpack
import msgspec
import pytest

import polycodec
from catalogue import DEFAULTS, DERIVED, ENTRIES, SAME, SHAPES, UNTAGGED, Entry, Refused
from catalogue import Unencodable, Wire
from json_models import assert_same
from polycodec._polycodec import FORMATS
from test_avro_support import (
    avro_container,
    avro_read,
    avro_records,
    avro_write,
    fastavro_container,
    fastavro_read,
    fastavro_records,
    fastavro_write,
    normalise,
    plain,
)

PICKLE_PROTOCOLS = [2, 3, 4, 5]


def _holder(index: int, tp: Any) -> type:
    """A dataclass holding the entry's value after another field, importable by name (pickle
    finds classes through their module)."""
    name = f"Holder{index}"
    cls = dataclasses.make_dataclass(name, [("before", int), ("value", tp)])
    cls.__module__ = __name__
    setattr(sys.modules[__name__], name, cls)
    return cls


HOLDERS = {entry.id: _holder(i, entry.tp) for i, entry in enumerate(ENTRIES)}


@dataclasses.dataclass
class Case:
    """One entry in one shape: the type, the value and the expected wire/decoded forms."""

    tp: Any
    value: Any
    wire: Any
    decoded: Any
    many: bool = False


def _case(entry: Entry, expect: Wire, shape: str) -> Case:
    wire = expect.wire
    decoded = entry.value if expect.decoded is SAME else expect.decoded
    if shape == "top":
        return Case(entry.tp, entry.value, wire, decoded)
    if shape in ("field", "field-many"):
        holder = HOLDERS[entry.id]
        field_wire = wire if wire is DERIVED else {"before": 0, "value": wire}
        if shape == "field":
            return Case(holder, holder(0, entry.value), field_wire, holder(0, decoded))
        return Case(
            holder,
            [holder(0, entry.value), holder(1, entry.value)],
            field_wire if wire is DERIVED else [field_wire, {"before": 1, "value": wire}],
            [holder(0, decoded), holder(1, decoded)],
            many=True,
        )
    pair_wire = wire if wire is DERIVED else [wire, wire]
    if shape == "list":
        return Case(list[entry.tp], [entry.value] * 2, pair_wire, [decoded] * 2)  # type: ignore[name-defined]
    return Case(entry.tp, [entry.value] * 2, pair_wire, [decoded] * 2, many=True)


def _encode(codec: Any, case: Case) -> bytes:
    out = codec.encode_many(case.value) if case.many else codec.encode_one(case.value)
    assert isinstance(out, bytes)
    return bytes(out)


def _decode(codec: Any, case: Case, data: Any) -> Any:
    return codec.decode_many(data) if case.many else codec.decode_one(data)


def check_json(case: Case, expect: Wire) -> None:
    codec = polycodec.Codec(case.tp, "json")
    out = _encode(codec, case)
    assert_same(json.loads(out), case.wire)
    assert_same(_decode(codec, case, out), case.decoded)
    assert_same(_decode(codec, case, json.dumps(case.wire, indent=2)), case.decoded)
    assert_same(
        _decode(codec, case, json.dumps(case.wire, ensure_ascii=False).encode()), case.decoded
    )
    if expect.msgspec:
        tp = list[case.tp] if case.many else case.tp  # type: ignore[name-defined]
        assert_same(msgspec.json.decode(out, type=tp), case.decoded)
        theirs = msgspec.json.encode(case.value)
        assert_same(_decode(codec, case, theirs), case.decoded)
        if expect.same_bytes:
            assert out == theirs


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, timestamp=3, strict_map_key=False)


def check_msgpack(case: Case, expect: Wire) -> None:
    codec = polycodec.Codec(case.tp, "msgpack")
    out = _encode(codec, case)
    assert_same(_unpack(out), case.wire)
    assert_same(_decode(codec, case, out), case.decoded)
    assert_same(_decode(codec, case, msgpack.packb(case.wire, datetime=True)), case.decoded)
    if expect.msgspec:
        tp = list[case.tp] if case.many else case.tp  # type: ignore[name-defined]
        assert_same(msgspec.msgpack.decode(out, type=tp), case.decoded)
        theirs = msgspec.msgpack.encode(case.value)
        assert_same(_decode(codec, case, theirs), case.decoded)
        if expect.same_bytes:
            assert out == theirs


def _avro_datum(case: Case, flavor: str) -> Any:
    if case.wire is DERIVED:
        return plain(case.value, flavor)
    return plain(case.wire, flavor)


def check_avro(case: Case, expect: Wire) -> None:
    codec = polycodec.Codec(case.tp, "avro")
    schema = codec.schema
    out = _encode(codec, case)
    assert_same(_decode(codec, case, out), case.decoded)
    datum = _avro_datum(case, "fastavro")
    if case.many:
        # An object container file, which both libraries read and write.
        assert normalise(fastavro_records(out)) == normalise(datum)
        if expect.oracle_writes:
            assert_same(_decode(codec, case, fastavro_container(schema, datum)), case.decoded)
        if expect.apache:
            apache = _avro_datum(case, "avro")
            assert normalise(avro_records(out)) == normalise(apache)
            if expect.oracle_writes:
                theirs = avro_container(schema, apache)
                assert_same(_decode(codec, case, theirs), case.decoded)
        return
    assert normalise(fastavro_read(schema, out)) == normalise(datum)
    if not expect.oracle_writes:
        return
    theirs = fastavro_write(schema, datum)
    assert theirs == out
    assert_same(_decode(codec, case, theirs), case.decoded)
    if expect.apache:
        apache = _avro_datum(case, "avro")
        assert normalise(avro_read(schema, out)) == normalise(apache)
        assert avro_write(schema, apache) == out


def check_pickle(case: Case, expect: Wire) -> None:
    for protocol in PICKLE_PROTOCOLS:
        codec = polycodec.Codec(case.tp, "pickle", protocol=protocol)
        out = _encode(codec, case)
        wire = case.value if case.wire is DERIVED else case.wire
        assert_same(pickle.loads(out), wire)
        theirs = pickle.dumps(wire, protocol=protocol)
        assert len(out) <= len(theirs), (protocol, len(out), len(theirs))
        assert_same(_decode(codec, case, out), case.decoded)
        assert_same(_decode(codec, case, theirs), case.decoded)


#: Each format's oracle check; a new format adds its own here and a column in catalogue.DEFAULTS.
ORACLES: dict[str, Callable[[Case, Wire], None]] = {
    "json": check_json,
    "msgpack": check_msgpack,
    "avro": check_avro,
    "pickle": check_pickle,
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("entry", ENTRIES, ids=[entry.id for entry in ENTRIES])
def test_type(entry: Entry, format: str, shape: str) -> None:
    expect = entry.expect(format, shape)
    if isinstance(expect, Refused):
        tp = HOLDERS[entry.id] if shape.startswith("field") else entry.tp
        with pytest.raises(expect.error, match=expect.match):
            polycodec.Codec(list[tp] if shape == "list" else tp, format)  # type: ignore[valid-type]
        return
    if isinstance(expect, Unencodable):
        case = _case(entry, Wire(wire=None), shape)
        codec = polycodec.Codec(case.tp, format)
        with pytest.raises(polycodec.EncodeError, match=expect.match):
            _encode(codec, case)
        return
    ORACLES[format](_case(entry, expect, shape), expect)


def test_every_format_has_an_oracle_and_defaults() -> None:
    assert list(ORACLES) == list(FORMATS)
    assert list(DEFAULTS) == list(FORMATS)


def test_entry_ids_are_unique() -> None:
    ids = [entry.id for entry in ENTRIES]
    assert len(ids) == len(set(ids))


def _stub_format_names() -> tuple[str, ...]:
    stub = Path(polycodec.__file__).with_name("_polycodec.pyi")
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [
            t.id for t in node.targets if isinstance(t, ast.Name)
        ] == ["Format"]:
            assert isinstance(node.value, ast.Subscript)
            elements = node.value.slice
            assert isinstance(elements, ast.Tuple)
            return tuple(ast.literal_eval(e) for e in elements.elts)
    raise AssertionError("the stub declares no Format")


def test_format_names_agree_everywhere() -> None:
    # The extension's list is the source; the stub's static Literal and the runtime
    # polycodec._api.Format must name the same formats in the same order.
    names = tuple(FORMATS)
    assert names == _stub_format_names()
    assert typing.get_args(polycodec._api.Format) == names
    with pytest.raises(ValueError, match=", ".join(f'"{name}"' for name in names)):
        polycodec.Codec(int, "no-such-format")  # type: ignore[call-overload]


def test_format_capabilities() -> None:
    for name, capabilities in FORMATS.items():
        assert dict(capabilities) == {
            "unions_need_tag": name in ("json", "msgpack"),
            "keeps_raw": name in ("json", "msgpack"),
        }
    # The catalogue's untagged unions of records are refused exactly where tags are needed.
    untagged = [entry for entry in ENTRIES if entry.id.startswith("union-untagged-records")]
    assert untagged
    for entry in untagged:
        for name, capabilities in FORMATS.items():
            refused = entry.expect(name, "top") == UNTAGGED
            assert refused == capabilities["unions_need_tag"], (entry.id, name)
    with pytest.raises(TypeError):
        FORMATS["json"] = {}  # type: ignore[index]
