"""`python -m benches --queues` measures what it claims: every stream candidate decodes the
whole stream, and the Redis candidates move every message (small counts; no timing asserted)."""

from __future__ import annotations

from confluent_kafka.serialization import MessageField, SerializationContext

from benches import queues


def test_stream_candidates_decode_every_value() -> None:
    rows = queues.bench_streams(300, repeat=1)
    formats = {row["format"] for row in rows}
    assert formats == {"json", "msgpack", "pickle", "avro"}
    assert all(row["mb_per_s"] > 0 for row in rows)
    names = {row["candidate"] for row in rows}
    assert "msgspec.json.Decoder, lines split by hand" in names
    assert "msgpack.Unpacker.feed (dicts)" in names


def test_queue_candidates_agree_on_the_values() -> None:
    values = queues.messages(50)
    for name, encode, decode in queues.redis_candidates():
        assert [decode(encode(v)) for v in values] == values, name
    ctx = SerializationContext("topic", MessageField.VALUE)
    queues.PASS_VALUES[:] = values
    for name, ser, de in queues.kafka_candidates():
        if name.startswith("pass-through"):
            # Pre-encoded bytes handed back as they are: no decoding, the broker's ceiling.
            assert [de(ser(v, ctx), ctx) for v in values] == [ser(v, ctx) for v in values]
            continue
        assert [de(ser(v, ctx), ctx) for v in values] == values, name


def test_kafka_call_bench_compares_both_formats() -> None:
    rows = queues.bench_kafka_calls(50, repeat=1)
    assert {row["format"] for row in rows} == {"avro", "json"}
    assert all(v > 0 for row in rows for k, v in row.items() if k.endswith("_us"))


def test_redis_queue_bench_moves_every_message() -> None:
    rows = queues.bench_redis(200)
    assert {row["candidate"] for row in rows} == {n for n, _, _ in queues.redis_candidates()}
