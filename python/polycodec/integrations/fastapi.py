"""FastAPI: responses written by polycodec with nothing before it, and request bodies decoded
by a type's plan straight from their bytes, whose errors are FastAPI's 422 (the optional extra
``polycodec[fastapi]``).

>>> app = FastAPI(default_response_class=PolycodecResponse)
>>> app.router.route_class = PolycodecRoute        # before the routes are added
>>> @app.post("/orders", status_code=201)
... async def create(order: Body[Order]) -> Receipt:
...     return Receipt(order.id, ...)

Why a route class: when a handler returns a value that is no ``Response``, FastAPI converts it
first (``jsonable_encoder``, or pydantic's serializer for a response model) and gives the
response class what that made, so ``Decimal("9.50")`` reaches it as ``9.5``. ``PolycodecRoute``
wraps each handler so that it returns the response itself, written by polycodec from the
handler's own value (by the return annotation's plan), and FastAPI passes a ``Response`` on
unchanged. The return annotation still gives the OpenAPI document its schema.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional, TypeVar

from fastapi import Depends, Request
from fastapi.datastructures import DefaultPlaceholder
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.responses import Response

from .._polycodec import Codec
from .starlette import InvalidBody, PolycodecResponse, decode_body

__all__ = ["Body", "PolycodecResponse", "PolycodecRoute", "body"]

T = TypeVar("T")

# The keyword the wrapper adds, when a handler has no Response parameter of its own, to receive
# the response FastAPI gives handlers for headers, cookies and a status code.
_RESPONSE_PARAMETER = "polycodec_response_"


def body(type: Any, **options: Any) -> Any:
    """A dependency giving the request's JSON body decoded as ``type`` by its plan, with
    ``Codec`` options: ``order: Annotated[Order, body(Order, rename="camel")]``. A body that is
    no JSON or does not fit is FastAPI's ``RequestValidationError`` (422), each error's ``loc``
    ``("body", *polycodec's loc)`` and ``msg`` polycodec's. The type is compiled here, so a type
    polycodec cannot compile fails when the route is defined."""
    codec: Codec[Any] = Codec(type, "json", **options)

    async def decode_request_body(request: Request) -> Any:
        raw = await request.body()
        try:
            return decode_body(raw, codec)
        except InvalidBody as exc:
            raise RequestValidationError(exc.errors(), body=raw) from exc.error

    decode_request_body.__qualname__ = f"body({getattr(type, '__qualname__', type)})"
    return Depends(decode_request_body)


if TYPE_CHECKING:
    #: ``order: Body[Order]``: ``Annotated[Order, body(Order)]``, which type checkers read as
    #: ``Order``.
    Body = Annotated[T, ...]
else:

    class Body:
        """``order: Body[Order]``: ``Annotated[Order, body(Order)]``."""

        def __class_getitem__(cls, type: Any) -> Any:
            return Annotated[type, body(type)]


def _return_codec(endpoint: Callable[..., Any], hints: dict[str, Any]) -> Any:
    """The type the handler's values are written as: its return annotation, when polycodec
    compiles it; ``None`` (each value by its own class) otherwise."""
    hint = hints.get("return")
    if hint is None or hint is Any or (isinstance(hint, type) and issubclass(hint, Response)):
        return None
    try:
        Codec(hint, "json")
    except TypeError:
        return None  # such as Union[Order, Response]: each value says what it is
    return hint


def _responding(
    endpoint: Callable[..., Any],
    response_class: type[PolycodecResponse],
    status_code: Optional[int],
) -> Callable[..., Any]:
    """``endpoint`` returning a ``response_class`` of what it returns (a ``Response`` it returns
    passes through), with FastAPI's status code, headers and cookies applied as FastAPI applies
    them to a value it converts itself."""
    signature = inspect.signature(endpoint)
    try:
        hints = typing.get_type_hints(endpoint, include_extras=True)
    except Exception:  # names only a type checker sees: FastAPI resolves what it needs itself
        hints = {}
    return_type = _return_codec(endpoint, hints)
    response_name = next(
        (
            name
            for name in signature.parameters
            if isinstance(hints.get(name), type) and issubclass(hints[name], Response)
        ),
        None,
    )
    own_parameter = response_name is None
    if response_name is None:
        response_name = _RESPONSE_PARAMETER

    def respond(result: Any, temporal: Response) -> Response:
        if isinstance(result, Response):
            return result
        status = temporal.status_code or status_code
        response = (
            response_class(result, type=return_type)
            if status is None
            else response_class(result, status_code=status, type=return_type)
        )
        if response.status_code < 200 or response.status_code in (204, 304):
            response.body = b""
        response.raw_headers.extend(temporal.raw_headers)
        return response

    wrapper: Callable[..., Any]
    if inspect.iscoroutinefunction(endpoint):

        @functools.wraps(endpoint)
        async def wrapper(**values: Any) -> Any:
            temporal = values.pop(response_name) if own_parameter else values[response_name]
            return respond(await endpoint(**values), temporal)

    else:

        @functools.wraps(endpoint)
        def wrapper(**values: Any) -> Any:
            temporal = values.pop(response_name) if own_parameter else values[response_name]
            return respond(endpoint(**values), temporal)

    parameters = list(signature.parameters.values())
    if own_parameter:
        extra = inspect.Parameter(
            _RESPONSE_PARAMETER, inspect.Parameter.KEYWORD_ONLY, annotation=Response
        )
        at = next(
            (i for i, p in enumerate(parameters) if p.kind is inspect.Parameter.VAR_KEYWORD),
            len(parameters),
        )
        parameters.insert(at, extra)
    # FastAPI reads this signature; string annotations in it are resolved in the handler's
    # module (FastAPI unwraps __wrapped__ for its globals).
    setattr(wrapper, "__signature__", signature.replace(parameters=parameters))
    setattr(wrapper, "__polycodec_endpoint__", endpoint)
    return wrapper


class PolycodecRoute(APIRoute):
    """The route class under which a handler's return value is written by polycodec and by
    nothing else: ``app.router.route_class = PolycodecRoute`` (or ``APIRouter(route_class=
    PolycodecRoute)``) before the routes are added.

    The value is written by the route's response class when it is a ``PolycodecResponse``
    (the app's or router's ``default_response_class``, or the route's ``response_class``),
    else by ``PolycodecResponse``, as the handler's return annotation declares it (by the
    value's own class without one). A handler that returns a ``Response``, a generator (a
    stream) and a route given another response class of its own are left to FastAPI.
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        endpoint = getattr(endpoint, "__polycodec_endpoint__", endpoint)
        chosen = kwargs.get("response_class")
        explicit = chosen is not None and not isinstance(chosen, DefaultPlaceholder)
        if isinstance(chosen, DefaultPlaceholder):
            chosen = chosen.value
        streams = inspect.isgeneratorfunction(endpoint) or inspect.isasyncgenfunction(endpoint)
        if streams:
            pass
        elif isinstance(chosen, type) and issubclass(chosen, PolycodecResponse):
            endpoint = _responding(endpoint, chosen, kwargs.get("status_code"))
        elif not explicit:
            endpoint = _responding(endpoint, PolycodecResponse, kwargs.get("status_code"))
        super().__init__(path, endpoint, **kwargs)
