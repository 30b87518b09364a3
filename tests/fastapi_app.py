"""The FastAPI app (with a Starlette app mounted at /starlette) that tests/test_fastapi.py
sends requests to, through the test client and through uvicorn on loopback
(``uvicorn fastapi_app:app``)."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import os
from typing import Annotated, Optional

from fastapi import APIRouter, BackgroundTasks, FastAPI, Response
from fastapi.responses import HTMLResponse, PlainTextResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from polycodec.integrations.fastapi import Body, PolycodecResponse, PolycodecRoute, body
from polycodec.integrations.starlette import InvalidBody, invalid_body_response, read_body


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


def receipt(order: Order) -> Receipt:
    return Receipt(order.id, sum((x.price * x.quantity for x in order.lines), decimal.Decimal(0)))


ORDER = Order(
    7,
    datetime.datetime(2024, 5, 1, 12, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    [Line("a", 2, decimal.Decimal("9.50")), Line("b", 1, decimal.Decimal("0.05"))],
)
# What background tasks did, for the test client to read (the uvicorn process has its own).
done: list[int] = []

app = FastAPI(default_response_class=PolycodecResponse)
app.router.route_class = PolycodecRoute


@app.get("/price")
def price() -> dict[str, decimal.Decimal]:
    return {"price": decimal.Decimal("9.50")}


@app.get("/untyped")
async def untyped():  # type: ignore[no-untyped-def]
    return {"price": decimal.Decimal("9.50"), "order": ORDER, "pid": os.getpid()}


@app.get("/orders/{order_id}")
async def get_order(order_id: int) -> Order:
    return dataclasses.replace(ORDER, id=order_id)


@app.get("/orders")
def list_orders() -> list[Order]:
    return [ORDER, dataclasses.replace(ORDER, id=8, note="second")]


@app.post("/orders", status_code=201)
async def create(order: Body[Order], response: Response, tasks: BackgroundTasks) -> Receipt:
    response.headers["x-lines"] = str(len(order.lines))
    tasks.add_task(done.append, order.id)
    return receipt(order)


@app.post("/orders/all-errors")
def create_all_errors(order: Annotated[Order, body(Order, errors="all")]) -> Receipt:
    return receipt(order)


@app.post("/notes")
def note(text: Body[Optional[str]]) -> dict[str, Optional[str]]:
    return {"note": text}


@app.delete("/orders/{order_id}", status_code=204)
def delete(order_id: int) -> None:
    return None


@app.get("/text")
def text() -> PlainTextResponse:
    return PlainTextResponse("as returned")


@app.get("/html", response_class=HTMLResponse)
def html() -> str:
    return "<p>FastAPI's own</p>"


@app.get("/wrong")
def wrong() -> Receipt:
    return {"order_id": "seven"}  # type: ignore[return-value]


v2 = APIRouter(prefix="/v2", route_class=PolycodecRoute)


@v2.get("/orders/{order_id}")
def get_order_v2(order_id: int) -> Order:
    return dataclasses.replace(ORDER, id=order_id)


app.include_router(v2)

# FastAPI's own route class, for comparison: a value without a response model goes through
# jsonable_encoder before the response class sees it.
plain = APIRouter(prefix="/fastapi-default")


@plain.get("/price")
def plain_price():  # type: ignore[no-untyped-def]
    return {"price": decimal.Decimal("9.50")}


app.include_router(plain, default_response_class=PolycodecResponse)


async def starlette_create(request: Request) -> PolycodecResponse:
    order = await read_body(request, Order)
    return PolycodecResponse(receipt(order), status_code=201)


starlette_app = Starlette(
    routes=[Route("/orders", starlette_create, methods=["POST"])],
    exception_handlers={InvalidBody: invalid_body_response},
)
app.mount("/starlette", starlette_app)
