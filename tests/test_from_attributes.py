"""`from_builtins(obj, T, from_attributes=True)`: a record (dataclass or attrs class) read from
any object's attributes (an ORM row, a `SimpleNamespace`, an instance of another class), at any
depth and mixed with dicts, with msgspec's `convert(..., from_attributes=True)` and pydantic's
`model_validate(..., from_attributes=True)` as oracles for the values, the defaults and the
refusals; the attribute names (a field's own, then its wire name), tagged unions, user code
that raises, and what stays refused without the option."""

from __future__ import annotations

import dataclasses
import datetime
import types
from typing import Annotated, Any, Literal, Optional, Union

import attrs
import msgspec
import pydantic
import pytest

import polycodec

ns = types.SimpleNamespace


@dataclasses.dataclass
class Address:
    street: str
    number: int = 0


@dataclasses.dataclass
class Person:
    name: str
    born: datetime.date
    address: Address
    previous: list[Address] = dataclasses.field(default_factory=list)
    partner: Optional[Address] = None
    scores: dict[str, Address] = dataclasses.field(default_factory=dict)


class AddressModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(from_attributes=True)
    street: str
    number: int = 0


class PersonModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(from_attributes=True)
    name: str
    born: datetime.date
    address: AddressModel
    previous: list[AddressModel] = []
    partner: Optional[AddressModel] = None
    scores: dict[str, AddressModel] = {}


class Row:
    """An ORM row: attributes set in __init__, one computed by a property."""

    def __init__(self, street: str, number: int) -> None:
        self.street = street
        self._number = number
        self.unrelated = object()

    @property
    def number(self) -> int:
        return self._number


class Slotted:
    __slots__ = ("street", "number")

    def __init__(self, street: str, number: int) -> None:
        self.street = street
        self.number = number


class Lookup:
    """Attributes answered by __getattr__."""

    def __getattr__(self, name: str) -> Any:
        if name == "street":
            return "dynamic"
        raise AttributeError(name)


BORN = datetime.date(1990, 5, 1)
INPUTS = [
    ns(name="a", born=BORN, address=ns(street="s", number=1)),
    ns(name="b", born=BORN, address=Row("r", 2), previous=[Row("x", 3), Slotted("y", 4)]),
    ns(name="c", born=BORN, address=Lookup(), partner=Slotted("p", 5), scores={"k": Row("z", 6)}),
    ns(name="d", born=BORN, address={"street": "dict", "number": 7}, previous=[{"street": "e"}]),
    Person("e", BORN, Address("copied", 8)),
]


@pytest.mark.parametrize("obj", INPUTS, ids=["namespace", "rows", "dynamic", "dicts", "instance"])
def test_values_as_msgspec_and_pydantic(obj: Any) -> None:
    ours = polycodec.from_builtins(obj, Person, from_attributes=True)
    assert ours == msgspec.convert(obj, Person, from_attributes=True)
    theirs = PersonModel.model_validate(obj, from_attributes=True)
    assert dataclasses.asdict(ours) == theirs.model_dump()
    # The codec method takes it too, and gives a new object, not the one given.
    again = polycodec.Codec(Person).from_builtins(obj, from_attributes=True)
    assert again == ours and again is not obj


@pytest.mark.parametrize(
    "obj, message, path",
    [
        (ns(name="a", born=BORN), "object missing required field `address`", "$"),
        (
            ns(name="a", born=BORN, address=ns(number=1)),
            "object missing required field `street`",
            "$.address",
        ),
        (
            ns(name="a", born=BORN, address=ns(street=5)),
            "expected str, got int",
            "$.address.street",
        ),
        (ns(name="a", born="1990-13-01", address=ns(street="s")), "invalid date", "$.born"),
        (
            ns(name="a", born=BORN, address=ns(street="s"), previous=[ns(street=[])]),
            "expected str, got array",
            "$.previous[0].street",
        ),
    ],
)
def test_refusals_as_msgspec_and_pydantic(obj: Any, message: str, path: str) -> None:
    with pytest.raises(polycodec.ValidationError, match=message) as info:
        polycodec.from_builtins(obj, Person, from_attributes=True)
    assert info.value.path == path
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(obj, Person, from_attributes=True)
    with pytest.raises(pydantic.ValidationError):
        PersonModel.model_validate(obj, from_attributes=True)


def test_without_the_option_objects_stay_refused() -> None:
    with pytest.raises(polycodec.ValidationError, match="expected object, got SimpleNamespace"):
        polycodec.from_builtins(INPUTS[0], Person)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert(INPUTS[0], Person)
    # Only records read attributes: a str, a number or a list stays what it is.
    with pytest.raises(polycodec.ValidationError, match="expected object, got str"):
        polycodec.from_builtins("street", Address, from_attributes=True)
    with pytest.raises(polycodec.ValidationError, match="expected array, got SimpleNamespace"):
        polycodec.from_builtins(ns(street="s"), list[Address], from_attributes=True)


def test_a_field_is_its_attribute_else_its_wire_name() -> None:
    @dataclasses.dataclass
    class Renamed:
        first_name: str
        age: int = 0

    codec = polycodec.Codec(Renamed, rename="camel")
    # The attribute of the field's own name, else of its wire name (msgspec reads both too).
    assert codec.from_builtins(ns(first_name="a"), from_attributes=True) == Renamed("a")
    assert codec.from_builtins(ns(firstName="b", age=3), from_attributes=True) == Renamed("b", 3)
    both = ns(first_name="own", firstName="wire")
    assert codec.from_builtins(both, from_attributes=True) == Renamed("own")


def test_attrs_targets_and_hooks() -> None:
    @attrs.define
    class Item:
        sku: str
        quantity: int = attrs.field(default=1, validator=attrs.validators.gt(0))

    assert polycodec.from_builtins(ns(sku="a"), Item, from_attributes=True) == Item("a")
    assert msgspec.convert(ns(sku="a"), Item, from_attributes=True) == Item("a")
    with pytest.raises(polycodec.ValidationError, match="'quantity' must be > 0: 0"):
        polycodec.from_builtins(ns(sku="a", quantity=0), Item, from_attributes=True)


@dataclasses.dataclass
class Cat:
    name: str
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    name: str
    good: bool = True
    kind: Literal["dog"] = "dog"


class CatModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(from_attributes=True)
    name: str
    kind: Literal["cat"] = "cat"


class DogModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(from_attributes=True)
    name: str
    good: bool = True
    kind: Literal["dog"] = "dog"


class Pets(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(from_attributes=True)
    pets: list[Annotated[Union[CatModel, DogModel], pydantic.Field(discriminator="kind")]]


def test_tagged_unions_read_the_tag_attribute_as_pydantic() -> None:
    rows = [ns(kind="cat", name="c"), ns(kind="dog", name="d", good=False)]
    ours = polycodec.from_builtins(rows, list[Union[Cat, Dog]], from_attributes=True)
    assert ours == [Cat("c"), Dog("d", good=False)]
    theirs = Pets.model_validate(ns(pets=rows), from_attributes=True)
    assert [dataclasses.asdict(p) for p in ours] == [p.model_dump() for p in theirs.pets]
    with pytest.raises(polycodec.ValidationError, match='invalid value "bird"') as info:
        polycodec.from_builtins([ns(kind="bird")], list[Union[Cat, Dog]], from_attributes=True)
    assert info.value.path == "$[0].kind"


def test_an_attribute_that_raises() -> None:
    class Broken:
        street = "s"

        @property
        def number(self) -> int:
            raise ValueError("no number here")

    # A TypeError, ValueError or AttributeError from user code is a ValidationError at the
    # field, with the original as its cause (msgspec lets the ValueError through as it is);
    # an AttributeError means the object has no such attribute.
    with pytest.raises(polycodec.ValidationError, match="no number here") as info:
        polycodec.from_builtins(Broken(), Address, from_attributes=True)
    assert info.value.path == "$.number"
    assert isinstance(info.value.__cause__, ValueError)

    class Stop(Exception):
        pass

    class Raises:
        @property
        def street(self) -> str:
            raise Stop()

    with pytest.raises(Stop):
        polycodec.from_builtins(Raises(), Address, from_attributes=True)


def test_every_attribute_is_read_once() -> None:
    reads: list[str] = []

    class Counted:
        def __getattr__(self, name: str) -> Any:
            reads.append(name)
            if name == "street":
                return 5  # the wrong type: the error path reads again in some decoders
            raise AttributeError(name)

    with pytest.raises(polycodec.ValidationError, match="expected str, got int"):
        polycodec.from_builtins(Counted(), Address, from_attributes=True)
    assert reads == ["street", "number"]


def test_attribute_values_are_python_values() -> None:
    # Attributes hold dates, UUIDs, Decimals... as objects: taken as themselves, unless
    # builtin_types says otherwise.
    row = ns(name="a", born=BORN, address=ns(street="s"))
    assert polycodec.from_builtins(row, Person, from_attributes=True).born == BORN
    with pytest.raises(polycodec.ValidationError, match="got a date object") as info:
        polycodec.from_builtins(row, Person, from_attributes=True, builtin_types=())
    assert info.value.path == "$.born"
    text = ns(name="a", born="1990-05-01", address=ns(street="s"))
    assert polycodec.from_builtins(text, Person, from_attributes=True).born == BORN
