"""polycodec.integrations.fastapi and .starlette through the test client and through a real
uvicorn server on loopback (one process for the module), on the app in tests/fastapi_app.py:
responses written by polycodec alone (``Decimal("9.50")`` stays ``"9.50"``), request bodies
decoded by a type's plan with FastAPI's 422 shape, and what is left to FastAPI."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

import polycodec
from queue_helpers import free_port

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fastapi_app  # noqa: E402

GOOD = (
    b'{"id": 1, "placed": "2024-05-01T12:30:00+02:00",'
    b' "lines": [{"sku": "a", "quantity": 2, "price": "9.50"}]}'
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``uvicorn fastapi_app:app`` on a free loopback port; its base URL."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *(p for p in sys.path if p)])}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "fastapi_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=HERE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/price", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, process.communicate()[0].decode()[-3000:]
            assert time.monotonic() < deadline, "uvicorn did not answer"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(params=["testclient", "uvicorn"])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "testclient":
        with TestClient(fastapi_app.app, raise_server_exceptions=False) as test_client:
            yield test_client
    else:
        with httpx.Client(base_url=request.getfixturevalue("server")) as http:
            yield http


def test_decimal_stays_as_written(client: Any) -> None:
    response = client.get("/price")
    assert response.status_code == 200
    assert response.content == b'{"price":"9.50"}'
    assert response.headers["content-type"] == "application/json"
    # Without the route class FastAPI's encoder runs first (the reason for PolycodecRoute),
    # even with PolycodecResponse as the response class.
    assert client.get("/fastapi-default/price").content == b'{"price":9.5}'


def test_dataclasses_are_written_by_their_plans(client: Any) -> None:
    order = fastapi_app.ORDER
    response = client.get("/orders/3")
    assert response.content == polycodec.encode_one(dataclasses.replace(order, id=3))
    listed = client.get("/orders")
    assert listed.content == polycodec.encode_one(
        [order, dataclasses.replace(order, id=8, note="second")], type=list[fastapi_app.Order]
    )
    # Without a return annotation each value is written by its own class (the server's pid
    # tells the two transports apart).
    untyped = client.get("/untyped").json()
    assert untyped["order"] == json.loads(polycodec.encode_one(order))
    assert untyped["price"] == "9.50"
    # Through an included router too.
    assert client.get("/v2/orders/5").json()["id"] == 5


def test_body_is_decoded_by_its_plan(client: Any) -> None:
    response = client.post("/orders", content=GOOD, headers={"content-type": "application/json"})
    assert response.status_code == 201
    assert response.content == b'{"order_id":1,"total":"19.00"}'
    # The header the handler set on FastAPI's Response parameter reaches the response.
    assert response.headers["x-lines"] == "1"


def test_background_tasks_run() -> None:
    """(Through the test client, in this process: uvicorn's process has its own list.)"""
    fastapi_app.done.clear()
    with TestClient(fastapi_app.app) as client:
        assert client.post("/orders", content=GOOD).status_code == 201
    assert fastapi_app.done == [1]


def _errors(raw: bytes, **options: Any) -> list[Any]:
    """polycodec's own report for the body (the oracle), with FastAPI's body prefix."""
    try:
        polycodec.decode_one(raw, fastapi_app.Order, **options)
    except polycodec.DecodeError as exc:
        return [{**e, "loc": ["body", *e["loc"]]} for e in exc.errors()]
    raise AssertionError("the body decodes")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": 1, "placed": "2024-05-01T12:30:00Z", "lines": [{"sku": "a", "quantity": "2",'
        b' "price": "9.50"}]}',
        b'{"id": 1, "lines": []}',
        b'{"id": 1,',
        b"[1, 2]",
        b'{"id": 1, "placed": "yesterday", "lines": []}',
    ],
)
def test_a_body_that_does_not_fit_is_fastapis_422(client: Any, raw: bytes) -> None:
    response = client.post("/orders", content=raw)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail == _errors(raw)
    assert detail[0]["loc"][0] == "body"


def test_every_error_with_errors_all(client: Any) -> None:
    raw = b'{"id": "x", "placed": "2024", "lines": [{"quantity": -1, "price": "1"}]}'
    response = client.post("/orders/all-errors", content=raw)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert detail == _errors(raw, errors="all")
    assert [tuple(e["loc"]) for e in detail] == [
        ("body", "id"),
        ("body", "placed"),
        ("body", "lines", 0, "sku"),
    ]


def test_missing_and_optional_bodies(client: Any) -> None:
    missing = client.post("/orders")
    assert missing.status_code == 422
    assert missing.json() == {
        "detail": [{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}]
    }
    assert client.post("/notes").json() == {"note": None}
    assert client.post("/notes", content=b'"hi"').json() == {"note": "hi"}


def test_what_is_left_to_fastapi(client: Any) -> None:
    deleted = client.delete("/orders/3")
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert "content-length" not in deleted.headers or deleted.headers["content-length"] == "0"
    text = client.get("/text")
    assert (text.content, text.headers["content-type"]) == (
        b"as returned",
        "text/plain; charset=utf-8",
    )
    html = client.get("/html")
    assert html.content == b"<p>FastAPI's own</p>"
    assert html.headers["content-type"].startswith("text/html")
    # A value that does not fit the return annotation is the server's error (EncodeError).
    assert client.get("/wrong").status_code == 500


def test_starlette_app(client: Any) -> None:
    created = client.post("/starlette/orders", content=GOOD)
    assert (created.status_code, created.content) == (201, b'{"order_id":1,"total":"19.00"}')
    raw = b'{"id": 1}'
    refused = client.post("/starlette/orders", content=raw)
    assert refused.status_code == 422
    assert refused.json() == {"detail": _errors(raw)}


def test_openapi_documents_the_response_schema() -> None:
    document = TestClient(fastapi_app.app).get("/openapi.json").json()
    created = document["paths"]["/orders"]["post"]["responses"]["201"]
    assert created["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Receipt"
    }
    assert set(document["components"]["schemas"]["Receipt"]["properties"]) == {
        "order_id",
        "total",
    }
