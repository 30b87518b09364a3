"""Fuzzes polycodec's Python API, structure-aware: every input is one byte that picks a codec
(a test model and a format) followed by bytes to decode, and the seeds (fuzz/seeds/python_api/)
are valid encodings of the test models, so mutations stay close to real documents.

For every input it checks that

* decoding raises only polycodec's own exceptions (DecodeError and its ValidationError;
  RecursionError and MemoryError pass too, as documented);
* a decoded value round-trips: it encodes, decodes back equal, and encodes to the same bytes
  again (pickle's output depends on the value only);
* a stream decoder fed the bytes in chunks gives what one feed gives;
* decoding a pickle imports nothing and executes nothing: an audit hook fails the run on any
  import, exec, compile, open or subprocess event while polycodec decodes, but for what
  docs/pickle.md allows (``ZoneInfo(key)`` reading the tz database, importing ``tzdata``).

Runs under atheris (``python fuzz/python_api.py [libFuzzer flags] CORPUS...``) when it is
installed; without it, a mutation loop of its own takes the same flags (-max_total_time,
-runs, -artifact_prefix, -seed) and corpus folders, without coverage guidance.
``scripts/fuzz`` runs it with the other targets.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
import time
import zoneinfo
from pathlib import Path
from typing import Any, Callable, Literal, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

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
OUR_ERRORS = (polycodec.DecodeError, RecursionError, MemoryError)

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
        values.extend(decoder.finish())
    except polycodec.DecodeError as err:
        # The values the failing call completed before the error travel on it.
        return type(err), values + list(getattr(err, "values", None) or [])
    except OUR_ERRORS as err:
        return type(err), values
    return None, values


def test_one_input(data: bytes) -> None:
    if len(data) < 1:
        return
    codec = CODECS[data[0] % len(CODECS)]
    payload = data[1:]
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
    # A failure's kind is compared too once issue 27's item 7 lands (the stream decoder
    # answers as one call does); until then only whether it failed and the values before it.
    assert (whole[0] is None) == (chunked[0] is None), f"{codec}: {whole} vs {chunked}"
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
    return out


# ---- the mutation loop used when atheris is not installed ----


def _mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(7)
        if choice == 0 and buf:
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        elif choice == 1 and buf:
            buf[rng.randrange(len(buf))] = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
        elif choice == 2:
            buf.insert(rng.randrange(len(buf) + 1), rng.randrange(256))
        elif choice == 3 and len(buf) > 1:
            start = rng.randrange(1, len(buf))
            del buf[start : start + rng.randint(1, 8)]
        elif choice == 4 and len(buf) > 2:
            start = rng.randrange(1, len(buf))
            end = min(len(buf), start + rng.randint(1, 16))
            buf[start:start] = buf[start:end]
        elif choice == 5 and pool:
            other = rng.choice(pool)
            cut = rng.randrange(1, max(2, len(buf)))
            buf = buf[:cut] + other[rng.randrange(1, max(2, len(other))) :]
        elif choice == 6 and len(buf) > 1:
            del buf[rng.randrange(1, len(buf)) :]
    return bytes(buf)


def _own_loop(argv: list[str]) -> None:
    flags = dict(arg[1:].split("=", 1) for arg in argv if arg.startswith("-") and "=" in arg)
    paths = [Path(arg) for arg in argv if not arg.startswith("-")]
    max_time = float(flags.get("max_total_time", "0")) or float("inf")
    max_runs = int(flags.get("runs", "-1"))
    prefix = flags.get("artifact_prefix", "./")
    rng = random.Random(int(flags.get("seed", "0")) or time.time_ns())
    # Corpus folders, or single inputs (to reproduce a finding).
    files = [f for p in paths for f in (sorted(p.iterdir()) if p.is_dir() else [p]) if f.is_file()]
    pool = [f.read_bytes() for f in files]
    pool = pool or seeds()
    deadline = time.monotonic() + max_time
    runs = 0
    for data in pool:  # every seed as it is first
        _run(data, prefix)
        runs += 1
    while time.monotonic() < deadline and runs != max_runs:
        _run(_mutate(rng, rng.choice(pool), pool), prefix)
        runs += 1
    print(f"Done {runs} runs (own mutation loop, no coverage guidance)")
    print(f"stat::number_of_executed_units: {runs}")


def _run(data: bytes, prefix: str) -> None:
    try:
        test_one_input(data)
    except BaseException:
        path = f"{prefix}crash-{hashlib.sha1(data).hexdigest()}"
        Path(path).write_bytes(data)
        print(f"==ERROR: python_api finding; input written to {path}", file=sys.stderr)
        raise


def main() -> None:
    CODECS.extend(_codecs())
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
    try:
        import atheris
    except ImportError:
        _own_loop(sys.argv[1:])
        return
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
