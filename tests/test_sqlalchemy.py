"""polycodec.integrations.sqlalchemy against SQLite and a real PostgreSQL server (Debian's,
one cluster for the module, see tests/postgres_server.py): typed values stored as JSON, JSONB
and MessagePack, checked against what json and msgpack read from the stored text and bytes,
through SQLAlchemy Core and the ORM."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import uuid
from pathlib import Path
from typing import Any, Iterator, Optional

import msgpack
import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import polycodec
from polycodec.integrations.sqlalchemy import PolycodecType
from postgres_server import postgres_server


@dataclasses.dataclass
class Address:
    street: str
    city: str
    geo: Optional[tuple[float, float]] = None


@dataclasses.dataclass
class Parcel:
    id: uuid.UUID
    weight: decimal.Decimal
    sent: datetime.datetime
    to: Address
    tags: list[str] = dataclasses.field(default_factory=list)


PARCELS = [
    Parcel(
        uuid.UUID(int=1),
        decimal.Decimal("2.50"),
        datetime.datetime(
            2024, 5, 1, 12, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2))
        ),
        Address("Storgata 1", "Oslo", (59.91, 10.75)),
        ["fragile", "ünïcode"],
    ),
    Parcel(
        uuid.UUID(int=2),
        decimal.Decimal("0.001"),
        datetime.datetime(2024, 5, 2, tzinfo=datetime.timezone.utc),
        Address("Main St", "Springfield"),
    ),
]
STORAGES = ["json", "jsonb", "msgpack"]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    yield from postgres_server()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'test.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    engine = sa.create_engine(url)
    yield engine
    with engine.begin() as connection:
        sa.MetaData().reflect(connection)
        for name in sa.inspect(connection).get_table_names():
            connection.execute(sa.text(f'DROP TABLE "{name}"'))
    engine.dispose()


def _table(storage: str, tp: Any = Parcel, **options: Any) -> tuple[sa.MetaData, sa.Table]:
    metadata = sa.MetaData()
    table = sa.Table(
        "parcels",
        metadata,
        sa.Column("n", sa.Integer, primary_key=True),
        sa.Column("value", PolycodecType(tp, storage, options or None), nullable=True),
    )
    return metadata, table


@pytest.mark.parametrize("storage", STORAGES)
def test_values_round_trip_and_are_stored_as_the_format(engine: sa.Engine, storage: str) -> None:
    metadata, table = _table(storage)
    with engine.begin() as connection:
        metadata.create_all(connection)
        connection.execute(
            table.insert(), [{"n": i, "value": p} for i, p in enumerate([*PARCELS, None])]
        )
        rows = connection.execute(sa.select(table.c.value).order_by(table.c.n)).scalars().all()
        assert rows == [*PARCELS, None]
        assert all(type(row) is Parcel for row in rows[:2])
        assert str(rows[0].weight) == "2.50"
        # JSON keeps the UTC offset; a MessagePack timestamp is the instant, read as UTC.
        offset = datetime.timedelta(hours=0 if storage == "msgpack" else 2)
        assert rows[0].sent.utcoffset() == offset
        # What the database holds, read without the type: the oracles read it.
        raw_column = sa.column("value", sa.LargeBinary if storage == "msgpack" else sa.Text)
        raw = (
            connection.execute(
                sa.select(raw_column if storage == "msgpack" else sa.cast(raw_column, sa.Text))
                .select_from(sa.table("parcels"))
                .order_by(sa.column("n"))
            )
            .scalars()
            .all()
        )
    assert raw[2] is None
    for stored, parcel in zip(raw, PARCELS):
        if storage == "msgpack":
            assert bytes(stored) == polycodec.encode_one(parcel, format="msgpack")
            assert msgpack.unpackb(bytes(stored), timestamp=3) == polycodec.to_builtins(
                parcel, builtin_types=[datetime.datetime]
            )
        else:
            assert json.loads(stored) == json.loads(polycodec.encode_one(parcel))


@pytest.mark.parametrize("storage", STORAGES)
def test_column_types(engine: sa.Engine, storage: str) -> None:
    metadata, table = _table(storage)
    with engine.begin() as connection:
        metadata.create_all(connection)
        [column] = [
            c for c in sa.inspect(connection).get_columns("parcels") if c["name"] == "value"
        ]
    expected = {
        ("sqlite", "json"): sa.Text,
        ("sqlite", "jsonb"): sa.Text,
        ("sqlite", "msgpack"): sa.LargeBinary,
        ("postgresql", "json"): postgresql.JSON,
        ("postgresql", "jsonb"): postgresql.JSONB,
        ("postgresql", "msgpack"): postgresql.BYTEA,
    }[(engine.dialect.name, storage)]
    assert isinstance(column["type"], expected)


class Base(DeclarativeBase):
    pass


class Shipment(Base):
    __tablename__ = "shipments"
    id: Mapped[int] = mapped_column(primary_key=True)
    address: Mapped[Address] = mapped_column(PolycodecType(Address, "jsonb"))
    parcels: Mapped[list[Parcel]] = mapped_column(PolycodecType(list[Parcel], "msgpack"))
    note: Mapped[Optional[Address]] = mapped_column(PolycodecType(Address, "json"), nullable=True)


def test_orm(engine: sa.Engine) -> None:
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Shipment(id=1, address=PARCELS[0].to, parcels=PARCELS, note=None))
        session.commit()
    with Session(engine) as session:
        shipment = session.get(Shipment, 1)
        assert shipment is not None
        assert shipment.address == PARCELS[0].to and shipment.parcels == PARCELS
        assert shipment.note is None
        shipment.address = dataclasses.replace(shipment.address, city="Bergen")
        session.commit()
    with Session(engine) as session:
        found = session.scalars(sa.select(Shipment).where(Shipment.address == PARCELS[0].to))
        assert found.all() == []
        moved = dataclasses.replace(PARCELS[0].to, city="Bergen")
        assert [
            s.id for s in session.scalars(sa.select(Shipment).where(Shipment.address == moved))
        ] == [1]


def test_jsonb_is_queryable_as_jsonb(postgres_url: str) -> None:
    """What is stored is PostgreSQL's JSONB: its operators work on it."""
    engine = sa.create_engine(postgres_url)
    metadata, table = _table("jsonb")
    with engine.begin() as connection:
        metadata.create_all(connection)
        connection.execute(table.insert(), [{"n": i, "value": p} for i, p in enumerate(PARCELS)])
        city = sa.cast(table.c.value, postgresql.JSONB)["to"]["city"].astext
        found = connection.execute(sa.select(table.c.value).where(city == "Oslo")).scalars().all()
        assert found == [PARCELS[0]]
        metadata.drop_all(connection)
    engine.dispose()


@pytest.mark.parametrize("storage", STORAGES)
def test_options_reach_the_stored_form(engine: sa.Engine, storage: str) -> None:
    metadata, table = _table(storage, Address, rename="camel", omit_defaults=True)
    with engine.begin() as connection:
        metadata.create_all(connection)
        connection.execute(table.insert(), [{"n": 1, "value": Address("a", "b")}])
        assert connection.execute(sa.select(table.c.value)).scalar() == Address("a", "b")
    codec = polycodec.Codec(Address, "json", rename="camel", omit_defaults=True)
    assert PolycodecType(
        Address, storage, {"rename": "camel", "omit_defaults": True}
    ).process_bind_param(Address("a", "b"), engine.dialect) in (
        codec.encode_one(Address("a", "b")).decode(),
        polycodec.encode_one(Address("a", "b"), format="msgpack", omit_defaults=True),
    )


@pytest.mark.parametrize("storage", STORAGES)
def test_values_that_do_not_fit(engine: sa.Engine, storage: str) -> None:
    metadata, table = _table(storage, Address)
    with engine.begin() as connection:
        metadata.create_all(connection)
        with pytest.raises(sa.exc.StatementError) as written:
            connection.execute(table.insert(), [{"n": 1, "value": {"street": "x", "city": "y"}}])
        assert isinstance(written.value.orig, polycodec.EncodeError)
    bad = {"street": "x", "city": 7}
    stored: Any = msgpack.packb(bad) if storage == "msgpack" else json.dumps(bad)
    raw = sa.table("parcels", sa.column("n"), sa.column("value"))
    with engine.begin() as connection:
        value = sa.bindparam("v", stored, type_=sa.LargeBinary if storage == "msgpack" else sa.Text)
        if engine.dialect.name == "postgresql" and storage != "msgpack":
            value = sa.cast(value, postgresql.JSONB if storage == "jsonb" else postgresql.JSON)
        connection.execute(raw.insert().values(n=2, value=value))
        with pytest.raises(polycodec.ValidationError) as read:
            connection.execute(sa.select(table.c.value)).scalar()
    assert read.value.path == "$.city"


def test_storage_is_checked() -> None:
    with pytest.raises(ValueError, match="storage must be one of json, jsonb, msgpack"):
        PolycodecType(Address, "yaml")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        PolycodecType(Path)
