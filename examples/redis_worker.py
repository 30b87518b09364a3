"""A Redis Streams worker with polycodec: producers XADD encoded messages, a consumer group
reads them with XREADGROUP, decodes and acknowledges; a message that fails to decode goes to a
dead-letter stream with its error.

    python examples/redis_worker.py --port 6379

Delivery is at least once, acknowledged exactly once: a message is acknowledged only after it
was handled (or moved to the dead-letter stream, in the same MULTI transaction as its XACK), and
a worker that dies before acknowledging leaves its messages pending, where `reclaim` (XAUTOCLAIM)
hands them to a live worker. Every worker of the group may run on another machine.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable, Optional

import redis

import polycodec

FIELD = b"data"


@dataclass
class Job:
    id: int
    task: str
    priority: int = 0


def produce(client: Any, stream: str, codec: polycodec.Codec[Any], values: Any) -> list[bytes]:
    """XADDs each value, encoded, as the stream entry's `data` field; the entry ids."""
    pipe = client.pipeline(transaction=False)
    for value in values:
        pipe.xadd(stream, {FIELD: codec.encode_one(value)})
    return list(pipe.execute())


def ensure_group(client: Any, stream: str, group: str) -> None:
    """Creates the consumer group (reading from the stream's start) unless it exists."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as err:
        if "BUSYGROUP" not in str(err):
            raise


def dead_letter_stream(stream: str) -> str:
    return f"{stream}:dead"


def handle_entries(
    client: Any,
    stream: str,
    group: str,
    codec: polycodec.Codec[Any],
    entries: list[tuple[bytes, dict[bytes, bytes]]],
    handle: Callable[[Any], None],
) -> int:
    """Decodes, handles and acknowledges entries; an entry that fails to decode moves to the
    dead-letter stream with its error. Returns how many entries were acknowledged."""
    acked = 0
    for entry_id, fields in entries:
        try:
            value = codec.decode_one(fields.get(FIELD, b""))
        except polycodec.DecodeError as err:
            pipe = client.pipeline(transaction=True)
            pipe.xadd(
                dead_letter_stream(stream),
                {
                    "id": entry_id,
                    FIELD: fields.get(FIELD, b""),
                    "error": f"{type(err).__name__}: {err}",
                },
            )
            pipe.xack(stream, group, entry_id)
            acked += pipe.execute()[1]
            continue
        handle(value)
        acked += client.xack(stream, group, entry_id)
    return acked


def work_once(
    client: Any,
    stream: str,
    group: str,
    consumer: str,
    codec: polycodec.Codec[Any],
    handle: Callable[[Any], None],
    count: int = 100,
    block_ms: int = 100,
) -> int:
    """Reads up to `count` new entries for `consumer` (XREADGROUP) and handles them."""
    reply = client.xreadgroup(group, consumer, {stream: ">"}, count=count, block=block_ms)
    acked = 0
    for _, entries in reply or []:
        acked += handle_entries(client, stream, group, codec, entries, handle)
    return acked


def reclaim(
    client: Any,
    stream: str,
    group: str,
    consumer: str,
    codec: polycodec.Codec[Any],
    handle: Callable[[Any], None],
    min_idle_ms: int = 30_000,
) -> int:
    """Takes over the entries other consumers left pending for `min_idle_ms` (XAUTOCLAIM), and
    handles them: what a dead worker had read is not lost."""
    acked, start = 0, "0-0"
    while True:
        reply = client.xautoclaim(stream, group, consumer, min_idle_ms, start_id=start, count=100)
        start, entries = reply[0], reply[1]
        acked += handle_entries(client, stream, group, codec, entries, handle)
        if start in (b"0-0", "0-0"):
            return acked


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6379)
    parser.add_argument("--stream", default="jobs")
    parser.add_argument("--group", default="workers")
    parser.add_argument("--consumer", default="worker-1")
    args = parser.parse_args(argv)
    client = redis.Redis(host=args.host, port=args.port)
    codec = polycodec.Codec(Job, "msgpack")
    ensure_group(client, args.stream, args.group)
    produce(client, args.stream, codec, [Job(i, f"task {i}") for i in range(5)])
    done: list[Job] = []
    reclaim(client, args.stream, args.group, args.consumer, codec, done.append)
    while work_once(client, args.stream, args.group, args.consumer, codec, done.append):
        pass
    print(f"handled {len(done)} jobs; dead letters: {client.xlen(dead_letter_stream(args.stream))}")


if __name__ == "__main__":
    main()
