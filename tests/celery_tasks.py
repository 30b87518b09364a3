"""The Celery app that tests/test_celery.py runs a real worker of (``celery -A celery_tasks
worker``): typed tasks (polycodec's ``TypedTask``) and an untyped one, with Redis as broker and
result backend (``POLYCODEC_CELERY_BROKER``)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import os
import uuid
from typing import Any, Optional

from celery import Celery

from polycodec.integrations.celery import TypedTask, register_serializers


@dataclasses.dataclass
class Line:
    sku: str
    quantity: int
    price: decimal.Decimal


@dataclasses.dataclass
class Order:
    id: int
    placed: datetime.datetime
    lines: list[Line]
    note: Optional[str] = None


@dataclasses.dataclass
class Receipt:
    order_id: int
    total: decimal.Decimal
    worker_pid: int


register_serializers()
broker = os.environ.get("POLYCODEC_CELERY_BROKER", "redis://127.0.0.1:6379/0")
app = Celery("celery_tasks", broker=broker, backend=broker)
app.conf.update(
    task_serializer="polycodec-json",
    result_serializer="polycodec-json",
    accept_content=["polycodec-json", "polycodec-msgpack", "json"],
    result_accept_content=["polycodec-json", "polycodec-msgpack", "json"],
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
)


@app.task(base=TypedTask)
def total(order: Order, discount: decimal.Decimal = decimal.Decimal("0")) -> Receipt:
    """Runs on the worker: gets an Order (Lines, Decimals, an aware datetime), not a dict."""
    assert isinstance(order, Order) and isinstance(order.placed, datetime.datetime)
    assert all(isinstance(line, Line) for line in order.lines)
    amount = sum((line.price * line.quantity for line in order.lines), decimal.Decimal("0"))
    return Receipt(order.id, amount - discount, os.getpid())


@app.task(base=TypedTask)
def describe(receipt: Receipt, *tags: uuid.UUID, **counts: int) -> str:
    """The next task of a chain: a Receipt from total's result; typed *args and **kwargs."""
    assert isinstance(receipt, Receipt)
    assert all(isinstance(tag, uuid.UUID) for tag in tags)
    assert all(type(count) is int for count in counts.values())
    return f"order {receipt.order_id}: {receipt.total} ({len(tags)} tags, {sum(counts.values())})"


@app.task(base=TypedTask, bind=True)
def request_id(self: Any, order: Order) -> list[str]:
    """A bound task keeps its request (id) while its arguments are decoded."""
    return [str(self.request.id), type(order).__name__]


@app.task
def untyped(payload: Any) -> Any:
    """A plain task: polycodec's serializer hands it plain values (a dataclass as a dict)."""
    return {"type": type(payload).__name__, "payload": payload}
