"""The benchmark models as pydantic v2 users write them: ``pydantic.BaseModel`` classes.

Same fields, types and order as the dataclasses in ``models.py`` (the file system's tag comes
first, as in the gist). The tagged unions use a
``Literal`` tag field with a default (as the msgspec-vs-pydantic gist's pydantic models do) and
``Field(discriminator=...)``, pydantic's documented fast path for tagged unions (the gist leaves it
out; with it pydantic picks the class from the tag instead of trying each one). The gist's
constraints are written as the gist writes them: ``Field(min_length=1)`` and ``NonNegativeInt``.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Literal, Optional, Union
from uuid import UUID

from pydantic import BaseModel, Field, NonNegativeInt

from .. import models
from ..models import Priority, Status

# ---- record ------------------------------------------------------------------------------


class Tag(BaseModel):
    name: str
    weight: float
    pinned: bool


class Record(BaseModel):
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


class Check(BaseModel):
    name: str
    passed: bool
    measured: Decimal
    checked_on: date
    checked_at: datetime
    priority: Priority
    comment: Optional[str]


class Step(BaseModel):
    name: str
    order: int
    cost: Decimal
    due: date
    started_at: datetime
    status: Status
    note: Optional[str]
    check: Check


class Subtask(BaseModel):
    name: str
    estimate_hours: float
    budget: Decimal
    due: date
    updated_at: datetime
    priority: Priority
    assignee: Optional[str]
    step: Step


class Task(BaseModel):
    title: str
    points: int
    budget: Decimal
    due: date
    created_at: datetime
    status: Status
    reviewer: Optional[str]
    subtask: Subtask


class Milestone(BaseModel):
    title: str
    sequence: int
    budget: Decimal
    target: date
    updated_at: datetime
    priority: Priority
    completed_on: Optional[date]
    task: Task


class Project(BaseModel):
    code: str
    name: str
    budget: Decimal
    start: date
    created_at: datetime
    status: Status
    sponsor: Optional[str]
    milestone: Milestone


class Team(BaseModel):
    name: str
    size: int
    payroll: Decimal
    formed: date
    updated_at: datetime
    priority: Priority
    lead: Optional[str]
    project: Project


class Department(BaseModel):
    name: str
    cost_center: int
    budget: Decimal
    founded: date
    audited_at: datetime
    status: Status
    head: Optional[str]
    team: Team


class Division(BaseModel):
    name: str
    region: str
    revenue: Decimal
    opened: date
    reported_at: datetime
    priority: Priority
    vice_president: Optional[str]
    department: Department


class Company(BaseModel):
    name: str
    registration: int
    capital: Decimal
    incorporated: date
    updated_at: datetime
    status: Status
    ticker: Optional[str]
    division: Division


# ---- tree --------------------------------------------------------------------------------


class Leaf(BaseModel):
    name: str
    size: int
    modified: datetime
    checksum: Optional[str]
    kind: Literal["leaf"] = "leaf"


class Branch(BaseModel):
    name: str
    owner: str
    modified: datetime
    children: list[Annotated[Union[Leaf, Branch], Field(discriminator="kind")]] = []
    kind: Literal["branch"] = "branch"


# ---- filesystem (the gist's models, plus the discriminator) ------------------------------


class File(BaseModel):
    type: Literal["file"] = "file"
    name: str = Field(min_length=1)
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    nbytes: NonNegativeInt


class Directory(BaseModel):
    type: Literal["directory"] = "directory"
    name: str = Field(min_length=1)
    created_by: UUID
    created_at: datetime
    updated_at: datetime
    contents: list[Annotated[Union[File, Directory], Field(discriminator="type")]]


#: plain dataclass -> BaseModel (every model class has one).
MODELS: dict[type, type] = {cls: globals()[cls.__name__] for cls in models.CLASSES}
