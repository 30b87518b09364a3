"""Micro-benchmark for issue 10 item 4: tagged unions, aware datetimes, UUIDs and literals.

Lists of 1,000 small records; polycodec on dataclasses against msgspec on its own Structs
(tagged Structs with ``tag_field`` for the union), JSON and MessagePack, encode and decode. The
cases are timed interleaved in one process; each is reported as ns per element and as ns per
element over the plain-record baseline of the same library.

    PYTHONPATH=python python -m benches.micro_unions [--rounds N] [--only CASE]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import timeit
import uuid
from typing import Any, Callable, Dict, List, Literal, Tuple, Union

import msgspec

import polycodec

N = 1000
UTC = datetime.timezone.utc


@dataclasses.dataclass
class Plain:
    a: int
    b: str


@dataclasses.dataclass
class Cat:
    a: int
    b: str
    kind: Literal["cat"] = "cat"


@dataclasses.dataclass
class Dog:
    a: int
    b: str
    kind: Literal["dog"] = "dog"


@dataclasses.dataclass
class Bird:
    a: int
    b: str
    kind: Literal["bird"] = "bird"


@dataclasses.dataclass
class WithTime:
    a: int
    b: str
    t: datetime.datetime


@dataclasses.dataclass
class WithUuid:
    a: int
    b: str
    u: uuid.UUID


@dataclasses.dataclass
class WithLiteral:
    a: int
    b: str
    c: Literal["x", "y", "z"]


class SPlain(msgspec.Struct):
    a: int
    b: str


class SCat(msgspec.Struct, tag_field="kind", tag="cat"):
    a: int
    b: str


class SDog(msgspec.Struct, tag_field="kind", tag="dog"):
    a: int
    b: str


class SBird(msgspec.Struct, tag_field="kind", tag="bird"):
    a: int
    b: str


class SWithTime(msgspec.Struct):
    a: int
    b: str
    t: datetime.datetime


class SWithUuid(msgspec.Struct):
    a: int
    b: str
    u: uuid.UUID


class SWithLiteral(msgspec.Struct):
    a: int
    b: str
    c: Literal["x", "y", "z"]


def _time(i: int) -> datetime.datetime:
    return datetime.datetime(2024, 5, 1, 12, i % 60, i % 59, (i * 7919) % 1_000_000, tzinfo=UTC)


def _uuid(i: int) -> uuid.UUID:
    return uuid.UUID(int=(i * 0x9E3779B97F4A7C15_F39CC0605CEDC835) % (1 << 128))


def cases() -> Dict[str, Tuple[Any, List[Any], Any, List[Any]]]:
    """name -> (polycodec type, values, msgspec type, values)."""
    animals = (Cat, Dog, Bird)
    sanimals = (SCat, SDog, SBird)
    return {
        "plain": (
            List[Plain],
            [Plain(i, "x%d" % i) for i in range(N)],
            List[SPlain],
            [SPlain(i, "x%d" % i) for i in range(N)],
        ),
        "union3": (
            List[Union[Cat, Dog, Bird]],
            [animals[i % 3](i, "x%d" % i) for i in range(N)],
            List[Union[SCat, SDog, SBird]],
            [sanimals[i % 3](i, "x%d" % i) for i in range(N)],
        ),
        "datetime": (
            List[WithTime],
            [WithTime(i, "x%d" % i, _time(i)) for i in range(N)],
            List[SWithTime],
            [SWithTime(i, "x%d" % i, _time(i)) for i in range(N)],
        ),
        "uuid": (
            List[WithUuid],
            [WithUuid(i, "x%d" % i, _uuid(i)) for i in range(N)],
            List[SWithUuid],
            [SWithUuid(i, "x%d" % i, _uuid(i)) for i in range(N)],
        ),
        "literal": (
            List[WithLiteral],
            [WithLiteral(i, "x%d" % i, ("x", "y", "z")[i % 3]) for i in range(N)],  # type: ignore[arg-type]
            List[SWithLiteral],
            [SWithLiteral(i, "x%d" % i, ("x", "y", "z")[i % 3]) for i in range(N)],  # type: ignore[arg-type]
        ),
    }


def callables(only: str = "") -> Dict[Tuple[str, str, str, str], Callable[[], Any]]:
    """(case, format, op, library) -> a no-argument function doing one round."""
    out: Dict[Tuple[str, str, str, str], Callable[[], Any]] = {}
    for name, (ptype, pvalues, stype, svalues) in cases().items():
        if only and name not in (only, "plain"):
            continue
        for fmt in ("json", "msgpack"):
            codec = polycodec.Codec(ptype, format=fmt)
            if fmt == "json":
                enc: Any = msgspec.json.Encoder()
                dec: Any = msgspec.json.Decoder(stype)
            else:
                enc = msgspec.msgpack.Encoder()
                dec = msgspec.msgpack.Decoder(stype)
            pdata = codec.encode_one(pvalues)
            sdata = enc.encode(svalues)
            assert codec.decode_one(pdata) == pvalues, name
            out[(name, fmt, "enc", "polycodec")] = lambda c=codec, v=pvalues: c.encode_one(v)
            out[(name, fmt, "enc", "msgspec")] = lambda e=enc, v=svalues: e.encode(v)
            out[(name, fmt, "dec", "polycodec")] = lambda c=codec, d=pdata: c.decode_one(d)
            out[(name, fmt, "dec", "msgspec")] = lambda m=dec, d=sdata: m.decode(d)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--number", type=int, default=100)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    funcs = callables(args.only)
    best: Dict[Tuple[str, str, str, str], float] = {k: float("inf") for k in funcs}
    for _ in range(args.rounds):
        for key, func in funcs.items():
            seconds = min(timeit.repeat(func, number=args.number, repeat=1))
            best[key] = min(best[key], seconds / args.number / N * 1e9)
    print(
        f"{'case':10} {'fmt':8} {'op':4} {'poly ns':>8} {'msgspec':>8} {'poly+':>7} "
        f"{'msgs+':>7} {'ratio':>6}"
    )
    for name, fmt, op, lib in best:
        if lib != "polycodec":
            continue
        p, m = best[(name, fmt, op, "polycodec")], best[(name, fmt, op, "msgspec")]
        pb, mb = best[("plain", fmt, op, "polycodec")], best[("plain", fmt, op, "msgspec")]
        extra_p, extra_m = p - pb, m - mb
        print(
            f"{name:10} {fmt:8} {op:4} {p:8.1f} {m:8.1f} {extra_p:+7.1f} {extra_m:+7.1f} "
            f"{p / m:6.2f}"
        )


if __name__ == "__main__":
    main()
