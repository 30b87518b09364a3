"""Issue 27: hostile input found by a fuzzing campaign, each case with the limit it now meets.

Memory is measured in a subprocess (its peak resident memory, ``VmHWM``, before and after the
call, or an address-space limit with ``RLIMIT_AS``), so that a regression costs that process and not the test run.
``MIMALLOC_ARENA_RESERVE=0`` maps each allocation as it grows (see test_memory_limits.py), so
that both a peak and a limit see the extension's own buffers.
"""

import dataclasses
import io
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

import polycodec

needs_proc = pytest.mark.skipif(
    not os.path.exists("/proc/self/status"), reason="reads VmSize from /proc (Linux)"
)


def skip_under_asan(why: str) -> pytest.MarkDecorator:
    """Skips a test under scripts/asan, whose allocator changes what the test measures."""
    return pytest.mark.skipif(os.environ.get("POLYCODEC_ASAN") == "1", reason=why)


# ASan's allocator keeps freed blocks in quarantine (256 MB by default) instead of reusing them,
# so a call that grows a buffer by doubling holds every smaller copy too.
ASAN_QUARANTINE = skip_under_asan("ASan's quarantine holds every outgrown buffer: a larger peak")

_PRELUDE = r"""
import dataclasses, json, resource, struct, sys, time, typing
from typing import Any, List, Optional, Union
import polycodec

def vm_size():
    line = [l for l in open("/proc/self/status") if l.startswith("VmSize")][0]
    return int(line.split()[1]) * 1024

def limit_address_space(headroom_mib):
    limit = vm_size() + (headroom_mib << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

def peak():
    # VmHWM, the high-water mark of this process's own memory: ru_maxrss would start from the
    # parent's peak (Linux carries it over fork and exec), hiding what the call adds.
    line = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0]
    return int(line.split()[1]) * 1024

def measure(call):
    # The peak resident memory the call adds, its time, and what it raised.
    before, start = peak(), time.perf_counter()
    try:
        call()
        outcome = "ok"
    except Exception as exc:
        outcome = type(exc).__name__ + ": " + str(exc)[:300]
    return {"grew": peak() - before, "seconds": time.perf_counter() - start, "outcome": outcome}
"""


def run_isolated(body: str, setup: str = "", timeout: float = 120) -> Any:
    """Runs `body` after the prelude (and `setup`) in a fresh interpreter; returns what it
    prints last, as JSON."""
    package = os.path.dirname(os.path.dirname(polycodec.__file__))
    run = subprocess.run(
        [sys.executable, "-c", _PRELUDE + setup + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=package, MIMALLOC_ARENA_RESERVE="0"),
        timeout=timeout,
    )
    # A negative return code is a signal (an abort is -6): never acceptable.
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def avro_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Item 1: a declared length reserved nothing; the buffer grows with the bytes, fallibly.


@needs_proc
def test_issue27_item1_declared_lengths_reserve_nothing_in_a_stream_decoder() -> None:
    # 100 decoders, each fed 5 bytes of a MessagePack str32 header declaring 4 GiB, and 100
    # fed an Avro header and a block declaring 2**62 bytes: the address space they add stays
    # within 16 MiB under a 64 MiB limit (a decoder used to reserve 64 MiB each, and the
    # process died of `memory allocation failed` after 17 of them).
    result = run_isolated(f"""
        block = {avro_long(1) + avro_long(1 << 62)!r}
        msgpack = polycodec.Codec(str, "msgpack")
        avro = polycodec.Codec(bool, "avro")
        header = avro.encode_many([])
        keep = []
        limit_address_space(64)
        before = vm_size()
        for _ in range(100):
            decoder = msgpack.stream_decoder()
            assert decoder.feed(b"\\xdb\\xff\\xff\\xff\\xff") == []
            keep.append(decoder)
            decoder = avro.stream_decoder()
            assert decoder.feed(header + block) == []
            keep.append(decoder)
        print(json.dumps({{"grew": vm_size() - before,
                           "buffered": sorted({{d.buffered for d in keep}})}}))
        """)
    assert result["grew"] < 16 << 20, result
    assert result["buffered"] == [5, len(avro_long(1) + avro_long(1 << 62))]


@needs_proc
def test_issue27_item1_a_stream_buffer_that_cannot_grow_is_a_memory_error() -> None:
    # A value that keeps arriving (a str32 of 2**31 bytes, fed 4 MiB at a time) under a 96 MiB
    # address-space limit: the buffer's growth fails, `feed` raises MemoryError, and the
    # stream is then broken (DecodeError), with the interpreter alive.
    result = run_isolated("""
        decoder = polycodec.Codec(str, "msgpack").stream_decoder()
        chunk = b"x" * (4 << 20)
        decoder.feed(b"\\xdb\\x80\\x00\\x00\\x00")
        limit_address_space(96)
        outcome = None
        for _ in range(512):
            try:
                decoder.feed(chunk)
            except MemoryError:
                outcome = "MemoryError"
                break
        try:
            decoder.feed(b"")
            after = "ok"
        except polycodec.DecodeError:
            after = "DecodeError"
        print(json.dumps([outcome, after]))
        """)
    assert result == ["MemoryError", "DecodeError"]


def test_issue27_item1_a_long_value_fed_in_chunks_decodes_as_one_call_does() -> None:
    codec = polycodec.Codec(list[str], "msgpack")
    value = ["a" * 300_000, "b" * 5, "c" * 70_000]
    data = codec.encode_stream([value, value[:1]])
    decoder = codec.stream_decoder()
    out = []
    for start in range(0, len(data), 4096):
        out += decoder.feed(data[start : start + 4096])
        assert decoder.buffered <= len(data)
    assert out + decoder.finish() == [value, value[:1]]
    assert decoder.buffered == 0


# Item 4: pickle floods are refused once the stack holds more than the rest can reduce.

_FLOODS = {
    # 10 MB of one opcode each (NONE and TUPLE1 as `N\x85` pairs), after PROTO 4.
    "none": b"N" * 10_000_000,
    "empty_dict": b"}" * 10_000_000,
    "tuple1": b"N\x85" * 5_000_000,
    "empty_set": b"\x8f" * 10_000_000,
    "mark": b"(" * 10_000_000,
}


@needs_proc
@pytest.mark.parametrize(
    "flood, max_ratio", [("none", 8), ("empty_dict", 64), ("tuple1", 48), ("empty_set", 64)]
)
def test_issue27_item4_pickle_floods_are_refused_before_their_stop(
    flood: str, max_ratio: int
) -> None:
    # Each used about 108 times its size (1 GB) before the DecodeError at STOP; now refused
    # two thirds of the way in (no opcode takes more than two values off the stack below a
    # MARK), at a peak of `max_ratio` times the input, in seconds.
    data = b"\x80\x04" + _FLOODS[flood] + b"."
    result = run_isolated(f"""
        data = b"\\x80\\x04" + {_FLOODS[flood][:2]!r} * {len(_FLOODS[flood]) // 2} + b"."
        codec = polycodec.Codec(Any, "pickle")
        print(json.dumps(measure(lambda: codec.decode_one(data))))
        """)
    assert result["outcome"].startswith("DecodeError"), result
    assert "bytes left cannot reduce to one value" in result["outcome"]
    assert result["grew"] < max_ratio * len(data), result
    assert result["seconds"] < 20, result


def test_issue27_item4_a_mark_flood_is_refused_half_way() -> None:
    codec = polycodec.Codec(Any, "pickle")
    with pytest.raises(polycodec.DecodeError, match=r"open MARKs .* at byte (\d+)") as info:
        codec.decode_one(b"\x80\x04" + b"(" * 1_000_000 + b".")
    offset = int(str(info.value).split("at byte ")[1].split()[0])
    assert offset <= 500_010


def test_issue27_item4_deep_but_reducible_stacks_still_decode() -> None:
    # The bound is exact: 200 values below any MARK, reduced by TUPLE3 (two values a byte)
    # into nested tuples, then a MARK-closed list of 100,000 items.
    pushes = 201
    data = b"\x80\x04" + b"N" * pushes + b"\x87" * (pushes // 2) + b"."
    import pickle

    assert polycodec.Codec(Any, "pickle").decode_one(data) == pickle.loads(data)
    items = pickle.dumps([None] * 100_000, protocol=4)
    assert polycodec.Codec(Any, "pickle").decode_one(items) == [None] * 100_000
    # One byte short of reducible is refused with the stack's message, not at STOP.
    short = b"\x80\x04" + b"N" * pushes + b"\x87" * (pushes // 2 - 1) + b"."
    with pytest.raises(polycodec.DecodeError, match="cannot reduce"):
        polycodec.Codec(Any, "pickle").decode_one(short)


# Item 2: compressed Avro blocks are bounded, and iter_file holds one block's bytes, not its
# values.


def _bool_container(
    plain: int, blocks: int, codec: bytes = b"deflate", true_every: int = 0
) -> bytes:
    """An Avro container of `blocks` compressed blocks (deflate, or a zstandard frame that does
    not declare its content size), each of `plain` `boolean` records: False, but for about one
    in `true_every` (none when 0)."""
    import random
    import zlib

    import zstandard

    sync = b"S" * 16
    meta = [(b"avro.schema", b'"boolean"'), (b"avro.codec", codec)]
    header = (
        b"Obj\x01"
        + avro_long(len(meta))
        + b"".join(avro_long(len(k)) + k + avro_long(len(v)) + v for k, v in meta)
        + b"\x00"
        + sync
    )
    # Compressed a MiB at a time: a large buffer freed before the measured call would hide the
    # call's own peak (its memory is reused).
    if codec == b"zstandard":
        compressor: Any = zstandard.ZstdCompressor(level=3).compressobj()
    else:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    chooser = random.Random(plain)
    packed = b""
    for start in range(0, plain, 1 << 20):
        piece = bytearray(min(1 << 20, plain - start))
        for _ in range(len(piece) // true_every if true_every else 0):
            piece[chooser.randrange(len(piece))] = 1
        packed += compressor.compress(piece)
    packed += compressor.flush()
    block = avro_long(plain) + avro_long(len(packed)) + packed + sync
    return header + block * blocks


_BOMB = f"""
import zlib
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_hostile_input import _bool_container
"""


@needs_proc
@pytest.mark.parametrize(
    "compression, true_every, max_input",
    [
        ("deflate", 0, 270_000),
        pytest.param("zstandard", 1024, 900_000, marks=ASAN_QUARANTINE),
    ],
)
def test_issue27_item2_decode_many_is_held_to_max_decompressed_size(
    compression: str, true_every: int, max_input: int
) -> None:
    # The issue's input: 261 KB of deflate blocks (4 of 64 MiB of `boolean` records) decoded
    # to 268M values and 2.18 GB (8,700x); zstandard frames without their content size (880
    # KB, each within the 1040x ratio any block is held to) likewise. With
    # max_decompressed_size=16 MiB either is refused while the first block inflates, at a
    # peak under 64 MiB (250x the deflate input), in seconds; the default (128 MiB) is
    # documented.
    result = run_isolated(
        setup=_BOMB,
        body=f"""
        data = _bool_container(64 << 20, 4, {compression.encode()!r}, {true_every})
        codec = polycodec.Codec(bool, "avro", max_decompressed_size=16 << 20)
        limit_address_space(512)  # a regression fails here rather than taking gigabytes
        print(json.dumps(dict(measure(lambda: codec.decode_many(data)), size=len(data))))
        """,
    )
    assert result["size"] < max_input
    assert result["outcome"].startswith("DecodeError"), result
    assert "max_decompressed_size" in result["outcome"]
    assert result["grew"] < 64 << 20, result
    assert result["seconds"] < 10, result


@needs_proc
def test_issue27_item2_a_stream_decoder_feed_is_held_to_max_decompressed_size() -> None:
    # The same 261 KB fed to a stream decoder at once: `feed` built every value of every block
    # the chunk completed (268M values; under 3 GB of address space PyO3's list allocation
    # panicked). A call's blocks are now held to max_decompressed_size together, as one
    # decode_many call's: with 16 MiB, refused while the first block inflates, at a peak under
    # 64 MiB (250x the input), in seconds; a broken block ends the stream.
    result = run_isolated(
        setup=_BOMB,
        body="""
        data = _bool_container(64 << 20, 4)
        decoder = polycodec.Codec(bool, "avro", max_decompressed_size=16 << 20).stream_decoder()
        limit_address_space(512)  # a regression fails here rather than taking gigabytes
        run = measure(lambda: decoder.feed(data))
        try:
            decoder.feed(b"")
            after = "ok"
        except polycodec.DecodeError as err:
            after = str(err)
        print(json.dumps(dict(run, after=after, size=len(data))))
        """,
    )
    assert result["size"] < 270_000
    assert result["outcome"].startswith("DecodeError"), result
    assert "max_decompressed_size" in result["outcome"]
    assert result["after"].startswith("the stream cannot go on"), result
    assert result["grew"] < 64 << 20, result
    assert result["seconds"] < 10, result


def _fed_whole(decoder: Any, data: bytes) -> list[Any]:
    """Every value of `data` fed at once to a stream decoder: the first call's, the ones it
    left ready (taken with feed(b"")), and finish()'s."""
    got = list(decoder.feed(data))
    while decoder.ready:
        got += decoder.feed(b"")
    return got + list(decoder.finish())


def _bytes_blocks(count: int, size: int) -> bytes:
    """An Avro container of `count` deflate blocks, each one `bytes` record of `size` zeros."""
    codec = polycodec.Codec(bytes, "avro", compression="deflate")
    out = io.BytesIO()
    codec.write_file(out, [bytes(size)] * count, sync_interval=1)
    return out.getvalue()


def test_issue27_item2_a_stream_decoder_budget_is_per_call() -> None:
    # Five blocks of one 1 MiB record each: fed at once, the blocks one call opens pass 4 MiB
    # together and the fifth is refused (the four before it travel on the error); fed a block
    # or two at a time, every call stays within the budget and the stream decodes whole.
    record = bytes((1 << 20) - 8)  # a block decompresses to its length varint and bytes
    data = _bytes_blocks(5, len(record))
    codec = polycodec.Codec(bytes, "avro", max_decompressed_size=4 << 20)
    decoder = codec.stream_decoder()
    with pytest.raises(polycodec.DecodeError, match="max_decompressed_size") as info:
        decoder.feed(data)
    assert info.value.values == [record] * 4  # type: ignore[attr-defined]
    header = len(_bytes_blocks(0, 0))
    block = (len(data) - header) // 5
    decoder = codec.stream_decoder()
    got = decoder.feed(data[: header + 2 * block])
    got += decoder.feed(data[header + 2 * block :])
    assert got + decoder.finish() == [record] * 5


def test_issue38_item13_feed_returns_a_bounded_number_of_values_in_stream_order() -> None:
    # Five deflate blocks of 1M `boolean` records (5 KB): one feed built all 5M values. A call
    # now builds at most max(len(chunk), 65,536) of them; the rest stay in the open block,
    # undecoded, and come with the next calls (`feed(b"")`), in the order one call gave them.
    data = _bool_container(1 << 20, 5, true_every=1000)
    expected = polycodec.Codec(bool, "avro").decode_many(data)
    decoder = polycodec.Codec(bool, "avro").stream_decoder()
    got = decoder.feed(data)
    assert len(got) == 65_536 and decoder.ready
    while decoder.ready:
        more = decoder.feed(b"")
        assert 0 < len(more) <= 65_536
        got += more
    assert got + decoder.finish() == expected
    # Chunked anywhere, drained or not between chunks: the same values.
    for step in [1, 777, 4096]:
        decoder = polycodec.Codec(bool, "avro").stream_decoder()
        got = []
        for start in range(0, len(data), step):
            got += decoder.feed(data[start : start + step])
        while decoder.ready:
            got += decoder.feed(b"")
        assert got + decoder.finish() == expected, step
    # finish() with values still ready says so and loses nothing: they travel on the error,
    # and the stream goes on.
    decoder = polycodec.Codec(bool, "avro").stream_decoder()
    got = decoder.feed(data)
    with pytest.raises(ValueError, match="more values are ready than one call returns") as info:
        decoder.finish()
    got += info.value.values  # type: ignore[attr-defined]
    assert decoder.ready
    while decoder.ready:
        got += decoder.feed(b"")
    assert got + decoder.finish() == expected


@needs_proc
def test_issue38_item13_the_issues_deflate_booleans_fed_at_once() -> None:
    # The issue's input: 261 KB of deflate blocks (4 of 64 MiB of `boolean` records) fed to a
    # stream decoder at once peaked at 1,043 MiB and took 16 s (every value of two blocks,
    # then max_decompressed_size). `feed` now holds one block's decompressed bytes
    # (max_block_size, 64 MiB by default) and returns len(chunk) values: a peak under 96 MiB
    # (under 400x the input, of which 64 MiB is the open block), in seconds; each later call
    # builds 65,536 values.
    result = run_isolated(
        setup=_BOMB,
        body="""
        data = _bool_container(64 << 20, 4)
        decoder = polycodec.Codec(bool, "avro").stream_decoder()
        limit_address_space(512)  # a regression fails here rather than taking gigabytes
        counts = []
        first = measure(lambda: counts.append(len(decoder.feed(data))))
        later = [measure(lambda: counts.append(len(decoder.feed(b"")))) for _ in range(20)]
        print(json.dumps(dict(first=first, later=later, counts=counts, ready=decoder.ready,
                              size=len(data))))
        """,
    )
    assert result["size"] < 270_000
    assert result["first"]["outcome"] == "ok", result
    assert result["counts"] == [result["size"]] + [65_536] * 20 and result["ready"]
    assert result["first"]["grew"] < 96 << 20, result
    assert result["first"]["seconds"] < 10, result
    for run in result["later"]:
        assert run["outcome"] == "ok" and run["grew"] < 8 << 20, run
        assert run["seconds"] < 2, run


@needs_proc
@ASAN_QUARANTINE
def test_issue27_item2_a_zstandard_frame_without_its_size_is_held_to_deflates_ratio() -> None:
    # A 2 KB zstandard frame of 64 MiB of False `boolean` records that does not declare its
    # content size (32,000x): no block inflates past 1040 times its size (deflate's maximum
    # ratio), so every reader refuses it at about 2 MB, at a peak under 16 MiB (a quarter of
    # what the frame holds), in seconds.
    result = run_isolated(
        setup=_BOMB,
        body="""
        import io
        data = _bool_container(64 << 20, 1, b"zstandard")
        codec = polycodec.Codec(bool, "avro")
        runs = [
            measure(lambda: codec.decode_many(data)),
            measure(lambda: list(codec.iter_file(io.BytesIO(data)))),
            measure(lambda: codec.stream_decoder().feed(data)),
        ]
        print(json.dumps(dict(runs=runs, size=len(data))))
        """,
    )
    assert result["size"] < 3_000
    for run in result["runs"]:
        assert run["outcome"].startswith("DecodeError"), result
        assert "inflates to more than" in run["outcome"], result
        assert run["grew"] < 16 << 20, result
        assert run["seconds"] < 5, result


def test_issue27_item2_decode_many_counts_every_compressed_block() -> None:
    data = _bool_container(1 << 20, 5)
    codec = polycodec.Codec(bool, "avro", max_decompressed_size=4 << 20)
    with pytest.raises(polycodec.DecodeError, match="more than 0 bytes"):
        codec.decode_many(data)
    assert polycodec.Codec(bool, "avro", max_decompressed_size=5 << 20).decode_many(data) == [
        False
    ] * (5 << 20)
    # Blocks that are not compressed are the input itself: not counted.
    plain = polycodec.Codec(bool, "avro").encode_many([False] * (5 << 20))
    assert len(codec.decode_many(plain)) == 5 << 20


@needs_proc
@ASAN_QUARANTINE
def test_issue27_item2_iter_file_holds_one_block_not_its_values() -> None:
    # One deflate block of 8 MiB of `boolean` records (8 KB): iter_file built all 8M values
    # of a block at once (64 MiB of list alone); it now holds the block's bytes and hands
    # out records one at a time, at a peak under 40 MiB.
    result = run_isolated(
        setup=_BOMB,
        body="""
        import io
        data = _bool_container(8 << 20, 2)
        codec = polycodec.Codec(bool, "avro")
        count = []
        def read():
            count.append(sum(1 for value in codec.iter_file(io.BytesIO(data)) if not value))
        print(json.dumps(dict(measure(read), count=count)))
        """,
    )
    assert result["outcome"] == "ok", result
    assert result["count"] == [16 << 20]
    assert result["grew"] < 40 << 20, result


@pytest.mark.parametrize("compression", ["deflate", "snappy", "zstandard"])
def test_issue27_item2_a_block_past_max_block_size_is_refused_everywhere(
    compression: str, tmp_path: "os.PathLike[str]"
) -> None:
    import io

    import random

    # Random booleans: zstandard, unlike deflate, could pack zeros past 1040x, the ratio any
    # block is held to.
    chooser = random.Random(27)
    values = [chooser.random() < 0.5 for _ in range(300_000)]
    writer = polycodec.Codec(bool, "avro", compression=compression)
    fp = io.BytesIO()
    writer.write_file(fp, values, sync_interval=300_000)
    data = fp.getvalue()
    assert len(data) < 150_000
    small = polycodec.Codec(bool, "avro", max_block_size=256 << 10)
    large = polycodec.Codec(bool, "avro", max_block_size=300_000)
    for codec, refused in [(small, True), (large, False)]:
        decoder = codec.stream_decoder()
        calls = [
            lambda: codec.decode_many(data),
            lambda: list(codec.iter_file(io.BytesIO(data))),
            lambda: _fed_whole(decoder, data),
        ]
        for call in calls:
            if refused:
                with pytest.raises(polycodec.DecodeError, match="max_block_size"):
                    call()
            else:
                assert call() == values


def test_issue27_item2_iter_file_gives_what_one_call_gives() -> None:
    import io

    codec = polycodec.Codec(list[int], "avro", compression="deflate")
    values = [list(range(i % 7)) for i in range(10_000)]
    fp = io.BytesIO()
    codec.write_file(fp, values, sync_interval=999)
    data = fp.getvalue()
    assert codec.decode_many(data) == values
    for chunk_size in [1, 7, 4096, 1 << 20]:
        assert list(codec.iter_file(io.BytesIO(data), chunk_size=chunk_size)) == values
    # A broken block after good ones: the good values first, then the error.
    broken = data[:-17] + bytes([data[-17] ^ 0xFF]) + data[-16:]
    got = []
    with pytest.raises(polycodec.DecodeError):
        for value in codec.iter_file(io.BytesIO(broken), chunk_size=1000):
            got.append(value)
    assert got == values[: len(got)] and len(got) >= 9 * 999


def test_issue27_item2_limit_options_are_checked() -> None:
    for bad, error in [(0, ValueError), (-1, ValueError), ("1", TypeError), (True, TypeError)]:
        for name in ["max_block_size", "max_decompressed_size"]:
            with pytest.raises(error, match=name):
                polycodec.Codec(bool, "avro", **{name: bad})
    with pytest.raises(TypeError, match="max_block_size"):
        polycodec.Codec(bool, "json", max_block_size=1)


# Item 3: resolving a writer schema costs memory linear in the schema's size.


def _resolve_union_of_records(n: int) -> Any:
    return run_isolated(f"""
        @dataclasses.dataclass
        class R0:
            pass

        codec = polycodec.Codec(R0, "avro")
        # Built as text, so that no large structure of the test's own is freed before the
        # measured call (its memory would be reused, hiding the call's).
        writer = "[" + ",".join(
            '{{"type":"record","name":"R%d","fields":[%s]}}'
            % (i, ",".join('{{"name":"f%d","type":["null","R%d"]}}' % (j, j) for j in range(i)))
            for i in range({n})
        ) + "]"
        # The high-water mark starts again from what is resident now: memory the imports used
        # and freed would otherwise hide the first megabyte the call adds (VmHWM is a peak).
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        run = measure(lambda: codec.decode_one(b"\\x00", writer_schema=writer))
        print(json.dumps(dict(run, size=len(writer))))
        """)


@needs_proc
@skip_under_asan("ASan's red zones around each of the parse's small allocations: 7x the peak")
def test_issue27_item3_a_union_of_records_with_fields_of_every_earlier_one_resolves_linearly() -> (
    None
):
    # A union of N records, each with a nullable field of every earlier record: the schema
    # itself is quadratic in N (N = 400 is 3.45 MB and took 432 MiB). What resolution costs
    # per byte of schema must not grow with N (N = 100 and 200, 0.2 and 0.8 MB), and stays
    # under 125 bytes a byte (the crate's parse, the canonical form, the resolved programs:
    # 108 on CPython 3.11 and 3.14; 135 to 139 while the canonical form took a copy of the
    # crate's whole schema).
    small, large = _resolve_union_of_records(100), _resolve_union_of_records(200)
    for run in (small, large):
        assert run["outcome"] == "ok", run
        assert run["grew"] < 125 * run["size"], run
    assert large["grew"] / large["size"] < 1.25 * small["grew"] / small["size"], (small, large)
    assert large["seconds"] < 15, large


# Item 7: malformed bytes are a DecodeError first, and a stream answers as one call does.


@dataclasses.dataclass
class _Point:
    x: int
    y: str


def _outcome(call: Any) -> str:
    try:
        call()
    except polycodec.DecodeError as err:
        # The stream adds where the value sits in the stream; the rest must agree.
        text = str(err).split(";")[0].split(" at byte")[0].split(" (at ")[0]
        return type(err).__name__ + ": " + text
    return "ok"


def _stream(codec: Any, data: bytes, chunk: int) -> Any:
    decoder = codec.stream_decoder()
    out = []
    for start in range(0, len(data), chunk):
        out += decoder.feed(data[start : start + chunk])
    return out + decoder.finish()


def test_issue27_item7_malformed_msgpack_is_a_decode_error_before_a_wrong_shape() -> None:
    codec = polycodec.Codec(_Point, "msgpack")
    # A map whose first key is an int (a wrong shape) and whose value is the reserved 0xc1.
    data = b"\x81\x01\xc1"
    expected = "DecodeError: malformed MessagePack: reserved byte 0xc1"
    assert _outcome(lambda: codec.decode_one(data)) == expected
    assert _outcome(lambda: codec.decode_many(b"\x91" + data)) == expected
    for chunk in (1, 2, 3):
        assert _outcome(lambda: _stream(codec, data, chunk)) == expected
    # Well-formed bytes of the wrong shape stay a ValidationError.
    with pytest.raises(polycodec.ValidationError, match="str field name"):
        codec.decode_one(b"\x81\x01\xc0")


def test_issue27_item7_corrupted_msgpack_fails_alike_in_one_call_and_in_a_stream() -> None:
    import random

    codec = polycodec.Codec(list[_Point], "msgpack")
    good = codec.encode_one([_Point(i, "p" * i) for i in range(6)])
    chooser = random.Random(7)
    for _ in range(400):
        data = bytearray(good)
        for _ in range(chooser.randint(1, 3)):
            data[chooser.randrange(len(data))] = chooser.randrange(256)
        one = _outcome(lambda: codec.decode_one(bytes(data)))
        if one == "ok" or "trailing bytes" in one:
            # Bytes after the value are the stream's next value: not one value any more.
            continue
        streamed = _outcome(lambda: _stream(codec, bytes(data), chooser.choice([1, 5, 64])))
        # The same kind; a truncation is worded by where it is met (the stream: at finish).
        assert streamed.split(":")[0] == one.split(":")[0], (bytes(data), one, streamed)
        if "MessagePack" in streamed or "MessagePack" in one:
            assert "ends" in one + streamed or streamed == one, (bytes(data), one, streamed)


@pytest.mark.parametrize("data", [b"Ob", b"Obj", b"Ox", b"O\x00j", b"\x00"])
def test_issue27_item7_a_short_avro_stream_fails_as_decode_many_does(data: bytes) -> None:
    codec = polycodec.Codec(_Point, "avro")
    expected = _outcome(lambda: codec.decode_many(data))
    assert expected.startswith("DecodeError: not an Avro object container file")
    for chunk in (1, 2, len(data)):
        assert _outcome(lambda: _stream(codec, data, chunk)) == expected


# Item 6: skipped values are checked as strictly as read ones.


@dataclasses.dataclass
class _Known:
    a: int


_BAD_UTF8 = b"\xa2\xff\xfe"  # a 2-byte MessagePack str that is not UTF-8
_BAD_TIMESTAMP64 = b"\xd7\xff" + ((10**9) << 34).to_bytes(8, "big")


@pytest.mark.parametrize("bad", [_BAD_UTF8, _BAD_TIMESTAMP64, b"\x91" + _BAD_UTF8])
def test_issue27_item6_skipped_msgpack_values_are_checked_as_read_ones(bad: bytes) -> None:
    codec = polycodec.Codec(_Known, "msgpack")
    # {"a": 1, "zz": <bad>}: "zz" is not a field, so its value is skipped.
    data = b"\x82\xa1a\x01\xa2zz" + bad
    with pytest.raises(polycodec.DecodeError, match="malformed MessagePack"):
        codec.decode_one(data)
    # Read where the type asks for it, the same bytes are refused too (the oracle).
    with pytest.raises(polycodec.DecodeError, match="malformed MessagePack"):
        polycodec.Codec(Any, "msgpack").decode_one(bad)
    import msgpack

    with pytest.raises(Exception):
        msgpack.unpackb(bad, timestamp=3)
    # A well-formed skipped value still passes.
    assert codec.decode_one(b"\x82\xa1a\x01\xa2zz\xa2ok") == _Known(1)


def test_issue27_item6_a_skipped_avro_writer_only_string_is_checked_as_utf8() -> None:
    writer = {
        "type": "record",
        "name": "_Known",
        "fields": [
            {"name": "a", "type": "long"},
            {"name": "note", "type": "string"},
            {"name": "tags", "type": {"type": "map", "values": "bytes"}},
        ],
    }
    codec = polycodec.Codec(_Known, "avro")
    good = b"\x02" + b"\x04ok" + b"\x02\x02k\x00\x00"
    assert codec.decode_one(good, writer_schema=writer) == _Known(1)
    bad_note = b"\x02" + b"\x04\xff\xfe" + b"\x00"
    bad_key = b"\x02" + b"\x04ok" + b"\x02\x02\xff\x00\x00"
    for data, what in [(bad_note, "string"), (bad_key, "map key")]:
        with pytest.raises(polycodec.DecodeError, match=f"{what} is not valid UTF-8"):
            codec.decode_one(data, writer_schema=writer)
        # fastavro, the oracle, refuses a string that is not UTF-8 when it reads it.
        import io

        import fastavro

        with pytest.raises(UnicodeDecodeError):
            fastavro.schemaless_reader(io.BytesIO(data), fastavro.parse_schema(writer))


@pytest.mark.parametrize("fast_path", [True, False])
def test_issue27_item6_a_skipped_pickle_attribute_is_checked_as_utf8(fast_path: bool) -> None:
    import pickle

    good = pickle.dumps(_Known(1), protocol=4)
    state = b"}\x94\x8c\x01a\x94K\x01sb."
    assert good.endswith(state)

    def with_extra(value: bytes) -> bytes:
        # The state dict gets an attribute `zz` that is not a field (skipped), holding `value`.
        return good[: -len(state)] + b"}\x94(\x8c\x01a\x94K\x01\x8c\x02zz" + value + b"ub."

    codec = polycodec.Codec(_Known, "pickle", fast_path=fast_path)
    assert codec.decode_one(with_extra(b"\x8c\x02ok")) == _Known(1)
    # Lone surrogates, as pickle writes them (surrogatepass), are a str here as anywhere.
    assert codec.decode_one(with_extra(b"\x8c\x03\xed\xa0\x80")) == _Known(1)
    for bad in [b"\x8c\x02\xff\xfe", b"](\x8c\x02\xff\xfee"]:
        data = with_extra(bad)
        with pytest.raises(polycodec.DecodeError, match="not UTF-8") as info:
            codec.decode_one(data)
        assert "zz" in str(info.value)
        # pickle.loads, the oracle, refuses the same bytes.
        with pytest.raises(UnicodeDecodeError):
            pickle.loads(data)
