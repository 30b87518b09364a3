"""``python -m benches --queues``: streams and queues.

1. Stream decoding throughput (MB/s of stream bytes, 64 KiB chunks), typed values out:
   polycodec's ``StreamDecoder`` per format, against one ``decode_one`` per value (split by
   hand: the target is to be no slower), ``msgspec.json.Decoder`` over JSON Lines split by
   hand, ``msgpack.Unpacker.feed`` (and its dicts made into the dataclass), ``pickle.load`` in
   turn, and ``fastavro.reader``.
2. Messages per second through each queue, encode and decode included: Kafka (librdkafka's
   mock cluster; polycodec's Serializer/Deserializer against msgspec, orjson and fastavro
   callables doing the same job) and Redis Streams (XADD, then XREADGROUP + decode + XACK, on a
   redis-server started for the run, when Debian's ``redis-server`` is installed). Kafka also
   runs confluent-kafka's AvroSerializer and JSONSerializer (to_dict/from_dict) and a
   pass-through of pre-encoded bytes, the ceiling the broker sets.
3. The cost of one Kafka serializer and one deserializer call (no broker): polycodec's against
   confluent-kafka's AvroSerializer/AvroDeserializer and JSONSerializer/JSONDeserializer with
   to_dict/from_dict on the same dataclass.

Single-threaded, best of a few repetitions; the queue numbers include the broker's own cost,
which all candidates share. Nothing is written unless ``--out DIR`` is given.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import platform
import shutil
import socket
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import polycodec

CHUNK = 64 * 1024


@dataclasses.dataclass
class Message:
    id: int
    user: str
    action: str
    amount: float
    ok: bool
    tags: list[str]
    note: Optional[str] = None


AVRO_SCHEMA = {
    "type": "record",
    "name": "Message",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "action", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "ok", "type": "boolean"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def messages(n: int) -> list[Message]:
    return [
        Message(
            i,
            f"user{i % 977}",
            ["view", "click", "buy"][i % 3],
            i * 0.25,
            i % 5 != 0,
            ["a", "bb", "ccc"][: i % 4],
            None if i % 3 else f"note {i}",
        )
        for i in range(n)
    ]


def as_dict(m: Message) -> dict[str, Any]:
    return {
        "id": m.id,
        "user": m.user,
        "action": m.action,
        "amount": m.amount,
        "ok": m.ok,
        "tags": m.tags,
        "note": m.note,
    }


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


# --- 1. stream decoding ------------------------------------------------------------------------


def stream_cases(values: list[Message]) -> Iterator[tuple[str, str, bytes, Callable[[], int]]]:
    """(format, candidate, stream bytes, decode-the-whole-stream callable returning a count)."""
    import msgpack
    import msgspec

    for fmt in ["json", "msgpack", "pickle", "avro"]:
        codec = polycodec.Codec(Message, fmt)
        data = codec.encode_stream(values)
        parts = chunks(data)

        def stream(codec: Any = codec, parts: list[bytes] = parts) -> int:
            dec = codec.stream_decoder()
            n = 0
            for part in parts:
                n += len(dec.feed(part))
            return n + len(dec.finish())

        yield fmt, "polycodec StreamDecoder", data, stream

        if fmt == "json":
            lines = data.splitlines()

            def per_value(codec: Any = codec, lines: list[bytes] = lines) -> int:
                return len([codec.decode_one(line) for line in lines])

            yield fmt, "polycodec decode_one per line (pre-split)", data, per_value
            decoder = msgspec.json.Decoder(Message)

            def msgspec_lines(parts: list[bytes] = parts) -> int:
                n, rest = 0, b""
                for part in parts:
                    lines = (rest + part).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        if line:
                            decoder.decode(line)
                            n += 1
                return n

            yield fmt, "msgspec.json.Decoder, lines split by hand", data, msgspec_lines

            def polycodec_lines(codec: Any = codec, parts: list[bytes] = parts) -> int:
                n, rest = 0, b""
                for part in parts:
                    lines = (rest + part).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        if line:
                            codec.decode_one(line)
                            n += 1
                return n

            yield fmt, "polycodec decode_one, lines split by hand", data, polycodec_lines
        elif fmt == "msgpack":
            sizes = [len(codec.encode_one(v)) for v in values]

            def per_value_mp(codec: Any = codec, data: bytes = data) -> int:
                view, pos = memoryview(data), 0
                out = []
                for size in sizes:
                    out.append(codec.decode_one(data[pos : pos + size]))
                    pos += size
                return len(out)

            yield fmt, "polycodec decode_one per value (sizes known)", data, per_value_mp

            def unpacker(parts: list[bytes] = parts) -> int:
                unpack = msgpack.Unpacker()
                n = 0
                for part in parts:
                    unpack.feed(part)
                    for _ in unpack:
                        n += 1
                return n

            yield fmt, "msgpack.Unpacker.feed (dicts)", data, unpacker

            def unpacker_typed(parts: list[bytes] = parts) -> int:
                unpack = msgpack.Unpacker()
                n = 0
                for part in parts:
                    unpack.feed(part)
                    for item in unpack:
                        Message(**item)
                        n += 1
                return n

            yield fmt, "msgpack.Unpacker.feed + Message(**d)", data, unpacker_typed
        elif fmt == "pickle":

            def stdlib(data: bytes = data) -> int:
                fp, n = io.BytesIO(data), 0
                while fp.tell() < len(data):
                    pickle.load(fp)
                    n += 1
                return n

            yield fmt, "pickle.load in turn", data, stdlib
        else:
            import fastavro

            def iter_file(codec: Any = codec, data: bytes = data) -> int:
                return sum(1 for _ in codec.iter_file(io.BytesIO(data)))

            yield fmt, "polycodec iter_file", data, iter_file

            def fast(data: bytes = data) -> int:
                return sum(1 for _ in fastavro.reader(io.BytesIO(data)))

            yield fmt, "fastavro.reader (dicts)", data, fast

            def fast_typed(data: bytes = data) -> int:
                return sum(1 for d in fastavro.reader(io.BytesIO(data)) if Message(**d))

            yield fmt, "fastavro.reader + Message(**d)", data, fast_typed


def bench_streams(count: int, repeat: int) -> list[dict[str, Any]]:
    values = messages(count)
    rows = []
    for fmt, name, data, fn in stream_cases(values):
        assert fn() == count, (fmt, name)
        seconds = best(fn, repeat)
        rows.append(
            {
                "format": fmt,
                "candidate": name,
                "mb_per_s": len(data) / seconds / 1e6,
                "values_per_s": count / seconds,
            }
        )
    return rows


# --- 2. queues ---------------------------------------------------------------------------------


#: The values the Kafka runs produce; the pass-through candidate pre-encodes them.
PASS_VALUES: list[Message] = []


def kafka_candidates() -> list[tuple[str, Callable[..., Any], Callable[..., Any]]]:
    """(name, serializer(value, ctx), deserializer(data, ctx)) doing the same job: a Message
    in, bytes out, a Message back."""
    import fastavro
    import msgspec
    import orjson
    from confluent_kafka.schema_registry import SchemaRegistryClient

    from polycodec.kafka import Deserializer, Serializer

    registry = SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})
    avro = polycodec.Codec(Message, "avro")
    out = [("polycodec avro + registry", Serializer(avro, registry), Deserializer(avro, registry))]
    for fmt in ["msgpack", "json"]:
        codec = polycodec.Codec(Message, fmt)
        out.append((f"polycodec {fmt}", Serializer(codec), Deserializer(codec)))
    mp_enc = msgspec.msgpack.Encoder()
    mp_dec = msgspec.msgpack.Decoder(Message)
    out.append(
        ("msgspec msgpack", lambda v, ctx: mp_enc.encode(v), lambda d, ctx: mp_dec.decode(d))
    )
    out.append(
        (
            "orjson json",
            lambda v, ctx: orjson.dumps(v),
            lambda d, ctx: Message(**orjson.loads(d)),
        )
    )
    parsed = fastavro.parse_schema(AVRO_SCHEMA)
    schema_id = 1

    def fa_ser(value: Message, ctx: Any) -> bytes:
        buf = io.BytesIO()
        buf.write(b"\x00" + struct.pack(">I", schema_id))
        fastavro.schemaless_writer(buf, parsed, as_dict(value))
        return buf.getvalue()

    def fa_de(data: bytes, ctx: Any) -> Message:
        buf = io.BytesIO(data)
        buf.seek(5)
        return Message(**fastavro.schemaless_reader(buf, parsed, parsed))

    out.append(("fastavro (Confluent framing, fixed id)", fa_ser, fa_de))
    for fmt, _, _, their_ser, their_de in _confluent_pairs(registry):
        name = "AvroSerializer" if fmt == "avro" else "JSONSerializer"
        out.append((f"confluent {name} + to_dict/from_dict", their_ser, their_de))
    # The ceiling: bytes made before the run (the serializer looks them up by identity) and
    # not decoded, so only the broker and the client's own cost remain.
    pre = {id(v): avro.encode_one(v) for v in PASS_VALUES}

    def pass_ser(value: Message, ctx: Any) -> bytes:
        return pre[id(value)]

    def pass_de(data: bytes, ctx: Any) -> bytes:
        return data

    out.append(("pass-through (pre-encoded bytes, ceiling)", pass_ser, pass_de))
    return out


def bench_kafka(count: int) -> list[dict[str, Any]]:
    from confluent_kafka import DeserializingConsumer, Producer, SerializingProducer

    holder = Producer({"test.mock.num.brokers": 1, "log_level": 3})
    bootstrap = ",".join(
        f"{b.host}:{b.port}" for b in holder.list_topics(timeout=10).brokers.values()
    )
    values = messages(count)
    PASS_VALUES[:] = values
    rows = []
    for name, ser, de in kafka_candidates():
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        producer = SerializingProducer(
            {
                "bootstrap.servers": bootstrap,
                "value.serializer": ser,
                "linger.ms": 5,
                "queue.buffering.max.messages": count + 10,
            }
        )
        start = time.perf_counter()
        for value in values:
            producer.produce(topic, value=value)
        producer.flush(60)
        produce_s = time.perf_counter() - start
        consumer = DeserializingConsumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": topic,
                "auto.offset.reset": "earliest",
                "value.deserializer": de,
                "log_level": 3,
            }
        )
        consumer.subscribe([topic])
        got = 0
        first = consumer.poll(30)  # group join and assignment, not timed
        assert first is not None and first.error() is None
        got = 1
        start = time.perf_counter()
        deadline = start + 120
        while got < count and time.perf_counter() < deadline:
            msg = consumer.poll(1)
            if msg is not None and msg.error() is None:
                got += 1
        consume_s = time.perf_counter() - start
        consumer.close()
        assert got == count, (name, got)
        rows.append(
            {
                "queue": "kafka (mock cluster)",
                "candidate": name,
                "produce_msgs_per_s": count / produce_s,
                "consume_msgs_per_s": (count - 1) / consume_s,
            }
        )
    return rows


def _redis_server() -> Iterator[int]:
    binary = shutil.which("redis-server")
    if binary is None:
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # scripts/asan preloads ASan's runtime for the extension; in the server it would stop
        # at the first malloc_usable_size of redis's allocator, which ASan cannot vouch for.
        env={name: value for name, value in os.environ.items() if name != "LD_PRELOAD"},
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def redis_candidates() -> list[tuple[str, Callable[[Message], bytes], Callable[[bytes], Any]]]:
    import msgspec
    import orjson

    pm = polycodec.Codec(Message, "msgpack")
    pj = polycodec.Codec(Message, "json")
    mp_enc = msgspec.msgpack.Encoder()
    mp_dec = msgspec.msgpack.Decoder(Message)
    js_dec = msgspec.json.Decoder(Message)
    return [
        ("polycodec msgpack", pm.encode_one, pm.decode_one),
        ("msgspec msgpack", mp_enc.encode, mp_dec.decode),
        ("polycodec json", pj.encode_one, pj.decode_one),
        ("msgspec json", msgspec.json.encode, js_dec.decode),
        ("orjson json", orjson.dumps, lambda d: Message(**orjson.loads(d))),
    ]


def bench_redis(count: int) -> list[dict[str, Any]]:
    import redis

    rows: list[dict[str, Any]] = []
    for port in _redis_server():
        client = redis.Redis(host="127.0.0.1", port=port)
        values = messages(count)
        for name, encode, decode in redis_candidates():
            stream = f"bench-{uuid.uuid4().hex[:8]}"
            client.xgroup_create(stream, "g", id="0", mkstream=True)
            start = time.perf_counter()
            for i in range(0, count, 500):
                pipe = client.pipeline(transaction=False)
                for value in values[i : i + 500]:
                    pipe.xadd(stream, {b"data": encode(value)})
                pipe.execute()
            produce_s = time.perf_counter() - start
            start = time.perf_counter()
            got = 0
            while got < count:
                reply = client.xreadgroup("g", "c", {stream: ">"}, count=500)
                ids = []
                for _, entries in reply:
                    for entry_id, fields in entries:
                        decode(fields[b"data"])
                        ids.append(entry_id)
                client.xack(stream, "g", *ids)
                got += len(ids)
            consume_s = time.perf_counter() - start
            rows.append(
                {
                    "queue": "redis streams",
                    "candidate": name,
                    "produce_msgs_per_s": count / produce_s,
                    "consume_msgs_per_s": count / consume_s,
                }
            )
            client.delete(stream)
        client.close()
    return rows


# --- 3. Kafka serializer calls (no broker) ----------------------------------------------------


def _confluent_pairs(
    registry: Any,
) -> list[
    tuple[str, str, Callable[..., Any], Callable[..., Any], Callable[..., Any], Callable[..., Any]]
]:
    """(format, registry, polycodec ser, polycodec de, confluent ser, confluent de) on one
    registry, confluent's with to_dict/from_dict on the same dataclass."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    from polycodec.kafka import Deserializer, Serializer

    def to_dict(value: Message, ctx: Any) -> dict[str, Any]:
        return as_dict(value)

    def from_dict(data: dict[str, Any], ctx: Any) -> Message:
        return Message(**data)

    out = []
    avro = polycodec.Codec(Message, "avro")
    ser = Serializer(avro, registry)
    out.append(
        (
            "avro",
            ser,
            Deserializer(avro, registry),
            AvroSerializer(registry, ser.schema_str, to_dict),
            AvroDeserializer(registry, ser.schema_str, from_dict),
        )
    )
    js = polycodec.Codec(Message, "json")
    jser = Serializer(js, registry)
    out.append(
        (
            "json",
            jser,
            Deserializer(js, registry),
            JSONSerializer(jser.schema_str, registry, to_dict),
            JSONDeserializer(jser.schema_str, from_dict, registry),
        )
    )
    return out  # type: ignore[return-value]


def bench_kafka_calls(count: int, repeat: int) -> list[dict[str, Any]]:
    """Microseconds per serializer and per deserializer call, polycodec against confluent's
    serializers with to_dict/from_dict, interleaved repetitions, the same values and context."""
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.serialization import MessageField, SerializationContext

    registry = SchemaRegistryClient.new_client({"url": f"mock://{uuid.uuid4().hex}"})
    ctx = SerializationContext("bench", MessageField.VALUE)
    values = messages(count)
    rows = []
    for fmt, ours_ser, ours_de, their_ser, their_de in _confluent_pairs(registry):
        ours_data = [ours_ser(v, ctx) for v in values]
        their_data = [their_ser(v, ctx) for v in values]
        assert [ours_de(d, ctx) for d in their_data] == values, fmt
        assert [their_de(d, ctx) for d in ours_data] == values, fmt
        times: dict[str, list[float]] = {k: [] for k in ("os", "ts", "od", "td")}
        for _ in range(repeat):
            for key, fn, items in [
                ("os", ours_ser, values),
                ("ts", their_ser, values),
                ("od", ours_de, ours_data),
                ("td", their_de, their_data),
            ]:
                start = time.perf_counter()
                for item in items:
                    fn(item, ctx)
                times[key].append(time.perf_counter() - start)
        us = {k: min(v) / count * 1e6 for k, v in times.items()}
        rows.append(
            {
                "format": fmt,
                "polycodec_serialize_us": us["os"],
                "confluent_serialize_us": us["ts"],
                "polycodec_deserialize_us": us["od"],
                "confluent_deserialize_us": us["td"],
            }
        )
    return rows


def render(
    streams: list[dict[str, Any]],
    queues: list[dict[str, Any]],
    notes: list[str],
    calls: Optional[list[dict[str, Any]]] = None,
) -> str:
    lines = [
        "# Streams and queues",
        "",
        f"Python {platform.python_version()} on {platform.machine()}; polycodec "
        f"{polycodec.__version__}. Best of several runs, single thread.",
        "",
        "## Stream decoding (64 KiB chunks)",
        "",
        "| format | candidate | MB/s | values/s |",
        "|---|---|---:|---:|",
    ]
    for r in streams:
        lines.append(
            f"| {r['format']} | {r['candidate']} | {r['mb_per_s']:.1f} | "
            f"{r['values_per_s']:,.0f} |"
        )
    lines += [
        "",
        "## Queues (messages per second, encode/decode included)",
        "",
        "| queue | candidate | produce msg/s | consume msg/s |",
        "|---|---|---:|---:|",
    ]
    for r in queues:
        lines.append(
            f"| {r['queue']} | {r['candidate']} | {r['produce_msgs_per_s']:,.0f} | "
            f"{r['consume_msgs_per_s']:,.0f} |"
        )
    if calls:
        lines += [
            "",
            "## Kafka serializer calls (no broker; microseconds per call, lower is better)",
            "",
            "confluent-kafka's AvroSerializer/AvroDeserializer and JSONSerializer/JSONDeserializer "
            "with to_dict/from_dict on the same dataclass, on the same mock:// registry.",
            "",
            "| format | polycodec serialize | confluent serialize | ratio | polycodec "
            "deserialize | confluent deserialize | ratio |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for r in calls:
            ps, cs = r["polycodec_serialize_us"], r["confluent_serialize_us"]
            pd, cd = r["polycodec_deserialize_us"], r["confluent_deserialize_us"]
            lines.append(
                f"| {r['format']} | {ps:.2f} | {cs:.2f} | {cs / ps:.1f}x | {pd:.2f} | "
                f"{cd:.2f} | {cd / pd:.1f}x |"
            )
    lines += [""] + notes
    return "\n".join(lines) + "\n"


def main(quick: bool, out: Optional[Path]) -> int:
    count = 2_000 if quick else 100_000
    repeat = 2 if quick else 5
    queue_count = 1_000 if quick else 20_000
    streams = bench_streams(count, repeat)
    notes: list[str] = []
    queues: list[dict[str, Any]] = []
    try:
        queues += bench_kafka(queue_count)
    except ImportError as err:
        notes.append(f"Kafka skipped: {err}")
    try:
        redis_rows = bench_redis(queue_count)
        if not redis_rows:
            notes.append("Redis skipped: redis-server is not installed")
        queues += redis_rows
    except ImportError as err:
        notes.append(f"Redis skipped: {err}")
    calls: list[dict[str, Any]] = []
    try:
        calls = bench_kafka_calls(2_000 if quick else 20_000, repeat)
    except ImportError as err:
        notes.append(f"Kafka calls skipped: {err}")
    text = render(streams, queues, notes, calls)
    print(text)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "queues.md").write_text(text)
        (out / "queues.json").write_text(
            json.dumps({"streams": streams, "queues": queues, "kafka_calls": calls})
        )
        print(f"written to {out}", file=sys.stderr)
    return 0
