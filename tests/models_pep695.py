"""Models written in the syntax of PEP 695 (``type`` statements, ``class Box[T]:``), which only
Python 3.12+ parses: imported by ``test_typing_current.py`` on those versions only.

No ``from __future__ import annotations``: the aliases' values are evaluated lazily by the
interpreter itself, which is what a recursive ``type`` alias relies on.
"""

from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Optional, TypedDict

type Ids = list[int]
type MaybeIds = Optional[Ids]
type Scores = dict[str, Ids]
type Pair[T] = tuple[T, T]
type Named[T] = dict[str, T]
type Tree = dict[str, Tree] | int
type Json = None | bool | int | float | str | list[Json] | dict[str, Json]
type GenericTree[T] = dict[str, GenericTree[T]] | T
type Expr = Add | Num
type Forest = list[Node]
type Limited[T: int] = list[T]

# Refused, each for its own reason.
type Complex = list[complex]
type Itself = Itself | int
type KeyLoop = dict[KeyLoop, int]
type Growing[T] = list[Growing[list[T]]] | None
type Undefined = list[NoSuchName]  # noqa: F821 (never defined, on purpose)


@dataclass
class Add:
    left: Expr
    right: Expr
    kind: Literal["add"] = "add"


@dataclass
class Num:
    value: int
    kind: Literal["num"] = "num"


@dataclass
class Node:
    name: str
    children: Forest = field(default_factory=list)


@dataclass
class Record:
    ids: Ids
    many: list[Ids]
    maybe: MaybeIds
    optional: Optional[Ids]
    scores: Scores
    pair: Pair[int]
    pairs: list[Pair[str]]
    named: Named[float]
    tree: Tree
    trees: dict[str, Optional[Tree]]
    json: Json
    counts: GenericTree[int]


@dataclass
class Flat:
    """Only aliases msgspec also decodes (it overflows its stack on the recursive ones)."""

    ids: Ids
    many: list[Ids]
    maybe: MaybeIds
    scores: Scores
    pair: Pair[int]
    pairs: list[Pair[str]]
    named: Named[float]


@dataclass
class WithExpr:
    expr: Expr
    exprs: list[Expr]


@dataclass
class Box[T]:
    item: T


@dataclass
class Limits[T: int]:
    item: T


@dataclass
class Holder[T]:
    boxes: list[Box[T]]
    pair: Pair[T]
    maybe: Optional[Box[T]] = None


class Row[T](TypedDict):
    value: T
    values: list[T]


class Point[T](NamedTuple):
    x: T
    y: T


@dataclass
class Generics:
    box: Box[int]
    boxes: Holder[str]
    row: Row[bool]
    point: Point[float]
    limits: Limits  # unparametrised on purpose: T is its bound, int


@dataclass
class HasComplex:
    values: Complex
