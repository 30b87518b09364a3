"""Fuzzes polycodec's Python API, structure-aware: every input is one byte that picks a codec
(a test model and a format) followed by bytes to decode, and the seeds (fuzz/seeds/python_api/)
are valid encodings of the test models, so mutations stay close to real documents.

For every input it checks that

* decoding raises only polycodec's own exceptions (DecodeError and its ValidationError;
  RecursionError and MemoryError pass too, as documented);
* a decoded value round-trips: it encodes, decodes back equal, and encodes to the same bytes
  again (pickle's output depends on the value only);
* a stream decoder fed the bytes in chunks gives what one feed gives;
* with ``errors="all"`` (JSON and MessagePack), a decode that succeeds without the option
  succeeds with it, and one that fails with a ValidationError fails with one whose first error
  is the fail-fast error (its loc, path, code and message), for ``decode_one`` and
  ``decode_many`` (issue 38 item 8);
* decoding a pickle imports nothing and executes nothing: an audit hook fails the run on any
  import, exec, compile, open or subprocess event while polycodec decodes, but for what
  docs/pickle.md allows (``ZoneInfo(key)`` reading the tz database, importing ``tzdata``).

Runs under atheris (``pip install -e '.[fuzz]'``): ``python fuzz/python_api.py [libFuzzer
flags] CORPUS...`` fuzzes, ``python fuzz/python_api.py FILE`` reproduces a finding.
``scripts/fuzz`` runs it against an extension built with the byte-layer targets' coverage
flags, with atheris's libFuzzer preloaded (``asan_with_fuzzer.so``) for that extension to
report to, so libFuzzer is guided by which branches of the Rust decoders an input reaches as
well as by the lines of polycodec's Python modules, which atheris instruments; against an
ordinary build only the Python lines guide it, which decoding barely runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import zoneinfo
from pathlib import Path
from typing import Any, Callable, Literal, Optional

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

with atheris.instrument_imports(include=["polycodec"]):
    import polycodec  # noqa: E402
from json_models import (  # noqa: E402
    EVERYTHING,
    Archive,
    Cat,
    Chunk,
    Dog,
    Everything,
    Linked,
    Pet,
    Point,
    Tree,
)

FORMATS: tuple[Literal["json", "msgpack", "avro", "pickle"], ...] = (
    "json",
    "msgpack",
    "avro",
    "pickle",
)

VALUES: list[tuple[Any, list[Any]]] = [
    (
        Archive,
        [
            Archive("a", [Chunk("x", 1), Chunk("ÿ✓", -(2**40))], {"k": Chunk("k", 0)}, Point(1, 2)),
            Archive("", []),
        ],
    ),
    (Tree, [Tree(1, [Tree(2), Tree(3, [Tree(4)])])]),
    (Pet, [Pet("rex", Dog("dog", True)), Pet("tom", Cat("cat", 9))]),
    (Linked, [Linked("a", Linked("b", Linked("c")))]),
    (Everything, [EVERYTHING]),
    (list[Any], [[1, "two", None, [3.5, {"k": b"v"}], -(2**70)]]),
]


def _codecs() -> list[polycodec.Codec[Any]]:
    codecs = []
    for model, values in VALUES:
        for fmt in FORMATS:
            try:
                codec = polycodec.Codec(model, fmt)
                for value in values:
                    codec.encode_one(value)
            except (polycodec.EncodeError, TypeError):
                continue  # the model has no form in this format (a 100-bit int in Avro)
            codecs.append(codec)
    return codecs


CODECS: list[polycodec.Codec[Any]] = []
#: The errors="all" twin of each JSON and MessagePack codec, by its index in CODECS.
COLLECTING: dict[int, polycodec.Codec[Any]] = {}
OUR_ERRORS = (polycodec.DecodeError, RecursionError, MemoryError)

# Invalid documents for the errors="all" property, from the campaign on issue 38: errors in a
# container that then fails as a whole (a tagged union without its tag, a fixed tuple with an
# item too many, a record key that is no str), a number out of range, errors nested deep.
_DEEP_TREE: Any = {"value": "x", "children": []}
for _ in range(60):
    _DEEP_TREE = {"value": None, "children": [_DEEP_TREE, {"value": 1.5}]}
ERROR_DOCUMENTS: list[tuple[Any, bytes]] = [
    (Pet, b'{"name": "rex", "animal": {"lives": "x"}}'),
    (Pet, b'{"name": 1, "animal": {"good": 2, "kind": "bird"}}'),
    (Archive, b'{"label": "a", "contents": [{"name": "x", "nbytes": 1e400}, {"name": 2}]}'),
    (Archive, b'{"label": 7, "contents": [{"name": "x", "nbytes": 1}], "owner": {"x": "1"}}'),
    (Tree, json.dumps(_DEEP_TREE).encode()),
    (Linked, b'{"value": 1, "next": {"value": 2, "next": {"value": 3}}}'),
]

# Events that decoding a pickle must never cause (the safe reader imports and calls nothing).
FORBIDDEN_EVENTS = {
    "import",
    "exec",
    "compile",
    "open",
    "os.system",
    "subprocess.Popen",
    "pickle.find_class",
    "builtins.input",
    "ctypes.dlopen",
}
_audit_armed = False


class ForbiddenEvent(BaseException):
    """Raised by the audit hook; a BaseException, so no except clause of ours swallows it."""


def _documented(event: str, args: tuple[Any, ...]) -> bool:
    """What docs/pickle.md says decoding may do: ZoneInfo(key) reads the key's file in the tz
    database and, for a key not found there, imports tzdata."""
    if event == "open" and isinstance(args[0], str):
        return any(args[0].startswith(os.path.join(folder, "")) for folder in zoneinfo.TZPATH)
    return event == "import" and str(args[0]).split(".")[0] == "tzdata"


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _audit_armed and event in FORBIDDEN_EVENTS and not _documented(event, args):
        raise ForbiddenEvent(f"{event}{args!r} while decoding a pickle")


def _decode(codec: polycodec.Codec[Any], call: Callable[[], Any]) -> Any:
    global _audit_armed
    _audit_armed = codec.format == "pickle"
    try:
        return call()
    finally:
        _audit_armed = False


def _chunks(data: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, 4))) if len(data) > 1 else []
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


def _stream(codec: polycodec.Codec[Any], chunks: list[bytes]) -> tuple[Optional[type], list[Any]]:
    decoder = codec.stream_decoder()
    values: list[Any] = []
    try:
        for chunk in chunks:
            values.extend(decoder.feed(chunk))
        # An Avro call builds a bounded number of values; the rest are taken before the end.
        while decoder.ready:
            values.extend(decoder.feed(b""))
        values.extend(decoder.finish())
    except polycodec.DecodeError as err:
        # The values the failing call completed before the error travel on it.
        return type(err), values + list(getattr(err, "values", None) or [])
    except OUR_ERRORS as err:
        return type(err), values
    return None, values


def _first_error(call: Callable[[], Any]) -> Any:
    """What a decode gives: its first validation error (loc, path, code, message), or "ok", or
    the kind of any other exception of ours."""
    try:
        call()
    except polycodec.ValidationError as err:
        return (err.loc, err.path, err.code, err.errors()[0]["msg"])
    except OUR_ERRORS as err:
        return type(err).__name__
    return "ok"


def _check_collecting(index: int, payload: bytes) -> None:
    """errors="all" starts with the error a fail-fast decode raises (issue 38 item 8)."""
    every = COLLECTING.get(index)
    if every is None:
        return
    codec = CODECS[index]
    for method in ("decode_one", "decode_many"):
        first = _first_error(lambda: getattr(codec, method)(payload))
        collected = _first_error(lambda: getattr(every, method)(payload))
        # Malformed input after the first error ends the collecting decode as a DecodeError
        # (docs/errors.md): the one outcome allowed to differ.
        if first == "ok" or (isinstance(first, tuple) and collected != "DecodeError"):
            assert collected == first, f"{codec} {method}: {collected} != {first}"


def test_one_input(data: bytes) -> None:
    if len(data) < 1:
        return
    index = data[0] % len(CODECS)
    codec = CODECS[index]
    payload = data[1:]
    _check_collecting(index, payload)
    try:
        value = _decode(codec, lambda: codec.decode_one(payload))
    except OUR_ERRORS:
        value = None
        decoded = False
    else:
        decoded = True
    if decoded:
        encoded = codec.encode_one(value)
        again = _decode(codec, lambda: codec.decode_one(encoded))
        assert again == value, f"{codec}: {again!r} != {value!r}"
        assert codec.encode_one(again) == encoded, f"{codec}: encoding is not deterministic"
    try:
        many = _decode(codec, lambda: codec.decode_many(payload))
    except OUR_ERRORS:
        pass
    else:
        assert isinstance(many, list)
    whole = _decode(codec, lambda: _stream(codec, [payload]))
    chunked = _decode(codec, lambda: _stream(codec, _chunks(payload, len(payload))))
    # A value's error is of the kind one feed gives, however the bytes are chunked.
    assert whole[0] == chunked[0], f"{codec}: {whole} vs {chunked}"
    assert whole[1] == chunked[1], f"{codec}: chunked stream differs: {whole} vs {chunked}"


def seeds() -> list[bytes]:
    """One seed per codec and value: the selector byte, then the value's encoding; the stream
    forms too (two values back to back)."""
    out = []
    for index, codec in enumerate(CODECS):
        for model, values in VALUES:
            if codec.type is model:
                for value in values:
                    out.append(bytes([index]) + codec.encode_one(value))
                out.append(bytes([index]) + codec.encode_stream(values * 2))
        for model, document in ERROR_DOCUMENTS:
            if codec.type is model and index in COLLECTING:
                if codec.format == "msgpack":
                    # 1e400 has no MessagePack form.
                    if b"1e400" in document:
                        continue
                    document = polycodec.encode_one(json.loads(document), "msgpack", type=Any)
                out.append(bytes([index]) + document)
    return out


def main() -> None:
    CODECS.extend(_codecs())
    for index, codec in enumerate(CODECS):
        if codec.format in ("json", "msgpack"):
            COLLECTING[index] = polycodec.Codec(codec.type, codec.format, errors="all")
    # Warm every codec once, so the lazy imports of a first decode happen before the hook.
    for data in seeds():
        test_one_input(data)
    sys.addaudithook(_audit)
    if len(sys.argv) > 1 and sys.argv[1] == "--write-seeds":
        folder = Path(sys.argv[2])
        folder.mkdir(parents=True, exist_ok=True)
        for data in seeds():
            (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
