"""What the framework integrations cost per request and per task, against each framework's own
path (the numbers in ``benches/results/integrations.md``).

``python -m benches.integrations CASE N`` runs ``N`` iterations of one case after one warm-up
iteration; run it under ``valgrind --tool=callgrind`` with ``N`` = 0 and ``N`` = 200 and divide
the difference of the two totals by 200 for the case's instructions per iteration (stable on a
loaded machine, where wall-clock times are not). ``python -m benches.integrations --report``
does that for every case and prints the report's table; ``--timed`` prints median wall-clock
times of many repeats instead (for a quiet machine).

FastAPI cases: one POST request through the app in this process (an ASGI call, no socket),
whose JSON body is an order of ten lines (Decimal prices, an aware datetime) that the handler
returns as it got it, so each request decodes one body and encodes one response:

- ``fastapi-polycodec``: ``PolycodecRoute``, ``Body[Order]`` on a dataclass, ``-> Order``;
- ``fastapi-pydantic``: FastAPI's default, a pydantic ``BaseModel`` body and return type
  (FastAPI's fast path: pydantic validates the JSON and writes the response bytes itself);
- ``fastapi-orjson``: the same models with ``response_class=ORJSONResponse``.

Celery cases: the data's round trip through Celery's and kombu's own serialization calls for one
task, without a broker (the broker's and the network's costs are the same for every case):
the caller's argument conversion, the message body's ``kombu.serialization.dumps`` and
``loads``, the worker's argument conversion and the task's result conversion, the result's
``dumps`` and ``loads`` (as the result backend stores and reads it), and the caller's typed
result. The task gets the same order and returns a receipt.

- ``celery-polycodec-json`` / ``celery-polycodec-msgpack``: ``TypedTask`` on dataclasses with
  polycodec's serializers;
- ``celery-typed-json``: ``TypedTask`` with Celery's default serializer, kombu's ``json``;
- ``celery-pydantic-json``: Celery's own typed tasks, ``@app.task(pydantic=True)`` on pydantic
  models with kombu's ``json`` (the caller validates the receipt it gets back);
- ``celery-plain-json``: kombu's ``json`` with plain dicts, nothing checked (the floor).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import decimal
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import pydantic

# Imported here, not where the apps are made: FastAPI resolves the handlers' string annotations
# (this module postpones them) in the module's globals.
from polycodec.integrations.fastapi import Body, PolycodecResponse, PolycodecRoute

LINES = 10
PLACED = datetime.datetime(
    2024, 5, 1, 12, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
)


@dataclasses.dataclass
class Line:
    sku: str
    quantity: int
    price: decimal.Decimal


@dataclasses.dataclass
class Order:
    id: int
    placed: datetime.datetime
    customer: str
    lines: list[Line]
    note: str | None = None


@dataclasses.dataclass
class Receipt:
    order_id: int
    total: decimal.Decimal


class LineModel(pydantic.BaseModel):
    sku: str
    quantity: int
    price: decimal.Decimal


class OrderModel(pydantic.BaseModel):
    id: int
    placed: datetime.datetime
    customer: str
    lines: list[LineModel]
    note: str | None = None


class ReceiptModel(pydantic.BaseModel):
    order_id: int
    total: decimal.Decimal


ORDER = Order(
    42,
    PLACED,
    "ACME Corporation",
    [Line(f"sku-{i:04}", i + 1, decimal.Decimal(f"{i}.95")) for i in range(LINES)],
)
ORDER_MODEL = OrderModel.model_validate(dataclasses.asdict(ORDER))


def _total(lines: Any) -> decimal.Decimal:
    return sum((line.price * line.quantity for line in lines), decimal.Decimal(0))


# FastAPI ------------------------------------------------------------------------------------


def _fastapi_app(kind: str) -> Any:
    from fastapi import FastAPI
    from fastapi.responses import ORJSONResponse

    if kind == "polycodec":
        app = FastAPI(default_response_class=PolycodecResponse)
        app.router.route_class = PolycodecRoute

        @app.post("/orders")
        async def echo(order: Body[Order]) -> Order:
            return order

    else:
        app = FastAPI(default_response_class=ORJSONResponse) if kind == "orjson" else FastAPI()

        @app.post("/orders")
        async def echo_model(order: OrderModel) -> OrderModel:
            return order

    return app


def _fastapi_case(kind: str) -> Callable[[int], Any]:
    import polycodec

    app = _fastapi_app(kind)
    body = polycodec.encode_one(ORDER)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/orders",
        "raw_path": b"/orders",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[bytes] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    async def requests(n: int) -> None:
        for _ in range(n):
            await app(dict(scope), receive, send)

    def run(n: int) -> Any:
        asyncio.run(requests(n))
        return sent[-1] if sent else None

    return run


# Celery -------------------------------------------------------------------------------------


def _celery_case(kind: str) -> Callable[[int], Any]:
    from celery import Celery
    from kombu import serialization

    from polycodec.integrations.celery import TypedTask, register_serializers

    register_serializers()
    serializer = {"polycodec-json": "polycodec-json", "polycodec-msgpack": "polycodec-msgpack"}
    chosen = serializer.get(kind, "json")
    app = Celery("bench", broker="memory://", set_as_current=False)
    app.conf.update(task_serializer=chosen, result_serializer=chosen)
    accept = [serialization.registry.name_to_type[chosen]]
    embed = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}

    def round_trip(
        caller: Callable[[], tuple[Any, Any]],
        worker: Callable[[Any, Any], Any],
        typed_result: Callable[[Any], Any],
    ) -> Callable[[int], Any]:
        def run(n: int) -> Any:
            got = None
            for _ in range(n):
                args, kwargs = caller()
                ctype, encoding, data = serialization.dumps((args, kwargs, embed), chosen)
                args, kwargs, _ = serialization.loads(data, ctype, encoding, accept=accept)
                meta = {
                    "status": "SUCCESS",
                    "result": worker(args, kwargs),
                    "traceback": None,
                    "children": [],
                    "date_done": "2024-05-01T12:30:00.000000+00:00",
                    "task_id": "8f1c8ef5-6b1a-4b2c-9d84-0c3c0d3e9a51",
                }
                ctype, encoding, data = serialization.dumps(meta, chosen)
                got = typed_result(serialization.loads(data, ctype, encoding, accept=accept))
            return got

        return run

    if kind == "pydantic-json":

        @app.task(pydantic=True)
        def total_model(order: OrderModel) -> ReceiptModel:
            return ReceiptModel(order_id=order.id, total=_total(order.lines))

        return round_trip(
            lambda: total_model._dump_pydantic_arguments((ORDER_MODEL,), {}),
            lambda args, kwargs: total_model.run(*args, **kwargs),
            lambda meta: ReceiptModel.model_validate(meta["result"]),
        )
    if kind == "plain-json":
        plain = json.loads(json.dumps(dataclasses.asdict(ORDER), default=str))

        @app.task
        def total_dict(order: dict[str, Any]) -> dict[str, Any]:
            amount = sum(
                (decimal.Decimal(x["price"]) * x["quantity"] for x in order["lines"]),
                decimal.Decimal(0),
            )
            return {"order_id": order["id"], "total": str(amount)}

        return round_trip(
            lambda: ((plain,), {}),
            lambda args, kwargs: total_dict.run(*args, **kwargs),
            lambda meta: meta["result"],
        )

    @app.task(base=TypedTask)
    def total(order: Order) -> Receipt:
        return Receipt(order.id, _total(order.lines))

    plans = total.polycodec_plans()

    def worker(args: Any, kwargs: Any) -> Any:
        # What TypedTask.__call__ does under the worker's tracer.
        args, kwargs = plans.decode(args, kwargs)
        return plans.encode_result(total.run(*args, **kwargs))

    return round_trip(
        lambda: plans.encode((ORDER,), {}),
        worker,
        lambda meta: plans.decode_result(meta["result"]),
    )


CASES: dict[str, Callable[[], Callable[[int], Any]]] = {
    "fastapi-polycodec": lambda: _fastapi_case("polycodec"),
    "fastapi-pydantic": lambda: _fastapi_case("pydantic"),
    "fastapi-orjson": lambda: _fastapi_case("orjson"),
    "celery-polycodec-json": lambda: _celery_case("polycodec-json"),
    "celery-polycodec-msgpack": lambda: _celery_case("polycodec-msgpack"),
    "celery-typed-json": lambda: _celery_case("typed-json"),
    "celery-pydantic-json": lambda: _celery_case("pydantic-json"),
    "celery-plain-json": lambda: _celery_case("plain-json"),
}


def check() -> None:
    """Every case of a framework gives the same data back (so they are compared on equal work)."""
    responses = {name: json.loads(CASES[name]()(1)) for name in CASES if name.startswith("fastapi")}
    expected = json.loads(json.dumps(dataclasses.asdict(ORDER), default=str))
    expected["placed"] = PLACED.isoformat()
    for name, got in responses.items():
        got["placed"] = datetime.datetime.fromisoformat(
            got["placed"].replace("Z", "+00:00")
        ).isoformat()
        assert got == expected, (name, got)
    receipts = {name: CASES[name]()(1) for name in CASES if name.startswith("celery")}
    for name, got in receipts.items():
        total = got["total"] if isinstance(got, dict) else got.total
        assert decimal.Decimal(total) == _total(ORDER.lines), (name, got)


def _callgrind(case: str, n: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-m",
                "benches.integrations",
                case,
                str(n),
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        with open(out) as fp:
            match = re.search(r"^summary: (\d+)", fp.read(), re.M)
        assert match, "no summary in callgrind's output"
        return int(match[1])


def report(n: int) -> str:
    check()
    counts = {case: (_callgrind(case, n) - _callgrind(case, 0)) / n for case in CASES}
    rows = [
        "| Case | Instructions per iteration | ÷ polycodec's |",
        "|---|--:|--:|",
    ]
    for prefix, ours in [("fastapi", "fastapi-polycodec"), ("celery", "celery-polycodec-json")]:
        for case, count in counts.items():
            if case.startswith(prefix):
                rows.append(f"| `{case}` | {count:,.0f} | {count / counts[ours]:.2f}× |")
    return "\n".join(rows)


def timed(repeats: int, n: int) -> str:
    check()
    rows = ["| Case | Median µs per iteration |", "|---|--:|"]
    for case, make in CASES.items():
        run = make()
        run(1)
        samples = []
        gc.disable()
        for _ in range(repeats):
            start = time.perf_counter()
            run(n)
            samples.append((time.perf_counter() - start) / n * 1e6)
        gc.enable()
        rows.append(f"| `{case}` | {statistics.median(samples):.1f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", choices=sorted(CASES))
    parser.add_argument("n", nargs="?", type=int, default=0)
    parser.add_argument("--report", action="store_true", help="callgrind every case (N=0, 200)")
    parser.add_argument("--timed", action="store_true", help="median wall-clock times instead")
    args = parser.parse_args(argv)
    if args.report:
        print(report(200))
    elif args.timed:
        print(timed(50, 100))
    elif args.case:
        run = CASES[args.case]()
        run(1)  # builds the app's middleware stack, compiles every plan
        gc.disable()
        run(args.n)
        gc.enable()
    else:
        parser.error("give a case and N, or --report, or --timed")


if __name__ == "__main__":
    main()
