"""`encode_into` and `encode_many_into` write into a caller's `bytearray` (src/py/bytearray.rs),
with msgspec's `Encoder.encode_into` as the oracle for the offset rules (0, inside, -1 for the
end, past the end with zero bytes between) and for the bytes, and `encode_one` /
`encode_many` as the oracle in every format: large streamed outputs, MessagePack array headers
rewritten after stretches were handed over, failed encodes (the buffer keeps its length), user
code that resizes or exports the buffer mid-encode, and the argument errors."""

from __future__ import annotations

import dataclasses
import datetime
import io
from typing import Any, Iterator, Optional

import fastavro
import msgspec
import pytest

import polycodec
from polycodec import Codec


@dataclasses.dataclass
class Item:
    id: int
    name: str
    tags: list[str]
    when: Optional[datetime.datetime] = None


def _items(count: int, width: int = 8) -> list[Item]:
    when = datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone.utc)
    return [
        Item(i, f"item-{i}-" + "x" * width, [f"t{i}", "é\n"], when if i % 2 else None)
        for i in range(count)
    ]


def _msgspec_encoder(fmt: str) -> Any:
    return msgspec.json.Encoder() if fmt == "json" else msgspec.msgpack.Encoder()


OFFSETS = [0, 1, 5, 6, 9, -1]


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("start", [b"", b"prefix", b"x" * 500])
def test_encode_into_matches_msgspec_encode_into(fmt: str, offset: int, start: bytes) -> None:
    codec = Codec(Item, fmt)
    encoder = _msgspec_encoder(fmt)
    for item in _items(3):
        ours, theirs = bytearray(start), bytearray(start)
        codec.encode_into(item, ours, offset)
        encoder.encode_into(item, theirs, offset)
        assert ours == theirs


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("offset", OFFSETS)
def test_encode_many_into_matches_msgspec_encode_into_of_the_list(fmt: str, offset: int) -> None:
    codec = Codec(Item, fmt)
    encoder = _msgspec_encoder(fmt)
    for count in [0, 1, 30, 2000]:
        values = _items(count)
        ours, theirs = bytearray(b"prefix"), bytearray(b"prefix")
        codec.encode_many_into(values, ours, offset)
        encoder.encode_into(values, theirs, offset)
        assert ours == theirs


def test_encode_into_every_format_writes_what_encode_one_writes(format: str) -> None:
    codec = Codec(Item, format)
    for item in _items(4):
        buffer = bytearray(b"head:")
        codec.encode_into(item, buffer, -1)
        assert bytes(buffer) == b"head:" + codec.encode_one(item)
        buffer = bytearray(b"ab")
        codec.encode_into(item, buffer, 4)
        assert bytes(buffer) == b"ab\x00\x00" + codec.encode_one(item)
        assert codec.decode_one(bytes(buffer[4:])) == item


def test_encode_many_into_every_format_writes_what_encode_many_writes(format: str) -> None:
    codec = Codec(Item, format)
    values = _items(300)
    buffer = bytearray(b"x" * 10_000)
    codec.encode_many_into(values, buffer, 3)
    data = bytes(buffer[3:])
    if format == "avro":
        # A container file's sync marker is new in every file: compare what it holds.
        assert list(fastavro.reader(io.BytesIO(data))) == list(
            fastavro.reader(io.BytesIO(codec.encode_many(values)))
        )
    else:
        assert data == codec.encode_many(values)
    assert buffer[:3] == b"xxx"
    assert codec.decode_many(data) == values


def test_one_buffer_reused_for_outputs_of_changing_size() -> None:
    codec = Codec(list[Item], "msgpack")
    items = Codec(Item, "msgpack")
    encoder = msgspec.msgpack.Encoder()
    ours, theirs = bytearray(), bytearray()
    for count in [0, 500, 3, 5000, 1, 0, 800]:
        values = _items(count)
        codec.encode_into(values, ours)
        encoder.encode_into(values, theirs)
        assert ours == theirs
        items.encode_many_into(values, ours, -1)
        encoder.encode_into(values, theirs, -1)
        assert ours == theirs


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_encode_many_into_an_iterable_without_length(fmt: str) -> None:
    # MessagePack writes the array header for no items and rewrites it once the count is
    # known, after stretches of the output went into the buffer already.
    codec = Codec(Item, fmt)
    values = _items(3000, width=40)

    def generate() -> Iterator[Item]:
        yield from values

    for offset in [0, 7, -1]:
        buffer = bytearray(b"prefix")
        codec.encode_many_into(generate(), buffer, offset)
        expected = bytearray(b"prefix")
        _msgspec_encoder(fmt).encode_into(values, expected, offset)
        assert buffer == expected


def test_module_functions_encode_into_and_encode_many_into(format: str) -> None:
    items = _items(3)
    buffer = bytearray(b"ab")
    polycodec.encode_into(items[0], buffer, -1, format)
    assert bytes(buffer) == b"ab" + polycodec.encode_one(items[0], format)
    buffer = bytearray()
    polycodec.encode_many_into(iter(items), buffer, format=format)
    assert polycodec.decode_many(bytes(buffer), Item, format) == items
    buffer = bytearray()
    polycodec.encode_into([1, 2], buffer, type=list[int], format=format)
    assert polycodec.decode_one(bytes(buffer), list[int], format) == [1, 2]
    with pytest.raises(TypeError, match="encode_many_into needs type="):
        polycodec.encode_many_into([], bytearray(), format=format)


def test_a_failed_encode_leaves_the_buffer_as_it_was(format: str) -> None:
    codec = Codec(Item, format)
    buffer = bytearray(b"keep me")
    with pytest.raises(polycodec.EncodeError, match="expected int, got str"):
        codec.encode_into(Item("one", "a", []), buffer)  # type: ignore[arg-type]
    assert buffer == b"keep me"
    values = _items(2000) + [Item(0, 5, [])]  # type: ignore[arg-type]
    buffer = bytearray(b"keep me")
    with pytest.raises(polycodec.EncodeError) as info:
        codec.encode_many_into(values, buffer, -1)
    assert info.value.path.startswith("$[2000]")
    # Streamed stretches went into the buffer; its length is given back.
    assert buffer == b"keep me"


def test_argument_errors() -> None:
    codec = Codec(int)
    with pytest.raises(TypeError, match="buffer must be a bytearray, got bytes"):
        codec.encode_into(1, b"")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="buffer must be a bytearray, got memoryview"):
        codec.encode_many_into([1], memoryview(bytearray()))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="offset must be >= -1"):
        codec.encode_into(1, bytearray(), -2)
    with pytest.raises(TypeError):
        codec.encode_into(1, bytearray(), 1.5)  # type: ignore[arg-type]
    buffer = bytearray()
    codec.encode_into(7, buffer, offset=0)
    assert buffer == b"7"


def test_an_exported_buffer_cannot_grow() -> None:
    codec = Codec(str)
    buffer = bytearray(b"ab")
    view = memoryview(buffer)
    with pytest.raises(BufferError):
        codec.encode_into("a longer text", buffer)
    with pytest.raises(BufferError):
        codec.encode_many_into(["x" * 5000], buffer)
    assert buffer == b"ab"
    view.release()
    codec.encode_into("a longer text", buffer)
    assert buffer == b'"a longer text"'


class Tamper:
    """A class an extension encodes: its encode resizes or exports the output buffer."""

    def __init__(self, action: str) -> None:
        self.action = action


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("action", ["shrink", "grow", "export"])
def test_user_code_that_resizes_or_exports_the_buffer_mid_encode(fmt: str, action: str) -> None:
    buffer = bytearray()
    views: list[memoryview] = []

    def encode(value: Tamper) -> str:
        if value.action == "shrink":
            del buffer[:]
        elif value.action == "grow":
            buffer.extend(b"z" * 100_000)
        else:
            views.append(memoryview(buffer))
        return value.action

    extensions = {Tamper: polycodec.Extension(str, encode=encode, decode=Tamper)}
    codec = Codec(Optional[str], fmt)
    tampering = Codec(Tamper, fmt, extensions=extensions)
    values = ["v" * 3000] * 3
    codec.encode_many_into(values, buffer)
    # A resize is noticed at the next write (issue 38, item 9), an export when the buffer
    # must grow: each a BufferError.
    with pytest.raises(BufferError):
        tampering.encode_many_into([Tamper(action)] * 3, buffer)
    # Whatever the buffer holds now, it is a whole bytearray that still works.
    for view in views:
        view.release()
    codec.encode_many_into(values, buffer)
    assert bytes(buffer) == codec.encode_many(values)


# -- issue 38, item 9: user code that changes the buffer after output was written --------------


class Hook:
    """A value whose extension's `encode` runs `action` on the target buffer."""

    def __init__(self, action: Any) -> None:
        self.action = action


def _hooked(fmt: str) -> Codec[Any]:
    def encode(value: Hook) -> str:
        if value.action is not None:
            value.action()
        return "h" * 40

    extensions = {Hook: polycodec.Extension(str, encode=encode, decode=Hook)}
    return Codec(Hook, fmt, extensions=extensions)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
@pytest.mark.parametrize("change", ["clear", "shrink", "shrink_then_grow", "encode_into", "many"])
def test_issue38_item9_a_buffer_changed_mid_encode_many_into_is_a_buffer_error(
    fmt: str, change: str
) -> None:
    # The issue's input: an extension's encode clears (or shrinks) the target once the first
    # 2 KiB were handed to it; the next write grew the buffer without filling the bytes
    # before it, so the output held heap memory (pointers) and no error was raised. A nested
    # encode_into on the same buffer did the same, and MessagePack's header rewrite
    # (replace_front) could read up to 4 bytes past the end. Each is now noticed at the next
    # write, before any byte is read or written: a BufferError, and the buffer keeps only
    # bytes someone wrote.
    buffer = bytearray(b"k" * 10)
    codec = _hooked(fmt)
    actions = {
        "clear": buffer.clear,
        "shrink": lambda: buffer.__delitem__(slice(20, None)),
        "shrink_then_grow": lambda: (
            buffer.__delitem__(slice(20, None)),
            buffer.extend(b"k" * 5000),
        ),
        "encode_into": lambda: codec.encode_into(Hook(None), buffer),
        "many": lambda: codec.encode_many_into([Hook(None)], buffer, -1),
    }
    values = [Hook(None)] * 200 + [Hook(actions[change])] + [Hook(None)] * 200
    with pytest.raises(BufferError) as info:
        codec.encode_many_into(values, buffer, -1)
    nested = change in ("encode_into", "many")
    expected = (
        "the bytearray is being written by another encode_into or encode_many_into call"
        if nested
        else "the bytearray was resized while encode_into or encode_many_into wrote to it"
    )
    assert str(info.value).startswith(expected), info.value
    assert len(buffer) <= 10 + 5000 + 20
    if nested or change == "clear":
        assert bytes(buffer) == (b"k" * 10 if nested else b"")
    # The bytes left are the buffer's own or the encoder's: none from the heap (every byte
    # the encoder writes here is one of b'"[],h', or MessagePack's array and str heads).
    written = set(codec.encode_many([Hook(None)] * 2)) | set(b"k")
    assert set(bytes(buffer)) <= written, bytes(buffer)[:64]
    # The buffer still works.
    codec.encode_many_into([Hook(None)] * 3, buffer)
    assert bytes(buffer) == codec.encode_many([Hook(None)] * 3)


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_issue38_item9_encode_into_refuses_a_buffer_changed_or_nested(fmt: str) -> None:
    buffer = bytearray(b"k" * 10)
    codec = _hooked(fmt)
    with pytest.raises(BufferError, match="was resized"):
        codec.encode_into(Hook(buffer.clear), buffer, -1)
    assert bytes(buffer) == b""
    with pytest.raises(BufferError, match="another encode_into"):
        codec.encode_into(Hook(lambda: codec.encode_into(Hook(None), buffer)), buffer)
    assert bytes(buffer) == b""
    # Another buffer from the callback is fine, and so is the same buffer afterwards.
    other = bytearray()
    codec.encode_into(Hook(lambda: codec.encode_into(Hook(None), other)), buffer)
    assert bytes(buffer) == bytes(other) == codec.encode_one(Hook(None))
