"""The stream API: `encode_stream`, `stream_decoder` (feed/finish), `write_file` and `iter_file`
for every format, checked against the peers that read each stream form (json, msgspec's JSON
Lines, msgpack's Unpacker, pickle.load in turn, fastavro's container reader), under arbitrary
chunking, truncation, corruption mid-stream and long streams."""

from __future__ import annotations

import io
import json
import pickle
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Literal, Optional, Union

import fastavro
import msgpack
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polycodec
from test_properties import SETTINGS

FORMATS = ["json", "msgpack", "pickle", "avro"]


@dataclass
class Event:
    __avro__: ClassVar[polycodec.AvroName] = {"name": "Event"}
    id: int
    name: str
    tags: list[str] = field(default_factory=list)
    score: Optional[float] = None


def events(n: int, start: int = 0) -> Iterator[Event]:
    for i in range(start, start + n):
        yield Event(i, "event-" + "x" * (i % 13), ["a", "b"][: i % 3], None if i % 2 else i / 4)


EVENTS = st.builds(
    Event,
    id=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    name=st.text(st.characters(exclude_categories=["Cs"]), max_size=12),
    tags=st.lists(st.text(max_size=4), max_size=3),
    score=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
)


def codec(fmt: str) -> polycodec.Codec[Event]:
    return polycodec.Codec(Event, fmt)


def decode_all(c: polycodec.Codec[Event], chunks: list[bytes]) -> list[Event]:
    dec = c.stream_decoder()
    out: list[Event] = []
    for chunk in chunks:
        out += dec.feed(chunk)
    return out + dec.finish()


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(data[last:p])
        last = p
    pieces.append(data[last:])
    return pieces


# --- the stream forms, against the peers --------------------------------------------------------


def test_json_stream_is_json_lines() -> None:
    c = codec("json")
    values = list(events(5))
    data = c.encode_stream(values)
    assert data == b"".join(c.encode_one(v) + b"\n" for v in values)
    lines = data.split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line) for line in lines[:-1]] == [msgspec.to_builtins(v) for v in values]
    dec = msgspec.json.Decoder(Event)
    assert [dec.decode(line) for line in lines[:-1]] == values


def test_msgpack_stream_is_values_back_to_back() -> None:
    c = codec("msgpack")
    values = list(events(5))
    data = c.encode_stream(values)
    assert data == b"".join(c.encode_one(v) for v in values)
    unpacker = msgpack.Unpacker()
    unpacker.feed(data)
    assert list(unpacker) == [msgspec.to_builtins(v) for v in values]


def test_pickle_stream_loads_with_pickle_load_in_turn() -> None:
    c = codec("pickle")
    values = list(events(5))
    fp = io.BytesIO(c.encode_stream(values))
    assert [pickle.load(fp) for _ in values] == values
    assert fp.read() == b""


def test_avro_stream_is_a_container_file_like_encode_many() -> None:
    c = codec("avro")
    values = list(events(5))
    data = c.encode_stream(values)
    assert c.decode_many(data) == values
    assert list(fastavro.reader(io.BytesIO(data))) == [msgspec.to_builtins(v) for v in values]
    # The same layout as encode_many; only the sync marker (one per file) differs.
    many = c.encode_many(values)
    assert len(many) == len(data) and many[:-32] != b"" and many[:4] == data[:4]


@pytest.mark.parametrize("fmt", FORMATS)
def test_stream_round_trips_any_iterable(fmt: str) -> None:
    c = codec(fmt)
    assert decode_all(c, [c.encode_stream(events(50))]) == list(events(50))
    assert decode_all(c, [c.encode_stream(())]) == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_stream_fed_one_byte_at_a_time(fmt: str) -> None:
    c = codec(fmt)
    values = list(events(30))
    data = c.encode_stream(values)
    dec = c.stream_decoder()
    whole = dec.feed(data) + dec.finish()
    assert whole == values
    assert decode_all(c, [data[i : i + 1] for i in range(len(data))]) == whole


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(values=st.lists(EVENTS, max_size=12), cuts=st.lists(st.integers(0, 4000), max_size=12))
def test_stream_arbitrary_chunking(fmt: str, values: list[Event], cuts: list[int]) -> None:
    c = codec(fmt)
    data = c.encode_stream(values)
    assert decode_all(c, split(data, cuts)) == values


def test_feed_returns_each_value_as_soon_as_complete() -> None:
    c = codec("msgpack")
    values = list(events(3))
    parts = [c.encode_one(v) for v in values]
    dec = c.stream_decoder()
    assert dec.feed(parts[0][:-1]) == []
    assert dec.buffered == len(parts[0]) - 1
    assert dec.feed(parts[0][-1:] + parts[1]) == values[:2]
    assert dec.buffered == 0 and dec.index == 2 and dec.offset == len(parts[0]) + len(parts[1])
    assert dec.feed(bytearray(parts[2])) == values[2:]
    assert dec.feed(memoryview(b"")) == []
    assert dec.finish() == []
    with pytest.raises(ValueError, match="finished"):
        dec.feed(b"")
    with pytest.raises(TypeError, match="expected bytes"):
        c.stream_decoder().feed("text")


def test_streamdecoder_is_exported_and_constructible() -> None:
    c = codec("json")
    dec = polycodec.StreamDecoder(c)
    assert isinstance(c.stream_decoder(), polycodec.StreamDecoder)
    assert dec.codec is c
    assert dec.feed(b'{"id":1,"name":"a"}\n') == [Event(1, "a")]


# --- JSON Lines details ------------------------------------------------------------------------


def test_json_lines_accepts_crlf_blank_lines_and_a_last_line_without_newline() -> None:
    c = codec("json")
    data = b'\n{"id":1,"name":"a"}\r\n\r\n  \n{"id":2,"name":"b"}\r\n{"id":3,"name":"c"}'
    assert decode_all(c, [data]) == [Event(1, "a"), Event(2, "b"), Event(3, "c")]
    assert decode_all(c, [data[i : i + 1] for i in range(len(data))]) == [
        Event(1, "a"),
        Event(2, "b"),
        Event(3, "c"),
    ]
    assert decode_all(c, [b"\n\r\n  "]) == []


def test_json_lines_bad_line_is_reported_and_skipped() -> None:
    c = codec("json")
    data = b'{"id":1,"name":"a"}\n{"id":"x","name":"b"}\n{"id":3,"name":"c"}\n'
    dec = c.stream_decoder()
    with pytest.raises(polycodec.ValidationError) as info:
        dec.feed(data)
    err = info.value
    assert err.values == [Event(1, "a")]
    assert err.index == 1 and err.offset == 20
    assert "stream value 1 at byte 20" in str(err) and err.path == "$.id"
    # The rest of the chunk was kept: the next call goes on after the bad line.
    assert dec.feed(b"") == [Event(3, "c")]
    assert dec.finish() == []


def test_json_lines_bad_last_line_without_newline() -> None:
    c = codec("json")
    dec = c.stream_decoder()
    assert dec.feed(b'{"id":1,"name":"a"}\n{"id":2') == [Event(1, "a")]
    with pytest.raises(polycodec.DecodeError) as info:
        dec.finish()
    assert info.value.index == 1 and info.value.offset == 20
    # The input has ended there: the stream is over, as after any format's truncation.
    with pytest.raises(polycodec.DecodeError, match="cannot go on"):
        dec.finish()


# --- truncation and corruption -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_truncation_returns_a_prefix_or_raises(fmt: str) -> None:
    c = codec(fmt)
    values = list(events(6))
    data = c.encode_stream(values)
    for end in range(len(data)):
        dec = c.stream_decoder()
        got = dec.feed(data[:end])
        try:
            got += dec.finish()
        except polycodec.DecodeError as err:
            got += err.values
            assert err.offset <= end
            assert "stream value" in str(err)
            assert got == values[: len(got)] and len(got) < len(values)
            continue
        # A cut at a value's end (JSON Lines: also before its newline) is a shorter stream.
        assert got == values[: len(got)]
        assert len(got) < len(values) or (fmt == "json" and end == len(data) - 1)


def test_msgpack_corruption_mid_stream_names_offset_and_index() -> None:
    c = codec("msgpack")
    values = list(events(4))
    parts = [c.encode_one(v) for v in values]
    data = parts[0] + parts[1] + b"\xc1" + parts[2]
    dec = c.stream_decoder()
    with pytest.raises(polycodec.DecodeError) as info:
        dec.feed(data)
    err = info.value
    assert err.values == values[:2]
    assert err.index == 2 and err.offset == len(parts[0]) + len(parts[1])
    assert "0xc1" in str(err)
    with pytest.raises(polycodec.DecodeError, match="cannot go on"):
        dec.feed(parts[3])
    with pytest.raises(polycodec.DecodeError, match="cannot go on"):
        dec.finish()


def test_msgpack_wrong_shape_value_is_skipped() -> None:
    c = codec("msgpack")
    good = c.encode_one(Event(1, "a"))
    data = good + msgpack.packb({"id": "no"}) + good
    dec = c.stream_decoder()
    got: list[Event] = []
    with pytest.raises(polycodec.ValidationError) as info:
        got += dec.feed(data)
    got += info.value.values
    assert info.value.index == 1 and info.value.offset == len(good)
    got += dec.feed(b"") + dec.finish()
    assert got == [Event(1, "a"), Event(1, "a")]


def test_pickle_corruption_mid_stream() -> None:
    c = codec("pickle")
    parts = [c.encode_one(v) for v in events(3)]
    data = parts[0] + b"\xff" + parts[1]
    dec = c.stream_decoder()
    with pytest.raises(polycodec.DecodeError, match="unknown opcode 0xff") as info:
        dec.feed(data)
    assert info.value.values == list(events(1))
    assert info.value.offset == len(parts[0]) and info.value.index == 1


def test_pickle_stream_reads_stdlib_pickles_back_to_back() -> None:
    c = codec("pickle")
    values = list(events(20))
    for protocol in range(2, 6):
        data = b"".join(pickle.dumps(v, protocol=protocol) for v in values)
        assert decode_all(c, [data[i : i + 7] for i in range(0, len(data), 7)]) == values


def test_avro_corrupt_sync_marker_mid_stream() -> None:
    c = codec("avro")
    fp = io.BytesIO()
    c.write_file(fp, events(10), sync_interval=4)
    data = bytearray(fp.getvalue())
    blocks = list(fastavro.block_reader(io.BytesIO(bytes(data))))
    assert [b.num_records for b in blocks] == [4, 4, 2]
    data[-5] ^= 0xFF  # inside the sync marker after the last block
    got: list[Event] = []
    dec = c.stream_decoder()
    with pytest.raises(polycodec.DecodeError, match="sync marker") as info:
        got += dec.feed(bytes(data))
    got += info.value.values
    assert got == list(events(8))
    assert info.value.index == 8


def test_avro_stream_not_a_container() -> None:
    c = codec("avro")
    with pytest.raises(polycodec.DecodeError, match="Obj"):
        c.stream_decoder().feed(b"Obx")
    with pytest.raises(polycodec.DecodeError, match="empty input"):
        c.stream_decoder().finish()


@dataclass
class EventV1:
    __avro__: ClassVar[polycodec.AvroName] = {"name": "Event"}
    id: int
    name: str


def test_avro_stream_resolves_the_writer_schema() -> None:
    old = polycodec.Codec(EventV1, "avro")
    data = old.encode_stream([EventV1(1, "a"), EventV1(2, "b")])
    new = codec("avro")
    assert decode_all(new, [data[i : i + 3] for i in range(0, len(data), 3)]) == [
        Event(1, "a"),
        Event(2, "b"),
    ]


@pytest.mark.parametrize("codec_name", ["deflate", "snappy", "zstandard"])
def test_avro_write_file_compressed(codec_name: str) -> None:
    c = polycodec.Codec(Event, "avro", compression=codec_name)
    fp = io.BytesIO()
    assert c.write_file(fp, events(100), sync_interval=30) == 100
    fp.seek(0)
    assert list(c.iter_file(fp, chunk_size=17)) == list(events(100))
    fp.seek(0)
    assert len(list(fastavro.reader(fp))) == 100


# --- files -------------------------------------------------------------------------------------


class Sink(io.RawIOBase):
    """A binary file that keeps only the sizes of the writes it gets (and may write short)."""

    def __init__(self, short: bool = False) -> None:
        self.sizes: list[int] = []
        self.total = 0
        self.short = short

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        n = len(data)
        if self.short and n > 1:
            n = n // 2
        self.sizes.append(n)
        self.total += n
        return n


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_file_then_iter_file(fmt: str) -> None:
    c = codec(fmt)
    fp = io.BytesIO()
    assert c.write_file(fp, events(500)) == 500
    if fmt != "avro":
        assert fp.getvalue() == c.encode_stream(events(500))
    fp.seek(0)
    assert list(c.iter_file(fp)) == list(events(500))
    fp.seek(0)
    assert list(c.iter_file(fp, chunk_size=1)) == list(events(500))


def test_write_file_handles_short_writes() -> None:
    c = codec("msgpack")
    sink = Sink(short=True)
    c.write_file(sink, events(10))
    assert sink.total == len(c.encode_stream(events(10)))


def test_write_file_writes_as_it_goes() -> None:
    c = codec("avro")
    sink = Sink()

    def values() -> Iterator[Event]:
        for i, value in enumerate(events(10_000)):
            if i == 4001:
                # The first block (4000 values, the default interval) is already written.
                assert len(sink.sizes) == 1
            yield value

    assert c.write_file(sink, values()) == 10_000
    assert len(sink.sizes) == 3


def test_write_file_options_and_errors() -> None:
    with pytest.raises(TypeError, match="sync_interval"):
        codec("json").write_file(io.BytesIO(), [], sync_interval=5)
    with pytest.raises(ValueError, match="sync_interval"):
        codec("avro").write_file(io.BytesIO(), [], sync_interval=0)
    with pytest.raises(polycodec.EncodeError) as info:
        codec("json").write_file(io.BytesIO(), [Event(1, "a"), "nope"])
    assert info.value.path == "$[1]"
    # An empty Avro stream is a header-only container file.
    fp = io.BytesIO()
    assert codec("avro").write_file(fp, iter(())) == 0
    fp.seek(0)
    assert list(fastavro.reader(fp)) == []


def test_iter_file_yields_values_before_an_error() -> None:
    c = codec("msgpack")
    parts = [c.encode_one(v) for v in events(3)]
    it = c.iter_file(io.BytesIO(parts[0] + parts[1] + b"\xc1"))
    assert next(it) == Event(*list(events(1))[0].__dict__.values())
    assert next(it) == list(events(2))[1]
    with pytest.raises(polycodec.DecodeError, match="0xc1"):
        next(it)


class LazyStream(io.RawIOBase):
    """A file whose bytes are produced as they are read: the stream form of `count` events."""

    def __init__(self, c: polycodec.Codec[Event], count: int) -> None:
        self.codec = c
        self.values = events(count)
        self.pending = b""
        self.done = False
        self.produced = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while len(self.pending) < len(buf) and not self.done:
            batch = [v for _, v in zip(range(200), self.values)]
            if not batch:
                self.done = True
            self.pending += self.codec.encode_stream(batch) if batch else b""
        n = min(len(buf), len(self.pending))
        buf[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        self.produced += n
        return n


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_very_long_stream_in_flat_memory(fmt: str) -> None:
    c = codec(fmt)
    count = 200_000
    source = LazyStream(c, count)
    tracemalloc.start()
    try:
        seen = 0
        for value in c.iter_file(io.BufferedReader(source)):
            assert value.id == seen
            seen += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert seen == count
    assert source.produced > 5_000_000
    assert peak < 2_000_000, peak


def test_very_long_avro_stream_in_flat_memory() -> None:
    c = codec("avro")
    sink = Sink()
    count = 200_000
    assert c.write_file(sink, events(count), sync_interval=1000) == count
    assert max(sink.sizes) < 100_000
    # Reading: a decoder fed the file in 64 KiB chunks holds at most about one block.
    fp = io.BytesIO()
    c.write_file(fp, events(count), sync_interval=1000)
    data = fp.getvalue()
    dec = c.stream_decoder()
    seen, most = 0, 0
    for start in range(0, len(data), 65536):
        seen += len(dec.feed(data[start : start + 65536]))
        most = max(most, dec.buffered)
    seen += len(dec.finish())
    assert seen == count
    assert most < 150_000


def test_decoder_buffer_stays_small_over_a_long_stream() -> None:
    c = codec("json")
    dec = c.stream_decoder()
    chunk = c.encode_stream(events(100))
    seen = 0
    for i in range(300):
        # Chunks cut mid-value, so the buffer is used on every call.
        seen += len(dec.feed(chunk[: 7 + i % 50]))
        seen += len(dec.feed(chunk[7 + i % 50 :]))
        assert dec.buffered < 200
    assert seen + len(dec.finish()) == 30_000


def test_codec_pickles_into_a_stream_decoder() -> None:
    c = pickle.loads(pickle.dumps(codec("msgpack")))
    data = codec("msgpack").encode_stream(events(3))
    assert decode_all(c, [data]) == list(events(3))


# --- the boundary finders against the peers, on arbitrary nested values ------------------------

LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
ANY_VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=20), st.dictionaries(st.text(max_size=8), inner, max_size=20)
    ),
    max_leaves=60,
)


@SETTINGS
@given(
    values=st.lists(st.one_of(ANY_VALUES, st.binary(max_size=300)), max_size=8),
    cuts=st.lists(st.integers(0, 6000), max_size=10),
)
def test_msgpack_framing_matches_unpacker(values: list[Any], cuts: list[int]) -> None:
    data = b"".join(msgpack.packb(v, use_bin_type=True) for v in values)
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    expected = list(unpacker)
    assert decode_all(polycodec.Codec(Any, "msgpack"), split(data, cuts)) == expected


@SETTINGS
@given(
    values=st.lists(st.one_of(ANY_VALUES, st.binary(max_size=300)), max_size=8),
    protocol=st.integers(2, 5),
    cuts=st.lists(st.integers(0, 6000), max_size=10),
)
def test_pickle_framing_matches_pickle_load(
    values: list[Any], protocol: int, cuts: list[int]
) -> None:
    data = b"".join(pickle.dumps(v, protocol=protocol) for v in values)
    assert decode_all(polycodec.Codec(Any, "pickle"), split(data, cuts)) == values


@SETTINGS
@given(values=st.lists(ANY_VALUES, max_size=8), cuts=st.lists(st.integers(0, 4000), max_size=10))
def test_json_lines_framing_matches_json_loads(values: list[Any], cuts: list[int]) -> None:
    data = b"".join(json.dumps(v).encode() + b"\r\n" for v in values)
    assert decode_all(polycodec.Codec(Any, "json"), split(data, cuts)) == values


def outcomes(c: polycodec.Codec[Any], chunks: list[bytes]) -> list[Any]:
    """Values and errors (as their index and offset) in the order a consumer meets them, calling
    again after each skipped value as the README says (`feed(b"")`, or `finish()` again)."""
    dec = c.stream_decoder()
    seen: list[Any] = []

    def run(call: Callable[[], list[Any]], again: Callable[[], list[Any]]) -> None:
        while True:
            try:
                seen.extend(call())
                return
            except polycodec.DecodeError as err:
                seen.extend(err.values)
                seen.append(("error", err.index, err.offset))
                call = again

    for chunk in chunks:
        run(lambda chunk=chunk: dec.feed(chunk), lambda: dec.feed(b""))
    run(dec.finish, dec.finish)
    return seen


@pytest.mark.parametrize("fmt", ["json", "msgpack", "pickle"])
def test_errors_and_values_are_the_same_whatever_the_chunking(fmt: str) -> None:
    c = codec(fmt)
    good = [c.encode_one(v) + (b"\n" if fmt == "json" else b"") for v in events(4)]
    wrong = {
        "json": b'{"id":"x","name":"y"}\n',
        "msgpack": msgpack.packb({"id": "x", "name": "y"}),
        "pickle": pickle.dumps({"id": "x"}, protocol=2),
    }[fmt]
    data = good[0] + wrong + good[1] + good[2] + wrong + good[3]
    whole = outcomes(c, [data])
    assert [x for x in whole if isinstance(x, Event)] == list(events(4))
    assert [x[1] for x in whole if isinstance(x, tuple)] == [1, 4]
    assert outcomes(c, [data[i : i + 1] for i in range(len(data))]) == whole
    assert outcomes(c, [data[i : i + 5] for i in range(0, len(data), 5)]) == whole


PIPE_SCRIPT = """
import dataclasses, os, resource, sys, threading
import polycodec

@dataclasses.dataclass
class Row:
    id: int
    name: str
    tags: list[str]

fmt, count = sys.argv[1], int(sys.argv[2])
codec = polycodec.Codec(Row, fmt)
read_end, write_end = os.pipe()

def write():
    with os.fdopen(write_end, "wb") as fp:
        codec.write_file(fp, (Row(i, "n" * (i % 50), ["t"] * (i % 4)) for i in range(count)))

writer = threading.Thread(target=write)
writer.start()
seen = 0
with os.fdopen(read_end, "rb") as fp:
    for row in codec.iter_file(fp):
        assert row.id == seen
        seen += 1
writer.join()
assert seen == count
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_file_to_iter_file_through_a_pipe_in_flat_memory(fmt: str) -> None:
    """A writer thread streams values into a pipe that iter_file reads: the process's peak
    memory is the same for 40 thousand values as for 400 thousand."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}

    def peak_kib(count: int) -> int:
        run = subprocess.run(
            [sys.executable, "-c", PIPE_SCRIPT, fmt, str(count)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert run.returncode == 0, run.stderr
        return int(run.stdout)

    small, large = peak_kib(40_000), peak_kib(400_000)
    assert large - small < 16 * 1024, (small, large)


def test_file_iterator_in_a_reference_cycle_is_collected() -> None:
    import gc
    import weakref

    class File(io.BytesIO):
        iterator: Any = None

    fp = File(codec("json").encode_stream(events(3)))
    fp.iterator = codec("json").iter_file(fp)
    assert next(fp.iterator) == list(events(1))[0]
    ref = weakref.ref(fp)
    del fp
    gc.collect()
    assert ref() is None


# -- issue 38, item 5: iter_file on a file opened in text mode --------------------------------


class StrReader:
    """A file-like object that is no io.TextIOBase but whose read returns str."""

    def __init__(self, text: str) -> None:
        self.text = io.StringIO(text)

    def read(self, size: int = -1) -> str:
        return self.text.read(size)


@pytest.mark.parametrize("fmt", ["json", "msgpack", "avro", "pickle"])
def test_issue38_item5_iter_file_on_a_text_file_is_a_clear_type_error(
    fmt: str, tmp_path: Any
) -> None:
    # An Avro container opened with open(path) raised UnicodeDecodeError from deep inside the
    # read; write_file already refused a text file with a TypeError before writing anything.
    codec = polycodec.Codec(Event, fmt)
    path = tmp_path / "events"
    with open(path, "wb") as binary:
        codec.write_file(binary, [Event(1, "a"), Event(2, "b")])
    with open(path, encoding="latin-1") as text_file:  # reads any bytes as text
        with pytest.raises(TypeError) as info:
            codec.iter_file(text_file)
    assert str(info.value) == (
        'iter_file needs a file opened in binary mode (open(path, "rb")), not a text file'
    )
    assert not isinstance(info.value, (polycodec.DecodeError, UnicodeDecodeError))
    with pytest.raises(TypeError, match="binary mode: the file's read returned str"):
        next(codec.iter_file(StrReader("{}\n")))
    with open(path, "rb") as binary:
        assert list(codec.iter_file(binary)) == [Event(1, "a"), Event(2, "b")]


@dataclass
class CatPet:
    kind: Literal["cat"] = "cat"


@dataclass
class DogPet:
    kind: Literal["dog"] = "dog"


def test_issue38_item5_the_msgspec_page_says_msgspec_refuses_a_union_of_dataclasses() -> None:
    # The page said both libraries read the same classes during a migration; msgspec refuses
    # a union of several dataclasses, which polycodec reads as a tagged union.
    from pathlib import Path

    with pytest.raises(TypeError) as info:
        msgspec.json.Decoder(Union[CatPet, DogPet])
    said = str(info.value).split(" - ")[0]
    page = Path(__file__).parents[1] / "docs" / "migrating-from-msgspec.md"
    assert said in page.read_text()
    assert polycodec.decode_one(b'{"kind":"dog"}', Union[CatPet, DogPet]) == DogPet()
