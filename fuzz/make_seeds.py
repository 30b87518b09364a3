"""Writes the seed corpora of the fuzz targets (fuzz/seeds/TARGET/), small valid inputs made
by the reference implementations: ``python fuzz/make_seeds.py``. The seeds are committed; run
this again after changing it. The Python API harness writes its own
(``python fuzz/python_api.py --write-seeds fuzz/seeds/python_api``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import io
import json
import pickle
import shutil
from pathlib import Path

import fastavro
import msgpack

SEEDS = Path(__file__).resolve().parent / "seeds"

JSON_VALUES = [
    {"name": "x", "items": [1, -2, 3.5, 1e300, -0.0, 12345678901234567890123], "ok": True},
    [None, False, 'esc"\\/\b\f\n\r\t\u00e9\u2713\U0001d11e', {"": {}}, []],
    "plain",
    -0,
    [[[[[[1]]]]]],
]
MSGPACK_VALUES = [
    {"name": "x", "items": [1, -2, 3.5, 2**64 - 1, -(2**63)], "ok": True, "none": None},
    [b"\x00\xff" * 20, "é" * 40, list(range(20)), {i: str(i) for i in range(17)}],
    msgpack.ExtType(5, b"abc"),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc),
    datetime.datetime(1900, 1, 1, tzinfo=datetime.timezone.utc),
]
PICKLE_VALUES = [
    {"a": [1, 2.5, "three", b"four", None, True], "b": (1,), "c": {1, 2}, "d": frozenset()},
    [2**70, -(2**70), bytearray(b"xy"), ("x", "x"), []],
    datetime.datetime(2020, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc),
]
AVRO_SCHEMA = {
    "type": "record",
    "name": "Chunk",
    "fields": [
        {"name": "name", "type": "string"},
        {"name": "nbytes", "type": "long"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "extra", "type": ["null", {"type": "map", "values": "double"}]},
    ],
}
AVRO_RECORDS = [
    {
        "name": f"c{i}",
        "nbytes": i * 1000 - 5,
        "tags": ["a"] * (i % 3),
        "extra": None if i % 2 else {"x": 1.5},
    }
    for i in range(20)
]
TEXT = [
    (0, b"2024-02-29T23:59:58.123456+05:30"),
    (0, b"2024-02-29T23:59:58Z"),
    (1, b"1999-12-31"),
    (2, b"07:08:09.001-08:00"),
    (3, b"P3DT4.000005S"),
    (3, b"-PT1H"),
    # What pydantic writes (a year of 365 days first) and reads (months, weeks): issue 38.
    (3, b"P1Y35D"),
    (3, b"-P1Y34DT23H59M59.999995S"),
    (3, b"P2739726Y9DT23H59M59.999999S"),
    (3, b"P1Y2M3W4DT5H6M7.5S"),
    (3, b"PT1Y"),
    (4, b"12345678-1234-5678-1234-567812345678"),
    (5, base64.b64encode(b"\x00\xffbinary")),
    (6, b"any bytes at all"),
]


def write(target: str, items: list[bytes]) -> None:
    folder = SEEDS / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for data in items:
        (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def avro_files() -> list[bytes]:
    files = []
    for codec in ("null", "deflate", "snappy", "zstandard"):
        out = io.BytesIO()
        fastavro.writer(out, AVRO_SCHEMA, AVRO_RECORDS, codec=codec, sync_interval=400)
        files.append(out.getvalue())
    # A deflate block of 100,000 `boolean` records in 200 bytes: far more values than bytes,
    # the shape of issue 38's stream decoder input (item 13).
    out = io.BytesIO()
    fastavro.writer(out, "boolean", [False] * 100_000, codec="deflate", sync_interval=10**9)
    files.append(out.getvalue())
    return files


def main() -> None:
    jsons = [json.dumps(v).encode() for v in JSON_VALUES] + [b' {"a" : [ 1 , 2 ] }\n']
    write("json", jsons)
    write("json_serde", jsons)
    packs = [msgpack.packb(v, datetime=True) for v in MSGPACK_VALUES]
    packs.append(msgpack.packb(1.5, use_single_float=True))
    write("msgpack", packs)
    write("msgpack_rmp", packs)
    pickles = [pickle.dumps(v, protocol=p) for v in PICKLE_VALUES for p in (2, 3, 4, 5)]
    write("pickle", pickles)
    write("pickle_serde", pickles[:8])
    files = avro_files()
    write("avro_container", files + [bytes([i]) + b"block data " * 8 for i in range(4)])
    # avro_wire: a program byte count, the program, then the data (one record's fields).
    record = io.BytesIO()
    fastavro.schemaless_writer(record, AVRO_SCHEMA, AVRO_RECORDS[2])
    program = bytes([4, 0, 2, 4, 4, 0, 1])
    write("avro_wire", [bytes([len(program)]) + program + record.getvalue()])
    write("text", [bytes([pick]) + text for pick, text in TEXT])


if __name__ == "__main__":
    main()
