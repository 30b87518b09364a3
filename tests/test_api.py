"""The public API: Codec methods, module-level functions and their cache, input buffer types,
pickling and sharing a codec between threads."""

import json
import pickle
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import msgspec
import pytest

import polycodec
import polycodec._plan
from json_models import (
    EVERYTHING,
    EVERYTHING_JSON,
    Archive,
    Cat,
    Chunk,
    Dog,
    Everything,
    Point,
    Tree,
    assert_same,
)

ARCHIVE = Archive("a", [Chunk("c0", 1), Chunk("c1", 2)], {"k": Chunk("k", 3)}, Point(1, 2))


def test_codec_methods() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Point, format="json")
    assert codec.encode_one(Point(1, 2)) == b'{"x":1,"y":2}'
    assert codec.encode_many([Point(1, 2), Point(3, 4)]) == b'[{"x":1,"y":2},{"x":3,"y":4}]'
    assert codec.encode_many([]) == b"[]"
    assert_same(codec.decode_one(b'{"x":1,"y":2}'), Point(1, 2))
    assert_same(codec.decode_many(b'[{"x":1,"y":2},{"x":3,"y":4}]'), [Point(1, 2), Point(3, 4)])
    assert_same(codec.decode_many(b" [ ] "), [])


def test_format_defaults_to_json() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Point)
    assert codec.encode_one(Point(1, 2)) == b'{"x":1,"y":2}'


def test_encode_many_accepts_tuples_and_matches_msgspec() -> None:
    points = (Point(1, 2), Point(3, 4))
    codec: polycodec.Codec[Any] = polycodec.Codec(Point)
    out = codec.encode_many(points)
    assert out == msgspec.json.encode(list(points))
    assert_same(msgspec.json.decode(out, type=list[Point]), list(points))


def test_decode_many_of_everything() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Everything)
    out = codec.encode_many([EVERYTHING, EVERYTHING])
    assert json.loads(out) == [EVERYTHING_JSON, EVERYTHING_JSON]
    assert_same(codec.decode_many(out), [EVERYTHING, EVERYTHING])
    assert_same(codec.decode_many(json.dumps([EVERYTHING_JSON], indent=4)), [EVERYTHING])


@pytest.mark.parametrize(
    "convert",
    [
        bytes,
        bytearray,
        memoryview,
        lambda b: b.decode("utf-8"),
        lambda b: memoryview(b" " + b + b" ")[1:-1],
        lambda b: memoryview(bytearray(b)),
    ],
    ids=["bytes", "bytearray", "memoryview", "str", "memoryview-slice", "memoryview-bytearray"],
)
def test_input_buffer_types(convert: Callable[[bytes], Any]) -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Archive)
    out = codec.encode_one(ARCHIVE)
    assert_same(codec.decode_one(convert(out)), ARCHIVE)
    many = codec.encode_many([ARCHIVE])
    assert_same(codec.decode_many(convert(many)), [ARCHIVE])
    assert_same(polycodec.decode_one(convert(out), Archive), ARCHIVE)
    assert_same(polycodec.decode_many(convert(many), Archive), [ARCHIVE])


def test_str_input_with_non_ascii() -> None:
    assert polycodec.decode_one('{"x": "日本 😀"}', dict[str, str]) == {"x": "日本 😀"}


@pytest.mark.parametrize("buf", [123, None, ["[]"], {"a": 1}])
def test_unsupported_buffer_type(buf: Any) -> None:
    with pytest.raises(TypeError):
        polycodec.Codec(list[int]).decode_one(buf)


def test_module_level_functions() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Archive)
    out = polycodec.encode_one(ARCHIVE)
    assert out == codec.encode_one(ARCHIVE)
    assert out == polycodec.encode_one(ARCHIVE, format="json", type=Archive)
    assert_same(polycodec.decode_one(out, Archive), ARCHIVE)
    assert_same(polycodec.decode_one(out, Archive, format="json"), ARCHIVE)
    many = polycodec.encode_many([ARCHIVE, ARCHIVE])
    assert many == codec.encode_many([ARCHIVE, ARCHIVE])
    assert_same(polycodec.decode_many(many, Archive), [ARCHIVE, ARCHIVE])
    assert_same(polycodec.decode_many(many, type=Archive, format="json"), [ARCHIVE, ARCHIVE])


def test_encode_one_type_overrides_runtime_type() -> None:
    assert polycodec.encode_one(True, type=Optional[bool]) == b"true"
    assert polycodec.encode_one([1, 2], type=tuple[int, ...]) == b"[1,2]"


def test_encode_many_empty_needs_type() -> None:
    with pytest.raises(TypeError):
        polycodec.encode_many([])
    assert polycodec.encode_many([], type=Point) == b"[]"
    assert polycodec.decode_many(b"[]", Point) == []


def test_encode_many_union_needs_type() -> None:
    pets = [Cat("cat", 1), Dog("dog", True)]
    with pytest.raises(polycodec.EncodeError) as info:
        polycodec.encode_many(pets)
    assert info.value.path == "$[1]"
    out = polycodec.encode_many(pets, type=Union[Cat, Dog])
    assert json.loads(out) == [{"kind": "cat", "lives": 1}, {"kind": "dog", "good": True}]
    assert_same(polycodec.decode_many(out, Union[Cat, Dog]), pets)


def test_module_level_options() -> None:
    @dataclass
    class Opt:
        some_value: int = 0

    assert polycodec.encode_one(Opt(1), rename="camel") == b'{"someValue":1}'
    assert polycodec.encode_one(Opt(), omit_defaults=True) == b"{}"
    assert polycodec.encode_one(Opt(1)) == b'{"some_value":1}'
    assert polycodec.decode_one(b'{"someValue": 1}', Opt, rename="camel") == Opt(1)
    assert polycodec.decode_one(b'{"some_value": "1"}', Opt, strict=False) == Opt(1)
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'{"some_value": "1"}', Opt)
    assert polycodec.decode_one(b'{"x": 1}', Opt) == Opt()
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'{"x": 1}', Opt, forbid_unknown_fields=True)
    assert polycodec.decode_many(b"[[2]]", Opt, array_like=True) == [Opt(2)]


def test_module_level_plans_are_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    compile_spec = polycodec._plan.compile_spec

    def counting(tp: Any, **options: Any) -> Any:
        calls.append(tp)
        return compile_spec(tp, **options)

    monkeypatch.setattr(polycodec._plan, "compile_spec", counting)

    @dataclass
    class Fresh:
        value: int

    assert polycodec.decode_one(b'{"value": 1}', Fresh) == Fresh(1)
    assert polycodec.decode_one(b'{"value": 2}', Fresh) == Fresh(2)
    assert polycodec.decode_many(b'[{"value": 3}]', Fresh) == [Fresh(3)]
    assert polycodec.encode_one(Fresh(4)) == b'{"value":4}'
    assert polycodec.encode_many([Fresh(5)]) == b'[{"value":5}]'
    assert len(calls) == 1
    assert polycodec.decode_one(b'{"Value": 1}', Fresh, rename="pascal") == Fresh(1)
    assert polycodec.decode_one(b'{"Value": 1}', Fresh, rename="pascal") == Fresh(1)
    assert len(calls) == 2


def test_module_level_cache_with_unhashable_options() -> None:
    @dataclass
    class Fresh:
        value: int

    table = {"value": "v"}
    assert polycodec.encode_one(Fresh(1), rename=table) == b'{"v":1}'
    assert polycodec.decode_one(b'{"v": 1}', Fresh, rename=table) == Fresh(1)
    assert polycodec.encode_one(Fresh(1), rename={"value": "w"}) == b'{"w":1}'


def test_module_level_cache_keys_nested_options(monkeypatch: pytest.MonkeyPatch) -> None:
    # An Avro schema given as a dict (nested dicts and lists) is keyed by its contents, so a
    # hot loop of module-level calls compiles once, and a different schema compiles again.
    calls: list[Any] = []
    compile_spec = polycodec._plan.compile_spec

    def counting(tp: Any, **options: Any) -> Any:
        calls.append(tp)
        return compile_spec(tp, **options)

    monkeypatch.setattr(polycodec._plan, "compile_spec", counting)

    @dataclass
    class Fresh:
        value: int

    schema = {"type": "record", "name": "Fresh", "fields": [{"name": "value", "type": "long"}]}
    data = polycodec.encode_one(Fresh(1), "avro", schema=schema)
    for _ in range(3):
        assert polycodec.decode_one(data, Fresh, "avro", schema=dict(schema)) == Fresh(1)
    assert len(calls) == 1
    documented = {**schema, "fields": [{"name": "value", "type": "long", "doc": "x"}]}
    assert polycodec.decode_one(data, Fresh, "avro", schema=documented) == Fresh(1)
    assert len(calls) == 2


def test_codec_is_picklable() -> None:
    codecs: list[polycodec.Codec[Any]] = [
        polycodec.Codec(Archive),
        polycodec.Codec(Tree, array_like=True),
        polycodec.Codec(Everything, omit_defaults=True, forbid_unknown_fields=True),
        polycodec.Codec(Point, rename="pascal", strict=False),
        polycodec.Codec(list[Union[Cat, Dog]]),
    ]
    for codec in codecs:
        clone = pickle.loads(pickle.dumps(codec))
        assert isinstance(clone, polycodec.Codec)
        assert clone.encode_many([]) == b"[]"
    clone = pickle.loads(pickle.dumps(polycodec.Codec(Point, rename="pascal", strict=False)))
    assert clone.encode_one(Point(1, 2)) == b'{"X":1,"Y":2}'
    assert clone.decode_one(b'{"X": "1", "Y": 2}') == Point(1, 2)
    original: polycodec.Codec[Any] = polycodec.Codec(Archive)
    archive = pickle.loads(pickle.dumps(original))
    assert archive.encode_one(ARCHIVE) == original.encode_one(ARCHIVE)
    assert_same(archive.decode_one(archive.encode_one(ARCHIVE)), ARCHIVE)
    with pytest.raises(polycodec.ValidationError) as info:
        archive.decode_one(b'{"label": "a", "contents": [{"name": "c", "nbytes": "1"}]}')
    assert info.value.path == "$.contents[0].nbytes"
    tree = pickle.loads(pickle.dumps(polycodec.Codec(Tree, array_like=True)))
    assert tree.encode_one(Tree(1, [Tree(2)])) == b"[1,[[2,[]]]]"


def test_codec_pickles_with_every_protocol() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Everything)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        clone = pickle.loads(pickle.dumps(codec, protocol=protocol))
        assert clone.encode_one(EVERYTHING) == codec.encode_one(EVERYTHING)


def test_codec_is_thread_safe() -> None:
    codec: polycodec.Codec[Any] = polycodec.Codec(Archive)
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(seed: int) -> None:
        try:
            barrier.wait()
            for i in range(500):
                value = Archive(
                    f"t{seed}-{i}",
                    [Chunk(str(j), seed * i * j) for j in range(i % 7)],
                    {str(i): Chunk("x", i)},
                )
                out = codec.encode_one(value)
                assert out == msgspec.json.encode(value)
                assert codec.decode_one(out) == value
                assert codec.decode_many(codec.encode_many([value, value])) == [value, value]
                if i % 50 == 0:
                    with pytest.raises(polycodec.ValidationError):
                        codec.decode_one(b'{"label": 1}')
        except BaseException as exc:  # noqa: BLE001 - reported to the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


# Issue 14, case 1: the module-level cache must not mix up types that == calls equal.


@dataclass
class CacheFile:
    name: str


@dataclass
class CacheDir:
    name: str
    entries: int = 0


def _counting_compiles(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    compile_spec = polycodec._plan.compile_spec

    def counting(tp: Any, **options: Any) -> Any:
        calls.append(tp)
        return compile_spec(tp, **options)

    monkeypatch.setattr(polycodec._plan, "compile_spec", counting)
    return calls


def test_cache_union_order() -> None:
    import io

    import fastavro

    values = [CacheFile("f"), CacheDir("d", 2)]
    for tp in (list[CacheFile | CacheDir], list[CacheDir | CacheFile]):
        data = polycodec.encode_one(values, "avro", type=tp)
        assert data == polycodec.Codec(tp, "avro").encode_one(values)
        schema = fastavro.parse_schema(polycodec.Codec(tp, "avro").schema)
        read = fastavro.schemaless_reader(io.BytesIO(data), schema, return_record_name=True)
        assert [name.rpartition(".")[2] for name, _ in read] == ["CacheFile", "CacheDir"]
        assert polycodec.decode_one(data, tp, "avro") == values


def test_cache_identity_fast_path_keeps_union_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 14, case 1 again, through the identity fast path: a type object seen before is
    # found without walking it, and list[A | B] is never served list[B | A]'s codec, although
    # the two are == (and hash alike).
    from polycodec import _cache

    walked: list[Any] = []
    type_key = _cache._type_key

    def counting(tp: Any, keep: list[Any]) -> Any:
        # The walks of the module-level calls' cache (the compiled plans' cache keys too).
        if sys._getframe(1).f_code is _cache.codec_for.__code__:
            walked.append(tp)
        return type_key(tp, keep)

    monkeypatch.setattr(_cache, "_type_key", counting)
    pairs: list[tuple[Any, Any, Any]] = [
        (list[CacheFile | CacheDir], list[CacheDir | CacheFile], [CacheFile("f"), CacheDir("d")]),
        (Union[CacheFile, CacheDir], Union[CacheDir, CacheFile], CacheDir("d", 2)),
    ]
    for ab, ba, values in pairs:
        assert ab == ba and ab is not ba
        expected = {id(tp): polycodec.Codec(tp, "avro").encode_one(values) for tp in (ab, ba)}
        assert expected[id(ab)] != expected[id(ba)]
        for _ in range(3):
            for tp in (ab, ba):
                data = polycodec.encode_one(values, "avro", type=tp)
                assert data == expected[id(tp)]
                assert polycodec.decode_one(data, tp, "avro") == values
        # Walked on first use only (the structural key), then found by identity.
        assert sum(tp is ab for tp in walked) == 1
        assert sum(tp is ba for tp in walked) == 1
    # Options take the structural key every time.
    walked.clear()
    ab, _, values = pairs[0]
    for _ in range(2):
        polycodec.encode_one(values, "avro", type=ab, omit_defaults=False)
    assert sum(tp is ab for tp in walked) == 2


def test_cache_optional_vs_pipe_none(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting_compiles(monkeypatch)
    for tp in (Optional[CacheFile | CacheDir], CacheDir | CacheFile | None):
        data = polycodec.encode_one(CacheFile("f"), "avro", type=tp)
        assert data == polycodec.Codec(tp, "avro").encode_one(CacheFile("f"))
        assert polycodec.decode_one(data, tp, "avro") == CacheFile("f")
    assert polycodec.decode_one(b"null", Optional[int]) is None
    assert polycodec.decode_one(b"null", int | None) is None
    assert polycodec.decode_one(b"null", Optional[int]) is None
    # Each distinct spelling compiles at most once.
    assert len(calls) <= 6


def test_cache_annotated_metadata() -> None:
    from typing import Annotated

    assert polycodec.decode_one(b"1", Annotated[int, polycodec.Meta(ge=1)]) == 1
    with pytest.raises(polycodec.ValidationError, match=">= 2"):
        polycodec.decode_one(b"1", Annotated[int, polycodec.Meta(ge=2)])
    assert polycodec.decode_one(b"1.5", Annotated[float, polycodec.Meta(ge=1)]) == 1.5
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b"1.5", Annotated[float, polycodec.Meta(ge=1.75)])


def test_cache_unhashable_annotated_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    from typing import Annotated

    calls = _counting_compiles(monkeypatch)
    note = {"doc": ["not", "hashable"]}
    tp = Annotated[int, note]
    assert polycodec.decode_one(b"1", tp) == 1
    assert polycodec.decode_one(b"2", tp) == 2
    assert len(calls) == 1  # keyed by the metadata's identity, kept alive with the codec
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b"1", Annotated[int, ["x"], polycodec.Meta(ge=5)])


def test_cache_generic_arguments() -> None:
    from typing import Generic, TypeVar

    T = TypeVar("T")

    @dataclass
    class Box(Generic[T]):
        item: T

    assert polycodec.decode_one(b'{"item": 1}', Box[int]) == Box(1)
    assert polycodec.decode_one(b'{"item": "1"}', Box[str]) == Box("1")
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b'{"item": 1}', Box[str])
    for tp in (Box[CacheFile | CacheDir], Box[CacheDir | CacheFile]):
        value = Box(CacheDir("d"))
        expected = polycodec.Codec(tp, "avro").encode_one(value)
        assert polycodec.encode_one(value, "avro", type=tp) == expected


def test_cache_literal_int_vs_bool() -> None:
    from typing import Literal

    assert polycodec.decode_one(b"[1]", list[Literal[1]]) == [1]
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b"[1]", list[Literal[True]])
    assert polycodec.decode_one(b"[true]", list[Literal[True]]) == [True]
    with pytest.raises(polycodec.ValidationError):
        polycodec.decode_one(b"[true]", list[Literal[1]])


def test_cache_literal_order() -> None:
    from typing import Literal

    # Literal["a", "b"] == Literal["b", "a"]; each keeps its own order (errors list the values
    # as written).
    with pytest.raises(polycodec.ValidationError, match='one of "a", "b"'):
        polycodec.decode_one(b'"c"', Literal["a", "b"])
    with pytest.raises(polycodec.ValidationError, match='one of "b", "a"'):
        polycodec.decode_one(b'"c"', Literal["b", "a"])


def test_cache_option_values_keep_their_type() -> None:
    from polycodec import _cache

    keep: list[Any] = []
    one = _cache._sorted_options_key({"schema": {"default": 1}}, keep)
    true = _cache._sorted_options_key({"schema": {"default": True}}, keep)
    real = _cache._sorted_options_key({"schema": {"default": 1.0}}, keep)
    assert len({one, true, real}) == 3
    reordered = _cache._sorted_options_key({"schema": {"b": 1, "a": 2}}, keep)
    assert reordered == _cache._sorted_options_key({"schema": {"a": 2, "b": 1}}, keep)
