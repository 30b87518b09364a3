"""A second ``Codec`` of the same type, format and options shares the compiled plan of the first
(issue 28, item 12; ``polycodec._cache``): it compiles nothing, behaves the same, keeps no class
alive that nothing else uses, and notices a class redefined in its module. The speed is measured
in benches/ (see docs/api.md), not here."""

from __future__ import annotations

import dataclasses
import gc
import io
import sys
import types
import weakref
from typing import Any, Iterator, List, Optional, Union

import pytest

import polycodec
import polycodec._plan
from polycodec import _cache

FORMATS = ("json", "msgpack", "avro", "pickle")


@dataclasses.dataclass
class Item:
    name: str
    qty: int = 1


@dataclasses.dataclass
class Order:
    id: int
    items: List[Item]
    note: Optional[str] = None


ORDER = Order(7, [Item("a"), Item("b", 3)], "x")


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    """The types ``compile_spec`` is called for from now on (the codec looks it up each time)."""
    seen: List[Any] = []
    real = polycodec._plan.compile_spec

    def counting(tp: Any, **options: Any) -> Any:
        seen.append(tp)
        return real(tp, **options)

    monkeypatch.setattr(polycodec._plan, "compile_spec", counting)
    return seen


@pytest.mark.parametrize("fmt", FORMATS)
def test_second_codec_compiles_nothing_and_behaves_the_same(fmt: str, compiles: List[Any]) -> None:
    @dataclasses.dataclass
    class Local:
        id: int
        items: List[Item]

    first = polycodec.Codec(Local, fmt)
    assert compiles == [Local]
    second = polycodec.Codec(Local, fmt)
    assert compiles == [Local]
    assert second is not first and second.type is Local and second.format == fmt
    value = Local(1, [Item("a", 2)])
    if fmt != "avro":  # an Avro container file carries a random sync marker per file
        assert second.encode_many([value]) == first.encode_many([value])
    assert second.encode_one(value) == first.encode_one(value)
    assert second.decode_one(first.encode_one(value)) == value
    assert second.decode_many(first.encode_many([value, value])) == [value, value]
    assert repr(second) == repr(first)


def test_other_options_or_formats_compile_again(compiles: List[Any]) -> None:
    @dataclasses.dataclass
    class Local:
        user_id: int
        extra: int = 0

    polycodec.Codec(Local, "json")
    polycodec.Codec(Local, "msgpack")
    camel = polycodec.Codec(Local, "json", rename="camel")
    omitting = polycodec.Codec(Local, "json", omit_defaults=True)
    assert len(compiles) == 4
    assert camel.encode_one(Local(1)) == b'{"userId":1,"extra":0}'
    assert omitting.encode_one(Local(1)) == b'{"user_id":1}'
    # Equal option values share; ``strict`` and format options are part of the key too.
    polycodec.Codec(Local, "json", rename={"user_id": "u"})
    polycodec.Codec(Local, "json", rename={"user_id": "u"})
    assert len(compiles) == 5
    lax = polycodec.Codec(Local, "json", strict=False)
    assert lax.decode_one(b'{"user_id":"1"}') == Local(1)
    with pytest.raises(polycodec.ValidationError):
        polycodec.Codec(Local, "json").decode_one(b'{"user_id":"1"}')
    polycodec.Codec(Local, "avro", framing="single-object")
    polycodec.Codec(Local, "avro")
    assert len(compiles) == 8


def test_callable_options_are_told_apart_by_identity(compiles: List[Any]) -> None:
    @dataclasses.dataclass
    class Local:
        a: int

    upper = polycodec.Codec(Local, "json", rename=lambda name: name.upper())
    suffixed = polycodec.Codec(Local, "json", rename=lambda name: name + "_")
    assert upper.encode_one(Local(1)) == b'{"A":1}'
    assert suffixed.encode_one(Local(1)) == b'{"a_":1}'
    assert len(compiles) == 2


def test_type_forms_that_are_no_class_share_by_structure(compiles: List[Any]) -> None:
    polycodec.Codec(List[Item], "json")
    polycodec.Codec(List[Item], "json")
    assert len(compiles) == 1
    # Union order matters to Avro's branches, so int | str and str | int are different plans.
    assert polycodec.Codec(Union[int, str], "avro").schema == ["long", "string"]
    assert polycodec.Codec(Union[str, int], "avro").schema == ["string", "long"]


def test_avro_files_of_two_codecs_still_get_their_own_sync_markers() -> None:
    first = polycodec.Codec(Order, "avro")
    second = polycodec.Codec(Order, "avro")
    markers = {codec.encode_many([ORDER])[-16:] for codec in (first, second, first, second)}
    assert len(markers) == 4


def test_no_class_is_kept_alive_by_the_cache() -> None:
    def make() -> "weakref.ref[type]":
        @dataclasses.dataclass
        class Gone:
            id: int
            child: Optional[Item] = None

        for fmt in FORMATS:
            codec = polycodec.Codec(Gone, fmt)
            assert codec.decode_one(codec.encode_one(Gone(1))) == Gone(1)
        return weakref.ref(Gone)

    ref = make()
    gc.collect()
    assert ref() is None
    # A class whose own attribute is a codec of it (a cycle through the cache entry) goes too.

    def make_cycle() -> "weakref.ref[type]":
        @dataclasses.dataclass
        class Selfish:
            id: int

        Selfish.codec = polycodec.Codec(Selfish, "json")  # type: ignore[attr-defined]
        return weakref.ref(Selfish)

    ref = make_cycle()
    gc.collect()
    assert ref() is None


def test_shared_entries_for_other_type_forms_are_bounded() -> None:
    for n in range(_cache._SHARED_LIMIT + 5):
        polycodec.Codec(List[Item], "json", rename={"name": f"n{n}"})
    assert len(_cache._shared) <= _cache._SHARED_LIMIT


@pytest.fixture
def module() -> Iterator[types.ModuleType]:
    name = "polycodec_test_redefined"
    module = types.ModuleType(name)
    sys.modules[name] = module
    try:
        yield module
    finally:
        del sys.modules[name]


def _define(module: types.ModuleType, source: str) -> None:
    exec(
        compile("from __future__ import annotations\n" + source, module.__name__, "exec"),
        vars(module),
    )


def test_a_class_redefined_in_its_module_is_seen(module: types.ModuleType) -> None:
    """``Outer`` names ``Inner`` by a string annotation; running ``Inner``'s definition again
    (a reload, a notebook cell) makes a new class, which a new codec of ``Outer`` must use."""
    _define(
        module,
        "import dataclasses\n"
        "@dataclasses.dataclass\nclass Inner:\n    a: int\n"
        "@dataclasses.dataclass\nclass Outer:\n    inner: Inner\n",
    )
    outer = module.Outer  # type: ignore[attr-defined]
    old_inner = module.Inner  # type: ignore[attr-defined]
    for fmt in FORMATS:
        codec = polycodec.Codec(outer, fmt)
        assert type(codec.decode_one(codec.encode_one(outer(old_inner(1)))).inner) is old_inner
    _define(module, "import dataclasses\n@dataclasses.dataclass\nclass Inner:\n    b: str\n")
    new_inner = module.Inner  # type: ignore[attr-defined]
    assert new_inner is not old_inner
    json_codec = polycodec.Codec(outer, "json")
    assert json_codec.decode_one(b'{"inner":{"b":"x"}}').inner == new_inner("x")
    for fmt in FORMATS:
        codec = polycodec.Codec(outer, fmt)
        value = outer(new_inner("x"))
        assert codec.decode_one(codec.encode_one(value)) == value


def test_codecs_built_through_pickle_and_the_module_functions_share_too(
    compiles: List[Any],
) -> None:
    import pickle

    @dataclasses.dataclass
    class Local:
        a: int

    codec = polycodec.Codec(Local, "msgpack", omit_defaults=True)
    # pickle needs an importable class: rebuild through the same path it calls.
    from polycodec._polycodec import rebuild_codec

    again = rebuild_codec(*codec.__reduce__()[1])
    assert len(compiles) == 1 and again.encode_one(Local(1)) == codec.encode_one(Local(1))
    buf = io.BytesIO()
    pickle.dump(polycodec.Codec(Order, "json"), buf)
    assert pickle.loads(buf.getvalue()).decode_one(polycodec.encode_one(ORDER)) == ORDER


# -- issue 38, item 10: options given while other threads build codecs ------------------------


def slow_str() -> type:
    """An annotation evaluated when a codec compiles (``"slow_str()"``): it lets the thread
    switch while the class's options are being read, which a tiny switch interval then does."""
    import time

    time.sleep(0.001)
    return str


def _race_once() -> bool:
    """Two threads build codecs of a new class while this one gives it rename="camel"; whether
    every codec made afterwards writes the new names."""
    import threading
    import time

    Person = dataclasses.make_dataclass(
        "Person", [("first_name", "slow_str()", "a"), ("last_name", "slow_str()", "b")]
    )
    Person.__module__ = __name__  # where the annotations are evaluated

    start = threading.Barrier(3)

    def build() -> None:
        start.wait()
        for _ in range(3):
            polycodec.Codec(Person)
            polycodec.encode_one(Person())
            polycodec.json_schema(Person)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    start.wait()
    time.sleep(0.0015)  # into the threads' first compile
    polycodec.options(rename="camel")(Person)
    for thread in threads:
        thread.join()
    return (
        b"firstName" in polycodec.Codec(Person).encode_one(Person())
        and b"firstName" in polycodec.encode_one(Person())
        and "firstName" in polycodec.json_schema(Person)["$defs"]["Person"]["properties"]
        and b"firstName" in polycodec.Codec(Any).encode_one(Person())
    )


def test_issue38_item10_options_given_while_codecs_compile_are_never_lost() -> None:
    # A plan compiled under the old options was stored after forget_class ran, so every later
    # codec wrote the old names (38 of 60 trials in the issue; 58 of 60 here before the fix).
    # Every cache now keeps the options generation a plan was compiled under and drops or
    # refuses one compiled before the last change: 0 of 60.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        stale = sum(not _race_once() for _ in range(60))
    finally:
        sys.setswitchinterval(interval)
    assert stale == 0


def test_issue38_item10_values_under_any_and_subclasses_follow_new_options() -> None:
    # The plans of a value under Any and of a subclass instance are cached per type too: they
    # are compiled again after the class is given options.
    Parent = dataclasses.make_dataclass("Parent", [("first_name", str, "a")])
    Child = dataclasses.make_dataclass("Child", [("last_name", str, "b")], bases=(Parent,))
    Family = dataclasses.make_dataclass("Family", [("member", Parent)])

    anything = polycodec.Codec(Any)
    family = polycodec.Codec(Family)
    assert anything.encode_one(Child()) == b'{"first_name":"a","last_name":"b"}'
    assert family.encode_one(Family(Child())) == b'{"member":{"first_name":"a","last_name":"b"}}'
    polycodec.options(rename="camel")(Child)
    assert anything.encode_one(Child()) == b'{"firstName":"a","lastName":"b"}'
    assert family.encode_one(Family(Child())) == b'{"member":{"firstName":"a","lastName":"b"}}'
