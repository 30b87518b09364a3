"""The benchmark models as msgspec users write them: ``msgspec.Struct`` classes.

Same fields, types and order as the dataclasses in ``models.py``. Tagged unions are written the
msgspec way, as the msgspec-vs-pydantic gist does: the tag lives on the class
(``tag_field=``/``tag=``), not in a ``Literal`` field, and msgspec writes it first. The gist's
constraints use ``msgspec.Meta`` (msgspec does not read annotated-types markers). Default Struct
options (no ``gc=False``, ``array_like`` or ``omit_defaults``), as the gist and msgspec's own
examples use; those options change what is written or what the objects can do.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Optional, Union
from uuid import UUID

import msgspec

from .. import models
from ..models import Currency, Priority, Status

# ---- record ------------------------------------------------------------------------------


class Tag(msgspec.Struct):
    name: str
    weight: float
    pinned: bool


class Record(msgspec.Struct):
    id: int
    username: str
    email: str
    score: float
    active: bool
    status: Status
    created_at: datetime
    last_login: Optional[datetime]
    nickname: Optional[str]
    age: Optional[int]
    tags: list[Tag]
    roles: list[str]


# ---- hierarchy (innermost first) ---------------------------------------------------------


class Check(msgspec.Struct):
    name: str
    passed: bool
    measured: Decimal
    checked_on: date
    checked_at: datetime
    priority: Priority
    comment: Optional[str]


class Step(msgspec.Struct):
    name: str
    order: int
    cost: Decimal
    due: date
    started_at: datetime
    status: Status
    note: Optional[str]
    check: Check


class Subtask(msgspec.Struct):
    name: str
    estimate_hours: float
    budget: Decimal
    due: date
    updated_at: datetime
    priority: Priority
    assignee: Optional[str]
    step: Step


class Task(msgspec.Struct):
    title: str
    points: int
    budget: Decimal
    due: date
    created_at: datetime
    status: Status
    reviewer: Optional[str]
    subtask: Subtask


class Milestone(msgspec.Struct):
    title: str
    sequence: int
    budget: Decimal
    target: date
    updated_at: datetime
    priority: Priority
    completed_on: Optional[date]
    task: Task


class Project(msgspec.Struct):
    code: str
    name: str
    budget: Decimal
    start: date
    created_at: datetime
    status: Status
    sponsor: Optional[str]
    milestone: Milestone


class Team(msgspec.Struct):
    name: str
    size: int
    payroll: Decimal
    formed: date
    updated_at: datetime
    priority: Priority
    lead: Optional[str]
    project: Project


class Department(msgspec.Struct):
    name: str
    cost_center: int
    budget: Decimal
    founded: date
    audited_at: datetime
    status: Status
    head: Optional[str]
    team: Team


class Division(msgspec.Struct):
    name: str
    region: str
    revenue: Decimal
    opened: date
    reported_at: datetime
    priority: Priority
    vice_president: Optional[str]
    department: Department


class Company(msgspec.Struct):
    name: str
    registration: int
    capital: Decimal
    incorporated: date
    updated_at: datetime
    status: Status
    ticker: Optional[str]
    division: Division


# ---- tree: a tagged union, tag field "kind" ---------------------------------------------


class Leaf(msgspec.Struct, tag_field="kind", tag="leaf"):
    name: str
    size: int
    modified: datetime
    checksum: Optional[str]


class Branch(msgspec.Struct, tag_field="kind", tag="branch"):
    name: str
    owner: str
    modified: datetime
    children: list[Union[Leaf, Branch]] = []


# ---- filesystem: the gist's classes, verbatim apart from the explicit tag_field ----------


class File(msgspec.Struct, tag_field="type", tag="file"):
    name: Annotated[str, msgspec.Meta(min_length=1)]
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    nbytes: Annotated[int, msgspec.Meta(ge=0)]


class Directory(msgspec.Struct, tag_field="type", tag="directory"):
    name: Annotated[str, msgspec.Meta(min_length=1)]
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    contents: list[Union[File, Directory]]


# ---- service: the msgspec service the service model ports --------------------------------


class GeoPoint(msgspec.Struct, array_like=True):
    lat: float
    lon: float


class LineItem(msgspec.Struct, rename="camel", omit_defaults=True):
    sku: str
    quantity: int
    unit_price: Decimal
    discount: Optional[Decimal] = None
    gift_wrap: bool = False


class OrderPlaced(
    msgspec.Struct, tag_field="type", tag="order.placed", rename="camel", omit_defaults=True
):
    event_id: UUID
    occurred_at: datetime
    customer_id: UUID
    items: list[LineItem]
    total: Decimal
    currency: Currency = Currency.EUR
    shipping_point: Optional[GeoPoint] = None
    coupon_code: Optional[str] = None
    trace: dict[str, Any] = {}


class OrderShipped(
    msgspec.Struct, tag_field="type", tag="order.shipped", rename="camel", omit_defaults=True
):
    event_id: UUID
    occurred_at: datetime
    order_id: UUID
    carrier: str
    route: list[GeoPoint]
    estimated_arrival: Optional[datetime] = None
    trace: dict[str, Any] = {}


class OrderCancelled(
    msgspec.Struct, tag_field="type", tag="order.cancelled", rename="camel", omit_defaults=True
):
    event_id: UUID
    occurred_at: datetime
    order_id: UUID
    reason: str
    refund: Optional[Decimal] = None
    notify_customer: bool = True
    trace: dict[str, Any] = {}


class EventEnvelope(msgspec.Struct, rename="camel", omit_defaults=True):
    message_id: UUID
    source: str
    published_at: datetime
    event: Union[OrderPlaced, OrderShipped, OrderCancelled]
    attempt: int = 1
    headers: dict[str, str] = {}


#: plain dataclass -> Struct (every model class has one).
STRUCTS: dict[type, type] = {
    cls: globals()[cls.__name__] for cls in models.CLASSES + models.SERVICE_CLASSES
}
