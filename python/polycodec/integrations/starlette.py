"""Starlette: a response class that writes values with polycodec, and request bodies decoded
by a type's plan straight from their bytes (the optional extra ``polycodec[starlette]``).

>>> async def create(request):
...     order = await read_body(request, Order)        # InvalidBody if it does not fit
...     return PolycodecResponse(Receipt(order.id, ...), status_code=201)
>>> app = Starlette(routes=[...], exception_handlers={InvalidBody: invalid_body_response})

``invalid_body_response`` answers 422 with ``{"detail": [...]}``, the shape of FastAPI's
validation errors: ``loc`` starts with ``"body"`` and goes on with polycodec's path.
FastAPI apps use ``polycodec.integrations.fastapi``, which builds on this module.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Mapping, Optional, TypeVar, overload

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .._api import encode_one
from .._cache import codec_for
from .._errors import DecodeError, ErrorDetails
from .._polycodec import Codec

__all__ = [
    "InvalidBody",
    "PolycodecResponse",
    "body_errors",
    "decode_body",
    "invalid_body_response",
    "read_body",
]

T = TypeVar("T")


class PolycodecResponse(JSONResponse):
    """``application/json`` written by polycodec: a dataclass (or any value polycodec encodes)
    by its own class's plan, or by ``type=``'s plan when given (a ``list[Order]``, a union).
    Written as ``JSONResponse`` writes, but ``Decimal("9.50")`` stays ``"9.50"``, datetimes are
    RFC 3339 strings and NaN is refused (an ``EncodeError``, as ``JSONResponse`` refuses it).
    A ``JSONResponse`` subclass, so FastAPI documents the response's schema.

    ``options`` are ``Codec`` options (``rename``, ``omit_defaults``, ...): set them on a
    subclass (``class CamelResponse(PolycodecResponse): options = {"rename": "camel"}``)."""

    media_type = "application/json"
    options: ClassVar[Mapping[str, Any]] = {}

    def __init__(
        self,
        content: Any,
        status_code: int = 200,
        headers: Optional[Mapping[str, str]] = None,
        media_type: Optional[str] = None,
        background: Optional[BackgroundTask] = None,
        *,
        type: Any = None,
    ) -> None:
        self.type = type
        super().__init__(content, status_code, headers, media_type, background)

    def render(self, content: Any) -> bytes:
        return encode_one(content, "json", type=self.type, **self.options)


class InvalidBody(Exception):
    """A request body that is no valid JSON or does not fit its type. ``error`` is polycodec's
    ``DecodeError`` (``None`` for a missing body); ``errors()`` gives FastAPI's entries."""

    def __init__(self, entries: List[ErrorDetails], error: Optional[DecodeError] = None) -> None:
        super().__init__(entries[0]["msg"] if entries else "invalid body")
        self.error = error
        self._entries = entries

    def errors(self) -> List[ErrorDetails]:
        """``[{"type", "loc", "msg", "input"?}]`` with ``loc`` starting at ``"body"``."""
        return [dict(entry) for entry in self._entries]


def body_errors(error: DecodeError) -> List[ErrorDetails]:
    """polycodec's ``errors()`` of ``error``, each ``loc`` starting at ``"body"``, as FastAPI
    reports a request body's errors."""
    return [{**entry, "loc": ("body", *entry["loc"])} for entry in error.errors()]


_MISSING: List[ErrorDetails] = [
    {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
]


def decode_body(raw: bytes, codec: Codec[T]) -> T:
    """``raw`` decoded by ``codec``; an empty body is ``None`` where the type takes it, else
    missing. Raises ``InvalidBody``."""
    try:
        if not raw:
            try:
                return codec.decode_one(b"null")
            except DecodeError:
                raise InvalidBody([dict(entry) for entry in _MISSING]) from None
        return codec.decode_one(raw)
    except DecodeError as exc:
        raise InvalidBody(body_errors(exc), exc) from exc


@overload
async def read_body(request: Request, type: type[T], **options: Any) -> T: ...
@overload
async def read_body(request: Request, type: Any, **options: Any) -> Any: ...
async def read_body(request: Request, type: Any, **options: Any) -> Any:
    """The request's body (JSON) decoded as ``type`` straight from its bytes, with ``Codec``
    ``options``. Raises ``InvalidBody``."""
    return decode_body(await request.body(), codec_for(type, "json", options))


async def invalid_body_response(request: Request, exc: Exception) -> Response:
    """The exception handler for ``InvalidBody``: 422 ``{"detail": exc.errors()}``."""
    assert isinstance(exc, InvalidBody)
    detail: Dict[str, Any] = {"detail": exc.errors()}
    return PolycodecResponse(detail, status_code=422)
