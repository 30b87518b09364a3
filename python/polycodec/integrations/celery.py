"""Celery and kombu: polycodec's serializers for task messages and results, and typed tasks
(the optional extra ``polycodec[celery]``).

>>> register_serializers()
>>> app.conf.update(task_serializer="polycodec-json", result_serializer="polycodec-json",
...                 accept_content=["polycodec-json"])
>>> @app.task(base=TypedTask)
... def total(order: Order) -> Receipt: ...

``register_serializers()`` registers two kombu serializers: ``"polycodec-json"``
(``application/x-polycodec-json``) and ``"polycodec-msgpack"``
(``application/x-polycodec-msgpack``). Each writes any value polycodec encodes under ``Any``
(dataclasses, datetimes, UUIDs, Decimals, enums, ...) and reads messages back as plain values.

A task made with ``base=TypedTask`` gets its arguments as the types its parameters declare: the
caller writes each argument in its parameter's JSON form (``Codec.to_builtins``), the worker
reads it back by the parameter's plan (``Codec.from_builtins``), as Celery's ``pydantic=True``
does for pydantic models, and the return value travels the same way by the return annotation.
An argument that does not fit fails the task with ``TaskArgumentError`` (a ``ValidationError``
naming the task, the parameter and the path), which the caller's ``get()`` raises.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import inspect
import typing
import uuid
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import kombu.serialization
from celery import Task
from celery.result import AsyncResult, EagerResult

from .._errors import EncodeError, ErrorDetails, LocItem, ValidationError
from .._polycodec import Codec

__all__ = [
    "JSON_CONTENT_TYPE",
    "JSON_SERIALIZER",
    "MSGPACK_CONTENT_TYPE",
    "MSGPACK_SERIALIZER",
    "TaskArgumentError",
    "TypedAsyncResult",
    "TypedEagerResult",
    "TypedTask",
    "dumps_json",
    "dumps_msgpack",
    "loads_json",
    "loads_msgpack",
    "register_serializers",
]

#: The kombu serializer names (``task_serializer=``, ``result_serializer=``,
#: ``accept_content=``) and the content types their messages carry.
JSON_SERIALIZER = "polycodec-json"
JSON_CONTENT_TYPE = "application/x-polycodec-json"
MSGPACK_SERIALIZER = "polycodec-msgpack"
MSGPACK_CONTENT_TYPE = "application/x-polycodec-msgpack"

_ANY_JSON: Codec[Any] = Codec(Any, "json")
_ANY_MSGPACK: Codec[Any] = Codec(Any, "msgpack")

# What a worker may find in place of an argument's JSON form: the values MessagePack carries as
# themselves (bytes, timestamps) and the objects the pickle serializer and eager calls hand over.
_AS_THEMSELVES = (
    bytes,
    bytearray,
    datetime.datetime,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    uuid.UUID,
    decimal.Decimal,
)
# JSON-form values a caller may pass for any parameter: left for the worker to check.
_JSON_FORM = (dict, list, str, int, float, bool, type(None))


def _plain(value: Any) -> Any:
    """``value`` with what kombu's JSON serializer also writes but polycodec's ``Any`` refuses
    made plain: subclasses of dict and list (Celery's signatures in a message's callbacks and
    chain are dicts), and objects with kombu's ``__json__`` hook."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [_plain(item) for item in value]
    hook = getattr(type(value), "__json__", None)
    if hook is not None and not dataclasses.is_dataclass(value):
        return _plain(hook(value))
    return value


def _dumps(codec: Codec[Any], value: Any) -> bytes:
    try:
        return codec.encode_one(value)
    except EncodeError:
        # Rare (a callback's signature, a __json__ object): the whole value once more, made plain.
        return codec.encode_one(_plain(value))


def dumps_json(value: Any) -> bytes:
    """The ``polycodec-json`` serializer's encoder: ``value`` as JSON."""
    return _dumps(_ANY_JSON, value)


def loads_json(data: Union[bytes, bytearray, memoryview, str]) -> Any:
    """The ``polycodec-json`` serializer's decoder: dicts, lists, strs, numbers, bools, None."""
    return _ANY_JSON.decode_one(data)


def dumps_msgpack(value: Any) -> bytes:
    """The ``polycodec-msgpack`` serializer's encoder: ``value`` as MessagePack."""
    return _dumps(_ANY_MSGPACK, value)


def loads_msgpack(data: Union[bytes, bytearray, memoryview]) -> Any:
    """The ``polycodec-msgpack`` serializer's decoder (bin as bytes, timestamps as datetimes)."""
    return _ANY_MSGPACK.decode_one(data)


def register_serializers() -> None:
    """Registers ``polycodec-json`` and ``polycodec-msgpack`` with kombu (again: no change).
    Call it in the module that creates the Celery app, so that callers and workers both have
    them."""
    # kombu's register() carries no annotations.
    kombu.serialization.register(  # type: ignore[no-untyped-call]
        JSON_SERIALIZER,
        dumps_json,
        loads_json,
        content_type=JSON_CONTENT_TYPE,
        content_encoding="utf-8",
    )
    kombu.serialization.register(  # type: ignore[no-untyped-call]
        MSGPACK_SERIALIZER,
        dumps_msgpack,
        loads_msgpack,
        content_type=MSGPACK_CONTENT_TYPE,
        content_encoding="binary",
    )


class TaskArgumentError(ValidationError):
    """An argument a typed task's worker received that does not fit its parameter's type.

    ``task`` and ``argument`` name them; ``path`` and ``loc`` point inside the argument (as a
    polycodec decode of it would); ``errors()`` gives pydantic-shaped entries whose ``loc``
    starts with the argument's name. Its ``args`` are its constructor's, so it is rebuilt
    whole from a result backend (JSON) or a pickle."""

    task: str
    argument: str

    def __init__(
        self,
        message: str,
        task: str = "",
        argument: str = "",
        path: str = "$",
        loc: Sequence[LocItem] = (),
        errors: Optional[List[ErrorDetails]] = None,
    ) -> None:
        if errors is not None:
            # A result backend's JSON gives the loc tuples back as lists.
            errors = [{**entry, "loc": tuple(entry.get("loc", ()))} for entry in errors]
        code = errors[0].get("type", "value_error") if errors else "value_error"
        super().__init__(message, path, tuple(loc), code=code, errors=errors)
        self.task = task
        self.argument = argument
        self.args = (message, task, argument, path, list(loc), errors)

    def __str__(self) -> str:
        return str(self.args[0])


@dataclasses.dataclass(frozen=True)
class _Slot:
    name: str
    codec: Optional[Codec[Any]]


class _Plans:
    """The codecs of a task's parameters and result, compiled once per task."""

    def __init__(self, task_name: str, function: Any, options: Mapping[str, Any]) -> None:
        self.task_name = task_name
        signature = inspect.signature(function)
        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except Exception as exc:  # NameError, SyntaxError, TypeError from bad annotations
            raise TypeError(
                f"polycodec cannot resolve the annotations of task {task_name!r}: {exc}"
            ) from exc
        self.positional: List[_Slot] = []
        self.by_name: Dict[str, _Slot] = {}
        self.var_positional: Optional[_Slot] = None
        self.var_keyword: Optional[_Slot] = None
        for name, parameter in signature.parameters.items():
            slot = _Slot(name, self._codec(hints.get(name), f"parameter {name!r}", options))
            if parameter.kind is parameter.VAR_POSITIONAL:
                self.var_positional = slot
            elif parameter.kind is parameter.VAR_KEYWORD:
                self.var_keyword = slot
            else:
                if parameter.kind is not parameter.KEYWORD_ONLY:
                    self.positional.append(slot)
                if parameter.kind is not parameter.POSITIONAL_ONLY:
                    self.by_name[name] = slot
        self.result = self._codec(hints.get("return"), "the return annotation", options)
        self.typed = (
            any(slot.codec is not None for slot in self.positional)
            or any(slot.codec is not None for slot in self.by_name.values())
            or any(
                s is not None and s.codec is not None
                for s in (self.var_positional, self.var_keyword)
            )
        )

    def _codec(self, hint: Any, what: str, options: Mapping[str, Any]) -> Optional[Codec[Any]]:
        if hint is None or hint is Any or hint is object or hint is type(None):
            return None
        try:
            return Codec(hint, "json", **options)
        except TypeError as exc:
            raise TypeError(f"task {self.task_name!r}, {what}: {exc}") from exc

    def _slot(self, index: Optional[int], name: Optional[str]) -> Optional[_Slot]:
        if index is not None:
            return self.positional[index] if index < len(self.positional) else self.var_positional
        assert name is not None
        return self.by_name.get(name, self.var_keyword)

    def encode(
        self, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """The arguments in their parameters' JSON forms (the caller's side)."""
        out_args = tuple(self._encode(self._slot(i, None), v) for i, v in enumerate(args))
        out_kwargs = {k: self._encode(self._slot(None, k), v) for k, v in kwargs.items()}
        return out_args, out_kwargs

    def _encode(self, slot: Optional[_Slot], value: Any) -> Any:
        if slot is None or slot.codec is None:
            return value
        try:
            return slot.codec.to_builtins(value)
        except EncodeError as exc:
            if isinstance(value, _JSON_FORM):
                return value  # already a JSON form: the worker checks it against the plan
            raise EncodeError(
                f"task {self.task_name!r}, argument {slot.name!r}: {exc}", exc.path, exc.loc
            ) from exc

    def decode(
        self, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """The arguments as their parameters' types (the worker's side)."""
        out_args = tuple(self._decode(self._slot(i, None), v) for i, v in enumerate(args))
        out_kwargs = {k: self._decode(self._slot(None, k), v) for k, v in kwargs.items()}
        return out_args, out_kwargs

    def _decode(self, slot: Optional[_Slot], value: Any) -> Any:
        if slot is None or slot.codec is None:
            return value
        try:
            return slot.codec.from_builtins(
                value, builtin_types=_AS_THEMSELVES, from_attributes=True
            )
        except ValidationError as exc:
            errors = [{**e, "loc": (slot.name, *e["loc"])} for e in exc.errors()]
            raise TaskArgumentError(
                f"task {self.task_name!r}, argument {slot.name!r}: {exc}",
                self.task_name,
                slot.name,
                exc.path,
                (slot.name, *exc.loc),
                errors,
            ) from exc

    def encode_result(self, value: Any) -> Any:
        return value if self.result is None else self.result.to_builtins(value)

    def decode_result(self, value: Any) -> Any:
        if self.result is None or isinstance(value, BaseException):
            return value
        return self.result.from_builtins(value, builtin_types=_AS_THEMSELVES, from_attributes=True)


class TypedTask(Task):  # type: ignore[misc]  # celery has no type information
    """A Celery task whose arguments and result travel by their annotations' plans:
    ``@app.task(base=TypedTask)``. Parameters annotated with a type polycodec compiles
    (dataclasses, ``list[Order]``, ``datetime``, ``Decimal``, ...) get values of that type on
    the worker; unannotated ones (and ``Any``) get what the serializer read. Works with any
    serializer but pickle's (whose arguments need no help): kombu's ``json`` and ``msgpack``
    as well as ``polycodec-json`` and ``polycodec-msgpack``.

    ``polycodec_options`` (a class attribute, or ``@app.task(base=TypedTask,
    polycodec_options={"rename": "camel"})``) are the ``Codec`` options of every parameter's
    and the result's codec. Called directly (``total(order)``), the task is a plain function
    call: nothing is converted."""

    polycodec_options: ClassVar[Mapping[str, Any]] = {}
    _polycodec_plans: Optional[_Plans] = None

    def polycodec_plans(self) -> _Plans:
        """The compiled plans (built on first use; a ``TypeError`` names the parameter whose
        type polycodec cannot compile)."""
        plans = self._polycodec_plans
        if plans is None:
            plans = _Plans(self.name, self.run, dict(self.polycodec_options))
            self._polycodec_plans = plans
        return plans

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.request.called_directly:
            return super().__call__(*args, **kwargs)
        # Called by the worker's tracer (or apply()), which has pushed this task's request:
        # self.run, not super().__call__, which would push a second, empty request.
        plans = self.polycodec_plans()
        if plans.typed:
            args, kwargs = plans.decode(args, kwargs)
        return plans.encode_result(self.run(*args, **kwargs))

    def apply_async(
        self,
        args: Optional[Sequence[Any]] = None,
        kwargs: Optional[Mapping[str, Any]] = None,
        *more: Any,
        **options: Any,
    ) -> Any:
        serializer = options.get("serializer") or self.serializer
        plans = self.polycodec_plans()
        if serializer != "pickle" and plans.typed:
            args, kwargs = plans.encode(args or (), kwargs or {})
        return super().apply_async(args, kwargs, *more, **options)

    def apply(
        self,
        args: Optional[Sequence[Any]] = None,
        kwargs: Optional[Mapping[str, Any]] = None,
        *more: Any,
        **options: Any,
    ) -> Any:
        result = super().apply(args, kwargs, *more, **options)
        return TypedEagerResult(
            result.id,
            result.result,
            result.state,
            traceback=result.traceback,
            name=self.name,
            decode=self.polycodec_plans().decode_result,
        )

    def AsyncResult(self, task_id: str, **kwargs: Any) -> TypedAsyncResult:
        result = TypedAsyncResult(
            task_id, backend=self.backend, task_name=self.name, app=self._get_app(), **kwargs
        )
        result.decode_result = self.polycodec_plans().decode_result
        return result


def _identity(value: Any) -> Any:
    return value


class TypedAsyncResult(AsyncResult):  # type: ignore[misc]  # celery has no type information
    """What a ``TypedTask``'s ``delay()`` and ``apply_async()`` return: ``get()`` gives the
    value as the task's return annotation declares it (``result`` and ``info`` keep the JSON
    form the backend stored)."""

    decode_result: Any = staticmethod(_identity)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self.decode_result(super().get(*args, **kwargs))


class TypedEagerResult(EagerResult):  # type: ignore[misc]  # celery has no type information
    """What a ``TypedTask``'s ``apply()`` returns: ``get()`` as ``TypedAsyncResult``'s."""

    def __init__(self, *args: Any, decode: Any = _identity, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decode_result = decode

    def get(self, *args: Any, **kwargs: Any) -> Any:
        return self.decode_result(super().get(*args, **kwargs))
