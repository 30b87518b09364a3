"""The Redis Streams worker (examples/redis_worker.py) against a real redis-server: two
producers XADD, a consumer group of two workers reads with XREADGROUP, decodes and
acknowledges; undecodable messages go to the dead-letter stream with their error; the entries a
crashed consumer had read are reclaimed. Nothing is lost, nothing is acknowledged twice."""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator

import msgpack
import pytest
import redis

import polycodec
from queue_helpers import load_example, redis_server

worker = load_example("redis_worker")
Job = worker.Job


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    for port in redis_server():
        connection = redis.Redis(host="127.0.0.1", port=port)
        yield connection
        connection.close()


def test_workers_decode_acknowledge_and_dead_letter(client: Any) -> None:
    stream, group = "jobs", "workers"
    codec = polycodec.Codec(Job, "msgpack")
    worker.ensure_group(client, stream, group)
    worker.ensure_group(client, stream, group)  # idempotent

    def producer(start: int) -> None:
        producer_client = redis.Redis(connection_pool=client.connection_pool)
        worker.produce(
            producer_client, stream, codec, [Job(i, f"t{i}") for i in range(start, start + 200)]
        )

    threads = [threading.Thread(target=producer, args=(n,)) for n in (0, 200)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    bad = [b"\xc1", msgpack.packb({"id": "seven", "task": "x"}), b""]
    for payload in bad:
        client.xadd(stream, {worker.FIELD: payload})
    client.xadd(stream, {b"other": b"no data field"})
    total = 400 + len(bad) + 1

    # A consumer that reads and dies before acknowledging.
    crashed = client.xreadgroup(group, "crashed", {stream: ">"}, count=30)
    assert len(crashed[0][1]) == 30

    handled: list[Any] = []
    acked = [0, 0]
    lock = threading.Lock()

    def handle(value: Any) -> None:
        with lock:
            handled.append(value)

    def run(n: int) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = worker.work_once(client, stream, group, f"w{n}", codec, handle, count=50)
            done += worker.reclaim(client, stream, group, f"w{n}", codec, handle, min_idle_ms=300)
            acked[n] += done
            if sum(acked) >= total:
                return

    workers = [threading.Thread(target=run, args=(n,)) for n in range(2)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()

    assert sum(acked) == total
    ids = sorted(job.id for job in handled)
    assert ids == list(range(400)), "every job handled exactly once"
    assert all(isinstance(job, Job) for job in handled)
    assert client.xpending(stream, group)["pending"] == 0
    dead = client.xrange(worker.dead_letter_stream(stream))
    assert len(dead) == len(bad) + 1
    errors = [fields[b"error"].decode() for _, fields in dead]
    assert any("0xc1" in e for e in errors)
    assert any(e.startswith("ValidationError") and "$.id" in e for e in errors)
    assert {fields[worker.FIELD] for _, fields in dead} == set(bad)


def test_example_main_runs(client: Any) -> None:
    port = client.connection_pool.connection_kwargs["port"]
    worker.main(["--port", str(port), "--stream", "demo", "--group", "g"])
    assert client.xpending("demo", "g")["pending"] == 0
