"""Models that only Python 3.14+ can define (PEP 649/749 deferred annotations): annotations
naming classes defined further down, with no quotes and no ``from __future__ import
annotations``. Imported by ``test_typing_current.py`` on those versions only."""

from dataclasses import dataclass
from typing import NamedTuple, Optional, TypedDict


@dataclass
class Order:
    customer: Customer
    lines: list[Line]
    parent: Optional[Order] = None


class Shipment(TypedDict):
    order: Order
    address: Address


class Span(NamedTuple):
    start: Line
    end: Line


@dataclass
class Customer:
    name: str


@dataclass
class Line:
    sku: str
    quantity: int


@dataclass
class Address:
    city: str


@dataclass
class Dangling:
    missing: NeverDefined  # noqa: F821 (never defined, on purpose)


def local_models() -> type:
    """A class whose annotation names a local class defined after it: the deferred annotation
    reads the local through the function's closure when it is evaluated."""

    @dataclass
    class Outer:
        inner: Inner

    @dataclass
    class Inner:
        value: int

    return Outer
