"""polycodec.integrations.celery with a real Celery worker (``celery -A celery_tasks worker``,
one process for the module, solo pool) and a real redis-server as broker and result backend:
typed tasks get their parameters' types on the worker and give typed results, with
polycodec's two serializers and with kombu's own JSON; a payload that does not fit fails its
task, not the worker. The serializers' bytes are checked against json and msgpack."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Iterator

import msgpack
import pytest

import polycodec
from polycodec.integrations import celery as integration
from queue_helpers import redis_server

HERE = Path(__file__).resolve().parent
SERIALIZERS = ["polycodec-json", "polycodec-msgpack", "json"]


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The test app, connected to a fresh redis-server, with one worker process running."""
    for port in redis_server():
        broker = f"redis://127.0.0.1:{port}/0"
        os.environ["POLYCODEC_CELERY_BROKER"] = broker
        sys.path.insert(0, str(HERE))
        import celery_tasks

        celery_tasks.app.conf.broker_url = broker
        celery_tasks.app.conf.result_backend = broker
        log = tmp_path_factory.mktemp("celery") / "worker.log"
        env = {
            **os.environ,
            "POLYCODEC_CELERY_BROKER": broker,
            "PYTHONPATH": os.pathsep.join([str(HERE), *(p for p in sys.path if p)]),
        }
        with open(log, "wb") as out:
            worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "celery_tasks",
                    "worker",
                    "--pool=solo",
                    "--loglevel=INFO",
                    "--without-gossip",
                    "--without-mingle",
                    "--without-heartbeat",
                    "--hostname=polycodec-test@%h",
                ],
                cwd=HERE,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + 90
            while not celery_tasks.app.control.ping(timeout=0.5):
                assert worker.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, "the worker did not answer a ping"
            celery_tasks.worker_process = worker
            celery_tasks.worker_log = log
            yield celery_tasks
        finally:
            worker.terminate()
            try:
                worker.wait(30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait(10)
            sys.path.remove(str(HERE))


def _order(tasks: Any, order_id: int = 7) -> Any:
    placed = datetime.datetime(
        2024, 5, 1, 12, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
    )
    lines = [
        tasks.Line("a", 2, decimal.Decimal("9.50")),
        tasks.Line("b", 1, decimal.Decimal("0.05")),
    ]
    return tasks.Order(order_id, placed, lines, note="gift")


@pytest.mark.parametrize("serializer", SERIALIZERS)
def test_typed_task_gets_instances_and_gives_a_typed_result(tasks: Any, serializer: str) -> None:
    result = tasks.total.apply_async(
        (_order(tasks),), {"discount": decimal.Decimal("0.55")}, serializer=serializer
    )
    receipt = result.get(timeout=30)
    assert isinstance(result, integration.TypedAsyncResult)
    assert type(receipt) is tasks.Receipt
    # Decimal arithmetic on the worker, exact to the cent, and the scale kept on the way back.
    assert str(receipt.total) == "18.50"
    assert receipt.order_id == 7
    assert receipt.worker_pid == tasks.worker_process.pid != os.getpid()
    # What the backend stored is the result's JSON form, by the return annotation's plan.
    assert result.result == {"order_id": 7, "total": "18.50", "worker_pid": receipt.worker_pid}


def test_untyped_task_gets_the_json_form_of_a_dataclass(tasks: Any) -> None:
    order = _order(tasks)
    got = tasks.untyped.delay(order).get(timeout=30)
    assert got == {"type": "dict", "payload": json.loads(polycodec.encode_one(order))}


def test_bound_task_keeps_its_request(tasks: Any) -> None:
    result = tasks.request_id.delay(_order(tasks))
    assert result.get(timeout=30) == [result.id, "Order"]


def test_chain_hands_a_typed_result_to_the_next_typed_task(tasks: Any) -> None:
    tags = [uuid.UUID(int=1), uuid.UUID(int=2)]
    chain = tasks.total.s(_order(tasks, 9)) | tasks.describe.s(*tags, apples=2, pears=3)
    assert chain.apply_async().get(timeout=30) == "order 9: 19.05 (2 tags, 5)"


def test_payload_that_does_not_fit_fails_the_task_not_the_worker(tasks: Any) -> None:
    # send_task skips the caller's side (as a producer in another service would): the worker's
    # decode by the parameter's plan is what refuses it.
    bad = {"id": 7, "placed": "2024-05-01T12:30:00Z", "lines": [{"sku": "a", "quantity": "two"}]}
    result = tasks.app.send_task("celery_tasks.total", args=[bad])
    with pytest.raises(integration.TaskArgumentError) as caught:
        result.get(timeout=30)
    error = caught.value
    assert result.state == "FAILURE"
    assert (error.task, error.argument) == ("celery_tasks.total", "order")
    assert error.path == "$.lines[0].quantity"
    assert error.loc == ("order", "lines", 0, "quantity")
    assert error.errors() == [
        {
            "type": "int_type",
            "loc": ("order", "lines", 0, "quantity"),
            "msg": "expected int, got str",
        }
    ]
    assert str(error) == (
        "task 'celery_tasks.total', argument 'order': expected int, got str "
        "(at $.lines[0].quantity)"
    )
    assert isinstance(error, polycodec.ValidationError)
    # The worker goes on with the next message.
    assert tasks.total.delay(_order(tasks, 8)).get(timeout=30).order_id == 8
    assert tasks.worker_process.poll() is None


def test_undecodable_message_body_is_dropped_not_the_worker(tasks: Any) -> None:
    """Celery's own handling of a body no serializer can read (as for kombu's json): the worker
    logs the decoder's error and acknowledges the message; no task runs, the worker goes on."""
    task_id = str(uuid.uuid4())
    with tasks.app.producer_or_acquire() as producer:
        producer.publish(
            b"\xc1 not MessagePack",
            routing_key="celery",
            exchange="",
            serializer=None,
            content_type=integration.MSGPACK_CONTENT_TYPE,
            content_encoding="binary",
            headers={"lang": "py", "task": "celery_tasks.total", "id": task_id, "root_id": task_id},
        )
    deadline = time.monotonic() + 30
    while "Can't decode message body" not in tasks.worker_log.read_text():
        assert time.monotonic() < deadline, "the worker did not report the body"
        time.sleep(0.1)
    assert "malformed MessagePack: reserved byte 0xc1 at byte 0" in tasks.worker_log.read_text()
    assert tasks.total.delay(_order(tasks, 10)).get(timeout=30).order_id == 10
    assert tasks.app.AsyncResult(task_id).state == "PENDING"
    assert tasks.worker_process.poll() is None


def test_caller_refuses_an_argument_of_the_wrong_type(tasks: Any) -> None:
    wrong = dataclasses.replace(_order(tasks), id="seven")
    with pytest.raises(polycodec.EncodeError) as caught:
        tasks.total.delay(wrong)
    assert str(caught.value).startswith("task 'celery_tasks.total', argument 'order':")
    assert caught.value.path == "$.id"


def test_eager_and_direct_calls(tasks: Any) -> None:
    order = _order(tasks)
    eager = tasks.total.apply((order,))
    assert isinstance(eager, integration.TypedEagerResult)
    assert eager.get().total == decimal.Decimal("19.05")
    assert eager.get().worker_pid == os.getpid()
    # Called directly, a task is a function call: the value itself, not its JSON form.
    assert tasks.total(order) == tasks.Receipt(7, decimal.Decimal("19.05"), os.getpid())


def test_a_parameter_type_polycodec_cannot_compile_is_named() -> None:
    plans = integration._Plans("t", lambda when: None, {})
    assert plans.typed is False

    def task(path: Path) -> None:
        return None

    with pytest.raises(TypeError, match="task 't', parameter 'path'"):
        integration._Plans("t", task, {})


@dataclasses.dataclass
class Event:
    at: datetime.datetime
    blob: bytes
    amount: decimal.Decimal


def test_serializers_write_what_json_and_msgpack_read() -> None:
    from celery.canvas import Signature

    event = Event(
        datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc),
        b"\x00\xff",
        decimal.Decimal("1.10"),
    )
    callback = Signature("tasks.next", args=(1,))
    body = ([event, 1, "x"], {"k": [1.5, None]}, {"callbacks": [callback], "chain": None})
    expected = [
        [{"at": "2024-05-01T00:00:00Z", "blob": "AP8=", "amount": "1.10"}, 1, "x"],
        {"k": [1.5, None]},
        {"callbacks": [json.loads(json.dumps(dict(callback)))], "chain": None},
    ]
    data = integration.dumps_json(body)
    assert json.loads(data) == expected
    assert integration.loads_json(data) == expected
    packed = integration.dumps_msgpack(body)
    unpacked = msgpack.unpackb(packed, timestamp=3)
    assert unpacked[0][0]["blob"] == b"\x00\xff"
    assert unpacked[0][0]["at"] == datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)
    assert integration.loads_msgpack(packed) == unpacked
    with pytest.raises(polycodec.DecodeError, match="0xc1"):
        integration.loads_msgpack(b"\xc1")


def test_serializers_are_registered_under_their_names() -> None:
    from kombu import serialization

    integration.register_serializers()
    for name, content_type in [
        (integration.JSON_SERIALIZER, integration.JSON_CONTENT_TYPE),
        (integration.MSGPACK_SERIALIZER, integration.MSGPACK_CONTENT_TYPE),
    ]:
        got_type, _, data = serialization.dumps({"a": decimal.Decimal("1.0")}, serializer=name)
        assert got_type == content_type
        assert serialization.loads(data, content_type, None, accept=[content_type]) == {"a": "1.0"}
