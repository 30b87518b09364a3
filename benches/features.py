"""One small model per feature a real model leans on, each in three forms with the same values.

The per-feature benchmark (``python -m benches --features``, ``feature_bench.py``) and the
callgrind runner (``python -m benches.callgrind_features``) time these. Every feature is a family
of classes written three ways, as three kinds of users write them:

* ``slots``: ``@dataclass(slots=True)`` classes, with ``polycodec.options(...)`` where the
  feature is an option (the form polycodec's targets are set on);
* ``plain``: the same as plain ``@dataclass`` classes (with the same ``polycodec.options``);
* ``struct``: ``msgspec.Struct`` classes with msgspec's spelling of the same options
  (``omit_defaults``, ``array_like``, ``rename``, ``tag``/``tag_field``,
  ``forbid_unknown_fields``, ``msgspec.UNSET`` beside ``polycodec.UNSET``, ``msgspec.Meta``
  beside ``polycodec.Meta`` and annotated-types, ``msgspec.Raw`` beside ``polycodec.Raw``).

A feature that is itself a kind of class (attrs, ``TypedDict``, ``NamedTuple``) has that kind as
its ``slots`` form (``attrs.define`` is slotted; a TypedDict and a NamedTuple have one form only,
so their ``plain`` form is absent) and a Struct with the same fields as its ``struct`` form (an
``array_like`` one for the NamedTuple, which is an array on the wire).

The classes are made by :func:`_family` from one list of fields, so the three forms cannot drift
apart; they live in this module under their own names (``OmitDefaults``, ``OmitDefaultsSlots``,
``OmitDefaultsStruct``), so pickle finds them. Values are generated once, seeded, in the plain
form (:meth:`Feature.values`), and converted field by field into the others
(:meth:`Feature.convert`); a batch is :data:`BATCH` values per call, as issue 37 measured.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import (
    Annotated,
    Any,
    Callable,
    Literal,
    NamedTuple,
    NewType,
    Optional,
    TypedDict,
    Union,
)
from uuid import UUID

import attrs
import msgspec
from annotated_types import Ge, Le, MaxLen, MinLen

import polycodec
from polycodec import UNSET, Raw, UnsetType

__all__ = ["BATCH", "FORMS", "Feature", "FEATURES", "feature_values"]

#: Values per call: every cell encodes or decodes one batch (a JSON or MessagePack array, a
#: pickled list, an Avro array datum), as issue 37 measured.
BATCH = 50

#: The three class forms, in report order.
FORMS: tuple[str, ...] = ("slots", "plain", "struct")

Form = str  # one of FORMS


# --------------------------------------------------------------------------------------------
# Building the three forms of a family from one field list
# --------------------------------------------------------------------------------------------


class _Required:
    """No default: the field is required."""


REQUIRED = _Required()


class _Unset:
    """A field default that is ``polycodec.UNSET`` in the dataclasses, ``msgspec.UNSET`` in
    the Struct."""


UNSET_DEFAULT = _Unset()


@dataclass(frozen=True)
class _Factory:
    """A field default made by calling ``make`` (``default_factory``)."""

    make: Callable[[], Any]


@dataclass(frozen=True)
class _Field:
    name: str
    #: The annotation: one for every form, or a function of the form.
    type: Any
    default: Any = REQUIRED

    def annotation(self, form: Form) -> Any:
        if isinstance(self.type, _PerForm):
            return self.type.pick(form)
        return self.type


@dataclass(frozen=True)
class _PerForm:
    """An annotation that differs between the forms (a nested class, a constraint, UNSET)."""

    pick: Callable[[Form], Any]


def per_form(pick: Callable[[Form], Any]) -> _PerForm:
    return _PerForm(pick)


def _unset_of(t: Any) -> _PerForm:
    """``T | UnsetType`` in each form's own spelling."""
    return _PerForm(
        lambda form: Union[t, msgspec.UnsetType] if form == "struct" else Union[t, UnsetType]
    )


#: Option names shared by ``polycodec.options`` and msgspec's Struct class keywords.
_OPTIONS = ("rename", "omit_defaults", "forbid_unknown_fields", "array_like", "tag", "tag_field")


def _family(
    name: str,
    fields: list[_Field],
    *,
    options: Optional[dict[str, Any]] = None,
    frozen: bool = False,
    kw_only: bool = False,
    bases: Optional[dict[Form, type]] = None,
) -> dict[Form, type]:
    """The ``slots``, ``plain`` and ``struct`` classes of one model, registered in this module."""
    options = options or {}
    assert set(options) <= set(_OPTIONS), options
    made: dict[Form, type] = {}
    for form in FORMS:
        cls_name = name + {"slots": "Slots", "plain": "", "struct": "Struct"}[form]
        base = (bases[form],) if bases else ()
        if form == "struct":
            spec: list[Any] = []
            for f in fields:
                t = f.annotation(form)
                if f.default is REQUIRED:
                    spec.append((f.name, t))
                elif isinstance(f.default, _Factory):
                    spec.append((f.name, t, msgspec.field(default_factory=f.default.make)))
                elif f.default is UNSET_DEFAULT:
                    spec.append((f.name, t, msgspec.UNSET))
                else:
                    spec.append((f.name, t, f.default))
            cls: type = msgspec.defstruct(
                cls_name,
                spec,
                bases=base or None,
                module=__name__,
                frozen=frozen,
                kw_only=kw_only,
                **options,
            )
        else:
            dc_fields: list[Any] = []
            for f in fields:
                t = f.annotation(form)
                if f.default is REQUIRED:
                    dc_fields.append((f.name, t))
                elif isinstance(f.default, _Factory):
                    dc_fields.append((f.name, t, dataclasses.field(default_factory=f.default.make)))
                elif f.default is UNSET_DEFAULT:
                    dc_fields.append((f.name, t, dataclasses.field(default=UNSET)))
                else:
                    dc_fields.append((f.name, t, dataclasses.field(default=f.default)))
            cls = dataclasses.make_dataclass(
                cls_name,
                dc_fields,
                bases=base,
                namespace={"__module__": __name__, "__qualname__": cls_name},
                frozen=frozen,
                kw_only=kw_only,
                slots=form == "slots",
            )
            if options:
                cls = polycodec.options(**options)(cls)
        globals()[cls_name] = cls
        made[form] = cls
    return made


def _same(cls: type) -> dict[Form, type]:
    return {"slots": cls, "plain": cls, "struct": cls}


# --------------------------------------------------------------------------------------------
# Seeded value helpers
# --------------------------------------------------------------------------------------------

_WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()
_EPOCH = datetime(2020, 1, 1, tzinfo=timezone.utc)


def _word(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(_word(rng) for _ in range(rng.randint(lo, hi)))


def _float(rng: random.Random) -> float:
    return round(rng.uniform(0, 1000), 3)


def _dt(rng: random.Random) -> datetime:
    return _EPOCH + timedelta(
        seconds=rng.randint(0, 4 * 365 * 86400), microseconds=rng.randint(0, 999_999)
    )


def _uuid(rng: random.Random) -> UUID:
    return UUID(int=rng.getrandbits(128), version=4)


def _money(rng: random.Random, hi: int) -> Decimal:
    return Decimal(rng.randint(0, hi * 100)).scaleb(-2)


def _json_value(rng: random.Random, depth: int) -> Any:
    """A JSON value of nested dicts and lists, as an untyped payload holds."""
    kind = rng.random()
    if depth <= 0 or kind < 0.45:
        return rng.choice(
            [
                rng.randint(-1000, 100_000),
                _float(rng),
                _words(rng, 1, 3),
                rng.random() < 0.5,
                None,
            ]
        )
    if kind < 0.75:
        return {f"{_word(rng)}_{k}": _json_value(rng, depth - 1) for k in range(rng.randint(1, 4))}
    return [_json_value(rng, depth - 1) for _ in range(rng.randint(1, 4))]


# --------------------------------------------------------------------------------------------
# The features
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Feature:
    """One feature's model: its root type in each form, and how to make a value of it."""

    name: str
    title: str
    #: The root type (the type of one value) per form; ``plain`` absent where the feature has
    #: one class form only (TypedDict, NamedTuple).
    roots: dict[Form, Any]
    #: Every class of the family per form (plain class -> that form's class), for conversion.
    classes: dict[Form, dict[type, type]]
    #: One value, in the plain form (the ``slots`` form where there is no plain one).
    make: Callable[[random.Random, int], Any]
    #: Cell groups this feature has no meaning in, with the reason (shown in the report).
    skip: dict[str, str] = dataclasses.field(default_factory=dict)
    note: str = ""
    #: A value in the given wire format's own terms, where the value holds encoded bytes
    #: (``Raw``): applied to each generated plain value before conversion.
    for_format: Optional[Callable[[Any, str], Any]] = None
    #: One value into the Struct form and back, where the feature's values are no dataclasses
    #: (a TypedDict's dicts, a NamedTuple's tuples).
    struct_twin: Optional[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = None

    @property
    def forms(self) -> tuple[Form, ...]:
        return tuple(f for f in FORMS if f in self.roots)

    def values(self, n: int = BATCH, seed: int = 20240601, fmt: str = "json") -> list[Any]:
        """``n`` deterministic values in the plain form (value ``i`` depends on seed and i)."""
        out = [self.make(random.Random(seed * 1_000_003 + i), i) for i in range(n)]
        if self.for_format is not None:
            out = [self.for_format(v, fmt) for v in out]
        return out

    def convert(self, values: list[Any], form: Form) -> list[Any]:
        """``values`` (plain form) rebuilt field by field in ``form``'s classes."""
        if form == "struct" and self.struct_twin is not None:
            return [self.struct_twin[0](v) for v in values]
        conv = _converter(self.classes[form], to_struct=form == "struct")
        return [conv(v) for v in values]

    def back(self, values: list[Any], form: Form) -> list[Any]:
        """``values`` of ``form`` rebuilt in the plain form (to check a form holds the data)."""
        if form == "struct" and self.struct_twin is not None:
            return [self.struct_twin[1](v) for v in values]
        inverse = {dst: src for src, dst in self.classes[form].items()}
        conv = _converter(inverse, from_struct=form == "struct")
        return [conv(v) for v in values]


def _field_names(cls: type) -> tuple[str, ...]:
    if dataclasses.is_dataclass(cls):
        return tuple(f.name for f in dataclasses.fields(cls) if f.init)
    struct_fields = getattr(cls, "__struct_fields__", None)
    if struct_fields is not None:
        return tuple(struct_fields)
    if attrs.has(cls):
        return tuple(a.name for a in attrs.fields(cls) if a.init)
    raise TypeError(f"not a model class: {cls!r}")


def _converter(
    mapping: dict[type, type], to_struct: bool = False, from_struct: bool = False
) -> Callable[[Any], Any]:
    """Rebuild a value with ``mapping[type(obj)]`` for every model object, fields by name.

    Lists, dicts and plain tuples are rebuilt around their converted items; sets, NamedTuples,
    TypedDict values' scalars and everything immutable are shared. ``UNSET`` and ``Raw`` become
    msgspec's (``to_struct``) or polycodec's (``from_struct``).
    """
    names = {src: (dst, _field_names(dst)) for src, dst in mapping.items() if src is not dst}

    def convert(value: Any) -> Any:
        t = type(value)
        entry = names.get(t)
        if entry is not None:
            dst, fields = entry
            return dst(**{n: convert(getattr(value, n)) for n in fields})
        if t is list:
            return [convert(v) for v in value]
        if t is dict:
            return {k: convert(v) for k, v in value.items()}
        if t is tuple:
            return tuple(convert(v) for v in value)
        if to_struct:
            if value is UNSET:
                return msgspec.UNSET
            if t is Raw:
                return msgspec.Raw(bytes(value))
        if from_struct:
            if value is msgspec.UNSET:
                return UNSET
            if t is msgspec.Raw:
                return Raw(bytes(value))
        return value

    return convert


FEATURES: dict[str, Feature] = {}


def _add(feature: Feature) -> None:
    assert feature.name not in FEATURES, feature.name
    FEATURES[feature.name] = feature


def _classes(*families: dict[Form, type]) -> dict[Form, dict[type, type]]:
    return {form: {fam["plain"]: fam[form] for fam in families} for form in FORMS}


def _simple(
    name: str,
    title: str,
    family: dict[Form, type],
    make: Callable[[random.Random, int, type], Any],
    *others: dict[Form, type],
    skip: Optional[dict[str, str]] = None,
    note: str = "",
) -> None:
    """A feature whose root is ``family``'s class; ``make(rng, i, plain_class)``."""
    plain = family["plain"]
    _add(
        Feature(
            name,
            title,
            dict(family),
            _classes(family, *others),
            lambda rng, i: make(rng, i, plain),
            skip=skip or {},
            note=note,
        )
    )


# ---- omit_defaults: half the fields at their default -------------------------------------

_OMIT_DEFAULTS: dict[str, Any] = {
    "note": None,
    "active": True,
    "count": 0,
    "level": "info",
    "ratio": 1.0,
    "parent": None,
    "retries": 3,
}
OMIT = _family(
    "OmitDefaults",
    [
        _Field("id", int),
        _Field("name", str),
        _Field("note", Optional[str], None),
        _Field("active", bool, True),
        _Field("count", int, 0),
        _Field("level", str, "info"),
        _Field("ratio", float, 1.0),
        _Field("parent", Optional[int], None),
        _Field("retries", int, 3),
        _Field("tags", list[str], _Factory(list)),
    ],
    options={"omit_defaults": True},
)


def _make_omit(rng: random.Random, i: int, cls: type) -> Any:
    # Five of the ten fields at their default: the value is then the default's own object
    # (msgspec leaves out only that, polycodec copies of it too), the others differ from it.
    at_default = set(rng.sample(sorted(_OMIT_DEFAULTS) + ["tags"], 5))
    given = {
        "note": _words(rng, 1, 4),
        "active": False,
        "count": rng.randint(1, 10_000),
        "level": rng.choice(["debug", "warning", "error"]),
        "ratio": _float(rng) + 2.0,
        "parent": rng.randint(1, 10**6),
        "retries": rng.randint(4, 9),
        "tags": [_word(rng) for _ in range(rng.randint(1, 3))],
    }
    kwargs = {k: v for k, v in given.items() if k not in at_default}
    return cls(id=i, name=_words(rng, 1, 2), **kwargs)


_simple("omit_defaults", "`omit_defaults` (half the fields at their default)", OMIT, _make_omit)

# ---- UNSET fields ---------------------------------------------------------------------------

UNSETS = _family(
    "UnsetFields",
    [
        _Field("id", int),
        _Field("name", _unset_of(str), UNSET_DEFAULT),
        _Field("email", _unset_of(str), UNSET_DEFAULT),
        _Field("age", _unset_of(int), UNSET_DEFAULT),
        _Field("score", _unset_of(float), UNSET_DEFAULT),
        _Field("tags", _unset_of(list[str]), UNSET_DEFAULT),
        _Field("active", _unset_of(bool), UNSET_DEFAULT),
    ],
)


def _make_unset(rng: random.Random, i: int, cls: type) -> Any:
    given = {
        "name": _words(rng, 1, 2),
        "email": f"{_word(rng)}{i}@example.com",
        "age": rng.randint(18, 90),
        "score": _float(rng),
        "tags": [_word(rng) for _ in range(rng.randint(0, 3))],
        "active": rng.random() < 0.5,
    }
    kept = rng.sample(sorted(given), 3)
    return cls(id=i, **{k: given[k] for k in kept})


_simple("unset", "`UNSET` fields", UNSETS, _make_unset)

# ---- array_like ---------------------------------------------------------------------------

ARRAY = _family(
    "ArrayLike",
    [
        _Field("id", int),
        _Field("name", str),
        _Field("score", float),
        _Field("active", bool),
        _Field("note", Optional[str]),
        _Field("values", list[int]),
    ],
    options={"array_like": True},
)


def _make_array(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        i,
        _words(rng, 1, 2),
        _float(rng),
        rng.random() < 0.5,
        None if rng.random() < 0.4 else _words(rng, 1, 3),
        [rng.randint(0, 10_000) for _ in range(rng.randint(0, 5))],
    )


_simple("array_like", "`array_like`", ARRAY, _make_array)

# ---- Any payload -----------------------------------------------------------------------------

ANY = _family("AnyPayload", [_Field("id", int), _Field("kind", str), _Field("payload", Any)])


def _make_any(rng: random.Random, i: int, cls: type) -> Any:
    payload = {
        "user": {
            "id": rng.randint(1, 10**6),
            "name": _words(rng, 1, 2),
            "roles": [_word(rng) for _ in range(rng.randint(1, 3))],
        },
        "items": [
            {
                "sku": f"{_word(rng)}-{rng.randint(1, 999)}",
                "qty": rng.randint(1, 9),
                "price": _float(rng),
            }
            for _ in range(rng.randint(1, 3))
        ],
        "flags": {"beta": rng.random() < 0.5, "internal": rng.random() < 0.1},
        "extra": _json_value(rng, 2),
        "note": None,
    }
    return cls(i, _word(rng), payload)


_simple(
    "any_payload",
    "`Any` payload (nested dicts and lists)",
    ANY,
    _make_any,
    skip={"avro": "Avro has no schema for an untyped value"},
)

# ---- dict[str, Any] ---------------------------------------------------------------------------

DICT_ANY = _family("DictAny", [_Field("id", int), _Field("attrs", dict[str, Any])])


def _make_dict_any(rng: random.Random, i: int, cls: type) -> Any:
    attrs_ = {
        "source": _word(rng),
        "count": rng.randint(0, 1000),
        "ratio": _float(rng),
        "enabled": rng.random() < 0.5,
        "missing": None,
        "labels": [_word(rng) for _ in range(rng.randint(0, 3))],
        "origin": {"host": f"{_word(rng)}.example.com", "port": rng.randint(1, 65535)},
        "comment": _words(rng, 2, 6),
    }
    return cls(i, attrs_)


_simple(
    "dict_any",
    "`dict[str, Any]`",
    DICT_ANY,
    _make_dict_any,
    skip={"avro": "Avro has no schema for an untyped value"},
)

# ---- dict[str, int] ---------------------------------------------------------------------------

DICT_INT = _family("DictInt", [_Field("id", int), _Field("counts", dict[str, int])])


def _make_dict_int(rng: random.Random, i: int, cls: type) -> Any:
    keys = rng.sample(_WORDS, 10)
    return cls(i, {k: rng.randint(0, 100_000) for k in keys})


_simple("dict_int", "`dict[str, int]`", DICT_INT, _make_dict_int)

# ---- list[int], list[str] -------------------------------------------------------------------

LISTS = _family("Lists", [_Field("ids", list[int]), _Field("names", list[str])])


def _make_lists(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        [rng.randint(0, 10**9) for _ in range(10)],
        [_word(rng) for _ in range(8)],
    )


_simple("lists", "`list[int]`, `list[str]`", LISTS, _make_lists)

# ---- Optional nested records ------------------------------------------------------------------

ADDRESS = _family(
    "Address",
    [_Field("street", str), _Field("city", str), _Field("zip", str), _Field("country", str)],
)
OPTIONAL_NESTED = _family(
    "OptionalNested",
    [
        _Field("id", int),
        _Field("home", per_form(lambda form: Optional[ADDRESS[form]])),
        _Field("work", per_form(lambda form: Optional[ADDRESS[form]])),
        _Field("billing", per_form(lambda form: Optional[ADDRESS[form]])),
    ],
)


def _address(rng: random.Random, cls: type) -> Any:
    return cls(
        f"{rng.randint(1, 999)} {_word(rng).capitalize()} Street",
        _word(rng).capitalize(),
        f"{rng.randint(10000, 99999)}",
        rng.choice(["DE", "FR", "US", "JP"]),
    )


def _make_optional_nested(rng: random.Random, i: int, cls: type) -> Any:
    addr = ADDRESS["plain"]
    return cls(
        i,
        _address(rng, addr),
        None if rng.random() < 0.5 else _address(rng, addr),
        None if rng.random() < 0.5 else _address(rng, addr),
    )


_simple(
    "optional_nested", "`Optional` nested records", OPTIONAL_NESTED, _make_optional_nested, ADDRESS
)

# ---- aware datetime, date, time, timedelta --------------------------------------------------

TIMES = _family(
    "Times",
    [
        _Field("created", datetime),
        _Field("updated", datetime),
        _Field("day", date),
        _Field("at", time),
        _Field("duration", timedelta),
    ],
)


def _make_times(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        _dt(rng),
        _dt(rng),
        date(2000, 1, 1) + timedelta(days=rng.randint(0, 9000)),
        time(rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.randint(0, 999_999)),
        timedelta(seconds=rng.randint(0, 10**6), microseconds=rng.randint(0, 999_999)),
    )


_simple(
    "datetimes",
    "aware `datetime`, `date`, `time`, `timedelta`",
    TIMES,
    _make_times,
    note="the datetimes are aware (UTC), the time naive (Avro's time-micros has no zone)",
)

# ---- rename="camel" -------------------------------------------------------------------------

CAMEL = _family(
    "RenameCamel",
    [
        _Field("user_id", int),
        _Field("first_name", str),
        _Field("last_name", str),
        _Field("email_address", str),
        _Field("is_active", bool),
        _Field("created_at_ms", int),
        _Field("account_balance", float),
    ],
    options={"rename": "camel"},
)


def _make_camel(rng: random.Random, i: int, cls: type) -> Any:
    first, last = _word(rng).capitalize(), _word(rng).capitalize()
    return cls(
        i,
        first,
        last,
        f"{first}.{last}@example.com".lower(),
        rng.random() < 0.8,
        rng.randint(1_500_000_000_000, 1_800_000_000_000),
        _float(rng),
    )


_simple("rename_camel", '`rename="camel"`', CAMEL, _make_camel)

# ---- tagged union (tag_field / tag) --------------------------------------------------------

CREATED = _family(
    "Created",
    [_Field("item_id", int), _Field("name", str), _Field("price", float)],
    options={"tag": "created", "tag_field": "kind"},
)
UPDATED = _family(
    "Updated",
    [_Field("item_id", int), _Field("changes", dict[str, str])],
    options={"tag": "updated", "tag_field": "kind"},
)
DELETED = _family(
    "Deleted",
    [_Field("item_id", int), _Field("soft", bool, False)],
    options={"tag": "deleted", "tag_field": "kind"},
)


def _make_event(rng: random.Random, i: int) -> Any:
    which = i % 3
    if which == 0:
        return CREATED["plain"](i, _words(rng, 1, 3), _float(rng))
    if which == 1:
        return UPDATED["plain"](i, {_word(rng): _words(rng, 1, 2) for _ in range(2)})
    return DELETED["plain"](i, rng.random() < 0.5)


_add(
    Feature(
        "tagged_union",
        "tagged union (`tag_field`/`tag`)",
        {
            form: Union[CREATED[form], UPDATED[form], DELETED[form]]  # type: ignore[valid-type]
            for form in FORMS
        },
        _classes(CREATED, UPDATED, DELETED),
        _make_event,
    )
)

# ---- five scalars, no options ------------------------------------------------------------------

SCALARS = _family(
    "Scalars",
    [
        _Field("id", int),
        _Field("name", str),
        _Field("score", float),
        _Field("active", bool),
        _Field("count", int),
    ],
)


def _make_scalars(rng: random.Random, i: int, cls: type) -> Any:
    return cls(i, _words(rng, 1, 2), _float(rng), rng.random() < 0.5, rng.randint(0, 10**6))


_simple("scalars", "five scalars, no options", SCALARS, _make_scalars)

# ---- Decimal -------------------------------------------------------------------------------------

DECIMALS = _family(
    "Decimals",
    [_Field("price", Decimal), _Field("tax", Decimal), _Field("total", Decimal)],
)


def _make_decimals(rng: random.Random, i: int, cls: type) -> Any:
    price = _money(rng, 10_000)
    tax = (price * Decimal("0.19")).quantize(Decimal("0.01"))
    return cls(price, tax, price + tax)


_simple(
    "decimal",
    "`Decimal`",
    DECIMALS,
    _make_decimals,
    skip={
        "avro": "a Decimal without precision and scale is an Avro string in polycodec, where "
        "fastavro users write the decimal logical type: see `decimal_meta`"
    },
)

_Money = Annotated[Decimal, polycodec.Meta(max_digits=12, decimal_places=2)]
DECIMALS_META = _family(
    "DecimalsMeta",
    [
        _Field("price", per_form(lambda form: Decimal if form == "struct" else _Money)),
        _Field("tax", per_form(lambda form: Decimal if form == "struct" else _Money)),
        _Field("total", per_form(lambda form: Decimal if form == "struct" else _Money)),
    ],
)
_simple(
    "decimal_meta",
    "`Decimal` with `Meta(max_digits, decimal_places)`",
    DECIMALS_META,
    _make_decimals,
    note="Avro: the decimal logical type (bytes, precision 12, scale 2) on both sides; msgspec "
    "has no digit constraints, so its Struct has plain Decimal fields (polycodec checks them)",
)

# ---- UUID ------------------------------------------------------------------------------------------

UUIDS = _family(
    "Uuids",
    [_Field("id", UUID), _Field("owner", UUID), _Field("parent", Optional[UUID])],
)


def _make_uuids(rng: random.Random, i: int, cls: type) -> Any:
    return cls(_uuid(rng), _uuid(rng), None if rng.random() < 0.3 else _uuid(rng))


_simple("uuid", "`UUID`", UUIDS, _make_uuids)

# ---- rename (a mapping) -------------------------------------------------------------------------

RENAME_MAP = _family(
    "RenameMap",
    [
        _Field("user_id", int),
        _Field("display_name", str),
        _Field("email", str),
        _Field("score", float),
        _Field("verified", bool),
    ],
    options={"rename": {"user_id": "uid", "display_name": "displayName", "verified": "isVerified"}},
)


def _make_rename_map(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        i, _words(rng, 1, 2), f"{_word(rng)}{i}@example.com", _float(rng), rng.random() < 0.5
    )


_simple("rename_map", "`rename` (a mapping)", RENAME_MAP, _make_rename_map)

# ---- forbid_unknown_fields ----------------------------------------------------------------------

FORBID = _family(
    "ForbidUnknown",
    [
        _Field("id", int),
        _Field("name", str),
        _Field("score", float),
        _Field("active", bool),
        _Field("note", Optional[str]),
    ],
    options={"forbid_unknown_fields": True},
)


def _make_forbid(rng: random.Random, i: int, cls: type) -> Any:
    return cls(i, _words(rng, 1, 2), _float(rng), rng.random() < 0.5, None if i % 2 else _word(rng))


_simple("forbid_unknown_fields", "`forbid_unknown_fields`", FORBID, _make_forbid)

# ---- Literal and enums --------------------------------------------------------------------------


class Color(enum.Enum):
    """A str-valued enum."""

    RED = "red"
    GREEN = "green"
    BLUE = "blue"
    BLACK = "black"


class Level(enum.IntEnum):
    """An int enum."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3


LITERALS = _family(
    "LiteralsEnums",
    [
        _Field("color", Color),
        _Field("level", Level),
        _Field("kind", Literal["order", "refund", "payout"]),
        _Field("code", Literal[200, 404, 500]),
        _Field("channel", Literal["web", "mobile"]),
    ],
)


def _make_literals(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        rng.choice(list(Color)),
        rng.choice(list(Level)),
        rng.choice(["order", "refund", "payout"]),
        rng.choice([200, 404, 500]),
        rng.choice(["web", "mobile"]),
    )


_simple("literal_enum", "`Literal` and enums", LITERALS, _make_literals)

# ---- bytes ----------------------------------------------------------------------------------------

BLOBS = _family("Blob", [_Field("id", int), _Field("data", bytes), _Field("digest", bytes)])


def _make_blob(rng: random.Random, i: int, cls: type) -> Any:
    return cls(i, rng.randbytes(48), rng.randbytes(16))


_simple("bytes", "`bytes`", BLOBS, _make_blob)

# ---- constraints (Meta, annotated-types) ----------------------------------------------------------


def _constrained(poly: Any, struct: Any) -> _PerForm:
    return per_form(lambda form: struct if form == "struct" else poly)


CONSTRAINED = _family(
    "Constrained",
    [
        _Field(
            "age",
            _constrained(
                Annotated[int, polycodec.Meta(ge=0, le=150)],
                Annotated[int, msgspec.Meta(ge=0, le=150)],
            ),
        ),
        _Field(
            "name",
            _constrained(
                Annotated[str, MinLen(1), MaxLen(40)],
                Annotated[str, msgspec.Meta(min_length=1, max_length=40)],
            ),
        ),
        _Field(
            "score",
            _constrained(
                Annotated[float, Ge(0), Le(1000)],
                Annotated[float, msgspec.Meta(ge=0, le=1000)],
            ),
        ),
        _Field(
            "tags",
            _constrained(
                Annotated[list[str], polycodec.Meta(max_length=8)],
                Annotated[list[str], msgspec.Meta(max_length=8)],
            ),
        ),
        _Field(
            "code",
            _constrained(
                Annotated[str, polycodec.Meta(pattern=r"^[A-Z]{3}-[0-9]{4}$")],
                Annotated[str, msgspec.Meta(pattern=r"^[A-Z]{3}-[0-9]{4}$")],
            ),
        ),
    ],
)


def _make_constrained(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        rng.randint(0, 150),
        _words(rng, 1, 3),
        _float(rng),
        [_word(rng) for _ in range(rng.randint(0, 8))],
        f"{_word(rng)[:3].upper():X<3}-{rng.randint(0, 9999):04d}",
    )


_simple(
    "constraints",
    "constraints (`Meta`, annotated-types)",
    CONSTRAINED,
    _make_constrained,
    note="polycodec: Meta(ge, le, max_length, pattern) and annotated-types MinLen, MaxLen, Ge, "
    "Le; msgspec: msgspec.Meta with the same bounds",
)

# ---- frozen, kw_only ---------------------------------------------------------------------------

FROZEN = _family(
    "FrozenKwOnly",
    [
        _Field("id", int),
        _Field("label", str, ""),
        _Field("value", float),
        _Field("active", bool, True),
        _Field("owner", str),
    ],
    frozen=True,
    kw_only=True,
)


def _make_frozen(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        id=i,
        label=_words(rng, 1, 2),
        value=_float(rng),
        active=rng.random() < 0.7,
        owner=_word(rng),
    )


_simple("frozen_kw_only", "`frozen`, `kw_only`", FROZEN, _make_frozen)

# ---- inheritance ------------------------------------------------------------------------------------

BASE = _family("BaseEntity", [_Field("id", int), _Field("created", datetime)])
MIDDLE = _family("NamedEntity", [_Field("name", str)], bases=BASE)
DERIVED = _family("ScoredEntity", [_Field("score", float), _Field("active", bool)], bases=MIDDLE)


def _make_derived(rng: random.Random, i: int, cls: type) -> Any:
    return cls(i, _dt(rng), _words(rng, 1, 2), _float(rng), rng.random() < 0.5)


_simple("inheritance", "inheritance (three levels)", DERIVED, _make_derived)

# ---- attrs classes ------------------------------------------------------------------------------


@attrs.define
class AttrsItem:
    """An attrs class (slotted: the ``attrs.define`` default)."""

    id: int
    name: str
    score: float
    active: bool
    tags: list[str] = attrs.Factory(list)


@attrs.define(slots=False)
class AttrsItemDict:
    """The same attrs class with a ``__dict__``."""

    id: int
    name: str
    score: float
    active: bool
    tags: list[str] = attrs.Factory(list)


class AttrsItemStruct(msgspec.Struct):
    """The Struct twin."""

    id: int
    name: str
    score: float
    active: bool
    tags: list[str] = msgspec.field(default_factory=list)


def _make_attrs(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        i, _words(rng, 1, 2), _float(rng), rng.random() < 0.5, [_word(rng) for _ in range(2)]
    )


_ATTRS = {"slots": AttrsItem, "plain": AttrsItemDict, "struct": AttrsItemStruct}
_simple(
    "attrs",
    "attrs classes",
    _ATTRS,
    _make_attrs,
    note="slots: `attrs.define` (slotted); plain: `attrs.define(slots=False)`; msgspec: a Struct",
)

# ---- TypedDict -------------------------------------------------------------------------------------


class Person(TypedDict):
    """A TypedDict (one class form: the dict)."""

    id: int
    name: str
    email: str
    score: float
    tags: list[str]


class PersonStruct(msgspec.Struct):
    """The Struct twin."""

    id: int
    name: str
    email: str
    score: float
    tags: list[str]


def _make_person(rng: random.Random, i: int) -> Any:
    return Person(
        id=i,
        name=_words(rng, 1, 2),
        email=f"{_word(rng)}{i}@example.com",
        score=_float(rng),
        tags=[_word(rng) for _ in range(rng.randint(0, 3))],
    )


_add(
    Feature(
        "typeddict",
        "`TypedDict`",
        {"slots": Person, "struct": PersonStruct},
        {"slots": {}, "plain": {}, "struct": {}},
        _make_person,
        struct_twin=(
            lambda p: PersonStruct(**p),
            lambda s: Person(**{f: getattr(s, f) for f in PersonStruct.__struct_fields__}),
        ),
        note="one class form (a dict): the slots column; msgspec: a Struct with the same fields",
    )
)

# ---- NamedTuple -------------------------------------------------------------------------------------


class Point(NamedTuple):
    """A NamedTuple (one class form; an array on the wire)."""

    x: float
    y: float
    z: float
    label: str


class PointStruct(msgspec.Struct, array_like=True):
    """The Struct twin: array_like, as a NamedTuple is an array on the wire."""

    x: float
    y: float
    z: float
    label: str


def _make_point(rng: random.Random, i: int) -> Any:
    return Point(_float(rng), _float(rng), _float(rng), _word(rng))


_add(
    Feature(
        "namedtuple",
        "`NamedTuple`",
        {"slots": Point, "struct": PointStruct},
        {"slots": {}, "plain": {}, "struct": {}},
        _make_point,
        struct_twin=(lambda p: PointStruct(*p), lambda s: Point(*msgspec.structs.astuple(s))),
        note="one class form: the slots column; msgspec: an array_like Struct",
    )
)

# ---- NewType ---------------------------------------------------------------------------------------

UserId = NewType("UserId", int)
Email = NewType("Email", str)
NEWTYPES = _family(
    "NewTypes",
    [
        _Field("id", UserId),
        _Field("email", Email),
        _Field("manager", Optional[UserId]),
        _Field("reports", list[UserId]),
    ],
)


def _make_newtypes(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        UserId(i),
        Email(f"{_word(rng)}{i}@example.com"),
        None if rng.random() < 0.3 else UserId(rng.randint(1, 10**6)),
        [UserId(rng.randint(1, 10**6)) for _ in range(rng.randint(0, 4))],
    )


_simple("newtype", "`NewType`", NEWTYPES, _make_newtypes)

# ---- Raw -------------------------------------------------------------------------------------------

RAWS = _family(
    "Envelope",
    [
        _Field("topic", str),
        _Field("key", str),
        _Field("payload", per_form(lambda form: msgspec.Raw if form == "struct" else Raw)),
    ],
)


def _make_envelope(rng: random.Random, i: int, cls: type) -> Any:
    body = {"id": i, "items": [rng.randint(0, 100) for _ in range(4)], "by": _word(rng)}
    return cls(_word(rng), f"k{i}", Raw(msgspec.json.encode(body)))


def _raw_for_format(value: Any, fmt: str) -> Any:
    """A ``Raw`` holds bytes of its own format: MessagePack bytes for a MessagePack codec."""
    if fmt != "msgpack":
        return value
    body = msgspec.json.decode(bytes(value.payload))
    return dataclasses.replace(value, payload=Raw(msgspec.msgpack.encode(body)))


_add(
    Feature(
        "raw",
        "`Raw`",
        dict(RAWS),
        _classes(RAWS),
        lambda rng, i: _make_envelope(rng, i, RAWS["plain"]),
        skip={
            "builtins": "to_builtins refuses a Raw (it holds encoded bytes)",
            "avro": "Avro refuses Raw (a value cannot be cut out without its schema)",
            "pickle": "pickle refuses Raw (its values share the pickle's memo)",
        },
        for_format=_raw_for_format,
    )
)

# ---- sets and tuples -----------------------------------------------------------------------------

SETS = _family(
    "SetsTuples",
    [
        _Field("tags", set[str]),
        _Field("ids", frozenset[int]),
        _Field("pair", tuple[int, int]),
        _Field("coords", tuple[float, ...]),
    ],
)


def _make_sets(rng: random.Random, i: int, cls: type) -> Any:
    return cls(
        set(rng.sample(_WORDS, 4)),
        frozenset(rng.randint(0, 10**6) for _ in range(5)),
        (rng.randint(0, 1000), rng.randint(0, 1000)),
        tuple(_float(rng) for _ in range(rng.randint(1, 4))),
    )


_simple("sets_tuples", "sets and tuples", SETS, _make_sets)

# ---- deep nesting -------------------------------------------------------------------------------

#: Levels of the chain below the root.
DEPTH = 8
_LEVEL_FIELDS = [_Field("name", str), _Field("depth", int), _Field("weight", float)]


def _level(depth: int, inner: dict[Form, type]) -> dict[Form, type]:
    child = per_form(lambda form: Optional[inner[form]])
    return _family(f"Level{depth}", _LEVEL_FIELDS + [_Field("child", child)])


#: The chain's families, innermost (``Level8``, no child) first.
LEVELS: list[dict[Form, type]] = [_family(f"Level{DEPTH}", _LEVEL_FIELDS)]
for _depth in range(DEPTH - 1, -1, -1):
    LEVELS.append(_level(_depth, LEVELS[-1]))
del _depth


def _make_deep(rng: random.Random, i: int) -> Any:
    levels = [fam["plain"] for fam in reversed(LEVELS)]  # root (Level0) first
    node = levels[-1](_word(rng), DEPTH, _float(rng))
    for depth in range(DEPTH - 1, -1, -1):
        node = levels[depth](_word(rng), depth, _float(rng), node)
    return node


_add(
    Feature(
        "deep_nesting",
        f"deep nesting ({DEPTH + 1} levels)",
        {form: LEVELS[-1][form] for form in FORMS},
        _classes(*LEVELS),
        _make_deep,
    )
)


def feature_values(name: str, form: Form, n: int = BATCH, fmt: str = "json") -> list[Any]:
    """``n`` values of feature ``name`` in ``form``'s classes (the same data in every form)."""
    feature = FEATURES[name]
    values = feature.values(n, fmt=fmt)
    return values if form == "plain" else feature.convert(values, form)
