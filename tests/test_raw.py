"""``polycodec.Raw``: a value kept as its encoded bytes, undecoded, and written back as they are
(msgspec's ``Raw``), in JSON and MessagePack. msgspec is the oracle: from the same input its Raw
holds the same bytes, and a value holding them encodes to the same output. A decoded Raw refers
to the input ``bytes`` (no copy); Avro and pickle refuse Raw when the codec is built."""

from __future__ import annotations

import dataclasses
import gc
import json
import pickle
from typing import Any, Optional, Union

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polycodec
from polycodec import Raw

PEERS = {"json": msgspec.json, "msgpack": msgspec.msgpack}


@dataclasses.dataclass
class Envelope:
    kind: str
    payload: Raw
    extra: Optional[Raw] = None


@dataclasses.dataclass
class MEnvelope:
    """msgspec's twin (without ``extra``: msgspec reads ``Optional[Raw]`` as None alone)."""

    kind: str
    payload: msgspec.Raw


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


def _spaced_json(value: Any) -> bytes:
    """JSON text with the spacing json.dumps writes, which a Raw keeps as it is."""
    return json.dumps(value, indent=1).encode()


@settings(max_examples=300, deadline=None)
@given(json_values, json_values, st.sampled_from(list(PEERS)))
def test_same_bytes_as_msgspec_raw(payload: Any, extra: Any, fmt: str) -> None:
    peer = PEERS[fmt]
    if fmt == "json":
        data = b'{"kind":"k","payload":%s,"extra": %s }' % (
            _spaced_json(payload),
            _spaced_json(extra),
        )
    else:
        data = msgspec.msgpack.encode({"kind": "k", "payload": payload, "extra": extra})
    codec = polycodec.Codec(Envelope, fmt)
    ours = codec.decode_one(data)
    theirs = peer.decode(data, type=MEnvelope)
    assert bytes(ours.payload) == bytes(theirs.payload)
    if extra is None:
        assert ours.extra is None
    else:
        assert bytes(ours.extra) == (_spaced_json(extra) if fmt == "json" else peer.encode(extra))
    written = {"kind": "k", "payload": theirs.payload, "extra": None}
    if extra is not None:
        written["extra"] = msgspec.Raw(bytes(ours.extra))
    assert codec.encode_one(ours) == peer.encode(written)
    assert peer.decode(bytes(ours.payload)) == payload


def test_a_view_of_the_input_without_a_copy() -> None:
    data = b'{"kind":"k","payload":[1, 2, 3]}'
    codec = polycodec.Codec(Envelope)
    value = codec.decode_one(data)
    view = value.payload.view()
    assert view.obj is data and bytes(view) == b"[1, 2, 3]"
    # decode_many too, and nested values.
    outer = b"[[" + data + b"]]"
    many = polycodec.Codec(list[Envelope]).decode_many(outer)
    assert many[0][0].payload.view().obj is outer
    # The Raw keeps its input alive.
    value = codec.decode_one(bytes(data))
    gc.collect()
    assert bytes(value.payload) == b"[1, 2, 3]"
    # Mutable input is copied: the Raw must not change with it.
    mutable = bytearray(data)
    value = codec.decode_one(mutable)
    mutable[24] = ord("9")
    assert bytes(value.payload) == b"[1, 2, 3]"
    assert value.payload.view().obj is not mutable
    # copy() drops the input: a Raw of bytes of its own.
    big = b'{"kind":"k","payload":1,"pad":"' + b"x" * 10000 + b'"}'
    copied = codec.decode_one(big).payload.copy()
    assert copied.view().obj == b"1"


def test_a_raw_as_the_input_and_as_the_root() -> None:
    codec = polycodec.Codec(Envelope)
    outer = codec.decode_one(b'{"kind":"outer","payload":{"kind":"inner","payload":[true]}}')
    inner = codec.decode_one(outer.payload)
    assert inner.kind == "inner" and bytes(inner.payload) == b"[true]"
    assert polycodec.decode_one(b" [1,2] ", Raw) == Raw(b"[1,2]")
    assert polycodec.encode_one(Raw(b"[1,2]")) == b"[1,2]"
    assert polycodec.decode_one(b'{"a": {"b": 1}}', dict[str, Raw]) == {"a": Raw(b'{"b": 1}')}
    assert polycodec.decode_one(b"[1, null]", list[Optional[Raw]]) == [Raw(b"1"), None]


def test_written_as_it_is() -> None:
    # As msgspec, the bytes are not checked when encoding: they are the owner's.
    value = Envelope("k", Raw(b"not json"))
    assert polycodec.encode_one(value) == msgspec.json.encode(
        {"kind": "k", "payload": msgspec.Raw(b"not json"), "extra": None}
    )
    msgpack = polycodec.Codec(Envelope, "msgpack")
    assert msgpack.encode_one(Envelope("k", Raw(b"\xc3"))) == msgspec.msgpack.encode(
        {"kind": "k", "payload": msgspec.Raw(b"\xc3"), "extra": None}
    )
    with pytest.raises(polycodec.EncodeError, match="expected Raw, got dict") as info:
        polycodec.encode_one(Envelope("k", {"a": 1}))  # type: ignore[arg-type]
    assert info.value.path == "$.payload"


@pytest.mark.parametrize("fmt", list(PEERS))
def test_malformed_input_in_a_raw(fmt: str) -> None:
    codec = polycodec.Codec(Envelope, fmt)
    data = (
        b'{"kind":"k","payload":[1,}' if fmt == "json" else b"\x82\xa4kind\xa1k\xa7payload\x92\x01"
    )
    with pytest.raises(polycodec.DecodeError) as info:
        codec.decode_one(data)
    assert info.value.path == "$.payload"
    deep = b"[" * 2000 + b"]" * 2000
    with pytest.raises(polycodec.DecodeError):
        polycodec.decode_one(deep, Raw)


def test_refusals() -> None:
    with pytest.raises(TypeError, match=r"format 'avro' has no Raw: an Avro value carries"):
        polycodec.Codec(Envelope, "avro")
    with pytest.raises(TypeError, match=r"format 'pickle' has no Raw: a pickle's values share"):
        polycodec.Codec(Envelope, "pickle")
    with pytest.raises(TypeError, match=r"a union can hold it only with None"):
        polycodec.Codec(Union[Raw, int])
    with pytest.raises(TypeError, match="set items must be hashable, and Raw is not"):
        polycodec.Codec(set[Raw])
    with pytest.raises(TypeError, match="dict keys must be"):
        polycodec.Codec(dict[Raw, int])


def test_builtins_form() -> None:
    value = Envelope("k", Raw(b"[1]"))
    with pytest.raises(polycodec.EncodeError, match="a Raw value has no builtins form") as info:
        polycodec.to_builtins(value)
    assert info.value.path == "$.payload"
    # A Raw given to from_builtins is taken as itself; anything else is refused.
    assert polycodec.from_builtins({"kind": "k", "payload": Raw(b"1")}, Envelope) == Envelope(
        "k", Raw(b"1")
    )
    with pytest.raises(polycodec.ValidationError, match="expected Raw, got list") as info:
        polycodec.from_builtins({"kind": "k", "payload": [1]}, Envelope)
    assert info.value.path == "$.payload"


def test_the_object() -> None:
    assert Raw() == Raw(b"") and len(Raw()) == 0
    assert Raw("é") == Raw("é".encode())
    assert Raw(bytearray(b"ab")) == Raw(memoryview(b"ab")) == Raw(Raw(b"ab"))
    assert Raw(b"ab") != b"ab" and Raw(b"ab") != Raw(b"ac")
    assert repr(Raw(b"[1]")) == "Raw(b'[1]')"
    assert repr(Raw(b"x" * 100)).endswith("... (100 bytes))")
    with pytest.raises(TypeError):
        hash(Raw(b"1"))
    with pytest.raises(TypeError, match="Raw\\(\\) takes bytes"):
        Raw(1)  # type: ignore[arg-type]
    decoded = polycodec.decode_one(b'{"kind":"k","payload":[1]}', Envelope).payload
    assert pickle.loads(pickle.dumps(decoded)) == Raw(b"[1]")
    assert bytes(Raw(b"abc")) == b"abc"
    source = b"abc"
    assert bytes(Raw(source)) is source


def test_json_schema() -> None:
    schema = polycodec.json_schema(Envelope)["$defs"]["Envelope"]
    assert schema["properties"]["payload"] == {}
    assert schema["properties"]["extra"] == {"default": None}
