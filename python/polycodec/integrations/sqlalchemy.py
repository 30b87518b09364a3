"""SQLAlchemy: a column type that stores a typed value (a dataclass, ``list[Order]``, any type
polycodec compiles) as JSON, JSONB or MessagePack and loads it back as that type (the optional
extra ``polycodec[sqlalchemy]``).

>>> class Shipment(Base):
...     __tablename__ = "shipments"
...     id: Mapped[int] = mapped_column(primary_key=True)
...     address: Mapped[Address] = mapped_column(PolycodecType(Address, "jsonb"))

Storage, per database:

- ``"json"``: PostgreSQL ``JSON``; a ``TEXT`` column elsewhere (SQLite).
- ``"jsonb"``: PostgreSQL ``JSONB``; a ``TEXT`` column elsewhere, so that a model written for
  PostgreSQL also runs on SQLite.
- ``"msgpack"``: MessagePack bytes in a ``BYTEA`` (PostgreSQL) or ``BLOB`` column.

Values are written by polycodec straight to the text or bytes the driver sends, and read from
the text or bytes the database returns (a PostgreSQL JSON column is selected as text, so that
the driver does not parse it first), then decoded by the type's plan. Python ``None`` is SQL
``NULL`` both ways.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, Mapping, Optional, TypeVar, overload

from sqlalchemy import LargeBinary, Text, cast, type_coerce
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator, TypeEngine, UserDefinedType

from .._polycodec import Codec

__all__ = ["PolycodecType", "Storage"]

T = TypeVar("T")

#: Where a value is stored: see the module's documentation.
Storage = Literal["json", "jsonb", "msgpack"]
_STORAGES = ("json", "jsonb", "msgpack")


class _PostgresJson(UserDefinedType[Any]):
    """PostgreSQL's ``JSON`` or ``JSONB`` column, bound as text with a cast (drivers that send
    parameters with types, as psycopg 3 and asyncpg do, then send it as the column's type) and
    with no conversion of its own: polycodec writes and reads the text."""

    cache_ok = True
    render_bind_cast = True

    def __init__(self, name: str) -> None:
        self.name = name

    def get_col_spec(self, **kw: Any) -> str:
        return self.name


class PolycodecType(TypeDecorator[T], Generic[T]):
    """A column holding values of ``type`` (``PolycodecType(Address)``,
    ``PolycodecType(list[Order], "msgpack")``), stored as ``storage`` says (``"json"``,
    ``"jsonb"`` or ``"msgpack"``) and written and read by one polycodec codec with ``Codec``
    ``options`` (``{"rename": "camel"}``). A value that does not fit the type is an
    ``EncodeError`` when the row is written (SQLAlchemy wraps it in ``StatementError``); a
    stored value that does not fit is a ``ValidationError`` when it is read.

    As with SQLAlchemy's own JSON types, a change made inside a loaded value (``row.address.city
    = "x"``) is not seen by the ORM: assign a new value (``dataclasses.replace``)."""

    impl = LargeBinary
    cache_ok = True

    @overload
    def __init__(
        self: PolycodecType[T],
        type: type[T],
        storage: Storage = "json",
        options: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    @overload
    def __init__(
        self: PolycodecType[Any],
        type: Any,
        storage: Storage = "json",
        options: Optional[Mapping[str, Any]] = None,
    ) -> None: ...
    def __init__(
        self, type: Any, storage: Storage = "json", options: Optional[Mapping[str, Any]] = None
    ) -> None:
        if storage not in _STORAGES:
            raise ValueError(f"storage must be one of {', '.join(_STORAGES)}, not {storage!r}")
        super().__init__()
        self.type = type
        self.storage = storage
        # Part of SQLAlchemy's cache key (the attributes named as __init__'s parameters): two
        # columns that differ in options must not share compiled statements.
        self.options = tuple(sorted((options or {}).items()))
        try:
            hash((type, self.options))
        except TypeError:
            self.cache_ok = False  # an unhashable option or type: no statement caching
        self._codec: Codec[T] = Codec(
            type, "msgpack" if storage == "msgpack" else "json", **dict(options or {})
        )

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if self.storage == "msgpack":
            return dialect.type_descriptor(LargeBinary())
        if dialect.name == "postgresql":
            return dialect.type_descriptor(_PostgresJson(self.storage.upper()))
        return dialect.type_descriptor(Text())

    def column_expression(self, column: ColumnElement[Any]) -> ColumnElement[Any]:
        if self.storage == "msgpack":
            return column
        # The stored text, not what the driver would make of a JSON column (psycopg parses it);
        # a no-op for a TEXT column.
        return type_coerce(cast(column, Text()), self)

    def process_bind_param(self, value: Optional[T], dialect: Dialect) -> Any:
        if value is None:
            return None
        data = self._codec.encode_one(value)
        return data if self.storage == "msgpack" else data.decode("utf-8")

    def process_result_value(self, value: Any, dialect: Dialect) -> Optional[T]:
        if value is None:
            return None
        if isinstance(value, (str, bytes, bytearray, memoryview)):
            return self._codec.decode_one(value)
        # A JSON value a driver parsed itself (an expression selected without this type's
        # column expression): checked and built by the same plan.
        return self._codec.from_builtins(value)

    @property
    def python_type(self) -> Any:
        return self.type if isinstance(self.type, type) else object
