"""The three benchmark models, defined once and shared by every adapter.

Every adapter encodes and decodes *these* classes (plain stdlib dataclasses), so a cell of the
report always compares the same work. The data generator is seeded and pure: the same
``(model, n, seed)`` always yields equal objects, so payload sizes and timings are comparable
across runs and machines.

Shapes (chosen to match what users actually serialise):

* ``record``: a flat ~12-field API record (str, int, float, bool, enum, aware datetime,
  Optionals, a nested list of small records, a list of str).
* ``hierarchy``: a 10-level chain of distinct nested dataclasses, each carrying Decimal, date,
  datetime, Enum and Optional fields (the "deep configuration / accounting document" case).
* ``tree``: a recursive file-system-like tree whose nodes are a tagged union of dataclasses
  (``kind: Literal[...]`` with a default), limited in depth and size.
* ``filesystem``: the workload of the msgspec-vs-pydantic gist (seeds/msgspec-vs-pydantic-gist):
  one fake file system of about 1,000 nodes per object, a tagged ``File | Directory`` union
  (``type: Literal[...]``), UUIDs, aware datetimes and ``MinLen``/``Ge`` constraints.

Other libraries' own idioms of the same models (msgspec ``Struct`` classes, pydantic
``BaseModel`` classes, ``slots=True`` dataclasses) are defined next to the adapters that use them
(``benches/idioms.py``, ``adapters/msgspec_structs.py``, ``adapters/pydantic_models.py``) and are
filled with exactly these objects, converted field by field before timing.

Datetimes are timezone-aware UTC with microseconds (every format here can carry them exactly);
Decimals always have two decimal places so that fixed-scale Avro decimals round-trip.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Annotated, Any, Callable, Literal, Optional, Union
from uuid import UUID

from annotated_types import Ge, MinLen

import polycodec

__all__ = [
    "Status",
    "Priority",
    "Tag",
    "Record",
    "Company",
    "Division",
    "Department",
    "Team",
    "Project",
    "Milestone",
    "Task",
    "Subtask",
    "Step",
    "Check",
    "HIERARCHY_CLASSES",
    "Leaf",
    "Branch",
    "Node",
    "File",
    "Directory",
    "CLASSES",
    "SERVICE_CLASSES",
    "Currency",
    "GeoPoint",
    "LineItem",
    "OrderPlaced",
    "OrderShipped",
    "OrderCancelled",
    "Event",
    "EventEnvelope",
    "ModelSpec",
    "MODELS",
    "UNTYPED",
    "TYPED_MODELS",
    "generate",
    "json_form",
]


class Status(enum.Enum):
    """A str-valued enum (JSON-like formats carry the value, Avro the symbol name)."""

    ACTIVE = "active"
    SUSPENDED = "suspended"
    DELETED = "deleted"
    PENDING = "pending"


class Priority(enum.Enum):
    """A second str-valued enum so the hierarchy does not reuse a single enum type everywhere."""

    LOW = "low"
    NORMAL = "normal"
    HIGH = "high"
    CRITICAL = "critical"


# --------------------------------------------------------------------------------------------
# Model 1: record
# --------------------------------------------------------------------------------------------


@dataclass
class Tag:
    """A small nested record, repeated a few times inside :class:`Record`."""

    name: str
    weight: float
    pinned: bool


@dataclass
class Record:
    """A typical ~12-field API record."""

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


# --------------------------------------------------------------------------------------------
# Model 2: hierarchy (10 levels, one distinct class per level, innermost first)
# --------------------------------------------------------------------------------------------


@dataclass
class Check:
    """Level 10 (innermost)."""

    name: str
    passed: bool
    measured: Decimal
    checked_on: date
    checked_at: datetime
    priority: Priority
    comment: Optional[str]


@dataclass
class Step:
    """Level 9."""

    name: str
    order: int
    cost: Decimal
    due: date
    started_at: datetime
    status: Status
    note: Optional[str]
    check: Check


@dataclass
class Subtask:
    """Level 8."""

    name: str
    estimate_hours: float
    budget: Decimal
    due: date
    updated_at: datetime
    priority: Priority
    assignee: Optional[str]
    step: Step


@dataclass
class Task:
    """Level 7."""

    title: str
    points: int
    budget: Decimal
    due: date
    created_at: datetime
    status: Status
    reviewer: Optional[str]
    subtask: Subtask


@dataclass
class Milestone:
    """Level 6."""

    title: str
    sequence: int
    budget: Decimal
    target: date
    updated_at: datetime
    priority: Priority
    completed_on: Optional[date]
    task: Task


@dataclass
class Project:
    """Level 5."""

    code: str
    name: str
    budget: Decimal
    start: date
    created_at: datetime
    status: Status
    sponsor: Optional[str]
    milestone: Milestone


@dataclass
class Team:
    """Level 4."""

    name: str
    size: int
    payroll: Decimal
    formed: date
    updated_at: datetime
    priority: Priority
    lead: Optional[str]
    project: Project


@dataclass
class Department:
    """Level 3."""

    name: str
    cost_center: int
    budget: Decimal
    founded: date
    audited_at: datetime
    status: Status
    head: Optional[str]
    team: Team


@dataclass
class Division:
    """Level 2."""

    name: str
    region: str
    revenue: Decimal
    opened: date
    reported_at: datetime
    priority: Priority
    vice_president: Optional[str]
    department: Department


@dataclass
class Company:
    """Level 1 (the root of the hierarchy)."""

    name: str
    registration: int
    capital: Decimal
    incorporated: date
    updated_at: datetime
    status: Status
    ticker: Optional[str]
    division: Division


#: The hierarchy classes from the root down (used by hand-written converters and schemas).
HIERARCHY_CLASSES: tuple[type, ...] = (
    Company,
    Division,
    Department,
    Team,
    Project,
    Milestone,
    Task,
    Subtask,
    Step,
    Check,
)


# --------------------------------------------------------------------------------------------
# Model 3: tree (tagged union of dataclasses, recursive)
# --------------------------------------------------------------------------------------------


@dataclass
class Leaf:
    """A file: a leaf of the tree."""

    name: str
    size: int
    modified: datetime
    checksum: Optional[str]
    kind: Literal["leaf"] = "leaf"


@dataclass
class Branch:
    """A directory: its children are a tagged union of :class:`Leaf` and :class:`Branch`."""

    name: str
    owner: str
    modified: datetime
    children: list[Union[Leaf, Branch]] = field(default_factory=list)
    kind: Literal["branch"] = "branch"


#: The tagged union of tree nodes (a tree itself is its root :class:`Branch`).
Node = Union[Leaf, Branch]


# --------------------------------------------------------------------------------------------
# Model 4: filesystem (the msgspec-vs-pydantic gist's workload, as plain dataclasses)
# --------------------------------------------------------------------------------------------
#
# The gist's msgspec classes are ``class File(msgspec.Struct, tag="file")`` with
# ``Annotated[str, Meta(min_length=1)]`` / ``Annotated[int, Meta(ge=0)]``, and its pydantic
# models carry ``type: Literal["file"] = "file"``. A dataclass has no class-level tag, so the tag
# is that ``type`` field (last: a dataclass field with a default cannot precede ones without).


@dataclass
class File:
    """A file of the gist's file system."""

    name: Annotated[str, MinLen(1)]
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    nbytes: Annotated[int, Ge(0)]
    type: Literal["file"] = "file"


@dataclass
class Directory:
    """A directory of the gist's file system: ``contents`` is a tagged union of both."""

    name: Annotated[str, MinLen(1)]
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    contents: list[Union[File, Directory]]
    type: Literal["directory"] = "directory"


# --------------------------------------------------------------------------------------------
# Model 5: service (a msgspec service ported as the migration page ports it)
# --------------------------------------------------------------------------------------------
#
# Order events on a message bus, as a service written for msgspec Structs declares them and
# polycodec.options ports them (docs/migrating-from-msgspec.md): a tagged union of events
# (``tag_field="type"``) with camel-case names and ``omit_defaults``, UUIDs, Decimal amounts,
# aware datetimes, an untyped ``dict[str, Any]`` trace, ``array_like`` geographic points, an
# enum, Optionals and an envelope around each event. The Struct twins are in
# ``adapters/msgspec_structs.py``; the values at a default hold the default's own object, as a
# service's are (msgspec leaves out only that).


class Currency(enum.Enum):
    """The service's currencies."""

    EUR = "EUR"
    USD = "USD"
    GBP = "GBP"


@polycodec.options(array_like=True)
@dataclass
class GeoPoint:
    """A point of a route, written as ``[lat, lon]``."""

    lat: float
    lon: float


@polycodec.options(rename="camel", omit_defaults=True)
@dataclass
class LineItem:
    """One line of an order."""

    sku: str
    quantity: int
    unit_price: Decimal
    discount: Optional[Decimal] = None
    gift_wrap: bool = False


_EVENT = {"tag_field": "type", "rename": "camel", "omit_defaults": True}


@polycodec.options(tag="order.placed", **_EVENT)
@dataclass
class OrderPlaced:
    """An order was placed."""

    event_id: UUID
    occurred_at: datetime
    customer_id: UUID
    items: list[LineItem]
    total: Decimal
    currency: Currency = Currency.EUR
    shipping_point: Optional[GeoPoint] = None
    coupon_code: Optional[str] = None
    trace: dict[str, Any] = field(default_factory=dict)


@polycodec.options(tag="order.shipped", **_EVENT)
@dataclass
class OrderShipped:
    """An order left the warehouse."""

    event_id: UUID
    occurred_at: datetime
    order_id: UUID
    carrier: str
    route: list[GeoPoint]
    estimated_arrival: Optional[datetime] = None
    trace: dict[str, Any] = field(default_factory=dict)


@polycodec.options(tag="order.cancelled", **_EVENT)
@dataclass
class OrderCancelled:
    """An order was cancelled."""

    event_id: UUID
    occurred_at: datetime
    order_id: UUID
    reason: str
    refund: Optional[Decimal] = None
    notify_customer: bool = True
    trace: dict[str, Any] = field(default_factory=dict)


Event = Union[OrderPlaced, OrderShipped, OrderCancelled]


@polycodec.options(rename="camel", omit_defaults=True)
@dataclass
class EventEnvelope:
    """What goes on the bus: one event and its delivery metadata (the service model's root)."""

    message_id: UUID
    source: str
    published_at: datetime
    event: Event
    attempt: int = 1
    headers: dict[str, str] = field(default_factory=dict)


#: The service model's classes (their slots and Struct twins: ``idioms.py``,
#: ``adapters/msgspec_structs.py``).
SERVICE_CLASSES: tuple[type, ...] = (
    GeoPoint,
    LineItem,
    OrderPlaced,
    OrderShipped,
    OrderCancelled,
    EventEnvelope,
)


#: Every model class, so idioms (slots dataclasses, Structs, BaseModels) can map them one to one.
CLASSES: tuple[type, ...] = (Tag, Record, *HIERARCHY_CLASSES, Leaf, Branch, File, Directory)


# --------------------------------------------------------------------------------------------
# Deterministic data generation
# --------------------------------------------------------------------------------------------

_EPOCH = datetime(2020, 1, 1, tzinfo=timezone.utc)
_WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def _word(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(_word(rng) for _ in range(rng.randint(lo, hi)))


def _dt(rng: random.Random) -> datetime:
    return _EPOCH + timedelta(
        seconds=rng.randint(0, 4 * 365 * 86400), microseconds=rng.randint(0, 999_999)
    )


def _day(rng: random.Random) -> date:
    return date(2000, 1, 1) + timedelta(days=rng.randint(0, 9000))


def _money(rng: random.Random, hi: int) -> Decimal:
    # Always two decimal places: Avro decimals have a fixed scale.
    return Decimal(rng.randint(0, hi * 100)).scaleb(-2)


def _maybe(rng: random.Random, value: Any, p_none: float = 0.3) -> Any:
    return None if rng.random() < p_none else value


def _float(rng: random.Random) -> float:
    # Rounded so payloads look like real data (not 17-digit noise), still exactly representable
    # by every format's float64 path.
    return round(rng.uniform(0, 1000), 3)


def make_record(rng: random.Random, i: int) -> Record:
    """One :class:`Record`."""
    user = f"{_word(rng)}.{_word(rng)}{i}"
    return Record(
        id=100_000 + i,
        username=user,
        email=f"{user}@example.com",
        score=_float(rng),
        active=rng.random() < 0.8,
        status=rng.choice(list(Status)),
        created_at=_dt(rng),
        last_login=_maybe(rng, _dt(rng)),
        nickname=_maybe(rng, _word(rng).capitalize(), 0.5),
        age=_maybe(rng, rng.randint(18, 90)),
        tags=[
            Tag(name=_word(rng), weight=_float(rng), pinned=rng.random() < 0.2)
            for _ in range(rng.randint(1, 4))
        ],
        roles=[_word(rng) for _ in range(rng.randint(0, 3))],
    )


def make_hierarchy(rng: random.Random, i: int) -> Company:
    """One 10-level :class:`Company` document, built from the innermost level out."""
    check = Check(
        name=_words(rng, 1, 3),
        passed=rng.random() < 0.9,
        measured=_money(rng, 100),
        checked_on=_day(rng),
        checked_at=_dt(rng),
        priority=rng.choice(list(Priority)),
        comment=_maybe(rng, _words(rng, 2, 6)),
    )
    step = Step(
        _words(rng, 1, 3), rng.randint(1, 50), _money(rng, 1000), _day(rng), _dt(rng),
        rng.choice(list(Status)), _maybe(rng, _words(rng, 2, 6)), check,
    )  # fmt: skip
    subtask = Subtask(
        _words(rng, 1, 3), _float(rng), _money(rng, 5000), _day(rng), _dt(rng),
        rng.choice(list(Priority)), _maybe(rng, _word(rng)), step,
    )  # fmt: skip
    task = Task(
        _words(rng, 2, 5), rng.randint(1, 13), _money(rng, 20_000), _day(rng), _dt(rng),
        rng.choice(list(Status)), _maybe(rng, _word(rng)), subtask,
    )  # fmt: skip
    milestone = Milestone(
        _words(rng, 1, 3), rng.randint(1, 20), _money(rng, 100_000), _day(rng), _dt(rng),
        rng.choice(list(Priority)), _maybe(rng, _day(rng)), task,
    )  # fmt: skip
    project = Project(
        f"PRJ-{i:05d}", _words(rng, 1, 3), _money(rng, 1_000_000), _day(rng), _dt(rng),
        rng.choice(list(Status)), _maybe(rng, _word(rng)), milestone,
    )  # fmt: skip
    team = Team(
        _words(rng, 1, 2), rng.randint(2, 40), _money(rng, 5_000_000), _day(rng), _dt(rng),
        rng.choice(list(Priority)), _maybe(rng, _word(rng)), project,
    )  # fmt: skip
    department = Department(
        _words(rng, 1, 2), rng.randint(1000, 9999), _money(rng, 20_000_000), _day(rng),
        _dt(rng), rng.choice(list(Status)), _maybe(rng, _word(rng)), team,
    )  # fmt: skip
    division = Division(
        _words(rng, 1, 2), _word(rng), _money(rng, 100_000_000), _day(rng), _dt(rng),
        rng.choice(list(Priority)), _maybe(rng, _word(rng)), department,
    )  # fmt: skip
    return Company(
        f"{_word(rng).capitalize()} {_word(rng).capitalize()} Inc.", rng.randint(10**6, 10**9),
        _money(rng, 1_000_000_000), _day(rng), _dt(rng), rng.choice(list(Status)),
        _maybe(rng, _word(rng).upper()[:4]), division,
    )  # fmt: skip


def make_tree(rng: random.Random, i: int, max_depth: int = 4, max_nodes: int = 40) -> Branch:
    """One directory tree: at most ``max_depth`` levels of branches and ``max_nodes`` nodes."""
    budget = [max_nodes - 1]

    def leaf() -> Leaf:
        return Leaf(
            name=f"{_word(rng)}.{rng.choice(('txt', 'py', 'rs', 'json', 'png'))}",
            size=rng.randint(0, 10_000_000),
            modified=_dt(rng),
            checksum=_maybe(rng, f"{rng.getrandbits(64):016x}"),
        )

    def branch(depth: int) -> Branch:
        node = Branch(name=_word(rng), owner=_word(rng), modified=_dt(rng))
        for _ in range(rng.randint(1, 6)):
            if budget[0] <= 0:
                break
            budget[0] -= 1
            if depth < max_depth and rng.random() < 0.35:
                node.children.append(branch(depth + 1))
            else:
                node.children.append(leaf())
        return node

    root = branch(1)
    root.name = f"root{i}"
    return root


_FS_START = datetime(2018, 1, 1, tzinfo=timezone.utc)
_FS_SPAN = int((datetime(2023, 1, 1, tzinfo=timezone.utc) - _FS_START).total_seconds())
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def make_filesystem(rng: random.Random, i: int, capacity: int = 1000) -> Directory:
    """One fake file system of ``capacity`` nodes, generated as the gist's
    ``make_filesystem_data(1000)`` does: names of 4-30 letters, one of 30 creator UUIDs, created
    in 2018-2023 and updated after that, directories with 0-30 entries (one entry in ten is a
    directory), files of 0-1,000,000 bytes; what is left of the capacity goes into the root."""
    uuids = [UUID(int=rng.getrandbits(128), version=4) for _ in range(30)]
    left = capacity

    def node(is_dir: bool) -> File | Directory:
        nonlocal left
        name = "".join(rng.choices(_LETTERS, k=rng.randint(4, 30)))
        created_by = rng.choice(uuids)
        created = rng.randint(0, _FS_SPAN)
        created_at = _FS_START + timedelta(seconds=created)
        updated_at = _FS_START + timedelta(seconds=rng.randint(created, _FS_SPAN))
        if not is_dir:
            return File(name, created_by, created_at, updated_at, rng.randint(0, 1_000_000))
        n = min(rng.randint(0, 30), left)
        left -= n
        contents = [node(rng.random() > 0.9) for _ in range(n)]
        return Directory(name, created_by, created_at, updated_at, contents)

    left -= 1
    root = node(True)
    assert isinstance(root, Directory)
    while left:
        left -= 1
        root.contents.append(node(rng.random() > 0.9))
    root.name = f"root{i}"
    return root


def _uuid(rng: random.Random) -> UUID:
    return UUID(int=rng.getrandbits(128), version=4)


def _trace(rng: random.Random) -> dict[str, Any]:
    """A tracing context as services carry it: ids, a flag and nested baggage (or nothing)."""
    if rng.random() < 0.25:
        return {}
    return {
        "traceId": f"{rng.getrandbits(128):032x}",
        "spanId": f"{rng.getrandbits(64):016x}",
        "sampled": rng.random() < 0.5,
        "baggage": {"tenant": _word(rng), "region": rng.choice(["eu-west", "us-east"])},
        "hops": rng.randint(0, 5),
    }


def _point(rng: random.Random) -> GeoPoint:
    return GeoPoint(round(rng.uniform(-90, 90), 5), round(rng.uniform(-180, 180), 5))


def make_service(rng: random.Random, i: int) -> EventEnvelope:
    """One :class:`EventEnvelope`: about half its defaulted fields at their default."""
    occurred = _dt(rng)
    kind = rng.random()
    event: Any
    if kind < 0.5:
        items = [
            LineItem(
                sku=f"{_word(rng).upper()}-{rng.randint(100, 999)}",
                quantity=rng.randint(1, 5),
                unit_price=_money(rng, 200),
                **({"discount": _money(rng, 20)} if rng.random() < 0.3 else {}),
                **({"gift_wrap": True} if rng.random() < 0.1 else {}),
            )
            for _ in range(rng.randint(1, 4))
        ]
        total = sum((it.unit_price * it.quantity for it in items), Decimal("0.00"))
        extra: dict[str, Any] = {}
        if rng.random() < 0.4:
            extra["currency"] = rng.choice([Currency.USD, Currency.GBP])
        if rng.random() < 0.5:
            extra["shipping_point"] = _point(rng)
        if rng.random() < 0.2:
            extra["coupon_code"] = f"SAVE{rng.randint(5, 30)}"
        event = OrderPlaced(
            _uuid(rng), occurred, _uuid(rng), items, total, trace=_trace(rng), **extra
        )
    elif kind < 0.8:
        event = OrderShipped(
            _uuid(rng),
            occurred,
            _uuid(rng),
            rng.choice(["dhl", "ups", "fedex", "postnl"]),
            [_point(rng) for _ in range(rng.randint(2, 6))],
            **({"estimated_arrival": _dt(rng)} if rng.random() < 0.6 else {}),
            trace=_trace(rng),
        )
    else:
        event = OrderCancelled(
            _uuid(rng),
            occurred,
            _uuid(rng),
            _words(rng, 2, 6),
            **({"refund": _money(rng, 500)} if rng.random() < 0.5 else {}),
            **({"notify_customer": False} if rng.random() < 0.3 else {}),
            trace=_trace(rng),
        )
    return EventEnvelope(
        _uuid(rng),
        f"orders-{rng.randint(1, 4)}",
        occurred + timedelta(milliseconds=rng.randint(1, 900)),
        event,
        **({"attempt": rng.randint(2, 4)} if rng.random() < 0.2 else {}),
        **({"headers": {"content-type": "application/json", "x-tenant": _word(rng)}}
           if rng.random() < 0.5 else {}),
    )  # fmt: skip


@dataclass(frozen=True)
class ModelSpec:
    """A benchmark model: its root type and how to generate instances of it."""

    name: str
    root: type
    description: str
    make_one: Callable[[random.Random, int], Any]
    #: Only ``*_one`` operations: one object is already a large document (the gist times one
    #: 1,000-node file system per call); batches of trees are the ``tree`` model's job.
    one_only: bool = False
    #: ``"typed"``: instances of model classes; ``"untyped"``: plain JSON values (dicts, lists,
    #: str, int, float, bool, None), which only the adapters that declare it take.
    kind: str = "typed"
    #: The formats the model is timed in (None: every format).
    formats: Optional[tuple[str, ...]] = None
    #: Its wire form needs per-class options (``polycodec.options``, a Struct's class
    #: keywords): libraries whose classes cannot carry them do not take it.
    class_options: bool = False

    @property
    def list_type(self) -> Any:
        """``list[root]``: the batch type, for libraries that build one decoder per type."""
        return list[self.root]  # type: ignore[name-defined]


MODELS: dict[str, ModelSpec] = {
    "record": ModelSpec(
        "record",
        Record,
        "flat ~12-field record with enum, datetime, Optionals, nested list",
        make_record,
    ),
    "hierarchy": ModelSpec(
        "hierarchy",
        Company,
        "10 nested dataclass levels with Decimal, date, datetime, Enum, Optional",
        make_hierarchy,
    ),
    "tree": ModelSpec(
        "tree",
        Branch,
        "recursive tree, nodes are a tagged union (kind: Literal) of Leaf | Branch",
        make_tree,
    ),
    "filesystem": ModelSpec(
        "filesystem",
        Directory,
        "the msgspec-vs-pydantic gist's file system: ~1,000 nodes per object, tagged union "
        "File | Directory, UUID, aware datetimes, MinLen/Ge constraints (*_one operations only)",
        make_filesystem,
        one_only=True,
    ),
    "service": ModelSpec(
        "service",
        EventEnvelope,
        "a msgspec service ported with polycodec.options: envelopes around a tagged union of "
        "order events (tag_field, camel rename, omit_defaults), UUIDs, Decimals, aware "
        "datetimes, an enum, a dict[str, Any] trace, array_like points",
        make_service,
        class_options=True,
        # Avro has no form for the dict[str, Any] trace (polycodec refuses it).
        formats=("json", "msgpack", "builtins", "pickle"),
    ),
}


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (Decimal, UUID)):
        return str(value)
    raise TypeError(f"no JSON form for {type(value).__name__}")


def json_form(value: Any) -> Any:
    """A model object's JSON form as plain values, through the stdlib: what an untyped service
    holds after ``json.loads`` of the object's JSON."""
    return json.loads(json.dumps(dataclasses.asdict(value), default=_json_default))


def _untyped(model: str) -> Callable[[random.Random, int], Any]:
    make = MODELS[model].make_one
    return lambda rng, i: json_form(make(rng, i))


#: Untyped values (issue 37): the four models' data as plain JSON values, for JSON and
#: MessagePack libraries that take any value (``Codec(Any)``, ``orjson.loads``, ...).
UNTYPED: dict[str, ModelSpec] = {
    f"untyped_{name}": ModelSpec(
        f"untyped_{name}",
        dict,
        f"the {name} model's data as plain JSON values (dicts, lists, str, int, float, bool, "
        "None), decoded untyped",
        _untyped(name),
        one_only=MODELS[name].one_only,
        kind="untyped",
        formats=("json", "msgpack"),
    )
    for name in ("record", "hierarchy", "tree", "filesystem")
}
MODELS.update(UNTYPED)

#: The models of typed classes (every one but the untyped ones).
TYPED_MODELS: tuple[str, ...] = tuple(n for n, spec in MODELS.items() if spec.kind == "typed")


def generate(model: str, n: int, seed: int = 20240601) -> list[Any]:
    """Return ``n`` deterministic instances of ``model`` (object ``i`` only depends on seed, i)."""
    spec = MODELS[model]
    return [spec.make_one(random.Random(seed * 1_000_003 + i), i) for i in range(n)]
