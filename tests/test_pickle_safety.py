"""Hostile pickles: each must raise DecodeError, and leave no trace (no module imported, no
callable called, no file written).

Every payload is assembled by hand from opcodes (``pickletools.dis`` documents them), so the
tests never run a malicious pickle through the stdlib.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import struct
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

import polycodec

MODULE = __name__


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Holder:
    value: Any
    point: Optional[Point] = None


def short_str(text: str) -> bytes:
    data = text.encode()
    return b"\x8c" + bytes([len(data)]) + data


def stack_global(module: str, name: str) -> bytes:
    return short_str(module) + short_str(name) + b"\x93"


def text_global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def proto(body: bytes, protocol: int = 4) -> bytes:
    return b"\x80" + bytes([protocol]) + body + b"."


def reduce_call(func: bytes, *args: bytes) -> bytes:
    return func + b"(" + b"".join(args) + b"tR"


MARKER = Path(os.environ.get("TMPDIR", "/tmp")) / f"polycodec-pickle-pwned-{os.getpid()}"
COMMAND = f"touch {MARKER}"

# Modules that are not imported by the test run (checked below) and would be by a pickle loader.
UNIMPORTED = ["tabnanny", "this", "polycodec_no_such_module"]

HOSTILE = {
    "os.system": proto(reduce_call(stack_global("os", "system"), short_str(COMMAND))),
    "posix.system": proto(reduce_call(text_global("posix", "system"), short_str(COMMAND)), 2),
    "builtins.eval": proto(
        reduce_call(stack_global("builtins", "eval"), short_str(f"open({str(MARKER)!r}, 'w')"))
    ),
    "builtins.exec-py2-name": proto(
        reduce_call(text_global("__builtin__", "exec"), short_str("import os")), 2
    ),
    "subprocess.Popen": proto(reduce_call(stack_global("subprocess", "Popen"), short_str(COMMAND))),
    "unimported-module-global": proto(stack_global("tabnanny", "check") + b")R"),
    "unimported-module-this": proto(text_global("this", "s"), 2),
    "missing-module": proto(stack_global("polycodec_no_such_module", "x") + b")R"),
    "getattr-of-planned-class": proto(
        reduce_call(
            stack_global("builtins", "getattr"),
            stack_global(MODULE, "Point"),
            short_str("__init__"),
        )
    ),
    "planned-class-method": proto(stack_global(MODULE, "Point.__repr__") + b")R"),
    "planned-class-called-with-args": proto(
        reduce_call(stack_global(MODULE, "Point"), b"K\x01", b"K\x02")
    ),
    "newobj-of-unplanned-class": proto(stack_global("collections", "OrderedDict") + b")\x81"),
    "build-with-int-state": proto(stack_global(MODULE, "Point") + b")\x81K\x05b"),
    "build-with-non-str-keys": proto(stack_global(MODULE, "Point") + b")\x81}(K\x01K\x02ub"),
    "build-twice": proto(stack_global(MODULE, "Point") + b")\x81}" + short_str("x") + b"K\x01sb}b"),
    "build-on-a-list": proto(b"]}b"),
    "build-with-list-state-on-plain-class": proto(
        stack_global(MODULE, "Point") + b")\x81](K\x01K\x02eb"
    ),
    "newobj-ex-with-kwargs": proto(
        stack_global(MODULE, "Point") + b")}" + short_str("x") + b"K\x01s\x92"
    ),
    "inst-opcode": b"(i" + MODULE.encode() + b"\nPoint\n.",
    "obj-opcode": b"\x80\x02(" + text_global(MODULE, "Point") + b"o.",
    "persid": b"\x80\x02P1\n.",
    "binpersid": proto(short_str("id") + b"Q"),
    "ext1": b"\x80\x02\x82\x01.",
    "ext2": b"\x80\x02\x83\x01\x00.",
    "ext4": b"\x80\x02\x84\x01\x00\x00\x00.",
    "next-buffer": b"\x80\x05\x97.",
    "readonly-buffer": b"\x80\x05\x97\x98.",
    "bare-global-value": proto(stack_global("os", "system")),
    "codecs-encode-other-encoding": proto(
        reduce_call(stack_global("_codecs", "encode"), short_str("x"), short_str("rot13"))
    ),
    "datetime-with-evil-tzinfo": proto(
        reduce_call(
            stack_global("datetime", "datetime"),
            b"C\x0a" + b"\x07\xe4\x01\x02\x00\x00\x00\x00\x00\x00",
            reduce_call(stack_global("os", "getcwd")),
        )
    ),
    "reduce-of-reduce-result": proto(
        reduce_call(
            reduce_call(stack_global("builtins", "getattr"), short_str("os"), short_str("system")),
            short_str(COMMAND),
        )
    ),
}

TARGETS = [Any, Point, Holder, list[Any], dict[str, Any], Optional[Point]]


@pytest.fixture(autouse=True)
def no_traces():
    for name in UNIMPORTED:
        assert name not in sys.modules, f"{name} imported before the test"
    yield
    assert not MARKER.exists(), "a hostile pickle ran a command"
    for name in UNIMPORTED:
        assert name not in sys.modules, f"decoding imported {name}"


@pytest.mark.parametrize("target", TARGETS, ids=str)
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_pickles_are_refused(name: str, target: Any) -> None:
    codec = polycodec.Codec(target, "pickle")
    with pytest.raises(polycodec.DecodeError):
        codec.decode_one(HOSTILE[name])


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_pickles_inside_a_valid_record(name: str) -> None:
    # The payload as the Any field of a record that is otherwise fine.
    payload = HOSTILE[name]
    body = payload[2:-1] if payload.startswith(b"\x80") else payload[:-1]
    pickled = proto(stack_global(MODULE, "Holder") + b")\x81}" + short_str("value") + body + b"sb")
    with pytest.raises(polycodec.DecodeError):
        polycodec.Codec(Holder, "pickle").decode_one(pickled)


def test_refusal_message_names_the_global() -> None:
    with pytest.raises(polycodec.DecodeError, match=r"os\.system"):
        polycodec.Codec(Point, "pickle").decode_one(HOSTILE["os.system"])
    with pytest.raises(polycodec.DecodeError, match="INST/OBJ"):
        polycodec.Codec(Point, "pickle").decode_one(HOSTILE["inst-opcode"])


def test_the_payloads_are_real() -> None:
    # Sanity check of the fixtures with a harmless stand-in: the stdlib would call what the
    # pickle names. (Only payloads whose call is harmless are loaded.)
    assert pickle.loads(proto(reduce_call(stack_global("builtins", "len"), short_str("abc")))) == 3
    assert pickle.loads(
        proto(
            stack_global(MODULE, "Point")
            + b")\x81}("
            + short_str("x")
            + b"K\x01"
            + short_str("y")
            + b"K\x02"
            + b"ub"
        )
    ) == Point(1, 2)


def test_valid_pickle_of_planned_class_still_loads() -> None:
    good = proto(
        stack_global(MODULE, "Point")
        + b")\x81}("
        + short_str("x")
        + b"K\x01"
        + short_str("y")
        + b"K\x02ub"
    )
    assert polycodec.Codec(Point, "pickle").decode_one(good) == Point(1, 2)
    assert polycodec.Codec(Holder, "pickle").decode_one(
        pickle.dumps(Holder([1], Point(1, 2)))
    ) == Holder([1], Point(1, 2))


def test_a_class_under_any_is_refused() -> None:
    # Any accepts builtins and a few stdlib values; classes need a plan that names them.
    with pytest.raises(polycodec.DecodeError, match="Point"):
        polycodec.Codec(Any, "pickle").decode_one(pickle.dumps(Point(1, 2)))
    with pytest.raises(polycodec.DecodeError):
        polycodec.Codec(Holder, "pickle").decode_one(pickle.dumps(Holder(Point(1, 2))))


def test_a_class_of_the_same_name_elsewhere_is_refused() -> None:
    other = proto(stack_global("elsewhere", "Point") + b")\x81}b")
    with pytest.raises(polycodec.DecodeError, match="elsewhere.Point"):
        polycodec.Codec(Point, "pickle").decode_one(other)


# ---- serde-pickle's data files ----

# Vendored in the repository (tests/data/pickle/SOURCE.md says where it comes from).
CONFORMANCE = Path(__file__).resolve().parent / "data" / "pickle"


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_serde_pickle_files_with_unplanned_classes_are_refused(protocol: int) -> None:
    data = (CONFORMANCE / "test" / "data" / f"tests_py3_proto{protocol}.pickle").read_bytes()
    with pytest.raises(polycodec.DecodeError, match="__main__"):
        polycodec.Codec(Any, "pickle").decode_one(data)


def test_serde_pickle_py2_strings_are_refused() -> None:
    data = (CONFORMANCE / "test" / "data" / "tests_py2_proto2.pickle").read_bytes()
    with pytest.raises(polycodec.DecodeError):
        polycodec.Codec(Any, "pickle").decode_one(data)


def test_serde_pickle_unresolvable_global() -> None:
    data = (CONFORMANCE / "test" / "data" / "test_unresolvable_global.pickle").read_bytes()
    for target in TARGETS:
        with pytest.raises(polycodec.DecodeError):
            polycodec.Codec(target, "pickle").decode_one(data)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_serde_pickle_recursive_structures_fail_cleanly(protocol: int) -> None:
    data = (CONFORMANCE / "test" / "data" / f"test_recursive_proto{protocol}.pickle").read_bytes()
    with pytest.raises(polycodec.DecodeError):
        polycodec.Codec(Any, "pickle").decode_one(data)


def test_serde_pickle_bench_files() -> None:
    folder = CONFORMANCE / "benches" / "data"
    for name, target in [
        ("biglist", list[int]),
        ("manyrefs", list[list[int]]),
        ("manystrings", list[str]),
    ]:
        data = (folder / f"{name}.pickle").read_bytes()
        expected = pickle.loads(data)  # plain builtins only (checked by SOURCE.md)
        assert polycodec.Codec(target, "pickle").decode_one(data) == expected
        assert polycodec.Codec(Any, "pickle").decode_one(data) == expected


def test_serde_pickle_builtin_entries_decode_under_any() -> None:
    # The CPython 3 files minus the classes: rebuild the builtin part of the dict and compare
    # with polycodec's reading of the same entries, re-pickled by the stdlib.
    expected = {
        None: None,
        False: (False, True),
        1000: 100000,
        10**20: 10**20,
        1.0: 1.0,
        b"bytes": b"bytes",
        "string": "string",
        (1, 2): (1, 2, 3),
        frozenset({42, 0}): frozenset({42, 0}),
        (): [[1, 2, 3], {42, 0}, {}, bytearray(b"\x00\x55\xaa\xff")],
    }
    for protocol in [2, 3, 4, 5]:
        assert (
            polycodec.Codec(Any, "pickle").decode_one(pickle.dumps(expected, protocol)) == expected
        )


# ---- issue 27, item 9: what a ZoneInfo key may make the decoder open or import ----

_EVENTS: list[tuple[str, str]] = []
_AUDITING: list[bool] = []
_HOOKED: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _AUDITING and event in ("open", "import"):
        _EVENTS.append((event, repr(args)))


def test_issue27_item9_zoneinfo_keys_open_only_the_tz_database() -> None:
    import datetime
    import zoneinfo

    if not _HOOKED:  # audit hooks cannot be removed: one, armed by _AUDITING, for the run
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    codec = polycodec.Codec(datetime.datetime, "pickle")
    zone_key = "Asia/Kolkata"  # as long as the two refused keys below; used by no other test
    value = datetime.datetime(2024, 5, 6, 7, 8, tzinfo=zoneinfo.ZoneInfo(zone_key))
    good = pickle.dumps(value, protocol=4)
    assert zone_key.encode() in good
    # Only this key leaves the cache: other tests compare ZoneInfo objects, which are equal
    # only when they are the same cached object.
    zoneinfo.ZoneInfo.clear_cache(only_keys=[zone_key])
    _EVENTS.clear()
    _AUDITING.append(True)
    try:
        assert codec.decode_one(good) == value
        opened = [args for event, args in _EVENTS if event == "open"]
        assert opened and all(zone_key in args for args in opened), _EVENTS
        # A key as long as that one that climbs out of TZPATH: two dots, then etc/passw.
        climbing = b"." * 2 + b"/etc/passw"
        for key, words in ((climbing, "TZPATH"), (b"Nope/Nowher1", "Nope/Nowher1")):
            _EVENTS.clear()
            with pytest.raises(polycodec.ValidationError, match=words):
                codec.decode_one(good.replace(zone_key.encode(), key))
            # A key leading outside the tz database is refused before anything is opened.
            assert not any("passw" in args for _, args in _EVENTS), _EVENTS
    finally:
        _AUDITING.clear()
