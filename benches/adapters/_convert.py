"""Hand-written dataclass <-> dict conversion for the "dict-only" libraries.

orjson, ormsgpack, msgpack, the stdlib json module, fastavro and apache avro only understand
dicts/lists/scalars (orjson and ormsgpack also *encode* dataclasses natively, but never decode
into them). Their users therefore write conversion code like this by hand, once per model. It is
written here exactly once, shared by all those adapters, in the plain style a performance-aware
user would write: one function per class, direct attribute/key access, no reflection (reflection
such as ``dataclasses.asdict`` would be slower and would make the baselines look worse than they
need to be).

Three flavours exist because the wire types (and fastavro's options) differ:

* ``json`` flavour (JSON and MessagePack): datetime/date as ISO 8601 strings, Decimal as a
  string (exact), Enum as its value.
* ``avro`` flavour: datetime, date and Decimal stay native objects (the Avro libraries apply the
  ``timestamp-micros``/``date``/``decimal`` logical types themselves), Enum as its symbol name.
* ``fastavro`` flavour: the ``avro`` one, with the trees' union members written in fastavro's
  ``(record name, dict)`` tuple notation.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable
from uuid import UUID

from ..models import (
    Branch,
    Currency,
    EventEnvelope,
    GeoPoint,
    LineItem,
    OrderCancelled,
    OrderPlaced,
    OrderShipped,
    Check,
    Company,
    Department,
    Directory,
    Division,
    File,
    Leaf,
    Milestone,
    Priority,
    Project,
    Record,
    Status,
    Step,
    Subtask,
    Tag,
    Task,
    Team,
)

Dict = dict[str, Any]

_fromiso = datetime.fromisoformat
_datefromiso = date.fromisoformat


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _parse_dt(value: str | None) -> datetime | None:
    return None if value is None else _fromiso(value)


# ============================================================================================
# json flavour
# ============================================================================================

# ---- record ---------------------------------------------------------------------------------


def record_to_json(r: Record) -> Dict:
    """Record -> JSON-compatible dict."""
    return {
        "id": r.id,
        "username": r.username,
        "email": r.email,
        "score": r.score,
        "active": r.active,
        "status": r.status.value,
        "created_at": r.created_at.isoformat(),
        "last_login": _iso(r.last_login),
        "nickname": r.nickname,
        "age": r.age,
        "tags": [{"name": t.name, "weight": t.weight, "pinned": t.pinned} for t in r.tags],
        "roles": r.roles,
    }


def record_from_json(d: Dict) -> Record:
    """JSON-compatible dict -> Record."""
    return Record(
        id=d["id"],
        username=d["username"],
        email=d["email"],
        score=float(d["score"]),
        active=d["active"],
        status=Status(d["status"]),
        created_at=_fromiso(d["created_at"]),
        last_login=_parse_dt(d["last_login"]),
        nickname=d["nickname"],
        age=d["age"],
        tags=[Tag(t["name"], float(t["weight"]), t["pinned"]) for t in d["tags"]],
        roles=d["roles"],
    )


# ---- hierarchy ------------------------------------------------------------------------------


def company_to_json(c: Company) -> Dict:
    """Company (10 levels) -> JSON-compatible dict, written out level by level."""
    dv = c.division
    dp = dv.department
    tm = dp.team
    pj = tm.project
    ms = pj.milestone
    tk = ms.task
    st = tk.subtask
    sp = st.step
    ck = sp.check
    check = {
        "name": ck.name,
        "passed": ck.passed,
        "measured": str(ck.measured),
        "checked_on": ck.checked_on.isoformat(),
        "checked_at": ck.checked_at.isoformat(),
        "priority": ck.priority.value,
        "comment": ck.comment,
    }
    step = {
        "name": sp.name,
        "order": sp.order,
        "cost": str(sp.cost),
        "due": sp.due.isoformat(),
        "started_at": sp.started_at.isoformat(),
        "status": sp.status.value,
        "note": sp.note,
        "check": check,
    }
    subtask = {
        "name": st.name,
        "estimate_hours": st.estimate_hours,
        "budget": str(st.budget),
        "due": st.due.isoformat(),
        "updated_at": st.updated_at.isoformat(),
        "priority": st.priority.value,
        "assignee": st.assignee,
        "step": step,
    }
    task = {
        "title": tk.title,
        "points": tk.points,
        "budget": str(tk.budget),
        "due": tk.due.isoformat(),
        "created_at": tk.created_at.isoformat(),
        "status": tk.status.value,
        "reviewer": tk.reviewer,
        "subtask": subtask,
    }
    milestone = {
        "title": ms.title,
        "sequence": ms.sequence,
        "budget": str(ms.budget),
        "target": ms.target.isoformat(),
        "updated_at": ms.updated_at.isoformat(),
        "priority": ms.priority.value,
        "completed_on": None if ms.completed_on is None else ms.completed_on.isoformat(),
        "task": task,
    }
    project = {
        "code": pj.code,
        "name": pj.name,
        "budget": str(pj.budget),
        "start": pj.start.isoformat(),
        "created_at": pj.created_at.isoformat(),
        "status": pj.status.value,
        "sponsor": pj.sponsor,
        "milestone": milestone,
    }
    team = {
        "name": tm.name,
        "size": tm.size,
        "payroll": str(tm.payroll),
        "formed": tm.formed.isoformat(),
        "updated_at": tm.updated_at.isoformat(),
        "priority": tm.priority.value,
        "lead": tm.lead,
        "project": project,
    }
    department = {
        "name": dp.name,
        "cost_center": dp.cost_center,
        "budget": str(dp.budget),
        "founded": dp.founded.isoformat(),
        "audited_at": dp.audited_at.isoformat(),
        "status": dp.status.value,
        "head": dp.head,
        "team": team,
    }
    division = {
        "name": dv.name,
        "region": dv.region,
        "revenue": str(dv.revenue),
        "opened": dv.opened.isoformat(),
        "reported_at": dv.reported_at.isoformat(),
        "priority": dv.priority.value,
        "vice_president": dv.vice_president,
        "department": department,
    }
    return {
        "name": c.name,
        "registration": c.registration,
        "capital": str(c.capital),
        "incorporated": c.incorporated.isoformat(),
        "updated_at": c.updated_at.isoformat(),
        "status": c.status.value,
        "ticker": c.ticker,
        "division": division,
    }


def company_from_json(c: Dict) -> Company:
    """JSON-compatible dict -> Company, rebuilt from the innermost level out."""
    dv = c["division"]
    dp = dv["department"]
    tm = dp["team"]
    pj = tm["project"]
    ms = pj["milestone"]
    tk = ms["task"]
    st = tk["subtask"]
    sp = st["step"]
    ck = sp["check"]
    check = Check(
        ck["name"],
        ck["passed"],
        Decimal(ck["measured"]),
        _datefromiso(ck["checked_on"]),
        _fromiso(ck["checked_at"]),
        Priority(ck["priority"]),
        ck["comment"],
    )
    step = Step(
        sp["name"],
        sp["order"],
        Decimal(sp["cost"]),
        _datefromiso(sp["due"]),
        _fromiso(sp["started_at"]),
        Status(sp["status"]),
        sp["note"],
        check,
    )
    subtask = Subtask(
        st["name"],
        float(st["estimate_hours"]),
        Decimal(st["budget"]),
        _datefromiso(st["due"]),
        _fromiso(st["updated_at"]),
        Priority(st["priority"]),
        st["assignee"],
        step,
    )
    task = Task(
        tk["title"],
        tk["points"],
        Decimal(tk["budget"]),
        _datefromiso(tk["due"]),
        _fromiso(tk["created_at"]),
        Status(tk["status"]),
        tk["reviewer"],
        subtask,
    )
    completed = ms["completed_on"]
    milestone = Milestone(
        ms["title"],
        ms["sequence"],
        Decimal(ms["budget"]),
        _datefromiso(ms["target"]),
        _fromiso(ms["updated_at"]),
        Priority(ms["priority"]),
        None if completed is None else _datefromiso(completed),
        task,
    )
    project = Project(
        pj["code"],
        pj["name"],
        Decimal(pj["budget"]),
        _datefromiso(pj["start"]),
        _fromiso(pj["created_at"]),
        Status(pj["status"]),
        pj["sponsor"],
        milestone,
    )
    team = Team(
        tm["name"],
        tm["size"],
        Decimal(tm["payroll"]),
        _datefromiso(tm["formed"]),
        _fromiso(tm["updated_at"]),
        Priority(tm["priority"]),
        tm["lead"],
        project,
    )
    department = Department(
        dp["name"],
        dp["cost_center"],
        Decimal(dp["budget"]),
        _datefromiso(dp["founded"]),
        _fromiso(dp["audited_at"]),
        Status(dp["status"]),
        dp["head"],
        team,
    )
    division = Division(
        dv["name"],
        dv["region"],
        Decimal(dv["revenue"]),
        _datefromiso(dv["opened"]),
        _fromiso(dv["reported_at"]),
        Priority(dv["priority"]),
        dv["vice_president"],
        department,
    )
    return Company(
        c["name"],
        c["registration"],
        Decimal(c["capital"]),
        _datefromiso(c["incorporated"]),
        _fromiso(c["updated_at"]),
        Status(c["status"]),
        c["ticker"],
        division,
    )


# ---- tree -----------------------------------------------------------------------------------


def node_to_json(n: Leaf | Branch) -> Dict:
    """Leaf | Branch -> JSON-compatible dict (recursive; ``kind`` is the union's tag)."""
    if n.kind == "leaf":
        return {
            "name": n.name,
            "size": n.size,
            "modified": n.modified.isoformat(),
            "checksum": n.checksum,
            "kind": "leaf",
        }
    return {
        "name": n.name,
        "owner": n.owner,
        "modified": n.modified.isoformat(),
        "children": [node_to_json(c) for c in n.children],
        "kind": "branch",
    }


def node_from_json(d: Dict) -> Leaf | Branch:
    """JSON-compatible dict -> Leaf | Branch, dispatching on the ``kind`` tag."""
    kind = d["kind"]
    if kind == "leaf":
        return Leaf(d["name"], d["size"], _fromiso(d["modified"]), d["checksum"])
    if kind == "branch":
        return Branch(
            d["name"],
            d["owner"],
            _fromiso(d["modified"]),
            [node_from_json(c) for c in d["children"]],
        )
    raise ValueError(f"unknown node kind {kind!r}")


# ============================================================================================
# avro flavour (datetime/date/Decimal native, Enum as symbol name)
# ============================================================================================


def record_to_avro(r: Record) -> Dict:
    """Record -> dict for the Avro libraries."""
    return {
        "id": r.id,
        "username": r.username,
        "email": r.email,
        "score": r.score,
        "active": r.active,
        "status": r.status.name,
        "created_at": r.created_at,
        "last_login": r.last_login,
        "nickname": r.nickname,
        "age": r.age,
        "tags": [{"name": t.name, "weight": t.weight, "pinned": t.pinned} for t in r.tags],
        "roles": r.roles,
    }


def record_from_avro(d: Dict) -> Record:
    """Avro datum (dict) -> Record."""
    return Record(
        id=d["id"],
        username=d["username"],
        email=d["email"],
        score=d["score"],
        active=d["active"],
        status=Status[d["status"]],
        created_at=d["created_at"],
        last_login=d["last_login"],
        nickname=d["nickname"],
        age=d["age"],
        tags=[Tag(t["name"], t["weight"], t["pinned"]) for t in d["tags"]],
        roles=d["roles"],
    )


def company_to_avro(c: Company) -> Dict:
    """Company -> nested dicts for the Avro libraries."""
    dv = c.division
    dp = dv.department
    tm = dp.team
    pj = tm.project
    ms = pj.milestone
    tk = ms.task
    st = tk.subtask
    sp = st.step
    ck = sp.check
    check = {
        "name": ck.name,
        "passed": ck.passed,
        "measured": ck.measured,
        "checked_on": ck.checked_on,
        "checked_at": ck.checked_at,
        "priority": ck.priority.name,
        "comment": ck.comment,
    }
    step = {
        "name": sp.name,
        "order": sp.order,
        "cost": sp.cost,
        "due": sp.due,
        "started_at": sp.started_at,
        "status": sp.status.name,
        "note": sp.note,
        "check": check,
    }
    subtask = {
        "name": st.name,
        "estimate_hours": st.estimate_hours,
        "budget": st.budget,
        "due": st.due,
        "updated_at": st.updated_at,
        "priority": st.priority.name,
        "assignee": st.assignee,
        "step": step,
    }
    task = {
        "title": tk.title,
        "points": tk.points,
        "budget": tk.budget,
        "due": tk.due,
        "created_at": tk.created_at,
        "status": tk.status.name,
        "reviewer": tk.reviewer,
        "subtask": subtask,
    }
    milestone = {
        "title": ms.title,
        "sequence": ms.sequence,
        "budget": ms.budget,
        "target": ms.target,
        "updated_at": ms.updated_at,
        "priority": ms.priority.name,
        "completed_on": ms.completed_on,
        "task": task,
    }
    project = {
        "code": pj.code,
        "name": pj.name,
        "budget": pj.budget,
        "start": pj.start,
        "created_at": pj.created_at,
        "status": pj.status.name,
        "sponsor": pj.sponsor,
        "milestone": milestone,
    }
    team = {
        "name": tm.name,
        "size": tm.size,
        "payroll": tm.payroll,
        "formed": tm.formed,
        "updated_at": tm.updated_at,
        "priority": tm.priority.name,
        "lead": tm.lead,
        "project": project,
    }
    department = {
        "name": dp.name,
        "cost_center": dp.cost_center,
        "budget": dp.budget,
        "founded": dp.founded,
        "audited_at": dp.audited_at,
        "status": dp.status.name,
        "head": dp.head,
        "team": team,
    }
    division = {
        "name": dv.name,
        "region": dv.region,
        "revenue": dv.revenue,
        "opened": dv.opened,
        "reported_at": dv.reported_at,
        "priority": dv.priority.name,
        "vice_president": dv.vice_president,
        "department": department,
    }
    return {
        "name": c.name,
        "registration": c.registration,
        "capital": c.capital,
        "incorporated": c.incorporated,
        "updated_at": c.updated_at,
        "status": c.status.name,
        "ticker": c.ticker,
        "division": division,
    }


def company_from_avro(c: Dict) -> Company:
    """Avro datum (nested dicts) -> Company."""
    dv = c["division"]
    dp = dv["department"]
    tm = dp["team"]
    pj = tm["project"]
    ms = pj["milestone"]
    tk = ms["task"]
    st = tk["subtask"]
    sp = st["step"]
    ck = sp["check"]
    check = Check(
        ck["name"],
        ck["passed"],
        ck["measured"],
        ck["checked_on"],
        ck["checked_at"],
        Priority[ck["priority"]],
        ck["comment"],
    )
    step = Step(
        sp["name"],
        sp["order"],
        sp["cost"],
        sp["due"],
        sp["started_at"],
        Status[sp["status"]],
        sp["note"],
        check,
    )
    subtask = Subtask(
        st["name"],
        st["estimate_hours"],
        st["budget"],
        st["due"],
        st["updated_at"],
        Priority[st["priority"]],
        st["assignee"],
        step,
    )
    task = Task(
        tk["title"],
        tk["points"],
        tk["budget"],
        tk["due"],
        tk["created_at"],
        Status[tk["status"]],
        tk["reviewer"],
        subtask,
    )
    milestone = Milestone(
        ms["title"],
        ms["sequence"],
        ms["budget"],
        ms["target"],
        ms["updated_at"],
        Priority[ms["priority"]],
        ms["completed_on"],
        task,
    )
    project = Project(
        pj["code"],
        pj["name"],
        pj["budget"],
        pj["start"],
        pj["created_at"],
        Status[pj["status"]],
        pj["sponsor"],
        milestone,
    )
    team = Team(
        tm["name"],
        tm["size"],
        tm["payroll"],
        tm["formed"],
        tm["updated_at"],
        Priority[tm["priority"]],
        tm["lead"],
        project,
    )
    department = Department(
        dp["name"],
        dp["cost_center"],
        dp["budget"],
        dp["founded"],
        dp["audited_at"],
        Status[dp["status"]],
        dp["head"],
        team,
    )
    division = Division(
        dv["name"],
        dv["region"],
        dv["revenue"],
        dv["opened"],
        dv["reported_at"],
        Priority[dv["priority"]],
        dv["vice_president"],
        department,
    )
    return Company(
        c["name"],
        c["registration"],
        c["capital"],
        c["incorporated"],
        c["updated_at"],
        Status[c["status"]],
        c["ticker"],
        division,
    )


def node_to_avro(n: Leaf | Branch) -> Dict:
    """Leaf | Branch -> dict for the Avro libraries (the union branch is chosen by the library)."""
    if n.kind == "leaf":
        return {
            "name": n.name,
            "size": n.size,
            "modified": n.modified,
            "checksum": n.checksum,
            "kind": "leaf",
        }
    return {
        "name": n.name,
        "owner": n.owner,
        "modified": n.modified,
        "children": [node_to_avro(c) for c in n.children],
        "kind": "branch",
    }


def node_from_avro(d: Dict) -> Leaf | Branch:
    """Avro datum -> Leaf | Branch, dispatching on the ``kind`` field."""
    kind = d["kind"]
    if kind == "leaf":
        return Leaf(d["name"], d["size"], d["modified"], d["checksum"])
    if kind == "branch":
        return Branch(
            d["name"], d["owner"], d["modified"], [node_from_avro(c) for c in d["children"]]
        )
    raise ValueError(f"unknown node kind {kind!r}")


# ============================================================================================
# filesystem (the gist's model), both flavours
# ============================================================================================
#
# What the gist's users of dict-only libraries write: the tag is the ``type`` key, UUIDs travel
# as their hyphenated string (the Avro schema marks them ``logicalType: uuid``), datetimes as ISO
# 8601 in JSON and as datetimes for the Avro libraries. The decoders check the gist's
# constraints (name not empty, nbytes >= 0) as the typed libraries do.


def _checked_name(name: str) -> str:
    if not name:
        raise ValueError("name: expected at least 1 character")
    return name


def _checked_nbytes(n: int) -> int:
    if n < 0:
        raise ValueError(f"nbytes: expected >= 0, got {n}")
    return n


def fs_to_json(n: File | Directory) -> Dict:
    """File | Directory -> JSON-compatible dict."""
    if n.type == "file":
        return {
            "name": n.name,
            "created_by": str(n.created_by),
            "created_at": n.created_at.isoformat(),
            "updated_at": n.updated_at.isoformat(),
            "nbytes": n.nbytes,
            "type": "file",
        }
    return {
        "name": n.name,
        "created_by": str(n.created_by),
        "created_at": n.created_at.isoformat(),
        "updated_at": n.updated_at.isoformat(),
        "contents": [fs_to_json(c) for c in n.contents],
        "type": "directory",
    }


def fs_from_json(d: Dict) -> File | Directory:
    """JSON-compatible dict -> File | Directory, dispatching on ``type``."""
    kind = d["type"]
    if kind == "file":
        return File(
            _checked_name(d["name"]),
            UUID(d["created_by"]),
            _fromiso(d["created_at"]),
            _fromiso(d["updated_at"]),
            _checked_nbytes(d["nbytes"]),
        )
    if kind == "directory":
        return Directory(
            _checked_name(d["name"]),
            UUID(d["created_by"]),
            _fromiso(d["created_at"]),
            _fromiso(d["updated_at"]),
            [fs_from_json(c) for c in d["contents"]],
        )
    raise ValueError(f"unknown node type {kind!r}")


def fs_to_avro(n: File | Directory) -> Dict:
    """File | Directory -> dict for the Avro libraries (the union branch is chosen by them)."""
    if n.type == "file":
        return {
            "name": n.name,
            "created_by": str(n.created_by),
            "created_at": n.created_at,
            "updated_at": n.updated_at,
            "nbytes": n.nbytes,
            "type": "file",
        }
    return {
        "name": n.name,
        "created_by": str(n.created_by),
        "created_at": n.created_at,
        "updated_at": n.updated_at,
        "contents": [fs_to_avro(c) for c in n.contents],
        "type": "directory",
    }


def _uuid(value: str | UUID) -> UUID:
    # fastavro reads the uuid logical type as UUID, apache avro as str.
    return value if isinstance(value, UUID) else UUID(value)


def fs_from_avro(d: Dict) -> File | Directory:
    """Avro datum -> File | Directory, dispatching on ``type``."""
    kind = d["type"]
    if kind == "file":
        return File(
            _checked_name(d["name"]),
            _uuid(d["created_by"]),
            d["created_at"],
            d["updated_at"],
            _checked_nbytes(d["nbytes"]),
        )
    if kind == "directory":
        return Directory(
            _checked_name(d["name"]),
            _uuid(d["created_by"]),
            d["created_at"],
            d["updated_at"],
            [fs_from_avro(c) for c in d["contents"]],
        )
    raise ValueError(f"unknown node type {kind!r}")


# ============================================================================================
# fastavro flavour: the avro flavour plus fastavro's tuple notation for union branches
# ============================================================================================
#
# Without a hint, an Avro writer picks a union branch by validating the datum against each
# record branch in turn, and validating a directory validates its whole subtree. fastavro's
# users name the branch instead, with ``(record name, datum)`` tuples (fastavro's documented
# "tuple notation"); apache avro has no such option.

_NS = "polycodec.benches."


def node_to_fastavro(n: Leaf | Branch) -> Dict:
    """Leaf | Branch -> dict whose children are ``(record name, dict)`` tuples."""
    if n.kind == "leaf":
        return node_to_avro(n)
    return {
        "name": n.name,
        "owner": n.owner,
        "modified": n.modified,
        "children": [(_NS + c.kind.capitalize(), node_to_fastavro(c)) for c in n.children],
        "kind": "branch",
    }


def fs_to_fastavro(n: File | Directory) -> Dict:
    """File | Directory -> dict whose contents are ``(record name, dict)`` tuples."""
    if n.type == "file":
        return fs_to_avro(n)
    return {
        "name": n.name,
        "created_by": str(n.created_by),
        "created_at": n.created_at,
        "updated_at": n.updated_at,
        "contents": [(_NS + c.type.capitalize(), fs_to_fastavro(c)) for c in n.contents],
        "type": "directory",
    }


# ---- service (camelCase keys, class tags first, defaults left out, points as arrays) --------


def _point_to_json(p: GeoPoint) -> list[float]:
    return [p.lat, p.lon]


def _point_from_json(a: list[float]) -> GeoPoint:
    return GeoPoint(a[0], a[1])


def _item_to_json(it: LineItem) -> Dict:
    d: Dict = {"sku": it.sku, "quantity": it.quantity, "unitPrice": str(it.unit_price)}
    if it.discount is not None:
        d["discount"] = str(it.discount)
    if it.gift_wrap:
        d["giftWrap"] = True
    return d


def _item_from_json(d: Dict) -> LineItem:
    discount = d.get("discount")
    return LineItem(
        d["sku"],
        d["quantity"],
        Decimal(d["unitPrice"]),
        None if discount is None else Decimal(discount),
        d.get("giftWrap", False),
    )


def _event_to_json(e: Any) -> Dict:
    t = type(e)
    if t is OrderPlaced:
        d: Dict = {
            "type": "order.placed",
            "eventId": str(e.event_id),
            "occurredAt": e.occurred_at.isoformat(),
            "customerId": str(e.customer_id),
            "items": [_item_to_json(i) for i in e.items],
            "total": str(e.total),
        }
        if e.currency is not Currency.EUR:
            d["currency"] = e.currency.value
        if e.shipping_point is not None:
            d["shippingPoint"] = _point_to_json(e.shipping_point)
        if e.coupon_code is not None:
            d["couponCode"] = e.coupon_code
    elif t is OrderShipped:
        d = {
            "type": "order.shipped",
            "eventId": str(e.event_id),
            "occurredAt": e.occurred_at.isoformat(),
            "orderId": str(e.order_id),
            "carrier": e.carrier,
            "route": [_point_to_json(p) for p in e.route],
        }
        if e.estimated_arrival is not None:
            d["estimatedArrival"] = e.estimated_arrival.isoformat()
    else:
        d = {
            "type": "order.cancelled",
            "eventId": str(e.event_id),
            "occurredAt": e.occurred_at.isoformat(),
            "orderId": str(e.order_id),
            "reason": e.reason,
        }
        if e.refund is not None:
            d["refund"] = str(e.refund)
        if not e.notify_customer:
            d["notifyCustomer"] = False
    if e.trace:
        d["trace"] = e.trace
    return d


def _event_from_json(d: Dict) -> Any:
    kind = d["type"]
    if kind == "order.placed":
        point = d.get("shippingPoint")
        return OrderPlaced(
            UUID(d["eventId"]),
            _fromiso(d["occurredAt"]),
            UUID(d["customerId"]),
            [_item_from_json(i) for i in d["items"]],
            Decimal(d["total"]),
            Currency(d["currency"]) if "currency" in d else Currency.EUR,
            None if point is None else _point_from_json(point),
            d.get("couponCode"),
            d.get("trace", {}),
        )
    if kind == "order.shipped":
        return OrderShipped(
            UUID(d["eventId"]),
            _fromiso(d["occurredAt"]),
            UUID(d["orderId"]),
            d["carrier"],
            [_point_from_json(p) for p in d["route"]],
            _parse_dt(d.get("estimatedArrival")),
            d.get("trace", {}),
        )
    if kind == "order.cancelled":
        refund = d.get("refund")
        return OrderCancelled(
            UUID(d["eventId"]),
            _fromiso(d["occurredAt"]),
            UUID(d["orderId"]),
            d["reason"],
            None if refund is None else Decimal(refund),
            d.get("notifyCustomer", True),
            d.get("trace", {}),
        )
    raise ValueError(f"unknown event type {kind!r}")


def envelope_to_json(e: EventEnvelope) -> Dict:
    """EventEnvelope -> JSON-compatible dict, as the service's msgspec Structs write it."""
    d: Dict = {
        "messageId": str(e.message_id),
        "source": e.source,
        "publishedAt": e.published_at.isoformat(),
        "event": _event_to_json(e.event),
    }
    if e.attempt != 1:
        d["attempt"] = e.attempt
    if e.headers:
        d["headers"] = e.headers
    return d


def envelope_from_json(d: Dict) -> EventEnvelope:
    """JSON-compatible dict -> EventEnvelope."""
    return EventEnvelope(
        UUID(d["messageId"]),
        d["source"],
        _fromiso(d["publishedAt"]),
        _event_from_json(d["event"]),
        d.get("attempt", 1),
        d.get("headers", {}),
    )


# ============================================================================================
# lookup by (flavour, model)
# ============================================================================================

Converters = tuple[Callable[[Any], Dict], Callable[[Dict], Any]]

CONVERTERS: dict[tuple[str, str], Converters] = {
    ("json", "record"): (record_to_json, record_from_json),
    ("json", "hierarchy"): (company_to_json, company_from_json),
    ("json", "tree"): (node_to_json, node_from_json),
    ("avro", "record"): (record_to_avro, record_from_avro),
    ("avro", "hierarchy"): (company_to_avro, company_from_avro),
    ("avro", "tree"): (node_to_avro, node_from_avro),
    ("json", "filesystem"): (fs_to_json, fs_from_json),
    ("json", "service"): (envelope_to_json, envelope_from_json),
    ("avro", "filesystem"): (fs_to_avro, fs_from_avro),
    ("fastavro", "tree"): (node_to_fastavro, node_from_avro),
    ("fastavro", "filesystem"): (fs_to_fastavro, fs_from_avro),
}


def converters(flavour: str, model: str) -> Converters:
    """Return ``(to_dict, from_dict)`` for a model; KeyError means "not written for it".

    The ``fastavro`` flavour is the ``avro`` one wherever no union needs a branch name.
    """
    if flavour == "fastavro" and (flavour, model) not in CONVERTERS:
        flavour = "avro"
    return CONVERTERS[(flavour, model)]
